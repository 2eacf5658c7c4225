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
 * The object store: API objects (decoded from JSON, as the reflectors hand
 * them over) in, published record blocks out.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "table/records.h"
#include "lib/rfc3339.h"
#include "store/store.h"
#include "store/topology.h"

static k8s_table_t table;
static k8s_store_t *store;

static k8s_object_t *decode(k8s_kind_t kind, const char *json)
{
	k8s_object_t *obj = NULL;
	char err[256];
	int ret = k8s_object_decode(kind, json, strlen(json), &obj, err, sizeof(err));
	if (ret != KNOT_EOK) {
		fail_msg("decode failed: %s (%s)", err, json);
	}
	return obj;
}

static void upsert(unsigned src, k8s_kind_t kind, const char *json)
{
	k8s_store_upsert(store, src, decode(kind, json));
}

static void remove_obj(unsigned src, k8s_kind_t kind, const char *json)
{
	k8s_store_remove(store, src, decode(kind, json));
}

#define NS(name) "{\"metadata\":{\"name\":\"" name "\"}}"
#define SVC(ns, name, ip) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\"}," \
	"\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":\"" ip "\",\"clusterIPs\":[\"" ip "\"]," \
	"\"ports\":[{\"name\":\"http\",\"port\":80,\"protocol\":\"TCP\"}]}}"
#define HEADLESS(ns, name) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\"}," \
	"\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"]}}"
#define SLICE(ns, name, svc, ip, host) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\"," \
	"\"labels\":{\"kubernetes.io/service-name\":\"" svc "\"}},\"addressType\":\"IPv4\"," \
	"\"endpoints\":[{\"addresses\":[\"" ip "\"],\"conditions\":{\"ready\":true},\"hostname\":\"" host "\"}]," \
	"\"ports\":[{\"name\":\"http\",\"port\":8080,\"protocol\":\"TCP\"}]}"

#define NODE(name, zone, region) "{\"metadata\":{\"name\":\"" name "\",\"labels\":{" \
	"\"topology.kubernetes.io/zone\":\"" zone "\",\"topology.kubernetes.io/region\":\"" region "\"}}}"
#define BARE_NODE(name) "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"kubernetes.io/os\":\"linux\"}}}"

static int setup(void **state)
{
	urcu_memb_register_thread();
	assert_int_equal(k8s_table_init(&table), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	store = k8s_store_new(&table, &conf, NULL);
	assert_non_null(store);
	return 0;
}

static int teardown(void **state)
{
	k8s_store_free(store);
	urcu_memb_barrier();
	k8s_table_deinit(&table);
	urcu_memb_unregister_thread();
	return 0;
}

static const k8s_block_t *svc(k8s_zone_t zone, const char *ns, const char *name)
{
	uint8_t owner[128];
	size_t len = k8s_svc_owner(ns, name, owner);
	return k8s_table_block(&table, zone, owner, len);
}

static size_t endpoints(const k8s_block_t *s)
{
	return s->addr_count - s->sip_count;
}

static void a_service_is_published_at_commit(void **state)
{
	upsert(K8S_SRC_NAMESPACES, K8S_NAMESPACE, NS("shop"));
	upsert(K8S_SRC_SERVICES, K8S_SERVICE, SVC("shop", "web", "10.96.0.20"));
	assert_null(svc(K8S_ZONE_CLUSTER, "shop", "web"));
	assert_true(k8s_store_dirty(store));
	assert_int_equal(k8s_store_commit(store, 0), 1);
	const k8s_block_t *s = svc(K8S_ZONE_CLUSTER, "shop", "web");
	assert_non_null(s);
	assert_int_equal(s->rrs_a.count, 1);
	assert_true(k8s_table_ns(&table, (const uint8_t *)"\x04shop"));
}

static void a_slice_joins_its_service(void **state)
{
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-1", "web", "10.244.0.1", "a"));
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-2", "web", "10.244.0.2", "b"));
	assert_int_equal(k8s_store_commit(store, 0), 1);
	assert_int_equal(endpoints(svc(K8S_ZONE_CLUSTER, "shop", "web")), 2);
}

static void an_unchanged_update_publishes_nothing(void **state)
{
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-1", "web", "10.244.0.1", "a"));
	assert_false(k8s_store_dirty(store));
	assert_int_equal(k8s_store_commit(store, 0), 0);
}

static void one_changed_slice_rebuilds_only_its_service(void **state)
{
	upsert(K8S_SRC_SERVICES, K8S_SERVICE, SVC("shop", "api", "10.96.0.21"));
	k8s_store_commit(store, 0);
	const k8s_block_t *api = svc(K8S_ZONE_CLUSTER, "shop", "api");
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-1", "web", "10.244.0.9", "a"));
	assert_int_equal(k8s_store_commit(store, 0), 1);
	// The other service's block is the very same memory.
	assert_ptr_equal(svc(K8S_ZONE_CLUSTER, "shop", "api"), api);
}

static void a_slice_moving_to_another_service_leaves_the_first(void **state)
{
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-2", "api", "10.244.0.2", "b"));
	assert_int_equal(k8s_store_commit(store, 0), 2);
	assert_int_equal(endpoints(svc(K8S_ZONE_CLUSTER, "shop", "web")), 1);
	assert_int_equal(endpoints(svc(K8S_ZONE_CLUSTER, "shop", "api")), 1);
}

static void a_deleted_service_takes_its_records_at_once(void **state)
{
	remove_obj(K8S_SRC_SERVICES, K8S_SERVICE, SVC("shop", "api", "10.96.0.21"));
	k8s_store_commit(store, 0);
	assert_null(svc(K8S_ZONE_CLUSTER, "shop", "api"));
	k8s_ip_t ip = { .family = AF_INET, .bytes = { 10, 244, 0, 2 } };
	const k8s_addr_t *refs[4];
	assert_int_equal(k8s_table_ptr(&table, &ip, refs, 4), 0);

	// Its slices are still known: a recreated service gets them back.
	upsert(K8S_SRC_SERVICES, K8S_SERVICE, SVC("shop", "api", "10.96.0.21"));
	k8s_store_commit(store, 0);
	assert_int_equal(endpoints(svc(K8S_ZONE_CLUSTER, "shop", "api")), 1);
}

static void deleting_an_unknown_object_is_no_news(void **state)
{
	remove_obj(K8S_SRC_SERVICES, K8S_SERVICE, SVC("shop", "ghost", "10.96.0.99"));
	assert_false(k8s_store_dirty(store));
}

static void a_relist_removes_what_it_did_not_return(void **state)
{
	k8s_store_list_begin(store, K8S_SRC_SLICES);
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-1", "web", "10.244.0.9", "a"));
	k8s_store_list_end(store, K8S_SRC_SLICES);
	k8s_store_commit(store, 0);
	assert_int_equal(endpoints(svc(K8S_ZONE_CLUSTER, "shop", "web")), 1);
	assert_int_equal(endpoints(svc(K8S_ZONE_CLUSTER, "shop", "api")), 0);
	assert_int_equal(k8s_store_stats(store)->objects[K8S_SRC_SLICES], 1);
}

static void headless_endpoints_become_answers(void **state)
{
	upsert(K8S_SRC_SERVICES, K8S_SERVICE, HEADLESS("shop", "db"));
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "db-x", "db", "10.244.1.1", "db-0"));
	k8s_store_commit(store, 0);
	const k8s_block_t *db = svc(K8S_ZONE_CLUSTER, "shop", "db");
	assert_int_equal(db->type, K8S_SVC_HEADLESS);
	assert_int_equal(db->rrs_a.count, 1);
	assert_int_equal(db->port_count, 1);
}

static void programming_latency_is_measured_from_the_trigger_time(void **state)
{
	// Items of a LIST are old news; a watched change is measured.
	k8s_store_list_begin(store, K8S_SRC_SLICES);
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, SLICE("shop", "web-1", "web", "10.244.0.9", "a"));
	k8s_store_list_end(store, K8S_SRC_SLICES);
	const char *json = "{\"metadata\":{\"name\":\"db-x\",\"namespace\":\"shop\","
		"\"labels\":{\"kubernetes.io/service-name\":\"db\"},"
		"\"annotations\":{\"endpoints.kubernetes.io/last-change-trigger-time\":\"2026-01-01T00:00:00Z\"}},"
		"\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.244.1.2\"]}]}";
	upsert(K8S_SRC_SLICES, K8S_ENDPOINTSLICE, json);
	int64_t trigger = k8s_rfc3339_parse("2026-01-01T00:00:00Z");
	k8s_store_commit(store, trigger + 3 * 1000000);  // 3 ms later
	const k8s_store_stats_t *st = k8s_store_stats(store);
	assert_int_equal(st->latency[2], 1);  // The <= 4 ms bucket.
	uint64_t total = 0;
	for (int i = 0; i < K8S_LATENCY_BUCKETS; i++) {
		total += st->latency[i];
	}
	assert_int_equal(total, 1);
	assert_int_equal(st->latency_sum_us, 3000);  // The histogram's _sum (metrics).
}

static void imported_slices_feed_the_clusterset_zone_only(void **state)
{
	upsert(K8S_SRC_IMPORTS, K8S_SERVICEIMPORT,
	       "{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\"},"
	       "\"spec\":{\"type\":\"Headless\",\"ports\":[{\"name\":\"pg\",\"port\":5432}]}}");
	upsert(K8S_SRC_MCS_SLICES, K8S_ENDPOINTSLICE,
	       "{\"metadata\":{\"name\":\"db-east\",\"namespace\":\"shop\",\"labels\":{"
	       "\"multicluster.kubernetes.io/service-name\":\"db\","
	       "\"multicluster.kubernetes.io/source-cluster\":\"east\"}},"
	       "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.245.0.1\"],\"hostname\":\"db-0\"}]}");
	k8s_store_commit(store, 0);
	const k8s_block_t *imp = svc(K8S_ZONE_CLUSTERSET, "shop", "db");
	assert_non_null(imp);
	assert_int_equal(endpoints(imp), 1);
	assert_int_equal(imp->cluster_count, 1);
	// The cluster-local service of the same name keeps its own records.
	assert_int_equal(svc(K8S_ZONE_CLUSTER, "shop", "db")->rrs_a.count, 1);
}

static void the_cluster_id_comes_from_the_cluster_property(void **state)
{
	assert_string_equal(k8s_store_cluster_id(store), "");
	upsert(K8S_SRC_CLUSTERPROPS, K8S_CLUSTERPROPERTY,
	       "{\"metadata\":{\"name\":\"cluster.clusterset.k8s.io\"},\"spec\":{\"value\":\"west\"}}");
	assert_string_equal(k8s_store_cluster_id(store), "west");
	k8s_store_commit(store, 0);
}

static void a_cluster_property_without_value_leaves_no_cluster_id(void **state)
{
	// The CRD requires a value; an older CRD or a hand-made object may still lack it.
	upsert(K8S_SRC_CLUSTERPROPS, K8S_CLUSTERPROPERTY,
	       "{\"metadata\":{\"name\":\"cluster.clusterset.k8s.io\"},\"spec\":{}}");
	assert_string_equal(k8s_store_cluster_id(store), "");
	// Cluster ids are DNS labels: compared as the lowercase labels of the imports.
	upsert(K8S_SRC_CLUSTERPROPS, K8S_CLUSTERPROPERTY,
	       "{\"metadata\":{\"name\":\"cluster.clusterset.k8s.io\"},\"spec\":{\"value\":\"West\"}}");
	assert_string_equal(k8s_store_cluster_id(store), "west");
	k8s_store_commit(store, 0);
}

static void a_locally_exported_service_joins_its_import_under_the_local_cluster_id(void **state)
{
	// The import says west (this cluster) exports db too; no imported slice carries west's endpoints.
	upsert(K8S_SRC_IMPORTS, K8S_SERVICEIMPORT,
	       "{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\"},"
	       "\"spec\":{\"type\":\"Headless\",\"ports\":[{\"name\":\"pg\",\"port\":5432}]},"
	       "\"status\":{\"clusters\":[{\"cluster\":\"east\"},{\"cluster\":\"west\"}]}}");
	k8s_store_commit(store, 0);
	const k8s_block_t *imp = svc(K8S_ZONE_CLUSTERSET, "shop", "db");
	assert_int_equal(imp->cluster_count, 2);
	assert_int_equal(endpoints(imp), 2);

	// Once the MCS controller mirrors west's endpoints, they are not counted twice.
	upsert(K8S_SRC_MCS_SLICES, K8S_ENDPOINTSLICE,
	       "{\"metadata\":{\"name\":\"db-west\",\"namespace\":\"shop\",\"labels\":{"
	       "\"multicluster.kubernetes.io/service-name\":\"db\","
	       "\"multicluster.kubernetes.io/source-cluster\":\"west\"}},"
	       "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.244.1.2\"]}]}");
	k8s_store_commit(store, 0);
	imp = svc(K8S_ZONE_CLUSTERSET, "shop", "db");
	assert_int_equal(endpoints(imp), 2);
	assert_int_equal(imp->cluster_count, 2);
}

static void namespaces_not_exposed_are_dropped(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	const char *exposed[] = { "shop" };
	k8s_store_conf_t conf = { .namespaces = exposed, .namespace_count = 1 };
	k8s_store_t *s = k8s_store_new(&t, &conf, NULL);
	k8s_store_upsert(s, K8S_SRC_NAMESPACES, decode(K8S_NAMESPACE, NS("secret")));
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, SVC("secret", "x", "10.96.9.9")));
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, SVC("shop", "y", "10.96.9.8")));
	k8s_store_commit(s, 0);
	assert_int_equal(k8s_store_stats(s)->filtered, 2);
	assert_int_equal(k8s_table_stats(&t).svc_count[K8S_ZONE_CLUSTER], 1);
	k8s_store_free(s);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/*! \brief True if the table's topology is this zone and region (NULL, NULL: none). */
static bool topology_is(const k8s_table_t *t, const char *zone, const char *region)
{
	const k8s_topology_t *have = k8s_table_topology(t);
	if (zone == NULL) {
		return have == NULL;
	}
	k8s_topology_t *want = k8s_topology_new(zone, region);
	bool equal = have != NULL && have->size == want->size &&
	             memcmp(have->labels, want->labels, want->size) == 0;
	free(want);
	return equal;
}

static void the_topology_is_the_first_node_by_name_with_zone_and_region(void **state)
{
	upsert(K8S_SRC_NODES, K8S_NODE, NODE("node-c", "zone-c", "region-1"));
	upsert(K8S_SRC_NODES, K8S_NODE, BARE_NODE("node-a"));
	upsert(K8S_SRC_NODES, K8S_NODE, NODE("node-b", "zone-b", "region-1"));
	assert_true(topology_is(&table, NULL, NULL));
	assert_true(k8s_store_dirty(store));
	assert_int_equal(k8s_store_commit(store, 0), 0);  // No service block changed.
	assert_true(topology_is(&table, "zone-b", "region-1"));

	// A heartbeat (same labels) changes nothing.
	upsert(K8S_SRC_NODES, K8S_NODE, NODE("node-b", "zone-b", "region-1"));
	assert_false(k8s_store_dirty(store));

	// The chosen node's labels change, then it goes: the next one counts.
	upsert(K8S_SRC_NODES, K8S_NODE, NODE("node-b", "zone-x", "region-1"));
	k8s_store_commit(store, 0);
	assert_true(topology_is(&table, "zone-x", "region-1"));
	remove_obj(K8S_SRC_NODES, K8S_NODE, BARE_NODE("node-b"));
	k8s_store_commit(store, 0);
	assert_true(topology_is(&table, "zone-c", "region-1"));

	// No node with both labels: no topology.
	remove_obj(K8S_SRC_NODES, K8S_NODE, BARE_NODE("node-c"));
	k8s_store_commit(store, 0);
	assert_true(topology_is(&table, NULL, NULL));
	assert_int_equal(k8s_store_stats(store)->objects[K8S_SRC_NODES], 1);
}

static void the_topology_is_the_named_nodes_even_in_filtered_namespaces(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	const char *exposed[] = { "shop" };
	k8s_store_conf_t conf = { .namespaces = exposed, .namespace_count = 1, .node_name = "node-c" };
	k8s_store_t *s = k8s_store_new(&t, &conf, NULL);
	k8s_store_upsert(s, K8S_SRC_NODES, decode(K8S_NODE, NODE("node-b", "zone-b", "region-1")));
	k8s_store_upsert(s, K8S_SRC_NODES, decode(K8S_NODE, NODE("node-c", "zone-c", "region-1")));
	k8s_store_commit(s, 0);
	assert_true(topology_is(&t, "zone-c", "region-1"));

	// The named node without labels gives none, whatever the others have.
	k8s_store_upsert(s, K8S_SRC_NODES, decode(K8S_NODE, BARE_NODE("node-c")));
	k8s_store_commit(s, 0);
	assert_true(topology_is(&t, NULL, NULL));
	assert_int_equal(k8s_store_stats(s)->filtered, 0);
	k8s_store_free(s);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/* Keys of the longest names the API accepts: a namespace of 63 characters, names of 253. */

#define L10(c) c c c c c c c c c c
#define L60(c) L10(c) L10(c) L10(c) L10(c) L10(c) L10(c)
#define L63(c) L60(c) c c c
#define LONG_NS L63("n")
/* 253 characters, three labels of 63 and one of 61: the key "<ns>/<name>" has 317. */
#define LONG_NAME(last) L63("a") "." L63("b") "." L63("c") "." L60("d") last
#define LONG_POD(name, ip) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" LONG_NS "\"}," \
	"\"status\":{\"phase\":\"Running\",\"podIP\":\"" ip "\"}}"

static void pods_whose_keys_share_255_bytes_stay_distinct(void **state)
{
	assert_int_equal(strlen(LONG_NAME("x")), 253);
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *s = k8s_store_new(&t, &conf, NULL);
	const uint8_t ns[] = "\x3f" LONG_NS;
	k8s_ip_t ip1 = { .family = AF_INET, .bytes = { 10, 244, 7, 1 } };
	k8s_ip_t ip2 = { .family = AF_INET, .bytes = { 10, 244, 7, 2 } };

	k8s_store_upsert(s, K8S_SRC_PODS, decode(K8S_POD, LONG_POD(LONG_NAME("x"), "10.244.7.1")));
	k8s_store_upsert(s, K8S_SRC_PODS, decode(K8S_POD, LONG_POD(LONG_NAME("y"), "10.244.7.2")));
	assert_int_equal(k8s_store_stats(s)->objects[K8S_SRC_PODS], 2);
	assert_true(k8s_table_pod(&t, &ip1, ns));
	assert_true(k8s_table_pod(&t, &ip2, ns));

	// Deleting one leaves the other.
	k8s_store_remove(s, K8S_SRC_PODS, decode(K8S_POD, LONG_POD(LONG_NAME("y"), "10.244.7.2")));
	assert_true(k8s_table_pod(&t, &ip1, ns));
	assert_false(k8s_table_pod(&t, &ip2, ns));
	assert_int_equal(k8s_store_stats(s)->objects[K8S_SRC_PODS], 1);

	k8s_store_free(s);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void slices_whose_keys_share_255_bytes_stay_distinct(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *s = k8s_store_new(&t, &conf, NULL);
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, HEADLESS(LONG_NS, "db")));
	k8s_store_upsert(s, K8S_SRC_SLICES, decode(K8S_ENDPOINTSLICE,
	                 SLICE(LONG_NS, LONG_NAME("x"), "db", "10.244.8.1", "db-0")));
	k8s_store_upsert(s, K8S_SRC_SLICES, decode(K8S_ENDPOINTSLICE,
	                 SLICE(LONG_NS, LONG_NAME("y"), "db", "10.244.8.2", "db-1")));
	k8s_store_commit(s, 0);
	uint8_t owner[128];
	size_t len = k8s_svc_owner(LONG_NS, "db", owner);
	const k8s_block_t *db = k8s_table_block(&t, K8S_ZONE_CLUSTER, owner, len);
	assert_non_null(db);
	assert_int_equal(db->rrs_a.count, 2);

	k8s_store_remove(s, K8S_SRC_SLICES, decode(K8S_ENDPOINTSLICE,
	                 SLICE(LONG_NS, LONG_NAME("x"), "db", "10.244.8.1", "db-0")));
	k8s_store_commit(s, 0);
	db = k8s_table_block(&t, K8S_ZONE_CLUSTER, owner, len);
	assert_non_null(db);
	assert_int_equal(db->rrs_a.count, 1);
	assert_int_equal(k8s_store_stats(s)->objects[K8S_SRC_SLICES], 1);

	k8s_store_free(s);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void an_object_too_large_to_read_keeps_its_version_through_a_relist(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *s = k8s_store_new(&t, &conf, NULL);
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, SVC("big", "kept", "10.96.7.1")));
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, SVC("big", "gone", "10.96.7.2")));
	k8s_store_commit(s, 0);

	// The relist names "kept" but cannot read it; "gone" it does not return.
	k8s_store_list_begin(s, K8S_SRC_SERVICES);
	k8s_store_too_large(s, K8S_SRC_SERVICES, "big", "kept", false);
	k8s_store_list_end(s, K8S_SRC_SERVICES);
	k8s_store_commit(s, 0);
	uint8_t owner[128];
	size_t len = k8s_svc_owner("big", "kept", owner);
	assert_non_null(k8s_table_block(&t, K8S_ZONE_CLUSTER, owner, len));
	len = k8s_svc_owner("big", "gone", owner);
	assert_null(k8s_table_block(&t, K8S_ZONE_CLUSTER, owner, len));
	assert_int_equal(k8s_store_stats(s)->objects[K8S_SRC_SERVICES], 1);

	// Not known: no news. Deleted while too large to read: gone.
	k8s_store_too_large(s, K8S_SRC_SERVICES, "big", "never", true);
	assert_false(k8s_store_dirty(s));
	k8s_store_too_large(s, K8S_SRC_SERVICES, "big", "kept", true);
	k8s_store_commit(s, 0);
	len = k8s_svc_owner("big", "kept", owner);
	assert_null(k8s_table_block(&t, K8S_ZONE_CLUSTER, owner, len));
	assert_int_equal(k8s_store_stats(s)->objects[K8S_SRC_SERVICES], 0);

	k8s_store_free(s);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/* A store of its own, whose log lines are kept. */

static char capped_log[8][256];
static size_t capped_lines;

static void keep_line(void *ctx, int priority, const char *msg)
{
	if (capped_lines < 8) {
		snprintf(capped_log[capped_lines++], sizeof(capped_log[0]), "%s", msg);
	}
}

/*! \brief A slice of \a count ready endpoints 10.9.x.y, all with hostname x. */
static char *big_slice(const char *name, size_t count)
{
	size_t size = 512 + count * 96;
	char *json = malloc(size);
	assert_non_null(json);
	int len = snprintf(json, size, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"shop\","
	                   "\"labels\":{\"kubernetes.io/service-name\":\"big\"}},"
	                   "\"addressType\":\"IPv4\",\"endpoints\":[", name);
	for (size_t i = 0; i < count; i++) {
		len += snprintf(json + len, size - len, "%s{\"addresses\":[\"10.9.%zu.%zu\"],"
		                "\"conditions\":{\"ready\":true},\"hostname\":\"x\"}",
		                (i > 0) ? "," : "", i / 250, i % 250 + 1);
	}
	snprintf(json + len, size - len, "]}");
	return json;
}

static void a_block_past_the_caps_is_logged_once_and_counted(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_log_t log = { .fn = keep_line };
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *s = k8s_store_new(&t, &conf, &log);
	assert_non_null(s);
	capped_lines = 0;

	k8s_store_upsert(s, K8S_SRC_NAMESPACES, decode(K8S_NAMESPACE, NS("shop")));
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, HEADLESS("shop", "big")));
	char *json = big_slice("big-1", K8S_MAX_A_PER_NAME + 1);
	k8s_store_upsert(s, K8S_SRC_SLICES, decode(K8S_ENDPOINTSLICE, json));
	free(json);
	k8s_store_commit(s, 0);
	// The name x leaves one address out (and so does the service name, built from what is left).
	assert_int_equal(k8s_table_stats(&t).capped_count, 1);
	assert_int_equal(capped_lines, 1);
	assert_non_null(strstr(capped_log[0], "service shop/big leaves out 1 records or ports"));

	// Rebuilt with as much left out: not logged again.
	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, SVC("shop", "big", "10.96.9.9")));
	k8s_store_commit(s, 0);
	assert_int_equal(k8s_table_stats(&t).capped_count, 1);
	assert_int_equal(capped_lines, 1);

	json = big_slice("big-1", 10);
	k8s_store_upsert(s, K8S_SRC_SLICES, decode(K8S_ENDPOINTSLICE, json));
	free(json);
	k8s_store_commit(s, 0);
	assert_int_equal(k8s_table_stats(&t).capped_count, 0);
	assert_int_equal(capped_lines, 2);
	assert_non_null(strstr(capped_log[1], "service shop/big is within the record limits again"));

	k8s_store_free(s);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/*
 * Valid names no DNS name can hold (issue 22): a ServiceImport named by a DNS
 * subdomain has no records, and a pod name over 63 bytes leaves its endpoint
 * to its dashed address with endpoint-pod-names; each logged once, not per update.
 */
static void names_no_dns_label_can_hold_are_logged_once(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_log_t log = { .fn = keep_line };
	k8s_store_conf_t conf = { .endpoint_pod_names = true };
	k8s_store_t *s = k8s_store_new(&t, &conf, &log);
	assert_non_null(s);
	capped_lines = 0;

	const char *long_import = "{\"metadata\":{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	                          "aaaaaaaaaaaaaaaaaaaaaaaa\",\"namespace\":\"shop\"},"
	                          "\"spec\":{\"type\":\"ClusterSetIP\",\"ips\":[\"10.97.0.%d\"]}}";
	char json[512];
	for (int i = 1; i <= 3; i++) {
		snprintf(json, sizeof(json), long_import, i);
		k8s_store_upsert(s, K8S_SRC_IMPORTS, decode(K8S_SERVICEIMPORT, json));
		k8s_store_upsert(s, K8S_SRC_IMPORTS, decode(K8S_SERVICEIMPORT,
		                 "{\"metadata\":{\"name\":\"web.v2\",\"namespace\":\"shop\"},"
		                 "\"spec\":{\"type\":\"ClusterSetIP\",\"ips\":[\"10.97.1.1\"]}}"));
		k8s_store_commit(s, 0);
	}
	// No records, no error: one line for each import, when it appeared.
	assert_int_equal(k8s_table_stats(&t).svc_count[K8S_ZONE_CLUSTERSET], 0);
	assert_int_equal(capped_lines, 2);
	assert_non_null(strstr(capped_log[0], "serviceimport shop/aaaa"));
	assert_non_null(strstr(capped_log[0], "has no records (its name is no dns label"));
	assert_non_null(strstr(capped_log[1], "serviceimport shop/web.v2 has no records"));

	k8s_store_upsert(s, K8S_SRC_SERVICES, decode(K8S_SERVICE, HEADLESS("shop", "named")));
	const char *slice = "{\"metadata\":{\"name\":\"named-1\",\"namespace\":\"shop\","
	                    "\"labels\":{\"kubernetes.io/service-name\":\"named\"}},"
	                    "\"addressType\":\"IPv4\",\"endpoints\":["
	                    "{\"addresses\":[\"10.9.0.1\"],\"conditions\":{\"ready\":%s},"
	                    "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"short-0\"}},"
	                    "{\"addresses\":[\"10.9.0.2\"],"
	                    "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"%s\"}}]}";
	const char *pods[] = { "web.v1-0", "web.v1-0", "web.v1-1", "short-1", "web.v1-2" };
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		snprintf(json, sizeof(json), slice, (i % 2) ? "true" : "false", pods[i]);
		k8s_store_upsert(s, K8S_SRC_SLICES, decode(K8S_ENDPOINTSLICE, json));
		k8s_store_commit(s, 0);
	}
	// Logged when the slice first named such a pod, and again after it named none.
	assert_int_equal(capped_lines, 4);
	assert_non_null(strstr(capped_log[2], "endpointslice shop/named-1 names the endpoints of "
	                                      "pod web.v1-0 by their address"));
	assert_non_null(strstr(capped_log[3], "pod web.v1-2 by their address"));
	assert_int_equal(k8s_table_stats(&t).svc_count[K8S_ZONE_CLUSTER], 1);

	k8s_store_free(s);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_service_is_published_at_commit),
		cmocka_unit_test(a_slice_joins_its_service),
		cmocka_unit_test(an_unchanged_update_publishes_nothing),
		cmocka_unit_test(one_changed_slice_rebuilds_only_its_service),
		cmocka_unit_test(a_slice_moving_to_another_service_leaves_the_first),
		cmocka_unit_test(a_deleted_service_takes_its_records_at_once),
		cmocka_unit_test(deleting_an_unknown_object_is_no_news),
		cmocka_unit_test(a_relist_removes_what_it_did_not_return),
		cmocka_unit_test(headless_endpoints_become_answers),
		cmocka_unit_test(programming_latency_is_measured_from_the_trigger_time),
		cmocka_unit_test(imported_slices_feed_the_clusterset_zone_only),
		cmocka_unit_test(names_no_dns_label_can_hold_are_logged_once),
		cmocka_unit_test(the_cluster_id_comes_from_the_cluster_property),
		cmocka_unit_test(a_cluster_property_without_value_leaves_no_cluster_id),
		cmocka_unit_test(a_locally_exported_service_joins_its_import_under_the_local_cluster_id),
		cmocka_unit_test(namespaces_not_exposed_are_dropped),
		cmocka_unit_test(the_topology_is_the_first_node_by_name_with_zone_and_region),
		cmocka_unit_test(the_topology_is_the_named_nodes_even_in_filtered_namespaces),
		cmocka_unit_test(pods_whose_keys_share_255_bytes_stay_distinct),
		cmocka_unit_test(slices_whose_keys_share_255_bytes_stay_distinct),
		cmocka_unit_test(an_object_too_large_to_read_keeps_its_version_through_a_relist),
		cmocka_unit_test(a_block_past_the_caps_is_logged_once_and_counted),
	};
	return cmocka_run_group_tests_name("store", tests, setup, teardown);
}
