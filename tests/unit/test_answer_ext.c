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
 * The answers of CoreDNS's other Kubernetes plugins mod-k8s serves, against a
 * hand-built record table: k8s_external's zone (plugin/k8s_external, kubernetes's
 * external.go) and the kubernetes plugin's zonal names (CoreDNS 1.14.7, README "Zonal
 * Names", zonal_test.go). One case per sentence of their READMEs and code paths.
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
#include "table/records.h"
#include "fixtures.h"
#include "answer_fixture.h"

static k8s_answer_conf_t cluster, external;
static knot_dname_t *zone_cluster, *zone_external;

static int setup(void **state)
{
	urcu_memb_register_thread();
	assert_int_equal(k8s_table_init(&table), KNOT_EOK);
	for (const char *const *ns = (const char *[]){ "kube-system", "shop", NULL }; *ns != NULL; ns++) {
		assert_int_equal(k8s_table_set_ns(&table, *ns, true), KNOT_EOK);
	}

	// lb.shop: a LoadBalancer with an external IP, two ingress IPs and two named ports.
	static const k8s_port_t lb_ports[] = {
		{ .name = "http", .port = 80, .proto = K8S_PROTO_TCP },
		{ .name = "dns", .port = 53, .proto = K8S_PROTO_UDP },
	};
	// An externalIP, then the load balancer's ingress IPs, one of them the externalIP again.
	static k8s_ip_t lb_ext[4];
	lb_ext[0] = fx_ip("192.0.2.10");
	lb_ext[1] = fx_ip("198.51.100.7");
	lb_ext[2] = fx_ip("2001:db8::7");
	lb_ext[3] = fx_ip("192.0.2.10");
	k8s_service_t lb = fx_service("shop", "lb", K8S_SVC_CLUSTERIP, "10.96.5.5", NULL);
	lb.ports = lb_ports;
	lb.port_count = 2;
	lb.externals = lb_ext;
	lb.external_count = 4;
	static k8s_endpoint_t lb_eps[1];
	lb_eps[0] = fx_ep("10.244.3.3", true, "lb-pod", NULL);
	k8s_slice_t lb_slice = fx_slice("shop", "lb-x", "lb", AF_INET, lb_eps, 1, lb_ports, 1);
	put_service(&lb, &lb_slice, 1);

	// plain.shop: a ClusterIP service without external address, with an endpoint.
	k8s_service_t plain = fx_service("shop", "plain", K8S_SVC_CLUSTERIP, "10.96.5.6", NULL);
	plain.ports = lb_ports;
	plain.port_count = 1;
	static k8s_endpoint_t plain_eps[1];
	plain_eps[0] = fx_ep("10.244.3.4", true, "plain-0", NULL);
	k8s_slice_t plain_slice = fx_slice("shop", "plain-x", "plain", AF_INET, plain_eps, 1,
	                                   lb_ports, 1);
	put_service(&plain, &plain_slice, 1);

	// db.shop: headless, three ready endpoints in two zones, one not ready, one without zone.
	static const k8s_port_t pg[] = { { .name = "pg", .port = 5432, .proto = K8S_PROTO_TCP } };
	static k8s_endpoint_t db_eps[5];
	db_eps[0] = fx_ep("10.244.1.10", true, "db-0", NULL);
	db_eps[0].zone = "zone-a";
	db_eps[1] = fx_ep("10.244.2.11", true, "db-1", NULL);
	db_eps[1].zone = "zone-b";
	db_eps[2] = fx_ep("10.244.2.12", true, "db-2", NULL);
	db_eps[2].zone = "zone-b";
	db_eps[3] = fx_ep("10.244.2.13", false, "db-3", NULL);
	db_eps[3].zone = "zone-c";
	db_eps[4] = fx_ep("10.244.4.14", true, "db-4", NULL);
	static k8s_endpoint_t db_v6[1];
	db_v6[0] = fx_ep("fd00::1:10", true, "db-0", NULL);
	db_v6[0].zone = "corp.example.com";
	k8s_slice_t db_slices[2] = {
		fx_slice("shop", "db-v4", "db", AF_INET, db_eps, 5, pg, 1),
		fx_slice("shop", "db-v6", "db", AF_INET6, db_v6, 1, pg, 1),
	};
	k8s_service_t db = fx_service("shop", "db", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&db, db_slices, 2);

	// idle.shop: headless, no ready endpoint.
	static k8s_endpoint_t idle_eps[1];
	idle_eps[0] = fx_ep("10.244.9.9", false, NULL, NULL);
	idle_eps[0].zone = "zone-a";
	k8s_slice_t idle_slice = fx_slice("shop", "idle-x", "idle", AF_INET, idle_eps, 1, pg, 1);
	k8s_service_t idle = fx_service("shop", "idle", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&idle, &idle_slice, 1);

	// kube-dns.kube-system: the Service in front of the cluster DNS (ns1.dns.<zone>).
	static k8s_ip_t dns_ext[1];
	dns_ext[0] = fx_ip("203.0.113.53");
	k8s_service_t dns = fx_service("kube-system", "kube-dns", K8S_SVC_CLUSTERIP, "10.96.0.10", NULL);
	dns.externals = dns_ext;
	dns.external_count = 1;
	put_service(&dns, NULL, 0);
	k8s_table_set_ready(&table, K8S_READY_CLUSTER);

	zone_cluster = knot_dname_from_str_alloc("cluster.local.");
	zone_external = knot_dname_from_str_alloc("example.org.");
	cluster = (k8s_answer_conf_t) {
		.role = K8S_ROLE_CLUSTER, .zone = zone_cluster,
		.domains = { zone_cluster, NULL }, .ttl = 5, .zonal = true,
	};
	external = (k8s_answer_conf_t) {
		.role = K8S_ROLE_EXTERNAL, .zone = zone_external,
		.domains = { zone_cluster, NULL }, .ttl = 5, .ext_apex = (const uint8_t *)"\x03" "dns",
		.ext_ttl = 10,
	};
	return 0;
}

static int teardown(void **state)
{
	k8s_table_commit(&table);
	urcu_memb_barrier();
	k8s_table_deinit(&table);
	free(zone_cluster);
	free(zone_external);
	urcu_memb_unregister_thread();
	return 0;
}

#define EXT(name, type) ask_conf(&external, name, type, KNOT_WIRE_MAX_PKTSIZE)
#define ZONAL(name, type) ask_conf(&cluster, name, type, KNOT_WIRE_MAX_PKTSIZE)

/* --- k8s_external ------------------------------------------------------------------ */

static void a_service_name_answers_its_external_addresses_with_the_external_ttl(void **state)
{
	reply_t r = EXT("lb.shop.example.org.", KNOT_RRTYPE_A);
	assert_reply(r, K8S_ANSWER_HIT, "lb.shop.example.org. A 192.0.2.10 | lb.shop.example.org. A 198.51.100.7");
	assert_int_equal(r.ttl, 10);
	assert_reply(EXT("lb.shop.example.org.", KNOT_RRTYPE_AAAA), K8S_ANSWER_HIT,
	             "lb.shop.example.org. AAAA 2001:db8::7");
	// Matched case-insensitively.
	assert_reply(EXT("LB.Shop.Example.ORG.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "lb.shop.example.org. A 192.0.2.10 | lb.shop.example.org. A 198.51.100.7");
}

static void other_types_of_an_external_name_are_nodata(void **state)
{
	assert_reply(EXT("lb.shop.example.org.", KNOT_RRTYPE_TXT), K8S_ANSWER_NODATA, "");
	assert_reply(EXT("lb.shop.example.org.", KNOT_RRTYPE_PTR), K8S_ANSWER_NODATA, "");
	assert_reply(EXT("lb.shop.example.org.", KNOT_RRTYPE_MX), K8S_ANSWER_NODATA, "");
}

static void a_service_without_external_address_or_namespace_is_nxdomain(void **state)
{
	assert_reply(EXT("plain.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(EXT("ghost.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(EXT("lb.nowhere.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	// A namespace: it exists (NODATA) or not.
	assert_reply(EXT("shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	assert_reply(EXT("nowhere.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	// More than two labels below a service: too long.
	assert_reply(EXT("a.b.c.lb.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	// The apex is the zone file's.
	assert_reply(EXT("example.org.", KNOT_RRTYPE_A), K8S_ANSWER_PASS, "");
}

static void one_label_below_a_service_answers_its_external_addresses(void **state)
{
	// CoreDNS reads it as an endpoint, which its external addresses do not look at.
	assert_reply(EXT("anything.lb.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "anything.lb.shop.example.org. A 192.0.2.10 | anything.lb.shop.example.org. A 198.51.100.7");
}

static void srv_names_the_service_with_each_port_and_weighs_every_address_port_pair(void **state)
{
	reply_t r = EXT("_http._tcp.lb.shop.example.org.", KNOT_RRTYPE_SRV);
	// 4 addresses as listed (192.0.2.10 twice, as CoreDNS counts it) x 1 port: 100 / 4.
	assert_reply(r, K8S_ANSWER_HIT, "_http._tcp.lb.shop.example.org. SRV 0 25 80 lb.shop.example.org.");
	assert_int_equal(r.ttl, 5);  // The kubernetes ttl, as CoreDNS's msg.Service carries it.
	assert_string_equal(r.additional, "lb.shop.example.org. A 192.0.2.10 | lb.shop.example.org. A 198.51.100.7 | "
	                    "lb.shop.example.org. AAAA 2001:db8::7");
	// Every named port at the service's name: 4 x 2 pairs.
	assert_reply(EXT("lb.shop.example.org.", KNOT_RRTYPE_SRV), K8S_ANSWER_HIT,
	             "lb.shop.example.org. SRV 0 12 53 lb.shop.example.org. | "
	             "lb.shop.example.org. SRV 0 12 80 lb.shop.example.org.");
	// Underscores are optional, as CoreDNS strips them; a port it lacks is NXDOMAIN.
	assert_reply(EXT("dns.udp.lb.shop.example.org.", KNOT_RRTYPE_SRV), K8S_ANSWER_HIT,
	             "dns.udp.lb.shop.example.org. SRV 0 25 53 lb.shop.example.org.");
	assert_reply(EXT("_http._udp.lb.shop.example.org.", KNOT_RRTYPE_SRV), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(EXT("_http._tcp.lb.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "_http._tcp.lb.shop.example.org. A 192.0.2.10 | _http._tcp.lb.shop.example.org. A 198.51.100.7");
}

static void headless_endpoints_answer_only_with_the_headless_option(void **state)
{
	assert_reply(EXT("db.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	external.ext_headless = true;
	assert_reply(EXT("db.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "db.shop.example.org. A 10.244.1.10 | db.shop.example.org. A 10.244.2.11 | "
	             "db.shop.example.org. A 10.244.2.12 | db.shop.example.org. A 10.244.4.14");
	assert_reply(EXT("db-1.db.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "db-1.db.shop.example.org. A 10.244.2.11");
	assert_reply(EXT("db-3.db.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	// An endpoint of a ClusterIP service without external address, too.
	assert_reply(EXT("plain-0.plain.shop.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "plain-0.plain.shop.example.org. A 10.244.3.4");
	reply_t r = EXT("_pg._tcp.db.shop.example.org.", KNOT_RRTYPE_SRV);
	assert_int_equal(r.result, K8S_ANSWER_HIT);
	assert_non_null(strstr(r.answer, "SRV 0 20 5432 db-1.db.shop.example.org."));
	assert_non_null(strstr(r.additional, "db-1.db.shop.example.org. A 10.244.2.11"));
	assert_null(strstr(r.additional, "db-3"));
	external.ext_headless = false;
}

static void the_apex_label_holds_the_nameserver_name(void **state)
{
	assert_reply(EXT("dns.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	reply_t r = EXT("ns1.dns.example.org.", KNOT_RRTYPE_A);
	assert_reply(r, K8S_ANSWER_HIT, "ns1.dns.example.org. A 203.0.113.53");
	assert_int_equal(r.ttl, 10);
	assert_reply(EXT("ns1.dns.example.org.", KNOT_RRTYPE_AAAA), K8S_ANSWER_NODATA, "");
	assert_reply(EXT("ns1.dns.example.org.", KNOT_RRTYPE_TXT), K8S_ANSWER_NODATA, "");
	assert_reply(EXT("ns2.dns.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(EXT("x.ns1.dns.example.org.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
}

/* --- zonal names ------------------------------------------------------------------- */

static void pin_answers_the_endpoints_of_that_zone(void **state)
{
	assert_reply(ZONAL("zone-a.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "zone-a.pin._zone.db.shop.svc.cluster.local. A 10.244.1.10");
	assert_reply(ZONAL("zone-b.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "zone-b.pin._zone.db.shop.svc.cluster.local. A 10.244.2.11 | "
	             "zone-b.pin._zone.db.shop.svc.cluster.local. A 10.244.2.12");
	assert_reply(ZONAL("zone-a.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_AAAA),
	             K8S_ANSWER_NODATA, "");
	// A zone of several labels (a label value may hold dots).
	assert_reply(ZONAL("corp.example.com.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_AAAA),
	             K8S_ANSWER_HIT, "corp.example.com.pin._zone.db.shop.svc.cluster.local. AAAA fd00::1:10");
}

static void pin_of_a_zone_no_ready_endpoint_carries_is_nodata(void **state)
{
	// Drained (zone-c: its one endpoint is not ready) and mistyped alike.
	assert_reply(ZONAL("zone-c.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	assert_reply(ZONAL("zone-x.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
	// A headless service without ready endpoints exists here.
	assert_reply(ZONAL("zone-a.pin._zone.idle.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NODATA, "");
}

static void prefer_falls_back_to_every_endpoint(void **state)
{
	assert_reply(ZONAL("zone-a.prefer._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "zone-a.prefer._zone.db.shop.svc.cluster.local. A 10.244.1.10");
	assert_reply(ZONAL("zone-x.prefer._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_HIT,
	             "zone-x.prefer._zone.db.shop.svc.cluster.local. A 10.244.1.10 | "
	             "zone-x.prefer._zone.db.shop.svc.cluster.local. A 10.244.2.11 | "
	             "zone-x.prefer._zone.db.shop.svc.cluster.local. A 10.244.2.12 | "
	             "zone-x.prefer._zone.db.shop.svc.cluster.local. A 10.244.4.14");
}

static void srv_and_its_targets_are_zone_filtered(void **state)
{
	reply_t r = ZONAL("zone-b.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "zone-b.pin._zone.db.shop.svc.cluster.local. SRV 0 50 5432 db-1.db.shop.svc.cluster.local. | "
	             "zone-b.pin._zone.db.shop.svc.cluster.local. SRV 0 50 5432 db-2.db.shop.svc.cluster.local.");
	assert_string_equal(r.additional, "db-1.db.shop.svc.cluster.local. A 10.244.2.11 | "
	                    "db-2.db.shop.svc.cluster.local. A 10.244.2.12");
	// db-0 has addresses in two zones: only zone-a's is its zonal target's.
	r = ZONAL("zone-a.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_SRV);
	assert_reply(r, K8S_ANSWER_HIT,
	             "zone-a.pin._zone.db.shop.svc.cluster.local. SRV 0 100 5432 db-0.db.shop.svc.cluster.local.");
	assert_string_equal(r.additional, "db-0.db.shop.svc.cluster.local. A 10.244.1.10");
}

static void zonal_names_are_nxdomain_but_for_existing_headless_services(void **state)
{
	assert_reply(ZONAL("zone-a.pin._zone.ghost.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ZONAL("zone-a.pin._zone.plain.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	// An unknown directive keeps the stock too-long NXDOMAIN, as the option off does.
	assert_reply(ZONAL("zone-a.florp._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ZONAL("zone-a.pin.zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	assert_reply(ZONAL("pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	cluster.zonal = false;
	assert_reply(ZONAL("zone-a.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_A), K8S_ANSWER_NXDOMAIN, "");
	cluster.zonal = true;
	// Other types of an existing zonal name: NODATA.
	assert_reply(ZONAL("zone-a.pin._zone.db.shop.svc.cluster.local.", KNOT_RRTYPE_TXT), K8S_ANSWER_NODATA, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_service_name_answers_its_external_addresses_with_the_external_ttl),
		cmocka_unit_test(other_types_of_an_external_name_are_nodata),
		cmocka_unit_test(a_service_without_external_address_or_namespace_is_nxdomain),
		cmocka_unit_test(one_label_below_a_service_answers_its_external_addresses),
		cmocka_unit_test(srv_names_the_service_with_each_port_and_weighs_every_address_port_pair),
		cmocka_unit_test(headless_endpoints_answer_only_with_the_headless_option),
		cmocka_unit_test(the_apex_label_holds_the_nameserver_name),
		cmocka_unit_test(pin_answers_the_endpoints_of_that_zone),
		cmocka_unit_test(pin_of_a_zone_no_ready_endpoint_carries_is_nodata),
		cmocka_unit_test(prefer_falls_back_to_every_endpoint),
		cmocka_unit_test(srv_and_its_targets_are_zone_filtered),
		cmocka_unit_test(zonal_names_are_nxdomain_but_for_existing_headless_services),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
