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
 * knotd glue of the forwarder (forward.h): its options, the registry that lets the
 * global instance and the reverse zones' instances share one forwarder, the hooks
 * (a global BEGIN hook for names in no zone, a reverse zone's END hook for the
 * addresses outside the cluster), and its counters.
 */

#include <arpa/inet.h>
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "forward.h"
#include "forward_metrics.h"
#include "k8s_glue.h"
#include "tsan_rcu.h"

/*! \brief knotd's KNOT_STATE_PRODUCE (knot/query/layer.h, not installed): the query goes on. */
#define STATE_PRODUCE 2

/*! \brief One forwarder and the module instances that hold it. */
struct k8s_fwd_holder {
	struct k8s_fwd_holder *next;
	k8s_fwd_t *fwd;
	size_t refs;
	knotd_mod_t *log_mod;    /*!< Logs go through it: the global instance if any. */
	knotd_mod_t *stats_mod;  /*!< The global instance: the thread's counters go there. */
	k8s_fwd_metrics_t *metrics;  /*!< Its /metrics source, one per forwarder. */
	bool log_global;
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
	return (idx < K8S_FWD_SERVERS_MAX) ? strdup(server_names[idx]) : NULL;
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
	k8s_fwd_holder_t *h = ctx;
	k8s_fwd_metrics_push(h->metrics, st);
	pthread_mutex_lock(&registry_lock);
	knotd_mod_t *mod = h->stats_mod;
	if (mod != NULL) {
		const uint64_t t[T_COUNT] = {
			st->forwarded, st->answered, st->servfail, st->timeouts, st->failovers,
			st->loops, st->dropped, st->cache_entries, st->cache_bytes
		};
		for (uint32_t i = 0; i < T_COUNT; i++) {
			knotd_mod_stats_store(mod, 0, CTR_THREAD, i, t[i]);
		}
		for (uint32_t i = 0; i < st->server_count; i++) {
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

int k8s_forward_check_stub(knotd_conf_check_args_t *args)
{
	k8s_fwd_group_t group;
	int ret = k8s_fwd_stub_parse((const char *)args->data, &group, k8s_glue_check_msg,
	                             sizeof(k8s_glue_check_msg));
	if (ret != KNOT_EOK) {
		args->err_str = k8s_glue_check_msg;
		return ret;
	}
	free(group.zone);
	free(group.servers);
	return KNOT_EOK;
}

int k8s_forward_check_addr(knotd_conf_check_args_t *args)
{
	struct sockaddr_storage ss;
	if (k8s_fwd_addr_parse((const char *)args->data, &ss) != KNOT_EOK) {
		args->err_str = "forward must be an IPv4 or IPv6 address, optionally with @port";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief Reads the forward options; \a conf->group_count is 0 when nothing is forwarded. */
static int conf_read(check_ctx_t *check, k8s_fwd_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	knotd_conf_t servers = k8s_glue_option(check, MOD_FORWARD);
	knotd_conf_t stubs = k8s_glue_option(check, MOD_FORWARD_STUB);
	int ret = KNOT_EOK;
	if (servers.count == 0 && stubs.count == 0) {
		goto out;
	}
	if (servers.count + stubs.count > K8S_FWD_SERVERS_MAX || stubs.count > K8S_FWD_GROUPS_MAX) {
		ret = k8s_glue_refuse(check, "forward: more than %d servers or %d stub domains",
		                      K8S_FWD_SERVERS_MAX, K8S_FWD_GROUPS_MAX);
		goto out;
	}
	conf->timeout_ms = k8s_glue_option(check, MOD_FORWARD_TIMEOUT).single.integer;
	conf->cache_max_ttl = k8s_glue_option(check, MOD_FORWARD_CACHE_TTL).single.integer;
	conf->cache_size = k8s_glue_option(check, MOD_FORWARD_CACHE_SIZE).single.integer;
	conf->max_pending = k8s_glue_option(check, MOD_FORWARD_PENDING).single.integer;
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

static k8s_fwd_holder_t *acquire(knotd_mod_t *mod, const k8s_fwd_conf_t *conf, bool global)
{
	pthread_mutex_lock(&registry_lock);
	bool created = false;
	k8s_fwd_holder_t *h = registry;
	while (h != NULL && !k8s_fwd_conf_equal(k8s_fwd_conf(h->fwd), conf)) {
		h = h->next;
	}
	if (h == NULL) {
		h = calloc(1, sizeof(*h));
		k8s_fwd_metrics_t *metrics = k8s_fwd_metrics_new(conf);
		if (h == NULL || metrics == NULL) {
			free(h);
			k8s_fwd_metrics_free(metrics);
			h = NULL;
		} else {
			h->metrics = metrics;
			h->log_mod = mod;
			h->log_global = global;
			k8s_log_t log = { .fn = fwd_log, .ctx = h };
			// The thread logs through the registry's lock: not taken by it while we hold it.
			pthread_mutex_unlock(&registry_lock);
			h->fwd = k8s_fwd_new(conf, &log, fwd_stats, h);
			pthread_mutex_lock(&registry_lock);
			if (h->fwd == NULL) {
				k8s_fwd_metrics_free(h->metrics);
				free(h);
				h = NULL;
			} else {
				h->next = registry;
				registry = h;
				created = true;
			}
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
			for (size_t i = 0; i < K8S_FWD_SERVERS_MAX; i++) {
				const char *text = k8s_fwd_server_text(h->fwd, i);
				snprintf(server_names[i], sizeof(server_names[i]), "%s", text ? text : "");
			}
		}
	}
	pthread_mutex_unlock(&registry_lock);
	// Outside the registry's lock: a scrape takes the sources' lock, then the metrics' own.
	if (created) {
		k8s_metrics_source_add(&h->metrics->src);
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
		k8s_metrics_source_remove(&h->metrics->src);
		k8s_fwd_free(h->fwd);  // Joins the thread: no push after it.
		k8s_fwd_metrics_free(h->metrics);
		free(h);
	}
}

/* Hooks. */

/*! \brief Names in no zone (knotd would answer REFUSED): from the cache, or answered late. */
static knotd_state_t forward_begin_hook(knotd_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	assert(pkt && qdata && mod);
	if (state != STATE_PRODUCE || qdata->type != KNOTD_QUERY_TYPE_NORMAL ||
	    knot_pkt_qclass(qdata->query) != KNOT_CLASS_IN || knotd_qdata_zone_name(qdata) != NULL) {
		return state;
	}
	k8s_tsan_zone_seen();
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	k8s_fwd_t *f = ctx->fwd->fwd;
	const knot_dname_t *lower = qdata->query->lower_qname;
	unsigned thread = qdata->params->thread_id;
	if (k8s_fwd_loop_probe(f, lower)) {
		knotd_mod_stats_incr(mod, thread, CTR_QUERIES, Q_LOOP, 1);
		qdata->rcode = KNOT_RCODE_REFUSED;
		return KNOTD_STATE_FAIL;
	}
	if (!k8s_fwd_routes(f, lower)) {
		return state;
	}

	uint64_t now = k8s_now_ms();
	urcu_memb_read_lock();
	const k8s_fwd_entry_t *e = k8s_fwd_lookup(f, lower, knot_pkt_qtype(qdata->query), now);
	if (e != NULL) {
		int ret = k8s_fwd_entry_put(e, pkt, now);
		qdata->rcode = (ret == KNOT_EOK) ? e->rcode : KNOT_RCODE_SERVFAIL;
		urcu_memb_read_unlock();
		knot_wire_set_ra(pkt->wire);
		knotd_mod_stats_incr(mod, thread, CTR_QUERIES, Q_CACHED, 1);
		k8s_fwd_metrics_lookup(ctx->fwd->metrics, thread, true);
		return KNOTD_STATE_DONE;
	}
	urcu_memb_read_unlock();
	k8s_fwd_metrics_lookup(ctx->fwd->metrics, thread, false);

	// XDP and QUIC answers are knotd's to send: the name is resolved for the client's retry.
	const knotd_qdata_params_t *params = qdata->params;
	bool late = (params->xdp_msg == NULL && params->proto != KNOTD_QUERY_PROTO_QUIC);
	if (k8s_fwd_handoff(f, qdata->query->wire, qdata->query->size, late ? params->socket : -1,
	                    params->proto == KNOTD_QUERY_PROTO_TCP, params->remote) && late) {
		knotd_mod_stats_incr(mod, thread, CTR_QUERIES, Q_HANDED, 1);
		return KNOTD_STATE_NOOP;  // The forwarder thread answers.
	}
	knotd_mod_stats_incr(mod, thread, CTR_QUERIES, Q_REFUSED, 1);
	qdata->rcode = KNOT_RCODE_SERVFAIL;
	qdata->rcode_ede = late ? KNOT_EDNS_EDE_OTHER : KNOT_EDNS_EDE_NOT_READY;
	return KNOTD_STATE_FAIL;
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
	k8s_fwd_t *f = ctx->fwd->fwd;
	if (!k8s_fwd_routes(f, qdata->query->lower_qname)) {
		return state;
	}
	// Cached or not, the thread answers: these names are few.
	if (k8s_fwd_handoff(f, qdata->query->wire, qdata->query->size, params->socket,
	                    params->proto == KNOTD_QUERY_PROTO_TCP, params->remote)) {
		return KNOTD_STATE_NOOP;
	}
	return state;
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
	if (conf.group_count == 0) {
		if (global) {
			return k8s_glue_refuse(check, "a global mod-k8s forwards: it needs forward or "
			                       "forward-stub");
		}
		return KNOT_EOK;
	}
	// A zone instance forwards only the reverse zones' names outside the cluster.
	if (!global && ctx->answer.role != K8S_ROLE_REVERSE) {
		k8s_fwd_conf_deinit(&conf);
		return KNOT_EOK;
	}
	knotd_mod_t *mod = check->mod;
	if (global) {
		ret = knotd_mod_stats_add(mod, "forward-queries", Q_COUNT, q_str);
		ret |= knotd_mod_stats_add(mod, "forward", T_COUNT, t_str);
		size_t n = 0;
		for (size_t g = 0; g < conf.group_count; g++) {
			n += conf.groups[g].count;
		}
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
	ctx->fwd = acquire(mod, &conf, global);
	k8s_fwd_conf_deinit(&conf);
	if (ctx->fwd == NULL) {
		return KNOT_ENOMEM;
	}
	ret = global ? knotd_mod_hook(mod, KNOTD_STAGE_BEGIN, forward_begin_hook)
	             : knotd_mod_hook(mod, KNOTD_STAGE_END, forward_end_hook);
	if (ret != KNOT_EOK) {
		k8s_forward_release(ctx->fwd, mod);
		ctx->fwd = NULL;
	}
	return ret;
}
