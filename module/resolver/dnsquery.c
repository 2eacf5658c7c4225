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

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "resolver/dnsquery.h"

#define EDNS_PAYLOAD 1232
/*! \brief Largest UDP answer read; more than we advertise, so a larger one is malformed. */
#define UDP_MAX 4096

static socklen_t addr_len(const struct sockaddr_storage *addr)
{
	return (addr->ss_family == AF_INET6) ? sizeof(struct sockaddr_in6)
	                                     : sizeof(struct sockaddr_in);
}

static bool again(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

/*! \brief Writes the query (random ID, RD, EDNS) after the TCP length prefix. */
static int build(k8s_dnsquery_t *q)
{
	if (getrandom(&q->id, sizeof(q->id), 0) != sizeof(q->id)) {
		return knot_map_errno();
	}
	knot_pkt_t *pkt = knot_pkt_new(NULL, K8S_DNSQUERY_MAX, NULL);
	if (pkt == NULL) {
		return KNOT_ENOMEM;
	}
	knot_wire_set_id(pkt->wire, q->id);
	knot_wire_set_rd(pkt->wire);
	int ret = knot_pkt_put_question(pkt, q->qname, KNOT_CLASS_IN, q->qtype);
	if (ret == KNOT_EOK) {
		ret = knot_pkt_begin(pkt, KNOT_ADDITIONAL);
	}
	knot_rrset_t opt;
	if (ret == KNOT_EOK) {
		ret = knot_edns_init(&opt, EDNS_PAYLOAD, 0, 0, &pkt->mm);
		if (ret == KNOT_EOK && q->opt_code != 0) {
			ret = knot_edns_add_option(&opt, q->opt_code, q->opt_len, q->opt_data, &pkt->mm);
		}
		if (ret == KNOT_EOK) {
			ret = knot_pkt_put(pkt, KNOT_COMPR_HINT_NONE, &opt, KNOT_PF_FREE);
			if (ret != KNOT_EOK) {
				knot_rrset_clear(&opt, &pkt->mm);
			}
		}
	}
	if (ret == KNOT_EOK) {
		q->size = pkt->size;
		q->wire[0] = pkt->size >> 8;
		q->wire[1] = pkt->size & 0xff;
		memcpy(q->wire + 2, pkt->wire, pkt->size);
	}
	knot_pkt_free(pkt);
	return ret;
}

/*!
 * \brief A fresh non-blocking socket connected to the server (a fresh source port for UDP),
 * once the name's tenant has its unit of the process's upstream sockets (kept from UDP to TCP).
 */
static int open_socket(k8s_dnsquery_t *q, int type)
{
	if (q->socket_ref.units == 0 &&
	    !k8s_share_take(k8s_share_sockets(), q->tenant, 1, &q->socket_ref)) {
		return KNOT_EBUSY;
	}
	q->fd = socket(q->server->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->fd < 0) {
		return knot_map_errno();
	}
	if (connect(q->fd, (const struct sockaddr *)q->server, addr_len(q->server)) != 0 &&
	    errno != EINPROGRESS) {
		int ret = knot_map_errno();
		close(q->fd);
		q->fd = -1;
		return ret;
	}
	return KNOT_EOK;
}

int k8s_dnsquery_start(k8s_dnsquery_t *q, const struct sockaddr_storage *server,
                       const knot_dname_t *qname, uint16_t qtype, unsigned timeout_ms,
                       uint64_t now_ms)
{
	return k8s_dnsquery_start_opt(q, server, qname, qtype, 0, NULL, 0, false, timeout_ms,
	                              now_ms, K8S_DNSQUERY_TENANT_PROBE);
}

int k8s_dnsquery_start_opt(k8s_dnsquery_t *q, const struct sockaddr_storage *server,
                           const knot_dname_t *qname, uint16_t qtype, uint16_t code,
                           const uint8_t *data, size_t len, bool tcp, unsigned timeout_ms,
                           uint64_t now_ms, k8s_tenant_t tenant)
{
	memset(q, 0, sizeof(*q));
	q->tenant = tenant;
	if (len > sizeof(q->opt_data)) {
		q->fd = -1;
		return KNOT_EINVAL;
	}
	q->opt_code = (len > 0 || code != 0) ? code : 0;
	q->opt_len = len;
	if (len > 0) {
		memcpy(q->opt_data, data, len);
	}
	q->fd = -1;
	q->state = K8S_DNSQUERY_UDP;
	q->qname = qname;
	q->qtype = qtype;
	q->server = server;
	q->timeout_ms = timeout_ms;
	q->deadline_ms = now_ms + timeout_ms;

	int ret = build(q);
	if (ret == KNOT_EOK && tcp) {
		q->state = K8S_DNSQUERY_TCP_CONNECT;
		ret = open_socket(q, SOCK_STREAM);
	} else if (ret == KNOT_EOK) {
		ret = open_socket(q, SOCK_DGRAM);
		if (ret == KNOT_EOK && send(q->fd, q->wire + 2, q->size, 0) < 0) {
			ret = knot_map_errno();
		}
	}
	if (ret != KNOT_EOK) {
		k8s_dnsquery_close(q);
	}
	return ret;
}

short k8s_dnsquery_events(const k8s_dnsquery_t *q)
{
	switch (q->state) {
	case K8S_DNSQUERY_TCP_CONNECT:
	case K8S_DNSQUERY_TCP_SEND:
		return POLLOUT;
	default:
		return POLLIN;
	}
}

/*! \brief The UDP answer was truncated: ask again over TCP, within a fresh timeout. */
static int switch_to_tcp(k8s_dnsquery_t *q, uint64_t now_ms)
{
	close(q->fd);
	q->state = K8S_DNSQUERY_TCP_CONNECT;
	q->deadline_ms = now_ms + q->timeout_ms;
	q->done = 0;
	return open_socket(q, SOCK_STREAM);
}

/*!
 * \brief Takes a message that may be our answer.
 *
 * \retval KNOT_EAGAIN if it is not (wrong ID or question): it is ignored.
 */
static int take(k8s_dnsquery_t *q, const uint8_t *wire, size_t len, uint64_t now_ms,
                knot_pkt_t **answer)
{
	if (len < KNOT_WIRE_HEADER_SIZE || knot_wire_get_id(wire) != q->id ||
	    !knot_wire_get_qr(wire)) {
		return KNOT_EAGAIN;
	}
	if (knot_wire_get_tc(wire)) {
		if (q->state != K8S_DNSQUERY_UDP) {
			return KNOT_EMALF;
		}
		int ret = switch_to_tcp(q, now_ms);
		return (ret == KNOT_EOK) ? KNOT_EAGAIN : ret;
	}

	knot_pkt_t *pkt = knot_pkt_new(NULL, len, NULL);
	if (pkt == NULL) {
		return KNOT_ENOMEM;
	}
	memcpy(pkt->wire, wire, len);
	pkt->size = len;
	int ret = knot_pkt_parse(pkt, 0);
	if (ret != KNOT_EOK && ret != KNOT_ETRAIL) {
		knot_pkt_free(pkt);
		return KNOT_EMALF;
	}
	if (knot_wire_get_qdcount(wire) != 1 || knot_pkt_qtype(pkt) != q->qtype ||
	    knot_pkt_qclass(pkt) != KNOT_CLASS_IN ||
	    !knot_dname_is_case_equal(knot_pkt_qname(pkt), q->qname)) {
		knot_pkt_free(pkt);
		return KNOT_EAGAIN;
	}
	*answer = pkt;
	return KNOT_EOK;
}

static int udp_io(k8s_dnsquery_t *q, uint64_t now_ms, knot_pkt_t **answer)
{
	uint8_t buf[UDP_MAX];
	for (;;) {
		ssize_t len = recv(q->fd, buf, sizeof(buf), MSG_TRUNC);
		if (len < 0) {
			return again(errno) ? KNOT_EAGAIN : knot_map_errno();
		}
		if (len > (ssize_t)sizeof(buf)) {
			// Larger than we asked for: truncated by us, useless.
			if (len >= KNOT_WIRE_HEADER_SIZE && knot_wire_get_id(buf) == q->id) {
				return KNOT_EMALF;
			}
			continue;
		}
		int ret = take(q, buf, len, now_ms, answer);
		if (ret != KNOT_EAGAIN || q->state != K8S_DNSQUERY_UDP) {
			return ret;
		}
	}
}

static int tcp_send(k8s_dnsquery_t *q)
{
	if (q->state == K8S_DNSQUERY_TCP_CONNECT) {
		int err = 0;
		socklen_t err_len = sizeof(err);
		if (getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) {
			return knot_map_errno();
		}
		if (err != 0) {
			return knot_map_errno_code(err);
		}
		q->state = K8S_DNSQUERY_TCP_SEND;
	}
	ssize_t sent = send(q->fd, q->wire + q->done, 2 + q->size - q->done, MSG_NOSIGNAL);
	if (sent < 0) {
		return again(errno) ? KNOT_EAGAIN : knot_map_errno();
	}
	q->done += sent;
	if (q->done < 2 + q->size) {
		return KNOT_EAGAIN;
	}
	q->state = K8S_DNSQUERY_TCP_RECV;
	q->done = 0;
	return KNOT_EAGAIN;
}

/*!
 * \brief Takes \a len bytes of the TCP answers' pool for the answer's buffer, charged to
 * its server (an upstream's share), or KNOT_ESPACE.
 */
static int tcp_buf_take(k8s_dnsquery_t *q, size_t len)
{
	k8s_share_t *bytes = k8s_share_tcp_bytes();
	if (!k8s_share_take(bytes, k8s_tenant_upstream(q->server), len, &q->bytes_ref)) {
		return KNOT_ESPACE;
	}
	q->tcp_buf = malloc(len);
	if (q->tcp_buf == NULL) {
		k8s_share_put(bytes, &q->bytes_ref);
		return KNOT_ENOMEM;
	}
	return KNOT_EOK;
}

static int tcp_recv(k8s_dnsquery_t *q, uint64_t now_ms, knot_pkt_t **answer)
{
	// The length first, then a buffer of that size (what the server announces, no more).
	bool prefix = (q->done < sizeof(q->tcp_len));
	size_t need = prefix ? sizeof(q->tcp_len) : 2 + ((size_t)q->tcp_len[0] << 8 | q->tcp_len[1]);
	uint8_t *to = prefix ? q->tcp_len + q->done : q->tcp_buf + q->done - 2;
	ssize_t got = recv(q->fd, to, need - q->done, 0);
	if (got < 0) {
		return again(errno) ? KNOT_EAGAIN : knot_map_errno();
	} else if (got == 0) {
		return KNOT_ECONN;
	}
	q->done += got;
	if (prefix) {
		if (q->done < sizeof(q->tcp_len)) {
			return KNOT_EAGAIN;
		}
		size_t len = (size_t)q->tcp_len[0] << 8 | q->tcp_len[1];
		if (len < KNOT_WIRE_HEADER_SIZE) {
			return KNOT_EMALF;
		}
		int ret = tcp_buf_take(q, len);
		return (ret == KNOT_EOK) ? KNOT_EAGAIN : ret;
	}
	if (q->done < need) {
		return KNOT_EAGAIN;
	}
	// On a connection of our own, anything but our answer is a broken server.
	int ret = take(q, q->tcp_buf, need - 2, now_ms, answer);
	return (ret == KNOT_EAGAIN) ? KNOT_EMALF : ret;
}

int k8s_dnsquery_io(k8s_dnsquery_t *q, uint64_t now_ms, knot_pkt_t **answer)
{
	switch (q->state) {
	case K8S_DNSQUERY_UDP:
		return udp_io(q, now_ms, answer);
	case K8S_DNSQUERY_TCP_CONNECT:
	case K8S_DNSQUERY_TCP_SEND:
		return tcp_send(q);
	default:
		return tcp_recv(q, now_ms, answer);
	}
}

void k8s_dnsquery_close(k8s_dnsquery_t *q)
{
	if (q->fd >= 0) {
		close(q->fd);
		q->fd = -1;
	}
	free(q->tcp_buf);
	q->tcp_buf = NULL;
	k8s_share_put(k8s_share_tcp_bytes(), &q->bytes_ref);
	k8s_share_put(k8s_share_sockets(), &q->socket_ref);
}

size_t k8s_dnsquery_tcp_bytes(void)
{
	return k8s_share_used(k8s_share_tcp_bytes());
}

bool k8s_dnsquery_local_error(int ret)
{
	switch (ret) {
	case KNOT_EMFILE:
	case KNOT_ENFILE:
	case KNOT_ENOMEM:
	case KNOT_ENOBUFS:
	case KNOT_ESPACE:
	case KNOT_EBUSY:
		return true;
	default:
		return false;
	}
}
