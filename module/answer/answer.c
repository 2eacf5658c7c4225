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

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "answer/answer_priv.h"

/*! \brief Most CNAME hops followed inside our zones. */
#define MAX_CHASE 8

/*! \brief Wire size of one record's head under a pointer: pointer, type, class, TTL, length. */
#define RR_HEADER (2 + 2 + 2 + 4 + 2)

/*! \brief RRsets libknot makes room for at once (NEXT_RR_COUNT in libknot's pkt.c). */
#define RR_ARRAY_STEP 16

/*!
 * \brief The packet's RR list and RR info with room for one more, as libknot makes it.
 *
 * Inline: an answer's first record allocates them, so this runs whole on every answer.
 */
static inline __attribute__((always_inline))
bool rr_room(knot_pkt_t *pkt)
{
	if (pkt->rrset_count < pkt->rrset_allocd) {
		return true;
	}
	// Only the first allocation: growing (a copy) stays libknot's.
	if (pkt->rrset_allocd != 0 || pkt->mm.alloc == NULL) {
		return false;
	}
	knot_rrset_t *rr = pkt->mm.alloc(pkt->mm.ctx, RR_ARRAY_STEP * sizeof(*rr));
	knot_rrinfo_t *info = pkt->mm.alloc(pkt->mm.ctx, RR_ARRAY_STEP * sizeof(*info));
	if (rr == NULL || info == NULL) {
		if (pkt->mm.free != NULL) {
			pkt->mm.free(rr);
			pkt->mm.free(info);
		}
		return false;
	}
	pkt->rr = rr;
	pkt->rr_info = info;
	pkt->rrset_allocd = RR_ARRAY_STEP;
	return true;
}

/*! \brief Where an SRV record's target starts in its rdata (priority, weight, port). */
#define SRV_TARGET 6

/*! \brief The RRset written (\a size bytes) in the packet's RR list and counts, as libknot adds it. */
static inline __attribute__((always_inline))
void rr_added(knot_pkt_t *pkt, const knot_rrset_t *rr, size_t size)
{
	pkt->rr[pkt->rrset_count] = *rr;
	pkt->rrset_count++;
	pkt->sections[pkt->current].count++;
	pkt->size += size;
	switch (pkt->current) {
	case KNOT_ANSWER:     knot_wire_add_ancount(pkt->wire, rr->rrs.count); break;
	case KNOT_AUTHORITY:  knot_wire_add_nscount(pkt->wire, rr->rrs.count); break;
	case KNOT_ADDITIONAL: knot_wire_add_arcount(pkt->wire, rr->rrs.count); break;
	}
}

/*! \brief Each SRV target's position in the RR info, as libknot records them (the first 15). */
static void srv_hints(knot_rrinfo_t *info, const knot_rrset_t *rr, size_t at)
{
	const knot_rdata_t *rd = rr->rrs.rdata;
	for (uint16_t i = 0; i < rr->rrs.count; i++) {
		knot_compr_hint_set(info, KNOT_COMPR_HINT_RDATA + i, at + RR_HEADER + SRV_TARGET,
		                    rd->len - SRV_TARGET);
		at += RR_HEADER + rd->len;
		rd = knot_rdataset_next((knot_rdata_t *)rd);
	}
}

/*
 * Addresses and SRV records are most answers. knot_pkt_put() writes their owner as
 * the pointer its hint gives (the question for the query name, an SRV target for
 * ADDITIONAL) and their rdata as it is (an SRV target is never compressed), but first
 * sets up its generic compression: about 450 instructions for one A record (callgrind),
 * a third of a service's whole answer. The same bytes are written here, and the
 * packet's RR list, RR info (with the SRV targets' positions: ADDITIONAL points their
 * addresses' owner at them) and counts are kept as knot_pkt_put() keeps them: the signing
 * modules and the packet's users read them. tests/unit/test_put.c compares the two.
 * Anything out of the ordinary (no question, no room in the wire) goes to
 * knot_pkt_put(), which also sets TC where it must.
 */
int k8s_answer_put_raw(knot_pkt_t *pkt, uint16_t hint, const knot_rrset_t *rr, uint16_t flags)
{
	uint16_t count = rr->rrs.count;
	if (count == 0 || knot_wire_get_qdcount(pkt->wire) == 0 ||
	    pkt->size + pkt->reserved > pkt->max_size || !rr_room(pkt)) {
		return knot_pkt_put(pkt, hint, rr, flags);
	}
	knot_rrinfo_t *info = &pkt->rr_info[pkt->rrset_count];
	memset(info, 0, sizeof(*info));
	size_t room = pkt->max_size - pkt->reserved - pkt->size;
	uint8_t *start = pkt->wire + pkt->size, *pos = start;
	// Every record's head but its length is the same: built once, copied whole.
	uint8_t head[RR_HEADER];
	knot_wire_write_u16(head, ((uint16_t)KNOT_WIRE_PTR << 8) | hint);
	knot_wire_write_u16(head + 2, rr->type);
	knot_wire_write_u16(head + 4, rr->rclass);
	knot_wire_write_u32(head + 6, rr->ttl);
	const knot_rdata_t *rd = rr->rrs.rdata;
	for (uint16_t i = 0; i < count; i++) {
		size_t size = RR_HEADER + rd->len;
		if (size > room) {
			return knot_pkt_put(pkt, hint, rr, flags);
		}
		room -= size;
		memcpy(pos, head, RR_HEADER - 2);
		knot_wire_write_u16(pos + RR_HEADER - 2, rd->len);
		if (rd->len == 4) {
			memcpy(pos + RR_HEADER, rd->data, 4);  // A: a move, not a call.
		} else if (rd->len == 16) {
			memcpy(pos + RR_HEADER, rd->data, 16);  // AAAA: two moves.
		} else {
			memcpy(pos + RR_HEADER, rd->data, rd->len);
		}
		pos += size;
		rd = knot_rdataset_next((knot_rdata_t *)rd);
	}
	if (rr->type == KNOT_RRTYPE_SRV) {
		srv_hints(info, rr, start - pkt->wire);
	}

	info->pos = pkt->size;
	info->flags = flags;
	info->compress_ptr[KNOT_COMPR_HINT_OWNER] = hint;
	pkt->compr.rrinfo = info;
	rr_added(pkt, rr, pos - start);
	return KNOT_EOK;
}

/*! \brief The last label of a wire name (the name itself for the root). */
static const uint8_t *last_label(const uint8_t *name)
{
	const uint8_t *last = name;
	for (; *name != 0; name += 1 + *name) {
		last = name;
	}
	return last;
}

/*
 * A PTR answer is one name below the cluster domain for a name under in-addr.arpa or
 * ip6.arpa. knot_pkt_put() compresses it against the question (its suffix, or the last
 * name it wrote): names whose last labels differ share no suffix, and it writes the name
 * whole, then makes it the suffix to compress against. The same is done here for one
 * record whose last label differs from the question's (about 1,000 instructions in
 * knot_pkt_put(), callgrind); anything else goes to knot_pkt_put().
 */
int k8s_answer_put_ptr(knot_pkt_t *pkt, const knot_rrset_t *rr, uint16_t flags)
{
	const uint8_t *qname = pkt->wire + KNOT_WIRE_HEADER_SIZE;
	knot_compr_t *compr = &pkt->compr;
	if (rr->rrs.count != 1 || knot_wire_get_qdcount(pkt->wire) == 0 ||
	    (compr->suffix.pos != 0 && compr->suffix.pos != KNOT_WIRE_HEADER_SIZE) ||
	    pkt->size + pkt->reserved > pkt->max_size || !rr_room(pkt)) {
		return knot_pkt_put(pkt, KNOT_COMPR_HINT_QNAME, rr, flags);
	}
	const knot_rdata_t *rd = rr->rrs.rdata;
	const uint8_t *ours = last_label(rd->data), *theirs = last_label(qname);
	size_t size = RR_HEADER + rd->len;
	if (*ours == 0 || (ours[0] == theirs[0] && strncasecmp((const char *)ours + 1,
	                                                      (const char *)theirs + 1, ours[0]) == 0) ||
	    size > pkt->max_size - pkt->reserved - pkt->size) {
		return knot_pkt_put(pkt, KNOT_COMPR_HINT_QNAME, rr, flags);
	}
	uint8_t *pos = pkt->wire + pkt->size;
	knot_wire_write_u16(pos, ((uint16_t)KNOT_WIRE_PTR << 8) | KNOT_COMPR_HINT_QNAME);
	knot_wire_write_u16(pos + 2, rr->type);
	knot_wire_write_u16(pos + 4, rr->rclass);
	knot_wire_write_u32(pos + 6, rr->ttl);
	knot_wire_write_u16(pos + 10, rd->len);
	memcpy(pos + RR_HEADER, rd->data, rd->len);

	knot_rrinfo_t *info = &pkt->rr_info[pkt->rrset_count];
	memset(info, 0, sizeof(*info));
	info->pos = pkt->size;
	info->flags = flags;
	info->compress_ptr[KNOT_COMPR_HINT_OWNER] = KNOT_COMPR_HINT_QNAME;
	size_t name_at = pkt->size + RR_HEADER;
	knot_compr_hint_set(info, KNOT_COMPR_HINT_RDATA, name_at, rd->len);
	// The suffix: the question's until a name is written, then the last name written.
	if (name_at + rd->len < KNOT_WIRE_PTR_MAX) {
		compr->suffix.pos = name_at;
		compr->suffix.labels = k8s_dname_labels(rd->data);
	} else if (compr->suffix.pos == 0) {
		compr->suffix.pos = KNOT_WIRE_HEADER_SIZE;
		compr->suffix.labels = k8s_dname_labels(qname);
	}
	compr->rrinfo = info;
	rr_added(pkt, rr, size);
	return KNOT_EOK;
}

/*! \brief A label with its leading underscore removed, as a new wire label in \a out. */
static const uint8_t *strip_underscore(const uint8_t *label, uint8_t out[64])
{
	if (label[0] < 2 || label[1] != '_') {
		return NULL;
	}
	out[0] = label[0] - 1;
	memcpy(out + 1, label + 2, out[0]);
	return out;
}

k8s_answer_t k8s_answer_follow(k8s_qctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                               k8s_role_t role, const knot_dname_t *zone, unsigned depth)
{
	if (depth >= MAX_CHASE) {
		return K8S_ANSWER_HIT;
	}
	k8s_answer_t res = k8s_answer_name(c, target, qname, role, zone, depth + 1);
	switch (res) {
	case K8S_ANSWER_NXDOMAIN: return K8S_ANSWER_HIT_NXDOMAIN;
	case K8S_ANSWER_NODATA:
	case K8S_ANSWER_PASS:     return K8S_ANSWER_HIT;
	default:                  return res;
	}
}

k8s_answer_t k8s_answer_chase(k8s_qctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                              unsigned depth)
{
	k8s_zone_t z = zone_of(c->conf, target);
	if (z == K8S_ZONE_COUNT) {
		return K8S_ANSWER_PASS;
	}
	return k8s_answer_follow(c, target, qname, zone_role(z), c->conf->domains[z], depth);
}

/*! \brief Whether a service's names exist at all. */
static bool svc_exists(const k8s_answer_conf_t *conf, const k8s_block_t *svc)
{
	if (svc->type == K8S_SVC_HEADLESS) {
		// No ready endpoint: NXDOMAIN (specification 2.4.1).
		return svc->rrs_a.count + svc->rrs_aaaa.count > 0;
	}
	if (svc->type == K8S_SVC_CLUSTERIP && conf->ignore_empty) {
		return svc->ready_count > 0;
	}
	return true;
}

static k8s_answer_t answer_service(k8s_qctx_t *c, const knot_dname_t *owner,
                                   const knot_dname_t *qname, const k8s_block_t *svc,
                                   const knot_dname_t *domain, unsigned depth)
{
	if (svc->type == K8S_SVC_EXTERNALNAME && svc->target != NULL) {
		return k8s_answer_external(c, owner, qname, svc, depth);
	}
	if (c->qtype == KNOT_RRTYPE_SRV) {
		// SRV at the bare service name lists every named port (CoreDNS does the same).
		return k8s_answer_srv(c, owner, qname, svc, domain);
	}
	return k8s_answer_svc_addrs(c, owner, qname, svc);
}

/*! \brief The last \a n labels of a name (no root label), or NULL if it has fewer. */
static const uint8_t *last_labels(const uint8_t *name, size_t n, size_t *size)
{
	size_t total = knot_dname_labels(name, NULL);
	if (n > total) {
		return NULL;
	}
	for (size_t skip = total - n; skip > 0; skip--) {
		name += 1 + name[0];
	}
	*size = knot_dname_size(name) - 1;
	return name;
}

/*!
 * \brief Clusterset names below a service: <hostname>.<clusterid> and the
 * empty non-terminals above it.
 *
 * A cluster id has one or two labels. <clusterid>.<svc> (and the last label of
 * a two-label id) exists only as an empty non-terminal: it never answers
 * addresses, so no name targets a single cluster's backends (MCS DNS 2.3.4, 2.4.4).
 * Several ids can share a name ("prod" and "east.prod", "east.prod" and
 * "west.prod"), so every id is considered before a name is denied.
 */
static k8s_answer_t answer_cluster_subname(k8s_qctx_t *c, const knot_dname_t *owner,
                                           const knot_dname_t *qname, const k8s_qname_t *q,
                                           const k8s_block_t *svc)
{
	// <hostname>.<clusterid>: that cluster's ready endpoints with that label.
	for (uint16_t i = 0; i < svc->cluster_count && q->sub_count >= 2; i++) {
		const uint8_t *id = svc->strings + svc->clusters[i];
		size_t id_size = knot_dname_size(id) - 1;
		if (q->sub_count == knot_dname_labels(id, NULL) + 1 &&
		    q->owner - q->sub[1] == (ptrdiff_t)id_size && memcmp(q->sub[1], id, id_size) == 0) {
			size_t count = 0;
			const k8s_addr_t *eps = k8s_svc_endpoints(svc, id, id_size, q->sub[0], &count);
			if (eps != NULL) {
				return k8s_answer_addrs(c, owner, qname, eps, count);
			}
		}
	}

	// <clusterid>, or its last label: an empty non-terminal while the cluster has a ready endpoint.
	const uint8_t *given = q->sub[0];
	size_t given_size = q->owner - given;
	for (uint16_t i = 0; i < svc->cluster_count; i++) {
		const uint8_t *id = svc->strings + svc->clusters[i];
		size_t tail_size = 0;
		const uint8_t *tail = last_labels(id, q->sub_count, &tail_size);
		if (tail != NULL && tail_size == given_size && memcmp(tail, given, given_size) == 0 &&
		    k8s_svc_has_cluster(svc, id, knot_dname_size(id) - 1)) {
			return K8S_ANSWER_NODATA;
		}
	}
	return K8S_ANSWER_NXDOMAIN;
}

/*! \brief Names below a service: _port._proto, _proto, endpoints, cluster ids. */
static k8s_answer_t answer_subname(k8s_qctx_t *c, const knot_dname_t *owner,
                                   const knot_dname_t *qname, const k8s_qname_t *q,
                                   const k8s_block_t *svc, k8s_role_t role,
                                   const knot_dname_t *domain)
{
	if (svc->type == K8S_SVC_EXTERNALNAME) {
		return K8S_ANSWER_NXDOMAIN;
	}

	uint8_t name_buf[64], proto_buf[64];
	if (q->sub_count == 2) {
		const uint8_t *name = strip_underscore(q->sub[0], name_buf);
		const uint8_t *proto = strip_underscore(q->sub[1], proto_buf);
		if (name != NULL && proto != NULL) {
			return k8s_answer_srv_port(c, owner, qname, svc, name, proto, domain);
		}
	}
	if (q->sub_count == 1) {
		const uint8_t *proto = strip_underscore(q->sub[0], proto_buf);
		if (proto != NULL) {
			return k8s_answer_srv_has_proto(svc, proto) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
		}
	}

	if (role == K8S_ROLE_CLUSTERSET) {
		return answer_cluster_subname(c, owner, qname, q, svc);
	}

	// <endpoint>.<svc>.<ns>.svc.<zone>
	if (q->sub_count != 1) {
		return K8S_ANSWER_NXDOMAIN;
	}
	size_t count = 0;
	const k8s_addr_t *eps = k8s_svc_endpoints(svc, NULL, 0, q->sub[0], &count);
	if (eps == NULL) {
		return K8S_ANSWER_NXDOMAIN;
	}
	return k8s_answer_addrs(c, owner, qname, eps, count);
}

/*! \brief k8s_answer_name() of a name parsed already (\a q: its parse). */
static k8s_answer_t answer_parsed(k8s_qctx_t *c, const knot_dname_t *owner,
                                  const knot_dname_t *qname, const k8s_qname_t *q,
                                  k8s_role_t role, const knot_dname_t *zone, unsigned depth)
{
	const k8s_answer_conf_t *conf = c->conf;
	k8s_zone_t table_zone = (role == K8S_ROLE_CLUSTERSET) ? K8S_ZONE_CLUSTERSET : K8S_ZONE_CLUSTER;

	switch (q->kind) {
	case K8S_Q_APEX:
		return K8S_ANSWER_PASS;
	case K8S_Q_DNS_VERSION:
		// Also at the end of a CNAME (an autopath walk, an ExternalName pointing here).
		if (c->qtype != KNOT_RRTYPE_TXT && c->qtype != KNOT_RRTYPE_ANY) {
			return K8S_ANSWER_NODATA;
		}
		return put_result(put(c, owner, hint_for(owner, qname), KNOT_RRTYPE_TXT,
		                      K8S_VERSION_TTL, &conf->version, 0));
	case K8S_Q_SVC_ROOT:
		return K8S_ANSWER_NODATA;
	case K8S_Q_POD_ROOT:
		return (role == K8S_ROLE_CLUSTER) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	case K8S_Q_NAMESPACE:
		if (q->under_pod && role != K8S_ROLE_CLUSTER) {
			return K8S_ANSWER_NXDOMAIN;
		}
		return k8s_table_ns(c->t, q->ns) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	case K8S_Q_POD:
		if (conf->pods == K8S_PODS_DISABLED || !k8s_table_ns(c->t, q->ns) ||
		    (conf->pods == K8S_PODS_VERIFIED && !k8s_table_pod(c->t, &q->ip, q->ns))) {
			return K8S_ANSWER_NXDOMAIN;
		}
		return k8s_answer_ip(c, owner, qname, &q->ip);
	case K8S_Q_SERVICE:
	case K8S_Q_SUBNAME:
		break;
	case K8S_Q_ZONAL:
		return (role == K8S_ROLE_CLUSTER) ? k8s_answer_zonal(c, owner, qname, q, zone)
		                                  : K8S_ANSWER_NXDOMAIN;
	default:
		return K8S_ANSWER_NXDOMAIN;
	}

	// <svc>.<ns>.<fed>.svc.<zone> names a federated service when <fed> is a federation.
	k8s_fedquery_t fq;
	if (role == K8S_ROLE_CLUSTER && conf->federation_count > 0 &&
	    k8s_federation_query(conf->federations, conf->federation_count, q, &fq)) {
		return k8s_federation_answer(c, owner, qname, &fq, zone, depth);
	}

	// Services exist only in existing (exposed) namespaces.
	const k8s_block_t *svc = k8s_table_ns_block(c->t, table_zone, q->owner, q->owner_len, q->ns);
	if (svc == NULL || !svc_exists(conf, svc)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	// SRV targets are names in the zone the service was found in.
	const knot_dname_t *domain = zone;
	if (q->kind == K8S_Q_SERVICE) {
		return answer_service(c, owner, qname, svc, domain, depth);
	}
	return answer_subname(c, owner, qname, q, svc, role, domain);
}

k8s_answer_t k8s_answer_name(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                             k8s_role_t role, const knot_dname_t *zone, unsigned depth)
{
	k8s_qname_t q;
	k8s_qname_parse(owner, zone, role, &q);
	return answer_parsed(c, owner, qname, &q, role, zone, depth);
}

k8s_tenant_t k8s_answer_tenant(const k8s_table_t *t, const struct sockaddr_storage *remote)
{
	k8s_ip_t ip;
	const uint8_t *ns = NULL;
	if (t != NULL && remote != NULL && k8s_client_ip(remote, &ip)) {
		ns = k8s_table_pod_ns(t, &ip);
	}
	return (ns != NULL) ? k8s_tenant_ns(ns) : k8s_tenant_addr(remote);
}

/*! \brief Both entry points' body, inlined in each: the plain one pays nothing for \a shown. */
static inline __attribute__((always_inline))
k8s_answer_t answer_query(const k8s_answer_conf_t *conf, const k8s_table_t *t,
                          const knot_dname_t *qname, const knot_dname_t *shown, uint16_t qtype,
                          const knot_pkt_t *query, const struct sockaddr_storage *remote,
                          knot_pkt_t *pkt, knot_mm_t *mm, k8s_autopath_outcome_t *outcome)
{
	*outcome = K8S_AUTOPATH_NONE;
	// The K8S-DNS role is the glue's to answer (k8s_fedfwd_answer(), above this folder).
	if (conf->role == K8S_ROLE_FEDFORWARD) {
		return K8S_ANSWER_REFUSED;
	}
	// The one readiness check of every role answered from the table.
	uint32_t need = k8s_answer_ready_bits(conf->role);
	if ((k8s_table_ready(t) & need) != need) {
		return K8S_ANSWER_NOTREADY;
	}

	k8s_qctx_t c = { .conf = conf, .t = t, .pkt = pkt, .mm = mm, .remote = remote,
	                 .qtype = qtype, .shown = shown };
	switch (conf->role) {
	case K8S_ROLE_CLUSTER: {
		// One parse: the autopath check below reads its <ns>.svc too.
		k8s_qname_t q;
		k8s_qname_parse_below(qname, zone_labels(conf), K8S_ROLE_CLUSTER, &q);
		k8s_answer_t res = answer_parsed(&c, qname, qname, &q, K8S_ROLE_CLUSTER, conf->zone, 0);
		// Only a name that does not exist, of the shape <name>.<ns>.svc.<zone> (the
		// parse's svc_ns), may be a step of a pod's search list.
		if (res == K8S_ANSWER_NXDOMAIN && conf->autopath && q.svc_ns != NULL) {
			res = k8s_autopath_client(&c, qname, q.svc_ns, remote, outcome);
		}
		return res;
	}
	case K8S_ROLE_CLUSTERSET:
		return k8s_answer_name(&c, qname, qname, K8S_ROLE_CLUSTERSET, conf->zone, 0);
	case K8S_ROLE_REVERSE:
		return k8s_answer_ptr(&c, qname);
	case K8S_ROLE_AUTOPATH:
		return k8s_autopath_answer(&c, qname, query, outcome);
	case K8S_ROLE_EXTERNAL:
		return k8s_answer_ext(&c, qname);
	default:
		// K8S_ROLE_FEDERATED answers from its members' tables (fedserve.h), not one.
		return K8S_ANSWER_PASS;
	}
}

k8s_answer_t k8s_answer(const k8s_answer_conf_t *conf, const k8s_table_t *t,
                        const knot_dname_t *qname, uint16_t qtype, const knot_pkt_t *query,
                        const struct sockaddr_storage *remote, knot_pkt_t *pkt, knot_mm_t *mm,
                        k8s_autopath_outcome_t *outcome)
{
	return answer_query(conf, t, qname, NULL, qtype, query, remote, pkt, mm, outcome);
}

k8s_answer_t k8s_answer_as(const k8s_answer_conf_t *conf, const k8s_table_t *t,
                           const knot_dname_t *qname, const knot_dname_t *shown, uint16_t qtype,
                           const knot_pkt_t *query, const struct sockaddr_storage *remote,
                           knot_pkt_t *pkt, knot_mm_t *mm, k8s_autopath_outcome_t *outcome)
{
	return answer_query(conf, t, qname, shown, qtype, query, remote, pkt, mm, outcome);
}

int k8s_answer_txt(knot_rdataset_t *rrs, const char *text)
{
	size_t len = strlen(text);
	if (len > 255) {
		return KNOT_EINVAL;
	}
	uint8_t data[256] = { len };
	memcpy(data + 1, text, len);
	knot_rdataset_init(rrs);
	knot_rdata_t *rd = malloc(knot_rdata_size(1 + len));
	if (rd == NULL) {
		return KNOT_ENOMEM;
	}
	knot_rdata_init(rd, 1 + len, data);
	rrs->rdata = rd;
	rrs->count = 1;
	rrs->size = knot_rdata_size(1 + len);
	return KNOT_EOK;
}
