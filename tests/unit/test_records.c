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
 * Service blocks built from hostile objects: labels that collide, names with
 * more addresses than a message carries, slices with many ports and imports
 * from many clusters. Run under build-asan, a block written past its end fails.
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>

#include "table/records.h"
#include "fixtures.h"

static const k8s_records_conf_t rconf = { 0 };

static const k8s_addr_t *endpoints(const k8s_block_t *svc, const char *label, size_t *count)
{
	uint8_t wire[64] = { strlen(label) };
	memcpy(wire + 1, label, wire[0]);
	return k8s_svc_endpoints(svc, NULL, 0, wire, count);
}

/*! \brief Endpoints numbered from 10.<a>.<b>.<c> upwards, all named \a hostname (or none). */
static k8s_endpoint_t *numbered_eps(size_t count, const char *hostname)
{
	k8s_endpoint_t *eps = calloc(count, sizeof(*eps));
	assert_non_null(eps);
	for (size_t i = 0; i < count; i++) {
		eps[i].ip.family = AF_INET;
		uint32_t addr = htonl(0x0a000000u + 1 + i);
		memcpy(eps[i].ip.bytes, &addr, 4);
		eps[i].ready = true;
		eps[i].hostname = hostname;
	}
	return eps;
}

static void a_hostname_equal_to_a_dashed_address_is_one_name_with_both_addresses(void **state)
{
	// 10.244.1.7 has no hostname; another pod set hostname 10-244-1-7.
	k8s_endpoint_t eps[] = {
		fx_ep("10.244.1.7", true, NULL, NULL),
		fx_ep("10.244.1.9", true, "10-244-1-7", NULL),
		fx_ep("10.244.1.5", true, "10-244-1-7", NULL),
	};
	k8s_slice_t slice = fx_slice("shop", "web-x", "web", AF_INET, eps, 3, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", "web", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, slices, 1, &rconf);
	assert_non_null(block);

	size_t count = 0;
	const k8s_addr_t *found = endpoints(block, "10-244-1-7", &count);
	assert_int_equal(count, 3);
	// One stored label: one owner, one SRV target.
	for (size_t i = 0; i < count; i++) {
		assert_int_not_equal(found[i].label, 0);
		assert_int_equal(found[i].label, found[0].label);
	}
	assert_int_equal(block->capped, 0);
	free(block);
}

static void a_dashed_address_after_a_hostname_of_another_cluster_keeps_its_own_label(void **state)
{
	// Sorted by (cluster, label): "a" ends with an explicit 10-1-0-1, "b" starts with
	// the dashed 10-1-0-1, then "b" has an explicit one again.
	k8s_endpoint_t a_eps[] = { fx_ep("10.1.0.9", true, "10-1-0-1", NULL) };
	k8s_endpoint_t b_eps[] = {
		fx_ep("10.1.0.1", true, NULL, NULL),
		fx_ep("10.1.0.2", true, "10-1-0-1", NULL),
	};
	k8s_slice_t slices[] = {
		fx_slice("shop", "a", NULL, AF_INET, a_eps, 1, NULL, 0),
		fx_slice("shop", "b", NULL, AF_INET, b_eps, 2, NULL, 0),
	};
	slices[0].source_cluster = "a";
	slices[1].source_cluster = "b";
	const k8s_slice_t *ptrs[] = { &slices[0], &slices[1] };
	k8s_serviceimport_t imp = {
		.meta = { .kind = K8S_SERVICEIMPORT, .ns = "shop", .name = "web" },
		.headless = true,
	};
	k8s_block_t *block = k8s_records_import(&imp, ptrs, 2, &rconf);
	assert_non_null(block);
	assert_int_equal(block->addr_count, 3);
	size_t count = 0;
	const uint8_t label[] = "\x08" "10-1-0-1";
	assert_non_null(k8s_svc_endpoints(block, (const uint8_t *)"\x01" "b", 2, label, &count));
	assert_int_equal(count, 2);
	assert_non_null(k8s_svc_endpoints(block, (const uint8_t *)"\x01" "a", 2, label, &count));
	assert_int_equal(count, 1);
	free(block);
}

static void a_headless_service_of_65600_addresses_answers_the_first_4000(void **state)
{
	// 700 endpoints x 94 addresses in the API; here one slice of as many.
	size_t n = 65600;
	k8s_endpoint_t *eps = numbered_eps(n, NULL);
	k8s_slice_t slice = fx_slice("shop", "big-x", "big", AF_INET, eps, n, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", "big", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, slices, 1, &rconf);
	assert_non_null(block);

	assert_int_equal(block->rrs_a.count, K8S_MAX_A_PER_NAME);
	assert_int_equal(block->rrs_a.size, K8S_MAX_A_PER_NAME * knot_rdata_size(4));
	assert_int_equal(block->capped, n - K8S_MAX_A_PER_NAME);
	// Every endpoint keeps its own name (and PTR record).
	assert_int_equal(block->addr_count, n);
	size_t count = 0;
	assert_non_null(endpoints(block, "10-0-255-255", &count));
	assert_int_equal(count, 1);
	free(block);
	free(eps);
}

static void a_hostname_of_65600_addresses_keeps_4000_of_them(void **state)
{
	size_t n = 65600;
	k8s_endpoint_t *eps = numbered_eps(n, "x");
	k8s_slice_t slice = fx_slice("shop", "big-x", "big", AF_INET, eps, n, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", "big", K8S_SVC_CLUSTERIP, "10.96.0.50", NULL);
	k8s_block_t *block = k8s_records_service(&svc, slices, 1, &rconf);
	assert_non_null(block);

	size_t count = 0;
	const k8s_addr_t *found = endpoints(block, "x", &count);
	assert_non_null(found);
	assert_int_equal(count, K8S_MAX_A_PER_NAME);
	assert_int_equal(block->addr_count, 1 + K8S_MAX_A_PER_NAME);
	assert_int_equal(block->capped, n - K8S_MAX_A_PER_NAME);
	// The lowest addresses are kept.
	assert_memory_equal(found[0].bytes, "\x0a\x00\x00\x01", 4);
	free(block);
	free(eps);
}

static void aaaa_records_of_a_name_stop_at_2300_and_a_records_go_on(void **state)
{
	size_t n = 3000;
	k8s_endpoint_t *v4 = numbered_eps(n, "x");
	k8s_endpoint_t *v6 = numbered_eps(n, "x");
	for (size_t i = 0; i < n; i++) {
		v6[i].ip.family = AF_INET6;
		memcpy(v6[i].ip.bytes, "\xfd\x00", 2);
		memcpy(v6[i].ip.bytes + 12, v4[i].ip.bytes, 4);
	}
	k8s_slice_t slices[] = {
		fx_slice("shop", "x6", "dual", AF_INET6, v6, n, NULL, 0),
		fx_slice("shop", "x4", "dual", AF_INET, v4, n, NULL, 0),
	};
	const k8s_slice_t *ptrs[] = { &slices[0], &slices[1] };
	k8s_service_t svc = fx_service("shop", "dual", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, ptrs, 2, &rconf);
	assert_non_null(block);
	size_t count = 0;
	endpoints(block, "x", &count);
	assert_int_equal(count, n + K8S_MAX_AAAA_PER_NAME);
	assert_int_equal(block->rrs_a.count, n);
	assert_int_equal(block->rrs_aaaa.count, K8S_MAX_AAAA_PER_NAME);
	assert_int_equal(block->capped, n - K8S_MAX_AAAA_PER_NAME);
	free(block);
	free(v4);
	free(v6);
}

/*! \brief Port names p<i>: \a slices slices of \a count ports each, every slice the same. */
static void many_ports_block(size_t slice_count, size_t count, size_t *port_count)
{
	k8s_port_t *ports = calloc(count, sizeof(*ports));
	char (*names)[16] = calloc(count, sizeof(*names));
	assert_non_null(ports);
	assert_non_null(names);
	for (size_t i = 0; i < count; i++) {
		snprintf(names[i], sizeof(names[i]), "p%zu", i);
		ports[i] = (k8s_port_t){ .name = names[i], .port = 1 + i % 60000,
		                         .proto = K8S_PROTO_TCP };
	}
	k8s_endpoint_t eps[] = { fx_ep("10.1.0.1", true, NULL, NULL) };
	k8s_slice_t *slices = calloc(slice_count, sizeof(*slices));
	const k8s_slice_t **ptrs = calloc(slice_count, sizeof(*ptrs));
	for (size_t i = 0; i < slice_count; i++) {
		slices[i] = fx_slice("shop", "s", "ports", AF_INET, eps, 1, ports, count);
		ptrs[i] = &slices[i];
	}
	k8s_service_t svc = fx_service("shop", "ports", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, ptrs, slice_count, &rconf);
	assert_non_null(block);
	*port_count = block->port_count;
	assert_null(block->ep_ports);  // Every endpoint has every port: no sets stored.
	// Sorted by name, each once.
	for (size_t i = 1; i < block->port_count; i++) {
		const uint8_t *a = block->strings + block->ports[i - 1].name;
		const uint8_t *b = block->strings + block->ports[i].name;
		int cmp = memcmp(a + 1, b + 1, (a[0] < b[0]) ? a[0] : b[0]);
		assert_true(cmp < 0 || (cmp == 0 && a[0] < b[0]));
	}
	free(block);
	free(slices);
	free(ptrs);
	free(ports);
	free(names);
}

static void four_slices_of_20000_ports_give_20000_srv_ports(void **state)
{
	size_t port_count = 0;
	many_ports_block(4, 20000, &port_count);
	assert_int_equal(port_count, 20000);
}

/*! \brief Index of a port (name, number) in a block, asserted present. */
static size_t port_index(const k8s_block_t *block, const char *name, uint16_t number)
{
	for (size_t i = 0; i < block->port_count; i++) {
		const uint8_t *label = block->strings + block->ports[i].name;
		if (label[0] == strlen(name) && memcmp(label + 1, name, label[0]) == 0 &&
		    block->ports[i].port == number) {
			return i;
		}
	}
	fail_msg("no port %s %u", name, number);
	return 0;
}

/*! \brief True if the endpoint record of an address has a port. */
static bool has_port(const k8s_block_t *block, const char *ip, const char *name, uint16_t number)
{
	k8s_ip_t want = fx_ip(ip);
	size_t port = port_index(block, name, number);
	for (uint32_t i = block->sip_count; i < block->addr_count; i++) {
		if (memcmp(block->addrs[i].bytes, want.bytes, 4) == 0) {
			return k8s_addr_has_port(block, &block->addrs[i], port, port + 1);
		}
	}
	fail_msg("no endpoint %s", ip);
	return false;
}

static void slices_disagreeing_on_a_port_number_keep_each_number_for_their_own_endpoints(void **state)
{
	// Issue 22's reproducer: a rollout moved http from 8080 to 9090 and added metrics.
	k8s_port_t a_ports[] = { { .name = "http", .port = 8080, .proto = K8S_PROTO_TCP } };
	k8s_port_t b_ports[] = {
		{ .name = "metrics", .port = 9100, .proto = K8S_PROTO_TCP },
		{ .name = "http", .port = 9090, .proto = K8S_PROTO_TCP },
	};
	k8s_endpoint_t a_eps[] = { fx_ep("10.1.1.1", true, NULL, NULL), fx_ep("10.1.1.3", true, NULL, NULL) };
	k8s_endpoint_t b_eps[] = { fx_ep("10.1.1.2", true, NULL, NULL) };
	k8s_slice_t slices[] = {
		fx_slice("shop", "roll-a", "roll", AF_INET, a_eps, 2, a_ports, 1),
		fx_slice("shop", "roll-b", "roll", AF_INET, b_eps, 1, b_ports, 2),
	};
	for (int order = 0; order < 2; order++) {
		const k8s_slice_t *ptrs[] = { &slices[order], &slices[1 - order] };
		k8s_service_t svc = fx_service("shop", "roll", K8S_SVC_HEADLESS, NULL, NULL);
		k8s_block_t *block = k8s_records_service(&svc, ptrs, 2, &rconf);
		assert_non_null(block);
		// Each (name, protocol, number) once, by name then number.
		assert_int_equal(block->port_count, 3);
		assert_int_equal(block->ports[0].port, 8080);
		assert_int_equal(block->ports[1].port, 9090);
		assert_int_equal(block->ports[2].port, 9100);
		assert_non_null(block->ep_ports);
		assert_true(has_port(block, "10.1.1.1", "http", 8080));
		assert_false(has_port(block, "10.1.1.1", "http", 9090));
		assert_false(has_port(block, "10.1.1.1", "metrics", 9100));
		assert_true(has_port(block, "10.1.1.3", "http", 8080));
		assert_false(has_port(block, "10.1.1.3", "metrics", 9100));
		assert_false(has_port(block, "10.1.1.2", "http", 8080));
		assert_true(has_port(block, "10.1.1.2", "http", 9090));
		assert_true(has_port(block, "10.1.1.2", "metrics", 9100));
		// Equal sets are stored once: two sets of one port and two.
		assert_int_equal(block->ep_ports[0], block->ep_ports[2]);
		assert_int_not_equal(block->ep_ports[0], block->ep_ports[1]);
		assert_int_equal(block->capped, 0);
		free(block);
	}
}

static void an_address_in_two_slices_has_the_ports_of_both(void **state)
{
	k8s_port_t old_port[] = { { .name = "http", .port = 8080, .proto = K8S_PROTO_TCP } };
	k8s_port_t new_port[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_endpoint_t eps[] = { fx_ep("10.1.0.1", true, NULL, NULL) };
	k8s_endpoint_t new_eps[] = { fx_ep("10.1.0.1", true, NULL, NULL), fx_ep("10.1.0.2", true, NULL, NULL) };
	k8s_slice_t slices[] = {
		fx_slice("shop", "old", "web", AF_INET, eps, 1, old_port, 1),
		fx_slice("shop", "new", "web", AF_INET, new_eps, 2, new_port, 1),
	};
	for (int order = 0; order < 2; order++) {
		const k8s_slice_t *ptrs[] = { &slices[order], &slices[1 - order] };
		k8s_service_t svc = fx_service("shop", "web", K8S_SVC_HEADLESS, NULL, NULL);
		k8s_block_t *block = k8s_records_service(&svc, ptrs, 2, &rconf);
		assert_non_null(block);
		assert_int_equal(block->addr_count, 2);  // One record per address all the same.
		assert_int_equal(block->port_count, 2);
		assert_true(has_port(block, "10.1.0.1", "http", 80));
		assert_true(has_port(block, "10.1.0.1", "http", 8080));
		assert_true(has_port(block, "10.1.0.2", "http", 80));
		assert_false(has_port(block, "10.1.0.2", "http", 8080));
		free(block);
	}
}

static void slices_of_one_address_and_every_port_store_no_port_sets(void **state)
{
	// The address in both slices has every port: nothing to tell apart.
	k8s_port_t old_port[] = { { .name = "http", .port = 8080, .proto = K8S_PROTO_TCP } };
	k8s_port_t new_port[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_endpoint_t eps[] = { fx_ep("10.1.0.1", true, NULL, NULL) };
	k8s_slice_t slices[] = {
		fx_slice("shop", "old", "web", AF_INET, eps, 1, old_port, 1),
		fx_slice("shop", "new", "web", AF_INET, eps, 1, new_port, 1),
	};
	const k8s_slice_t *ptrs[] = { &slices[0], &slices[1] };
	k8s_service_t svc = fx_service("shop", "web", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, ptrs, 2, &rconf);
	assert_non_null(block);
	assert_int_equal(block->port_count, 2);
	assert_null(block->ep_ports);
	assert_null(block->port_sets);
	assert_true(has_port(block, "10.1.0.1", "http", 80));
	assert_true(has_port(block, "10.1.0.1", "http", 8080));
	free(block);
}

static void ports_past_the_cap_are_in_no_endpoints_port_set(void **state)
{
	// Two slices of 40000 distinct ports each, one endpoint each: 80000 ports, 65535 kept.
	size_t count = 40000;
	k8s_port_t *ports = calloc(2 * count, sizeof(*ports));
	char (*names)[16] = calloc(2 * count, sizeof(*names));
	assert_non_null(ports);
	assert_non_null(names);
	for (size_t i = 0; i < 2 * count; i++) {
		snprintf(names[i], sizeof(names[i]), "p%05zu", i);
		ports[i] = (k8s_port_t){ .name = names[i], .port = 1 + i % 60000, .proto = K8S_PROTO_TCP };
	}
	k8s_endpoint_t a_eps[] = { fx_ep("10.1.0.1", true, NULL, NULL) };
	k8s_endpoint_t b_eps[] = { fx_ep("10.1.0.2", true, NULL, NULL) };
	k8s_slice_t slices[] = {
		fx_slice("shop", "a", "big", AF_INET, a_eps, 1, ports, count),
		fx_slice("shop", "b", "big", AF_INET, b_eps, 1, ports + count, count),
	};
	const k8s_slice_t *ptrs[] = { &slices[0], &slices[1] };
	k8s_service_t svc = fx_service("shop", "big", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, ptrs, 2, &rconf);
	assert_non_null(block);
	assert_int_equal(block->port_count, K8S_MAX_PORTS);
	assert_int_equal(block->capped, 2 * count - K8S_MAX_PORTS);
	assert_non_null(block->ep_ports);
	const uint16_t *a_set = block->port_sets + block->ep_ports[0];
	const uint16_t *b_set = block->port_sets + block->ep_ports[1];
	assert_int_equal(a_set[0], count);
	assert_int_equal(b_set[0], K8S_MAX_PORTS - count);
	for (size_t i = 0; i < b_set[0]; i++) {
		assert_true(b_set[1 + i] < block->port_count);
	}
	free(block);
	free(ports);
	free(names);
}

static void a_headless_import_whose_slices_name_no_port_gives_every_endpoint_its_ports(void **state)
{
	k8s_endpoint_t eps[] = { fx_ep("10.1.0.1", true, "web-0", NULL) };
	k8s_slice_t slice = fx_slice("shop", "a", NULL, AF_INET, eps, 1, NULL, 0);
	slice.source_cluster = "a";
	const k8s_slice_t *ptrs[] = { &slice };
	k8s_port_t imp_ports[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_serviceimport_t imp = {
		.meta = { .kind = K8S_SERVICEIMPORT, .ns = "shop", .name = "web" },
		.headless = true,
		.ports = imp_ports,
		.port_count = 1,
	};
	k8s_block_t *block = k8s_records_import(&imp, ptrs, 1, &rconf);
	assert_non_null(block);
	assert_int_equal(block->port_count, 1);
	assert_null(block->ep_ports);
	assert_true(has_port(block, "10.1.0.1", "http", 80));
	free(block);
}

static void imports_of_many_clusters_are_sorted_by_wire_form_and_merged(void **state)
{
	// Ids of two sizes, given in reverse order, each in two slices, one uppercase.
	size_t n = 3000;
	char (*ids)[16] = calloc(n, sizeof(*ids));
	k8s_endpoint_t *eps = calloc(2 * n, sizeof(*eps));
	k8s_slice_t *slices = calloc(2 * n, sizeof(*slices));
	const k8s_slice_t **ptrs = calloc(2 * n, sizeof(*ptrs));
	for (size_t i = 0; i < n; i++) {
		snprintf(ids[i], sizeof(ids[i]), (i % 2) ? "c%zu.east" : "C%zu", n - i);
		for (size_t j = 0; j < 2; j++) {
			size_t k = 2 * i + j;
			char ip[16];
			snprintf(ip, sizeof(ip), "10.%zu.%zu.%zu", j, i / 250, i % 250 + 1);
			eps[k] = fx_ep(ip, true, "web-0", NULL);
			slices[k] = fx_slice("shop", "s", NULL, AF_INET, &eps[k], 1, NULL, 0);
			slices[k].source_cluster = ids[i];
			ptrs[k] = &slices[k];
		}
	}
	k8s_serviceimport_t imp = {
		.meta = { .kind = K8S_SERVICEIMPORT, .ns = "shop", .name = "web" },
		.headless = true,
	};
	k8s_block_t *block = k8s_records_import(&imp, ptrs, 2 * n, &rconf);
	assert_non_null(block);
	assert_int_equal(block->cluster_count, n);
	for (uint16_t i = 1; i < block->cluster_count; i++) {
		const uint8_t *a = block->strings + block->clusters[i - 1];
		const uint8_t *b = block->strings + block->clusters[i];
		size_t sa = knot_dname_size(a), sb = knot_dname_size(b);
		assert_true(sa < sb || (sa == sb && memcmp(a, b, sa) < 0));
	}
	// Each cluster's web-0 has its two addresses, found under the lowercase id.
	size_t count = 0;
	const uint8_t label[] = "\x05" "web-0";
	assert_non_null(k8s_svc_endpoints(block, (const uint8_t *)"\x02" "c1" "\x04" "east", 8,
	                                  label, &count));
	assert_int_equal(count, 2);
	assert_non_null(k8s_svc_endpoints(block, (const uint8_t *)"\x04" "c300", 5, label, &count));
	assert_int_equal(count, 2);
	free(block);
	free(ids);
	free(eps);
	free(slices);
	free(ptrs);
}

/*! \brief An IPv4 address's dashed label as inet_ntop() spells it. */
static void dashed(const uint8_t bytes[4], char out[INET_ADDRSTRLEN])
{
	assert_non_null(inet_ntop(AF_INET, bytes, out, INET_ADDRSTRLEN));
	for (char *c = out; *c != '\0'; c++) {
		*c = (*c == '.') ? '-' : *c;
	}
}

static void endpoints_are_in_label_order_and_each_is_found_by_its_label(void **state)
{
	// Every octet value in every place, labels of one length differing past their
	// first 8 bytes, the longest labels: the records' sort and the lookup agree.
	static const char *const hostnames[] = {
		"abcdefghij-2", "abcdefghij-1", "abcdefgh", "abcdefgi", "a", "b",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxb",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxa",
	};
	size_t named = sizeof(hostnames) / sizeof(hostnames[0]), n = 1024 + named;
	k8s_endpoint_t *eps = calloc(n, sizeof(*eps));
	assert_non_null(eps);
	srand(42);
	for (size_t i = 0; i < n; i++) {
		eps[i].ip.family = AF_INET;
		eps[i].ready = true;
		uint8_t *b = eps[i].ip.bytes;
		if (i < 256) {
			b[0] = i; b[1] = 255 - i; b[2] = i * 7; b[3] = i * 13;
		} else {
			for (int k = 0; k < 4; k++) {
				b[k] = rand() % ((i % 3 == 0) ? 256 : 12);
			}
		}
		if (i >= 1024) {
			eps[i].hostname = hostnames[i - 1024];
		}
	}
	k8s_slice_t slice = fx_slice("shop", "mix-x", "mix", AF_INET, eps, n, NULL, 0);
	const k8s_slice_t *slices[] = { &slice };
	k8s_service_t svc = fx_service("shop", "mix", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, slices, 1, &rconf);
	assert_non_null(block);

	uint8_t prev[64] = { 0 }, label[64];
	size_t prev_size = 0;
	for (uint32_t i = block->sip_count; i < block->addr_count; i++) {
		size_t size = k8s_addr_label(block, &block->addrs[i], label);
		assert_true(i == block->sip_count || k8s_block_cmp(prev, prev_size, label, size) <= 0);
		memcpy(prev, label, size);
		prev_size = size;
	}
	for (size_t i = 0; i < n; i++) {
		char text[INET_ADDRSTRLEN];
		if (eps[i].hostname == NULL) {
			dashed(eps[i].ip.bytes, text);
		}
		size_t count = 0;
		const k8s_addr_t *found = endpoints(block, eps[i].hostname != NULL ? eps[i].hostname : text,
		                                    &count);
		assert_non_null(found);
		bool has = false;
		for (size_t j = 0; j < count; j++) {
			has = has || memcmp(found[j].bytes, eps[i].ip.bytes, 4) == 0;
		}
		assert_true(has);
	}
	free(block);
	free(eps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_hostname_equal_to_a_dashed_address_is_one_name_with_both_addresses),
		cmocka_unit_test(a_dashed_address_after_a_hostname_of_another_cluster_keeps_its_own_label),
		cmocka_unit_test(a_headless_service_of_65600_addresses_answers_the_first_4000),
		cmocka_unit_test(a_hostname_of_65600_addresses_keeps_4000_of_them),
		cmocka_unit_test(aaaa_records_of_a_name_stop_at_2300_and_a_records_go_on),
		cmocka_unit_test(four_slices_of_20000_ports_give_20000_srv_ports),
		cmocka_unit_test(slices_disagreeing_on_a_port_number_keep_each_number_for_their_own_endpoints),
		cmocka_unit_test(an_address_in_two_slices_has_the_ports_of_both),
		cmocka_unit_test(slices_of_one_address_and_every_port_store_no_port_sets),
		cmocka_unit_test(ports_past_the_cap_are_in_no_endpoints_port_set),
		cmocka_unit_test(a_headless_import_whose_slices_name_no_port_gives_every_endpoint_its_ports),
		cmocka_unit_test(imports_of_many_clusters_are_sorted_by_wire_form_and_merged),
		cmocka_unit_test(endpoints_are_in_label_order_and_each_is_found_by_its_label),
	};
	return cmocka_run_group_tests_name("records", tests, NULL, NULL);
}
