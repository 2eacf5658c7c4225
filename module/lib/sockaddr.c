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

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/sockaddr.h"

int k8s_sockaddr_set(struct sockaddr_storage *addr, const char *ip, uint16_t port)
{
	memset(addr, 0, sizeof(*addr));
	struct sockaddr_in *in4 = (struct sockaddr_in *)addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
	} else {
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

bool k8s_sockaddr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family) {
		return false;
	}
	size_t size = (a->ss_family == AF_INET6) ? sizeof(struct sockaddr_in6)
	                                         : sizeof(struct sockaddr_in);
	return memcmp(a, b, size) == 0;
}

void k8s_sockaddr_text(const struct sockaddr_storage *addr, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port;
	if (addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		port = ntohs(in6->sin6_port);
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)addr;
		inet_ntop(AF_INET, &in4->sin_addr, ip, sizeof(ip));
		port = ntohs(in4->sin_port);
	}
	if (port == 53) {
		snprintf(buf, len, "%s", ip);
	} else {
		snprintf(buf, len, "%s@%u", ip, port);
	}
}
