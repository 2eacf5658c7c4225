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

/* A and AAAA answers (services, endpoints, pods) and ExternalName aliases. */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "answer/answer_priv.h"
#include "lib/clock.h"

k8s_answer_t k8s_answer_addrs(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
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

k8s_answer_t k8s_answer_ip(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                           const k8s_ip_t *ip)
{
	// k8s_answer_addrs() of one address without its two passes per family.
	bool v4 = ip->family == AF_INET;
	uint16_t type = v4 ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA;
	if (c->qtype != type && c->qtype != KNOT_RRTYPE_ANY) {
		return K8S_ANSWER_NODATA;
	}
	size_t len = v4 ? 4 : 16;
	knot_rdata_t *rd = mm_get(c->mm, knot_rdata_size(len));
	if (rd == NULL) {
		return put_result(KNOT_ENOMEM);
	}
	// knot_rdata_init() of a length it does not know: a memcpy() call.
	rd->len = len;
	if (v4) {
		memcpy(rd->data, ip->bytes, 4);
	} else {
		memcpy(rd->data, ip->bytes, 16);
	}
	knot_rdataset_t rrs = { .count = 1, .size = knot_rdata_size(len), .rdata = rd };
	return put_result(put(c, owner, hint_for(owner, qname), type, c->conf->ttl, &rrs, 0));
}

k8s_answer_t k8s_answer_svc_addrs(k8s_qctx_t *c, const knot_dname_t *owner,
                                  const knot_dname_t *qname, const k8s_block_t *svc)
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

/*!
 * \brief Set when an answer met a cold upstream name; read and cleared by the hook
 * (on every query: initial-exec, as answer_srv.c's last_srv).
 */
__thread bool k8s_answer_cold_met __attribute__((tls_model("initial-exec")));

void k8s_answer_cold_note(void)
{
	k8s_answer_cold_met = true;
}

k8s_answer_t k8s_answer_target(k8s_qctx_t *c, const knot_dname_t *target, const knot_dname_t *qname,
                               unsigned depth)
{
	k8s_answer_t res = k8s_answer_chase(c, target, qname, depth);
	if (res != K8S_ANSWER_PASS) {
		return res;
	}

	// Elsewhere: the upstream cache, for address queries.
	const k8s_answer_conf_t *conf = c->conf;
	if (conf->upstream == NULL ||
	    (c->qtype != KNOT_RRTYPE_A && c->qtype != KNOT_RRTYPE_AAAA)) {
		return K8S_ANSWER_HIT;
	}
	const k8s_fwd_entry_t *ext;
	if (k8s_keeper_lookup(conf->upstream, target, c->qtype, &ext) != K8S_UPSTREAM_READY) {
		// Refused (its tenant's part, busy slots): the next query asks.
		(void)k8s_keeper_ask(conf->upstream, target, qctx_tenant(c));
		k8s_answer_cold_note();
		return K8S_ANSWER_SERVFAIL;
	}
	if (k8s_upstream_unreachable(ext)) {
		return K8S_ANSWER_UNREACHABLE;  // A dead target: at once, until its retry.
	}
	return k8s_answer_upstream(c, ext, qname, depth);
}

k8s_answer_t k8s_answer_relay(knot_pkt_t *pkt, uint16_t qtype, const k8s_fwd_entry_t *ans)
{
	k8s_qctx_t c = { .pkt = pkt, .qtype = qtype };
	return k8s_answer_upstream(&c, ans, NULL, 0);
}

/*!
 * \brief A CNAME of an upstream's chain whose target is in one of our zones: that target,
 * lowercase in the query's memory; NULL for any other record (or without our zones).
 */
static const knot_dname_t *link_into_ours(k8s_qctx_t *c, const knot_rrset_t *rr)
{
	if (rr->type != KNOT_RRTYPE_CNAME || c->conf == NULL || rr->rrs.count == 0) {
		return NULL;
	}
	const knot_dname_t *target = knot_cname_name(rr->rrs.rdata);
	size_t size = knot_dname_size(target);
	knot_dname_t *lower = mm_get(c->mm, size);
	if (lower == NULL) {
		return NULL;
	}
	memcpy(lower, target, size);
	knot_dname_to_lower(lower);
	return (zone_of(c->conf, lower) != K8S_ZONE_COUNT) ? lower : NULL;
}

k8s_answer_t k8s_answer_upstream(k8s_qctx_t *c, const k8s_fwd_entry_t *ext,
                                 const knot_dname_t *qname, unsigned depth)
{
	// A failed upstream (no records) leaves the CNAME alone, NOERROR, as CoreDNS answers.
	// The cached chain is shared: only the TTL, capped at what remains, is our own.
	uint32_t left = k8s_upstream_ttl_left(ext, k8s_now_ms());
	k8s_upstream_iter_t it;
	k8s_upstream_iter_init(ext, &it);
	const knot_rrset_t *next;
	while ((next = k8s_upstream_next(ext, &it)) != NULL) {
		knot_rrset_t rr = *next;
		rr.ttl = (rr.ttl < left) ? rr.ttl : left;
		int ret = knot_pkt_put(c->pkt, KNOT_COMPR_HINT_NONE, &rr, 0);
		if (ret != KNOT_EOK) {
			return put_result(ret);
		}
		// The chain stops at our zones: the rest is the table's, as if the name were
		// asked itself (CoreDNS resolves it again), never the upstream's records of it.
		const knot_dname_t *ours = link_into_ours(c, &rr);
		if (ours != NULL) {
			return k8s_answer_chase(c, ours, qname, depth + 1);
		}
	}
	return (k8s_upstream_rcode(ext) == KNOT_RCODE_NXDOMAIN) ? K8S_ANSWER_HIT_NXDOMAIN :
	                                                           K8S_ANSWER_HIT;
}

k8s_answer_t k8s_answer_external(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                                 const k8s_block_t *svc, unsigned depth)
{
	int ret = put_cname(c, owner, qname, svc->target);
	if (ret != KNOT_EOK || c->qtype == KNOT_RRTYPE_CNAME) {
		return put_result(ret);
	}
	// Asked for while queries look it up: refreshed only while clients ask.
	return k8s_answer_target(c, svc->target, qname, depth);
}

static int ip_cmp(const void *a, const void *b)
{
	return k8s_ip_cmp(a, b);
}

int k8s_answer_topo_rrs(k8s_qctx_t *c, const k8s_addr_t *addrs, size_t count, uint16_t topo,
                        uint8_t family, knot_rdataset_t *rrs)
{
	knot_rdataset_init(rrs);
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		n += (addrs[i].topo == topo && addrs[i].family == family);
	}
	if (n == 0) {
		return KNOT_EOK;
	}
	// Sorted, so that an address under two names is put once (CoreDNS's dup map).
	k8s_ip_t *ips = mm_get(c->mm, n * sizeof(*ips));
	size_t len = (family == AF_INET) ? 4 : 16;
	uint8_t *pos = mm_get(c->mm, n * knot_rdata_size(len));
	if (ips == NULL || pos == NULL) {
		return KNOT_ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < count; i++) {
		if (addrs[i].topo == topo && addrs[i].family == family) {
			ips[k].family = family;
			memcpy(ips[k].bytes, addrs[i].bytes, len);
			k++;
		}
	}
	qsort(ips, n, sizeof(*ips), ip_cmp);
	rrs->rdata = (knot_rdata_t *)pos;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && k8s_ip_cmp(&ips[i - 1], &ips[i]) == 0) {
			continue;
		}
		knot_rdata_init((knot_rdata_t *)pos, len, ips[i].bytes);
		pos += knot_rdata_size(len);
		rrs->count++;
	}
	rrs->size = pos - (uint8_t *)rrs->rdata;
	return KNOT_EOK;
}
