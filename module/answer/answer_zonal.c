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
 * Zonal names (CoreDNS's `zonal` option, 1.14.7 and later, as 1.15.0 has it:
 * plugin/kubernetes README "Zonal Names"):
 * <topology zone>.pin._zone.<svc>.<ns>.svc.<zone> answers the ready endpoints of a
 * headless service whose EndpointSlice `zone` is that zone (NODATA when none are),
 * <topology zone>.prefer._zone... the same, or every endpoint when none are. A and
 * AAAA (each address once), SRV (and its targets' addresses) of those endpoints, NODATA
 * for other types; NXDOMAIN for a service that does not exist or is not headless, and
 * for another directive. The zone is every label left of the directive, compared with
 * the endpoints' zones as the block stores them, lowercase.
 */

#include <string.h>

#include "answer/answer_priv.h"

/*! \brief 1 + the index of the block's topology zone spelled by the query, 0 if none. */
static uint16_t find_topo(const k8s_block_t *svc, const k8s_qname_t *q)
{
	for (uint16_t i = 0; i < svc->topo_count; i++) {
		size_t size;
		const uint8_t *labels = k8s_block_topo(svc, i, &size);
		if (size == q->topo_size && memcmp(labels, q->topo, size) == 0) {
			return i + 1;
		}
	}
	return 0;
}

/*! \brief A and AAAA (both for ANY) of the endpoints in the topology zone \a topo. */
static k8s_answer_t zone_addrs(k8s_qctx_t *c, const knot_dname_t *owner,
                               const knot_dname_t *qname, const k8s_block_t *svc, uint16_t topo)
{
	bool any = c->qtype == KNOT_RRTYPE_ANY;
	bool hit = false;
	const k8s_addr_t *eps = svc->addrs + svc->sip_count;
	size_t count = svc->addr_count - svc->sip_count;
	for (int f = 0; f < 2; f++) {
		uint16_t type = (f == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA;
		if (c->qtype != type && !any) {
			continue;
		}
		knot_rdataset_t rrs;
		int ret = k8s_answer_topo_rrs(c, eps, count, topo, (f == 0) ? AF_INET : AF_INET6, &rrs);
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

k8s_answer_t k8s_answer_zonal(k8s_qctx_t *c, const knot_dname_t *owner, const knot_dname_t *qname,
                              const k8s_qname_t *q, const knot_dname_t *zone)
{
	bool prefer = k8s_label_is(q->directive, "prefer");
	if (!c->conf->zonal || (!prefer && !k8s_label_is(q->directive, "pin"))) {
		return K8S_ANSWER_NXDOMAIN;  // Off, or another directive: too long, as before.
	}
	// Defined for headless services only; one without ready endpoints exists here (NODATA).
	const k8s_block_t *svc = k8s_table_ns_block(c->t, K8S_ZONE_CLUSTER, q->owner, q->owner_len,
	                                            q->ns);
	if (svc == NULL || svc->type != K8S_SVC_HEADLESS) {
		return K8S_ANSWER_NXDOMAIN;
	}
	uint16_t topo = find_topo(svc, q);
	bool all = false;
	if (topo == 0) {
		if (!prefer) {
			return K8S_ANSWER_NODATA;  // No endpoint carries that zone (drained or mistyped).
		}
		all = true;
	}
	switch (c->qtype) {
	case KNOT_RRTYPE_A:
	case KNOT_RRTYPE_AAAA:
	case KNOT_RRTYPE_ANY:
		// Every endpoint: the block's own rdatasets, without a copy.
		return all ? k8s_answer_svc_addrs(c, owner, qname, svc)
		           : zone_addrs(c, owner, qname, svc, topo);
	case KNOT_RRTYPE_SRV:
		return k8s_answer_srv_topo(c, owner, qname, svc, zone, all ? 0 : topo);
	default:
		return K8S_ANSWER_NODATA;
	}
}
