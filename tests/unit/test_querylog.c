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
 * The query log (module/ops/querylog.c) against CoreDNS v1.15.0's log plugin: its rules
 * (plugin/log/setup.go), its replacer's placeholders and parse (plugin/pkg/replacer),
 * its classes (plugin/pkg/response: Typify, Classify, here module/lib/dnsanswer.c), and
 * the rate the module adds.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include <urcu/urcu-memb.h>

#include "lib/dnsanswer.h"
#include "ops/querylog.h"

/* A query: "WWW.Example.org. A IN", id 4242, RD, with an OPT (payload, DO) if asked. */
static size_t query_wire(uint8_t *out, uint16_t qtype, bool edns, uint16_t payload, bool dnssec)
{
	static const uint8_t name[] = "\x03WWW\x07""Example\x03org";
	uint8_t *p = out;
	const uint8_t head[12] = { 0x10, 0x92, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, edns ? 1 : 0 };
	memcpy(p, head, 12);
	p += 12;
	memcpy(p, name, sizeof(name));
	p += sizeof(name);
	*p++ = qtype >> 8;
	*p++ = qtype & 0xff;
	*p++ = 0;
	*p++ = 1;
	if (edns) {
		const uint8_t opt[11] = { 0, 0, 41, payload >> 8, payload & 0xff, 0, 0,
		                          dnssec ? 0x80 : 0, 0, 0, 0 };
		memcpy(p, opt, sizeof(opt));
		p += sizeof(opt);
	}
	return p - out;
}

/* An answer to it: \a flags (QR set), \a rcode, \a an answer records, \a ns authority of \a ns_type. */
static size_t answer_wire(uint8_t *out, uint8_t flags1, uint8_t flags2, uint8_t rcode,
                          unsigned an, unsigned ns, uint16_t ns_type)
{
	uint8_t q[512];
	size_t qlen = query_wire(q, 1, false, 0, false);
	memcpy(out, q, qlen);
	out[2] = flags1;
	out[3] = flags2 | rcode;
	out[7] = an;
	out[9] = ns;
	uint8_t *p = out + qlen;
	for (unsigned i = 0; i < an; i++) {
		const uint8_t rr[16] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 192, 0, 2, 7 };
		memcpy(p, rr, sizeof(rr));
		p += sizeof(rr);
	}
	for (unsigned i = 0; i < ns; i++) {
		// Owner: the root; rdata: two bytes (its content is not read).
		const uint8_t rr[13] = { 0, ns_type >> 8, ns_type & 0xff, 0, 1, 0, 0, 0, 30, 0, 2, 0, 0 };
		memcpy(p, rr, sizeof(rr));
		p += sizeof(rr);
	}
	return p - out;
}

static k8s_querylog_t *log_of(const char *const *args, size_t argc, const char *const *classes,
                              size_t class_count)
{
	k8s_querylog_t *ql = k8s_querylog_new(100, &(k8s_log_t){ 0 });
	assert_non_null(ql);
	char msg[128];
	assert_int_equal(k8s_querylog_line(ql, args, argc, classes, class_count, msg, sizeof(msg)),
	                 KNOT_EOK);
	return ql;
}

static struct sockaddr_storage v4(const char *ip, unsigned port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	inet_pton(AF_INET, ip, &in->sin_addr);
	return ss;
}

static struct sockaddr_storage v6(const char *ip, unsigned port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *in = (struct sockaddr_in6 *)&ss;
	in->sin6_family = AF_INET6;
	in->sin6_port = htons(port);
	inet_pton(AF_INET6, ip, &in->sin6_addr);
	return ss;
}

static void the_common_format_writes_what_coredns_writes(void **state)
{
	(void)state;
	k8s_querylog_t *ql = log_of(NULL, 0, NULL, 0);
	uint8_t q[512], a[512];
	size_t qlen = query_wire(q, 1, true, 1232, true);
	size_t alen = answer_wire(a, 0x81, 0x80, 0, 1, 0, 0);
	struct sockaddr_storage remote = v4("10.244.1.7", 40123);
	k8s_querylog_entry_t e = {
		.query = q, .query_size = qlen, .answer = a, .answer_size = alen,
		.remote = &remote, .duration_ns = 123456,
	};
	char line[512];
	char expect[512];
	snprintf(expect, sizeof(expect), "10.244.1.7:40123 - 4242 \"A IN www.example.org. udp %zu "
	         "true 1232\" NOERROR qr,rd,ra %zu 0.000123456s", qlen, alen);
	assert_true(k8s_querylog_format(ql, &e, line, sizeof(line)) > 0);
	assert_string_equal(line, expect);
	k8s_querylog_free(ql);
}

static void an_ipv6_client_is_in_brackets_and_tcp_asks_65535(void **state)
{
	(void)state;
	k8s_querylog_t *ql = log_of((const char *const[]){ ".", "{remote} {port} {proto} {>bufsize} {>do} {>opcode}" },
	                            2, NULL, 0);
	uint8_t q[512], a[512];
	size_t qlen = query_wire(q, 28, false, 0, false);
	size_t alen = answer_wire(a, 0x81, 0x80, 0, 0, 0, 0);
	struct sockaddr_storage remote = v6("fd00::7", 53000);
	k8s_querylog_entry_t e = {
		.query = q, .query_size = qlen, .answer = a, .answer_size = alen,
		.remote = &remote, .tcp = true,
	};
	char line[256];
	k8s_querylog_format(ql, &e, line, sizeof(line));
	assert_string_equal(line, "[fd00::7] 53000 tcp 65535 false 0");
	// Over UDP without EDNS: 512; with a payload under 512: 512 too.
	e.tcp = false;
	k8s_querylog_format(ql, &e, line, sizeof(line));
	assert_string_equal(line, "[fd00::7] 53000 udp 512 false 0");
	qlen = query_wire(q, 28, true, 300, false);
	e.query_size = qlen;
	k8s_querylog_format(ql, &e, line, sizeof(line));
	assert_string_equal(line, "[fd00::7] 53000 udp 512 false 0");
	k8s_querylog_free(ql);
}

static void a_format_is_parsed_as_coredns_replacer_parses_it(void **state)
{
	(void)state;
	// Unknown braces stay text up to their `}`; {/label} metadata is "-"; {common} expands.
	k8s_querylog_t *ql = log_of((const char *const[]){
		".", "x{a}{type}}{ {/meta} {>id {name} {common}" }, 2, NULL, 0);
	uint8_t q[512], a[512];
	size_t qlen = query_wire(q, 1, false, 0, false);
	size_t alen = answer_wire(a, 0x81, 0x00, 3, 0, 1, KNOT_RRTYPE_SOA);
	struct sockaddr_storage remote = v4("192.0.2.1", 53);
	k8s_querylog_entry_t e = {
		.query = q, .query_size = qlen, .answer = a, .answer_size = alen,
		.remote = &remote, .duration_ns = 2000000000,
	};
	char line[512], expect[512];
	snprintf(expect, sizeof(expect), "x{a}A}{ - {>id www.example.org. 192.0.2.1:53 - 4242 "
	         "\"A IN www.example.org. udp %zu false 512\" NXDOMAIN qr,rd %zu 2s", qlen, alen);
	k8s_querylog_format(ql, &e, line, sizeof(line));
	assert_string_equal(line, expect);
	k8s_querylog_free(ql);
}

static void the_first_rule_whose_name_holds_the_query_decides_with_its_classes(void **state)
{
	(void)state;
	k8s_querylog_t *ql = k8s_querylog_new(100, &(k8s_log_t){ 0 });
	char msg[128];
	// log example.org { class denial }, then log . {rcode} { class all }.
	assert_int_equal(k8s_querylog_line(ql, (const char *const[]){ "Example.ORG" }, 1,
	                                   (const char *const[]){ "denial" }, 1, msg, sizeof(msg)),
	                 KNOT_EOK);
	assert_int_equal(k8s_querylog_line(ql, (const char *const[]){ ".", "{rcode}" }, 2, NULL, 0,
	                                   msg, sizeof(msg)), KNOT_EOK);
	uint8_t q[512], a[512];
	size_t qlen = query_wire(q, 1, false, 0, false);
	size_t alen = answer_wire(a, 0x81, 0x80, 0, 1, 0, 0);
	k8s_querylog_entry_t e = { .query = q, .query_size = qlen, .answer = a, .answer_size = alen };
	char line[256];
	// A success under example.org: its rule does not write it, and no later rule does.
	assert_int_equal(k8s_querylog_format(ql, &e, line, sizeof(line)), 0);
	alen = answer_wire(a, 0x81, 0x80, 3, 0, 1, KNOT_RRTYPE_SOA);
	e.answer_size = alen;
	assert_true(k8s_querylog_format(ql, &e, line, sizeof(line)) > 0);
	k8s_querylog_free(ql);
}

static void refused_values_say_why(void **state)
{
	(void)state;
	k8s_querylog_t *ql = k8s_querylog_new(100, &(k8s_log_t){ 0 });
	char msg[128];
	assert_int_equal(k8s_querylog_line(ql, NULL, 0, (const char *const[]){ "warning" }, 1, msg,
	                                   sizeof(msg)), KNOT_EINVAL);
	assert_non_null(strstr(msg, "no class"));
	char long_format[K8S_QUERYLOG_FORMAT_MAX + 8];
	memset(long_format, 'x', sizeof(long_format) - 1);
	long_format[0] = '{';
	long_format[sizeof(long_format) - 1] = '\0';
	assert_int_equal(k8s_querylog_line(ql, (const char *const[]){ ".", long_format }, 2, NULL, 0,
	                                   msg, sizeof(msg)), KNOT_EINVAL);
	// {common} grows past the cap: refused, not cut.
	char grows[K8S_QUERYLOG_FORMAT_MAX - 20];
	memset(grows, 'y', sizeof(grows) - 1);
	memcpy(grows, "{common}", 8);
	grows[sizeof(grows) - 1] = '\0';
	assert_int_equal(k8s_querylog_line(ql, (const char *const[]){ ".", grows }, 2, NULL, 0,
	                                   msg, sizeof(msg)), KNOT_EINVAL);
	for (int i = 0; i < K8S_QUERYLOG_RULES_MAX; i++) {
		assert_int_equal(k8s_querylog_line(ql, (const char *const[]){ "a.example" }, 1, NULL, 0,
		                                   msg, sizeof(msg)), KNOT_EOK);
	}
	assert_int_equal(k8s_querylog_line(ql, (const char *const[]){ "b.example" }, 1, NULL, 0,
	                                   msg, sizeof(msg)), KNOT_EINVAL);
	k8s_querylog_free(ql);
}

static void coredns_classes_of_responses(void **state)
{
	(void)state;
	uint8_t a[512];
	size_t len = answer_wire(a, 0x81, 0x80, 0, 1, 0, 0);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_NOERROR);
	len = answer_wire(a, 0x81, 0x80, 0, 0, 1, KNOT_RRTYPE_SOA);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_NODATA);
	len = answer_wire(a, 0x81, 0x80, 0, 0, 2, KNOT_RRTYPE_NS);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_DELEGATION);
	len = answer_wire(a, 0x81, 0x80, 3, 0, 1, KNOT_RRTYPE_SOA);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_NXDOMAIN);
	len = answer_wire(a, 0x81, 0x80, 3, 1, 0, 0);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_OTHER);
	len = answer_wire(a, 0x81, 0x80, 2, 0, 0, 0);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_SERVFAIL);
	len = answer_wire(a, 0x81, 0x80, 4, 0, 0, 0);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_SERVFAIL);
	len = answer_wire(a, 0x81, 0x80, 5, 0, 0, 0);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_OTHER);
	len = answer_wire(a, 0x81, 0x80, 0, 0, 0, 0);
	assert_int_equal(k8s_response_type(a, len), K8S_RESPONSE_NOERROR);
	assert_int_equal(k8s_response_class(K8S_RESPONSE_NODATA), K8S_RESPONSE_CLASS_DENIAL);
	assert_int_equal(k8s_response_class(K8S_RESPONSE_DELEGATION), K8S_RESPONSE_CLASS_SUCCESS);
	assert_int_equal(k8s_response_class(K8S_RESPONSE_SERVFAIL), K8S_RESPONSE_CLASS_ERROR);
	// Cut short: typed by the header and what is there, never read past the end.
	assert_int_equal(k8s_response_type(a, 5), K8S_RESPONSE_OTHER);
	len = answer_wire(a, 0x81, 0x80, 0, 0, 1, KNOT_RRTYPE_SOA);
	assert_int_equal(k8s_response_type(a, len - 3), K8S_RESPONSE_NOERROR);
}

static unsigned lines_seen;

static void count_line(void *ctx, int priority, const char *msg)
{
	(void)ctx;
	(void)priority;
	(void)msg;
	lines_seen++;
}

static void past_the_rate_lines_are_counted_not_written(void **state)
{
	(void)state;
	k8s_querylog_t *ql = k8s_querylog_new(5, &(k8s_log_t){ .fn = count_line });
	char msg[128];
	assert_int_equal(k8s_querylog_line(ql, NULL, 0, NULL, 0, msg, sizeof(msg)), KNOT_EOK);
	uint8_t q[512], a[512];
	size_t qlen = query_wire(q, 1, false, 0, false);
	size_t alen = answer_wire(a, 0x81, 0x80, 0, 1, 0, 0);
	k8s_querylog_entry_t e = { .query = q, .query_size = qlen, .answer = a, .answer_size = alen };
	assert_false(k8s_querylog_on());
	k8s_querylog_answer(&e);
	assert_int_equal(lines_seen, 0);
	k8s_querylog_publish(ql);
	assert_true(k8s_querylog_on());
	lines_seen = 0;
	for (int i = 0; i < 50; i++) {
		k8s_querylog_answer(&e);
	}
	// Five, and at most one more in the case the second turned over between them.
	assert_in_range(lines_seen, 5, 11);
	k8s_querylog_unpublish(ql);
	assert_false(k8s_querylog_on());
	k8s_querylog_free(ql);
}

static void a_reload_publishes_the_new_log_and_its_end_the_one_left(void **state)
{
	(void)state;
	k8s_querylog_t *old = k8s_querylog_new(5, &(k8s_log_t){ 0 });
	k8s_querylog_t *new = k8s_querylog_new(5, &(k8s_log_t){ 0 });
	k8s_querylog_publish(old);
	k8s_querylog_publish(new);
	assert_ptr_equal(k8s_querylog_current, new);
	k8s_querylog_unpublish(old);  // The old instance unloads after the new one loads.
	assert_ptr_equal(k8s_querylog_current, new);
	k8s_querylog_unpublish(new);
	assert_null(k8s_querylog_current);
	k8s_querylog_free(old);
	k8s_querylog_free(new);
}

int main(void)
{
	urcu_memb_register_thread();  // As knotd's workers: the log is read under RCU.
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_common_format_writes_what_coredns_writes),
		cmocka_unit_test(an_ipv6_client_is_in_brackets_and_tcp_asks_65535),
		cmocka_unit_test(a_format_is_parsed_as_coredns_replacer_parses_it),
		cmocka_unit_test(the_first_rule_whose_name_holds_the_query_decides_with_its_classes),
		cmocka_unit_test(refused_values_say_why),
		cmocka_unit_test(coredns_classes_of_responses),
		cmocka_unit_test(past_the_rate_lines_are_counted_not_written),
		cmocka_unit_test(a_reload_publishes_the_new_log_and_its_end_the_one_left),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
