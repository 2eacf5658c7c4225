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
 * \brief The watcher: one thread per API connection that keeps a record table current.
 *
 * A watcher owns its thread, the API client, one reflector per resource, the
 * object store and the record table. Zones attached to mod-k8s share a
 * watcher when their watch settings are equal: the first zone creates it,
 * every zone takes a reference, the last one to leave stops and joins the
 * thread. knotd loads a reloaded configuration's zones before it unloads the
 * old ones, so a reload hands the watcher over without a second one and
 * without losing the table.
 *
 * What a watcher watches grows with what its zones need: services,
 * EndpointSlices and namespaces always; pods for verified pod records;
 * ServiceImports, imported EndpointSlices and the cluster id when a
 * clusterset zone is attached; nodes when a zone answers federation names
 * without a static topology.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/log.h"
#include "api/reflector.h"
#include "store/store.h"
#include "table/table.h"
#include "watch/watchconf.h"

/*!
 * \brief The phases of a round of the watcher's loop (one pass from a wake-up to the next
 * wait), each timed in every round that received, published or wrote something.
 */
typedef enum {
	K8S_PHASE_RECEIVE = 0, /*!< Transfers: TLS, HTTP, bodies split into items and lines. */
	K8S_PHASE_DECODE,      /*!< Items and events decoded into slim objects. */
	K8S_PHASE_STORE,       /*!< The store: objects kept and compared; pods, namespaces into the table. */
	K8S_PHASE_RECORDS,     /*!< The changed services' blocks built. */
	K8S_PHASE_PUBLISH,     /*!< Blocks into the table and the PTR index, what they replace retired. */
	K8S_PHASE_SNAPSHOT,    /*!< The snapshot written. */
	K8S_PHASE_OTHER,       /*!< The rest: the reflectors' timers, readiness, counters. */
	K8S_PHASE_TOTAL,       /*!< The whole round. */
	K8S_PHASE_COUNT
} k8s_phase_t;

/*! \brief Round phase buckets: <= 8 us, 16 us, 32 us, ... doubling to 8.389 s, the last unbounded. */
#define K8S_ROUND_BUCKETS 22
#define K8S_ROUND_BUCKET0_NS 8000

/*! \brief Counters a watcher reports to its zones about once a second. */
typedef struct {
	uint64_t objects[K8S_SRC_COUNT];       /*!< Objects held per source. */
	uint64_t services[K8S_ZONE_COUNT];     /*!< Service blocks published. */
	uint64_t records;                      /*!< Address records published. */
	uint64_t records_capped;               /*!< Records and ports left out at the per-name caps. */
	uint64_t table_bytes;                  /*!< Bytes of published blocks. */
	uint64_t resyncs;                      /*!< Full relists after the first. */
	uint64_t watch_restarts;               /*!< Watches restarted. */
	uint64_t api_errors[K8S_APIERR_COUNT]; /*!< Failed requests and streams by class. */
	uint64_t last_event_age_s;             /*!< Seconds since the last API event (0: none yet). */
	uint64_t latency[K8S_LATENCY_BUCKETS]; /*!< DNS programming latency histogram. */
	uint64_t latency_sum_us;               /*!< The latencies' sum (microseconds). */
	uint32_t ready;                        /*!< K8S_READY_* bits. */
	bool connected;                        /*!< Every needed watch is streaming. */
	bool snapshot_stale;                   /*!< Answering from a snapshot, not synchronized yet. */
	uint64_t snapshot_loaded;              /*!< Objects read from the snapshot at start. */
	uint64_t snapshot_writes;              /*!< Snapshots written. */
	uint64_t snapshot_write_errors;        /*!< Snapshots that could not be written. */
	uint64_t snapshot_refused;             /*!< Snapshot files found at start and not used (logged why). */
	uint64_t phases[K8S_PHASE_COUNT][K8S_ROUND_BUCKETS]; /*!< Rounds by each phase's duration. */
	uint64_t phase_sum_ns[K8S_PHASE_COUNT];              /*!< Each phase's time over those rounds. */
} k8s_watcher_stats_t;

/*! \brief A zone attached to a watcher: where its logs and counters go. */
typedef struct k8s_watcher_client {
	k8s_log_fn log;                 /*!< Log sink (called with the watcher's lock held). */
	void (*stats)(void *ctx, const k8s_watcher_stats_t *stats); /*!< Counter sink, likewise. */
	void *ctx;
	unsigned needs;                 /*!< K8S_NEED_* bits (resources.h). */
	const uint8_t *zone;            /*!< The zone's name (wire format), for the reload hand-over. */
	bool log_zone;                  /*!< The watcher's lines name this zone (its cluster zone) rather than the newest. */
	struct k8s_watcher_client *next; /*!< Private. */
} k8s_watcher_client_t;

typedef struct k8s_watcher k8s_watcher_t;

/*!
 * \brief Takes a reference to the watcher of these settings, starting one if there is none.
 *
 * Fails only for bad settings (e.g. an unreadable kubeconfig) or no memory;
 * an unreachable API server is retried by the thread.
 *
 * \param err     Out: lowercase reason on failure.
 *
 * \return The watcher, or NULL.
 */
k8s_watcher_t *k8s_watcher_acquire(const k8s_watcher_conf_t *conf, char *err, size_t errlen);

/*!
 * \brief Attaches a zone; its needs are watched from now on.
 *
 * When a reload changed the watch settings, the zone's new watcher starts
 * from nothing while the old one (still attached to the old instance of the
 * same zone) is synchronized: the new watcher keeps the old one as its
 * predecessor and k8s_watcher_serving() answers from it until the new one is
 * ready, then lets it go.
 */
void k8s_watcher_attach(k8s_watcher_t *w, k8s_watcher_client_t *client);

/*! \brief Detaches a zone; no callback reaches it after this returns. */
void k8s_watcher_detach(k8s_watcher_t *w, k8s_watcher_client_t *client);

/*! \brief Drops a reference; the last one stops and joins the thread and frees everything. */
void k8s_watcher_release(k8s_watcher_t *w);

/*! \brief The record table (read it inside an RCU read-side section). */
const k8s_table_t *k8s_watcher_table(const k8s_watcher_t *w);

/*!
 * \brief The watcher to answer from: \a w once ready for \a ready_bits, else its
 * predecessor while that one is (inside an RCU read-side section).
 */
const k8s_watcher_t *k8s_watcher_serving(const k8s_watcher_t *w, uint32_t ready_bits);

/*!
 * \brief True if a zone needing \a ready_bits answers: from \a w, or its predecessor after a
 * reload. Takes the RCU read lock: the calling thread is registered with liburcu.
 */
bool k8s_watcher_servable(const k8s_watcher_t *w, uint32_t ready_bits);

