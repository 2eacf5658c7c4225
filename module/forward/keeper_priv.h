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
#include "resolver/share.h"
#include "forward/keeper.h"
#include "lib/map.h"
#include "lib/timerheap.h"

#define MAX_FLIGHTS      32          /*!< Kept names' flights at once: a pool's cap (share.h). */
#define REFRESH_MIN_MS   1000
#define BACKOFF_MAX_S    60
#define STALE_MAX_MS     (300 * 1000) /*!< How long past expiry a failing name keeps its answer. */
#define NEG_DEFAULT_MS   (30 * 1000) /*!< A negative answer without an SOA (not a client's). */
#define NEG_MAX_MS       (300 * 1000) /*!< A kept negative answer's life at most. */
/*! \brief A target no upstream answered is SERVFAIL at once this long at least (CoreDNS's
 * cache keeps a SERVFAIL 5 s), and until its retry. */
#define DEAD_MIN_MS      (5 * 1000)
#define LOG_PERIOD_MS    (60 * 1000) /*!< One line about forgetting names at most this often. */
#define FAIL_LOG_MS      (10 * 1000) /*!< One line about failed resolutions at most this often. */
#define ASK_SLOTS        64          /*!< Names asked by queries, waiting for the thread: a pool's cap. */
#define ASK_ROOM         (ASK_SLOTS + ASK_SLOTS / K8S_SHARE_HEADROOM_PART) /*!< With its headroom. */
#define MAX_ASKED        4096        /*!< Names kept resolved because queries asked for them. */

typedef struct target target_t;

/*!
 * \brief Why a job is due, in the order due jobs go when flights are short: a name asked
 * for the first time, then a name in use refreshed, then a retry after a failure.
 */
typedef enum { TURN_FRESH = 0, TURN_REFRESH, TURN_RETRY, TURN_CLASSES } turn_class_t;

/*! \brief Keeping one (name, qtype) resolved. */
typedef struct {
	target_t *target;
	uint16_t qtype;
	k8s_timer_t timer;             /*!< When to resolve next; pos K8S_TIMER_IDLE: not scheduled. */
	bool in_flight;                /*!< A flight resolves it (then it is not scheduled). */
	k8s_share_ref_t flight;        /*!< In flight: its unit of the flights (its tenant's). */
	unsigned backoff_s;            /*!< Last retry delay; 0 after a success. */
	bool looked;                   /*!< Looked up or asked for since its last resolution began. */
	turn_class_t turn;             /*!< Why it is due next. */
	bool waited;                   /*!< Its tenant's part kept it waiting (counted once). */
	struct turn_queue *queue;      /*!< Due and waiting for a flight, in this queue; or NULL. */
	struct cds_list_head turn_node; /*!< In its queue's list of its class. */
} job_t;

/*! \brief A name asked for by queries. */
struct target {
	bool referenced;               /*!< Looked up or asked again since the last eviction pass. */
	bool kept;                     /*!< In the kept list, else in probation. */
	struct cds_list_head asked_node; /*!< In the probation or the kept list. */
	bool active;                   /*!< Its jobs are scheduled, in flight or resting. */
	target_t *next;                /*!< On a drain's start or forget list. */
	job_t jobs[2];                 /*!< A, AAAA. */
	uint8_t source[64];            /*!< Source-cluster label of the key; [0] = 0: none. */
	k8s_tenant_t tenant;           /*!< Whose query asked for it first: its flights' tenant. */
	knot_dname_t name[];           /*!< Lowercase. */
};

/*! \brief A name handed over by a query: free, being written, or ready for the thread. */
enum { ASK_FREE = 0, ASK_WRITING, ASK_READY };
typedef struct {
	atomic_uint state;
	k8s_tenant_t tenant;           /*!< Whose query asked (share.h). */
	k8s_share_ref_t unit;          /*!< Its unit of the asks, given back when taken. */
	uint8_t source[64];
	knot_dname_storage_t name;
} ask_t;

/*! \brief The due jobs of one tenant, waiting for a flight, by class (keeper_turn.c). */
typedef struct turn_queue {
	k8s_tenant_t tenant;
	struct cds_list_head jobs[TURN_CLASSES];
	size_t count;
	struct cds_list_head ring_node; /*!< In the turns' ring. */
} turn_queue_t;

/*! \brief Due jobs waiting for a flight: a queue per tenant, taken in turns (keeper_turn.c). */
typedef struct {
	k8s_map_t queues;              /*!< Tenant (hex) -> turn_queue_t. */
	struct cds_list_head ring;     /*!< Queues with jobs, the next to go first. */
	size_t count;                  /*!< Jobs waiting. */
} turns_t;

/*! \brief Asked targets in eviction order, the first goes first. */
typedef struct {
	struct cds_list_head targets;  /*!< target_t by asked_node. */
	size_t count;
} asked_list_t;

typedef struct keeper {
	/* Readers. */
	ask_t asks[ASK_ROOM];          /*!< Slots that queries write without a lock. */
	k8s_share_t ask_share;         /*!< The asks by tenant: ASK_SLOTS, and headroom. */
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
	turns_t turns;                 /*!< Due jobs waiting for a flight. */
	k8s_share_t flights;           /*!< Jobs in flight by tenant: MAX_FLIGHTS, and headroom. */
	uint64_t now_ms;               /*!< The turn's time (start_due()'s, for job_start()). */
	uint64_t fail_log_ms;          /*!< The last line about a failed resolution. */
	unsigned fail_skipped;         /*!< Failures not logged since. */
} keeper_t;

/* What the handles (keeper_ref.c) call. */

/*! \brief k8s_keeper_ask() on a forwarder's kept names, for (\a name, \a source). */
bool keeper_ask(keeper_t *k, const knot_dname_t *name, const uint8_t *source,
                k8s_tenant_t tenant);

/*! \brief k8s_keeper_lookup() on a forwarder's kept names, for (\a name, \a source). */
k8s_upstream_status_t keeper_lookup(keeper_t *k, const knot_dname_t *name, uint16_t qtype,
                                    const uint8_t *source, const k8s_fwd_entry_t **ans);

/*! \brief k8s_keeper_set_max_asked() on a forwarder's kept names. */
void keeper_set_max_asked(keeper_t *k, size_t max);

/* The due jobs' turns (keeper_turn.c), which keeper.c calls. */

/*! \brief Empty turns. */
void turns_init(turns_t *turns);

/*! \brief Frees the queues (the jobs are the targets'). */
void turns_deinit(turns_t *turns);

/*! \brief Queues a due job at its tenant's, behind the jobs of its class; false on no memory. */
bool turns_push(turns_t *turns, job_t *job);

/*! \brief Takes a job out of its queue, if it is in one. */
void turns_remove(turns_t *turns, job_t *job);

/*!
 * \brief Starts waiting jobs, the classes in order (fresh, refresh, retry), the tenants in
 * turns within a class: a tenant's first job of the class goes if \a admit(ctx, job) gives
 * it a flight (false: its tenant may start nothing more now), out of its queue, to
 * \a start(ctx, job). Ends when a whole turn of the tenants starts nothing.
 */
void turns_run(turns_t *turns, bool (*admit)(void *ctx, job_t *job),
               void (*start)(void *ctx, job_t *job), void *ctx);
