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
 * followed from the nodes.
 *
 * From the nodes, it is the zone and region of the configured node, or (as
 * kube-dns) of the first node by name that has both. The store hands the
 * tracker each Node change, as every other tracker (trackers.h), and has it
 * publish at its commit; the tracker never reads the store. It borrows the
 * store's node objects: each stays valid until it is handed over again as
 * the old state (then freed), so the tracker copies nothing.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/log.h"
#include "kinds/objects.h"
#include "table/table.h"

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
	const k8s_node_t *named;     /*!< With node_name: that node while it is held, or NULL. */
	const k8s_node_t **labelled; /*!< Without node_name: the nodes with both labels, by name. */
	size_t count, cap;     /*!< Of labelled (at most the nodes held). */
	char text[2 * 253 + 2]; /*!< "zone/region" published (DNS names), "" for none. */
	bool dirty;            /*!< The choice may have changed since the last commit. */
} k8s_topology_tracker_t;

/*! \brief Starts with no topology; \a node_name (copied) is the node-name option, or NULL. */
int k8s_topology_tracker_init(k8s_topology_tracker_t *t, const char *node_name);

void k8s_topology_tracker_deinit(k8s_topology_tracker_t *t);

/*!
 * \brief Follows a Node changing from \a old to \a obj (either NULL: added, deleted).
 *
 * Both are borrowed: \a obj must stay valid until it is handed over as \a old
 * (or the tracker is deinitialized). O(log n) plus a move of the index's tail
 * for a node with both labels; nothing for the others.
 */
void k8s_topology_tracker_update(k8s_topology_tracker_t *t, const k8s_log_t *log,
                                 const k8s_object_t *old, const k8s_object_t *obj);

/*! \brief True if nodes changed since the last commit. */
bool k8s_topology_tracker_dirty(const k8s_topology_tracker_t *t);

/*!
 * \brief Hands the topology to \a table if the choice changed (the table's commit
 * publishes it), and logs the change.
 */
void k8s_topology_tracker_commit(k8s_topology_tracker_t *t, k8s_table_t *table,
                                 const k8s_log_t *log);
