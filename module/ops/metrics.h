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
 * \brief The process's Prometheus metrics: the query counters that knotd's workers
 * bump, the sources that other parts register, and the text exposition format
 * (version 0.0.4) that /metrics serves (httpd.h).
 *
 * The query counters are process-wide, one cache-line-aligned slot per worker
 * thread (thread ids past K8S_METRICS_THREADS share slots), the slot CoreDNS's
 * series are counted in too (dnsmetrics.c): relaxed atomic adds, no lock, no
 * allocation on the answer path. Everything else is read when a
 * scrape renders: a source is a caller-owned node with a collect function (its
 * series) and optionally a ready function (its part of /ready). The parts above
 * (the watchers, the forwarders, each zone's readiness) add theirs with one
 * k8s_metrics_source_add(): nothing here knows them.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/*! \brief Worker slots of the query counters (knotd's thread ids beyond share them). */
#define K8S_METRICS_THREADS 64
/*! \brief A rendered page never grows beyond this (a scrape gets 500 past it). */
#define K8S_METRICS_MAX_PAGE (4 * 1024 * 1024)

/*! \brief Transport of a query, as the `proto` label says. */
typedef enum {
	K8S_METRICS_UDP = 0,
	K8S_METRICS_TCP,
	K8S_METRICS_QUIC,
	K8S_METRICS_PROTO_COUNT
} k8s_metrics_proto_t;

/*! \brief The response codes counted by name; others are "other". */
typedef enum {
	K8S_METRICS_NOERROR = 0,
	K8S_METRICS_NXDOMAIN,
	K8S_METRICS_SERVFAIL,
	K8S_METRICS_REFUSED,
	K8S_METRICS_RCODE_OTHER,
	K8S_METRICS_RCODE_COUNT
} k8s_metrics_rcode_t;

/*! \brief Query types counted by name (A AAAA SRV PTR TXT CNAME NS SOA MX HTTPS ANY), then "other". */
#define K8S_METRICS_QTYPE_COUNT 12
/*! \brief Request duration buckets' upper bounds (seconds); a last one is +Inf. */
#define K8S_METRICS_DURATION_BUCKETS 12

/*! \brief Where a scrape renders: the page, and whether it outgrew its cap. */
typedef struct {
	k8s_buf_t buf;
	bool failed;
} k8s_metrics_out_t;

/*! \brief Writes "# HELP" and "# TYPE" of a family (type: counter, gauge, histogram). */
void k8s_metrics_family(k8s_metrics_out_t *out, const char *name, const char *type,
                        const char *help);

/*!
 * \brief Writes one sample: name{labels} value. \a labels is the inside of the braces
 * as the caller built it (label values from fixed tables or hex: nothing to escape),
 * or NULL.
 */
void k8s_metrics_sample(k8s_metrics_out_t *out, const char *name, const char *labels,
                        double value);

/*!
 * \brief Writes a histogram's samples: \a counts per bucket (not cumulative), \a bounds
 * (\a bound_count of them, in the series' unit), then +Inf; its _sum and _count.
 */
void k8s_metrics_histogram(k8s_metrics_out_t *out, const char *name, const char *labels,
                           const uint64_t *counts, const double *bounds, size_t bound_count,
                           double sum);

/*! \brief A part of the process with series and, optionally, a say in /ready. */
typedef struct k8s_metrics_source {
	/*! \brief Writes the source's series (families with k8s_metrics_family first). */
	void (*collect)(void *ctx, k8s_metrics_out_t *out);
	/*! \brief False (and why, lowercase) if the process must not get traffic; or NULL. */
	bool (*ready)(void *ctx, char *why, size_t why_len);
	void *ctx;
	struct k8s_metrics_source *next; /*!< Private. */
} k8s_metrics_source_t;

/*!
 * \brief Adds a source; it is called from the endpoint's thread until removed.
 * Its collect and ready run with the sources' lock held: they must not add or remove one.
 */
void k8s_metrics_source_add(k8s_metrics_source_t *src);

/*! \brief Removes a source; no call reaches it after this returns. */
void k8s_metrics_source_remove(k8s_metrics_source_t *src);

/*! \brief The duration buckets' upper bounds (ns; dnsmetrics.c, which counts them). */
extern const uint64_t k8s_metrics_duration_bounds_ns[K8S_METRICS_DURATION_BUCKETS];

/*!
 * \brief Counts a query the module answered: its transport, type, response code and
 * how long the module took (ns). Lock-free; safe from any thread. The counters are a
 * worker's slot of CoreDNS's series (dnsmetrics.c): an answer counted in both families
 * at once (k8s_dnsmetrics_answer()) touches one slot.
 */
void k8s_metrics_query(unsigned thread_id, k8s_metrics_proto_t proto, uint16_t qtype,
                       k8s_metrics_rcode_t rcode, uint64_t duration_ns);

/*! \brief The query counters of every worker summed (a scrape's). */
typedef struct {
	uint64_t responses[K8S_METRICS_PROTO_COUNT][K8S_METRICS_QTYPE_COUNT][K8S_METRICS_RCODE_COUNT];
	/* Per bucket, not cumulative: the last one is past every bound (+Inf). */
	uint64_t duration[K8S_METRICS_QTYPE_COUNT][K8S_METRICS_DURATION_BUCKETS + 1];
	uint64_t duration_sum_ns[K8S_METRICS_QTYPE_COUNT];
} k8s_metrics_queries_t;

/*!
 * \brief Renders the page: the query counters and CoreDNS's series, then the sources'
 * (the watchers', the forwarders', ...).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM, KNOT_ESPACE (past K8S_METRICS_MAX_PAGE)
 */
int k8s_metrics_render(k8s_metrics_out_t *out, bool lameduck);

/*! \brief True if every source's ready says so; else false and the first one's reason. */
bool k8s_metrics_ready(char *why, size_t why_len);
