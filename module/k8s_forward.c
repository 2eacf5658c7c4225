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
 * knotd glue of the forwarder (resolver/forward.h): its options, the registry that lets the
 * global instance and the reverse zones' instances share one forwarder, the hooks
 * (a global BEGIN hook for names in no zone, a reverse zone's END hook for the
 * addresses outside the cluster), its counters, and kube-dns's ConfigMap (kubedns_conf.h)
 * watched by a thread of its own, which replaces the forwarder when the ConfigMap changes:
 * as the API has it (the watcher's board, store/configmaps.h) when it is listed there,
 * else its files where the pod mounts it (no RBAC for it, or not yet listed).
 */

#include <arpa/inet.h>
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "resolver/forward.h"
#include "resolver/forward_metrics.h"
#include "k8s_glue.h"
#include "forward/keeper.h"
#include "forward/servers.h"
#include "forward/kubedns_conf.h"
#include "k8s_kubedns.h"
#include "lib/ticker.h"
#include "lib/tsan_rcu.h"


/*! \brief The ConfigMap is looked at this often. */
#define KUBEDNS_CHECK_MS 1000

/*! \brief A running forwarder and its /metrics source: replaced whole when the ConfigMap changes. */
typedef struct {
	k8s_fwd_t *fwd;
	k8s_fwd_metrics_t *metrics;
	k8s_fwd_holder_t *holder;
} live_t;

/*! \brief One forwarder and the module instances that hold it. */
struct k8s_fwd_holder {
	struct k8s_fwd_holder *next;
	live_t *live;            /*!< Read by the hooks under RCU; replaced by the watch thread. */
	k8s_fwd_conf_t base;     /*!< The options' settings: instances with equal ones share. */
	char *kubedns_dir;       /*!< kube-dns-config, or NULL. */
	size_t refs;
	knotd_mod_t *log_mod;    /*!< Logs go through it: the global instance if any. */
	knotd_mod_t *stats_mod;  /*!< The global instance: the thread's counters go there. */
	bool log_global;
	size_t stats_servers;    /*!< The upstream-* counters' size, in the global instance. */

	k8s_ticker_t watch;      /*!< The ConfigMap's watch thread (with kube-dns-config). */
	k8s_kubedns_stamp_t stamp;
	uint64_t api_gen;        /*!< The board's publication applied; 0: the files are. */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_fwd_holder_t *registry;

/* Counter names: the per-server ones are indexed by the server's flat position. */
static char server_names[K8S_FWD_SERVERS_MAX][INET6_ADDRSTRLEN + 8];

enum {
	CTR_QUERIES = 0,   // Worker: how the names in no zone went.
	CTR_THREAD,        // The thread's totals (slot 0).
	CTR_UP_QUERIES,
	CTR_UP_ANSWERS,
	CTR_UP_FAILURES,
	CTR_UP_TIMEOUTS,
	CTR_UP_DOWN,
};

enum { Q_CACHED = 0, Q_HANDED, Q_REFUSED, Q_LOOP, Q_COUNT };
static const char *q_names[Q_COUNT] = { "cached", "late", "refused", "loop-probe" };

enum {
	T_FORWARDED = 0, T_ANSWERED, T_SERVFAIL, T_TIMEOUTS, T_FAILOVERS, T_LOOPS, T_DROPPED,
	T_CACHE_ENTRIES, T_CACHE_BYTES, T_COUNT
};
static const char *t_names[T_COUNT] = {
	"forwarded", "late-answers", "servfail", "timeouts", "failovers", "loops", "dropped",
	"cache-entries", "cache-bytes"
};

static char *q_str(uint32_t idx, uint32_t count)
{
	return (idx < Q_COUNT) ? strdup(q_names[idx]) : NULL;
}

static char *t_str(uint32_t idx, uint32_t count)
{
	return (idx < T_COUNT) ? strdup(t_names[idx]) : NULL;
}

static char *server_str(uint32_t idx, uint32_t count)
{
	if (idx >= K8S_FWD_SERVERS_MAX) {
		return NULL;
	}
	// The ConfigMap's watch thread renames them.
	pthread_mutex_lock(&registry_lock);
	char *name = strdup(server_names[idx][0] != '\0' ? server_names[idx] : "none");
	pthread_mutex_unlock(&registry_lock);
	return name;
}

static void fwd_log(void *ctx, int priority, const char *msg)
{
	k8s_fwd_holder_t *h = ctx;
	pthread_mutex_lock(&registry_lock);
	if (h->log_mod != NULL) {
		knotd_mod_log(h->log_mod, priority, "%s", msg);
	}
	pthread_mutex_unlock(&registry_lock);
}

static void fwd_stats(void *ctx, const k8s_fwd_stats_t *st)
{
	live_t *live = ctx;
	k8s_fwd_holder_t *h = live->holder;
	k8s_fwd_metrics_push(live->metrics, st);
	pthread_mutex_lock(&registry_lock);
	knotd_mod_t *mod = h->stats_mod;
	// A replaced forwarder, until it is joined, no longer counts.
	if (mod != NULL && h->live == live) {
		const uint64_t t[T_COUNT] = {
			st->forwarded, st->answered, st->servfail, st->timeouts, st->failovers,
			st->loops, st->dropped, st->cache_entries, st->cache_bytes
		};
		for (uint32_t i = 0; i < T_COUNT; i++) {
			knotd_mod_stats_store(mod, 0, CTR_THREAD, i, t[i]);
		}
		// Past the servers, zeros: a ConfigMap with fewer servers leaves no stale counts.
		for (uint32_t i = 0; i < h->stats_servers && i < K8S_FWD_SERVERS_MAX; i++) {
			knotd_mod_stats_store(mod, 0, CTR_UP_QUERIES, i, st->server[i].queries);
			knotd_mod_stats_store(mod, 0, CTR_UP_ANSWERS, i, st->server[i].answers);
			knotd_mod_stats_store(mod, 0, CTR_UP_FAILURES, i, st->server[i].failures);
			knotd_mod_stats_store(mod, 0, CTR_UP_TIMEOUTS, i, st->server[i].timeouts);
			knotd_mod_stats_store(mod, 0, CTR_UP_DOWN, i, st->server[i].down);
		}
	}
	pthread_mutex_unlock(&registry_lock);
}

/* Options. */

/*! \brief Reads the forward options; \a conf->group_count is 0 when nothing is forwarded. */
static int conf_read(check_ctx_t *check, k8s_fwd_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	knotd_conf_t servers = k8s_glue_option(check, K8S_OPT(FORWARD));
	knotd_conf_t stubs = k8s_glue_option(check, K8S_OPT(FORWARD_STUB));
	int ret = KNOT_EOK;
	if (servers.count == 0 && stubs.count == 0) {
		goto out;
	}
	if (servers.count + stubs.count > K8S_FWD_SERVERS_MAX || stubs.count > K8S_FWD_GROUPS_MAX) {
		ret = k8s_glue_refuse(check, "forward: more than %d servers or %d stub domains",
		                      K8S_FWD_SERVERS_MAX, K8S_FWD_GROUPS_MAX);
		goto out;
	}
	conf->timeout_ms = k8s_glue_option(check, K8S_OPT(FORWARD_TIMEOUT)).single.integer;
	conf->cache_max_ttl = k8s_glue_option(check, K8S_OPT(FORWARD_CACHE_TTL)).single.integer;
	conf->cache_size = k8s_glue_option(check, K8S_OPT(FORWARD_CACHE_SIZE)).single.integer;
	conf->max_pending = k8s_glue_option(check, K8S_OPT(FORWARD_PENDING)).single.integer;
	conf->log_interval_ms = 1000 * k8s_glue_option(check, K8S_OPT(FORWARD_LOG_INTERVAL)).single.integer;
	ret = k8s_conf_fwd_settings_read(check, conf);
	if (ret != KNOT_EOK) {
		goto out;
	}
	conf->groups = calloc(1 + stubs.count, sizeof(*conf->groups));
	if (conf->groups == NULL) {
		ret = KNOT_ENOMEM;
		goto out;
	}
	conf->group_count = 1;
	conf->groups[0].servers = calloc(servers.count + 1, sizeof(struct sockaddr_storage));
	if (conf->groups[0].servers == NULL) {
		ret = KNOT_ENOMEM;
		goto out;
	}
	size_t total = 0;
	for (size_t i = 0; i < servers.count; i++) {
		if (k8s_fwd_addr_parse(servers.multi[i].string, &conf->groups[0].servers[i]) != KNOT_EOK) {
			ret = k8s_glue_refuse(check, "forward: '%s' is no IP address[@port]",
			                      servers.multi[i].string);
			goto out;
		}
		conf->groups[0].count++;
		total++;
	}
	for (size_t i = 0; i < stubs.count; i++) {
		char msg[256];
		k8s_fwd_group_t *g = &conf->groups[conf->group_count];
		ret = k8s_fwd_stub_parse(stubs.multi[i].string, g, msg, sizeof(msg));
		if (ret != KNOT_EOK) {
			ret = k8s_glue_refuse(check, "forward-stub: %s", msg);
			goto out;
		}
		conf->group_count++;
		total += g->count;
	}
	if (total > K8S_FWD_SERVERS_MAX) {
		ret = k8s_glue_refuse(check, "forward: more than %d servers in all", K8S_FWD_SERVERS_MAX);
	}
out:
	knotd_conf_free(&servers);
	knotd_conf_free(&stubs);
	if (ret != KNOT_EOK) {
		k8s_fwd_conf_deinit(conf);
	}
	return ret;
}

/* The registry. */

/*! \brief A forwarder with its metrics source for \a conf; NULL on no memory or no thread. */
static live_t *live_new(k8s_fwd_holder_t *h, const k8s_fwd_conf_t *conf)
{
	live_t *live = calloc(1, sizeof(*live));
	if (live == NULL) {
		return NULL;
	}
	live->holder = h;
	live->metrics = k8s_fwd_metrics_new(conf);
	k8s_log_t log = { .fn = fwd_log, .ctx = h };
	// Not under the registry's lock: the thread logs through it.
	// The kept names ride on every forwarder of the instances (k8s_kept.c reaches them).
	live->fwd = (live->metrics != NULL) ? k8s_fwd_new(conf, "forward", &log, fwd_stats, live,
	                                                  &k8s_keeper_layer) : NULL;
	if (live->fwd == NULL) {
		k8s_fwd_metrics_free(live->metrics);
		free(live);
		return NULL;
	}
	return live;
}

/*! \brief Joins the forwarder's thread and frees it (no reader may remain). */
static void live_free(live_t *live)
{
	k8s_fwd_free(live->fwd);  // Joins the thread: no push after it.
	k8s_fwd_metrics_free(live->metrics);
	free(live);
}

/*! \brief The counters' names of the servers (under the registry's lock). */
static void server_names_set(const k8s_fwd_t *fwd)
{
	for (size_t i = 0; i < K8S_FWD_SERVERS_MAX; i++) {
		const char *text = k8s_fwd_server_text(fwd, i);
		snprintf(server_names[i], sizeof(server_names[i]), "%s", text ? text : "");
	}
}

/*! \brief Where the settings in force came from, for the log lines. */
static const char *kubedns_source(const k8s_fwd_holder_t *h)
{
	return (h->api_gen != 0) ? K8S_KUBEDNS_API_SOURCE : h->kubedns_dir;
}

/*!
 * \brief The options' settings with the ConfigMap applied (the API's, else the mounted
 * files'); the options' alone if it is bad.
 */
static int effective_conf(k8s_fwd_holder_t *h, k8s_fwd_conf_t *out)
{
	char msg[384];
	k8s_kubedns_t cm;
	uint64_t gen = 0;
	int ret = k8s_kubedns_api(&cm, &gen, msg, sizeof(msg));
	h->api_gen = gen;
	if (ret == KNOT_EOK && gen == 0) {
		k8s_kubedns_stamp(h->kubedns_dir, &h->stamp);
		ret = k8s_kubedns_read(h->kubedns_dir, &cm, msg, sizeof(msg));
	}
	if (ret == KNOT_EOK) {
		ret = k8s_kubedns_merge(&h->base, &cm, out, msg, sizeof(msg));
		k8s_kubedns_deinit(&cm);
	}
	if (ret != KNOT_EOK) {
		k8s_logf(&(k8s_log_t){ .fn = fwd_log, .ctx = h }, LOG_ERR,
		         "forward, kube-dns-config %s not applied, the forwarder keeps its settings "
		         "(%s)", kubedns_source(h), msg);
	}
	return ret;
}

/*! \brief The watch thread's tick: the ConfigMap read again when it changes. */
static void kubedns_tick(void *arg)
{
	k8s_fwd_holder_t *h = arg;
	k8s_log_t log = { .fn = fwd_log, .ctx = h };
	k8s_fwd_conf_t conf;
	if (!k8s_kubedns_changed(h->kubedns_dir, h->api_gen, &h->stamp) ||
	    effective_conf(h, &conf) != KNOT_EOK) {
		return;  // Unchanged, or bad: the running forwarder stays (logged once per change).
	}
	live_t *old = h->live;  // Only this thread replaces it.
	if (k8s_fwd_conf_equal(k8s_fwd_conf(old->fwd), &conf)) {
		k8s_fwd_conf_deinit(&conf);
		return;
	}
	live_t *live = live_new(h, &conf);
	k8s_fwd_conf_deinit(&conf);
	if (live == NULL) {
		k8s_logf(&log, LOG_ERR, "forward, kube-dns-config %s changed, not applied (no "
		         "memory or thread)", kubedns_source(h));
		memset(&h->stamp, 0, sizeof(h->stamp));  // Tried again in a second.
		h->api_gen = (h->api_gen != 0) ? K8S_KUBEDNS_API_AGAIN : 0;
		return;
	}
	// One metrics source at a time: the old one leaves before the new one comes.
	k8s_metrics_source_remove(&old->metrics->src);
	pthread_mutex_lock(&registry_lock);
	rcu_assign_pointer(h->live, live);
	if (h->stats_mod != NULL) {
		server_names_set(live->fwd);
	}
	pthread_mutex_unlock(&registry_lock);
	k8s_metrics_source_add(&live->metrics->src);
	urcu_memb_synchronize_rcu();  // No hook uses the old forwarder any more.
	k8s_logf(&log, LOG_NOTICE, "forward, kube-dns-config %s applied (%zu servers in "
	         "%zu groups; the waiting clients of the previous settings get SERVFAIL)",
	         kubedns_source(h), k8s_fwd_server_count(live->fwd),
	         k8s_fwd_conf(live->fwd)->group_count);
	live_free(old);
}

static void holder_free(k8s_fwd_holder_t *h, bool source_added)
{
	k8s_ticker_stop(&h->watch);
	if (h->live != NULL) {
		if (source_added) {
			k8s_metrics_source_remove(&h->live->metrics->src);
		}
		live_free(h->live);
	}
	k8s_fwd_conf_deinit(&h->base);
	free(h->kubedns_dir);
	free(h);
}

/*! \brief A new holder (registry's lock not held): its forwarder, and its watch thread. */
static k8s_fwd_holder_t *holder_new(knotd_mod_t *mod, k8s_fwd_conf_t *base, const char *dir,
                                    bool global)
{
	k8s_fwd_holder_t *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		return NULL;
	}
	h->base = *base;
	memset(base, 0, sizeof(*base));  // Taken over.
	h->log_mod = mod;
	h->log_global = global;
	h->kubedns_dir = (dir != NULL) ? strdup(dir) : NULL;
	if (dir != NULL && h->kubedns_dir == NULL) {
		holder_free(h, false);
		return NULL;
	}
	k8s_fwd_conf_t conf;
	if (dir != NULL && effective_conf(h, &conf) == KNOT_EOK) {
		h->live = live_new(h, &conf);
		k8s_fwd_conf_deinit(&conf);
	} else {
		h->live = live_new(h, &h->base);
	}
	if (h->live == NULL) {
		holder_free(h, false);
		return NULL;
	}
	if (dir != NULL) {
		char what[K8S_BEAT_NAME_MAX];
		(void)snprintf(what, sizeof(what), "kube-dns-config watch of %s", dir);
		if (k8s_ticker_start(&h->watch, "k8s-kubedns", what, KUBEDNS_CHECK_MS, kubedns_tick,
		                     h) != KNOT_EOK) {
			holder_free(h, false);
			return NULL;
		}
	}
	return h;
}

static k8s_fwd_holder_t *acquire(knotd_mod_t *mod, k8s_fwd_conf_t *conf, const char *dir,
                                 bool global, size_t stats_servers)
{
	pthread_mutex_lock(&registry_lock);
	bool created = false;
	k8s_fwd_holder_t *h = registry;
	while (h != NULL && !(k8s_fwd_conf_equal(&h->base, conf) &&
	                      (h->kubedns_dir == NULL) == (dir == NULL) &&
	                      (dir == NULL || strcmp(h->kubedns_dir, dir) == 0))) {
		h = h->next;
	}
	if (h == NULL) {
		pthread_mutex_unlock(&registry_lock);
		h = holder_new(mod, conf, dir, global);
		pthread_mutex_lock(&registry_lock);
		if (h != NULL) {
			h->next = registry;
			registry = h;
			created = true;
		}
	}
	if (h != NULL) {
		h->refs++;
		if (global || !h->log_global) {
			h->log_mod = mod;
			h->log_global = global;
		}
		if (global) {
			h->stats_mod = mod;
			h->stats_servers = stats_servers;
			server_names_set(h->live->fwd);
		}
	}
	pthread_mutex_unlock(&registry_lock);
	// Outside the registry's lock: a scrape takes the sources' lock, then the metrics' own.
	if (created) {
		k8s_metrics_source_add(&h->live->metrics->src);
	}
	return h;
}

void k8s_forward_release(k8s_fwd_holder_t *h, knotd_mod_t *mod)
{
	if (h == NULL) {
		return;
	}
	pthread_mutex_lock(&registry_lock);
	if (h->stats_mod == mod) {
		h->stats_mod = NULL;
	}
	if (h->log_mod == mod) {
		h->log_mod = NULL;  // Until another instance acquires it (a reload's new one).
	}
	bool last = (--h->refs == 0);
	if (last) {
		k8s_fwd_holder_t **p = &registry;
		while (*p != h) {
			p = &(*p)->next;
		}
		*p = h->next;
	}
	pthread_mutex_unlock(&registry_lock);
	if (last) {
		holder_free(h, true);
	}
}

/* Hooks. */

/*! \brief Counts a forwarded query's way (only the global instance has the counters). */
static void query_count(knotd_mod_t *mod, bool counted, unsigned thread, int way)
{
	if (counted) {
		knotd_mod_stats_incr(mod, thread, CTR_QUERIES, way, 1);
	}
}

/*! \brief A name forwarded: from the cache, or answered late. */
static knotd_state_t forward_query(knotd_state_t state, knot_pkt_t *pkt, knotd_qdata_t *qdata,
                                   knotd_mod_t *mod, k8s_ctx_t *ctx, bool counted)
{
	const knot_dname_t *lower = qdata->query->lower_qname;
	unsigned thread = qdata->params->thread_id;
	// The forwarder (and its cache's entries) stay while the section lasts.
	urcu_memb_read_lock();
	const live_t *live = rcu_dereference(ctx->fwd->live);
	k8s_fwd_t *f = live->fwd;
	if (k8s_fwd_loop_probe(f, lower)) {
		urcu_memb_read_unlock();
		query_count(mod, counted, thread, Q_LOOP);
		qdata->rcode = KNOT_RCODE_REFUSED;
		return KNOTD_STATE_FAIL;
	}
	if (!k8s_fwd_routes(f, lower)) {
		urcu_memb_read_unlock();
		return state;
	}

	uint64_t now = k8s_now_ms();
	const k8s_fwd_entry_t *e = k8s_fwd_lookup(f, lower, knot_pkt_qtype(qdata->query), now);
	if (e != NULL) {
		int ret = k8s_fwd_entry_put(e, pkt, now);
		qdata->rcode = (ret == KNOT_EOK) ? e->rcode : KNOT_RCODE_SERVFAIL;
		k8s_fwd_metrics_lookup(live->metrics, thread, true);
		urcu_memb_read_unlock();
		k8s_stats_answered_by(qdata, K8S_DNSMETRICS_CACHE);
		knot_wire_set_ra(pkt->wire);
		query_count(mod, counted, thread, Q_CACHED);
		return KNOTD_STATE_DONE;
	}
	k8s_fwd_metrics_lookup(live->metrics, thread, false);

	// XDP and QUIC answers are knotd's to send: the name is resolved for the client's retry.
	const knotd_qdata_params_t *params = qdata->params;
	bool late = (params->xdp_msg == NULL && params->proto != KNOTD_QUERY_PROTO_QUIC);
	bool handed = k8s_fwd_handoff(f, qdata->query->wire, qdata->query->size,
	                              late ? params->socket : -1,
	                              params->proto == KNOTD_QUERY_PROTO_TCP, params->remote,
	                              k8s_glue_query_local(params),
	                              k8s_glue_tenant(ctx, k8s_glue_remote(qdata)));
	urcu_memb_read_unlock();
	if (handed && late) {
		query_count(mod, counted, thread, Q_HANDED);
		return KNOTD_STATE_NOOP;  // The forwarder thread answers.
	}
	query_count(mod, counted, thread, Q_REFUSED);
	k8s_stats_answered_by(qdata, K8S_DNSMETRICS_FORWARD);
	qdata->rcode = KNOT_RCODE_SERVFAIL;
	qdata->rcode_ede = late ? KNOT_EDNS_EDE_OTHER : KNOT_EDNS_EDE_NOT_READY;
	return KNOTD_STATE_FAIL;
}

/*! \brief Names in no zone (knotd would answer REFUSED). */
static knotd_state_t forward_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	assert(pkt && qdata && mod);
	k8s_tsan_zone_seen();  // Before the context is read: load() published it.
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	// CoreDNS's bufsize: every UDP answer of the server, knotd's size set already.
	if (ctx->bufsize != 0 && qdata->params->proto == KNOTD_QUERY_PROTO_UDP &&
	    pkt->max_size > ctx->bufsize) {
		pkt->max_size = ctx->bufsize;
	}
	if (!k8s_glue_no_zone_query(state, qdata)) {
		k8s_tsan_hook_done();
		return state;
	}
	return forward_query(state, pkt, qdata, mod, ctx, true);
}

/*!
 * \brief A cluster zone's names under a stub domain inside it (CoreDNS's server block
 * `my.cluster.local:53 { forward ... }`, more specific than the cluster's): forwarded
 * as CoreDNS's block forwards them, before the zone answers.
 */
static knotd_state_t inside_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                       knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	assert(pkt && qdata && mod);
	if (state != K8S_STATE_PRODUCE || qdata->type != KNOTD_QUERY_TYPE_NORMAL ||
	    knot_pkt_qclass(qdata->query) != KNOT_CLASS_IN) {
		return state;
	}
	k8s_tsan_zone_seen();
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	const knot_dname_t *lower = qdata->query->lower_qname;
	for (size_t i = 0; i < ctx->fwd_inside_count; i++) {
		if (knot_dname_in_bailiwick(lower, ctx->fwd_inside[i]) >= 0) {
			return forward_query(state, pkt, qdata, mod, ctx, false);
		}
	}
	k8s_tsan_hook_done();
	return state;
}

/*! \brief A reverse zone's NXDOMAIN (an address outside the cluster) goes upstream. */
static knotd_state_t forward_end_hook(knotd_state_t state, knot_pkt_t *pkt,
                                      knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	assert(pkt && qdata && mod);
	const knotd_qdata_params_t *params = qdata->params;
	if (state != KNOTD_STATE_DONE || qdata->rcode != KNOT_RCODE_NXDOMAIN ||
	    qdata->type != KNOTD_QUERY_TYPE_NORMAL || params->xdp_msg != NULL ||
	    params->proto == KNOTD_QUERY_PROTO_QUIC) {
		return state;
	}
	k8s_tsan_zone_seen();
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	urcu_memb_read_lock();
	k8s_fwd_t *f = rcu_dereference(ctx->fwd->live)->fwd;
	// Cached or not, the thread answers: these names are few.
	bool handed = k8s_fwd_routes(f, qdata->query->lower_qname) &&
	              k8s_fwd_handoff(f, qdata->query->wire, qdata->query->size, params->socket,
	                              params->proto == KNOTD_QUERY_PROTO_TCP, params->remote,
	                              k8s_glue_query_local(params),
	                              k8s_glue_tenant(ctx, params->remote));
	urcu_memb_read_unlock();
	return handed ? KNOTD_STATE_NOOP : state;
}

/* Load. */

int k8s_forward_read(check_ctx_t *check, k8s_ctx_t *ctx, bool global)
{
	k8s_fwd_conf_t conf;
	int ret = conf_read(check, &conf);
	if (ret != KNOT_EOK || check->mod == NULL) {
		k8s_fwd_conf_deinit(&conf);
		return ret;
	}
	k8s_conf_udp_max_read(check);
	int64_t bufsize = k8s_glue_option(check, K8S_OPT(BUFSIZE)).single.integer;
	ctx->bufsize = (bufsize < UINT16_MAX) ? bufsize : 0;
	if (conf.group_count == 0) {
		if (global && ctx->hosts == NULL) {
			return k8s_glue_refuse(check, "a global mod-k8s forwards: it needs forward or "
			                       "forward-stub (or serves hosts: hosts-*)");
		}
		return KNOT_EOK;
	}
	ret = global ? KNOT_EOK : k8s_conf_fwd_inside_read(ctx, &conf);
	// A zone instance forwards the reverse zones' names outside the cluster, and the
	// names of stub domains inside its zone.
	if (ret != KNOT_EOK || (!global && ctx->answer.role != K8S_ROLE_REVERSE &&
	                        ctx->fwd_inside_count == 0)) {
		k8s_fwd_conf_deinit(&conf);
		return ret;
	}
	knotd_mod_t *mod = check->mod;
	knotd_conf_t dir = k8s_glue_option(check, K8S_OPT(KUBEDNS_CONFIG));
	const char *kubedns_dir = (dir.count > 0) ? dir.single.string : NULL;
	// With the ConfigMap, the servers may change: a counter for each one there may be.
	size_t stats_servers = 0;
	if (global) {
		ret = knotd_mod_stats_add(mod, "forward-queries", Q_COUNT, q_str);
		ret |= knotd_mod_stats_add(mod, "forward", T_COUNT, t_str);
		size_t n = 0;
		for (size_t g = 0; g < conf.group_count; g++) {
			n += conf.groups[g].count;
		}
		n = (kubedns_dir != NULL) ? K8S_FWD_SERVERS_MAX : n;
		stats_servers = n;
		ret |= knotd_mod_stats_add(mod, "upstream-queries", n, server_str);
		ret |= knotd_mod_stats_add(mod, "upstream-answers", n, server_str);
		ret |= knotd_mod_stats_add(mod, "upstream-failures", n, server_str);
		ret |= knotd_mod_stats_add(mod, "upstream-timeouts", n, server_str);
		ret |= knotd_mod_stats_add(mod, "upstream-down", n, server_str);
		if (ret != KNOT_EOK) {
			k8s_fwd_conf_deinit(&conf);
			return KNOT_ENOMEM;
		}
	}
	ctx->fwd = acquire(mod, &conf, kubedns_dir, global, stats_servers);
	k8s_fwd_conf_deinit(&conf);
	if (ctx->fwd == NULL) {
		return KNOT_ENOMEM;
	}
	if (global) {
		ret = knotd_mod_hook(mod, KNOTD_STAGE_BEGIN, forward_begin_hook);
	} else {
		ret = (ctx->fwd_inside_count > 0)
		      ? knotd_mod_hook(mod, KNOTD_STAGE_BEGIN, inside_begin_hook) : KNOT_EOK;
		if (ret == KNOT_EOK && ctx->answer.role == K8S_ROLE_REVERSE) {
			ret = knotd_mod_hook(mod, KNOTD_STAGE_END, forward_end_hook);
		}
	}
	if (ret != KNOT_EOK) {
		k8s_forward_release(ctx->fwd, mod);
		ctx->fwd = NULL;
	}
	return ret;
}

/* The kept names' forwarder (ExternalName targets, autopath's outside names). */

void k8s_forward_hold(k8s_fwd_holder_t *h)
{
	pthread_mutex_lock(&registry_lock);
	h->refs++;
	pthread_mutex_unlock(&registry_lock);
}

k8s_fwd_t *k8s_forward_live(void *holder)
{
	k8s_fwd_holder_t *h = holder;
	return rcu_dereference(h->live)->fwd;
}

int k8s_forward_kept(check_ctx_t *check, k8s_ctx_t *ctx, k8s_fwd_holder_t **holder)
{
	*holder = NULL;
	k8s_fwd_holder_t *h = ctx->fwd;  // A reverse zone's, if it forwards.
	if (h == NULL) {
		k8s_fwd_conf_t conf;
		int ret = conf_read(check, &conf);
		if (ret != KNOT_EOK || conf.group_count == 0) {
			return ret;
		}
		knotd_conf_t dir = k8s_glue_option(check, K8S_OPT(KUBEDNS_CONFIG));
		// Equal settings: the global instance's forwarder, shared.
		h = acquire(check->mod, &conf, (dir.count > 0) ? dir.single.string : NULL, false, 0);
		k8s_fwd_conf_deinit(&conf);
		if (h == NULL) {
			return KNOT_ENOMEM;
		}
		ctx->fwd = h;
	}
	*holder = h;
	return KNOT_EOK;
}
