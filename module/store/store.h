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
 * \brief The watcher's copy of the API objects, and what turns their changes into records.
 *
 * Reflectors hand decoded objects to the store (through the watcher's sink). The store
 * keeps the latest slim object per (source, namespace, name), indexes
 * EndpointSlices by their service, and marks the services whose records an
 * event changes. A commit rebuilds only those services' blocks and publishes
 * them: one changed EndpointSlice touches only its service. Objects whose
 * DNS-relevant content did not change (same digest) change nothing. A LIST
 * after a 410 is reconciled: what it did not return is deleted. What objects
 * mean beside records (ExternalName targets, the cluster id, programming
 * latency, the federation topology) is followed by the trackers of
 * trackers.h and topology.h, which the store calls.
 * Single-threaded: only the watcher thread calls it.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/log.h"
#include "kinds/objects.h"
#include "api/reflector.h"
#include "store/resources.h"
#include "table/table.h"
#include "store/trackers.h"

typedef struct {
	bool endpoint_pod_names;       /*!< Label endpoints without hostname by pod name. */
	const char *const *namespaces; /*!< Exposed namespaces; none means all. */
	size_t namespace_count;
	const char *cluster_id;        /*!< Overrides the ClusterProperty, or NULL. */
	const char *node_name;         /*!< The node whose topology federation names use, or NULL: the first with one. */
} k8s_store_conf_t;

typedef struct {
	uint64_t objects[K8S_SRC_COUNT];        /*!< Objects held. */
	uint64_t latency[K8S_LATENCY_BUCKETS];  /*!< Trigger-to-publish latencies seen. */
	uint64_t latency_sum_us;                /*!< Their sum, in microseconds. */
	uint64_t publishes;                     /*!< Service blocks published or removed. */
	uint64_t unchanged;                     /*!< Updates without DNS-relevant change. */
	uint64_t filtered;                      /*!< Objects of namespaces not exposed. */
	uint64_t changes;                       /*!< Objects added, changed or removed (the snapshot is rewritten after one). */
	uint64_t records_ns;                    /*!< Time spent building blocks (the watcher's phases). */
} k8s_store_stats_t;

typedef struct k8s_store k8s_store_t;

/*! \brief Creates a store that publishes into \a table (strings in \a conf are copied). */
k8s_store_t *k8s_store_new(k8s_table_t *table, const k8s_store_conf_t *conf,
                           const k8s_log_t *log);

/*! \brief Frees the store and its objects (not the table). */
void k8s_store_free(k8s_store_t *s);

void k8s_store_upsert(k8s_store_t *s, unsigned source, k8s_object_t *obj);
void k8s_store_remove(k8s_store_t *s, unsigned source, k8s_object_t *obj);
void k8s_store_list_begin(k8s_store_t *s, unsigned source);
void k8s_store_list_end(k8s_store_t *s, unsigned source);
/*! \brief An object too large to read: the version held stays (also at list_end), or goes if \a deleted. */
void k8s_store_too_large(k8s_store_t *s, unsigned source, const char *ns, const char *name,
                         bool deleted);

/*!
 * \brief Publishes what changed since the last commit.
 *
 * \param now_ns  Wall clock (Unix ns), for programming latency.
 *
 * \return Number of service blocks published or removed.
 */
size_t k8s_store_commit(k8s_store_t *s, int64_t now_ns);

/*! \brief True if something awaits a commit. */
bool k8s_store_dirty(const k8s_store_t *s);

/*! \brief Counters. */
const k8s_store_stats_t *k8s_store_stats(const k8s_store_t *s);

/*!
 * \brief From now on (\a hold true) keeps the objects the store replaces or removes instead
 * of freeing them, so that another thread may read the objects it held until then (the
 * snapshot's writer, snapshot.h); frees them all when \a hold is false.
 */
void k8s_store_hold(k8s_store_t *s, bool hold);

/*! \brief The object held of a source by namespace ("" for cluster-wide kinds) and name, or NULL. */
const k8s_object_t *k8s_store_get(const k8s_store_t *s, unsigned source, const char *ns,
                                  const char *name);

/*!
 * \brief The objects held of a source, in no order: one per call, from *\a pos = 0 on;
 * NULL at the end. The store must not change meanwhile.
 */
const k8s_object_t *k8s_store_next(const k8s_store_t *s, unsigned source, size_t *pos);

/*! \brief The cluster id in use ("" if none). */
const char *k8s_store_cluster_id(const k8s_store_t *s);
