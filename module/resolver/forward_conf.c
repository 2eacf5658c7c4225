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
 * The forwarder's settings (forward.h): freed, copied and compared (equal settings share
 * one forwarder). Their text forms, the options' and kube-dns's, are the policies'
 * (forward/servers.c, forward/kubedns_conf.c).
 */

#include <stdlib.h>
#include <string.h>

#include "resolver/forward.h"
#include "lib/sockaddr.h"

void k8s_fwd_conf_deinit(k8s_fwd_conf_t *conf)
{
	for (size_t i = 0; i < conf->group_count; i++) {
		free(conf->groups[i].zone);
		free(conf->groups[i].servers);
	}
	free(conf->groups);
	conf->groups = NULL;
	conf->group_count = 0;
}

int k8s_fwd_group_copy(k8s_fwd_group_t *dst, const k8s_fwd_group_t *src)
{
	dst->count = src->count;
	dst->zone = (src->zone != NULL) ? knot_dname_copy(src->zone, NULL) : NULL;
	dst->servers = malloc((src->count + 1) * sizeof(*src->servers));
	if ((src->zone != NULL && dst->zone == NULL) || dst->servers == NULL) {
		return KNOT_ENOMEM;
	}
	if (src->count > 0) {
		memcpy(dst->servers, src->servers, src->count * sizeof(*src->servers));
	}
	return KNOT_EOK;
}

int k8s_fwd_conf_copy(k8s_fwd_conf_t *dst, const k8s_fwd_conf_t *src)
{
	*dst = *src;
	dst->groups = calloc(src->group_count, sizeof(*dst->groups));
	if (dst->groups == NULL) {
		dst->group_count = 0;
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < src->group_count; i++) {
		int ret = k8s_fwd_group_copy(&dst->groups[i], &src->groups[i]);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}
	return KNOT_EOK;
}

bool k8s_fwd_conf_equal(const k8s_fwd_conf_t *a, const k8s_fwd_conf_t *b)
{
	if (a->group_count != b->group_count || a->timeout_ms != b->timeout_ms ||
	    a->cache_max_ttl != b->cache_max_ttl || a->cache_size != b->cache_size ||
	    a->max_pending != b->max_pending || a->opt_code != b->opt_code) {
		return false;
	}
	for (size_t i = 0; i < a->group_count; i++) {
		const k8s_fwd_group_t *x = &a->groups[i], *y = &b->groups[i];
		if (x->count != y->count || (x->zone == NULL) != (y->zone == NULL) ||
		    (x->zone != NULL && !knot_dname_is_equal(x->zone, y->zone))) {
			return false;
		}
		for (size_t j = 0; j < x->count; j++) {
			if (!k8s_sockaddr_equal(&x->servers[j], &y->servers[j])) {
				return false;
			}
		}
	}
	return true;
}
