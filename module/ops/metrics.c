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
#include "api/reflector.h"
#include "store/resources.h"
#include "table/table.h"
#include "watch/watcher.h"
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

/* The watchers' state: one set of series per watcher, labelled by its settings' fingerprint. */

typedef struct {
	k8s_watcher_stats_t st;
	uint64_t fingerprint;
} watcher_row_t;

/*! \brief Watchers listed per scrape at most (a process has a few: one per API server and settings). */
#define MAX_WATCHERS 64

typedef struct {
	watcher_row_t rows[MAX_WATCHERS];
	size_t count;
} watcher_rows_t;

static void watcher_row(void *ctx, uint64_t fingerprint, const k8s_watcher_stats_t *st)
{
	watcher_rows_t *rows = ctx;
	if (rows->count < MAX_WATCHERS) {
		rows->rows[rows->count].st = *st;
		rows->rows[rows->count].fingerprint = fingerprint;
		rows->count++;
	}
}

typedef enum {
	W_READY, W_CONNECTED, W_OBJECTS, W_SERVICES, W_RECORDS, W_RECORDS_CAPPED, W_TABLE_BYTES,
	W_RESYNCS, W_WATCH_RESTARTS, W_API_ERRORS, W_LAST_EVENT_AGE, W_SNAPSHOT_STALE,
	W_SNAPSHOT_LOADED, W_SNAPSHOT_WRITES, W_SNAPSHOT_WRITE_ERRORS, W_SNAPSHOT_REFUSED,
	W_COUNT
} watcher_series_t;

static const struct {
	const char *name, *type, *help;
} watcher_families[W_COUNT] = {
	[W_READY] = { MOD_K8S_METRIC_READY, "gauge", "1 if the zones of a role (cluster, clusterset, ptr) answer: their resources were listed, or a snapshot was loaded." },
	[W_CONNECTED] = { MOD_K8S_METRIC_CONNECTED, "gauge", "1 if every watch the zones need is streaming from the API server." },
	[W_OBJECTS] = { MOD_K8S_METRIC_OBJECTS, "gauge", "API objects held, by kind." },
	[W_SERVICES] = { MOD_K8S_METRIC_SERVICES, "gauge", "Services published, by zone (cluster, clusterset)." },
	[W_RECORDS] = { MOD_K8S_METRIC_RECORDS, "gauge", "Address records published." },
	[W_RECORDS_CAPPED] = { MOD_K8S_METRIC_RECORDS_CAPPED, "gauge", "Records and ports left out at the per-name caps." },
	[W_TABLE_BYTES] = { MOD_K8S_METRIC_TABLE_BYTES, "gauge", "Bytes of the published record table." },
	[W_RESYNCS] = { MOD_K8S_METRIC_RESYNCS_TOTAL, "counter", "Full relists after the first." },
	[W_WATCH_RESTARTS] = { MOD_K8S_METRIC_WATCH_RESTARTS_TOTAL, "counter", "Watches restarted." },
	[W_API_ERRORS] = { MOD_K8S_METRIC_API_ERRORS_TOTAL, "counter", "Failed API requests and streams, by kind." },
	[W_LAST_EVENT_AGE] = { MOD_K8S_METRIC_LAST_EVENT_AGE_SECONDS, "gauge", "Seconds since the last API event (0: none yet)." },
	[W_SNAPSHOT_STALE] = { MOD_K8S_METRIC_SNAPSHOT_STALE, "gauge", "1 while answering from the snapshot, before the API's first LIST." },
	[W_SNAPSHOT_LOADED] = { MOD_K8S_METRIC_SNAPSHOT_LOADED_OBJECTS, "gauge", "Objects read from the snapshot at start." },
	[W_SNAPSHOT_WRITES] = { MOD_K8S_METRIC_SNAPSHOT_WRITES_TOTAL, "counter", "Snapshots written." },
	[W_SNAPSHOT_WRITE_ERRORS] = { MOD_K8S_METRIC_SNAPSHOT_WRITE_ERRORS_TOTAL, "counter", "Snapshots that could not be written." },
	[W_SNAPSHOT_REFUSED] = { MOD_K8S_METRIC_SNAPSHOT_REFUSED_TOTAL, "counter", "Snapshot files found at start and not used." },
};

static void watcher_series(k8s_metrics_out_t *out, watcher_series_t s, const watcher_row_t *row)
{
	const k8s_watcher_stats_t *st = &row->st;
	const char *name = watcher_families[s].name;
	char labels[160], base[40];
	snprintf(base, sizeof(base), "watcher=\"%016" PRIx64 "\"", row->fingerprint);
	switch (s) {
	case W_READY: {
		static const char *roles[] = { "cluster", "clusterset", "ptr" };
		for (unsigned i = 0; i < 3; i++) {
			snprintf(labels, sizeof(labels), "%s,role=\"%s\"", base, roles[i]);
			k8s_metrics_sample(out, name, labels, (st->ready >> i) & 1);
		}
		break;
	}
	case W_CONNECTED: k8s_metrics_sample(out, name, base, st->connected); break;
	case W_OBJECTS:
		for (unsigned i = 0; i < K8S_SRC_COUNT; i++) {
			snprintf(labels, sizeof(labels), "%s,kind=\"%s\"", base, k8s_resource_name(i));
			k8s_metrics_sample(out, name, labels, (double)st->objects[i]);
		}
		break;
	case W_SERVICES:
		for (unsigned i = 0; i < K8S_ZONE_COUNT; i++) {
			snprintf(labels, sizeof(labels), "%s,zone=\"%s\"", base,
			         i == K8S_ZONE_CLUSTER ? "cluster" : "clusterset");
			k8s_metrics_sample(out, name, labels, (double)st->services[i]);
		}
		break;
	case W_RECORDS: k8s_metrics_sample(out, name, base, (double)st->records); break;
	case W_RECORDS_CAPPED: k8s_metrics_sample(out, name, base, (double)st->records_capped); break;
	case W_TABLE_BYTES: k8s_metrics_sample(out, name, base, (double)st->table_bytes); break;
	case W_RESYNCS: k8s_metrics_sample(out, name, base, (double)st->resyncs); break;
	case W_WATCH_RESTARTS: k8s_metrics_sample(out, name, base, (double)st->watch_restarts); break;
	case W_API_ERRORS:
		for (unsigned i = 0; i < K8S_APIERR_COUNT; i++) {
			snprintf(labels, sizeof(labels), "%s,kind=\"%s\"", base, k8s_apierr_name(i));
			k8s_metrics_sample(out, name, labels, (double)st->api_errors[i]);
		}
		break;
	case W_LAST_EVENT_AGE: k8s_metrics_sample(out, name, base, (double)st->last_event_age_s); break;
	case W_SNAPSHOT_STALE: k8s_metrics_sample(out, name, base, st->snapshot_stale); break;
	case W_SNAPSHOT_LOADED: k8s_metrics_sample(out, name, base, (double)st->snapshot_loaded); break;
	case W_SNAPSHOT_WRITES: k8s_metrics_sample(out, name, base, (double)st->snapshot_writes); break;
	case W_SNAPSHOT_WRITE_ERRORS: k8s_metrics_sample(out, name, base, (double)st->snapshot_write_errors); break;
	case W_SNAPSHOT_REFUSED: k8s_metrics_sample(out, name, base, (double)st->snapshot_refused); break;
	default: break;
	}
}

static void render_watchers(k8s_metrics_out_t *out)
{
	static watcher_rows_t rows;
	rows.count = 0;
	k8s_watcher_stats_each(watcher_row, &rows);
	for (watcher_series_t s = 0; s < W_COUNT; s++) {
		k8s_metrics_family(out, watcher_families[s].name, watcher_families[s].type,
		                   watcher_families[s].help);
		for (size_t i = 0; i < rows.count; i++) {
			watcher_series(out, s, &rows.rows[i]);
		}
	}
	// The buckets of trackers.h: <= 1 ms, 2 ms, 4 ms... doubling, the last one unbounded.
	double bounds[K8S_LATENCY_BUCKETS - 1];
	for (size_t b = 0; b < K8S_LATENCY_BUCKETS - 1; b++) {
		bounds[b] = (double)(1u << b) / 1000.0;
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_DNS_PROGRAMMING_DURATION_SECONDS, "histogram",
	                   "Time from an EndpointSlice's change (its last-change-trigger-time) "
	                   "to the answer that holds it.");
	for (size_t i = 0; i < rows.count; i++) {
		char base[40];
		snprintf(base, sizeof(base), "watcher=\"%016" PRIx64 "\"", rows.rows[i].fingerprint);
		k8s_metrics_histogram(out, MOD_K8S_METRIC_DNS_PROGRAMMING_DURATION_SECONDS, base,
		                      rows.rows[i].st.latency, bounds, K8S_LATENCY_BUCKETS - 1,
		                      rows.rows[i].st.latency_sum_us / 1e6);
	}
	// CoreDNS's name: every watcher's together (the same buckets, CoreDNS's 1 ms doubling).
	uint64_t latency[K8S_LATENCY_BUCKETS] = { 0 }, latency_sum_us = 0;
	for (size_t i = 0; i < rows.count; i++) {
		for (size_t b = 0; b < K8S_LATENCY_BUCKETS; b++) {
			latency[b] += rows.rows[i].st.latency[b];
		}
		latency_sum_us += rows.rows[i].st.latency_sum_us;
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_KUBERNETES_DNS_PROGRAMMING_DURATION_SECONDS, "histogram",
	                   "Histogram of the time (in seconds) it took to program a dns instance.");
	k8s_metrics_histogram(out, MOD_K8S_METRIC_COREDNS_KUBERNETES_DNS_PROGRAMMING_DURATION_SECONDS,
	                      "service_kind=\"all\"", latency, bounds, K8S_LATENCY_BUCKETS - 1,
	                      latency_sum_us / 1e6);
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
	render_watchers(out);
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
