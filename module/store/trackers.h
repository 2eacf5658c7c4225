/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief What the store's objects mean beside their records: the local cluster
 * id and the DNS programming latency. (The federation topology is in topology.h.)
 *
 * The store calls them as objects change (with an object's old and new state,
 * either NULL) and at its commit. Watcher thread only.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/log.h"
#include "kinds/objects.h"

/*! \brief The local cluster id: the cluster-id option, else the ClusterProperty's. */
typedef struct {
	char *conf;        /*!< The option's value, or NULL. */
	char id[256];      /*!< In use, lowercase; "" for none. */
} k8s_clusterid_t;

/*! \brief Starts with the option's value (NULL: none, the ClusterProperty decides). */
int k8s_clusterid_init(k8s_clusterid_t *c, const char *conf);

void k8s_clusterid_deinit(k8s_clusterid_t *c);

/*!
 * \brief Follows a ClusterProperty changing from \a old to \a obj.
 *
 * \return True if the id in use changed (imports' blocks depend on it).
 */
bool k8s_clusterid_update(k8s_clusterid_t *c, const k8s_log_t *log,
                          const k8s_object_t *old, const k8s_object_t *obj);

/*! \brief Programming latency buckets: <= 1 ms, 2 ms, 4 ms, ... doubling, last one unbounded. */
#define K8S_LATENCY_BUCKETS 20

/*! \brief Trigger times kept per commit round (8 MiB). */
#define K8S_LATENCY_NOTES_MAX ((size_t)1 << 20)

/*! \brief Trigger times (int64_t, Unix ns) of the slices changed since the last commit. */
typedef struct {
	k8s_buf_t triggers;
} k8s_latency_t;

/*!
 * \brief Notes a watched slice change's trigger time (Unix ns; none if <= 0).
 *
 * At most K8S_LATENCY_NOTES_MAX per commit round: only the statistic loses the rest.
 */
void k8s_latency_note(k8s_latency_t *l, int64_t trigger_ns);

/*!
 * \brief Counts the latencies noted since the last commit into \a buckets, published at
 * \a now_ns, and adds them to \a sum_us (microseconds: a Prometheus histogram's _sum).
 */
void k8s_latency_commit(k8s_latency_t *l, int64_t now_ns, uint64_t buckets[K8S_LATENCY_BUCKETS],
                        uint64_t *sum_us);

void k8s_latency_deinit(k8s_latency_t *l);
