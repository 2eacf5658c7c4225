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
 * \brief Watch settings, described once: zones with equal settings share a watcher.
 *
 * Every field of k8s_watcher_conf_t has one row in k8s_watcher_conf_fields:
 * its option, its kind and where it is, made from the option's row of
 * K8S_OPTIONS (options.h). Reading the options (k8s_conf.c), comparing the settings
 * of two zones, copying and freeing them all walk that table, so a new watch
 * option is one row of K8S_OPTIONS and one field here.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "watch/options.h"

/*! \brief Watch settings; zones with equal settings share a watcher. */
typedef struct {
	const char *kubeconfig;        /*!< Kubeconfig path, or NULL for in-cluster settings. */
	const char *context;           /*!< Kubeconfig context, or NULL for current-context. */
	const char *sa_dir;            /*!< In-cluster service account directory. */
	const char *const *namespaces; /*!< Exposed namespaces (none: all). */
	size_t namespace_count;
	const char *labels;            /*!< Label selector for services, slices and pods, or NULL. */
	const char *namespace_labels;  /*!< Label selector for namespaces, or NULL. */
	const char *cluster_id;        /*!< Cluster id overriding the ClusterProperty, or NULL. */
	const char *node_name;         /*!< The node whose topology federation names use, or NULL. */
	bool endpoint_pod_names;       /*!< Name endpoints without hostname by pod name. */
	bool no_endpoints;             /*!< Do not watch EndpointSlices. */
	unsigned stall_s;              /*!< Cut a transfer silent this long (0: default). */
	unsigned absent_retry_s;       /*!< Look for a missing optional resource this often (0: default). */
	bool watch_list;               /*!< Full lists as watch-lists where the server serves them. */
	const char *snapshot;          /*!< The warm restart's snapshot file, or NULL: none. */
	unsigned snapshot_max_age_s;   /*!< An older snapshot is not served (0: no limit). */
	const char *hosts_configmap;   /*!< "<namespace>/<name>/<key>" of the hosts table, or NULL. */
} k8s_watcher_conf_t;

/*! \brief What a field holds, and so how it is read, compared, copied and freed. */
typedef enum {
	K8S_WCONF_END = 0,  /*!< Ends the table. */
	K8S_WCONF_STR,      /*!< const char *, NULL when unset. */
	K8S_WCONF_STRLIST,  /*!< const char *const *, counted by the size_t at count_offset. */
	K8S_WCONF_BOOL,     /*!< bool. */
	K8S_WCONF_UINT,     /*!< unsigned. */
} k8s_wconf_kind_t;

/*! \brief What a field means to the snapshot of the warm restart (snapshot.h). */
typedef enum {
	K8S_WCONF_HELD = 0,  /*!< Changes which objects are held: in the settings' fingerprint. */
	K8S_WCONF_SERVER,    /*!< Which API server: in the fingerprint and the snapshot's file name. */
	K8S_WCONF_HOW,       /*!< Only how they are read or kept: neither. */
} k8s_wconf_scope_t;

/*! \brief One field of k8s_watcher_conf_t. */
typedef struct {
	const char *item;       /*!< Its option, or NULL if load derives it (node-name, snapshot). */
	k8s_wconf_kind_t kind;
	k8s_wconf_scope_t scope;
	size_t offset;          /*!< Of the field in k8s_watcher_conf_t. */
	size_t count_offset;    /*!< K8S_WCONF_STRLIST: of its count. */
	const char *dflt;       /*!< K8S_WCONF_STR: what a copy holds for NULL, or NULL. */
} k8s_wconf_field_t;

/*! \brief Every field of k8s_watcher_conf_t, ended by a K8S_WCONF_END row. */
extern const k8s_wconf_field_t k8s_watcher_conf_fields[];

/*!
 * \brief FNV-1a 64 of the fields of \a scope (K8S_WCONF_HELD: of HELD and SERVER),
 * equal across processes: a snapshot names the settings it was made with.
 */
uint64_t k8s_watcher_conf_hash(const k8s_watcher_conf_t *conf, k8s_wconf_scope_t scope);

/*!
 * \brief Sets the snapshot file of an owned copy: "<dir>/mod-k8s/<hash>.snapshot" (the
 * module's own directory in the storage, snapfile.h), the hash that of the API server
 * settings (K8S_WCONF_SERVER), so that watchers of other servers (a Federated-DNS's
 * members) keep a file each.
 *
 * \param dir      The storage directory (\a dir_len bytes, no final slash needed).
 *
 * \retval KNOT_EOK, KNOT_ERANGE (path too long), KNOT_ENOMEM (the field is unchanged)
 */
int k8s_watcher_conf_set_snapshot(k8s_watcher_conf_t *conf, const char *dir, size_t dir_len);

/*!
 * \brief The storage directory a snapshot file set by k8s_watcher_conf_set_snapshot() is in:
 * the length of its path, \a snapshot's first bytes (0: none).
 */
size_t k8s_watcher_conf_snapshot_storage(const char *snapshot);

/*! \brief True if zones with settings \a a and \a b may share a watcher. */
bool k8s_watcher_conf_equal(const k8s_watcher_conf_t *a, const k8s_watcher_conf_t *b);

/*!
 * \brief Makes \a dst an owned deep copy of \a src, freed by k8s_watcher_conf_free().
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (\a dst is left empty)
 */
int k8s_watcher_conf_copy(k8s_watcher_conf_t *dst, const k8s_watcher_conf_t *src);

/*! \brief Frees an owned copy (a field at a time, so a partly built one too) and clears it. */
void k8s_watcher_conf_free(k8s_watcher_conf_t *conf);

/*!
 * \brief Sets a K8S_WCONF_STR field of an owned copy to a copy of \a value.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the field is unchanged)
 */
int k8s_watcher_conf_set_str(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f,
                             const char *value);

/*!
 * \brief Appends a copy of \a value to a K8S_WCONF_STRLIST field of an owned copy.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the list is unchanged)
 */
int k8s_watcher_conf_add_str(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f,
                             const char *value);

/*! \brief Sets a K8S_WCONF_BOOL field. */
void k8s_watcher_conf_set_bool(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f, bool value);

/*! \brief Sets a K8S_WCONF_UINT field. */
void k8s_watcher_conf_set_uint(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f,
                               unsigned value);

