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

/*!
 * \file
 *
 * A late answer: sent by a module thread, after the worker returned without one, from
 * knotd's own socket (forward_reply.c for names outside our zones, coldwait.c for cold
 * upstream names inside them).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/packet/pkt.h>

/*! The EDNS payload a late answer advertises and, over UDP, fills at most: knotd's default. */
#define K8S_LATE_EDNS_PAYLOAD 1232

/*!
 * \brief knotd's udp-max-payload for IPv4 and IPv6 clients (its server section's, which
 * its own answers keep to): late answers keep to them too. Set at load, before a late
 * answer is sent; K8S_LATE_EDNS_PAYLOAD until then.
 */
void k8s_late_udp_max_set(uint16_t ipv4, uint16_t ipv6);

/*! \brief The payload late answers advertise to a client of \a family. */
uint16_t k8s_late_payload(int family);

/*!
 * \brief How large a late answer to \a query from a client of \a family may be over UDP:
 * its EDNS payload, at most knotd's udp-max-payload (512 without EDNS).
 */
size_t k8s_late_udp_limit(const knot_pkt_t *query, int family);

/*!
 * \brief Sends the \a size bytes at \a buf + 2 to the client: on its TCP connection
 * (\a fd, a dup() of knotd's) with the length in \a buf's first two bytes, or from
 * knotd's UDP socket \a fd to \a remote. Never waits: a client gone or a full buffer
 * loses the answer, as with knotd's own.
 */
void k8s_late_send(int fd, bool tcp, const struct sockaddr_storage *remote, uint8_t *buf,
                   size_t size);

/*!
 * \brief As k8s_late_send(), over UDP from \a local, the address the query was sent to
 * (IP_PKTINFO / IPV6_PKTINFO): on a wildcard listener the kernel would choose the
 * source, and a client that connected its socket to another of our addresses drops
 * that answer. \a local NULL, of another family or a wildcard: the kernel chooses.
 */
void k8s_late_send_from(int fd, bool tcp, const struct sockaddr_storage *remote,
                        const struct sockaddr_storage *local, uint8_t *buf, size_t size);
