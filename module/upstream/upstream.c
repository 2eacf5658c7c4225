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

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libknot/errcode.h>
#include <libknot/rrtype/rdname.h>
#include <libknot/rrtype/soa.h>
#include <urcu/urcu-memb.h>

#include "lib/clock.h"
#include "upstream/dnsquery.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "lib/rcuhash.h"
#include "lib/retire.h"
#include "lib/sockaddr.h"
#include "lib/timerheap.h"
#include "upstream/upstream.h"
#include "upstream/upstream_entry.h"
#include "upstream/upstream_priv.h"

static uint32_t entry_hash(const void *elem)
{
	return ((const k8s_upstream_entry_t *)elem)->hash;
}

static void wake(k8s_upstream_t *u)
{
	uint64_t one = 1;
	// A full counter still wakes the thread, so a failed write loses nothing.
	(void)!write(u->wake_fd, &one, sizeof(one));
}

/*! \brief The job whose timer this is. */
static job_t *job_of(k8s_timer_t *timer)
{
	return (job_t *)((char *)timer - offsetof(job_t, timer));
}

/* Cache: published to readers. */

static int cache_publish(k8s_upstream_t *u, job_t *job, k8s_upstream_entry_t *e)
{
	if (job->entry != NULL) {
		k8s_rcuhash_replace(&u->cache, e->hash, job->entry, e);
		k8s_retire(&u->retire, job->entry);
	} else {
		int ret = k8s_rcuhash_insert(&u->cache, e->hash, e, &u->retire);
		if (ret != KNOT_EOK) {
			free(e);
			return ret;
		}
	}
	job->entry = e;
	return KNOT_EOK;
}

void upstream_cache_drop(k8s_upstream_t *u, job_t *job)
{
	if (job->entry == NULL) {
		return;
	}
	k8s_rcuhash_remove(&u->cache, job->entry->hash, job->entry);
	k8s_retire(&u->retire, job->entry);
	job->entry = NULL;
}

/* Queries. */

static void query_release(k8s_upstream_t *u, query_t *q)
{
	k8s_dnsquery_close(&q->dq);
	q->job->query = NULL;
	q->job = NULL;
	u->query_count--;
}

static void job_done(k8s_upstream_t *u, job_t *job, k8s_upstream_entry_t *e, uint64_t now)
{
	query_release(u, job->query);
	upstream_job_harvest(job);  // Lookups of the entry it replaces count for the next round.
	int ret = cache_publish(u, job, e);
	if (ret != KNOT_EOK) {
		// Not even a slot for it: treat like a failed resolution, retried soon.
		k8s_timer_heap_push(&u->heap, &job->timer, now + REFRESH_MIN_MS);
		return;
	}
	job->backoff_s = 0;
	// Refresh at 80 % of the TTL, so that readers find a warm entry.
	uint64_t now_s = now / 1000;
	uint64_t ttl_ms = (e->ans->expires > now_s) ? (e->ans->expires - now_s) * 1000 : 0;
	uint64_t refresh = ttl_ms * 4 / 5;
	k8s_timer_heap_push(&u->heap, &job->timer, now + ((refresh < REFRESH_MIN_MS) ? REFRESH_MIN_MS : refresh));
}

/*! \brief True if a published answer is an upstream's refusal or failure. */
static bool entry_failed(const k8s_upstream_entry_t *e)
{
	return e->ans->rcode != KNOT_RCODE_NOERROR && e->ans->rcode != KNOT_RCODE_NXDOMAIN;
}

/*!
 * \brief Publishes an upstream's definitive failure (\a rcode: REFUSED, SERVFAIL...)
 * until the retry, so that waiting queries get their answer now, not at their deadline.
 * A good answer, even stale, is served instead while it may be.
 */
static void failure_publish(k8s_upstream_t *u, job_t *job, uint16_t rcode, uint64_t now)
{
	if (job->entry != NULL && !entry_failed(job->entry)) {
		return;
	}
	target_t *t = job->target;
	k8s_upstream_entry_t *e = NULL;
	uint32_t expires = (uint32_t)(now / 1000) + job->backoff_s;
	if (k8s_upstream_entry_failure(t->name, job->qtype, t->source, rcode, expires,
	                               upstream_key_hash(t->name, job->qtype, t->source),
	                               &e) == KNOT_EOK) {
		upstream_job_harvest(job);  // Lookups of the entry it replaces count for the retry.
		(void)cache_publish(u, job, e);
	}
}

/*!
 * \brief Gives up on a resolution for now: retried with backoff. \a rcode, if not 0,
 * is the upstream's definitive failure, published until the retry.
 */
static void job_fail(k8s_upstream_t *u, job_t *job, uint64_t now, const char *reason,
                     uint16_t rcode)
{
	query_release(u, job->query);
	job->backoff_s = (job->backoff_s == 0) ? 1 : 2 * job->backoff_s;
	if (job->backoff_s > BACKOFF_MAX_S) {
		job->backoff_s = BACKOFF_MAX_S;
	}
	// Stale data beats SERVFAIL, but not forever.
	if (job->entry != NULL && now / 1000 > (uint64_t)job->entry->ans->expires + STALE_MAX_S) {
		upstream_cache_drop(u, job);
	}
	if (rcode != 0) {
		failure_publish(u, job, rcode, now);
	}
	k8s_timer_heap_push(&u->heap, &job->timer, now + job->backoff_s * 1000);

	target_t *t = job->target;
	if (!t->logged || now - t->logged_ms >= LOG_PERIOD_MS) {
		t->logged = true;
		t->logged_ms = now;
		knot_dname_txt_storage_t buf;
		k8s_logf(&u->log, LOG_WARNING,
		         "upstream resolution of %s failed, retrying in %u s (%s)",
		         upstream_name_text(t->name, buf), job->backoff_s, reason);
	}
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

/*! \brief Starts the next attempt, or gives up for now after the last one. */
static void attempt_next(k8s_upstream_t *u, query_t *q, uint64_t now, int ret)
{
	k8s_dnsquery_close(&q->dq);
	target_t *t = q->job->target;
	while (q->attempt < ATTEMPTS) {
		q->attempt++;
		const struct sockaddr_storage *server = &u->server;
		if (u->servers != NULL) {
			// Each attempt may go to another of the name's servers.
			if (!u->servers(u->servers_ctx, t->name, q->attempt - 1, &q->server)) {
				ret = KNOT_ENOENT;
				break;
			}
			if (q->attempt == 1) {
				q->first = q->server;
			}
			server = &q->server;
		}
		size_t opt_len = (u->opt_code != 0) ? t->source[0] : 0;
		ret = k8s_dnsquery_start_opt(&q->dq, server, t->name, q->job->qtype, u->opt_code,
		                             t->source + 1, opt_len, u->timeout_ms, now);
		if (ret == KNOT_EOK) {
			return;
		}
	}
	// A refused connection (ICMP port unreachable) is the server's "no", as REFUSED is:
	// published until the retry, not left to every query's deadline.
	job_fail(u, q->job, now, reason_text(ret),
	         (ret == KNOT_ECONNREFUSED) ? KNOT_RCODE_REFUSED : 0);
}

static void job_start(k8s_upstream_t *u, job_t *job, uint64_t now)
{
	query_t *q = u->queries;
	while (q->job != NULL) {
		q++;
	}
	q->job = job;
	q->attempt = 0;
	job->query = q;
	job->looked = false;
	u->query_count++;
	attempt_next(u, q, now, KNOT_EOK);
}

/*!
 * \brief True if a forwarder's next attempt would ask a server not asked yet: neither
 * this attempt's nor, past the last one, the first again.
 */
static bool another_server(k8s_upstream_t *u, const query_t *q)
{
	struct sockaddr_storage next;
	return u->servers != NULL && q->attempt < ATTEMPTS &&
	       u->servers(u->servers_ctx, q->job->target->name, q->attempt, &next) &&
	       !k8s_sockaddr_equal(&next, &q->server) && !k8s_sockaddr_equal(&next, &q->first);
}

/*!
 * \brief Takes the upstream's answer: NOERROR and NXDOMAIN are cached; any other RCODE
 * is asked of the next server if there is another (as CoreDNS's forward does), else
 * it is published as a failure until the retry.
 */
static void answer_take(k8s_upstream_t *u, query_t *q, const knot_pkt_t *pkt, uint64_t now)
{
	job_t *job = q->job;
	uint16_t rcode = knot_pkt_ext_rcode(pkt);
	if (rcode != KNOT_RCODE_NOERROR && rcode != KNOT_RCODE_NXDOMAIN) {
		if (another_server(u, q)) {
			attempt_next(u, q, now, KNOT_EOK);
			return;
		}
		// A definite answer ends this round: asking again at once would not change it.
		job_fail(u, job, now, knot_pkt_ext_rcode_name(pkt), rcode);
		return;
	}
	k8s_upstream_entry_t *e = NULL;
	target_t *t = job->target;
	int ret = k8s_upstream_entry_build(pkt, t->name, job->qtype, t->source, rcode, now,
	                                   upstream_key_hash(t->name, job->qtype, t->source), &e);
	if (ret == KNOT_EOK) {
		job_done(u, job, e, now);
	} else {
		job_fail(u, job, now, reason_text(ret), 0);
	}
}

static void query_io(k8s_upstream_t *u, query_t *q, uint64_t now)
{
	knot_pkt_t *pkt = NULL;
	int ret = k8s_dnsquery_io(&q->dq, now, &pkt);
	if (ret == KNOT_EOK) {
		answer_take(u, q, pkt, now);
		knot_pkt_free(pkt);
	} else if (ret != KNOT_EAGAIN) {
		attempt_next(u, q, now, ret);
	}
}

/* Asked names. */

static void target_start(k8s_upstream_t *u, target_t *t, uint64_t now)
{
	t->active = true;
	u->active++;
	for (int i = 0; i < 2; i++) {
		k8s_timer_heap_push(&u->heap, &t->jobs[i].timer, now);
	}
}

void upstream_target_stop(k8s_upstream_t *u, target_t *t)
{
	if (!t->active) {
		return;
	}
	for (int i = 0; i < 2; i++) {
		job_t *job = &t->jobs[i];
		if (job->timer.pos != K8S_TIMER_IDLE) {
			k8s_timer_heap_remove(&u->heap, &job->timer);
		}
		if (job->query != NULL) {
			query_release(u, job->query);
		}
		upstream_cache_drop(u, job);
	}
	t->active = false;
	u->active--;
}

/*! \brief Schedules the resting jobs of an active target now: it is asked again. */
void upstream_target_resume(k8s_upstream_t *u, target_t *t, uint64_t now)
{
	if (!t->active) {
		return;  // Started with the drain's new targets.
	}
	for (int i = 0; i < 2; i++) {
		job_t *job = &t->jobs[i];
		if (job->timer.pos == K8S_TIMER_IDLE && job->query == NULL) {
			k8s_timer_heap_push(&u->heap, &job->timer, now);
		}
	}
}

/*! \brief Takes the names queries asked for: starts new ones, forgets evicted ones. */
static void drain(k8s_upstream_t *u, uint64_t now)
{
	target_t *forget = NULL, *start = NULL;
	knot_dname_storage_t asked[ASK_SLOTS];
	uint8_t sources[ASK_SLOTS][64];
	if (k8s_timer_heap_reserve(&u->heap, 2 * (u->active + ASK_SLOTS)) != KNOT_EOK) {
		return;  // Room for every job that may be scheduled, so that scheduling never fails.
	}
	size_t asked_count = upstream_asks_take(u, asked, sources);
	bool full = false, evicted = false;
	for (size_t i = 0; i < asked_count; i++) {
		target_t *again = NULL;
		full |= !upstream_asked_keep(u, asked[i], sources[i], &again, &start, &forget, &evicted);
		if (again != NULL) {
			upstream_target_resume(u, again, now);
		}
	}

	if ((full || evicted) &&
	    (u->full_logged_ms == 0 || now - u->full_logged_ms >= LOG_PERIOD_MS)) {
		u->full_logged_ms = now;
		k8s_logf(&u->log, LOG_WARNING, "upstream, %s names asked by queries "
		         "(%zu names kept already)", full ? "not resolving more" : "forgetting",
		         u->asked);
	}

	// Forget first: its jobs leave the heap before new ones come.
	for (target_t *t = forget, *next; t != NULL; t = next) {
		next = t->next;
		upstream_target_stop(u, t);
		free(t);
	}
	for (target_t *t = start; t != NULL; t = t->next) {
		target_start(u, t, now);
	}
}

/*! \brief Forgets an asked name whose jobs both rest without an answer. */
static void asked_forget(k8s_upstream_t *u, target_t *t)
{
	target_t *forget = NULL;
	upstream_asked_drop(u, t, &forget);
	upstream_target_stop(u, t);
	free(t);
}

/*!
 * \brief Rests a job of an asked name that no query looked up since its last
 * resolution began: it is not resolved again. Its answer is served until it
 * expires, then dropped; with both answers gone the name is forgotten.
 */
static void job_rest(k8s_upstream_t *u, job_t *job, uint64_t now)
{
	uint64_t expires_ms = (job->entry != NULL) ? (uint64_t)job->entry->ans->expires * 1000 : 0;
	if (expires_ms > now) {
		k8s_timer_heap_push(&u->heap, &job->timer, expires_ms);  // Looked up by then, it is resolved then.
		return;
	}
	upstream_cache_drop(u, job);
	target_t *t = job->target;
	for (int i = 0; i < 2; i++) {
		if (t->jobs[i].timer.pos != K8S_TIMER_IDLE || t->jobs[i].query != NULL ||
		    t->jobs[i].entry != NULL) {
			return;
		}
	}
	asked_forget(u, t);
}

/*! \brief Starts due jobs while there is room for more queries. */
static void start_due(k8s_upstream_t *u, uint64_t now)
{
	while (u->query_count < MAX_QUERIES && u->heap.count > 0 &&
	       k8s_timer_heap_first(&u->heap)->due_ms <= now) {
		job_t *job = job_of(k8s_timer_heap_first(&u->heap));
		k8s_timer_heap_remove(&u->heap, &job->timer);
		// A name is resolved again only for a query that looked it up since.
		upstream_job_harvest(job);
		if (!job->looked) {
			job_rest(u, job, now);
			continue;
		}
		job_start(u, job, now);
	}
}

/*!
 * \brief Makes every scheduled job due now: a forwarder's servers changed, so each
 * kept answer is asked again from the new ones (the old one is served meanwhile).
 */
static void refresh_all(k8s_upstream_t *u, uint64_t now)
{
	for (size_t i = 0; i < u->heap.count; i++) {
		job_t *job = job_of(u->heap.items[i]);
		job->timer.due_ms = now;  // All equal: the heap's order holds.
		job->backoff_s = 0;
		// Asked names too, looked up or not: none keeps the old servers' answer.
		job->looked = true;
	}
}

static int wait_ms(const k8s_upstream_t *u, uint64_t now)
{
	uint64_t until = now + MAX_WAIT_MS;
	if (u->query_count < MAX_QUERIES && u->heap.count > 0 &&
	    k8s_timer_heap_first(&u->heap)->due_ms < until) {
		until = k8s_timer_heap_first(&u->heap)->due_ms;
	}
	for (size_t i = 0; i < MAX_QUERIES; i++) {
		const query_t *q = &u->queries[i];
		if (q->job != NULL && q->dq.deadline_ms < until) {
			until = q->dq.deadline_ms;
		}
	}
	return (until > now) ? (int)(until - now) : 0;
}

static void *resolver_run(void *arg)
{
	k8s_upstream_t *u = arg;
	urcu_memb_register_thread();

	struct pollfd fds[1 + MAX_QUERIES];
	query_t *polled[1 + MAX_QUERIES];
	while (!atomic_load(&u->stop)) {
		uint64_t now = k8s_now_ms();
		drain(u, now);
		if (atomic_exchange(&u->refresh, false)) {
			refresh_all(u, now);
		}
		start_due(u, now);
		k8s_retire_commit(&u->retire);

		nfds_t count = 1;
		fds[0] = (struct pollfd){ .fd = u->wake_fd, .events = POLLIN };
		for (size_t i = 0; i < MAX_QUERIES; i++) {
			query_t *q = &u->queries[i];
			if (q->job != NULL) {
				fds[count].fd = q->dq.fd;
				fds[count].events = k8s_dnsquery_events(&q->dq);
				fds[count].revents = 0;
				polled[count++] = q;
			}
		}

		if (poll(fds, count, wait_ms(u, now)) < 0 && errno != EINTR) {
			k8s_logf(&u->log, LOG_ERR, "upstream resolver, poll failed (%s)",
			         knot_strerror(knot_map_errno()));
			break;
		}
		if (fds[0].revents != 0) {
			uint64_t value;
			(void)!read(u->wake_fd, &value, sizeof(value));
		}

		now = k8s_now_ms();
		for (nfds_t i = 1; i < count; i++) {
			query_t *q = polled[i];
			if (fds[i].revents != 0) {
				query_io(u, q, now);
			}
			// A new attempt or the switch to TCP has moved the deadline.
			if (q->job != NULL && now >= q->dq.deadline_ms) {
				attempt_next(u, q, now, KNOT_ETIMEOUT);
			}
		}
		k8s_retire_commit(&u->retire);
	}

	urcu_memb_unregister_thread();
	return NULL;
}

/* API. */

static k8s_upstream_t *upstream_new(const struct sockaddr_storage *server,
                                    k8s_upstream_servers_t servers, void *servers_ctx,
                                    uint16_t opt_code, unsigned timeout_ms, const k8s_log_t *log)
{
	k8s_upstream_t *u = calloc(1, sizeof(*u));
	if (u == NULL) {
		return NULL;
	}
	if (server != NULL) {
		u->server = *server;
	}
	u->servers = servers;
	u->servers_ctx = servers_ctx;
	u->opt_code = opt_code;
	atomic_init(&u->refresh, false);
	atomic_init(&u->max_asked, MAX_ASKED);
	CDS_INIT_LIST_HEAD(&u->probation.targets);
	CDS_INIT_LIST_HEAD(&u->kept.targets);
	u->timeout_ms = (timeout_ms > 0) ? timeout_ms : 1;
	if (log != NULL) {
		u->log = *log;
	}
	for (size_t i = 0; i < MAX_QUERIES; i++) {
		u->queries[i].dq.fd = -1;
	}
	atomic_init(&u->stop, false);

	u->asks = calloc(ASK_SLOTS, sizeof(*u->asks));
	u->wake_fd = (u->asks != NULL) ? eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
	if (u->wake_fd < 0) {
		free(u->asks);
		free(u);
		return NULL;
	}
	if (k8s_rcuhash_init(&u->cache, entry_hash) != KNOT_EOK) {
		close(u->wake_fd);
		free(u->asks);
		free(u);
		return NULL;
	}
	if (pthread_create(&u->thread, NULL, resolver_run, u) != 0) {
		k8s_rcuhash_deinit(&u->cache);
		close(u->wake_fd);
		free(u->asks);
		free(u);
		return NULL;
	}
	return u;
}

k8s_upstream_t *k8s_upstream_new(const struct sockaddr_storage *server, unsigned timeout_ms,
                                 const k8s_log_t *log)
{
	return upstream_new(server, NULL, NULL, 0, timeout_ms, log);
}

k8s_upstream_t *k8s_upstream_new_forwarder(k8s_upstream_servers_t servers, void *ctx,
                                           uint16_t opt_code, unsigned timeout_ms,
                                           const k8s_log_t *log)
{
	return upstream_new(NULL, servers, ctx, opt_code, timeout_ms, log);
}

void k8s_upstream_set_max_asked(k8s_upstream_t *u, size_t max)
{
	atomic_store_explicit(&u->max_asked, max, memory_order_relaxed);
}

void k8s_upstream_refresh(k8s_upstream_t *u)
{
	atomic_store(&u->refresh, true);
	wake(u);
}

void k8s_upstream_free(k8s_upstream_t *u)
{
	if (u == NULL) {
		return;
	}
	atomic_store(&u->stop, true);
	wake(u);
	pthread_join(u->thread, NULL);

	// No reader remains: everything goes at once.
	for (size_t i = 0; i < MAX_QUERIES; i++) {
		if (u->queries[i].job != NULL) {
			query_release(u, &u->queries[i]);
		}
	}
	size_t pos = 0;
	k8s_upstream_entry_t *e;
	while ((e = k8s_rcuhash_walk(&u->cache, &pos)) != NULL) {
		free(e);
	}
	k8s_rcuhash_deinit(&u->cache);
	k8s_retire_flush_now(&u->retire);
	pos = 0;
	const k8s_map_slot_t *slot;
	while ((slot = k8s_map_next(&u->names, &pos)) != NULL) {
		free(slot->value);
	}
	k8s_map_clear(&u->names);
	k8s_timer_heap_deinit(&u->heap);
	close(u->wake_fd);
	free(u->asks);
	free(u);
}
