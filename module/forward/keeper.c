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
 * The kept names (keeper.h) on the forwarder's thread: the workers' lock-free asks and
 * lookups; the names kept, their eviction order (probation, then the kept clock) and
 * their rest when no query looks them up; and each name's A and AAAA *jobs*, resolved
 * as the forwarder's flights (k8s_fwd_flight_keep()) when due: refreshed before expiry
 * while looked up, retried with backoff after a failure. A layer of the forwarder
 * (k8s_keeper_layer): its thread runs it, and it reaches the core through forward.h.
 */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "forward/keeper_priv.h"
#include "lib/clock.h"
#include "lib/hash.h"

/*!
 * \brief The map key of a target: its name as text, then a space and the source, if
 * any (knot_dname_to_str() escapes a space in a name, so no two keys meet).
 */
typedef char key_text_t[sizeof(knot_dname_txt_storage_t) + 65];

/*! \brief The name as text without the final dot, for logs and as the map key. */
static const char *name_text(const knot_dname_t *name, knot_dname_txt_storage_t buf)
{
	if (knot_dname_to_str(buf, name, sizeof(knot_dname_txt_storage_t)) == NULL) {
		return "?";
	}
	size_t len = strlen(buf);
	if (len > 1 && buf[len - 1] == '.') {
		buf[len - 1] = '\0';
	}
	return buf;
}

static const char *key_text(const knot_dname_t *name, const uint8_t *source, key_text_t buf)
{
	name_text(name, buf);
	size_t len = strlen(buf);
	if (source != NULL && source[0] != 0) {
		buf[len] = ' ';
		memcpy(buf + len + 1, source + 1, source[0]);
		buf[len + 1 + source[0]] = '\0';
	}
	return buf;
}

/*! \brief The job whose timer this is. */
static job_t *job_of(k8s_timer_t *timer)
{
	return (job_t *)((char *)timer - offsetof(job_t, timer));
}

/*! \brief A job's entry in the forwarder's cache (any: a client's, expired), or NULL. */
static k8s_fwd_entry_t *entry_of(keeper_t *k, const job_t *job)
{
	const target_t *t = job->target;
	return k8s_fwd_cache_find(k->cache, t->name, job->qtype, t->source);
}

/*! \brief A job's entry, if it is the keeper's own (not a client's answer of the name). */
static k8s_fwd_entry_t *kept_of(keeper_t *k, const job_t *job)
{
	k8s_fwd_entry_t *e = entry_of(k, job);
	return (e != NULL && e->kept) ? e : NULL;
}

/*! \brief Takes the readers' mark on a job's entry (looked up since it was published). */
static void job_harvest(keeper_t *k, job_t *job)
{
	k8s_fwd_entry_t *e = entry_of(k, job);
	// Read first: a write only where a reader wrote, so that readers keep the line shared.
	if (e != NULL && atomic_load_explicit(&e->used, memory_order_relaxed) &&
	    atomic_exchange_explicit(&e->used, false, memory_order_relaxed)) {
		job->looked = true;
		job->target->referenced = true;
		e->in_use = e->kept;  // The cache spares it (only this thread reads the mark).
	}
}

/*! \brief Unpublishes a job's entry if it is the keeper's. */
static void cache_drop(keeper_t *k, job_t *job)
{
	k8s_fwd_entry_t *e = kept_of(k, job);
	if (e != NULL) {
		k8s_fwd_cache_del(k->cache, e);
	}
}

/* Resolutions: the forwarder's flights. */

/*! \brief A resolution's entry \a e is in (or about to be): refreshed before it runs out. */
static void job_done(keeper_t *k, job_t *job, const k8s_fwd_entry_t *e, uint64_t now)
{
	job->backoff_s = 0;
	job->turn = TURN_REFRESH;
	// Refresh at 80 % of the TTL, so that readers find a warm entry.
	uint64_t ttl_ms = (e->expires_ms > now) ? e->expires_ms - now : 0;
	uint64_t refresh = ttl_ms * 4 / 5;
	k8s_timer_heap_push(&k->heap, &job->timer,
	                    now + ((refresh < REFRESH_MIN_MS) ? REFRESH_MIN_MS : refresh));
}

/*!
 * \brief Publishes an upstream's definitive failure (\a rcode: REFUSED, SERVFAIL...), or
 * that no upstream answered within the deadline (\a unreachable: a dead target, counted
 * by the forwarder), until the retry, so that waiting and later queries get their answer
 * now, not each at its deadline. A good answer, even stale, is served instead while it may be.
 */
static void failure_publish(keeper_t *k, job_t *job, uint16_t rcode, bool unreachable,
                            uint64_t now)
{
	const k8s_fwd_entry_t *cur = entry_of(k, job);
	if (cur != NULL && !k8s_upstream_failed(cur) && (cur->kept || now < cur->expires_ms)) {
		return;
	}
	target_t *t = job->target;
	uint64_t until = now + job->backoff_s * 1000;
	if (unreachable && until < now + DEAD_MIN_MS) {
		until = now + DEAD_MIN_MS;  // Its lookups answer at once even past an early retry.
	}
	k8s_fwd_entry_t *e = k8s_fwd_entry_failure(t->name, job->qtype, t->source, rcode, now,
	                                           until);
	if (e != NULL) {
		e->unreachable = unreachable;
		k8s_fwd_cache_put(k->cache, e, now);
	}
}

/*!
 * \brief Gives up on a resolution for now: retried with backoff. \a rcode, if not 0,
 * is the upstream's definitive failure (\a unreachable: no answer at all), published
 * until the retry.
 */
static void job_fail(keeper_t *k, job_t *job, uint64_t now, const char *reason,
                     uint16_t rcode, bool unreachable)
{
	job->backoff_s = (job->backoff_s == 0) ? 1 : 2 * job->backoff_s;
	if (job->backoff_s > BACKOFF_MAX_S) {
		job->backoff_s = BACKOFF_MAX_S;
	}
	job->turn = TURN_RETRY;
	// Stale data beats SERVFAIL, but not forever.
	const k8s_fwd_entry_t *e = kept_of(k, job);
	if (e != NULL && now > e->expires_ms + STALE_MAX_MS) {
		cache_drop(k, job);
	}
	if (rcode != 0) {
		failure_publish(k, job, rcode, unreachable, now);
	}
	k8s_timer_heap_push(&k->heap, &job->timer, now + job->backoff_s * 1000);

	// One line every FAIL_LOG_MS for all names: a flood of dead names is one line.
	if (k->fail_log_ms != 0 && now < k->fail_log_ms + FAIL_LOG_MS) {
		k->fail_skipped++;
		return;
	}
	char skipped[64] = "";
	if (k->fail_skipped > 0) {
		snprintf(skipped, sizeof(skipped), "; %u more failed since the last line",
		         k->fail_skipped);
	}
	k->fail_log_ms = now;
	k->fail_skipped = 0;
	knot_dname_txt_storage_t buf;
	k8s_logf(k->log, LOG_WARNING, "upstream resolution of %s failed, retrying in %u s (%s%s)",
	         name_text(job->target->name, buf), job->backoff_s, reason, skipped);
}

static const char *reason_text(int ret)
{
	switch (ret) {
	case KNOT_ETIMEOUT: return "timed out";
	case KNOT_EMALF:    return "malformed answer";
	case KNOT_ECONN:    return "connection closed";
	case KNOT_ELIMIT:   return "CNAME chain too long";
	case KNOT_ESPACE:   return "answer too large";
	case KNOT_ENOENT:   return "no nameservers";
	default:            return knot_strerror(ret);
	}
}

/*!
 * \brief A job's flight ended (the layer's flight_done()): NOERROR and
 * NXDOMAIN are kept (\a e, the entry the forwarder publishes, or one of the keeper's
 * own when the cache's rules would not keep the answer); another RCODE (the forwarder
 * asked its next server already) is published as a failure until the retry.
 */
static void flight_done(void *state, void *arg, const knot_pkt_t *answer,
                        k8s_fwd_entry_t *e, int err, uint64_t now)
{
	keeper_t *k = state;
	job_t *job = arg;
	job->in_flight = false;
	k8s_share_put(&k->flights, &job->flight);
	job_harvest(k, job);  // Lookups of the entry it replaces count for the next round.
	if (answer == NULL) {
		// A refused connection (ICMP port unreachable) is the server's "no", as REFUSED
		// is; a target that never answered (its upstreams silent for the whole deadline)
		// gets SERVFAIL: both published until the retry, so that the lookups of a dead
		// target answer at once, not each at its deadline.
		uint16_t rcode = (err == KNOT_ECONNREFUSED) ? KNOT_RCODE_REFUSED :
		                 (err == KNOT_ETIMEOUT) ? KNOT_RCODE_SERVFAIL : 0;
		job_fail(k, job, now, reason_text(err), rcode, err == KNOT_ETIMEOUT);
		return;
	}
	uint16_t rcode = knot_pkt_ext_rcode(answer);
	if (rcode != KNOT_RCODE_NOERROR && rcode != KNOT_RCODE_NXDOMAIN) {
		// A definite answer ends this round: asking again at once would not change it.
		job_fail(k, job, now, knot_pkt_ext_rcode_name(answer), rcode, false);
		return;
	}
	if (e != NULL && (e->rcode == KNOT_RCODE_NXDOMAIN || e->count[0] == 0) &&
	    e->expires_ms > now + NEG_MAX_MS) {
		// Not yet published: a target that appears is seen within 5 minutes.
		e->expires_ms = now + NEG_MAX_MS;
	}
	if (e == NULL) {
		// No whole SOA for a negative answer, a TTL of 0: kept for the answer path alone.
		target_t *t = job->target;
		e = k8s_fwd_entry_new_source(answer, t->name, job->qtype, t->source,
		                             k8s_fwd_conf(k->fwd)->cache_max_ttl, now, true);
		if (e == NULL || e->bytes > K8S_FWD_ENTRY_MAX) {
			k8s_fwd_entry_free(e);
			job_fail(k, job, now, reason_text(KNOT_ESPACE), 0, false);
			return;
		}
		bool negative = (e->rcode == KNOT_RCODE_NXDOMAIN || e->count[0] == 0);
		e->expires_ms = now + (negative ? NEG_DEFAULT_MS : REFRESH_MIN_MS);
		e->kept = true;
		e->kept_only = true;
		k8s_fwd_cache_put(k->cache, e, now);
	}
	// A refresh of a name in use is spared by the cache from the start (only this
	// thread reads the mark, so it may be set after publication).
	e->in_use = job->target->referenced;
	job_done(k, job, e, now);
}

/*! \brief A due job's flight from the pool, for its tenant (turns_run()'s admit). */
static bool job_admit(void *ctx, job_t *job)
{
	keeper_t *k = ctx;
	if (k8s_share_try(&k->flights, job->target->tenant, 1, &job->flight)) {
		job->waited = false;
		return true;
	}
	if (!job->waited) {
		job->waited = true;  // A refusal per job that waits, not per turn it is tried.
		k8s_share_refused(&k->flights);
	}
	return false;
}

/*! \brief Starts an admitted job's flight (turns_run()'s start). */
static void job_start(void *ctx, job_t *job)
{
	keeper_t *k = ctx;
	uint64_t now = k->now_ms;
	target_t *t = job->target;
	job->looked = false;
	job->in_flight = true;
	if (!k8s_fwd_flight_keep(k->fwd, t->name, job->qtype, t->source, t->tenant, job, now)) {
		job->in_flight = false;
		k8s_share_put(&k->flights, &job->flight);
		job_fail(k, job, now, reason_text(!k8s_fwd_routes(k->fwd, t->name) ?
		         KNOT_ENOENT : KNOT_EBUSY), 0, false);
	}
}

/*! \brief Stops a job's flight: its end is no longer ours. */
static void job_land(keeper_t *k, job_t *job)
{
	if (job->in_flight) {
		k8s_fwd_flight_unkeep(k->fwd, job);
		job->in_flight = false;
		k8s_share_put(&k->flights, &job->flight);
	}
}

/* Asked names. */

static target_t *target_new(const knot_dname_t *lower, const uint8_t *source,
                            k8s_tenant_t tenant)
{
	target_t *t = calloc(1, sizeof(*t) + knot_dname_size(lower));
	if (t == NULL) {
		return NULL;
	}
	memcpy(t->name, lower, knot_dname_size(lower));
	if (source != NULL && source[0] != 0) {
		memcpy(t->source, source, 1 + source[0]);
	}
	t->tenant = tenant;
	for (int i = 0; i < 2; i++) {
		t->jobs[i].target = t;
		t->jobs[i].turn = TURN_FRESH;
		t->jobs[i].qtype = (i == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA;
		t->jobs[i].timer.pos = K8S_TIMER_IDLE;
	}
	return t;
}

static void target_start(keeper_t *k, target_t *t, uint64_t now)
{
	t->active = true;
	k->active++;
	for (int i = 0; i < 2; i++) {
		k8s_timer_heap_push(&k->heap, &t->jobs[i].timer, now);
	}
}

/*! \brief Stops a target's jobs, flights and entries. */
static void target_stop(keeper_t *k, target_t *t)
{
	if (!t->active) {
		return;
	}
	for (int i = 0; i < 2; i++) {
		job_t *job = &t->jobs[i];
		if (job->timer.pos != K8S_TIMER_IDLE) {
			k8s_timer_heap_remove(&k->heap, &job->timer);
		}
		turns_remove(&k->turns, job);
		job_land(k, job);
		cache_drop(k, job);
	}
	t->active = false;
	k->active--;
}

/*! \brief Schedules the resting jobs of an active target now: it is asked again. */
static void target_resume(keeper_t *k, target_t *t, uint64_t now)
{
	if (!t->active) {
		return;  // Started with the drain's new targets.
	}
	for (int i = 0; i < 2; i++) {
		job_t *job = &t->jobs[i];
		if (job->timer.pos == K8S_TIMER_IDLE && !job->in_flight && job->queue == NULL) {
			job->turn = TURN_REFRESH;
			k8s_timer_heap_push(&k->heap, &job->timer, now);
		}
	}
}

/* Asked names: probation (asked once, oldest first), then the kept clock. */

static asked_list_t *asked_list(keeper_t *k, const target_t *t)
{
	return t->kept ? &k->kept : &k->probation;
}

static void asked_list_push(asked_list_t *l, target_t *t)
{
	cds_list_add_tail(&t->asked_node, &l->targets);
	l->count++;
}

static void asked_list_remove(asked_list_t *l, target_t *t)
{
	cds_list_del(&t->asked_node);
	l->count--;
}

/*! \brief The first target of a list, the next to go; NULL when it is empty. */
static target_t *asked_list_first(asked_list_t *l)
{
	return cds_list_empty(&l->targets) ? NULL :
	       cds_list_first_entry(&l->targets, target_t, asked_node);
}

/*! \brief Stops keeping a name: it leaves the map and goes on \a forget (freed by the caller). */
static void asked_drop(keeper_t *k, target_t *t, target_t **forget)
{
	asked_list_remove(asked_list(k, t), t);
	t->kept = false;
	t->referenced = false;
	k->asked--;
	key_text_t key;
	k8s_map_del(&k->names, key_text(t->name, t->source, key));
	t->next = *forget;
	*forget = t;
}

/*!
 * \brief Makes room for a newly asked name.
 *
 * The oldest name asked once and not looked up since its answer goes first;
 * one looked up or asked again moves to the kept names instead. Only without
 * such names does a kept one go: the first the clock's hand finds not looked
 * up since the hand last passed it. So a name queries keep using is displaced
 * only by as many names, each looked up twice, within one turn of the hand.
 *
 * \return False if nothing can go (only names asked in this very drain).
 */
static bool asked_evict(keeper_t *k, target_t **forget)
{
	target_t *t;
	// A target not active yet is this drain's, on its start list: never one to forget.
	while ((t = asked_list_first(&k->probation)) != NULL && t->active) {
		job_harvest(k, &t->jobs[0]);
		job_harvest(k, &t->jobs[1]);
		if (!t->referenced) {
			asked_drop(k, t, forget);
			return true;
		}
		asked_list_remove(&k->probation, t);
		t->kept = true;
		t->referenced = false;
		asked_list_push(&k->kept, t);
	}
	// One turn clears every mark: the turn after it finds one to go.
	for (size_t pass = 0; (t = asked_list_first(&k->kept)) != NULL && pass <= k->kept.count;
	     pass++) {
		job_harvest(k, &t->jobs[0]);
		job_harvest(k, &t->jobs[1]);
		if (!t->referenced) {
			asked_drop(k, t, forget);
			return true;
		}
		t->referenced = false;
		asked_list_remove(&k->kept, t);
		asked_list_push(&k->kept, t);
	}
	return false;
}

/*!
 * \brief Keeps a name a query asked for; a new target goes on \a start, an evicted one
 * on \a forget, one kept already and asked again is resumed.
 *
 * \return False if MAX_ASKED names are kept already and none can go.
 */
static bool asked_keep(keeper_t *k, const knot_dname_t *name, const uint8_t *source,
                       k8s_tenant_t tenant, target_t **start, target_t **forget, bool *evicted,
                       uint64_t now)
{
	key_text_t key;
	key_text(name, source, key);
	target_t *t = k8s_map_get(&k->names, key);
	if (t != NULL) {
		// Asked again: a query found no answer (none yet, or dropped) and wants one.
		for (int i = 0; i < 2; i++) {
			t->jobs[i].looked = true;
		}
		if (entry_of(k, &t->jobs[0]) != NULL || entry_of(k, &t->jobs[1]) != NULL) {
			t->referenced = true;  // Asked after an answer: more than one query's name.
		}
		target_resume(k, t, now);
		return true;
	}
	if (k->asked >= atomic_load_explicit(&k->max_asked, memory_order_relaxed)) {
		if (!asked_evict(k, forget)) {
			return false;
		}
		*evicted = true;
	}
	t = target_new(name, source, tenant);
	if (t == NULL || k8s_map_set(&k->names, key, t) != KNOT_EOK) {
		free(t);
		return true;  // No memory: a later query asks again.
	}
	t->next = *start;
	*start = t;
	for (int i = 0; i < 2; i++) {
		t->jobs[i].looked = true;  // The ask is the query's: one resolution for it.
	}
	asked_list_push(&k->probation, t);
	k->asked++;
	return true;
}

/*! \brief Takes the names queries asked for: starts new ones, forgets evicted ones. */
static void drain(keeper_t *k, uint64_t now)
{
	target_t *forget = NULL, *start = NULL;
	if (k8s_timer_heap_reserve(&k->heap, 2 * (k->active + ASK_ROOM)) != KNOT_EOK) {
		return;  // Room for every job that may be scheduled, so that scheduling never fails.
	}
	bool full = false, evicted = false;
	for (size_t i = 0; i < ASK_ROOM; i++) {
		ask_t *a = &k->asks[i];
		if (atomic_load_explicit(&a->state, memory_order_acquire) != ASK_READY) {
			continue;
		}
		knot_dname_storage_t name;
		uint8_t source[64];
		memcpy(source, a->source, 1 + a->source[0]);
		memcpy(name, a->name, knot_dname_size(a->name));
		k8s_tenant_t tenant = a->tenant;
		k8s_share_put(&k->ask_share, &a->unit);
		atomic_store_explicit(&a->state, ASK_FREE, memory_order_release);
		full |= !asked_keep(k, name, source, tenant, &start, &forget, &evicted, now);
	}

	if ((full || evicted) &&
	    (k->full_logged_ms == 0 || now - k->full_logged_ms >= LOG_PERIOD_MS)) {
		k->full_logged_ms = now;
		k8s_logf(k->log, LOG_WARNING, "upstream, %s names asked by queries "
		         "(%zu names kept already)", full ? "not resolving more" : "forgetting",
		         k->asked);
	}

	// Forget first: its jobs leave the heap before new ones come.
	for (target_t *t = forget, *next; t != NULL; t = next) {
		next = t->next;
		target_stop(k, t);
		free(t);
	}
	for (target_t *t = start; t != NULL; t = t->next) {
		target_start(k, t, now);
	}
}

/*!
 * \brief Rests a job of an asked name that no query looked up since its last
 * resolution began: it is not resolved again. Its answer is served until it
 * expires, then dropped; with both answers gone the name is forgotten.
 */
static void job_rest(keeper_t *k, job_t *job, uint64_t now)
{
	const k8s_fwd_entry_t *e = kept_of(k, job);
	uint64_t expires_ms = (e != NULL) ? e->expires_ms : 0;
	if (expires_ms > now) {
		// Looked up by then, it is resolved then.
		k8s_timer_heap_push(&k->heap, &job->timer, expires_ms);
		return;
	}
	cache_drop(k, job);
	target_t *t = job->target;
	for (int i = 0; i < 2; i++) {
		if (t->jobs[i].timer.pos != K8S_TIMER_IDLE || t->jobs[i].in_flight ||
		    kept_of(k, &t->jobs[i]) != NULL) {
			return;
		}
	}
	target_t *forget = NULL;
	asked_drop(k, t, &forget);
	target_stop(k, t);
	free(t);
}

/*!
 * \brief Queues the due jobs at their tenants' (a job no query looked up since its last
 * resolution rests instead), then starts them in turns while there are flights.
 */
static void start_due(keeper_t *k, uint64_t now)
{
	while (k->heap.count > 0 && k8s_timer_heap_first(&k->heap)->due_ms <= now) {
		job_t *job = job_of(k8s_timer_heap_first(&k->heap));
		k8s_timer_heap_remove(&k->heap, &job->timer);
		// A name is resolved again only for a query that looked it up since.
		job_harvest(k, job);
		if (!job->looked) {
			job_rest(k, job, now);
		} else if (!turns_push(&k->turns, job)) {
			// No memory for its tenant's queue: due again in a second.
			k8s_timer_heap_push(&k->heap, &job->timer, now + REFRESH_MIN_MS);
		}
	}
	k->now_ms = now;
	turns_run(&k->turns, job_admit, job_start, k);
}

/* The layer (resolver/forward.h): the forwarder's thread runs it. */

static void *keeper_attach(k8s_fwd_t *f)
{
	keeper_t *k = calloc(1, sizeof(*k));
	if (k == NULL) {
		return NULL;
	}
	k->fwd = f;
	k->cache = k8s_fwd_cache_of(f);
	k->log = k8s_fwd_log(f);
	atomic_init(&k->max_asked, MAX_ASKED);
	const char *owner = k8s_fwd_owner(f);
	k8s_share_init(&k->ask_share, ASK_SLOTS, "kept_asks", owner);
	k8s_share_init(&k->flights, MAX_FLIGHTS, "kept_flights", owner);
	turns_init(&k->turns);
	CDS_INIT_LIST_HEAD(&k->probation.targets);
	CDS_INIT_LIST_HEAD(&k->kept.targets);
	k->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (k->wake_fd < 0) {
		free(k);
		return NULL;
	}
	k8s_share_register(&k->ask_share);
	k8s_share_register(&k->flights);
	return k;
}

static void keeper_detach(void *state)
{
	keeper_t *k = state;
	k8s_share_unregister(&k->ask_share);
	k8s_share_unregister(&k->flights);
	turns_deinit(&k->turns);
	size_t pos = 0;
	const k8s_map_slot_t *slot;
	while ((slot = k8s_map_next(&k->names, &pos)) != NULL) {
		free(slot->value);
	}
	k8s_map_clear(&k->names);
	k8s_timer_heap_deinit(&k->heap);
	close(k->wake_fd);
	free(k);
}

static int keeper_wake_fd(const void *state)
{
	const keeper_t *k = state;
	return k->wake_fd;
}

static void keeper_run(void *state, uint64_t now)
{
	keeper_t *k = state;
	uint64_t value;
	(void)!read(k->wake_fd, &value, sizeof(value));
	drain(k, now);
	start_due(k, now);
	k8s_share_log(&k->ask_share, k->log, now);
	k8s_share_log(&k->flights, k->log, now);
}

static uint64_t keeper_due_ms(const void *state, uint64_t until)
{
	// Due jobs are queued at each turn: what waits for a flight runs when one ends.
	const keeper_t *k = state;
	if (k->heap.count > 0 && k8s_timer_heap_first(&k->heap)->due_ms < until) {
		until = k8s_timer_heap_first(&k->heap)->due_ms;
	}
	return until;
}

const k8s_fwd_layer_t k8s_keeper_layer = {
	.attach = keeper_attach,
	.detach = keeper_detach,
	.wake_fd = keeper_wake_fd,
	.run = keeper_run,
	.due_ms = keeper_due_ms,
	.flight_done = flight_done,
};

/* The handles' side (keeper_priv.h). */

void keeper_set_max_asked(keeper_t *k, size_t max)
{
	atomic_store_explicit(&k->max_asked, max, memory_order_relaxed);
}

/* The workers' side. */

/*! Set in a thread that only looks names up: see k8s_keeper_asks_off(). */
static __thread bool asks_off __attribute__((tls_model("initial-exec")));

void k8s_keeper_asks_off(void)
{
	asks_off = true;
}

k8s_upstream_status_t keeper_lookup(keeper_t *k, const knot_dname_t *name, uint16_t qtype,
                                    const uint8_t *source, const k8s_fwd_entry_t **ans)
{
	k8s_fwd_entry_t *e = k8s_fwd_cache_find(k->cache, name, qtype, source);
	if (e == NULL) {
		return K8S_UPSTREAM_PENDING;
	}
	// Past its expiry, a kept answer (a failure too, until its retry's) is served while
	// its refresh is under way and for 5 minutes while the upstream fails; the keeper
	// drops it when no query looks it up.
	uint64_t now = k8s_now_ms();
	uint64_t until = e->expires_ms + (e->kept ? STALE_MAX_MS : 0);
	if (now >= until) {
		return K8S_UPSTREAM_PENDING;
	}
	// Written once per refresh at most, so readers do not contend on it. A retry's
	// lookup delivers the query that asked: it is no new use.
	if (!asks_off && !atomic_load_explicit(&e->used, memory_order_relaxed)) {
		atomic_store_explicit(&e->used, true, memory_order_relaxed);
	}
	*ans = e;
	return K8S_UPSTREAM_READY;
}

bool keeper_ask(keeper_t *k, const knot_dname_t *name, const uint8_t *source,
                k8s_tenant_t tenant)
{
	if (asks_off) {
		return true;
	}
	// The tenant's part of the asks first: a flood past it is refused here.
	k8s_share_ref_t unit;
	if (!k8s_share_take(&k->ask_share, tenant, 1, &unit)) {
		return false;
	}
	size_t size = knot_dname_size(name);
	// Every slot once at most, from one a name's hash fixes (never waiting).
	size_t start = k8s_hash(name, size);
	for (size_t i = 0; i < ASK_ROOM; i++) {
		ask_t *a = &k->asks[(start + i) % ASK_ROOM];
		unsigned expected = ASK_FREE;
		if (atomic_load_explicit(&a->state, memory_order_relaxed) == ASK_FREE &&
		    atomic_compare_exchange_strong_explicit(&a->state, &expected, ASK_WRITING,
		                                            memory_order_acquire,
		                                            memory_order_relaxed)) {
			memcpy(a->name, name, size);
			a->source[0] = 0;
			if (source != NULL && source[0] != 0) {
				memcpy(a->source, source, 1 + source[0]);
			}
			a->tenant = tenant;
			a->unit = unit;
			atomic_store_explicit(&a->state, ASK_READY, memory_order_release);
			uint64_t one = 1;
			(void)!write(k->wake_fd, &one, sizeof(one));
			return true;
		}
	}
	k8s_share_put(&k->ask_share, &unit);
	return false;
}
