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
 * This file is the knotd glue only: configuration, load and unload, hooks
 * and counters. The logic lives in the k8s_* parts (see ARCHITECTURE.md).
 */

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <knot/module.h>
#include <libknot/yparser/yptrafo.h>
#include <urcu/urcu-memb.h>

/*
 * The reader state urcu_memb_read_lock() touches on every query lives in liburcu, which
 * knotd itself links, so it is in static TLS: initial-exec reaches it with one
 * %fs-relative access instead of a __tls_get_addr call (the default in a shared object).
 */
#ifdef CONFIG_RCU_TLS
extern __thread struct urcu_reader urcu_memb_reader __attribute__((tls_model("initial-exec")));
#endif

#include "answer.h"
#include "dnsname.h"
#include "fedserve.h"
#include "kubeconfig.h"
#include "topology.h"
#include "watcher.h"

#define MOD_TTL			"\x03""ttl"
#define MOD_DNS_VERSION		"\x0b""dns-version"
#define MOD_CS_DNS_VERSION	"\x16""clusterset-dns-version"
#define MOD_CLUSTER_DOMAIN	"\x0e""cluster-domain"
#define MOD_CLUSTERSET_DOMAIN	"\x11""clusterset-domain"
#define MOD_IGNORE_EMPTY	"\x14""ignore-empty-service"
#define MOD_PODS		"\x04""pods"
#define MOD_AUTOPATH_DOMAIN	"\x0f""autopath-domain"
#define MOD_AUTOPATH_OPTION	"\x14""autopath-edns-option"
#define MOD_AUTOPATH		"\x08""autopath"
#define MOD_AUTOPATH_HOST	"\x14""autopath-host-search"
#define MOD_FEDERATIONS		"\x0b""federations"
#define MOD_FED_ZONE		"\x0f""federation-zone"
#define MOD_FED_REGION		"\x11""federation-region"
#define MOD_FED_NAME		"\x0f""federation-name"
#define MOD_FED_DOMAIN		"\x11""federation-domain"
#define MOD_FED_MEMBER		"\x11""federation-member"
#define MOD_FED_EXTERNAL	"\x13""federation-external"
#define MOD_SNAPSHOT		"\x08""snapshot"
#define ZONE_MODULE		"\x06""module"
#define ZONE_STORAGE		"\x07""storage"

static const knot_lookup_t pods_modes[] = {
	{ K8S_PODS_DISABLED, "disabled" },
	{ K8S_PODS_INSECURE, "insecure" },
	{ K8S_PODS_VERIFIED, "verified" },
	{ 0, NULL }
};

/*
 * Checks of one option's value (args->data), which knotd runs as it reads the
 * option, as synthrecord's check_prefix. What involves several options is
 * checked by the reader below, which the conf check shares with load.
 */

// A message must outlive the call; conf checks run one at a time.
static char check_msg[512];

/*! \brief A label selector as the API accepts them: no spaces or quotes to smuggle. */
static int check_selector(knotd_conf_check_args_t *args)
{
	const char *text = yp_str(args->data);
	bool valid = *text != '\0' && strlen(text) <= 512;
	for (const char *c = text; valid && *c != '\0'; c++) {
		valid = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		        (*c >= '0' && *c <= '9') || strchr("-_./=!,() ", *c) != NULL;
	}
	if (!valid) {
		snprintf(check_msg, sizeof(check_msg), "invalid label selector in %s",
		         args->item->name + 1);
		args->err_str = check_msg;
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief The rule of cluster ids read from the API; the option is lowercase. */
static int check_cluster_id(knotd_conf_check_args_t *args)
{
	const char *id = yp_str(args->data);
	if (!k8s_cluster_id_valid(id, strlen(id), false)) {
		args->err_str = "cluster-id must be one or two lowercase DNS labels";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief Knot's address type also takes a UNIX socket path; a resolver needs an IP address. */
static int check_upstream(knotd_conf_check_args_t *args)
{
	bool no_port;
	struct sockaddr_storage addr = yp_addr(args->data, &no_port);
	if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) {
		args->err_str = "upstream must be an IPv4 or IPv6 address, optionally with @port";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief The version is one TXT string. */
static int check_version(knotd_conf_check_args_t *args)
{
	if (strlen(yp_str(args->data)) > 255) {
		args->err_str = "dns-version longer than 255 characters";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief Parses a federations value (NAME=DOMAIN); the reason for a failure in \a msg. */
static int federation_parse(const char *text, k8s_federation_t *fed, char *msg, size_t msglen)
{
	char err[128];
	int ret = k8s_federation_parse(text, fed, err, sizeof(err));
	if (ret != KNOT_EOK) {
		snprintf(msg, msglen, "invalid federation '%s' (%s)", text, err);
	}
	return ret;
}

static int check_federation(knotd_conf_check_args_t *args)
{
	k8s_federation_t fed;
	if (federation_parse(yp_str(args->data), &fed, check_msg, sizeof(check_msg)) != KNOT_EOK) {
		args->err_str = check_msg;
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

static int check_fed_name(knotd_conf_check_args_t *args)
{
	const char *name = yp_str(args->data);
	if (!k8s_dns_label_valid(name, strlen(name), false)) {
		args->err_str = "federation-name must be a lowercase DNS label";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

static int check_fed_member(knotd_conf_check_args_t *args)
{
	k8s_fedmember_t m;
	char err[256];
	if (k8s_fedmember_parse(yp_str(args->data), &m, err, sizeof(err)) != KNOT_EOK) {
		snprintf(check_msg, sizeof(check_msg), "invalid federation-member '%s' (%s)",
		         yp_str(args->data), err);
		args->err_str = check_msg;
		return KNOT_EINVAL;
	}
	k8s_fedmember_free(&m);
	return KNOT_EOK;
}

static int check_node_name(knotd_conf_check_args_t *args)
{
	if (!k8s_federation_node_valid(yp_str(args->data))) {
		args->err_str = "node-name must be a node's name (a lowercase DNS name)";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

static const yp_item_t k8s_conf[] = {
	{ K8S_OPT_KUBECONFIG,    YP_TSTR,   YP_VNONE },
	{ K8S_OPT_CONTEXT,       YP_TSTR,   YP_VNONE },
	{ K8S_OPT_SA_DIR,        YP_TSTR,   YP_VSTR = { K8S_SA_DIR_DEFAULT } },
	{ MOD_TTL,               YP_TINT,   YP_VINT = { 0, 3600, 5, YP_STIME } },
	{ MOD_DNS_VERSION,       YP_TSTR,   YP_VSTR = { "1.1.0" }, YP_FNONE, { check_version } },
	{ MOD_CS_DNS_VERSION,    YP_TSTR,   YP_VSTR = { "1.1.0" }, YP_FNONE, { check_version } },
	{ MOD_CLUSTER_DOMAIN,    YP_TDNAME, YP_VDNAME = { 15, (const uint8_t *)"\x07""cluster""\x05""local" } },
	{ MOD_CLUSTERSET_DOMAIN, YP_TDNAME, YP_VDNAME = { 18, (const uint8_t *)"\x0a""clusterset""\x05""local" } },
	{ K8S_OPT_CLUSTER_ID,    YP_TSTR,   YP_VNONE, YP_FNONE, { check_cluster_id } },
	{ K8S_OPT_NAMESPACES,    YP_TSTR,   YP_VNONE, YP_FMULTI },
	{ K8S_OPT_LABELS,        YP_TSTR,   YP_VNONE, YP_FNONE, { check_selector } },
	{ K8S_OPT_NS_LABELS,     YP_TSTR,   YP_VNONE, YP_FNONE, { check_selector } },
	{ K8S_OPT_EP_POD_NAMES,  YP_TBOOL,  YP_VNONE },
	{ K8S_OPT_NO_ENDPOINTS,  YP_TBOOL,  YP_VNONE },
	{ MOD_IGNORE_EMPTY,      YP_TBOOL,  YP_VNONE },
	{ MOD_PODS,              YP_TOPT,   YP_VOPT = { pods_modes, K8S_PODS_INSECURE } },
	{ K8S_OPT_UPSTREAM,      YP_TADDR,  YP_VADDR = { 53 }, YP_FNONE, { check_upstream } },
	{ K8S_OPT_STALL,         YP_TINT,   YP_VINT = { 5, 3600, 90, YP_STIME } },
	{ K8S_OPT_CRD_RETRY,     YP_TINT,   YP_VINT = { 1, 86400, 60, YP_STIME } },
	{ MOD_AUTOPATH_DOMAIN,   YP_TDNAME, YP_VDNAME = { 11, (const uint8_t *)"\x02""ap""\x03""k8s""\x02""io" } },
	{ MOD_AUTOPATH_OPTION,   YP_TINT,   YP_VINT = { 0, 65535, 65001 } },
	{ MOD_AUTOPATH,          YP_TBOOL,  YP_VNONE },
	{ MOD_AUTOPATH_HOST,     YP_TDNAME, YP_VNONE, YP_FMULTI },
	{ MOD_FEDERATIONS,       YP_TSTR,   YP_VNONE, YP_FMULTI, { check_federation } },
	{ MOD_FED_ZONE,          YP_TSTR,   YP_VNONE },
	{ MOD_FED_REGION,        YP_TSTR,   YP_VNONE },
	{ K8S_OPT_NODE_NAME,     YP_TSTR,   YP_VNONE, YP_FNONE, { check_node_name } },
	{ MOD_FED_NAME,          YP_TSTR,   YP_VNONE, YP_FNONE, { check_fed_name } },
	{ MOD_FED_DOMAIN,        YP_TDNAME, YP_VDNAME = { 12, (const uint8_t *)"\x0a""federation" } },
	{ MOD_FED_MEMBER,        YP_TSTR,   YP_VNONE, YP_FMULTI, { check_fed_member } },
	{ MOD_FED_EXTERNAL,      YP_TDNAME, YP_VNONE },
	{ MOD_SNAPSHOT,          YP_TBOOL,  YP_VBOOL = { true } },
	{ K8S_OPT_SNAP_MAX_AGE,  YP_TINT,   YP_VINT = { 0, 365 * 86400, 86400, YP_STIME } },
	{ NULL }
};

/*! \brief Who reads the options: the conf check (a dry run) or load, as geoip's. */
typedef struct {
	knotd_conf_check_args_t *args; // Set for a conf check.
	knotd_mod_t *mod;              // Set for a real load.
} check_ctx_t;

static int load_module(check_ctx_t *check);

static int k8s_conf_check(knotd_conf_check_args_t *args)
{
	check_ctx_t check = { .args = args };
	return load_module(&check);
}

/* Counters, in registration order. */
enum {
	CTR_QUERIES,
	CTR_OBJECTS,
	CTR_SERVICES,
	CTR_RECORDS,
	CTR_TABLE_BYTES,
	CTR_RECORDS_CAPPED,
	CTR_READY,
	CTR_CONNECTED,
	CTR_RESYNCS,
	CTR_WATCH_RESTARTS,
	CTR_API_ERRORS,
	CTR_LAST_EVENT_AGE,
	CTR_LATENCY,
	CTR_AUTOPATH,
	CTR_SNAPSHOT,
	CTR_MEMBER_READY,      // Federated-DNS zones only, one slot per member; added last.
	CTR_MEMBER_CONNECTED,
	CTR_MEMBER_API_ERRORS,
};

/*! \brief The snapshot counter's indices. */
enum {
	SNAP_STALE = 0,
	SNAP_LOADED,
	SNAP_WRITES,
	SNAP_WRITE_ERRORS,
	SNAP_REFUSED,
	SNAP_COUNT
};

/*! \brief Query outcomes counted per zone. */
enum {
	QUERY_ANSWER = 0,
	QUERY_NODATA,
	QUERY_NXDOMAIN,
	QUERY_TRUNCATED,
	QUERY_NOT_READY,
	QUERY_SERVFAIL,
	QUERY_REFUSED,
	QUERY_COUNT
};

static char *query_str(uint32_t idx, uint32_t count)
{
	static const char *names[QUERY_COUNT] = {
		"answer", "nodata", "nxdomain", "truncated", "not-ready", "servfail", "refused"
	};
	return strdup(idx < QUERY_COUNT ? names[idx] : "unknown");
}

/*! \brief Autopath outcomes; index 0 counts every walk ("expanded"). */
static char *autopath_str(uint32_t idx, uint32_t count)
{
	static const char *names[K8S_AUTOPATH_COUNT] = {
		[K8S_AUTOPATH_NONE] = "expanded",
		[K8S_AUTOPATH_NAMESPACE] = "hit-namespace",
		[K8S_AUTOPATH_SVC] = "hit-svc",
		[K8S_AUTOPATH_CLUSTER] = "hit-cluster",
		[K8S_AUTOPATH_HOST] = "hit-host",
		[K8S_AUTOPATH_LISTED] = "hit-listed",
		[K8S_AUTOPATH_NAME] = "hit-name",
		[K8S_AUTOPATH_FELL_THROUGH] = "fell-through",
		[K8S_AUTOPATH_COLD] = "cold",
		[K8S_AUTOPATH_REFUSED] = "refused",
	};
	return strdup(idx < K8S_AUTOPATH_COUNT ? names[idx] : "unknown");
}

static char *snapshot_str(uint32_t idx, uint32_t count)
{
	static const char *names[SNAP_COUNT] = {
		"stale", "loaded", "writes", "write-errors", "refused"
	};
	return strdup(idx < SNAP_COUNT ? names[idx] : "unknown");
}

static char *source_str(uint32_t idx, uint32_t count)
{
	return strdup(k8s_resource_name(idx));
}

static char *zone_str(uint32_t idx, uint32_t count)
{
	return strdup(idx == K8S_ZONE_CLUSTER ? "cluster" : "clusterset");
}

static char *apierr_str(uint32_t idx, uint32_t count)
{
	return strdup(k8s_apierr_name(idx));
}

static char *latency_str(uint32_t idx, uint32_t count)
{
	char text[32];
	if (idx + 1 < count) {
		snprintf(text, sizeof(text), "le-%ums", 1u << idx);
	} else {
		snprintf(text, sizeof(text), "gt-%ums", 1u << (idx - 1));
	}
	return strdup(text);
}

/*! \brief A member cluster's watcher as a Federated-DNS zone holds it. */
typedef struct {
	knotd_mod_t *mod;
	size_t idx;                  /*!< In federation-member order (the counters' index). */
	const uint8_t *name;         /*!< Wire label. */
	k8s_watcher_t *watcher;      /*!< NULL until started. */
	k8s_watcher_client_t client;
	knot_dname_t *key;           /*!< <member>.<zone>: the reload hand-over finds its predecessor by it. */
} fed_watch_t;

typedef struct {
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
	k8s_fedzone_t fed;          /*!< Federated-DNS role: set when fed.member_count > 0. */
	k8s_fedmember_t *members;   /*!< federation-member, member_count of them (owned). */
	size_t member_count;
	fed_watch_t *fed_watch;
	knot_dname_t *fed_suffix;
} k8s_ctx_t;

/*! \brief Watcher logs go to knotd's log as this zone's module. */
static void mod_log(void *ctx, int priority, const char *msg)
{
	knotd_mod_log(ctx, priority, "%s", msg);
}

/*! \brief Watcher counters become this zone's gauges (slot 0: not a worker). */
static void mod_stats(void *ctx, const k8s_watcher_stats_t *st)
{
	knotd_mod_t *mod = ctx;
	for (uint32_t i = 0; i < K8S_SRC_COUNT; i++) {
		knotd_mod_stats_store(mod, 0, CTR_OBJECTS, i, st->objects[i]);
	}
	for (uint32_t i = 0; i < K8S_ZONE_COUNT; i++) {
		knotd_mod_stats_store(mod, 0, CTR_SERVICES, i, st->services[i]);
		knotd_mod_stats_store(mod, 0, CTR_READY, i, (st->ready >> i) & 1);
	}
	knotd_mod_stats_store(mod, 0, CTR_RECORDS, 0, st->records);
	knotd_mod_stats_store(mod, 0, CTR_TABLE_BYTES, 0, st->table_bytes);
	knotd_mod_stats_store(mod, 0, CTR_RECORDS_CAPPED, 0, st->records_capped);
	knotd_mod_stats_store(mod, 0, CTR_CONNECTED, 0, st->connected);
	knotd_mod_stats_store(mod, 0, CTR_RESYNCS, 0, st->resyncs);
	knotd_mod_stats_store(mod, 0, CTR_WATCH_RESTARTS, 0, st->watch_restarts);
	for (uint32_t i = 0; i < K8S_APIERR_COUNT; i++) {
		knotd_mod_stats_store(mod, 0, CTR_API_ERRORS, i, st->api_errors[i]);
	}
	knotd_mod_stats_store(mod, 0, CTR_LAST_EVENT_AGE, 0, st->last_event_age_s);
	for (uint32_t i = 0; i < K8S_LATENCY_BUCKETS; i++) {
		knotd_mod_stats_store(mod, 0, CTR_LATENCY, i, st->latency[i]);
	}
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_STALE, st->snapshot_stale);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_LOADED, st->snapshot_loaded);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_WRITES, st->snapshot_writes);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_WRITE_ERRORS, st->snapshot_write_errors);
	knotd_mod_stats_store(mod, 0, CTR_SNAPSHOT, SNAP_REFUSED, st->snapshot_refused);
}

/*! \brief A member's watcher logs as this zone's module, naming the member. */
static void member_log(void *ctx, int priority, const char *msg)
{
	fed_watch_t *fw = ctx;
	knotd_mod_log(fw->mod, priority, "member %.*s: %s", fw->name[0], fw->name + 1, msg);
}

/*! \brief A member's counters: one slot of each member gauge. */
static void member_stats(void *ctx, const k8s_watcher_stats_t *st)
{
	fed_watch_t *fw = ctx;
	uint64_t errors = 0;
	for (uint32_t i = 0; i < K8S_APIERR_COUNT; i++) {
		errors += st->api_errors[i];
	}
	knotd_mod_stats_store(fw->mod, 0, CTR_MEMBER_READY, fw->idx, (st->ready & K8S_READY_CLUSTER) != 0);
	knotd_mod_stats_store(fw->mod, 0, CTR_MEMBER_CONNECTED, fw->idx, st->connected);
	knotd_mod_stats_store(fw->mod, 0, CTR_MEMBER_API_ERRORS, fw->idx, errors);
}

static int add_stats(knotd_mod_t *mod)
{
	int ret = KNOT_EOK;
	ret |= knotd_mod_stats_add(mod, "queries", QUERY_COUNT, query_str);
	ret |= knotd_mod_stats_add(mod, "objects", K8S_SRC_COUNT, source_str);
	ret |= knotd_mod_stats_add(mod, "services", K8S_ZONE_COUNT, zone_str);
	ret |= knotd_mod_stats_add(mod, "records", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "table-bytes", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "records-capped", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "ready", K8S_ZONE_COUNT, zone_str);
	ret |= knotd_mod_stats_add(mod, "connected", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "resyncs", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "watch-restarts", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "api-errors", K8S_APIERR_COUNT, apierr_str);
	ret |= knotd_mod_stats_add(mod, "last-event-age", 1, NULL);
	ret |= knotd_mod_stats_add(mod, "programming-latency", K8S_LATENCY_BUCKETS, latency_str);
	ret |= knotd_mod_stats_add(mod, "autopath", K8S_AUTOPATH_COUNT, autopath_str);
	ret |= knotd_mod_stats_add(mod, "snapshot", SNAP_COUNT, snapshot_str);
	return (ret == KNOT_EOK) ? KNOT_EOK : KNOT_ENOMEM;
}

/*! \brief The member gauges of a Federated-DNS zone, indexed in federation-member order. */
static int add_member_stats(knotd_mod_t *mod, size_t count)
{
	int ret = KNOT_EOK;
	ret |= knotd_mod_stats_add(mod, "member-ready", count, NULL);
	ret |= knotd_mod_stats_add(mod, "member-connected", count, NULL);
	ret |= knotd_mod_stats_add(mod, "member-api-errors", count, NULL);
	return (ret == KNOT_EOK) ? KNOT_EOK : KNOT_ENOMEM;
}

static knotd_in_state_t count(knotd_mod_t *mod, knotd_qdata_t *qdata, uint32_t outcome,
                              knotd_in_state_t state)
{
	knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_QUERIES, outcome, 1);
	return state;
}

/*! \brief Turns an answer's outcome into knotd's state, rcode and counters. */
static knotd_in_state_t outcome(knotd_mod_t *mod, knotd_qdata_t *qdata, k8s_answer_t res,
                                knotd_in_state_t state)
{
	switch (res) {
	case K8S_ANSWER_HIT:
		return count(mod, qdata, QUERY_ANSWER, KNOTD_IN_STATE_HIT);
	case K8S_ANSWER_HIT_NXDOMAIN:
		qdata->rcode = KNOT_RCODE_NXDOMAIN;
		return count(mod, qdata, QUERY_ANSWER, KNOTD_IN_STATE_HIT);
	case K8S_ANSWER_NODATA:
		return count(mod, qdata, QUERY_NODATA, KNOTD_IN_STATE_NODATA);
	case K8S_ANSWER_NXDOMAIN:
		return count(mod, qdata, QUERY_NXDOMAIN, KNOTD_IN_STATE_MISS);
	case K8S_ANSWER_TRUNC:
		return count(mod, qdata, QUERY_TRUNCATED, KNOTD_IN_STATE_TRUNC);
	case K8S_ANSWER_NOTREADY:
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		qdata->rcode_ede = KNOT_EDNS_EDE_NOT_READY;
		return count(mod, qdata, QUERY_NOT_READY, KNOTD_IN_STATE_ERROR);
	case K8S_ANSWER_SERVFAIL:
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		return count(mod, qdata, QUERY_SERVFAIL, KNOTD_IN_STATE_ERROR);
	case K8S_ANSWER_REFUSED:
		qdata->rcode = KNOT_RCODE_REFUSED;
		return count(mod, qdata, QUERY_REFUSED, KNOTD_IN_STATE_ERROR);
	default:
		return state;
	}
}


/*!
 * \brief A Federated-DNS zone: the answer from every synchronized member's table
 * (a member's predecessor after a reload, as for a cluster zone), the source
 * cluster from the query's EDNS option.
 */
static knotd_in_state_t fedserve_hook(k8s_ctx_t *ctx, knot_pkt_t *pkt, knotd_qdata_t *qdata,
                                      knotd_mod_t *mod)
{
	const uint8_t *source = NULL;
	size_t source_len = 0;
	if (!ctx->fed.external && qdata->query->opt_rr != NULL) {
		const uint8_t *opt = knot_edns_get_option(qdata->query->opt_rr,
		                                          K8S_EDNS_SOURCE_CLUSTER, NULL);
		if (opt != NULL) {
			source = knot_edns_opt_get_data((uint8_t *)opt);
			source_len = knot_edns_opt_get_length((uint8_t *)opt);
		}
	}
	const k8s_table_t *tables[K8S_FED_MAX_MEMBERS];
	urcu_memb_read_lock();
	for (size_t i = 0; i < ctx->fed.member_count; i++) {
		const k8s_watcher_t *w = k8s_watcher_serving(ctx->fed_watch[i].watcher, K8S_READY_CLUSTER);
		const k8s_table_t *t = k8s_watcher_table(w);
		tables[i] = (k8s_table_ready(t) & K8S_READY_CLUSTER) ? t : NULL;
	}
	k8s_answer_t res = k8s_fedserve_answer(&ctx->fed, tables, qdata->name,
	                                       knot_pkt_qtype(qdata->query), source, source_len,
	                                       pkt, qdata->mm);
	urcu_memb_read_unlock();
	return outcome(mod, qdata, res, KNOTD_IN_STATE_MISS);
}

static knotd_in_state_t k8s_answer_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	assert(pkt && qdata && mod);
	k8s_answer_forget();

	// Only where the zone file has no answer.
	if (state != KNOTD_IN_STATE_MISS) {
		return state;
	}

	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	if (ctx->fed.member_count > 0) {
		return fedserve_hook(ctx, pkt, qdata, mod);
	}
	urcu_memb_read_lock();
	// After a reload that changed the watch settings, the old watcher serves until the new one is ready.
	const k8s_watcher_t *w = k8s_watcher_serving(ctx->watcher, ctx->ready_bits);
	const k8s_answer_conf_t *conf = &ctx->answer;
	k8s_answer_conf_t handover;
	if (w != ctx->watcher) {
		handover = ctx->answer;
		handover.upstream = k8s_watcher_upstream(w);
		conf = &handover;
	}
	const k8s_table_t *table = k8s_watcher_table(w);
	uint16_t qtype = knot_pkt_qtype(qdata->query);
	k8s_autopath_outcome_t walked = K8S_AUTOPATH_NONE;
	k8s_answer_t res;
	if (conf->role != K8S_ROLE_AUTOPATH) {
		res = k8s_answer(conf, table, qdata->name, qtype, qdata->query, pkt, qdata->mm);
		// Only a name that does not exist may be a step of a pod's search list.
		if (res == K8S_ANSWER_NXDOMAIN && conf->autopath) {
			res = k8s_autopath(conf, table, qdata->name, qtype, qdata->query,
			                   knotd_qdata_remote_addr(qdata), pkt, qdata->mm, &walked);
		}
	} else {
		res = k8s_autopath(conf, table, qdata->name, qtype, qdata->query, NULL, pkt,
		                   qdata->mm, &walked);
	}
	urcu_memb_read_unlock();

	if (walked != K8S_AUTOPATH_NONE) {
		knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_AUTOPATH, 0, 1);
		knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_AUTOPATH, walked, 1);
	}
	return outcome(mod, qdata, res, state);
}

static knotd_in_state_t k8s_additional_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                            knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	// Only an SRV answer has targets to add: every other query leaves at once.
	uint16_t qtype = knot_pkt_qtype(qdata->query);
	if (state == KNOTD_IN_STATE_HIT &&
	    (qtype == KNOT_RRTYPE_SRV || qtype == KNOT_RRTYPE_ANY)) {
		k8s_ctx_t *ctx = knotd_mod_ctx(mod);
		urcu_memb_read_lock();
		k8s_answer_additional(&ctx->answer, pkt, pkt, qdata->mm);
		urcu_memb_read_unlock();
	}
	return state;
}

/*!
 * \brief The ADDITIONAL hook of a zone whose list has mod-onlinesign after mod-k8s:
 * knotd 3.2's mod-onlinesign takes every additional record of a DO answer for glue of
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

static knot_dname_t *dname_lower(const knot_dname_t *name)
{
	knot_dname_t *copy = knot_dname_copy(name, NULL);
	if (copy != NULL) {
		knot_dname_to_lower(copy);
	}
	return copy;
}

static bool under(const knot_dname_t *name, const char *apex)
{
	knot_dname_storage_t wire;
	return knot_dname_from_str(wire, apex, sizeof(wire)) != NULL &&
	       knot_dname_in_bailiwick(name, wire) >= 0;
}

static void ctx_free(k8s_ctx_t *ctx)
{
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

static knotd_conf_t conf_get(check_ctx_t *check, const yp_name_t *item)
{
	return (check->args != NULL) ? knotd_conf_check_item(check->args, item)
	                             : knotd_conf_mod(check->mod, item);
}

/*! \brief Refuses the settings: the reason goes to knotc in a check, to the log in load. */
__attribute__((format(printf, 2, 3)))
static int conf_refuse(check_ctx_t *check, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	if (check->args != NULL) {
		vsnprintf(check_msg, sizeof(check_msg), fmt, args);
		check->args->err_str = check_msg;
	} else {
		knotd_mod_vlog(check->mod, LOG_ERR, fmt, args);
	}
	va_end(args);
	return KNOT_EINVAL;
}

/*!
 * \brief Reads the zone's answer settings. Its role comes from its name: a
 * check has no zone and reads them as a cluster zone's.
 */
static int answer_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	ctx->domains[K8S_ZONE_CLUSTER] = dname_lower(conf_get(check, MOD_CLUSTER_DOMAIN).single.dname);
	ctx->domains[K8S_ZONE_CLUSTERSET] = dname_lower(conf_get(check, MOD_CLUSTERSET_DOMAIN).single.dname);
	if (check->mod != NULL) {
		ctx->zone = dname_lower(knotd_mod_zone(check->mod));
	}
	if ((check->mod != NULL && ctx->zone == NULL) || ctx->domains[0] == NULL ||
	    ctx->domains[1] == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_answer_conf_t *answer = &ctx->answer;
	answer->zone = ctx->zone;
	if (ctx->zone == NULL) {
		answer->role = K8S_ROLE_CLUSTER;
	} else if (under(ctx->zone, "in-addr.arpa.") || under(ctx->zone, "ip6.arpa.")) {
		answer->role = K8S_ROLE_REVERSE;
	} else if (knot_dname_is_equal(ctx->zone, conf_get(check, MOD_AUTOPATH_DOMAIN).single.dname)) {
		answer->role = K8S_ROLE_AUTOPATH;
	} else if (knot_dname_is_equal(ctx->zone, ctx->domains[K8S_ZONE_CLUSTERSET])) {
		answer->role = K8S_ROLE_CLUSTERSET;
	} else {
		answer->role = K8S_ROLE_CLUSTER;
	}
	ctx->ready_bits = (answer->role == K8S_ROLE_CLUSTERSET) ? K8S_READY_CLUSTERSET
	                                                        : K8S_READY_CLUSTER;
	answer->domains[K8S_ZONE_CLUSTER] = ctx->domains[K8S_ZONE_CLUSTER];
	answer->domains[K8S_ZONE_CLUSTERSET] = ctx->domains[K8S_ZONE_CLUSTERSET];
	answer->ttl = conf_get(check, MOD_TTL).single.integer;
	answer->autopath_option = conf_get(check, MOD_AUTOPATH_OPTION).single.integer;
	answer->pods = conf_get(check, MOD_PODS).single.option;
	answer->ignore_empty = conf_get(check, MOD_IGNORE_EMPTY).single.boolean;
	answer->autopath = conf_get(check, MOD_AUTOPATH).single.boolean;
	const yp_name_t *version = (answer->role == K8S_ROLE_CLUSTERSET) ? MOD_CS_DNS_VERSION
	                                                                : MOD_DNS_VERSION;
	return k8s_answer_txt(&answer->version, conf_get(check, version).single.string);
}

/*! \brief Reads the federations (each name once) and the static topology. */
static int federations_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t feds = conf_get(check, MOD_FEDERATIONS);
	int ret = KNOT_EOK;
	if (feds.count > 0) {
		ctx->federations = calloc(feds.count, sizeof(*ctx->federations));
		ret = (ctx->federations != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}
	for (size_t i = 0; ret == KNOT_EOK && i < feds.count; i++) {
		k8s_federation_t *fed = &ctx->federations[i];
		char msg[512];
		if (federation_parse(feds.multi[i].string, fed, msg, sizeof(msg)) != KNOT_EOK) {
			ret = conf_refuse(check, "%s", msg);
		}
		for (size_t j = 0; ret == KNOT_EOK && j < i; j++) {
			if (memcmp(fed->name, ctx->federations[j].name, sizeof(fed->name)) == 0) {
				ret = conf_refuse(check, "federation '%.*s' given twice",
				                  fed->name[0], fed->name + 1);
			}
		}
	}
	if (ret == KNOT_EOK && feds.count > 0) {
		ctx->answer.federations = ctx->federations;
		ctx->answer.federation_count = feds.count;
	}
	knotd_conf_free(&feds);
	if (ret != KNOT_EOK) {
		return ret;
	}

	knotd_conf_t zone = conf_get(check, MOD_FED_ZONE);
	knotd_conf_t region = conf_get(check, MOD_FED_REGION);
	if ((zone.count > 0) != (region.count > 0)) {
		return conf_refuse(check, "federation-zone and federation-region must be set together");
	}
	if (zone.count > 0) {
		if (!k8s_topology_valid(zone.single.string, region.single.string)) {
			return conf_refuse(check, "federation-zone and federation-region must be DNS names");
		}
		ctx->topology = k8s_topology_new(zone.single.string, region.single.string);
		if (ctx->topology == NULL) {
			return KNOT_ENOMEM;
		}
		ctx->answer.topology = ctx->topology;
	}
	return KNOT_EOK;
}

/*! \brief Reads the members (each name once); a check also reads their kubeconfigs. */
static int members_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t members = conf_get(check, MOD_FED_MEMBER);
	int ret = KNOT_EOK;
	if (members.count == 0) {
		ret = conf_refuse(check, "federation-name needs at least one federation-member");
	} else if (members.count > K8S_FED_MAX_MEMBERS) {
		ret = conf_refuse(check, "federation-member holds at most %d member clusters",
		                  K8S_FED_MAX_MEMBERS);
	} else {
		ctx->members = calloc(members.count, sizeof(*ctx->members));
		ret = (ctx->members != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}
	for (size_t i = 0; ret == KNOT_EOK && i < members.count; i++) {
		k8s_fedmember_t *m = &ctx->members[i];
		char err[256];
		ret = k8s_fedmember_parse(members.multi[i].string, m, err, sizeof(err));
		if (ret == KNOT_EINVAL) {
			ret = conf_refuse(check, "invalid federation-member '%s' (%s)",
			                  members.multi[i].string, err);
		}
		if (ret != KNOT_EOK) {
			break;
		}
		ctx->member_count++;
		for (size_t j = 0; ret == KNOT_EOK && j < i; j++) {
			if (memcmp(m->name, ctx->members[j].name, sizeof(m->name)) == 0) {
				ret = conf_refuse(check, "federation-member '%.*s' given twice",
				                  m->name[0], m->name + 1);
			}
		}
		// Only a check reads the kubeconfig: in load, the member's watcher retries until it is usable.
		if (ret == KNOT_EOK && check->args != NULL) {
			k8s_apiconf_t api = { 0 };
			int loaded = k8s_kubeconfig_load(m->kubeconfig, m->context, &api, err, sizeof(err));
			k8s_apiconf_free(&api);
			if (loaded != KNOT_EOK) {
				ret = conf_refuse(check, "invalid kubeconfig of federation-member '%.*s' (%s)",
				                  m->name[0], m->name + 1,
				                  err[0] != '\0' ? err : knot_strerror(loaded));
			}
		}
	}
	knotd_conf_free(&members);
	return ret;
}

/*!
 * \brief Reads the Federated-DNS role: the federation, its members and what
 * this zone answers (federation-domain: <fed>.svc.<zone> with cluster IPs;
 * a zone at or above federation-external: that domain, load-balancer addresses only).
 */
static int fedserve_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t name = conf_get(check, MOD_FED_NAME);
	if (name.count == 0) {
		knotd_conf_t members = conf_get(check, MOD_FED_MEMBER);
		size_t count = members.count;
		knotd_conf_free(&members);
		return (count > 0) ? conf_refuse(check, "federation-member needs federation-name")
		                   : KNOT_EOK;
	}
	int ret = members_read(check, ctx);
	if (ret != KNOT_EOK || check->mod == NULL) {
		return ret;
	}

	knot_dname_t *domain = dname_lower(conf_get(check, MOD_FED_DOMAIN).single.dname);
	knotd_conf_t ext = conf_get(check, MOD_FED_EXTERNAL);
	knot_dname_t *external = (ext.count > 0) ? dname_lower(ext.single.dname) : NULL;
	const char *fed = name.single.string;
	size_t fed_len = strlen(fed);
	if (domain == NULL || (ext.count > 0 && external == NULL)) {
		ret = KNOT_ENOMEM;
	} else if (knot_dname_is_equal(ctx->zone, domain)) {
		size_t zone_size = knot_dname_size(ctx->zone);
		size_t size = 1 + fed_len + 4 + zone_size;
		ctx->fed_suffix = (size <= KNOT_DNAME_MAXLEN) ? malloc(size) : NULL;
		if (size > KNOT_DNAME_MAXLEN) {
			ret = conf_refuse(check, "%s.svc.<zone> is longer than a DNS name", fed);
		} else if (ctx->fed_suffix == NULL) {
			ret = KNOT_ENOMEM;
		} else {
			ctx->fed_suffix[0] = fed_len;
			memcpy(ctx->fed_suffix + 1, fed, fed_len);
			memcpy(ctx->fed_suffix + 1 + fed_len, "\x03svc", 4);
			memcpy(ctx->fed_suffix + 1 + fed_len + 4, ctx->zone, zone_size);
		}
	} else if (external != NULL && knot_dname_in_bailiwick(external, ctx->zone) >= 0) {
		ctx->fed_suffix = external;
		external = NULL;
		ctx->fed.external = true;
	} else {
		ret = conf_refuse(check, "a zone of federation '%s' must be federation-domain or hold "
		                  "federation-external", fed);
	}
	free(domain);
	free(external);
	if (ret == KNOT_EOK) {
		ctx->fed.members = ctx->members;
		ctx->fed.suffix = ctx->fed_suffix;
		ctx->fed.ttl = ctx->answer.ttl;
		ctx->fed.member_count = ctx->member_count;
	}
	return ret;
}

/*! \brief Releases the member watchers taken so far (none is attached yet). */
static void fed_release(k8s_ctx_t *ctx)
{
	for (size_t i = 0; ctx->fed_watch != NULL && i < ctx->member_count; i++) {
		if (ctx->fed_watch[i].watcher != NULL) {
			k8s_watcher_release(ctx->fed_watch[i].watcher);
			ctx->fed_watch[i].watcher = NULL;
		}
	}
}

/*!
 * \brief Takes one watcher per member: the zone's watch settings with the member's
 * kubeconfig and context, so members on the same API share one.
 */
static int fed_acquire(k8s_ctx_t *ctx, const k8s_watcher_conf_t *base)
{
	ctx->fed_watch = calloc(ctx->member_count, sizeof(*ctx->fed_watch));
	if (ctx->fed_watch == NULL) {
		return KNOT_ENOMEM;
	}
	const k8s_wconf_field_t *kubeconfig = NULL;
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		if (f->item != NULL && strcmp(f->item, K8S_OPT_KUBECONFIG) == 0) {
			kubeconfig = f;
		}
	}
	size_t zone_size = knot_dname_size(ctx->zone);
	for (size_t i = 0; i < ctx->member_count; i++) {
		const k8s_fedmember_t *m = &ctx->members[i];
		fed_watch_t *fw = &ctx->fed_watch[i];
		fw->mod = ctx->mod;
		fw->idx = i;
		fw->name = m->name;
		// The hand-over key: longer than a DNS name it is only not found again.
		fw->key = malloc(1 + m->name[0] + zone_size);
		if (fw->key == NULL) {
			fed_release(ctx);
			return KNOT_ENOMEM;
		}
		memcpy(fw->key, m->name, 1 + m->name[0]);
		memcpy(fw->key + 1 + m->name[0], ctx->zone, zone_size);

		k8s_watcher_conf_t wconf;
		int ret = k8s_watcher_conf_copy(&wconf, base);
		if (ret == KNOT_EOK) {
			ret = k8s_watcher_conf_set_str(&wconf, kubeconfig, m->kubeconfig);
		}
		if (ret == KNOT_EOK) {
			free((char *)wconf.context);
			wconf.context = (m->context != NULL) ? strdup(m->context) : NULL;
			ret = (m->context == NULL || wconf.context != NULL) ? KNOT_EOK : KNOT_ENOMEM;
		}
		char err[256] = "";
		if (ret == KNOT_EOK) {
			fw->watcher = k8s_watcher_acquire(&wconf, err, sizeof(err));
		}
		k8s_watcher_conf_free(&wconf);
		if (fw->watcher == NULL) {
			knotd_mod_log(ctx->mod, LOG_ERR, "member %.*s: failed to start the watcher (%s)",
			              m->name[0], m->name + 1, err[0] != '\0' ? err : knot_strerror(ret));
			fed_release(ctx);
			return KNOT_ENOMEM;
		}
	}
	return KNOT_EOK;
}

/*! \brief Attaches the zone to every member's watcher; cannot fail. */
static void fed_attach(k8s_ctx_t *ctx)
{
	knotd_mod_ctx_set(ctx->mod, ctx);
	for (size_t i = 0; i < ctx->member_count; i++) {
		fed_watch_t *fw = &ctx->fed_watch[i];
		fw->client.log = member_log;
		fw->client.stats = member_stats;
		fw->client.ctx = fw;
		fw->client.needs = 0;
		fw->client.zone = fw->key;
		k8s_watcher_attach(fw->watcher, &fw->client);
	}
}

/*! \brief Reads the host's search domains that end every autopath walk. */
static int host_search_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t hosts = conf_get(check, MOD_AUTOPATH_HOST);
	int ret = KNOT_EOK;
	if (hosts.count > K8S_AUTOPATH_MAX_HOST) {
		ret = conf_refuse(check, "autopath-host-search holds at most %d domains "
		                  "(a pod's search list holds 32)", K8S_AUTOPATH_MAX_HOST);
	} else if (hosts.count > 0) {
		ctx->host_search = calloc(hosts.count, sizeof(*ctx->host_search));
		ret = (ctx->host_search != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}
	for (size_t i = 0; ret == KNOT_EOK && i < hosts.count; i++) {
		ctx->host_search[i] = dname_lower(hosts.multi[i].dname);
		if (ctx->host_search[i] == NULL) {
			ret = KNOT_ENOMEM;
		} else {
			ctx->host_search_count++;
		}
	}
	knotd_conf_free(&hosts);
	ctx->answer.host_search = (const knot_dname_t *const *)ctx->host_search;
	ctx->answer.host_search_count = ctx->host_search_count;
	return ret;
}

/*! \brief True if the zone answers federation names from the nodes' topology. */
static bool needs_nodes(const k8s_answer_conf_t *answer)
{
	return (answer->role == K8S_ROLE_CLUSTER || answer->role == K8S_ROLE_AUTOPATH) &&
	       answer->federation_count > 0 && answer->topology == NULL;
}

/*!
 * \brief The node whose labels give the federation topology: option node-name,
 * else NODE_NAME from the environment (the downward API sets it in a pod).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
static int node_name_read(knotd_mod_t *mod, k8s_watcher_conf_t *conf)
{
	const char *name = getenv("NODE_NAME");
	knotd_conf_t option = knotd_conf_mod(mod, K8S_OPT_NODE_NAME);
	if (option.count > 0) {
		name = option.single.string;
	} else if (name == NULL || name[0] == '\0') {
		return KNOT_EOK;
	} else if (!k8s_federation_node_valid(name)) {
		knotd_mod_log(mod, LOG_WARNING, "ignoring NODE_NAME from the environment (not a node name)");
		return KNOT_EOK;
	}
	char *copy = strdup(name);
	if (copy == NULL) {
		return KNOT_ENOMEM;
	}
	conf->node_name = copy;
	return KNOT_EOK;
}

/*!
 * \brief The snapshot file, with option snapshot on and the zone's storage writable:
 * named by the API server settings, so that watchers of other servers keep theirs.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
static int snapshot_path_read(knotd_mod_t *mod, k8s_watcher_conf_t *conf)
{
	if (!knotd_conf_mod(mod, MOD_SNAPSHOT).single.boolean) {
		return KNOT_EOK;
	}
	const char *dir = knotd_conf_zone(mod, ZONE_STORAGE, knotd_mod_zone(mod)).single.string;
	char path[4096];
	if (dir == NULL || dir[0] != '/' || access(dir, W_OK) != 0) {
		knotd_mod_log(mod, LOG_NOTICE, "no snapshot for a warm restart (storage %s is %s)",
		              dir != NULL ? dir : "", (dir != NULL && dir[0] == '/') ? "not writable"
		                                                                     : "not an absolute path");
		return KNOT_EOK;
	}
	if (snprintf(path, sizeof(path), "%s/mod-k8s-%016llx.snapshot", dir,
	             (unsigned long long)k8s_watcher_conf_hash(conf, K8S_WCONF_SERVER)) >= (int)sizeof(path)) {
		knotd_mod_log(mod, LOG_NOTICE, "no snapshot for a warm restart (storage path too long)");
		return KNOT_EOK;
	}
	conf->snapshot = strdup(path);
	return (conf->snapshot != NULL) ? KNOT_EOK : KNOT_ENOMEM;
}

/*! \brief Reads one option into the watch settings as its row says. */
static int watch_field_read(check_ctx_t *check, const k8s_wconf_field_t *f,
                            k8s_watcher_conf_t *conf)
{
	knotd_conf_t val = conf_get(check, f->item);
	int ret = KNOT_EOK;
	switch (f->kind) {
	case K8S_WCONF_STR:
		if (val.count > 0 || val.single.string != NULL) {
			ret = k8s_watcher_conf_set_str(conf, f, val.single.string);
		}
		break;
	case K8S_WCONF_STRLIST:
		for (size_t i = 0; ret == KNOT_EOK && i < val.count; i++) {
			ret = k8s_watcher_conf_add_str(conf, f, val.multi[i].string);
		}
		knotd_conf_free(&val);
		break;
	case K8S_WCONF_BOOL:
		k8s_watcher_conf_set_bool(conf, f, val.single.boolean);
		break;
	case K8S_WCONF_UINT:
		k8s_watcher_conf_set_uint(conf, f, val.single.integer);
		break;
	case K8S_WCONF_ADDR:
		if (val.count > 0) {
			ret = k8s_watcher_conf_set_addr(conf, f, &val.single.addr);
		}
		break;
	default:
		break;
	}
	return ret;
}

/*!
 * \brief Reads the watch settings, a row of k8s_watcher_conf_fields at a time,
 * and checks what involves several of them.
 *
 * \retval KNOT_EOK, KNOT_EINVAL, KNOT_ENOMEM (nothing is left to free)
 */
static int watch_conf_read(check_ctx_t *check, const k8s_answer_conf_t *answer,
                           k8s_watcher_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	int ret = KNOT_EOK;
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields;
	     ret == KNOT_EOK && f->kind != K8S_WCONF_END; f++) {
		if (f->item != NULL) {
			ret = watch_field_read(check, f, conf);
		}
	}
	// Only a zone that reads nodes has a node: others keep sharing their watcher.
	if (ret == KNOT_EOK && check->mod != NULL && needs_nodes(answer)) {
		ret = node_name_read(check->mod, conf);
	}
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = snapshot_path_read(check->mod, conf);
	}
	if (ret == KNOT_EOK && conf->namespace_count > 0 && conf->namespace_labels != NULL) {
		ret = conf_refuse(check, "namespaces and namespace-labels are mutually exclusive");
	}
	// Only a check reads the kubeconfig: in load, the watcher retries until it is usable.
	if (ret == KNOT_EOK && check->args != NULL && conf->kubeconfig != NULL) {
		k8s_apiconf_t api = { 0 };
		char err[384] = "";
		int loaded = k8s_kubeconfig_load(conf->kubeconfig, conf->context, &api, err, sizeof(err));
		k8s_apiconf_free(&api);
		if (loaded != KNOT_EOK) {
			ret = conf_refuse(check, "invalid kubeconfig (%s)",
			                  err[0] != '\0' ? err : knot_strerror(loaded));
		}
	}
	if (ret != KNOT_EOK) {
		k8s_watcher_conf_free(conf);
	}
	return ret;
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

	answer->upstream = k8s_watcher_upstream(ctx->watcher);

	// Store the context before the watcher may call back into this zone.
	knotd_mod_ctx_set(mod, ctx);
	ctx->client.log = mod_log;
	ctx->client.stats = mod_stats;
	ctx->client.ctx = mod;
	ctx->client.needs = (answer->role == K8S_ROLE_CLUSTERSET ? K8S_NEED_CLUSTERSET : 0) |
	                    (answer->pods == K8S_PODS_VERIFIED ? K8S_NEED_PODS : 0) |
	                    (answer->autopath && answer->role == K8S_ROLE_CLUSTER ? K8S_NEED_PODS : 0) |
	                    (needs_nodes(answer) ? K8S_NEED_NODES : 0);
	ctx->client.zone = ctx->zone;
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
static int hooks_add(knotd_mod_t *mod, const k8s_answer_conf_t *answer)
{
	int ret = knotd_mod_in_hook(mod, KNOTD_STAGE_ANSWER, k8s_answer_hook);
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

	k8s_watcher_conf_t wconf = { 0 };
	int ret = answer_read(check, ctx);
	if (ret == KNOT_EOK) {
		ret = federations_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = host_search_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = fedserve_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = watch_conf_read(check, &ctx->answer, &wconf);
	}
	// Everything that can fail comes before the watcher holds this zone: knotd frees
	// the module after a failed load without calling unload.
	bool federated = ctx->fed.member_count > 0;
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = add_stats(check->mod);
	}
	if (ret == KNOT_EOK && check->mod != NULL && federated) {
		ret = add_member_stats(check->mod, ctx->member_count);
	}
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = hooks_add(check->mod, &ctx->answer);
	}
	// A Federated-DNS zone watches its members only, not a cluster of its own.
	if (ret == KNOT_EOK && check->mod != NULL && federated) {
		ret = fed_acquire(ctx, &wconf);
		if (ret == KNOT_EOK) {
			fed_attach(ctx);
		}
	} else if (ret == KNOT_EOK && check->mod != NULL) {
		ret = watcher_start(ctx, &wconf);
	}
	k8s_watcher_conf_free(&wconf);
	if (ret != KNOT_EOK || check->mod == NULL) {
		ctx_free(ctx);
	}
	return ret;
}

static int k8s_load(knotd_mod_t *mod)
{
	check_ctx_t check = { .mod = mod };
	return load_module(&check);
}

static void k8s_unload(knotd_mod_t *mod)
{
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	if (ctx == NULL) {
		return;
	}
	// No log line here: knotd has freed this zone's name already (see ARCHITECTURE.md).
	for (size_t i = 0; i < ctx->fed.member_count; i++) {
		k8s_watcher_detach(ctx->fed_watch[i].watcher, &ctx->fed_watch[i].client);
	}
	fed_release(ctx);
	if (ctx->watcher != NULL) {
		k8s_watcher_detach(ctx->watcher, &ctx->client);
		k8s_watcher_release(ctx->watcher);
	}
	ctx_free(ctx);
}

KNOTD_MOD_API(k8s, KNOTD_MOD_FLAG_SCOPE_ZONE | KNOTD_MOD_FLAG_OPT_CONF,
              k8s_load, k8s_unload, k8s_conf, k8s_conf_check);
