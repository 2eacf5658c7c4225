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
 * \brief Private to the upstream's files: the resolver's state, shared by the resolver
 * thread (upstream.c) and the names queries ask for (upstream_asked.c).
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/list.h>

#include "upstream/dnsquery.h"
#include "lib/map.h"
#include "lib/rcuhash.h"
#include "lib/retire.h"
#include "lib/timerheap.h"
#include "upstream/upstream.h"
#include "upstream/upstream_entry.h"

#define MAX_QUERIES      32          /*!< Queries in flight at once. */
#define ATTEMPTS         3           /*!< Per resolution, before backing off. */
#define REFRESH_MIN_MS   1000
#define BACKOFF_MAX_S    60
#define STALE_MAX_S      300         /*!< How long past expiry a failing name keeps its answer. */
#define LOG_PERIOD_MS    (60 * 1000) /*!< One failure line per name at most this often. */
#define MAX_WAIT_MS      1000
#define ASK_SLOTS        64          /*!< Names asked by queries, waiting for the resolver. */
#define ASK_PROBE        4           /*!< Slots an ask tries before it is dropped. */
#define MAX_ASKED        4096        /*!< Names kept resolved because queries asked for them. */


typedef struct target target_t;
typedef struct query query_t;

/*! \brief Keeping one (name, qtype) resolved: resolver thread only. */
typedef struct {
	target_t *target;
	uint16_t qtype;
	k8s_timer_t timer;             /*!< When to resolve next; pos K8S_TIMER_IDLE: not scheduled. */
	query_t *query;                /*!< In flight, or NULL (then it is scheduled, or resting). */
	k8s_upstream_entry_t *entry;                /*!< Published answer, or NULL. */
	unsigned backoff_s;            /*!< Last retry delay; 0 after a success. */
	bool looked;                   /*!< Looked up or asked for since its last resolution began. */
} job_t;

/*! \brief A name asked for by queries (resolver thread only). */
struct target {
	bool asked;                    /*!< Kept for queries that asked (k8s_upstream_ask). */
	bool referenced;               /*!< Asked: looked up or asked again since the last eviction pass. */
	bool kept;                     /*!< Asked: in the kept list, else in probation. */
	struct cds_list_head asked_node; /*!< Asked: in the probation or the kept list. */
	bool active;                   /*!< Its jobs are scheduled, in flight or resting. */
	bool logged;
	uint64_t logged_ms;            /*!< Last failure line. */
	target_t *next;                /*!< On a drain's start or forget list. */
	job_t jobs[2];                 /*!< A, AAAA. */
	uint8_t source[64];            /*!< Source-cluster label of a forwarder's key; [0] = 0: none. */
	knot_dname_t name[];           /*!< Lowercase. */
};

/*! \brief A resolution in flight: up to ATTEMPTS queries, one after the other. */
struct query {
	job_t *job;                    /*!< NULL: slot free. */
	unsigned attempt;
	struct sockaddr_storage server; /*!< A forwarder's server of this attempt. */
	struct sockaddr_storage first;  /*!< A forwarder's server of the first attempt. */
	k8s_dnsquery_t dq;
};

/*! \brief A name handed over by a query: free, being written, or ready for the resolver. */
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


struct k8s_upstream {
	/* Readers. */
	k8s_rcuhash_t cache;           /*!< (name, qtype) -> k8s_upstream_entry_t. */
	ask_t *asks;                   /*!< ASK_SLOTS slots that queries write without a lock. */

	/* Settings. */
	struct sockaddr_storage server;
	k8s_upstream_servers_t servers; /*!< A forwarder's choice of server per name, or NULL. */
	void *servers_ctx;
	uint16_t opt_code;             /*!< EDNS option carrying a target's source, 0: none. */
	unsigned timeout_ms;
	k8s_log_t log;
	atomic_bool refresh;           /*!< Resolve every kept name again (the servers changed). */

	/* Thread. */
	pthread_t thread;
	int wake_fd;                   /*!< eventfd: new work or stop. */
	atomic_bool stop;

	/* Resolver thread only. */
	k8s_map_t names;               /*!< Key text (upstream_key_text()) -> target_t. */
	size_t asked;                  /*!< Targets kept because queries asked. */
	atomic_size_t max_asked;       /*!< MAX_ASKED, or less in tests. */
	asked_list_t probation;        /*!< Asked once: oldest first. */
	asked_list_t kept;             /*!< Looked up again after an answer: a clock, the hand first. */
	uint64_t full_logged_ms;       /*!< Last line about MAX_ASKED; 0: none yet. */
	size_t active;                 /*!< Targets with scheduled jobs. */
	k8s_timer_heap_t heap;         /*!< Scheduled jobs by due time. */
	k8s_retire_t retire;
	query_t queries[MAX_QUERIES];
	size_t query_count;
};

/*!
 * \brief The map key of a target: its name as text, then a space and the source, if
 * any (knot_dname_to_str() escapes a space in a name, so no two keys meet).
 */
typedef char key_text_t[sizeof(knot_dname_txt_storage_t) + 65];

/*! \brief Hash of a cache key: the name, the type and the source (a label, or NULL). */
uint32_t upstream_key_hash(const knot_dname_t *name, uint16_t qtype, const uint8_t *source);

/*
 * upstream.c calls upstream_asked.c, never the other way: the helpers both use are
 * upstream_asked.c's, and what a kept name needs of the resolver (resumed, stopped)
 * is handed back to upstream.c.
 */

/*! \brief The name as text without the final dot, for logs and as the map key. */
const char *upstream_name_text(const knot_dname_t *name, knot_dname_txt_storage_t buf);

/*! \brief The map key of a target (a name and a source label, or NULL) into \a buf. */
const char *upstream_key_text(const knot_dname_t *name, const uint8_t *source, key_text_t buf);

/*! \brief Takes the readers' mark on a job's entry (looked up since it was published). */
void upstream_job_harvest(job_t *job);

/*! \brief Unpublishes a job's entry, if any. */
void upstream_cache_drop(k8s_upstream_t *u, job_t *job);

/*! \brief A new target for a lowercase name (and a source label, or NULL), in no map yet. */
target_t *upstream_target_new(const knot_dname_t *lower, const uint8_t *source);

/*! \brief Schedules the resting jobs of an active target now: it is asked again. */
void upstream_target_resume(k8s_upstream_t *u, target_t *t, uint64_t now);

/*! \brief Stops a target's jobs, queries and entries. */
void upstream_target_stop(k8s_upstream_t *u, target_t *t);

/*! \brief Takes the names queries asked for out of their slots. */
size_t upstream_asks_take(k8s_upstream_t *u, knot_dname_storage_t names[ASK_SLOTS],
                          uint8_t sources[ASK_SLOTS][64]);

/*!
 * \brief Keeps a name a query asked for; a new target goes on \a start, an evicted
 * one on \a forget, one kept already and asked again in \a again (for the caller
 * to resume: upstream_target_resume()).
 *
 * \return False if MAX_ASKED names are kept already and none can go.
 */
bool upstream_asked_keep(k8s_upstream_t *u, const knot_dname_t *name, const uint8_t *source,
                         target_t **again, target_t **start, target_t **forget, bool *evicted);

/*!
 * \brief Stops keeping a name for queries: it leaves the map and goes on \a forget
 * (stopped and freed by the caller).
 */
void upstream_asked_drop(k8s_upstream_t *u, target_t *t, target_t **forget);
