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
 * CoreDNS's template plugin as module/rewrite/ reads, matches and renders it: one case
 * per sentence of plugin/template's README (v1.15.0) and per behaviour of its code that
 * Corefiles rely on; the Go template subset and records read as miekg/dns reads them.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arena.h"
#include "rewrite/dnstext.h"
#include "rewrite/template.h"

static k8s_regex_scratch_t *scratch;
static k8s_template_match_t m;
static k8s_template_rr_t rr;

static k8s_templates_t *templates_of(const char *const *values, size_t count)
{
	char err[512] = "";
	k8s_templates_t *t = k8s_templates_new(values, count, NULL, 0, err, sizeof(err));
	if (t == NULL) {
		fail_msg("refused: %s", err);
	}
	return t;
}

static k8s_template_result_t match(const k8s_templates_t *t, const char *name, uint16_t qtype)
{
	static uint8_t wire[256];
	assert_true(k8s_name_from_text(name, strlen(name), wire) > 0);
	m.remote = "192.0.2.7";
	return k8s_templates_match(t, scratch, name, strlen(name), wire, qtype, KNOT_CLASS_IN, &m);
}

/*! \brief Record \a i of \a section as "owner ttl class type rdata-length". */
static const char *rendered(k8s_template_section_t section, size_t i)
{
	static char out[2048];
	int ret = k8s_template_rr(&m, section, i, &mm, NULL, NULL, &rr);
	if (ret != KNOT_EOK) {
		snprintf(out, sizeof(out), "error %d", ret);
		return out;
	}
	char owner[K8S_NAME_TEXT_MAX];
	k8s_name_to_text(rr.owner, owner, sizeof(owner));
	snprintf(out, sizeof(out), "%s %u %u %u %u", owner, rr.ttl, rr.rclass, rr.type, rr.rdlen);
	return out;
}

static void refused(const char *value, const char *why)
{
	char err[512] = "";
	k8s_templates_t *t = k8s_templates_new(&value, 1, NULL, 0, err, sizeof(err));
	if (t != NULL) {
		k8s_templates_free(t);
		fail_msg("accepted: %s", value);
	}
	if (strstr(err, why) == NULL) {
		fail_msg("'%s' refused as '%s', not '%s'", value, err, why);
	}
}

static void a_static_answer_for_a_zone(void **state)
{
	const char *v = "IN A host.k3d.internal { answer \"{{ .Name }} 60 IN A 172.18.0.1\" }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "host.k3d.internal.", KNOT_RRTYPE_A), K8S_TEMPLATE_MATCH);
	assert_int_equal(k8s_template_count(&m, K8S_TEMPLATE_ANSWER), 1);
	assert_string_equal(rendered(K8S_TEMPLATE_ANSWER, 0), "host.k3d.internal. 60 1 1 4");
	assert_memory_equal(rr.rdata, "\xac\x12\x00\x01", 4);
	// Another type of the zone, or another zone: not this template's (no SERVFAIL).
	assert_int_equal(match(t, "host.k3d.internal.", KNOT_RRTYPE_AAAA), K8S_TEMPLATE_NONE);
	assert_int_equal(match(t, "other.example.", KNOT_RRTYPE_A), K8S_TEMPLATE_NONE);
	// A query of type ANY matches any template type.
	assert_int_equal(match(t, "x.host.k3d.internal.", KNOT_RRTYPE_ANY), K8S_TEMPLATE_MATCH);
	assert_int_equal(m.qtype, KNOT_RRTYPE_A);
	k8s_templates_free(t);
}

static void noerror_for_aaaa_without_records(void **state)
{
	const char *v = "ANY AAAA { rcode NOERROR }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_AAAA),
	                 K8S_TEMPLATE_MATCH);
	assert_int_equal(k8s_template_rcode(&m), KNOT_RCODE_NOERROR);
	assert_int_equal(k8s_template_count(&m, K8S_TEMPLATE_ANSWER), 0);
	assert_int_equal(match(t, "a.example.", KNOT_RRTYPE_A), K8S_TEMPLATE_NONE);
	k8s_templates_free(t);
}

static void a_zone_match_without_a_regex_match_is_servfail_unless_it_falls_through(void **state)
{
	const char *v[] = {
		"IN A example { match ^ip-(?P<a>[0-9]+)\\.example\\.$ ; answer \"{{ .Name }} 60 IN A 10.0.0.{{ .Group.a }}\" }",
		"IN A other { match ^x\\.other\\.$ ; fallthrough }",
		"IN A other { answer \"{{ .Name }} 5 A 192.0.2.1\" }",
	};
	k8s_templates_t *t = templates_of(v, 3);
	assert_int_equal(match(t, "ip-7.example.", KNOT_RRTYPE_A), K8S_TEMPLATE_MATCH);
	assert_string_equal(rendered(K8S_TEMPLATE_ANSWER, 0), "ip-7.example. 60 1 1 4");
	assert_memory_equal(rr.rdata, "\x0a\x00\x00\x07", 4);
	assert_int_equal(match(t, "foo.example.", KNOT_RRTYPE_A), K8S_TEMPLATE_SERVFAIL);
	// Falls through to the next template, which matches every name (".*").
	assert_int_equal(match(t, "y.other.", KNOT_RRTYPE_A), K8S_TEMPLATE_MATCH);
	assert_string_equal(rendered(K8S_TEMPLATE_ANSWER, 0), "y.other. 5 1 1 4");
	k8s_templates_free(t);
}

static void fallthrough_zones_limit_the_fall(void **state)
{
	const char *v = "IN PTR arpa { match ^none$ ; fallthrough in-addr.arpa }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "1.2.in-addr.arpa.", KNOT_RRTYPE_PTR), K8S_TEMPLATE_NONE);
	assert_int_equal(match(t, "1.ip6.arpa.", KNOT_RRTYPE_PTR), K8S_TEMPLATE_SERVFAIL);
	k8s_templates_free(t);
}

static void the_longest_zone_and_the_go_template_fields(void **state)
{
	const char *v = "IN TXT example a.example { match ^(?P<x>[a-z]+)\\.a\\.example\\.$ ; "
	                "answer `{{ .Name }} 30 TXT \"{{ .Zone }}\" \"{{ .Group.x }}\" "
	                "\"{{ index .Match 1 }}\" \"{{ index .Group \"x\" }}\" \"{{ .Group.nope }}\" "
	                "\"{{ .Class }}/{{ .Type }}\" \"{{ .Remote }}\" \"{{- .Name -}}\"` }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "foo.a.example.", KNOT_RRTYPE_TXT), K8S_TEMPLATE_MATCH);
	assert_int_equal(k8s_template_rr(&m, K8S_TEMPLATE_ANSWER, 0, &mm, NULL, NULL, &rr), KNOT_EOK);
	const char expect[] = "\x0a""a.example."  "\x03""foo" "\x03""foo" "\x03""foo"
	                      "\x0a""<no value>" "\x06""IN/TXT" "\x09""192.0.2.7" "\x0e""foo.a.example.";
	assert_int_equal(rr.rdlen, sizeof(expect) - 1);
	assert_memory_equal(rr.rdata, expect, sizeof(expect) - 1);
	k8s_templates_free(t);
}

static void an_index_past_the_groups_is_servfail_at_the_query(void **state)
{
	const char *v = "IN A e { answer \"{{ .Name }} 60 A 10.0.0.{{ index .Match 2 }}\" }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "x.e.", KNOT_RRTYPE_A), K8S_TEMPLATE_MATCH);
	assert_int_not_equal(k8s_template_rr(&m, K8S_TEMPLATE_ANSWER, 0, &mm, NULL, NULL, &rr),
	                     KNOT_EOK);
	k8s_templates_free(t);
}

static void records_read_as_miekg_new_rr_reads_them(void **state)
{
	const char *v = "ANY ANY invalid { rcode NXDOMAIN ; "
	                "authority \"invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)\" ; "
	                "answer \"rel 1h CNAME google.com\" ; "
	                "additional \"mail.invalid. IN 60 MX 10 mx\" \"x.invalid. SRV 1 2 3 t.\" "
	                "\"v6.invalid. 5 AAAA 2001:db8::1 ; a comment\" }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "foo.invalid.", KNOT_RRTYPE_MX), K8S_TEMPLATE_MATCH);
	assert_int_equal(k8s_template_rcode(&m), KNOT_RCODE_NXDOMAIN);
	// 3600 s without a TTL; a relative name is below the root.
	assert_string_equal(rendered(K8S_TEMPLATE_ANSWER, 0), "rel. 3600 1 5 12");
	assert_memory_equal(rr.rdata, "\x06google\x03""com\x00", 12);
	assert_string_equal(rendered(K8S_TEMPLATE_AUTHORITY, 0), "invalid. 60 1 6 52");
	assert_string_equal(rendered(K8S_TEMPLATE_ADDITIONAL, 0), "mail.invalid. 60 1 15 6");
	assert_string_equal(rendered(K8S_TEMPLATE_ADDITIONAL, 1), "x.invalid. 3600 1 33 9");
	assert_string_equal(rendered(K8S_TEMPLATE_ADDITIONAL, 2), "v6.invalid. 5 1 28 16");
	k8s_templates_free(t);
}

static void a_record_that_does_not_read_is_an_error(void **state)
{
	const char *v = "IN A e { answer \"{{ .Name }} 60 IN A 10.0.0.{{ .Name }}\" }";
	k8s_templates_t *t = templates_of(&v, 1);
	assert_int_equal(match(t, "x.e.", KNOT_RRTYPE_A), K8S_TEMPLATE_MATCH);
	assert_int_not_equal(k8s_template_rr(&m, K8S_TEMPLATE_ANSWER, 0, &mm, NULL, NULL, &rr),
	                     KNOT_EOK);
	k8s_templates_free(t);
}

static void what_is_not_read_alike_is_refused_with_the_reason(void **state)
{
	refused("in A e", "invalid query class");
	refused("IN a e", "invalid RR type");
	refused("IN", "a template is CLASS TYPE");
	refused("IN A e { match (a }", "could not parse regex");
	refused("IN A e { answer \"{{ .Message }}\" }", "not supported");
	refused("IN A e { answer \"{{ parseInt .Group.a 16 8 }}\" }", "not supported");
	refused("IN A e { answer \"{{ .Group.1 }}\" }", "not supported");
	refused("IN A e { answer \"{{ .Name \" }", "unclosed action");
	refused("IN A e { answer \"{{ .Name }} 60 IN HINFO a b\" }", "not supported");
	refused("IN A e { rcode nxdomain }", "unknown rcode");
	refused("IN A e { var x 1 }", "var is not supported");
	refused("IN A e { ederror 21 }", "ederror is not supported");
	refused("IN A e { bogus }", "unknown template option");
	refused("IN A e { answer }", "needs a record");
	refused("IN A e { answer \"x\"", "not closed");
}

int main(void)
{
	scratch = k8s_regex_scratch_new();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(a_static_answer_for_a_zone, arena_free),
		cmocka_unit_test_teardown(noerror_for_aaaa_without_records, arena_free),
		cmocka_unit_test_teardown(a_zone_match_without_a_regex_match_is_servfail_unless_it_falls_through, arena_free),
		cmocka_unit_test_teardown(fallthrough_zones_limit_the_fall, arena_free),
		cmocka_unit_test_teardown(the_longest_zone_and_the_go_template_fields, arena_free),
		cmocka_unit_test_teardown(an_index_past_the_groups_is_servfail_at_the_query, arena_free),
		cmocka_unit_test_teardown(records_read_as_miekg_new_rr_reads_them, arena_free),
		cmocka_unit_test_teardown(a_record_that_does_not_read_is_an_error, arena_free),
		cmocka_unit_test_teardown(what_is_not_read_alike_is_refused_with_the_reason, arena_free),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	k8s_regex_scratch_free(scratch);
	return failed;
}
