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
 * The warm restart's snapshot payload (module/store/snapshot.c, each kind's form in its
 * module/kinds/kind_*.c): every kind of object the store holds reads back with the same
 * digest, and a payload that is not what the writer makes is refused whole, with its
 * reason.
 */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <libknot/errcode.h>
#include <urcu/urcu-memb.h>

#include "lib/bulk.h"
#include "store/snapfile.h"
#include "store/snapshot.h"
#include "watch/watchconf.h"
#include "mod-k8s/mod-k8s.h"

static k8s_table_t table;
static k8s_store_t *store;

/* One object of each kind, with every field the decoder keeps set somewhere. */
static const struct {
	unsigned source;
	k8s_kind_t kind;
	const char *json;
} OBJECTS[] = {
	{ K8S_SRC_NAMESPACES, K8S_NAMESPACE, "{\"metadata\":{\"name\":\"shop\"}}" },
	{ K8S_SRC_SERVICES, K8S_SERVICE, "{\"metadata\":{\"name\":\"api\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"type\":\"LoadBalancer\",\"clusterIPs\":[\"10.96.0.10\",\"fd00::10\"],"
	  "\"publishNotReadyAddresses\":true,\"ports\":[{\"name\":\"http\",\"port\":80},"
	  "{\"name\":\"dns\",\"port\":53,\"protocol\":\"UDP\"},{\"port\":9,\"protocol\":\"SCTP\"}]},"
	  "\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"192.0.2.1\"},{\"ip\":\"2001:db8::1\"}]}}}" },
	{ K8S_SRC_SERVICES, K8S_SERVICE, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"clusterIP\":\"None\",\"ports\":[{\"name\":\"http\",\"port\":80}]}}" },
	{ K8S_SRC_SERVICES, K8S_SERVICE, "{\"metadata\":{\"name\":\"ext\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"Example.COM.\"}}" },
	{ K8S_SRC_SERVICES, K8S_SERVICE, "{\"metadata\":{\"name\":\"noip\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"type\":\"ClusterIP\"}}" },
	{ K8S_SRC_SLICES, K8S_ENDPOINTSLICE, "{\"metadata\":{\"name\":\"web-a\",\"namespace\":\"shop\","
	  "\"labels\":{\"kubernetes.io/service-name\":\"Web\"}},\"addressType\":\"IPv4\","
	  "\"endpoints\":[{\"addresses\":[\"10.244.1.7\",\"10.244.1.70\"],\"hostname\":\"web-0\"},"
	  "{\"addresses\":[\"10.244.1.8\"],\"conditions\":{\"ready\":false}},"
	  "{\"addresses\":[\"10.244.1.9\"],\"targetRef\":{\"kind\":\"Pod\",\"name\":\"web-2\"}}],"
	  "\"ports\":[{\"name\":\"http\",\"port\":8080},{\"port\":0}]}" },
	{ K8S_SRC_SLICES, K8S_ENDPOINTSLICE, "{\"metadata\":{\"name\":\"web-f\",\"namespace\":\"shop\","
	  "\"labels\":{\"kubernetes.io/service-name\":\"web\"}},\"addressType\":\"FQDN\","
	  "\"endpoints\":[{\"addresses\":[\"a.example\"]}]}" },
	{ K8S_SRC_PODS, K8S_POD, "{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"hostNetwork\":true},\"status\":{\"phase\":\"Running\","
	  "\"podIPs\":[{\"ip\":\"10.244.1.7\"},{\"ip\":\"fd00::7\"}]}}" },
	{ K8S_SRC_PODS, K8S_POD, "{\"metadata\":{\"name\":\"old-0\",\"namespace\":\"shop\"},"
	  "\"status\":{\"phase\":\"Succeeded\",\"podIP\":\"10.244.1.5\"}}" },
	// Names are DNS subdomains: 253 characters of one label (issue 22), or dotted.
	{ K8S_SRC_PODS, K8S_POD, "{\"metadata\":{\"name\":\"pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
	  "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
	  "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
	  "ppppppppppppp\",\"namespace\":\"shop\"},"
	  "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.244.1.6\"}}" },
	{ K8S_SRC_IMPORTS, K8S_SERVICEIMPORT, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"type\":\"Headless\",\"ports\":[{\"name\":\"http\",\"port\":80}]},"
	  "\"status\":{\"clusters\":[{\"cluster\":\"cluster-a\"},{\"cluster\":\"east.prod\"}]}}" },
	{ K8S_SRC_IMPORTS, K8S_SERVICEIMPORT, "{\"metadata\":{\"name\":\"api\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"type\":\"ClusterSetIP\",\"ips\":[\"10.97.0.1\"]}}" },
	{ K8S_SRC_IMPORTS, K8S_SERVICEIMPORT, "{\"metadata\":{\"name\":\"api.v2\",\"namespace\":\"shop\"},"
	  "\"spec\":{\"type\":\"ClusterSetIP\",\"ips\":[\"10.97.0.2\"]}}" },
	{ K8S_SRC_MCS_SLICES, K8S_ENDPOINTSLICE, "{\"metadata\":{\"name\":\"web-b\",\"namespace\":\"shop\","
	  "\"labels\":{\"multicluster.kubernetes.io/service-name\":\"web\","
	  "\"multicluster.kubernetes.io/source-cluster\":\"east.prod\"}},\"addressType\":\"IPv6\","
	  "\"endpoints\":[{\"addresses\":[\"fd00::7\"],\"hostname\":\"web-0\"}],"
	  "\"ports\":[{\"name\":\"http\",\"port\":8080}]}" },
	{ K8S_SRC_CLUSTERPROPS, K8S_CLUSTERPROPERTY, "{\"metadata\":{\"name\":\"cluster.clusterset.k8s.io\"},"
	  "\"spec\":{\"value\":\"a \\\"quoted\\\" \\\\ value\\n\\u0001\"}}" },
	{ K8S_SRC_NODES, K8S_NODE, "{\"metadata\":{\"name\":\"node-1\",\"labels\":{"
	  "\"failure-domain.beta.kubernetes.io/zone\":\"Eu-1a\",\"topology.kubernetes.io/region\":\"eu\"}}}" },
	{ K8S_SRC_NODES, K8S_NODE, "{\"metadata\":{\"name\":\"node-2\"}}" },
	{ K8S_SRC_KUBEDNS_CM, K8S_CONFIGMAP, "{\"metadata\":{\"name\":\"kube-dns\",\"namespace\":"
	  "\"kube-system\"},\"data\":{\"stubDomains\":\"{\\\"a.example\\\": [\\\"10.0.0.9\\\"]}\","
	  "\"upstreamNameservers\":\"\",\"x\":\"line 1\\nline 2\\t\\u00e9\"}}" },
	{ K8S_SRC_HOSTS_CM, K8S_CONFIGMAP, "{\"metadata\":{\"name\":\"coredns\",\"namespace\":"
	  "\"kube-system\"},\"data\":{\"NodeHosts\":\"192.168.1.10 node-1\\n\"}}" },
	{ K8S_SRC_HOSTS_CM, K8S_CONFIGMAP, "{\"metadata\":{\"name\":\"empty\",\"namespace\":\"dns\"}}" },
};
#define OBJECT_COUNT (sizeof(OBJECTS) / sizeof(OBJECTS[0]))
#define ALL_SOURCES ((1u << K8S_SRC_COUNT) - 1)
#define HEAD_BYTES 8    // The payload's u32 sources, u32 ready.
#define ENTRY_BYTES 5   // An entry's u8 source, u32 length.

static k8s_object_t *decode(k8s_kind_t kind, const char *json)
{
	k8s_object_t *obj = NULL;
	char err[256];
	if (k8s_object_decode(kind, json, strlen(json), &obj, err, sizeof(err)) != KNOT_EOK) {
		fail_msg("decode failed: %s (%s)", err, json);
	}
	return obj;
}

static int setup(void **state)
{
	urcu_memb_register_thread();
	assert_int_equal(k8s_table_init(&table), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	store = k8s_store_new(&table, &conf, NULL);
	assert_non_null(store);
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		k8s_store_upsert(store, OBJECTS[i].source, decode(OBJECTS[i].kind, OBJECTS[i].json));
	}
	k8s_store_commit(store, 0);
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

/*! The store's objects of \a sources, taken and encoded as the watcher's writer does. */
static int encode_sources(uint32_t sources, uint32_t ready, k8s_buf_t *out,
                          uint64_t counts[K8S_SRC_COUNT])
{
	k8s_snapshot_objects_t objs;
	assert_int_equal(k8s_snapshot_take(store, sources, &objs), KNOT_EOK);
	int ret = k8s_snapshot_encode(&objs, ready, out, counts);
	k8s_snapshot_objects_free(&objs);
	return ret;
}

static void encode(k8s_buf_t *out, uint64_t counts[K8S_SRC_COUNT])
{
	assert_int_equal(encode_sources(ALL_SOURCES, K8S_READY_CLUSTER, out, counts), KNOT_EOK);
}

/*! The fixture store's every source, encoded and decoded. */
static void read_back(k8s_snapshot_t *snap)
{
	k8s_buf_t buf = { 0 };
	uint64_t counts[K8S_SRC_COUNT];
	encode(&buf, counts);
	char why[256] = "";
	assert_int_equal(k8s_snapshot_decode(buf.data, buf.len, counts, snap, why, sizeof(why)),
	                 KNOT_EOK);
	k8s_buf_free(&buf);
}

static void every_kind_reads_back_with_the_same_digest(void **state)
{
	k8s_snapshot_t snap;
	read_back(&snap);
	assert_int_equal(snap.count, OBJECT_COUNT);
	assert_int_equal(snap.sources, ALL_SOURCES);
	assert_int_equal(snap.ready, K8S_READY_CLUSTER);
	for (size_t i = 0; i < snap.count; i++) {
		k8s_object_t *obj = snap.objects[i];
		const k8s_object_t *held = k8s_store_get(store, snap.source_of[i], obj->ns, obj->name);
		assert_non_null(held);
		if (k8s_object_digest(held) != k8s_object_digest_of(obj)) {
			fail_msg("%s %s/%s reads back with another digest", k8s_kind_name(obj->kind),
			         obj->ns, obj->name);
		}
	}
	// The fields the digest leaves out too.
	for (size_t i = 0; i < snap.count; i++) {
		if (snap.objects[i]->kind == K8S_CLUSTERPROPERTY) {
			assert_string_equal(((k8s_clusterproperty_t *)snap.objects[i])->value,
			                    "a \"quoted\" \\ value\n\x01");
		}
		if (snap.objects[i]->kind == K8S_CONFIGMAP &&
		    strcmp(snap.objects[i]->name, "kube-dns") == 0) {
			const k8s_configmap_t *cm = (const k8s_configmap_t *)snap.objects[i];
			assert_int_equal(cm->count, 3);
			assert_string_equal(k8s_configmap_get(cm, "x")->value, "line 1\nline 2\t\xc3\xa9");
			assert_int_equal(k8s_configmap_get(cm, "upstreamNameservers")->len, 0);
		}
	}
	k8s_snapshot_free(&snap);
}

static void the_first_list_finds_a_snapshots_objects_unchanged_by_their_digest(void **state)
{
	// A warm start: the snapshot's objects into a new store, as the watcher loads them,
	// in a bulk session (its chunks are poisoned between blocks under ASan).
	size_t chunks_before = k8s_bulk_chunks();
	k8s_bulk_begin();
	k8s_snapshot_t snap;
	read_back(&snap);
	k8s_table_t warm_table;
	assert_int_equal(k8s_table_init(&warm_table), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *warm = k8s_store_new(&warm_table, &conf, NULL);
	assert_non_null(warm);
	for (size_t i = 0; i < snap.count; i++) {
		assert_false(snap.objects[i]->digested);  // Left to the first LIST.
		k8s_store_upsert(warm, snap.source_of[i], snap.objects[i]);
		snap.objects[i] = NULL;
	}
	assert_true(k8s_store_commit(warm, 0) > 0);
	k8s_bulk_end();
	if (k8s_bulk_enabled()) {
		assert_true(k8s_bulk_chunks() > chunks_before);
	}

	// The API lists the same objects: nothing changes, nothing is rebuilt.
	uint64_t changes = k8s_store_stats(warm)->changes;
	uint64_t unchanged = k8s_store_stats(warm)->unchanged;
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		k8s_store_upsert(warm, OBJECTS[i].source, decode(OBJECTS[i].kind, OBJECTS[i].json));
	}
	assert_int_equal(k8s_store_stats(warm)->unchanged - unchanged, OBJECT_COUNT);
	assert_int_equal(k8s_store_stats(warm)->changes, changes);
	assert_int_equal(k8s_store_commit(warm, 0), 0);

	// One that did change replaces the snapshot's.
	k8s_store_upsert(warm, K8S_SRC_SERVICES, decode(K8S_SERVICE,
	                 "{\"metadata\":{\"name\":\"api\",\"namespace\":\"shop\"},"
	                 "\"spec\":{\"clusterIP\":\"10.96.0.99\"}}"));
	assert_int_equal(k8s_store_stats(warm)->changes, changes + 1);
	assert_int_equal(k8s_store_commit(warm, 0), 1);

	k8s_store_free(warm);
	urcu_memb_barrier();
	k8s_table_deinit(&warm_table);
	k8s_snapshot_free(&snap);
	urcu_memb_barrier();
	assert_int_equal(k8s_bulk_chunks(), chunks_before);  // Every block freed.
}

static void only_the_complete_sources_are_written(void **state)
{
	k8s_buf_t buf = { 0 };
	uint64_t counts[K8S_SRC_COUNT];
	uint32_t sources = (1u << K8S_SRC_SERVICES) | (1u << K8S_SRC_NAMESPACES);
	assert_int_equal(encode_sources(sources, 0, &buf, counts), KNOT_EOK);
	assert_int_equal(counts[K8S_SRC_SERVICES], 4);
	assert_int_equal(counts[K8S_SRC_NAMESPACES], 1);
	assert_int_equal(counts[K8S_SRC_SLICES], 0);
	k8s_snapshot_t snap;
	char why[256];
	assert_int_equal(k8s_snapshot_decode(buf.data, buf.len, counts, &snap, why, sizeof(why)),
	                 KNOT_EOK);
	assert_int_equal(snap.count, 5);
	k8s_snapshot_free(&snap);
	k8s_buf_free(&buf);
}

/*! Decodes a changed copy of the payload; expects a refusal whose reason holds \a reason. */
static void expect_refused(const char *data, size_t len, const uint64_t counts[K8S_SRC_COUNT],
                           const char *reason)
{
	k8s_snapshot_t snap;
	char why[256] = "";
	assert_int_equal(k8s_snapshot_decode(data, len, counts, &snap, why, sizeof(why)), KNOT_EMALF);
	assert_int_equal(snap.count, 0);
	assert_null(snap.objects);
	if (strstr(why, reason) == NULL) {
		fail_msg("refused for '%s', expected '%s'", why, reason);
	}
}

static void a_payload_not_as_written_is_refused_whole(void **state)
{
	k8s_buf_t buf = { 0 };
	uint64_t counts[K8S_SRC_COUNT];
	encode(&buf, counts);
	char *copy = malloc(buf.len);
	assert_non_null(copy);

	expect_refused(buf.data, 7, counts, "truncated payload");
	// Cut inside the last object, and inside an entry's head.
	expect_refused(buf.data, buf.len - 1, counts, "longer than the file");
	uint64_t more[K8S_SRC_COUNT];
	memcpy(more, counts, sizeof(more));
	more[K8S_SRC_NODES]++;
	expect_refused(buf.data, buf.len, more, "count of nodes differs");

	// An entry of a source the payload does not hold.
	memcpy(copy, buf.data, buf.len);
	copy[0] = 0x01;
	expect_refused(copy, buf.len, counts, "unknown source");
	memcpy(copy, buf.data, buf.len);
	copy[3] = 0x01;
	expect_refused(copy, buf.len, counts, "unknown sources");
	memcpy(copy, buf.data, buf.len);
	copy[8] = K8S_SRC_COUNT;
	expect_refused(copy, buf.len, counts, "unknown source");
	// A length past the cap.
	memcpy(copy, buf.data, buf.len);
	copy[9 + 3] = 0x7f;
	expect_refused(copy, buf.len, counts, "longer than allowed");
	// The first object's string bytes announced wrong, or more than it has.
	memcpy(copy, buf.data, buf.len);
	copy[13]--;
	expect_refused(copy, buf.len, counts, "strings longer than announced");
	memcpy(copy, buf.data, buf.len);
	copy[16] = 0x7f;
	expect_refused(copy, buf.len, counts, "count larger than the object");
	// A name that is no DNS label, and one in uppercase (the writer writes lowercase only).
	memcpy(copy, buf.data, buf.len);
	char *name = memmem(copy, buf.len, "\x05shop", 5);
	assert_non_null(name);
	name[1] = '_';
	expect_refused(copy, buf.len, counts, "invalid name");
	name[1] = 'S';
	expect_refused(copy, buf.len, counts, "invalid name");

	free(copy);
	k8s_buf_free(&buf);
}

/*! A payload of one object of \a src: its \a len bytes as given. */
static void expect_object_refused(unsigned src, const char *object, size_t len,
                                  const char *reason)
{
	char data[256] = { 0 };
	assert_true(HEAD_BYTES + ENTRY_BYTES + len <= sizeof(data));
	uint32_t sources = ALL_SOURCES;
	memcpy(data, &sources, 4);  // The tests run little-endian, as the format is.
	data[HEAD_BYTES] = (char)src;
	uint32_t len32 = (uint32_t)len;
	memcpy(data + HEAD_BYTES + 1, &len32, 4);
	memcpy(data + HEAD_BYTES + ENTRY_BYTES, object, len);
	uint64_t counts[K8S_SRC_COUNT] = { 0 };
	counts[src] = 1;
	expect_refused(data, HEAD_BYTES + ENTRY_BYTES + len, counts, reason);
}

#define REFUSED(src, object, reason) \
	expect_object_refused(src, object, sizeof(object) - 1, reason)

static void objects_are_read_with_every_field_checked(void **state)
{
	// A good one first: the hand-made objects below differ from it in one thing.
	char ns[] = "\x05\x00\x00\x00" "\x05" "shop";
	uint64_t one[K8S_SRC_COUNT] = { [K8S_SRC_NAMESPACES] = 1 };
	char data[64] = { 0xff, 0, 0, 0, 0, 0, 0, 0, K8S_SRC_NAMESPACES, sizeof(ns) - 1 };
	memcpy(data + HEAD_BYTES + ENTRY_BYTES, ns, sizeof(ns) - 1);
	k8s_snapshot_t snap;
	char why[256] = "";
	assert_int_equal(k8s_snapshot_decode(data, HEAD_BYTES + ENTRY_BYTES + sizeof(ns) - 1, one,
	                                     &snap, why, sizeof(why)), KNOT_EOK);
	assert_string_equal(snap.objects[0]->name, "shop");
	k8s_snapshot_free(&snap);

	REFUSED(K8S_SRC_NAMESPACES, "\x05\x00\x00\x00" "\x05" "shopx", "trailing bytes");
	REFUSED(K8S_SRC_NAMESPACES, "\x00\x00\x00\x00" "\x00", "missing name");
	REFUSED(K8S_SRC_NAMESPACES, "\x05\x00\x00\x00" "\x06" "shop", "longer than the object");
	REFUSED(K8S_SRC_NAMESPACES, "\x05\x00\x00\x00" "\x05" "sh\x00p", "string with a nul");
	// Pods: booleans are 0 or 1, at most two addresses, of family 4 or 6.
	REFUSED(K8S_SRC_PODS, "\x0a\x00\x00\x00" "\x04" "web" "\x05" "shop" "\x01\x00"
	        "\x01\x04\x0a\x00\x00\x01", "strings shorter than announced");
	REFUSED(K8S_SRC_PODS, "\x09\x00\x00\x00" "\x04" "web" "\x05" "shop" "\x02\x00"
	        "\x01\x04\x0a\x00\x00\x01", "not a boolean");
	REFUSED(K8S_SRC_PODS, "\x09\x00\x00\x00" "\x04" "web" "\x05" "shop" "\x01\x00"
	        "\x03\x04\x0a\x00\x00\x01\x04\x0a\x00\x00\x02\x04\x0a\x00\x00\x03",
	        "more than two addresses");
	REFUSED(K8S_SRC_PODS, "\x09\x00\x00\x00" "\x04" "web" "\x05" "shop" "\x01\x00"
	        "\x01\x05\x0a\x00\x00\x01", "unknown address family");
	// Services: a known type, only the fields the decoder keeps for it, known protocols.
	REFUSED(K8S_SRC_SERVICES, "\x09\x00\x00\x00" "\x00\x00" "\x00" "\x04" "api" "\x05" "shop"
	        "\x03\x00" "\x00" "\x00" "\x00", "unknown service type");
	REFUSED(K8S_SRC_SERVICES, "\x09\x00\x00\x00" "\x00\x00" "\x00" "\x04" "api" "\x05" "shop"
	        "\x01\x00" "\x01\x04\x0a\x00\x00\x01" "\x00" "\x00",
	        "fields of another service type");
	REFUSED(K8S_SRC_SERVICES, "\x09\x00\x00\x00" "\x01\x00" "\x00" "\x04" "api" "\x05" "shop"
	        "\x00\x00" "\x00" "\x00" "\x00" "\x50\x00\x03\x00", "unknown protocol");
	// External addresses: within the cap, of family 4 or 6.
	REFUSED(K8S_SRC_SERVICES, "\x09\x00\x00\x00" "\x00\x00" "\x01" "\x04" "api" "\x05" "shop"
	        "\x00\x00" "\x00" "\x00" "\x00" "\x05\x0a\x00\x00\x01", "unknown address family");
	// Slices: counts within the bytes left, no addresses in FQDN slices, zones as names.
	REFUSED(K8S_SRC_SLICES, "\x09\x00\x00\x00" "\xff\xff\xff\xff" "\x00\x00" "\x04" "web"
	        "\x05" "shop" "\x00\x00\x00" "\x04", "count larger than the object");
	REFUSED(K8S_SRC_SLICES, "\x09\x00\x00\x00" "\x01\x00\x00\x00" "\x00\x00" "\x04" "web"
	        "\x05" "shop" "\x00\x00\x00" "\x00" "\x0a\x00\x00\x01\x01\x00\x00\x00",
	        "addresses in an fqdn slice");
	REFUSED(K8S_SRC_SLICES, "\x0c\x00\x00\x00" "\x01\x00\x00\x00" "\x00\x00" "\x04" "web"
	        "\x05" "shop" "\x00\x00\x00" "\x04" "\x0a\x00\x00\x01\x01\x00\x00\x04" "a_b",
	        "invalid name");
	// The one free-form string: no NUL in it, within the object.
	REFUSED(K8S_SRC_CLUSTERPROPS, "\x06\x00\x00\x00" "\x02" "p" "\x04\x00\x00\x00" "a\x00" "b",
	        "string with a nul");
	REFUSED(K8S_SRC_CLUSTERPROPS, "\x06\x00\x00\x00" "\x02" "p" "\xff\x00\x00\x00" "ab",
	        "string longer than the object");
	// ConfigMaps: keys as the API checks them, values without NUL, within the object.
	REFUSED(K8S_SRC_HOSTS_CM, "\x0a\x00\x00\x00" "\x01\x00" "\x02" "m" "\x02" "n"
	        "\x04" "a/b" "\x02\x00\x00\x00" "v", "invalid configmap key");
	REFUSED(K8S_SRC_HOSTS_CM, "\x09\x00\x00\x00" "\x01\x00" "\x02" "m" "\x02" "n"
	        "\x02" "k" "\x03\x00\x00\x00" "a\x00", "string with a nul");
	REFUSED(K8S_SRC_HOSTS_CM, "\x09\x00\x00\x00" "\x01\x00" "\x02" "m" "\x02" "n"
	        "\x02" "k" "\xff\x00\x00\x00" "ab", "string longer than the object");
	REFUSED(K8S_SRC_KUBEDNS_CM, "\x09\x00\x00\x00" "\x01\x00" "\x02" "m" "\x02" "n"
	        "\x02" "k", "count larger than the object");
	REFUSED(K8S_SRC_KUBEDNS_CM, "\x09\x00\x00\x00" "\x01\x00" "\x02" "m" "\x02" "n"
	        "\x02" "kk" "\x01", "truncated");
}

/*! A snapshots' directory of the test's own (k8s_snapdir_close() and remove_dir() after). */
static void open_dir(k8s_snapdir_t *dir, char *path, size_t len)
{
	char storage[] = "/tmp/test_snapshot.XXXXXX";
	assert_non_null(mkdtemp(storage));
	snprintf(path, len, "%s/" K8S_SNAP_DIR, storage);
	char why[256] = "";
	assert_int_equal(k8s_snapdir_open(dir, path, why, sizeof(why)), KNOT_EOK);
}

static void remove_dir(k8s_snapdir_t *dir, const char *path)
{
	k8s_snapdir_close(dir);
	char command[300];
	snprintf(command, sizeof(command), "rm -rf %.*s", (int)(strrchr(path, '/') - path), path);
	assert_int_equal(system(command), 0);
}

/*! Writes a snapshot file of version \a version (snapfile.h's layout) holding \a payload. */
static void write_file(const k8s_snapdir_t *dir, const char *name, uint32_t version,
                       uint64_t settings, int64_t created, const uint64_t counts[K8S_SRC_COUNT],
                       const char *payload, size_t len)
{
	size_t head_len = 32 + 8 * K8S_SRC_COUNT + 8;
	unsigned char *file = test_malloc(head_len + len + K8S_SNAP_MAC_LEN);
	uint32_t sources = K8S_SRC_COUNT;
	uint64_t plen = len;
	memcpy(file, MOD_K8S_SNAP_MAGIC, 8);
	memcpy(file + 8, &version, 4);
	memcpy(file + 12, &sources, 4);
	memcpy(file + 16, &settings, 8);
	memcpy(file + 24, &created, 8);
	memcpy(file + 32, counts, 8 * K8S_SRC_COUNT);
	memcpy(file + 32 + 8 * K8S_SRC_COUNT, &plen, 8);
	memcpy(file + head_len, payload, len);
	assert_int_equal(k8s_snapfile_mac(dir->key, file, head_len + len, file + head_len + len),
	                 KNOT_EOK);
	int fd = openat(dir->fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, file, head_len + len + K8S_SNAP_MAC_LEN),
	                 head_len + len + K8S_SNAP_MAC_LEN);
	close(fd);
	test_free(file);
}

static void a_snapshot_of_the_json_format_is_refused_not_misread(void **state)
{
	// Version 1 held JSON objects: a namespace, as it wrote it.
	static const char json[] = "{\"metadata\":{\"name\":\"shop\"}}";
	char payload[HEAD_BYTES + ENTRY_BYTES + sizeof(json)] = {
		1u << K8S_SRC_NAMESPACES, 0, 0, 0, 0, 0, 0, 0, K8S_SRC_NAMESPACES, sizeof(json) - 1
	};
	memcpy(payload + HEAD_BYTES + ENTRY_BYTES, json, sizeof(json) - 1);
	uint64_t counts[K8S_SRC_COUNT] = { [K8S_SRC_NAMESPACES] = 1 };
	k8s_snapdir_t dir;
	char path[64];
	open_dir(&dir, path, sizeof(path));
	write_file(&dir, "v1", 1, 42, 1800000000, counts, payload, sizeof(payload) - 1);
	k8s_snapshot_t snap;
	char why[256] = "";
	assert_int_equal(k8s_snapshot_read(&dir, "v1", 42, 1800000010, 0, &snap, why, sizeof(why)),
	                 KNOT_EMALF);
	assert_int_equal(snap.count, 0);
	if (strstr(why, "version 1, expected") == NULL) {
		fail_msg("refused for '%s'", why);
	}
	// The same file as the current version, keyed: the JSON is no object of it.
	write_file(&dir, "v1", K8S_SNAP_VERSION, 42, 1800000000, counts, payload,
	           sizeof(payload) - 1);
	assert_int_equal(k8s_snapshot_read(&dir, "v1", 42, 1800000010, 0, &snap, why, sizeof(why)),
	                 KNOT_EMALF);
	assert_non_null(strstr(why, "does not decode"));
	remove_dir(&dir, path);
}

static void the_fingerprint_follows_what_is_held_not_how(void **state)
{
	k8s_watcher_conf_t a = { .kubeconfig = "/etc/k", .labels = "app=web" };
	k8s_watcher_conf_t b = a;
	uint64_t fp = k8s_snapshot_fingerprint(k8s_watcher_conf_hash(&a, K8S_WCONF_HELD));
	b.stall_s = 30;
	b.snapshot_max_age_s = 60;
	b.snapshot = "/var/lib/knot/x";
	assert_true(k8s_snapshot_fingerprint(k8s_watcher_conf_hash(&b, K8S_WCONF_HELD)) == fp);
	b.labels = "app=db";
	assert_true(k8s_snapshot_fingerprint(k8s_watcher_conf_hash(&b, K8S_WCONF_HELD)) != fp);
	b = a;
	b.context = "other";
	assert_true(k8s_snapshot_fingerprint(k8s_watcher_conf_hash(&b, K8S_WCONF_HELD)) != fp);
	assert_true(k8s_watcher_conf_hash(&b, K8S_WCONF_SERVER) !=
	            k8s_watcher_conf_hash(&a, K8S_WCONF_SERVER));
	b = a;
	b.labels = NULL;
	b.namespace_labels = "app=web";
	assert_true(k8s_snapshot_fingerprint(k8s_watcher_conf_hash(&b, K8S_WCONF_HELD)) != fp);
	// The file's name does not change with the selectors: another selector's file is refused.
	assert_true(k8s_watcher_conf_hash(&b, K8S_WCONF_SERVER) ==
	            k8s_watcher_conf_hash(&a, K8S_WCONF_SERVER));
}

/*! The watcher's writer reads the objects it took on its own thread while the store goes on. */
static void objects_taken_stay_readable_while_the_store_changes_them(void **state)
{
	// A fresh store of its own: this one's objects are replaced and removed.
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	k8s_store_t *s = k8s_store_new(&t, &conf, NULL);
	assert_non_null(s);
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		k8s_store_upsert(s, OBJECTS[i].source, decode(OBJECTS[i].kind, OBJECTS[i].json));
	}
	k8s_store_commit(s, 0);
	k8s_snapshot_objects_t objs;
	assert_int_equal(k8s_snapshot_take(s, ALL_SOURCES, &objs), KNOT_EOK);
	assert_int_equal(objs.end[K8S_SRC_COUNT - 1], OBJECT_COUNT);
	k8s_store_hold(s, true);
	// Every object replaced, then every one removed: none freed while held (ASan sees a
	// read of a freed one), every one freed after (LeakSanitizer sees one kept).
	for (size_t i = 0; i < OBJECT_COUNT; i++) {
		k8s_object_t *changed = decode(OBJECTS[i].kind, OBJECTS[i].json);
		changed->digest = k8s_object_digest_of(changed) ^ 1;
		k8s_store_upsert(s, OBJECTS[i].source, changed);
	}
	k8s_store_list_begin(s, K8S_SRC_SERVICES);
	k8s_store_list_end(s, K8S_SRC_SERVICES);
	k8s_store_commit(s, 0);
	k8s_buf_t buf = { 0 };
	uint64_t counts[K8S_SRC_COUNT];
	assert_int_equal(k8s_snapshot_encode(&objs, 0, &buf, counts), KNOT_EOK);
	k8s_snapshot_t snap;
	char why[256];
	assert_int_equal(k8s_snapshot_decode(buf.data, buf.len, counts, &snap, why, sizeof(why)),
	                 KNOT_EOK);
	for (size_t i = 0; i < snap.count; i++) {
		assert_int_equal(k8s_object_digest_of(snap.objects[i]), k8s_object_digest(objs.objects[i]));
	}
	k8s_snapshot_free(&snap);
	k8s_buf_free(&buf);
	k8s_snapshot_objects_free(&objs);
	k8s_store_hold(s, false);
	k8s_store_free(s);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void a_written_file_reads_back_and_another_fingerprint_is_refused(void **state)
{
	k8s_snapdir_t dir;
	char path[64];
	open_dir(&dir, path, sizeof(path));
	size_t objects = 0;
	k8s_snapshot_objects_t objs;
	assert_int_equal(k8s_snapshot_take(store, ALL_SOURCES, &objs), KNOT_EOK);
	assert_int_equal(k8s_snapshot_write(&dir, "s", 42, 1800000000, &objs, K8S_READY_CLUSTER,
	                                    &objects), KNOT_EOK);
	k8s_snapshot_objects_free(&objs);
	assert_int_equal(objects, OBJECT_COUNT);
	k8s_snapshot_t snap;
	char why[256];
	assert_int_equal(k8s_snapshot_read(&dir, "s", 42, 1800000010, 60, &snap, why, sizeof(why)),
	                 KNOT_EOK);
	assert_int_equal(snap.count, OBJECT_COUNT);
	assert_int_equal(snap.created_s, 1800000000);
	k8s_snapshot_free(&snap);
	assert_int_equal(k8s_snapshot_read(&dir, "s", 43, 1800000010, 60, &snap, why, sizeof(why)),
	                 KNOT_EMALF);
	assert_non_null(strstr(why, "other watch settings"));
	assert_int_equal(k8s_snapshot_read(&dir, "s", 42, 1800000100, 60, &snap, why, sizeof(why)),
	                 KNOT_EMALF);
	assert_non_null(strstr(why, "older than snapshot-max-age"));
	remove_dir(&dir, path);
}

static void a_file_keyed_with_another_directorys_key_is_refused_whole(void **state)
{
	// A snapshot copied from another knotd's storage: every byte as that knotd wrote it.
	k8s_snapdir_t ours, theirs;
	char ours_path[64], theirs_path[64];
	open_dir(&ours, ours_path, sizeof(ours_path));
	open_dir(&theirs, theirs_path, sizeof(theirs_path));
	size_t objects = 0;
	k8s_snapshot_objects_t objs;
	assert_int_equal(k8s_snapshot_take(store, ALL_SOURCES, &objs), KNOT_EOK);
	assert_int_equal(k8s_snapshot_write(&theirs, "s", 42, 1800000000, &objs, K8S_READY_CLUSTER,
	                                    &objects), KNOT_EOK);
	k8s_snapshot_objects_free(&objs);
	assert_int_equal(renameat(theirs.fd, "s", ours.fd, "s"), 0);
	k8s_snapshot_t snap;
	char why[256];
	assert_int_equal(k8s_snapshot_read(&ours, "s", 42, 1800000010, 60, &snap, why, sizeof(why)),
	                 KNOT_EMALF);
	assert_int_equal(snap.count, 0);
	assert_null(snap.objects);
	assert_non_null(strstr(why, "key check failed"));
	remove_dir(&ours, ours_path);
	remove_dir(&theirs, theirs_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_kind_reads_back_with_the_same_digest),
		cmocka_unit_test(the_first_list_finds_a_snapshots_objects_unchanged_by_their_digest),
		cmocka_unit_test(only_the_complete_sources_are_written),
		cmocka_unit_test(a_payload_not_as_written_is_refused_whole),
		cmocka_unit_test(objects_are_read_with_every_field_checked),
		cmocka_unit_test(a_snapshot_of_the_json_format_is_refused_not_misread),
		cmocka_unit_test(the_fingerprint_follows_what_is_held_not_how),
		cmocka_unit_test(objects_taken_stay_readable_while_the_store_changes_them),
		cmocka_unit_test(a_written_file_reads_back_and_another_fingerprint_is_refused),
		cmocka_unit_test(a_file_keyed_with_another_directorys_key_is_refused_whole),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
