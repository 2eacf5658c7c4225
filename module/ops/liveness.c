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

#include <dirent.h>
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/beat.h"
#include "ops/liveness.h"

void k8s_liveness_add_port(k8s_liveness_t *l, uint16_t port)
{
	for (size_t i = 0; i < l->port_count; i++) {
		if (l->ports[i] == port) {
			return;
		}
	}
	if (l->port_count < K8S_LIVENESS_PORTS_MAX) {
		l->ports[l->port_count++] = port;
	}
}

uint64_t k8s_liveness_unread_since(const k8s_liveness_socket_t *old, bool queued,
                                   int64_t read_ns, uint64_t now)
{
	if (!queued) {
		return 0;
	}
	// Nothing read since a datagram was seen waiting: it waits since then at least.
	if (old != NULL && old->unread_ms != 0 && old->read_ns == read_ns) {
		return old->unread_ms;
	}
	return now;  // Waiting now; of before, nothing is known.
}

/*! \brief The port \a fd is bound to if it is a UDP socket of IPv4 or IPv6, else 0. */
static uint16_t udp_port(int fd)
{
	int type = 0, proto = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM) {
		return 0;
	}
	len = sizeof(proto);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) != 0 || proto != IPPROTO_UDP) {
		return 0;
	}
	struct sockaddr_storage addr;
	len = sizeof(addr);
	if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
		return 0;
	}
	if (addr.ss_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)&addr)->sin_port);
	} else if (addr.ss_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)&addr)->sin6_port);
	}
	return 0;
}

static bool followed_port(const k8s_liveness_t *l, uint16_t port)
{
	for (size_t i = 0; port != 0 && i < l->port_count; i++) {
		if (l->ports[i] == port) {
			return true;
		}
	}
	return false;
}

static const k8s_liveness_socket_t *find_socket(const k8s_liveness_socket_t *socks, size_t count,
                                                ino_t ino)
{
	for (size_t i = 0; i < count; i++) {
		if (socks[i].ino == ino) {
			return &socks[i];
		}
	}
	return NULL;
}

/*!
 * \brief Looks at each of knotd's UDP listening sockets: false (with \a why) if one has had
 * a datagram waiting, none read, for the bound.
 */
static bool udp_workers_read(k8s_liveness_t *l, uint64_t now, char *why, size_t why_len)
{
	DIR *dir = (l->port_count > 0) ? opendir("/proc/self/fd") : NULL;
	if (dir == NULL) {
		return true;  // Nothing to follow, or no /proc: nothing known against knotd.
	}
	k8s_liveness_socket_t *seen = l->seen;
	size_t seen_count = 0;
	uint64_t worst = 0;
	uint16_t worst_port = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL && seen_count < K8S_LIVENESS_SOCKETS_MAX) {
		char *end = NULL;
		long fd = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end != '\0' || fd < 0 || fd == dirfd(dir)) {
			continue;
		}
		struct stat before, after;
		uint16_t port;
		if (fstat((int)fd, &before) != 0 || !S_ISSOCK(before.st_mode) ||
		    !followed_port(l, port = udp_port((int)fd))) {
			continue;
		}
		int queued = 0;
		struct timespec read_at;
		int64_t read_ns = -1;
		if (ioctl((int)fd, SIOCINQ, &queued) != 0) {
			continue;
		}
		if (ioctl((int)fd, SIOCGSTAMPNS, &read_at) == 0) {
			read_ns = (int64_t)read_at.tv_sec * 1000000000 + read_at.tv_nsec;
		} else if (errno != ENOENT) {  // ENOENT: nothing read since the stamps were on.
			continue;
		}
		// The descriptor may have been closed and reused meanwhile: the same socket only.
		if (fstat((int)fd, &after) != 0 || after.st_ino != before.st_ino) {
			continue;
		}
		const k8s_liveness_socket_t *old = find_socket(l->sockets, l->socket_count,
		                                               before.st_ino);
		if (find_socket(seen, seen_count, before.st_ino) != NULL) {
			continue;  // A duplicate descriptor of a socket seen already.
		}
		k8s_liveness_socket_t *s = &seen[seen_count++];
		s->ino = before.st_ino;
		s->read_ns = read_ns;
		s->unread_ms = k8s_liveness_unread_since(old, queued > 0, read_ns, now);
		if (s->unread_ms != 0 && now - s->unread_ms > worst) {
			worst = now - s->unread_ms;
			worst_port = port;
		}
	}
	closedir(dir);
	memcpy(l->sockets, seen, seen_count * sizeof(seen[0]));
	l->socket_count = seen_count;
	if (worst >= K8S_LIVENESS_BOUND_MS) {
		snprintf(why, why_len, "knotd's UDP workers left queries on port %u unread for %llu s",
		         (unsigned)worst_port, (unsigned long long)(worst / 1000));
		return false;
	}
	return true;
}

bool k8s_liveness_check(k8s_liveness_t *l, uint64_t now, char *why, size_t why_len)
{
	// The sockets are looked at every time: a wait is measured from its first sight.
	bool alive = udp_workers_read(l, now, why, why_len);
	char name[K8S_BEAT_NAME_MAX] = "";
	uint64_t late_ms = 0;
	if (k8s_beat_late(now, K8S_LIVENESS_BOUND_MS, name, sizeof(name), &late_ms)) {
		snprintf(why, why_len, "%s made no progress for %llu s", name,
		         (unsigned long long)(late_ms / 1000));
		return false;
	}
	return alive;
}
