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

/*!
 * \file
 *
 * \brief Private to the forwarder's files: its state, shared by the thread and the API
 * (forward.c), the names being resolved (forward_names.c), the upstreams' health
 * (forward_health.c) and the late answers (forward_reply.c). A policy on top (the kept
 * names) sees none of it: it is a layer (forward.h).
 */

#pragma once

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/beat.h"
#include "resolver/dnsquery.h"
#include "resolver/forward.h"
#include "resolver/forward_cache.h"
#include "resolver/slots.h"

/*! \brief Hand-over slots between the workers and the thread. */
#define SLOT_COUNT 256
/*! \brief Servers a name is asked of at most. */
#define ATTEMPTS_MAX 3

typedef struct {
	k8s_slot_t h;  /*!< First: the hand-over's state, the client, the query's length. */
	uint8_t wire[K8S_FWD_QUERY_MAX];
} slot_t;

typedef struct waiter {
	struct waiter *next;
	int fd;                 /*!< knotd's UDP socket, or our dup() of the TCP connection. */
	bool tcp;
	uint16_t len;
	k8s_hold_t hold;        /*!< The slot's (slots.h), given back after the answer. */
	struct sockaddr_storage remote;
	struct sockaddr_storage local;  /*!< The late answer's source (AF_UNSPEC: the kernel's). */
	uint64_t received_ns;   /*!< The hand-over's (slots.h): the answer's duration. */
	k8s_tenant_t tenant;    /*!< Who it is charged to (share.h). */
	uint8_t wire[K8S_FWD_QUERY_MAX];
} waiter_t;

/*! \brief An upstream's kinds of failure, counted and logged each on its own. */
enum { FAIL_TIMEOUT = 0, FAIL_SLOW, FAIL_ERROR, FAIL_RCODE, FAIL_KINDS };

/*! \brief An upstream's changes of state, each logged at most every 10 s on its own. */
enum { STATE_UP = 0, STATE_LOOP, STATE_UNLOOP, STATE_KINDS };

typedef struct {
	struct sockaddr_storage addr;
	char text[INET6_ADDRSTRLEN + 8];
	bool down;                  /*!< Failed, slow or SERVFAIL: asked after the others, probed. */
	bool looped;
	unsigned probe_fails;       /*!< Health probes failed in a row since its last answer. */
	uint64_t next_probe_ms;
	k8s_dnsquery_t probe;       /*!< Health probe while down (fd -1 when idle). */
	k8s_dnsquery_t loop_probe;  /*!< Its return to us marks a loop; its answer alone clears one. */
	uint8_t loop_name[64];      /*!< The loop probe's name (the query points to it). */
	uint64_t loop_retry_ms;     /*!< While looped: when the next loop probe goes. */
	uint64_t log_ms[FAIL_KINDS];
	unsigned log_skipped[FAIL_KINDS];
	uint64_t state_log_ms[STATE_KINDS];  /*!< Its last line about a change of state. */
	unsigned state_skipped[STATE_KINDS]; /*!< Such changes not logged since. */
	unsigned fails;             /*!< Failures in a row (its group's max_fails). */
	const k8s_fwd_settings_t *set;  /*!< Its group's own settings, or NULL. */
} server_t;

/*!
 * \brief Health probes failed in a row past which a server is unhealthy, as CoreDNS's
 * forward counts a proxy down (max_fails 2: more than two health checks failed).
 */
#define PROBE_FAILS_MAX 2

/*! \brief Unhealthy as CoreDNS's forward means it: its health probes keep failing. */
static inline bool server_unhealthy(const server_t *s)
{
	return s->probe_fails > PROBE_FAILS_MAX;
}

typedef struct {
	knot_dname_t *zone;
	size_t first;   /*!< Into the flat server array. */
	size_t count;
	const k8s_fwd_settings_t *set;  /*!< Its own settings (the conf's), or NULL. */
	uint32_t robin;                 /*!< round_robin's turn (the thread's). */
	uint8_t index;                  /*!< Its place in the groups: the cache counts by it. */
} group_t;

typedef struct {
	k8s_dnsquery_t dq;   /*!< fd -1 when not active. */
	size_t server;
	bool slow;           /*!< Counted as slow already. */
	uint64_t sent_ns;    /*!< k8s_dnsmetrics_clock() at the start: its round trip. */
} attempt_t;

typedef struct {
	uint32_t hash;
	uint16_t qtype;
	k8s_tenant_t tenant;  /*!< Whose asking started it: it holds a unit of its pending. */
	k8s_share_ref_t unit;
	int last_err;        /*!< The last attempt's error (KNOT_ETIMEOUT at the deadline), or 0. */
	void *kept;          /*!< The layer's job this flight resolves (k8s_fwd_flight_keep()), or NULL. */
	uint8_t source[64];  /*!< A kept name's source label (key part, EDNS option); [0] 0: none. */
	group_t *group;
	uint8_t order[K8S_FWD_SERVERS_MAX];  /*!< Its group's servers in the order to ask them. */
	bool tcp;            /*!< Asked over TCP by its first client (CoreDNS's forward asks so). */
	attempt_t att[ATTEMPTS_MAX];
	unsigned att_count;
	uint64_t next_hedge_ms;
	uint64_t deadline_ms;
	waiter_t *waiters;
	uint8_t qname[KNOT_DNAME_MAXLEN];
} name_t;

struct k8s_fwd {
	k8s_fwd_conf_t conf;
	char owner[48];               /*!< Its pools' label ("forward", "upstream"...). */
	const k8s_fwd_layer_t *layer; /*!< The policy on this thread (the kept names), or NULL. */
	void *layer_state;
	/*! The layer's flight_done() while the thread runs, then NULL (forward_names.c). */
	void (*flight_done)(void *state, void *job, const knot_pkt_t *answer,
	                    k8s_fwd_entry_t *entry, int err, uint64_t now);
	server_t servers[K8S_FWD_SERVERS_MAX];
	size_t server_count;
	group_t groups[1 + K8S_FWD_GROUPS_MAX];
	size_t group_count;
	k8s_fwd_cache_t cache;
	k8s_log_t log;
	k8s_fwd_stats_fn stats_fn;
	void *stats_ctx;

	// Shared with the workers.
	slot_t slots[SLOT_COUNT];
	k8s_slots_t handoff;  /*!< Over \a slots. */
	atomic_uint_fast64_t dropped;
	k8s_share_t waiting;  /*!< Clients waiting (4 times max_pending), by tenant (share.h). */
	k8s_share_t pending;  /*!< Names asked upstream (max_pending), by tenant; the thread's. */
	_Atomic uint64_t loop_token[K8S_FWD_SERVERS_MAX];  /*!< Each one's loop probe out, 0: none. */
	atomic_bool loop_seen[K8S_FWD_SERVERS_MAX];
	pthread_t thread;
	k8s_beat_t beat;  /*!< A round of the thread's loop, its layer's turn in it (/health). */

	// The thread's own.
	name_t **names;             /*!< The names asked upstream: pending.room at most. */
	size_t name_count;
	size_t waiter_count;
	uint64_t next_loop_ms;
	uint64_t next_stats_ms;
	uint64_t local_log_ms;      /*!< The last line about a local shortage (forward_names.c). */
	unsigned local_log_skipped;
	uint64_t rng;               /*!< xorshift64 state: the random policy's orders. */
	k8s_fwd_stats_t st;
	uint8_t out[2 + KNOT_WIRE_MAX_PKTSIZE];
};

/*! \brief True if two source labels are equal (NULL and the empty label are none). */
static inline bool forward_source_equal(const uint8_t *a, const uint8_t *b)
{
	size_t alen = (a != NULL) ? a[0] : 0, blen = (b != NULL) ? b[0] : 0;
	return alen == blen && (alen == 0 || memcmp(a + 1, b + 1, alen) == 0);
}

/*!
 * \brief Ends a waiter after its answer: closes its TCP duplicate, gives its address's
 * shares back and frees it. Here, so that forward_reply.c calls nothing of forward.c.
 */
static inline void forward_waiter_free(k8s_fwd_t *f, waiter_t *w)
{
	if (w->tcp) {
		close(w->fd);
	}
	k8s_hold_put(&w->hold);
	free(w);
	f->waiter_count--;
}

/* The names being resolved (forward_names.c). */

/*!
 * \brief The group of servers for \a lower: the stub domain of the longest zone it is
 * in, else the default servers; NULL if there are none.
 */
group_t *forward_group_of(const k8s_fwd_t *f, const knot_dname_t *lower);

/* A group's own settings (forward_group.c): CoreDNS's forward and cache of its block. */

/*! \brief One line per server and kind of failure at most this often (ms). */
unsigned forward_log_interval(const k8s_fwd_t *f);

/*! \brief True if the group forwards as CoreDNS's forward plugin (forward.h). */
static inline bool forward_coredns(const group_t *g)
{
	return g->set != NULL && g->set->coredns;
}

/*! \brief Fills \a n->order: its group's servers in its policy's order. */
void forward_group_order(k8s_fwd_t *f, name_t *n);

/*! \brief Whether \a n is asked over TCP (force_tcp, or its client's TCP without prefer_udp). */
bool forward_group_tcp(const name_t *n);

/*!
 * \brief The entry of \a answer to \a n by its group's cache rules: to publish
 * (\a *keep) and answer with, or only to answer with (relayed); NULL if it cannot be
 * relayed either (too large, no memory).
 */
k8s_fwd_entry_t *forward_group_entry(k8s_fwd_t *f, const name_t *n, const knot_pkt_t *answer,
                                     uint64_t now, bool *keep);

/*!
 * \brief Keeps a SERVFAIL for \a n where its group's cache keeps failures (CoreDNS:
 * servfail, 5 s by default), after no upstream answered it.
 */
void forward_group_failed(k8s_fwd_t *f, const name_t *n, uint64_t now);

/*!
 * \brief Makes \a w wait for (\a lower, \a qtype): beside the clients of the name asked
 * already, or on a new name asked of a server of its group (SERVFAIL at once without a
 * group, a free name or a server to ask).
 */
void forward_name_ask(k8s_fwd_t *f, waiter_t *w, const knot_dname_t *lower, uint16_t qtype,
                      uint64_t now);

/*! \brief Progress on attempt \a a of name \a i; true if the name is done (and closed). */
bool forward_attempt_io(k8s_fwd_t *f, size_t i, attempt_t *a, uint64_t now);

/*!
 * \brief Answers name \a i's clients SERVFAIL with EDE \a ede and closes it (the last
 * name moves to \a i).
 */
void forward_name_failed(k8s_fwd_t *f, size_t i, int ede, const char *text, uint64_t now);

/*!
 * \brief The names' deadlines (SERVFAIL, their silent servers failed) and hedges (the
 * silent servers marked down, the next one asked beside them).
 */
void forward_names_expire(k8s_fwd_t *f, uint64_t now);

/* Late answers (forward_reply.c). */

/*!
 * \brief Answers a waiting client: the entry's records, or \a rcode with an Extended
 * DNS Error (\a ede >= 0) when there is no entry. Frees the waiter.
 */
void forward_reply(k8s_fwd_t *f, waiter_t *w, const k8s_fwd_entry_t *e, uint16_t rcode,
                   int ede, const char *ede_text, uint64_t now);

/*! \brief Answers every client waiting for \a n, as forward_reply(). */
void forward_reply_all(k8s_fwd_t *f, name_t *n, const k8s_fwd_entry_t *e, uint16_t rcode,
                       int ede, const char *ede_text, uint64_t now);

/* The upstreams' health (forward_health.c). */

/*!
 * \brief Counts a failure of \a kind (FAIL_*) at server \a s and logs it (one line per
 * kind every 10 s at most); a server up until now is marked down, to be probed every
 * second, and sent a loop probe at once.
 */
void forward_server_fail(k8s_fwd_t *f, server_t *s, int kind, const char *detail,
                         uint64_t now);

/*! \brief Server \a s answered: up again if it was down. */
void forward_server_ok(k8s_fwd_t *f, server_t *s);

/*!
 * \brief Takes the loop flags the workers set (k8s_fwd_loop_probe()): those servers are
 * not used until a later loop probe comes back clean.
 */
void forward_loops_check(k8s_fwd_t *f);

/*!
 * \brief Sends the loop probes when their round is due, and a health probe to each down
 * server due one.
 */
void forward_probes_start(k8s_fwd_t *f, uint64_t now);

/*! \brief Progress on probe \a p of server \a s (its health or its loop probe). */
void forward_probe_io(k8s_fwd_t *f, server_t *s, k8s_dnsquery_t *p, uint64_t now);

/*! \brief Closes the probes past their deadline. */
void forward_probes_expire(k8s_fwd_t *f, uint64_t now);
