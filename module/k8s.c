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
 * mod-k8s: answers for a Kubernetes cluster's DNS zones from a record table
 * that a background watcher keeps in sync with the Kubernetes API.
 *
 * This file is the knotd glue of a zone: the zone's role, load and unload, the
 * hooks. The options (checks, schema, readers) are in k8s_conf.c, the counters
 * in k8s_stats.c, the federation roles' glue in k8s_fed.c, what they share in
 * k8s_glue.h and k8s_glue.c. The logic lives in the subsystem folders (see
 * ARCHITECTURE.md).
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <knot/module.h>

#include "k8s_glue.h"
#include "watch/options.h"
#include "lib/tsan_rcu.h"

#define ZONE_MODULE		"\x06""module"

static int load_module(check_ctx_t *check);

static int k8s_conf_check(knotd_conf_check_args_t *args)
{
	check_ctx_t check = { .args = args };
	return load_module(&check);
}

/*! \brief Watcher logs go to knotd's log as this zone's module. */
static void mod_log(void *ctx, int priority, const char *msg)
{
	knotd_mod_log(ctx, priority, "%s", msg);
}

/*!
 * \brief The zone's answer to a query (a worker, or the cold waiter's thread): the
 * tables it answers from by its role, then k8s_answer(), which dispatches on it.
 * Call inside an RCU read-side section. Inline: a call with nine arguments less.
 */
static inline __attribute__((always_inline))
k8s_answer_t answer_query(const k8s_ctx_t *ctx, const knot_dname_t *qname, uint16_t qtype,
                          const knot_pkt_t *query, const struct sockaddr_storage *remote,
                          knot_pkt_t *pkt, knot_mm_t *mm, k8s_autopath_outcome_t *walked)
{
	if (ctx->answer.role == K8S_ROLE_FEDERATED) {
		*walked = K8S_AUTOPATH_NONE;
		return k8s_fed_serve_answer(ctx, qname, qtype, query, remote, pkt, mm);
	}
	// Forwarding needs nothing from the API: it answers before the first sync.
	if (ctx->answer.role == K8S_ROLE_FEDFORWARD) {
		*walked = K8S_AUTOPATH_NONE;
		return (ctx->fedfwd != NULL) ? k8s_fedfwd_answer(ctx->fedfwd, qname, qtype, remote, pkt)
		                             : K8S_ANSWER_REFUSED;
	}
	// After a reload that changed the watch settings, the old watcher serves until the new one is ready.
	const k8s_watcher_t *w = k8s_watcher_serving(ctx->watcher, ctx->ready_bits);
	return k8s_answer(&ctx->answer, k8s_watcher_table(w), qname, qtype, query, remote, pkt,
	                  mm, walked);
}

/*!
 * \brief knotd's state after each outcome (outcome.h has its RCODE and EDE): MISS and
 * NODATA add the zone's SOA, ERROR sends the RCODE without records.
 */
static const knotd_in_state_t outcome_states[K8S_ANSWER_COUNT] = {
	[K8S_ANSWER_PASS] = KNOTD_IN_STATE_MISS,
	[K8S_ANSWER_HIT] = KNOTD_IN_STATE_HIT,
	[K8S_ANSWER_HIT_NXDOMAIN] = KNOTD_IN_STATE_HIT,
	[K8S_ANSWER_NODATA] = KNOTD_IN_STATE_NODATA,
	[K8S_ANSWER_NXDOMAIN] = KNOTD_IN_STATE_MISS,
	[K8S_ANSWER_TRUNC] = KNOTD_IN_STATE_TRUNC,
	[K8S_ANSWER_NOTREADY] = KNOTD_IN_STATE_ERROR,
	[K8S_ANSWER_SERVFAIL] = KNOTD_IN_STATE_ERROR,
	[K8S_ANSWER_UNREACHABLE] = KNOTD_IN_STATE_ERROR,
	[K8S_ANSWER_REFUSED] = KNOTD_IN_STATE_ERROR,
};

/*!
 * \brief The query that this thread's ANSWER hook found cold, for the END hook to hand
 * over: knotd reuses a worker's qdata, so its message ID must match too. Cleared on
 * every query: initial-exec, as answer_srv.c's last_srv.
 */
static __thread struct {
	const knotd_qdata_t *qdata;
	uint16_t id;
} cold_query __attribute__((tls_model("initial-exec")));

static knotd_in_state_t k8s_answer_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	// knotd passes every argument (no assert: 10 instructions on every query, callgrind).
	k8s_tsan_zone_seen();
	uint64_t received = k8s_stats_zone_query(qdata);
	uint16_t qtype = knot_pkt_qtype(qdata->query);
	// Only the ADDITIONAL stage of SRV and ANY reads the last SRV answer.
	if (qtype == KNOT_RRTYPE_SRV || qtype == KNOT_RRTYPE_ANY) {
		k8s_answer_forget();
	}
	cold_query.qdata = NULL;
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	k8s_rewrite_zone_query(ctx, qdata);

	// Only where the zone file has no answer.
	if (state != KNOTD_IN_STATE_MISS) {
		return state;
	}
	uint64_t started = (received != 0) ? received : k8s_dnsmetrics_clock();

	k8s_autopath_outcome_t walked;
	(void)k8s_answer_cold_take();
	urcu_memb_read_lock();
	k8s_answer_t res = answer_query(ctx, qdata->name, qtype, qdata->query,
	                                k8s_glue_remote(qdata), pkt, qdata->mm, &walked);
	bool waiter = ctx->cold != NULL;
	urcu_memb_read_unlock();
	// The END hook hands it over: the cold waiter answers when the name is resolved.
	// (A note left set for another outcome is cleared before the next query's answer.)
	if (waiter && ((res == K8S_ANSWER_SERVFAIL && k8s_answer_cold_take()) ||
	               walked == K8S_AUTOPATH_COLD)) {
		cold_query.qdata = qdata;
		cold_query.id = knot_wire_get_id(qdata->query->wire);
	}

	if (walked != K8S_AUTOPATH_NONE) {
		k8s_stats_autopath(mod, qdata, walked);
	}
	if (res == K8S_ANSWER_PASS) {
		return state;
	}
	const k8s_answer_reply_t *reply = &k8s_answer_replies[res];
	qdata->rcode = reply->rcode;
	qdata->rcode_ede = reply->ede;
	k8s_stats_outcome(mod, qdata, res, reply->rcode, started);
	return outcome_states[res];
}

/*!
 * \brief A query whose answer met a cold upstream name is answered late, from the
 * cold waiter's thread, instead of SERVFAIL now (XDP and QUIC answers are knotd's to
 * send: they stay SERVFAIL, the name resolved for the retry).
 */
static knotd_state_t k8s_cold_end_hook(knotd_state_t state, knot_pkt_t *pkt,
                                       knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (cold_query.qdata != qdata) {
		return state;
	}
	cold_query.qdata = NULL;
	if (qdata->type != KNOTD_QUERY_TYPE_NORMAL ||
	    cold_query.id != knot_wire_get_id(qdata->query->wire)) {
		return state;
	}
	const knotd_qdata_params_t *params = qdata->params;
	if (params->xdp_msg != NULL || params->proto == KNOTD_QUERY_PROTO_QUIC) {
		return state;
	}
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	knot_rrset_t soa = knotd_qdata_zone_apex_rrset(qdata, KNOT_RRTYPE_SOA);
	// The zone's context, read as the ANSWER hook reads it (tsan_rcu.h sees the section).
	urcu_memb_read_lock();
	bool handed = k8s_cold_handoff(ctx->cold, qdata->query->wire, qdata->query->size,
	                               params->socket, params->proto == KNOTD_QUERY_PROTO_TCP,
	                               params->remote, k8s_glue_query_local(params), &soa,
	                               k8s_glue_tenant(ctx, k8s_glue_remote(qdata)));
	if (handed) {
		k8s_beat_owe(&ctx->cold_beat);  // The waiter owes it a try (/health).
	}
	urcu_memb_read_unlock();
	if (handed) {
		k8s_stats_late(mod, qdata);
		return KNOTD_STATE_NOOP;
	}
	return state;
}

/*! \brief The cold waiter's answer: the worker's, from its thread. */
static k8s_answer_t cold_answer(void *arg, const knot_pkt_t *query, const knot_dname_t *lower,
                                const struct sockaddr_storage *remote, knot_pkt_t *pkt,
                                knot_mm_t *mm, bool *cold)
{
	k8s_ctx_t *ctx = arg;
	k8s_beat_paid(&ctx->cold_beat);  // A try: the waiter is not wedged.
	k8s_autopath_outcome_t walked;
	(void)k8s_answer_cold_take();
	k8s_answer_t res = answer_query(ctx, lower, knot_pkt_qtype(query), query, remote, pkt, mm,
	                                &walked);
	*cold = (res == K8S_ANSWER_SERVFAIL && k8s_answer_cold_take()) ||
	        walked == K8S_AUTOPATH_COLD;
	return res;
}

/*! \brief The targets of an SRV answer (k8s_additional_hook()'s). */
static __attribute__((noinline)) knotd_in_state_t additional_srv(knotd_in_state_t state,
                                                                 knot_pkt_t *pkt,
                                                                 knotd_qdata_t *qdata,
                                                                 knotd_mod_t *mod)
{
	uint16_t qtype = knot_pkt_qtype(qdata->query);
	if (qtype == KNOT_RRTYPE_SRV || qtype == KNOT_RRTYPE_ANY) {
		k8s_tsan_zone_seen();
		k8s_ctx_t *ctx = knotd_mod_ctx(mod);
		urcu_memb_read_lock();
		k8s_answer_additional(&ctx->answer, pkt, pkt, qdata->mm);
		urcu_memb_read_unlock();
	}
	return state;
}

static knotd_in_state_t k8s_additional_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                            knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	// Only an SRV answer has targets to add: every other query leaves at once, an
	// answer without records (NXDOMAIN, NODATA) before a register is saved.
	if (state != KNOTD_IN_STATE_HIT) {
		return state;
	}
	return additional_srv(state, pkt, qdata, mod);
}

/*!
 * \brief The ADDITIONAL hook of a zone whose list has mod-onlinesign after mod-k8s:
 * knotd's mod-onlinesign (3.2 and 3.4) takes every additional record of a DO answer for glue of
 * a zone node and dies (SIGSEGV in sign_section) on ours, so DO answers get none.
 */
static knotd_in_state_t k8s_additional_unsigned_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                                     knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (knot_pkt_has_dnssec(qdata->query)) {
		return state;
	}
	return k8s_additional_hook(state, pkt, qdata, mod);
}

static bool under(const knot_dname_t *name, const char *apex)
{
	knot_dname_storage_t wire;
	return knot_dname_from_str(wire, apex, sizeof(wire)) != NULL &&
	       knot_dname_in_bailiwick(name, wire) >= 0;
}

static void ctx_free(k8s_ctx_t *ctx)
{
	k8s_rewrite_free_ctx(ctx);
	k8s_ops_release(ctx);
	// Nobody answers late past here: the waiter reads the zone's settings.
	k8s_cold_free(ctx->cold);
	k8s_kept_release(ctx);
	// The endpoint programs the forwarder: it stops first.
	k8s_fedapi_stop(ctx->fedapi);
	k8s_fedfwd_free(ctx->fedfwd);
	k8s_forward_release(ctx->fwd, ctx->mod);
	k8s_hosts_release(ctx->hosts, ctx->mod);
	for (size_t i = 0; i < ctx->fwd_inside_count; i++) {
		free(ctx->fwd_inside[i]);
	}
	free(ctx->fwd_inside);
	free(ctx->zone);
	for (int z = 0; z < K8S_ZONE_COUNT; z++) {
		free(ctx->domains[z]);
	}
	free(ctx->answer.version.rdata);
	free(ctx->federations);
	free(ctx->topology);
	for (size_t i = 0; i < ctx->host_search_count; i++) {
		free(ctx->host_search[i]);
	}
	free(ctx->host_search);
	for (size_t i = 0; i < ctx->member_count; i++) {
		k8s_fedmember_free(&ctx->members[i]);
		if (ctx->fed_watch != NULL) {
			free(ctx->fed_watch[i].key);
		}
	}
	free(ctx->members);
	free(ctx->fed_watch);
	free(ctx->fed_suffix);
	free(ctx);
}

/*!
 * \brief The zone's role, decided here only: from its options (federation-member)
 * and its name. A check has no zone and reads the options as a cluster zone's.
 */
static k8s_role_t zone_role(check_ctx_t *check, const k8s_ctx_t *ctx)
{
	if (ctx->zone == NULL) {
		return K8S_ROLE_CLUSTER;
	}
	knotd_conf_t members = k8s_glue_option(check, K8S_OPT(FED_MEMBER));
	size_t member_count = members.count;
	knotd_conf_free(&members);
	knotd_conf_t external = k8s_glue_option(check, K8S_OPT(EXTERNAL_ZONE));
	bool is_external = false;
	for (size_t i = 0; i < external.count && !is_external; i++) {
		is_external = knot_dname_is_equal(ctx->zone, external.multi[i].dname);
	}
	knotd_conf_free(&external);
	if (member_count > 0) {
		return K8S_ROLE_FEDERATED;
	} else if (is_external) {
		return K8S_ROLE_EXTERNAL;
	} else if (under(ctx->zone, "in-addr.arpa.") || under(ctx->zone, "ip6.arpa.")) {
		return K8S_ROLE_REVERSE;
	} else if (knot_dname_is_equal(ctx->zone, k8s_glue_option(check, K8S_OPT(AUTOPATH_DOMAIN)).single.dname)) {
		return K8S_ROLE_AUTOPATH;
	} else if (knot_dname_is_equal(ctx->zone, ctx->domains[K8S_ZONE_CLUSTERSET])) {
		return K8S_ROLE_CLUSTERSET;
	} else if (knot_dname_is_equal(ctx->zone, (const uint8_t *)K8S_FEDFWD_ZONE)) {
		return K8S_ROLE_FEDFORWARD;
	}
	return K8S_ROLE_CLUSTER;
}

/*! \brief True if the zone answers federation names from the nodes' topology. */
static bool needs_nodes(const k8s_answer_conf_t *answer)
{
	return (answer->role == K8S_ROLE_CLUSTER || answer->role == K8S_ROLE_AUTOPATH) &&
	       answer->federation_count > 0 && answer->topology == NULL;
}

/*! \brief Takes the zone's watcher and attaches the zone; cannot fail after the acquire. */
static int watcher_start(k8s_ctx_t *ctx, const k8s_watcher_conf_t *wconf)
{
	knotd_mod_t *mod = ctx->mod;
	k8s_answer_conf_t *answer = &ctx->answer;
	char err[256] = "";
	ctx->watcher = k8s_watcher_acquire(wconf, err, sizeof(err));
	if (ctx->watcher == NULL) {
		knotd_mod_log(mod, LOG_ERR, "failed to start the watcher (%s)", err);
		return KNOT_ENOMEM;
	}

	// Store the context before the watcher may call back into this zone.
	knotd_mod_ctx_set(mod, ctx);
	ctx->client.log = mod_log;
	ctx->client.stats = k8s_stats_watcher;
	ctx->client.ctx = mod;
	ctx->client.needs = (answer->role == K8S_ROLE_CLUSTERSET ? K8S_NEED_CLUSTERSET : 0) |
	                    (answer->pods == K8S_PODS_VERIFIED ? K8S_NEED_PODS : 0) |
	                    (answer->autopath && answer->role == K8S_ROLE_CLUSTER ? K8S_NEED_PODS : 0) |
	                    (needs_nodes(answer) ? K8S_NEED_NODES : 0) | ctx->cm_needs;
	ctx->client.zone = ctx->zone;
	// The watcher's lines (shared by its zones) name the cluster zone, not the last one loaded.
	ctx->client.log_zone = answer->role == K8S_ROLE_CLUSTER;
	// Cannot fail: from here on only unload lets the watcher go.
	k8s_watcher_attach(ctx->watcher, &ctx->client);
	return KNOT_EOK;
}

/*! \brief True if a module reference (a `module` value: yp_name_t, then "id\0") names \a name. */
static bool modref_is(const knotd_conf_val_t *ref, const char *name)
{
	size_t len = strlen(name);
	return ref->data_len >= 1 + len && ref->data[0] == len &&
	       memcmp(ref->data + 1, name, len) == 0;
}

/*!
 * \brief True if mod-onlinesign comes after mod-k8s in the zone's `module` list,
 * so that its ADDITIONAL hook runs after ours. Global modules need no look:
 * mod-onlinesign has zone scope only (knotd refuses it as a global module).
 */
static bool onlinesign_follows(knotd_mod_t *mod)
{
	knotd_conf_t list = knotd_conf_zone(mod, ZONE_MODULE, knotd_mod_zone(mod));
	bool k8s_seen = false;
	bool follows = false;
	for (size_t i = 0; i < list.count; i++) {
		if (modref_is(&list.multi[i], "mod-k8s")) {
			k8s_seen = true;
		} else if (k8s_seen && modref_is(&list.multi[i], "mod-onlinesign")) {
			follows = true;
		}
	}
	knotd_conf_free(&list);
	return follows;
}

/*!
 * \brief Hooks the ANSWER and ADDITIONAL stages. A zone that mod-onlinesign signs
 * after us gets the ADDITIONAL hook that leaves DO answers alone, so that the others
 * pay nothing for it.
 */
static int hooks_add(knotd_mod_t *mod, const k8s_answer_conf_t *answer, bool cold)
{
	int ret = knotd_mod_in_hook(mod, KNOTD_STAGE_ANSWER, k8s_answer_hook);
	if (ret == KNOT_EOK && cold) {
		ret = knotd_mod_hook(mod, KNOTD_STAGE_END, k8s_cold_end_hook);
	}
	if (ret != KNOT_EOK) {
		return ret;
	}
	// A reverse zone answers no SRV: it never adds records to sign.
	if (answer->role != K8S_ROLE_REVERSE && onlinesign_follows(mod)) {
		knotd_mod_log(mod, LOG_NOTICE, "mod-onlinesign follows mod-k8s: SRV targets' "
		              "addresses are not added to DNSSEC answers (onlinesign signs only zone glue)");
		return knotd_mod_in_hook(mod, KNOTD_STAGE_ADDITIONAL, k8s_additional_unsigned_hook);
	}
	return knotd_mod_in_hook(mod, KNOTD_STAGE_ADDITIONAL, k8s_additional_hook);
}

/*! \brief One reader for the conf check and load: a check reads, refuses or not, and frees. */
static int load_module(check_ctx_t *check)
{
	assert((check->args != NULL) != (check->mod != NULL));
	k8s_ctx_t *ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		return KNOT_ENOMEM;
	}
	ctx->mod = check->mod;

	// A global instance only forwards the names in no zone: no watcher, no zone options.
	if (check->mod != NULL && knotd_mod_zone(check->mod) == NULL) {
		// The answers' counting first: its BEGIN hook takes the receipt time.
		int ret = k8s_stats_hooks(check->mod, true);
		// Before the forwarder's hook: a rewritten name may leave or enter the zones.
		if (ret == KNOT_EOK) {
			ret = k8s_rewrite_read(check, ctx);
		}
		// Hosts after rewrite, before forwarding: CoreDNS's plugin order.
		if (ret == KNOT_EOK) {
			ret = k8s_hosts_read(check, ctx, true);
		}
		if (ret == KNOT_EOK) {
			ret = k8s_forward_read(check, ctx, true);
		}
		if (ret == KNOT_EOK) {
			ret = k8s_ops_querylog_read(check, ctx);
		}
		if (ret != KNOT_EOK) {
			ctx_free(ctx);
		} else {
			knotd_mod_ctx_set(check->mod, ctx);
		}
		return ret;
	}

	k8s_watcher_conf_t wconf = { 0 };
	int ret = k8s_conf_names_read(check, ctx);
	// A check reads the rules as the global instance will (a zone ignores them).
	if (ret == KNOT_EOK && check->mod == NULL) {
		ret = k8s_rewrite_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ctx->answer.role = zone_role(check, ctx);
		ctx->ready_bits = k8s_answer_ready_bits(ctx->answer.role);
		ret = k8s_conf_answer_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = k8s_fed_serve_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = k8s_conf_watch_read(check, needs_nodes(&ctx->answer), &wconf);
	}
	if (ret == KNOT_EOK) {
		ret = k8s_fed_fwd_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = k8s_forward_read(check, ctx, false);
	}
	if (ret == KNOT_EOK) {
		ret = k8s_ops_querylog_read(check, ctx);
	}
	// Every zone alike (the reverse zones too), so that they share them.
	if (ret == KNOT_EOK && ctx->answer.role != K8S_ROLE_FEDERATED) {
		ret = k8s_kept_acquire(check, ctx);
	}
	// Everything that can fail comes before the watcher holds this zone: knotd frees
	// the module after a failed load without calling unload.
	bool federated = ctx->answer.role == K8S_ROLE_FEDERATED;
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = k8s_stats_add(check->mod);
	}
	if (ret == KNOT_EOK && check->mod != NULL && federated) {
		ret = k8s_stats_add_members(check->mod, ctx->member_count);
	}
	// A zone that may meet cold upstream names answers them late, from a thread of its own.
	bool cold = !federated && ctx->answer.role != K8S_ROLE_REVERSE &&
	            (ctx->kept != NULL || ctx->fedfwd != NULL);
	// The hosts table's hook first: CoreDNS's hosts plugin answers before kubernetes.
	if (ret == KNOT_EOK && !federated) {
		ctx->cm_needs = k8s_conf_configmap_needs(check);
		ret = k8s_hosts_read(check, ctx, false);
	}
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = hooks_add(check->mod, &ctx->answer, cold);
	}
	// Last of the zone's END hooks: it knows whether an answer was handed over.
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = k8s_stats_hooks(check->mod, false);
	}
	// A Federated-DNS zone watches its members only, not a cluster of its own.
	if (ret == KNOT_EOK && check->mod != NULL && federated) {
		ret = k8s_fed_acquire(ctx, &wconf);
		if (ret == KNOT_EOK) {
			k8s_fed_attach(ctx);
		}
	} else if (ret == KNOT_EOK && check->mod != NULL) {
		ret = watcher_start(ctx, &wconf);
		// After the watcher, whose own failures say more; its failure lets the watcher go.
		if (ret == KNOT_EOK && cold) {
			// A name's wait for its upstreams: forward-timeout (CoreDNS's 5 s at most, as
			// its forward plugin's deadline, in the shipped configuration).
			knot_dname_txt_storage_t owner;
			if (knot_dname_to_str(owner, ctx->zone, sizeof(owner)) == NULL) {
				owner[0] = '\0';
			}
			unsigned deadline = k8s_glue_option(check, K8S_OPT(FORWARD_TIMEOUT)).single.integer;
			k8s_log_t log = { .fn = mod_log, .ctx = check->mod };
			// Sleeps until a query is handed to it: owes a try only from then.
			k8s_beat_start(&ctx->cold_beat, false, "cold waiter of %s", owner);
			ctx->cold = k8s_cold_new(cold_answer, ctx, owner, deadline, &log);
			if (ctx->cold == NULL) {
				k8s_beat_stop(&ctx->cold_beat);
				knotd_mod_log(check->mod, LOG_ERR, "failed to start the thread that "
				              "answers cold upstream names (no memory or thread)");
				k8s_watcher_detach(ctx->watcher, &ctx->client);
				k8s_watcher_release(ctx->watcher);
				ctx->watcher = NULL;
				ret = KNOT_ENOMEM;
			}
		}
		if (ret == KNOT_EOK) {
			k8s_ops_zone_add(ctx);
			k8s_rewrite_zone_add(ctx);
		}
	}
	if (ret == KNOT_EOK && check->mod != NULL) {
		k8s_ops_take(ctx);
	}
	k8s_watcher_conf_free(&wconf);
	if (ret != KNOT_EOK || check->mod == NULL) {
		ctx_free(ctx);
	}
	return ret;
}

#ifdef __SANITIZE_THREAD__
char k8s_tsan_zone;
#endif

static int k8s_load(knotd_mod_t *mod)
{
	// The answers' clock, before this instance's hooks and threads read it. Once per
	// process: 10 ms on knotd's first load, nothing on a reload's (workers serve then).
	bool first = false;
	if (k8s_dnsmetrics_clock_init(&first) && first) {
		knotd_mod_log(mod, LOG_INFO, "the answers' clock is the TSC (the kernel's clock "
		              "source, invariant; its rate calibrated over 10 ms)");
	} else if (first) {
		knotd_mod_log(mod, LOG_INFO, "the answers' clock is CLOCK_MONOTONIC (no invariant "
		              "TSC that the kernel keeps time by)");
	}
	check_ctx_t check = { .mod = mod };
	int ret = load_module(&check);
	k8s_tsan_zone_published();
	return ret;
}

static void k8s_unload(knotd_mod_t *mod)
{
	// knotd unloads a zone's modules after a grace period: no worker is in our hooks.
	k8s_tsan_grace_passed();
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	if (ctx == NULL) {
		return;
	}
	// No log line here: knotd has freed this zone's name already (see ARCHITECTURE.md).
	k8s_rewrite_zone_remove(ctx);
	k8s_ops_zone_remove(ctx);
	// The cold waiter reads the watchers' tables: it stops before they go.
	k8s_cold_free(ctx->cold);
	ctx->cold = NULL;
	k8s_beat_stop(&ctx->cold_beat);
	for (size_t i = 0; i < ctx->fed.member_count; i++) {
		k8s_watcher_detach(ctx->fed_watch[i].watcher, &ctx->fed_watch[i].client);
	}
	k8s_fed_release(ctx);
	if (ctx->watcher != NULL) {
		k8s_watcher_detach(ctx->watcher, &ctx->client);
		k8s_watcher_release(ctx->watcher);
	}
	ctx_free(ctx);
}

KNOTD_MOD_API(k8s, KNOTD_MOD_FLAG_SCOPE_ANY | KNOTD_MOD_FLAG_OPT_CONF,
              k8s_load, k8s_unload, k8s_conf_schema, k8s_conf_check);
