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

/*
 * An external zone: CoreDNS's k8s_external (plugin/k8s_external, kubernetes/external.go),
 * a zone of its own where <svc>.<ns>.<zone> answers a Service's external addresses
 * (spec.externalIPs, then its load balancer's ingress IPs), as CoreDNS answers them:
 *
 * - <ns>.<zone>: NODATA if the namespace exists, else NXDOMAIN.
 * - <svc>.<ns>.<zone>, and <x>.<svc>.<ns>.<zone> for any x (CoreDNS reads it as an
 *   endpoint it then ignores for external addresses): A, AAAA of the addresses; SRV,
 *   target <svc>.<ns>.<zone>, one record per named port, the addresses in the additional
 *   section; NODATA for other types; NXDOMAIN for a Service without external address.
 * - _<port>._<proto>.<svc>.<ns>.<zone> (the underscores optional, as CoreDNS strips
 *   them): the same, for the ports of that name and protocol (NXDOMAIN: none).
 * - With external-headless, a Service without external address that is headless, or any
 *   Service's <endpoint>.<svc>.<ns>.<zone>: its ready endpoints (of that name), targets
 *   <endpoint>.<svc>.<ns>.<zone>.
 * - <apex>.<zone> NODATA; ns1.<apex>.<zone> A, AAAA: the external addresses of the
 *   Service in front of the cluster DNS (kube-system/kube-dns); anything else below the
 *   apex label NXDOMAIN. The apex itself (SOA, NS) is the zone file's.
 *
 * A and AAAA have the external-ttl, SRV the zone's ttl (CoreDNS's kubernetes ttl, as its
 * msg.Service records carry it). An SRV answer's records share the weight 100 / the
 * (address, port) pairs behind them, at least 1, as CoreDNS computes it.
 */

#include <string.h>

#include "answer/answer_priv.h"
#include "kinds/proto.h"

/*! \brief The Service whose external addresses ns1.<apex>.<zone> answers. */
static const uint8_t NS_OWNER[] = "\x08""kube-dns""\x0b""kube-system";

/*! \brief The external SRV answer of this worker, for its ADDITIONAL stage. */
static __thread struct {
	const knot_pkt_t *pkt;
	const k8s_block_t *svc;
	const knot_dname_t *zone;
	const k8s_addr_t *eps;   /*!< Endpoint mode: the selected records, else NULL (externals). */
	size_t ep_count;
	uint16_t port_first;     /*!< Endpoint mode: the ports [first, end) asked. */
	uint16_t port_end;
} last_ext __attribute__((tls_model("initial-exec")));

void k8s_answer_ext_forget(void)
{
	last_ext.pkt = NULL;
	last_ext.svc = NULL;
}

/*! \brief \a label without one leading underscore (CoreDNS's stripUnderscore()), in \a out. */
static const uint8_t *strip(const uint8_t *label, uint8_t out[64])
{
	if (label[0] < 1 || label[1] != '_') {
		return label;
	}
	out[0] = label[0] - 1;
	memcpy(out + 1, label + 2, out[0]);
	return out;
}

/*! \brief "[<label>.]<svc>.<ns>.<zone>" in the mempool, or NULL. */
static knot_dname_t *target_name(k8s_qctx_t *c, const k8s_block_t *svc, const k8s_addr_t *ep,
                                 const knot_dname_t *zone)
{
	uint8_t label[64];
	size_t label_size = (ep != NULL) ? k8s_addr_label(svc, ep, label) : 0;
	size_t zone_size = knot_dname_size(zone);
	size_t size = label_size + svc->owner_len + zone_size;
	knot_dname_t *name = (size <= KNOT_DNAME_MAXLEN) ? mm_get(c->mm, size) : NULL;
	if (name != NULL) {
		memcpy(name, label, label_size);
		memcpy(name + label_size, svc->owner, svc->owner_len);
		memcpy(name + label_size + svc->owner_len, zone, zone_size);
	}
	return name;
}

/*! \brief The ports [first, end) of a name and protocol (stripped labels), or all named ports. */
static bool port_range(const k8s_block_t *svc, const uint8_t *name, const uint8_t *proto,
                       size_t *first, size_t *end)
{
	*first = 0;
	*end = svc->port_count;
	if (name == NULL) {
		return true;
	}
	// Ports are sorted by (name, protocol, number): one run matches.
	size_t i = 0;
	while (i < svc->port_count &&
	       !(k8s_label_equal(svc->strings + svc->ports[i].name, name) &&
	         k8s_label_is(proto, k8s_proto_name(svc->ports[i].proto)))) {
		i++;
	}
	*first = i;
	while (i < svc->port_count && k8s_label_equal(svc->strings + svc->ports[i].name, name) &&
	       k8s_label_is(proto, k8s_proto_name(svc->ports[i].proto))) {
		i++;
	}
	*end = i;
	return *first < *end;
}

/*! \brief An rdataset of the external addresses of one family. */
static int ext_rrs(k8s_qctx_t *c, const k8s_block_t *svc, uint8_t family, knot_rdataset_t *rrs)
{
	knot_rdataset_init(rrs);
	size_t len = (family == AF_INET) ? 4 : 16;
	uint8_t *pos = mm_get(c->mm, svc->external_count * knot_rdata_size(len) + 1);
	if (pos == NULL) {
		return KNOT_ENOMEM;
	}
	rrs->rdata = (knot_rdata_t *)pos;
	for (uint8_t i = 0; i < svc->external_count; i++) {
		if (svc->externals[i].family == family) {
			knot_rdata_init((knot_rdata_t *)pos, len, svc->externals[i].bytes);
			pos += knot_rdata_size(len);
			rrs->count++;
		}
	}
	rrs->size = pos - (uint8_t *)rrs->rdata;
	return KNOT_EOK;
}

/*!
 * \brief A, AAAA (both for ANY): the external addresses, or (\a eps) endpoint records'
 * (with \a filtered, those that have one of the ports [first, end)), each address once.
 */
static k8s_answer_t ext_addrs(k8s_qctx_t *c, const knot_dname_t *qname, const k8s_block_t *svc,
                              const k8s_addr_t *eps, size_t ep_count, bool filtered,
                              size_t first, size_t end)
{
	bool any = c->qtype == KNOT_RRTYPE_ANY;
	bool hit = false;
	for (int f = 0; f < 2; f++) {
		uint16_t type = (f == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA;
		uint8_t family = (f == 0) ? AF_INET : AF_INET6;
		if (c->qtype != type && !any) {
			continue;
		}
		knot_rdataset_t rrs;
		int ret = KNOT_EOK;
		if (eps == NULL) {
			ret = ext_rrs(c, svc, family, &rrs);
		} else {
			// The endpoints that have one of the ports asked (all of them: every port).
			knot_rdataset_init(&rrs);
			for (size_t i = 0; i < ep_count && ret == KNOT_EOK; i++) {
				if (eps[i].family == family &&
				    (!filtered || k8s_addr_has_port(svc, &eps[i], first, end))) {
					knot_rdata_t *rd = mm_get(c->mm, knot_rdata_size((family == AF_INET) ? 4 : 16));
					if (rd == NULL) {
						ret = KNOT_ENOMEM;
						break;
					}
					knot_rdata_init(rd, (family == AF_INET) ? 4 : 16, eps[i].bytes);
					ret = knot_rdataset_add(&rrs, rd, c->mm);  // Sorted, each address once.
				}
			}
		}
		if (ret == KNOT_EOK && rrs.count > 0) {
			ret = put(c, qname, KNOT_COMPR_HINT_QNAME, type, c->conf->ext_ttl, &rrs, 0);
			hit = true;
		}
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
	}
	return hit ? K8S_ANSWER_HIT : K8S_ANSWER_NODATA;
}

/*! \brief Appends an SRV record; the new end, or \a pos if the target does not fit. */
static uint8_t *put_srv(uint8_t *pos, uint16_t weight, uint16_t port, const knot_dname_t *target)
{
	knot_rdata_t *rd = (knot_rdata_t *)pos;
	size_t size = knot_dname_size(target);
	knot_wire_write_u16(rd->data, 0);
	knot_wire_write_u16(rd->data + 2, weight);
	knot_wire_write_u16(rd->data + 4, port);
	memcpy(rd->data + 6, target, size);
	rd->len = 6 + size;
	if (rd->len & 1) {
		rd->data[rd->len] = 0;
	}
	return pos + knot_rdata_size(rd->len);
}

/*! \brief True if an SRV record (target, port) is among those written already. */
static bool srv_written(const knot_rdataset_t *rrs, uint16_t port, const knot_dname_t *target)
{
	const knot_rdata_t *rd = rrs->rdata;
	for (uint16_t i = 0; i < rrs->count; i++, rd = knot_rdataset_next((knot_rdata_t *)rd)) {
		if (knot_wire_read_u16(rd->data + 4) == port && knot_dname_is_equal(rd->data + 6, target)) {
			return true;
		}
	}
	return false;
}

/*!
 * \brief SRV of the ports [first, end): the external addresses' (one target, the service
 * name) or the endpoint records' (one per endpoint name); records once per (target, port).
 */
static k8s_answer_t ext_srv(k8s_qctx_t *c, const knot_dname_t *qname, const k8s_block_t *svc,
                            const k8s_addr_t *eps, size_t ep_count, size_t first, size_t end)
{
	const knot_dname_t *zone = c->conf->zone;
	// CoreDNS's weight: 100 over the (address, port) pairs behind the answer, an address
	// listed twice (in externalIPs and as ingress) counted twice.
	size_t pairs = 0;
	if (eps == NULL) {
		pairs = (size_t)svc->external_listed * (end - first);
	} else {
		for (size_t i = 0; i < ep_count; i++) {
			for (size_t p = k8s_addr_next_port(svc, &eps[i], first, end); p < end;
			     p = k8s_addr_next_port(svc, &eps[i], p + 1, end)) {
				pairs++;
			}
		}
	}
	if (pairs == 0) {
		return K8S_ANSWER_NODATA;
	}
	uint16_t weight = (pairs >= 100) ? 1 : 100 / pairs;
	size_t max = (eps == NULL ? 1 : ep_count) * (end - first);
	uint8_t *rdata = mm_get(c->mm, max * knot_rdata_size(6 + KNOT_DNAME_MAXLEN));
	if (rdata == NULL) {
		return K8S_ANSWER_SERVFAIL;
	}
	knot_rdataset_t rrs = { .rdata = (knot_rdata_t *)rdata };
	uint8_t *pos = rdata;
	size_t targets = (eps == NULL) ? 1 : ep_count;
	for (size_t t = 0; t < targets; t++) {
		const k8s_addr_t *ep = (eps == NULL) ? NULL : &eps[t];
		knot_dname_t *target = target_name(c, svc, ep, zone);
		if (target == NULL) {
			continue;
		}
		for (size_t p = first; p < end; p++) {
			uint16_t port = svc->ports[p].port;
			if ((ep != NULL && !k8s_addr_has_port(svc, ep, p, p + 1)) ||
			    srv_written(&rrs, port, target)) {
				continue;
			}
			pos = put_srv(pos, weight, port, target);
			rrs.count++;
			rrs.size = pos - rdata;
		}
	}
	if (rrs.count == 0) {
		return K8S_ANSWER_NODATA;
	}
	int ret = put(c, qname, KNOT_COMPR_HINT_QNAME, KNOT_RRTYPE_SRV, c->conf->ttl, &rrs, 0);
	if (ret == KNOT_EOK) {
		last_ext.pkt = c->pkt;
		last_ext.svc = svc;
		last_ext.zone = zone;
		last_ext.eps = eps;
		last_ext.ep_count = ep_count;
		last_ext.port_first = first;
		last_ext.port_end = end;
	}
	return put_result(ret);
}

void k8s_answer_ext_additional(const k8s_answer_conf_t *conf, const knot_pkt_t *answered,
                               knot_pkt_t *pkt, knot_mm_t *mm)
{
	if (last_ext.pkt != answered || last_ext.svc == NULL) {
		return;
	}
	const k8s_block_t *svc = last_ext.svc;
	last_ext.pkt = NULL;
	k8s_qctx_t c = { .conf = conf, .pkt = pkt, .mm = mm, .qtype = KNOT_RRTYPE_ANY };
	size_t targets = (last_ext.eps == NULL) ? 1 : last_ext.ep_count;
	for (size_t t = 0; t < targets; t++) {
		const k8s_addr_t *ep = (last_ext.eps == NULL) ? NULL : &last_ext.eps[t];
		if (ep != NULL && !k8s_addr_has_port(svc, ep, last_ext.port_first, last_ext.port_end)) {
			continue;
		}
		knot_dname_t *owner = target_name(&c, svc, ep, last_ext.zone);
		for (int f = 0; owner != NULL && f < 2; f++) {
			uint8_t family = (f == 0) ? AF_INET : AF_INET6;
			knot_rdataset_t rrs;
			int ret = (ep == NULL) ? ext_rrs(&c, svc, family, &rrs)
			                       : addr_rrs(&c, ep, 1, family, &rrs);
			if (ret != KNOT_EOK) {
				return;
			}
			if (rrs.count > 0 &&
			    put(&c, owner, KNOT_COMPR_HINT_NONE, (f == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA,
			        conf->ext_ttl, &rrs, KNOT_PF_NOTRUNC) != KNOT_EOK) {
				return;  // Out of room: the rest is left out.
			}
		}
	}
}

/*! \brief The apex label's names: <apex>.<zone> NODATA, ns1.<apex>.<zone> the DNS's addresses. */
static k8s_answer_t answer_apex_label(k8s_qctx_t *c, const knot_dname_t *qname,
                                      const k8s_qname_t *q)
{
	if (q->kind == K8S_Q_NAMESPACE) {
		return K8S_ANSWER_NODATA;
	}
	if (q->kind != K8S_Q_SERVICE || !k8s_label_is(q->owner, "ns1")) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (c->qtype != KNOT_RRTYPE_A && c->qtype != KNOT_RRTYPE_AAAA && c->qtype != KNOT_RRTYPE_ANY) {
		return K8S_ANSWER_NODATA;
	}
	const k8s_block_t *dns = k8s_table_block(c->t, K8S_ZONE_CLUSTER, NS_OWNER, sizeof(NS_OWNER) - 1);
	if (dns == NULL) {
		return K8S_ANSWER_NODATA;
	}
	if (c->conf->ext_headless && dns->type == K8S_SVC_HEADLESS) {
		return ext_addrs(c, qname, dns, dns->addrs + dns->sip_count,
		                 dns->addr_count - dns->sip_count, false, 0, 0);
	}
	return ext_addrs(c, qname, dns, NULL, 0, false, 0, 0);
}

k8s_answer_t k8s_answer_ext(k8s_qctx_t *c, const knot_dname_t *qname)
{
	const k8s_answer_conf_t *conf = c->conf;
	k8s_qname_t q;
	k8s_qname_parse_below(qname, zone_labels(conf), K8S_ROLE_EXTERNAL, &q);
	if (q.kind == K8S_Q_APEX) {
		return K8S_ANSWER_PASS;
	}
	if (q.ns != NULL && k8s_label_equal(q.ns, conf->ext_apex)) {
		return answer_apex_label(c, qname, &q);
	}
	if (q.kind == K8S_Q_INVALID || !k8s_table_ns(c->t, q.ns)) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (q.kind == K8S_Q_NAMESPACE) {
		return K8S_ANSWER_NODATA;
	}
	const k8s_block_t *svc = k8s_table_block(c->t, K8S_ZONE_CLUSTER, q.owner, q.owner_len);
	if (svc == NULL) {
		return K8S_ANSWER_NXDOMAIN;
	}

	// What the name selects: an endpoint (one label below), the ports (two labels below).
	uint8_t buf[3][64];
	const uint8_t *endpoint = (q.kind == K8S_Q_SUBNAME && q.sub_count == 1) ? strip(q.sub[0], buf[0])
	                                                                      : NULL;
	const uint8_t *port = (q.sub_count == 2) ? strip(q.sub[0], buf[1]) : NULL;
	const uint8_t *proto = (q.sub_count == 2) ? strip(q.sub[1], buf[2]) : NULL;
	size_t first, end;
	if (!port_range(svc, port, proto, &first, &end)) {
		return K8S_ANSWER_NXDOMAIN;
	}

	const k8s_addr_t *eps = NULL;
	size_t ep_count = 0;
	bool by_endpoints = conf->ext_headless && svc->external_count == 0 &&
	                    (svc->type == K8S_SVC_HEADLESS || endpoint != NULL);
	if (by_endpoints) {
		eps = svc->addrs + svc->sip_count;
		ep_count = svc->addr_count - svc->sip_count;
		if (endpoint != NULL) {
			eps = k8s_svc_endpoints(svc, NULL, 0, endpoint, &ep_count);
		}
		bool any = false;
		for (size_t i = 0; i < ep_count && !any; i++) {
			any = (port == NULL) || k8s_addr_has_port(svc, &eps[i], first, end);
		}
		if (!any) {
			return K8S_ANSWER_NXDOMAIN;
		}
	} else if (svc->external_count == 0) {
		return K8S_ANSWER_NXDOMAIN;
	}

	switch (c->qtype) {
	case KNOT_RRTYPE_A:
	case KNOT_RRTYPE_AAAA:
	case KNOT_RRTYPE_ANY:
		return ext_addrs(c, qname, svc, eps, ep_count, port != NULL, first, end);
	case KNOT_RRTYPE_SRV:
		return ext_srv(c, qname, svc, eps, ep_count, first, end);
	default:
		return K8S_ANSWER_NODATA;
	}
}
