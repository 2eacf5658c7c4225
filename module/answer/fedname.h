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
 * \brief Federated service names (kube-dns's federations): which queries ask
 * for a federated service, and the names they are answered with.
 *
 * A query <svc>.<ns>.<fed>.svc.<zone>, where <fed> is a configured federation,
 * names a federated service. It is answered with a CNAME: to the local service
 * <svc>.<ns>.svc.<zone> when that one has endpoints, else to the federation's
 * name for this cluster's zone and region,
 * <svc>.<ns>.<fed>.svc.<node-zone>.<node-region>.<domain> (or
 * <svc>.<ns>.<fed>.svc.<domain> while no topology is known). Names are written
 * into the caller's buffers; nothing here calls knotd. The answer itself,
 * k8s_federation_answer() (answer_priv.h), composes the CNAME in the packet's
 * mempool.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

#include "answer/qname.h"
#include "table/table.h"
#include "mod-k8s/mod-k8s.h"

/*! \brief The zone of the K8S-DNS role, below which every name is forwarded. */
#define K8S_FEDFWD_ZONE      "\x03""svc""\x0a""federation"
#define K8S_FEDFWD_ZONE_SIZE 16

/*! \brief True if \a name is svc.federation. or below it (never a search-list expansion). */
bool k8s_fedfwd_name(const knot_dname_t *name);

/*!
 * \brief EDNS(0) option code of the source cluster (private range, RFC 6891): its
 * value is the asking member cluster's name in ASCII, one DNS label (1-63 bytes).
 */
#define K8S_EDNS_SOURCE_CLUSTER MOD_K8S_EDNS_SOURCE_CLUSTER

/*! \brief A configured federation ("NAME=DOMAIN"). */
typedef struct {
	uint8_t name[64];              /*!< Wire label, lowercase. */
	knot_dname_storage_t domain;   /*!< Wire name, lowercase. */
} k8s_federation_t;

/*! \brief The parts of a federation query; pointers point into the query name. */
typedef struct {
	const k8s_federation_t *fed;   /*!< The federation asked for. */
	const uint8_t *owner;          /*!< "<svc><ns>": the local service's owner labels. */
	size_t owner_len;
	const uint8_t *ns;             /*!< The namespace label. */
	const uint8_t *labels;         /*!< "<svc><ns><fed>svc": the query's labels below the zone. */
	size_t labels_len;
} k8s_fedquery_t;

/*!
 * \brief Parses a federation as the option gives it: "NAME=DOMAIN".
 *
 * NAME must be a lowercase DNS-1123 label, DOMAIN a lowercase DNS-1123
 * subdomain (a trailing dot is allowed), as kube-dns validated them.
 *
 * \param err  Out: a lowercase reason on failure.
 *
 * \retval KNOT_EOK, KNOT_EINVAL
 */
int k8s_federation_parse(const char *text, k8s_federation_t *fed, char *err, size_t errlen);

/*! \brief True if \a name can be a node's name (a lowercase DNS-1123 subdomain). */
bool k8s_federation_node_valid(const char *name);

/*!
 * \brief Tells whether a parsed cluster-zone name is a federation query.
 *
 * It is when the name is exactly <svc>.<ns>.<fed>.svc.<zone> (which otherwise
 * reads as the endpoint <svc> of service <ns> in namespace <fed>), <svc> is an
 * RFC 1035 label, <ns> an RFC 1123 label and <fed> a configured federation.
 *
 * \return True and \a fq filled in, or false.
 */
bool k8s_federation_query(const k8s_federation_t *feds, size_t count, const k8s_qname_t *q,
                          k8s_fedquery_t *fq);

/*!
 * \brief True if a local service answers for the federated one: ExternalName
 * services always, ClusterIP and headless services with a ready endpoint.
 */
bool k8s_federation_local(const k8s_block_t *svc);

/*!
 * \brief Writes the federation's name for this cluster:
 * <svc>.<ns>.<fed>.svc.<zone>.<region>.<domain>, or the global
 * <svc>.<ns>.<fed>.svc.<domain> without a topology (or when the other is too long).
 *
 * \return Its size, or 0 if even the global name is longer than a DNS name.
 */
size_t k8s_federation_remote_name(const k8s_fedquery_t *fq, const k8s_topology_t *topology,
                                  uint8_t out[KNOT_DNAME_MAXLEN]);
