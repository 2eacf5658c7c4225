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

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/mhdconns.h"

void k8s_mhdconns_init(k8s_mhdconns_t *cs, size_t max, k8s_mhdconns_way_t way,
                       uint64_t request_ms)
{
	CDS_INIT_LIST_HEAD(&cs->list);
	cs->capped = 0;
	cs->max = max;
	cs->way = way;
	cs->request_ms = request_ms;
}

k8s_mhdconn_t *k8s_mhdconns_add(k8s_mhdconns_t *cs, int fd, const struct sockaddr *addr,
                                uint64_t now_ms)
{
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) {
		return NULL;
	}
	k8s_mhdconn_t *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		return NULL;
	}
	c->set = cs;
	c->fd = fd;
	memcpy(&c->addr, addr, (addr->sa_family == AF_INET6) ? sizeof(struct sockaddr_in6)
	                                                     : sizeof(struct sockaddr_in));
	c->since_ms = now_ms;
	c->capped = true;
	cds_list_add_tail(&c->node, &cs->list);
	cs->capped++;
	return c;
}

void k8s_mhdconns_remove(k8s_mhdconn_t *c)
{
	if (c->capped && !c->closing) {
		c->set->capped--;
	}
	cds_list_del(&c->node);
	free(c);
}

void k8s_mhdconn_uncap(k8s_mhdconn_t *c)
{
	if (c->capped && !c->closing) {
		c->set->capped--;
	}
	c->capped = false;
}

void k8s_mhdconn_close(k8s_mhdconn_t *c)
{
	if (!c->closing) {
		c->closing = true;
		if (c->capped) {
			c->set->capped--;
		}
		(void)shutdown(c->fd, SHUT_RDWR);
	}
}

k8s_mhdconn_t *k8s_mhdconn_of(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return (info != NULL) ? info->socket_context : NULL;
}

k8s_mhdconn_t *k8s_mhdconns_notify(k8s_mhdconns_t *cs, struct MHD_Connection *connection,
                                   void **ctx, enum MHD_ConnectionNotificationCode code)
{
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (*ctx != NULL) {
			k8s_mhdconns_remove(*ctx);
			*ctx = NULL;
		}
		return NULL;
	}
	if (code != MHD_CONNECTION_NOTIFY_STARTED) {
		return NULL;
	}
	// Each answer is copied before the next call: libmicrohttpd 1.0 gives every answer
	// in the same place, so the address would overwrite the socket.
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
	int fd = (info != NULL) ? info->connect_fd : -1;
	info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *addr = (info != NULL) ? info->client_addr : NULL;
	k8s_mhdconn_t *c = (fd >= 0 && addr != NULL) ? k8s_mhdconns_add(cs, fd, addr, k8s_now_ms())
	                                             : NULL;
	if (c == NULL && fd >= 0) {
		// Cannot be watched: not served.
		(void)shutdown(fd, SHUT_RDWR);
	}
	*ctx = c;
	return c;
}

void k8s_mhdconns_completed(struct MHD_Connection *connection)
{
	k8s_mhdconn_t *c = k8s_mhdconn_of(connection);
	if (c != NULL) {
		c->answering = false;
		c->since_ms = k8s_now_ms();
	}
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family) {
		return false;
	}
	if (a->ss_family == AF_INET6) {
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		              &((const struct sockaddr_in6 *)b)->sin6_addr,
		              sizeof(struct in6_addr)) == 0;
	}
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

static bool counts(const k8s_mhdconn_t *c)
{
	return c->capped && !c->closing;
}

/*! \brief How many capped connections \a c's address holds (1 when addresses do not matter). */
static size_t held(const k8s_mhdconns_t *cs, const k8s_mhdconn_t *c)
{
	if (cs->way != K8S_MHDCONNS_OLDEST_OF_MOST) {
		return 1;
	}
	// The cap keeps the set small (the operations endpoint's: 33): counting by pairs is cheap.
	size_t n = 0;
	const k8s_mhdconn_t *other;
	cds_list_for_each_entry(other, &cs->list, node) {
		n += counts(other) && same_address(&c->addr, &other->addr);
	}
	return n;
}

k8s_mhdconn_t *k8s_mhdconns_victim(const k8s_mhdconns_t *cs)
{
	k8s_mhdconn_t *victim = NULL;
	size_t victim_held = 0;
	k8s_mhdconn_t *c;
	cds_list_for_each_entry(c, &cs->list, node) {
		if (!counts(c)) {
			continue;
		}
		size_t n = held(cs, c);
		if (victim == NULL || n > victim_held ||
		    (n == victim_held && c->since_ms < victim->since_ms)) {
			victim = c;
			victim_held = n;
		}
	}
	return victim;
}

size_t k8s_mhdconns_make_room(k8s_mhdconns_t *cs)
{
	size_t closed = 0;
	while (cs->capped > cs->max) {
		k8s_mhdconn_t *victim = k8s_mhdconns_victim(cs);
		if (victim == NULL) {
			break;
		}
		k8s_mhdconn_close(victim);
		closed++;
	}
	return closed;
}

int64_t k8s_mhdconns_expire(k8s_mhdconns_t *cs, uint64_t now_ms, size_t *closed)
{
	int64_t next = -1;
	k8s_mhdconn_t *c;
	cds_list_for_each_entry(c, &cs->list, node) {
		if (c->closing || c->answering) {
			continue;
		}
		uint64_t age = now_ms - c->since_ms;
		if (age >= cs->request_ms) {
			k8s_mhdconn_close(c);
			if (closed != NULL) {
				(*closed)++;
			}
		} else if (next < 0 || (int64_t)(cs->request_ms - age) < next) {
			next = (int64_t)(cs->request_ms - age);
		}
	}
	return next;
}
