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
#include <time.h>

#include <curl/curl.h>

#include "api/apiclient.h"
#include "api/reflector.h"
#include "lib/beat.h"
#include "store/resources.h"
#include "store/snapfile.h"
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
	k8s_beat_t beat;              /*!< A round of the thread's loop (/health). */

	/* Owned by the thread once started. */
	CURLM *multi;
	k8s_api_t api;
	bool api_ready;
	uint64_t settings_retry_ms;
	uint64_t started_ms;          /*!< The thread's start: the first sync's time is logged. */
	k8s_reflector_t *reflectors[K8S_SRC_COUNT];
	k8s_store_t *store;
	/* The ConfigMaps read for the glue (aside sources): held on the board while read. */
	bool cm_held[K8S_SRC_COUNT];
	bool cm_published[K8S_SRC_COUNT];   /*!< Published since its LIST. */
	uint64_t cm_digest[K8S_SRC_COUNT];  /*!< Of the object published, 0: none. */
	uint64_t stats_ms;

	/* The warm restart's snapshot (owned by the thread). */
	k8s_snapdir_t snapdir;        /*!< Its directory and key; fd -1: no snapshot. */
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
	struct watcher_snap_job *snap_job; /*!< A write in progress on a thread of its own, or NULL. */

	/* The round in progress (owned by the thread): what the timed sink adds up. */
	uint64_t round_store_ns;
	size_t round_objects;
	/* The rounds' phases so far (owned by the thread; push_stats() copies them). */
	uint64_t phases[K8S_PHASE_COUNT][K8S_ROUND_BUCKETS];
	uint64_t phase_sum_ns[K8S_PHASE_COUNT];

	/* The synchronized watcher this one replaces after a reload (a reference), or NULL. */
	k8s_watcher_t *predecessor;

	k8s_table_t table;
};

/*
 * watcher.c calls watcher_snap.c, never the other way: what both need of the watcher's
 * state is here.
 */

/*! \brief The wall clock in Unix ns (the store's commit time, the snapshot's age). */
static inline int64_t watcher_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*! \brief Whether the zones' \a needs and the settings turn a source on. */
static inline bool watcher_wanted(const k8s_watcher_t *w, k8s_source_t src, unsigned needs)
{
	unsigned off = (w->conf.no_endpoints ? K8S_OFF_NO_ENDPOINTS : 0) |
	               (w->conf.cluster_id != NULL ? K8S_OFF_CLUSTER_ID : 0);
	return k8s_resource_wanted(src, needs, off);
}

/*! \brief Whether a source completed a LIST (or its optional resource is absent). */
static inline bool watcher_synced(const k8s_watcher_t *w, k8s_source_t src)
{
	return w->reflectors[src] != NULL && k8s_reflector_stats(w->reflectors[src])->synced;
}

/*! \brief Whether every wanted source is synced (the ConfigMaps read aside are not waited for). */
static inline bool watcher_all_synced(const k8s_watcher_t *w, unsigned needs)
{
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		if (watcher_wanted(w, src, needs) && !k8s_resources[src].aside &&
		    !watcher_synced(w, src)) {
			return false;
		}
	}
	return true;
}

/*!
 * \brief Opens the snapshot's directory, reads the snapshot and answers from it, before
 * the first request (watcher_snap.c).
 */
void watcher_snapshot_load(k8s_watcher_t *w, unsigned needs);

/*! \brief Closes the snapshot's directory, after the last write. */
void watcher_snapshot_close(k8s_watcher_t *w);

/*!
 * \brief Writes the snapshot after the first sync, then at most every SNAPSHOT_PERIOD_MS
 * while objects change, on a thread of its own (the store keeps what it lets go of
 * meanwhile); \a last: the thread stops, the write in progress is waited for and the
 * last one written here.
 */
void watcher_snapshot_save(k8s_watcher_t *w, unsigned needs, uint64_t now, bool last);

/*! \brief The snapshot's state is replaced once every source completed its first LIST. */
void watcher_update_stale(k8s_watcher_t *w, unsigned needs);

/*!
 * \brief The namespace and name of an aside source's ConfigMap (the settings checked
 * them: k8s_hosts_check_configmap()); false if the settings name none (watcher_cm.c).
 */
bool watcher_configmap_of(const k8s_watcher_t *w, int src, char ns[64], char name[254]);

/*! \brief Puts the ConfigMaps read aside on the board, after their LIST and when they change. */
void watcher_configmaps_publish(k8s_watcher_t *w);

/*! \brief Lets go of the board's names this watcher held. */
void watcher_configmaps_release(k8s_watcher_t *w);
