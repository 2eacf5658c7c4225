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

#include "answer_priv.h"

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

k8s_answer_t k8s_answer_srv(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                            const k8s_svc_t *svc, const knot_dname_t *domain)
{
	return answer_srv(c, owner, qname, svc, NULL, domain);
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

k8s_answer_t k8s_answer_srv_port(ctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_svc_t *svc, const uint8_t *name, const uint8_t *proto,
                                 const knot_dname_t *domain)
{
	const k8s_svc_port_t *port = find_port(svc, name, proto);
	if (port == NULL) {
		return K8S_ANSWER_NXDOMAIN;
	}
	if (c->qtype != KNOT_RRTYPE_SRV && c->qtype != KNOT_RRTYPE_ANY) {
		return K8S_ANSWER_NODATA;
	}
	return answer_srv(c, owner, qname, svc, port, domain);
}

bool k8s_answer_srv_has_proto(const k8s_svc_t *svc, const uint8_t *proto)
{
	for (uint16_t i = 0; i < svc->port_count; i++) {
		if (k8s_label_is(proto, k8s_proto_name(svc->ports[i].proto))) {
			return true;
		}
	}
	return false;
}

/*! \brief An SRV target's name (see write_name()) in the packet's mempool, or NULL. */
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

