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

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/param.h>

#include <curl/curl.h>
#include <libknot/dname.h>
#include <libknot/errcode.h>
#include <libknot/error.h>
#include <urcu/urcu-memb.h>

#include "api/apiclient.h"
#include "lib/bulk.h"
#include "api/kubeconfig.h"
#include "store/configmaps.h"
#include "store/snapshot.h"
#include "watch/watcher.h"
#include "watch/watcher_metrics.h"
#include "watch/watcher_priv.h"

/*! \brief Retry period for unusable API settings (missing kubeconfig, token, env). */
#define SETTINGS_RETRY_MS (10 * 1000)
#define STATS_PERIOD_MS 1000
#define MAX_WAIT_MS 1000
/*! \brief A round this long is logged (debug) with its phases: the programming latency's goal. */
#define SLOW_ROUND_NS (50 * 1000000ULL)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_watcher_t *registry;

/* The watchers' series (watcher_metrics.c): one metrics source while any watcher exists. */

/*! \brief The source's collect: each watcher's last counters, copied under the registry's lock. */
static void metrics_collect(void *ctx, k8s_metrics_out_t *out)
{
	// Static: only the endpoint's thread renders (a scrape at a time).
	static k8s_watcher_row_t rows[K8S_WATCHER_METRICS_MAX];
	size_t count = 0;
	pthread_mutex_lock(&registry_lock);
	for (k8s_watcher_t *w = registry; w != NULL && count < K8S_WATCHER_METRICS_MAX;
	     w = w->next) {
		pthread_mutex_lock(&w->clients_lock);
		rows[count].st = w->last_stats;
		pthread_mutex_unlock(&w->clients_lock);
		rows[count++].fingerprint = w->fingerprint;
	}
	pthread_mutex_unlock(&registry_lock);
	k8s_watcher_metrics_write(out, rows, count);
}

static pthread_mutex_t metrics_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_metrics_source_t metrics = { .collect = metrics_collect };
static bool metrics_added;  /*!< Under metrics_lock. */

/*!
 * \brief Adds the source with the first watcher, removes it with the last. Never under
 * the registry's lock: a scrape holds the sources' lock while it takes the registry's.
 */
static void metrics_update(void)
{
	pthread_mutex_lock(&metrics_lock);
	pthread_mutex_lock(&registry_lock);
	bool any = registry != NULL;
	pthread_mutex_unlock(&registry_lock);
	if (any && !metrics_added) {
		k8s_metrics_source_add(&metrics);
	} else if (!any && metrics_added) {
		k8s_metrics_source_remove(&metrics);
	}
	metrics_added = any;
	pthread_mutex_unlock(&metrics_lock);
}

/* Logging and stats go to the zones attached, through knotd. */

static void watcher_log(void *ctx, int priority, const char *msg)
{
	k8s_watcher_t *w = ctx;
	pthread_mutex_lock(&w->clients_lock);
	// The newest zone that asks to be named (the cluster zone), else the newest: during
	// a reload the old zones are the ones going away.
	k8s_watcher_client_t *sink = w->clients;
	for (k8s_watcher_client_t *c = w->clients; c != NULL; c = c->next) {
		if (c->log_zone) {
			sink = c;
			break;
		}
	}
	if (sink != NULL && sink->log != NULL) {
		sink->log(sink->ctx, priority, msg);
	}
	pthread_mutex_unlock(&w->clients_lock);
}

static unsigned current_needs(k8s_watcher_t *w)
{
	pthread_mutex_lock(&w->clients_lock);
	unsigned needs = w->needs;
	pthread_mutex_unlock(&w->clients_lock);
	return needs;
}

/* The thread. */

/*! \brief Reads the API settings; retried while they are unusable. */
static void load_settings(k8s_watcher_t *w, uint64_t now)
{
	if (w->api_ready || now < w->settings_retry_ms) {
		return;
	}
	k8s_apiconf_t conf = { 0 };
	char err[256] = "";
	int ret = (w->conf.kubeconfig != NULL)
	          ? k8s_kubeconfig_load(w->conf.kubeconfig, w->conf.context, &conf, err, sizeof(err))
	          : k8s_incluster_load(w->conf.sa_dir, &conf, err, sizeof(err));
	if (ret != KNOT_EOK) {
		k8s_logf(&w->log, LOG_ERR, "cannot read API server settings, retrying in %d s (%s)",
		         SETTINGS_RETRY_MS / 1000, err[0] != '\0' ? err : knot_strerror(ret));
		w->settings_retry_ms = now + SETTINGS_RETRY_MS;
		k8s_apiconf_free(&conf);
		return;
	}
	k8s_logf(&w->log, LOG_INFO, "watching the API server %s (%s)", conf.server, conf.source);
	ret = k8s_api_init(&w->api, &conf, &w->log);
	k8s_apiconf_free(&conf);
	if (ret != KNOT_EOK) {
		k8s_logf(&w->log, LOG_ERR, "cannot set up the API client (%s)", knot_strerror(ret));
		w->settings_retry_ms = now + SETTINGS_RETRY_MS;
		return;
	}
	w->api_ready = true;
}

/* The reflectors' sink: the store's, timed for the round's store phase. */

static void timed_upsert(void *ctx, unsigned source, k8s_object_t *obj)
{
	k8s_watcher_t *w = ctx;
	uint64_t started = k8s_now_ns();
	k8s_store_upsert(w->store, source, obj);
	w->round_store_ns += k8s_now_ns() - started;
	w->round_objects++;
}

static void timed_remove(void *ctx, unsigned source, k8s_object_t *obj)
{
	k8s_watcher_t *w = ctx;
	uint64_t started = k8s_now_ns();
	k8s_store_remove(w->store, source, obj);
	w->round_store_ns += k8s_now_ns() - started;
	w->round_objects++;
}

static void timed_list_begin(void *ctx, unsigned source)
{
	k8s_watcher_t *w = ctx;
	k8s_store_list_begin(w->store, source);
}

static void timed_list_end(void *ctx, unsigned source)
{
	k8s_watcher_t *w = ctx;
	uint64_t started = k8s_now_ns();
	k8s_store_list_end(w->store, source);
	w->round_store_ns += k8s_now_ns() - started;
}

static void timed_too_large(void *ctx, unsigned source, const char *ns, const char *name,
                            bool deleted)
{
	k8s_watcher_t *w = ctx;
	k8s_store_too_large(w->store, source, ns, name, deleted);
	w->round_objects++;
}

static const k8s_sink_t timed_sink = {
	.upsert = timed_upsert,
	.remove = timed_remove,
	.list_begin = timed_list_begin,
	.list_end = timed_list_end,
	.too_large = timed_too_large,
};

static void ensure_reflectors(k8s_watcher_t *w, unsigned needs)
{
	char cm_ns[64] = "", cm_name[254] = "";
	bool hosts_cm = watcher_configmap_of(w, K8S_SRC_HOSTS_CM, cm_ns, cm_name);
	// The settings the resources' selectors refer to.
	const char *opts[K8S_SEL_COUNT] = {
		[K8S_SEL_LABELS] = w->conf.labels,
		[K8S_SEL_NAMESPACE_LABELS] = w->conf.namespace_labels,
		[K8S_SEL_NODE_NAME] = w->conf.node_name,
		[K8S_SEL_HOSTS_CM_NS] = hosts_cm ? cm_ns : NULL,
		[K8S_SEL_HOSTS_CM_NAME] = hosts_cm ? cm_name : NULL,
	};
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		if (w->reflectors[src] != NULL || !watcher_wanted(w, src, needs)) {
			continue;
		}
		const k8s_resource_t *res = &k8s_resources[src];
		char selector[1024], field[300], paths[2][256], ns[64], name[254];
		if (res->aside && !w->cm_held[src]) {
			if (!watcher_configmap_of(w, src, ns, name) ||
			    k8s_configmaps_hold(ns, name) != KNOT_EOK) {
				continue;
			}
			w->cm_held[src] = true;
		}
		k8s_resource_selectors(src, opts, selector, sizeof(selector), field, sizeof(field));
		k8s_reflector_conf_t rconf = {
			.kind = res->kind,
			.source = src,
			.label_selector = (selector[0] != '\0') ? selector : NULL,
			.field_selector = (field[0] != '\0') ? field : NULL,
			.optional = res->optional,
			.forbidden_absent = res->aside,
			.stall_s = w->conf.stall_s,
			.absent_retry_s = w->conf.absent_retry_s,
			.watch_list = w->conf.watch_list,
		};
		for (unsigned v = 0; v < 2; v++) {
			if (k8s_resource_path(src, v, opts, paths[v], sizeof(paths[v])) == KNOT_EOK) {
				rconf.paths[v] = paths[v];
			}
		}
		w->reflectors[src] = k8s_reflector_new(&rconf, &w->api, w->multi, &timed_sink,
		                                       w, &w->log);
		if (w->reflectors[src] == NULL) {
			k8s_logf(&w->log, LOG_ERR, "cannot watch %s (%s)", k8s_resource_name(src),
			         knot_strerror(KNOT_ENOMEM));
		}
	}
}

/*! \brief True if every source a zone role waits for (K8S_READY_*) and watches completed a LIST. */
static bool role_synced(const k8s_watcher_t *w, uint32_t role, unsigned needs)
{
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		if ((k8s_resources[src].ready & role) && watcher_wanted(w, src, needs) &&
		    !watcher_synced(w, src)) {
			return false;
		}
	}
	return true;
}

/*! \brief True if every zone attached can answer from this watcher. */
static bool ready_for(const k8s_watcher_t *w, unsigned needs)
{
	uint32_t ready = k8s_table_ready(&w->table);
	return (ready & K8S_READY_CLUSTER) && (ready & K8S_READY_PTR) &&
	       (!(needs & K8S_NEED_CLUSTERSET) || (ready & K8S_READY_CLUSTERSET));
}

/*! \brief Lets the predecessor go once no reader can be answering from it. */
static void drop_predecessor(k8s_watcher_t *w)
{
	k8s_watcher_t *old = w->predecessor;
	// Its zones may keep it a while: it must not put its settings back into the file.
	atomic_store(&old->superseded, true);
	rcu_assign_pointer(w->predecessor, NULL);
	urcu_memb_synchronize_rcu();
	k8s_logf(&w->log, LOG_INFO, "synchronized with the new settings, the previous watcher is released");
	k8s_watcher_release(old);
}

/*! \brief A zone answers once every resource it depends on completed a full LIST. */
static void update_ready(k8s_watcher_t *w, unsigned needs)
{
	uint32_t ready = k8s_table_ready(&w->table), bits = 0;
	bool cluster = role_synced(w, K8S_READY_CLUSTER, needs);
	if (cluster && !(ready & K8S_READY_CLUSTER)) {
		bits |= K8S_READY_CLUSTER;
	}
	// Without a clusterset zone, no clusterset source is watched: nothing to wait for yet.
	bool clusterset = (needs & K8S_NEED_CLUSTERSET) &&
	                  role_synced(w, K8S_READY_CLUSTERSET, needs);
	if (clusterset && !(ready & K8S_READY_CLUSTERSET)) {
		bits |= K8S_READY_CLUSTERSET;
	}
	k8s_table_stats_t ts = k8s_table_stats(&w->table);
	if (bits & K8S_READY_CLUSTER) {
		// The module's own first sync, apart from knotd's start (bench/latency reads it).
		uint64_t spent_ms = k8s_now_ms() - w->started_ms;
		k8s_logf(&w->log, LOG_INFO, "synchronized the cluster zone, %zu services, "
		         "%zu namespaces, %zu address records, %" PRIu64 ".%03" PRIu64 " s after the "
		         "watcher's start", ts.svc_count[K8S_ZONE_CLUSTER], ts.ns_count,
		         ts.record_count, spent_ms / 1000, spent_ms % 1000);
	}
	if (bits & K8S_READY_CLUSTERSET) {
		k8s_logf(&w->log, LOG_INFO, "synchronized the clusterset zone, %zu service imports, "
		         "cluster id '%s'", ts.svc_count[K8S_ZONE_CLUSTERSET],
		         k8s_store_cluster_id(w->store));
	}
	if (bits != 0) {
		k8s_table_set_ready(&w->table, bits);
	}
}

static void push_stats(k8s_watcher_t *w, uint64_t now)
{
	k8s_watcher_stats_t st = { 0 };
	const k8s_store_stats_t *ss = k8s_store_stats(w->store);
	memcpy(st.objects, ss->objects, sizeof(st.objects));
	memcpy(st.latency, ss->latency, sizeof(st.latency));
	st.latency_sum_us = ss->latency_sum_us;
	k8s_table_stats_t ts = k8s_table_stats(&w->table);
	for (int z = 0; z < K8S_ZONE_COUNT; z++) {
		st.services[z] = ts.svc_count[z];
	}
	st.records = ts.record_count;
	st.records_capped = ts.capped_count;
	st.table_bytes = ts.bytes;
	st.ready = k8s_table_ready(&w->table);

	uint64_t last_event = 0;
	bool connected = w->api_ready;
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		if (w->reflectors[src] == NULL) {
			continue;
		}
		const k8s_reflector_stats_t *rs = k8s_reflector_stats(w->reflectors[src]);
		st.resyncs += rs->relists;
		st.watch_restarts += rs->watch_restarts;
		for (int e = 0; e < K8S_APIERR_COUNT; e++) {
			st.api_errors[e] += rs->errors[e];
		}
		if (rs->last_event_ms > last_event) {
			last_event = rs->last_event_ms;
		}
		connected = connected && (rs->connected || rs->absent);
	}
	st.last_event_age_s = (last_event > 0) ? (now - last_event) / 1000 : 0;
	st.connected = connected;
	st.snapshot_stale = w->stale;
	st.snapshot_loaded = w->snap_loaded;
	st.snapshot_writes = w->snap_writes;
	st.snapshot_write_errors = w->snap_write_errors;
	st.snapshot_refused = w->snap_refused;
	memcpy(st.phases, w->phases, sizeof(st.phases));
	memcpy(st.phase_sum_ns, w->phase_sum_ns, sizeof(st.phase_sum_ns));

	pthread_mutex_lock(&w->clients_lock);
	w->last_stats = st;
	for (k8s_watcher_client_t *c = w->clients; c != NULL; c = c->next) {
		if (c->stats != NULL) {
			c->stats(c->ctx, &st);
		}
	}
	pthread_mutex_unlock(&w->clients_lock);
}

static void handle_done(k8s_watcher_t *w, uint64_t now)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(w->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE) {
			continue;
		}
		CURL *easy = msg->easy_handle;
		CURLcode result = msg->data.result;
		void *owner = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&owner);
		if (owner != NULL) {
			k8s_reflector_done(owner, result, now);
		}
	}
}

/* The rounds' phases. */

/*! \brief The reflectors' decoding time so far. */
static uint64_t decode_ns(const k8s_watcher_t *w)
{
	uint64_t sum = 0;
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		sum += (w->reflectors[src] != NULL) ? k8s_reflector_stats(w->reflectors[src])->decode_ns : 0;
	}
	return sum;
}

static void phase_note(k8s_watcher_t *w, k8s_phase_t phase, uint64_t ns)
{
	size_t b = 0;
	for (uint64_t bound = K8S_ROUND_BUCKET0_NS; ns > bound && b < K8S_ROUND_BUCKETS - 1; bound *= 2) {
		b++;
	}
	w->phases[phase][b]++;
	w->phase_sum_ns[phase] += ns;
}

/*! \brief Counts a round that did something in each phase's histogram; logs it when slow. */
static void round_end(k8s_watcher_t *w, uint64_t ns[K8S_PHASE_COUNT], size_t blocks)
{
	uint64_t known = 0;
	for (k8s_phase_t p = 0; p < K8S_PHASE_OTHER; p++) {
		known += ns[p];
	}
	// Phases are measured inside the round: what is left of it is the rest's.
	ns[K8S_PHASE_OTHER] = (ns[K8S_PHASE_TOTAL] > known) ? ns[K8S_PHASE_TOTAL] - known : 0;
	for (k8s_phase_t p = 0; p < K8S_PHASE_COUNT; p++) {
		phase_note(w, p, ns[p]);
	}
	if (ns[K8S_PHASE_TOTAL] >= SLOW_ROUND_NS) {
		k8s_logf(&w->log, LOG_DEBUG, "slow round of %.1f ms: receive %.1f, decode %.1f, "
		         "store %.1f, records %.1f, publish %.1f, snapshot %.1f, other %.1f ms "
		         "(%zu objects, %zu blocks)", ns[K8S_PHASE_TOTAL] / 1e6,
		         ns[K8S_PHASE_RECEIVE] / 1e6, ns[K8S_PHASE_DECODE] / 1e6,
		         ns[K8S_PHASE_STORE] / 1e6, ns[K8S_PHASE_RECORDS] / 1e6,
		         ns[K8S_PHASE_PUBLISH] / 1e6, ns[K8S_PHASE_SNAPSHOT] / 1e6,
		         ns[K8S_PHASE_OTHER] / 1e6, w->round_objects, blocks);
	}
}

static void *watcher_main(void *arg)
{
	k8s_watcher_t *w = arg;
	// Named for top -H and the tests' fault injection (15 characters at most).
	(void)pthread_setname_np(pthread_self(), "k8s-watch");
	// Labelled as its metrics (the settings' fingerprint): /health names it if it is wedged.
	k8s_beat_start(&w->beat, true, "watcher %016" PRIx64, w->fingerprint);
	w->started_ms = k8s_now_ms();
	urcu_memb_register_thread();
	watcher_snapshot_load(w, current_needs(w));
	// Without a snapshot, the first sync publishes the forward names first and indexes
	// their addresses once, after it, into a table sized for them (no growth on the way).
	if (k8s_table_ready(&w->table) == 0) {
		k8s_table_defer_ptr(&w->table);
	}
	push_stats(w, k8s_now_ms());

	while (!atomic_load(&w->stop)) {
		// A round waits MAX_WAIT_MS at most: one a second at least while it is alive.
		k8s_beat(&w->beat);
		uint64_t now = k8s_now_ms();
		unsigned needs = current_needs(w);
		long wait = MAX_WAIT_MS;

		load_settings(w, now);
		if (w->api_ready) {
			ensure_reflectors(w, needs);
			for (int src = 0; src < K8S_SRC_COUNT; src++) {
				if (w->reflectors[src] != NULL) {
					long next = k8s_reflector_tick(w->reflectors[src], now);
					if (next >= 0 && next < wait) {
						wait = next;
					}
				}
			}
		}

		curl_multi_poll(w->multi, NULL, 0, (int)wait, NULL);
		uint64_t ns[K8S_PHASE_COUNT] = { 0 }, started = k8s_now_ns(), decoded = decode_ns(w);
		w->round_store_ns = 0;
		w->round_objects = 0;
		int running = 0;
		curl_multi_perform(w->multi, &running);
		now = k8s_now_ms();
		handle_done(w, now);
		ns[K8S_PHASE_DECODE] = decode_ns(w) - decoded;
		ns[K8S_PHASE_STORE] = w->round_store_ns;
		uint64_t received = k8s_now_ns() - started;
		ns[K8S_PHASE_RECEIVE] = received - MIN(received, ns[K8S_PHASE_DECODE] + ns[K8S_PHASE_STORE]);

		// Publish what arrived, then open the zones whose data is complete.
		size_t blocks = 0;
		if (k8s_store_dirty(w->store)) {
			uint64_t built = k8s_store_stats(w->store)->records_ns, commit = k8s_now_ns();
			blocks = k8s_store_commit(w->store, watcher_wall_ns());
			ns[K8S_PHASE_RECORDS] = k8s_store_stats(w->store)->records_ns - built;
			commit = k8s_now_ns() - commit;
			ns[K8S_PHASE_PUBLISH] = commit - MIN(commit, ns[K8S_PHASE_RECORDS]);
		}
		watcher_configmaps_publish(w);
		uint32_t was_ready = k8s_table_ready(&w->table);
		update_ready(w, needs);
		// The addresses of a first sync, once the cluster zone answers (update_ready()).
		if (w->table.ptr_deferred && (k8s_table_ready(&w->table) & K8S_READY_CLUSTER)) {
			uint64_t indexed = k8s_now_ns();
			if (k8s_table_index_ptrs(&w->table) == KNOT_EOK) {
				k8s_logf(&w->log, LOG_NOTICE, "the PTR index is built, the reverse zones answer");
			}
			ns[K8S_PHASE_PUBLISH] += k8s_now_ns() - indexed;
		}
		// The previous watcher answers the reverse zones too until the index is built.
		if (w->predecessor != NULL && ready_for(w, needs)) {
			drop_predecessor(w);
		}
		watcher_update_stale(w, needs);
		uint64_t writes = w->snap_writes + w->snap_write_errors, saved = k8s_now_ns();
		watcher_snapshot_save(w, needs, now, false);
		ns[K8S_PHASE_SNAPSHOT] = k8s_now_ns() - saved;
		bool wrote = w->snap_writes + w->snap_write_errors != writes;
		ns[K8S_PHASE_TOTAL] = k8s_now_ns() - started;
		if (w->round_objects > 0 || blocks > 0 || wrote) {
			round_end(w, ns, blocks);
		}
		// A zone that opens shows in the counters (ready[...]) at once, not a period later.
		if (now - w->stats_ms >= STATS_PERIOD_MS || k8s_table_ready(&w->table) != was_ready) {
			w->stats_ms = now;
			push_stats(w, now);
		}
	}
	// What changed since the last write, so that a restart starts from the latest state.
	watcher_snapshot_save(w, current_needs(w), k8s_now_ms(), true);
	watcher_snapshot_close(w);

	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		k8s_reflector_free(w->reflectors[src]);
		w->reflectors[src] = NULL;
	}
	urcu_memb_unregister_thread();
	k8s_beat_stop(&w->beat);
	return NULL;
}

/* Lifecycle. */

static void watcher_free(k8s_watcher_t *w)
{
	if (w->started) {
		atomic_store(&w->stop, true);
		curl_multi_wakeup(w->multi);
		pthread_join(w->thread, NULL);
	}
	if (w->api_ready) {
		k8s_api_deinit(&w->api);
	}
	if (w->multi != NULL) {
		curl_multi_cleanup(w->multi);
	}
	watcher_configmaps_release(w);
	k8s_store_free(w->store);
	if (w->predecessor != NULL) {
		k8s_watcher_release(w->predecessor);
	}
	// Wait for call_rcu() batches still holding this table's blocks, then free the rest.
	urcu_memb_barrier();
	k8s_table_deinit(&w->table);
	pthread_mutex_destroy(&w->clients_lock);
	k8s_watcher_conf_free(&w->conf);
	free(w);
}

k8s_watcher_t *k8s_watcher_acquire(const k8s_watcher_conf_t *conf, char *err, size_t errlen)
{
	pthread_mutex_lock(&registry_lock);
	for (k8s_watcher_t *w = registry; w != NULL; w = w->next) {
		if (k8s_watcher_conf_equal(&w->conf, conf)) {
			w->refs++;
			pthread_mutex_unlock(&registry_lock);
			return w;
		}
	}

	k8s_watcher_t *w = calloc(1, sizeof(*w));
	if (w == NULL) {
		pthread_mutex_unlock(&registry_lock);
		snprintf(err, errlen, "%s", knot_strerror(KNOT_ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&w->clients_lock, NULL);
	w->log.fn = watcher_log;
	w->log.ctx = w;
	k8s_store_conf_t sconf = {
		.endpoint_pod_names = conf->endpoint_pod_names,
		.namespaces = conf->namespaces,
		.namespace_count = conf->namespace_count,
		.cluster_id = conf->cluster_id,
		.node_name = conf->node_name,
	};
	if (k8s_watcher_conf_copy(&w->conf, conf) != KNOT_EOK || k8s_table_init(&w->table) != KNOT_EOK ||
	    (w->store = k8s_store_new(&w->table, &sconf, &w->log)) == NULL ||
	    (w->multi = curl_multi_init()) == NULL) {
		watcher_free(w);
		pthread_mutex_unlock(&registry_lock);
		snprintf(err, errlen, "%s", knot_strerror(KNOT_ENOMEM));
		return NULL;
	}
	w->fingerprint = k8s_snapshot_fingerprint(k8s_watcher_conf_hash(&w->conf, K8S_WCONF_HELD));
	w->snap_changes = UINT64_MAX;
	w->refs = 1;
	w->next = registry;
	registry = w;
	pthread_mutex_unlock(&registry_lock);
	metrics_update();
	return w;
}

/*! \brief True if \a w has a zone of this name attached. */
static bool has_zone(k8s_watcher_t *w, const uint8_t *zone)
{
	bool found = false;
	pthread_mutex_lock(&w->clients_lock);
	for (k8s_watcher_client_t *c = w->clients; c != NULL && !found; c = c->next) {
		found = c->zone != NULL && knot_dname_is_equal(c->zone, zone);
	}
	pthread_mutex_unlock(&w->clients_lock);
	return found;
}

/*! \brief After a reload with other settings: the old, synchronized watcher of the same zone. */
static void find_predecessor(k8s_watcher_t *w, const uint8_t *zone)
{
	if (zone == NULL || w->predecessor != NULL || k8s_table_ready(&w->table) != 0) {
		return;
	}
	for (k8s_watcher_t *old = registry; old != NULL; old = old->next) {
		if (old != w && k8s_table_ready(&old->table) != 0 && has_zone(old, zone)) {
			old->refs++;
			rcu_assign_pointer(w->predecessor, old);
			return;
		}
	}
}

void k8s_watcher_attach(k8s_watcher_t *w, k8s_watcher_client_t *client)
{
	pthread_mutex_lock(&registry_lock);
	find_predecessor(w, client->zone);
	pthread_mutex_unlock(&registry_lock);

	pthread_mutex_lock(&w->clients_lock);
	client->next = w->clients;
	w->clients = client;
	w->needs |= client->needs;
	pthread_mutex_unlock(&w->clients_lock);

	// The thread starts with its first zone, so that its first log line has a sink.
	pthread_mutex_lock(&registry_lock);
	if (!w->started) {
		w->started = pthread_create(&w->thread, NULL, watcher_main, w) == 0;
		if (!w->started) {
			k8s_logf(&w->log, LOG_ERR, "cannot start the watcher thread");
		}
	} else {
		curl_multi_wakeup(w->multi);
	}
	pthread_mutex_unlock(&registry_lock);
}

void k8s_watcher_detach(k8s_watcher_t *w, k8s_watcher_client_t *client)
{
	pthread_mutex_lock(&w->clients_lock);
	for (k8s_watcher_client_t **c = &w->clients; *c != NULL; c = &(*c)->next) {
		if (*c == client) {
			*c = client->next;
			break;
		}
	}
	// Needs only grow: a reload reattaches the same zones right away.
	pthread_mutex_unlock(&w->clients_lock);
}

void k8s_watcher_release(k8s_watcher_t *w)
{
	pthread_mutex_lock(&registry_lock);
	if (--w->refs > 0) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	for (k8s_watcher_t **p = &registry; *p != NULL; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	metrics_update();
	watcher_free(w);
}

const k8s_table_t *k8s_watcher_table(const k8s_watcher_t *w)
{
	return &w->table;
}

const k8s_watcher_t *k8s_watcher_serving(const k8s_watcher_t *w, uint32_t ready_bits)
{
	if ((k8s_table_ready(&w->table) & ready_bits) == ready_bits) {
		return w;
	}
	const k8s_watcher_t *old = rcu_dereference(((k8s_watcher_t *)w)->predecessor);
	if (old != NULL && (k8s_table_ready(&old->table) & ready_bits) == ready_bits) {
		return old;
	}
	return w;
}

bool k8s_watcher_servable(const k8s_watcher_t *w, uint32_t ready_bits)
{
	urcu_memb_read_lock();
	const k8s_watcher_t *serving = k8s_watcher_serving(w, ready_bits);
	bool servable = (k8s_table_ready(&serving->table) & ready_bits) == ready_bits;
	urcu_memb_read_unlock();
	return servable;
}
