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

/*
 * The counters of a mod-k8s zone: their registration with knotd and their
 * indices' names, the watchers' counters stored as gauges (slot 0, not a
 * worker's), and the query outcomes that workers count in their own slots.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/dnsmetrics.h"
#include "k8s_glue.h"
#include "ops/metrics.h"
#include "ops/querylog.h"

/* Counters, in registration order. */
enum {
	CTR_QUERIES = K8S_STATS_CTR_QUERIES,
	CTR_OBJECTS,
	CTR_SERVICES,
	CTR_RECORDS,
	CTR_TABLE_BYTES,
	CTR_RECORDS_CAPPED,
	CTR_READY,
	CTR_CONNECTED,
	CTR_RESYNCS,
	CTR_WATCH_RESTARTS,
	CTR_API_ERRORS,
	CTR_LAST_EVENT_AGE,
	CTR_LATENCY,
	CTR_AUTOPATH,
	CTR_SNAPSHOT,
	CTR_MEMBER_READY,      // Federated-DNS zones only, one slot per member; added last.
	CTR_MEMBER_CONNECTED,
	CTR_MEMBER_API_ERRORS,
};

/*! \brief The snapshot counter's indices. */
enum {
	SNAP_STALE = 0,
	SNAP_LOADED,
	SNAP_WRITES,
	SNAP_WRITE_ERRORS,
	SNAP_REFUSED,
	SNAP_COUNT
};

/*! \brief Query outcomes counted per zone. */
enum {
	QUERY_ANSWER = 0,
	QUERY_NODATA,
	QUERY_NXDOMAIN,
	QUERY_TRUNCATED,
	QUERY_NOT_READY,
	QUERY_SERVFAIL,
	QUERY_REFUSED,
	QUERY_LATE,
	QUERY_COUNT
};

static char *query_str(uint32_t idx, uint32_t count)
{
	static const char *names[QUERY_COUNT] = {
		"answer", "nodata", "nxdomain", "truncated", "not-ready", "servfail", "refused", "late"
	};
	return strdup(idx < QUERY_COUNT ? names[idx] : "unknown");
}

/*! \brief Autopath outcomes; index 0 counts every walk ("expanded"). */
static char *autopath_str(uint32_t idx, uint32_t count)
{
	static const char *names[K8S_AUTOPATH_COUNT] = {
		[K8S_AUTOPATH_NONE] = "expanded",
		[K8S_AUTOPATH_NAMESPACE] = "hit-namespace",
		[K8S_AUTOPATH_SVC] = "hit-svc",
		[K8S_AUTOPATH_CLUSTER] = "hit-cluster",
		[K8S_AUTOPATH_HOST] = "hit-host",
		[K8S_AUTOPATH_LISTED] = "hit-listed",
		[K8S_AUTOPATH_NAME] = "hit-name",
		[K8S_AUTOPATH_FELL_THROUGH] = "fell-through",
		[K8S_AUTOPATH_COLD] = "cold",
		[K8S_AUTOPATH_REFUSED] = "refused",
	};
	return strdup(idx < K8S_AUTOPATH_COUNT ? names[idx] : "unknown");
}

static char *snapshot_str(uint32_t idx, uint32_t count)
{
	static const char *names[SNAP_COUNT] = {
		"stale", "loaded", "writes", "write-errors", "refused"
	};
	return strdup(idx < SNAP_COUNT ? names[idx] : "unknown");
}

static char *source_str(uint32_t idx, uint32_t count)
{
	return strdup(k8s_resource_name(idx));
}

static char *zone_str(uint32_t idx, uint32_t count)
{
	return strdup(idx == K8S_ZONE_CLUSTER ? "cluster" : "clusterset");
}

static char *apierr_str(uint32_t idx, uint32_t count)
{
	return strdup(k8s_apierr_name(idx));
}

static char *latency_str(uint32_t idx, uint32_t count)
{
	char text[32];
	if (idx + 1 < count) {
		snprintf(text, sizeof(text), "le-%ums", 1u << idx);
	} else {
		snprintf(text, sizeof(text), "gt-%ums", 1u << (idx - 1));
	}
	return strdup(text);
}

int k8s_stats_add(knotd_mod_t *mod)
{
	int ret = KNOT_EOK;
	ret |= knotd_mod_stats_add(mod, "queries", QUERY_COUNT, query_str);
	ret |= knotd_mod_stats_add(mod, "objects", K8S_SRC_COUNT, source_str);
	ret |= knotd_mod_stats_add(mod, "services", K8S_ZONE_COUNT, zone_str);
	ret |= knotd_mod_stats_add(mod, "records", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "table-bytes", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "records-capped", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "ready", K8S_ZONE_COUNT, zone_str);
	ret |= knotd_mod_stats_add(mod, "connected", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "resyncs", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "watch-restarts", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "api-errors", K8S_APIERR_COUNT, apierr_str);
	ret |= knotd_mod_stats_add(mod, "last-event-age", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "programming-latency", K8S_LATENCY_BUCKETS, latency_str);
	ret |= knotd_mod_stats_add(mod, "autopath", K8S_AUTOPATH_COUNT, autopath_str);
	ret |= knotd_mod_stats_add(mod, "snapshot", SNAP_COUNT, snapshot_str);
	return (ret == KNOT_EOK) ? KNOT_EOK : KNOT_ENOMEM;
}

int k8s_stats_add_members(knotd_mod_t *mod, size_t count)
{
	int ret = KNOT_EOK;
	ret |= knotd_mod_stats_add(mod, "member-ready", count, NULL);
	ret |= knotd_mod_stats_add(mod, "member-connected", count, NULL);
	ret |= knotd_mod_stats_add(mod, "member-api-errors", count, NULL);
	return (ret == KNOT_EOK) ? KNOT_EOK : KNOT_ENOMEM;
}

void k8s_stats_watcher(void *ctx, const k8s_watcher_stats_t *st)
{
	knotd_mod_t *mod = ctx;
	for (uint32_t i = 0; i < K8S_SRC_COUNT; i++) {
		knotd_mod_stats_store(mod, 0, CTR_OBJECTS, i, st->objects[i]);
	}
	for (uint32_t i = 0; i < K8S_ZONE_COUNT; i++) {
		knotd_mod_stats_store(mod, 0, CTR_SERVICES, i, st->services[i]);
		knotd_mod_stats_store(mod, 0, CTR_READY, i, (st->ready >> i) & 1);
	}
	knotd_mod_stats_store(mod, 0, CTR_RECORDS, 0, st->records);
	knotd_mod_stats_store(mod, 0, CTR_TABLE_BYTES, 0, st->table_bytes);
	knotd_mod_stats_store(mod, 0, CTR_RECORDS_CAPPED, 0, st->records_capped);
	knotd_mod_stats_store(mod, 0, CTR_CONNECTED, 0, st->connected);
	knotd_mod_stats_store(mod, 0, CTR_RESYNCS, 0, st->resyncs);
	knotd_mod_stats_store(mod, 0, CTR_WATCH_RESTARTS, 0, st->watch_restarts);
	for (uint32_t i = 0; i < K8S_APIERR_COUNT; i++) {
		knotd_mod_stats_store(mod, 0, CTR_API_ERRORS, i, st->api_errors[i]);
	}
	knotd_mod_stats_store(mod, 0, CTR_LAST_EVENT_AGE, 0, st->last_event_age_s);
	for (uint32_t i = 0; i < K8S_LATENCY_BUCKETS; i++) {
		knotd_mod_stats_store(mod, 0, CTR_LATENCY, i, st->latency[i]);
	}
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_STALE, st->snapshot_stale);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_LOADED, st->snapshot_loaded);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_WRITES, st->snapshot_writes);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_WRITE_ERRORS, st->snapshot_write_errors);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_REFUSED, st->snapshot_refused);
}

void k8s_stats_member(void *ctx, const k8s_watcher_stats_t *st)
{
	fed_watch_t *fw = ctx;
	uint64_t errors = 0;
	for (uint32_t i = 0; i < K8S_APIERR_COUNT; i++) {
		errors += st->api_errors[i];
	}
	knotd_mod_stats_store(fw->mod, 0, CTR_MEMBER_READY, fw->idx, (st->ready & K8S_READY_CLUSTER) != 0);
	knotd_mod_stats_store(fw->mod, 0, CTR_MEMBER_CONNECTED, fw->idx, st->connected);
	knotd_mod_stats_store(fw->mod, 0, CTR_MEMBER_API_ERRORS, fw->idx, errors);
}

/*
 * CoreDNS's series (dnsmetrics.h) over every answer a worker sends. knotd runs the
 * global BEGIN hooks, the zone's ANSWER hooks, and after the answer the global END
 * hooks, then the zone's: the global instance takes the receipt time and counts the
 * answers of queries no mod-k8s zone's ANSWER hook saw; a mod-k8s zone counts those its
 * ANSWER hook saw (k8s_stats_zone_query()) at its last END hook, where a query handed to
 * a module thread (NOOP: answered late, counted there) is known. The zone needs no
 * BEGIN hook of its own: a hook less on every query. The module's own series
 * (mod_k8s_dns_*, metrics.h) of an outcome it decided are counted there too, in the same
 * pass and slot (k8s_dnsmetrics_answer()); its duration starts at the receipt time the
 * zone took (or at the ANSWER hook, after a global instance's) and ends where CoreDNS's
 * does, at the outcome: two clock reads per answer.
 */

__thread k8s_stats_answering_t k8s_stats_answering;

static k8s_metrics_proto_t metrics_proto(const knotd_qdata_t *qdata)
{
	return (qdata->params->proto == KNOTD_QUERY_PROTO_TCP) ? K8S_METRICS_TCP :
	       (qdata->params->proto == KNOTD_QUERY_PROTO_QUIC) ? K8S_METRICS_QUIC :
	       K8S_METRICS_UDP;
}

const uint8_t k8s_stats_query_counters[K8S_ANSWER_COUNT] = {
	[K8S_ANSWER_HIT] = QUERY_ANSWER,
	[K8S_ANSWER_HIT_NXDOMAIN] = QUERY_ANSWER,
	[K8S_ANSWER_NODATA] = QUERY_NODATA,
	[K8S_ANSWER_NXDOMAIN] = QUERY_NXDOMAIN,
	[K8S_ANSWER_TRUNC] = QUERY_TRUNCATED,
	[K8S_ANSWER_NOTREADY] = QUERY_NOT_READY,
	[K8S_ANSWER_SERVFAIL] = QUERY_SERVFAIL,
	[K8S_ANSWER_UNREACHABLE] = QUERY_SERVFAIL,
	[K8S_ANSWER_REFUSED] = QUERY_REFUSED,
};

const uint8_t k8s_stats_metrics_rcodes[KNOT_RCODE_REFUSED + 1] = {
	[KNOT_RCODE_NOERROR] = K8S_METRICS_NOERROR,
	[KNOT_RCODE_FORMERR] = K8S_METRICS_RCODE_OTHER,
	[KNOT_RCODE_SERVFAIL] = K8S_METRICS_SERVFAIL,
	[KNOT_RCODE_NXDOMAIN] = K8S_METRICS_NXDOMAIN,
	[KNOT_RCODE_NOTIMPL] = K8S_METRICS_RCODE_OTHER,
	[KNOT_RCODE_REFUSED] = K8S_METRICS_REFUSED,
};

void k8s_stats_late(knotd_mod_t *mod, knotd_qdata_t *qdata)
{
	knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_QUERIES, QUERY_LATE, 1);
}

void k8s_stats_autopath(knotd_mod_t *mod, knotd_qdata_t *qdata, k8s_autopath_outcome_t walked)
{
	knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_AUTOPATH, 0, 1);
	knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_AUTOPATH, walked, 1);
}

void k8s_stats_answered_by(const knotd_qdata_t *qdata, k8s_dnsmetrics_plugin_t plugin)
{
	if (k8s_stats_answering_this(qdata)) {
		k8s_stats_answering.a.plugin = plugin;
	}
}

/*! \brief Writes the answer to \a qdata to the query log (querylog.h): off the common path. */
static __attribute__((noinline)) void querylog_write(const knot_pkt_t *pkt,
                                                      const knotd_qdata_t *qdata,
                                                      const struct sockaddr_storage *remote,
                                                      uint64_t received_ns)
{
	uint64_t now = k8s_dnsmetrics_clock();
	k8s_querylog_entry_t e = {
		.query = qdata->query->wire, .query_size = qdata->query->size,
		.answer = pkt->wire, .answer_size = pkt->size, .remote = remote,
		.local = k8s_glue_query_local(qdata->params),
		.tcp = (qdata->params->proto == KNOTD_QUERY_PROTO_TCP),
		.duration_ns = (now > received_ns) ? now - received_ns : 0,
	};
	k8s_querylog_answer(&e);
}

/*!
 * \brief Counts the answer to \a qdata; \a seen: k8s_stats_answering_this(qdata), checked
 * by the caller.
 * Inline in both END hooks, the count too (dnsmetrics.h): a call and its register saves
 * less on every answer, and the answer's fields go to the count in registers.
 */
static inline __attribute__((always_inline)) void answer_count(knotd_state_t state, const knot_pkt_t *pkt, knotd_qdata_t *qdata,
                         bool seen)
{
	const knotd_qdata_params_t *params = qdata->params;
	k8s_dnsmetrics_answer_t a = k8s_stats_answering.a;
	uint64_t received_ns = k8s_stats_answering.received_ns;
	k8s_stats_answering.qdata = NULL;
	if (!seen) {
		// Without a BEGIN (a malformed query), the answer took no time to speak of.
		received_ns = k8s_dnsmetrics_clock();
		a.module = false;
		a.plugin = K8S_DNSMETRICS_CORE;
		a.answered_ns = 0;
	}
	a.qtype = knot_pkt_qtype(qdata->query);
	a.proto = metrics_proto(qdata);
	if (state == KNOTD_STATE_NOOP) {
		// Nothing sent now: a module thread answers later and counts it in CoreDNS's
		// series; the module's outcome is counted now.
		if (a.module) {
			k8s_metrics_query(params->thread_id, a.proto, a.qtype, a.module_rcode,
			                  a.module_ns);
		}
		return;
	}
	const struct sockaddr_storage *remote = k8s_glue_remote(qdata);
	a.rcode = knot_wire_get_rcode(pkt->wire);
	a.ipv6 = (remote != NULL && remote->ss_family == AF_INET6);
	a.dnssec_ok = knot_pkt_has_dnssec(qdata->query);
	a.query_size = qdata->query->size;
	a.answer_size = pkt->size;
	k8s_dnsmetrics_count(params->thread_id, &a, received_ns);
	if (__builtin_expect(k8s_querylog_on(), 0)) {
		querylog_write(pkt, qdata, remote, received_ns);
	}
}

static knotd_state_t global_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                       knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	k8s_stats_answering_start(qdata);
	return state;
}

static knotd_state_t global_end_hook(knotd_state_t state, knot_pkt_t *pkt,
                                     knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	bool seen = k8s_stats_answering_this(qdata);
	if (!(seen && k8s_stats_answering.zone_counts)) {
		answer_count(state, pkt, qdata, seen);
	}
	return state;
}

static knotd_state_t zone_end_hook(knotd_state_t state, knot_pkt_t *pkt,
                                   knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (k8s_stats_answering_this(qdata) && k8s_stats_answering.zone_counts) {
		answer_count(state, pkt, qdata, true);
	}
	return state;
}

int k8s_stats_hooks(knotd_mod_t *mod, bool global)
{
	if (!global) {
		return knotd_mod_hook(mod, KNOTD_STAGE_END, zone_end_hook);
	}
	int ret = knotd_mod_hook(mod, KNOTD_STAGE_BEGIN, global_begin_hook);
	if (ret == KNOT_EOK) {
		ret = knotd_mod_hook(mod, KNOTD_STAGE_END, global_end_hook);
	}
	return ret;
}
