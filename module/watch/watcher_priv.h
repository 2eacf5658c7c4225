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
 * \brief Private to the watcher's files: its state, shared by the thread's loop and
 * registry (watcher.c) and its snapshot schedule (watcher_snap.c).
 */

#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "api/apiclient.h"
#include "watch/watcher.h"

struct k8s_watcher {
	/* Registry (registry_lock). */
	k8s_watcher_t *next;
	unsigned refs;

	/* Settings: an owned deep copy. */
	k8s_watcher_conf_t conf;

	/* Attached zones (clients_lock). */
	pthread_mutex_t clients_lock;
	k8s_watcher_client_t *clients;
	unsigned needs;
	k8s_watcher_stats_t last_stats; /*!< What push_stats() reported last, for the metrics endpoint. */

	/* Thread. */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	k8s_log_t log;

	/* Owned by the thread once started. */
	CURLM *multi;
	k8s_api_t api;
	bool api_ready;
	uint64_t settings_retry_ms;
	k8s_reflector_t *reflectors[K8S_SRC_COUNT];
	k8s_store_t *store;
	uint64_t stats_ms;

	/* The warm restart's snapshot (owned by the thread). */
	uint64_t fingerprint;         /*!< k8s_snapshot_fingerprint() of the settings. */
	bool stale;                   /*!< Answering from the snapshot until every source is listed. */
	atomic_bool superseded;       /*!< A successor of other settings writes the snapshot file now. */
	uint64_t snap_changes;        /*!< The store's change count written last (UINT64_MAX: none yet). */
	uint64_t snap_next_ms;        /*!< No write before this. */
	uint64_t snap_written_ms;     /*!< When it was written last. */
	uint64_t snap_loaded;
	uint64_t snap_writes;
	uint64_t snap_write_errors;
	uint64_t snap_refused;

	/* Resolver of ExternalName targets (its own thread), or NULL. */
	k8s_upstream_t *upstream;

	/* The synchronized watcher this one replaces after a reload (a reference), or NULL. */
	k8s_watcher_t *predecessor;

	k8s_table_t table;
};

/*! \brief The wall clock in Unix ns (the store's commit time, the snapshot's age). */
int64_t watcher_wall_ns(void);

/*! \brief Whether the zones' \a needs and the settings turn a source on. */
bool watcher_wanted(const k8s_watcher_t *w, k8s_source_t src, unsigned needs);

/*! \brief Whether a source completed a LIST (or its optional resource is absent). */
bool watcher_synced(const k8s_watcher_t *w, k8s_source_t src);

/*! \brief Whether every wanted source is synced. */
bool watcher_all_synced(const k8s_watcher_t *w, unsigned needs);

/*! \brief Reads the snapshot and answers from it, before the first request (watcher_snap.c). */
void watcher_snapshot_load(k8s_watcher_t *w, unsigned needs);

/*!
 * \brief Writes the snapshot after the first sync, then at most every SNAPSHOT_PERIOD_MS
 * while objects change; \a last: the thread stops.
 */
void watcher_snapshot_save(k8s_watcher_t *w, unsigned needs, uint64_t now, bool last);

/*! \brief The snapshot's state is replaced once every source completed its first LIST. */
void watcher_update_stale(k8s_watcher_t *w, unsigned needs);
