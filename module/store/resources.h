/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The resources the watcher reads: one row per source.
 *
 * A source is one collection read by one reflector into the store. It names
 * its kind (how its objects decode, objects.c), where the API serves it, which
 * selectors narrow it, which zone needs turn it on and which zone roles wait
 * for its first LIST. A kind may be read by several sources: EndpointSlices
 * are read twice, the cluster's own and the imported ones, with selectors
 * that split them.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kinds/objects.h"

/*! \brief Where objects come from: one reflector each, one row of k8s_resources. */
typedef enum {
	K8S_SRC_NAMESPACES = 0,
	K8S_SRC_SERVICES,
	K8S_SRC_SLICES,        /*!< Cluster-local EndpointSlices. */
	K8S_SRC_PODS,
	K8S_SRC_IMPORTS,       /*!< ServiceImports. */
	K8S_SRC_MCS_SLICES,    /*!< Imported EndpointSlices (multicluster labels). */
	K8S_SRC_CLUSTERPROPS,  /*!< ClusterProperties. */
	K8S_SRC_NODES,         /*!< Nodes (the federation topology). */
	K8S_SRC_KUBEDNS_CM,    /*!< kube-dns's ConfigMap (kube-system/kube-dns), for the forwarder. */
	K8S_SRC_HOSTS_CM,      /*!< The ConfigMap of hosts-configmap, for the hosts table. */
	K8S_SRC_COUNT
} k8s_source_t;

/*! \brief What a zone needs watched beyond services, slices and namespaces. */
enum {
	K8S_NEED_PODS = 1 << 0,        /*!< Pod IPs (verified pod records, autopath). */
	K8S_NEED_CLUSTERSET = 1 << 1,  /*!< ServiceImports, imported slices, cluster id. */
	K8S_NEED_NODES = 1 << 2,       /*!< Nodes: the topology of federation names. */
	K8S_NEED_KUBEDNS_CM = 1 << 3,  /*!< kube-dns's ConfigMap (kube-dns-config). */
	K8S_NEED_HOSTS_CM = 1 << 4,    /*!< The hosts ConfigMap (hosts-configmap). */
};

/*! \brief Watch settings that turn a needed source off. */
enum {
	K8S_OFF_NO_ENDPOINTS = 1 << 0, /*!< The no-endpoints option: no EndpointSlices. */
	K8S_OFF_CLUSTER_ID = 1 << 1,   /*!< A configured cluster id: no ClusterProperty. */
};

/*! \brief Watch settings a selector takes its value from. */
typedef enum {
	K8S_SEL_NONE = 0,
	K8S_SEL_LABELS,                /*!< The labels option. */
	K8S_SEL_NAMESPACE_LABELS,      /*!< The namespace-labels option. */
	K8S_SEL_NODE_NAME,             /*!< The node-name option. */
	K8S_SEL_HOSTS_CM_NS,           /*!< hosts-configmap's namespace. */
	K8S_SEL_HOSTS_CM_NAME,         /*!< hosts-configmap's name. */
	K8S_SEL_COUNT
} k8s_sel_opt_t;

/*! \brief kube-dns's ConfigMap, where kube-dns reads it (its --config-map defaults). */
#define K8S_KUBEDNS_CM_NAMESPACE "kube-system"
#define K8S_KUBEDNS_CM_NAME "kube-dns"

/*! \brief The ClusterProperty holding the local cluster id (KEP-2149). */
#define K8S_CLUSTER_ID_PROPERTY "cluster.clusterset.k8s.io"

/*! \brief One source. */
typedef struct {
	const char *name;            /*!< Lowercase, for logs and counters ("endpointslices"). */
	k8s_kind_t kind;             /*!< What its objects decode as; the plural is the kind's. */
	const char *group;           /*!< API group, "" for the core group. */
	const char *versions[2];     /*!< Version, then one tried after a 404 (or NULL). */
	bool optional;               /*!< A CRD that may be absent: a 404 lists as empty. */
	unsigned need;               /*!< K8S_NEED_* bits that turn it on; 0: always watched. */
	unsigned off;                /*!< K8S_OFF_* settings that turn it off. */
	uint32_t ready;              /*!< K8S_READY_* zone roles that wait for its first LIST. */
	const char *labels;          /*!< Label selector, or NULL... */
	k8s_sel_opt_t labels_opt;        /*!< ...joined by a comma with this setting when it is set. */
	const char *fields;          /*!< Field selector, or NULL; with fields_opt, its prefix... */
	k8s_sel_opt_t fields_opt;        /*!< ...to this setting, and no selector without the setting. */
	const char *ns;              /*!< One namespace's collection (a Role suffices), or NULL: all... */
	k8s_sel_opt_t ns_opt;            /*!< ...or the namespace this setting names. */
	/*!
	 * Read for the glue's threads (k8s_configmaps_*()), not for records: no zone waits
	 * for it (readiness, the snapshot's staleness and first write), and a 403 is no
	 * error but "not permitted", its readers' fallback, asked again every
	 * crd-retry-interval (k8s_reflector_conf_t.forbidden_absent).
	 */
	bool aside;
} k8s_resource_t;

/*! \brief The sources, by k8s_source_t. */
extern const k8s_resource_t k8s_resources[K8S_SRC_COUNT];

/*! \brief Lowercase name of a source, for logs and counters; "unknown" out of range. */
const char *k8s_resource_name(unsigned src);

/*!
 * \brief Whether a source is watched for zones with \a needs.
 *
 * \param off  K8S_OFF_* settings in force.
 */
bool k8s_resource_wanted(unsigned src, unsigned needs, unsigned off);

/*!
 * \brief Writes the collection path of a source's \a version-th version
 * ("/api/v1/pods", "/apis/discovery.k8s.io/v1/endpointslices",
 * "/api/v1/namespaces/kube-system/configmaps").
 *
 * \param opts  Values of the settings by k8s_sel_opt_t, NULL where unset.
 *
 * \retval KNOT_EOK     written.
 * \retval KNOT_ENOENT  no such version, or the setting naming its namespace is unset.
 * \retval KNOT_ESPACE  \a size is too small.
 */
int k8s_resource_path(unsigned src, unsigned version, const char *const opts[K8S_SEL_COUNT],
                      char *out, size_t size);

/*!
 * \brief Writes a source's label and field selectors ("" for none), cut to the
 * buffers' sizes as snprintf() cuts.
 *
 * \param opts  Values of the settings by k8s_sel_opt_t, NULL where unset.
 */
void k8s_resource_selectors(unsigned src, const char *const opts[K8S_SEL_COUNT],
                           char *labels, size_t labels_size, char *fields, size_t fields_size);
