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
 * What the glue's option readers share (k8s_conf.c's, k8s_fed.c's and k8s_forward.c's): the conf
 * check's message, an option's value from the check or the zone, a refusal
 * that goes to knotc or to the log; and whose a query is (the resolver's tenants).
 */

#include <stdarg.h>
#include <stdio.h>

#include "k8s_glue.h"

char k8s_glue_check_msg[512];

knotd_conf_t k8s_glue_option(check_ctx_t *check, const yp_name_t *item)
{
	return (check->args != NULL) ? knotd_conf_check_item(check->args, item)
	                             : knotd_conf_mod(check->mod, item);
}

int k8s_glue_refuse(check_ctx_t *check, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	if (check->args != NULL) {
		vsnprintf(k8s_glue_check_msg, sizeof(k8s_glue_check_msg), fmt, args);
		check->args->err_str = k8s_glue_check_msg;
	} else {
		knotd_mod_vlog(check->mod, LOG_ERR, fmt, args);
	}
	va_end(args);
	return KNOT_EINVAL;
}

knot_dname_t *k8s_glue_dname_lower(const knot_dname_t *name)
{
	knot_dname_t *copy = knot_dname_copy(name, NULL);
	if (copy != NULL) {
		knot_dname_to_lower(copy);
	}
	return copy;
}

/*
 * Whose a query is: the tenant of the resolver's pools (resolver/share.h). A zone reads its
 * own table's pods; the global instance, which has no table, reads the newest cluster
 * zone's from the zones published under RCU for it (k8s_rewrite_zones.c).
 */

k8s_tenant_t k8s_glue_tenant(const k8s_ctx_t *ctx, const struct sockaddr_storage *remote)
{
	const k8s_ctx_t *zone = (ctx->watcher != NULL) ? ctx :
	                        k8s_rewrite_zone_newest(K8S_ROLE_CLUSTER);
	const k8s_table_t *t = NULL;
	if (zone != NULL && zone->watcher != NULL) {
		const k8s_watcher_t *w = k8s_watcher_serving(zone->watcher, zone->ready_bits);
		t = (w != NULL) ? k8s_watcher_table(w) : NULL;
	}
	return k8s_answer_tenant(t, remote);
}
