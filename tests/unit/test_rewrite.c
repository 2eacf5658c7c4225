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
 * CoreDNS's rewrite plugin as module/rewrite/ reads and applies it: one case per
 * sentence of plugin/rewrite's README and per behaviour of its code (v1.15.0) that
 * Corefiles rely on; the regex subset (RE2 read alike by PCRE2) and names as
 * miekg/dns writes them.
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
#include "rewrite/blocks.h"
#include "rewrite/dnstext.h"
#include "rewrite/regex.h"
#include "rewrite/rewrite.h"
#include "rewrite/template.h"

static k8s_regex_scratch_t *scratch;
static k8s_rewrite_req_t req;

static k8s_rewrite_t *rules_of(const char *const *values, size_t count)
{
	char err[512] = "";
	k8s_rewrite_t *rw = k8s_rewrite_new(values, count, err, sizeof(err));
	if (rw == NULL) {
		fail_msg("refused: %s", err);
	}
	return rw;
}

/*! \brief The name a query ends with after \a rule ("" when none applied, "!" invalid). */
static const char *rewritten(const char *rule, const char *name)
{
	k8s_rewrite_t *rw = rules_of(&rule, 1);
	static char out[K8S_NAME_TEXT_MAX];
	bool any = k8s_rewrite_request(rw, scratch, &mm, name, strlen(name), 1, 1, &req);
	snprintf(out, sizeof(out), "%s", !any ? "" : req.invalid ? "!" : req.name);
	k8s_rewrite_free(rw);
	return out;
}

static void refused(const char *rule, const char *why)
{
	char err[512] = "";
	k8s_rewrite_t *rw = k8s_rewrite_new(&rule, 1, err, sizeof(err));
	if (rw != NULL) {
		k8s_rewrite_free(rw);
		fail_msg("accepted: %s", rule);
	}
	if (strstr(err, why) == NULL) {
		fail_msg("'%s' refused as '%s', not '%s'", rule, err, why);
	}
}

/* Names. */

static void names_are_written_as_miekg_writes_them(void **state)
{
	char text[K8S_NAME_TEXT_MAX];
	assert_int_equal(k8s_name_to_text((const uint8_t *)"\x03""WwW\x07""example\x00", text,
	                                  sizeof(text)), 12);
	assert_string_equal(text, "www.example.");
	k8s_name_to_text((const uint8_t *)"\x04""a.b@\x01\x01\x00", text, sizeof(text));
	assert_string_equal(text, "a\\.b\\@.\\001.");
	k8s_name_to_text((const uint8_t *)"", text, sizeof(text));
	assert_string_equal(text, ".");
}

static void a_text_is_a_name_only_as_dns_is_domain_name_says(void **state)
{
	uint8_t wire[256];
	assert_int_equal(k8s_name_from_text("Web.Example.", 12, wire), 13);
	assert_memory_equal(wire, "\x03""web\x07""example", 13);
	assert_int_equal(k8s_name_from_text("web.example", 11, wire), 13);
	assert_int_equal(k8s_name_from_text("a\\.b.", 5, wire), 5);
	assert_int_equal(k8s_name_from_text("\\065.", 5, wire), 3);
	assert_int_equal(wire[1], 'a');
	assert_int_equal(k8s_name_from_text("a..b.", 5, wire), 0);   // empty label
	assert_int_equal(k8s_name_from_text(".a.", 3, wire), 0);     // leading dot
	assert_int_equal(k8s_name_from_text("a\\", 2, wire), 0);     // trailing escape
	char label[80];
	memset(label, 'a', 64);
	strcpy(label + 64, ".");
	assert_int_equal(k8s_name_from_text(label, 65, wire), 0);    // 64-octet label
	char long_name[300] = "";
	for (int i = 0; i < 64; i++) {
		strcat(long_name, "abc.");
	}
	assert_int_equal(k8s_name_from_text(long_name, strlen(long_name), wire), 0);  // 257 octets
}

/* Regexes. */

static k8s_regex_t *regex(const char *pattern)
{
	char err[256] = "";
	k8s_regex_t *re = k8s_regex_new(pattern, err, sizeof(err));
	if (re == NULL) {
		fail_msg("regex %s refused: %s", pattern, err);
	}
	return re;
}

static void regex_refused(const char *pattern)
{
	char err[256];
	k8s_regex_t *re = k8s_regex_new(pattern, err, sizeof(err));
	if (re != NULL) {
		k8s_regex_free(re);
		fail_msg("regex %s accepted", pattern);
	}
}

static void re2_patterns_of_real_corefiles_compile(void **state)
{
	const char *ok[] = {
		"(.*)\\.example\\.com", "^(?P<a>[0-9]*)[.](?P<b>[0-9]*)\\.$", "(?<x>a)",
		"(?i)FOO", "[[:alpha:]_-]+", "\\d{1,3}", "a{2,}", "x*?", "[]a]", "\\Qa.b\\E",
		"(?:a|b)+", "\\x41\\x{42}", "^ip-10-(?P<b>[0-9]*)\\.$", ".*", "",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		k8s_regex_free(regex(ok[i]));
	}
}

static void what_re2_and_pcre2_read_differently_is_refused(void **state)
{
	const char *bad[] = {
		"(a)\\1", "a(?=b)", "a(?!b)", "(?<=a)b", "(?>a)", "a*+", "a++", "a**", "\\v",
		"\\pL", "\\Z", "a{,5}", "a{2", "x{1001}", "(*UTF)a", "(?x)a b", "(?#c)",
		"(?'n'a)", "(?P=n)", "[[.a.]]", "\xc3\xa9", "(?1)", "\\e", "\\h", "\\K", "(a",
		"a)", "[a", "^*", "(?P<1a>x)",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		regex_refused(bad[i]);
	}
}

static void matching_is_leftmost_first_with_groups_as_go(void **state)
{
	k8s_regex_t *re = regex("(a|ab)(c|bcd)(d*)");
	k8s_regex_span_t sp[K8S_REGEX_GROUPS_MAX + 1];
	assert_int_equal(k8s_regex_match(re, scratch, "abcd", 4, sp), 1);
	// Go (and Perl): a, then bcd; POSIX would take ab, cd.
	assert_int_equal(sp[1].end - sp[1].start, 1);
	assert_int_equal(sp[2].end - sp[2].start, 3);
	k8s_regex_free(re);
	re = regex("(x)?y");
	assert_int_equal(k8s_regex_match(re, scratch, "y", 1, sp), 1);
	assert_int_equal(sp[1].start, -1);  // A group that did not take part.
	k8s_regex_free(re);
	re = regex("a$");
	assert_int_equal(k8s_regex_match(re, scratch, "a\n", 2, NULL), 0);  // $ is the end only.
	k8s_regex_free(re);
}

static void a_catastrophic_pattern_is_bounded(void **state)
{
	k8s_regex_t *re = regex("^(a|aa)+$");
	char subject[300];
	memset(subject, 'a', 250);
	subject[250] = 'b';
	// Exponential in a backtracking engine: the limit ends it, no match.
	assert_true(k8s_regex_match(re, scratch, subject, 251, NULL) <= 0);
	k8s_regex_free(re);
}

/* Name rules. */

static void exact_is_the_default_and_matches_the_whole_name(void **state)
{
	assert_string_equal(rewritten("name foo.example.com bar.svc.cluster.local",
	                              "foo.example.com."), "bar.svc.cluster.local.");
	assert_string_equal(rewritten("name exact FOO.example.com. bar.", "foo.example.com."), "bar.");
	assert_string_equal(rewritten("name foo.example.com bar.", "x.foo.example.com."), "");
}

static void prefix_suffix_and_substring_replace_their_part(void **state)
{
	assert_string_equal(rewritten("name prefix api. kubernetes.default.svc.", "api.cluster.local."),
	                    "kubernetes.default.svc.cluster.local.");
	assert_string_equal(rewritten("name suffix .schmoogle.com. .google.com.", "www.schmoogle.com."),
	                    "www.google.com.");
	assert_string_equal(rewritten("name substring service.us-west-1.example.org "
	                              "service.us-west-1.consul", "ftp.service.us-west-1.example.org."),
	                    "ftp.service.us-west-1.consul.");
	// CoreDNS normalizes FROM and TO as names: "kube" is "kube.".
	assert_string_equal(rewritten("name substring kube svc", "a.kube.local."), "a.svc.local.");
	assert_string_equal(rewritten("name substring kube svc", "kubernetes.local."), "");
}

static void regex_groups_fill_the_replacement(void **state)
{
	assert_string_equal(rewritten("name regex (.*)-(us-west-1)\\.example\\.org "
	                              "{1}.service.{2}.consul", "ftp-us-west-1.example.org."),
	                    "ftp.service.us-west-1.consul.");
	// A group that did not match is empty; {0} is the whole match.
	assert_string_equal(rewritten("name regex ^(x)?([a-z]+)\\.e\\.$ {1}{2}.f", "ab.e."), "ab.f.");
	assert_string_equal(rewritten("name regex ^(x)?[a-z]+\\.e\\.$ {0}x", "ab.e."), "ab.e.x.");
	assert_false(req.invalid);
}

static void a_rewritten_name_that_is_none_is_servfail(void **state)
{
	assert_string_equal(rewritten("name regex ^raw\\.(.*) {1}", "raw.a.b."), "!");
}

static void stop_is_the_default_and_continue_goes_on(void **state)
{
	const char *rules[] = {
		"continue name regex ^legacy-(.*)\\.apps\\. {1}.apps.",
		"name suffix .apps. .shop.svc.cluster.local. answer auto",
		"name suffix .local. .other.",
	};
	k8s_rewrite_t *rw = rules_of(rules, 3);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "legacy-web.apps.", 16, 1, 1, &req));
	// The second rule stops: the third never sees the name.
	assert_string_equal(req.name, "web.shop.svc.cluster.local.");
	char out[K8S_NAME_TEXT_MAX];
	size_t len = k8s_rewrite_owner(&req, scratch, req.name, req.name_len, out, sizeof(out));
	// The suffix rule's auto maps back to web.apps.; the regex rule has no answer option.
	assert_string_equal(out, "web.apps.");
	assert_int_equal(len, 9);
	k8s_rewrite_free(rw);
}

static void exact_answers_map_back_always(void **state)
{
	const char *rule = "name exact web.example.com. web.shop.svc.cluster.local.";
	k8s_rewrite_t *rw = rules_of(&rule, 1);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "web.example.com.", 16, 1, 1, &req));
	char out[K8S_NAME_TEXT_MAX];
	k8s_rewrite_owner(&req, scratch, "web.shop.svc.cluster.local.", 27, out, sizeof(out));
	assert_string_equal(out, "web.example.com.");
	// A name below the rewritten one too (remapStringRewriter), a value as well.
	k8s_rewrite_value(&req, scratch, "h0.web.shop.svc.cluster.local.", 30, out, sizeof(out));
	assert_string_equal(out, "h0.web.example.com.");
	k8s_rewrite_owner(&req, scratch, "other.", 6, out, sizeof(out));
	assert_string_equal(out, "other.");
	k8s_rewrite_free(rw);
}

static void answer_name_maps_owners_not_values(void **state)
{
	const char *rule = "stop { name regex (.*)\\.corp\\.example\\. {1}.shop.svc.cluster.local. ; "
	                   "answer name (.*)\\.shop\\.svc\\.cluster\\.local\\. {1}.corp.example. }";
	k8s_rewrite_t *rw = rules_of(&rule, 1);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "web.corp.example.", 17, 1, 1, &req));
	assert_string_equal(req.name, "web.shop.svc.cluster.local.");
	char out[K8S_NAME_TEXT_MAX];
	k8s_rewrite_owner(&req, scratch, req.name, req.name_len, out, sizeof(out));
	assert_string_equal(out, "web.corp.example.");
	k8s_rewrite_value(&req, scratch, req.name, req.name_len, out, sizeof(out));
	assert_string_equal(out, "web.shop.svc.cluster.local.");
	k8s_rewrite_free(rw);
}

static void without_an_answer_option_the_owner_is_the_rewritten_name(void **state)
{
	const char *rule = "name regex (.*)\\.bare\\. {1}.svc.";
	k8s_rewrite_t *rw = rules_of(&rule, 1);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "a.bare.", 7, 1, 1, &req));
	char out[K8S_NAME_TEXT_MAX];
	k8s_rewrite_owner(&req, scratch, req.name, req.name_len, out, sizeof(out));
	assert_string_equal(out, "a.svc.");
	assert_false(k8s_rewrite_maps_names(&req));
	k8s_rewrite_free(rw);
}

static void type_class_ttl_and_rcode_rules(void **state)
{
	const char *rules[] = {
		"continue type HINFO A", "continue class CH IN", "continue ttl regex .*\\.t\\. 30-60",
		"rcode exact x.t. NXDOMAIN NOERROR",
	};
	k8s_rewrite_t *rw = rules_of(rules, 4);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "x.t.", 4, KNOT_RRTYPE_HINFO,
	                                KNOT_CLASS_CH, &req));
	assert_int_equal(req.qtype, KNOT_RRTYPE_A);
	assert_int_equal(req.qclass, KNOT_CLASS_IN);
	assert_false(req.renamed);
	assert_true(k8s_rewrite_has_ttl(&req));
	assert_int_equal(k8s_rewrite_ttl(&req, 5), 30);
	assert_int_equal(k8s_rewrite_ttl(&req, 45), 45);
	assert_int_equal(k8s_rewrite_ttl(&req, 3600), 60);
	assert_int_equal(k8s_rewrite_rcode(&req, KNOT_RCODE_NXDOMAIN), KNOT_RCODE_NOERROR);
	assert_int_equal(k8s_rewrite_rcode(&req, KNOT_RCODE_SERVFAIL), KNOT_RCODE_SERVFAIL);
	k8s_rewrite_free(rw);
	// TTL forms: a value, MIN-, -MAX.
	const char *ranges[] = { "ttl a. 30-", "ttl b. -30", "ttl c. 15" };
	rw = rules_of(ranges, 3);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "a.", 2, 1, 1, &req));
	assert_int_equal(k8s_rewrite_ttl(&req, 5), 30);
	assert_int_equal(k8s_rewrite_ttl(&req, 90000), 90000);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "b.", 2, 1, 1, &req));
	assert_int_equal(k8s_rewrite_ttl(&req, 300), 30);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "c.", 2, 1, 1, &req));
	assert_int_equal(k8s_rewrite_ttl(&req, 300), 15);
	k8s_rewrite_free(rw);
}

static void a_ttl_rule_that_matches_stops_by_default(void **state)
{
	const char *rules[] = { "ttl suffix .svc. 60", "name suffix .svc. .x." };
	k8s_rewrite_t *rw = rules_of(rules, 2);
	assert_true(k8s_rewrite_request(rw, scratch, &mm, "a.svc.", 6, 1, 1, &req));
	assert_false(req.renamed);
	k8s_rewrite_free(rw);
}

static void what_coredns_or_mod_k8s_refuses_is_refused_with_the_reason(void **state)
{
	refused("", "no rule type");
	refused("stop", "must begin with a rule type");
	refused("name", "too few arguments");
	refused("name fuzzy a b", "only exact, prefix");
	refused("name regex (a b {1}", "regex");
	refused("name regex (a) {1}{2}", "more groups");
	refused("name regex a b answer auto answer name x y", "cannot be combined");
	refused("name regex a b answer value x y", "answer value is not supported");
	refused("name regex a b metadata", "metadata");
	refused("name regex a b extra", "invalid arguments");
	refused("name regex a b extra more", "only answer options");
	refused("answer name a b", "must begin with a name rule");
	refused("edns0 local set 0xffee abcd", "edns0");
	refused("cname exact a. b.", "cname");
	refused("type A", "exactly two arguments");
	refused("type A NOPE", "invalid type");
	refused("ttl a. -", "invalid TTL");
	refused("ttl a. 60-30", "invalid TTL");
	refused("rcode a. NOPE NOERROR", "invalid rcode");
	refused("bogus a b", "invalid rule type");
	refused("stop { name a b", "block is not closed");
	refused("name a b { c }", "a block after the rule's arguments");
	refused("stop { name \"a b", "quote is not closed");
}

/* Server blocks: each block's rules, for the names CoreDNS hands it. */

static const char *const BLOCK_RULES[] = {
	"name suffix .lol. .root.example.",
	"doma.lol: continue { name regex (.*)\\.doma\\.lol traefik.traefik.svc.cluster.local ; "
	"answer auto }",
	"Shop.Example,shop2.example.: name exact a.shop.example. b.shop.example.",
	"quiet.doma.lol:",
};

/*! \brief The name \a name becomes by its block's rules ("" no rule applied, "-" no rules). */
static const char *block_rewritten(const k8s_rw_blocks_t *b, const char *name)
{
	uint8_t wire[256];
	assert_true(k8s_name_from_text(name, strlen(name), wire) > 0);
	const k8s_rw_block_t *blk = k8s_rw_blocks_of(b, wire);
	if (blk == NULL || blk->rewrite == NULL) {
		return "-";
	}
	static char out[K8S_NAME_TEXT_MAX];
	bool any = k8s_rewrite_request(blk->rewrite, scratch, &mm, name, strlen(name), 1, 1, &req);
	snprintf(out, sizeof(out), "%s", !any ? "" : req.name);
	return out;
}

static void a_name_takes_the_rules_of_its_longest_zones_block_only(void **state)
{
	char err[512] = "";
	k8s_rw_blocks_t *b = k8s_rw_blocks_new(BLOCK_RULES, 4, NULL, 0, err, sizeof(err));
	assert_non_null(b);
	size_t rules, templates;
	assert_int_equal(k8s_rw_blocks_count(b, &rules, &templates), 4);
	assert_int_equal(rules, 3);
	assert_int_equal(templates, 0);
	// doma.lol's block: its rule, not the root's suffix rule.
	assert_string_equal(block_rewritten(b, "web.doma.lol."), "traefik.traefik.svc.cluster.local.");
	assert_string_equal(block_rewritten(b, "doma.lol."), "");
	// The root's block: every other name, a name like doma.lol's outside its zone too.
	assert_string_equal(block_rewritten(b, "web.xdoma.lol."), "web.xdoma.root.example.");
	assert_string_equal(block_rewritten(b, "a.b.lol."), "a.b.root.example.");
	// A block of two zones (named in any case, with or without the final dot).
	assert_string_equal(block_rewritten(b, "a.shop.example."), "b.shop.example.");
	assert_string_equal(block_rewritten(b, "x.shop2.example."), "");
	// A block without rules: the root's and doma.lol's do not touch its names.
	assert_string_equal(block_rewritten(b, "web.quiet.doma.lol."), "-");
	k8s_rw_blocks_free(b);

	// Without prefixes, the root's block has every name, as before.
	b = k8s_rw_blocks_new(BLOCK_RULES, 1, NULL, 0, err, sizeof(err));
	assert_non_null(b);
	assert_string_equal(block_rewritten(b, "web.doma.lol."), "web.doma.root.example.");
	k8s_rw_blocks_free(b);
	// Only a block's rules: the other names have none.
	b = k8s_rw_blocks_new(BLOCK_RULES + 1, 1, NULL, 0, err, sizeof(err));
	assert_non_null(b);
	assert_string_equal(block_rewritten(b, "web.example."), "-");
	assert_string_equal(block_rewritten(b, "web.doma.lol."), "traefik.traefik.svc.cluster.local.");
	k8s_rw_blocks_free(b);
}

static void nested_blocks_in_any_order_give_a_name_the_longest(void **state)
{
	static const char *const nested[] = {
		"b.c: name suffix .b.c. .in-b.example.",
		"a.b.c: name suffix .a.b.c. .in-a.example.",
		"c: name suffix .c. .in-c.example.",
		"x.a.b.c:",
	};
	char err[512] = "";
	k8s_rw_blocks_t *b = k8s_rw_blocks_new(nested, 4, NULL, 0, err, sizeof(err));
	assert_non_null(b);
	assert_string_equal(block_rewritten(b, "w.a.b.c."), "w.in-a.example.");
	assert_string_equal(block_rewritten(b, "w.b.c."), "w.in-b.example.");
	assert_string_equal(block_rewritten(b, "w.xb.c."), "w.xb.in-c.example.");
	assert_string_equal(block_rewritten(b, "w.c."), "w.in-c.example.");
	assert_string_equal(block_rewritten(b, "w.x.a.b.c."), "-");
	assert_string_equal(block_rewritten(b, "w.d."), "-");
	k8s_rw_blocks_free(b);
}

static void a_blocks_template_without_zones_is_its_blocks(void **state)
{
	static const char *const tpls[] = {
		"doma.lol: IN A { answer \"{{ .Name }} 60 IN A 192.0.2.1\" }",
		"IN A { answer \"{{ .Name }} 60 IN A 192.0.2.2\" }",
	};
	char err[512] = "";
	k8s_rw_blocks_t *b = k8s_rw_blocks_new(NULL, 0, tpls, 2, err, sizeof(err));
	assert_non_null(b);
	uint8_t wire[256];
	k8s_template_match_t m;
	const char *names[] = { "x.doma.lol.", "x.example." };
	for (size_t i = 0; i < 2; i++) {
		assert_true(k8s_name_from_text(names[i], strlen(names[i]), wire) > 0);
		const k8s_rw_block_t *blk = k8s_rw_blocks_of(b, wire);
		assert_non_null(blk);
		assert_int_equal(k8s_templates_match(blk->templates, scratch, names[i],
		                                     strlen(names[i]), wire, 1, 1, &m),
		                 K8S_TEMPLATE_MATCH);
		// {{ .Zone }}: the block's zone, the root's for the root's template.
		assert_int_equal(knot_dname_size(m.zone), i == 0 ? 10 : 1);
	}
	k8s_rw_blocks_free(b);
}

static void a_zone_in_two_blocks_or_a_bad_prefix_is_refused(void **state)
{
	char err[512] = "";
	static const char *const twice[] = { "a.example,b.example: name exact x. y.",
	                                     "a.example: name exact x. y." };
	assert_null(k8s_rw_blocks_new(twice, 2, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "one server block only"));
	static const char *const root[] = { ".,a.example: name exact x. y." };
	assert_null(k8s_rw_blocks_new(root, 1, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "one server block only"));
	static const char *const bad[] = { "a..b: name exact x. y.", ",: name exact x. y.",
	                                   "a,a: name exact x. y." };
	assert_null(k8s_rw_blocks_new(bad, 1, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "is not a list of zone names"));
	assert_null(k8s_rw_blocks_new(bad + 1, 1, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "is not a list of zone names"));
	assert_null(k8s_rw_blocks_new(bad + 2, 1, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "named twice"));
	// The rule after the prefix is read as any rule.
	static const char *const rule[] = { "a.example: name fuzzy a b" };
	assert_null(k8s_rw_blocks_new(rule, 1, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "only exact, prefix"));
	// The same zones in another order, the root's as ".:": one block each.
	static const char *const same[] = { "a.example,b.example: name exact x. y.",
	                                    "B.example.,a.example: name exact y. z.",
	                                    ".: name exact q. r." };
	k8s_rw_blocks_t *b = k8s_rw_blocks_new(same, 3, NULL, 0, err, sizeof(err));
	assert_non_null(b);
	size_t rules, templates;
	assert_int_equal(k8s_rw_blocks_count(b, &rules, &templates), 2);
	assert_string_equal(block_rewritten(b, "x.b.example."), "");
	k8s_rw_blocks_free(b);
}

int main(void)
{
	scratch = k8s_regex_scratch_new();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(names_are_written_as_miekg_writes_them, arena_free),
		cmocka_unit_test_teardown(a_text_is_a_name_only_as_dns_is_domain_name_says, arena_free),
		cmocka_unit_test_teardown(re2_patterns_of_real_corefiles_compile, arena_free),
		cmocka_unit_test_teardown(what_re2_and_pcre2_read_differently_is_refused, arena_free),
		cmocka_unit_test_teardown(matching_is_leftmost_first_with_groups_as_go, arena_free),
		cmocka_unit_test_teardown(a_catastrophic_pattern_is_bounded, arena_free),
		cmocka_unit_test_teardown(exact_is_the_default_and_matches_the_whole_name, arena_free),
		cmocka_unit_test_teardown(prefix_suffix_and_substring_replace_their_part, arena_free),
		cmocka_unit_test_teardown(regex_groups_fill_the_replacement, arena_free),
		cmocka_unit_test_teardown(a_rewritten_name_that_is_none_is_servfail, arena_free),
		cmocka_unit_test_teardown(stop_is_the_default_and_continue_goes_on, arena_free),
		cmocka_unit_test_teardown(exact_answers_map_back_always, arena_free),
		cmocka_unit_test_teardown(answer_name_maps_owners_not_values, arena_free),
		cmocka_unit_test_teardown(without_an_answer_option_the_owner_is_the_rewritten_name, arena_free),
		cmocka_unit_test_teardown(type_class_ttl_and_rcode_rules, arena_free),
		cmocka_unit_test_teardown(a_ttl_rule_that_matches_stops_by_default, arena_free),
		cmocka_unit_test_teardown(what_coredns_or_mod_k8s_refuses_is_refused_with_the_reason, arena_free),
		cmocka_unit_test_teardown(a_name_takes_the_rules_of_its_longest_zones_block_only, arena_free),
		cmocka_unit_test_teardown(nested_blocks_in_any_order_give_a_name_the_longest, arena_free),
		cmocka_unit_test_teardown(a_blocks_template_without_zones_is_its_blocks, arena_free),
		cmocka_unit_test_teardown(a_zone_in_two_blocks_or_a_bad_prefix_is_refused, arena_free),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	k8s_regex_scratch_free(scratch);
	return failed;
}
