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
 * The forwarder (forward.h): started and stopped, the workers' hand-over and its slots
 * taken by the thread, and the thread's loop. The names it resolves are in
 * forward_names.c, the upstreams' health in forward_health.c, the late answers in
 * forward_reply.c; the state they share in forward_priv.h.
 */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "lib/clock.h"
#include "resolver/forward_priv.h"
#include "lib/sockaddr.h"

/*!
 * \brief The thread's nice value above knotd's. With knotd's workers busy it still gets
 * about a tenth of a CPU (weight 110 against 1024): behind the cluster names, never
 * starved as under SCHED_IDLE (weight 3).
 */
#define THREAD_NICE 10

/*! \brief Takes the queries the workers handed over. */
static void drain(k8s_fwd_t *f, uint64_t now)
{
	for (size_t i = 0; i < SLOT_COUNT; i++) {
		slot_t *slot = (slot_t *)k8s_slots_ready(&f->handoff, i);
		if (slot == NULL) {
			continue;
		}
		waiter_t *w = malloc(sizeof(*w));
		if (w != NULL) {
			w->fd = slot->h.fd;
			w->tcp = slot->h.tcp;
			w->len = slot->h.len;
			w->hold = slot->h.hold;
			w->remote = slot->h.remote;
			w->local = slot->h.local;
			w->received_ns = slot->h.received_ns;
			w->tenant = slot->h.tenant;
			memcpy(w->wire, slot->wire, slot->h.len);
		}
		// Else the waiter holds the TCP duplicate and the client's shares.
		k8s_slots_release(&slot->h, w == NULL);
		if (w == NULL) {
			continue;
		}
		f->waiter_count++;

		knot_pkt_t *q = knot_pkt_new(w->wire, w->len, NULL);
		if (q == NULL || knot_pkt_parse(q, 0) != KNOT_EOK || knot_pkt_qname(q) == NULL) {
			knot_pkt_free(q);
			forward_reply(f, w, NULL, KNOT_RCODE_SERVFAIL, -1, NULL, now);
			continue;
		}
		knot_dname_storage_t lower;
		knot_dname_copy_lower(lower, knot_pkt_qname(q));
		uint16_t qtype = knot_pkt_qtype(q);
		knot_pkt_free(q);

		// Cached since the worker looked (another client's answer came first).
		urcu_memb_read_lock();
		const k8s_fwd_entry_t *e = k8s_fwd_cache_get(&f->cache, lower, qtype, now);
		if (e != NULL) {
			forward_reply(f, w, e, 0, -1, NULL, now);
		}
		urcu_memb_read_unlock();
		if (e != NULL) {
			continue;
		}
		forward_name_ask(f, w, lower, qtype, now);
	}
}

/* The thread. */

static void stats_push(k8s_fwd_t *f, uint64_t now)
{
	if (now < f->next_stats_ms || f->stats_fn == NULL) {
		return;
	}
	f->next_stats_ms = now + 1000;
	f->st.dropped = atomic_load(&f->dropped);
	f->st.waiting = f->waiter_count;
	f->st.cache_entries = atomic_load(&f->cache.entries);
	f->st.cache_bytes = atomic_load(&f->cache.bytes);
	// The pools' refusals: a line every 10 s at most (the workers never log).
	k8s_share_log(&f->waiting, &f->log, now);
	k8s_share_log(&f->pending, &f->log, now);
	k8s_share_log_process(&f->log, now);
	f->st.server_count = f->server_count;
	for (size_t i = 0; i < f->server_count; i++) {
		f->st.server[i].down = f->servers[i].down || f->servers[i].looped;
	}
	f->stats_fn(f->stats_ctx, &f->st);
}

static int wait_ms(const k8s_fwd_t *f, uint64_t now)
{
	uint64_t until = now + 1000;
	for (size_t i = 0; i < f->name_count; i++) {
		const name_t *n = f->names[i];
		until = (n->deadline_ms < until) ? n->deadline_ms : until;
		until = (n->next_hedge_ms < until) ? n->next_hedge_ms : until;
	}
	until = (f->next_loop_ms < until) ? f->next_loop_ms : until;
	if (f->layer != NULL) {
		until = f->layer->due_ms(f->layer_state, until);
	}
	return (until > now) ? (int)(until - now) : 0;
}

/*!
 * \brief Puts the thread behind knotd's workers: nice THREAD_NICE higher, and SCHED_BATCH
 * (its wake-ups do not preempt a running worker). Both are allowed unprivileged.
 */
static void lower_priority(k8s_fwd_t *f)
{
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, gettid());
	struct sched_param param = { .sched_priority = 0 };
	if ((nice == -1 && errno != 0) ||
	    sched_setscheduler(gettid(), SCHED_BATCH, &param) != 0 ||
	    setpriority(PRIO_PROCESS, gettid(), nice + THREAD_NICE) != 0) {
		k8s_logf(&f->log, LOG_NOTICE, "forward, thread priority not lowered (%s): cluster "
		         "names may wait behind forwarding", knot_strerror(knot_map_errno()));
	}
}

static void *forward_run(void *arg)
{
	k8s_fwd_t *f = arg;
	// Named for top -H, perf and bench/forward (15 characters at most).
	(void)pthread_setname_np(pthread_self(), "k8s-forward");
	urcu_memb_register_thread();

	size_t cap = 2 + 2 * K8S_FWD_SERVERS_MAX + ATTEMPTS_MAX * f->pending.room;
	struct pollfd *fds = calloc(cap, sizeof(*fds));
	void **owner = calloc(cap, sizeof(*owner));
	size_t *owner_idx = calloc(cap, sizeof(*owner_idx));
	if (fds == NULL || owner == NULL || owner_idx == NULL) {
		k8s_logf(&f->log, LOG_ERR, "forward, no memory for the thread: nothing is forwarded");
		goto out;
	}
	lower_priority(f);
	while (!k8s_slots_stopping(&f->handoff)) {
		k8s_beat(&f->beat);  // A round waits a second at most (wait_ms()).
		k8s_slots_looking(&f->handoff);
		uint64_t now = k8s_now_ms();
		forward_loops_check(f);
		drain(f, now);
		// The layer after the clients: their flights are joined.
		if (f->layer != NULL) {
			f->layer->run(f->layer_state, now);
		}
		forward_names_expire(f, now);
		forward_probes_expire(f, now);
		forward_probes_start(f, now);
		stats_push(f, now);

		nfds_t count = 2;
		fds[0] = (struct pollfd){ .fd = f->handoff.wake_fd, .events = POLLIN };
		// A negative descriptor is ignored by poll().
		int layer_fd = (f->layer != NULL) ? f->layer->wake_fd(f->layer_state) : -1;
		fds[1] = (struct pollfd){ .fd = layer_fd, .events = POLLIN };
		for (size_t i = 0; i < f->name_count; i++) {
			name_t *n = f->names[i];
			for (unsigned a = 0; a < n->att_count; a++) {
				if (n->att[a].dq.fd >= 0) {
					fds[count] = (struct pollfd){ .fd = n->att[a].dq.fd,
					                              .events = k8s_dnsquery_events(&n->att[a].dq) };
					owner[count] = n;
					owner_idx[count++] = a;
				}
			}
		}
		for (size_t i = 0; i < f->server_count; i++) {
			server_t *s = &f->servers[i];
			k8s_dnsquery_t *p[2] = { &s->probe, &s->loop_probe };
			for (int k = 0; k < 2; k++) {
				if (p[k]->fd >= 0) {
					fds[count] = (struct pollfd){ .fd = p[k]->fd,
					                              .events = k8s_dnsquery_events(p[k]) };
					owner[count] = s;
					owner_idx[count++] = SIZE_MAX - k;
				}
			}
		}
		if (poll(fds, count, wait_ms(f, now)) < 0 && errno != EINTR) {
			k8s_logf(&f->log, LOG_ERR, "forward, poll failed (%s)",
			         knot_strerror(knot_map_errno()));
			break;
		}
		if (fds[0].revents != 0) {
			k8s_slots_woken(&f->handoff);
		}
		now = k8s_now_ms();
		for (nfds_t k = 2; k < count; k++) {
			if (fds[k].revents == 0) {
				continue;
			}
			if (owner_idx[k] >= SIZE_MAX - 1) {
				server_t *s = owner[k];
				forward_probe_io(f, s, owner_idx[k] == SIZE_MAX ? &s->probe : &s->loop_probe,
				                 now);
				continue;
			}
			// The name may be done already (another attempt answered): find it again.
			for (size_t i = 0; i < f->name_count; i++) {
				if (f->names[i] == owner[k]) {
					attempt_t *a = &f->names[i]->att[owner_idx[k]];
					if (a->dq.fd == fds[k].fd) {
						(void)forward_attempt_io(f, i, a, now);
					}
					break;
				}
			}
		}
		urcu_memb_quiescent_state();
	}
out:
	f->flight_done = NULL;  // The layer's names are not resolved again.
	// Whoever still waits gets SERVFAIL rather than silence.
	while (f->name_count > 0) {
		forward_name_failed(f, 0, 23, "forwarder stopped", k8s_now_ms());
	}
	for (size_t i = 0; i < f->server_count; i++) {
		k8s_dnsquery_close(&f->servers[i].probe);
		k8s_dnsquery_close(&f->servers[i].loop_probe);
	}
	free(fds);
	free(owner);
	free(owner_idx);
	urcu_memb_unregister_thread();
	return NULL;
}

/* API. */

k8s_fwd_t *k8s_fwd_new(const k8s_fwd_conf_t *conf, const char *owner, const k8s_log_t *log,
                       k8s_fwd_stats_fn stats, void *stats_ctx, const k8s_fwd_layer_t *layer)
{
	if (conf->group_count == 0 || conf->group_count > 1 + K8S_FWD_GROUPS_MAX ||
	    conf->max_pending == 0) {
		return NULL;
	}
	k8s_fwd_t *f = calloc(1, sizeof(*f));
	if (f == NULL) {
		return NULL;
	}
	f->handoff.wake_fd = -1;
	snprintf(f->owner, sizeof(f->owner), "%s", owner);
	f->log = *log;
	if (getrandom(&f->rng, sizeof(f->rng), 0) != sizeof(f->rng)) {
		f->rng = (uintptr_t)f ^ k8s_now_ms();  // Orders need no secret, only variety.
	}
	f->stats_fn = stats;
	f->stats_ctx = stats_ctx;
	if (k8s_fwd_conf_copy(&f->conf, conf) != KNOT_EOK) {
		goto fail;
	}
	// A group's cache capacities are room in the table too.
	size_t cache_size = conf->cache_size;
	for (size_t g = 0; g < conf->group_count; g++) {
		group_t *grp = &f->groups[f->group_count++];
		grp->zone = f->conf.groups[g].zone;
		grp->first = f->server_count;
		grp->count = conf->groups[g].count;
		grp->index = g;
		grp->set = k8s_fwd_settings_of(&f->conf, grp->zone);
		if (grp->set != NULL && grp->set->cache == K8S_FWD_CACHE_COREDNS) {
			cache_size += (size_t)grp->set->success_cap + grp->set->denial_cap;
		}
		for (size_t i = 0; i < conf->groups[g].count; i++) {
			if (f->server_count >= K8S_FWD_SERVERS_MAX) {
				goto fail;
			}
			server_t *s = &f->servers[f->server_count++];
			s->addr = conf->groups[g].servers[i];
			s->set = grp->set;
			k8s_sockaddr_text(&s->addr, s->text, sizeof(s->text));
			s->probe.fd = -1;
			s->loop_probe.fd = -1;
		}
	}
	size_t waiting = 4 * conf->max_pending;
	k8s_share_init(&f->waiting, (waiting < UINT_MAX / 2) ? waiting : UINT_MAX / 2,
	               "forward_waiting", f->owner);
	k8s_share_init(&f->pending, conf->max_pending, "forward_pending", f->owner);
	f->names = calloc(f->pending.room, sizeof(*f->names));
	if (f->names == NULL ||
	    k8s_slots_init(&f->handoff, f->slots, SLOT_COUNT, sizeof(slot_t),
	                   &f->waiting) != KNOT_EOK ||
	    k8s_fwd_cache_init(&f->cache, cache_size < K8S_FWD_CACHE_SIZE_MAX ? cache_size
	                                                                    : K8S_FWD_CACHE_SIZE_MAX) != KNOT_EOK) {
		goto fail;
	}
	if (layer != NULL) {
		f->layer_state = layer->attach(f);
		if (f->layer_state == NULL) {
			goto fail;
		}
		f->layer = layer;
		f->flight_done = layer->flight_done;
	}
	// Every forwarder's, whoever starts it (forward, upstream ADDR, a federation's).
	k8s_beat_start(&f->beat, true, "forwarder of %s",
	               (f->server_count > 0) ? f->servers[0].text : "no server");
	if (pthread_create(&f->thread, NULL, forward_run, f) != 0) {
		k8s_beat_stop(&f->beat);
		goto fail;
	}
	k8s_share_register(&f->waiting);
	k8s_share_register(&f->pending);
	return f;
fail:
	if (f->layer != NULL) {
		f->layer->detach(f->layer_state);
	}
	k8s_fwd_cache_deinit(&f->cache);
	k8s_slots_deinit(&f->handoff);
	free(f->names);
	k8s_fwd_conf_deinit(&f->conf);
	free(f);
	return NULL;
}

void k8s_fwd_free(k8s_fwd_t *f)
{
	if (f == NULL) {
		return;
	}
	k8s_share_unregister(&f->waiting);
	k8s_share_unregister(&f->pending);
	k8s_slots_stop(&f->handoff, f->thread);
	k8s_beat_stop(&f->beat);
	if (f->layer != NULL) {
		f->layer->detach(f->layer_state);
	}
	urcu_memb_barrier();
	k8s_fwd_cache_deinit(&f->cache);
	free(f->names);
	k8s_fwd_conf_deinit(&f->conf);
	free(f);
}

const k8s_fwd_conf_t *k8s_fwd_conf(const k8s_fwd_t *f)
{
	return &f->conf;
}

void *k8s_fwd_layer_state(const k8s_fwd_t *f)
{
	return f->layer_state;
}

k8s_fwd_cache_t *k8s_fwd_cache_of(k8s_fwd_t *f)
{
	return &f->cache;
}

const k8s_log_t *k8s_fwd_log(const k8s_fwd_t *f)
{
	return &f->log;
}

const char *k8s_fwd_owner(const k8s_fwd_t *f)
{
	return f->owner;
}

size_t k8s_fwd_server_count(const k8s_fwd_t *f)
{
	return f->server_count;
}

const char *k8s_fwd_server_text(const k8s_fwd_t *f, size_t i)
{
	return (i < f->server_count) ? f->servers[i].text : NULL;
}

bool k8s_fwd_routes(const k8s_fwd_t *f, const knot_dname_t *lower)
{
	return forward_group_of(f, lower) != NULL;
}

const k8s_fwd_entry_t *k8s_fwd_lookup(k8s_fwd_t *f, const knot_dname_t *lower, uint16_t qtype,
                                      uint64_t now_ms)
{
	return k8s_fwd_cache_get(&f->cache, lower, qtype, now_ms);
}

bool k8s_fwd_handoff(k8s_fwd_t *f, const uint8_t *wire, size_t len, int fd, bool tcp,
                     const struct sockaddr_storage *remote,
                     const struct sockaddr_storage *local, k8s_tenant_t tenant)
{
	// The claim takes the tenant's shares (slots.h). TCP answers go on the connection:
	// the address is the metrics' family.
	slot_t *slot = (len <= K8S_FWD_QUERY_MAX)
	               ? (slot_t *)k8s_slots_claim(&f->handoff, fd, tcp, len, remote, local, tenant)
	               : NULL;
	if (slot == NULL) {
		atomic_fetch_add(&f->dropped, 1);
		return false;
	}
	memcpy(slot->wire, wire, len);
	k8s_slots_publish(&f->handoff, &slot->h);
	return true;
}
