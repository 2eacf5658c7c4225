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
 * \brief One DNS question to one server, driven by poll() without blocking.
 *
 * Each query is asked from a fresh UDP socket (a new source port) with a
 * random ID, RD and EDNS; a truncated answer is asked again over TCP. Only an
 * answer with our ID and question is taken: anything else on the UDP socket
 * is ignored, as a spoofed packet would be. The caller owns the clock: it
 * polls the descriptor, calls k8s_dnsquery_io() on readiness, and gives up
 * at the deadline.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "resolver/share.h"

/*! \brief Room for a query: header, name, question, OPT. */
#define K8S_DNSQUERY_MAX 512

/*!
 * \brief The tenant of the resolver's own queries (health and loop probes) in the
 * upstream sockets' pool.
 */
#define K8S_DNSQUERY_TENANT_PROBE 0

typedef enum {
	K8S_DNSQUERY_UDP = 0,
	K8S_DNSQUERY_TCP_CONNECT,
	K8S_DNSQUERY_TCP_SEND,
	K8S_DNSQUERY_TCP_RECV,
} k8s_dnsquery_state_t;

typedef struct {
	int fd;                        /*!< Descriptor to poll, -1 when closed. */
	k8s_dnsquery_state_t state;
	uint16_t id;
	uint16_t qtype;
	const knot_dname_t *qname;     /*!< The caller's; must outlive the query. */
	const struct sockaddr_storage *server;  /*!< Likewise. */
	uint16_t opt_code;             /*!< EDNS option to send, 0: none. */
	uint8_t opt_len;
	uint8_t opt_data[63];          /*!< Its value (a DNS label's text at most). */
	unsigned timeout_ms;
	uint64_t deadline_ms;          /*!< The caller gives up then (a switch to TCP moves it). */
	size_t size;                   /*!< Query bytes after the TCP length prefix. */
	size_t done;                   /*!< TCP: bytes sent, then bytes received (prefix too). */
	uint8_t tcp_len[2];            /*!< TCP: the answer's length prefix. */
	k8s_tenant_t tenant;           /*!< Who the query is asked for: its socket's tenant. */
	k8s_share_ref_t socket_ref;    /*!< Its unit of the upstream sockets (share.h). */
	k8s_share_ref_t bytes_ref;     /*!< TCP: \a tcp_buf's bytes of the TCP answers' pool. */
	uint8_t *tcp_buf;              /*!< TCP: the answer, its announced length. */
	uint8_t wire[2 + K8S_DNSQUERY_MAX]; /*!< TCP length prefix, then the query. */
} k8s_dnsquery_t;

/*!
 * \brief Sends the question over UDP from a fresh socket: the resolver's own (a probe's).
 *
 * Each query holds a unit of the process's upstream sockets (share.h) from its start to
 * its close, charged to its tenant; a TCP answer's buffer is its announced length, taken
 * from the TCP answers' bytes (4 MiB, share.h) when the length arrives, charged to the
 * server, so that hostile upstreams that announce 64 KiB and trickle hold their part,
 * and another upstream's answers still have theirs.
 *
 * \retval KNOT_EOK, or a negative KNOT_E* (socket errors as mapped from errno, KNOT_EBUSY
 *         when the tenant's part of the sockets is used); the query is closed then.
 */
int k8s_dnsquery_start(k8s_dnsquery_t *q, const struct sockaddr_storage *server,
                       const knot_dname_t *qname, uint16_t qtype, unsigned timeout_ms,
                       uint64_t now_ms);

/*!
 * \brief Like k8s_dnsquery_start(), for \a tenant, with an EDNS(0) option \a code of
 * \a len bytes (at most 63) in the query's OPT record (\a code 0: none), over TCP from
 * the start if \a tcp.
 */
int k8s_dnsquery_start_opt(k8s_dnsquery_t *q, const struct sockaddr_storage *server,
                           const knot_dname_t *qname, uint16_t qtype, uint16_t code,
                           const uint8_t *data, size_t len, bool tcp, unsigned timeout_ms,
                           uint64_t now_ms, k8s_tenant_t tenant);

/*! \brief The poll() events to wait for. */
short k8s_dnsquery_events(const k8s_dnsquery_t *q);

/*!
 * \brief Makes progress when the descriptor is ready.
 *
 * \param answer  Out: the parsed answer, to free with knot_pkt_free(), on KNOT_EOK.
 *
 * \retval KNOT_EOK      Our answer arrived (any RCODE).
 * \retval KNOT_EAGAIN   Nothing yet (or something that was not our answer): poll again.
 * \retval KNOT_EMALF    An answer with our ID that is no valid DNS message, or was
 *                       truncated over TCP.
 * \retval KNOT_ESPACE   A TCP answer not read: the server is past its part of the TCP
 *                       answers' bytes (a local limit, not the server's failure).
 * \retval other         Socket errors (e.g. KNOT_ECONNREFUSED), KNOT_ENOMEM.
 */
int k8s_dnsquery_io(k8s_dnsquery_t *q, uint64_t now_ms, knot_pkt_t **answer);

/*! \brief Closes the socket and frees buffers; safe on a closed query. */
void k8s_dnsquery_close(k8s_dnsquery_t *q);

/*! \brief Bytes of TCP answers held now, all queries together (for tests and logs). */
size_t k8s_dnsquery_tcp_bytes(void);

/*!
 * \brief Whether \a ret (from k8s_dnsquery_start() or k8s_dnsquery_io()) is a local
 * shortage (descriptors, memory, the sockets' or TCP bytes' pool), not the server's failure.
 */
bool k8s_dnsquery_local_error(int ret);
