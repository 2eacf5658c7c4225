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

#include <netinet/in.h>
#include <string.h>

#include "federation/fedserve.h"

/*! \brief One query being answered: what the members hold for the service asked. */
typedef struct {
	const k8s_fedzone_t *z;
	const k8s_block_t *svcs[K8S_FED_MAX_MEMBERS]; /*!< The service in each synced member, or NULL. */
	bool shard[K8S_FED_MAX_MEMBERS];             /*!< It has ready endpoints. */
	bool exists;                                 /*!< Some member has the service. */
	knot_pkt_t *pkt;
	knot_mm_t *mm;
	const knot_dname_t *qname;
} query_t;

static uint8_t lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

size_t k8s_fedserve_member(const k8s_fedzone_t *z, const uint8_t *source, size_t len)
{
	if (source == NULL || len == 0 || len > 63) {
		return SIZE_MAX;
	}
	for (size_t i = 0; i < z->member_count; i++) {
		const uint8_t *name = z->members[i].name;
		if (name[0] != len) {
			continue;
		}
		size_t j = 0;
		while (j < len && lower(source[j]) == name[1 + j]) {
			j++;
		}
		if (j == len) {
			return i;
		}
	}
	return SIZE_MAX;
}

/*! \brief True if the first \a bits bits of \a a and \a b are equal. */
static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	size_t whole = bits / 8;
	if (memcmp(a, b, whole) != 0) {
		return false;
	}
	unsigned rest = bits % 8;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return rest == 0 || ((a[whole] ^ b[whole]) & mask) == 0;
}

bool k8s_fedserve_from_member(const k8s_fedmember_t *m, const struct sockaddr_storage *remote)
{
	if (remote == NULL) {
		return false;
	}
	uint8_t family = AF_UNSPEC;
	const uint8_t *bytes = NULL;
	if (remote->ss_family == AF_INET) {
		family = AF_INET;
		bytes = (const uint8_t *)&((const struct sockaddr_in *)remote)->sin_addr;
	} else if (remote->ss_family == AF_INET6) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)remote)->sin6_addr;
		// A socket bound to [::] sees IPv4 clients as ::ffff:a.b.c.d.
		bool mapped = IN6_IS_ADDR_V4MAPPED(a6);
		family = mapped ? AF_INET : AF_INET6;
		bytes = mapped ? a6->s6_addr + 12 : a6->s6_addr;
	}
	for (size_t i = 0; bytes != NULL && i < m->source_count && i < K8S_FED_MAX_SOURCES; i++) {
		const k8s_fedprefix_t *p = &m->sources[i];
		if (p->family == family && prefix_match(p->bytes, bytes, p->len)) {
			return true;
		}
	}
	return false;
}

/*! \brief 0: same zone as the source, 1: same region, 2: elsewhere or unknown. */
static int rank(const k8s_fedmember_t *src, const k8s_fedmember_t *m)
{
	if (src == NULL) {
		return 2;
	}
	bool region = src->region[0] != '\0' && strcmp(src->region, m->region) == 0;
	bool zone = src->zone[0] != '\0' && strcmp(src->zone, m->zone) == 0;
	// A zone name means one place only together with its region, when both give one.
	if (zone && (region || src->region[0] == '\0' || m->region[0] == '\0')) {
		return 0;
	}
	return region ? 1 : 2;
}

size_t k8s_fedserve_order(const k8s_fedzone_t *z, size_t source, const bool *shard,
                          uint8_t order[K8S_FED_MAX_MEMBERS])
{
	const k8s_fedmember_t *src = (source < z->member_count) ? &z->members[source] : NULL;
	size_t n = 0;
	for (int r = 0; r < 3; r++) {
		for (size_t i = 0; i < z->member_count && i < K8S_FED_MAX_MEMBERS; i++) {
			if (i != source && shard[i] && rank(src, &z->members[i]) == r) {
				order[n++] = i;
			}
		}
	}
	return n;
}

/*! \brief True if a service answers for the federated one: a cluster IP or headless service with a ready endpoint. */
static bool is_shard(const k8s_block_t *svc)
{
	switch (svc->type) {
	case K8S_SVC_CLUSTERIP:
		return svc->ready_count > 0;
	case K8S_SVC_HEADLESS:
		return svc->rrs_a.count + svc->rrs_aaaa.count > 0;
	default:
		return false;  // An ExternalName service has no endpoints to be a shard with.
	}
}

/*! \brief True if the \a count sorted, distinct records of \a len bytes at \a rdata hold \a bytes. */
static bool sorted_has(const uint8_t *rdata, size_t count, const uint8_t *bytes, size_t len)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const knot_rdata_t *rd = (const knot_rdata_t *)(rdata + mid * knot_rdata_size(len));
		int cmp = memcmp(rd->data, bytes, len);
		if (cmp == 0) {
			return true;
		}
		if (cmp < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return false;
}

/*! \brief Load-balancer addresses of a family a service has. */
static size_t ingress_count(const k8s_block_t *svc, uint8_t family)
{
	size_t n = 0;
	for (size_t i = 0; svc->ingress != NULL && i < K8S_INGRESS_MAX; i++) {
		n += svc->ingress[i].family == family;
	}
	return n;
}

/*!
 * \brief Puts the addresses of a family: the local shard's service addresses
 * (\a local, or SIZE_MAX; the lowest K8S_FED_LOCAL_MAX), then the load-balancer
 * addresses of \a order, each address once.
 *
 * O(n + m log n) for n local and m load-balancer addresses: the local ones are the
 * block's rdataset, sorted and distinct (k8s_ip_cmp()), copied whole; each
 * load-balancer address is looked up in it by bisection and among the m before it
 * (m is at most K8S_FED_MAX_MEMBERS * K8S_INGRESS_MAX).
 *
 * \return KNOT_EOK (also when there is none: \a put stays false), KNOT_ESPACE, KNOT_ENOMEM.
 */
static int put_family(query_t *q, uint16_t type, size_t local, const uint8_t *order,
                      size_t order_count, bool *put)
{
	uint8_t family = (type == KNOT_RRTYPE_A) ? AF_INET : AF_INET6;
	size_t len = k8s_ip_len(family);
	size_t rd_size = knot_rdata_size(len);
	const knot_rdataset_t *local_rrs = NULL;
	size_t local_count = 0;
	if (local != SIZE_MAX) {
		local_rrs = (family == AF_INET) ? &q->svcs[local]->rrs_a : &q->svcs[local]->rrs_aaaa;
		local_count = (local_rrs->count < K8S_FED_LOCAL_MAX) ? local_rrs->count : K8S_FED_LOCAL_MAX;
	}
	size_t n = local_count;
	for (size_t i = 0; i < order_count; i++) {
		n += ingress_count(q->svcs[order[i]], family);
	}
	if (n == 0) {
		return KNOT_EOK;
	}
	uint8_t *rdata = q->mm->alloc(q->mm->ctx, n * rd_size);
	if (rdata == NULL) {
		return KNOT_ENOMEM;
	}
	// The design's order: the local shard first; knot_rdataset_add() would sort, so rdata is laid out here.
	if (local_count > 0) {
		memcpy(rdata, local_rrs->rdata, local_count * rd_size);
	}
	size_t count = local_count;
	for (size_t i = 0; i < order_count; i++) {
		const k8s_block_t *svc = q->svcs[order[i]];
		for (size_t j = 0; svc->ingress != NULL && j < K8S_INGRESS_MAX; j++) {
			const uint8_t *bytes = svc->ingress[j].bytes;
			if (svc->ingress[j].family != family || sorted_has(rdata, local_count, bytes, len)) {
				continue;
			}
			// Two shards behind one load balancer address: answered once.
			bool seen = false;
			for (size_t k = local_count; k < count && !seen; k++) {
				seen = memcmp(((knot_rdata_t *)(rdata + k * rd_size))->data, bytes, len) == 0;
			}
			if (!seen) {
				knot_rdata_init((knot_rdata_t *)(rdata + count * rd_size), len, bytes);
				count++;
			}
		}
	}
	knot_rrset_t rr;
	knot_rrset_init(&rr, (knot_dname_t *)q->qname, type, KNOT_CLASS_IN, q->z->ttl);
	rr.rrs.count = count;
	rr.rrs.size = count * rd_size;
	rr.rrs.rdata = (knot_rdata_t *)rdata;
	int ret = knot_pkt_put(q->pkt, KNOT_COMPR_HINT_QNAME, &rr, 0);
	*put = *put || ret == KNOT_EOK;
	return ret;
}

/*! \brief Puts A and/or AAAA as the query type asks; NODATA when there is none. */
static k8s_answer_t put_addrs(query_t *q, uint16_t qtype, size_t local, const uint8_t *order,
                              size_t order_count)
{
	bool put = false;
	int ret = KNOT_EOK;
	if (qtype == KNOT_RRTYPE_A || qtype == KNOT_RRTYPE_ANY) {
		ret = put_family(q, KNOT_RRTYPE_A, local, order, order_count, &put);
	}
	if (ret == KNOT_EOK && (qtype == KNOT_RRTYPE_AAAA || qtype == KNOT_RRTYPE_ANY)) {
		ret = put_family(q, KNOT_RRTYPE_AAAA, local, order, order_count, &put);
	}
	switch (ret) {
	case KNOT_EOK:
		return put ? K8S_ANSWER_HIT : K8S_ANSWER_NODATA;
	case KNOT_ESPACE:
		return K8S_ANSWER_TRUNC;
	default:
		return K8S_ANSWER_SERVFAIL;
	}
}

/*! \brief Looks the service "<svc><ns>" up in every synced member. */
static void find_shards(query_t *q, const k8s_table_t *const *tables, const uint8_t *owner,
                        size_t owner_len)
{
	for (size_t i = 0; i < q->z->member_count; i++) {
		const k8s_block_t *svc = NULL;
		if (tables[i] != NULL) {
			svc = k8s_table_block(tables[i], K8S_ZONE_CLUSTER, owner, owner_len);
		}
		q->svcs[i] = svc;
		q->shard[i] = svc != NULL && is_shard(svc);
		q->exists = q->exists || svc != NULL;
	}
}

/*!
 * \brief The source member, or SIZE_MAX: the option counts from the member's own
 * source prefixes only, so that no other client chooses whose cluster IPs it reads.
 */
static size_t source_member(const k8s_fedzone_t *z, const uint8_t *source, size_t source_len,
                            const struct sockaddr_storage *remote)
{
	// External clients get load-balancer addresses only, whatever option they send.
	if (z->external || source == NULL) {
		return SIZE_MAX;
	}
	size_t src = k8s_fedserve_member(z, source, source_len);
	return (src != SIZE_MAX && k8s_fedserve_from_member(&z->members[src], remote)) ? src : SIZE_MAX;
}

/*! \brief <svc>.<ns>.<suffix>: the local shard first, then the others' load-balancer addresses. */
static k8s_answer_t answer_service(query_t *q, uint16_t qtype, size_t src)
{
	if (!q->exists) {
		return K8S_ANSWER_NXDOMAIN;
	}
	size_t local = (src != SIZE_MAX && q->shard[src]) ? src : SIZE_MAX;
	// Without a shard of its own the source still orders the others by its zone and region.
	uint8_t order[K8S_FED_MAX_MEMBERS];
	size_t n = k8s_fedserve_order(q->z, src, q->shard, order);
	return put_addrs(q, qtype, local, order, n);
}

/*! \brief <member>.<svc>.<ns>.<suffix>: that member's shard, its load-balancer addresses. */
static k8s_answer_t answer_shard(query_t *q, const k8s_table_t *const *tables, uint16_t qtype,
                                 const uint8_t *member)
{
	size_t m = k8s_fedserve_member(q->z, member + 1, member[0]);
	if (m == SIZE_MAX || q->svcs[m] == NULL) {
		// Before the member's first sync nothing is known of its services.
		return (m != SIZE_MAX && tables[m] == NULL) ? K8S_ANSWER_NOTREADY : K8S_ANSWER_NXDOMAIN;
	}
	if (!q->shard[m]) {
		return K8S_ANSWER_NODATA;
	}
	uint8_t order[1] = { m };
	return put_addrs(q, qtype, SIZE_MAX, order, 1);
}

/*! \brief True if some synced member has the namespace. */
static bool ns_exists(const k8s_fedzone_t *z, const k8s_table_t *const *tables, const uint8_t *ns)
{
	for (size_t i = 0; i < z->member_count; i++) {
		if (tables[i] != NULL && k8s_table_ns(tables[i], ns)) {
			return true;
		}
	}
	return false;
}

k8s_answer_t k8s_fedserve_answer(const k8s_fedzone_t *z, const k8s_table_t *const *tables,
                                 const knot_dname_t *qname, uint16_t qtype,
                                 const uint8_t *source, size_t source_len,
                                 const struct sockaddr_storage *remote,
                                 knot_pkt_t *pkt, knot_mm_t *mm)
{
	// An unreachable member must not take the federation down: answer from the synced ones.
	bool synced = false;
	for (size_t i = 0; i < z->member_count && !synced; i++) {
		synced = tables[i] != NULL;
	}
	if (!synced) {
		return K8S_ANSWER_NOTREADY;
	}

	int above = knot_dname_in_bailiwick(qname, z->suffix);
	if (above < 0) {
		// Between the zone's apex and the suffix: empty non-terminals.
		return (knot_dname_in_bailiwick(z->suffix, qname) > 0) ? K8S_ANSWER_NODATA
		                                                        : K8S_ANSWER_NXDOMAIN;
	}
	if (above == 0) {
		return K8S_ANSWER_NODATA;
	}
	// Labels before the suffix: [<member>.]<svc>.<ns>.
	const uint8_t *labels[3];
	const uint8_t *pos = qname;
	for (int i = 0; i < above && i < 3; i++) {
		labels[i] = pos;
		pos += 1 + pos[0];
	}
	if (above == 1) {
		return ns_exists(z, tables, labels[0]) ? K8S_ANSWER_NODATA : K8S_ANSWER_NXDOMAIN;
	}
	if (above > 3) {
		return K8S_ANSWER_NXDOMAIN;
	}
	query_t q = { .z = z, .pkt = pkt, .mm = mm, .qname = qname };
	const uint8_t *owner = labels[above - 2];
	size_t owner_len = 2 + owner[0] + owner[1 + owner[0]];
	find_shards(&q, tables, owner, owner_len);
	if (above == 2) {
		return answer_service(&q, qtype, source_member(z, source, source_len, remote));
	}
	return answer_shard(&q, tables, qtype, labels[0]);
}
