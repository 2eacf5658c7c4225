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
 * The answer path against a hand-built record table: each query goes through
 * k8s_answer() into a real libknot response, which is parsed back and
 * compared as text. One case per sentence of the Kubernetes DNS
 * specification (schema 1.0.1, with the IPv6 records of 1.1.0).
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "answer/answer.h"
#include "answer/fedname.h"
#include "table/records.h"
#include "store/topology.h"
#include "fixtures.h"
#include "answer_fixture.h"

static k8s_answer_conf_t conf;
static knot_dname_t *zone_cluster, *zone_clusterset, *zone_reverse4, *zone_reverse6;


static int setup(void **state)
{
	urcu_memb_register_thread();
	assert_int_equal(k8s_table_init(&table), KNOT_EOK);
	for (const char *const *ns = (const char *[]){ "default", "kube-system", "shop", NULL };
	     *ns != NULL; ns++) {
		assert_int_equal(k8s_table_set_ns(&table, *ns, true), KNOT_EOK);
	}

	// kubernetes.default: the specification's ClusterIP examples.
	static const k8s_port_t https[] = { { .name = "https", .port = 443, .proto = K8S_PROTO_TCP } };
	k8s_service_t kubernetes = fx_service("default", "kubernetes", K8S_SVC_CLUSTERIP,
	                                      "10.3.0.1", NULL);
	kubernetes.ports = https;
	kubernetes.port_count = 1;
	static k8s_endpoint_t api_eps[1];
	api_eps[0] = fx_ep("172.18.0.2", true, NULL, NULL);
	k8s_slice_t api_slice = fx_slice("default", "kubernetes", "kubernetes", AF_INET, api_eps, 1,
	                                 NULL, 0);
	put_service(&kubernetes, &api_slice, 1);

	// web.shop: dual stack, one named and one unnamed port.
	static const k8s_port_t web_ports[] = {
		{ .name = "http", .port = 80, .proto = K8S_PROTO_TCP },
		{ .name = NULL, .port = 8080, .proto = K8S_PROTO_TCP },
	};
	k8s_service_t web = fx_service("shop", "web", K8S_SVC_CLUSTERIP, "10.96.1.1", "fd00::1");
	web.ports = web_ports;
	web.port_count = 2;
	put_service(&web, NULL, 0);

	// headless.default: the specification's headless examples.
	static k8s_endpoint_t hl_v4[4], hl_v6[1];
	hl_v4[0] = fx_ep("10.3.0.100", true, "my-pet", NULL);
	hl_v4[1] = fx_ep("10.3.0.2", true, "my-pet-2", NULL);
	hl_v4[2] = fx_ep("10.3.0.3", true, NULL, "headless-abcde");
	hl_v4[3] = fx_ep("10.3.0.9", false, "sleepy", NULL);
	hl_v6[0] = fx_ep("2001:db8::100", true, "my-pet", NULL);
	static const k8s_port_t hl_ports[] = {
		{ .name = "https", .port = 443, .proto = K8S_PROTO_TCP },
	};
	k8s_slice_t hl_slices[2] = {
		fx_slice("default", "headless-v4", "headless", AF_INET, hl_v4, 4, hl_ports, 1),
		fx_slice("default", "headless-v6", "headless", AF_INET6, hl_v6, 1, hl_ports, 1),
	};
	k8s_service_t headless = fx_service("default", "headless", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&headless, hl_slices, 2);

	// empty.shop: headless without a ready endpoint.
	static k8s_endpoint_t empty_eps[1];
	empty_eps[0] = fx_ep("10.244.9.9", false, NULL, NULL);
	k8s_slice_t empty_slice = fx_slice("shop", "empty-x", "empty", AF_INET, empty_eps, 1, NULL, 0);
	k8s_service_t empty = fx_service("shop", "empty", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&empty, &empty_slice, 1);

	// ExternalName services: outside and inside the cluster zone.
	k8s_service_t foo = fx_service("default", "foo", K8S_SVC_EXTERNALNAME, NULL, NULL);
	foo.external_name = "www.example.com";
	put_service(&foo, NULL, 0);
	k8s_service_t alias = fx_service("shop", "alias", K8S_SVC_EXTERNALNAME, NULL, NULL);
	alias.external_name = "web.shop.svc.cluster.local";
	put_service(&alias, NULL, 0);

	// ring.shop: a headless import whose cluster ids share labels. "prod" is a cluster and
	// the last label of "east.prod"; "east.stage" has no ready endpoint, "west.stage" has.
	static k8s_endpoint_t ring_eps[4][1];
	static const char *ring_ids[] = { "prod", "east.prod", "east.stage", "west.stage" };
	static const char *ring_ips[] = { "10.80.0.1", "10.80.1.1", "10.80.2.1", "10.80.3.1" };
	k8s_slice_t ring_slices[4];
	const k8s_slice_t *ring_ptrs[4];
	for (size_t i = 0; i < 4; i++) {
		ring_eps[i][0] = fx_ep(ring_ips[i], i != 2, "web-0", NULL);
		ring_slices[i] = fx_slice("shop", ring_ids[i], NULL, AF_INET, ring_eps[i], 1, NULL, 0);
		ring_slices[i].mcs_service = "ring";
		ring_slices[i].source_cluster = ring_ids[i];
		ring_ptrs[i] = &ring_slices[i];
	}
	k8s_serviceimport_t ring = {
		.meta = { .kind = K8S_SERVICEIMPORT, .ns = "shop", .name = "ring" },
		.headless = true,
	};
	k8s_block_t *ring_block = k8s_records_import(&ring, ring_ptrs, 4, &rconf);
	assert_non_null(ring_block);
	assert_int_equal(k8s_table_put_block(&table, ring_block), KNOT_EOK);

	k8s_table_set_ready(&table, K8S_READY_CLUSTER | K8S_READY_CLUSTERSET);

	zone_cluster = knot_dname_from_str_alloc("cluster.local.");
	zone_clusterset = knot_dname_from_str_alloc("clusterset.local.");
	zone_reverse4 = knot_dname_from_str_alloc("in-addr.arpa.");
	zone_reverse6 = knot_dname_from_str_alloc("ip6.arpa.");
	conf = (k8s_answer_conf_t) {
		.role = K8S_ROLE_CLUSTER,
		.zone = zone_cluster,
		.domains = { zone_cluster, zone_clusterset },
		.ttl = 5,
		.pods = K8S_PODS_INSECURE,
	};
	assert_int_equal(k8s_answer_txt(&conf.version, "1.1.0"), KNOT_EOK);
	return 0;
}

static int teardown(void **state)
{
	k8s_table_commit(&table);
	urcu_memb_barrier();
	k8s_table_deinit(&table);
	free(conf.version.rdata);
	free(zone_cluster);
	free(zone_clusterset);
	free(zone_reverse4);
	free(zone_reverse6);
	urcu_memb_unregister_thread();
	return 0;
}

static reply_t ask(const char *name, uint16_t type)
{
	return ask_conf(&conf, name, type, KNOT_WIRE_MAX_PKTSIZE);
}


/* 2.2 Record for Schema Version */

static void dns_version_txt_holds_the_schema_version(void **state)
{
	assert_reply(ask("dns-version.cluster.local.", KNOT_RRTYPE_TXT), K8S_ANSWER_HIT,
	             "dns-version.cluster.local. TXT \"1.1.0\"");
	assert_reply(ask("dns-version.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
}

/* 2.3 Records for a Service with ClusterIP */

static void clusterip_service_has_an_a_record(void **state)
{
	assert_reply(ask("kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1");
}

static void query_matching_is_case_insensitive(void **state)
{
	assert_reply(ask("KuberNetes.DEFAULT.svc.Cluster.Local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1");
}

static void dual_stack_service_has_a_and_aaaa(void **state)
{
	assert_reply(ask("web.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "web.shop.svc.cluster.local. A 10.96.1.1");
	assert_reply(ask("web.shop.svc.cluster.local.", KNOT_RRTYPE_AAAA), K8S_ANSWER_HIT,
	             "web.shop.svc.cluster.local. AAAA fd00::1");
}

static void ipv4_only_service_has_nodata_for_aaaa(void **state)
{
	assert_reply(ask("kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_AAAA),
	             K8S_ANSWER_NODATA, "");
	assert_reply(ask("kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_TXT),
	             K8S_ANSWER_NODATA, "");
}

static void named_port_has_an_srv_record(void **state)
{
	reply_t r = ask("_https._tcp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT, "_https._tcp.kubernetes.default.svc.cluster.local. "
	             "SRV 0 100 443 kubernetes.default.svc.cluster.local.");
	// The additional section may hold the service's A record.
	assert_string_equal(r.additional, "kubernetes.default.svc.cluster.local. A 10.3.0.1");
}

static void srv_matching_port_and_protocol_only(void **state)
{
	assert_reply(ask("_https._udp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("_http._tcp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("_https._tcp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NODATA, "");
}

static void srv_port_label_longer_than_every_port_name_is_nxdomain(void **state)
{
	// kubernetes.default's only port name, "https", is the last label of its block.
	assert_reply(ask("_pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp._tcp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("_httpsx._tcp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void unnamed_ports_have_no_srv_record(void **state)
{
	assert_reply(ask("web.shop.svc.cluster.local.", KNOT_RRTYPE_SRV), K8S_ANSWER_HIT,
	             "web.shop.svc.cluster.local. SRV 0 100 80 web.shop.svc.cluster.local.");
}

static void protocol_label_is_an_empty_non_terminal(void **state)
{
	assert_reply(ask("_tcp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NODATA, "");
	assert_reply(ask("_udp.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void cluster_ip_has_a_ptr_record(void **state)
{
	k8s_answer_conf_t rev = conf;
	rev.role = K8S_ROLE_REVERSE;
	rev.zone = zone_reverse4;
	assert_reply(ask_conf(&rev, "1.0.3.10.in-addr.arpa.", KNOT_RRTYPE_PTR,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "1.0.3.10.in-addr.arpa. PTR kubernetes.default.svc.cluster.local.");
	rev.zone = zone_reverse6;
	assert_reply(ask_conf(&rev, "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.",
	                      KNOT_RRTYPE_PTR, KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. "
	             "PTR web.shop.svc.cluster.local.");
}

static void reverse_prefixes_are_empty_non_terminals(void **state)
{
	k8s_answer_conf_t rev = conf;
	rev.role = K8S_ROLE_REVERSE;
	rev.zone = zone_reverse4;
	assert_reply(ask_conf(&rev, "3.10.in-addr.arpa.", KNOT_RRTYPE_PTR, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_NODATA, "");
	assert_reply(ask_conf(&rev, "4.10.in-addr.arpa.", KNOT_RRTYPE_PTR, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&rev, "2.0.3.10.in-addr.arpa.", KNOT_RRTYPE_PTR, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_HIT, "2.0.3.10.in-addr.arpa. PTR my-pet-2.headless.default.svc.cluster.local.");
	assert_reply(ask_conf(&rev, "200.0.3.10.in-addr.arpa.", KNOT_RRTYPE_PTR, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_NXDOMAIN, "");
}

/* 2.4 Records for a Headless Service */

static void headless_service_has_an_a_record_per_ready_endpoint(void **state)
{
	assert_reply(ask("headless.default.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "headless.default.svc.cluster.local. A 10.3.0.100 | "
	             "headless.default.svc.cluster.local. A 10.3.0.2 | "
	             "headless.default.svc.cluster.local. A 10.3.0.3");
	assert_reply(ask("headless.default.svc.cluster.local.", KNOT_RRTYPE_AAAA), K8S_ANSWER_HIT,
	             "headless.default.svc.cluster.local. AAAA 2001:db8::100");
}

static void headless_service_without_ready_endpoints_is_nxdomain(void **state)
{
	assert_reply(ask("empty.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("10-244-9-9.empty.shop.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void hostname_record_per_ready_endpoint_and_address(void **state)
{
	assert_reply(ask("my-pet.headless.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_HIT, "my-pet.headless.default.svc.cluster.local. A 10.3.0.100");
	assert_reply(ask("my-pet.headless.default.svc.cluster.local.", KNOT_RRTYPE_AAAA),
	             K8S_ANSWER_HIT, "my-pet.headless.default.svc.cluster.local. AAAA 2001:db8::100");
	assert_reply(ask("my-pet-2.headless.default.svc.cluster.local.", KNOT_RRTYPE_AAAA),
	             K8S_ANSWER_NODATA, "");
}

static void endpoint_without_hostname_is_named_by_its_dashed_address(void **state)
{
	assert_reply(ask("10-3-0-3.headless.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_HIT, "10-3-0-3.headless.default.svc.cluster.local. A 10.3.0.3");
}

static void not_ready_endpoints_have_no_records(void **state)
{
	assert_reply(ask("sleepy.headless.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void headless_srv_per_ready_endpoint_and_named_port(void **state)
{
	reply_t r = ask("_https._tcp.headless.default.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_https._tcp.headless.default.svc.cluster.local. SRV 0 33 443 10-3-0-3.headless.default.svc.cluster.local. | "
	             "_https._tcp.headless.default.svc.cluster.local. SRV 0 33 443 my-pet-2.headless.default.svc.cluster.local. | "
	             "_https._tcp.headless.default.svc.cluster.local. SRV 0 33 443 my-pet.headless.default.svc.cluster.local.");
	assert_string_equal(r.additional,
	                    "10-3-0-3.headless.default.svc.cluster.local. A 10.3.0.3 | "
	                    "my-pet-2.headless.default.svc.cluster.local. A 10.3.0.2 | "
	                    "my-pet.headless.default.svc.cluster.local. A 10.3.0.100 | "
	                    "my-pet.headless.default.svc.cluster.local. AAAA 2001:db8::100");
}

static void a_hostname_equal_to_a_dashed_address_answers_both_addresses(void **state)
{
	// Any pod can set hostname 10-244-1-7: the name then has both addresses, as in CoreDNS.
	static k8s_endpoint_t eps[2];
	eps[0] = fx_ep("10.244.1.7", true, NULL, NULL);
	eps[1] = fx_ep("10.244.1.9", true, "10-244-1-7", NULL);
	static const k8s_port_t ports[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_slice_t slice = fx_slice("shop", "clash-x", "clash", AF_INET, eps, 2, ports, 1);
	k8s_service_t svc = fx_service("shop", "clash", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&svc, &slice, 1);

	assert_reply(ask("10-244-1-7.clash.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "10-244-1-7.clash.shop.svc.cluster.local. A 10.244.1.7 | "
	             "10-244-1-7.clash.shop.svc.cluster.local. A 10.244.1.9");
	reply_t r = ask("_http._tcp.clash.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_http._tcp.clash.shop.svc.cluster.local. SRV 0 100 80 10-244-1-7.clash.shop.svc.cluster.local.");
	assert_string_equal(r.additional,
	                    "10-244-1-7.clash.shop.svc.cluster.local. A 10.244.1.7 | "
	                    "10-244-1-7.clash.shop.svc.cluster.local. A 10.244.1.9");
	k8s_answer_conf_t rev = conf;
	rev.role = K8S_ROLE_REVERSE;
	rev.zone = zone_reverse4;
	assert_reply(ask_conf(&rev, "9.1.244.10.in-addr.arpa.", KNOT_RRTYPE_PTR,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "9.1.244.10.in-addr.arpa. PTR 10-244-1-7.clash.shop.svc.cluster.local.");
	k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "shop", "clash");
}

/*! \brief roll.shop: a rollout moved http from 8080 to 9090 (the reproducer of issue 22). */
static void put_roll(void)
{
	static k8s_endpoint_t a_eps[2], b_eps[1], c_eps[1];
	a_eps[0] = fx_ep("10.1.1.1", true, NULL, NULL);
	a_eps[1] = fx_ep("10.1.1.3", true, NULL, NULL);
	b_eps[0] = fx_ep("10.1.1.2", true, NULL, NULL);
	c_eps[0] = fx_ep("10.1.1.9", false, NULL, NULL);
	static const k8s_port_t a_ports[] = { { .name = "http", .port = 8080, .proto = K8S_PROTO_TCP } };
	static const k8s_port_t b_ports[] = {
		{ .name = "http", .port = 9090, .proto = K8S_PROTO_TCP },
		{ .name = "metrics", .port = 9100, .proto = K8S_PROTO_TCP },
	};
	// A slice without a ready endpoint still names its port.
	static const k8s_port_t c_ports[] = { { .name = "admin", .port = 9000, .proto = K8S_PROTO_TCP } };
	k8s_slice_t slices[] = {
		fx_slice("shop", "roll-a", "roll", AF_INET, a_eps, 2, a_ports, 1),
		fx_slice("shop", "roll-b", "roll", AF_INET, b_eps, 1, b_ports, 2),
		fx_slice("shop", "roll-c", "roll", AF_INET, c_eps, 1, c_ports, 1),
	};
	k8s_service_t svc = fx_service("shop", "roll", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&svc, slices, 3);
}

static void headless_srv_records_follow_each_slices_own_ports(void **state)
{
	put_roll();
	reply_t r = ask("_http._tcp.roll.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_http._tcp.roll.shop.svc.cluster.local. SRV 0 33 8080 10-1-1-1.roll.shop.svc.cluster.local. | "
	             "_http._tcp.roll.shop.svc.cluster.local. SRV 0 33 8080 10-1-1-3.roll.shop.svc.cluster.local. | "
	             "_http._tcp.roll.shop.svc.cluster.local. SRV 0 33 9090 10-1-1-2.roll.shop.svc.cluster.local.");
	assert_string_equal(r.additional,
	                    "10-1-1-1.roll.shop.svc.cluster.local. A 10.1.1.1 | "
	                    "10-1-1-2.roll.shop.svc.cluster.local. A 10.1.1.2 | "
	                    "10-1-1-3.roll.shop.svc.cluster.local. A 10.1.1.3");

	// Only the slice that has the port: its endpoint, and only its address in additional.
	r = ask("_metrics._tcp.roll.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_metrics._tcp.roll.shop.svc.cluster.local. SRV 0 100 9100 10-1-1-2.roll.shop.svc.cluster.local.");
	assert_string_equal(r.additional, "10-1-1-2.roll.shop.svc.cluster.local. A 10.1.1.2");

	// A port no slice has: NXDOMAIN; one whose slice has no ready endpoint: no records.
	assert_reply(ask("_grpc._tcp.roll.shop.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("_http._udp.roll.shop.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("_admin._tcp.roll.shop.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NODATA, "");

	// The bare name lists every port, the answer's records sharing the weight (as CoreDNS).
	assert_reply(ask("roll.shop.svc.cluster.local.", KNOT_RRTYPE_SRV), K8S_ANSWER_HIT,
	             "roll.shop.svc.cluster.local. SRV 0 25 8080 10-1-1-1.roll.shop.svc.cluster.local. | "
	             "roll.shop.svc.cluster.local. SRV 0 25 8080 10-1-1-3.roll.shop.svc.cluster.local. | "
	             "roll.shop.svc.cluster.local. SRV 0 25 9090 10-1-1-2.roll.shop.svc.cluster.local. | "
	             "roll.shop.svc.cluster.local. SRV 0 25 9100 10-1-1-2.roll.shop.svc.cluster.local.");
	k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "shop", "roll");
}

static void the_same_address_in_two_slices_has_both_numbers(void **state)
{
	static k8s_endpoint_t old_eps[1], new_eps[2];
	old_eps[0] = fx_ep("10.1.2.1", true, "web-0", NULL);
	new_eps[0] = fx_ep("10.1.2.1", true, "web-0", NULL);
	new_eps[1] = fx_ep("10.1.2.4", true, "web-1", NULL);
	static const k8s_port_t old_ports[] = { { .name = "http", .port = 8080, .proto = K8S_PROTO_TCP } };
	static const k8s_port_t new_ports[] = { { .name = "http", .port = 8081, .proto = K8S_PROTO_TCP } };
	k8s_slice_t slices[] = {
		fx_slice("shop", "twice-old", "twice", AF_INET, old_eps, 1, old_ports, 1),
		fx_slice("shop", "twice-new", "twice", AF_INET, new_eps, 2, new_ports, 1),
	};
	k8s_service_t svc = fx_service("shop", "twice", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&svc, slices, 2);

	reply_t r = ask("_http._tcp.twice.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_http._tcp.twice.shop.svc.cluster.local. SRV 0 33 8080 web-0.twice.shop.svc.cluster.local. | "
	             "_http._tcp.twice.shop.svc.cluster.local. SRV 0 33 8081 web-0.twice.shop.svc.cluster.local. | "
	             "_http._tcp.twice.shop.svc.cluster.local. SRV 0 33 8081 web-1.twice.shop.svc.cluster.local.");
	// The address is one record of its name and of the service's name.
	assert_string_equal(r.additional,
	                    "web-0.twice.shop.svc.cluster.local. A 10.1.2.1 | "
	                    "web-1.twice.shop.svc.cluster.local. A 10.1.2.4");
	assert_reply(ask("twice.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "twice.shop.svc.cluster.local. A 10.1.2.1 | twice.shop.svc.cluster.local. A 10.1.2.4");
	k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "shop", "twice");
}

static void a_clusterip_service_answers_its_own_ports_whatever_its_slices_say(void **state)
{
	static k8s_endpoint_t eps[1];
	eps[0] = fx_ep("10.1.3.1", true, NULL, NULL);
	static const k8s_port_t target_ports[] = {
		{ .name = "http", .port = 8080, .proto = K8S_PROTO_TCP },
		{ .name = "metrics", .port = 9100, .proto = K8S_PROTO_TCP },
	};
	static const k8s_port_t svc_ports[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_slice_t slice = fx_slice("shop", "front-x", "front", AF_INET, eps, 1, target_ports, 2);
	k8s_service_t svc = fx_service("shop", "front", K8S_SVC_CLUSTERIP, "10.96.3.1", NULL);
	svc.ports = svc_ports;
	svc.port_count = 1;
	put_service(&svc, &slice, 1);

	reply_t r = ask("_http._tcp.front.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_http._tcp.front.shop.svc.cluster.local. SRV 0 100 80 front.shop.svc.cluster.local.");
	assert_string_equal(r.additional, "front.shop.svc.cluster.local. A 10.96.3.1");
	assert_reply(ask("_metrics._tcp.front.shop.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "shop", "front");
}

static void a_name_of_65600_addresses_answers_what_a_message_carries(void **state)
{
	// A ClusterIP service whose slices hold 65,600 addresses under one hostname.
	size_t n = 65600;
	k8s_endpoint_t *eps = calloc(n, sizeof(*eps));
	assert_non_null(eps);
	for (size_t i = 0; i < n; i++) {
		eps[i].ip.family = AF_INET;
		uint32_t addr = htonl(0x0a000000u + 1 + i);
		memcpy(eps[i].ip.bytes, &addr, 4);
		eps[i].ready = true;
		eps[i].hostname = "x";
	}
	k8s_slice_t slice = fx_slice("shop", "big-x", "big", AF_INET, eps, n, NULL, 0);
	k8s_service_t svc = fx_service("shop", "big", K8S_SVC_CLUSTERIP, "10.96.0.50", NULL);
	put_service(&svc, &slice, 1);
	free(eps);

	reply_t r = ask("x.big.shop.svc.cluster.local.", KNOT_RRTYPE_A);
	assert_int_equal(r.result, K8S_ANSWER_HIT);
	assert_false(r.tc);
	assert_int_equal(r.answer_records, K8S_MAX_A_PER_NAME);
	r = ask_conf(&conf, "x.big.shop.svc.cluster.local.", KNOT_RRTYPE_A, 512);
	assert_int_equal(r.result, K8S_ANSWER_TRUNC);
	k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "shop", "big");
}

static void a_headless_srv_of_many_slices_ports_answers_what_a_message_carries(void **state)
{
	// 700 slices of 100 distinct ports (65,535 kept) and one endpoint each: most targets
	// lack most ports, which costs the answer a search per target, not ports x targets.
	size_t slice_count = 700, per_slice = 100;
	k8s_port_t *ports = calloc(slice_count * per_slice, sizeof(*ports));
	char (*names)[16] = calloc(slice_count * per_slice, sizeof(*names));
	k8s_endpoint_t *eps = calloc(slice_count, sizeof(*eps));
	k8s_slice_t *slices = calloc(slice_count, sizeof(*slices));
	const k8s_slice_t **ptrs = calloc(slice_count, sizeof(*ptrs));
	assert_true(ports != NULL && names != NULL && eps != NULL && slices != NULL && ptrs != NULL);
	for (size_t i = 0; i < slice_count * per_slice; i++) {
		snprintf(names[i], sizeof(names[i]), "p%05zu", i);
		ports[i] = (k8s_port_t){ .name = names[i], .port = 1 + i % 60000, .proto = K8S_PROTO_TCP };
	}
	for (size_t i = 0; i < slice_count; i++) {
		eps[i].ip.family = AF_INET;
		uint32_t addr = htonl(0x0a010000u + 1 + i);
		memcpy(eps[i].ip.bytes, &addr, 4);
		eps[i].ready = true;
		slices[i] = fx_slice("shop", "many-x", "many", AF_INET, &eps[i], 1,
		                     ports + i * per_slice, per_slice);
		ptrs[i] = &slices[i];
	}
	k8s_service_t svc = fx_service("shop", "many", K8S_SVC_HEADLESS, NULL, NULL);
	k8s_block_t *block = k8s_records_service(&svc, ptrs, slice_count, &rconf);
	assert_non_null(block);
	assert_int_equal(block->port_count, K8S_MAX_PORTS);
	assert_int_equal(k8s_table_put_block(&table, block), KNOT_EOK);

	// One port: the one endpoint whose slice has it.
	assert_reply(ask("_p00150._tcp.many.shop.svc.cluster.local.", KNOT_RRTYPE_SRV), K8S_ANSWER_HIT,
	             "_p00150._tcp.many.shop.svc.cluster.local. SRV 0 100 151 10-1-0-2.many.shop.svc.cluster.local.");
	// A port past the cap was left out: no slice has it any more.
	assert_reply(ask("_p69999._tcp.many.shop.svc.cluster.local.", KNOT_RRTYPE_SRV),
	             K8S_ANSWER_NXDOMAIN, "");
	// Every port: as many as the message holds, then TC.
	reply_t r = ask_conf(&conf, "many.shop.svc.cluster.local.", KNOT_RRTYPE_SRV, 512);
	assert_int_equal(r.result, K8S_ANSWER_TRUNC);
	r = ask("many.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_true(r.result == K8S_ANSWER_HIT || r.result == K8S_ANSWER_TRUNC);
	k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "shop", "many");
	free(ptrs);
	free(slices);
	free(eps);
	free(names);
	free(ports);
}

static void endpoint_ptr_names_the_hostname(void **state)
{
	k8s_answer_conf_t rev = conf;
	rev.role = K8S_ROLE_REVERSE;
	rev.zone = zone_reverse4;
	assert_reply(ask_conf(&rev, "100.0.3.10.in-addr.arpa.", KNOT_RRTYPE_PTR,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "100.0.3.10.in-addr.arpa. PTR my-pet.headless.default.svc.cluster.local.");
	assert_reply(ask_conf(&rev, "100.0.3.10.in-addr.arpa.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NODATA, "");
}

/* 2.5 Records for External Name Services */

static void externalname_is_a_cname(void **state)
{
	assert_reply(ask("foo.default.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "foo.default.svc.cluster.local. CNAME www.example.com.");
	assert_reply(ask("foo.default.svc.cluster.local.", KNOT_RRTYPE_CNAME), K8S_ANSWER_HIT,
	             "foo.default.svc.cluster.local. CNAME www.example.com.");
}

static void externalname_in_our_zone_is_followed(void **state)
{
	assert_reply(ask("alias.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "alias.shop.svc.cluster.local. CNAME web.shop.svc.cluster.local. | "
	             "web.shop.svc.cluster.local. A 10.96.1.1");
}

/* 2.6 Deprecated pod records */

static void pod_a_record_from_its_dashed_address(void **state)
{
	assert_reply(ask("1-2-3-4.default.pod.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "1-2-3-4.default.pod.cluster.local. A 1.2.3.4");
	assert_reply(ask("1-2-3-4.default.pod.cluster.local.", KNOT_RRTYPE_AAAA), K8S_ANSWER_NODATA, "");
	assert_reply(ask("fd00--7.default.pod.cluster.local.", KNOT_RRTYPE_AAAA), K8S_ANSWER_HIT,
	             "fd00--7.default.pod.cluster.local. AAAA fd00::7");
	assert_reply(ask("1-2-3-4.nope.pod.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
}

static void pods_disabled_and_verified(void **state)
{
	k8s_answer_conf_t c = conf;
	c.pods = K8S_PODS_DISABLED;
	assert_reply(ask_conf(&c, "1-2-3-4.default.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	c.pods = K8S_PODS_VERIFIED;
	assert_reply(ask_conf(&c, "1-2-3-4.default.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	k8s_pod_t pod = { .meta = { .kind = K8S_POD, .ns = "default", .name = "p" }, .live = true,
	                  .ip_count = 1, .ips = { fx_ip("1.2.3.4") } };
	assert_int_equal(k8s_table_set_pod(&table, NULL, &pod), KNOT_EOK);
	assert_reply(ask_conf(&c, "1-2-3-4.default.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "1-2-3-4.default.pod.cluster.local. A 1.2.3.4");
	assert_reply(ask_conf(&c, "1-2-3-4.shop.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_int_equal(k8s_table_set_pod(&table, &pod, NULL), KNOT_EOK);
	assert_reply(ask_conf(&c, "1-2-3-4.default.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
}

/* Negative answers */

static void existing_namespace_and_roots_are_nodata(void **state)
{
	assert_reply(ask("default.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	assert_reply(ask("svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	assert_reply(ask("pod.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	assert_reply(ask("default.pod.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	assert_reply(ask("nope.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
}

static void unknown_names_are_nxdomain(void **state)
{
	assert_reply(ask("nope.default.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("kubernetes.nope.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("x.y.kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("*.default.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask("anything.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
}

static void not_ready_before_the_first_sync(void **state)
{
	uint32_t ready = table.ready;
	table.ready = 0;
	assert_int_equal(ask("kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A).result,
	                 K8S_ANSWER_NOTREADY);
	table.ready = ready;
}

static void oversize_answer_is_truncated(void **state)
{
	assert_int_equal(ask_conf(&conf, "headless.default.svc.cluster.local.", KNOT_RRTYPE_A, 64).result,
	                 K8S_ANSWER_TRUNC);
	reply_t r = ask_conf(&conf, "_https._tcp.headless.default.svc.cluster.local.",
	                     KNOT_RRTYPE_SRV, 100);
	assert_int_equal(r.result, K8S_ANSWER_TRUNC);
	assert_true(r.tc);
}

/* Multicluster DNS: names below a headless ServiceImport. */

static reply_t ask_clusterset(const char *name, uint16_t type)
{
	k8s_answer_conf_t c = conf;
	c.role = K8S_ROLE_CLUSTERSET;
	c.zone = zone_clusterset;
	return ask_conf(&c, name, type, KNOT_WIRE_MAX_PKTSIZE);
}

static void hostname_and_cluster_id_name_one_clusters_endpoint(void **state)
{
	assert_reply(ask_clusterset("web-0.prod.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_HIT, "web-0.prod.ring.shop.svc.clusterset.local. A 10.80.0.1");
	assert_reply(ask_clusterset("web-0.east.prod.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_HIT, "web-0.east.prod.ring.shop.svc.clusterset.local. A 10.80.1.1");
	assert_reply(ask_clusterset("web-0.west.stage.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_HIT, "web-0.west.stage.ring.shop.svc.clusterset.local. A 10.80.3.1");
	assert_reply(ask_clusterset("web-0.east.stage.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void clusterset_headless_srv_follows_each_clusters_slices_ports(void **state)
{
	// web-0 of cluster-a serves http on 8080, web-0 of cluster-b on 9090 and metrics.
	static k8s_endpoint_t a_eps[1], b_eps[1];
	a_eps[0] = fx_ep("10.2.0.1", true, "web-0", NULL);
	b_eps[0] = fx_ep("10.2.1.1", true, "web-0", NULL);
	static const k8s_port_t a_ports[] = { { .name = "http", .port = 8080, .proto = K8S_PROTO_TCP } };
	static const k8s_port_t b_ports[] = {
		{ .name = "http", .port = 9090, .proto = K8S_PROTO_TCP },
		{ .name = "metrics", .port = 9100, .proto = K8S_PROTO_TCP },
	};
	k8s_slice_t slices[] = {
		fx_slice("shop", "roll-a", NULL, AF_INET, a_eps, 1, a_ports, 1),
		fx_slice("shop", "roll-b", NULL, AF_INET, b_eps, 1, b_ports, 2),
	};
	slices[0].mcs_service = slices[1].mcs_service = "roll";
	slices[0].source_cluster = "cluster-a";
	slices[1].source_cluster = "cluster-b";
	const k8s_slice_t *ptrs[] = { &slices[0], &slices[1] };
	static const k8s_port_t imp_ports[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_serviceimport_t imp = {
		.meta = { .kind = K8S_SERVICEIMPORT, .ns = "shop", .name = "roll" },
		.headless = true,
		.ports = imp_ports,
		.port_count = 1,
	};
	k8s_block_t *block = k8s_records_import(&imp, ptrs, 2, &rconf);
	assert_non_null(block);
	assert_int_equal(k8s_table_put_block(&table, block), KNOT_EOK);

	reply_t r = ask_clusterset("_http._tcp.roll.shop.svc.clusterset.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_http._tcp.roll.shop.svc.clusterset.local. SRV 0 50 8080 web-0.cluster-a.roll.shop.svc.clusterset.local. | "
	             "_http._tcp.roll.shop.svc.clusterset.local. SRV 0 50 9090 web-0.cluster-b.roll.shop.svc.clusterset.local.");
	assert_string_equal(r.additional,
	                    "web-0.cluster-a.roll.shop.svc.clusterset.local. A 10.2.0.1 | "
	                    "web-0.cluster-b.roll.shop.svc.clusterset.local. A 10.2.1.1");
	r = ask_clusterset("_metrics._tcp.roll.shop.svc.clusterset.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_metrics._tcp.roll.shop.svc.clusterset.local. SRV 0 100 9100 web-0.cluster-b.roll.shop.svc.clusterset.local.");
	assert_string_equal(r.additional, "web-0.cluster-b.roll.shop.svc.clusterset.local. A 10.2.1.1");
	k8s_table_del_block(&table, K8S_ZONE_CLUSTERSET, "shop", "roll");
}

static void cluster_ids_are_empty_non_terminals_whichever_ids_share_their_labels(void **state)
{
	// "east.prod" exists although "prod" has no endpoint labelled "east".
	assert_reply(ask_clusterset("east.prod.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NODATA, "");
	assert_reply(ask_clusterset("prod.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_AAAA),
	             K8S_ANSWER_NODATA, "");
	// "stage" exists through west.stage although east.stage (sorted first) has no ready endpoint.
	assert_reply(ask_clusterset("stage.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NODATA, "");
	assert_reply(ask_clusterset("west.stage.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NODATA, "");
	assert_reply(ask_clusterset("east.stage.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_clusterset("dev.ring.shop.svc.clusterset.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void ignore_empty_service(void **state)
{
	k8s_answer_conf_t c = conf;
	c.ignore_empty = true;
	assert_reply(ask_conf(&c, "web.shop.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1");
}

/* Federated services (kube-dns's federations, shared/specs/federated-service-discovery.md). */

/*! \brief kube-dns's test configuration: myfederation=example.com, secondfederation=second.example.com. */
static k8s_answer_conf_t federation_conf(void)
{
	static k8s_federation_t feds[2];
	char err[128];
	assert_int_equal(k8s_federation_parse("myfederation=example.com", &feds[0], err, sizeof(err)),
	                 KNOT_EOK);
	assert_int_equal(k8s_federation_parse("secondfederation=second.example.com.", &feds[1], err,
	                                      sizeof(err)), KNOT_EOK);
	k8s_answer_conf_t c = conf;
	c.federations = feds;
	c.federation_count = 2;
	return c;
}

static void federation_query_for_a_local_service_with_endpoints_is_a_cname_to_it(void **state)
{
	k8s_answer_conf_t c = federation_conf();
	// ClusterIP with a ready endpoint: the CNAME, then the local records.
	assert_reply(ask_conf(&c, "kubernetes.default.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "kubernetes.default.myfederation.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local. | "
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1");
	assert_reply(ask_conf(&c, "kubernetes.default.myfederation.svc.cluster.local.", KNOT_RRTYPE_SRV,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "kubernetes.default.myfederation.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local. | "
	             "kubernetes.default.svc.cluster.local. SRV 0 100 443 kubernetes.default.svc.cluster.local.");
	// Headless with ready endpoints.
	assert_reply(ask_conf(&c, "headless.default.secondfederation.svc.cluster.local.", KNOT_RRTYPE_AAAA,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "headless.default.secondfederation.svc.cluster.local. CNAME headless.default.svc.cluster.local. | "
	             "headless.default.svc.cluster.local. AAAA 2001:db8::100");
	// ExternalName: its CNAME follows.
	assert_reply(ask_conf(&c, "foo.default.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "foo.default.myfederation.svc.cluster.local. CNAME foo.default.svc.cluster.local. | "
	             "foo.default.svc.cluster.local. CNAME www.example.com.");
	// A CNAME query gets the CNAME alone.
	assert_reply(ask_conf(&c, "kubernetes.default.myfederation.svc.cluster.local.", KNOT_RRTYPE_CNAME,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "kubernetes.default.myfederation.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local.");
}

static void federation_query_without_local_endpoints_is_a_cname_to_the_zone_and_region(void **state)
{
	k8s_answer_conf_t c = federation_conf();
	k8s_topology_t *topology = k8s_topology_new("testcontinent-testreg-testzone",
	                                            "testcontinent-testreg");
	assert_non_null(topology);
	c.topology = topology;
	// kube-dns's test: no such service (and no such namespace) here.
	assert_reply(ask_conf(&c, "mysvc.myns.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "mysvc.myns.myfederation.svc.cluster.local. CNAME "
	             "mysvc.myns.myfederation.svc.testcontinent-testreg-testzone.testcontinent-testreg.example.com.");
	// A ClusterIP service without a ready endpoint, a headless one without a ready endpoint.
	assert_reply(ask_conf(&c, "web.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "web.shop.myfederation.svc.cluster.local. CNAME "
	             "web.shop.myfederation.svc.testcontinent-testreg-testzone.testcontinent-testreg.example.com.");
	assert_reply(ask_conf(&c, "empty.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_AAAA,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "empty.shop.myfederation.svc.cluster.local. CNAME "
	             "empty.shop.myfederation.svc.testcontinent-testreg-testzone.testcontinent-testreg.example.com.");
	// A federation whose domain is a subdomain.
	assert_reply(ask_conf(&c, "mysvc.myns.secondfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "mysvc.myns.secondfederation.svc.cluster.local. CNAME "
	             "mysvc.myns.secondfederation.svc.testcontinent-testreg-testzone.testcontinent-testreg.second.example.com.");
	free(topology);
}

static void federation_topology_comes_from_the_table_unless_given(void **state)
{
	k8s_answer_conf_t c = federation_conf();
	k8s_table_set_topology(&table, k8s_topology_new("eu-west1-b", "eu-west1"));
	assert_reply(ask_conf(&c, "web.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "web.shop.myfederation.svc.cluster.local. CNAME "
	             "web.shop.myfederation.svc.eu-west1-b.eu-west1.example.com.");
	// federation-zone and federation-region win over the nodes.
	k8s_topology_t *given = k8s_topology_new("Zone-A", "Region-1");
	c.topology = given;
	assert_reply(ask_conf(&c, "web.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "web.shop.myfederation.svc.cluster.local. CNAME "
	             "web.shop.myfederation.svc.zone-a.region-1.example.com.");
	free(given);
	k8s_table_set_topology(&table, NULL);
	k8s_table_commit(&table);
}

static void federation_query_without_topology_is_the_global_name(void **state)
{
	k8s_answer_conf_t c = federation_conf();
	assert_null(k8s_table_topology(&table));
	assert_reply(ask_conf(&c, "web.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "web.shop.myfederation.svc.cluster.local. CNAME web.shop.myfederation.svc.example.com.");
	// So is a name that would be too long with the topology.
	char zone[64] = "", domain[200] = "";
	memset(zone, 'z', 63);
	k8s_topology_t *topology = k8s_topology_new(zone, zone);
	k8s_federation_t fed;
	char err[128];
	snprintf(domain, sizeof(domain), "long=%s.%s.example.com", zone, zone);
	assert_int_equal(k8s_federation_parse(domain, &fed, err, sizeof(err)), KNOT_EOK);
	c.federations = &fed;
	c.federation_count = 1;
	c.topology = topology;
	reply_t r = ask_conf(&c, "web.shop.long.svc.cluster.local.", KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE);
	assert_int_equal(r.result, K8S_ANSWER_HIT);
	char expect[512];
	snprintf(expect, sizeof(expect), "web.shop.long.svc.cluster.local. CNAME web.shop.long.svc.%s.%s.example.com.",
	         zone, zone);
	assert_string_equal(r.answer, expect);
	free(topology);
}

static void unconfigured_federation_is_an_endpoint_name_as_before(void **state)
{
	// Without federations the name is an endpoint of service <ns> in namespace <fed>.
	assert_reply(ask("kubernetes.default.myfederation.svc.cluster.local.", KNOT_RRTYPE_A),
	             K8S_ANSWER_NXDOMAIN, "");
	k8s_answer_conf_t c = federation_conf();
	assert_reply(ask_conf(&c, "web.shop.otherfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "my-pet.headless.default.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "my-pet.headless.default.svc.cluster.local. A 10.3.0.100");
	// A service label must be an RFC 1035 label (kube-dns's rule), else no federation query.
	assert_reply(ask_conf(&c, "1web.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	// Names above and below a federation name are what they were.
	assert_reply(ask_conf(&c, "shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "_http._tcp.web.shop.myfederation.svc.cluster.local.", KNOT_RRTYPE_SRV,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
}

static void federation_reading_wins_over_an_endpoint_name(void **state)
{
	// A federation named like a namespace: <svc>.<ns>.default.svc is a federated service.
	k8s_federation_t fed;
	char err[128];
	assert_int_equal(k8s_federation_parse("default=example.com", &fed, err, sizeof(err)), KNOT_EOK);
	k8s_answer_conf_t c = conf;
	c.federations = &fed;
	c.federation_count = 1;
	assert_reply(ask_conf(&c, "my-pet.headless.default.svc.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "my-pet.headless.default.svc.cluster.local. CNAME my-pet.headless.default.svc.example.com.");
}

static void federation_names_are_parsed_and_validated(void **state)
{
	k8s_federation_t fed;
	char err[128];
	assert_int_equal(k8s_federation_parse("myfederation=example.com", &fed, err, sizeof(err)), KNOT_EOK);
	assert_memory_equal(fed.name, "\x0cmyfederation", 13);
	assert_true(knot_dname_is_equal(fed.domain, (const uint8_t *)"\x07""example\x03""com"));
	assert_int_equal(k8s_federation_parse("example.com", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_string_equal(err, "not NAME=DOMAIN");
	assert_int_equal(k8s_federation_parse("My_Fed=example.com", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_string_equal(err, "the name is no lowercase DNS label");
	assert_int_equal(k8s_federation_parse("a.b=example.com", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_int_equal(k8s_federation_parse("=example.com", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_int_equal(k8s_federation_parse("fed=", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_string_equal(err, "the domain is no lowercase DNS name");
	assert_int_equal(k8s_federation_parse("fed=exa mple.com", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_int_equal(k8s_federation_parse("fed=example..com", &fed, err, sizeof(err)), KNOT_EINVAL);
	assert_null(k8s_topology_new("zone_a", "region"));
	assert_null(k8s_topology_new("zone", ""));
	assert_true(k8s_federation_node_valid("node-a.example.internal"));
	assert_false(k8s_federation_node_valid("Node_A"));
}

static void a_verified_pod_is_compared_with_a_longer_namespace_by_length(void **state)
{
	static const char ns[] = "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn";
	assert_int_equal(k8s_table_set_ns(&table, ns, true), KNOT_EOK);
	k8s_answer_conf_t c = conf;
	c.pods = K8S_PODS_VERIFIED;
	k8s_pod_t pod = { .meta = { .kind = K8S_POD, .ns = "default", .name = "p" }, .live = true,
	                  .ip_count = 1, .ips = { fx_ip("1.2.3.5") } };
	assert_int_equal(k8s_table_set_pod(&table, NULL, &pod), KNOT_EOK);
	assert_reply(ask_conf(&c, "1-2-3-5.nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "1-2-3-5.default.pod.cluster.local.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "1-2-3-5.default.pod.cluster.local. A 1.2.3.5");
	assert_int_equal(k8s_table_set_pod(&table, &pod, NULL), KNOT_EOK);
	assert_int_equal(k8s_table_set_ns(&table, ns, false), KNOT_EOK);
}

/* Server-side search path expansion (KEP "DNS Autopath in PodSpec"). */

static k8s_answer_conf_t autopath_conf(void)
{
	static knot_dname_t *zone;
	if (zone == NULL) {
		zone = knot_dname_from_str_alloc("ap.k8s.io.");
	}
	k8s_answer_conf_t c = conf;
	c.role = K8S_ROLE_AUTOPATH;
	c.zone = zone;
	c.autopath_option = 65001;
	return c;
}

static void autopath_tries_the_pods_namespace_first(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	assert_reply(ask_conf(&c, "web.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "web.search.shop.cluster.local.ap.k8s.io. CNAME web.shop.svc.cluster.local. | "
	             "web.shop.svc.cluster.local. A 10.96.1.1");
}

static void autopath_then_svc_then_the_cluster_domain(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	assert_reply(ask_conf(&c, "kubernetes.default.search.shop.cluster.local.ap.k8s.io.",
	                      KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "kubernetes.default.search.shop.cluster.local.ap.k8s.io. CNAME kubernetes.default.svc.cluster.local. | "
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1");
	assert_reply(ask_conf(&c, "my-pet.headless.default.svc.search.shop.cluster.local.ap.k8s.io.",
	                      KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "my-pet.headless.default.svc.cluster.local. A 10.3.0.100 | "
	             "my-pet.headless.default.svc.search.shop.cluster.local.ap.k8s.io. CNAME my-pet.headless.default.svc.cluster.local.");
}

static void autopath_without_a_match_is_nxdomain(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	assert_reply(ask_conf(&c, "nope.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	// An external name is left to the client's next query: answering it would wait on the network.
	assert_reply(ask_conf(&c, "www.example.com.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "web.search.nowhere.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "web.lookup.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "web.search.shop.other.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NXDOMAIN, "");
}

static void autopath_search_domains_are_empty_non_terminals(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	const char *names[] = { "search.shop.cluster.local.ap.k8s.io.", "shop.cluster.local.ap.k8s.io.",
	                        "cluster.local.ap.k8s.io.", "local.ap.k8s.io." };
	for (size_t i = 0; i < 4; i++) {
		assert_reply(ask_conf(&c, names[i], KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE),
		             K8S_ANSWER_NODATA, "");
	}
	assert_int_equal(ask_conf(&c, "ap.k8s.io.", KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE).result,
	                 K8S_ANSWER_PASS);
}

static void autopath_names_are_compared_with_the_cluster_domain_by_length(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	// One label longer than the cluster domain's last, right below the autopath zone.
	assert_reply(ask_conf(&c, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.ap.k8s.io.", KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.local.ap.k8s.io.", KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_NXDOMAIN, "");
	// Labels shorter than the cluster domain, below a short autopath zone.
	knot_dname_t *zone = knot_dname_from_str_alloc("k.");
	c.zone = zone;
	assert_reply(ask_conf(&c, "x.a.b.k.", KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ask_conf(&c, "search.shop.cluster.local.k.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_NODATA, "");
	free(zone);
}

static void autopath_nodata_ends_the_search_with_the_cname(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	assert_reply(ask_conf(&c, "web.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_TXT,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "web.search.shop.cluster.local.ap.k8s.io. CNAME web.shop.svc.cluster.local.");
}

static void autopath_takes_the_search_list_of_the_edns_option(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	assert_reply(ask_edns(&c, "headless.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_AAAA,
	                      KNOT_WIRE_MAX_PKTSIZE, "shop.svc.cluster.local,default.svc.cluster.local"),
	             K8S_ANSWER_HIT,
	             "headless.default.svc.cluster.local. AAAA 2001:db8::100 | "
	             "headless.search.shop.cluster.local.ap.k8s.io. CNAME headless.default.svc.cluster.local.");
	c.autopath_option = 0;
	assert_reply(ask_edns(&c, "headless.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_AAAA,
	                      KNOT_WIRE_MAX_PKTSIZE, "default.svc.cluster.local"),
	             K8S_ANSWER_NXDOMAIN, "");
}

static void autopath_srv_answer_has_its_targets_addresses_in_additional(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	reply_t r = ask_conf(&c, "_https._tcp.kubernetes.default.search.shop.cluster.local.ap.k8s.io.",
	                     KNOT_RRTYPE_SRV, KNOT_WIRE_MAX_PKTSIZE);
	assert_reply(r, K8S_ANSWER_HIT,
	             "_https._tcp.kubernetes.default.search.shop.cluster.local.ap.k8s.io. CNAME _https._tcp.kubernetes.default.svc.cluster.local. | "
	             "_https._tcp.kubernetes.default.svc.cluster.local. SRV 0 100 443 kubernetes.default.svc.cluster.local.");
	assert_string_equal(r.additional, "kubernetes.default.svc.cluster.local. A 10.3.0.1");
}

static void autopath_dns_version_is_the_txt_after_the_cname(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	assert_reply(ask_conf(&c, "dns-version.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_TXT,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "dns-version.cluster.local. TXT \"1.1.0\" | "
	             "dns-version.search.shop.cluster.local.ap.k8s.io. CNAME dns-version.cluster.local.");
	// For other types the name exists without records: the CNAME alone.
	assert_reply(ask_conf(&c, "dns-version.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE), K8S_ANSWER_HIT,
	             "dns-version.search.shop.cluster.local.ap.k8s.io. CNAME dns-version.cluster.local.");
}

static void autopath_edns_list_takes_spaces_after_commas(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	reply_t r = ask_edns(&c, "kubernetes.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                     KNOT_WIRE_MAX_PKTSIZE, "shop.svc.cluster.local, \tdefault.svc.cluster.local ,");
	assert_reply(r, K8S_ANSWER_HIT,
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1 | "
	             "kubernetes.search.shop.cluster.local.ap.k8s.io. CNAME kubernetes.default.svc.cluster.local.");
	assert_int_equal(r.walked, K8S_AUTOPATH_LISTED);
}

static void autopath_edns_list_of_32_domains_is_walked_to_its_last(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	char list[2048] = "";
	for (int i = 0; i < 31; i++) {
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "ns%d.svc.cluster.local,", i);
	}
	strcat(list, "default.svc.cluster.local");
	assert_reply(ask_edns(&c, "kubernetes.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE, list), K8S_ANSWER_HIT,
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1 | "
	             "kubernetes.search.shop.cluster.local.ap.k8s.io. CNAME kubernetes.default.svc.cluster.local.");
}

static void autopath_edns_list_over_32_domains_is_refused_whole(void **state)
{
	k8s_answer_conf_t c = autopath_conf();
	char list[2048] = "";
	for (int i = 0; i < 32; i++) {
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "ns%d.svc.cluster.local, ", i);
	}
	strcat(list, "default.svc.cluster.local");
	reply_t r = ask_edns(&c, "kubernetes.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                     KNOT_WIRE_MAX_PKTSIZE, list);
	assert_reply(r, K8S_ANSWER_REFUSED, "");
	assert_int_equal(r.walked, K8S_AUTOPATH_REFUSED);
}

static void put_v4_only_web_in_default(void)
{
	k8s_service_t web = fx_service("default", "web", K8S_SVC_CLUSTERIP, "10.96.2.2", NULL);
	put_service(&web, NULL, 0);
}

static void autopath_continues_past_a_nodata_step(void **state)
{
	put_v4_only_web_in_default();
	k8s_answer_conf_t c = autopath_conf();
	const char *list = "default.svc.cluster.local,shop.svc.cluster.local";
	// web.default has no AAAA: glibc would go on to web.shop, and so does the walk.
	assert_reply(ask_edns(&c, "web.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_AAAA,
	                      KNOT_WIRE_MAX_PKTSIZE, list), K8S_ANSWER_HIT,
	             "web.search.shop.cluster.local.ap.k8s.io. CNAME web.shop.svc.cluster.local. | "
	             "web.shop.svc.cluster.local. AAAA fd00::1");
	assert_reply(ask_edns(&c, "web.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_A,
	                      KNOT_WIRE_MAX_PKTSIZE, list), K8S_ANSWER_HIT,
	             "web.default.svc.cluster.local. A 10.96.2.2 | "
	             "web.search.shop.cluster.local.ap.k8s.io. CNAME web.default.svc.cluster.local.");
	// Nothing later has records: the first name that exists, without records.
	assert_reply(ask_edns(&c, "web.search.shop.cluster.local.ap.k8s.io.", KNOT_RRTYPE_AAAA,
	                      KNOT_WIRE_MAX_PKTSIZE, "default.svc.cluster.local,svc.cluster.local"),
	             K8S_ANSWER_HIT,
	             "web.search.shop.cluster.local.ap.k8s.io. CNAME web.default.svc.cluster.local.");
	assert_int_equal(k8s_table_del_block(&table, K8S_ZONE_CLUSTER, "default", "web"), KNOT_EOK);
}

/* Client-address autopath (CoreDNS's `autopath @kubernetes`). */

static k8s_pod_t client_pod(const char *ns, const char *ip, bool host_network)
{
	k8s_pod_t pod = { .meta = { .kind = K8S_POD, .ns = ns, .name = "client" },
	                  .live = true, .host_network = host_network };
	pod.ips[0] = fx_ip(ip);
	pod.ip_count = 1;
	return pod;
}

static k8s_answer_conf_t client_conf(void)
{
	k8s_answer_conf_t c = conf;
	c.autopath = true;
	return c;
}

static void client_autopath_walks_on_from_svc_for_a_pod_of_the_namespace(void **state)
{
	k8s_pod_t pod = client_pod("shop", "10.244.0.5", false);
	assert_int_equal(k8s_table_set_pod(&table, NULL, &pod), KNOT_EOK);
	k8s_answer_conf_t c = client_conf();

	reply_t r = ask_from(&c, "kubernetes.default.shop.svc.cluster.local.", KNOT_RRTYPE_A,
	                     KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_HIT,
	             "kubernetes.default.shop.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local. | "
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1");
	assert_int_equal(r.walked, K8S_AUTOPATH_SVC);
	// An IPv4 client of a dual-stack socket.
	r = ask_from(&c, "kubernetes.default.shop.svc.cluster.local.", KNOT_RRTYPE_A,
	             KNOT_WIRE_MAX_PKTSIZE, NULL, "::ffff:10.244.0.5");
	assert_int_equal(r.walked, K8S_AUTOPATH_SVC);
	// <name>.<zone>: a name written out to the svc label.
	r = ask_from(&c, "kubernetes.default.svc.shop.svc.cluster.local.", KNOT_RRTYPE_A,
	             KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_HIT,
	             "kubernetes.default.svc.cluster.local. A 10.3.0.1 | "
	             "kubernetes.default.svc.shop.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local.");
	assert_int_equal(r.walked, K8S_AUTOPATH_CLUSTER);
	// Any type: SRV, with its targets' addresses.
	r = ask_from(&c, "_https._tcp.kubernetes.default.shop.svc.cluster.local.", KNOT_RRTYPE_SRV,
	             KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_HIT,
	             "_https._tcp.kubernetes.default.shop.svc.cluster.local. CNAME _https._tcp.kubernetes.default.svc.cluster.local. | "
	             "_https._tcp.kubernetes.default.svc.cluster.local. SRV 0 100 443 kubernetes.default.svc.cluster.local.");
	assert_string_equal(r.additional, "kubernetes.default.svc.cluster.local. A 10.3.0.1");
	assert_int_equal(k8s_table_set_pod(&table, &pod, NULL), KNOT_EOK);
}

static void client_autopath_leaves_names_that_exist_alone(void **state)
{
	k8s_pod_t pod = client_pod("shop", "10.244.0.5", false);
	assert_int_equal(k8s_table_set_pod(&table, NULL, &pod), KNOT_EOK);
	k8s_answer_conf_t c = client_conf();
	reply_t r = ask_from(&c, "web.shop.svc.cluster.local.", KNOT_RRTYPE_A,
	                     KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_HIT, "web.shop.svc.cluster.local. A 10.96.1.1");
	assert_int_equal(r.walked, K8S_AUTOPATH_NONE);
	r = ask_from(&c, "kubernetes.default.shop.pod.cluster.local.", KNOT_RRTYPE_A,
	             KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_NXDOMAIN, "");
	assert_int_equal(r.walked, K8S_AUTOPATH_NONE);
	assert_int_equal(k8s_table_set_pod(&table, &pod, NULL), KNOT_EOK);
}

static void client_autopath_only_for_a_pod_of_the_first_search_domain(void **state)
{
	k8s_pod_t other = client_pod("default", "10.244.0.6", false);
	k8s_pod_t host = client_pod("shop", "192.168.0.10", true);
	assert_int_equal(k8s_table_set_pod(&table, NULL, &other), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&table, NULL, &host), KNOT_EOK);
	k8s_answer_conf_t c = client_conf();
	const char *name = "kubernetes.default.shop.svc.cluster.local.";
	const char *clients[] = { "10.244.0.6", "192.168.0.10", "10.244.7.7", "fd00::5", NULL };
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		reply_t r = ask_from(&c, name, KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE, NULL, clients[i]);
		assert_reply(r, K8S_ANSWER_NXDOMAIN, "");
		assert_int_equal(r.walked, K8S_AUTOPATH_NONE);
	}
	// Off unless configured.
	k8s_pod_t pod = client_pod("shop", "10.244.0.5", false);
	assert_int_equal(k8s_table_set_pod(&table, NULL, &pod), KNOT_EOK);
	assert_reply(ask_from(&conf, name, KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5"),
	             K8S_ANSWER_NXDOMAIN, "");
	assert_int_equal(k8s_table_set_pod(&table, &pod, NULL), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&table, &other, NULL), KNOT_EOK);
	assert_int_equal(k8s_table_set_pod(&table, &host, NULL), KNOT_EOK);
}

static void client_autopath_ends_with_the_host_domains_then_falls_through(void **state)
{
	k8s_pod_t pod = client_pod("shop", "10.244.0.5", false);
	assert_int_equal(k8s_table_set_pod(&table, NULL, &pod), KNOT_EOK);
	knot_dname_t *host = knot_dname_from_str_alloc("default.svc.cluster.local.");
	const knot_dname_t *hosts[] = { host };
	k8s_answer_conf_t c = client_conf();
	c.host_search = hosts;
	c.host_search_count = 1;
	reply_t r = ask_from(&c, "headless.shop.svc.cluster.local.", KNOT_RRTYPE_AAAA,
	                     KNOT_WIRE_MAX_PKTSIZE, NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_HIT,
	             "headless.default.svc.cluster.local. AAAA 2001:db8::100 | "
	             "headless.shop.svc.cluster.local. CNAME headless.default.svc.cluster.local.");
	assert_int_equal(r.walked, K8S_AUTOPATH_HOST);
	// Without an upstream, the name itself is not known: the client goes on.
	r = ask_from(&c, "nope.shop.svc.cluster.local.", KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE,
	             NULL, "10.244.0.5");
	assert_reply(r, K8S_ANSWER_NXDOMAIN, "");
	assert_int_equal(r.walked, K8S_AUTOPATH_FELL_THROUGH);
	free(host);
	assert_int_equal(k8s_table_set_pod(&table, &pod, NULL), KNOT_EOK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dns_version_txt_holds_the_schema_version),
		cmocka_unit_test(clusterip_service_has_an_a_record),
		cmocka_unit_test(query_matching_is_case_insensitive),
		cmocka_unit_test(dual_stack_service_has_a_and_aaaa),
		cmocka_unit_test(ipv4_only_service_has_nodata_for_aaaa),
		cmocka_unit_test(named_port_has_an_srv_record),
		cmocka_unit_test(srv_matching_port_and_protocol_only),
		cmocka_unit_test(srv_port_label_longer_than_every_port_name_is_nxdomain),
		cmocka_unit_test(unnamed_ports_have_no_srv_record),
		cmocka_unit_test(protocol_label_is_an_empty_non_terminal),
		cmocka_unit_test(cluster_ip_has_a_ptr_record),
		cmocka_unit_test(reverse_prefixes_are_empty_non_terminals),
		cmocka_unit_test(headless_service_has_an_a_record_per_ready_endpoint),
		cmocka_unit_test(headless_service_without_ready_endpoints_is_nxdomain),
		cmocka_unit_test(hostname_record_per_ready_endpoint_and_address),
		cmocka_unit_test(endpoint_without_hostname_is_named_by_its_dashed_address),
		cmocka_unit_test(not_ready_endpoints_have_no_records),
		cmocka_unit_test(headless_srv_per_ready_endpoint_and_named_port),
		cmocka_unit_test(headless_srv_records_follow_each_slices_own_ports),
		cmocka_unit_test(the_same_address_in_two_slices_has_both_numbers),
		cmocka_unit_test(a_clusterip_service_answers_its_own_ports_whatever_its_slices_say),
		cmocka_unit_test(endpoint_ptr_names_the_hostname),
		cmocka_unit_test(a_hostname_equal_to_a_dashed_address_answers_both_addresses),
		cmocka_unit_test(a_name_of_65600_addresses_answers_what_a_message_carries),
		cmocka_unit_test(a_headless_srv_of_many_slices_ports_answers_what_a_message_carries),
		cmocka_unit_test(externalname_is_a_cname),
		cmocka_unit_test(externalname_in_our_zone_is_followed),
		cmocka_unit_test(pod_a_record_from_its_dashed_address),
		cmocka_unit_test(pods_disabled_and_verified),
		cmocka_unit_test(a_verified_pod_is_compared_with_a_longer_namespace_by_length),
		cmocka_unit_test(existing_namespace_and_roots_are_nodata),
		cmocka_unit_test(unknown_names_are_nxdomain),
		cmocka_unit_test(not_ready_before_the_first_sync),
		cmocka_unit_test(oversize_answer_is_truncated),
		cmocka_unit_test(ignore_empty_service),
		cmocka_unit_test(federation_query_for_a_local_service_with_endpoints_is_a_cname_to_it),
		cmocka_unit_test(federation_query_without_local_endpoints_is_a_cname_to_the_zone_and_region),
		cmocka_unit_test(federation_topology_comes_from_the_table_unless_given),
		cmocka_unit_test(federation_query_without_topology_is_the_global_name),
		cmocka_unit_test(unconfigured_federation_is_an_endpoint_name_as_before),
		cmocka_unit_test(federation_reading_wins_over_an_endpoint_name),
		cmocka_unit_test(federation_names_are_parsed_and_validated),
		cmocka_unit_test(autopath_tries_the_pods_namespace_first),
		cmocka_unit_test(autopath_then_svc_then_the_cluster_domain),
		cmocka_unit_test(autopath_without_a_match_is_nxdomain),
		cmocka_unit_test(autopath_search_domains_are_empty_non_terminals),
		cmocka_unit_test(autopath_names_are_compared_with_the_cluster_domain_by_length),
		cmocka_unit_test(autopath_nodata_ends_the_search_with_the_cname),
		cmocka_unit_test(autopath_takes_the_search_list_of_the_edns_option),
		cmocka_unit_test(autopath_srv_answer_has_its_targets_addresses_in_additional),
		cmocka_unit_test(autopath_dns_version_is_the_txt_after_the_cname),
		cmocka_unit_test(autopath_edns_list_takes_spaces_after_commas),
		cmocka_unit_test(autopath_edns_list_of_32_domains_is_walked_to_its_last),
		cmocka_unit_test(autopath_edns_list_over_32_domains_is_refused_whole),
		cmocka_unit_test(autopath_continues_past_a_nodata_step),
		cmocka_unit_test(client_autopath_walks_on_from_svc_for_a_pod_of_the_namespace),
		cmocka_unit_test(client_autopath_leaves_names_that_exist_alone),
		cmocka_unit_test(client_autopath_only_for_a_pod_of_the_first_search_domain),
		cmocka_unit_test(client_autopath_ends_with_the_host_domains_then_falls_through),
		cmocka_unit_test(hostname_and_cluster_id_name_one_clusters_endpoint),
		cmocka_unit_test(clusterset_headless_srv_follows_each_clusters_slices_ports),
		cmocka_unit_test(cluster_ids_are_empty_non_terminals_whichever_ids_share_their_labels),
	};
	return cmocka_run_group_tests_name("answer", tests, setup, teardown);
}
