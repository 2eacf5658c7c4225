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
 * knotd glue of the zones a rewritten query is answered from (k8s_rewrite.c's hook): an
 * immutable list of their contexts published under RCU (added in load, removed first
 * in unload, a grace period before the context goes), each zone's answer of a rewritten
 * name, and the copy of its SOA that its own queries leave while rules are configured
 * (knotd gives a module the SOA of the query's zone only). The global instance's
 * hand-overs read the newest cluster zone's pods from it too (k8s_glue_tenant()).
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_glue.h"
#include "lib/tsan_rcu.h"

bool k8s_rewrite_zones_soa;

/*! \brief A zone's SOA (rdata in one allocation), set once by a worker, freed in unload. */
struct k8s_rw_soa {
	knot_rrset_t rr;
	knot_dname_t *owner;
};

void k8s_rewrite_zone_seen(k8s_ctx_t *ctx, knotd_qdata_t *qdata)
{
	knot_rrset_t soa = knotd_qdata_zone_apex_rrset(qdata, KNOT_RRTYPE_SOA);
	if (knot_rrset_empty(&soa)) {
		return;
	}
	// Once per zone instance: an allocation on a worker, not per query.
	size_t osize = knot_dname_size(soa.owner);
	size_t rsize = knot_rdata_size(soa.rrs.rdata->len);
	struct k8s_rw_soa *copy = malloc(sizeof(*copy) + osize + rsize);
	if (copy == NULL) {
		return;
	}
	// The rdata first, aligned as knot_rdata_t must be (its 16-bit length), the owner after.
	knot_rdata_t *rd = (knot_rdata_t *)(copy + 1);
	uint8_t *owner = (uint8_t *)rd + rsize;
	memcpy(owner, soa.owner, osize);
	memcpy(rd, soa.rrs.rdata, rsize);
	knot_rrset_init(&copy->rr, owner, KNOT_RRTYPE_SOA, KNOT_CLASS_IN, soa.ttl);
	copy->rr.rrs = (knot_rdataset_t){ .count = 1, .size = rsize, .rdata = rd };
	struct k8s_rw_soa *expected = NULL;
	if (!__atomic_compare_exchange_n(&ctx->rw_soa, &expected, copy, false, __ATOMIC_RELEASE,
	                                 __ATOMIC_RELAXED)) {
		free(copy);  // Another worker's came first.
	}
}

/* The zones answered from: an immutable array published under RCU. */

typedef struct {
	size_t count;
	const k8s_ctx_t *ctx[];
} zone_set_t;

static pthread_mutex_t zones_lock = PTHREAD_MUTEX_INITIALIZER;
static zone_set_t *zones;

/*! \brief Publishes \a next (zones_lock held) and frees the old set after a grace period. */
static void zones_publish(zone_set_t *next)
{
	zone_set_t *old = zones;
	rcu_assign_pointer(zones, next);
	pthread_mutex_unlock(&zones_lock);
	// load and unload run on knotd's main thread, in no read-side section.
	urcu_memb_synchronize_rcu();
	free(old);
}

void k8s_rewrite_zone_add(k8s_ctx_t *ctx)
{
	k8s_role_t role = ctx->answer.role;
	if (ctx->zone == NULL || (role != K8S_ROLE_CLUSTER && role != K8S_ROLE_CLUSTERSET &&
	                          role != K8S_ROLE_REVERSE)) {
		return;
	}
	pthread_mutex_lock(&zones_lock);
	size_t count = (zones != NULL) ? zones->count : 0;
	zone_set_t *next = malloc(sizeof(*next) + (count + 1) * sizeof(next->ctx[0]));
	if (next == NULL) {
		pthread_mutex_unlock(&zones_lock);
		knotd_mod_log(ctx->mod, LOG_ERR, "rewritten names are not answered from this zone "
		              "(no memory)");
		return;
	}
	// The newest first: after a reload, the new instance of a zone answers.
	next->ctx[0] = ctx;
	if (count > 0) {
		memcpy(next->ctx + 1, zones->ctx, count * sizeof(next->ctx[0]));
	}
	next->count = count + 1;
	ctx->rw_zone = true;
	zones_publish(next);
}

void k8s_rewrite_zone_remove(k8s_ctx_t *ctx)
{
	if (!ctx->rw_zone) {
		return;
	}
	pthread_mutex_lock(&zones_lock);
	size_t count = zones->count;
	zone_set_t *next = NULL;
	if (count > 1) {
		// Without memory the zone stays listed until the next change: its context must stay.
		next = malloc(sizeof(*next) + (count - 1) * sizeof(next->ctx[0]));
		if (next == NULL) {
			pthread_mutex_unlock(&zones_lock);
			return;
		}
		next->count = 0;
		for (size_t i = 0; i < count; i++) {
			if (zones->ctx[i] != ctx) {
				next->ctx[next->count++] = zones->ctx[i];
			}
		}
	}
	ctx->rw_zone = false;
	zones_publish(next);
	// After the grace period: no query reads the zone's SOA any more.
	free(ctx->rw_soa);
	ctx->rw_soa = NULL;
}

k8s_answer_t k8s_rewrite_zone_answer(const k8s_ctx_t *ctx, const knot_dname_t *qname,
                                const knot_dname_t *shown, uint16_t qtype,
                                const knot_pkt_t *query, const struct sockaddr_storage *remote,
                                knot_pkt_t *pkt, knot_mm_t *mm)
{
	// As the ANSWER hook: after a reload that changed the watch settings, the old watcher's table.
	const k8s_watcher_t *w = k8s_watcher_serving(ctx->watcher, ctx->ready_bits);
	k8s_autopath_outcome_t walked;
	return k8s_answer_as(&ctx->answer, k8s_watcher_table(w), qname, shown, qtype, query, remote,
	                     pkt, mm, &walked);
}

const k8s_ctx_t *k8s_rewrite_zone_of(const knot_dname_t *name)
{
	const zone_set_t *set = rcu_dereference(zones);
	const k8s_ctx_t *best = NULL;
	size_t best_size = 0;
	for (size_t i = 0; set != NULL && i < set->count; i++) {
		const k8s_ctx_t *z = set->ctx[i];
		if (knot_dname_in_bailiwick(name, z->zone) >= 0) {
			size_t size = knot_dname_size(z->zone);
			if (best == NULL || size > best_size) {
				best = z;
				best_size = size;
			}
		}
	}
	return best;
}

const k8s_ctx_t *k8s_rewrite_zone_newest(k8s_role_t role)
{
	const zone_set_t *set = rcu_dereference(zones);
	for (size_t i = 0; set != NULL && i < set->count; i++) {
		if (set->ctx[i]->answer.role == role) {
			return set->ctx[i];
		}
	}
	return NULL;
}

const knot_rrset_t *k8s_rewrite_zone_soa(const k8s_ctx_t *ctx)
{
	const struct k8s_rw_soa *copy = __atomic_load_n(&ctx->rw_soa, __ATOMIC_ACQUIRE);
	return (copy != NULL) ? &copy->rr : NULL;
}
