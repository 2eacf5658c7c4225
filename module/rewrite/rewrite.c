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

#include "rewrite/perr.h"
#include "rewrite/rcodes.h"
#include "rewrite/rewrite_priv.h"
#include "rewrite/tokens.h"


/*! \brief CoreDNS's plugin.Name(s).Normalize(): lowercase, a final dot (ASCII only here). */
static char *normalize(const char *s, k8s_perr_t *e)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)s[i] >= 0x80) {
			k8s_perr(e, "'%s': names are ASCII", s);
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
		k8s_perr(e, "no memory");
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? s[i] + ('a' - 'A') : s[i];
	}
	out[len] = '.';
	out[len + (fqdn ? 0 : 1)] = '\0';
	return out;
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

static k8s_regex_t *regex_for(const char *from, const char *to, k8s_perr_t *e)
{
	char msg[256];
	k8s_regex_t *re = k8s_regex_new(from, msg, sizeof(msg));
	if (re == NULL) {
		k8s_perr(e, "regex '%s': %s", from, msg);
		return NULL;
	}
	if (to != NULL && subexpr_usage(to) > k8s_regex_groups(re)) {
		k8s_perr(e, "'%s' uses more groups than regex '%s' has", to, from);
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

static int add_resp(rule_t *r, resp_rule_t rr, k8s_perr_t *e)
{
	if (r->resp_count == K8S_REWRITE_RESP_PER_RULE) {
		k8s_regex_free(rr.re);
		return k8s_perr(e, "more than %d answer rules", K8S_REWRITE_RESP_PER_RULE);
	}
	r->resp[r->resp_count++] = rr;
	return 0;
}

/*! \brief The answer options after a name rule (CoreDNS's parseAnswerRules). */
static int parse_answers(rule_t *r, const char *const *args, size_t n, k8s_perr_t *e)
{
	if (n < 2) {
		return k8s_perr(e, "invalid arguments for the name rule's answer options");
	}
	size_t i = 0, names = 0;
	bool autoback = false;
	const char *last = NULL;
	while (i < n) {
		if (last == NULL && strcmp(args[i], "answer") != 0) {
			return k8s_perr(e, "'%s': only answer options may follow a name rule's TO", args[i]);
		}
		if (strcmp(args[i], "answer") == 0) {
			i++;
		}
		if (i == n) {
			return k8s_perr(e, "answer without auto, name or value");
		}
		last = args[i++];
		if (strcmp(last, "auto") == 0) {
			autoback = true;
		} else if (strcmp(last, "name") == 0) {
			if (n - i < 2) {
				return k8s_perr(e, "answer name needs FROM and TO");
			}
			k8s_perr_t sub = *e;
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
			return k8s_perr(e, "answer value is not supported (record values are mapped back "
			            "only by answer auto)");
		} else {
			return k8s_perr(e, "invalid answer option '%s'", last);
		}
	}
	if (autoback && names > 0) {
		return k8s_perr(e, "answer auto cannot be combined with answer name");
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

static int parse_name(rule_t *r, const char *const *args, size_t n, k8s_perr_t *e)
{
	if (n < 2) {
		return k8s_perr(e, "too few arguments for a name rule");
	}
	const char *from, *to;
	size_t answers = 3;
	if (n == 2) {
		r->match = M_EXACT;
		from = args[0];
		to = args[1];
	} else {
		if (parse_match(args[0], &r->match) != 0) {
			return k8s_perr(e, "name rule supports only exact, prefix, suffix, substring, and "
			            "regex name matching, received: %s", args[0]);
		}
		from = args[1];
		to = args[2];
	}
	if (n > 3 && strcmp(args[3], "metadata") == 0) {
		return k8s_perr(e, "metadata in a name rule is not supported (no metadata plugin)");
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
		return (r->from == NULL && r->match == M_REGEX) ? k8s_perr(e, "no memory") : -1;
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
			return k8s_perr(e, "too many answer rules");
		}
		memmove(r->resp + 2, r->resp, r->resp_count * sizeof(r->resp[0]));
		r->resp[0] = (resp_rule_t){ .kind = RESP_NAME_SUFFIX, .from = r->to, .to = r->from };
		r->resp[1] = (resp_rule_t){ .kind = RESP_VALUE_SUFFIX, .from = r->to, .to = r->from };
		r->resp_count += 2;
	}
	r->auto_name = (resp_rule_t){ .kind = RESP_NAME_AUTO };
	r->auto_value = (resp_rule_t){ .kind = RESP_VALUE_AUTO };
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
static int parse_name_match(rule_t *r, const char *match, const char *name, k8s_perr_t *e)
{
	r->match = M_EXACT;
	if (match != NULL && parse_match(match, &r->match) != 0) {
		return k8s_perr(e, "supports only exact, prefix, suffix, substring, and regex name "
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

static int parse_rule(rule_t *r, const char *const *args, size_t n, k8s_perr_t *e)
{
	if (n == 0) {
		return k8s_perr(e, "no rule type specified for rewrite");
	}
	size_t start = 1;
	r->stop = true;
	const char *type = args[0];
	if (strcasecmp(args[0], "continue") == 0 || strcasecmp(args[0], "stop") == 0) {
		r->stop = (strcasecmp(args[0], "stop") == 0);
		if (n < 2) {
			return k8s_perr(e, "%s rule must begin with a rule type", args[0]);
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
			return k8s_perr(e, "%s rules must have exactly two arguments", type);
		}
		int (*conv)(const char *, uint16_t *) = is_type ? rtype_of : rclass_of;
		if (conv(args[0], &r->t_from) != 0 || conv(args[1], &r->t_to) != 0) {
			return k8s_perr(e, "invalid %s in '%s %s'", type, args[0], args[1]);
		}
		return 0;
	} else if (strcasecmp(type, "ttl") == 0) {
		r->field = F_TTL;
		if (n < 2 || n > 3) {
			return k8s_perr(e, "a ttl rule is [MATCH] NAME TTL");
		}
		resp_rule_t rr = { .kind = RESP_TTL };
		if (parse_ttl(args[n - 1], &rr.min, &rr.max) != 0) {
			return k8s_perr(e, "invalid TTL '%s' for a ttl rule", args[n - 1]);
		}
		if (parse_name_match(r, n == 3 ? args[0] : NULL, args[n - 2], e) != 0) {
			return -1;
		}
		return add_resp(r, rr, e);
	} else if (strcasecmp(type, "rcode") == 0) {
		r->field = F_RCODE;
		if (n < 3 || n > 4) {
			return k8s_perr(e, "an rcode rule is [MATCH] NAME FROM TO");
		}
		resp_rule_t rr = { .kind = RESP_RCODE };
		if (k8s_rcode_parse(args[n - 2], &rr.rc_from) != 0 ||
		    k8s_rcode_parse(args[n - 1], &rr.rc_to) != 0) {
			return k8s_perr(e, "invalid rcode in '%s %s'", args[n - 2], args[n - 1]);
		}
		if (parse_name_match(r, n == 4 ? args[0] : NULL, args[n - 3], e) != 0) {
			return -1;
		}
		return add_resp(r, rr, e);
	} else if (strcasecmp(type, "answer") == 0) {
		return k8s_perr(e, "response rewrites must begin with a name rule");
	} else if (strcasecmp(type, "edns0") == 0) {
		return k8s_perr(e, "edns0 rules are not supported: mod-k8s's answers read no EDNS "
		            "option and its forwarder does not pass one upstream");
	} else if (strcasecmp(type, "cname") == 0) {
		return k8s_perr(e, "cname rules are not supported");
	}
	return k8s_perr(e, "invalid rule type \"%s\"", type);
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
static int value_args(const k8s_tokens_t *t, const char **args, size_t *n, k8s_perr_t *e)
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
			return k8s_perr(e, "a block after the rule's arguments");
		}
		if (!k8s_token_is(t, t->count - 1, "}")) {
			return k8s_perr(e, "the block is not closed with }");
		}
	}
	for (size_t i = 0; i < t->count; i++) {
		if (open < t->count && (i == open || i == t->count - 1)) {
			continue;
		}
		if (k8s_token_is(t, i, "{") || k8s_token_is(t, i, "}")) {
			return k8s_perr(e, "a nested block");
		}
		args[(*n)++] = t->tok[i].text;
	}
	return 0;
}

k8s_rewrite_t *k8s_rewrite_new(const char *const *values, size_t count, char *err, size_t err_len)
{
	k8s_perr_t e = { err, err_len };
	if (count > K8S_REWRITE_RULES_MAX) {
		k8s_perr(&e, "more than %d rewrite rules", K8S_REWRITE_RULES_MAX);
		return NULL;
	}
	k8s_rewrite_t *rw = calloc(1, sizeof(*rw));
	if (rw == NULL || (count > 0 && (rw->rules = calloc(count, sizeof(rule_t))) == NULL)) {
		free(rw);
		k8s_perr(&e, "no memory");
		return NULL;
	}
	for (size_t i = 0; i < count; i++) {
		k8s_tokens_t t;
		char msg[384];
		k8s_perr_t sub = { msg, sizeof(msg) };
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
			k8s_perr(&e, "rewrite '%s': %s", values[i], msg);
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
