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
 * The watcher's warm restart: the snapshot read and published before the first
 * request, and written on its schedule (after the first sync, then while objects
 * change, now and then while every watch streams, and when the thread stops).
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>
#include <libknot/error.h>

#include "lib/bulk.h"
#include "store/snapshot.h"
#include "watch/watcher_priv.h"

/*! \brief The snapshot is rewritten at most this often while objects change. */
#define SNAPSHOT_PERIOD_MS (5 * 1000)
/*!
 * \brief ...and at least this many times as long as the last write took (tens of ms per
 * 10,000 services, on a thread of its own): at most 0.5 % of a CPU.
 */
#define SNAPSHOT_PERIOD_FACTOR 200
/*! \brief ...and this often without changes while every watch streams: its age is how old the state may be. */
#define SNAPSHOT_REFRESH_MS (10 * 60 * 1000)

/*! \brief The snapshot's file name in its directory (the settings' path's last part). */
static const char *snapshot_name(const k8s_watcher_t *w)
{
	return strrchr(w->conf.snapshot, '/') + 1;
}

/*! \brief True if every watch streams (or its optional resource is absent). */
static bool streaming(const k8s_watcher_t *w)
{
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		const k8s_reflector_stats_t *rs = (w->reflectors[src] != NULL)
		                                  ? k8s_reflector_stats(w->reflectors[src]) : NULL;
		if (rs != NULL && !rs->connected && !rs->absent) {
			return false;
		}
	}
	return true;
}

/*! \brief The roles a snapshot can answer for: it had them, and holds every source they wait for. */
static uint32_t snapshot_roles(const k8s_watcher_t *w, const k8s_snapshot_t *snap, unsigned needs)
{
	uint32_t roles = 0;
	static const uint32_t ROLES[] = { K8S_READY_CLUSTER, K8S_READY_CLUSTERSET };
	for (size_t r = 0; r < sizeof(ROLES) / sizeof(ROLES[0]); r++) {
		bool complete = (snap->ready & ROLES[r]) != 0;
		for (int src = 0; complete && src < K8S_SRC_COUNT; src++) {
			complete = !((k8s_resources[src].ready & ROLES[r]) && watcher_wanted(w, src, needs)) ||
			           (snap->sources & (1u << src));
		}
		roles |= complete ? ROLES[r] : 0;
	}
	return roles;
}

/*!
 * \brief Answers from the snapshot until the API is listed: its objects go through the
 * store as a LIST's would, so that the first real LIST replaces them.
 */
static void snapshot_publish(k8s_watcher_t *w, unsigned needs)
{
	int64_t now_s = watcher_wall_ns() / 1000000000;
	uint64_t started = k8s_now_ms();
	k8s_snapshot_t snap;
	char why[256] = "";
	int ret = k8s_snapshot_read(&w->snapdir, snapshot_name(w), w->fingerprint, now_s,
	                            w->conf.snapshot_max_age_s, &snap, why, sizeof(why));
	if (ret == KNOT_ENOENT) {
		k8s_logf(&w->log, LOG_INFO, "no snapshot to answer from until the API is listed (%s)",
		         w->conf.snapshot);
		return;
	} else if (ret != KNOT_EOK) {
		w->snap_refused++;
		k8s_logf(&w->log, LOG_WARNING, "ignoring snapshot %s (%s)", w->conf.snapshot,
		         (ret == KNOT_EMALF) ? why : knot_strerror(ret));
		return;
	}
	uint64_t read_ms = k8s_now_ms() - started;
	uint32_t roles = snapshot_roles(w, &snap, needs);
	if (roles == 0) {
		w->snap_refused++;
		k8s_logf(&w->log, LOG_WARNING, "ignoring snapshot %s (it lacks resources the zones need)",
		         w->conf.snapshot);
		k8s_snapshot_free(&snap);
		return;
	}
	// The table grows once to its size, not by doubling (each doubling copies it to fresh memory).
	size_t svcs = 0, addrs = 0;
	k8s_snapshot_sizes(&snap, &svcs, &addrs);
	(void)k8s_table_reserve(&w->table, svcs, addrs);  // Without it they grow as they go.
	// Forward names first; the reverse zones wait for the PTR index, built right after.
	k8s_table_defer_ptr(&w->table);
	k8s_snapshot_load(&snap, w->store);
	w->snap_loaded = snap.count;
	k8s_store_commit(w->store, watcher_wall_ns());
	k8s_table_set_ready(&w->table, roles);
	w->stale = true;
	uint64_t published_ms = k8s_now_ms() - started - read_ms;
	int ret_ptr = k8s_table_index_ptrs(&w->table);
	k8s_table_stats_t ts = k8s_table_stats(&w->table);
	k8s_logf(&w->log, LOG_NOTICE, "answering from the snapshot of %lld s ago, stale until the "
	         "API is listed (%zu objects, %zu services, %zu address records; read in %llu ms, "
	         "published in %llu ms, PTR %s in %llu ms)", (long long)(now_s - snap.created_s),
	         snap.count, ts.svc_count[K8S_ZONE_CLUSTER], ts.record_count,
	         (unsigned long long)read_ms, (unsigned long long)published_ms,
	         (ret_ptr == KNOT_EOK) ? "indexed" : "not indexed (out of memory, retried)",
	         (unsigned long long)(k8s_now_ms() - started - read_ms - published_ms));
	k8s_snapshot_free(&snap);
}

/*!
 * \brief Opens the snapshot's directory and its key, once, at the thread's start: one
 * that is not knotd's own is logged and the watcher runs without a snapshot.
 */
static void snapshot_dir_open(k8s_watcher_t *w)
{
	w->snapdir.fd = -1;
	if (w->conf.snapshot == NULL) {
		return;
	}
	const char *slash = strrchr(w->conf.snapshot, '/');
	char dir[4096];
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - w->conf.snapshot), w->conf.snapshot);
	char why[256] = "";
	int ret = k8s_snapdir_open(&w->snapdir, dir, why, sizeof(why));
	if (ret != KNOT_EOK) {
		k8s_logf(&w->log, LOG_WARNING, "no snapshot for a warm restart (directory %s: %s)",
		         dir, why);
	}
}

void watcher_snapshot_load(k8s_watcher_t *w, unsigned needs)
{
	snapshot_dir_open(w);
	// After a reload, the predecessor's live table is better than any file.
	if (w->snapdir.fd < 0 || w->predecessor != NULL) {
		return;
	}
	// A fresh process: objects, blocks and the table's arrays in populated chunks (bulk.h).
	k8s_bulk_begin();
	snapshot_publish(w, needs);
	k8s_bulk_end();
}

/*! \brief A write on its own thread: the objects taken from the store, then its outcome. */
struct watcher_snap_job {
	pthread_t thread;
	k8s_snapshot_objects_t objects;
	const k8s_snapdir_t *dir;   /*!< The watcher's: closed only after the job is joined. */
	const char *name;
	uint64_t fingerprint;
	int64_t now_s;
	uint32_t ready;
	uint64_t started_ms;
	uint64_t changes_before;    /*!< The store's change count of the last write that held. */
	atomic_bool done;
	int ret;
	bool owned;
	char why[256];              /*!< Why the directory is not ours any more. */
	size_t written;
	uint64_t took_ms;
};

static void job_write(struct watcher_snap_job *job)
{
	// Its owner or mode may have changed since the start: then it holds nothing of ours.
	job->owned = k8s_snapdir_owned(job->dir, job->why, sizeof(job->why));
	job->ret = !job->owned ? KNOT_EACCES :
	           k8s_snapshot_write(job->dir, job->name, job->fingerprint, job->now_s,
	                              &job->objects, job->ready, &job->written);
	job->took_ms = k8s_now_ms() - job->started_ms;
}

static void *job_main(void *arg)
{
	struct watcher_snap_job *job = arg;
	job_write(job);
	atomic_store(&job->done, true);
	return NULL;
}

/*! \brief A write's end: counted, logged, the next one scheduled, the objects kept let go. */
static void job_finish(k8s_watcher_t *w, struct watcher_snap_job *job)
{
	w->snap_next_ms = job->started_ms + ((job->took_ms * SNAPSHOT_PERIOD_FACTOR > SNAPSHOT_PERIOD_MS)
	                                     ? job->took_ms * SNAPSHOT_PERIOD_FACTOR : SNAPSHOT_PERIOD_MS);
	if (job->ret != KNOT_EOK) {
		// Not written: what changed since the last write is still to write, a period away.
		w->snap_changes = job->changes_before;
		// One line per try: the next is a period away.
		w->snap_write_errors++;
		k8s_logf(&w->log, LOG_WARNING, "cannot write snapshot %s (%s%s)", w->conf.snapshot,
		         job->owned ? knot_strerror(job->ret) : "its directory is ",
		         job->owned ? "" : job->why);
	} else if (w->snap_writes++ == 0) {
		// Only the first write is logged: the others would repeat it every few seconds.
		k8s_logf(&w->log, LOG_INFO, "wrote snapshot %s (%zu objects in %llu ms), rewritten "
		         "at most every %llu s while objects change", w->conf.snapshot, job->written,
		         (unsigned long long)job->took_ms,
		         (unsigned long long)(w->snap_next_ms - job->started_ms + 999) / 1000);
	}
	k8s_store_hold(w->store, false);
	k8s_snapshot_objects_free(&job->objects);
	free(job);
}

/*! \brief Writes the snapshot after the first sync, then at most every SNAPSHOT_PERIOD_MS while objects change. */
void watcher_snapshot_save(k8s_watcher_t *w, unsigned needs, uint64_t now, bool last)
{
	struct watcher_snap_job *job = w->snap_job;
	if (job != NULL) {
		if (!last && !atomic_load(&job->done)) {
			return;
		}
		pthread_join(job->thread, NULL);
		w->snap_job = NULL;
		job_finish(w, job);
	}
	if (w->snapdir.fd < 0 || w->stale || atomic_load(&w->superseded) ||
	    !watcher_all_synced(w, needs) ||
	    (!last && now < w->snap_next_ms)) {
		return;
	}
	// Unchanged but confirmed by streaming watches: rewritten now and then, so that it stays young.
	bool changed = k8s_store_stats(w->store)->changes != w->snap_changes;
	if (!changed && (last || now - w->snap_written_ms < SNAPSHOT_REFRESH_MS || !streaming(w))) {
		return;
	}
	uint32_t sources = 0;
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		sources |= watcher_synced(w, src) ? (1u << src) : 0;
	}
	job = calloc(1, sizeof(*job));
	int ret = (job != NULL) ? k8s_snapshot_take(w->store, sources, &job->objects) : KNOT_ENOMEM;
	if (ret != KNOT_EOK) {
		free(job);
		w->snap_write_errors++;
		w->snap_next_ms = now + SNAPSHOT_PERIOD_MS;
		k8s_logf(&w->log, LOG_WARNING, "cannot write snapshot %s (%s)", w->conf.snapshot,
		         knot_strerror(ret));
		return;
	}
	job->dir = &w->snapdir;
	job->name = snapshot_name(w);
	job->fingerprint = w->fingerprint;
	job->now_s = watcher_wall_ns() / 1000000000;
	job->ready = k8s_table_ready(&w->table);
	job->started_ms = now;
	// From here on the store frees nothing the writer may be reading.
	k8s_store_hold(w->store, true);
	job->changes_before = w->snap_changes;
	w->snap_changes = k8s_store_stats(w->store)->changes;
	w->snap_written_ms = now;
	w->snap_next_ms = UINT64_MAX;  // set by job_finish()
	// The thread's last one is written here: the process may be going away.
	if (last || pthread_create(&job->thread, NULL, job_main, job) != 0) {
		job_write(job);
		job_finish(w, job);
		return;
	}
	w->snap_job = job;
}

void watcher_snapshot_close(k8s_watcher_t *w)
{
	k8s_snapdir_close(&w->snapdir);
}

/*! \brief The snapshot's state is replaced once every source completed its first LIST. */
void watcher_update_stale(k8s_watcher_t *w, unsigned needs)
{
	if (w->stale && watcher_all_synced(w, needs)) {
		w->stale = false;
		k8s_table_stats_t ts = k8s_table_stats(&w->table);
		k8s_logf(&w->log, LOG_NOTICE, "synchronized, the snapshot's state is replaced by the "
		         "API's (%zu services, %zu namespaces, %zu address records)",
		         ts.svc_count[K8S_ZONE_CLUSTER], ts.ns_count, ts.record_count);
	}
}
