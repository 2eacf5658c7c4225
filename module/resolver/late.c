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

#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <libknot/libknot.h>

#include "resolver/late.h"

/* knotd's udp-max-payload (IPv4, IPv6): written at load, read by the module's threads. */
static _Atomic uint16_t udp_max[2] = { K8S_LATE_EDNS_PAYLOAD, K8S_LATE_EDNS_PAYLOAD };

void k8s_late_udp_max_set(uint16_t ipv4, uint16_t ipv6)
{
	atomic_store(&udp_max[0], ipv4 < KNOT_WIRE_MIN_PKTSIZE ? KNOT_WIRE_MIN_PKTSIZE : ipv4);
	atomic_store(&udp_max[1], ipv6 < KNOT_WIRE_MIN_PKTSIZE ? KNOT_WIRE_MIN_PKTSIZE : ipv6);
}

uint16_t k8s_late_payload(int family)
{
	return atomic_load_explicit(&udp_max[family == AF_INET6], memory_order_relaxed);
}

size_t k8s_late_udp_limit(const knot_pkt_t *query, int family)
{
	if (query->opt_rr == NULL) {
		return KNOT_WIRE_MIN_PKTSIZE;
	}
	uint16_t payload = knot_edns_get_payload(query->opt_rr);
	uint16_t max = k8s_late_payload(family);
	if (payload < KNOT_WIRE_MIN_PKTSIZE) {
		return KNOT_WIRE_MIN_PKTSIZE;
	}
	return (payload < max) ? payload : max;
}

/*!
 * \brief Fills \a msg's control message with \a local as the source; false if there is
 * none to give (the kernel chooses).
 */
static bool source_set(struct msghdr *msg, uint8_t *cbuf, size_t cbuf_size,
                       const struct sockaddr_storage *remote,
                       const struct sockaddr_storage *local)
{
	if (local == NULL || local->ss_family != remote->ss_family) {
		return false;
	}
	memset(cbuf, 0, cbuf_size);
	msg->msg_control = cbuf;
	struct cmsghdr *cmsg = (struct cmsghdr *)cbuf;
	if (local->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)local;
		if (a->sin_addr.s_addr == htonl(INADDR_ANY)) {
			return false;
		}
		struct in_pktinfo info = { .ipi_spec_dst = a->sin_addr };
		msg->msg_controllen = CMSG_SPACE(sizeof(info));
		cmsg->cmsg_level = IPPROTO_IP;
		cmsg->cmsg_type = IP_PKTINFO;
		cmsg->cmsg_len = CMSG_LEN(sizeof(info));
		memcpy(CMSG_DATA(cmsg), &info, sizeof(info));
		return true;
	} else if (local->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)local;
		if (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr)) {
			return false;
		}
		struct in6_pktinfo info = { .ipi6_addr = a->sin6_addr };
		msg->msg_controllen = CMSG_SPACE(sizeof(info));
		cmsg->cmsg_level = IPPROTO_IPV6;
		cmsg->cmsg_type = IPV6_PKTINFO;
		cmsg->cmsg_len = CMSG_LEN(sizeof(info));
		memcpy(CMSG_DATA(cmsg), &info, sizeof(info));
		return true;
	}
	return false;
}

void k8s_late_send_from(int fd, bool tcp, const struct sockaddr_storage *remote,
                        const struct sockaddr_storage *local, uint8_t *buf, size_t size)
{
	ssize_t sent;
	if (tcp) {
		buf[0] = size >> 8;
		buf[1] = size & 0xff;
		sent = send(fd, buf, size + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else {
		struct iovec iov = { .iov_base = buf + 2, .iov_len = size };
		struct msghdr msg = {
			.msg_name = (void *)remote,
			.msg_namelen = (remote->ss_family == AF_INET6) ? sizeof(struct sockaddr_in6)
			                                               : sizeof(struct sockaddr_in),
			.msg_iov = &iov,
			.msg_iovlen = 1,
		};
		// Aligned for struct cmsghdr; room for the larger of the two.
		union {
			struct cmsghdr align;
			uint8_t buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		} cbuf;
		if (!source_set(&msg, cbuf.buf, sizeof(cbuf.buf), remote, local)) {
			msg.msg_control = NULL;
			msg.msg_controllen = 0;
		}
		sent = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	(void)sent;  // Like knotd's own: a client gone or a full buffer loses the answer.
}

void k8s_late_send(int fd, bool tcp, const struct sockaddr_storage *remote, uint8_t *buf,
                   size_t size)
{
	k8s_late_send_from(fd, tcp, remote, NULL, buf, size);
}
