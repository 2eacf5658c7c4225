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
 * TCP, and the zone's SOA for a negative answer) into a slot (compare-and-swap, never
 * waiting, no allocation) and lets knotd send nothing; the waiting queries are a pool
 * of K8S_COLD_SLOTS shared by the tenants (resolver/share.h). The zone's thread re-runs
 * the answer every K8S_COLD_TICK_MS while queries wait: once the name is no longer
 * cold, the answer is built there (under the RCU read lock, registered with liburcu)
 * and sent from knotd's socket; at the deadline (the zone's forward-timeout, else
 * K8S_COLD_DEADLINE_MS) it is SERVFAIL with Extended DNS Error 22 (No Reachable
 * Authority).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "answer/answer.h"
#include "lib/log.h"

/*!
 * \brief Queries waiting at once per zone: a pool's cap, shared by the tenants with its
 * headroom (resolver/share.h); past a tenant's part, the worker answers SERVFAIL.
 */
#define K8S_COLD_SLOTS 64
/*! \brief Largest query handed over (bytes); a larger one is answered SERVFAIL at once. */
#define K8S_COLD_QUERY_MAX 512
/*! \brief A waiting query's deadline without forward-timeout, then SERVFAIL with EDE 22. */
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

/*!
 * \brief Starts a waiter and its thread, whose queries wait \a deadline_ms (0: the
 * default) and whose pool is labelled \a owner (copied: the zone's name); its lines go
 * to \a log. NULL on no memory or no thread.
 */
k8s_cold_t *k8s_cold_new(k8s_cold_answer_fn answer, void *ctx, const char *owner,
                         unsigned deadline_ms, const k8s_log_t *log);

/*!
 * \brief Stops and joins the thread; waiting clients get nothing more (their TCP
 * duplicates are closed). No worker may remain. NULL is ignored.
 */
void k8s_cold_free(k8s_cold_t *w);

/*!
 * \brief Hands a query over (any thread; never blocks, allocates nothing; dup() for TCP).
 *
 * The query holds a unit of the waiting queries, and over TCP one of the process's TCP
 * duplicates (the forwarders' counted with ours), both charged to \a tenant
 * (resolver/slots.h, k8s_hold_t): refused when the tenant is past its part of a full pool.
 *
 * \param fd      knotd's socket the query came on.
 * \param remote  The client's address.
 * \param local   The address the query was sent to (the late answer's source over UDP),
 *                NULL or a wildcard if unknown: the kernel chooses then.
 * \param soa     The zone's SOA (the first record is copied), for a negative answer.
 *
 * \param tenant  Who it is charged to: the client pod's namespace, else its address.
 *
 * \return False when refused (a pool, no free slot, query or SOA too large, dup failed).
 */
bool k8s_cold_handoff(k8s_cold_t *w, const uint8_t *wire, size_t len, int fd, bool tcp,
                      const struct sockaddr_storage *remote,
                      const struct sockaddr_storage *local, const knot_rrset_t *soa,
                      k8s_tenant_t tenant);
