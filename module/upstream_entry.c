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

#include "upstream_entry.h"

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

/*!
 * \brief Adds the records of \a type owned by \a owner as one RRset (at their lowest TTL).
 *
 * \retval KNOT_EOK, KNOT_ENOENT (none), KNOT_ENOMEM
 */
static int chain_add(chain_t *c, const knot_pktsection_t *an, const knot_dname_t *owner,
                     uint16_t type, bool first_only)
{
	knot_rrset_t *set = &c->sets[c->count];
	knot_rrset_init(set, (knot_dname_t *)owner, type, KNOT_CLASS_IN, UINT32_MAX);
	for (uint16_t i = 0; i < an->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(an, i);
		if (rr->type != type || rr->rclass != KNOT_CLASS_IN ||
		    !knot_dname_is_case_equal(rr->owner, owner)) {
			continue;
		}
		int ret = knot_rdataset_merge(&set->rrs, &rr->rrs, NULL);
		if (ret != KNOT_EOK) {
			knot_rdataset_clear(&set->rrs, NULL);
			return ret;
		}
		set->ttl = (rr->ttl < set->ttl) ? rr->ttl : set->ttl;
		if (first_only) {
			break;
		}
	}
	if (set->rrs.count == 0) {
		return KNOT_ENOENT;
	}
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

/*!
 * \brief The MINIMUM field of an SOA's rdata, if it is whole.
 *
 * libknot checks the rdata of class IN only: of another class it may be empty
 * or anything, so both names and the five numbers are measured here first.
 */
static bool soa_minimum(const knot_rdata_t *rdata, uint32_t *minimum)
{
	const uint8_t *pos = rdata->data, *end = rdata->data + rdata->len;
	for (int i = 0; i < 2; i++) {
		int size = knot_dname_wire_check(pos, end, NULL);
		if (size <= 0) {
			return false;
		}
		pos += size;
	}
	if (end - pos < 20) {
		return false;
	}
	*minimum = knot_wire_read_u32(pos + 16);
	return true;
}

/*! \brief TTL of a negative answer: the IN SOA's, as RFC 2308 says, within bounds. */
static uint32_t negative_ttl(const knot_pkt_t *pkt)
{
	const knot_pktsection_t *ns = knot_pkt_section(pkt, KNOT_AUTHORITY);
	for (uint16_t i = 0; i < ns->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(ns, i);
		uint32_t ttl;
		if (rr->type != KNOT_RRTYPE_SOA || rr->rclass != KNOT_CLASS_IN ||
		    rr->rrs.count == 0 || !soa_minimum(rr->rrs.rdata, &ttl)) {
			continue;
		}
		ttl = (rr->ttl < ttl) ? rr->ttl : ttl;
		if (ttl < NEG_TTL_MIN) {
			return NEG_TTL_MIN;
		}
		return (ttl > NEG_TTL_MAX) ? NEG_TTL_MAX : ttl;
	}
	return NEG_TTL_DEFAULT;
}

/*!
 * \brief Packs the chain into one block: entry, answer, RRset array, rdata, owners, key.
 *
 * \retval KNOT_EOK, KNOT_ESPACE (too large), KNOT_ENOMEM
 */
static int entry_pack(const chain_t *c, const knot_dname_t *name, uint16_t qtype,
                      const uint8_t *source, uint16_t rcode, uint32_t expires, uint32_t hash,
                      entry_t **out)
{
	size_t source_size = (source != NULL && source[0] != 0) ? 1 + source[0] : 0;
	size_t size = sizeof(entry_t) + sizeof(k8s_upstream_answer_t) +
	              c->count * sizeof(knot_rrset_t) + knot_dname_size(name) + source_size;
	for (size_t i = 0; i < c->count; i++) {
		size += c->sets[i].rrs.size + knot_dname_size(c->sets[i].owner);
	}
	if (size > MAX_ENTRY) {
		return KNOT_ESPACE;
	}

	entry_t *e = malloc(size);
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
                             entry_t **out)
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
