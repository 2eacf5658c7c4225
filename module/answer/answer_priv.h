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
 * \brief What the files of the answer path share, private to them.
 *
 * The answer path is split by record family: `answer.c` (the entry point, names
 * to their answers, CNAME following), `answer_addr.c` (A/AAAA, ExternalName, an
 * upstream's answer relayed), `answer_srv.c` (SRV and the ADDITIONAL stage),
 * `answer_ptr.c` (PTR), `autopath.c` (search path expansion) and `fedname.c`
 * (federated services' CNAME).
 * The packet helpers below run on every query: they are static inline so that
 * the split adds no call to the hot path.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <netinet/in.h>

#include <libknot/libknot.h>

#include "answer/answer.h"

/*! \brief One query being answered. */
typedef struct {
	const k8s_answer_conf_t *conf;
	const k8s_table_t *t;
	knot_pkt_t *pkt;
	knot_mm_t *mm;
	const struct sockaddr_storage *remote;  /*!< The client: who a cold name is asked for. */
	uint16_t qtype;
	const knot_dname_t *shown;  /*!< The query name's records' owner, NULL: the question (rewrite.h). */
} k8s_qctx_t;

/*! \brief The client's address as a table address; false if it is neither IPv4 nor IPv6. */
static inline bool k8s_client_ip(const struct sockaddr_storage *remote, k8s_ip_t *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (remote->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)remote;
		ip->family = AF_INET;
		memcpy(ip->bytes, &in->sin_addr, 4);
		return true;
	}
	if (remote->ss_family != AF_INET6) {
		return false;
	}
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)remote;
	// An IPv4 client of a dual-stack socket arrives mapped (::ffff:a.b.c.d).
	if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		ip->family = AF_INET;
		memcpy(ip->bytes, in6->sin6_addr.s6_addr + 12, 4);
	} else {
		ip->family = AF_INET6;
		memcpy(ip->bytes, &in6->sin6_addr, 16);
	}
	return true;
}

/*! \brief Who a cold name the query met is asked for: the client's tenant (answer.h). */
static inline k8s_tenant_t qctx_tenant(const k8s_qctx_t *c)
{
	return k8s_answer_tenant(c->t, c->remote);
}

static inline void *mm_get(knot_mm_t *mm, size_t size)
{
	return mm->alloc(mm->ctx, size);
}

static inline k8s_answer_t put_result(int ret)
{
	switch (ret) {
	case KNOT_EOK:    return K8S_ANSWER_HIT;
	case KNOT_ESPACE: return K8S_ANSWER_TRUNC;
	default:          return K8S_ANSWER_SERVFAIL;
	}
}

/*!
 * \brief Puts A, AAAA or SRV records whose owner is a pointer (\a hint: a position in
 * the packet) as knot_pkt_put() puts them (answer.c), without its generic compression.
 */
int k8s_answer_put_raw(knot_pkt_t *pkt, uint16_t hint, const knot_rrset_t *rr, uint16_t flags);

/*! \brief Puts one PTR record under the query name as knot_pkt_put() puts it (answer.c). */
int k8s_answer_put_ptr(knot_pkt_t *pkt, const knot_rrset_t *rr, uint16_t flags);

/*! \brief Puts an rdataset under an owner without copying it. */
static inline int put(k8s_qctx_t *c, const knot_dname_t *owner, uint16_t hint, uint16_t type,
                      uint32_t ttl, const knot_rdataset_t *rrs, uint16_t flags)
{
	// A rewritten query's records owned by its name show the name the rules map it to.
	if (__builtin_expect(c->shown != NULL, 0) && hint == KNOT_COMPR_HINT_QNAME) {
		owner = c->shown;
		hint = KNOT_COMPR_HINT_NONE;
	}
	knot_rrset_t rr;
	knot_rrset_init(&rr, (knot_dname_t *)owner, type, KNOT_CLASS_IN, ttl);
	rr.rrs = *rrs;
	if (hint >= KNOT_COMPR_HINT_QNAME && hint < KNOT_WIRE_PTR_MAX &&
	    (flags & ~KNOT_PF_NOTRUNC) == 0 &&
	    (type == KNOT_RRTYPE_A || type == KNOT_RRTYPE_AAAA || type == KNOT_RRTYPE_SRV)) {
		return k8s_answer_put_raw(c->pkt, hint, &rr, flags);
	}
	if (type == KNOT_RRTYPE_PTR && hint == KNOT_COMPR_HINT_QNAME && flags == 0) {
		return k8s_answer_put_ptr(c->pkt, &rr, flags);
	}
	return knot_pkt_put(c->pkt, hint, &rr, flags);
}

/*! \brief Owner hint: compress against the question when the owner is the query name. */
static inline uint16_t hint_for(const knot_dname_t *owner, const knot_dname_t *qname)
{
	return (owner == qname) ? KNOT_COMPR_HINT_QNAME : KNOT_COMPR_HINT_NONE;
}

/*!
 * \brief Writes "[<label>.][<cluster>.]<svc>.<ns>.svc.<domain>" in wire form.
 *
 * \return Its size, or 0 if it does not fit in \a max.
 */
static inline size_t write_name(uint8_t *out, size_t max, const k8s_block_t *svc,
                                const k8s_addr_t *ep, const knot_dname_t *domain)
{
	uint8_t label[64];
	size_t label_size = 0, cluster_size = 0;
	const uint8_t *cluster = NULL;
	if (ep != NULL) {
		label_size = k8s_addr_label(svc, ep, label);
		cluster = k8s_addr_cluster(svc, ep, &cluster_size);
	}
	size_t domain_size = knot_dname_size(domain);
	size_t size = label_size + cluster_size + svc->owner_len + 4 + domain_size;
	if (size > max || size > KNOT_DNAME_MAXLEN) {
		return 0;
	}
	uint8_t *pos = out;
	memcpy(pos, label, label_size);
	pos += label_size;
	if (cluster_size > 0) {
		memcpy(pos, cluster, cluster_size);
		pos += cluster_size;
	}
	memcpy(pos, svc->owner, svc->owner_len);
	pos += svc->owner_len;
	memcpy(pos, "\x03svc", 4);
	pos += 4;
	memcpy(pos, domain, domain_size);
	return size;
}

/*!
 * \brief Builds an rdataset of the addresses of one family among adjacent records.
 *
 * The records of one name never pass K8S_MAX_A_PER_NAME or K8S_MAX_AAAA_PER_NAME
 * (the block builder cuts them), so their count fits the rdataset's.
 */
static inline int addr_rrs(k8s_qctx_t *c, const k8s_addr_t *addrs, size_t count, uint8_t family,
                           knot_rdataset_t *rrs)
{
	size_t len = (family == AF_INET) ? 4 : 16;
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		n += (addrs[i].family == family);
	}
	knot_rdataset_init(rrs);
	if (n == 0) {
		return KNOT_EOK;
	}
	uint8_t *pos = mm_get(c->mm, n * knot_rdata_size(len));
	if (pos == NULL) {
		return KNOT_ENOMEM;
	}
	rrs->rdata = (knot_rdata_t *)pos;
	for (size_t i = 0; i < count; i++) {
		if (addrs[i].family == family) {
			knot_rdata_init((knot_rdata_t *)pos, len, addrs[i].bytes);
			pos += knot_rdata_size(len);
		}
	}
	rrs->count = n;
	rrs->size = pos - (uint8_t *)rrs->rdata;
	return KNOT_EOK;
}

/*! \brief Puts "owner CNAME target"; \a target must live as long as the packet. */
static inline int put_cname(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                            const knot_dname_t *target)
{
	size_t size = knot_dname_size(target);
	uint8_t *rdata = mm_get(c->mm, knot_rdata_size(size));
	if (rdata == NULL) {
		return KNOT_ENOMEM;
	}
	knot_rdata_init((knot_rdata_t *)rdata, size, target);
	knot_rdataset_t rrs = { .count = 1, .size = knot_rdata_size(size),
	                        .rdata = (knot_rdata_t *)rdata };
	return put(c, owner, hint_for(owner, qname), KNOT_RRTYPE_CNAME, c->conf->ttl, &rrs, 0);
}

/*! \brief The table zone whose domain a name is below, or K8S_ZONE_COUNT if none of ours. */
static inline k8s_zone_t zone_of(const k8s_answer_conf_t *conf, const knot_dname_t *name)
{
	for (int z = 0; z < K8S_ZONE_COUNT; z++) {
		const knot_dname_t *domain = conf->domains[z];
		if (domain != NULL && knot_dname_in_bailiwick(name, domain) > 0) {
			return z;
		}
	}
	return K8S_ZONE_COUNT;
}

/*! \brief The labels of the zone's apex: counted at load, or here for a hand-built conf. */
static inline size_t zone_labels(const k8s_answer_conf_t *conf)
{
	return (conf->zone_labels != 0) ? conf->zone_labels : k8s_dname_labels(conf->zone);
}

static inline k8s_role_t zone_role(k8s_zone_t zone)
{
	return (zone == K8S_ZONE_CLUSTER) ? K8S_ROLE_CLUSTER : K8S_ROLE_CLUSTERSET;
}

/* answer.c */

/*!
 * \brief Answers a name of a cluster or clusterset zone: dns-version, svc., pod.,
 * namespaces, services and the names below them, pods, federation names.
 *
 * \param owner  The name answered (the query name, or a CNAME target).
 * \param qname  The query name (compression hint when \a owner is it).
 * \param depth  CNAMEs followed so far.
 */
k8s_answer_t k8s_answer_name(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                             k8s_role_t role, const knot_dname_t *zone, unsigned depth);

/*! \brief Answers a CNAME's target in one of our zones, after the CNAME. */
k8s_answer_t k8s_answer_follow(k8s_qctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                               k8s_role_t role, const knot_dname_t *zone, unsigned depth);

/*!
 * \brief Answers a CNAME target in one of our zones, as knotd follows CNAMEs in a zone.
 *
 * \return The target's outcome, or K8S_ANSWER_PASS if it is in none of our zones.
 */
k8s_answer_t k8s_answer_chase(k8s_qctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                              unsigned depth);

/* answer_addr.c */

/*! \brief Answers A, AAAA (or both for ANY) from address records (endpoints, a pod). */
k8s_answer_t k8s_answer_addrs(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                              const k8s_addr_t *addrs, size_t count);

/*! \brief Answers A or AAAA (ANY: its family's) of one address (a pod's). */
k8s_answer_t k8s_answer_ip(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                           const k8s_ip_t *ip);

/*! \brief Answers A, AAAA (or both) from a service's prebuilt rdatasets. */
k8s_answer_t k8s_answer_svc_addrs(k8s_qctx_t *c, const knot_dname_t *owner,
                                  const knot_dname_t *qname, const k8s_block_t *svc);

/*!
 * \brief The records of a CNAME \a target already put: from our zones, else
 * (A, AAAA) from the upstream cache; a target not cached is asked for (cold:
 * answered late, SERVFAIL meanwhile).
 */
k8s_answer_t k8s_answer_target(k8s_qctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                               unsigned depth);

/*! \brief ExternalName: the CNAME, then its target's records when we can have them. */
k8s_answer_t k8s_answer_external(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_block_t *svc, unsigned depth);

/*!
 * \brief Puts a cached upstream answer (a CNAME chain, then addresses) after a CNAME to it;
 * a link of the chain into one of our zones ends the upstream's part: its target is
 * answered from the table (k8s_answer_chase(), \a depth CNAMEs followed so far, \a qname
 * the compression hint), never from the upstream's records.
 */
k8s_answer_t k8s_answer_upstream(k8s_qctx_t *c, const k8s_fwd_entry_t *ext,
                                 const knot_dname_t *qname, unsigned depth);

/*!
 * \brief An rdataset of the addresses of one family of the records \a addrs[0, count)
 * in the topology zone \a topo, each once (the packet's mempool; zonal names).
 */
int k8s_answer_topo_rrs(k8s_qctx_t *c, const k8s_addr_t *addrs, size_t count, uint16_t topo,
                        uint8_t family, knot_rdataset_t *rrs);

/* answer_srv.c */

/*!
 * \brief Answers SRV for every named port of a service (\a domain: the zone the
 * service was found in, its targets' suffix).
 */
k8s_answer_t k8s_answer_srv(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                            const k8s_block_t *svc, const knot_dname_t *domain);

/*!
 * \brief Answers _<name>._<proto>.<svc>: the SRV of that named port, NODATA for
 * other types, NXDOMAIN if the service has no such port.
 *
 * \param name, proto  The labels without their underscore.
 */
k8s_answer_t k8s_answer_srv_port(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_block_t *svc, const uint8_t *name, const uint8_t *proto,
                                 const knot_dname_t *domain);

/*! \brief True if "_<proto>" is an empty non-terminal above some named port's SRV. */
bool k8s_answer_srv_has_proto(const k8s_block_t *svc, const uint8_t *proto);

/*!
 * \brief Answers SRV for every named port of a headless service's endpoints in the
 * topology zone \a topo (0: every endpoint), the ADDITIONAL stage likewise (zonal names).
 */
k8s_answer_t k8s_answer_srv_topo(k8s_qctx_t *c, const knot_dname_t *owner,
                                 const knot_dname_t *qname, const k8s_block_t *svc,
                                 const knot_dname_t *domain, uint16_t topo);

/* answer_zonal.c */

/*!
 * \brief Answers a zonal name (K8S_Q_ZONAL, with the zonal option): a headless service's
 * endpoints in one topology zone; pin: NODATA without any, prefer: every endpoint then.
 */
k8s_answer_t k8s_answer_zonal(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                              const k8s_qname_t *q, const knot_dname_t *zone);

/* answer_ext.c */

/*! \brief Answers a name of an external zone (CoreDNS's k8s_external). */
k8s_answer_t k8s_answer_ext(k8s_qctx_t *c, const knot_dname_t *qname);

/*! \brief Adds the addresses of the targets of the external zone's SRV answer just put. */
void k8s_answer_ext_additional(const k8s_answer_conf_t *conf, const knot_pkt_t *answered,
                               knot_pkt_t *pkt, knot_mm_t *mm);

/*! \brief Forgets the previous query's external SRV answer on this thread. */
void k8s_answer_ext_forget(void);

/* answer_ptr.c */

/*!
 * \brief Answers a name of a reverse zone: PTR of an address, NODATA or NXDOMAIN
 * for prefixes, K8S_ANSWER_PASS at the apex.
 */
k8s_answer_t k8s_answer_ptr(k8s_qctx_t *c, const knot_dname_t *qname);

/* autopath.c */

/*!
 * \brief Answers a name of an autopath zone (the KEP form) from the first name of
 * its search list that exists.
 *
 * \param query    The query (its EDNS search list option), or NULL.
 * \param outcome  Out: how the walk ended.
 */
k8s_answer_t k8s_autopath_answer(k8s_qctx_t *c, const knot_dname_t *qname, const knot_pkt_t *query,
                                 k8s_autopath_outcome_t *outcome);

/*!
 * \brief The client-address form of a cluster zone with autopath, for a name that
 * k8s_answer_name() found NXDOMAIN: only <name>.<ns>.svc.<zone> asked by a pod of
 * <ns> that is not host-network is walked; anything else stays NXDOMAIN.
 *
 * \param ns       The <ns> label of <name>.<ns>.svc.<zone> (the parse's svc_ns), or NULL.
 * \param remote   The client's address, or NULL (NXDOMAIN).
 * \param outcome  Out: how the walk ended; untouched without one.
 */
k8s_answer_t k8s_autopath_client(k8s_qctx_t *c, const knot_dname_t *qname, const uint8_t *ns,
                                 const struct sockaddr_storage *remote,
                                 k8s_autopath_outcome_t *outcome);

/* fedname.c */

/*!
 * \brief Answers a federation query: a CNAME to the local service while it has
 * endpoints, followed by its records; else a CNAME to the federation's name.
 *
 * \param zone  The cluster zone's apex.
 */
k8s_answer_t k8s_federation_answer(k8s_qctx_t *c, const knot_dname_t *owner,
                                   const knot_dname_t *qname, const k8s_fedquery_t *fq,
                                   const knot_dname_t *zone, unsigned depth);
