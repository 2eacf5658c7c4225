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

#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>
#include <libknot/dname.h>
#include <libknot/wire.h>

#include "lib/dnsanswer.h"
#include "upstream/upstream_entry.h"

#define MAX_CHAIN        8           /*!< CNAMEs followed in one answer. */
#define MAX_ENTRY        (16 * 1024) /*!< Bytes of one cached answer. */
#define TTL_MAX          86400       /*!< Longest time between refreshes. */
#define NEG_TTL_MIN      5
#define NEG_TTL_MAX      300
#define NEG_TTL_DEFAULT  30          /*!< Negative answer without an SOA. */

/*! \brief RRsets taken from an answer section, before they are packed. */
typedef struct {
	knot_rrset_t sets[MAX_CHAIN + 1];  /*!< CNAMEs, then records; owners in the packet. */
	size_t count;
	uint32_t min_ttl;
} chain_t;

static void chain_clear(chain_t *c)
{
	for (size_t i = 0; i < c->count; i++) {
		knot_rdataset_clear(&c->sets[i].rrs, NULL);
	}
	c->count = 0;
}

/*! \brief A record of an answer and its place in it. */
typedef struct {
	const knot_rdata_t *rd;
	size_t pos;
} rd_ref_t;

/*! \brief Orders records by content, equal ones by place (a qsort() comparator). */
static int rd_ref_cmp(const void *a, const void *b)
{
	const rd_ref_t *x = a, *y = b;
	int cmp = knot_rdata_cmp(x->rd, y->rd);
	return (cmp != 0) ? cmp : (x->pos > y->pos) - (x->pos < y->pos);
}

static bool rr_matches(const knot_rrset_t *rr, const knot_dname_t *owner, uint16_t type)
{
	return rr->type == type && rr->rclass == KNOT_CLASS_IN &&
	       knot_dname_is_case_equal(rr->owner, owner);
}

/*!
 * \brief Adds the records of \a type owned by \a owner as one RRset (at their lowest TTL),
 * in the answer's order, each once.
 *
 * The order is the upstream's (the Federated-DNS puts the source cluster's
 * address first): knot_rdataset_add() would sort, so the rdata is laid out here,
 * and duplicates are found on a sorted copy of the references, O(n log n).
 *
 * \retval KNOT_EOK, KNOT_ENOENT (none), KNOT_ESPACE (more than an entry holds), KNOT_ENOMEM
 */
static int chain_add(chain_t *c, const knot_pktsection_t *an, const knot_dname_t *owner,
                     uint16_t type, bool first_only)
{
	knot_rrset_t *set = &c->sets[c->count];
	knot_rrset_init(set, (knot_dname_t *)owner, type, KNOT_CLASS_IN, UINT32_MAX);
	size_t count = 0, size = 0;
	for (uint16_t i = 0; i < an->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(an, i);
		if (!rr_matches(rr, owner, type)) {
			continue;
		}
		count += rr->rrs.count;
		size += rr->rrs.size;
		set->ttl = (rr->ttl < set->ttl) ? rr->ttl : set->ttl;
		if (first_only) {
			break;
		}
	}
	if (count == 0) {
		return KNOT_ENOENT;
	}
	if (size > MAX_ENTRY) {
		return KNOT_ESPACE;  // Would not be cached anyway (entry_pack()).
	}
	// One block: the references to sort, the records in the answer's order, their duplicate marks.
	rd_ref_t *refs = malloc(count * (sizeof(*refs) + sizeof(knot_rdata_t *) + sizeof(bool)));
	uint8_t *rdata = malloc(size);
	if (refs == NULL || rdata == NULL) {
		free(refs);
		free(rdata);
		return KNOT_ENOMEM;
	}
	const knot_rdata_t **wire = (const knot_rdata_t **)(refs + count);
	bool *dup = (bool *)(wire + count);
	memset(dup, 0, count * sizeof(*dup));
	size_t n = 0;
	for (uint16_t i = 0; i < an->count && n < count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(an, i);
		if (!rr_matches(rr, owner, type)) {
			continue;
		}
		const knot_rdata_t *rd = rr->rrs.rdata;
		for (uint16_t j = 0; j < rr->rrs.count && n < count; j++) {
			wire[n] = rd;
			refs[n] = (rd_ref_t){ .rd = rd, .pos = n };
			n++;
			rd = knot_rdataset_next((knot_rdata_t *)rd);
		}
		if (first_only) {
			break;
		}
	}
	qsort(refs, n, sizeof(*refs), rd_ref_cmp);
	for (size_t i = 1; i < n; i++) {
		// Equal records are adjacent, the first in the answer first: the later ones go.
		dup[refs[i].pos] = knot_rdata_cmp(refs[i - 1].rd, refs[i].rd) == 0;
	}
	uint8_t *pos = rdata;
	set->rrs.rdata = (knot_rdata_t *)rdata;
	for (size_t i = 0; i < n; i++) {
		if (!dup[i]) {
			size_t rd_size = knot_rdata_size(wire[i]->len);
			memcpy(pos, wire[i], rd_size);
			pos += rd_size;
			set->rrs.count++;
		}
	}
	set->rrs.size = pos - rdata;
	free(refs);
	c->min_ttl = (set->ttl < c->min_ttl) ? set->ttl : c->min_ttl;
	c->count++;
	return KNOT_EOK;
}

/*!
 * \brief Takes the CNAME chain from \a qname and the records of \a qtype at its end.
 *
 * Records off the chain are ignored: an upstream has no say about other names.
 *
 * \retval KNOT_EOK, KNOT_ELIMIT (chain too long or looping), KNOT_ENOMEM
 */
static int chain_collect(chain_t *c, const knot_pkt_t *pkt, const knot_dname_t *qname,
                         uint16_t qtype)
{
	const knot_pktsection_t *an = knot_pkt_section(pkt, KNOT_ANSWER);
	const knot_dname_t *name = qname;
	for (;;) {
		// A name has one CNAME; more would be a broken zone, so the first one counts.
		int ret = chain_add(c, an, name, KNOT_RRTYPE_CNAME, true);
		if (ret == KNOT_ENOENT) {
			break;
		} else if (ret != KNOT_EOK) {
			return ret;
		} else if (c->count > MAX_CHAIN) {
			return KNOT_ELIMIT;
		}
		name = knot_cname_name(c->sets[c->count - 1].rrs.rdata);
	}
	int ret = chain_add(c, an, name, qtype, false);
	return (ret == KNOT_ENOENT) ? KNOT_EOK : ret;
}

/*! \brief TTL of a negative answer: the IN SOA's, as RFC 2308 says, within bounds. */
static uint32_t negative_ttl(const knot_pkt_t *pkt)
{
	uint32_t ttl;
	if (!k8s_negative_ttl(pkt, &ttl)) {
		return NEG_TTL_DEFAULT;
	}
	if (ttl < NEG_TTL_MIN) {
		return NEG_TTL_MIN;
	}
	return (ttl > NEG_TTL_MAX) ? NEG_TTL_MAX : ttl;
}

/*!
 * \brief Packs the chain into one block: entry, answer, RRset array, rdata, owners, key.
 *
 * \retval KNOT_EOK, KNOT_ESPACE (too large), KNOT_ENOMEM
 */
static int entry_pack(const chain_t *c, const knot_dname_t *name, uint16_t qtype,
                      const uint8_t *source, uint16_t rcode, uint32_t expires, uint32_t hash,
                      k8s_upstream_entry_t **out)
{
	size_t source_size = (source != NULL && source[0] != 0) ? 1 + source[0] : 0;
	size_t size = sizeof(k8s_upstream_entry_t) + sizeof(k8s_upstream_answer_t) +
	              c->count * sizeof(knot_rrset_t) + knot_dname_size(name) + source_size;
	for (size_t i = 0; i < c->count; i++) {
		size += c->sets[i].rrs.size + knot_dname_size(c->sets[i].owner);
	}
	if (size > MAX_ENTRY) {
		return KNOT_ESPACE;
	}

	k8s_upstream_entry_t *e = malloc(size);
	if (e == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_upstream_answer_t *ans = (k8s_upstream_answer_t *)(e + 1);
	uint8_t *pos = (uint8_t *)&ans->rrsets[c->count];
	ans->rcode = rcode;
	ans->count = c->count;
	ans->expires = expires;
	// Rdata first: its records are 2-byte aligned and have even sizes.
	for (size_t i = 0; i < c->count; i++) {
		const knot_rrset_t *src = &c->sets[i];
		knot_rrset_t *dst = &ans->rrsets[i];
		knot_rrset_init(dst, NULL, src->type, src->rclass, src->ttl);
		dst->rrs.count = src->rrs.count;
		dst->rrs.size = src->rrs.size;
		dst->rrs.rdata = (knot_rdata_t *)pos;
		memcpy(pos, src->rrs.rdata, src->rrs.size);
		pos += src->rrs.size;
	}
	for (size_t i = 0; i < c->count; i++) {
		ans->rrsets[i].owner = pos;
		knot_dname_copy_lower(pos, c->sets[i].owner);
		pos += knot_dname_size(pos);
	}
	memcpy(pos, name, knot_dname_size(name));
	e->name = pos;
	e->source = NULL;
	if (source_size > 0) {
		pos += knot_dname_size(name);
		memcpy(pos, source, source_size);
		e->source = pos;
	}

	e->hash = hash;
	e->qtype = qtype;
	atomic_init(&e->used, false);
	e->ans = ans;
	*out = e;
	return KNOT_EOK;
}

int k8s_upstream_entry_build(const knot_pkt_t *pkt, const knot_dname_t *name, uint16_t qtype,
                             const uint8_t *source, uint16_t rcode, uint64_t now, uint32_t hash,
                             k8s_upstream_entry_t **out)
{
	chain_t c = { .min_ttl = UINT32_MAX };
	int ret = chain_collect(&c, pkt, name, qtype);
	if (ret == KNOT_EOK) {
		bool negative = (c.count == 0 || c.sets[c.count - 1].type != qtype);
		// TTLs above 2^31 - 1 mean 0 (RFC 2181, 8); a day at most keeps expiry in range.
		uint32_t ttl = (c.min_ttl > INT32_MAX && c.count > 0) ? 0 : c.min_ttl;
		ttl = (ttl > TTL_MAX) ? TTL_MAX : ttl;
		if (negative) {
			uint32_t neg = negative_ttl(pkt);
			ttl = (neg < ttl) ? neg : ttl;
		}
		ret = entry_pack(&c, name, qtype, source, rcode, (uint32_t)(now / 1000) + ttl, hash,
		                 out);
	}
	chain_clear(&c);
	return ret;
}

int k8s_upstream_entry_failure(const knot_dname_t *name, uint16_t qtype, const uint8_t *source,
                               uint16_t rcode, uint32_t expires, uint32_t hash,
                               k8s_upstream_entry_t **out)
{
	chain_t c = { .count = 0 };
	return entry_pack(&c, name, qtype, source, rcode, expires, hash, out);
}
