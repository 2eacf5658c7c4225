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

#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dnsanswer.h"
#include "resolver/forward_metrics.h"
#include "mod-k8s/mod-k8s.h"

static void upstream_label(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(out, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(out, len, "%s:%u", host, ntohs(in4->sin_port));
	}
}

k8s_fwd_metrics_t *k8s_fwd_metrics_new(const k8s_fwd_conf_t *conf)
{
	void *mem = NULL;
	if (posix_memalign(&mem, _Alignof(k8s_fwd_metrics_t), sizeof(k8s_fwd_metrics_t)) != 0) {
		return NULL;
	}
	k8s_fwd_metrics_t *m = mem;
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	for (size_t g = 0; g < conf->group_count; g++) {
		for (size_t i = 0; i < conf->groups[g].count; i++) {
			if (m->upstream_count < K8S_FWD_SERVERS_MAX) {
				upstream_label(&conf->groups[g].servers[i], m->upstream[m->upstream_count],
				               sizeof(m->upstream[0]));
				m->upstream_count++;
			}
		}
	}
	m->src.collect = k8s_fwd_metrics_collect;
	m->src.ctx = m;
	return m;
}

void k8s_fwd_metrics_free(k8s_fwd_metrics_t *m)
{
	if (m != NULL) {
		pthread_mutex_destroy(&m->lock);
		free(m);
	}
}

void k8s_fwd_stats_answer(k8s_fwd_stats_t *st, size_t server, uint16_t rcode, uint64_t sent_ns)
{
	uint64_t now = k8s_dnsmetrics_clock();
	uint64_t rtt = (now > sent_ns) ? now - sent_ns : 0;
	st->server[server].rcodes[rcode & 15]++;
	st->server[server].rtt[k8s_dnsmetrics_time_bucket(rtt)]++;
	st->server[server].rtt_sum_ns += rtt;
}

void k8s_fwd_metrics_push(k8s_fwd_metrics_t *m, const k8s_fwd_stats_t *st)
{
	pthread_mutex_lock(&m->lock);
	m->snap = *st;
	pthread_mutex_unlock(&m->lock);
}

typedef struct {
	const char *name;
	const char *type;
	const char *help;
	size_t offset;   /*!< Of the value in k8s_fwd_stats_t. */
} scalar_t;

#define STAT(field) offsetof(k8s_fwd_stats_t, field)

static const scalar_t scalars[] = {
	{ MOD_K8S_METRIC_FORWARD_REQUESTS_TOTAL, "counter",
	  "Names the forwarder asked of an upstream (cache misses, once per name however many clients wait).",
	  STAT(forwarded) },
	{ MOD_K8S_METRIC_FORWARD_RESPONSES_TOTAL, "counter",
	  "Answers the forwarder sent to waiting clients.", STAT(answered) },
	{ MOD_K8S_METRIC_FORWARD_FAILURES_TOTAL, "counter",
	  "Answers the forwarder sent as SERVFAIL (deadline passed, no upstream, busy).", STAT(servfail) },
	{ MOD_K8S_METRIC_FORWARD_TIMEOUTS_TOTAL, "counter",
	  "Attempts at an upstream without an answer within the deadline.", STAT(timeouts) },
	{ MOD_K8S_METRIC_FORWARD_KEPT_TIMEOUTS_TOTAL, "counter",
	  "Kept names (ExternalName targets, autopath's outside names) no upstream answered within the deadline: SERVFAIL at once until their retry.",
	  STAT(kept_timeouts) },
	{ MOD_K8S_METRIC_FORWARD_FAILOVERS_TOTAL, "counter",
	  "Queries sent to another upstream after a first attempt (failed, slow or timed out).", STAT(failovers) },
	{ MOD_K8S_METRIC_FORWARD_LOOPS_TOTAL, "counter",
	  "Upstreams found forwarding back to this server (loop detections).", STAT(loops) },
	{ MOD_K8S_METRIC_FORWARD_DROPPED_TOTAL, "counter",
	  "Queries the workers could not hand to the forwarder (no slot free, over 512 bytes): answered SERVFAIL.",
	  STAT(dropped) },
	{ MOD_K8S_METRIC_FORWARD_WAITING_CLIENTS, "gauge",
	  "Clients waiting for an upstream's answer.", STAT(waiting) },
	{ MOD_K8S_METRIC_FORWARD_CACHE_ENTRIES, "gauge",
	  "Answers in the forwarder's cache.", STAT(cache_entries) },
	{ MOD_K8S_METRIC_FORWARD_CACHE_SIZE_BYTES, "gauge",
	  "Bytes of the answers in the forwarder's cache.", STAT(cache_bytes) },
};

enum { U_REQUESTS = 0, U_RESPONSES, U_FAILURES, U_TIMEOUTS, U_HEALTHY, U_COUNT };

static const struct {
	const char *name;
	const char *type;
	const char *help;
} upstream_families[U_COUNT] = {
	{ MOD_K8S_METRIC_FORWARD_UPSTREAM_REQUESTS_TOTAL, "counter",
	  "Queries sent to an upstream (first attempts, failovers and hedges; not probes)." },
	{ MOD_K8S_METRIC_FORWARD_UPSTREAM_RESPONSES_TOTAL, "counter",
	  "Usable answers an upstream gave." },
	{ MOD_K8S_METRIC_FORWARD_UPSTREAM_FAILURES_TOTAL, "counter",
	  "An upstream's failures: network errors, SERVFAIL or REFUSED, no answer within 300 ms." },
	{ MOD_K8S_METRIC_FORWARD_UPSTREAM_TIMEOUTS_TOTAL, "counter",
	  "Queries to an upstream without an answer within the deadline." },
	{ MOD_K8S_METRIC_FORWARD_UPSTREAM_HEALTHY, "gauge",
	  "1 if an upstream is used, 0 while it is down or found looping." },
};

/*! \brief Server i's figure of a family (U_HEALTHY: 1 when up). */
static uint64_t upstream_value(const k8s_fwd_stats_t *st, size_t i, unsigned family)
{
	switch (family) {
	case U_REQUESTS:  return st->server[i].queries;
	case U_RESPONSES: return st->server[i].answers;
	case U_FAILURES:  return st->server[i].failures;
	case U_TIMEOUTS:  return st->server[i].timeouts;
	default:          return st->server[i].down == 0;
	}
}

/* CoreDNS's labels of the cluster's one server block and its `forward .` and `cache`. */
#define SERVER_ZONES "server=\"dns://:53\",zones=\".\",view=\"\""

/*! \brief True if server i's address came earlier in the flat order (one series per address). */
static bool seen_before(const k8s_fwd_metrics_t *m, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (strcmp(m->upstream[j], m->upstream[i]) == 0) {
			return true;
		}
	}
	return false;
}

/*! \brief One address's figures, summed over the groups it is in. */
typedef struct {
	uint64_t queries, probe_failures, rcodes[16];
	uint64_t rtt[K8S_DNSMETRICS_TIME_BUCKETS + 1], rtt_sum_ns;
} address_sum_t;

static void address_sum(const k8s_fwd_metrics_t *m, const k8s_fwd_stats_t *st, size_t count,
                        size_t i, address_sum_t *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t j = i; j < count; j++) {
		if (strcmp(m->upstream[j], m->upstream[i]) != 0) {
			continue;
		}
		sum->queries += st->server[j].queries;
		sum->probe_failures += st->server[j].probe_failures;
		for (size_t r = 0; r < 16; r++) {
			sum->rcodes[r] += st->server[j].rcodes[r];
		}
		for (size_t b = 0; b <= K8S_DNSMETRICS_TIME_BUCKETS; b++) {
			sum->rtt[b] += st->server[j].rtt[b];
		}
		sum->rtt_sum_ns += st->server[j].rtt_sum_ns;
	}
}

enum { C_REQUESTS = 0, C_RESPONSES, C_DURATION, C_HEALTH_FAILURES, C_COUNT };

static const struct {
	const char *name, *type, *help;
} coredns_families[C_COUNT] = {
	{ MOD_K8S_METRIC_COREDNS_FORWARD_REQUESTS_TOTAL, "counter", "Counter of requests made per upstream." },
	{ MOD_K8S_METRIC_COREDNS_FORWARD_RESPONSES_TOTAL, "counter", "Counter of responses received per upstream." },
	{ MOD_K8S_METRIC_COREDNS_FORWARD_REQUEST_DURATION_SECONDS, "histogram", "Histogram of the time each request took." },
	{ MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_FAILURES_TOTAL, "counter", "Counter of the number of failed healthchecks." },
};

/*! \brief The coredns_forward_* and coredns_cache_* families (CoreDNS's forward and cache). */
static void coredns_series(const k8s_fwd_metrics_t *m, const k8s_fwd_stats_t *st, size_t count,
                           uint64_t hits, uint64_t misses, k8s_metrics_out_t *out)
{
	char labels[sizeof(m->upstream[0]) + 128];
	for (unsigned f = 0; f < C_COUNT; f++) {
		const char *name = coredns_families[f].name;
		k8s_metrics_family(out, name, coredns_families[f].type, coredns_families[f].help);
		for (size_t i = 0; i < count; i++) {
			if (seen_before(m, i)) {
				continue;
			}
			address_sum_t sum;
			address_sum(m, st, count, i, &sum);
			snprintf(labels, sizeof(labels), SERVER_ZONES ",to=\"%s\"", m->upstream[i]);
			if (f == C_REQUESTS) {
				k8s_metrics_sample(out, name, labels, (double)sum.queries);
			} else if (f == C_HEALTH_FAILURES) {
				k8s_metrics_sample(out, name, labels, (double)sum.probe_failures);
			} else if (f == C_DURATION) {
				k8s_metrics_histogram(out, name, labels, sum.rtt, k8s_dnsmetrics_time_bounds,
				                      K8S_DNSMETRICS_TIME_BUCKETS, sum.rtt_sum_ns / 1e9);
			} else {
				for (unsigned r = 0; r < 16; r++) {
					// NOERROR always: the errors' ratio has a denominator.
					if (sum.rcodes[r] == 0 && r != 0) {
						continue;
					}
					char num[8];
					snprintf(labels, sizeof(labels), SERVER_ZONES ",rcode=\"%s\",to=\"%s\"",
					         k8s_rcode_name(r, num, sizeof(num)), m->upstream[i]);
					k8s_metrics_sample(out, name, labels, (double)sum.rcodes[r]);
				}
			}
		}
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_BROKEN_TOTAL, "counter",
	                   "Counter of the number of complete failures of the healthchecks.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_BROKEN_TOTAL, SERVER_ZONES,
	                   (double)st->broken);

	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_CACHE_ENTRIES, "gauge",
	                   "The number of elements in the cache.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_CACHE_ENTRIES,
	                   "server=\"dns://:53\",type=\"success\",zones=\".\",view=\"\"",
	                   (double)st->cache_entries);
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_CACHE_HITS_TOTAL, "counter",
	                   "The count of cache hits.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_CACHE_HITS_TOTAL,
	                   "server=\"dns://:53\",type=\"success\",zones=\".\",view=\"\"",
	                   (double)hits);
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_CACHE_MISSES_TOTAL, "counter",
	                   "The count of cache misses. Deprecated, derive misses from cache hits/requests counters.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_CACHE_MISSES_TOTAL, SERVER_ZONES, (double)misses);
}

void k8s_fwd_metrics_collect(void *ctx, k8s_metrics_out_t *out)
{
	k8s_fwd_metrics_t *m = ctx;
	// A copy, so that a push waits no longer than a memcpy.
	k8s_fwd_stats_t st;
	pthread_mutex_lock(&m->lock);
	st = m->snap;
	pthread_mutex_unlock(&m->lock);

	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		uint64_t v;
		memcpy(&v, (const uint8_t *)&st + scalars[i].offset, sizeof(v));
		k8s_metrics_family(out, scalars[i].name, scalars[i].type, scalars[i].help);
		k8s_metrics_sample(out, scalars[i].name, NULL, (double)v);
	}

	uint64_t hits = 0, misses = 0;
	for (size_t i = 0; i < K8S_METRICS_THREADS; i++) {
		hits += atomic_load_explicit(&m->slot[i].hits, memory_order_relaxed);
		misses += atomic_load_explicit(&m->slot[i].misses, memory_order_relaxed);
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_FORWARD_CACHE_HITS_TOTAL, "counter",
	                   "Names in no zone the workers answered from the forwarder's cache.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_FORWARD_CACHE_HITS_TOTAL, NULL, (double)hits);
	k8s_metrics_family(out, MOD_K8S_METRIC_FORWARD_CACHE_MISSES_TOTAL, "counter",
	                   "Names in no zone the workers found not cached (handed to the forwarder).");
	k8s_metrics_sample(out, MOD_K8S_METRIC_FORWARD_CACHE_MISSES_TOTAL, NULL, (double)misses);

	// Before the first push, no server figures: the counts would be zeros, not facts.
	size_t count = (st.server_count < m->upstream_count) ? st.server_count : m->upstream_count;
	coredns_series(m, &st, count, hits, misses, out);
	for (unsigned f = 0; f < U_COUNT; f++) {
		k8s_metrics_family(out, upstream_families[f].name, upstream_families[f].type,
		                   upstream_families[f].help);
		for (size_t i = 0; i < count; i++) {
			// One address in two groups is one series: summed, healthy if both are.
			if (seen_before(m, i)) {
				continue;
			}
			uint64_t v = upstream_value(&st, i, f);
			for (size_t j = i + 1; j < count; j++) {
				if (strcmp(m->upstream[j], m->upstream[i]) == 0) {
					uint64_t other = upstream_value(&st, j, f);
					v = (f == U_HEALTHY) ? (v && other) : v + other;
				}
			}
			char labels[sizeof(m->upstream[0]) + 16];
			snprintf(labels, sizeof(labels), "upstream=\"%s\"", m->upstream[i]);
			k8s_metrics_sample(out, upstream_families[f].name, labels, (double)v);
		}
	}
}
