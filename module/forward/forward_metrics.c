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

#include "forward_metrics.h"

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
	{ "mod_k8s_forward_requests_total", "counter",
	  "Names the forwarder asked of an upstream (cache misses, once per name however many clients wait).",
	  STAT(forwarded) },
	{ "mod_k8s_forward_responses_total", "counter",
	  "Answers the forwarder sent to waiting clients.", STAT(answered) },
	{ "mod_k8s_forward_failures_total", "counter",
	  "Answers the forwarder sent as SERVFAIL (deadline passed, no upstream, busy).", STAT(servfail) },
	{ "mod_k8s_forward_timeouts_total", "counter",
	  "Attempts at an upstream without an answer within the deadline.", STAT(timeouts) },
	{ "mod_k8s_forward_failovers_total", "counter",
	  "Queries sent to another upstream after a first attempt (failed, slow or timed out).", STAT(failovers) },
	{ "mod_k8s_forward_loops_total", "counter",
	  "Upstreams found forwarding back to this server (loop detections).", STAT(loops) },
	{ "mod_k8s_forward_dropped_total", "counter",
	  "Queries the workers could not hand to the forwarder (no slot free, over 512 bytes): answered SERVFAIL.",
	  STAT(dropped) },
	{ "mod_k8s_forward_waiting_clients", "gauge",
	  "Clients waiting for an upstream's answer.", STAT(waiting) },
	{ "mod_k8s_forward_cache_entries", "gauge",
	  "Answers in the forwarder's cache.", STAT(cache_entries) },
	{ "mod_k8s_forward_cache_size_bytes", "gauge",
	  "Bytes of the answers in the forwarder's cache.", STAT(cache_bytes) },
};

enum { U_REQUESTS = 0, U_RESPONSES, U_FAILURES, U_TIMEOUTS, U_HEALTHY, U_COUNT };

static const struct {
	const char *name;
	const char *type;
	const char *help;
} upstream_families[U_COUNT] = {
	{ "mod_k8s_forward_upstream_requests_total", "counter",
	  "Queries sent to an upstream (first attempts, failovers and hedges; not probes)." },
	{ "mod_k8s_forward_upstream_responses_total", "counter",
	  "Usable answers an upstream gave." },
	{ "mod_k8s_forward_upstream_failures_total", "counter",
	  "An upstream's failures: network errors, SERVFAIL or REFUSED, no answer within 300 ms." },
	{ "mod_k8s_forward_upstream_timeouts_total", "counter",
	  "Queries to an upstream without an answer within the deadline." },
	{ "mod_k8s_forward_upstream_healthy", "gauge",
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
	k8s_metrics_family(out, "mod_k8s_forward_cache_hits_total", "counter",
	                   "Names in no zone the workers answered from the forwarder's cache.");
	k8s_metrics_sample(out, "mod_k8s_forward_cache_hits_total", NULL, (double)hits);
	k8s_metrics_family(out, "mod_k8s_forward_cache_misses_total", "counter",
	                   "Names in no zone the workers found not cached (handed to the forwarder).");
	k8s_metrics_sample(out, "mod_k8s_forward_cache_misses_total", NULL, (double)misses);

	// Before the first push, no server figures: the counts would be zeros, not facts.
	size_t count = (st.server_count < m->upstream_count) ? st.server_count : m->upstream_count;
	for (unsigned f = 0; f < U_COUNT; f++) {
		k8s_metrics_family(out, upstream_families[f].name, upstream_families[f].type,
		                   upstream_families[f].help);
		for (size_t i = 0; i < count; i++) {
			// One address in two groups is one series: summed, healthy if both are.
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++) {
				seen = (strcmp(m->upstream[j], m->upstream[i]) == 0);
			}
			if (seen) {
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
