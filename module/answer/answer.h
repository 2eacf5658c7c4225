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
 * \brief Answers from the record table into knotd's response packet.
 *
 * Called from the ANSWER (and ADDITIONAL) stage of a zone attached to mod-k8s
 * when the zone file has no answer. Prebuilt answers (service A/AAAA) are put
 * without copying; what must be composed (SRV, PTR, pod and endpoint
 * addresses) comes from the packet's mempool. No knotd call is made here.
 * The implementation is split by record family (answer_priv.h says where).
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libknot/libknot.h>

#include "answer/fedname.h"
#include "answer/outcome.h"
#include "answer/qname.h"
#include "table/table.h"
#include "forward/keeper.h"
#include "resolver/upstream.h"

typedef enum {
	K8S_PODS_DISABLED = 0,  /*!< No pod records. */
	K8S_PODS_INSECURE,      /*!< Any dashed address in an existing namespace. */
	K8S_PODS_VERIFIED,      /*!< Only addresses of live pods in that namespace. */
} k8s_pods_mode_t;


/*! \brief Per-zone answer settings, fixed at load. */
typedef struct {
	k8s_role_t role;
	const knot_dname_t *zone;               /*!< This zone's apex, lowercase. */
	uint8_t zone_labels;                    /*!< Its labels (0: counted per query). */
	const knot_dname_t *domains[K8S_ZONE_COUNT]; /*!< Cluster and clusterset domains (PTR targets). */
	uint32_t ttl;                           /*!< TTL of synthesized records. */
	knot_rdataset_t version;                /*!< dns-version TXT rdata of this zone. */
	uint8_t pods;                           /*!< k8s_pods_mode_t. */
	bool ignore_empty;                      /*!< ClusterIP services without ready endpoints are NXDOMAIN. */
	const k8s_keeper_t *upstream;           /*!< Kept names outside our zones (ExternalName targets), or NULL. */
	uint16_t autopath_option;               /*!< EDNS option code of a search list (autopath zone), 0: none. */
	bool autopath;                          /*!< Client-address autopath (cluster zones). */
	const knot_dname_t *const *host_search; /*!< The host's search domains, the end of every walk. */
	size_t host_search_count;
	const k8s_federation_t *federations;    /*!< Configured federations (cluster zones). */
	size_t federation_count;
	const k8s_topology_t *topology;         /*!< Static federation topology, or NULL: the table's. */
	bool zonal;                             /*!< Zonal names of headless services (cluster zones). */
	const uint8_t *ext_apex;                /*!< External zone: the apex label (wire), e.g. "\x03dns". */
	uint32_t ext_ttl;                       /*!< External zone: TTL of its A and AAAA records. */
	bool ext_headless;                      /*!< External zone: headless services' endpoints too. */
} k8s_answer_conf_t;

/*! \brief TTL of dns-version, as in the specification's example. */
#define K8S_VERSION_TTL 28800

/*! \brief Most domains of an autopath EDNS search list (a pod's search list holds 32). */
#define K8S_AUTOPATH_MAX_LISTED 32

/*! \brief Most host search domains (option autopath-host-search): 32 less the cluster's three. */
#define K8S_AUTOPATH_MAX_HOST 29

/*! \brief How an autopath walk ended: at which step of the search list, or why not. */
typedef enum {
	K8S_AUTOPATH_NONE = 0,     /*!< No walk: not an autopath query. */
	K8S_AUTOPATH_NAMESPACE,    /*!< Found at <name>.<ns>.svc.<zone> (KEP form). */
	K8S_AUTOPATH_SVC,          /*!< Found at <name>.svc.<zone>. */
	K8S_AUTOPATH_CLUSTER,      /*!< Found at <name>.<zone>. */
	K8S_AUTOPATH_HOST,         /*!< Found below a host search domain. */
	K8S_AUTOPATH_LISTED,       /*!< Found below a domain of the EDNS search list. */
	K8S_AUTOPATH_NAME,         /*!< Found at the name itself. */
	K8S_AUTOPATH_FELL_THROUGH, /*!< No name exists (or none can be known without waiting): NXDOMAIN. */
	K8S_AUTOPATH_COLD,         /*!< A name outside our zones is not resolved yet: NXDOMAIN. */
	K8S_AUTOPATH_REFUSED,      /*!< The EDNS search list is over the limit: REFUSED. */
	K8S_AUTOPATH_COUNT
} k8s_autopath_outcome_t;

/*! \brief The K8S_READY_* bits a zone of \a role waits for (SERVFAIL, EDE 14 until then). */
static inline uint32_t k8s_answer_ready_bits(k8s_role_t role)
{
	switch (role) {
	case K8S_ROLE_CLUSTERSET: return K8S_READY_CLUSTERSET;
	case K8S_ROLE_REVERSE:    return K8S_READY_CLUSTER | K8S_READY_PTR;
	default:                  return K8S_READY_CLUSTER;
	}
}

/*!
 * \brief Who a query from \a remote is charged to in the resolver's pools (share.h): its
 * pod's namespace when \a t (NULL: none) knows the address as one namespace's pods (pods
 * are watched with `pods: verified` or client-address autopath), else its whole address.
 * Reads the table as an answer does (inside an RCU read-side section).
 */
k8s_tenant_t k8s_answer_tenant(const k8s_table_t *t, const struct sockaddr_storage *remote);

/*!
 * \brief Answers a query of the zone: the one dispatcher of every role answered
 * from a record table (K8S_ROLE_FEDERATED answers from its members', fedserve.h).
 *
 * The K8S-DNS role forwards at once; every other role first waits for the
 * table's readiness (K8S_ANSWER_NOTREADY until then, checked here only). A
 * cluster zone with \a conf->autopath walks a pod's search list for a name
 * that does not exist (the client-address form); an autopath zone walks every
 * query (the KEP form).
 *
 * \param qname    Lowercase query name (knotd's qdata->name).
 * \param qtype    Query type.
 * \param query    The query (its EDNS options), or NULL.
 * \param remote   The client's address (client-address autopath), or NULL.
 * \param pkt      Response, positioned at the ANSWER section.
 * \param mm       Per-query memory (knotd's qdata->mm).
 * \param outcome  Out: how an autopath walk ended, K8S_AUTOPATH_NONE without one.
 */
k8s_answer_t k8s_answer(const k8s_answer_conf_t *conf, const k8s_table_t *t,
                        const knot_dname_t *qname, uint16_t qtype, const knot_pkt_t *query,
                        const struct sockaddr_storage *remote, knot_pkt_t *pkt, knot_mm_t *mm,
                        k8s_autopath_outcome_t *outcome);

/*!
 * \brief k8s_answer() of a name a rewrite rule made (rewrite.h): the records owned by
 * \a qname are written under \a shown (what the rule's answer options map it to), or
 * under the question's name when \a shown is NULL.
 */
k8s_answer_t k8s_answer_as(const k8s_answer_conf_t *conf, const k8s_table_t *t,
                           const knot_dname_t *qname, const knot_dname_t *shown, uint16_t qtype,
                           const knot_pkt_t *query, const struct sockaddr_storage *remote,
                           knot_pkt_t *pkt, knot_mm_t *mm, k8s_autopath_outcome_t *outcome);

/*!
 * \brief Forgets the previous query's SRV answer on this thread.
 *
 * knotd reuses a worker's packet for the next query; call this first in every
 * ANSWER-stage hook so that an ADDITIONAL stage never sees another query's SRV.
 */
void k8s_answer_forget(void);

/*!
 * \brief Notes, on this thread, that the answer being built met a name the upstream
 * cache does not hold yet (its SERVFAIL is a cold name's, answered late if it can be).
 */
void k8s_answer_cold_note(void);

/*!
 * \brief Puts an upstream's cached answer for the query's name (a CNAME chain, then
 * addresses) in \a pkt: the K8S-DNS role's answer from its nameservers (fedfwd.h).
 */
k8s_answer_t k8s_answer_relay(knot_pkt_t *pkt, uint16_t qtype, const k8s_fwd_entry_t *ans);

/*! \brief Set by k8s_answer_cold_note() (initial-exec: read on every query). */
extern __thread bool k8s_answer_cold_met __attribute__((tls_model("initial-exec")));

/*!
 * \brief Whether this thread's answer met a cold name since the last call; clears the
 * note (inline: every query clears it).
 */
static inline bool k8s_answer_cold_take(void)
{
	bool met = k8s_answer_cold_met;
	k8s_answer_cold_met = false;
	return met;
}

/*!
 * \brief Adds the addresses of SRV targets that k8s_answer() just put in \a pkt.
 *
 * Called in the ADDITIONAL stage of the same query on the same thread; uses
 * the same service block as the answer. What does not fit is left out.
 */
void k8s_answer_additional(const k8s_answer_conf_t *conf, const knot_pkt_t *answered,
                           knot_pkt_t *pkt, knot_mm_t *mm);

/*! \brief Builds a TXT rdataset holding one string (for dns-version). */
int k8s_answer_txt(knot_rdataset_t *rrs, const char *text);
