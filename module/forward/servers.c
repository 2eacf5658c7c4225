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
 * The upstream servers as the options write them (servers.h): a default server's
 * address with an optional port (`forward`), a stub domain (`forward-stub`, kube-dns's
 * stubDomains form).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/servers.h"
#include "lib/sockaddr.h"

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

