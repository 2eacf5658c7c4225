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
 * The names being resolved (forward_priv.h): the group of servers a name goes to, its
 * attempts (the next server when one fails, or at once beside a silent one after
 * HEDGE_MS), its deadline, and its answer or failure for every client waiting for it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver/forward_priv.h"

/*! \brief Without an answer by then, a server is marked down and the next one asked. */
#define HEDGE_MS 300

/*!
 * \brief A local shortage (descriptors, memory, a pool's part: the upstream sockets, the
 * TCP answers' bytes) stopped an attempt at \a s: logged, and not the server's failure (it
 * stays up).
 */
static void local_fail(k8s_fwd_t *f, const server_t *s, int ret, uint64_t now)
{
	if (f->local_log_ms != 0 && now < f->local_log_ms + forward_log_interval(f)) {
		f->local_log_skipped++;
		return;
	}
	char skipped[48] = "";
	if (f->local_log_skipped > 0) {
		snprintf(skipped, sizeof(skipped), ", %u more since the last line",
		         f->local_log_skipped);
	}
	if (ret == KNOT_ESPACE) {
		k8s_logf(&f->log, LOG_WARNING, "forward, TCP answer from %s not read (the upstream "
		         "holds its part of the TCP answers' bytes%s), upstream not marked down",
		         s->text, skipped);
	} else if (ret == KNOT_EBUSY) {
		k8s_logf(&f->log, LOG_WARNING, "forward, upstream %s not asked (the name's tenant "
		         "holds its part of the upstream sockets%s), upstream not marked down",
		         s->text, skipped);
	} else {
		k8s_logf(&f->log, LOG_WARNING, "forward, upstream %s not asked (local: %s%s), "
		         "upstream not marked down", s->text, knot_strerror(ret), skipped);
	}
	f->local_log_ms = now;
	f->local_log_skipped = 0;
}

group_t *forward_group_of(const k8s_fwd_t *f, const knot_dname_t *lower)
{
	group_t *best = NULL;
	size_t best_labels = 0;
	for (size_t i = 1; i < f->group_count; i++) {
		group_t *g = (group_t *)&f->groups[i];
		size_t labels = knot_dname_labels(g->zone, NULL);
		if ((best == NULL || labels > best_labels) && knot_dname_in_bailiwick(lower, g->zone) >= 0) {
			best = g;
			best_labels = labels;
		}
	}
	if (best == NULL && f->groups[0].count > 0) {
		best = (group_t *)&f->groups[0];
	}
	return best;
}

/*!
 * \brief The next server to ask, in the name's order (its group's policy): the first up
 * and not asked yet, else the first not asked.
 */
static ssize_t next_server(const k8s_fwd_t *f, const name_t *n)
{
	ssize_t fallback = -1;
	for (size_t i = 0; i < n->group->count; i++) {
		size_t idx = n->group->first + n->order[i];
		const server_t *s = &f->servers[idx];
		bool asked = false;
		for (unsigned a = 0; a < n->att_count; a++) {
			asked |= (n->att[a].server == idx);
		}
		if (asked || s->looped) {
			continue;
		}
		if (!s->down) {
			return idx;
		} else if (fallback < 0) {
			fallback = idx;
		}
	}
	return fallback;
}

/*! \brief Whether every server of \a g fails its health probes (CoreDNS's all down). */
static bool group_unhealthy(const k8s_fwd_t *f, const group_t *g)
{
	for (size_t i = 0; i < g->count; i++) {
		if (!server_unhealthy(&f->servers[g->first + i])) {
			return false;
		}
	}
	return g->count > 0;
}

static bool attempts_active(const name_t *n)
{
	for (unsigned a = 0; a < n->att_count; a++) {
		if (n->att[a].dq.fd >= 0) {
			return true;
		}
	}
	return false;
}

/*! \brief Asks the next server; false if there is none (or no socket). */
static bool attempt_start(k8s_fwd_t *f, name_t *n, uint64_t now)
{
	while (n->att_count < ATTEMPTS_MAX) {
		ssize_t idx = next_server(f, n);
		if (idx < 0) {
			return false;
		}
		attempt_t *a = &n->att[n->att_count++];
		a->server = idx;
		a->slow = false;
		server_t *s = &f->servers[idx];
		f->st.server[idx].queries++;
		f->st.failovers += (n->att_count > 1);
		// CoreDNS's "healthcheck broken": every server of the name's group unhealthy.
		f->st.broken += (n->att_count == 1 && group_unhealthy(f, n->group));
		a->sent_ns = k8s_dnsmetrics_clock();
		uint64_t left = (n->deadline_ms > now) ? n->deadline_ms - now : 1;
		size_t opt_len = (f->conf.opt_code != 0) ? n->source[0] : 0;
		int ret = k8s_dnsquery_start_opt(&a->dq, &s->addr, n->qname, n->qtype,
		                                 f->conf.opt_code, n->source + 1, opt_len,
		                                 forward_group_tcp(n), left, now, n->tenant);
		if (ret == KNOT_EOK) {
			n->next_hedge_ms = now + HEDGE_MS;
			return true;
		}
		if (k8s_dnsquery_local_error(ret)) {
			local_fail(f, s, ret, now);
			return false;  // Another server would not do better.
		}
		forward_server_fail(f, s, FAIL_ERROR, knot_strerror(ret), now);
	}
	return false;
}

static void name_close(k8s_fwd_t *f, size_t i)
{
	name_t *n = f->names[i];
	for (unsigned a = 0; a < n->att_count; a++) {
		k8s_dnsquery_close(&n->att[a].dq);
	}
	k8s_share_put(&f->pending, &n->unit);
	free(n);
	f->names[i] = f->names[--f->name_count];
}

/*! \brief Tells the layer how its name's flight ended, once. */
static void kept_notify(k8s_fwd_t *f, name_t *n, const knot_pkt_t *answer,
                        k8s_fwd_entry_t *e, uint64_t now)
{
	void *job = n->kept;
	n->kept = NULL;
	if (job != NULL && f->flight_done != NULL) {
		f->flight_done(f->layer_state, job, answer, e,
		               (n->last_err != 0) ? n->last_err : KNOT_ENOENT, now);
	}
}

/*! \brief An answer came: kept in the cache and sent to every waiting client. */
static void name_answered(k8s_fwd_t *f, size_t i, const knot_pkt_t *answer, uint64_t now)
{
	name_t *n = f->names[i];
	bool keep = false;
	k8s_fwd_entry_t *e = forward_group_entry(f, n, answer, now, &keep);
	if (e != NULL && !keep) {
		// Relayed once, never kept (its group's cache rules).
		kept_notify(f, n, answer, NULL, now);
		forward_reply_all(f, n, e, 0, -1, NULL, now);
		k8s_fwd_entry_free(e);
		name_close(f, i);
		return;
	}
	if (e != NULL) {
		e->kept = (n->kept != NULL);  // One entry: the clients' answer and the kept name's.
	}
	kept_notify(f, n, answer, e, now);  // Before it is published: the old one's marks count.
	if (n->source[0] != 0) {
		// A source's answer is the layer's alone: no client waits for it.
		if (e != NULL) {
			k8s_fwd_cache_put(&f->cache, e, now);
		}
		name_close(f, i);
		return;
	}
	if (e != NULL) {
		// Cached first: a client that asks again at once must find it (only this
		// thread replaces an entry, so it stays valid for the replies).
		k8s_fwd_cache_put(&f->cache, e, now);
		forward_reply_all(f, n, e, 0, -1, NULL, now);
	} else {
		// Never its RCODE with no records: a client would take an empty NOERROR.
		forward_reply_all(f, n, NULL, KNOT_RCODE_SERVFAIL, 23,
		                  "upstream answer not relayed", now);
	}
	name_close(f, i);
}

void forward_name_failed(k8s_fwd_t *f, size_t i, int ede, const char *text, uint64_t now)
{
	name_t *n = f->names[i];
	kept_notify(f, n, NULL, NULL, now);
	forward_group_failed(f, n, now);
	forward_reply_all(f, f->names[i], NULL, KNOT_RCODE_SERVFAIL, ede, text, now);
	name_close(f, i);
}

bool forward_attempt_io(k8s_fwd_t *f, size_t i, attempt_t *a, uint64_t now)
{
	name_t *n = f->names[i];
	server_t *s = &f->servers[a->server];
	knot_pkt_t *answer = NULL;
	int ret = k8s_dnsquery_io(&a->dq, now, &answer);
	if (ret == KNOT_EAGAIN) {
		return false;
	}
	k8s_dnsquery_close(&a->dq);
	if (ret != KNOT_EOK && k8s_dnsquery_local_error(ret)) {
		local_fail(f, s, ret, now);
	} else if (ret != KNOT_EOK) {
		n->last_err = ret;
		forward_server_fail(f, s, FAIL_ERROR, knot_strerror(ret), now);
	} else {
		uint16_t rcode = knot_wire_get_rcode(answer->wire);
		f->st.server[a->server].answers++;
		k8s_fwd_stats_answer(&f->st, a->server, rcode, a->sent_ns);
		// CoreDNS's forward takes any answer as the answer (no failover on its RCODE).
		if (rcode == KNOT_RCODE_NOERROR || rcode == KNOT_RCODE_NXDOMAIN ||
		    forward_coredns(n->group)) {
			forward_server_ok(f, s);
			name_answered(f, i, answer, now);
			knot_pkt_free(answer);
			return true;
		}
		const knot_lookup_t *name = knot_lookup_by_id(knot_rcode_names, rcode);
		forward_server_fail(f, s, FAIL_RCODE, name ? name->name : "unknown RCODE", now);
		// The last resort: an error answer is still an answer.
		if (!attempts_active(n) && next_server(f, n) < 0) {
			name_answered(f, i, answer, now);
			knot_pkt_free(answer);
			return true;
		}
		knot_pkt_free(answer);
	}
	if (!attempts_active(n) && !attempt_start(f, n, now)) {
		forward_name_failed(f, i, 23, "no upstream answered", now);
		return true;
	}
	return false;
}

/*! \brief The flight of (\a lower, \a qtype, \a source), or NULL. */
static name_t *flight_find(k8s_fwd_t *f, const knot_dname_t *lower, uint16_t qtype,
                           const uint8_t *source, uint32_t hash)
{
	for (size_t j = 0; j < f->name_count; j++) {
		name_t *c = f->names[j];
		if (c->hash == hash && c->qtype == qtype && knot_dname_is_equal(c->qname, lower) &&
		    forward_source_equal(c->source, source)) {
			return c;
		}
	}
	return NULL;
}

/*!
 * \brief A new flight of \a tenant, its first attempt started (else failed and closed at
 * once); false without a group or room: the tenant past its part of the pending names,
 * or no memory (\a why says which).
 */
static bool name_new(k8s_fwd_t *f, waiter_t *w, void *kept, const knot_dname_t *lower,
                     uint16_t qtype, const uint8_t *source, uint32_t hash,
                     k8s_tenant_t tenant, uint64_t now, const char **why)
{
	group_t *g = forward_group_of(f, lower);
	k8s_share_ref_t unit = { .units = 0 };
	if (g == NULL) {
		*why = "no upstream";
		return false;
	}
	name_t *n = NULL;
	if (k8s_share_take(&f->pending, tenant, 1, &unit)) {
		n = calloc(1, sizeof(*n));
		if (n == NULL) {
			k8s_share_put(&f->pending, &unit);
		}
	}
	if (n == NULL) {
		*why = "forwarder busy";
		return false;
	}
	n->tenant = tenant;
	n->unit = unit;
	for (unsigned a = 0; a < ATTEMPTS_MAX; a++) {
		n->att[a].dq.fd = -1;
	}
	n->hash = hash;
	n->qtype = qtype;
	n->group = g;
	n->kept = kept;
	n->tcp = (w != NULL && w->tcp);
	forward_group_order(f, n);
	if (source != NULL && source[0] != 0) {
		memcpy(n->source, source, 1 + source[0]);
	}
	n->deadline_ms = now + f->conf.timeout_ms;
	n->waiters = w;
	if (w != NULL) {
		w->next = NULL;
	}
	memcpy(n->qname, lower, knot_dname_size(lower));
	f->names[f->name_count++] = n;
	f->st.forwarded++;
	if (!attempt_start(f, n, now)) {
		forward_name_failed(f, f->name_count - 1, 22, "no usable upstream", now);
	}
	return true;
}

void forward_name_ask(k8s_fwd_t *f, waiter_t *w, const knot_dname_t *lower, uint16_t qtype,
                      uint64_t now)
{
	// Asked already (by a client or the layer): one more client waits for the same answer.
	uint32_t hash = k8s_fwd_key_hash(lower, qtype);
	name_t *n = flight_find(f, lower, qtype, NULL, hash);
	const char *why = NULL;
	if (n != NULL) {
		w->next = n->waiters;
		n->waiters = w;
	} else if (!name_new(f, w, NULL, lower, qtype, NULL, hash, w->tenant, now, &why)) {
		int ede = (forward_group_of(f, lower) != NULL) ? 0 : 22;
		forward_reply(f, w, NULL, KNOT_RCODE_SERVFAIL, ede, why, now);
	}
}

bool k8s_fwd_flight_keep(k8s_fwd_t *f, const knot_dname_t *lower, uint16_t qtype,
                         const uint8_t *source, k8s_tenant_t tenant, void *job, uint64_t now)
{
	uint32_t hash = k8s_fwd_key_hash_source(lower, qtype, source);
	name_t *n = flight_find(f, lower, qtype, source, hash);
	if (n != NULL && n->kept == NULL) {
		n->kept = job;  // A client's flight: its answer serves the kept name too.
		return true;
	}
	const char *why = NULL;
	return n == NULL && name_new(f, NULL, job, lower, qtype, source, hash, tenant, now, &why);
}

void k8s_fwd_flight_unkeep(k8s_fwd_t *f, const void *job)
{
	for (size_t i = 0; i < f->name_count; i++) {
		if (f->names[i]->kept == job) {
			f->names[i]->kept = NULL;
		}
	}
}

void forward_names_expire(k8s_fwd_t *f, uint64_t now)
{
	for (size_t i = 0; i < f->name_count; ) {
		name_t *n = f->names[i];
		if (now >= n->deadline_ms) {
			for (unsigned a = 0; a < n->att_count; a++) {
				if (n->att[a].dq.fd >= 0) {
					f->st.timeouts++;
					forward_server_fail(f, &f->servers[n->att[a].server], FAIL_TIMEOUT, NULL,
					                    now);
				}
			}
			n->last_err = KNOT_ETIMEOUT;
			f->st.kept_timeouts += (n->kept != NULL);  // A dead target: its failure is kept.
			forward_name_failed(f, i, 22, "upstream timeout", now);
			continue;  // The last name moved to i.
		}
		if (now >= n->next_hedge_ms && attempts_active(n)) {
			// The servers asked have been silent: mark them down, ask the next one too.
			for (unsigned a = 0; a < n->att_count; a++) {
				attempt_t *at = &n->att[a];
				if (at->dq.fd >= 0 && !at->slow) {
					at->slow = true;
					forward_server_fail(f, &f->servers[at->server], FAIL_SLOW, NULL,
					                    now);
				}
			}
			n->next_hedge_ms = UINT64_MAX;
			(void)attempt_start(f, n, now);
		}
		i++;
	}
}
