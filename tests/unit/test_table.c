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
 * The record table: indexes, PTR references, prefixes, pods, and readers
 * that never wait for the writer and never see half a change.
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "lib/hash.h"
#include "table/records.h"
#include "table/table.h"
#include "fixtures.h"

static const k8s_records_conf_t rconf = { 0 };

/*! \brief A headless service whose endpoints are named g<gen>-<i>. */
static k8s_block_t *generation(unsigned gen, unsigned count)
{
	static k8s_endpoint_t eps[64];
	static char names[64][16], ips[64][16];
	for (unsigned i = 0; i < count; i++) {
		snprintf(names[i], sizeof(names[i]), "g%u-%u", gen, i);
		snprintf(ips[i], sizeof(ips[i]), "10.1.%u.%u", i, (gen + i) % 250 + 1);
		eps[i] = fx_ep(ips[i], true, names[i], NULL);
	}
	k8s_slice_t slice = fx_slice("shop", "web-x", "web", AF_INET, eps, count, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", "web", K8S_SVC_HEADLESS, NULL, NULL);
	return k8s_records_service(&svc, slices, 1, &rconf);
}

static const k8s_block_t *lookup(const k8s_table_t *t)
{
	return k8s_table_block(t, K8S_ZONE_CLUSTER, (const uint8_t *)"\x03web\x04shop", 9);
}

/*! \brief Every endpoint of a block is of one generation and the answer has them all. */
static bool consistent(const k8s_block_t *svc)
{
	size_t n = svc->addr_count - svc->sip_count;
	if (n == 0 || svc->rrs_a.count != n) {
		return false;
	}
	char first[16] = "";
	for (size_t i = 0; i < n; i++) {
		uint8_t label[64];
		k8s_addr_label(svc, &svc->addrs[svc->sip_count + i], label);
		char gen[16] = "";
		const char *dash = memchr(label + 1, '-', label[0]);
		if (dash == NULL) {
			return false;
		}
		memcpy(gen, label + 1, dash - (const char *)label - 1);
		if (i == 0) {
			strcpy(first, gen);
		} else if (strcmp(first, gen) != 0) {
			return false;
		}
	}
	return true;
}

static void a_service_is_found_with_its_namespace_only_while_the_namespace_exists(void **state)
{
	(void)state;
	const uint8_t *owner = (const uint8_t *)"\x03web\x04shop", *ns = owner + 4;
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_null(k8s_table_ns_block(&t, K8S_ZONE_CLUSTER, owner, 9, ns));
	assert_int_equal(k8s_table_put_block(&t, generation(1, 3)), KNOT_EOK);
	assert_null(k8s_table_ns_block(&t, K8S_ZONE_CLUSTER, owner, 9, ns));
	assert_int_equal(k8s_table_set_ns(&t, "shop", true), KNOT_EOK);
	assert_ptr_equal(k8s_table_ns_block(&t, K8S_ZONE_CLUSTER, owner, 9, ns), lookup(&t));
	assert_null(k8s_table_ns_block(&t, K8S_ZONE_CLUSTERSET, owner, 9, ns));
	assert_null(k8s_table_ns_block(&t, K8S_ZONE_CLUSTER, (const uint8_t *)"\x03wez\x04shop", 9, ns));
	assert_int_equal(k8s_table_set_ns(&t, "shop", false), KNOT_EOK);
	assert_null(k8s_table_ns_block(&t, K8S_ZONE_CLUSTER, owner, 9, ns));
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void a_replaced_service_is_found_with_its_new_records(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, generation(1, 3)), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, generation(2, 5)), KNOT_EOK);
	assert_int_equal(k8s_table_stats(&t).svc_count[K8S_ZONE_CLUSTER], 1);
	assert_int_equal(k8s_table_stats(&t).record_count, 5);
	assert_true(consistent(lookup(&t)));
	assert_int_equal(lookup(&t)->addr_count, 5);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void ptr_references_follow_the_service(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, generation(1, 2)), KNOT_EOK);
	k8s_ip_t ip = fx_ip("10.1.0.2");  // Endpoint 0 of generation 1.
	const k8s_addr_t *refs[4];
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 1);
	assert_ptr_equal(k8s_addr_svc(refs[0]), lookup(&t));

	// Generation 2 moves endpoint 0 to 10.1.0.3: the old address has no PTR any more.
	assert_int_equal(k8s_table_put_block(&t, generation(2, 2)), KNOT_EOK);
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 0);
	ip = fx_ip("10.1.0.3");
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 1);
	assert_ptr_equal(k8s_addr_svc(refs[0]), lookup(&t));

	k8s_table_del_block(&t, K8S_ZONE_CLUSTER, "shop", "web");
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 0);
	assert_null(lookup(&t));
	assert_int_equal(k8s_table_stats(&t).record_count, 0);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void a_deferred_ptr_index_is_built_of_the_blocks_published_meanwhile(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_table_defer_ptr(&t);
	// Published, replaced and removed before the index exists.
	assert_int_equal(k8s_table_put_block(&t, generation(1, 2)), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, generation(2, 2)), KNOT_EOK);
	k8s_service_t gone = fx_service("shop", "gone", K8S_SVC_CLUSTERIP, "10.96.0.9", NULL);
	assert_int_equal(k8s_table_put_block(&t, k8s_records_service(&gone, NULL, 0, &rconf)), KNOT_EOK);
	assert_int_equal(k8s_table_del_block(&t, K8S_ZONE_CLUSTER, "shop", "gone"), KNOT_EOK);
	k8s_table_set_ready(&t, K8S_READY_CLUSTER);
	assert_int_equal(k8s_table_ready(&t), K8S_READY_CLUSTER);  // Forward names only.
	assert_non_null(lookup(&t));
	k8s_ip_t now = fx_ip("10.1.0.3"), before = fx_ip("10.1.0.2"), svc_ip = fx_ip("10.96.0.9");
	const k8s_addr_t *refs[4];
	assert_int_equal(k8s_table_ptr(&t, &now, refs, 4), 0);
	assert_false(k8s_table_prefix(&t, &now, 8));

	assert_int_equal(k8s_table_index_ptrs(&t), KNOT_EOK);
	assert_int_equal(k8s_table_ready(&t), K8S_READY_CLUSTER | K8S_READY_PTR);
	assert_int_equal(k8s_table_ptr(&t, &now, refs, 4), 1);
	assert_ptr_equal(k8s_addr_svc(refs[0]), lookup(&t));
	assert_true(k8s_table_prefix(&t, &now, 24));
	assert_int_equal(k8s_table_ptr(&t, &before, refs, 4), 0);
	assert_int_equal(k8s_table_ptr(&t, &svc_ip, refs, 4), 0);
	assert_false(k8s_table_prefix(&t, &svc_ip, 16));  // 10.96/16: gone with its service.

	// From then on the index follows every change, as without deferring.
	assert_int_equal(k8s_table_put_block(&t, generation(3, 2)), KNOT_EOK);
	assert_int_equal(k8s_table_ptr(&t, &now, refs, 4), 0);
	k8s_ip_t next = fx_ip("10.1.0.4");
	assert_int_equal(k8s_table_ptr(&t, &next, refs, 4), 1);
	assert_int_equal(k8s_table_index_ptrs(&t), KNOT_EOK);  // Nothing to do twice.
	assert_int_equal(k8s_table_ptr(&t, &next, refs, 4), 1);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void without_deferring_the_ptr_index_is_ready_with_the_zone(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_index_ptrs(&t), KNOT_EOK);
	assert_int_equal(k8s_table_ready(&t), 0);
	k8s_table_set_ready(&t, K8S_READY_CLUSTER);
	assert_int_equal(k8s_table_ready(&t), K8S_READY_CLUSTER | K8S_READY_PTR);
	k8s_table_deinit(&t);
}

static void reverse_prefixes_count_their_addresses(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, generation(1, 1)), KNOT_EOK);
	k8s_ip_t ip = fx_ip("10.1.0.2");
	assert_true(k8s_table_prefix(&t, &ip, 8));
	assert_true(k8s_table_prefix(&t, &ip, 24));
	k8s_ip_t other = fx_ip("10.2.0.0");
	assert_false(k8s_table_prefix(&t, &other, 16));
	k8s_table_del_block(&t, K8S_ZONE_CLUSTER, "shop", "web");
	assert_false(k8s_table_prefix(&t, &ip, 8));
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void assert_dashed(uint8_t family, const char *ip, const char *expected)
{
	k8s_addr_t addr = { .family = family };
	assert_int_equal(inet_pton(family, ip, addr.bytes), 1);
	uint8_t label[64];
	size_t size = k8s_addr_label(NULL, &addr, label);
	assert_int_equal(size, 1 + strlen(expected));
	assert_int_equal(label[0], strlen(expected));
	assert_memory_equal(label + 1, expected, strlen(expected));
}

static void an_endpoint_without_hostname_is_labelled_by_its_dashed_address(void **state)
{
	assert_dashed(AF_INET, "10.0.100.255", "10-0-100-255");
	assert_dashed(AF_INET, "0.9.10.99", "0-9-10-99");
	assert_dashed(AF_INET6, "fd00::7", "fd00--7");
	assert_dashed(AF_INET6, "fd00::", "fd00--0");
}

static void pods_sharing_an_ip_are_kept_and_removed_apart(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	// A host-network pod has its node's IP, which other pods of other namespaces share.
	k8s_pod_t a = { .meta = { .ns = "one", .name = "a" }, .live = true, .ip_count = 1,
	                .ips = { fx_ip("10.0.0.5") } };
	k8s_pod_t b = { .meta = { .ns = "two", .name = "b" }, .live = true, .host_network = true,
	                .ip_count = 1, .ips = { fx_ip("10.0.0.5") } };
	assert_int_equal(k8s_table_set_pod(&t, NULL, &a), KNOT_EOK);
	k8s_ip_t ip = fx_ip("10.0.0.5");
	assert_true(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03one"));
	assert_false(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03two"));
	assert_int_equal(k8s_table_set_pod(&t, NULL, &b), KNOT_EOK);
	assert_true(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03one"));
	assert_true(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03two"));
	assert_int_equal(k8s_table_stats(&t).pod_count, 2);
	assert_int_equal(k8s_table_set_pod(&t, &a, NULL), KNOT_EOK);
	assert_false(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03one"));
	assert_true(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03two"));
	assert_int_equal(k8s_table_set_pod(&t, &b, NULL), KNOT_EOK);
	assert_false(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03two"));
	assert_int_equal(k8s_table_stats(&t).pod_count, 0);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/* A 63-character namespace as a wire label. */
#define NS63 "\x3f" "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"

static void a_pod_is_verified_only_in_its_own_namespace_whatever_the_lengths(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_pod_t a = { .meta = { .ns = "one", .name = "a" }, .live = true, .ip_count = 1,
	                .ips = { fx_ip("10.0.0.6") } };
	assert_int_equal(k8s_table_set_pod(&t, NULL, &a), KNOT_EOK);
	k8s_ip_t ip = fx_ip("10.0.0.6");
	// The stored namespace is shorter than the one asked: only its own bytes are compared.
	assert_false(k8s_table_pod(&t, &ip, (const uint8_t *)NS63));
	assert_true(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03one"));
	assert_int_equal(k8s_table_set_pod(&t, &a, NULL), KNOT_EOK);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void removing_a_pod_leaves_one_with_its_address_in_a_shorter_namespace(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_pod_t a = { .meta = { .ns = "one", .name = "a" }, .live = true, .ip_count = 1,
	                .ips = { fx_ip("10.0.0.7") } };
	k8s_pod_t b = { .meta = { .ns = (const char *)NS63 + 1, .name = "b" }, .live = true,
	                .ip_count = 1, .ips = { fx_ip("10.0.0.7") } };
	assert_int_equal(k8s_table_set_pod(&t, NULL, &a), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&t, NULL, &b), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&t, &b, NULL), KNOT_EOK);
	k8s_ip_t ip = fx_ip("10.0.0.7");
	assert_true(k8s_table_pod(&t, &ip, (const uint8_t *)"\x03one"));
	assert_false(k8s_table_pod(&t, &ip, (const uint8_t *)NS63));
	assert_int_equal(k8s_table_stats(&t).pod_count, 1);
	assert_int_equal(k8s_table_set_pod(&t, &a, NULL), KNOT_EOK);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void many_services_grow_the_index_at_most_half_full(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	char names[1000][16];
	for (int i = 0; i < 1000; i++) {
		snprintf(names[i], sizeof(names[i]), "svc%d", i);
		char ip[16];
		snprintf(ip, sizeof(ip), "10.96.%d.%d", i / 250, i % 250 + 1);
		k8s_service_t svc = fx_service("shop", names[i], K8S_SVC_CLUSTERIP, ip, NULL);
		assert_int_equal(k8s_table_put_block(&t, k8s_records_service(&svc, NULL, 0, &rconf)),
		                 KNOT_EOK);
		if (i % 100 == 0) {
			k8s_table_commit(&t);
		}
		// Sparse: a name that has no service ends its probe soon.
		assert_true(2 * t.svcs.used <= t.svcs.arr->mask + 1);
	}
	for (int i = 0; i < 1000; i += 2) {
		k8s_table_del_block(&t, K8S_ZONE_CLUSTER, "shop", names[i]);
	}
	for (int i = 0; i < 1000; i++) {
		uint8_t owner[128];
		size_t len = k8s_svc_owner("shop", names[i], owner);
		const k8s_block_t *svc = k8s_table_block(&t, K8S_ZONE_CLUSTER, owner, len);
		assert_true((svc != NULL) == (i % 2 == 1));
	}
	assert_int_equal(k8s_table_stats(&t).svc_count[K8S_ZONE_CLUSTER], 500);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/*! \brief A headless service of \a count endpoints h<i>, all at one address. */
static k8s_block_t *one_address(const char *name, unsigned count, const char *ip)
{
	k8s_endpoint_t *eps = calloc(count, sizeof(*eps));
	char (*names)[16] = calloc(count, sizeof(*names));
	assert_non_null(eps);
	assert_non_null(names);
	for (unsigned i = 0; i < count; i++) {
		snprintf(names[i], sizeof(names[i]), "h%u", i);
		eps[i] = fx_ep(ip, true, names[i], NULL);
	}
	k8s_slice_t slice = fx_slice("shop", name, name, AF_INET, eps, count, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", name, K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, slices, 1, &rconf);
	free(eps);
	free(names);
	return block;
}

static void records_sharing_an_address_take_one_slot_of_the_ptr_index(void **state)
{
	// Inserting 20,000 records of one address into one probe run took quadratic time.
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, one_address("a", 20000, "10.5.0.1")), KNOT_EOK);
	assert_int_equal(t.ptrs.live, 1);
	k8s_ip_t ip = fx_ip("10.5.0.1");
	const k8s_addr_t *refs[4];
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 20000);

	// Another service joins the address, the first one shrinks, then goes.
	assert_int_equal(k8s_table_put_block(&t, one_address("b", 3, "10.5.0.1")), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, one_address("a", 19999, "10.5.0.1")), KNOT_EOK);
	assert_int_equal(t.ptrs.live, 1);
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 20002);
	assert_int_equal(k8s_table_del_block(&t, K8S_ZONE_CLUSTER, "shop", "a"), KNOT_EOK);
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 3);
	for (int i = 0; i < 3; i++) {
		assert_memory_equal(k8s_addr_svc(refs[i])->owner, "\x01" "b", 2);
	}
	assert_true(k8s_table_prefix(&t, &ip, 24));
	assert_int_equal(k8s_table_del_block(&t, K8S_ZONE_CLUSTER, "shop", "b"), KNOT_EOK);
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 0);
	assert_int_equal(t.ptrs.live, 0);
	assert_false(k8s_table_prefix(&t, &ip, 8));
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void a_cluster_record_comes_first_among_many_clusterset_ones(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	char names[10][16];
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "imp%d", i);
		k8s_serviceimport_t imp = {
			.meta = { .kind = K8S_SERVICEIMPORT, .ns = "shop", .name = names[i] },
			.ip_count = 1, .ips = { fx_ip("10.6.0.1") },
		};
		assert_int_equal(k8s_table_put_block(&t, k8s_records_import(&imp, NULL, 0, &rconf)),
		                 KNOT_EOK);
	}
	k8s_service_t svc = fx_service("shop", "local", K8S_SVC_CLUSTERIP, "10.6.0.1", NULL);
	assert_int_equal(k8s_table_put_block(&t, k8s_records_service(&svc, NULL, 0, &rconf)), KNOT_EOK);
	k8s_ip_t ip = fx_ip("10.6.0.1");
	const k8s_addr_t *refs[4];
	assert_int_equal(k8s_table_ptr(&t, &ip, refs, 4), 11);
	assert_int_equal(k8s_addr_svc(refs[0])->zone, K8S_ZONE_CLUSTER);
	assert_int_equal(k8s_addr_svc(refs[1])->zone, K8S_ZONE_CLUSTERSET);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/*! \brief The index hash before it had a key (FNV-1a of family and address, then a finaliser). */
static uint32_t public_hash(const uint8_t *bytes)
{
	uint32_t h = 2166136261u;
	uint8_t family = AF_INET6;
	h = (h ^ family) * 16777619u;
	for (int i = 0; i < 16; i++) {
		h = (h ^ bytes[i]) * 16777619u;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static void addresses_chosen_to_collide_do_not_share_a_probe_run(void **state)
{
	// 600 addresses whose public hash has the same 12 low bits: one slot of the index.
	enum { COUNT = 600 };
	static k8s_endpoint_t eps[COUNT];
	static char texts[COUNT][48];
	uint8_t bytes[16] = { 0xfd };
	unsigned found = 0;
	for (uint32_t n = 1; found < COUNT; n++) {
		memcpy(bytes + 12, &n, 4);
		if ((public_hash(bytes) & 0xfff) == 0) {
			inet_ntop(AF_INET6, bytes, texts[found], sizeof(texts[0]));
			eps[found] = fx_ep(texts[found], true, NULL, NULL);
			found++;
		}
	}
	k8s_slice_t slice = fx_slice("shop", "flood-x", "flood", AF_INET6, eps, COUNT, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", "flood", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_put_block(&t, k8s_records_service(&svc, slices, 1, &rconf)),
	                 KNOT_EOK);
	assert_int_equal(t.ptrs.live, COUNT);

	// The farthest any of them sits from its home slot.
	size_t worst = 0;
	const k8s_rcuhash_arr_t *arr = t.ptrs.arr;
	for (size_t pos = 0; pos <= arr->mask; pos++) {
		void *elem = arr->slots[pos];
		if (elem == NULL || elem == K8S_RCUHASH_TOMB) {
			continue;
		}
		size_t dist = (pos - (t.ptrs.hash(elem) & arr->mask)) & arr->mask;
		worst = (dist > worst) ? dist : worst;
	}
	assert_true(worst < 64);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

/* Readers against a writer. */

static k8s_table_t shared;
static atomic_bool done;
static atomic_ulong seen, torn;

static void *reader(void *arg)
{
	urcu_memb_register_thread();
	while (!atomic_load(&done)) {
		urcu_memb_read_lock();
		const k8s_block_t *svc = lookup(&shared);
		if (svc != NULL) {
			atomic_fetch_add(&seen, 1);
			if (!consistent(svc)) {
				atomic_fetch_add(&torn, 1);
			}
			// PTR references lead to a consistent block too.
			k8s_ip_t ip = { .family = AF_INET };
			memcpy(ip.bytes, svc->addrs[svc->sip_count].bytes, 4);
			const k8s_addr_t *refs[4];
			size_t n = k8s_table_ptr(&shared, &ip, refs, 4);
			for (size_t i = 0; i < n && i < 4; i++) {
				if (!consistent(k8s_addr_svc(refs[i]))) {
					atomic_fetch_add(&torn, 1);
				}
			}
		}
		urcu_memb_read_unlock();
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static void readers_never_see_half_a_change(void **state)
{
	assert_int_equal(k8s_table_init(&shared), KNOT_EOK);
	pthread_t threads[2];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_create(&threads[i], NULL, reader, NULL), 0);
	}
	for (unsigned gen = 0; gen < 3000; gen++) {
		assert_int_equal(k8s_table_put_block(&shared, generation(gen, gen % 40 + 1)), KNOT_EOK);
		k8s_table_commit(&shared);
	}
	atomic_store(&done, true);
	for (int i = 0; i < 2; i++) {
		pthread_join(threads[i], NULL);
	}
	assert_true(atomic_load(&seen) > 0);
	assert_int_equal(atomic_load(&torn), 0);
	urcu_memb_barrier();
	k8s_table_deinit(&shared);
}

static int setup(void **state)
{
	urcu_memb_register_thread();
	return 0;
}

static int teardown(void **state)
{
	urcu_memb_unregister_thread();
	return 0;
}

static void a_client_address_names_the_namespace_of_its_pods(void **state)
{
	k8s_table_t t;
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	k8s_pod_t a = { .meta = { .ns = "one", .name = "a" }, .live = true, .ip_count = 1,
	                .ips = { fx_ip("10.0.0.5") } };
	k8s_pod_t again = { .meta = { .ns = "one", .name = "a2" }, .live = true, .ip_count = 1,
	                    .ips = { fx_ip("10.0.0.5") } };
	k8s_pod_t other = { .meta = { .ns = "two", .name = "b" }, .live = true, .ip_count = 1,
	                    .ips = { fx_ip("10.0.0.5") } };
	k8s_pod_t host = { .meta = { .ns = "one", .name = "h" }, .live = true, .host_network = true,
	                   .ip_count = 1, .ips = { fx_ip("10.0.0.5") } };
	k8s_ip_t ip = fx_ip("10.0.0.5");
	assert_null(k8s_table_pod_ns(&t, &ip));
	assert_int_equal(k8s_table_set_pod(&t, NULL, &a), KNOT_EOK);
	assert_memory_equal(k8s_table_pod_ns(&t, &ip), "\x03one", 4);
	// A pod replacing another in the same namespace (both listed for a moment).
	assert_int_equal(k8s_table_set_pod(&t, NULL, &again), KNOT_EOK);
	assert_memory_equal(k8s_table_pod_ns(&t, &ip), "\x03one", 4);
	// Two namespaces, or a node's address: no namespace.
	assert_int_equal(k8s_table_set_pod(&t, NULL, &other), KNOT_EOK);
	assert_null(k8s_table_pod_ns(&t, &ip));
	assert_int_equal(k8s_table_set_pod(&t, &other, NULL), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&t, NULL, &host), KNOT_EOK);
	assert_null(k8s_table_pod_ns(&t, &ip));
	for (k8s_pod_t *p = &a; p != NULL; p = (p == &a) ? &again : (p == &again) ? &host : NULL) {
		assert_int_equal(k8s_table_set_pod(&t, p, NULL), KNOT_EOK);
	}
	assert_int_equal(k8s_table_stats(&t).pod_count, 0);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);
}

static void a_new_table_where_an_old_one_was_answers_from_its_own_pods(void **state)
{
	// k8s_table_pod_ns() remembers its last answer per thread, by table and pod generation.
	k8s_table_t t;
	k8s_pod_t a = { .meta = { .ns = "one", .name = "a" }, .live = true, .ip_count = 1,
	                .ips = { fx_ip("10.0.0.5") } };
	k8s_ip_t ip = fx_ip("10.0.0.5");
	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&t, NULL, &a), KNOT_EOK);
	assert_memory_equal(k8s_table_pod_ns(&t, &ip), "\x03one", 4);
	assert_int_equal(k8s_table_set_pod(&t, &a, NULL), KNOT_EOK);
	k8s_table_commit(&t);
	urcu_memb_barrier();
	k8s_table_deinit(&t);

	assert_int_equal(k8s_table_init(&t), KNOT_EOK);
	assert_null(k8s_table_pod_ns(&t, &ip));
	k8s_table_deinit(&t);
}

/*! \brief This binary's hash key as printed by a copy of it run with \a env set. */
static void key_of_run(const char *self, const char *env, char *out, size_t size)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s TEST_TABLE_PRINT_HASH_KEY=1 '%s'", env, self);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, size, f));
	assert_int_equal(pclose(f), 0);
	out[strcspn(out, "\n")] = '\0';
}

static void the_bench_hash_key_is_ignored_outside_valgrind(void **state)
{
	// MODK8S_BENCH_HASH_KEY fixes the key under valgrind only (bench/run's callgrind):
	// two processes given it here still draw keys of their own.
	char self[4096] = "", a[64], b[64], c[64];
	assert_true(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
	key_of_run(self, "MODK8S_BENCH_HASH_KEY=1", a, sizeof(a));
	key_of_run(self, "MODK8S_BENCH_HASH_KEY=1", b, sizeof(b));
	key_of_run(self, "", c, sizeof(c));
	assert_int_equal(strlen(a), 32);
	assert_string_not_equal(a, b);
	assert_string_not_equal(a, c);
}

int main(void)
{
	if (getenv("TEST_TABLE_PRINT_HASH_KEY") != NULL) {
		printf("%016llx%016llx\n", (unsigned long long)k8s_hash_key[0],
		       (unsigned long long)k8s_hash_key[1]);
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_replaced_service_is_found_with_its_new_records),
		cmocka_unit_test(the_bench_hash_key_is_ignored_outside_valgrind),
		cmocka_unit_test(a_service_is_found_with_its_namespace_only_while_the_namespace_exists),
		cmocka_unit_test(a_new_table_where_an_old_one_was_answers_from_its_own_pods),
		cmocka_unit_test(ptr_references_follow_the_service),
		cmocka_unit_test(a_deferred_ptr_index_is_built_of_the_blocks_published_meanwhile),
		cmocka_unit_test(without_deferring_the_ptr_index_is_ready_with_the_zone),
		cmocka_unit_test(reverse_prefixes_count_their_addresses),
		cmocka_unit_test(an_endpoint_without_hostname_is_labelled_by_its_dashed_address),
		cmocka_unit_test(pods_sharing_an_ip_are_kept_and_removed_apart),
		cmocka_unit_test(a_pod_is_verified_only_in_its_own_namespace_whatever_the_lengths),
		cmocka_unit_test(removing_a_pod_leaves_one_with_its_address_in_a_shorter_namespace),
		cmocka_unit_test(many_services_grow_the_index_at_most_half_full),
		cmocka_unit_test(records_sharing_an_address_take_one_slot_of_the_ptr_index),
		cmocka_unit_test(a_cluster_record_comes_first_among_many_clusterset_ones),
		cmocka_unit_test(addresses_chosen_to_collide_do_not_share_a_probe_run),
		cmocka_unit_test(readers_never_see_half_a_change),
		cmocka_unit_test(a_client_address_names_the_namespace_of_its_pods),
	};
	return cmocka_run_group_tests_name("table", tests, setup, teardown);
}
