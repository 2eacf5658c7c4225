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
 * each zone's part of /ready; and of the query log (querylog.h): options query-log and
 * query-log-rate.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <knot/module.h>
#include <libknot/yparser/yptrafo.h>

#include "ops/httpd.h"
#include "k8s_glue.h"
#include "ops/metrics.h"
#include "ops/querylog.h"
#include "rewrite/tokens.h"

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
	if (ctx->querylog != NULL) {
		k8s_querylog_unpublish(ctx->querylog);
		k8s_querylog_free(ctx->querylog);
		ctx->querylog = NULL;
	}
	if (ctx->httpd_held) {
		k8s_httpd_release();
		ctx->httpd_held = false;
	}
}

/* The query log. */

/*!
 * \brief Adds the rules of one query-log value (CoreDNS's log line: NAMES..., FORMAT,
 * `{ class CLASSES... }`, split as rewrite's and template's values are) to \a ql.
 */
static int querylog_value(k8s_querylog_t *ql, const char *value, char *msg, size_t msglen)
{
	k8s_tokens_t *t = malloc(sizeof(*t));
	if (t == NULL) {
		snprintf(msg, msglen, "out of memory");
		return KNOT_ENOMEM;
	}
	if (k8s_tokens_split(value, t, msg, msglen) != 0) {
		free(t);
		return KNOT_EINVAL;
	}
	int ret = KNOT_EINVAL;
	size_t n = t->count;
	const char *words[K8S_TOKENS_MAX];
	for (size_t i = 0; i < n; i++) {
		words[i] = t->tok[i].text;
	}
	size_t args = 0;
	while (args < n && !k8s_token_is(t, args, "{")) {
		args++;
	}
	const char *classes[K8S_TOKENS_MAX];
	size_t class_count = 0;
	if (args < n) {
		// A block: `class` lines (`;` or a newline between them), `}` last.
		if (!k8s_token_is(t, n - 1, "}")) {
			snprintf(msg, msglen, "a block not closed with '}'");
			goto out;
		}
		for (size_t i = args + 1; i < n - 1; ) {
			if (!k8s_token_is(t, i, "class") || i + 1 >= n - 1 ||
			    t->tok[i + 1].line != t->tok[i].line) {
				snprintf(msg, msglen, "unknown property '%s' (class CLASSES...)", words[i]);
				goto out;
			}
			unsigned line = t->tok[i].line;
			for (i++; i < n - 1 && t->tok[i].line == line; i++) {
				classes[class_count++] = words[i];
			}
		}
	}
	ret = k8s_querylog_line(ql, words, args, classes, class_count, msg, msglen);
out:
	k8s_tokens_free(t);
	free(t);
	return ret;
}

int k8s_ops_check_querylog(knotd_conf_check_args_t *args)
{
	k8s_querylog_t *ql = k8s_querylog_new(1, &(k8s_log_t){ 0 });
	if (ql == NULL) {
		return KNOT_ENOMEM;
	}
	int ret = querylog_value(ql, yp_str(args->data), k8s_glue_check_msg,
	                         sizeof(k8s_glue_check_msg));
	k8s_querylog_free(ql);
	if (ret != KNOT_EOK) {
		args->err_str = k8s_glue_check_msg;
	}
	return ret;
}

static void querylog_line(void *ctx, int priority, const char *msg)
{
	knotd_mod_log(ctx, priority, "%s", msg);
}

int k8s_ops_querylog_read(check_ctx_t *check, k8s_ctx_t *ctx)
{
	knotd_conf_t values = k8s_glue_option(check, K8S_OPT(QUERY_LOG));
	if (values.count == 0 || check->mod == NULL) {
		knotd_conf_free(&values);
		return KNOT_EOK;
	}
	unsigned rate = k8s_glue_option(check, K8S_OPT(QUERY_LOG_RATE)).single.integer;
	k8s_log_t log = { .fn = querylog_line, .ctx = check->mod };
	k8s_querylog_t *ql = k8s_querylog_new(rate, &log);
	int ret = (ql != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	for (size_t i = 0; i < values.count && ret == KNOT_EOK; i++) {
		char msg[256];
		ret = querylog_value(ql, values.multi[i].string, msg, sizeof(msg));
		if (ret != KNOT_EOK) {
			ret = k8s_glue_refuse(check, "query-log: %s", msg);
		}
	}
	knotd_conf_free(&values);
	if (ret != KNOT_EOK) {
		k8s_querylog_free(ql);
		return ret;
	}
	ctx->querylog = ql;
	k8s_querylog_publish(ql);
	return KNOT_EOK;
}
