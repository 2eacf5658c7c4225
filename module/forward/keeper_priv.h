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
 * \brief Private to the kept names' files: their state (keeper.h), on the forwarder's
 * thread but for the workers' asks and lookups (keeper.c), and what the handles
 * (keeper_ref.c) call of it. A layer of the forwarder (resolver/forward.h): it sees
 * the core only through forward.h and forward_cache.h.
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/list.h>

#include "resolver/forward.h"
#include "resolver/forward_cache.h"
#include "forward/keeper.h"
#include "lib/map.h"
#include "lib/timerheap.h"

#define MAX_FLIGHTS      32          /*!< Kept names' flights at once (the clients' go first). */
#define REFRESH_MIN_MS   1000
#define BACKOFF_MAX_S    60
#define STALE_MAX_MS     (300 * 1000) /*!< How long past expiry a failing name keeps its answer. */
#define NEG_DEFAULT_MS   (30 * 1000) /*!< A negative answer without an SOA (not a client's). */
#define NEG_MAX_MS       (300 * 1000) /*!< A kept negative answer's life at most. */
#define LOG_PERIOD_MS    (60 * 1000) /*!< One failure line per name at most this often. */
#define ASK_SLOTS        64          /*!< Names asked by queries, waiting for the thread. */
#define ASK_PROBE        4           /*!< Slots an ask tries before it is dropped. */
#define MAX_ASKED        4096        /*!< Names kept resolved because queries asked for them. */

typedef struct target target_t;

/*! \brief Keeping one (name, qtype) resolved. */
typedef struct {
	target_t *target;
	uint16_t qtype;
	k8s_timer_t timer;             /*!< When to resolve next; pos K8S_TIMER_IDLE: not scheduled. */
	bool in_flight;                /*!< A flight resolves it (then it is not scheduled). */
	unsigned backoff_s;            /*!< Last retry delay; 0 after a success. */
	bool looked;                   /*!< Looked up or asked for since its last resolution began. */
} job_t;

/*! \brief A name asked for by queries. */
struct target {
	bool referenced;               /*!< Looked up or asked again since the last eviction pass. */
	bool kept;                     /*!< In the kept list, else in probation. */
	struct cds_list_head asked_node; /*!< In the probation or the kept list. */
	bool active;                   /*!< Its jobs are scheduled, in flight or resting. */
	bool logged;
	uint64_t logged_ms;            /*!< Last failure line. */
	target_t *next;                /*!< On a drain's start or forget list. */
	job_t jobs[2];                 /*!< A, AAAA. */
	uint8_t source[64];            /*!< Source-cluster label of the key; [0] = 0: none. */
	knot_dname_t name[];           /*!< Lowercase. */
};

/*! \brief A name handed over by a query: free, being written, or ready for the thread. */
enum { ASK_FREE = 0, ASK_WRITING, ASK_READY };
typedef struct {
	atomic_uint state;
	uint8_t source[64];
	knot_dname_storage_t name;
} ask_t;

/*! \brief Asked targets in eviction order, the first goes first. */
typedef struct {
	struct cds_list_head targets;  /*!< target_t by asked_node. */
	size_t count;
} asked_list_t;

typedef struct keeper {
	/* Readers. */
	ask_t asks[ASK_SLOTS];         /*!< Slots that queries write without a lock. */
	int wake_fd;                   /*!< eventfd: a name asked. */
	atomic_size_t max_asked;       /*!< MAX_ASKED, or less in tests. */
	k8s_fwd_cache_t *cache;        /*!< The forwarder's: its entries are the answers. */

	/* The forwarder's thread only. */
	k8s_fwd_t *fwd;
	const k8s_log_t *log;          /*!< The forwarder's. */
	k8s_map_t names;               /*!< Key text (key_text()) -> target_t. */
	size_t asked;                  /*!< Targets kept. */
	asked_list_t probation;        /*!< Asked once: oldest first. */
	asked_list_t kept;             /*!< Looked up again after an answer: a clock, the hand first. */
	uint64_t full_logged_ms;       /*!< Last line about MAX_ASKED; 0: none yet. */
	size_t active;                 /*!< Targets with scheduled jobs. */
	k8s_timer_heap_t heap;         /*!< Scheduled jobs by due time. */
	size_t flights;                /*!< Jobs in flight. */
} keeper_t;

/* What the handles (keeper_ref.c) call. */

/*! \brief k8s_keeper_ask() on a forwarder's kept names, for (\a name, \a source). */
bool keeper_ask(keeper_t *k, const knot_dname_t *name, const uint8_t *source);

/*! \brief k8s_keeper_lookup() on a forwarder's kept names, for (\a name, \a source). */
k8s_upstream_status_t keeper_lookup(keeper_t *k, const knot_dname_t *name, uint16_t qtype,
                                    const uint8_t *source, const k8s_fwd_entry_t **ans);

/*! \brief k8s_keeper_set_max_asked() on a forwarder's kept names. */
void keeper_set_max_asked(keeper_t *k, size_t max);
