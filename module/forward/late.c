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

#include <sys/socket.h>
#include <netinet/in.h>

#include <libknot/libknot.h>

#include "late.h"

size_t k8s_late_udp_limit(const knot_pkt_t *query)
{
	if (query->opt_rr == NULL) {
		return KNOT_WIRE_MIN_PKTSIZE;
	}
	uint16_t payload = knot_edns_get_payload(query->opt_rr);
	if (payload < KNOT_WIRE_MIN_PKTSIZE) {
		return KNOT_WIRE_MIN_PKTSIZE;
	}
	return (payload < K8S_LATE_EDNS_PAYLOAD) ? payload : K8S_LATE_EDNS_PAYLOAD;
}

void k8s_late_send(int fd, bool tcp, const struct sockaddr_storage *remote, uint8_t *buf,
                   size_t size)
{
	ssize_t sent;
	if (tcp) {
		buf[0] = size >> 8;
		buf[1] = size & 0xff;
		sent = send(fd, buf, size + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else {
		socklen_t len = (remote->ss_family == AF_INET6) ? sizeof(struct sockaddr_in6)
		                                                : sizeof(struct sockaddr_in);
		sent = sendto(fd, buf + 2, size, MSG_DONTWAIT | MSG_NOSIGNAL,
		              (const struct sockaddr *)remote, len);
	}
	(void)sent;  // Like knotd's own: a client gone or a full buffer loses the answer.
}
