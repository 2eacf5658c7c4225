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
 * A group's own settings (forward_priv.h, k8s_fwd_settings_t in forward.h): the order its
 * servers are asked in (CoreDNS's forward policies: plugin/forward/policy.go), the
 * transport, and how its answers are kept (CoreDNS's cache: plugin/cache/cache.go,
 * ResponseWriter.WriteMsg, and plugin/pkg/dnsutil/ttl.go). A group without them is the
 * forwarder's own way, as before they existed.
 */

#include <stdlib.h>
#include <string.h>

#include "lib/dnsanswer.h"
#include "resolver/forward_priv.h"

_Static_assert(K8S_FWD_CACHE_GROUPS == 1 + K8S_FWD_GROUPS_MAX, "a count for every group");

/*! \brief The failure lines' period without forward-log-interval. */
#define LOG_INTERVAL_MS 10000

unsigned forward_log_interval(const k8s_fwd_t *f)
{
	return (f->conf.log_interval_ms != 0) ? f->conf.log_interval_ms : LOG_INTERVAL_MS;
}

/*! \brief xorshift64: orders to ask servers in need no more (seeded from getrandom()). */
static uint64_t rng_next(k8s_fwd_t *f)
{
	uint64_t x = (f->rng != 0) ? f->rng : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	f->rng = x;
	return x;
}

void forward_group_order(k8s_fwd_t *f, name_t *n)
{
	group_t *g = n->group;
	size_t count = g->count;
	for (size_t i = 0; i < count; i++) {
		n->order[i] = i;
	}
	uint8_t policy = forward_coredns(g) ? g->set->policy : K8S_FWD_SEQUENTIAL;
	if (count < 2 || policy == K8S_FWD_SEQUENTIAL) {
		return;
	}
	if (policy == K8S_FWD_RANDOM) {
		for (size_t i = count - 1; i > 0; i--) {
			size_t j = rng_next(f) % (i + 1);
			uint8_t tmp = n->order[i];
			n->order[i] = n->order[j];
			n->order[j] = tmp;
		}
		return;
	}
	// round_robin: the next one first, then the others in their order (as CoreDNS's,
	// whose turn starts at 1).
	size_t first = ++g->robin % count;
	n->order[0] = first;
	for (size_t i = 0, k = 1; i < count; i++) {
		if (i != first) {
			n->order[k++] = i;
		}
	}
}

bool forward_group_tcp(const name_t *n)
{
	const group_t *g = n->group;
	return forward_coredns(g) && (g->set->force_tcp || (n->tcp && !g->set->prefer_udp));
}

/*!
 * \brief CoreDNS's least TTL of a message (dnsutil.MinimalTTLWithMaximum): every record's
 * but OPT, from \a max down; 5 s for a message without records.
 */
static uint32_t least_ttl(const knot_pkt_t *answer, uint32_t max)
{
	uint32_t least = max;
	size_t records = 0;
	for (int s = KNOT_ANSWER; s <= KNOT_ADDITIONAL; s++) {
		const knot_pktsection_t *sec = knot_pkt_section(answer, s);
		for (uint16_t i = 0; i < sec->count; i++) {
			const knot_rrset_t *rr = knot_pkt_rr(sec, i);
			if (rr->type == KNOT_RRTYPE_OPT) {
				continue;
			}
			records++;
			least = (rr->ttl < least) ? rr->ttl : least;
		}
	}
	return (records == 0) ? K8S_FWD_COREDNS_MIN : least;
}

/*! \brief Whether the authority section holds an SOA (CoreDNS keeps no denial without one). */
static bool has_soa(const knot_pkt_t *answer)
{
	const knot_pktsection_t *ns = knot_pkt_section(answer, KNOT_AUTHORITY);
	for (uint16_t i = 0; i < ns->count; i++) {
		if (knot_pkt_rr(ns, i)->type == KNOT_RRTYPE_SOA) {
			return true;
		}
	}
	return false;
}

/*! \brief Publishes \a e in its group's count if the group has room for its kind. */
static bool room_for(const k8s_fwd_t *f, const group_t *g, uint8_t kind)
{
	const k8s_fwd_settings_t *set = g->set;
	uint32_t cap = (kind == K8S_FWD_HELD_SUCCESS) ? set->success_cap : set->denial_cap;
	bool disabled = (kind == K8S_FWD_HELD_SUCCESS) ? set->no_success : set->no_denial;
	return !disabled && g->index < K8S_FWD_CACHE_GROUPS &&
	       f->cache.held[g->index][kind] < cap;
}

k8s_fwd_entry_t *forward_group_entry(k8s_fwd_t *f, const name_t *n, const knot_pkt_t *answer,
                                     uint64_t now, bool *keep)
{
	const group_t *g = n->group;
	uint8_t mode = (g->set != NULL) ? g->set->cache : K8S_FWD_CACHE_SHARED;
	*keep = false;
	// A source's or a kept name's flight is the keeper's: the forwarder's own rules.
	if (mode == K8S_FWD_CACHE_SHARED || n->source[0] != 0 || n->kept != NULL) {
		k8s_fwd_entry_t *e = k8s_fwd_entry_new_source(answer, n->qname, n->qtype, n->source,
		                                              f->conf.cache_max_ttl, now, false);
		if (e != NULL) {
			*keep = true;
			return e;
		}
		// Not kept (no SOA, TTL 0, too large, an error RCODE): relayed as it is.
		return k8s_fwd_entry_new(answer, n->qname, n->qtype, f->conf.cache_max_ttl, now, true);
	}
	if (mode == K8S_FWD_CACHE_OFF) {
		return k8s_fwd_entry_new(answer, n->qname, n->qtype, UINT32_MAX, now, true);
	}

	// CoreDNS's cache: the kind of answer says which limits and which cache.
	const k8s_fwd_settings_t *set = g->set;
	k8s_response_t type = k8s_response_type(answer->wire, answer->size);
	uint8_t kind = K8S_FWD_HELD_NONE;
	uint32_t ttl;
	switch (type) {
	case K8S_RESPONSE_NOERROR:
	case K8S_RESPONSE_DELEGATION:
		kind = K8S_FWD_HELD_SUCCESS;
		ttl = least_ttl(answer, set->success_max);
		ttl = (ttl < set->success_min) ? set->success_min : ttl;
		ttl = (ttl > set->success_max) ? set->success_max : ttl;
		break;
	case K8S_RESPONSE_NXDOMAIN:
	case K8S_RESPONSE_NODATA:
		// A name error is kept only with its SOA.
		kind = (type == K8S_RESPONSE_NODATA || has_soa(answer)) ? K8S_FWD_HELD_DENIAL
		                                                        : K8S_FWD_HELD_NONE;
		ttl = least_ttl(answer, set->denial_max);
		ttl = (ttl < set->denial_min) ? set->denial_min : ttl;
		ttl = (ttl > set->denial_max) ? set->denial_max : ttl;
		break;
	case K8S_RESPONSE_SERVFAIL:
		kind = K8S_FWD_HELD_DENIAL;  // CoreDNS keeps failures in its denial cache.
		ttl = set->servfail_ttl;
		break;
	default:
		// Not kept; its records' TTLs become CoreDNS's default least (5 s) within the limits.
		ttl = K8S_FWD_COREDNS_MIN;
		ttl = (ttl < set->success_min) ? set->success_min : ttl;
		ttl = (ttl > set->success_max) ? set->success_max : ttl;
		break;
	}
	k8s_fwd_entry_t *e = k8s_fwd_entry_new_uniform(answer, n->qname, n->qtype, ttl, now);
	if (e == NULL) {
		// Larger than an entry: relayed whole, its TTLs as they came.
		return k8s_fwd_entry_new(answer, n->qname, n->qtype, UINT32_MAX, now, true);
	}
	e->group = g->index;
	e->kind = kind;
	*keep = (kind != K8S_FWD_HELD_NONE && ttl > 0 && room_for(f, g, kind));
	return e;
}

void forward_group_failed(k8s_fwd_t *f, const name_t *n, uint64_t now)
{
	const group_t *g = n->group;
	if (g == NULL || g->set == NULL || g->set->cache != K8S_FWD_CACHE_COREDNS ||
	    g->set->servfail_ttl == 0 || n->source[0] != 0 || n->kept != NULL ||
	    !room_for(f, g, K8S_FWD_HELD_DENIAL)) {
		return;
	}
	k8s_fwd_entry_t *e = k8s_fwd_entry_failure(n->qname, n->qtype, NULL, KNOT_RCODE_SERVFAIL,
	                                           now, now + (uint64_t)g->set->servfail_ttl * 1000);
	if (e == NULL) {
		return;
	}
	// A client's answer, as CoreDNS's cached SERVFAIL is (not a kept name's failure).
	e->kept = false;
	e->kept_only = false;
	e->group = g->index;
	e->kind = K8S_FWD_HELD_DENIAL;
	k8s_fwd_cache_put(&f->cache, e, now);
}
