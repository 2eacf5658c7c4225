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
#include <libknot/consts.h>
#include <libknot/error.h>

#include "lib/dnsname.h"
#include "store/topology.h"

/*! \brief The wire labels of a zone and a region, or 0 if they are no DNS names. */
static size_t topology_labels(const char *zone, const char *region, uint8_t labels[KNOT_DNAME_MAXLEN])
{
	size_t zone_size = k8s_dns_name_labels(zone, strlen(zone), true, labels,
	                                         KNOT_DNAME_MAXLEN - 1);
	size_t region_size = (zone_size == 0) ? 0 :
		k8s_dns_name_labels(region, strlen(region), true, labels + zone_size,
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
	free(t->labelled);
	t->node_name = NULL;
	t->named = NULL;
	t->labelled = NULL;
	t->count = 0;
	t->cap = 0;
}

bool k8s_topology_tracker_dirty(const k8s_topology_tracker_t *t)
{
	return t->dirty;
}

static bool has_topology(const k8s_node_t *node)
{
	return node != NULL && node->zone != NULL && node->region != NULL;
}

/*! \brief The first position of the index whose name is not before \a name. */
static size_t labelled_lower_bound(const k8s_topology_tracker_t *t, const char *name)
{
	size_t low = 0, high = t->count;
	while (low < high) {
		size_t mid = low + (high - low) / 2;
		if (strcmp(t->labelled[mid]->meta.name, name) < 0) {
			low = mid + 1;
		} else {
			high = mid;
		}
	}
	return low;
}

/*! \brief Where \a node is in the index, or count if it is not (e.g. its insertion ran out of memory). */
static size_t labelled_find(const k8s_topology_tracker_t *t, const k8s_node_t *node)
{
	// A name is one node's (cluster-scoped); the pointer decides if one came twice anyway.
	for (size_t pos = labelled_lower_bound(t, node->meta.name);
	     pos < t->count && strcmp(t->labelled[pos]->meta.name, node->meta.name) == 0; pos++) {
		if (t->labelled[pos] == node) {
			return pos;
		}
	}
	return t->count;
}

static void labelled_del(k8s_topology_tracker_t *t, const k8s_node_t *node)
{
	size_t pos = labelled_find(t, node);
	if (pos < t->count) {
		memmove(t->labelled + pos, t->labelled + pos + 1,
		        (t->count - pos - 1) * sizeof(*t->labelled));
		t->count--;
	}
}

static int labelled_add(k8s_topology_tracker_t *t, const k8s_node_t *node)
{
	if (t->count == t->cap) {
		// The index holds at most the nodes the store holds: it cannot wrap first.
		size_t cap = (t->cap > 0) ? 2 * t->cap : 16;
		const k8s_node_t **labelled = realloc(t->labelled, cap * sizeof(*labelled));
		if (labelled == NULL) {
			return KNOT_ENOMEM;
		}
		t->labelled = labelled;
		t->cap = cap;
	}
	size_t pos = labelled_lower_bound(t, node->meta.name);
	memmove(t->labelled + pos + 1, t->labelled + pos, (t->count - pos) * sizeof(*t->labelled));
	t->labelled[pos] = node;
	t->count++;
	return KNOT_EOK;
}

void k8s_topology_tracker_update(k8s_topology_tracker_t *t, const k8s_log_t *log,
                                 const k8s_object_t *old, const k8s_object_t *obj)
{
	const k8s_node_t *before = (const k8s_node_t *)old;
	const k8s_node_t *after = (const k8s_node_t *)obj;
	const k8s_object_t *any = (obj != NULL) ? obj : old;
	if (any == NULL) {
		return;
	}
	if (t->node_name != NULL) {
		// Only the configured node counts, with or without labels (the log says which).
		if (strcmp(any->name, t->node_name) == 0) {
			t->named = after;
			t->dirty = true;
		}
		return;
	}
	bool had = has_topology(before), has = has_topology(after);
	if (had && has && strcmp(old->name, obj->name) == 0) {
		// Same place in the index: the labels may differ, the name does not.
		size_t pos = labelled_find(t, before);
		if (pos < t->count) {
			t->labelled[pos] = after;
			t->dirty = true;
			return;
		}
	}
	if (had) {
		labelled_del(t, before);
		t->dirty = true;
	}
	if (has) {
		if (labelled_add(t, after) != KNOT_EOK) {
			k8s_logf(log, LOG_ERR, "cannot index the topology of node %s (%s)",
			         obj->name, knot_strerror(KNOT_ENOMEM));
		}
		t->dirty = true;
	}
}

/*! \brief The node federation names take their topology from, or NULL. */
static const k8s_node_t *topology_node(const k8s_topology_tracker_t *t)
{
	if (t->node_name != NULL) {
		return t->named;
	}
	// As kube-dns: the first node (by name) that has both labels.
	return (t->count > 0) ? t->labelled[0] : NULL;
}

void k8s_topology_tracker_commit(k8s_topology_tracker_t *t, k8s_table_t *table,
                                 const k8s_log_t *log)
{
	t->dirty = false;
	const k8s_node_t *node = topology_node(t);
	bool known = has_topology(node);
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
