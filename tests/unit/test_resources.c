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

/*
 * The resource table (module/store/resources.c): what each source reads, with which
 * selectors, when, and who waits for it. The expected values are those the
 * watcher used before the table held them.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "store/resources.h"
#include "table/table.h"
#include "watch/watcher.h"

static const char *path_of(unsigned src, unsigned version)
{
	static char out[256];
	const char *opts[K8S_SEL_COUNT] = { [K8S_SEL_HOSTS_CM_NS] = "kube-system" };
	return (k8s_resource_path(src, version, opts, out, sizeof(out)) == KNOT_EOK) ? out : NULL;
}

static void paths_are_the_api_collections(void **state)
{
	static const char *const want[K8S_SRC_COUNT][2] = {
		[K8S_SRC_NAMESPACES] = { "/api/v1/namespaces" },
		[K8S_SRC_SERVICES] = { "/api/v1/services" },
		[K8S_SRC_SLICES] = { "/apis/discovery.k8s.io/v1/endpointslices" },
		[K8S_SRC_PODS] = { "/api/v1/pods" },
		[K8S_SRC_IMPORTS] = { "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports",
		                      "/apis/multicluster.x-k8s.io/v1beta1/serviceimports" },
		[K8S_SRC_MCS_SLICES] = { "/apis/discovery.k8s.io/v1/endpointslices" },
		[K8S_SRC_CLUSTERPROPS] = { "/apis/about.k8s.io/v1alpha1/clusterproperties",
		                           "/apis/about.k8s.io/v1beta1/clusterproperties" },
		[K8S_SRC_NODES] = { "/api/v1/nodes" },
		// One namespace's collection: a Role there is all they need.
		[K8S_SRC_KUBEDNS_CM] = { "/api/v1/namespaces/kube-system/configmaps" },
		[K8S_SRC_HOSTS_CM] = { "/api/v1/namespaces/kube-system/configmaps" },
	};
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		for (unsigned v = 0; v < 2; v++) {
			const char *have = path_of(src, v);
			if (want[src][v] == NULL) {
				assert_null(have);
			} else {
				assert_non_null(have);
				assert_string_equal(have, want[src][v]);
			}
		}
		// Only custom resources may be absent.
		assert_int_equal(k8s_resources[src].optional, want[src][1] != NULL);
	}
	assert_null(path_of(K8S_SRC_COUNT, 0));
	const char *none[K8S_SEL_COUNT] = { NULL };
	char small[8], out[256];
	assert_int_equal(k8s_resource_path(K8S_SRC_SERVICES, 0, none, small, sizeof(small)),
	                 KNOT_ESPACE);
	// The hosts ConfigMap's namespace is a setting's: without it, no path.
	assert_int_equal(k8s_resource_path(K8S_SRC_HOSTS_CM, 0, none, out, sizeof(out)),
	                 KNOT_ENOENT);
	const char *other[K8S_SEL_COUNT] = { [K8S_SEL_HOSTS_CM_NS] = "dns" };
	assert_int_equal(k8s_resource_path(K8S_SRC_HOSTS_CM, 0, other, out, sizeof(out)), KNOT_EOK);
	assert_string_equal(out, "/api/v1/namespaces/dns/configmaps");
}

static void names_name_sources_and_kinds(void **state)
{
	static const char *const want[K8S_SRC_COUNT] = {
		"namespaces", "services", "endpointslices", "pods", "serviceimports",
		"imported-endpointslices", "clusterproperties", "nodes", "kube-dns-configmap",
		"hosts-configmap",
	};
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		assert_string_equal(k8s_resource_name(src), want[src]);
	}
	assert_string_equal(k8s_resource_name(K8S_SRC_COUNT), "unknown");
	assert_int_equal(k8s_resources[K8S_SRC_SLICES].kind, K8S_ENDPOINTSLICE);
	assert_int_equal(k8s_resources[K8S_SRC_MCS_SLICES].kind, K8S_ENDPOINTSLICE);
	assert_int_equal(k8s_resources[K8S_SRC_KUBEDNS_CM].kind, K8S_CONFIGMAP);
	assert_int_equal(k8s_resources[K8S_SRC_HOSTS_CM].kind, K8S_CONFIGMAP);
}

static void selectors(unsigned src, const char *labels, const char *namespace_labels,
                      const char *node_name, const char *want_labels, const char *want_fields)
{
	const char *opts[K8S_SEL_COUNT] = {
		[K8S_SEL_LABELS] = labels,
		[K8S_SEL_NAMESPACE_LABELS] = namespace_labels,
		[K8S_SEL_NODE_NAME] = node_name,
		[K8S_SEL_HOSTS_CM_NS] = "kube-system",
		[K8S_SEL_HOSTS_CM_NAME] = "coredns",
	};
	char have_labels[1024], have_fields[300];
	k8s_resource_selectors(src, opts, have_labels, sizeof(have_labels),
	                       have_fields, sizeof(have_fields));
	assert_string_equal(have_labels, want_labels);
	assert_string_equal(have_fields, want_fields);
}

static void selectors_take_the_watch_settings(void **state)
{
	const char *pods = "status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown";
	const char *mcs = "multicluster.kubernetes.io/service-name";

	// Without settings.
	selectors(K8S_SRC_NAMESPACES, NULL, NULL, NULL, "", "");
	selectors(K8S_SRC_SERVICES, NULL, NULL, NULL, "", "");
	selectors(K8S_SRC_SLICES, NULL, NULL, NULL, "!multicluster.kubernetes.io/service-name", "");
	selectors(K8S_SRC_PODS, NULL, NULL, NULL, "", pods);
	selectors(K8S_SRC_IMPORTS, NULL, NULL, NULL, "", "");
	selectors(K8S_SRC_MCS_SLICES, NULL, NULL, NULL, mcs, "");
	selectors(K8S_SRC_CLUSTERPROPS, NULL, NULL, NULL, "",
	          "metadata.name=cluster.clusterset.k8s.io");
	selectors(K8S_SRC_NODES, NULL, NULL, NULL, "", "");
	// The named ConfigMaps only, whatever the labels.
	selectors(K8S_SRC_KUBEDNS_CM, NULL, NULL, NULL, "", "metadata.name=kube-dns");
	selectors(K8S_SRC_HOSTS_CM, NULL, NULL, NULL, "", "metadata.name=coredns");

	// labels: services, the cluster's slices and pods; namespace-labels: namespaces.
	const char *l = "app=web", *nl = "team=a", *node = "node-1";
	selectors(K8S_SRC_NAMESPACES, l, nl, node, "team=a", "");
	selectors(K8S_SRC_SERVICES, l, nl, node, "app=web", "");
	selectors(K8S_SRC_SLICES, l, nl, node, "!multicluster.kubernetes.io/service-name,app=web", "");
	selectors(K8S_SRC_PODS, l, nl, node, "app=web", pods);
	selectors(K8S_SRC_IMPORTS, l, nl, node, "", "");
	selectors(K8S_SRC_MCS_SLICES, l, nl, node, mcs, "");
	selectors(K8S_SRC_CLUSTERPROPS, l, nl, node, "", "metadata.name=cluster.clusterset.k8s.io");
	selectors(K8S_SRC_NODES, l, nl, node, "", "metadata.name=node-1");
	selectors(K8S_SRC_KUBEDNS_CM, l, nl, node, "", "metadata.name=kube-dns");
	selectors(K8S_SRC_HOSTS_CM, l, nl, node, "", "metadata.name=coredns");

	// An empty labels setting still joins the slices' selector, as before the table.
	selectors(K8S_SRC_SLICES, "", NULL, NULL, "!multicluster.kubernetes.io/service-name,", "");
}

static void needs_and_settings_turn_sources_on_and_off(void **state)
{
	const unsigned all = K8S_NEED_PODS | K8S_NEED_CLUSTERSET | K8S_NEED_NODES;
	for (unsigned src = K8S_SRC_NAMESPACES; src <= K8S_SRC_SERVICES; src++) {
		assert_true(k8s_resource_wanted(src, 0, K8S_OFF_NO_ENDPOINTS | K8S_OFF_CLUSTER_ID));
	}
	assert_true(k8s_resource_wanted(K8S_SRC_SLICES, 0, 0));
	assert_false(k8s_resource_wanted(K8S_SRC_SLICES, all, K8S_OFF_NO_ENDPOINTS));
	assert_false(k8s_resource_wanted(K8S_SRC_PODS, all & ~K8S_NEED_PODS, 0));
	assert_true(k8s_resource_wanted(K8S_SRC_PODS, K8S_NEED_PODS, K8S_OFF_NO_ENDPOINTS));
	assert_false(k8s_resource_wanted(K8S_SRC_IMPORTS, all & ~K8S_NEED_CLUSTERSET, 0));
	assert_true(k8s_resource_wanted(K8S_SRC_IMPORTS, K8S_NEED_CLUSTERSET,
	                                K8S_OFF_NO_ENDPOINTS | K8S_OFF_CLUSTER_ID));
	assert_true(k8s_resource_wanted(K8S_SRC_MCS_SLICES, K8S_NEED_CLUSTERSET, K8S_OFF_CLUSTER_ID));
	assert_false(k8s_resource_wanted(K8S_SRC_MCS_SLICES, K8S_NEED_CLUSTERSET, K8S_OFF_NO_ENDPOINTS));
	assert_false(k8s_resource_wanted(K8S_SRC_MCS_SLICES, all & ~K8S_NEED_CLUSTERSET, 0));
	assert_true(k8s_resource_wanted(K8S_SRC_CLUSTERPROPS, K8S_NEED_CLUSTERSET, K8S_OFF_NO_ENDPOINTS));
	assert_false(k8s_resource_wanted(K8S_SRC_CLUSTERPROPS, K8S_NEED_CLUSTERSET, K8S_OFF_CLUSTER_ID));
	assert_false(k8s_resource_wanted(K8S_SRC_NODES, all & ~K8S_NEED_NODES, 0));
	assert_true(k8s_resource_wanted(K8S_SRC_NODES, K8S_NEED_NODES, K8S_OFF_NO_ENDPOINTS));
	// The ConfigMaps: only for the options that name them.
	assert_false(k8s_resource_wanted(K8S_SRC_KUBEDNS_CM, all, 0));
	assert_true(k8s_resource_wanted(K8S_SRC_KUBEDNS_CM, K8S_NEED_KUBEDNS_CM, K8S_OFF_NO_ENDPOINTS));
	assert_false(k8s_resource_wanted(K8S_SRC_HOSTS_CM, all | K8S_NEED_KUBEDNS_CM, 0));
	assert_true(k8s_resource_wanted(K8S_SRC_HOSTS_CM, K8S_NEED_HOSTS_CM, K8S_OFF_CLUSTER_ID));
	assert_false(k8s_resource_wanted(K8S_SRC_COUNT, all, 0));
}

static void zone_roles_wait_for_their_sources(void **state)
{
	static const uint32_t want[K8S_SRC_COUNT] = {
		[K8S_SRC_NAMESPACES] = K8S_READY_CLUSTER | K8S_READY_CLUSTERSET,
		[K8S_SRC_SERVICES] = K8S_READY_CLUSTER,
		[K8S_SRC_SLICES] = K8S_READY_CLUSTER,
		[K8S_SRC_PODS] = K8S_READY_CLUSTER,
		[K8S_SRC_IMPORTS] = K8S_READY_CLUSTERSET,
		[K8S_SRC_MCS_SLICES] = K8S_READY_CLUSTERSET,
		[K8S_SRC_CLUSTERPROPS] = K8S_READY_CLUSTERSET,
		[K8S_SRC_NODES] = 0, // Federation names never hold the cluster zone back.
		[K8S_SRC_KUBEDNS_CM] = 0, // Nor the ConfigMaps, read aside.
		[K8S_SRC_HOSTS_CM] = 0,
	};
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		assert_int_equal(k8s_resources[src].ready, want[src]);
		// Read aside: ConfigMaps only.
		assert_int_equal(k8s_resources[src].aside, k8s_resources[src].kind == K8S_CONFIGMAP);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths_are_the_api_collections),
		cmocka_unit_test(names_name_sources_and_kinds),
		cmocka_unit_test(selectors_take_the_watch_settings),
		cmocka_unit_test(needs_and_settings_turn_sources_on_and_off),
		cmocka_unit_test(zone_roles_wait_for_their_sources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
