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
 * \brief A query name into its parts: endpoint, service, namespace, port, protocol, address.
 *
 * Works on the lowercase wire-format query name knotd hands to modules and
 * points into it; nothing is copied or allocated.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kinds/objects.h"
#include "lib/dnsname.h"

/*! \brief What a zone attached to mod-k8s serves. */
typedef enum {
	K8S_ROLE_CLUSTER = 0,   /*!< The cluster domain (cluster.local.). */
	K8S_ROLE_CLUSTERSET,    /*!< The clusterset domain (clusterset.local.). */
	K8S_ROLE_REVERSE,       /*!< A zone under in-addr.arpa. or ip6.arpa. */
	K8S_ROLE_AUTOPATH,      /*!< Server-side search path expansion (ap.k8s.io.). */
	K8S_ROLE_FEDFORWARD,    /*!< K8S-DNS role: svc.federation., forwarded (fedfwd.h). */
	K8S_ROLE_FEDERATED,     /*!< Federated-DNS role (federation-member): its members' tables. */
	K8S_ROLE_EXTERNAL,      /*!< CoreDNS's k8s_external zone (external-zone): external addresses. */
} k8s_role_t;

typedef enum {
	K8S_Q_APEX = 0,       /*!< The zone apex: the zone file answers. */
	K8S_Q_INVALID,        /*!< No such name can exist (NXDOMAIN). */
	K8S_Q_DNS_VERSION,    /*!< dns-version.<zone> */
	K8S_Q_SVC_ROOT,       /*!< svc.<zone> */
	K8S_Q_POD_ROOT,       /*!< pod.<zone> */
	K8S_Q_NAMESPACE,      /*!< <ns>.svc.<zone> or <ns>.pod.<zone> */
	K8S_Q_SERVICE,        /*!< <svc>.<ns>.svc.<zone> */
	K8S_Q_SUBNAME,        /*!< One to three labels below a service: endpoint, SRV, empty non-terminal. */
	K8S_Q_POD,            /*!< <dashed-ip>.<ns>.pod.<zone> */
	K8S_Q_REVERSE,        /*!< An address, or a prefix of one, under in-addr.arpa. or ip6.arpa. */
	K8S_Q_ZONAL,          /*!< <topology zone>.<directive>._zone.<svc>.<ns>.svc.<zone> (cluster zone). */
} k8s_qkind_t;

#define K8S_QNAME_MAX_SUB 3

/*! \brief A parsed query name; pointers point into the query name. */
typedef struct {
	k8s_qkind_t kind;
	const uint8_t *owner;      /*!< SERVICE, SUBNAME: the "<svc><ns>" labels. */
	size_t owner_len;
	const uint8_t *ns;         /*!< NAMESPACE, SERVICE, SUBNAME, POD: the namespace label. */
	bool under_pod;            /*!< NAMESPACE: below pod.<zone> rather than svc.<zone>. */
	const uint8_t *sub[K8S_QNAME_MAX_SUB]; /*!< SUBNAME: labels left of the service, leftmost first. */
	unsigned sub_count;
	k8s_ip_t ip;               /*!< POD: the address; REVERSE: address or prefix (rest zero). */
	unsigned ip_bits;          /*!< REVERSE: bits the name gives (32 or 128: a whole address). */
	const uint8_t *svc_ns;     /*!< <name>.<ns>.svc.<zone> (one label or more before <ns>), of
	                                any kind: the <ns> label, for client-address autopath. */
	const uint8_t *topo;       /*!< ZONAL: the topology zone's labels (one or more), ... */
	size_t topo_size;          /*!< ... their bytes, ... */
	const uint8_t *directive;  /*!< ... and the directive label (pin, prefer, or another). */
} k8s_qname_t;

/*!
 * \brief Parses a lowercase query name below a zone.
 *
 * The external role's names (K8S_ROLE_EXTERNAL, CoreDNS's k8s_external) have no "svc"
 * label: <ns> is NAMESPACE, <svc>.<ns> SERVICE, one or two labels more SUBNAME (an
 * endpoint, or _port._proto), more INVALID; ns is the label next to the apex whatever
 * the kind (the apex label's subtree is the answer's to tell).
 *
 * \param qname  Query name (lowercase wire format): a valid name of at most
 *               KNOT_DNAME_MAXLEN bytes, as knotd's parser checked the question's
 *               (its labels are split into an array of KNOT_DNAME_MAXLABELS).
 * \param zone   The zone apex it is in (lowercase wire format).
 * \param role   What the zone serves.
 * \param q      Out: the parts.
 */
void k8s_qname_parse(const uint8_t *qname, const uint8_t *zone, k8s_role_t role, k8s_qname_t *q);

/*! \brief k8s_qname_parse() below a zone of \a zone_labels labels (counted once, at load). */
void k8s_qname_parse_below(const uint8_t *qname, size_t zone_labels, k8s_role_t role,
                           k8s_qname_t *q);

/*! \brief Parses a pod label: dashed IPv4 (10-244-1-7) or IPv6 (fd00--7). */
bool k8s_qname_pod_ip(const uint8_t *label, k8s_ip_t *ip);

/*!
 * \brief True if a wire label equals a C string.
 *
 * Inline: called with a literal, the length folds and the comparison is a few
 * instructions, where strlen() and memcmp() calls cost about 40 (callgrind).
 */
static inline bool k8s_label_is(const uint8_t *label, const char *text)
{
	size_t len = strlen(text);
	return label[0] == len && memcmp(label + 1, text, len) == 0;
}

/*! \brief Labels of a wire name, the root not counted (knot_dname_labels() without its call). */
static inline size_t k8s_dname_labels(const uint8_t *name)
{
	size_t n = 0;
	for (; *name != 0; name += 1 + *name) {
		n++;
	}
	return n;
}

