/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.

    This program is distributed in the hope that it will be useful,
    but WITHOUT ANY WARRANTY; without even the implied warranty of
    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
    GNU General Public License for more details.

    You should have received a copy of the GNU General Public License
    along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <libknot/errcode.h>
#include <libknot/descriptor.h>

#include "ops/dnsmetrics.h"
#include "ops/metrics.h"
#include "mod-k8s/mod-k8s.h"

/* The query counters. */

static const char *qtype_names[K8S_METRICS_QTYPE_COUNT] = {
	"A", "AAAA", "SRV", "PTR", "TXT", "CNAME", "NS", "SOA", "MX", "HTTPS", "ANY", "other"
};
static const char *proto_names[K8S_METRICS_PROTO_COUNT] = { "udp", "tcp", "quic" };
static const char *rcode_names[K8S_METRICS_RCODE_COUNT] = {
	"NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "other"
};

static void render_queries(k8s_metrics_out_t *out)
{
	// Static: only the endpoint's thread renders (a scrape at a time).
	static k8s_metrics_queries_t sum;
	k8s_dnsmetrics_queries(&sum);
	uint64_t (*responses)[K8S_METRICS_QTYPE_COUNT][K8S_METRICS_RCODE_COUNT] = sum.responses;
	uint64_t (*duration)[K8S_METRICS_DURATION_BUCKETS + 1] = sum.duration;
	uint64_t *duration_sum_ns = sum.duration_sum_ns;

	char labels[128];
	// Requests are the responses summed over rcodes: each query is counted once.
	k8s_metrics_family(out, MOD_K8S_METRIC_DNS_REQUESTS_TOTAL, "counter",
	                   "Queries mod-k8s answered, by transport and query type.");
	for (size_t p = 0; p < K8S_METRICS_PROTO_COUNT; p++) {
		for (size_t q = 0; q < K8S_METRICS_QTYPE_COUNT; q++) {
			uint64_t total = 0;
			for (size_t r = 0; r < K8S_METRICS_RCODE_COUNT; r++) {
				total += responses[p][q][r];
			}
			snprintf(labels, sizeof(labels), "proto=\"%s\",type=\"%s\"",
			         proto_names[p], qtype_names[q]);
			k8s_metrics_sample(out, MOD_K8S_METRIC_DNS_REQUESTS_TOTAL, labels, (double)total);
		}
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_DNS_RESPONSES_TOTAL, "counter",
	                   "Responses mod-k8s decided, by transport, query type and response code.");
	for (size_t p = 0; p < K8S_METRICS_PROTO_COUNT; p++) {
		for (size_t q = 0; q < K8S_METRICS_QTYPE_COUNT; q++) {
			for (size_t r = 0; r < K8S_METRICS_RCODE_COUNT; r++) {
				snprintf(labels, sizeof(labels), "proto=\"%s\",type=\"%s\",rcode=\"%s\"",
				         proto_names[p], qtype_names[q], rcode_names[r]);
				k8s_metrics_sample(out, MOD_K8S_METRIC_DNS_RESPONSES_TOTAL, labels,
				                   (double)responses[p][q][r]);
			}
		}
	}
	double bounds[K8S_METRICS_DURATION_BUCKETS];
	for (size_t b = 0; b < K8S_METRICS_DURATION_BUCKETS; b++) {
		bounds[b] = k8s_metrics_duration_bounds_ns[b] / 1e9;
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_DNS_REQUEST_DURATION_SECONDS, "histogram",
	                   "Time mod-k8s took to answer a query, by query type.");
	for (size_t q = 0; q < K8S_METRICS_QTYPE_COUNT; q++) {
		snprintf(labels, sizeof(labels), "type=\"%s\"", qtype_names[q]);
		k8s_metrics_histogram(out, MOD_K8S_METRIC_DNS_REQUEST_DURATION_SECONDS, labels, duration[q],
		                      bounds, K8S_METRICS_DURATION_BUCKETS, duration_sum_ns[q] / 1e9);
	}
}

/* The sources. */

static pthread_mutex_t sources_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_metrics_source_t *sources;

void k8s_metrics_source_add(k8s_metrics_source_t *src)
{
	pthread_mutex_lock(&sources_lock);
	src->next = sources;
	sources = src;
	pthread_mutex_unlock(&sources_lock);
}

void k8s_metrics_source_remove(k8s_metrics_source_t *src)
{
	pthread_mutex_lock(&sources_lock);
	for (k8s_metrics_source_t **s = &sources; *s != NULL; s = &(*s)->next) {
		if (*s == src) {
			*s = src->next;
			break;
		}
	}
	pthread_mutex_unlock(&sources_lock);
}

bool k8s_metrics_ready(char *why, size_t why_len)
{
	bool ready = true;
	pthread_mutex_lock(&sources_lock);
	for (k8s_metrics_source_t *s = sources; s != NULL && ready; s = s->next) {
		if (s->ready != NULL) {
			ready = s->ready(s->ctx, why, why_len);
		}
	}
	pthread_mutex_unlock(&sources_lock);
	return ready;
}

int k8s_metrics_render(k8s_metrics_out_t *out, bool lameduck)
{
	char why[128];
	bool ready = k8s_metrics_ready(why, sizeof(why));
	k8s_metrics_family(out, MOD_K8S_METRIC_SERVING, "gauge",
	                   "1 if /ready answers 200: every zone answers and no lameduck.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_SERVING, NULL, ready && !lameduck);
	k8s_metrics_family(out, MOD_K8S_METRIC_LAMEDUCK, "gauge",
	                   "1 once the lameduck file appeared: answers continue, /ready fails.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_LAMEDUCK, NULL, lameduck);
	render_queries(out);
	k8s_dnsmetrics_render(out);
	pthread_mutex_lock(&sources_lock);
	for (k8s_metrics_source_t *s = sources; s != NULL; s = s->next) {
		if (s->collect != NULL) {
			s->collect(s->ctx, out);
		}
	}
	pthread_mutex_unlock(&sources_lock);
	if (out->failed) {
		return (out->buf.len + 512 >= K8S_METRICS_MAX_PAGE) ? KNOT_ESPACE : KNOT_ENOMEM;
	}
	return KNOT_EOK;
}
