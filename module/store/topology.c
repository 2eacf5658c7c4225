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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>
#include <libknot/error.h>

#include "federation.h"
#include "topology.h"

/*! \brief The wire labels of a zone and a region, or 0 if they are no DNS names. */
static size_t topology_labels(const char *zone, const char *region, uint8_t labels[KNOT_DNAME_MAXLEN])
{
	size_t zone_size = k8s_federation_labels(zone, strlen(zone), true, labels,
	                                         KNOT_DNAME_MAXLEN - 1);
	size_t region_size = (zone_size == 0) ? 0 :
		k8s_federation_labels(region, strlen(region), true, labels + zone_size,
		                      KNOT_DNAME_MAXLEN - 1 - zone_size);
	return (region_size == 0) ? 0 : zone_size + region_size;
}

bool k8s_topology_valid(const char *zone, const char *region)
{
	uint8_t labels[KNOT_DNAME_MAXLEN];
	return topology_labels(zone, region, labels) > 0;
}

k8s_topology_t *k8s_topology_new(const char *zone, const char *region)
{
	uint8_t labels[KNOT_DNAME_MAXLEN];
	size_t size = topology_labels(zone, region, labels);
	if (size == 0) {
		return NULL;
	}
	k8s_topology_t *topology = malloc(sizeof(*topology) + size);
	if (topology != NULL) {
		topology->size = size;
		memcpy(topology->labels, labels, size);
	}
	return topology;
}

int k8s_topology_tracker_init(k8s_topology_tracker_t *t, const char *node_name)
{
	memset(t, 0, sizeof(*t));
	if (node_name != NULL) {
		t->node_name = strdup(node_name);
		if (t->node_name == NULL) {
			return KNOT_ENOMEM;
		}
	}
	return KNOT_EOK;
}

void k8s_topology_tracker_deinit(k8s_topology_tracker_t *t)
{
	free(t->node_name);
	t->node_name = NULL;
}

void k8s_topology_tracker_changed(k8s_topology_tracker_t *t)
{
	t->dirty = true;
}

bool k8s_topology_tracker_dirty(const k8s_topology_tracker_t *t)
{
	return t->dirty;
}

/*! \brief The node federation names take their topology from, or NULL. */
static const k8s_node_t *topology_node(const k8s_topology_tracker_t *t, const k8s_store_t *s)
{
	if (t->node_name != NULL) {
		return (const k8s_node_t *)k8s_store_get(s, K8S_SRC_NODES, "", t->node_name);
	}
	// As kube-dns: the first node (by name) that has both labels.
	const k8s_node_t *first = NULL;
	size_t pos = 0;
	const k8s_object_t *obj;
	while ((obj = k8s_store_next(s, K8S_SRC_NODES, &pos)) != NULL) {
		const k8s_node_t *node = (const k8s_node_t *)obj;
		if (node->zone != NULL && node->region != NULL &&
		    (first == NULL || strcmp(node->meta.name, first->meta.name) < 0)) {
			first = node;
		}
	}
	return first;
}

void k8s_topology_tracker_commit(k8s_topology_tracker_t *t, const k8s_store_t *s,
                                 k8s_table_t *table, const k8s_log_t *log)
{
	t->dirty = false;
	const k8s_node_t *node = topology_node(t, s);
	bool known = node != NULL && node->zone != NULL && node->region != NULL;
	char text[sizeof(t->text)] = "";
	if (known) {
		snprintf(text, sizeof(text), "%s/%s", node->zone, node->region);
	}
	if (strcmp(text, t->text) == 0) {
		return;
	}

	k8s_topology_t *topology = NULL;
	if (known) {
		topology = k8s_topology_new(node->zone, node->region);
		if (topology == NULL) {
			k8s_logf(log, LOG_ERR, "cannot publish the federation topology of node %s (%s)",
			         node->meta.name, knot_strerror(KNOT_ENOMEM));
			t->dirty = true;  // Tried again at the next commit.
			return;
		}
		k8s_logf(log, LOG_INFO, "federation topology is zone %s, region %s (node %s)",
		         node->zone, node->region, node->meta.name);
	} else if (t->node_name != NULL) {
		k8s_logf(log, LOG_INFO, "no federation topology (node %s %s)", t->node_name,
		         node == NULL ? "not found" : "has no zone and region labels");
	} else {
		k8s_logf(log, LOG_INFO, "no federation topology (no node has zone and region labels)");
	}
	k8s_table_set_topology(table, topology);
	memcpy(t->text, text, sizeof(text));
}
