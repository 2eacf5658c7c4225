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
 * \brief The Federated-DNS role: answers for federated services from the
 * record tables of every member cluster.
 *
 * A federation zone (federation-domain, default federation.) answers
 * <svc>.<ns>.<fed>.svc.<zone> with the shards of the service: the Services of
 * that namespace and name that have ready endpoints in the members. The
 * source-cluster EDNS option (K8S_EDNS_SOURCE_CLUSTER) counts only from an
 * address of that member's source prefixes. A query whose source member has a
 * shard gets that member's cluster IPs first (at most K8S_FED_LOCAL_MAX of a
 * family), then the load-balancer addresses of the other members' shards; any
 * other query gets the load-balancer addresses only. Those are ordered by the
 * source member's configured zone and region, whether it has a shard or not:
 * same zone, same region, the others, each in configuration order; without a
 * source, configuration order. <member>.<svc>.<ns>.<fed>.svc.<zone> names one shard
 * (its load-balancer addresses). An external zone (federation-external) answers
 * the same names below its domain, with load-balancer addresses only.
 *
 * Configuration parsing (k8s_fedmember_parse()) and the answer make no knotd
 * call; member tables are read inside the caller's RCU read-side section.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include <libknot/libknot.h>

#include "answer/answer.h"
#include "table/table.h"

/*! \brief Most member clusters of a federation (option federation-member). */
#define K8S_FED_MAX_MEMBERS 32

/*!
 * \brief Most cluster IPs (a headless shard: endpoint addresses) of one family
 * that an answer carries for the source member's shard: the lowest ones.
 */
#define K8S_FED_LOCAL_MAX 32

/*! \brief Most source prefixes of one member (key source= of federation-member). */
#define K8S_FED_MAX_SOURCES 8

/*! \brief An address prefix: the first \a len bits of \a bytes, the rest zero. */
typedef struct {
	uint8_t family;        /*!< AF_INET or AF_INET6. */
	uint8_t len;           /*!< Prefix length in bits. */
	uint8_t bytes[16];
} k8s_fedprefix_t;

/*! \brief A member cluster, as option federation-member gives it. */
typedef struct {
	uint8_t name[64];      /*!< Wire label, lowercase. */
	char *kubeconfig;      /*!< Path of its kubeconfig (owned). */
	char *context;         /*!< Kubeconfig context, or NULL: current-context (owned). */
	char zone[64];         /*!< Topology zone, "" if unknown. */
	char region[64];       /*!< Topology region, "" if unknown. */
	k8s_fedprefix_t sources[K8S_FED_MAX_SOURCES]; /*!< Where its K8S-DNS queries come from. */
	size_t source_count;   /*!< 0: no query may speak for this member. */
} k8s_fedmember_t;

/*!
 * \brief Parses "NAME kubeconfig=PATH [context=CTX] [zone=ZONE] [region=REGION]
 * [source=PREFIX[,PREFIX...]]".
 *
 * NAME is the member's cluster name (a lowercase DNS label, as the source-cluster
 * option carries it); ZONE and REGION are lowercase DNS labels; each PREFIX is an
 * IPv4 or IPv6 address with an optional /LENGTH (host bits zero), at most
 * K8S_FED_MAX_SOURCES.
 *
 * \param err  Out: a lowercase reason on failure.
 *
 * \retval KNOT_EOK, KNOT_EINVAL, KNOT_ENOMEM (\a m holds nothing to free on failure)
 */
int k8s_fedmember_parse(const char *text, k8s_fedmember_t *m, char *err, size_t errlen);

/*! \brief Frees what k8s_fedmember_parse() allocated. */
void k8s_fedmember_free(k8s_fedmember_t *m);

/*! \brief Answer settings of one zone in the Federated-DNS role, fixed at load. */
typedef struct {
	const k8s_fedmember_t *members;
	size_t member_count;
	const knot_dname_t *suffix;  /*!< <fed>.svc.<zone> (federation zone) or the external domain. */
	bool external;               /*!< Load-balancer addresses only, the source option is ignored. */
	uint32_t ttl;
} k8s_fedzone_t;

/*! \brief The member whose name \a source holds (any case), or SIZE_MAX. */
size_t k8s_fedserve_member(const k8s_fedzone_t *z, const uint8_t *source, size_t len);

/*! \brief True if \a remote (IPv4, IPv6 or IPv4-mapped IPv6) is in one of the member's source prefixes. */
bool k8s_fedserve_from_member(const k8s_fedmember_t *m, const struct sockaddr_storage *remote);

/*!
 * \brief Orders the members whose load-balancer addresses are answered.
 *
 * \param source  The querying member (left out, shard or not), or SIZE_MAX.
 * \param shard   Per member: true if it has a shard.
 * \param order   Out: member indexes, same zone as \a source first, then same
 *                region, then the others, each in configuration order.
 *
 * \return How many were written.
 */
size_t k8s_fedserve_order(const k8s_fedzone_t *z, size_t source, const bool *shard,
                          uint8_t order[K8S_FED_MAX_MEMBERS]);

/*!
 * \brief Answers a name below the zone.
 *
 * \param tables  Per member: its record table, or NULL before its first sync.
 * \param source  Value of the source-cluster option, or NULL.
 * \param remote  The client's address: the option counts only from the named
 *                member's source prefixes (NULL: never).
 * \param pkt     Response, positioned at the ANSWER section.
 * \param mm      Per-query memory.
 *
 * \return K8S_ANSWER_NOTREADY while no member is synchronized; else the outcome.
 */
k8s_answer_t k8s_fedserve_answer(const k8s_fedzone_t *z, const k8s_table_t *const *tables,
                                 const knot_dname_t *qname, uint16_t qtype,
                                 const uint8_t *source, size_t source_len,
                                 const struct sockaddr_storage *remote,
                                 knot_pkt_t *pkt, knot_mm_t *mm);
