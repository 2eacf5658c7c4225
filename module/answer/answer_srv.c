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

/* SRV answers and the ADDITIONAL stage that adds their targets' addresses. */

#include <stddef.h>
#include <string.h>

#include "answer/answer_priv.h"
#include "kinds/proto.h"

/*!
 * \brief The service of the last SRV answer on this worker, for its ADDITIONAL stage.
 *
 * Touched on every query: initial-exec makes it one %fs-relative access instead of a
 * __tls_get_addr call (the default for a shared object). Its 32 bytes fit in the static
 * TLS space glibc reserves for objects loaded by dlopen.
 */
static __thread struct {
	const knot_pkt_t *pkt;
	const k8s_block_t *svc;
	const knot_dname_t *domain;
	uint16_t rr;            /*!< Index of the SRV RRset in the packet. */
	uint16_t port_first;    /*!< The answered ports: svc->ports[port_first, port_end). */
	uint16_t port_end;
	uint16_t topo;          /*!< The endpoints of this topology zone only (zonal names), 0: all. */
} last_srv __attribute__((tls_model("initial-exec")));

/*! \brief True if a target (the records eps[i, end)) has a record in the topology zone \a topo (0: any). */
static inline bool target_in_topo(const k8s_addr_t *eps, size_t i, size_t end, uint16_t topo)
{
	for (; topo != 0 && i < end; i++) {
		if (eps[i].topo == topo) {
			return true;
		}
	}
	return topo == 0;
}

/*!
 * \brief True if two adjacent endpoint records name the same SRV target: one label (and
 * in the clusterset zone one cluster; in the cluster zone the field is a topology zone,
 * which two addresses of one name may not share).
 */
static bool same_target(const k8s_block_t *svc, const k8s_addr_t *a, const k8s_addr_t *b)
{
	return (svc->cluster_count == 0 || a->cluster == b->cluster) && a->label != 0 &&
	       a->label == b->label;
}

/*! \brief The end of the target (adjacent records of one name) that starts at eps[i]. */
static size_t target_end(const k8s_block_t *svc, const k8s_addr_t *eps, size_t count, size_t i)
{
	size_t end = i + 1;
	while (end < count && same_target(svc, &eps[end - 1], &eps[end])) {
		end++;
	}
	return end;
}

/*!
 * \brief The first port of [from, last) that a target (the records eps[i, end)) has, or \a last.
 *
 * A target's records normally share one port set (an address's two families
 * come from slices of equal ports); each is asked otherwise.
 */
static inline size_t target_next_port(const k8s_block_t *svc, const k8s_addr_t *eps, size_t i,
                                      size_t end, size_t from, size_t last)
{
	if (svc->ep_ports == NULL) {
		return (from < last) ? from : last;  // Every endpoint has every port: the common case.
	}
	size_t next = last;
	for (; i < end && next > from; i++) {
		size_t own = k8s_addr_next_port(svc, &eps[i], from, next);
		next = (own < next) ? own : next;
	}
	return next;
}

/*! \brief The end of the ports with the name and protocol of svc->ports[first]. */
static size_t port_run_end(const k8s_block_t *svc, size_t first)
{
	const k8s_svc_port_t *port = &svc->ports[first];
	size_t end = first + 1;
	while (end < svc->port_count && svc->ports[end].name == port->name &&
	       svc->ports[end].proto == port->proto) {
		end++;
	}
	return end;
}

/*!
 * \brief SRV records of the ports [first, last), counted up to \a cap: one per
 * target and port it has (ClusterIP: per port).
 *
 * The cap bounds the work by what the answer can hold: a target costs a
 * binary search, a record one step.
 */
static size_t srv_count(const k8s_block_t *svc, size_t first, size_t last, size_t cap,
                        uint16_t topo)
{
	if (svc->type != K8S_SVC_HEADLESS) {
		return last - first;
	}
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t ep_count = svc->addr_count - svc->sip_count;
	size_t n = 0;
	for (size_t i = 0, t_end; i < ep_count && n < cap; i = t_end) {
		t_end = target_end(svc, eps, ep_count, i);
		if (!target_in_topo(eps, i, t_end, topo)) {
			continue;
		}
		if (svc->ep_ports == NULL) {
			n += last - first;
			continue;
		}
		for (size_t p = target_next_port(svc, eps, i, t_end, first, last);
		     p < last && n < cap; p = target_next_port(svc, eps, i, t_end, p + 1, last)) {
			n++;
		}
	}
	return n;
}

/*! \brief Appends an SRV record to the rdata at \a pos; returns the new end (\a pos if no room for the name). */
static inline uint8_t *put_srv(uint8_t *pos, uint16_t weight, uint16_t port, const k8s_block_t *svc,
                               const k8s_addr_t *ep, const knot_dname_t *domain)
{
	// Written in place (the caller's room is knot_rdata_size(6 + KNOT_DNAME_MAXLEN)).
	knot_rdata_t *rd = (knot_rdata_t *)pos;
	knot_wire_write_u16(rd->data, 0);
	knot_wire_write_u16(rd->data + 2, weight);
	knot_wire_write_u16(rd->data + 4, port);
	size_t size = write_name(rd->data + 6, KNOT_DNAME_MAXLEN, svc, ep, domain);
	if (size == 0) {
		return pos;
	}
	rd->len = 6 + size;
	if (rd->len & 1) {
		rd->data[rd->len] = 0;  // The padding, as knot_rdata_init() leaves it.
	}
	return pos + knot_rdata_size(rd->len);
}

/*!
 * \brief Answers SRV for the ports [first, last) (one name and protocol, or all of them).
 *
 * ClusterIP services have one target, the service name, with the weight 100;
 * headless services one per ready endpoint (hostname or dashed address) and
 * port of its own slices, the answer's records sharing the weight 100.
 */
static k8s_answer_t answer_srv(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                               const k8s_block_t *svc, size_t first, size_t last,
                               const knot_dname_t *domain, uint16_t topo)
{
	bool headless = svc->type == K8S_SVC_HEADLESS;
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t ep_count = svc->addr_count - svc->sip_count;
	if (first == last || (headless && ep_count == 0)) {
		return K8S_ANSWER_NODATA;
	}

	// Build no more than could fit: past that the answer is truncated anyway. Past 100
	// records the weight is 1 whatever their number.
	size_t room = c->pkt->max_size - c->pkt->size;
	size_t rr_cap = room / 20 + 1;
	if (rr_cap > UINT16_MAX) {
		rr_cap = UINT16_MAX;
	}
	size_t total = srv_count(svc, first, last, (rr_cap > 100) ? rr_cap : 100, topo);
	if (total == 0) {
		return K8S_ANSWER_NODATA;
	}
	size_t rr_max = (total < rr_cap) ? total : rr_cap;
	uint16_t weight = !headless ? 100 : (total >= 100) ? 1 : 100 / total;
	uint8_t *rdata = mm_get(c->mm, rr_max * knot_rdata_size(6 + KNOT_DNAME_MAXLEN));
	if (rdata == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}

	knot_rdataset_t rrs = { .rdata = (knot_rdata_t *)rdata };
	uint8_t *pos = rdata;
	if (!headless) {
		for (size_t p = first; p < last && rrs.count < rr_max; p++) {
			uint8_t *end = put_srv(pos, weight, svc->ports[p].port, svc, NULL, domain);
			rrs.count += (end != pos);
			pos = end;
		}
	}
	// Headless: target by target, each with the ports it has, so work follows the answer.
	for (size_t i = 0, t_end; headless && i < ep_count && rrs.count < rr_max; i = t_end) {
		t_end = target_end(svc, eps, ep_count, i);
		if (!target_in_topo(eps, i, t_end, topo)) {
			continue;
		}
		for (size_t p = target_next_port(svc, eps, i, t_end, first, last);
		     p < last && rrs.count < rr_max;
		     p = target_next_port(svc, eps, i, t_end, p + 1, last)) {
			uint8_t *end = put_srv(pos, weight, svc->ports[p].port, svc, &eps[i], domain);
			rrs.count += (end != pos);
			pos = end;
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
		last_srv.port_first = first;
		last_srv.port_end = last;
		last_srv.topo = topo;
	}
	return put_result(ret);
}

k8s_answer_t k8s_answer_srv(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                            const k8s_block_t *svc, const knot_dname_t *domain)
{
	return answer_srv(c, owner, qname, svc, 0, svc->port_count, domain, 0);
}

k8s_answer_t k8s_answer_srv_topo(k8s_qctx_t *c, const knot_dname_t *owner,
                                 const knot_dname_t *qname, const k8s_block_t *svc,
                                 const knot_dname_t *domain, uint16_t topo)
{
	return answer_srv(c, owner, qname, svc, 0, svc->port_count, domain, topo);
}

/*! \brief The index of the first port with a name and protocol, or port_count. */
static size_t find_port(const k8s_block_t *svc, const uint8_t *name, const uint8_t *proto)
{
	for (uint16_t i = 0; i < svc->port_count; i++) {
		const k8s_svc_port_t *port = &svc->ports[i];
		const uint8_t *port_name = svc->strings + port->name;
		if (k8s_label_equal(port_name, name) &&
		    k8s_label_is(proto, k8s_proto_name(port->proto))) {
			return i;
		}
	}
	return svc->port_count;
}

k8s_answer_t k8s_answer_srv_port(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_block_t *svc, const uint8_t *name, const uint8_t *proto,
                                 const knot_dname_t *domain)
{
	size_t first = find_port(svc, name, proto);
	if (first == svc->port_count) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (c->qtype != KNOT_RRTYPE_SRV && c->qtype != KNOT_RRTYPE_ANY) {
		return K8S_ANSWER_NODATA;
	}
	return answer_srv(c, owner, qname, svc, first, port_run_end(svc, first), domain, 0);
}

bool k8s_answer_srv_has_proto(const k8s_block_t *svc, const uint8_t *proto)
{
	for (uint16_t i = 0; i < svc->port_count; i++) {
		if (k8s_label_is(proto, k8s_proto_name(svc->ports[i].proto))) {
			return true;
		}
	}
	return false;
}

/*! \brief An SRV target's name (see write_name()) in the packet's mempool, or NULL. */
static knot_dname_t *name_of(k8s_qctx_t *c, const k8s_block_t *svc, const k8s_addr_t *ep,
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

void k8s_answer_forget(void)
{
	last_srv.pkt = NULL;
	last_srv.svc = NULL;
	k8s_answer_ext_forget();
}

/*! \brief Adds the addresses of the last SRV answer's targets (apart: every answer checks, few add). */
static __attribute__((noinline)) void add_targets(const k8s_answer_conf_t *conf, knot_pkt_t *pkt,
                                                  knot_mm_t *mm)
{
	const k8s_block_t *svc = last_srv.svc;
	last_srv.pkt = NULL;
	k8s_qctx_t c = { .conf = conf, .pkt = pkt, .mm = mm, .qtype = KNOT_RRTYPE_ANY };

	if (svc->type != K8S_SVC_HEADLESS) {
		// The owner is every SRV record's target: point at the first one, as knotd
		// does for zone data, instead of searching the packet for a suffix; and read
		// the name from its rdata (priority, weight, port, target) instead of writing
		// it again.
		uint16_t hint = KNOT_COMPR_HINT_NONE;
		knot_dname_t *owner = NULL;
		if (last_srv.rr < pkt->rrset_count && pkt->rr[last_srv.rr].type == KNOT_RRTYPE_SRV &&
		    pkt->rr[last_srv.rr].rrs.count > 0) {
			hint = knot_compr_hint(&pkt->rr_info[last_srv.rr], KNOT_COMPR_HINT_RDATA);
			owner = pkt->rr[last_srv.rr].rrs.rdata->data + 6;
		} else {
			owner = name_of(&c, svc, NULL, last_srv.domain);
		}
		if (owner == NULL) {
			return;
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

	// One owner per target of the answer; its records are adjacent in the block.
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t n = svc->addr_count - svc->sip_count;
	for (size_t i = 0, end; i < n; i = end) {
		end = target_end(svc, eps, n, i);
		if (target_next_port(svc, eps, i, end, last_srv.port_first, last_srv.port_end) ==
		    last_srv.port_end || !target_in_topo(eps, i, end, last_srv.topo)) {
			continue;  // None of its slices has the port, or not in the zone: not a target.
		}
		knot_dname_t *owner = name_of(&c, svc, &eps[i], last_srv.domain);
		for (int f = 0; owner != NULL && f < 2; f++) {
			knot_rdataset_t rrs;
			uint8_t family = (f == 0) ? AF_INET : AF_INET6;
			int ret = (last_srv.topo == 0) ? addr_rrs(&c, &eps[i], end - i, family, &rrs)
			          : k8s_answer_topo_rrs(&c, &eps[i], end - i, last_srv.topo, family, &rrs);
			if (ret != KNOT_EOK) {
				return;
			}
			if (rrs.count > 0 &&
			    put(&c, owner, KNOT_COMPR_HINT_NONE, (f == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA,
			        conf->ttl, &rrs, KNOT_PF_NOTRUNC) != KNOT_EOK) {
				return;  // Out of room: the rest is left out.
			}
		}
	}
}

void k8s_answer_additional(const k8s_answer_conf_t *conf, const knot_pkt_t *answered,
                           knot_pkt_t *pkt, knot_mm_t *mm)
{
	if (last_srv.pkt == answered && last_srv.svc != NULL) {
		add_targets(conf, pkt, mm);
	} else if (conf->role == K8S_ROLE_EXTERNAL) {
		k8s_answer_ext_additional(conf, answered, pkt, mm);
	}
}
