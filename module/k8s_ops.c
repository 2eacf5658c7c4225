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
 * The knotd glue of the operations endpoint (httpd.h, metrics.h): options
 * metrics-listen and lameduck-file, the UDP listeners whose workers /health watches,
 * each zone's part of /ready.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <knot/module.h>
#include <libknot/yparser/yptrafo.h>

#include "ops/httpd.h"
#include "k8s_glue.h"
#include "ops/metrics.h"

int k8s_ops_check_lameduck(knotd_conf_check_args_t *args)
{
	const char *path = yp_str(args->data);
	if (path[0] != '/' || strlen(path) > 1024) {
		args->err_str = "lameduck-file must be an absolute path";
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

/*! \brief /ready's part of a zone: it answers, from its watcher or its predecessor. */
static bool zone_ready(void *arg, char *why, size_t why_len)
{
	k8s_ctx_t *ctx = arg;
	if (k8s_watcher_servable(ctx->watcher, ctx->ready_bits)) {
		return true;
	}
	char name[KNOT_DNAME_TXT_MAXLEN + 1] = "";
	(void)knot_dname_to_str(name, ctx->zone, sizeof(name));
	snprintf(why, why_len, "%s not synchronized", name);
	return false;
}

/*! \brief The ports of knotd's UDP listeners (server.listen), whose workers /health watches. */
static void dns_ports_read(knotd_mod_t *mod, k8s_httpd_conf_t *conf)
{
	knotd_conf_t listen = knotd_conf(mod, (const yp_name_t *)"\x06""server",
	                                 (const yp_name_t *)"\x06""listen", NULL);
	for (size_t i = 0; i < listen.count && conf->dns_port_count < K8S_LIVENESS_PORTS_MAX; i++) {
		const struct sockaddr_storage *addr = &listen.multi[i].addr;
		if (addr->ss_family == AF_INET) {
			conf->dns_ports[conf->dns_port_count++] =
				ntohs(((const struct sockaddr_in *)addr)->sin_port);
		} else if (addr->ss_family == AF_INET6) {
			conf->dns_ports[conf->dns_port_count++] =
				ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
		}
	}
	knotd_conf_free(&listen);
}

void k8s_ops_take(k8s_ctx_t *ctx)
{
	knotd_mod_t *mod = ctx->mod;
	knotd_conf_t listen = knotd_conf_mod(mod, K8S_OPT(METRICS_LISTEN));
	if (listen.count == 0) {
		return;
	}
	k8s_httpd_conf_t conf = { .listen = listen.single.addr };
	conf.lameduck_file = knotd_conf_mod(mod, K8S_OPT(LAMEDUCK_FILE)).single.string;
	dns_ports_read(mod, &conf);
	bool shared = false;
	char err[128] = "";
	if (k8s_httpd_acquire(&conf, &shared, err, sizeof(err)) != KNOT_EOK) {
		knotd_mod_log(mod, LOG_ERR, "no metrics endpoint (%s)", err);
		return;
	}
	ctx->httpd_held = true;
	if (shared) {
		knotd_mod_log(mod, LOG_NOTICE, "metrics endpoint shared with another zone "
		              "(one per process, on the address of the zone that started it)");
	}
}

void k8s_ops_zone_add(k8s_ctx_t *ctx)
{
	ctx->metrics_src.ready = zone_ready;
	ctx->metrics_src.ctx = ctx;
	k8s_metrics_source_add(&ctx->metrics_src);
	ctx->metrics_added = true;
}

void k8s_ops_zone_remove(k8s_ctx_t *ctx)
{
	if (ctx->metrics_added) {
		k8s_metrics_source_remove(&ctx->metrics_src);
		ctx->metrics_added = false;
	}
}

void k8s_ops_release(k8s_ctx_t *ctx)
{
	if (ctx->httpd_held) {
		k8s_httpd_release();
		ctx->httpd_held = false;
	}
}
