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
 * \brief The K8S-DNS role of federated service discovery: a member cluster's
 * knotd forwards every query below <federation>.svc.federation. to that
 * federation's nameservers (its Federated-DNS), with this cluster's name in the
 * source-cluster EDNS(0) option, and returns their answer.
 *
 * Workers never wait: answers come from a forwarder per federation (the one
 * resolver core, its nameservers as default servers: keeper.h's kept names, keyed
 * by name, type and source cluster); a name not cached yet is handed to its thread,
 * and its query to the zone's cold waiter (coldwait.h), as a cold ExternalName
 * target's is. The stub zones (federation -> nameservers, with each one's
 * forwarder) are an immutable view that workers read under RCU; the programming endpoint
 * (fedapi.h) replaces it with a pointer swap, persisting programmed federations
 * first. No knotd call is made here.
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <libknot/libknot.h>

#include "answer/answer.h"
#include "answer/fedname.h"
#include "federation/fedstub.h"
#include "lib/log.h"
#include "resolver/upstream.h"

/*! \brief Per-attempt timeout of a forwarded query (three attempts, over the nameservers). */
#define K8S_FEDFWD_TIMEOUT_MS 2000

typedef struct k8s_fedfwd k8s_fedfwd_t;

/*!
 * \brief Starts the role: loads the programmed federations persisted in
 * \a state_path (a bad file is logged and ignored), merges them with the
 * configured ones, starts the forwarder.
 *
 * \param source      This cluster's name (a wire label), the source-cluster option's value.
 * \param configured  federation-nameservers (taken over; may be NULL).
 * \param state_path  Where programmed federations persist (copied), or NULL: not at all.
 *
 * \return The role, or NULL (no memory, no thread; \a configured is freed).
 */
k8s_fedfwd_t *k8s_fedfwd_new(const uint8_t *source, k8s_fedstub_set_t *configured,
                             const char *state_path, const k8s_log_t *log);

/*! \brief Stops the forwarder and frees everything; no reader may remain. */
void k8s_fedfwd_free(k8s_fedfwd_t *f);

/*!
 * \brief Programs a federation's nameservers (\a fed), or deletes the programmed
 * federation \a name (\a fed NULL). Persists first: a change that cannot be
 * written is not made. Takes effect for the next query; the forwarder asks its
 * kept names again from the new nameservers. Any thread but a worker (it waits
 * for readers to leave the old set).
 *
 * \retval KNOT_EOK
 * \retval KNOT_ENOENT  Deleting a federation that is not programmed.
 * \retval KNOT_ELIMIT  K8S_FEDSTUB_MAX_FEDS programmed already.
 * \retval KNOT_E*      Writing the file failed, or no memory.
 */
int k8s_fedfwd_program(k8s_fedfwd_t *f, const uint8_t *name, const k8s_fedstub_t *fed);

/*!
 * \brief The stub zone of the federation \a qname is below (inside an RCU read-side
 * section), or NULL: at the zone's apex (\a apex set true) or for a federation
 * with no stub zone. The answer is k8s_fedfwd_answer().
 */
const k8s_fedstub_t *k8s_fedfwd_stub(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                                     bool *apex);

/*!
 * \brief The federation's nameservers' answer for \a qname and \a qtype from the
 * forwarder's cache (K8S_UPSTREAM_READY, \a ans set), or else the name asked of the
 * forwarder's thread for the client at \a remote (its tenant; busy slots: the client's
 * retry asks again). Never waits.
 */
k8s_upstream_status_t k8s_fedfwd_lookup(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                                        uint16_t qtype, const struct sockaddr_storage *remote,
                                        const k8s_fwd_entry_t **ans);

/*! \brief The current set of stub zones (inside an RCU read-side section). */
const k8s_fedstub_set_t *k8s_fedfwd_set(const k8s_fedfwd_t *f);

/*!
 * \brief Answers a query of the K8S-DNS zone (svc.federation., inside an RCU read-side
 * section; the glue calls it for K8S_ROLE_FEDFORWARD): PASS at the apex, REFUSED for a federation with no nameservers, NODATA for
 * types other than A and AAAA (the Federated-DNS answers addresses), else the cached
 * answer of the federation's nameservers, or SERVFAIL while it is cold (the name asked
 * for the client at \a remote).
 */
k8s_answer_t k8s_fedfwd_answer(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                               uint16_t qtype, const struct sockaddr_storage *remote,
                               knot_pkt_t *pkt);
