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
 * knotd glue of the forwarder's options: forward, forward-stub and kube-dns-config
 * checked, the groups' own settings (forward/groupconf.h: the options forward-options
 * and forward-cache, checked and read by zone), the stub domains below a zone's apex,
 * and the late answers' UDP size (knotd's udp-max-payload, and bufsize below it:
 * resolver/late.h).
 */

#include <stdlib.h>
#include <string.h>

#include <knot/module.h>

#include "forward/groupconf.h"
#include "forward/servers.h"
#include "k8s_glue.h"
#include "resolver/late.h"

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

int k8s_forward_check_kubedns(knotd_conf_check_args_t *args)
{
	const char *dir = (const char *)args->data;
	if (dir[0] != '/' || strlen(dir) > 1024) {
		args->err_str = "kube-dns-config must be an absolute directory name";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief One value of forward-options or forward-cache, alone. */
static int check_group(knotd_conf_check_args_t *args, bool cache)
{
	k8s_fwd_zone_settings_t one[K8S_FWD_SETTINGS_MAX];
	size_t count = 0;
	int ret = k8s_fwd_groupconf_parse((const char *)args->data, cache, one, &count,
	                                  k8s_glue_check_msg, sizeof(k8s_glue_check_msg));
	for (size_t i = 0; i < count; i++) {
		free(one[i].zone);
	}
	if (ret != KNOT_EOK) {
		args->err_str = k8s_glue_check_msg;
	}
	return ret;
}

int k8s_forward_check_options(knotd_conf_check_args_t *args)
{
	return check_group(args, false);
}

int k8s_forward_check_cache(knotd_conf_check_args_t *args)
{
	return check_group(args, true);
}

/*! \brief The groups' own settings (forward-options, forward-cache), by zone. */
int k8s_conf_fwd_settings_read(check_ctx_t *check, k8s_fwd_conf_t *conf)
{
	conf->settings = calloc(K8S_FWD_SETTINGS_MAX, sizeof(*conf->settings));
	if (conf->settings == NULL) {
		return KNOT_ENOMEM;
	}
	int ret = KNOT_EOK;
	for (int cache = 0; cache < 2 && ret == KNOT_EOK; cache++) {
		knotd_conf_t values = k8s_glue_option(check, cache ? K8S_OPT(FORWARD_CACHE)
		                                                   : K8S_OPT(FORWARD_OPTIONS));
		for (size_t i = 0; i < values.count && ret == KNOT_EOK; i++) {
			char msg[256];
			ret = k8s_fwd_groupconf_parse(values.multi[i].string, cache, conf->settings,
			                              &conf->settings_count, msg, sizeof(msg));
			if (ret != KNOT_EOK) {
				ret = k8s_glue_refuse(check, "%s: %s", cache ? "forward-cache" :
				                      "forward-options", msg);
			}
		}
		knotd_conf_free(&values);
	}
	return ret;
}

/*!
 * \brief knotd's udp-max-payload, per family (its own answers keep to it): the late
 * answers' too (CoreDNS's bufsize becomes it).
 */
void k8s_conf_udp_max_read(check_ctx_t *check)
{
	knotd_mod_t *mod = check->mod;
	int64_t bufsize = k8s_glue_option(check, K8S_OPT(BUFSIZE)).single.integer;
	const yp_name_t *server = (const yp_name_t *)"\x06""server";
	int64_t all = knotd_conf(mod, server, (const yp_name_t *)"\x0f""udp-max-payload",
	                         NULL).single.integer;
	int64_t v4 = knotd_conf(mod, server, (const yp_name_t *)"\x14""udp-max-payload-ipv4",
	                        NULL).single.integer;
	int64_t v6 = knotd_conf(mod, server, (const yp_name_t *)"\x14""udp-max-payload-ipv6",
	                        NULL).single.integer;
	// A family's own item at its default defers to the general one, as knotd's does.
	v4 = (v4 == K8S_LATE_EDNS_PAYLOAD) ? all : v4;
	v6 = (v6 == K8S_LATE_EDNS_PAYLOAD) ? all : v6;
	v4 = (bufsize < v4) ? bufsize : v4;
	v6 = (bufsize < v6) ? bufsize : v6;
	k8s_late_udp_max_set(v4 > 0 && v4 <= UINT16_MAX ? v4 : K8S_LATE_EDNS_PAYLOAD,
	                     v6 > 0 && v6 <= UINT16_MAX ? v6 : K8S_LATE_EDNS_PAYLOAD);
}

int k8s_conf_fwd_inside_read(k8s_ctx_t *ctx, const k8s_fwd_conf_t *conf)
{
	if (ctx->zone == NULL) {
		return KNOT_EOK;
	}
	size_t n = 0;
	for (size_t g = 0; g < conf->group_count; g++) {
		const knot_dname_t *stub = conf->groups[g].zone;
		n += (stub != NULL && knot_dname_in_bailiwick(stub, ctx->zone) > 0);
	}
	if (n == 0) {
		return KNOT_EOK;
	}
	ctx->fwd_inside = calloc(n, sizeof(*ctx->fwd_inside));
	if (ctx->fwd_inside == NULL) {
		return KNOT_ENOMEM;
	}
	for (size_t g = 0; g < conf->group_count; g++) {
		const knot_dname_t *stub = conf->groups[g].zone;
		if (stub == NULL || knot_dname_in_bailiwick(stub, ctx->zone) <= 0) {
			continue;
		}
		knot_dname_t *copy = knot_dname_copy(stub, NULL);
		if (copy == NULL) {
			return KNOT_ENOMEM;
		}
		ctx->fwd_inside[ctx->fwd_inside_count++] = copy;
	}
	return KNOT_EOK;
}
