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
 * \brief Late answers for the module's own cold upstream names (ExternalName targets,
 * autopath's outside names, federation names, the K8S-DNS role's forwarding).
 *
 * A worker whose answer needs a name the upstream cache does not hold yet hands the
 * query over (a copy of its wire, the client's address, knotd's socket, dup()ed for
 * TCP, and the zone's SOA for a negative answer) into one of K8S_COLD_SLOTS slots
 * (compare-and-swap, never waiting, no allocation) and lets knotd send nothing. The
 * zone's thread re-runs the answer every K8S_COLD_TICK_MS while queries wait: once
 * the name is no longer cold, the answer is built there (under the RCU read lock,
 * registered with liburcu) and sent from knotd's socket; at K8S_COLD_DEADLINE_MS it
 * is SERVFAIL with Extended DNS Error 22 (No Reachable Authority).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "answer/answer.h"

/*!
 * \brief Queries waiting at once per zone, a quarter of them per client address; past
 * that, the worker answers SERVFAIL.
 */
#define K8S_COLD_SLOTS 64
/*! \brief Largest query handed over (bytes); a larger one is answered SERVFAIL at once. */
#define K8S_COLD_QUERY_MAX 512
/*! \brief A waiting query's deadline, then SERVFAIL with EDE 22. */
#define K8S_COLD_DEADLINE_MS 2000
/*! \brief How often waiting queries are tried again. */
#define K8S_COLD_TICK_MS 10

/*!
 * \brief Answers a query again (the waiter's thread, inside an RCU read-side section).
 *
 * \param lower   The query's name, lowercase.
 * \param remote  The client's address.
 * \param pkt     Response, positioned at the ANSWER section.
 * \param mm      Memory for the answer (flushed after it).
 * \param cold    Out: the answer still needs a name the upstream cache lacks.
 */
typedef k8s_answer_t (*k8s_cold_answer_fn)(void *ctx, const knot_pkt_t *query,
                                           const knot_dname_t *lower,
                                           const struct sockaddr_storage *remote,
                                           knot_pkt_t *pkt, knot_mm_t *mm, bool *cold);

typedef struct k8s_cold k8s_cold_t;

/*! \brief Starts a waiter and its thread; NULL on no memory or no thread. */
k8s_cold_t *k8s_cold_new(k8s_cold_answer_fn answer, void *ctx);

/*!
 * \brief Stops and joins the thread; waiting clients get nothing more (their TCP
 * duplicates are closed). No worker may remain. NULL is ignored.
 */
void k8s_cold_free(k8s_cold_t *w);

/*!
 * \brief Hands a query over (any thread; never blocks, allocates nothing; dup() for TCP).
 *
 * The client's address holds a quarter of the slots at most, and over TCP its share of
 * the process's TCP duplicates, the forwarder's counted with ours (resolver/slots.h,
 * k8s_hold_t).
 *
 * \param fd      knotd's socket the query came on.
 * \param remote  The client's address.
 * \param local   The address the query was sent to (the late answer's source over UDP),
 *                NULL or a wildcard if unknown: the kernel chooses then.
 * \param soa     The zone's SOA (the first record is copied), for a negative answer.
 *
 * \return False when refused (the address's share or the TCP duplicates used up, no
 *         free slot, query or SOA too large, dup failed).
 */
bool k8s_cold_handoff(k8s_cold_t *w, const uint8_t *wire, size_t len, int fd, bool tcp,
                      const struct sockaddr_storage *remote,
                      const struct sockaddr_storage *local, const knot_rrset_t *soa);
