/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The federation topology: the zone and region federation names are
 * answered with (k8s_topology_t, table.h), given in the configuration or
 * followed from the nodes the store holds.
 *
 * From the nodes, it is the zone and region of the configured node, or (as
 * kube-dns) of the first node by name that has both. The store marks it
 * changed when a node changes and has it published at its commit.
 */

#pragma once

#include <stdbool.h>

#include "log.h"
#include "store.h"
#include "table.h"

/*!
 * \brief Builds a topology from a zone and a region (DNS names, case-folded).
 *
 * \return The topology (free() it, or hand it to the table), or NULL if either
 *         is no DNS name or there is no memory.
 */
k8s_topology_t *k8s_topology_new(const char *zone, const char *region);

/*! \brief True if \a zone and \a region make a topology: DNS names, case-folded. */
bool k8s_topology_valid(const char *zone, const char *region);

/*! \brief The topology followed from the nodes. */
typedef struct {
	char *node_name;       /*!< The node whose topology is used, or NULL: the first with one. */
	char text[2 * 253 + 2]; /*!< "zone/region" published (DNS names), "" for none. */
	bool dirty;            /*!< Nodes changed since the last commit. */
} k8s_topology_tracker_t;

/*! \brief Starts with no topology; \a node_name (copied) is the node-name option, or NULL. */
int k8s_topology_tracker_init(k8s_topology_tracker_t *t, const char *node_name);

void k8s_topology_tracker_deinit(k8s_topology_tracker_t *t);

/*! \brief A node changed: the topology is chosen again at the next commit. */
void k8s_topology_tracker_changed(k8s_topology_tracker_t *t);

/*! \brief True if nodes changed since the last commit. */
bool k8s_topology_tracker_dirty(const k8s_topology_tracker_t *t);

/*!
 * \brief Chooses the topology from the nodes \a s holds and hands it to \a table
 * if it changed (the table's commit publishes it).
 */
void k8s_topology_tracker_commit(k8s_topology_tracker_t *t, const k8s_store_t *s,
                                 k8s_table_t *table, const k8s_log_t *log);
