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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rewrite/dnstext.h"
#include "rewrite/rcodes.h"
#include "rewrite/rewrite.h"
#include "rewrite/tokens.h"

typedef enum {
	RESP_NAME_AUTO,    /*!< answer auto: the rewritten name (or below it) back to the asked one. */
	RESP_VALUE_AUTO,
	RESP_NAME_SUFFIX,  /*!< A suffix rule's auto: TO back to FROM at the end of a name. */
	RESP_VALUE_SUFFIX,
	RESP_NAME_REGEX,   /*!< answer name FROM TO. */
	RESP_TTL,
	RESP_RCODE,
} resp_kind_t;

typedef struct {
	resp_kind_t kind;
	const char *from, *to;   /*!< Owned by the rule. */
	k8s_regex_t *re;
	uint32_t min, max;
	uint16_t rc_from, rc_to;
} resp_rule_t;

typedef enum { F_NAME, F_TYPE, F_CLASS, F_TTL, F_RCODE } field_t;
typedef enum { M_EXACT, M_PREFIX, M_SUFFIX, M_SUBSTRING, M_REGEX } match_t;

typedef struct {
	bool stop;
	field_t field;
	match_t match;
	char *from, *to;
	size_t from_len;
	k8s_regex_t *re;
	bool autoback;           /*!< A name rule's answer auto (exact: always). */
	uint16_t t_from, t_to;   /*!< type or class. */
	resp_rule_t auto_name, auto_value;
	resp_rule_t resp[K8S_REWRITE_RESP_PER_RULE];  /*!< Left on every match, in order. */
	size_t resp_count;
	char *texts[K8S_REWRITE_RESP_PER_RULE * 2];   /*!< The answer rules' TO texts. */
	size_t text_count;
} rule_t;

struct k8s_rewrite {
	rule_t *rules;
	size_t count;
};

typedef struct {
	char *err;
	size_t err_len;
} perr_t;

__attribute__((format(printf, 2, 3)))
static int fail(perr_t *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, e->err_len, fmt, ap);
	va_end(ap);
	return -1;
}

/*! \brief CoreDNS's plugin.Name(s).Normalize(): lowercase, a final dot (ASCII only here). */
static char *normalize(const char *s, perr_t *e)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)s[i] >= 0x80) {
			fail(e, "'%s': names are ASCII", s);
			return NULL;
		}
	}
	// dns.Fqdn: a final dot unless one is there, not escaped.
	size_t slashes = 0;
	for (size_t i = len; i >= 2 && s[i - 2] == '\\'; i--) {
		slashes++;
	}
	bool fqdn = len > 0 && s[len - 1] == '.' && slashes % 2 == 0;
	char *out = malloc(len + 2);
	if (out == NULL) {
		fail(e, "no memory");
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? s[i] + ('a' - 'A') : s[i];
	}
	out[len] = '.';
	out[len + (fqdn ? 0 : 1)] = '\0';
	return out;
}

static bool has_final_dot(const char *s)
{
	size_t len = strlen(s);
	return len > 0 && s[len - 1] == '.';
}

static int rtype_of(const char *s, uint16_t *out)
{
	char up[32];
	size_t len = strlen(s);
	if (len == 0 || len >= sizeof(up)) {
		return -1;
	}
	for (size_t i = 0; i <= len; i++) {
		up[i] = (s[i] >= 'a' && s[i] <= 'z') ? s[i] - ('a' - 'A') : s[i];
	}
	// Mnemonics only, as miekg's StringToType (not TYPEnnn).
	if (strncmp(up, "TYPE", 4) == 0 && len > 4) {
		return -1;
	}
	if (strcmp(up, "ANY") == 0) {
		*out = KNOT_RRTYPE_ANY;
		return 0;
	}
	return knot_rrtype_from_string(up, out) == 0 ? 0 : -1;
}

static int rclass_of(const char *s, uint16_t *out)
{
	static const struct { const char *name; uint16_t v; } classes[] = {
		{ "IN", 1 }, { "CS", 2 }, { "CH", 3 }, { "HS", 4 }, { "NONE", 254 }, { "ANY", 255 },
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strcasecmp(s, classes[i].name) == 0) {
			*out = classes[i].v;
			return 0;
		}
	}
	return -1;
}

/*! \brief Distinct {0}..{100} a replacement uses (CoreDNS's getSubExprUsage). */
static unsigned subexpr_usage(const char *to)
{
	unsigned used = 0;
	for (unsigned i = 0; i <= 100; i++) {
		char ref[8];
		snprintf(ref, sizeof(ref), "{%u}", i);
		used += (strstr(to, ref) != NULL);
	}
	return used;
}

static k8s_regex_t *regex_for(const char *from, const char *to, perr_t *e)
{
	char msg[256];
	k8s_regex_t *re = k8s_regex_new(from, msg, sizeof(msg));
	if (re == NULL) {
		fail(e, "regex '%s': %s", from, msg);
		return NULL;
	}
	if (to != NULL && subexpr_usage(to) > k8s_regex_groups(re)) {
		fail(e, "'%s' uses more groups than regex '%s' has", to, from);
		k8s_regex_free(re);
		return NULL;
	}
	return re;
}

static char *keep(rule_t *r, char *text)
{
	if (text != NULL && r->text_count < sizeof(r->texts) / sizeof(r->texts[0])) {
		r->texts[r->text_count++] = text;
		return text;
	}
	free(text);
	return NULL;
}

static int add_resp(rule_t *r, resp_rule_t rr, perr_t *e)
{
	if (r->resp_count == K8S_REWRITE_RESP_PER_RULE) {
		k8s_regex_free(rr.re);
		return fail(e, "more than %d answer rules", K8S_REWRITE_RESP_PER_RULE);
	}
	r->resp[r->resp_count++] = rr;
	return 0;
}

/*! \brief The answer options after a name rule (CoreDNS's parseAnswerRules). */
static int parse_answers(rule_t *r, const char *const *args, size_t n, perr_t *e)
{
	if (n < 2) {
		return fail(e, "invalid arguments for the name rule's answer options");
	}
	size_t i = 0, names = 0;
	bool autoback = false;
	const char *last = NULL;
	while (i < n) {
		if (last == NULL && strcmp(args[i], "answer") != 0) {
			return fail(e, "'%s': only answer options may follow a name rule's TO", args[i]);
		}
		if (strcmp(args[i], "answer") == 0) {
			i++;
		}
		if (i == n) {
			return fail(e, "answer without auto, name or value");
		}
		last = args[i++];
		if (strcmp(last, "auto") == 0) {
			autoback = true;
		} else if (strcmp(last, "name") == 0) {
			if (n - i < 2) {
				return fail(e, "answer name needs FROM and TO");
			}
			perr_t sub = *e;
			k8s_regex_t *re = regex_for(args[i], args[i + 1], &sub);
			if (re == NULL) {
				return -1;
			}
			char *to = keep(r, normalize(args[i + 1], e));
			if (to == NULL) {
				k8s_regex_free(re);
				return -1;
			}
			if (add_resp(r, (resp_rule_t){ .kind = RESP_NAME_REGEX, .re = re, .to = to }, e) != 0) {
				return -1;
			}
			names++;
			i += 2;
		} else if (strcmp(last, "value") == 0) {
			return fail(e, "answer value is not supported (record values are mapped back "
			            "only by answer auto)");
		} else {
			return fail(e, "invalid answer option '%s'", last);
		}
	}
	if (autoback && names > 0) {
		return fail(e, "answer auto cannot be combined with answer name");
	}
	r->autoback |= autoback;
	return 0;
}

static int parse_match(const char *s, match_t *m)
{
	static const char *names[] = { "exact", "prefix", "suffix", "substring", "regex" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(s, names[i]) == 0) {
			*m = (match_t)i;
			return 0;
		}
	}
	return -1;
}

static int parse_name(rule_t *r, const char *const *args, size_t n, perr_t *e)
{
	if (n < 2) {
		return fail(e, "too few arguments for a name rule");
	}
	const char *from, *to;
	size_t answers = 3;
	if (n == 2) {
		r->match = M_EXACT;
		from = args[0];
		to = args[1];
	} else {
		if (parse_match(args[0], &r->match) != 0) {
			return fail(e, "name rule supports only exact, prefix, suffix, substring, and "
			            "regex name matching, received: %s", args[0]);
		}
		from = args[1];
		to = args[2];
	}
	if (n > 3 && strcmp(args[3], "metadata") == 0) {
		return fail(e, "metadata in a name rule is not supported (no metadata plugin)");
	}
	if (r->match == M_REGEX) {
		r->re = regex_for(from, to, e);
		if (r->re == NULL) {
			return -1;
		}
		r->from = strdup(from);
	} else {
		r->from = normalize(from, e);
	}
	r->to = normalize(to, e);
	if (r->from == NULL || r->to == NULL) {
		return (r->from == NULL && r->match == M_REGEX) ? fail(e, "no memory") : -1;
	}
	r->from_len = strlen(r->from);
	if (r->match == M_EXACT) {
		r->autoback = true;
	}
	if (n > answers && parse_answers(r, args + answers, n - answers, e) != 0) {
		return -1;
	}
	if (r->match == M_SUFFIX && r->autoback) {
		// CoreDNS's suffix auto is a static suffix rule the other way round, first.
		r->autoback = false;
		if (r->resp_count + 2 > K8S_REWRITE_RESP_PER_RULE) {
			return fail(e, "too many answer rules");
		}
		memmove(r->resp + 2, r->resp, r->resp_count * sizeof(r->resp[0]));
		r->resp[0] = (resp_rule_t){ .kind = RESP_NAME_SUFFIX, .from = r->to, .to = r->from };
		r->resp[1] = (resp_rule_t){ .kind = RESP_VALUE_SUFFIX, .from = r->to, .to = r->from };
		r->resp_count += 2;
	}
	r->auto_name = (resp_rule_t){ .kind = RESP_NAME_AUTO };
	r->auto_value = (resp_rule_t){ .kind = RESP_VALUE_AUTO };
	(void)has_final_dot;
	return 0;
}

/*! \brief A TTL or a range MIN-MAX, -MAX, MIN- (CoreDNS's isValidTTL). */
static int parse_ttl(const char *s, uint32_t *min, uint32_t *max)
{
	const char *dash = strchr(s, '-');
	char *end;
	if (dash == NULL) {
		if (*s == '\0' || *s == '+' || *s == '-') {
			return -1;
		}
		unsigned long v = strtoul(s, &end, 10);
		if (*end != '\0' || v > UINT32_MAX) {
			return -1;
		}
		*min = *max = v;
		return 0;
	}
	if (strchr(dash + 1, '-') != NULL) {
		return -1;
	}
	unsigned long lo = 0, hi = 2147483647;
	if (dash != s) {
		if (*s == '+') {
			return -1;
		}
		lo = strtoul(s, &end, 10);
		if (end != dash || lo > UINT32_MAX) {
			return -1;
		}
	}
	if (dash[1] != '\0') {
		if (dash[1] == '+') {
			return -1;
		}
		hi = strtoul(dash + 1, &end, 10);
		if (*end != '\0' || hi > UINT32_MAX) {
			return -1;
		}
	} else if (dash == s) {
		return -1;  // "-" alone.
	}
	if (lo > hi) {
		return -1;
	}
	*min = lo;
	*max = hi;
	return 0;
}

/*! \brief ttl and rcode rules: [MATCH] NAME, then their values. */
static int parse_name_match(rule_t *r, const char *match, const char *name, perr_t *e)
{
	r->match = M_EXACT;
	if (match != NULL && parse_match(match, &r->match) != 0) {
		return fail(e, "supports only exact, prefix, suffix, substring, and regex name "
		            "matching");
	}
	if (r->match == M_REGEX) {
		r->re = regex_for(name, NULL, e);
		return (r->re != NULL) ? 0 : -1;
	}
	r->from = normalize(name, e);
	if (r->from == NULL) {
		return -1;
	}
	r->from_len = strlen(r->from);
	return 0;
}

static int parse_rule(rule_t *r, const char *const *args, size_t n, perr_t *e)
{
	if (n == 0) {
		return fail(e, "no rule type specified for rewrite");
	}
	size_t start = 1;
	r->stop = true;
	const char *type = args[0];
	if (strcasecmp(args[0], "continue") == 0 || strcasecmp(args[0], "stop") == 0) {
		r->stop = (strcasecmp(args[0], "stop") == 0);
		if (n < 2) {
			return fail(e, "%s rule must begin with a rule type", args[0]);
		}
		type = args[1];
		start = 2;
	}
	args += start;
	n -= start;
	if (strcasecmp(type, "name") == 0) {
		r->field = F_NAME;
		return parse_name(r, args, n, e);
	} else if (strcasecmp(type, "type") == 0 || strcasecmp(type, "class") == 0) {
		bool is_type = strcasecmp(type, "type") == 0;
		r->field = is_type ? F_TYPE : F_CLASS;
		if (n != 2) {
			return fail(e, "%s rules must have exactly two arguments", type);
		}
		int (*conv)(const char *, uint16_t *) = is_type ? rtype_of : rclass_of;
		if (conv(args[0], &r->t_from) != 0 || conv(args[1], &r->t_to) != 0) {
			return fail(e, "invalid %s in '%s %s'", type, args[0], args[1]);
		}
		return 0;
	} else if (strcasecmp(type, "ttl") == 0) {
		r->field = F_TTL;
		if (n < 2 || n > 3) {
			return fail(e, "a ttl rule is [MATCH] NAME TTL");
		}
		resp_rule_t rr = { .kind = RESP_TTL };
		if (parse_ttl(args[n - 1], &rr.min, &rr.max) != 0) {
			return fail(e, "invalid TTL '%s' for a ttl rule", args[n - 1]);
		}
		if (parse_name_match(r, n == 3 ? args[0] : NULL, args[n - 2], e) != 0) {
			return -1;
		}
		return add_resp(r, rr, e);
	} else if (strcasecmp(type, "rcode") == 0) {
		r->field = F_RCODE;
		if (n < 3 || n > 4) {
			return fail(e, "an rcode rule is [MATCH] NAME FROM TO");
		}
		resp_rule_t rr = { .kind = RESP_RCODE };
		if (k8s_rcode_parse(args[n - 2], &rr.rc_from) != 0 ||
		    k8s_rcode_parse(args[n - 1], &rr.rc_to) != 0) {
			return fail(e, "invalid rcode in '%s %s'", args[n - 2], args[n - 1]);
		}
		if (parse_name_match(r, n == 4 ? args[0] : NULL, args[n - 3], e) != 0) {
			return -1;
		}
		return add_resp(r, rr, e);
	} else if (strcasecmp(type, "answer") == 0) {
		return fail(e, "response rewrites must begin with a name rule");
	} else if (strcasecmp(type, "edns0") == 0) {
		return fail(e, "edns0 rules are not supported: mod-k8s's answers read no EDNS "
		            "option and its forwarder does not pass one upstream");
	} else if (strcasecmp(type, "cname") == 0) {
		return fail(e, "cname rules are not supported");
	}
	return fail(e, "invalid rule type \"%s\"", type);
}

static void rule_free(rule_t *r)
{
	k8s_regex_free(r->re);
	for (size_t i = 0; i < r->resp_count; i++) {
		k8s_regex_free(r->resp[i].re);
	}
	for (size_t i = 0; i < r->text_count; i++) {
		free(r->texts[i]);
	}
	free(r->from);
	free(r->to);
}

/*! \brief A value's words as CoreDNS gives them to newRule (a block's words are the rule's). */
static int value_args(const k8s_tokens_t *t, const char **args, size_t *n, perr_t *e)
{
	*n = 0;
	size_t open = t->count;
	for (size_t i = 0; i < t->count; i++) {
		if (k8s_token_is(t, i, "{")) {
			open = i;
			break;
		}
	}
	if (open < t->count) {
		// CoreDNS reads a block only after fewer than two words.
		if (open >= 2) {
			return fail(e, "a block after the rule's arguments");
		}
		if (!k8s_token_is(t, t->count - 1, "}")) {
			return fail(e, "the block is not closed with }");
		}
	}
	for (size_t i = 0; i < t->count; i++) {
		if (open < t->count && (i == open || i == t->count - 1)) {
			continue;
		}
		if (k8s_token_is(t, i, "{") || k8s_token_is(t, i, "}")) {
			return fail(e, "a nested block");
		}
		args[(*n)++] = t->tok[i].text;
	}
	return 0;
}

k8s_rewrite_t *k8s_rewrite_new(const char *const *values, size_t count, char *err, size_t err_len)
{
	perr_t e = { err, err_len };
	if (count > K8S_REWRITE_RULES_MAX) {
		fail(&e, "more than %d rewrite rules", K8S_REWRITE_RULES_MAX);
		return NULL;
	}
	k8s_rewrite_t *rw = calloc(1, sizeof(*rw));
	if (rw == NULL || (count > 0 && (rw->rules = calloc(count, sizeof(rule_t))) == NULL)) {
		free(rw);
		fail(&e, "no memory");
		return NULL;
	}
	for (size_t i = 0; i < count; i++) {
		k8s_tokens_t t;
		char msg[384];
		perr_t sub = { msg, sizeof(msg) };
		const char *args[K8S_TOKENS_MAX];
		size_t n = 0;
		int ret = k8s_tokens_split(values[i], &t, msg, sizeof(msg));
		if (ret == 0) {
			ret = value_args(&t, args, &n, &sub);
		}
		if (ret == 0) {
			ret = parse_rule(&rw->rules[i], args, n, &sub);
			rw->count = i + 1;
		}
		k8s_tokens_free(&t);
		if (ret != 0) {
			fail(&e, "rewrite '%s': %s", values[i], msg);
			rw->count = i + 1;
			k8s_rewrite_free(rw);
			return NULL;
		}
	}
	return rw;
}

void k8s_rewrite_free(k8s_rewrite_t *rw)
{
	if (rw == NULL) {
		return;
	}
	for (size_t i = 0; i < rw->count; i++) {
		rule_free(&rw->rules[i]);
	}
	free(rw->rules);
	free(rw);
}

size_t k8s_rewrite_count(const k8s_rewrite_t *rw)
{
	return (rw != NULL) ? rw->count : 0;
}

/* Applying. */

static char *mm_text(knot_mm_t *mm, size_t len)
{
	return mm->alloc(mm->ctx, len + 1);
}

static bool ends_with(const char *s, size_t len, const char *suffix, size_t slen)
{
	return len >= slen && memcmp(s + len - slen, suffix, slen) == 0;
}

/*! \brief Replaces every \a old in \a s by \a rep (Go's strings.ReplaceAll, old not empty). */
static size_t replace_all(const char *s, size_t len, const char *old, size_t olen,
                          const char *rep, size_t rlen, char *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		if (olen > 0 && i + olen <= len && memcmp(s + i, old, olen) == 0) {
			if (n + rlen >= max) {
				return SIZE_MAX;
			}
			memcpy(out + n, rep, rlen);
			n += rlen;
			i += olen;
		} else {
			if (n + 1 >= max) {
				return SIZE_MAX;
			}
			out[n++] = s[i++];
		}
	}
	out[n] = '\0';
	return n;
}

/*!
 * \brief A regex rule's replacement: {0}, {1}, ... replaced by the groups, each in
 * turn over the whole text (CoreDNS's loop of strings.ReplaceAll).
 */
static size_t expand(const k8s_regex_t *re, const k8s_regex_span_t *spans, const char *subject,
                     const char *to, char *out, char *tmp, size_t max)
{
	size_t len = strlen(to);
	if (len >= max) {
		return SIZE_MAX;
	}
	memcpy(out, to, len + 1);
	for (unsigned g = 0; g <= k8s_regex_groups(re); g++) {
		char ref[8];
		int rl = snprintf(ref, sizeof(ref), "{%u}", g);
		if (strstr(out, ref) == NULL) {
			continue;
		}
		const char *val = (spans[g].start >= 0) ? subject + spans[g].start : "";
		size_t vlen = (spans[g].start >= 0) ? (size_t)(spans[g].end - spans[g].start) : 0;
		len = replace_all(out, len, ref, rl, val, vlen, tmp, max);
		if (len == SIZE_MAX) {
			return SIZE_MAX;
		}
		memcpy(out, tmp, len + 1);
	}
	return len;
}

/*! \brief Whether a name rule matches \a name; the new name into \a out. */
static int name_rule(const rule_t *r, k8s_regex_scratch_t *s, const char *name, size_t len,
                     char *out, char *tmp, size_t max, size_t *out_len)
{
	size_t tlen = strlen(r->to);
	switch (r->match) {
	case M_EXACT:
		if (len != r->from_len || memcmp(name, r->from, len) != 0 || tlen >= max) {
			return 0;
		}
		memcpy(out, r->to, tlen + 1);
		*out_len = tlen;
		return 1;
	case M_PREFIX:
		if (len < r->from_len || memcmp(name, r->from, r->from_len) != 0 ||
		    tlen + len - r->from_len >= max) {
			return 0;
		}
		memcpy(out, r->to, tlen);
		memcpy(out + tlen, name + r->from_len, len - r->from_len);
		*out_len = tlen + len - r->from_len;
		out[*out_len] = '\0';
		return 1;
	case M_SUFFIX:
		if (!ends_with(name, len, r->from, r->from_len) || len - r->from_len + tlen >= max) {
			return 0;
		}
		memcpy(out, name, len - r->from_len);
		memcpy(out + len - r->from_len, r->to, tlen + 1);
		*out_len = len - r->from_len + tlen;
		return 1;
	case M_SUBSTRING:
		if (memmem(name, len, r->from, r->from_len) == NULL) {
			return 0;
		}
		*out_len = replace_all(name, len, r->from, r->from_len, r->to, tlen, out, max);
		return 1;  // Too long: SIZE_MAX, an invalid name.
	case M_REGEX: {
		k8s_regex_span_t spans[K8S_REGEX_GROUPS_MAX + 1];
		if (k8s_regex_match(r->re, s, name, len, spans) != 1) {
			return 0;
		}
		*out_len = expand(r->re, spans, name, r->to, out, tmp, max);
		return 1;
	}
	}
	return 0;
}

/*! \brief Whether a ttl or rcode rule's name matches. */
static bool name_matches(const rule_t *r, k8s_regex_scratch_t *s, const char *name, size_t len)
{
	switch (r->match) {
	case M_EXACT:     return len == r->from_len && memcmp(name, r->from, len) == 0;
	case M_PREFIX:    return len >= r->from_len && memcmp(name, r->from, r->from_len) == 0;
	case M_SUFFIX:    return ends_with(name, len, r->from, r->from_len);
	case M_SUBSTRING: return memmem(name, len, r->from, r->from_len) != NULL;
	case M_REGEX:     return k8s_regex_match(r->re, s, name, len, NULL) == 1;
	}
	return false;
}

static bool add_left(k8s_rewrite_req_t *out, const void *rule, const char *orig, const char *repl)
{
	if (out->resp_count == sizeof(out->resp) / sizeof(out->resp[0])) {
		return false;
	}
	out->resp[out->resp_count++] = (k8s_rewrite_resp_t){ rule, orig, repl };
	return true;
}

bool k8s_rewrite_request(const k8s_rewrite_t *rw, k8s_regex_scratch_t *s, knot_mm_t *mm,
                         const char *name, size_t len, uint16_t qtype, uint16_t qclass,
                         k8s_rewrite_req_t *out)
{
	out->name = name;
	out->name_len = len;
	out->qtype = qtype;
	out->qclass = qclass;
	out->renamed = false;
	out->invalid = false;
	out->resp_count = 0;
	bool any = false;
	char *next = NULL, *tmp = NULL;  // Per-query buffers, taken when a name rule runs.
	for (size_t i = 0; i < rw->count; i++) {
		const rule_t *r = &rw->rules[i];
		bool done = false;
		switch (r->field) {
		case F_NAME: {
			if (next == NULL) {
				next = mm_text(mm, K8S_NAME_TEXT_MAX);
			}
			if (tmp == NULL) {
				tmp = mm_text(mm, K8S_NAME_TEXT_MAX);
			}
			size_t next_len = 0;
			if (next == NULL || tmp == NULL) {
				out->invalid = true;
				return true;
			}
			if (!name_rule(r, s, out->name, out->name_len, next, tmp, K8S_NAME_TEXT_MAX,
			               &next_len)) {
				break;
			}
			uint8_t wire[256];
			if (next_len == SIZE_MAX || k8s_name_from_text(next, next_len, wire) == 0) {
				out->invalid = true;
				return true;
			}
			if (r->autoback) {
				// Maps the name asked after this rule back to the one before it.
				add_left(out, &r->auto_name, next, out->name);
				add_left(out, &r->auto_value, next, out->name);
			}
			for (size_t k = 0; k < r->resp_count; k++) {
				add_left(out, &r->resp[k], NULL, NULL);
			}
			out->name = next;
			out->name_len = next_len;
			out->renamed = true;
			next = NULL;  // Now the name asked: the next rule writes elsewhere.
			done = true;
			break;
		}
		case F_TYPE:
			if (out->qtype == r->t_from) {
				out->qtype = r->t_to;
				done = true;
			}
			break;
		case F_CLASS:
			if (out->qclass == r->t_from) {
				out->qclass = r->t_to;
				done = true;
			}
			break;
		case F_TTL:
		case F_RCODE:
			if (name_matches(r, s, out->name, out->name_len)) {
				add_left(out, &r->resp[0], NULL, NULL);
				done = true;
			}
			break;
		}
		any |= done;
		if (done && r->stop) {
			break;
		}
	}
	return any;
}

/*! \brief CoreDNS's remapStringRewriter: the name itself, or a name below it. */
static size_t remap(const char *orig, const char *repl, const char *src, size_t len,
                    char *out, size_t max)
{
	size_t olen = strlen(orig), rlen = strlen(repl);
	if (len == olen && memcmp(src, orig, len) == 0) {
		if (rlen >= max) {
			return 0;
		}
		memcpy(out, repl, rlen + 1);
		return rlen;
	}
	if (len > olen && src[len - olen - 1] == '.' && memcmp(src + len - olen, orig, olen) == 0) {
		size_t head = len - olen;
		if (head + rlen >= max) {
			return 0;
		}
		memmove(out, src, head);
		memcpy(out + head, repl, rlen + 1);
		return head + rlen;
	}
	return SIZE_MAX;  // Unchanged.
}

/*! \brief The response rules of one kind pair applied to a text, in reverse. */
static size_t map_text(const k8s_rewrite_req_t *req, k8s_regex_scratch_t *s, bool owner,
                       const char *text, size_t len, char *out, size_t max)
{
	if (len >= max) {
		return 0;
	}
	char tmp[K8S_NAME_TEXT_MAX];
	memmove(out, text, len);
	out[len] = '\0';
	for (size_t i = req->resp_count; i-- > 0;) {
		const k8s_rewrite_resp_t *l = &req->resp[i];
		const resp_rule_t *rr = l->rule;
		size_t n = SIZE_MAX;
		switch (rr->kind) {
		case RESP_NAME_AUTO:
		case RESP_VALUE_AUTO:
			if (owner == (rr->kind == RESP_NAME_AUTO)) {
				n = remap(l->orig, l->repl, out, len, tmp, sizeof(tmp));
			}
			break;
		case RESP_NAME_SUFFIX:
		case RESP_VALUE_SUFFIX: {
			size_t flen = strlen(rr->from), tlen = strlen(rr->to);
			if (owner == (rr->kind == RESP_NAME_SUFFIX) && ends_with(out, len, rr->from, flen) &&
			    len - flen + tlen < sizeof(tmp)) {
				memcpy(tmp, out, len - flen);
				memcpy(tmp + len - flen, rr->to, tlen + 1);
				n = len - flen + tlen;
			}
			break;
		}
		case RESP_NAME_REGEX:
			if (owner) {
				k8s_regex_span_t spans[K8S_REGEX_GROUPS_MAX + 1];
				char tmp2[K8S_NAME_TEXT_MAX];
				if (k8s_regex_match(rr->re, s, out, len, spans) == 1) {
					n = expand(rr->re, spans, out, rr->to, tmp, tmp2, sizeof(tmp));
					n = (n == SIZE_MAX) ? 0 : n;
				}
			}
			break;
		default:
			break;
		}
		if (n == 0 || (n != SIZE_MAX && n >= max)) {
			return 0;
		}
		if (n != SIZE_MAX) {
			memcpy(out, tmp, n + 1);
			len = n;
		}
	}
	return len;
}

size_t k8s_rewrite_owner(const k8s_rewrite_req_t *req, k8s_regex_scratch_t *s,
                         const char *owner, size_t len, char *out, size_t max)
{
	return map_text(req, s, true, owner, len, out, max);
}

size_t k8s_rewrite_value(const k8s_rewrite_req_t *req, k8s_regex_scratch_t *s,
                         const char *value, size_t len, char *out, size_t max)
{
	return map_text(req, s, false, value, len, out, max);
}

bool k8s_rewrite_has_ttl(const k8s_rewrite_req_t *req)
{
	for (size_t i = 0; i < req->resp_count; i++) {
		resp_kind_t k = ((const resp_rule_t *)req->resp[i].rule)->kind;
		if (k == RESP_TTL || k == RESP_RCODE) {
			return true;
		}
	}
	return false;
}

bool k8s_rewrite_maps_names(const k8s_rewrite_req_t *req)
{
	for (size_t i = 0; i < req->resp_count; i++) {
		resp_kind_t k = ((const resp_rule_t *)req->resp[i].rule)->kind;
		if (k != RESP_TTL && k != RESP_RCODE) {
			return true;
		}
	}
	return false;
}

uint32_t k8s_rewrite_ttl(const k8s_rewrite_req_t *req, uint32_t ttl)
{
	for (size_t i = req->resp_count; i-- > 0;) {
		const resp_rule_t *rr = req->resp[i].rule;
		if (rr->kind == RESP_TTL) {
			ttl = (ttl < rr->min) ? rr->min : (ttl > rr->max) ? rr->max : ttl;
		}
	}
	return ttl;
}

uint16_t k8s_rewrite_rcode(const k8s_rewrite_req_t *req, uint16_t rcode)
{
	for (size_t i = req->resp_count; i-- > 0;) {
		const resp_rule_t *rr = req->resp[i].rule;
		if (rr->kind == RESP_RCODE && rr->rc_from == rcode) {
			rcode = rr->rc_to;
		}
	}
	return rcode;
}
