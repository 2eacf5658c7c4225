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

#include "lib/dnsanswer.h"
#include "resolver/forward_cache.h"
#include "lib/hash.h"
#include "lib/tsan_rcu.h"

/*!
 * \brief Records kept: of class IN, as asked (libknot does not measure the rdata of
 * another class: such a record could not be written back safely), OPT and TSIG left out.
 */
static bool kept(const knot_rrset_t *rr)
{
	return rr->rclass == KNOT_CLASS_IN && rr->type != KNOT_RRTYPE_OPT &&
	       rr->type != KNOT_RRTYPE_TSIG;
}

/*! \brief The source label's bytes (length and text), 0 for none. */
static size_t source_size(const uint8_t *source)
{
	return (source != NULL && source[0] != 0) ? 1 + source[0] : 0;
}

/*! \brief Fills an entry's key and header; the name and source go at \a pos. */
static uint8_t *entry_init(k8s_fwd_entry_t *e, const knot_dname_t *qname, uint16_t qtype,
                           const uint8_t *source, uint16_t rcode, uint64_t now_ms,
                           size_t bytes, uint8_t *pos)
{
	memset(e, 0, sizeof(*e));
	e->hash = k8s_fwd_key_hash_source(qname, qtype, source);
	e->qtype = qtype;
	e->rcode = rcode;
	e->stored_ms = now_ms;
	e->bytes = bytes;
	atomic_init(&e->used, false);
	e->qname = pos;
	memcpy(pos, qname, knot_dname_size(qname));
	pos += knot_dname_size(qname);
	if (source_size(source) > 0) {
		e->source = pos;
		e->kept_only = true;  // A source's answer is never a client's.
		memcpy(pos, source, source_size(source));
		pos += source_size(source);
	}
	return pos;
}

/*!
 * \brief The next record of \a answer kept in an entry from section \a *s, record \a *i
 * on (both moved past it), or NULL after the last.
 */
static const knot_rrset_t *next_kept(const knot_pkt_t *answer, int *s, uint16_t *i)
{
	for (; *s <= KNOT_ADDITIONAL; (*s)++, *i = 0) {
		const knot_pktsection_t *sec = knot_pkt_section(answer, *s);
		while (*i < sec->count) {
			const knot_rrset_t *rr = knot_pkt_rr(sec, (*i)++);
			if (kept(rr)) {
				return rr;
			}
		}
	}
	return NULL;
}

/*!
 * \brief The bytes \a answer's kept records take in an entry; their number in \a rr_count
 * and \a count[] (by section), \a least lowered to their least TTL.
 */
static size_t kept_size(const knot_pkt_t *answer, size_t *rr_count, uint16_t count[3],
                        uint32_t *least)
{
	size_t bytes = 0;
	int s = KNOT_ANSWER;
	uint16_t i = 0;
	const knot_rrset_t *rr;
	while ((rr = next_kept(answer, &s, &i)) != NULL) {
		if (rr->ttl < *least) {
			*least = rr->ttl;
		}
		// One byte more: the rdata is put 2-byte aligned (knot_rdata_t's length).
		bytes += sizeof(knot_rrset_t) + knot_dname_size(rr->owner) + 1 + rr->rrs.size;
		count[s - KNOT_ANSWER]++;
		(*rr_count)++;
	}
	return bytes;
}

/*!
 * \brief An entry of \a bytes holding the kept records of \a answer (\a rr_count,
 * \a count[] by section), without its life yet; NULL on no memory.
 */
static k8s_fwd_entry_t *entry_alloc(const knot_pkt_t *answer, const knot_dname_t *qname,
                                    uint16_t qtype, const uint8_t *source, uint16_t rcode,
                                    uint64_t now_ms, size_t bytes, size_t rr_count,
                                    const uint16_t count[3])
{
	k8s_fwd_entry_t *e = malloc(bytes);
	if (e == NULL) {
		return NULL;
	}
	uint8_t *pos = entry_init(e, qname, qtype, source, rcode, now_ms, bytes,
	                          (uint8_t *)&e->rrs[rr_count]);
	memcpy(e->count, count, sizeof(e->count));

	size_t n = 0;
	int s = KNOT_ANSWER;
	uint16_t i = 0;
	const knot_rrset_t *rr;
	while ((rr = next_kept(answer, &s, &i)) != NULL) {
		knot_rrset_t *dst = &e->rrs[n++];
		memset(dst, 0, sizeof(*dst));
		size_t owner_size = knot_dname_size(rr->owner);
		memcpy(pos, rr->owner, owner_size);
		dst->owner = pos;
		pos += owner_size;
		dst->type = rr->type;
		dst->rclass = rr->rclass;
		dst->ttl = rr->ttl;
		dst->rrs.count = rr->rrs.count;
		dst->rrs.size = rr->rrs.size;
		pos += (uintptr_t)pos & 1;
		dst->rrs.rdata = (knot_rdata_t *)pos;
		memcpy(pos, rr->rrs.rdata, rr->rrs.size);
		pos += rr->rrs.size;
	}
	return e;
}

k8s_fwd_entry_t *k8s_fwd_entry_failure(const knot_dname_t *qname, uint16_t qtype,
                                       const uint8_t *source, uint16_t rcode, uint64_t now_ms,
                                       uint64_t expires_ms)
{
	size_t bytes = sizeof(k8s_fwd_entry_t) + knot_dname_size(qname) + source_size(source);
	k8s_fwd_entry_t *e = malloc(bytes);
	if (e == NULL) {
		return NULL;
	}
	(void)entry_init(e, qname, qtype, source, rcode, now_ms, bytes, (uint8_t *)e->rrs);
	e->expires_ms = expires_ms;
	e->kept = true;
	e->kept_only = true;
	return e;
}

k8s_fwd_entry_t *k8s_fwd_entry_new(const knot_pkt_t *answer, const knot_dname_t *qname,
                                   uint16_t qtype, uint32_t max_ttl, uint64_t now_ms, bool relay)
{
	return k8s_fwd_entry_new_source(answer, qname, qtype, NULL, max_ttl, now_ms, relay);
}

k8s_fwd_entry_t *k8s_fwd_entry_new_source(const knot_pkt_t *answer, const knot_dname_t *qname,
                                          uint16_t qtype, const uint8_t *source,
                                          uint32_t max_ttl, uint64_t now_ms, bool relay)
{
	uint16_t rcode = knot_wire_get_rcode(answer->wire);
	if (!relay && ((rcode != KNOT_RCODE_NOERROR && rcode != KNOT_RCODE_NXDOMAIN) ||
	               knot_wire_get_tc(answer->wire))) {
		return NULL;
	}

	// Sizes and the entry's life first: nothing is allocated for what is not kept.
	size_t rr_count = 0;
	uint16_t count[3] = { 0 };
	uint32_t life = max_ttl;
	size_t bytes = sizeof(k8s_fwd_entry_t) + knot_dname_size(qname) + source_size(source) +
	               kept_size(answer, &rr_count, count, &life);
	// A negative answer (NODATA: no record kept in the answer section) lives its SOA's
	// negative TTL; without a whole IN SOA it is not kept.
	bool negative = (rcode == KNOT_RCODE_NXDOMAIN || count[0] == 0);
	uint32_t neg_ttl = 0;
	bool has_soa = negative && k8s_negative_ttl(answer, &neg_ttl);
	if (has_soa && neg_ttl < life) {
		life = neg_ttl;
	}
	if (bytes > (relay ? K8S_FWD_RELAY_MAX : K8S_FWD_ENTRY_MAX) ||
	    (!relay && ((negative && !has_soa) || life == 0))) {
		return NULL;
	}

	k8s_fwd_entry_t *e = entry_alloc(answer, qname, qtype, source, rcode, now_ms, bytes,
	                                 rr_count, count);
	if (e != NULL) {
		e->expires_ms = now_ms + (uint64_t)life * 1000;
		e->ttl_cap = max_ttl;
	}
	return e;
}

k8s_fwd_entry_t *k8s_fwd_entry_new_uniform(const knot_pkt_t *answer, const knot_dname_t *qname,
                                           uint16_t qtype, uint32_t ttl, uint64_t now_ms)
{
	size_t rr_count = 0;
	uint16_t count[3] = { 0 };
	uint32_t least = ttl;
	size_t bytes = sizeof(k8s_fwd_entry_t) + knot_dname_size(qname) +
	               kept_size(answer, &rr_count, count, &least);
	if (bytes > K8S_FWD_ENTRY_MAX) {
		return NULL;
	}
	k8s_fwd_entry_t *e = entry_alloc(answer, qname, qtype, NULL, knot_wire_get_rcode(answer->wire),
	                                 now_ms, bytes, rr_count, count);
	if (e != NULL) {
		e->expires_ms = now_ms + (uint64_t)ttl * 1000;
		e->ttl_cap = ttl;
		e->uniform = true;
	}
	return e;
}

void k8s_fwd_entry_free(k8s_fwd_entry_t *e)
{
	free(e);
}

int k8s_fwd_entry_put(const k8s_fwd_entry_t *e, knot_pkt_t *pkt, uint64_t now_ms)
{
	uint64_t age_ms = (now_ms > e->stored_ms) ? now_ms - e->stored_ms : 0;
	uint32_t age = (age_ms / 1000 > UINT32_MAX) ? UINT32_MAX : age_ms / 1000;
	const knot_rrset_t *rr = e->rrs;
	for (int s = 0; s < 3; s++) {
		int ret = knot_pkt_begin(pkt, KNOT_ANSWER + s);
		if (ret != KNOT_EOK) {
			return ret;
		}
		for (uint16_t i = 0; i < e->count[s]; i++, rr++) {
			knot_rrset_t copy = *rr;
			uint32_t ttl = (copy.ttl < e->ttl_cap && !e->uniform) ? copy.ttl : e->ttl_cap;
			copy.ttl = (ttl > age) ? ttl - age : 0;
			ret = knot_pkt_put(pkt, KNOT_COMPR_HINT_NONE, &copy, 0);
			if (ret == KNOT_ESPACE) {
				// Answer or authority incomplete: the client asks again over TCP.
				if (s < 2) {
					knot_wire_set_tc(pkt->wire);
				}
				return KNOT_EOK;
			} else if (ret != KNOT_EOK) {
				return ret;
			}
		}
	}
	return KNOT_EOK;
}

uint32_t k8s_fwd_key_hash(const knot_dname_t *qname, uint16_t qtype)
{
	return k8s_hash(qname, knot_dname_size(qname)) ^ ((uint32_t)qtype * 0x9e3779b1u);
}

uint32_t k8s_fwd_key_hash_source(const knot_dname_t *qname, uint16_t qtype,
                                 const uint8_t *source)
{
	uint32_t hash = k8s_fwd_key_hash(qname, qtype);
	return (source_size(source) > 0) ? hash ^ k8s_hash(source, source_size(source)) : hash;
}

int k8s_fwd_cache_init(k8s_fwd_cache_t *c, size_t size)
{
	memset(c, 0, sizeof(*c));
	size_t slots = 2;
	while (slots < size && slots < ((size_t)1 << 30)) {
		slots <<= 1;
	}
	c->slots = calloc(slots, sizeof(*c->slots));
	if (c->slots == NULL) {
		return KNOT_ENOMEM;
	}
	c->mask = slots - 1;
	return KNOT_EOK;
}

void k8s_fwd_cache_deinit(k8s_fwd_cache_t *c)
{
	if (c->slots == NULL) {
		return;
	}
	for (size_t i = 0; i <= c->mask; i++) {
		k8s_fwd_entry_free(c->slots[i]);
	}
	free(c->slots);
	c->slots = NULL;
}

static bool key_is(const k8s_fwd_entry_t *e, uint32_t hash, const knot_dname_t *qname,
                   uint16_t qtype, const uint8_t *source)
{
	size_t size = source_size(source);
	return e != NULL && e->hash == hash && e->qtype == qtype &&
	       knot_dname_is_equal(e->qname, qname) && source_size(e->source) == size &&
	       (size == 0 || memcmp(e->source, source, size) == 0);
}

k8s_fwd_entry_t *k8s_fwd_cache_find(k8s_fwd_cache_t *c, const knot_dname_t *qname,
                                    uint16_t qtype, const uint8_t *source)
{
	uint32_t hash = k8s_fwd_key_hash_source(qname, qtype, source);
	size_t first = hash & c->mask & ~(size_t)1;
	for (size_t i = first; i <= first + 1; i++) {
		k8s_fwd_entry_t *e = rcu_dereference(c->slots[i]);
		if (key_is(e, hash, qname, qtype, source)) {
			return e;
		}
	}
	return NULL;
}

const k8s_fwd_entry_t *k8s_fwd_cache_get(k8s_fwd_cache_t *c, const knot_dname_t *qname,
                                         uint16_t qtype, uint64_t now_ms)
{
	const k8s_fwd_entry_t *e = k8s_fwd_cache_find(c, qname, qtype, NULL);
	return (e != NULL && !e->kept_only && now_ms < e->expires_ms) ? e : NULL;
}

static void entry_free_rcu(struct rcu_head *head)
{
	k8s_tsan_grace_passed();
	k8s_fwd_entry_free(caa_container_of(head, k8s_fwd_entry_t, rcu));
	k8s_tsan_callback_end();
}

/*! \brief A kept name's entry that queries look up: spared while another may go. */
static bool entry_spared(const k8s_fwd_entry_t *e)
{
	return e->kept && (e->in_use || atomic_load_explicit(&e->used, memory_order_relaxed));
}

/*! \brief Counts \a e in (or out of) its group's entries of its kind. */
static void held_count(k8s_fwd_cache_t *c, const k8s_fwd_entry_t *e, int by)
{
	if (e->kind != K8S_FWD_HELD_NONE && e->kind < K8S_FWD_HELD_KINDS &&
	    e->group < K8S_FWD_CACHE_GROUPS) {
		c->held[e->group][e->kind] += by;
	}
}

void k8s_fwd_cache_put(k8s_fwd_cache_t *c, k8s_fwd_entry_t *e, uint64_t now_ms)
{
	size_t first = e->hash & c->mask & ~(size_t)1;
	size_t victim = first;
	for (size_t i = first; i <= first + 1; i++) {
		k8s_fwd_entry_t *old = c->slots[i];
		if (key_is(old, e->hash, e->qname, e->qtype, e->source) || old == NULL ||
		    old->expires_ms <= now_ms) {
			victim = i;
			break;
		}
		// A flood of names asked once must not displace a name in use: it goes last,
		// then the entry that runs out first.
		k8s_fwd_entry_t *v = c->slots[victim];
		bool spared = entry_spared(old), v_spared = entry_spared(v);
		if ((v_spared && !spared) ||
		    (v_spared == spared && old->expires_ms < v->expires_ms)) {
			victim = i;
		}
	}
	k8s_fwd_entry_t *old = rcu_xchg_pointer(&c->slots[victim], e);
	atomic_fetch_add(&c->bytes, e->bytes);
	held_count(c, e, 1);
	if (old != NULL) {
		atomic_fetch_sub(&c->bytes, old->bytes);
		held_count(c, old, -1);
		urcu_memb_call_rcu(&old->rcu, entry_free_rcu);
	} else {
		atomic_fetch_add(&c->entries, 1);
	}
}

void k8s_fwd_cache_del(k8s_fwd_cache_t *c, k8s_fwd_entry_t *e)
{
	size_t first = e->hash & c->mask & ~(size_t)1;
	for (size_t i = first; i <= first + 1; i++) {
		if (c->slots[i] == e) {
			rcu_set_pointer(&c->slots[i], NULL);
			atomic_fetch_sub(&c->bytes, e->bytes);
			held_count(c, e, -1);
			atomic_fetch_sub(&c->entries, 1);
			urcu_memb_call_rcu(&e->rcu, entry_free_rcu);
			return;
		}
	}
}

/* The answer path's reading (upstream.h). */

/*! \brief CNAMEs followed in one answer, as a resolver would. */
#define CHAIN_MAX 8

uint16_t k8s_upstream_rcode(const k8s_fwd_entry_t *e)
{
	return e->rcode;
}

bool k8s_upstream_failed(const k8s_fwd_entry_t *e)
{
	return e->rcode != KNOT_RCODE_NOERROR && e->rcode != KNOT_RCODE_NXDOMAIN;
}

bool k8s_upstream_unreachable(const k8s_fwd_entry_t *e)
{
	return e->unreachable;
}

uint32_t k8s_upstream_ttl_left(const k8s_fwd_entry_t *e, uint64_t now_ms)
{
	uint64_t left = (e->expires_ms > now_ms) ? (e->expires_ms - now_ms) / 1000 : 0;
	return (left > UINT32_MAX) ? UINT32_MAX : left;
}

void k8s_upstream_iter_init(const k8s_fwd_entry_t *e, k8s_upstream_iter_t *it)
{
	*it = (k8s_upstream_iter_t){ .owner = e->qname };
}

const knot_rrset_t *k8s_upstream_next(const k8s_fwd_entry_t *e, k8s_upstream_iter_t *it)
{
	if (it->owner == NULL) {
		return NULL;
	}
	if (!it->records) {
		for (uint16_t i = 0; i < e->count[0]; i++) {
			const knot_rrset_t *rr = &e->rrs[i];
			if (rr->type == KNOT_RRTYPE_CNAME && knot_dname_is_case_equal(rr->owner, it->owner)) {
				if (it->hops == CHAIN_MAX) {
					break;  // Longer than a resolver follows: no records at its end.
				}
				it->hops++;
				it->owner = knot_cname_name(rr->rrs.rdata);
				return rr;
			}
		}
		it->records = true;
		if (it->hops == CHAIN_MAX) {
			it->owner = NULL;
			return NULL;
		}
	}
	while (it->next < e->count[0]) {
		const knot_rrset_t *rr = &e->rrs[it->next++];
		if (rr->type == e->qtype && knot_dname_is_case_equal(rr->owner, it->owner)) {
			return rr;
		}
	}
	it->owner = NULL;
	return NULL;
}

bool k8s_upstream_has_records(const k8s_fwd_entry_t *e)
{
	k8s_upstream_iter_t it;
	k8s_upstream_iter_init(e, &it);
	const knot_rrset_t *rr;
	while ((rr = k8s_upstream_next(e, &it)) != NULL) {
		if (it.records) {
			return true;
		}
	}
	return false;
}

bool k8s_upstream_empty(const k8s_fwd_entry_t *e)
{
	k8s_upstream_iter_t it;
	k8s_upstream_iter_init(e, &it);
	return k8s_upstream_next(e, &it) == NULL;
}
