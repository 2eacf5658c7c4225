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
 * The knotd glue of the federation roles: the Federated-DNS role (a zone of
 * federation-name, answering from its member clusters' watchers) and the
 * K8S-DNS role (zone svc.federation., forwarding to the federations'
 * nameservers). Their options' checks, their part of the option reader shared
 * by the conf check and load, their watchers and threads; the logic is in
 * fedserve.c, fedfwd.c, fedstub.c and fedapi.c.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libknot/yparser/yptrafo.h>

#include "lib/dnsname.h"
#include "k8s_glue.h"
#include "api/kubeconfig.h"

/*! \brief Where the K8S-DNS role persists programmed federations, in the zone's storage. */
#define FED_STATE_FILE		"k8s-federations.json"

/* The Federated-DNS role. */

int k8s_fed_check_name(knotd_conf_check_args_t *args)
{
	const char *name = yp_str(args->data);
	if (!k8s_dns_label_valid(name, strlen(name), false)) {
		args->err_str = "federation-name must be a lowercase DNS label";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

int k8s_fed_check_member(knotd_conf_check_args_t *args)
{
	k8s_fedmember_t m;
	char err[256];
	if (k8s_fedmember_parse(yp_str(args->data), &m, err, sizeof(err)) != KNOT_EOK) {
		snprintf(k8s_glue_check_msg, sizeof(k8s_glue_check_msg),
		         "invalid federation-member '%s' (%s)", yp_str(args->data), err);
		args->err_str = k8s_glue_check_msg;
		return KNOT_EINVAL;
	}
	k8s_fedmember_free(&m);
	return KNOT_EOK;
}

/*! \brief Reads the members (each name once); a check also reads their kubeconfigs. */
static int members_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t members = k8s_glue_option(check, K8S_OPT(FED_MEMBER));
	int ret = KNOT_EOK;
	if (members.count == 0) {
		ret = k8s_glue_refuse(check, "federation-name needs at least one federation-member");
	} else if (members.count > K8S_FED_MAX_MEMBERS) {
		ret = k8s_glue_refuse(check, "federation-member holds at most %d member clusters",
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
			ret = k8s_glue_refuse(check, "invalid federation-member '%s' (%s)",
			                      members.multi[i].string, err);
		}
		if (ret != KNOT_EOK) {
			break;
		}
		ctx->member_count++;
		for (size_t j = 0; ret == KNOT_EOK && j < i; j++) {
			if (memcmp(m->name, ctx->members[j].name, sizeof(m->name)) == 0) {
				ret = k8s_glue_refuse(check, "federation-member '%.*s' given twice",
				                      m->name[0], m->name + 1);
			}
		}
		// Only a check reads the kubeconfig: in load, the member's watcher retries until it is usable.
		if (ret == KNOT_EOK && check->args != NULL) {
			k8s_apiconf_t api = { 0 };
			int loaded = k8s_kubeconfig_load(m->kubeconfig, m->context, &api, err, sizeof(err));
			k8s_apiconf_free(&api);
			if (loaded != KNOT_EOK) {
				ret = k8s_glue_refuse(check, "invalid kubeconfig of federation-member '%.*s' (%s)",
				                      m->name[0], m->name + 1,
				                      err[0] != '\0' ? err : knot_strerror(loaded));
			}
		}
	}
	knotd_conf_free(&members);
	return ret;
}

int k8s_fed_serve_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t name = k8s_glue_option(check, K8S_OPT(FED_NAME));
	if (name.count == 0) {
		knotd_conf_t members = k8s_glue_option(check, K8S_OPT(FED_MEMBER));
		size_t count = members.count;
		knotd_conf_free(&members);
		return (count > 0) ? k8s_glue_refuse(check, "federation-member needs federation-name")
		                   : KNOT_EOK;
	}
	int ret = members_read(check, ctx);
	if (ret != KNOT_EOK || check->mod == NULL) {
		return ret;
	}

	knot_dname_t *domain =
		k8s_glue_dname_lower(k8s_glue_option(check, K8S_OPT(FED_DOMAIN)).single.dname);
	knotd_conf_t ext = k8s_glue_option(check, K8S_OPT(FED_EXTERNAL));
	knot_dname_t *external = (ext.count > 0) ? k8s_glue_dname_lower(ext.single.dname) : NULL;
	const char *fed = name.single.string;
	size_t fed_len = strlen(fed);
	if (domain == NULL || (ext.count > 0 && external == NULL)) {
		ret = KNOT_ENOMEM;
	} else if (knot_dname_is_equal(ctx->zone, domain)) {
		size_t zone_size = knot_dname_size(ctx->zone);
		size_t size = 1 + fed_len + 4 + zone_size;
		ctx->fed_suffix = (size <= KNOT_DNAME_MAXLEN) ? malloc(size) : NULL;
		if (size > KNOT_DNAME_MAXLEN) {
			ret = k8s_glue_refuse(check, "%s.svc.<zone> is longer than a DNS name", fed);
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
		ret = k8s_glue_refuse(check, "a zone of federation '%s' must be federation-domain or hold "
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

void k8s_fed_release(k8s_ctx_t *ctx)
{
	for (size_t i = 0; ctx->fed_watch != NULL && i < ctx->member_count; i++) {
		if (ctx->fed_watch[i].watcher != NULL) {
			k8s_watcher_release(ctx->fed_watch[i].watcher);
			ctx->fed_watch[i].watcher = NULL;
		}
	}
}

int k8s_fed_acquire(k8s_ctx_t *ctx, const k8s_watcher_conf_t *base)
{
	ctx->fed_watch = calloc(ctx->member_count, sizeof(*ctx->fed_watch));
	if (ctx->fed_watch == NULL) {
		return KNOT_ENOMEM;
	}
	const k8s_wconf_field_t *kubeconfig = NULL;
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		if (f->item != NULL && strcmp(f->item, K8S_OPT(KUBECONFIG)) == 0) {
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
			k8s_fed_release(ctx);
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
		// A snapshot of its own, named by its API server, in the zone's storage.
		size_t storage = (base->snapshot != NULL)
		                 ? k8s_watcher_conf_snapshot_storage(base->snapshot) : 0;
		if (ret == KNOT_EOK && storage > 0) {
			ret = k8s_watcher_conf_set_snapshot(&wconf, base->snapshot, storage);
		}
		char err[256] = "";
		if (ret == KNOT_EOK) {
			fw->watcher = k8s_watcher_acquire(&wconf, err, sizeof(err));
		}
		k8s_watcher_conf_free(&wconf);
		if (fw->watcher == NULL) {
			knotd_mod_log(ctx->mod, LOG_ERR, "member %.*s: failed to start the watcher (%s)",
			              m->name[0], m->name + 1, err[0] != '\0' ? err : knot_strerror(ret));
			k8s_fed_release(ctx);
			return KNOT_ENOMEM;
		}
	}
	return KNOT_EOK;
}

/*! \brief A member's watcher logs as this zone's module, naming the member. */
static void member_log(void *ctx, int priority, const char *msg)
{
	fed_watch_t *fw = ctx;
	knotd_mod_log(fw->mod, priority, "member %.*s: %s", fw->name[0], fw->name + 1, msg);
}

void k8s_fed_attach(k8s_ctx_t *ctx)
{
	knotd_mod_ctx_set(ctx->mod, ctx);
	for (size_t i = 0; i < ctx->member_count; i++) {
		fed_watch_t *fw = &ctx->fed_watch[i];
		fw->client.log = member_log;
		fw->client.stats = k8s_stats_member;
		fw->client.ctx = fw;
		fw->client.needs = 0;
		fw->client.zone = fw->key;
		k8s_watcher_attach(fw->watcher, &fw->client);
	}
}

k8s_answer_t k8s_fed_serve_answer(const k8s_ctx_t *ctx, const knot_dname_t *qname,
                                  uint16_t qtype, const knot_pkt_t *query,
                                  const struct sockaddr_storage *remote, knot_pkt_t *pkt,
                                  knot_mm_t *mm)
{
	const uint8_t *source = NULL;
	size_t source_len = 0;
	if (!ctx->fed.external && query->opt_rr != NULL) {
		const uint8_t *opt = knot_edns_get_option(query->opt_rr, K8S_EDNS_SOURCE_CLUSTER, NULL);
		if (opt != NULL) {
			source = knot_edns_opt_get_data((uint8_t *)opt);
			source_len = knot_edns_opt_get_length((uint8_t *)opt);
		}
	}
	const k8s_table_t *tables[K8S_FED_MAX_MEMBERS];
	for (size_t i = 0; i < ctx->fed.member_count; i++) {
		const k8s_watcher_t *w = k8s_watcher_serving(ctx->fed_watch[i].watcher, K8S_READY_CLUSTER);
		const k8s_table_t *t = k8s_watcher_table(w);
		tables[i] = (k8s_table_ready(t) & K8S_READY_CLUSTER) ? t : NULL;
	}
	return k8s_fedserve_answer(&ctx->fed, tables, qname, qtype, source, source_len, remote,
	                           pkt, mm);
}

/* The K8S-DNS role. */

int k8s_fed_check_ns(knotd_conf_check_args_t *args)
{
	k8s_fedstub_t fed;
	char err[128];
	if (k8s_fedstub_static(yp_str(args->data), &fed, err, sizeof(err)) != KNOT_EOK) {
		snprintf(k8s_glue_check_msg, sizeof(k8s_glue_check_msg),
		         "invalid federation-nameservers '%s' (%s)", yp_str(args->data), err);
		args->err_str = k8s_glue_check_msg;
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

int k8s_fed_check_cluster(knotd_conf_check_args_t *args)
{
	uint8_t label[64];
	const char *name = yp_str(args->data);
	if (k8s_fedstub_name(name, strlen(name), label) != KNOT_EOK) {
		args->err_str = "federation-cluster-name must be a lowercase DNS label";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief Module log lines of the K8S-DNS role's threads. */
static void fed_log(void *ctx, int priority, const char *msg)
{
	knotd_mod_log(ctx, priority, "%s", msg);
}

/*!
 * \brief This cluster's name, the source-cluster option's value: federation-cluster-name,
 * else cluster-id when it is one label.
 */
static int fed_source_read(check_ctx_t *check, uint8_t source[64], bool *found)
{
	knotd_conf_t name = k8s_glue_option(check, K8S_OPT(FED_CLUSTER));
	knotd_conf_t id = k8s_glue_option(check, K8S_OPT(CLUSTER_ID));
	const char *text = (name.count > 0) ? name.single.string :
	                   (id.count > 0) ? id.single.string : NULL;
	*found = text != NULL && k8s_fedstub_name(text, strlen(text), source) == KNOT_EOK;
	return KNOT_EOK;
}

/*! \brief Reads federation-nameservers (each name once) into a new set. */
static int fed_static_read(check_ctx_t *check, k8s_fedstub_set_t **out)
{
	knotd_conf_t list = k8s_glue_option(check, K8S_OPT(FED_NS));
	k8s_fedstub_set_t *set = calloc(1, sizeof(*set) + list.count * sizeof(k8s_fedstub_t));
	int ret = (set != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	for (size_t i = 0; ret == KNOT_EOK && i < list.count; i++) {
		k8s_fedstub_t *fed = &set->feds[set->count];
		char err[128];
		if (k8s_fedstub_static(list.multi[i].string, fed, err, sizeof(err)) != KNOT_EOK) {
			ret = k8s_glue_refuse(check, "invalid federation-nameservers '%s' (%s)",
			                      list.multi[i].string, err);
		} else if (k8s_fedstub_find(set, fed->name) != NULL) {
			ret = k8s_glue_refuse(check, "federation-nameservers for '%.*s' given twice",
			                      fed->name[0], fed->name + 1);
		} else {
			set->count++;
		}
	}
	knotd_conf_free(&list);
	if (ret != KNOT_EOK) {
		free(set);
		return ret;
	}
	*out = set;
	return KNOT_EOK;
}

/*! \brief The programming endpoint's settings: all four, or none (off). */
static int fed_api_read(check_ctx_t *check, k8s_fedapi_conf_t *api, bool *on)
{
	knotd_conf_t listen = k8s_glue_option(check, K8S_OPT(FED_API_LISTEN));
	knotd_conf_t cert = k8s_glue_option(check, K8S_OPT(FED_API_CERT));
	knotd_conf_t key = k8s_glue_option(check, K8S_OPT(FED_API_KEY));
	knotd_conf_t ca = k8s_glue_option(check, K8S_OPT(FED_API_CA));
	size_t set = (listen.count > 0) + (cert.count > 0) + (key.count > 0) + (ca.count > 0);
	*on = set == 4;
	if (set != 0 && set != 4) {
		return k8s_glue_refuse(check, "federation-api-listen, federation-api-cert, "
		                       "federation-api-key and federation-api-client-ca go together");
	}
	if (*on) {
		api->listen = listen.single.addr;
		api->cert = cert.single.string;
		api->key = key.single.string;
		api->client_ca = ca.single.string;
	}
	return KNOT_EOK;
}

int k8s_fed_fwd_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	if (check->mod != NULL && ctx->answer.role != K8S_ROLE_FEDFORWARD) {
		return KNOT_EOK;
	}
	uint8_t source[64];
	bool found;
	k8s_fedstub_set_t *configured = NULL;
	k8s_fedapi_conf_t api = { 0 };
	bool api_on;
	int ret = fed_source_read(check, source, &found);
	if (ret == KNOT_EOK) {
		ret = fed_api_read(check, &api, &api_on);
	}
	if (ret == KNOT_EOK) {
		ret = fed_static_read(check, &configured);
	}
	if (ret != KNOT_EOK || check->mod == NULL) {
		free(configured);
		return ret;
	}
	if (!found) {
		free(configured);
		return k8s_glue_refuse(check, "zone svc.federation. needs federation-cluster-name "
		                       "(or a cluster-id of one label): the source cluster's name");
	}

	knotd_conf_t storage = knotd_conf_zone(check->mod, ZONE_STORAGE, knotd_mod_zone(check->mod));
	char path[PATH_MAX];
	bool path_ok = storage.single.string != NULL &&
	               snprintf(path, sizeof(path), "%s/%s", storage.single.string,
	                        FED_STATE_FILE) < (int)sizeof(path);
	knotd_conf_free(&storage);
	k8s_log_t log = { .fn = fed_log, .ctx = check->mod };
	ctx->fedfwd = k8s_fedfwd_new(source, configured, path_ok ? path : NULL, &log);
	if (ctx->fedfwd == NULL) {
		knotd_mod_log(check->mod, LOG_ERR, "federations, cannot start the forwarder");
		return KNOT_ENOMEM;
	}
	if (api_on) {
		char err[256] = "";
		ctx->fedapi = k8s_fedapi_start(&api, ctx->fedfwd, &log, err, sizeof(err));
		if (ctx->fedapi == NULL) {
			knotd_mod_log(check->mod, LOG_ERR, "federations, cannot start the api (%s)", err);
			return KNOT_EINVAL;
		}
		char addr[64];
		k8s_sockaddr_text(&api.listen, addr, sizeof(addr));
		knotd_mod_log(check->mod, LOG_INFO, "federations, api listening on %s", addr);
	}
	return KNOT_EOK;
}
