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

#include "answer.h"
#include "clock.h"

/*! \brief Most PTR records one address gets (a pod behind many services). */
#define MAX_PTR 32

/*! \brief Most CNAME hops followed inside our zones. */
#define MAX_CHASE 8

typedef struct {
	const k8s_answer_conf_t *conf;
	const k8s_table_t *t;
	knot_pkt_t *pkt;
	knot_mm_t *mm;
	uint16_t qtype;
} ctx_t;

/*!
 * \brief The service of the last SRV answer on this worker, for its ADDITIONAL stage.
 *
 * Touched on every query: initial-exec makes it one %fs-relative access instead of a
 * __tls_get_addr call (the default for a shared object). Its 32 bytes fit in the static
 * TLS space glibc reserves for objects loaded by dlopen.
 */
static __thread struct {
	const knot_pkt_t *pkt;
	const k8s_svc_t *svc;
	const knot_dname_t *domain;
	uint16_t rr;            /*!< Index of the SRV RRset in the packet. */
} last_srv __attribute__((tls_model("initial-exec")));

static void *mm_get(knot_mm_t *mm, size_t size)
{
	return mm->alloc(mm->ctx, size);
}

static k8s_answer_t put_result(int ret)
{
	switch (ret) {
	case KNOT_EOK:    return K8S_ANSWER_HIT;
	case KNOT_ESPACE: return K8S_ANSWER_TRUNC;
	default:          return K8S_ANSWER_SERVFAIL;
	}
}

/*! \brief Puts an rdataset under an owner without copying it. */
static int put(ctx_t *c, const knot_dname_t *owner, uint16_t hint, uint16_t type, uint32_t ttl,
               const knot_rdataset_t *rrs, uint16_t flags)
{
	knot_rrset_t rr;
	knot_rrset_init(&rr, (knot_dname_t *)owner, type, KNOT_CLASS_IN, ttl);
	rr.rrs = *rrs;
	return knot_pkt_put(c->pkt, hint, &rr, flags);
}

/*! \brief Owner hint: compress against the question when the owner is the query name. */
static uint16_t hint_for(const knot_dname_t *owner, const knot_dname_t *qname)
{
	return (owner == qname) ? KNOT_COMPR_HINT_QNAME : KNOT_COMPR_HINT_NONE;
}

/*!
 * \brief Writes "[<label>.][<cluster>.]<svc>.<ns>.svc.<domain>" in wire form.
 *
 * \return Its size, or 0 if it does not fit in \a max.
 */
static size_t write_name(uint8_t *out, size_t max, const k8s_svc_t *svc, const k8s_addr_t *ep,
                         const knot_dname_t *domain)
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

static knot_dname_t *name_of(ctx_t *c, const k8s_svc_t *svc, const k8s_addr_t *ep,
                             const knot_dname_t *domain)
{
	uint8_t buf[KNOT_DNAME_MAXLEN];
	size_t size = write_name(buf, sizeof(buf), svc, ep, domain);
	if (size == 0) {
		return NULL;
	}
	knot_dname_t *name = mm_get(c->mm, size);
	if (name != NULL) {
		memcpy(name, buf, size);
	}
	return name;
}

/*!
 * \brief Builds an rdataset of the addresses of one family among adjacent records.
 *
 * The records of one name never pass K8S_MAX_A_PER_NAME or K8S_MAX_AAAA_PER_NAME
 * (the block builder cuts them), so their count fits the rdataset's.
 */
static int addr_rrs(ctx_t *c, const k8s_addr_t *addrs, size_t count, uint8_t family,
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

/*! \brief Answers A, AAAA (or both for ANY) from address records. */
static k8s_answer_t answer_addrs(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_addr_t *addrs, size_t count)
{
	bool any = c->qtype == KNOT_RRTYPE_ANY;
	bool hit = false;
	for (int i = 0; i < 2; i++) {
		uint16_t type = (i == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA;
		if (c->qtype != type && !any) {
			continue;
		}
		knot_rdataset_t rrs;
		int ret = addr_rrs(c, addrs, count, (i == 0) ? AF_INET : AF_INET6, &rrs);
		if (ret == KNOT_EOK && rrs.count > 0) {
			ret = put(c, owner, hint_for(owner, qname), type, c->conf->ttl, &rrs, 0);
			hit = true;
		}
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
	}
	return hit ? K8S_ANSWER_HIT : K8S_ANSWER_NODATA;
}

/*! \brief Answers A, AAAA (or both) from a service's prebuilt rdatasets. */
static k8s_answer_t answer_svc_addrs(ctx_t *c, const knot_dname_t *owner,
                                     const knot_dname_t *qname, const k8s_svc_t *svc)
{
	bool any = c->qtype == KNOT_RRTYPE_ANY;
	bool hit = false;
	if ((c->qtype == KNOT_RRTYPE_A || any) && svc->rrs_a.count > 0) {
		int ret = put(c, owner, hint_for(owner, qname), KNOT_RRTYPE_A, c->conf->ttl,
		              &svc->rrs_a, 0);
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
		hit = true;
	}
	if ((c->qtype == KNOT_RRTYPE_AAAA || any) && svc->rrs_aaaa.count > 0) {
		int ret = put(c, owner, hint_for(owner, qname), KNOT_RRTYPE_AAAA, c->conf->ttl,
		              &svc->rrs_aaaa, 0);
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
		hit = true;
	}
	return hit ? K8S_ANSWER_HIT : K8S_ANSWER_NODATA;
}

/*! \brief True if two adjacent endpoint records name the same SRV target. */
static bool same_target(const k8s_addr_t *a, const k8s_addr_t *b)
{
	return a->cluster == b->cluster && a->label != 0 && a->label == b->label;
}

/*!
 * \brief Answers SRV for one named port (or all of them).
 *
 * ClusterIP services have one target, the service name; headless services one
 * per ready endpoint (hostname or dashed address).
 */
static k8s_answer_t answer_srv(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                               const k8s_svc_t *svc, const k8s_svc_port_t *only,
                               const knot_dname_t *domain)
{
	bool headless = svc->type == K8S_SVC_HEADLESS;
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t ep_count = svc->addr_count - svc->sip_count;
	size_t port_count = (only != NULL) ? 1 : svc->port_count;
	if (port_count == 0 || (headless && ep_count == 0)) {
		return K8S_ANSWER_NODATA;
	}

	size_t targets = 1;
	if (headless) {
		targets = 0;
		for (size_t i = 0; i < ep_count; i++) {
			targets += (i == 0 || !same_target(&eps[i - 1], &eps[i]));
		}
	}
	uint16_t weight = (targets >= 100) ? 1 : 100 / targets;

	// Build no more than could fit: past that the answer is truncated anyway.
	size_t room = c->pkt->max_size - c->pkt->size;
	size_t rr_max = targets * port_count;
	if (rr_max > room / 20 + 1) {
		rr_max = room / 20 + 1;
	}
	if (rr_max > UINT16_MAX) {
		rr_max = UINT16_MAX;
	}
	uint8_t *rdata = mm_get(c->mm, rr_max * knot_rdata_size(6 + KNOT_DNAME_MAXLEN));
	if (rdata == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}

	knot_rdataset_t rrs = { .rdata = (knot_rdata_t *)rdata };
	uint8_t *pos = rdata;
	for (size_t p = 0; p < port_count && rrs.count < rr_max; p++) {
		const k8s_svc_port_t *port = (only != NULL) ? only : &svc->ports[p];
		for (size_t i = 0; i < (headless ? ep_count : 1) && rrs.count < rr_max; i++) {
			if (headless && i > 0 && same_target(&eps[i - 1], &eps[i])) {
				continue;
			}
			uint8_t data[6 + KNOT_DNAME_MAXLEN];
			knot_wire_write_u16(data, 0);
			knot_wire_write_u16(data + 2, weight);
			knot_wire_write_u16(data + 4, port->port);
			size_t size = write_name(data + 6, KNOT_DNAME_MAXLEN, svc,
			                         headless ? &eps[i] : NULL, domain);
			if (size == 0) {
				continue;
			}
			knot_rdata_init((knot_rdata_t *)pos, 6 + size, data);
			pos += knot_rdata_size(6 + size);
			rrs.count++;
		}
	}
	rrs.size = pos - rdata;
	if (rrs.count == 0) {
		return K8S_ANSWER_NODATA;
	}

	int ret = put(c, owner, hint_for(owner, qname), KNOT_RRTYPE_SRV, c->conf->ttl, &rrs, 0);
	if (ret == KNOT_EOK) {
		last_srv.pkt = c->pkt;
		last_srv.svc = svc;
		last_srv.domain = domain;
		last_srv.rr = c->pkt->rrset_count - 1;
	}
	return put_result(ret);
}

static const k8s_svc_port_t *find_port(const k8s_svc_t *svc, const uint8_t *name,
                                       const uint8_t *proto)
{
	for (uint16_t i = 0; i < svc->port_count; i++) {
		const k8s_svc_port_t *port = &svc->ports[i];
		const uint8_t *port_name = svc->strings + port->name;
		if (k8s_label_equal(port_name, name) &&
		    k8s_label_is(proto, k8s_proto_name(port->proto))) {
			return port;
		}
	}
	return NULL;
}

/*! \brief True if "_<proto>" is an empty non-terminal above some named port's SRV. */
static bool has_proto(const k8s_svc_t *svc, const uint8_t *proto)
{
	for (uint16_t i = 0; i < svc->port_count; i++) {
		if (k8s_label_is(proto, k8s_proto_name(svc->ports[i].proto))) {
			return true;
		}
	}
	return false;
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

static k8s_answer_t answer_name(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                k8s_role_t role, const knot_dname_t *zone, unsigned depth);

/*! \brief Puts "owner CNAME target"; \a target must live as long as the packet. */
static int put_cname(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
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

/*! \brief Answers a CNAME's target in one of our zones, after the CNAME. */
static k8s_answer_t follow(ctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                           k8s_role_t role, const knot_dname_t *zone, unsigned depth)
{
	if (depth >= MAX_CHASE) {
		return K8S_ANSWER_HIT;
	}
	k8s_answer_t res = answer_name(c, target, qname, role, zone, depth + 1);
	switch (res) {
	case K8S_ANSWER_NXDOMAIN: return K8S_ANSWER_HIT_NXDOMAIN;
	case K8S_ANSWER_NODATA:
	case K8S_ANSWER_PASS:     return K8S_ANSWER_HIT;
	default:                  return res;
	}
}

/*! \brief The table zone whose domain a name is below, or K8S_ZONE_COUNT if none of ours. */
static k8s_zone_t zone_of(const k8s_answer_conf_t *conf, const knot_dname_t *name)
{
	for (int z = 0; z < K8S_ZONE_COUNT; z++) {
		const knot_dname_t *domain = conf->domains[z];
		if (domain != NULL && knot_dname_in_bailiwick(name, domain) > 0) {
			return z;
		}
	}
	return K8S_ZONE_COUNT;
}

static k8s_role_t zone_role(k8s_zone_t zone)
{
	return (zone == K8S_ZONE_CLUSTER) ? K8S_ROLE_CLUSTER : K8S_ROLE_CLUSTERSET;
}

/*!
 * \brief Answers a CNAME target in one of our zones, as knotd follows CNAMEs in a zone.
 *
 * \return The target's outcome, or K8S_ANSWER_PASS if it is in none of our zones.
 */
static k8s_answer_t chase(ctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                          unsigned depth)
{
	k8s_zone_t z = zone_of(c->conf, target);
	if (z == K8S_ZONE_COUNT) {
		return K8S_ANSWER_PASS;
	}
	return follow(c, target, qname, zone_role(z), c->conf->domains[z], depth);
}

/*! \brief ExternalName: the CNAME, then its target's records when we can have them. */
static k8s_answer_t answer_cname(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_svc_t *svc, unsigned depth)
{
	int ret = put_cname(c, owner, qname, svc->target);
	if (ret != KNOT_EOK || c->qtype == KNOT_RRTYPE_CNAME) {
		return put_result(ret);
	}
	k8s_answer_t res = chase(c, svc->target, qname, depth);
	if (res != K8S_ANSWER_PASS) {
		return res;
	}

	// Elsewhere: the upstream cache, for address queries.
	const k8s_answer_conf_t *conf = c->conf;
	if (conf->upstream == NULL ||
	    (c->qtype != KNOT_RRTYPE_A && c->qtype != KNOT_RRTYPE_AAAA)) {
		return K8S_ANSWER_HIT;
	}
	const k8s_upstream_answer_t *ext;
	if (k8s_upstream_lookup(conf->upstream, svc->target, c->qtype, &ext) != K8S_UPSTREAM_READY) {
		return K8S_ANSWER_SERVFAIL;
	}
	// The cached chain is shared: only the TTL, capped at what remains, is our own.
	uint64_t now_s = k8s_now_ms() / 1000;
	uint32_t left = (ext->expires > now_s) ? ext->expires - now_s : 0;
	for (uint16_t i = 0; i < ext->count; i++) {
		knot_rrset_t rr = ext->rrsets[i];
		rr.ttl = (rr.ttl < left) ? rr.ttl : left;
		ret = knot_pkt_put(c->pkt, KNOT_COMPR_HINT_NONE, &rr, 0);
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
	}
	return (ext->rcode == KNOT_RCODE_NXDOMAIN) ? K8S_ANSWER_HIT_NXDOMAIN : K8S_ANSWER_HIT;
}

/*!
 * \brief A federated service: a CNAME to the local service while it has
 * endpoints, followed by its records; else a CNAME to the federation's name for
 * this cluster's zone and region, which the resolver follows elsewhere.
 */
static k8s_answer_t answer_federation(ctx_t *c, const knot_dname_t *owner,
                                      const knot_dname_t *qname, const k8s_fedquery_t *fq,
                                      const knot_dname_t *zone, unsigned depth)
{
	const k8s_svc_t *svc = NULL;
	if (k8s_table_ns(c->t, fq->ns)) {
		svc = k8s_table_svc(c->t, K8S_ZONE_CLUSTER, fq->owner, fq->owner_len);
	}
	bool local = svc != NULL && k8s_federation_local(svc);

	uint8_t name[KNOT_DNAME_MAXLEN];
	size_t size;
	if (local) {
		size = write_name(name, sizeof(name), svc, NULL, zone);
	} else {
		const k8s_topology_t *topology = c->conf->topology;
		if (topology == NULL) {
			topology = k8s_table_topology(c->t);
		}
		size = k8s_federation_remote_name(fq, topology, name);
	}
	if (size == 0) {
		return K8S_ANSWER_NXDOMAIN;  // Longer than a DNS name: no name to point to.
	}
	knot_dname_t *target = mm_get(c->mm, size);
	if (target == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}
	memcpy(target, name, size);

	int ret = put_cname(c, owner, qname, target);
	if (ret != KNOT_EOK || !local || c->qtype == KNOT_RRTYPE_CNAME) {
		return put_result(ret);
	}
	return follow(c, target, qname, K8S_ROLE_CLUSTER, zone, depth);
}

/*! \brief Whether a service's names exist at all. */
static bool svc_exists(const k8s_answer_conf_t *conf, const k8s_svc_t *svc)
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

static k8s_answer_t answer_service(ctx_t *c, const knot_dname_t *owner,
                                   const knot_dname_t *qname, const k8s_svc_t *svc,
                                   const knot_dname_t *domain, unsigned depth)
{
	if (svc->type == K8S_SVC_EXTERNALNAME && svc->target != NULL) {
		return answer_cname(c, owner, qname, svc, depth);
	}
	if (c->qtype == KNOT_RRTYPE_SRV) {
		// SRV at the bare service name lists every named port (CoreDNS does the same).
		return answer_srv(c, owner, qname, svc, NULL, domain);
	}
	return answer_svc_addrs(c, owner, qname, svc);
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
static k8s_answer_t answer_cluster_subname(ctx_t *c, const knot_dname_t *owner,
                                           const knot_dname_t *qname, const k8s_qname_t *q,
                                           const k8s_svc_t *svc)
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
				return answer_addrs(c, owner, qname, eps, count);
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
static k8s_answer_t answer_subname(ctx_t *c, const knot_dname_t *owner,
                                   const knot_dname_t *qname, const k8s_qname_t *q,
                                   const k8s_svc_t *svc, k8s_role_t role,
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
			const k8s_svc_port_t *port = find_port(svc, name, proto);
			if (port == NULL) {
				return K8S_ANSWER_NXDOMAIN;
			}
			if (c->qtype != KNOT_RRTYPE_SRV && c->qtype != KNOT_RRTYPE_ANY) {
				return K8S_ANSWER_NODATA;
			}
			return answer_srv(c, owner, qname, svc, port, domain);
		}
	}
	if (q->sub_count == 1) {
		const uint8_t *proto = strip_underscore(q->sub[0], proto_buf);
		if (proto != NULL) {
			return has_proto(svc, proto) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
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
	return answer_addrs(c, owner, qname, eps, count);
}

/*! \brief dns-version, svc., pod., namespaces, services and their subnames, pods. */
static k8s_answer_t answer_name(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                k8s_role_t role, const knot_dname_t *zone, unsigned depth)
{
	const k8s_answer_conf_t *conf = c->conf;
	k8s_qname_t q;
	k8s_qname_parse(owner, zone, role, &q);
	k8s_zone_t table_zone = (role == K8S_ROLE_CLUSTERSET) ? K8S_ZONE_CLUSTERSET : K8S_ZONE_CLUSTER;

	switch (q.kind) {
	case K8S_Q_APEX:
		return K8S_ANSWER_PASS;
	case K8S_Q_DNS_VERSION:
		if (owner != qname) {
			return K8S_ANSWER_NODATA;
		}
		if (c->qtype != KNOT_RRTYPE_TXT && c->qtype != KNOT_RRTYPE_ANY) {
			return K8S_ANSWER_NODATA;
		}
		return put_result(put(c, owner, KNOT_COMPR_HINT_QNAME, KNOT_RRTYPE_TXT,
		                      K8S_VERSION_TTL, &conf->version, 0));
	case K8S_Q_SVC_ROOT:
		return K8S_ANSWER_NODATA;
	case K8S_Q_POD_ROOT:
		return (role == K8S_ROLE_CLUSTER) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	case K8S_Q_NAMESPACE:
		if (q.under_pod && role != K8S_ROLE_CLUSTER) {
			return K8S_ANSWER_NXDOMAIN;
		}
		return k8s_table_ns(c->t, q.ns) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	case K8S_Q_POD:
		if (conf->pods == K8S_PODS_DISABLED || !k8s_table_ns(c->t, q.ns) ||
		    (conf->pods == K8S_PODS_VERIFIED && !k8s_table_pod(c->t, &q.ip, q.ns))) {
			return K8S_ANSWER_NXDOMAIN;
		}
		k8s_addr_t addr = { .family = q.ip.family };
		memcpy(addr.bytes, q.ip.bytes, sizeof(addr.bytes));
		return answer_addrs(c, owner, qname, &addr, 1);
	case K8S_Q_SERVICE:
	case K8S_Q_SUBNAME:
		break;
	default:
		return K8S_ANSWER_NXDOMAIN;
	}

	// <svc>.<ns>.<fed>.svc.<zone> names a federated service when <fed> is a federation.
	k8s_fedquery_t fq;
	if (role == K8S_ROLE_CLUSTER &&
	    k8s_federation_query(conf->federations, conf->federation_count, &q, &fq)) {
		return answer_federation(c, owner, qname, &fq, zone, depth);
	}

	// Services exist only in existing (exposed) namespaces.
	if (!k8s_table_ns(c->t, q.ns)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	const k8s_svc_t *svc = k8s_table_svc(c->t, table_zone, q.owner, q.owner_len);
	if (svc == NULL || !svc_exists(conf, svc)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	// SRV targets are names in the zone the service was found in.
	const knot_dname_t *domain = zone;
	if (q.kind == K8S_Q_SERVICE) {
		return answer_service(c, owner, qname, svc, domain, depth);
	}
	return answer_subname(c, owner, qname, &q, svc, role, domain);
}

/*! \brief PTR of an address; NODATA or NXDOMAIN for prefixes. */
static k8s_answer_t answer_reverse(ctx_t *c, const knot_dname_t *qname, const k8s_qname_t *q)
{
	unsigned full = (q->ip.family == AF_INET) ? 32 : 128;
	if (q->ip_bits < full) {
		return k8s_table_prefix(c->t, &q->ip, q->ip_bits) ? K8S_ANSWER_NODATA
		                                                   : K8S_ANSWER_NXDOMAIN;
	}

	const k8s_addr_t *refs[MAX_PTR];
	size_t found = k8s_table_ptr(c->t, &q->ip, refs, MAX_PTR);
	if (found == 0) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (c->qtype != KNOT_RRTYPE_PTR && c->qtype != KNOT_RRTYPE_ANY) {
		return K8S_ANSWER_NODATA;
	}
	if (found > MAX_PTR) {
		found = MAX_PTR;
	}

	// Cluster-zone records come first and claim the address: clusterset
	// records appear only for addresses no local record has.
	uint8_t claimed = k8s_addr_svc(refs[0])->zone;
	uint8_t *rdata = mm_get(c->mm, found * knot_rdata_size(KNOT_DNAME_MAXLEN));
	if (rdata == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}
	knot_rdataset_t rrs = { .rdata = (knot_rdata_t *)rdata };
	uint8_t *pos = rdata;
	for (size_t i = 0; i < found; i++) {
		const k8s_svc_t *svc = k8s_addr_svc(refs[i]);
		const knot_dname_t *domain = c->conf->domains[svc->zone];
		if (svc->zone != claimed || domain == NULL) {
			continue;
		}
		uint8_t name[KNOT_DNAME_MAXLEN];
		const k8s_addr_t *ep = (refs[i]->flags & K8S_ADDR_SERVICE_IP) ? NULL : refs[i];
		size_t size = write_name(name, sizeof(name), svc, ep, domain);
		if (size == 0) {
			continue;
		}
		// The same name twice (one address, two records) is one PTR.
		bool dup = false;
		for (knot_rdata_t *rd = rrs.rdata; (uint8_t *)rd < pos; rd = knot_rdataset_next(rd)) {
			dup = dup || (rd->len == size && memcmp(rd->data, name, size) == 0);
		}
		if (dup) {
			continue;
		}
		knot_rdata_init((knot_rdata_t *)pos, size, name);
		pos += knot_rdata_size(size);
		rrs.count++;
	}
	rrs.size = pos - rdata;
	if (rrs.count == 0) {
		return K8S_ANSWER_NODATA;
	}
	return put_result(put(c, qname, KNOT_COMPR_HINT_QNAME, KNOT_RRTYPE_PTR, c->conf->ttl,
	                      &rrs, 0));
}

/* Server-side search path expansion (KEP "DNS Autopath in PodSpec"). */

/*! \brief Most search paths taken from a query's EDNS option. */
#define MAX_SEARCH 8

/*! \brief A candidate: the name's labels, then a search path (a wire dname), into \a out. */
static size_t candidate(uint8_t out[KNOT_DNAME_MAXLEN], const uint8_t *name, size_t name_size,
                        const knot_dname_t *path)
{
	size_t path_size = knot_dname_size(path);
	if (name_size + path_size > KNOT_DNAME_MAXLEN) {
		return 0;
	}
	memcpy(out, name, name_size);
	memcpy(out + name_size, path, path_size);
	return name_size + path_size;
}

/*! \brief The search list: the query's EDNS option (comma-separated domains) or the KEP's three. */
static size_t search_list(const ctx_t *c, const knot_pkt_t *query, const uint8_t *ns,
                          knot_dname_storage_t paths[MAX_SEARCH])
{
	const knot_dname_t *suffix = c->conf->domains[K8S_ZONE_CLUSTER];
	uint8_t *opt = NULL;
	if (c->conf->autopath_option != 0 && query != NULL && query->opt_rr != NULL) {
		opt = knot_edns_get_option(query->opt_rr, c->conf->autopath_option, NULL);
	}
	if (opt == NULL) {
		// <ns>.svc.<suffix>, svc.<suffix>, <suffix>: the pod's ClusterFirst search path.
		size_t ns_size = 1 + ns[0], suffix_size = knot_dname_size(suffix);
		if (ns_size + 4 + suffix_size > KNOT_DNAME_MAXLEN) {
			return 0;
		}
		memcpy(paths[0], ns, ns_size);
		memcpy(paths[0] + ns_size, "\x03svc", 4);
		memcpy(paths[0] + ns_size + 4, suffix, suffix_size);
		memcpy(paths[1], "\x03svc", 4);
		memcpy(paths[1] + 4, suffix, suffix_size);
		memcpy(paths[2], suffix, suffix_size);
		return 3;
	}

	size_t count = 0, len = knot_edns_opt_get_length(opt);
	const char *text = (const char *)knot_edns_opt_get_data(opt);
	for (size_t start = 0; start < len && count < MAX_SEARCH; ) {
		size_t end = start;
		while (end < len && text[end] != ',') {
			end++;
		}
		char domain[KNOT_DNAME_TXT_MAXLEN + 1];
		size_t size = end - start;
		if (size > 0 && size < sizeof(domain)) {
			memcpy(domain, text + start, size);
			domain[size] = '\0';
			if (knot_dname_from_str(paths[count], domain, KNOT_DNAME_MAXLEN) != NULL) {
				knot_dname_to_lower(paths[count++]);
			}
		}
		start = end + 1;
	}
	return count;
}

/*!
 * \brief Answers <name>.search.<ns>.<cluster domain>.<autopath zone> from the first name of
 * the search list that exists in our zones: a CNAME to it, then its records.
 *
 * Only names in our zones are tried, so nothing waits on the network; when none
 * exists the answer is NXDOMAIN and the client goes on with the absolute name.
 */
static k8s_answer_t answer_autopath(ctx_t *c, const knot_dname_t *qname, const knot_pkt_t *query)
{
	const k8s_answer_conf_t *conf = c->conf;
	const knot_dname_t *suffix = conf->domains[K8S_ZONE_CLUSTER];
	size_t suffix_labels = knot_dname_labels(suffix, NULL);
	size_t suffix_size = knot_dname_size(suffix) - 1;

	const uint8_t *labels[KNOT_DNAME_MAXLABELS];
	size_t total = 0;
	for (const uint8_t *l = qname; *l != 0; l += 1 + *l) {
		labels[total++] = l;
	}
	size_t n = total - knot_dname_labels(conf->zone, NULL);
	if (n == 0) {
		return K8S_ANSWER_PASS;
	}

	// Right below the zone apex: the cluster domain, else the name cannot be a search path.
	const uint8_t *apex = labels[n - 1] + 1 + labels[n - 1][0];
	if (n <= suffix_labels) {
		const uint8_t *tail = suffix;
		for (size_t skip = suffix_labels - n; skip > 0; skip--) {
			tail += 1 + tail[0];
		}
		// Sizes first: either name may be the shorter, and neither is read past its end.
		size_t size = apex - qname;
		bool equal = size == knot_dname_size(tail) - 1 && memcmp(tail, qname, size) == 0;
		return equal ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	}
	const uint8_t *domain = labels[n - suffix_labels];
	if ((size_t)(apex - domain) != suffix_size || memcmp(domain, suffix, suffix_size) != 0) {
		return K8S_ANSWER_NXDOMAIN;
	}
	const uint8_t *ns = labels[n - suffix_labels - 1];
	if (!k8s_table_ns(c->t, ns)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (n == suffix_labels + 1) {
		return K8S_ANSWER_NODATA;  // <ns>.<suffix>: above the search domain.
	}
	if (!k8s_label_is(labels[n - suffix_labels - 2], "search")) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (n == suffix_labels + 2) {
		return K8S_ANSWER_NODATA;  // The search domain itself.
	}
	const uint8_t *name = qname;
	size_t name_size = labels[n - suffix_labels - 2] - qname;

	knot_dname_storage_t paths[MAX_SEARCH];
	size_t path_count = search_list(c, query, ns, paths);

	// Each candidate is answered aside; the first one that exists is copied over.
	knot_pkt_t *scratch = knot_pkt_new(NULL, c->pkt->max_size, c->mm);
	if (scratch == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}
	ctx_t aside = *c;
	aside.pkt = scratch;
	for (size_t i = 0; i < path_count; i++) {
		uint8_t cand[KNOT_DNAME_MAXLEN];
		size_t cand_size = candidate(cand, name, name_size, paths[i]);
		if (cand_size == 0) {
			continue;
		}
		k8s_zone_t z = zone_of(conf, cand);
		if (z == K8S_ZONE_COUNT) {
			continue;  // Not ours: answering it would wait on the network.
		}
		uint32_t ready = (z == K8S_ZONE_CLUSTER) ? K8S_READY_CLUSTER : K8S_READY_CLUSTERSET;
		if (!(k8s_table_ready(c->t) & ready)) {
			continue;
		}
		knot_dname_t *owner = mm_get(c->mm, cand_size);
		if (owner == NULL) {
			return K8S_ANSWER_SERVFAIL;
		}
		memcpy(owner, cand, cand_size);
		k8s_answer_t res = answer_name(&aside, owner, qname, zone_role(z), conf->domains[z], 0);
		if (res == K8S_ANSWER_NXDOMAIN || res == K8S_ANSWER_PASS) {
			continue;
		}
		if (res != K8S_ANSWER_HIT && res != K8S_ANSWER_NODATA && res != K8S_ANSWER_HIT_NXDOMAIN) {
			return res;
		}

		// qname CNAME <candidate>, then what the candidate answered.
		int ret = put_cname(c, qname, qname, owner);
		for (uint16_t j = 0; ret == KNOT_EOK && j < scratch->rrset_count; j++) {
			ret = knot_pkt_put(c->pkt, KNOT_COMPR_HINT_NONE, &scratch->rr[j], 0);
		}
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
		return (res == K8S_ANSWER_HIT_NXDOMAIN) ? K8S_ANSWER_HIT_NXDOMAIN : K8S_ANSWER_HIT;
	}
	return K8S_ANSWER_NXDOMAIN;
}

k8s_answer_t k8s_answer(const k8s_answer_conf_t *conf, const k8s_table_t *t,
                        const knot_dname_t *qname, uint16_t qtype, const knot_pkt_t *query,
                        knot_pkt_t *pkt, knot_mm_t *mm)
{
	uint32_t need = (conf->role == K8S_ROLE_CLUSTERSET) ? K8S_READY_CLUSTERSET
	                                                    : K8S_READY_CLUSTER;
	if (!(k8s_table_ready(t) & need)) {
		return K8S_ANSWER_NOTREADY;
	}

	ctx_t c = { .conf = conf, .t = t, .pkt = pkt, .mm = mm, .qtype = qtype };
	if (conf->role == K8S_ROLE_AUTOPATH) {
		return answer_autopath(&c, qname, query);
	}
	if (conf->role == K8S_ROLE_REVERSE) {
		k8s_qname_t q;
		k8s_qname_parse(qname, conf->zone, conf->role, &q);
		switch (q.kind) {
		case K8S_Q_APEX:    return K8S_ANSWER_PASS;
		case K8S_Q_REVERSE: return answer_reverse(&c, qname, &q);
		default:            return K8S_ANSWER_NXDOMAIN;
		}
	}
	return answer_name(&c, qname, qname, conf->role, conf->zone, 0);
}

void k8s_answer_forget(void)
{
	last_srv.pkt = NULL;
	last_srv.svc = NULL;
}

void k8s_answer_additional(const k8s_answer_conf_t *conf, const knot_pkt_t *answered,
                           knot_pkt_t *pkt, knot_mm_t *mm)
{
	if (last_srv.pkt != answered || last_srv.svc == NULL) {
		return;
	}
	const k8s_svc_t *svc = last_srv.svc;
	last_srv.pkt = NULL;
	ctx_t c = { .conf = conf, .pkt = pkt, .mm = mm, .qtype = KNOT_RRTYPE_ANY };

	if (svc->type != K8S_SVC_HEADLESS) {
		knot_dname_t *owner = name_of(&c, svc, NULL, last_srv.domain);
		if (owner == NULL) {
			return;
		}
		// The owner is every SRV record's target: point at the first one, as knotd
		// does for zone data, instead of searching the packet for a suffix.
		uint16_t hint = KNOT_COMPR_HINT_NONE;
		if (last_srv.rr < pkt->rrset_count && pkt->rr[last_srv.rr].type == KNOT_RRTYPE_SRV) {
			hint = knot_compr_hint(&pkt->rr_info[last_srv.rr], KNOT_COMPR_HINT_RDATA);
		}
		if (svc->rrs_a.count > 0 &&
		    put(&c, owner, hint, KNOT_RRTYPE_A, conf->ttl, &svc->rrs_a,
		        KNOT_PF_NOTRUNC) != KNOT_EOK) {
			return;
		}
		if (svc->rrs_aaaa.count > 0) {
			(void)put(&c, owner, hint, KNOT_RRTYPE_AAAA, conf->ttl,
			          &svc->rrs_aaaa, KNOT_PF_NOTRUNC);
		}
		return;
	}

	// One owner per target; its records are adjacent in the block.
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t n = svc->addr_count - svc->sip_count;
	for (size_t i = 0; i < n; ) {
		size_t end = i + 1;
		while (end < n && same_target(&eps[end - 1], &eps[end])) {
			end++;
		}
		knot_dname_t *owner = name_of(&c, svc, &eps[i], last_srv.domain);
		for (int f = 0; owner != NULL && f < 2; f++) {
			knot_rdataset_t rrs;
			if (addr_rrs(&c, &eps[i], end - i, (f == 0) ? AF_INET : AF_INET6, &rrs) != KNOT_EOK) {
				return;
			}
			if (rrs.count > 0 &&
			    put(&c, owner, KNOT_COMPR_HINT_NONE, (f == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA,
			        conf->ttl, &rrs, KNOT_PF_NOTRUNC) != KNOT_EOK) {
				return;  // Out of room: the rest is left out.
			}
		}
		i = end;
	}
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
