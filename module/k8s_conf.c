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
 * The options of mod-k8s as knotd reads them: the checks of one value that
 * knotd runs as it reads each, the schema made from K8S_OPTIONS (options.h),
 * and the readers of the zone's settings, which the conf check shares with
 * load (k8s.c). The federation roles' and the forwarder's own options are
 * read in k8s_fed.c, k8s_forward.c and k8s_fwdconf.c.
 */

#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <knot/module.h>
#include <libknot/yparser/yptrafo.h>

#include "lib/dnsname.h"
#include "k8s_glue.h"
#include "api/kubeconfig.h"
#include "watch/options.h"
#include "api/reflector.h"

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
		snprintf(k8s_glue_check_msg, sizeof(k8s_glue_check_msg),
		         "invalid label selector in %s", args->item->name + 1);
		args->err_str = k8s_glue_check_msg;
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

/*! \brief A listening endpoint (metrics-listen, federation-api-listen): an IP address with a port. */
static int check_listen(knotd_conf_check_args_t *args)
{
	bool no_port;
	struct sockaddr_storage addr = yp_addr(args->data, &no_port);
	if ((addr.ss_family != AF_INET && addr.ss_family != AF_INET6) || no_port) {
		snprintf(k8s_glue_check_msg, sizeof(k8s_glue_check_msg),
		         "%s must be an IPv4 or IPv6 address with @port", args->item->name + 1);
		args->err_str = k8s_glue_check_msg;
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
	if (federation_parse(yp_str(args->data), &fed, k8s_glue_check_msg,
	                     sizeof(k8s_glue_check_msg)) != KNOT_EOK) {
		args->err_str = k8s_glue_check_msg;
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief The external zones' apex label: one DNS label. */
static int check_external_apex(knotd_conf_check_args_t *args)
{
	const char *label = yp_str(args->data);
	if (!k8s_dns_label_valid(label, strlen(label), true)) {
		args->err_str = "external-apex must be one DNS label";
		return KNOT_EINVAL;
	}
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

/* The schema, a row per option of K8S_OPTIONS (options.h), in its forms of values. */
#define V_NONE YP_VNONE
#define V_STR(dflt) YP_VSTR = { dflt }
#define V_INT(min, max, dflt) YP_VINT = { min, max, dflt }
#define V_TIME(min, max, dflt) YP_VINT = { min, max, dflt, YP_STIME }
#define V_BOOL(dflt) YP_VBOOL = { dflt }
#define V_DNAME(size, wire) YP_VDNAME = { size, (const uint8_t *)wire }
#define V_OPT(list, dflt) YP_VOPT = { list, dflt }
#define V_ADDR(port) YP_VADDR = { port }
#define SCHEMA_ROW(id, name, type, value, flags, check, watch) \
	{ name, type, value, flags, { check } },

const yp_item_t k8s_conf_schema[] = {
	K8S_OPTIONS(SCHEMA_ROW)
	{ NULL }
};

int k8s_conf_names_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	ctx->domains[K8S_ZONE_CLUSTER] =
		k8s_glue_dname_lower(k8s_glue_option(check, K8S_OPT(CLUSTER_DOMAIN)).single.dname);
	ctx->domains[K8S_ZONE_CLUSTERSET] =
		k8s_glue_dname_lower(k8s_glue_option(check, K8S_OPT(CLUSTERSET_DOMAIN)).single.dname);
	if (check->mod != NULL) {
		ctx->zone = k8s_glue_dname_lower(knotd_mod_zone(check->mod));
	}
	if ((check->mod != NULL && ctx->zone == NULL) || ctx->domains[0] == NULL ||
	    ctx->domains[1] == NULL) {
		return KNOT_ENOMEM;
	}
	return KNOT_EOK;
}

/*! \brief Reads the zone's answer settings (its role is decided). */
static int answer_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	k8s_answer_conf_t *answer = &ctx->answer;
	answer->zone = ctx->zone;
	// Counted once: every query's parse needs it.
	answer->zone_labels = (ctx->zone != NULL) ? knot_dname_labels(ctx->zone, NULL) : 0;
	answer->domains[K8S_ZONE_CLUSTER] = ctx->domains[K8S_ZONE_CLUSTER];
	answer->domains[K8S_ZONE_CLUSTERSET] = ctx->domains[K8S_ZONE_CLUSTERSET];
	answer->ttl = k8s_glue_option(check, K8S_OPT(TTL)).single.integer;
	answer->autopath_option = k8s_glue_option(check, K8S_OPT(AUTOPATH_OPTION)).single.integer;
	answer->pods = k8s_glue_option(check, K8S_OPT(PODS)).single.option;
	answer->ignore_empty = k8s_glue_option(check, K8S_OPT(IGNORE_EMPTY)).single.boolean;
	answer->autopath = k8s_glue_option(check, K8S_OPT(AUTOPATH)).single.boolean;
	answer->zonal = k8s_glue_option(check, K8S_OPT(ZONAL)).single.boolean;
	// External zones (k8s_external): the apex label as a lowercase wire label.
	const char *apex = k8s_glue_option(check, K8S_OPT(EXTERNAL_APEX)).single.string;
	size_t apex_len = strlen(apex);
	ctx->ext_apex[0] = (apex_len < sizeof(ctx->ext_apex)) ? apex_len : 0;
	for (size_t i = 0; i < ctx->ext_apex[0]; i++) {
		char ch = apex[i];
		ctx->ext_apex[1 + i] = (ch >= 'A' && ch <= 'Z') ? ch - 'A' + 'a' : ch;
	}
	answer->ext_apex = ctx->ext_apex;
	answer->ext_ttl = k8s_glue_option(check, K8S_OPT(EXTERNAL_TTL)).single.integer;
	answer->ext_headless = k8s_glue_option(check, K8S_OPT(EXTERNAL_HEADLESS)).single.boolean;
	const yp_name_t *version = (answer->role == K8S_ROLE_CLUSTERSET) ? K8S_OPT(CS_DNS_VERSION)
	                                                                : K8S_OPT(DNS_VERSION);
	return k8s_answer_txt(&answer->version, k8s_glue_option(check, version).single.string);
}

/*! \brief Reads the federations (each name once) and the static topology. */
static int federations_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t feds = k8s_glue_option(check, K8S_OPT(FEDERATIONS));
	int ret = KNOT_EOK;
	if (feds.count > 0) {
		ctx->federations = calloc(feds.count, sizeof(*ctx->federations));
		ret = (ctx->federations != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}
	for (size_t i = 0; ret == KNOT_EOK && i < feds.count; i++) {
		k8s_federation_t *fed = &ctx->federations[i];
		char msg[512];
		if (federation_parse(feds.multi[i].string, fed, msg, sizeof(msg)) != KNOT_EOK) {
			ret = k8s_glue_refuse(check, "%s", msg);
		}
		for (size_t j = 0; ret == KNOT_EOK && j < i; j++) {
			if (memcmp(fed->name, ctx->federations[j].name, sizeof(fed->name)) == 0) {
				ret = k8s_glue_refuse(check, "federation '%.*s' given twice",
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

	knotd_conf_t zone = k8s_glue_option(check, K8S_OPT(FED_ZONE));
	knotd_conf_t region = k8s_glue_option(check, K8S_OPT(FED_REGION));
	if ((zone.count > 0) != (region.count > 0)) {
		return k8s_glue_refuse(check, "federation-zone and federation-region must be set together");
	}
	if (zone.count > 0) {
		if (!k8s_topology_valid(zone.single.string, region.single.string)) {
			return k8s_glue_refuse(check, "federation-zone and federation-region must be DNS names");
		}
		ctx->topology = k8s_topology_new(zone.single.string, region.single.string);
		if (ctx->topology == NULL) {
			return KNOT_ENOMEM;
		}
		ctx->answer.topology = ctx->topology;
	}
	return KNOT_EOK;
}

/*! \brief Reads the host's search domains that end every autopath walk. */
static int host_search_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t hosts = k8s_glue_option(check, K8S_OPT(AUTOPATH_HOST));
	int ret = KNOT_EOK;
	if (hosts.count > K8S_AUTOPATH_MAX_HOST) {
		ret = k8s_glue_refuse(check, "autopath-host-search holds at most %d domains "
		                      "(a pod's search list holds 32)", K8S_AUTOPATH_MAX_HOST);
	} else if (hosts.count > 0) {
		ctx->host_search = calloc(hosts.count, sizeof(*ctx->host_search));
		ret = (ctx->host_search != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	}
	for (size_t i = 0; ret == KNOT_EOK && i < hosts.count; i++) {
		ctx->host_search[i] = k8s_glue_dname_lower(hosts.multi[i].dname);
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

/*!
 * \brief The node whose labels give the federation topology: option node-name,
 * else NODE_NAME from the environment (the downward API sets it in a pod).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
static int node_name_read(knotd_mod_t *mod, k8s_watcher_conf_t *conf)
{
	const char *name = getenv("NODE_NAME");
	knotd_conf_t option = knotd_conf_mod(mod, K8S_OPT(NODE_NAME));
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
	if (!knotd_conf_mod(mod, K8S_OPT(SNAPSHOT)).single.boolean) {
		return KNOT_EOK;
	}
	const char *dir = knotd_conf_zone(mod, ZONE_STORAGE, knotd_mod_zone(mod)).single.string;
	if (dir == NULL || dir[0] != '/' || access(dir, W_OK) != 0) {
		knotd_mod_log(mod, LOG_NOTICE, "no snapshot for a warm restart (storage %s is %s)",
		              dir != NULL ? dir : "", (dir != NULL && dir[0] == '/') ? "not writable"
		                                                                     : "not an absolute path");
		return KNOT_EOK;
	}
	int ret = k8s_watcher_conf_set_snapshot(conf, dir, strlen(dir));
	if (ret == KNOT_ERANGE) {
		knotd_mod_log(mod, LOG_NOTICE, "no snapshot for a warm restart (storage path too long)");
		return KNOT_EOK;
	}
	return ret;
}

/*! \brief Reads one option into the watch settings as its row says. */
static int watch_field_read(check_ctx_t *check, const k8s_wconf_field_t *f,
                            k8s_watcher_conf_t *conf)
{
	knotd_conf_t val = k8s_glue_option(check, f->item);
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
	default:
		break;
	}
	return ret;
}

int k8s_conf_watch_read(check_ctx_t *check, bool reads_nodes, k8s_watcher_conf_t *conf)
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
	if (ret == KNOT_EOK && check->mod != NULL && reads_nodes) {
		ret = node_name_read(check->mod, conf);
	}
	if (ret == KNOT_EOK && check->mod != NULL) {
		ret = snapshot_path_read(check->mod, conf);
	}
	if (ret == KNOT_EOK && conf->namespace_count > 0 && conf->namespace_labels != NULL) {
		ret = k8s_glue_refuse(check, "namespaces and namespace-labels are mutually exclusive");
	}
	// Only a check reads the kubeconfig: in load, the watcher retries until it is usable.
	if (ret == KNOT_EOK && check->args != NULL && conf->kubeconfig != NULL) {
		k8s_apiconf_t api = { 0 };
		char err[384] = "";
		int loaded = k8s_kubeconfig_load(conf->kubeconfig, conf->context, &api, err, sizeof(err));
		k8s_apiconf_free(&api);
		if (loaded != KNOT_EOK) {
			ret = k8s_glue_refuse(check, "invalid kubeconfig (%s)",
			                      err[0] != '\0' ? err : knot_strerror(loaded));
		}
	}
	if (ret != KNOT_EOK) {
		k8s_watcher_conf_free(conf);
	}
	return ret;
}

int k8s_conf_answer_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	int ret = answer_read(check, ctx);
	if (ret == KNOT_EOK) {
		ret = federations_read(check, ctx);
	}
	if (ret == KNOT_EOK) {
		ret = host_search_read(check, ctx);
	}
	return ret;
}

unsigned k8s_conf_configmap_needs(check_ctx_t *check)
{
	knotd_conf_t hosts = k8s_glue_option(check, K8S_OPT(HOSTS_CONFIGMAP));
	knotd_conf_t kubedns = k8s_glue_option(check, K8S_OPT(KUBEDNS_CONFIG));
	unsigned needs = ((hosts.count > 0) ? K8S_NEED_HOSTS_CM : 0) |
	                 ((kubedns.count > 0) ? K8S_NEED_KUBEDNS_CM : 0);
	knotd_conf_free(&hosts);
	knotd_conf_free(&kubedns);
	return needs;
}
