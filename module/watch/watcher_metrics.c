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
 * The watchers' series (watcher_metrics.h): a family per counter of k8s_watcher_stats_t,
 * one sample per watcher (labelled by its settings' fingerprint), the DNS programming
 * latency per watcher and, under CoreDNS's name, every watcher's together, and the
 * phases of the watcher's rounds.
 */

#include <inttypes.h>
#include <stdio.h>

#include "api/reflector.h"
#include "store/resources.h"
#include "table/table.h"
#include "watch/watcher_metrics.h"
#include "mod-k8s/mod-k8s.h"

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

static void watcher_series(k8s_metrics_out_t *out, watcher_series_t s, const k8s_watcher_row_t *row)
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

void k8s_watcher_metrics_write(k8s_metrics_out_t *out, const k8s_watcher_row_t *rows,
                               size_t count)
{
	for (watcher_series_t s = 0; s < W_COUNT; s++) {
		k8s_metrics_family(out, watcher_families[s].name, watcher_families[s].type,
		                   watcher_families[s].help);
		for (size_t i = 0; i < count; i++) {
			watcher_series(out, s, &rows[i]);
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
	for (size_t i = 0; i < count; i++) {
		char base[40];
		snprintf(base, sizeof(base), "watcher=\"%016" PRIx64 "\"", rows[i].fingerprint);
		k8s_metrics_histogram(out, MOD_K8S_METRIC_DNS_PROGRAMMING_DURATION_SECONDS, base,
		                      rows[i].st.latency, bounds, K8S_LATENCY_BUCKETS - 1,
		                      rows[i].st.latency_sum_us / 1e6);
	}
	// The rounds' phases: where a change's time goes in the watcher's thread.
	static const char *phases[K8S_PHASE_COUNT] = {
		[K8S_PHASE_RECEIVE] = "receive", [K8S_PHASE_DECODE] = "decode",
		[K8S_PHASE_STORE] = "store", [K8S_PHASE_RECORDS] = "records",
		[K8S_PHASE_PUBLISH] = "publish", [K8S_PHASE_SNAPSHOT] = "snapshot",
		[K8S_PHASE_OTHER] = "other", [K8S_PHASE_TOTAL] = "total",
	};
	double round_bounds[K8S_ROUND_BUCKETS - 1];
	for (size_t b = 0; b < K8S_ROUND_BUCKETS - 1; b++) {
		round_bounds[b] = (double)((uint64_t)K8S_ROUND_BUCKET0_NS << b) / 1e9;
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_WATCHER_ROUND_SECONDS, "histogram",
	                   "Rounds of the watcher's loop that received, published or wrote "
	                   "something, by the time each phase took.");
	for (size_t i = 0; i < count; i++) {
		for (k8s_phase_t p = 0; p < K8S_PHASE_COUNT; p++) {
			char labels[80];
			snprintf(labels, sizeof(labels), "watcher=\"%016" PRIx64 "\",phase=\"%s\"",
			         rows[i].fingerprint, phases[p]);
			k8s_metrics_histogram(out, MOD_K8S_METRIC_WATCHER_ROUND_SECONDS, labels,
			                      rows[i].st.phases[p], round_bounds, K8S_ROUND_BUCKETS - 1,
			                      rows[i].st.phase_sum_ns[p] / 1e9);
		}
	}
	// CoreDNS's name: every watcher's together (the same buckets, CoreDNS's 1 ms doubling).
	uint64_t latency[K8S_LATENCY_BUCKETS] = { 0 }, latency_sum_us = 0;
	for (size_t i = 0; i < count; i++) {
		for (size_t b = 0; b < K8S_LATENCY_BUCKETS; b++) {
			latency[b] += rows[i].st.latency[b];
		}
		latency_sum_us += rows[i].st.latency_sum_us;
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_KUBERNETES_DNS_PROGRAMMING_DURATION_SECONDS, "histogram",
	                   "Histogram of the time (in seconds) it took to program a dns instance.");
	k8s_metrics_histogram(out, MOD_K8S_METRIC_COREDNS_KUBERNETES_DNS_PROGRAMMING_DURATION_SECONDS,
	                      "service_kind=\"all\"", latency, bounds, K8S_LATENCY_BUCKETS - 1,
	                      latency_sum_us / 1e6);
}
