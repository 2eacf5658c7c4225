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

#include <stdarg.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>

#include "answer/qname.h"

static k8s_qname_t parse(const char *name, const char *zone, k8s_role_t role)
{
	knot_dname_t *qname = knot_dname_from_str_alloc(name);
	knot_dname_t *apex = knot_dname_from_str_alloc(zone);
	assert_non_null(qname);
	assert_non_null(apex);
	k8s_qname_t q;
	k8s_qname_parse(qname, apex, role, &q);
	// Keep pointers meaningful for the label checks below: compare before freeing.
	static uint8_t keep[KNOT_DNAME_MAXLEN];
	memcpy(keep, qname, knot_dname_size(qname));
	ptrdiff_t shift = keep - qname;
	q.owner = q.owner ? q.owner + shift : NULL;
	q.ns = q.ns ? q.ns + shift : NULL;
	for (unsigned i = 0; i < q.sub_count; i++) {
		q.sub[i] += shift;
	}
	if (q.kind == K8S_Q_ZONAL) {
		q.topo += shift;
		q.directive += shift;
	}
	free(qname);
	free(apex);
	return q;
}

static void assert_label(const uint8_t *label, const char *text)
{
	assert_non_null(label);
	assert_true(k8s_label_is(label, text));
}

static void zone_apex_is_left_to_the_zone_file(void **state)
{
	assert_int_equal(parse("cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER).kind, K8S_Q_APEX);
}

static void dns_version_record_name(void **state)
{
	assert_int_equal(parse("dns-version.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_DNS_VERSION);
}

static void svc_and_pod_are_empty_non_terminals(void **state)
{
	assert_int_equal(parse("svc.cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER).kind,
	                 K8S_Q_SVC_ROOT);
	assert_int_equal(parse("pod.cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER).kind,
	                 K8S_Q_POD_ROOT);
	assert_int_equal(parse("foo.cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER).kind,
	                 K8S_Q_INVALID);
}

static void namespace_names(void **state)
{
	k8s_qname_t q = parse("default.svc.cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_NAMESPACE);
	assert_false(q.under_pod);
	assert_label(q.ns, "default");
	q = parse("default.pod.cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_NAMESPACE);
	assert_true(q.under_pod);
	assert_int_equal(parse("default.nope.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_INVALID);
}

static void service_name_has_service_and_namespace(void **state)
{
	k8s_qname_t q = parse("kubernetes.default.svc.cluster.local.", "cluster.local.",
	                      K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_SERVICE);
	assert_label(q.ns, "default");
	assert_int_equal(q.owner_len, 1 + 10 + 1 + 7);
	assert_memory_equal(q.owner, "\x0akubernetes\x07" "default", q.owner_len);
}

static void srv_name_has_port_and_protocol(void **state)
{
	k8s_qname_t q = parse("_https._tcp.kubernetes.default.svc.cluster.local.", "cluster.local.",
	                      K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_SUBNAME);
	assert_int_equal(q.sub_count, 2);
	assert_label(q.sub[0], "_https");
	assert_label(q.sub[1], "_tcp");
	assert_memory_equal(q.owner, "\x0akubernetes\x07" "default", q.owner_len);
}

static void endpoint_name_has_one_label_below_the_service(void **state)
{
	k8s_qname_t q = parse("my-pet.headless.default.svc.cluster.local.", "cluster.local.",
	                      K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_SUBNAME);
	assert_int_equal(q.sub_count, 1);
	assert_label(q.sub[0], "my-pet");
}

static void three_labels_below_a_service_exist_only_in_the_clusterset_zone(void **state)
{
	assert_int_equal(parse("a.b.c.web.shop.svc.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_INVALID);
	k8s_qname_t q = parse("web-0.east.prod.web.shop.svc.clusterset.local.", "clusterset.local.",
	                      K8S_ROLE_CLUSTERSET);
	assert_int_equal(q.kind, K8S_Q_SUBNAME);
	assert_int_equal(q.sub_count, 3);
	assert_int_equal(parse("a.b.c.d.web.shop.svc.clusterset.local.", "clusterset.local.",
	                       K8S_ROLE_CLUSTERSET).kind, K8S_Q_INVALID);
}

static void zonal_names_are_a_zone_a_directive_and_the_zone_label_below_a_service(void **state)
{
	k8s_qname_t q = parse("us-west-2a.pin._zone.db.prod.svc.cluster.local.", "cluster.local.",
	                      K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_ZONAL);
	assert_label(q.directive, "pin");
	assert_label(q.topo, "us-west-2a");
	assert_int_equal(q.topo_size, 11);
	assert_label(q.owner, "db");
	assert_label(q.ns, "prod");
	// The zone may hold dots: every label left of the directive.
	q = parse("corp.example.com.prefer._zone.db.prod.svc.cluster.local.", "cluster.local.",
	          K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_ZONAL);
	assert_label(q.directive, "prefer");
	assert_int_equal(q.topo_size, 17);
	// Not below _zone, without a zone, or in another role: the old shapes.
	assert_int_equal(parse("a.pin.zone.db.prod.svc.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_INVALID);
	assert_int_equal(parse("pin._zone.db.prod.svc.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_SUBNAME);
	assert_int_equal(parse("a.b.pin._zone.db.prod.svc.clusterset.local.", "clusterset.local.",
	                       K8S_ROLE_CLUSTERSET).kind, K8S_Q_INVALID);
}

static void external_zone_names_have_no_svc_label(void **state)
{
	k8s_qname_t q = parse("shop.example.org.", "example.org.", K8S_ROLE_EXTERNAL);
	assert_int_equal(q.kind, K8S_Q_NAMESPACE);
	assert_label(q.ns, "shop");
	q = parse("web.shop.example.org.", "example.org.", K8S_ROLE_EXTERNAL);
	assert_int_equal(q.kind, K8S_Q_SERVICE);
	assert_label(q.owner, "web");
	assert_int_equal(q.owner_len, 9);
	q = parse("_http._tcp.web.shop.example.org.", "example.org.", K8S_ROLE_EXTERNAL);
	assert_int_equal(q.kind, K8S_Q_SUBNAME);
	assert_int_equal(q.sub_count, 2);
	assert_label(q.sub[0], "_http");
	assert_label(q.sub[1], "_tcp");
	q = parse("pod-0.web.shop.example.org.", "example.org.", K8S_ROLE_EXTERNAL);
	assert_int_equal(q.sub_count, 1);
	assert_int_equal(parse("a.b.c.web.shop.example.org.", "example.org.", K8S_ROLE_EXTERNAL).kind,
	                 K8S_Q_INVALID);
	assert_int_equal(parse("example.org.", "example.org.", K8S_ROLE_EXTERNAL).kind, K8S_Q_APEX);
}

static void pod_name_ipv4_dashed(void **state)
{
	k8s_qname_t q = parse("1-2-3-4.default.pod.cluster.local.", "cluster.local.", K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_POD);
	assert_int_equal(q.ip.family, AF_INET);
	assert_memory_equal(q.ip.bytes, "\x01\x02\x03\x04", 4);
	assert_int_equal(parse("1-2-3-256.default.pod.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_INVALID);
	assert_int_equal(parse("x.default.pod.cluster.local.", "cluster.local.",
	                       K8S_ROLE_CLUSTER).kind, K8S_Q_INVALID);
}

/*! \brief Reads a dashed label alone; true if it is an address. */
static bool pod_ip(const char *text, k8s_ip_t *ip)
{
	uint8_t label[64] = { strlen(text) };
	memcpy(label + 1, text, label[0]);
	return k8s_qname_pod_ip(label, ip);
}

static void pod_name_ipv4_octets_are_read_as_inet_pton_reads_them(void **state)
{
	k8s_ip_t ip;
	assert_true(pod_ip("0-0-0-0", &ip));
	assert_memory_equal(ip.bytes, "\0\0\0\0", 4);
	assert_true(pod_ip("255-10-100-9", &ip));
	assert_int_equal(ip.family, AF_INET);
	assert_memory_equal(ip.bytes, "\xff\x0a\x64\x09", 4);
	assert_false(pod_ip("01-2-3-4", &ip));
	assert_false(pod_ip("1-2-3-00", &ip));
	assert_false(pod_ip("1234-2-3-4", &ip));
	assert_false(pod_ip("1-2-3-4a", &ip));
	assert_false(pod_ip("1-2-3-", &ip));
	assert_false(pod_ip("-1-2-3", &ip));
	assert_false(pod_ip("a-b-c-d", &ip));
}

static void pod_name_ipv4_is_what_inet_pton_reads_for_every_shape(void **state)
{
	// Four (or three, or five) tokens of every kind joined by dashes, against inet_pton().
	static const char *tokens[] = { "", "0", "00", "01", "1", "9", "10", "99", "100", "199",
	                                "249", "255", "256", "300", "999", "1000", "a", "1a", "-" };
	const size_t n = sizeof(tokens) / sizeof(tokens[0]);
	for (size_t parts = 3; parts <= 5; parts++) {
		size_t combos = 1;
		for (size_t p = 0; p < parts; p++) {
			combos *= (parts == 5) ? 3 : n;  // Five parts: a few tokens only.
		}
		for (size_t k = 0; k < combos; k++) {
			char dashed[64] = "", dotted[64] = "";
			size_t rest = k;
			for (size_t p = 0; p < parts; p++) {
				const char *tok = tokens[(parts == 5) ? 1 + rest % 3 : rest % n];
				rest /= (parts == 5) ? 3 : n;
				if (p > 0) {
					strcat(dashed, "-");
					strcat(dotted, ".");
				}
				strcat(dashed, tok);
				strcat(dotted, tok);
			}
			struct in_addr want;
			bool valid = inet_pton(AF_INET, dotted, &want) == 1;
			k8s_ip_t ip;
			bool got = pod_ip(dashed, &ip) && ip.family == AF_INET;
			if (got != valid || (valid && memcmp(ip.bytes, &want, 4) != 0)) {
				fail_msg("%s: %s, inet_pton() says %s", dashed, got ? "read" : "refused",
				         valid ? "valid" : "invalid");
			}
		}
	}
}

static void pod_name_ipv6_dashed(void **state)
{
	k8s_qname_t q = parse("fd00-10-244--11.default.pod.cluster.local.", "cluster.local.",
	                      K8S_ROLE_CLUSTER);
	assert_int_equal(q.kind, K8S_Q_POD);
	assert_int_equal(q.ip.family, AF_INET6);
	k8s_ip_t ip;
	uint8_t label[] = "\x07" "fd00--0";
	assert_true(k8s_qname_pod_ip(label, &ip));
	assert_int_equal(ip.family, AF_INET6);
	assert_memory_equal(ip.bytes, "\xfd\x00\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
}

static void pods_have_no_names_in_the_clusterset_zone(void **state)
{
	assert_int_equal(parse("1-2-3-4.default.pod.clusterset.local.", "clusterset.local.",
	                       K8S_ROLE_CLUSTERSET).kind, K8S_Q_INVALID);
}

static void reverse_ipv4_address_and_prefixes(void **state)
{
	k8s_qname_t q = parse("1.0.96.10.in-addr.arpa.", "in-addr.arpa.", K8S_ROLE_REVERSE);
	assert_int_equal(q.kind, K8S_Q_REVERSE);
	assert_int_equal(q.ip_bits, 32);
	assert_memory_equal(q.ip.bytes, "\x0a\x60\x00\x01", 4);
	q = parse("96.10.in-addr.arpa.", "in-addr.arpa.", K8S_ROLE_REVERSE);
	assert_int_equal(q.kind, K8S_Q_REVERSE);
	assert_int_equal(q.ip_bits, 16);
	q = parse("1.0.96.10.in-addr.arpa.", "96.10.in-addr.arpa.", K8S_ROLE_REVERSE);
	assert_int_equal(q.ip_bits, 32);
}

static void reverse_ipv4_rejects_bad_octets(void **state)
{
	assert_int_equal(parse("256.0.96.10.in-addr.arpa.", "in-addr.arpa.", K8S_ROLE_REVERSE).kind,
	                 K8S_Q_INVALID);
	assert_int_equal(parse("01.0.96.10.in-addr.arpa.", "in-addr.arpa.", K8S_ROLE_REVERSE).kind,
	                 K8S_Q_INVALID);
	assert_int_equal(parse("x.0.96.10.in-addr.arpa.", "in-addr.arpa.", K8S_ROLE_REVERSE).kind,
	                 K8S_Q_INVALID);
	assert_int_equal(parse("1.1.0.96.10.in-addr.arpa.", "in-addr.arpa.", K8S_ROLE_REVERSE).kind,
	                 K8S_Q_INVALID);
}

static void reverse_ipv6_nibbles(void **state)
{
	// The specification's example: 2001:db8::1.
	k8s_qname_t q = parse("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
	                      "ip6.arpa.", K8S_ROLE_REVERSE);
	assert_int_equal(q.kind, K8S_Q_REVERSE);
	assert_int_equal(q.ip_bits, 128);
	assert_int_equal(q.ip.family, AF_INET6);
	assert_memory_equal(q.ip.bytes, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	q = parse("8.b.d.0.1.0.0.2.ip6.arpa.", "ip6.arpa.", K8S_ROLE_REVERSE);
	assert_int_equal(q.ip_bits, 32);
	assert_int_equal(parse("g.ip6.arpa.", "ip6.arpa.", K8S_ROLE_REVERSE).kind, K8S_Q_INVALID);
	assert_int_equal(parse("10.ip6.arpa.", "ip6.arpa.", K8S_ROLE_REVERSE).kind, K8S_Q_INVALID);
}

/*! \brief The parse's svc_ns of \a name in cluster.local.: the label \a ns, or none (NULL). */
static void assert_svc_ns(const char *name, const char *ns)
{
	knot_dname_t *qname = knot_dname_from_str_alloc(name);
	knot_dname_t *apex = knot_dname_from_str_alloc("cluster.local.");
	assert_non_null(qname);
	assert_non_null(apex);
	k8s_qname_t q;
	k8s_qname_parse(qname, apex, K8S_ROLE_CLUSTER, &q);
	if (ns == NULL) {
		assert_null(q.svc_ns);
	} else {
		assert_label(q.svc_ns, ns);
	}
	free(qname);
	free(apex);
}

static void a_name_below_ns_svc_gives_its_namespace_for_client_autopath(void **state)
{
	assert_svc_ns("nope.default.svc.cluster.local.", "default");
	// A search-path miss of an outside name: no kind of ours, the namespace still.
	assert_svc_ns("www.example.com.default.svc.cluster.local.", "default");
	assert_svc_ns("default.svc.cluster.local.", NULL);
	assert_svc_ns("1-2-3-4.default.pod.cluster.local.", NULL);
	assert_svc_ns("www.example.com.cluster.local.", NULL);
	// More labels than the parse's list holds: found by a walk of its own.
	char name[KNOT_DNAME_TXT_MAXLEN] = "";
	for (int i = 0; i < 45; i++) {
		strcat(name, "a.");
	}
	strcat(name, "shop.svc.cluster.local.");
	assert_svc_ns(name, "shop");
	name[strlen(name) - strlen("shop.svc.cluster.local.")] = '\0';
	strcat(name, "shop.pod.cluster.local.");
	assert_svc_ns(name, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(zone_apex_is_left_to_the_zone_file),
		cmocka_unit_test(dns_version_record_name),
		cmocka_unit_test(svc_and_pod_are_empty_non_terminals),
		cmocka_unit_test(namespace_names),
		cmocka_unit_test(service_name_has_service_and_namespace),
		cmocka_unit_test(srv_name_has_port_and_protocol),
		cmocka_unit_test(endpoint_name_has_one_label_below_the_service),
		cmocka_unit_test(three_labels_below_a_service_exist_only_in_the_clusterset_zone),
		cmocka_unit_test(zonal_names_are_a_zone_a_directive_and_the_zone_label_below_a_service),
		cmocka_unit_test(external_zone_names_have_no_svc_label),
		cmocka_unit_test(pod_name_ipv4_dashed),
		cmocka_unit_test(pod_name_ipv4_octets_are_read_as_inet_pton_reads_them),
		cmocka_unit_test(pod_name_ipv4_is_what_inet_pton_reads_for_every_shape),
		cmocka_unit_test(pod_name_ipv6_dashed),
		cmocka_unit_test(pods_have_no_names_in_the_clusterset_zone),
		cmocka_unit_test(reverse_ipv4_address_and_prefixes),
		cmocka_unit_test(reverse_ipv4_rejects_bad_octets),
		cmocka_unit_test(reverse_ipv6_nibbles),
		cmocka_unit_test(a_name_below_ns_svc_gives_its_namespace_for_client_autopath),
	};
	return cmocka_run_group_tests_name("qname", tests, NULL, NULL);
}
