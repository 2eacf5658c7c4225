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
 * \brief What the knotd glue's files share: the zone's context, the option
 * reader's helpers (k8s_glue.c), the options (k8s_conf.c), the counters
 * (k8s_stats.c), the federation roles (k8s_fed.c). Only the glue calls knotd_*, so this header stays beside
 * it, in module/ above the subsystem folders. The module is built with -fvisibility=hidden: what is
 * declared here is not exported from k8s.so.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <knot/module.h>
#include <libknot/version.h>
#include <urcu/urcu-memb.h>

/*
 * The reader state urcu_memb_read_lock() touches on every query lives in liburcu, which
 * knotd itself links, so it is in static TLS: initial-exec reaches it with one
 * %fs-relative access instead of a __tls_get_addr call (the default in a shared object).
 */
#ifdef CONFIG_RCU_TLS
extern __thread struct urcu_reader urcu_memb_reader __attribute__((tls_model("initial-exec")));
#endif

#include "answer/answer.h"
#include "answer/coldwait.h"
#include "lib/beat.h"
#include "ops/dnsmetrics.h"
#include "federation/fedapi.h"
#include "federation/fedfwd.h"
#include "federation/fedserve.h"
#include "ops/metrics.h"
#include "ops/querylog.h"
#include "resolver/forward.h"
#include "store/topology.h"
#include "watch/watcher.h"

/* The options: K8S_OPT(ID) of K8S_OPTIONS (options.h, by way of watcher.h's watchconf.h). */

/* The zone's storage: where the snapshot (k8s_conf.c) and the K8S-DNS role's state file are. */
#define ZONE_STORAGE		"\x07""storage"

/*! \brief Who reads the options: the conf check (a dry run) or load, as geoip's. */
typedef struct {
	knotd_conf_check_args_t *args; // Set for a conf check.
	knotd_mod_t *mod;              // Set for a real load.
} check_ctx_t;

/*! \brief A member cluster's watcher as a Federated-DNS zone holds it. */
typedef struct {
	knotd_mod_t *mod;
	size_t idx;                  /*!< In federation-member order (the counters' index). */
	const uint8_t *name;         /*!< Wire label. */
	k8s_watcher_t *watcher;      /*!< NULL until started. */
	k8s_watcher_client_t client;
	knot_dname_t *key;           /*!< <member>.<zone>: the reload hand-over finds its predecessor by it. */
} fed_watch_t;

/*! \brief A forwarder shared by the instances whose forward settings are equal (k8s_forward.c). */
typedef struct k8s_fwd_holder k8s_fwd_holder_t;

/*! \brief Kept names shared by the zones whose resolver settings are equal (k8s_kept.c). */
typedef struct k8s_kept k8s_kept_t;

/*! \brief A zone holding kept names: where their lines go. */
typedef struct k8s_kept_client {
	knotd_mod_t *mod;
	bool log_zone;               /*!< Named rather than the newest zone (the cluster zone). */
	struct k8s_kept_client *next;
} k8s_kept_client_t;

/*! \brief A hosts table shared by the instances whose hosts settings are equal (k8s_hosts.c). */
typedef struct k8s_hosts_holder k8s_hosts_holder_t;

/*! \brief A zone's module context (or the global forwarding instance's): allocated by load, freed by unload. */
typedef struct k8s_ctx {
	knotd_mod_t *mod;
	k8s_watcher_t *watcher;
	k8s_watcher_client_t client;
	k8s_answer_conf_t answer;
	uint32_t ready_bits;    /*!< What the zone needs synchronized to answer. */
	knot_dname_t *zone;
	knot_dname_t *domains[K8S_ZONE_COUNT];
	k8s_federation_t *federations;
	k8s_topology_t *topology;   /*!< federation-zone and federation-region, or NULL. */
	knot_dname_t **host_search; /*!< autopath-host-search, lowercase. */
	size_t host_search_count;
	k8s_fedzone_t fed;          /*!< Federated-DNS role (K8S_ROLE_FEDERATED): its members. */
	k8s_fedmember_t *members;   /*!< federation-member, member_count of them (owned). */
	size_t member_count;
	fed_watch_t *fed_watch;
	knot_dname_t *fed_suffix;
	k8s_fedfwd_t *fedfwd;       /*!< K8S-DNS role (svc.federation.), or NULL. */
	k8s_fedapi_t *fedapi;       /*!< Its programming endpoint, or NULL. */
	k8s_fwd_holder_t *fwd;      /*!< The forwarder (global instance, reverse zones), or NULL. */
	knot_dname_t **fwd_inside;  /*!< Stub domains below the zone's apex, forwarded first. */
	size_t fwd_inside_count;
	uint16_t bufsize;           /*!< The largest UDP answer (CoreDNS's bufsize), 0: knotd's. */
	k8s_querylog_t *querylog;   /*!< The query log this instance published, or NULL. */
	k8s_kept_t *kept;           /*!< The kept names (answer.upstream's), or NULL. */
	k8s_kept_client_t kept_client;
	k8s_hosts_holder_t *hosts;  /*!< The hosts table (hosts-*), or NULL. */
	k8s_metrics_source_t metrics_src; /*!< The zone's part of /ready (metrics.h). */
	bool metrics_added;
	bool httpd_held;            /*!< A reference to the process's endpoint (metrics-listen). */
	k8s_cold_t *cold;           /*!< Late answers of cold upstream names, or NULL. */
	k8s_beat_t cold_beat;       /*!< Owed by the cold waiter from a hand-over to its try (/health). */
	struct k8s_rw_glue *rw;     /*!< rewrite and template rules (global instance), or NULL. */
	bool rw_zone;               /*!< In the zones that rewritten names are answered from. */
	struct k8s_rw_soa *rw_soa;  /*!< The zone's SOA as a query of it first saw it (k8s_rewrite.c). */
	unsigned cm_needs;          /*!< K8S_NEED_* of the ConfigMaps the options name. */
	uint8_t ext_apex[64];       /*!< external-apex as a wire label (answer.ext_apex). */
} k8s_ctx_t;

/*!
 * \brief The client's address, read without knotd's call unless XDP holds it (what
 * knotd_qdata_remote_addr() does, less its PLT call on every query).
 */
static inline const struct sockaddr_storage *k8s_glue_remote(knotd_qdata_t *qdata)
{
	const knotd_qdata_params_t *params = qdata->params;
	return (params->xdp_msg == NULL) ? params->remote : knotd_qdata_remote_addr(qdata);
}

/*! \brief knotd's KNOT_STATE_PRODUCE (knot/query/layer.h, not installed): the query goes on. */
#define K8S_STATE_PRODUCE 2

/*!
 * \brief Whether a global BEGIN hook answers the query (the forwarder's, the hosts
 * table's): a normal IN query still going on, of a name in no zone knotd serves (which
 * knotd would answer REFUSED).
 */
static inline bool k8s_glue_no_zone_query(knotd_state_t state, knotd_qdata_t *qdata)
{
	return state == K8S_STATE_PRODUCE && qdata->type == KNOTD_QUERY_TYPE_NORMAL &&
	       knot_pkt_qclass(qdata->query) == KNOT_CLASS_IN && knotd_qdata_zone_name(qdata) == NULL;
}

/*! \brief A conf check's message: it must outlive the call; conf checks run one at a time. */
extern char k8s_glue_check_msg[512];

/*! \brief An option's value: from the configuration checked, or the zone's in load. */
knotd_conf_t k8s_glue_option(check_ctx_t *check, const yp_name_t *item);

/*! \brief Refuses the settings: the reason goes to knotc in a check, to the log in load. */
__attribute__((format(printf, 2, 3)))
int k8s_glue_refuse(check_ctx_t *check, const char *fmt, ...);

/*! \brief A lowercase copy of \a name (malloc), or NULL. */
knot_dname_t *k8s_glue_dname_lower(const knot_dname_t *name);

/*!
 * \brief Who a query from \a remote is charged to in the resolver's pools: its pod's
 * namespace from the zone's table (the global instance: the newest cluster zone's, from
 * k8s_rewrite_zone_newest()), else its address (k8s_answer_tenant()). Inside an RCU
 * read-side section; a hand-over's cost.
 */
k8s_tenant_t k8s_glue_tenant(const k8s_ctx_t *ctx, const struct sockaddr_storage *remote);


/*!
 * \brief The address a query was sent to, the source of its late answer over UDP (the
 * forwarder's and the cold waiter's). Knot 3.3 gives it (params->local, from IP_PKTINFO
 * on a wildcard listener). Knot 3.2 gives only getsockname() of the socket
 * (knotd_qdata_local_addr()): the wildcard itself on a wildcard listener, and the
 * answer's source without asking on a bound one; NULL there, so the kernel chooses as
 * before.
 */
static inline const struct sockaddr_storage *
k8s_glue_query_local(const knotd_qdata_params_t *params)
{
#if KNOT_VERSION_HEX >= 0x030300
	return params->local;
#else
	(void)params;
	return NULL;
#endif
}

/* k8s_conf.c: the options. */

/*! \brief The schema, a row per option of K8S_OPTIONS with its check of one value. */
extern const yp_item_t k8s_conf_schema[];

/*! \brief Reads the zone's name and its domains, lowercase: what its role is decided by. */
int k8s_conf_names_read(check_ctx_t *check, k8s_ctx_t *ctx);

/*!
 * \brief Reads the zone's answer settings (its role decided first), the federations
 * (each name once) with the static topology and the host's search domains.
 */
int k8s_conf_answer_read(check_ctx_t *check, k8s_ctx_t *ctx);

/*!
 * \brief Reads the watch settings, a row of k8s_watcher_conf_fields at a time, the
 * node's name if the zone \a reads_nodes, and checks what involves several of them.
 *
 * \retval KNOT_EOK, KNOT_EINVAL, KNOT_ENOMEM (nothing is left to free)
 */
int k8s_conf_watch_read(check_ctx_t *check, bool reads_nodes, k8s_watcher_conf_t *conf);

/*!
 * \brief The K8S_NEED_* bits of the ConfigMaps the options name: kube-dns's with
 * kube-dns-config, hosts-configmap's (the zone's watcher reads them for the glue).
 */
unsigned k8s_conf_configmap_needs(check_ctx_t *check);

/* k8s_stats.c: the counters. */

/*! \brief Registers the zone's counters with knotd, in the order of their indices. */
int k8s_stats_add(knotd_mod_t *mod);

/*! \brief The member gauges of a Federated-DNS zone, indexed in federation-member order. */
int k8s_stats_add_members(knotd_mod_t *mod, size_t count);

/*! \brief Watcher counters become this zone's gauges (slot 0: not a worker); \a ctx is the module. */
void k8s_stats_watcher(void *ctx, const k8s_watcher_stats_t *st);

/*! \brief A member's counters: one slot of each member gauge; \a ctx is its fed_watch_t. */
void k8s_stats_member(void *ctx, const k8s_watcher_stats_t *st);

/*! \brief Counts a query handed to the cold waiter (also counted by its first outcome). */
void k8s_stats_late(knotd_mod_t *mod, knotd_qdata_t *qdata);

/*! \brief Counts an autopath walk and its outcome. */
void k8s_stats_autopath(knotd_mod_t *mod, knotd_qdata_t *qdata, k8s_autopath_outcome_t walked);

/*!
 * \brief Hooks that count every answer a worker sends in CoreDNS's series (dnsmetrics.h).
 * A global instance's BEGIN and END come before its other hooks; a zone's END after its
 * other hooks (its ANSWER hook calls k8s_stats_zone_query()).
 */
int k8s_stats_hooks(knotd_mod_t *mod, bool global);

/*
 * The query a worker is answering, shared by the hooks of k8s_stats.c and the zone's
 * ANSWER hook (k8s.c), which counts in it inline: two calls less on every answer.
 */

/*! \brief The "queries" counter's index (k8s_stats_add() registers it first). */
#define K8S_STATS_CTR_QUERIES 0

/*! \brief The "queries" counter's index of each outcome that is counted (not PASS). */
extern const uint8_t k8s_stats_query_counters[K8S_ANSWER_COUNT];

/*! \brief The Prometheus rcode label (metrics.h) of the RCODEs an answer replies (0..5). */
extern const uint8_t k8s_stats_metrics_rcodes[KNOT_RCODE_REFUSED + 1];

/*!
 * \brief The query this worker is answering (knotd reuses its qdata: the ID must match),
 * and its answer's counts, filled as the hooks learn them: the END hook passes them on
 * as they are (one pass for both families, nothing copied).
 */
typedef struct {
	const knotd_qdata_t *qdata;
	uint16_t id;
	bool zone_counts;           /*!< A mod-k8s zone's ANSWER hook saw it: its END counts. */
	uint64_t received_ns;
	k8s_dnsmetrics_answer_t a;  /*!< .plugin, and the module's outcome (.module...) so far. */
} k8s_stats_answering_t;

extern __thread k8s_stats_answering_t k8s_stats_answering
	__attribute__((tls_model("initial-exec")));  // No __tls_get_addr() per hook.

static inline bool k8s_stats_answering_this(const knotd_qdata_t *qdata)
{
	return k8s_stats_answering.qdata == qdata &&
	       k8s_stats_answering.id == knot_wire_get_id(qdata->query->wire);
}

static inline void k8s_stats_answering_start(const knotd_qdata_t *qdata)
{
	k8s_stats_answering_t *ans = &k8s_stats_answering;
	ans->qdata = qdata;
	ans->id = knot_wire_get_id(qdata->query->wire);
	ans->zone_counts = false;
	ans->a.module = false;
	ans->a.plugin = K8S_DNSMETRICS_CORE;
	ans->a.answered_ns = 0;
	ans->received_ns = k8s_dnsmetrics_clock();
}

/*!
 * \brief A query a mod-k8s zone's ANSWER hook sees: the zone's END hook counts its answer.
 * Without a global instance the receipt time is taken now and returned (the module's
 * start: no clock read more), else 0.
 */
static inline uint64_t k8s_stats_zone_query(const knotd_qdata_t *qdata)
{
	// Without a global instance, the zone takes the receipt time itself.
	uint64_t took = 0;
	if (!k8s_stats_answering_this(qdata)) {
		k8s_stats_answering_start(qdata);
		took = k8s_stats_answering.received_ns;
	}
	k8s_stats_answering.zone_counts = true;
	k8s_stats_answering.a.module = false;
	k8s_stats_answering.a.plugin = K8S_DNSMETRICS_KUBERNETES;
	return took;
}

/*!
 * \brief Counts an answer's outcome (not K8S_ANSWER_PASS) in knotd's counters now, and
 * its \a rcode with the time since \a started_ns in the Prometheus counters (metrics.h)
 * with CoreDNS's, at the zone's END hook. Only from the zone's ANSWER hook, after
 * k8s_stats_zone_query() on the same query.
 */
static inline void k8s_stats_outcome(knotd_mod_t *mod, knotd_qdata_t *qdata, k8s_answer_t res,
                                     uint8_t rcode, uint64_t started_ns)
{
	knotd_mod_stats_incr(mod, qdata->params->thread_id, K8S_STATS_CTR_QUERIES,
	                     k8s_stats_query_counters[res], 1);
	k8s_metrics_rcode_t label = (rcode < sizeof(k8s_stats_metrics_rcodes)) ?
	                            k8s_stats_metrics_rcodes[rcode] : K8S_METRICS_RCODE_OTHER;
	uint64_t now = k8s_dnsmetrics_clock();
	uint64_t took = now > started_ns ? now - started_ns : 0;
	// The zone's ANSWER hook called k8s_stats_zone_query() for this query (no check of
	// answering_this() on every answer): the zone's END hook counts it in both families
	// in one pass (k8s_stats.c's answer_count()), and CoreDNS's duration ends here too.
	k8s_dnsmetrics_answer_t *a = &k8s_stats_answering.a;
	a->module = true;
	a->module_rcode = label;
	a->module_ns = took;
	a->answered_ns = now;
}

/*! \brief The `plugin` label of the answer \a qdata gets (the forwarder's cache, ...). */
void k8s_stats_answered_by(const knotd_qdata_t *qdata, k8s_dnsmetrics_plugin_t plugin);

/* k8s_fed.c: the federation roles. */

/*! \brief federation-name is a lowercase DNS label. */
int k8s_fed_check_name(knotd_conf_check_args_t *args);

/*! \brief A federation-member value as k8s_fedmember_parse() reads it. */
int k8s_fed_check_member(knotd_conf_check_args_t *args);

/*!
 * \brief Reads the Federated-DNS role: the federation, its members and what
 * this zone answers (federation-domain: <fed>.svc.<zone> with cluster IPs;
 * a zone at or above federation-external: that domain, load-balancer addresses only).
 */
int k8s_fed_serve_read(check_ctx_t *check, k8s_ctx_t *ctx);

/*!
 * \brief Takes one watcher per member: the zone's watch settings with the member's
 * kubeconfig and context, so members on the same API share one.
 */
int k8s_fed_acquire(k8s_ctx_t *ctx, const k8s_watcher_conf_t *base);

/*! \brief Releases the member watchers taken so far (none is attached yet). */
void k8s_fed_release(k8s_ctx_t *ctx);

/*! \brief Attaches the zone to every member's watcher; cannot fail. */
void k8s_fed_attach(k8s_ctx_t *ctx);

/*!
 * \brief The answer of a zone of role K8S_ROLE_FEDERATED: from every synchronized
 * member's table (a member's predecessor after a reload, as for a cluster zone),
 * the source cluster from the query's EDNS option. Call inside an RCU read-side
 * section.
 */
k8s_answer_t k8s_fed_serve_answer(const k8s_ctx_t *ctx, const knot_dname_t *qname,
                                  uint16_t qtype, const knot_pkt_t *query,
                                  const struct sockaddr_storage *remote, knot_pkt_t *pkt,
                                  knot_mm_t *mm);

/*! \brief A federation-nameservers value as k8s_fedstub_static() reads it. */
int k8s_fed_check_ns(knotd_conf_check_args_t *args);

/*! \brief The source-cluster option's value is one DNS label. */
int k8s_fed_check_cluster(knotd_conf_check_args_t *args);

/*!
 * \brief Reads and, in load, starts the K8S-DNS role of a svc.federation. zone: the
 * forwarder with its stub zones, and the programming endpoint if configured.
 */
int k8s_fed_fwd_read(check_ctx_t *check, k8s_ctx_t *ctx);

/* k8s_forward.c: the forwarder of names outside our zones; its options' checks and
 * readers in k8s_fwdconf.c. */

/*! \brief A forward value is an IP address with an optional @port. */
int k8s_forward_check_addr(knotd_conf_check_args_t *args);

/*! \brief A forward-stub value is ZONE=ADDRESS[@PORT][,ADDRESS...]. */
int k8s_forward_check_stub(knotd_conf_check_args_t *args);

/*! \brief Checks kube-dns-config: an absolute directory name (the files may come later). */
int k8s_forward_check_kubedns(knotd_conf_check_args_t *args);

/*! \brief Checks one forward-options value (forward/groupconf.h). */
int k8s_forward_check_options(knotd_conf_check_args_t *args);

/*! \brief Checks one forward-cache value (forward/groupconf.h). */
int k8s_forward_check_cache(knotd_conf_check_args_t *args);

/*! \brief Reads forward-options and forward-cache into \a conf's settings (by zone). */
int k8s_conf_fwd_settings_read(check_ctx_t *check, k8s_fwd_conf_t *conf);

/*!
 * \brief The late answers' UDP size: knotd's udp-max-payload per family, bufsize if lower
 * (resolver/late.h).
 */
void k8s_conf_udp_max_read(check_ctx_t *check);

/*!
 * \brief Copies the stub domains of \a conf below the zone's apex into \a ctx->fwd_inside
 * (a cluster zone forwards their names first, as CoreDNS's more specific block does).
 */
int k8s_conf_fwd_inside_read(k8s_ctx_t *ctx, const k8s_fwd_conf_t *conf);

/*!
 * \brief Reads the forward options and, in load, takes the forwarder: a global
 * instance hooks the names in no zone, a reverse zone's its NXDOMAIN answers, a zone
 * with stub domains below its apex their names.
 */
int k8s_forward_read(check_ctx_t *check, k8s_ctx_t *ctx, bool global);

/*! \brief Releases the instance's hold on the forwarder (the last one stops it). */
void k8s_forward_release(k8s_fwd_holder_t *h, knotd_mod_t *mod);

/*!
 * \brief The forwarder of a zone's kept names without `upstream` (\a holder, NULL when
 * the zone forwards nothing): its own (a reverse zone's), or taken here, shared with
 * the global instance of equal settings.
 */
int k8s_forward_kept(check_ctx_t *check, k8s_ctx_t *ctx, k8s_fwd_holder_t **holder);

/*! \brief Takes one more hold on the forwarder (k8s_forward_release() drops it). */
void k8s_forward_hold(k8s_fwd_holder_t *h);

/*!
 * \brief The holder's live forwarder (inside an RCU read-side section): a ConfigMap
 * change replaces it, and the new one starts with no kept names (keeper.h).
 */
k8s_fwd_t *k8s_forward_live(void *holder);

/* k8s_kept.c: the kept names. */

/*!
 * \brief Gives the zone its kept names (ctx->answer.upstream), shared with the zones of
 * equal settings: `upstream`'s, else the forwarder's (k8s_forward_kept()); none
 * without either. Nothing in a conf check.
 */
int k8s_kept_acquire(check_ctx_t *check, k8s_ctx_t *ctx);

/*! \brief Drops the zone's kept names (the last zone frees them); no reader may remain. */
void k8s_kept_release(k8s_ctx_t *ctx);


/* k8s_rewrite.c: CoreDNS's rewrite and template, before the zone lookup. */

/*! \brief A rewrite value is one CoreDNS rewrite rule that mod-k8s applies alike. */
int k8s_rewrite_check_rule(knotd_conf_check_args_t *args);

/*! \brief A template value is one CoreDNS template that mod-k8s answers alike. */
int k8s_rewrite_check_template(knotd_conf_check_args_t *args);

/*!
 * \brief Reads the rules of a global instance and, in load, hooks its BEGIN stage (before
 * the forwarder's hook) when it has any.
 */
int k8s_rewrite_read(check_ctx_t *check, k8s_ctx_t *ctx);

/*! \brief Frees the instance's rules (unload; no worker in its hooks). */
void k8s_rewrite_free_ctx(k8s_ctx_t *ctx);

/*!
 * \brief A zone whose names rewritten queries may be answered from (load, after its
 * watcher); cannot fail: without memory the zone is logged and left out.
 */
void k8s_rewrite_zone_add(k8s_ctx_t *ctx);

/*! \brief Takes the zone out of them, and waits until no query reads it (first in unload). */
void k8s_rewrite_zone_remove(k8s_ctx_t *ctx);

/* k8s_rewrite_zones.c: the zones a rewritten query is answered from. */

/*!
 * \brief The newest zone of the list in \a role (the global instance's view of a zone's
 * table: the cluster zone's pods for the resolver's tenants), or NULL; inside an RCU
 * read-side section.
 */
const k8s_ctx_t *k8s_rewrite_zone_newest(k8s_role_t role);

/*! \brief The zone (its context) a name is in, the longest; NULL if none (RCU section). */
const k8s_ctx_t *k8s_rewrite_zone_of(const knot_dname_t *name);

/*! \brief A zone's answer of a rewritten query: its ANSWER hook's, records of \a qname under \a shown. */
k8s_answer_t k8s_rewrite_zone_answer(const k8s_ctx_t *ctx, const knot_dname_t *qname,
                                     const knot_dname_t *shown, uint16_t qtype,
                                     const knot_pkt_t *query,
                                     const struct sockaddr_storage *remote, knot_pkt_t *pkt,
                                     knot_mm_t *mm);

/*! \brief The zone's SOA as a query of it left it, or NULL (none came yet). */
const knot_rrset_t *k8s_rewrite_zone_soa(const k8s_ctx_t *ctx);

/*! \brief Set while a global instance has rules: the zones keep a copy of their SOA. */
extern bool k8s_rewrite_zones_soa;

/*!
 * \brief Keeps a copy of the zone's SOA from a query of it (the first one only): a
 * negative answer of a name rewritten into the zone from another gets it.
 */
void k8s_rewrite_zone_seen(k8s_ctx_t *ctx, knotd_qdata_t *qdata);

/*! \brief Inline part of k8s_rewrite_zone_seen(): nothing to do without rules or once copied. */
static inline void k8s_rewrite_zone_query(k8s_ctx_t *ctx, knotd_qdata_t *qdata)
{
	if (__builtin_expect(__atomic_load_n(&k8s_rewrite_zones_soa, __ATOMIC_RELAXED), 0) &&
	    ctx->rw_zone &&
	    __atomic_load_n(&ctx->rw_soa, __ATOMIC_ACQUIRE) == NULL) {
		k8s_rewrite_zone_seen(ctx, qdata);
	}
}


/* k8s_hosts.c: the hosts table (CoreDNS's hosts plugin). */

/*! \brief hosts-file is an absolute file name. */
int k8s_hosts_check_file(knotd_conf_check_args_t *args);

/*! \brief hosts-configmap is NAMESPACE/NAME/KEY. */
int k8s_hosts_check_configmap(knotd_conf_check_args_t *args);

/*! \brief A hosts-entry value is one hosts line: an address and names. */
int k8s_hosts_check_entry(knotd_conf_check_args_t *args);

/*!
 * \brief Reads the hosts options and, in load, takes the table of those settings: a
 * global instance hooks the names in no zone (BEGIN, before forwarding), a zone's
 * ANSWER stage before mod-k8s's own answer. Call before the forwarder's and the
 * zone's own hooks.
 */
int k8s_hosts_read(check_ctx_t *check, k8s_ctx_t *ctx, bool global);

/*! \brief Releases the instance's hold on the table (the last one stops its thread). */
void k8s_hosts_release(k8s_hosts_holder_t *h, knotd_mod_t *mod);

/* k8s_ops.c: the operations endpoint (metrics-listen). */

/*! \brief lameduck-file is an absolute path. */
int k8s_ops_check_lameduck(knotd_conf_check_args_t *args);

/*! \brief The zone's part of /ready, once its watcher is attached; cannot fail. */
void k8s_ops_zone_add(k8s_ctx_t *ctx);

/*! \brief Takes its part out of /ready (first thing in unload). */
void k8s_ops_zone_remove(k8s_ctx_t *ctx);

/*!
 * \brief Takes the process's endpoint if the zone sets metrics-listen. A port that
 * cannot be bound is logged, not fatal: the zone answers without it.
 */
void k8s_ops_take(k8s_ctx_t *ctx);

/*! \brief Checks one query-log value (CoreDNS's log line, querylog.h). */
int k8s_ops_check_querylog(knotd_conf_check_args_t *args);

/*!
 * \brief Reads query-log and query-log-rate and, at load, publishes the instance's query
 * log (the process's one, until a later instance publishes its own).
 */
int k8s_ops_querylog_read(check_ctx_t *check, k8s_ctx_t *ctx);

/*! \brief Drops the zone's reference to the endpoint, if it holds one. */
void k8s_ops_release(k8s_ctx_t *ctx);
