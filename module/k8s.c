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
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include <knot/module.h>
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
#include "kubeconfig.h"
#include "topology.h"
#include "watcher.h"

#define MOD_KUBECONFIG		"\x0a""kubeconfig"
#define MOD_CONTEXT		"\x07""context"
#define MOD_SA_DIR		"\x12""serviceaccount-dir"
#define MOD_TTL			"\x03""ttl"
#define MOD_DNS_VERSION		"\x0b""dns-version"
#define MOD_CS_DNS_VERSION	"\x16""clusterset-dns-version"
#define MOD_CLUSTER_DOMAIN	"\x0e""cluster-domain"
#define MOD_CLUSTERSET_DOMAIN	"\x11""clusterset-domain"
#define MOD_CLUSTER_ID		"\x0a""cluster-id"
#define MOD_NAMESPACES		"\x0a""namespaces"
#define MOD_LABELS		"\x06""labels"
#define MOD_NS_LABELS		"\x10""namespace-labels"
#define MOD_EP_POD_NAMES	"\x12""endpoint-pod-names"
#define MOD_NO_ENDPOINTS	"\x0c""no-endpoints"
#define MOD_IGNORE_EMPTY	"\x14""ignore-empty-service"
#define MOD_PODS		"\x04""pods"
#define MOD_UPSTREAM		"\x08""upstream"
#define MOD_STALL		"\x13""watch-stall-timeout"
#define MOD_CRD_RETRY		"\x12""crd-retry-interval"
#define MOD_AUTOPATH_DOMAIN	"\x0f""autopath-domain"
#define MOD_AUTOPATH_OPTION	"\x14""autopath-edns-option"
#define MOD_FEDERATIONS		"\x0b""federations"
#define MOD_FED_ZONE		"\x0f""federation-zone"
#define MOD_FED_REGION		"\x11""federation-region"
#define MOD_NODE_NAME		"\x09""node-name"

static const knot_lookup_t pods_modes[] = {
	{ K8S_PODS_DISABLED, "disabled" },
	{ K8S_PODS_INSECURE, "insecure" },
	{ K8S_PODS_VERIFIED, "verified" },
	{ 0, NULL }
};

static const yp_item_t k8s_conf[] = {
	{ MOD_KUBECONFIG,        YP_TSTR,   YP_VNONE },
	{ MOD_CONTEXT,           YP_TSTR,   YP_VNONE },
	{ MOD_SA_DIR,            YP_TSTR,   YP_VSTR = { K8S_SA_DIR_DEFAULT } },
	{ MOD_TTL,               YP_TINT,   YP_VINT = { 0, 3600, 5, YP_STIME } },
	{ MOD_DNS_VERSION,       YP_TSTR,   YP_VSTR = { "1.1.0" } },
	{ MOD_CS_DNS_VERSION,    YP_TSTR,   YP_VSTR = { "1.1.0" } },
	{ MOD_CLUSTER_DOMAIN,    YP_TDNAME, YP_VDNAME = { 15, (const uint8_t *)"\x07""cluster""\x05""local" } },
	{ MOD_CLUSTERSET_DOMAIN, YP_TDNAME, YP_VDNAME = { 18, (const uint8_t *)"\x0a""clusterset""\x05""local" } },
	{ MOD_CLUSTER_ID,        YP_TSTR,   YP_VNONE },
	{ MOD_NAMESPACES,        YP_TSTR,   YP_VNONE, YP_FMULTI },
	{ MOD_LABELS,            YP_TSTR,   YP_VNONE },
	{ MOD_NS_LABELS,         YP_TSTR,   YP_VNONE },
	{ MOD_EP_POD_NAMES,      YP_TBOOL,  YP_VNONE },
	{ MOD_NO_ENDPOINTS,      YP_TBOOL,  YP_VNONE },
	{ MOD_IGNORE_EMPTY,      YP_TBOOL,  YP_VNONE },
	{ MOD_PODS,              YP_TOPT,   YP_VOPT = { pods_modes, K8S_PODS_INSECURE } },
	{ MOD_UPSTREAM,          YP_TADDR,  YP_VADDR = { 53 } },
	{ MOD_STALL,             YP_TINT,   YP_VINT = { 5, 3600, 90, YP_STIME } },
	{ MOD_CRD_RETRY,         YP_TINT,   YP_VINT = { 1, 86400, 60, YP_STIME } },
	{ MOD_AUTOPATH_DOMAIN,   YP_TDNAME, YP_VDNAME = { 11, (const uint8_t *)"\x02""ap""\x03""k8s""\x02""io" } },
	{ MOD_AUTOPATH_OPTION,   YP_TINT,   YP_VINT = { 0, 65535, 65001 } },
	{ MOD_FEDERATIONS,       YP_TSTR,   YP_VNONE, YP_FMULTI },
	{ MOD_FED_ZONE,          YP_TSTR,   YP_VNONE },
	{ MOD_FED_REGION,        YP_TSTR,   YP_VNONE },
	{ MOD_NODE_NAME,         YP_TSTR,   YP_VNONE },
	{ NULL }
};

/*! \brief True if \a text is one or two DNS labels (a cluster id). */
static bool cluster_id_valid(const char *text)
{
	size_t labels = 1, len = 0;
	for (const char *c = text; ; c++) {
		if (*c == '.' || *c == '\0') {
			if (len == 0 || len > 63) {
				return false;
			}
			if (*c == '\0') {
				break;
			}
			labels++;
			len = 0;
		} else if ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-') {
			len++;
		} else {
			return false;
		}
	}
	return labels <= 2;
}

/*! \brief A label selector as the API accepts them: no spaces or quotes to smuggle. */
static bool selector_valid(const char *text)
{
	if (*text == '\0' || strlen(text) > 512) {
		return false;
	}
	for (const char *c = text; *c != '\0'; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("-_./=!,() ", *c) != NULL)) {
			return false;
		}
	}
	return true;
}

/*! \brief Checks federations (NAME=DOMAIN, each name once), the static topology and node-name. */
static int federations_check(knotd_conf_check_args_t *args, char *msg, size_t msglen)
{
	knotd_conf_t feds = knotd_conf_check_item(args, MOD_FEDERATIONS);
	int ret = KNOT_EOK;
	for (size_t i = 0; ret == KNOT_EOK && i < feds.count; i++) {
		k8s_federation_t fed, earlier;
		char err[128];
		if (k8s_federation_parse(feds.multi[i].string, &fed, err, sizeof(err)) != KNOT_EOK) {
			snprintf(msg, msglen, "invalid federation '%s' (%s)", feds.multi[i].string, err);
			ret = KNOT_EINVAL;
		}
		for (size_t j = 0; ret == KNOT_EOK && j < i; j++) {
			if (k8s_federation_parse(feds.multi[j].string, &earlier, err, sizeof(err)) == KNOT_EOK &&
			    memcmp(fed.name, earlier.name, sizeof(fed.name)) == 0) {
				snprintf(msg, msglen, "federation '%.*s' given twice", fed.name[0], fed.name + 1);
				ret = KNOT_EINVAL;
			}
		}
	}
	knotd_conf_free(&feds);
	if (ret != KNOT_EOK) {
		return ret;
	}

	knotd_conf_t zone = knotd_conf_check_item(args, MOD_FED_ZONE);
	knotd_conf_t region = knotd_conf_check_item(args, MOD_FED_REGION);
	if ((zone.count > 0) != (region.count > 0)) {
		snprintf(msg, msglen, "federation-zone and federation-region must be set together");
		return KNOT_EINVAL;
	}
	if (zone.count > 0) {
		k8s_topology_t *topology = k8s_topology_new(zone.single.string, region.single.string);
		if (topology == NULL) {
			snprintf(msg, msglen, "federation-zone and federation-region must be DNS names");
			return KNOT_EINVAL;
		}
		free(topology);
	}

	knotd_conf_t node = knotd_conf_check_item(args, MOD_NODE_NAME);
	if (node.count > 0 && !k8s_federation_node_valid(node.single.string)) {
		snprintf(msg, msglen, "node-name must be a node's name (a lowercase DNS name)");
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

static int k8s_conf_check(knotd_conf_check_args_t *args)
{
	// The message must outlive the call; conf checks run one at a time.
	static char msg[512];

	knotd_conf_t kubeconfig = knotd_conf_check_item(args, MOD_KUBECONFIG);
	if (kubeconfig.count > 0) {
		knotd_conf_t context = knotd_conf_check_item(args, MOD_CONTEXT);
		k8s_apiconf_t api = { 0 };
		char err[384] = "";
		int ret = k8s_kubeconfig_load(kubeconfig.single.string,
		                              context.count > 0 ? context.single.string : NULL,
		                              &api, err, sizeof(err));
		k8s_apiconf_free(&api);
		if (ret != KNOT_EOK) {
			snprintf(msg, sizeof(msg), "invalid kubeconfig (%s)",
			         err[0] != '\0' ? err : knot_strerror(ret));
			args->err_str = msg;
			return KNOT_EINVAL;
		}
	}

	knotd_conf_t namespaces = knotd_conf_check_item(args, MOD_NAMESPACES);
	knotd_conf_t ns_labels = knotd_conf_check_item(args, MOD_NS_LABELS);
	size_t ns_count = namespaces.count;
	knotd_conf_free(&namespaces);
	if (ns_count > 0 && ns_labels.count > 0) {
		args->err_str = "namespaces and namespace-labels are mutually exclusive";
		return KNOT_EINVAL;
	}

	const struct { const yp_name_t *item; const char *what; } selectors[] = {
		{ MOD_LABELS, "labels" }, { MOD_NS_LABELS, "namespace-labels" },
	};
	for (size_t i = 0; i < 2; i++) {
		knotd_conf_t sel = knotd_conf_check_item(args, selectors[i].item);
		if (sel.count > 0 && !selector_valid(sel.single.string)) {
			snprintf(msg, sizeof(msg), "invalid label selector in %s", selectors[i].what);
			args->err_str = msg;
			return KNOT_EINVAL;
		}
	}

	knotd_conf_t cluster_id = knotd_conf_check_item(args, MOD_CLUSTER_ID);
	if (cluster_id.count > 0 && !cluster_id_valid(cluster_id.single.string)) {
		args->err_str = "cluster-id must be one or two lowercase DNS labels";
		return KNOT_EINVAL;
	}

	// Knot's address type also takes a UNIX socket path; a resolver needs an IP address.
	knotd_conf_t upstream = knotd_conf_check_item(args, MOD_UPSTREAM);
	if (upstream.count > 0 && upstream.single.addr.ss_family != AF_INET &&
	    upstream.single.addr.ss_family != AF_INET6) {
		args->err_str = "upstream must be an IPv4 or IPv6 address, optionally with @port";
		return KNOT_EINVAL;
	}

	int ret = federations_check(args, msg, sizeof(msg));
	if (ret != KNOT_EOK) {
		args->err_str = msg;
		return ret;
	}

	const yp_name_t *versions[] = { MOD_DNS_VERSION, MOD_CS_DNS_VERSION };
	for (size_t i = 0; i < 2; i++) {
		knotd_conf_t version = knotd_conf_check_item(args, versions[i]);
		if (version.count > 0 && strlen(version.single.string) > 255) {
			args->err_str = "dns-version longer than 255 characters";
			return KNOT_EINVAL;
		}
	}
	return KNOT_EOK;
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
};

/*! \brief Query outcomes counted per zone. */
enum {
	QUERY_ANSWER = 0,
	QUERY_NODATA,
	QUERY_NXDOMAIN,
	QUERY_TRUNCATED,
	QUERY_NOT_READY,
	QUERY_SERVFAIL,
	QUERY_COUNT
};

static char *query_str(uint32_t idx, uint32_t count)
{
	static const char *names[QUERY_COUNT] = {
		"answer", "nodata", "nxdomain", "truncated", "not-ready", "servfail"
	};
	return strdup(idx < QUERY_COUNT ? names[idx] : "unknown");
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
	return (ret == KNOT_EOK) ? KNOT_EOK : KNOT_ENOMEM;
}

static knotd_in_state_t count(knotd_mod_t *mod, knotd_qdata_t *qdata, uint32_t outcome,
                              knotd_in_state_t state)
{
	knotd_mod_stats_incr(mod, qdata->params->thread_id, CTR_QUERIES, outcome, 1);
	return state;
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
	k8s_answer_t res = k8s_answer(conf, k8s_watcher_table(w), qdata->name,
	                              knot_pkt_qtype(qdata->query), qdata->query, pkt, qdata->mm);
	urcu_memb_read_unlock();

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
	default:
		return state;
	}
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

/*! \brief A copy of a string option in \a out, NULL if unset. \retval KNOT_EOK, KNOT_ENOMEM */
static int conf_str(knotd_mod_t *mod, const yp_name_t *item, const char **out)
{
	knotd_conf_t val = knotd_conf_mod(mod, item);
	if (val.count == 0 && val.single.string == NULL) {
		*out = NULL;
		return KNOT_EOK;
	}
	*out = strdup(val.single.string);
	return (*out != NULL) ? KNOT_EOK : KNOT_ENOMEM;
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
	free(ctx);
}

/*!
 * \brief The node whose labels give the federation topology: option node-name,
 * else NODE_NAME from the environment (the downward API sets it in a pod).
 *
 * \param out  Out: a copy of the name, or NULL for none.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
static int node_name(knotd_mod_t *mod, const char **out)
{
	*out = NULL;
	const char *name = getenv("NODE_NAME");
	knotd_conf_t option = knotd_conf_mod(mod, MOD_NODE_NAME);
	if (option.count > 0) {
		name = option.single.string;
	} else if (name == NULL || name[0] == '\0') {
		return KNOT_EOK;
	} else if (!k8s_federation_node_valid(name)) {
		knotd_mod_log(mod, LOG_WARNING, "ignoring NODE_NAME from the environment (not a node name)");
		return KNOT_EOK;
	}
	*out = strdup(name);
	return (*out != NULL) ? KNOT_EOK : KNOT_ENOMEM;
}

/*! \brief Reads the federations and the static topology into the zone's answer settings. */
static int federations_read(knotd_mod_t *mod, k8s_ctx_t *ctx)
{
	knotd_conf_t feds = knotd_conf_mod(mod, MOD_FEDERATIONS);
	if (feds.count > 0) {
		ctx->federations = calloc(feds.count, sizeof(*ctx->federations));
		if (ctx->federations == NULL) {
			knotd_conf_free(&feds);
			return KNOT_ENOMEM;
		}
		// The conf check refused what does not parse.
		for (size_t i = 0; i < feds.count; i++) {
			char err[128];
			k8s_federation_t *fed = &ctx->federations[ctx->answer.federation_count];
			if (k8s_federation_parse(feds.multi[i].string, fed, err, sizeof(err)) == KNOT_EOK) {
				ctx->answer.federation_count++;
			}
		}
		ctx->answer.federations = ctx->federations;
	}
	knotd_conf_free(&feds);

	knotd_conf_t zone = knotd_conf_mod(mod, MOD_FED_ZONE);
	knotd_conf_t region = knotd_conf_mod(mod, MOD_FED_REGION);
	if (zone.count > 0 && region.count > 0) {
		ctx->topology = k8s_topology_new(zone.single.string, region.single.string);
		if (ctx->topology == NULL) {
			return KNOT_ENOMEM;
		}
		ctx->answer.topology = ctx->topology;
	}
	return KNOT_EOK;
}

/*! \brief True if the zone answers federation names from the nodes' topology. */
static bool needs_nodes(const k8s_answer_conf_t *answer)
{
	return (answer->role == K8S_ROLE_CLUSTER || answer->role == K8S_ROLE_AUTOPATH) &&
	       answer->federation_count > 0 && answer->topology == NULL;
}

static void watch_conf_free(k8s_watcher_conf_t *conf)
{
	free((char *)conf->kubeconfig);
	free((char *)conf->context);
	free((char *)conf->sa_dir);
	free((char *)conf->labels);
	free((char *)conf->namespace_labels);
	free((char *)conf->cluster_id);
	free((char *)conf->node_name);
	free((void *)conf->upstream);
	for (size_t i = 0; i < conf->namespace_count; i++) {
		free((char *)conf->namespaces[i]);
	}
	free((void *)conf->namespaces);
	memset(conf, 0, sizeof(*conf));
}

/*!
 * \brief Reads the watch settings; the strings are freed by watch_conf_free().
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (nothing is left to free)
 */
static int watch_conf_read(knotd_mod_t *mod, const k8s_answer_conf_t *answer,
                           k8s_watcher_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	const struct { const yp_name_t *item; const char **out; } strings[] = {
		{ MOD_KUBECONFIG, &conf->kubeconfig },
		{ MOD_CONTEXT, &conf->context },
		{ MOD_SA_DIR, &conf->sa_dir },
		{ MOD_LABELS, &conf->labels },
		{ MOD_NS_LABELS, &conf->namespace_labels },
		{ MOD_CLUSTER_ID, &conf->cluster_id },
	};
	int ret = KNOT_EOK;
	for (size_t i = 0; ret == KNOT_EOK && i < sizeof(strings) / sizeof(strings[0]); i++) {
		ret = conf_str(mod, strings[i].item, strings[i].out);
	}
	conf->endpoint_pod_names = knotd_conf_mod(mod, MOD_EP_POD_NAMES).single.boolean;
	conf->no_endpoints = knotd_conf_mod(mod, MOD_NO_ENDPOINTS).single.boolean;
	conf->stall_s = knotd_conf_mod(mod, MOD_STALL).single.integer;
	conf->absent_retry_s = knotd_conf_mod(mod, MOD_CRD_RETRY).single.integer;
	// Only a zone that reads nodes has a node: others keep sharing their watcher.
	if (ret == KNOT_EOK && needs_nodes(answer)) {
		ret = node_name(mod, &conf->node_name);
	}
	knotd_conf_t upstream = knotd_conf_mod(mod, MOD_UPSTREAM);
	if (ret == KNOT_EOK && upstream.count > 0) {
		struct sockaddr_storage *addr = malloc(sizeof(*addr));
		if (addr != NULL) {
			*addr = upstream.single.addr;
		}
		conf->upstream = addr;
		ret = (addr != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}

	knotd_conf_t namespaces = knotd_conf_mod(mod, MOD_NAMESPACES);
	if (ret == KNOT_EOK && namespaces.count > 0) {
		char **list = calloc(namespaces.count, sizeof(char *));
		conf->namespaces = (const char *const *)list;
		// Counted as copied, so that watch_conf_free() frees exactly those.
		for (size_t i = 0; list != NULL && i < namespaces.count; i++) {
			if ((list[i] = strdup(namespaces.multi[i].string)) == NULL) {
				break;
			}
			conf->namespace_count++;
		}
		if (conf->namespace_count < namespaces.count) {
			ret = KNOT_ENOMEM;
		}
	}
	knotd_conf_free(&namespaces);
	if (ret != KNOT_EOK) {
		watch_conf_free(conf);
	}
	return ret;
}

static int k8s_load(knotd_mod_t *mod)
{
	k8s_ctx_t *ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		return KNOT_ENOMEM;
	}
	ctx->mod = mod;

	// What this zone is: reverse, clusterset or cluster.
	ctx->zone = dname_lower(knotd_mod_zone(mod));
	ctx->domains[K8S_ZONE_CLUSTER] = dname_lower(knotd_conf_mod(mod, MOD_CLUSTER_DOMAIN).single.dname);
	ctx->domains[K8S_ZONE_CLUSTERSET] = dname_lower(knotd_conf_mod(mod, MOD_CLUSTERSET_DOMAIN).single.dname);
	if (ctx->zone == NULL || ctx->domains[0] == NULL || ctx->domains[1] == NULL) {
		ctx_free(ctx);
		return KNOT_ENOMEM;
	}
	k8s_answer_conf_t *answer = &ctx->answer;
	answer->zone = ctx->zone;
	if (under(ctx->zone, "in-addr.arpa.") || under(ctx->zone, "ip6.arpa.")) {
		answer->role = K8S_ROLE_REVERSE;
	} else if (knot_dname_is_equal(ctx->zone, knotd_conf_mod(mod, MOD_AUTOPATH_DOMAIN).single.dname)) {
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
	answer->ttl = knotd_conf_mod(mod, MOD_TTL).single.integer;
	answer->autopath_option = knotd_conf_mod(mod, MOD_AUTOPATH_OPTION).single.integer;
	answer->pods = knotd_conf_mod(mod, MOD_PODS).single.option;
	answer->ignore_empty = knotd_conf_mod(mod, MOD_IGNORE_EMPTY).single.boolean;
	const yp_name_t *version = (answer->role == K8S_ROLE_CLUSTERSET) ? MOD_CS_DNS_VERSION
	                                                                : MOD_DNS_VERSION;
	int ret = k8s_answer_txt(&answer->version, knotd_conf_mod(mod, version).single.string);
	if (ret == KNOT_EOK) {
		ret = federations_read(mod, ctx);
	}
	// Everything that can fail comes before the watcher holds this zone: knotd frees
	// the module after a failed load without calling unload.
	if (ret == KNOT_EOK) {
		ret = add_stats(mod);
	}
	if (ret == KNOT_EOK) {
		ret = knotd_mod_in_hook(mod, KNOTD_STAGE_ANSWER, k8s_answer_hook);
	}
	if (ret == KNOT_EOK) {
		ret = knotd_mod_in_hook(mod, KNOTD_STAGE_ADDITIONAL, k8s_additional_hook);
	}
	k8s_watcher_conf_t wconf;
	if (ret == KNOT_EOK) {
		ret = watch_conf_read(mod, answer, &wconf);
	}
	if (ret != KNOT_EOK) {
		ctx_free(ctx);
		return ret;
	}

	char err[256] = "";
	ctx->watcher = k8s_watcher_acquire(&wconf, err, sizeof(err));
	watch_conf_free(&wconf);
	if (ctx->watcher == NULL) {
		knotd_mod_log(mod, LOG_ERR, "failed to start the watcher (%s)", err);
		ctx_free(ctx);
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
	                    (needs_nodes(answer) ? K8S_NEED_NODES : 0);
	ctx->client.zone = ctx->zone;
	// Cannot fail: from here on only unload lets the watcher go.
	k8s_watcher_attach(ctx->watcher, &ctx->client);
	return KNOT_EOK;
}

static void k8s_unload(knotd_mod_t *mod)
{
	k8s_ctx_t *ctx = knotd_mod_ctx(mod);
	if (ctx == NULL) {
		return;
	}
	// No log line here: knotd has freed this zone's name already (see ARCHITECTURE.md).
	k8s_watcher_detach(ctx->watcher, &ctx->client);
	k8s_watcher_release(ctx->watcher);
	ctx_free(ctx);
}

KNOTD_MOD_API(k8s, KNOTD_MOD_FLAG_SCOPE_ZONE | KNOTD_MOD_FLAG_OPT_CONF,
              k8s_load, k8s_unload, k8s_conf, k8s_conf_check);
