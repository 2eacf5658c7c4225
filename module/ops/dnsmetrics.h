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
 * \brief CoreDNS's series (coredns_dns_*, coredns_build_info) and the standard process_*
 * ones, so that the alerts and dashboards written for CoreDNS read knotd unchanged.
 *
 * Every answer knotd sends is counted once: by knotd's END stage (k8s_stats.c) for the
 * answers a worker sends, by the module thread that sends a late answer (forward_reply.c,
 * coldwait.c). Counters are per-thread slots of relaxed atomics (a worker's thread id;
 * the module threads share one slot of their own), summed when a scrape renders.
 * Labels are CoreDNS's: server="dns://:53" and zone="." (the one server block of a
 * cluster's Corefile), view="" (no views).
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "ops/metrics.h"

/*! \brief The slot of the module threads' late answers (after the workers'). */
#define K8S_DNSMETRICS_LATE_SLOT K8S_METRICS_THREADS

/*! \brief Who wrote an answer: the `plugin` label of coredns_dns_responses_total. */
typedef enum {
	K8S_DNSMETRICS_CORE = 0,      /*!< knotd itself (REFUSED, zone files, CHAOS): "". */
	K8S_DNSMETRICS_KUBERNETES,    /*!< A mod-k8s zone. */
	K8S_DNSMETRICS_CACHE,         /*!< The forwarder's cache. */
	K8S_DNSMETRICS_FORWARD,       /*!< An upstream's answer, or the forwarder's SERVFAIL. */
	K8S_DNSMETRICS_PLUGIN_COUNT
} k8s_dnsmetrics_plugin_t;

/*! \brief One answer sent. */
typedef struct {
	uint16_t qtype;
	uint8_t rcode;                 /*!< The header's RCODE (0..15). */
	k8s_metrics_proto_t proto;
	bool ipv6;                     /*!< The client's family (`family` "2"). */
	bool dnssec_ok;                /*!< The query's DO bit. */
	size_t query_size;             /*!< The query's wire bytes. */
	size_t answer_size;            /*!< The answer's wire bytes. */
	k8s_dnsmetrics_plugin_t plugin;
	uint64_t answered_ns;          /*!< When it was answered (k8s_dnsmetrics_clock()), 0: now. */
	bool module;                   /*!< mod-k8s decided it: counted in mod_k8s_dns_* too. */
	k8s_metrics_rcode_t module_rcode; /*!< The RCODE mod-k8s decided (module only). */
	uint64_t module_ns;            /*!< The time mod-k8s took on it (module only). */
} k8s_dnsmetrics_answer_t;

/*!
 * \brief The TSC's scale to nanoseconds, set by k8s_dnsmetrics_clock_init() where the
 * kernel keeps its own time by an invariant TSC; .mult 0 everywhere else and before.
 * Written once, before any reader exists; read without atomics.
 */
extern struct k8s_dnsmetrics_tsc {
	uint64_t base;     /*!< The TSC at calibration. */
	uint64_t base_ns;  /*!< CLOCK_MONOTONIC then. */
	uint64_t mult;     /*!< Nanoseconds per tick, 32.32 fixed point; 0: clock_gettime(). */
} k8s_dnsmetrics_tsc;

/*!
 * \brief Sets the answers' clock (k8s_dnsmetrics_clock()): the TSC, calibrated against
 * CLOCK_MONOTONIC over 10 ms, where the kernel keeps its own time by an invariant TSC.
 * Once per process: later calls change nothing and return at once. Call it before any
 * reader of the clock exists (the first module load, before its hooks and threads):
 * the readers read k8s_dnsmetrics_tsc without atomics. Until then, CLOCK_MONOTONIC.
 * \param first  If not NULL, true for the process's first call only (to say it once).
 * \return True if the clock is the TSC.
 */
bool k8s_dnsmetrics_clock_init(bool *first);

/*!
 * \brief Monotonic nanoseconds, the receipt and send times (inline: two per answer). Only
 * their differences mean anything: the TSC scaled (calibrated against CLOCK_MONOTONIC
 * by k8s_dnsmetrics_clock_init()) where the kernel's clock source is the TSC, else
 * CLOCK_MONOTONIC.
 */
static inline uint64_t k8s_dnsmetrics_clock(void)
{
#if defined(__x86_64__)
	if (k8s_dnsmetrics_tsc.mult != 0) {
		uint64_t ticks = __builtin_ia32_rdtsc() - k8s_dnsmetrics_tsc.base;
		return k8s_dnsmetrics_tsc.base_ns +
		       (uint64_t)(((__uint128_t)ticks * k8s_dnsmetrics_tsc.mult) >> 32);
	}
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*! \brief The time-bucket bounds of CoreDNS (seconds): 0.00025 doubling, 16 of them. */
#define K8S_DNSMETRICS_TIME_BUCKETS 16
extern const double k8s_dnsmetrics_time_bounds[K8S_DNSMETRICS_TIME_BUCKETS];

/*! \brief CoreDNS's monitored query types, "other" (0) first (dnsmetrics.c names them). */
#define K8S_DNSMETRICS_QTYPES 18
/*! \brief The header's RCODE has 4 bits. */
#define K8S_DNSMETRICS_RCODES 16
/*! \brief CoreDNS's size buckets (bytes). */
#define K8S_DNSMETRICS_SIZE_BUCKETS 14

/*
 * The counters themselves, and the count of one answer, are in this header: knotd's END
 * hook (k8s_stats.c) counts every answer inline, without a call and without writing the
 * answer's fields to memory to read them back (about 30 instructions per answer,
 * callgrind). Only dnsmetrics.c's scrape and the count below touch them.
 */

/*!
 * \brief coredns_dns_*'s counters of every answer sent, one X(name, dimensions) each: a
 * thread's slot holds them atomic, a scrape sums them into plain ones (dnsmetrics.c).
 */
#define K8S_DNSMETRICS_SENT_COUNTERS(X) \
	X(requests,        [K8S_METRICS_PROTO_COUNT][2][K8S_DNSMETRICS_QTYPES]) \
	X(responses,       [K8S_DNSMETRICS_RCODES][K8S_DNSMETRICS_PLUGIN_COUNT]) \
	X(do_requests,     ) \
	X(duration,        [K8S_DNSMETRICS_TIME_BUCKETS + 1]) \
	X(duration_sum_ns, ) \
	X(query_size,      [K8S_METRICS_PROTO_COUNT][K8S_DNSMETRICS_SIZE_BUCKETS + 1]) \
	X(query_size_sum,  [K8S_METRICS_PROTO_COUNT]) \
	X(answer_size,     [K8S_METRICS_PROTO_COUNT][K8S_DNSMETRICS_SIZE_BUCKETS + 1]) \
	X(answer_size_sum, [K8S_METRICS_PROTO_COUNT])

#define K8S_DNSMETRICS_ATOMIC_COUNTER(name, dims) atomic_uint_fast64_t name dims;

/*! \brief One thread's counters of both families, on cache lines of its own. */
typedef struct {
	_Alignas(64)
	/* mod_k8s_dns_* (metrics.h): the answers mod-k8s decided. */
	atomic_uint_fast64_t module_responses[K8S_METRICS_PROTO_COUNT][K8S_METRICS_QTYPE_COUNT]
	                                     [K8S_METRICS_RCODE_COUNT];
	atomic_uint_fast64_t module_duration[K8S_METRICS_QTYPE_COUNT][K8S_METRICS_DURATION_BUCKETS + 1];
	atomic_uint_fast64_t module_duration_sum_ns[K8S_METRICS_QTYPE_COUNT];
	K8S_DNSMETRICS_SENT_COUNTERS(K8S_DNSMETRICS_ATOMIC_COUNTER)
} k8s_dnsmetrics_slot_t;

/*! \brief The workers' slots (a worker's thread id), then the module threads' one. */
extern k8s_dnsmetrics_slot_t k8s_dnsmetrics_slots[K8S_DNSMETRICS_LATE_SLOT + 1];

/*! \brief A type's index in requests (0: "other"); a table, not a search. */
extern const uint8_t k8s_dnsmetrics_qtype_slots[256];
/*! \brief A type's index + 1 in the module_* counters (0: "other"). */
extern const uint8_t k8s_dnsmetrics_module_qtypes[256];
/*! \brief CoreDNS's size bucket bounds (bytes). */
extern const size_t k8s_dnsmetrics_size_bounds[K8S_DNSMETRICS_SIZE_BUCKETS];

static inline void k8s_dnsmetrics_add(atomic_uint_fast64_t *counter, uint64_t value)
{
	atomic_fetch_add_explicit(counter, value, memory_order_relaxed);
}

/*! \brief The bucket (0..K8S_DNSMETRICS_TIME_BUCKETS, the last +Inf) of \a ns. */
static inline unsigned k8s_dnsmetrics_time_bucket(uint64_t ns)
{
	// Bound b is 250 us << b: past the first, the bit length of (ns - 1) / 250 us.
	if (ns <= 250000) {
		return 0;
	}
	unsigned b = 64 - __builtin_clzll((ns - 1) / 250000);
	return (b < K8S_DNSMETRICS_TIME_BUCKETS) ? b : K8S_DNSMETRICS_TIME_BUCKETS;
}

static inline unsigned k8s_dnsmetrics_size_bucket(size_t size)
{
	// The first five bounds are 100 apart: most queries and answers end there.
	if (size <= 400) {
		return (size + 99) / 100;
	}
	unsigned b = 5;
	while (b < K8S_DNSMETRICS_SIZE_BUCKETS && size > k8s_dnsmetrics_size_bounds[b]) {
		b++;
	}
	return b;
}

/*! \brief The index of a query type in the module_* counters (metrics.h's). */
static inline unsigned k8s_dnsmetrics_module_qtype(uint16_t qtype)
{
	unsigned slot = (qtype < 256) ? k8s_dnsmetrics_module_qtypes[qtype] : 0;
	return (slot != 0) ? slot - 1 : K8S_METRICS_QTYPE_COUNT - 1;
}

static inline unsigned k8s_dnsmetrics_module_bucket(uint64_t ns)
{
	// Two halves of six bounds: an answer from memory ends in the first, in a step or two.
	unsigned b = (ns > k8s_metrics_duration_bounds_ns[5]) ? 6 : 0;
	unsigned end = b + 6;
	while (b < end && ns > k8s_metrics_duration_bounds_ns[b]) {
		b++;
	}
	return b;
}

/*! \brief Counts an answer mod-k8s decided in its own series (mod_k8s_dns_*). */
static inline __attribute__((always_inline))
void k8s_dnsmetrics_module_count(k8s_dnsmetrics_slot_t *s, unsigned proto, uint16_t qtype,
                                 unsigned rcode, uint64_t ns)
{
	unsigned type = k8s_dnsmetrics_module_qtype(qtype);
	rcode = (rcode < K8S_METRICS_RCODE_COUNT) ? rcode : K8S_METRICS_RCODE_OTHER;
	k8s_dnsmetrics_add(&s->module_responses[proto][type][rcode], 1);
	k8s_dnsmetrics_add(&s->module_duration[type][k8s_dnsmetrics_module_bucket(ns)], 1);
	k8s_dnsmetrics_add(&s->module_duration_sum_ns[type], ns);
}

/*! \brief k8s_dnsmetrics_answer(), inline (knotd's END hook's). */
static inline __attribute__((always_inline))
void k8s_dnsmetrics_count(unsigned slot, const k8s_dnsmetrics_answer_t *a, uint64_t received_ns)
{
	k8s_dnsmetrics_slot_t *s = &k8s_dnsmetrics_slots[slot <= K8S_DNSMETRICS_LATE_SLOT ?
	                                                 slot : slot % K8S_METRICS_THREADS];
	unsigned proto = (a->proto < K8S_METRICS_PROTO_COUNT) ? a->proto : K8S_METRICS_UDP;
	unsigned plugin = (a->plugin < K8S_DNSMETRICS_PLUGIN_COUNT) ? a->plugin : 0;
	uint64_t now = (a->answered_ns != 0) ? a->answered_ns : k8s_dnsmetrics_clock();
	uint64_t took = (now > received_ns) ? now - received_ns : 0;
	k8s_dnsmetrics_add(&s->requests[proto][a->ipv6][a->qtype < 256 ?
	                                  k8s_dnsmetrics_qtype_slots[a->qtype] : 0], 1);
	k8s_dnsmetrics_add(&s->responses[a->rcode & (K8S_DNSMETRICS_RCODES - 1)][plugin], 1);
	if (a->dnssec_ok) {
		k8s_dnsmetrics_add(&s->do_requests, 1);
	}
	k8s_dnsmetrics_add(&s->duration[k8s_dnsmetrics_time_bucket(took)], 1);
	k8s_dnsmetrics_add(&s->duration_sum_ns, took);
	k8s_dnsmetrics_add(&s->query_size[proto][k8s_dnsmetrics_size_bucket(a->query_size)], 1);
	k8s_dnsmetrics_add(&s->query_size_sum[proto], a->query_size);
	k8s_dnsmetrics_add(&s->answer_size[proto][k8s_dnsmetrics_size_bucket(a->answer_size)], 1);
	k8s_dnsmetrics_add(&s->answer_size_sum[proto], a->answer_size);
	if (a->module) {
		// mod-k8s decided it: its own series too, in the same slot and pass.
		k8s_dnsmetrics_module_count(s, proto, a->qtype, a->module_rcode, a->module_ns);
	}
}

/*!
 * \brief Counts an answer sent, received at \a received_ns (k8s_dnsmetrics_clock()),
 * and with a->module in mod-k8s's own series (k8s_metrics_query()) in the same pass.
 * Lock-free; \a slot is a worker's thread id or K8S_DNSMETRICS_LATE_SLOT.
 */
void k8s_dnsmetrics_answer(unsigned slot, const k8s_dnsmetrics_answer_t *a,
                           uint64_t received_ns);

/*!
 * \brief Counts a late answer a module thread sent: its type and RCODE read from its
 * wire (\a answer, \a answer_size bytes), its client's family from \a remote; and writes
 * it to the query log, if one is published (querylog.h), with its \a query and the
 * address it was sent from (\a local, or NULL).
 */
void k8s_dnsmetrics_late(bool tcp, const struct sockaddr_storage *remote,
                         const struct sockaddr_storage *local, const uint8_t *query,
                         size_t query_size, const uint8_t *answer, size_t answer_size,
                         uint64_t received_ns, k8s_dnsmetrics_plugin_t plugin);

/*!
 * \brief Counts a /health check that started at \a asked_ns and succeeded or not
 * (coredns_health_request_duration_seconds, coredns_health_request_failures_total;
 * absent from the page until the first). Lock-free.
 */
void k8s_dnsmetrics_health(uint64_t asked_ns, bool ok);

/*! \brief Sums every slot's mod_k8s_dns_* counters into \a total (k8s_metrics_query()'s). */
void k8s_dnsmetrics_queries(k8s_metrics_queries_t *total);

/*! \brief Writes the coredns_dns_*, coredns_build_info and process_* families. */
void k8s_dnsmetrics_render(k8s_metrics_out_t *out);

