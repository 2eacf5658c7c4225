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

#include <libknot/errcode.h>

#include "store/resources.h"
#include "table/table.h"

/*! Imported slices carry it; the cluster's own slices do not (KEP-1645). */
#define MCS_SERVICE_LABEL "multicluster.kubernetes.io/service-name"

const k8s_resource_t k8s_resources[K8S_SRC_COUNT] = {
	[K8S_SRC_NAMESPACES] = {
		.name = "namespaces", .kind = K8S_NAMESPACE, .group = "", .versions = { "v1" },
		.ready = K8S_READY_CLUSTER | K8S_READY_CLUSTERSET,
		.labels_opt = K8S_SEL_NAMESPACE_LABELS,
	},
	[K8S_SRC_SERVICES] = {
		.name = "services", .kind = K8S_SERVICE, .group = "", .versions = { "v1" },
		.ready = K8S_READY_CLUSTER,
		.labels_opt = K8S_SEL_LABELS,
	},
	[K8S_SRC_SLICES] = {
		.name = "endpointslices", .kind = K8S_ENDPOINTSLICE,
		.group = "discovery.k8s.io", .versions = { "v1" },
		.off = K8S_OFF_NO_ENDPOINTS,
		.ready = K8S_READY_CLUSTER,
		// Imported slices belong to the clusterset zone only.
		.labels = "!" MCS_SERVICE_LABEL, .labels_opt = K8S_SEL_LABELS,
	},
	[K8S_SRC_PODS] = {
		.name = "pods", .kind = K8S_POD, .group = "", .versions = { "v1" },
		.need = K8S_NEED_PODS,
		.ready = K8S_READY_CLUSTER,
		.labels_opt = K8S_SEL_LABELS,
		// Finished pods give no records (CoreDNS uses the same selector).
		.fields = "status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown",
	},
	[K8S_SRC_IMPORTS] = {
		.name = "serviceimports", .kind = K8S_SERVICEIMPORT,
		.group = "multicluster.x-k8s.io", .versions = { "v1alpha1", "v1beta1" },
		.optional = true,
		.need = K8S_NEED_CLUSTERSET,
		.ready = K8S_READY_CLUSTERSET,
	},
	[K8S_SRC_MCS_SLICES] = {
		.name = "imported-endpointslices", .kind = K8S_ENDPOINTSLICE,
		.group = "discovery.k8s.io", .versions = { "v1" },
		.need = K8S_NEED_CLUSTERSET,
		.off = K8S_OFF_NO_ENDPOINTS,
		.ready = K8S_READY_CLUSTERSET,
		.labels = MCS_SERVICE_LABEL,
	},
	[K8S_SRC_CLUSTERPROPS] = {
		.name = "clusterproperties", .kind = K8S_CLUSTERPROPERTY,
		.group = "about.k8s.io", .versions = { "v1alpha1", "v1beta1" },
		.optional = true,
		.need = K8S_NEED_CLUSTERSET,
		.off = K8S_OFF_CLUSTER_ID,
		.ready = K8S_READY_CLUSTERSET,
		.fields = "metadata.name=" K8S_CLUSTER_ID_PROPERTY,
	},
	[K8S_SRC_NODES] = {
		.name = "nodes", .kind = K8S_NODE, .group = "", .versions = { "v1" },
		.need = K8S_NEED_NODES,
		// Only the configured node's topology counts: no other node is read.
		.fields = "metadata.name=", .fields_opt = K8S_SEL_NODE_NAME,
	},
	// The named ConfigMaps only, each in its namespace: a Role there allows it.
	[K8S_SRC_KUBEDNS_CM] = {
		.name = "kube-dns-configmap", .kind = K8S_CONFIGMAP, .group = "", .versions = { "v1" },
		.need = K8S_NEED_KUBEDNS_CM,
		.fields = "metadata.name=" K8S_KUBEDNS_CM_NAME, .ns = K8S_KUBEDNS_CM_NAMESPACE,
		.aside = true,
	},
	[K8S_SRC_HOSTS_CM] = {
		.name = "hosts-configmap", .kind = K8S_CONFIGMAP, .group = "", .versions = { "v1" },
		.need = K8S_NEED_HOSTS_CM,
		.fields = "metadata.name=", .fields_opt = K8S_SEL_HOSTS_CM_NAME,
		.ns_opt = K8S_SEL_HOSTS_CM_NS,
		.aside = true,
	},
};

const char *k8s_resource_name(unsigned src)
{
	return (src < K8S_SRC_COUNT) ? k8s_resources[src].name : "unknown";
}

bool k8s_resource_wanted(unsigned src, unsigned needs, unsigned off)
{
	if (src >= K8S_SRC_COUNT) {
		return false;
	}
	const k8s_resource_t *r = &k8s_resources[src];
	return (needs & r->need) == r->need && (off & r->off) == 0;
}

int k8s_resource_path(unsigned src, unsigned version, const char *const opts[K8S_SEL_COUNT],
                      char *out, size_t size)
{
	if (src >= K8S_SRC_COUNT || version >= 2 || k8s_resources[src].versions[version] == NULL) {
		return KNOT_ENOENT;
	}
	const k8s_resource_t *r = &k8s_resources[src];
	const char *ns = (r->ns_opt != K8S_SEL_NONE) ? opts[r->ns_opt] : r->ns;
	if (r->ns_opt != K8S_SEL_NONE && ns == NULL) {
		return KNOT_ENOENT;
	}
	char group[128];
	int len = (r->group[0] == '\0')
	          ? snprintf(group, sizeof(group), "/api/%s", r->versions[version])
	          : snprintf(group, sizeof(group), "/apis/%s/%s", r->group, r->versions[version]);
	if (len < 0 || (size_t)len >= sizeof(group)) {
		return KNOT_ESPACE;
	}
	len = (ns != NULL)
	      ? snprintf(out, size, "%s/namespaces/%s/%s", group, ns, k8s_kind_name(r->kind))
	      : snprintf(out, size, "%s/%s", group, k8s_kind_name(r->kind));
	return (len >= 0 && (size_t)len < size) ? KNOT_EOK : KNOT_ESPACE;
}

void k8s_resource_selectors(unsigned src, const char *const opts[K8S_SEL_COUNT],
                            char *labels, size_t labels_size, char *fields, size_t fields_size)
{
	labels[0] = '\0';
	fields[0] = '\0';
	if (src >= K8S_SRC_COUNT) {
		return;
	}
	const k8s_resource_t *r = &k8s_resources[src];
	const char *fixed = (r->labels != NULL) ? r->labels : "";
	const char *opt = opts[r->labels_opt];
	if (r->labels_opt != K8S_SEL_NONE && opt != NULL) {
		snprintf(labels, labels_size, "%s%s%s", fixed, (fixed[0] != '\0') ? "," : "", opt);
	} else {
		snprintf(labels, labels_size, "%s", fixed);
	}
	if (r->fields_opt == K8S_SEL_NONE) {
		snprintf(fields, fields_size, "%s", (r->fields != NULL) ? r->fields : "");
	} else if (opts[r->fields_opt] != NULL) {
		snprintf(fields, fields_size, "%s%s", r->fields, opts[r->fields_opt]);
	}
}
