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
 * The hosts table (module/hosts/): a hosts file's text read as CoreDNS's hosts plugin
 * reads it (plugin/hosts/hostsfile.go), and queries answered as its ServeDNS answers
 * them (hosts.go). One case per sentence of its README and code path.
 */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hosts/hosts.h"

static knot_dname_t *zones[4];
static knot_dname_t *fall[4];
static k8s_hosts_conf_t conf;

/*! \brief A table of \a text with \a conf, its stats in \a st (or NULL). */
static k8s_hosts_t *table_of(const char *text, k8s_hosts_stats_t *st)
{
	k8s_hosts_builder_t *b = k8s_hosts_builder_new(&conf);
	assert_non_null(b);
	assert_int_equal(k8s_hosts_parse(b, text, strlen(text)), KNOT_EOK);
	k8s_hosts_t *h = k8s_hosts_build(b, st);
	assert_non_null(h);
	return h;
}

/*! \brief The answer of \a name, type \a type: "RESULT rcode-free | owner TYPE data | ...". */
typedef struct {
	k8s_hosts_result_t result;
	char text[4096];
	uint32_t ttl;
} reply_t;

static reply_t ask(const k8s_hosts_t *h, const char *name, uint16_t type)
{
	knot_dname_t *qname = knot_dname_from_str_alloc(name);
	assert_non_null(qname);
	knot_pkt_t *query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_put_question(query, qname, KNOT_CLASS_IN, type), KNOT_EOK);
	knot_pkt_t *resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_init_response(resp, query), KNOT_EOK);
	assert_int_equal(knot_pkt_begin(resp, KNOT_ANSWER), KNOT_EOK);
	knot_dname_to_lower(qname);

	reply_t r = { 0 };
	r.result = k8s_hosts_answer(h, &conf, qname, type, resp);
	knot_pkt_t *parsed = knot_pkt_new(resp->wire, resp->size, NULL);
	assert_int_equal(knot_pkt_parse(parsed, 0), KNOT_EOK);
	const knot_pktsection_t *answer = knot_pkt_section(parsed, KNOT_ANSWER);
	for (uint16_t i = 0; i < answer->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(answer, i);
		char owner[KNOT_DNAME_TXT_MAXLEN], rtype[16];
		knot_dname_to_str(owner, rr->owner, sizeof(owner));
		knot_rrtype_to_string(rr->type, rtype, sizeof(rtype));
		r.ttl = rr->ttl;
		for (uint16_t j = 0; j < rr->rrs.count; j++) {
			char data[1024];
			assert_true(knot_rrset_txt_dump_data(rr, j, data, sizeof(data),
			                                     &KNOT_DUMP_STYLE_DEFAULT) >= 0);
			size_t len = strlen(r.text);
			snprintf(r.text + len, sizeof(r.text) - len, "%s%s %s %s",
			         len > 0 ? " | " : "", owner, rtype, data);
		}
	}
	knot_pkt_free(parsed);
	knot_pkt_free(resp);
	knot_pkt_free(query);
	free(qname);
	return r;
}

#define assert_answer(h, name, type, res, text_) do { \
	reply_t _r = ask((h), (name), (type)); \
	assert_int_equal(_r.result, (res)); \
	assert_string_equal(_r.text, (text_)); \
} while (0)

static void set_names(knot_dname_t **list, size_t *count, const char *const *names)
{
	for (size_t i = 0; i < 4; i++) {
		free(list[i]);
		list[i] = NULL;
	}
	*count = 0;
	for (size_t i = 0; names != NULL && names[i] != NULL; i++) {
		list[i] = knot_dname_from_str_alloc(names[i]);
		(*count)++;
	}
}

static int reset(void **state)
{
	memset(&conf, 0, sizeof(conf));
	set_names(zones, &conf.zone_count, NULL);
	set_names(fall, &conf.fall_count, NULL);
	conf.zones = (const knot_dname_t *const *)zones;
	conf.fall = (const knot_dname_t *const *)fall;
	conf.ttl = 3600;
	return 0;
}

#define SET_ZONES(...) set_names(zones, &conf.zone_count, (const char *const[]){ __VA_ARGS__, NULL })
#define SET_FALL(...) set_names(fall, &conf.fall_count, (const char *const[]){ __VA_ARGS__, NULL })

/* The hosts file */

static void a_line_gives_each_of_its_names_the_address(void **state)
{
	k8s_hosts_t *h = table_of("192.168.1.10    example.com            example\n"
	                          "::1                     localhost ip6-localhost\n", NULL);
	assert_answer(h, "example.com.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "example.com. A 192.168.1.10");
	assert_answer(h, "example.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "example. A 192.168.1.10");
	assert_answer(h, "ip6-localhost.", KNOT_RRTYPE_AAAA, K8S_HOSTS_HIT, "ip6-localhost. AAAA ::1");
	assert_int_equal(k8s_hosts_count(h), 4);
	k8s_hosts_free(h);
}

static void names_are_matched_case_insensitively(void **state)
{
	// The owner is a pointer to the question (knotd gives it back its case).
	k8s_hosts_t *h = table_of("10.0.0.1 Node-1.Example.\n", NULL);
	assert_answer(h, "NODE-1.example.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "node-1.example. A 10.0.0.1");
	k8s_hosts_free(h);
}

static void comments_blank_lines_and_any_whitespace_are_skipped(void **state)
{
	k8s_hosts_stats_t st;
	k8s_hosts_t *h = table_of("# a comment\n\n   \n\t10.0.0.1\tone# two\r\n"
	                          "10.0.0.2 three #four\n10.0.0.3\vfive\fsix\n", &st);
	assert_answer(h, "one.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "one. A 10.0.0.1");
	assert_answer(h, "three.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "three. A 10.0.0.2");
	assert_answer(h, "six.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "six. A 10.0.0.3");
	assert_answer(h, "two.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_answer(h, "four.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.entries, 4);
	k8s_hosts_free(h);
}

static void a_line_without_an_address_is_skipped_and_a_bad_name_alone(void **state)
{
	k8s_hosts_stats_t st;
	k8s_hosts_t *h = table_of("example.com 10.0.0.1\n"   // names first: no address
	                          "10.0.0.256 bad\n"
	                          "010.0.0.1 octal\n"         // Go's ParseIP refuses leading zeros
	                          "10.0.0.2 a..b good \\032x -x- toolong"
	                          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", &st);
	assert_answer(h, "good.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "good. A 10.0.0.2");
	// Any printable label is a name, as CoreDNS takes it ("-x-").
	assert_answer(h, "-x-.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "-x-. A 10.0.0.2");
	assert_answer(h, "example.com.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_answer(h, "bad.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_answer(h, "octal.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.skipped, 3 + 3);  // three lines without an address, three names
	k8s_hosts_free(h);
}

static void an_ipv6_zone_is_dropped_and_a_mapped_ipv4_is_ipv4(void **state)
{
	k8s_hosts_t *h = table_of("fe80::1%eth0 link\n::ffff:10.0.0.9 mapped\n", NULL);
	assert_answer(h, "link.", KNOT_RRTYPE_AAAA, K8S_HOSTS_HIT, "link. AAAA fe80::1");
	// Go's To4(): CoreDNS answers it as A.
	assert_answer(h, "mapped.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "mapped. A 10.0.0.9");
	assert_answer(h, "mapped.", KNOT_RRTYPE_AAAA, K8S_HOSTS_NODATA, "");
	assert_answer(h, "9.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_HIT,
	              "9.0.0.10.in-addr.arpa. PTR mapped.");
	k8s_hosts_free(h);
}

static void every_address_of_a_name_answers_once_in_file_order(void **state)
{
	k8s_hosts_t *h = table_of("10.0.0.3 multi\n10.0.0.1 multi\n10.0.0.3 multi other\n"
	                          "10.0.0.2 multi\n", NULL);
	assert_answer(h, "multi.", KNOT_RRTYPE_A, K8S_HOSTS_HIT,
	              "multi. A 10.0.0.3 | multi. A 10.0.0.1 | multi. A 10.0.0.2");
	k8s_hosts_free(h);
}

static void inline_entries_follow_the_file(void **state)
{
	k8s_hosts_builder_t *b = k8s_hosts_builder_new(&conf);
	const char *file = "10.0.0.2 both\n", *inl = "10.0.0.1 both\n10.0.0.9 inline\n";
	assert_int_equal(k8s_hosts_parse(b, file, strlen(file)), KNOT_EOK);
	assert_int_equal(k8s_hosts_parse(b, inl, strlen(inl)), KNOT_EOK);
	k8s_hosts_t *h = k8s_hosts_build(b, NULL);
	assert_answer(h, "both.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "both. A 10.0.0.2 | both. A 10.0.0.1");
	assert_answer(h, "inline.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "inline. A 10.0.0.9");
	k8s_hosts_free(h);
}

static void names_outside_the_zones_are_left_out(void **state)
{
	SET_ZONES("example.org.");
	k8s_hosts_stats_t st;
	k8s_hosts_t *h = table_of("10.0.0.1 a.example.org example.org b.example.net\n", &st);
	assert_int_equal(st.outside, 1);
	assert_answer(h, "a.example.org.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "a.example.org. A 10.0.0.1");
	assert_answer(h, "example.org.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "example.org. A 10.0.0.1");
	// Not ours: passed on whatever the fallthrough.
	assert_answer(h, "b.example.net.", KNOT_RRTYPE_A, K8S_HOSTS_PASS, "");
	// Its PTR names only what is in the zones.
	assert_answer(h, "1.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_HIT,
	              "1.0.0.10.in-addr.arpa. PTR a.example.org. | 1.0.0.10.in-addr.arpa. PTR example.org.");
	k8s_hosts_free(h);
}

/* PTR records */

static void ptr_records_name_every_name_of_an_address(void **state)
{
	k8s_hosts_t *h = table_of("10.0.0.1 one\n10.0.0.1 two one\nfd00::1 six\n", NULL);
	assert_answer(h, "1.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_HIT,
	              "1.0.0.10.in-addr.arpa. PTR one. | 1.0.0.10.in-addr.arpa. PTR two.");
	assert_answer(h, "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.",
	              KNOT_RRTYPE_PTR, K8S_HOSTS_HIT,
	              "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. PTR six.");
	// An address the table lacks, or a name that is no address: passed on.
	assert_answer(h, "2.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_PASS, "");
	assert_answer(h, "0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_PASS, "");
	assert_answer(h, "01.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_PASS, "");
	assert_answer(h, "one.", KNOT_RRTYPE_PTR, K8S_HOSTS_PASS, "");
	k8s_hosts_free(h);
}

static void no_reverse_makes_no_ptr(void **state)
{
	conf.no_reverse = true;
	k8s_hosts_t *h = table_of("10.0.0.1 one\n", NULL);
	assert_answer(h, "1.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_PASS, "");
	assert_answer(h, "one.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "one. A 10.0.0.1");
	k8s_hosts_free(h);
}

static void the_ttl_is_every_records(void **state)
{
	conf.ttl = 60;
	k8s_hosts_t *h = table_of("10.0.0.1 one\n", NULL);
	assert_int_equal(ask(h, "one.", KNOT_RRTYPE_A).ttl, 60);
	assert_int_equal(ask(h, "1.0.0.10.in-addr.arpa.", KNOT_RRTYPE_PTR).ttl, 60);
	k8s_hosts_free(h);
}

/* Wildcard records */

static void a_wildcard_matches_one_label_below_and_an_exact_name_wins(void **state)
{
	k8s_hosts_t *h = table_of("192.168.1.10    *.example.com\n192.168.1.11    a.example.com\n",
	                          NULL);
	assert_answer(h, "a.example.com.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "a.example.com. A 192.168.1.11");
	assert_answer(h, "apps.example.com.", KNOT_RRTYPE_A, K8S_HOSTS_HIT,
	              "apps.example.com. A 192.168.1.10");
	// Not the apex, nor two labels below.
	assert_answer(h, "example.com.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_answer(h, "deep.apps.example.com.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_answer(h, "apps.example.com.", KNOT_RRTYPE_AAAA, K8S_HOSTS_NODATA, "");
	// Wildcard entries make no PTR.
	assert_answer(h, "10.1.168.192.in-addr.arpa.", KNOT_RRTYPE_PTR, K8S_HOSTS_PASS, "");
	k8s_hosts_free(h);
}

/* ServeDNS: types, fallthrough */

static void other_types_of_a_known_name_are_nodata(void **state)
{
	k8s_hosts_t *h = table_of("10.0.0.1 one\n", NULL);
	assert_answer(h, "one.", KNOT_RRTYPE_AAAA, K8S_HOSTS_NODATA, "");
	assert_answer(h, "one.", KNOT_RRTYPE_TXT, K8S_HOSTS_NODATA, "");
	assert_answer(h, "one.", KNOT_RRTYPE_ANY, K8S_HOSTS_NODATA, "");
	k8s_hosts_free(h);
}

static void an_unknown_name_is_servfail_without_fallthrough(void **state)
{
	// "we don't have a SOA, so we make it SERVFAIL"
	k8s_hosts_t *h = table_of("10.0.0.1 one\n", NULL);
	assert_answer(h, "two.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	assert_answer(h, "two.", KNOT_RRTYPE_TXT, K8S_HOSTS_SERVFAIL, "");
	k8s_hosts_free(h);
}

static void fallthrough_passes_unknown_names_of_its_zones_on(void **state)
{
	SET_FALL("example.org.");
	k8s_hosts_t *h = table_of("10.0.0.1 one.example.org one.example.net\n", NULL);
	assert_answer(h, "two.example.org.", KNOT_RRTYPE_A, K8S_HOSTS_PASS, "");
	assert_answer(h, "two.example.net.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	// A known name is answered, of any type.
	assert_answer(h, "one.example.org.", KNOT_RRTYPE_AAAA, K8S_HOSTS_NODATA, "");
	assert_answer(h, "one.example.org.", KNOT_RRTYPE_TXT, K8S_HOSTS_NODATA, "");
	k8s_hosts_free(h);

	SET_FALL(".");
	h = table_of("10.0.0.1 one\n", NULL);
	assert_answer(h, "kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A, K8S_HOSTS_PASS, "");
	k8s_hosts_free(h);
}

static void fallthrough_unsupported_passes_other_types_of_known_names(void **state)
{
	SET_FALL(".");
	conf.fall_unsupported = true;
	k8s_hosts_t *h = table_of("10.0.0.1 one\n", NULL);
	assert_answer(h, "one.", KNOT_RRTYPE_TXT, K8S_HOSTS_PASS, "");
	assert_answer(h, "one.", KNOT_RRTYPE_HTTPS, K8S_HOSTS_PASS, "");
	// A and AAAA are supported: NODATA stays.
	assert_answer(h, "one.", KNOT_RRTYPE_AAAA, K8S_HOSTS_NODATA, "");
	k8s_hosts_free(h);
}

/* Caps and odd input */

static void a_name_keeps_at_most_its_cap_of_addresses(void **state)
{
	size_t n = K8S_HOSTS_PER_NAME_MAX + 5;
	char *text = malloc(n * 32);
	assert_non_null(text);
	char *p = text;
	for (size_t i = 0; i < n; i++) {
		p += sprintf(p, "10.%zu.%zu.1 big\n", i / 256, i % 256);
	}
	k8s_hosts_stats_t st;
	k8s_hosts_t *h = table_of(text, &st);
	assert_int_equal(st.capped, 5);
	assert_int_equal(k8s_hosts_addrs(h, (const knot_dname_t *)"\x03" "big", AF_INET)->count,
	                 K8S_HOSTS_PER_NAME_MAX);
	k8s_hosts_free(h);
	free(text);
}

static void any_bytes_read_without_harm(void **state)
{
	// NUL, high bytes, no final newline, a huge field.
	static const char odd[] = "10.0.0.1 a\0b ok \xff\xfe\n10.0.0.1\0 nul\n\n\n10.0.0.2 last";
	k8s_hosts_builder_t *b = k8s_hosts_builder_new(&conf);
	assert_int_equal(k8s_hosts_parse(b, odd, sizeof(odd) - 1), KNOT_EOK);
	char *huge = malloc(100000);
	memset(huge, 'x', 100000);
	assert_int_equal(k8s_hosts_parse(b, huge, 100000), KNOT_EOK);
	free(huge);
	k8s_hosts_t *h = k8s_hosts_build(b, NULL);
	assert_answer(h, "ok.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "ok. A 10.0.0.1");
	assert_answer(h, "last.", KNOT_RRTYPE_A, K8S_HOSTS_HIT, "last. A 10.0.0.2");
	assert_answer(h, "nul.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	k8s_hosts_free(h);

	h = table_of("", NULL);
	assert_int_equal(k8s_hosts_count(h), 0);
	assert_answer(h, "one.", KNOT_RRTYPE_A, K8S_HOSTS_SERVFAIL, "");
	k8s_hosts_free(h);
}

static void reverse_names_are_four_octets_or_thirty_two_nibbles(void **state)
{
	uint8_t bytes[16];
	knot_dname_t *name = knot_dname_from_str_alloc("4.3.2.1.in-addr.arpa.");
	assert_int_equal(k8s_hosts_reverse(name, bytes), AF_INET);
	assert_memory_equal(bytes, "\x01\x02\x03\x04", 4);
	free(name);
	const char *none[] = { "3.2.1.in-addr.arpa.", "5.4.3.2.1.in-addr.arpa.", "256.3.2.1.in-addr.arpa.",
	                       "4.3.2.1.in-addr.arpa.example.", "in-addr.arpa.", "x.3.2.1.in-addr.arpa.",
	                       "1.ip6.arpa.", "." };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		name = knot_dname_from_str_alloc(none[i]);
		assert_int_equal(k8s_hosts_reverse(name, bytes), 0);
		free(name);
	}
	name = knot_dname_from_str_alloc("b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa.");
	assert_int_equal(k8s_hosts_reverse(name, bytes), AF_INET6);
	uint8_t want[16];
	inet_pton(AF_INET6, "4321:0:1:2:3:4:567:89ab", want);
	assert_memory_equal(bytes, want, 16);
	free(name);
}

static int teardown(void **state)
{
	set_names(zones, &conf.zone_count, NULL);
	set_names(fall, &conf.fall_count, NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(a_line_gives_each_of_its_names_the_address, reset),
		cmocka_unit_test_setup(names_are_matched_case_insensitively, reset),
		cmocka_unit_test_setup(comments_blank_lines_and_any_whitespace_are_skipped, reset),
		cmocka_unit_test_setup(a_line_without_an_address_is_skipped_and_a_bad_name_alone, reset),
		cmocka_unit_test_setup(an_ipv6_zone_is_dropped_and_a_mapped_ipv4_is_ipv4, reset),
		cmocka_unit_test_setup(every_address_of_a_name_answers_once_in_file_order, reset),
		cmocka_unit_test_setup(inline_entries_follow_the_file, reset),
		cmocka_unit_test_setup(names_outside_the_zones_are_left_out, reset),
		cmocka_unit_test_setup(ptr_records_name_every_name_of_an_address, reset),
		cmocka_unit_test_setup(no_reverse_makes_no_ptr, reset),
		cmocka_unit_test_setup(the_ttl_is_every_records, reset),
		cmocka_unit_test_setup(a_wildcard_matches_one_label_below_and_an_exact_name_wins, reset),
		cmocka_unit_test_setup(other_types_of_a_known_name_are_nodata, reset),
		cmocka_unit_test_setup(an_unknown_name_is_servfail_without_fallthrough, reset),
		cmocka_unit_test_setup(fallthrough_passes_unknown_names_of_its_zones_on, reset),
		cmocka_unit_test_setup(fallthrough_unsupported_passes_other_types_of_known_names, reset),
		cmocka_unit_test_setup(a_name_keeps_at_most_its_cap_of_addresses, reset),
		cmocka_unit_test_setup(any_bytes_read_without_harm, reset),
		cmocka_unit_test_setup(reverse_names_are_four_octets_or_thirty_two_nibbles, reset),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
