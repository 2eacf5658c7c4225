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
 * \brief /health's verdict, as CoreDNS's health plugin's: the process is alive, and
 * nothing in it that has work is wedged. No DNS query is sent: a flood that makes knotd
 * drop queries does not make it fail (the kubelet would restart knotd into a cold cache,
 * and the flood with it).
 *
 * Wedged is one of:
 * - a module thread that owes progress for K8S_LIVENESS_BOUND_MS (lib/beat.h: the
 *   watchers, every forwarder with its kept names, the cold waiters, the kube-dns
 *   ConfigMap watch, the endpoints);
 * - one of knotd's UDP listening sockets with a datagram waiting while none was read
 *   from it for K8S_LIVENESS_BOUND_MS: its worker is stuck. Read from the socket, not
 *   from the queries the module counts, so that datagrams knotd reads and drops
 *   unanswered (responses, garbage) count as progress too: the kernel's timestamp of the
 *   last datagram a worker took (SIOCGSTAMPNS, which turns the kernel's receive
 *   timestamps on; it adds no control message to knotd's reads) and the queue
 *   (SIOCINQ), on knotd's own descriptors.
 *
 * A flood keeps knotd's workers reading and never holds a module thread back for
 * seconds: it cannot fail /health. knotd's TCP and XDP workers are not watched.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*!
 * \brief How long a thread may owe progress, or a datagram wait unread, before /health
 * fails: longer than any step of a thread at the design's scale (the first commit of a
 * 5,000-node cluster takes seconds), and the kubelet waits its failureThreshold on top.
 */
#define K8S_LIVENESS_BOUND_MS 30000
/*! \brief knotd's UDP listening ports followed (server.listen; more are not watched). */
#define K8S_LIVENESS_PORTS_MAX 16
/*! \brief knotd's UDP listening sockets followed (one per UDP worker and address). */
#define K8S_LIVENESS_SOCKETS_MAX 512

/*! \brief One of knotd's UDP listening sockets, as last seen. */
typedef struct {
	ino_t ino;             /*!< The socket's inode: the same socket, whatever its descriptor. */
	int64_t read_ns;       /*!< Kernel timestamp of the last datagram read (-1: none yet). */
	uint64_t unread_ms;    /*!< A datagram waits, none read since (k8s_now_ms()); 0: none. */
} k8s_liveness_socket_t;

/*! \brief What /health follows between two checks (the endpoint's thread's alone). */
typedef struct {
	uint16_t ports[K8S_LIVENESS_PORTS_MAX];   /*!< knotd's UDP listening ports, host order. */
	size_t port_count;
	k8s_liveness_socket_t sockets[K8S_LIVENESS_SOCKETS_MAX];
	size_t socket_count;
	k8s_liveness_socket_t seen[K8S_LIVENESS_SOCKETS_MAX];   /*!< A check's scratch. */
} k8s_liveness_t;

/*! \brief Follows knotd's UDP listening \a port too (its first K8S_LIVENESS_PORTS_MAX). */
void k8s_liveness_add_port(k8s_liveness_t *l, uint16_t port);

/*!
 * \brief The verdict at \a now (k8s_now_ms()): true if alive, else false with the reason
 * in \a why ("watcher 0123abcd0123abcd made no progress for 31 s").
 */
bool k8s_liveness_check(k8s_liveness_t *l, uint64_t now, char *why, size_t why_len);

/*!
 * \brief One socket's step (pure, for tests): \a old its last state (NULL if new),
 * \a queued whether a datagram waits, \a read_ns the last read's timestamp; returns
 * the new state's unread_ms.
 */
uint64_t k8s_liveness_unread_since(const k8s_liveness_socket_t *old, bool queued,
                                   int64_t read_ns, uint64_t now);
