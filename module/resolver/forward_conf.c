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
	for (size_t i = 0; i < conf->settings_count; i++) {
		free(conf->settings[i].zone);
	}
	free(conf->settings);
	conf->settings = NULL;
	conf->settings_count = 0;
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
	dst->settings = NULL;
	dst->settings_count = 0;
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
	return k8s_fwd_settings_copy(dst, src);
}

int k8s_fwd_settings_copy(k8s_fwd_conf_t *dst, const k8s_fwd_conf_t *src)
{
	dst->settings = NULL;
	dst->settings_count = 0;
	if (src->settings_count == 0) {
		return KNOT_EOK;
	}
	dst->settings = calloc(src->settings_count, sizeof(*dst->settings));
	if (dst->settings == NULL) {
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < src->settings_count; i++) {
		const k8s_fwd_zone_settings_t *z = &src->settings[i];
		dst->settings[i].set = z->set;
		dst->settings_count++;
		if (z->zone != NULL &&
		    (dst->settings[i].zone = knot_dname_copy(z->zone, NULL)) == NULL) {
			return KNOT_ENOMEM;
		}
	}
	return KNOT_EOK;
}

/*! \brief Field by field: a struct's padding is no setting. */
static bool settings_equal(const k8s_fwd_settings_t *a, const k8s_fwd_settings_t *b)
{
	return a->coredns == b->coredns && a->policy == b->policy &&
	       a->force_tcp == b->force_tcp && a->prefer_udp == b->prefer_udp &&
	       a->max_fails == b->max_fails && a->expire_ms == b->expire_ms &&
	       a->cache == b->cache && a->no_success == b->no_success &&
	       a->no_denial == b->no_denial && a->success_max == b->success_max &&
	       a->success_min == b->success_min && a->denial_max == b->denial_max &&
	       a->denial_min == b->denial_min && a->success_cap == b->success_cap &&
	       a->denial_cap == b->denial_cap && a->servfail_ttl == b->servfail_ttl;
}

const k8s_fwd_settings_t *k8s_fwd_settings_of(const k8s_fwd_conf_t *conf,
                                              const knot_dname_t *zone)
{
	for (size_t i = 0; i < conf->settings_count; i++) {
		const knot_dname_t *z = conf->settings[i].zone;
		if ((z == NULL) == (zone == NULL) && (z == NULL || knot_dname_is_equal(z, zone))) {
			return &conf->settings[i].set;
		}
	}
	return NULL;
}

bool k8s_fwd_conf_equal(const k8s_fwd_conf_t *a, const k8s_fwd_conf_t *b)
{
	if (a->group_count != b->group_count || a->timeout_ms != b->timeout_ms ||
	    a->cache_max_ttl != b->cache_max_ttl || a->cache_size != b->cache_size ||
	    a->max_pending != b->max_pending || a->opt_code != b->opt_code ||
	    a->settings_count != b->settings_count || a->log_interval_ms != b->log_interval_ms) {
		return false;
	}
	for (size_t i = 0; i < a->settings_count; i++) {
		const k8s_fwd_zone_settings_t *x = &a->settings[i];
		const k8s_fwd_settings_t *y = k8s_fwd_settings_of(b, x->zone);
		if (y == NULL || !settings_equal(&x->set, y)) {
			return false;
		}
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
