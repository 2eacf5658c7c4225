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

#include "lib/bulk.h"
#include "lib/clock.h"
#include "lib/dnsname.h"
#include "lib/map.h"
#include "table/records.h"
#include "store/store.h"
#include "store/topology.h"

/*! \brief Longest namespace (a DNS label) and object name (a DNS subdomain) the API accepts. */
#define NS_MAX 63
#define NAME_MAX_LEN 253

/*! \brief Longest key, "<namespace>/<name>": keys are never cut, so never shared. */
#define KEY_MAX (NS_MAX + 1 + NAME_MAX_LEN)

/*! \brief An object held, with the generation of the LIST (or event) that last saw it. */
typedef struct {
	k8s_object_t *obj;
	uint32_t gen;
	char *group;          /*!< Slices: key of the service they are indexed under, or NULL. */
} store_entry_t;

/*! \brief The slices of one service. */
typedef struct {
	store_entry_t **items;
	size_t count;
	size_t cap;
} group_t;

struct k8s_store {
	k8s_table_t *table;
	const k8s_log_t *log;
	k8s_records_conf_t records;
	char **namespaces;
	size_t namespace_count;
	k8s_clusterid_t cluster;           /*!< The local cluster id. */
	k8s_topology_tracker_t topology;   /*!< The federation topology from the nodes. */
	k8s_latency_t latency;             /*!< Trigger times of slices changed since the last commit. */

	k8s_map_t objects[K8S_SRC_COUNT];  /*!< "ns/name" -> store_entry_t. */
	uint32_t gen[K8S_SRC_COUNT];
	bool listing[K8S_SRC_COUNT];       /*!< Between list_begin and list_end. */
	k8s_map_t slice_groups;            /*!< Service key -> group_t of cluster slices. */
	k8s_map_t mcs_groups;              /*!< Import key -> group_t of imported slices. */
	k8s_map_t dirty[K8S_ZONE_COUNT];   /*!< Keys whose block must be rebuilt. */

	bool holding;                      /*!< k8s_store_hold(): objects let go are kept. */
	k8s_object_t **kept;
	size_t kept_count, kept_cap;

	k8s_store_stats_t stats;
};

/*! \brief An object the store held and lets go: freed, or kept while another thread reads. */
static void release(k8s_store_t *s, k8s_object_t *obj)
{
	if (!s->holding || obj == NULL) {
		k8s_object_free(obj);
		return;
	}
	if (s->kept_count == s->kept_cap) {
		size_t cap = (s->kept_cap > 0) ? 2 * s->kept_cap : 1024;
		k8s_object_t **kept = realloc(s->kept, cap * sizeof(*kept));
		if (kept == NULL) {
			// Not freed: the reader may still be at it. Lost, as little as memory allows.
			k8s_logf(s->log, LOG_ERR, "cannot keep an object a snapshot reads (%s), left "
			         "allocated", knot_strerror(KNOT_ENOMEM));
			return;
		}
		s->kept = kept;
		s->kept_cap = cap;
	}
	s->kept[s->kept_count++] = obj;
}

void k8s_store_hold(k8s_store_t *s, bool hold)
{
	s->holding = hold;
	if (hold) {
		return;
	}
	for (size_t i = 0; i < s->kept_count; i++) {
		k8s_object_free(s->kept[i]);
	}
	free(s->kept);
	s->kept = NULL;
	s->kept_count = 0;
	s->kept_cap = 0;
}

/*! \brief Writes "<ns>/<name>"; false if either is longer than the API allows. */
static bool key_of(char out[KEY_MAX + 1], const char *ns, const char *name)
{
	size_t ns_len = strlen(ns), name_len = strlen(name);
	if (ns_len > NS_MAX || name_len > NAME_MAX_LEN) {
		return false;
	}
	memcpy(out, ns, ns_len);
	out[ns_len] = '/';
	memcpy(out + ns_len + 1, name, name_len + 1);
	return true;
}

/* Groups of slices per service. */

static int group_add(k8s_map_t *groups, const char *key, store_entry_t *entry)
{
	group_t *group = k8s_map_get(groups, key);
	if (group == NULL) {
		group = k8s_bulk_calloc(sizeof(*group));
		if (group == NULL || k8s_map_set(groups, key, group) != KNOT_EOK) {
			k8s_bulk_free(group);
			return KNOT_ENOMEM;
		}
	}
	if (group->count == group->cap) {
		size_t cap = (group->cap > 0) ? 2 * group->cap : 4;
		store_entry_t **items = realloc(group->items, cap * sizeof(*items));
		if (items == NULL) {
			return KNOT_ENOMEM;
		}
		group->items = items;
		group->cap = cap;
	}
	group->items[group->count++] = entry;
	return KNOT_EOK;
}

static void group_del(k8s_map_t *groups, const char *key, const store_entry_t *entry)
{
	group_t *group = k8s_map_get(groups, key);
	if (group == NULL) {
		return;
	}
	for (size_t i = 0; i < group->count; i++) {
		if (group->items[i] == entry) {
			group->items[i] = group->items[--group->count];
			break;
		}
	}
	if (group->count == 0) {
		k8s_map_del(groups, key);
		free(group->items);
		k8s_bulk_free(group);
	}
}

static void mark(k8s_store_t *s, k8s_zone_t zone, const char *key)
{
	if (k8s_map_get(&s->dirty[zone], key) == NULL &&
	    k8s_map_set(&s->dirty[zone], key, (void *)1) != KNOT_EOK) {
		k8s_logf(s->log, LOG_ERR, "cannot mark %s for update (%s)", key,
		         knot_strerror(KNOT_ENOMEM));
	}
}

/*! \brief Marks the block a slice group feeds; a local service's slices may also stand in its import. */
static void mark_group(k8s_store_t *s, unsigned source, const char *key)
{
	if (source == K8S_SRC_MCS_SLICES) {
		mark(s, K8S_ZONE_CLUSTERSET, key);
		return;
	}
	mark(s, K8S_ZONE_CLUSTER, key);
	if (k8s_map_get(&s->objects[K8S_SRC_IMPORTS], key) != NULL) {
		mark(s, K8S_ZONE_CLUSTERSET, key);
	}
}

static void mark_all_imports(k8s_store_t *s)
{
	size_t pos = 0;
	const k8s_map_slot_t *slot;
	while ((slot = k8s_map_next(&s->objects[K8S_SRC_IMPORTS], &pos)) != NULL) {
		mark(s, K8S_ZONE_CLUSTERSET, slot->key);
	}
}

/*! \brief The namespace the namespaces option judges an object by, or NULL for cluster-wide kinds. */
static const char *namespace_of(unsigned source, const k8s_object_t *obj)
{
	k8s_kind_t kind = k8s_resources[source].kind;
	if (k8s_resources[source].aside) {
		return NULL;  // A ConfigMap the settings name is no DNS data of its namespace.
	}
	if (kind == K8S_NAMESPACE) {
		return obj->name;
	}
	return k8s_kind_namespaced(kind) ? obj->ns : NULL;
}

static bool exposed(const k8s_store_t *s, const char *ns)
{
	if (s->namespace_count == 0) {
		return true;
	}
	for (size_t i = 0; i < s->namespace_count; i++) {
		if (strcmp(s->namespaces[i], ns) == 0) {
			return true;
		}
	}
	return false;
}

/*! \brief The service (or import) a slice belongs to, as a key; false if none. */
static bool slice_group(const k8s_slice_t *slice, unsigned source, char key[KEY_MAX + 1])
{
	const char *service = (source == K8S_SRC_MCS_SLICES) ? slice->mcs_service : slice->service;
	if (service == NULL || service[0] == '\0') {
		return false;
	}
	return key_of(key, slice->meta.ns, service);
}

/*! \brief Whether an object's name can be the first label of its records' names. */
static bool name_is_label(const k8s_object_t *obj)
{
	return k8s_dns_label_valid(obj->name, strlen(obj->name), false);
}

/*!
 * \brief Logs, once per object, a valid name that no DNS name can hold.
 *
 * When an object appears, or a slice starts to name such a pod: not on every
 * update, which may come many times a second.
 */
static void log_unlabelled(const k8s_store_t *s, unsigned source, const char *key,
                           const k8s_object_t *old, const k8s_object_t *obj)
{
	if (obj == NULL) {
		return;
	}
	if (source == K8S_SRC_IMPORTS && old == NULL && !name_is_label(obj)) {
		k8s_logf(s->log, LOG_NOTICE, "serviceimport %s has no records (its name is no dns "
		         "label: longer than 63 or dotted)", key);
	}
	if ((source == K8S_SRC_SLICES || source == K8S_SRC_MCS_SLICES) &&
	    s->records.endpoint_pod_names) {
		const char *pod = ((const k8s_slice_t *)obj)->unlabelled_pod;
		const char *before = (old != NULL) ? ((const k8s_slice_t *)old)->unlabelled_pod : NULL;
		if (pod != NULL && before == NULL) {
			k8s_logf(s->log, LOG_NOTICE, "endpointslice %s names the endpoints of pod %s by "
			         "their address (its name is no dns label: longer than 63 or dotted; "
			         "others of the slice are not logged)", key, pod);
		}
	}
}

/*! \brief What a change of an object (old and/or new state) means for the records. */
static void apply(k8s_store_t *s, unsigned source, store_entry_t *entry, const char *key,
                  const k8s_object_t *old, const k8s_object_t *obj)
{
	const k8s_object_t *any = (obj != NULL) ? obj : old;

	log_unlabelled(s, source, key, old, obj);
	switch (source) {
	case K8S_SRC_NAMESPACES:
		if (k8s_table_set_ns(s->table, any->name, obj != NULL) != KNOT_EOK) {
			k8s_logf(s->log, LOG_ERR, "cannot update namespace %s (%s)", any->name,
			         knot_strerror(KNOT_ENOMEM));
		}
		break;
	case K8S_SRC_SERVICES:
		mark(s, K8S_ZONE_CLUSTER, key);
		break;
	case K8S_SRC_PODS:
		if (k8s_table_set_pod(s->table, (const k8s_pod_t *)old,
		                      (const k8s_pod_t *)obj) != KNOT_EOK) {
			k8s_logf(s->log, LOG_ERR, "cannot update pod %s (%s)", key,
			         knot_strerror(KNOT_ENOMEM));
		}
		break;
	case K8S_SRC_IMPORTS:
		mark(s, K8S_ZONE_CLUSTERSET, key);
		break;
	case K8S_SRC_SLICES:
	case K8S_SRC_MCS_SLICES: {
		k8s_map_t *groups = (source == K8S_SRC_SLICES) ? &s->slice_groups : &s->mcs_groups;
		char group[KEY_MAX + 1];
		bool grouped = obj != NULL && slice_group((const k8s_slice_t *)obj, source, group);
		// Leave the old service's group (the label may have changed), join the new one.
		if (entry->group != NULL && (!grouped || strcmp(entry->group, group) != 0)) {
			group_del(groups, entry->group, entry);
			mark_group(s, source, entry->group);
			k8s_bulk_free(entry->group);
			entry->group = NULL;
		}
		if (grouped) {
			if (entry->group == NULL) {
				entry->group = k8s_bulk_strdup(group);
				if (entry->group == NULL || group_add(groups, group, entry) != KNOT_EOK) {
					k8s_logf(s->log, LOG_ERR, "cannot index endpointslice %s (%s)",
					         key, knot_strerror(KNOT_ENOMEM));
					k8s_bulk_free(entry->group);
					entry->group = NULL;
				}
			}
			mark_group(s, source, group);
			// A LIST returns old changes too: only watched changes measure latency.
			if (!s->listing[source]) {
				k8s_latency_note(&s->latency, ((const k8s_slice_t *)obj)->trigger_time_ns);
			}
		}
		break;
	}
	case K8S_SRC_CLUSTERPROPS:
		if (k8s_clusterid_update(&s->cluster, s->log, old, obj)) {
			mark_all_imports(s);
		}
		break;
	case K8S_SRC_NODES:
		k8s_topology_tracker_update(&s->topology, s->log, old, obj);
		break;
	default:
		break;
	}
}

void k8s_store_upsert(k8s_store_t *s, unsigned source, k8s_object_t *obj)
{
	if (source >= K8S_SRC_COUNT || obj == NULL) {
		k8s_object_free(obj);
		return;
	}
	const char *ns = namespace_of(source, obj);
	if (ns != NULL && !exposed(s, ns)) {
		s->stats.filtered++;
		k8s_object_free(obj);
		return;
	}

	char key[KEY_MAX + 1];
	if (!key_of(key, obj->ns, obj->name)) {
		// The decoder refuses such names; a cut key would merge two objects.
		k8s_logf(s->log, LOG_WARNING, "ignoring %s %.*s/%.*s... (name longer than the API allows)",
		         k8s_resource_name(source), NS_MAX, obj->ns, NS_MAX, obj->name);
		k8s_object_free(obj);
		return;
	}
	store_entry_t *entry = k8s_map_get(&s->objects[source], key);
	if (entry != NULL) {
		entry->gen = s->gen[source];
		if (k8s_object_digest_of(entry->obj) == k8s_object_digest_of(obj)) {
			s->stats.unchanged++;
			k8s_object_free(obj);
			return;
		}
		k8s_object_t *old = entry->obj;
		entry->obj = obj;
		s->stats.changes++;
		apply(s, source, entry, key, old, obj);
		release(s, old);
		return;
	}

	entry = k8s_bulk_calloc(sizeof(*entry));
	if (entry == NULL || k8s_map_set(&s->objects[source], key, entry) != KNOT_EOK) {
		k8s_logf(s->log, LOG_ERR, "cannot keep %s %s (%s)", k8s_resource_name(source), key,
		         knot_strerror(KNOT_ENOMEM));
		k8s_bulk_free(entry);
		k8s_object_free(obj);
		return;
	}
	entry->obj = obj;
	entry->gen = s->gen[source];
	s->stats.objects[source]++;
	s->stats.changes++;
	apply(s, source, entry, key, NULL, obj);
}

static void remove_entry(k8s_store_t *s, unsigned source, const char *key, store_entry_t *entry)
{
	apply(s, source, entry, key, entry->obj, NULL);
	k8s_map_del(&s->objects[source], key);
	release(s, entry->obj);
	k8s_bulk_free(entry->group);
	k8s_bulk_free(entry);
	s->stats.objects[source]--;
	s->stats.changes++;
}

void k8s_store_remove(k8s_store_t *s, unsigned source, k8s_object_t *obj)
{
	if (source < K8S_SRC_COUNT && obj != NULL) {
		char key[KEY_MAX + 1];
		store_entry_t *entry = key_of(key, obj->ns, obj->name)
		                 ? k8s_map_get(&s->objects[source], key) : NULL;
		// A deletion of something never seen (e.g. around a relist) is no news.
		if (entry != NULL) {
			remove_entry(s, source, key, entry);
		}
	}
	k8s_object_free(obj);
}

void k8s_store_too_large(k8s_store_t *s, unsigned source, const char *ns, const char *name,
                         bool deleted)
{
	if (source >= K8S_SRC_COUNT) {
		return;
	}
	char key[KEY_MAX + 1];
	// A name longer than the API allows was never stored: nothing to keep or remove.
	store_entry_t *entry = key_of(key, ns, name) ? k8s_map_get(&s->objects[source], key) : NULL;
	if (entry == NULL) {
		return;
	} else if (deleted) {
		remove_entry(s, source, key, entry);
	} else {
		// Still there, only unreadable: a relist keeps the version held.
		entry->gen = s->gen[source];
	}
}

void k8s_store_list_begin(k8s_store_t *s, unsigned source)
{
	if (source < K8S_SRC_COUNT) {
		s->gen[source]++;
		s->listing[source] = true;
	}
}

void k8s_store_list_end(k8s_store_t *s, unsigned source)
{
	if (source >= K8S_SRC_COUNT) {
		return;
	}
	s->listing[source] = false;
	// What the complete LIST did not return is gone.
	size_t pos = 0, removed = 0;
	const k8s_map_slot_t *slot;
	while ((slot = k8s_map_next(&s->objects[source], &pos)) != NULL) {
		store_entry_t *entry = slot->value;
		if (entry->gen != s->gen[source]) {
			// Every key held was written by key_of(): it fits.
			char key[KEY_MAX + 1];
			snprintf(key, sizeof(key), "%s", slot->key);
			remove_entry(s, source, key, entry);
			removed++;
		}
	}
	if (removed > 0) {
		k8s_logf(s->log, LOG_INFO, "relist of %s removed %zu objects deleted meanwhile",
		         k8s_resource_name(source), removed);
	}
}

static const k8s_object_t *held(const k8s_store_t *s, unsigned source, const char *key)
{
	const store_entry_t *entry = k8s_map_get(&s->objects[source], key);
	return (entry != NULL) ? entry->obj : NULL;
}

const k8s_object_t *k8s_store_get(const k8s_store_t *s, unsigned source, const char *ns,
                                  const char *name)
{
	char key[KEY_MAX + 1];
	return (source < K8S_SRC_COUNT && key_of(key, ns, name)) ? held(s, source, key) : NULL;
}

const k8s_object_t *k8s_store_next(const k8s_store_t *s, unsigned source, size_t *pos)
{
	const k8s_map_slot_t *slot = (source < K8S_SRC_COUNT)
	                             ? k8s_map_next(&s->objects[source], pos) : NULL;
	return (slot != NULL) ? ((const store_entry_t *)slot->value)->obj : NULL;
}

/*!
 * \brief True if the local cluster exports this import but no imported slice carries its endpoints.
 *
 * MCS controllers that do not mirror the exporting cluster's own endpoints
 * into imported slices rely on DNS to add them; the import's status.clusters
 * says the local cluster exports the service.
 */
static bool local_exported(const k8s_store_t *s, const k8s_object_t *obj, const group_t *group)
{
	const k8s_serviceimport_t *imp = (const k8s_serviceimport_t *)obj;
	if (s->cluster.id[0] == '\0') {
		return false;
	}
	bool listed = false;
	for (uint16_t i = 0; i < imp->cluster_count; i++) {
		listed = listed || strcmp(imp->clusters[i], s->cluster.id) == 0;
	}
	for (size_t i = 0; listed && group != NULL && i < group->count; i++) {
		const k8s_slice_t *slice = (const k8s_slice_t *)group->items[i]->obj;
		if (slice->source_cluster != NULL && strcmp(slice->source_cluster, s->cluster.id) == 0) {
			return false;
		}
	}
	return listed;
}

/*!
 * \brief Logs a block that passes the caps of records.h, once per change of what it leaves out.
 *
 * Called before the block is published: the table still holds the previous one.
 */
static void log_capped(const k8s_store_t *s, k8s_zone_t zone, const char *key,
                       const k8s_object_t *obj, const k8s_block_t *block)
{
	uint8_t owner[128];
	size_t owner_len = k8s_svc_owner(obj->ns, obj->name, owner);
	const k8s_block_t *old = (owner_len > 0) ? k8s_table_block(s->table, zone, owner, owner_len)
	                                       : NULL;
	uint32_t before = (old != NULL) ? old->capped : 0;
	const char *kind = (zone == K8S_ZONE_CLUSTER) ? "service" : "serviceimport";
	if (block->capped == before) {
		return;
	}
	if (block->capped > 0) {
		k8s_logf(s->log, LOG_WARNING, "%s %s leaves out %u records or ports (more than "
		         "%u A, %u AAAA per name, or %u ports)", kind, key, block->capped,
		         K8S_MAX_A_PER_NAME, K8S_MAX_AAAA_PER_NAME, K8S_MAX_PORTS);
	} else {
		k8s_logf(s->log, LOG_INFO, "%s %s is within the record limits again", kind, key);
	}
}

/*! \brief Rebuilds and publishes (or removes) one block. */
static void publish(k8s_store_t *s, k8s_zone_t zone, const char *key)
{
	unsigned source = (zone == K8S_ZONE_CLUSTER) ? K8S_SRC_SERVICES : K8S_SRC_IMPORTS;
	const k8s_object_t *obj = held(s, source, key);
	s->stats.publishes++;
	if (obj == NULL) {
		char ns[NS_MAX + 1];
		const char *slash = strchr(key, '/');
		if (slash != NULL && (size_t)(slash - key) < sizeof(ns)) {
			memcpy(ns, key, slash - key);
			ns[slash - key] = '\0';
			if (k8s_table_del_block(s->table, zone, ns, slash + 1) != KNOT_EOK) {
				k8s_logf(s->log, LOG_ERR, "cannot remove records of %s %s (%s)",
				         zone == K8S_ZONE_CLUSTER ? "service" : "serviceimport", key,
				         knot_strerror(KNOT_ENOMEM));
			}
		}
		return;
	}
	if (!name_is_label(obj)) {
		return; // a ServiceImport named by a subdomain: no DNS name holds it (logged)
	}

	const group_t *group = k8s_map_get(zone == K8S_ZONE_CLUSTER ? &s->slice_groups
	                                                             : &s->mcs_groups, key);
	const group_t *local = (zone == K8S_ZONE_CLUSTERSET && local_exported(s, obj, group))
	                       ? k8s_map_get(&s->slice_groups, key) : NULL;
	size_t count = (group != NULL) ? group->count : 0;
	size_t local_count = (local != NULL) ? local->count : 0;
	const k8s_slice_t **slices = malloc((count + local_count + 1) * sizeof(*slices));
	k8s_slice_t *copies = calloc(local_count + 1, sizeof(*copies));
	k8s_block_t *block = NULL;
	uint64_t started = k8s_now_ns();
	if (slices != NULL && copies != NULL) {
		for (size_t i = 0; i < count; i++) {
			slices[i] = (const k8s_slice_t *)group->items[i]->obj;
		}
		for (size_t i = 0; i < local_count; i++) {
			copies[i] = *(const k8s_slice_t *)local->items[i]->obj;
			copies[i].source_cluster = s->cluster.id;
			slices[count + i] = &copies[i];
		}
		block = (zone == K8S_ZONE_CLUSTER)
		        ? k8s_records_service((const k8s_service_t *)obj, slices, count, &s->records)
		        : k8s_records_import((const k8s_serviceimport_t *)obj, slices,
		                             count + local_count, &s->records);
	}
	free(slices);
	free(copies);
	s->stats.records_ns += k8s_now_ns() - started;
	if (block != NULL) {
		log_capped(s, zone, key, obj, block);
	}
	if (block == NULL || k8s_table_put_block(s->table, block) != KNOT_EOK) {
		// The previous records stay published: nothing known is lost.
		k8s_logf(s->log, LOG_ERR, "cannot publish records of %s %s (%s)",
		         zone == K8S_ZONE_CLUSTER ? "service" : "serviceimport", key,
		         knot_strerror(KNOT_ENOMEM));
	}
}

size_t k8s_store_commit(k8s_store_t *s, int64_t now_ns)
{
	size_t published = 0;
	for (int zone = 0; zone < K8S_ZONE_COUNT; zone++) {
		size_t pos = 0;
		const k8s_map_slot_t *slot;
		while ((slot = k8s_map_next(&s->dirty[zone], &pos)) != NULL) {
			publish(s, zone, slot->key);
			published++;
		}
		k8s_map_clear(&s->dirty[zone]);
	}
	if (k8s_topology_tracker_dirty(&s->topology)) {
		k8s_topology_tracker_commit(&s->topology, s->table, s->log);
	}
	k8s_table_commit(s->table);
	k8s_latency_commit(&s->latency, now_ns, s->stats.latency, &s->stats.latency_sum_us);
	return published;
}

bool k8s_store_dirty(const k8s_store_t *s)
{
	return s->dirty[K8S_ZONE_CLUSTER].count > 0 || s->dirty[K8S_ZONE_CLUSTERSET].count > 0 ||
	       k8s_topology_tracker_dirty(&s->topology);
}

const k8s_store_stats_t *k8s_store_stats(const k8s_store_t *s)
{
	return &s->stats;
}

const char *k8s_store_cluster_id(const k8s_store_t *s)
{
	return s->cluster.id;
}

k8s_store_t *k8s_store_new(k8s_table_t *table, const k8s_store_conf_t *conf,
                           const k8s_log_t *log)
{
	k8s_store_t *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return NULL;
	}
	s->table = table;
	s->log = log;
	s->records.endpoint_pod_names = conf->endpoint_pod_names;
	if (conf->namespace_count > 0) {
		s->namespaces = calloc(conf->namespace_count, sizeof(char *));
		if (s->namespaces == NULL) {
			k8s_store_free(s);
			return NULL;
		}
		for (size_t i = 0; i < conf->namespace_count; i++) {
			s->namespaces[s->namespace_count] = strdup(conf->namespaces[i]);
			if (s->namespaces[s->namespace_count++] == NULL) {
				k8s_store_free(s);
				return NULL;
			}
		}
	}
	if (k8s_clusterid_init(&s->cluster, conf->cluster_id) != KNOT_EOK ||
	    k8s_topology_tracker_init(&s->topology, conf->node_name) != KNOT_EOK) {
		k8s_store_free(s);
		return NULL;
	}
	return s;
}

static void free_groups(k8s_map_t *groups)
{
	size_t pos = 0;
	const k8s_map_slot_t *slot;
	while ((slot = k8s_map_next(groups, &pos)) != NULL) {
		group_t *group = slot->value;
		free(group->items);
		k8s_bulk_free(group);
	}
	k8s_map_clear(groups);
}

void k8s_store_free(k8s_store_t *s)
{
	if (s == NULL) {
		return;
	}
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		size_t pos = 0;
		const k8s_map_slot_t *slot;
		while ((slot = k8s_map_next(&s->objects[src], &pos)) != NULL) {
			store_entry_t *entry = slot->value;
			k8s_object_free(entry->obj);
			k8s_bulk_free(entry->group);
			k8s_bulk_free(entry);
		}
		k8s_map_clear(&s->objects[src]);
	}
	free_groups(&s->slice_groups);
	free_groups(&s->mcs_groups);
	k8s_map_clear(&s->dirty[K8S_ZONE_CLUSTER]);
	k8s_map_clear(&s->dirty[K8S_ZONE_CLUSTERSET]);
	for (size_t i = 0; i < s->namespace_count; i++) {
		free(s->namespaces[i]);
	}
	free(s->namespaces);
	k8s_store_hold(s, false);
	k8s_clusterid_deinit(&s->cluster);
	k8s_topology_tracker_deinit(&s->topology);
	k8s_latency_deinit(&s->latency);
	free(s);
}
