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

/*!
 * \file
 *
 * \brief A forwarder's Prometheus series (mod_k8s_forward_*; doc/mod-k8s.rst, Metrics
 * reference): one metrics source per forwarder, however many module instances share it.
 *
 * Two feeds, neither locks a worker: the forwarder thread's counters arrive once a
 * second as a snapshot (k8s_fwd_metrics_push, under the source's own mutex, which
 * only that thread and a scrape take), and the workers' cache lookups are relaxed
 * atomic adds into per-thread, cache-line-aligned slots.
 */

#pragma once

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "resolver/forward.h"
#include "ops/metrics.h"

/*! \brief One worker's cache lookups (its own cache line: no sharing between workers). */
typedef struct {
	_Alignas(64) atomic_uint_fast64_t hits;
	atomic_uint_fast64_t misses;
} k8s_fwd_metrics_slot_t;

typedef struct {
	k8s_fwd_metrics_slot_t slot[K8S_METRICS_THREADS];
	pthread_mutex_t lock;       /*!< Guards snap: the forwarder thread's push, a scrape. */
	k8s_fwd_stats_t snap;       /*!< The last push (zero before the first). */
	size_t upstream_count;
	/*! \brief "addr:port" ("[v6]:port"), the flat order of forward.h's servers. */
	char upstream[K8S_FWD_SERVERS_MAX][INET6_ADDRSTRLEN + 8];
	k8s_metrics_source_t src;   /*!< collect: k8s_fwd_metrics_collect, ctx: this. */
} k8s_fwd_metrics_t;

/*!
 * \brief A zeroed, aligned set for the servers of \a conf (default, then stub domains').
 *
 * \return NULL on no memory. Not yet a source: k8s_metrics_source_add(&m->src).
 */
k8s_fwd_metrics_t *k8s_fwd_metrics_new(const k8s_fwd_conf_t *conf);

/*! \brief Frees it; its source was removed (or never added). */
void k8s_fwd_metrics_free(k8s_fwd_metrics_t *m);

/*! \brief Keeps the forwarder thread's latest counters (its stats callback). */
void k8s_fwd_metrics_push(k8s_fwd_metrics_t *m, const k8s_fwd_stats_t *st);

/*! \brief A worker's cache lookup: answered from the cache or not. Lock-free. */
static inline void k8s_fwd_metrics_lookup(k8s_fwd_metrics_t *m, unsigned thread_id, bool hit)
{
	k8s_fwd_metrics_slot_t *s = &m->slot[thread_id % K8S_METRICS_THREADS];
	atomic_fetch_add_explicit(hit ? &s->hits : &s->misses, 1, memory_order_relaxed);
}

/*! \brief The source's collect: writes the mod_k8s_forward_* families. */
void k8s_fwd_metrics_collect(void *ctx, k8s_metrics_out_t *out);
