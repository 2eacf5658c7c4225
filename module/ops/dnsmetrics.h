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

/*!
 * \brief Counts an answer sent, received at \a received_ns (k8s_dnsmetrics_clock()),
 * and with a->module in mod-k8s's own series (k8s_metrics_query()) in the same pass.
 * Lock-free; \a slot is a worker's thread id or K8S_DNSMETRICS_LATE_SLOT.
 */
void k8s_dnsmetrics_answer(unsigned slot, const k8s_dnsmetrics_answer_t *a,
                           uint64_t received_ns);

/*!
 * \brief Counts a late answer a module thread sent: its type and RCODE read from its
 * wire (\a answer, \a answer_size bytes), its client's family from \a remote.
 */
void k8s_dnsmetrics_late(bool tcp, const struct sockaddr_storage *remote, size_t query_size,
                         const uint8_t *answer, size_t answer_size, uint64_t received_ns,
                         k8s_dnsmetrics_plugin_t plugin);

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

/*! \brief The time-bucket bounds of CoreDNS (seconds): 0.00025 doubling, 16 of them. */
#define K8S_DNSMETRICS_TIME_BUCKETS 16
extern const double k8s_dnsmetrics_time_bounds[K8S_DNSMETRICS_TIME_BUCKETS];

/*! \brief The bucket (0..K8S_DNSMETRICS_TIME_BUCKETS, the last +Inf) of \a ns. */
unsigned k8s_dnsmetrics_time_bucket(uint64_t ns);

/*! \brief CoreDNS's name of an RCODE (dns.RcodeToString), or its number. */
const char *k8s_dnsmetrics_rcode_name(unsigned rcode, char *buf, size_t len);
