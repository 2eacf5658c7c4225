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

/* PTR answers: the names of an address's records, cluster zone first. */

#include <stddef.h>
#include <string.h>

#include "answer/answer_priv.h"

/*! \brief Most PTR records one address gets (a pod behind many services). */
#define MAX_PTR 32

/*! \brief PTR of an address; NODATA or NXDOMAIN for prefixes. */
static k8s_answer_t answer_reverse(k8s_qctx_t *c, const knot_dname_t *qname, const k8s_qname_t *q)
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
		const k8s_block_t *svc = k8s_addr_svc(refs[i]);
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

k8s_answer_t k8s_answer_ptr(k8s_qctx_t *c, const knot_dname_t *qname)
{
	k8s_qname_t q;
	k8s_qname_parse_below(qname, zone_labels(c->conf), c->conf->role, &q);
	switch (q.kind) {
	case K8S_Q_APEX:    return K8S_ANSWER_PASS;
	case K8S_Q_REVERSE: return answer_reverse(c, qname, &q);
	default:            return K8S_ANSWER_NXDOMAIN;
	}
}
