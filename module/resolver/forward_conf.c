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
 * The forwarder's settings (module/resolver/forward.h): freed, copied, compared (equal
 * settings share one forwarder), and the option values read: an address with an optional
 * port, a stub domain.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
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

int k8s_fwd_addr_parse(const char *text, struct sockaddr_storage *addr)
{
	char host[INET6_ADDRSTRLEN + 1];
	unsigned long port = 53;
	const char *at = strchr(text, '@');
	size_t len = (at != NULL) ? (size_t)(at - text) : strlen(text);
	if (len == 0 || len >= sizeof(host)) {
		return KNOT_EINVAL;
	}
	memcpy(host, text, len);
	host[len] = '\0';
	if (at != NULL) {
		char *end;
		errno = 0;
		port = strtoul(at + 1, &end, 10);
		if (at[1] == '\0' || *end != '\0' || errno != 0 || port == 0 || port > 65535) {
			return KNOT_EINVAL;
		}
	}
	return k8s_sockaddr_set(addr, host, port);
}

int k8s_fwd_stub_parse(const char *text, k8s_fwd_group_t *group, char *msg, size_t msglen)
{
	memset(group, 0, sizeof(*group));
	const char *eq = strchr(text, '=');
	if (eq == NULL || eq == text) {
		snprintf(msg, msglen, "'%s' is not ZONE=ADDRESS[,ADDRESS...]", text);
		return KNOT_EINVAL;
	}
	char zone[KNOT_DNAME_TXT_MAXLEN + 2];
	size_t zone_len = eq - text;
	if (zone_len >= sizeof(zone) - 1) {
		snprintf(msg, msglen, "stub domain name too long");
		return KNOT_EINVAL;
	}
	memcpy(zone, text, zone_len);
	zone[zone_len] = '\0';
	if (zone[zone_len - 1] != '.') {
		zone[zone_len++] = '.';
		zone[zone_len] = '\0';
	}
	group->zone = knot_dname_from_str_alloc(zone);
	if (group->zone == NULL) {
		snprintf(msg, msglen, "'%s' is no domain name", zone);
		return KNOT_EINVAL;
	}
	knot_dname_to_lower(group->zone);

	const char *p = eq + 1;
	while (*p != '\0') {
		const char *end = strchr(p, ',');
		size_t len = (end != NULL) ? (size_t)(end - p) : strlen(p);
		char addr[INET6_ADDRSTRLEN + 8];
		struct sockaddr_storage ss;
		if (len == 0 || len >= sizeof(addr)) {
			snprintf(msg, msglen, "stub domain %s: empty or overlong address", zone);
			goto fail;
		}
		memcpy(addr, p, len);
		addr[len] = '\0';
		if (k8s_fwd_addr_parse(addr, &ss) != KNOT_EOK) {
			snprintf(msg, msglen, "stub domain %s: '%s' is no IP address[@port]", zone, addr);
			goto fail;
		}
		if (group->count >= K8S_FWD_SERVERS_MAX) {
			snprintf(msg, msglen, "stub domain %s: more than %d servers", zone,
			         K8S_FWD_SERVERS_MAX);
			goto fail;
		}
		struct sockaddr_storage *more = realloc(group->servers,
		                                        (group->count + 1) * sizeof(ss));
		if (more == NULL) {
			snprintf(msg, msglen, "out of memory");
			free(group->zone);
			free(group->servers);
			memset(group, 0, sizeof(*group));
			return KNOT_ENOMEM;
		}
		group->servers = more;
		group->servers[group->count++] = ss;
		p += len;
		if (*p == ',' && *++p == '\0') {
			snprintf(msg, msglen, "stub domain %s: empty address after ','", zone);
			goto fail;
		}
	}
	if (group->count == 0) {
		snprintf(msg, msglen, "stub domain %s has no address", zone);
		goto fail;
	}
	return KNOT_EOK;
fail:
	free(group->zone);
	free(group->servers);
	memset(group, 0, sizeof(*group));
	return KNOT_EINVAL;
}

