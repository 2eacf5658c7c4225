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

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rewrite/dnstext.h"
#include "rewrite/rcodes.h"
#include "rewrite/template.h"
#include "rewrite/tokens.h"

/* Go templates: the subset. */

typedef enum {
	P_TEXT, P_NAME, P_ZONE, P_CLASS, P_TYPE, P_REMOTE,
	P_GROUP,        /*!< .Group.NAME: "<no value>" when the regex has no such group. */
	P_MATCH_INDEX,  /*!< index .Match N: an error (SERVFAIL) past the groups. */
	P_GROUP_INDEX,  /*!< index .Group "NAME": "" when there is no such group. */
} part_kind_t;

typedef struct {
	part_kind_t kind;
	char *text;     /*!< P_TEXT's text, a group's name. */
	size_t len;
	unsigned index;
} part_t;

typedef struct {
	part_t *parts;
	size_t count;
} gotpl_t;

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

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_ident(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9')) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
			return false;
		}
	}
	return true;
}

static int add_part(gotpl_t *t, part_t p, perr_t *e)
{
	part_t *parts = realloc(t->parts, (t->count + 1) * sizeof(*parts));
	if (parts == NULL) {
		free(p.text);
		return fail(e, "no memory");
	}
	t->parts = parts;
	t->parts[t->count++] = p;
	return 0;
}

static int add_text(gotpl_t *t, const char *s, size_t len, perr_t *e)
{
	if (len == 0) {
		return 0;
	}
	char *text = strndup(s, len);
	if (text == NULL) {
		return fail(e, "no memory");
	}
	return add_part(t, (part_t){ .kind = P_TEXT, .text = text, .len = len }, e);
}

/*! \brief One action's words (between the delimiters and trim markers). */
static int parse_action(gotpl_t *t, const char *a, size_t len, perr_t *e)
{
	while (len > 0 && is_space(a[len - 1])) {
		len--;
	}
	while (len > 0 && is_space(*a)) {
		a++;
		len--;
	}
	static const struct { const char *field; part_kind_t kind; } fields[] = {
		{ ".Name", P_NAME }, { ".Zone", P_ZONE }, { ".Class", P_CLASS },
		{ ".Type", P_TYPE }, { ".Remote", P_REMOTE },
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (len == strlen(fields[i].field) && memcmp(a, fields[i].field, len) == 0) {
			return add_part(t, (part_t){ .kind = fields[i].kind }, e);
		}
	}
	if (len > 7 && memcmp(a, ".Group.", 7) == 0 && is_ident(a + 7, len - 7)) {
		char *name = strndup(a + 7, len - 7);
		return name ? add_part(t, (part_t){ .kind = P_GROUP, .text = name, .len = len - 7 }, e)
		            : fail(e, "no memory");
	}
	if (len > 6 && memcmp(a, "index", 5) == 0 && is_space(a[5])) {
		const char *r = a + 6;
		size_t rl = len - 6;
		while (rl > 0 && is_space(*r)) {
			r++;
			rl--;
		}
		if (rl > 7 && memcmp(r, ".Match", 6) == 0 && is_space(r[6])) {
			const char *n = r + 7;
			size_t nl = rl - 7;
			while (nl > 0 && is_space(*n)) {
				n++;
				nl--;
			}
			unsigned v = 0;
			bool ok = nl > 0 && nl <= 3;
			for (size_t i = 0; ok && i < nl; i++) {
				ok = n[i] >= '0' && n[i] <= '9';
				v = v * 10 + (n[i] - '0');
			}
			if (ok) {
				return add_part(t, (part_t){ .kind = P_MATCH_INDEX, .index = v }, e);
			}
		}
		if (rl > 7 && memcmp(r, ".Group", 6) == 0 && is_space(r[6])) {
			const char *n = r + 7;
			size_t nl = rl - 7;
			while (nl > 0 && is_space(*n)) {
				n++;
				nl--;
			}
			if (nl >= 2 && n[0] == '"' && n[nl - 1] == '"' && memchr(n + 1, '\\', nl - 2) == NULL &&
			    memchr(n + 1, '"', nl - 2) == NULL) {
				char *name = strndup(n + 1, nl - 2);
				return name ? add_part(t, (part_t){ .kind = P_GROUP_INDEX, .text = name,
				                                    .len = nl - 2 }, e)
				            : fail(e, "no memory");
			}
		}
	}
	return fail(e, "{{ %.*s }} is not supported (only .Name, .Zone, .Class, .Type, .Remote, "
	            ".Group.NAME, index .Match N and index .Group \"NAME\")", (int)len, a);
}

static void gotpl_free(gotpl_t *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->parts[i].text);
	}
	free(t->parts);
	t->parts = NULL;
	t->count = 0;
}

static int gotpl_parse(gotpl_t *t, const char *src, perr_t *e)
{
	memset(t, 0, sizeof(*t));
	size_t n = strlen(src);
	size_t i = 0;
	while (i < n) {
		const char *open = strstr(src + i, "{{");
		if (open == NULL) {
			if (add_text(t, src + i, n - i, e) != 0) {
				goto fail;
			}
			break;
		}
		size_t at = open - src;
		size_t text_end = at;
		size_t body = at + 2;
		// "{{- " trims the space before it (a '-' with a space after it).
		if (body + 1 < n && src[body] == '-' && is_space(src[body + 1])) {
			while (text_end > i && is_space(src[text_end - 1])) {
				text_end--;
			}
			body += 2;
		}
		if (add_text(t, src + i, text_end - i, e) != 0) {
			goto fail;
		}
		const char *close = strstr(src + body, "}}");
		if (close == NULL) {
			fail(e, "unclosed action {{");
			goto fail;
		}
		size_t end = close - src;
		size_t after = end + 2;
		size_t body_end = end;
		bool trim = false;
		if (end >= body + 2 && src[end - 1] == '-' && is_space(src[end - 2])) {
			body_end = end - 1;
			trim = true;
		}
		if (parse_action(t, src + body, body_end - body, e) != 0) {
			goto fail;
		}
		if (trim) {
			while (after < n && is_space(src[after])) {
				after++;
			}
		}
		i = after;
	}
	return 0;
fail:
	gotpl_free(t);
	return -1;
}

/* Templates. */

#define ZONES_MAX 32
#define REGEX_MAX 16
#define RRS_MAX 16

struct k8s_template {
	uint16_t qclass, qtype;
	uint8_t *zones[ZONES_MAX];
	char *zone_text[ZONES_MAX];
	size_t zone_count;
	k8s_regex_t *re[REGEX_MAX];
	size_t re_count;
	gotpl_t rrs[K8S_TEMPLATE_SECTIONS][RRS_MAX];
	size_t rr_count[K8S_TEMPLATE_SECTIONS];
	uint16_t rcode;
	bool fall;
	uint8_t *fall_zones[ZONES_MAX];  /*!< None with fall: every name. */
	size_t fall_count;
};

struct k8s_templates {
	k8s_template_t *tpl;
	size_t count;
	uint8_t *zones[ZONES_MAX * K8S_TEMPLATES_MAX];  /*!< Every template's (borrowed). */
	size_t zone_count;
};

static int class_of(const char *s, uint16_t *out)
{
	static const struct { const char *name; uint16_t v; } classes[] = {
		{ "IN", 1 }, { "CS", 2 }, { "CH", 3 }, { "HS", 4 }, { "NONE", 254 }, { "ANY", 255 },
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strcmp(s, classes[i].name) == 0) {
			*out = classes[i].v;
			return 0;
		}
	}
	return -1;
}

static const char *class_name(uint16_t c)
{
	switch (c) {
	case 1: return "IN";
	case 2: return "CS";
	case 3: return "CH";
	case 4: return "HS";
	case 254: return "NONE";
	case 255: return "ANY";
	default: return "";
	}
}

/*! \brief A type mnemonic as miekg's StringToType has it (upper case, no TYPEnnn). */
static int type_of(const char *s, uint16_t *out)
{
	for (const char *p = s; *p; p++) {
		if (*p >= 'a' && *p <= 'z') {
			return -1;
		}
	}
	if (strncmp(s, "TYPE", 4) == 0) {
		return -1;
	}
	if (strcmp(s, "ANY") == 0) {
		*out = KNOT_RRTYPE_ANY;
		return 0;
	}
	return knot_rrtype_from_string(s, out) == 0 ? 0 : -1;
}

static uint8_t *zone_wire(const char *text, perr_t *e)
{
	uint8_t wire[256];
	size_t len = strlen(text);
	size_t size = k8s_name_from_text(text, len, wire);
	if (size == 0) {
		fail(e, "'%s' is not a zone name", text);
		return NULL;
	}
	uint8_t *out = malloc(size);
	if (out == NULL) {
		fail(e, "no memory");
		return NULL;
	}
	memcpy(out, wire, size);
	return out;
}

static void template_free(k8s_template_t *t)
{
	for (size_t i = 0; i < t->zone_count; i++) {
		free(t->zones[i]);
		free(t->zone_text[i]);
	}
	for (size_t i = 0; i < t->re_count; i++) {
		k8s_regex_free(t->re[i]);
	}
	for (int s = 0; s < K8S_TEMPLATE_SECTIONS; s++) {
		for (size_t i = 0; i < t->rr_count[s]; i++) {
			gotpl_free(&t->rrs[s][i]);
		}
	}
	for (size_t i = 0; i < t->fall_count; i++) {
		free(t->fall_zones[i]);
	}
}

static int check_rendered(const k8s_template_t *t, const gotpl_t *g, perr_t *e);

/*! \brief One value: CLASS TYPE [ZONE...] [{ lines }]. */
static int template_parse(k8s_template_t *t, const k8s_tokens_t *tk, perr_t *e)
{
	size_t i = 0;
	if (tk->count < 2) {
		return fail(e, "a template is CLASS TYPE [ZONE...] { ... }");
	}
	if (class_of(tk->tok[0].text, &t->qclass) != 0) {
		return fail(e, "invalid query class %s", tk->tok[0].text);
	}
	if (type_of(tk->tok[1].text, &t->qtype) != 0) {
		return fail(e, "invalid RR type %s", tk->tok[1].text);
	}
	i = 2;
	while (i < tk->count && !k8s_token_is(tk, i, "{")) {
		if (t->zone_count == ZONES_MAX) {
			return fail(e, "more than %d zones", ZONES_MAX);
		}
		uint8_t *z = zone_wire(tk->tok[i].text, e);
		if (z == NULL) {
			return -1;
		}
		t->zones[t->zone_count] = z;
		char text[K8S_NAME_TEXT_MAX];
		k8s_name_to_text(z, text, sizeof(text));
		t->zone_text[t->zone_count++] = strdup(text);
		i++;
	}
	if (t->zone_count == 0) {
		// CoreDNS: the server block's zones; the translation names them, else the root.
		t->zones[0] = calloc(1, 1);
		t->zone_text[0] = strdup(".");
		t->zone_count = 1;
		if (t->zones[0] == NULL || t->zone_text[0] == NULL) {
			return fail(e, "no memory");
		}
	}
	if (i < tk->count) {
		if (!k8s_token_is(tk, tk->count - 1, "}")) {
			return fail(e, "the block is not closed with }");
		}
		i++;
	}
	size_t end = (i < tk->count) ? tk->count - 1 : tk->count;
	while (i < end) {
		// A line: its keyword, and its words up to the next line.
		const k8s_token_t *kw = &tk->tok[i];
		size_t j = i + 1;
		while (j < end && tk->tok[j].line == kw->line) {
			j++;
		}
		const char *k = kw->text;
		size_t nargs = j - i - 1;
		const k8s_token_t *args = &tk->tok[i + 1];
		if (kw->quoted || k8s_token_is(tk, i, "{") || k8s_token_is(tk, i, "}")) {
			return fail(e, "'%s' where a template option belongs", k);
		}
		if (strcmp(k, "match") == 0) {
			if (nargs == 0) {
				return fail(e, "match needs a regex");
			}
			for (size_t a = 0; a < nargs; a++) {
				char msg[256];
				if (t->re_count == REGEX_MAX) {
					return fail(e, "more than %d match regexes", REGEX_MAX);
				}
				k8s_regex_t *re = k8s_regex_new(args[a].text, msg, sizeof(msg));
				if (re == NULL) {
					return fail(e, "could not parse regex: %s, %s", args[a].text, msg);
				}
				t->re[t->re_count++] = re;
			}
		} else if (strcmp(k, "answer") == 0 || strcmp(k, "additional") == 0 ||
		           strcmp(k, "authority") == 0) {
			k8s_template_section_t s = (k[1] == 'n') ? K8S_TEMPLATE_ANSWER :
			                           (k[1] == 'd') ? K8S_TEMPLATE_ADDITIONAL :
			                                           K8S_TEMPLATE_AUTHORITY;
			if (nargs == 0) {
				return fail(e, "%s needs a record", k);
			}
			for (size_t a = 0; a < nargs; a++) {
				if (t->rr_count[s] == RRS_MAX) {
					return fail(e, "more than %d %s records", RRS_MAX, k);
				}
				gotpl_t *g = &t->rrs[s][t->rr_count[s]];
				char msg[384];
				perr_t sub = { msg, sizeof(msg) };
				if (gotpl_parse(g, args[a].text, &sub) != 0) {
					return fail(e, "could not compile template: %s, %s", args[a].text, msg);
				}
				t->rr_count[s]++;
				if (check_rendered(t, g, &sub) != 0) {
					return fail(e, "%s \"%s\": %s", k, args[a].text, msg);
				}
			}
		} else if (strcmp(k, "rcode") == 0) {
			if (nargs < 1 || k8s_rcode_parse_as(args[0].text, &t->rcode, 0) != 0) {
				return fail(e, "unknown rcode %s", nargs ? args[0].text : "");
			}
		} else if (strcmp(k, "fallthrough") == 0) {
			t->fall = true;
			for (size_t a = 0; a < nargs; a++) {
				if (t->fall_count == ZONES_MAX) {
					return fail(e, "more than %d fallthrough zones", ZONES_MAX);
				}
				uint8_t *z = zone_wire(args[a].text, e);
				if (z == NULL) {
					return -1;
				}
				t->fall_zones[t->fall_count++] = z;
			}
		} else if (strcmp(k, "upstream") == 0) {
			// Ignored by CoreDNS too ("remove soon").
		} else if (strcmp(k, "var") == 0 || strcmp(k, "expr") == 0 || strcmp(k, "ederror") == 0) {
			return fail(e, "%s is not supported", k);
		} else {
			return fail(e, "unknown template option '%s'", k);
		}
		i = j;
	}
	return 0;
}

k8s_templates_t *k8s_templates_new(const char *const *values, size_t count, char *err,
                                   size_t err_len)
{
	perr_t e = { err, err_len };
	if (count > K8S_TEMPLATES_MAX) {
		fail(&e, "more than %d templates", K8S_TEMPLATES_MAX);
		return NULL;
	}
	k8s_templates_t *ts = calloc(1, sizeof(*ts));
	if (ts == NULL || (count > 0 && (ts->tpl = calloc(count, sizeof(*ts->tpl))) == NULL)) {
		free(ts);
		fail(&e, "no memory");
		return NULL;
	}
	for (size_t i = 0; i < count; i++) {
		k8s_tokens_t tk;
		char msg[512];
		perr_t sub = { msg, sizeof(msg) };
		int ret = k8s_tokens_split(values[i], &tk, msg, sizeof(msg));
		ts->count = i + 1;
		if (ret == 0) {
			ret = template_parse(&ts->tpl[i], &tk, &sub);
			k8s_tokens_free(&tk);
		}
		if (ret != 0) {
			fail(&e, "template '%s': %s", values[i], msg);
			k8s_templates_free(ts);
			return NULL;
		}
		for (size_t z = 0; z < ts->tpl[i].zone_count; z++) {
			ts->zones[ts->zone_count++] = ts->tpl[i].zones[z];
		}
	}
	return ts;
}

void k8s_templates_free(k8s_templates_t *ts)
{
	if (ts == NULL) {
		return;
	}
	for (size_t i = 0; i < ts->count; i++) {
		template_free(&ts->tpl[i]);
	}
	free(ts->tpl);
	free(ts);
}

/*! \brief The longest of \a zones that \a name is in, or NULL. */
static const uint8_t *longest_zone(uint8_t *const *zones, size_t count, const uint8_t *name)
{
	const uint8_t *best = NULL;
	size_t best_size = 0;
	for (size_t i = 0; i < count; i++) {
		if (knot_dname_in_bailiwick(name, zones[i]) >= 0) {
			size_t size = knot_dname_size(zones[i]);
			if (best == NULL || size > best_size) {
				best = zones[i];
				best_size = size;
			}
		}
	}
	return best;
}

k8s_template_result_t k8s_templates_match(const k8s_templates_t *ts, k8s_regex_scratch_t *s,
                                          const char *name, size_t len, const uint8_t *wire,
                                          uint16_t qtype, uint16_t qclass,
                                          k8s_template_match_t *m)
{
	if (longest_zone(ts->zones, ts->zone_count, wire) == NULL) {
		return K8S_TEMPLATE_NONE;
	}
	for (size_t i = 0; i < ts->count; i++) {
		const k8s_template_t *t = &ts->tpl[i];
		const uint8_t *zone = longest_zone(t->zones, t->zone_count, wire);
		if (zone == NULL) {
			continue;
		}
		if (t->qclass != KNOT_CLASS_ANY && qclass != KNOT_CLASS_ANY && qclass != t->qclass) {
			continue;
		}
		if (t->qtype != KNOT_RRTYPE_ANY && qtype != KNOT_RRTYPE_ANY && qtype != t->qtype) {
			continue;
		}
		// No match regex: ".*", which matches every name.
		size_t count = (t->re_count > 0) ? t->re_count : 1;
		for (size_t r = 0; r < count; r++) {
			if (t->re_count > 0 && k8s_regex_match(t->re[r], s, name, len, m->spans) != 1) {
				continue;
			}
			if (t->re_count == 0) {
				m->spans[0] = (k8s_regex_span_t){ 0, (int)len };
			}
			m->tpl = t;
			m->name = name;
			m->name_len = len;
			m->zone = zone;
			m->qclass = (qclass != KNOT_CLASS_ANY) ? qclass : t->qclass;
			m->qtype = (qtype != KNOT_RRTYPE_ANY) ? qtype : t->qtype;
			m->re = (t->re_count > 0) ? t->re[r] : NULL;
			return K8S_TEMPLATE_MATCH;
		}
		bool through = t->fall && (t->fall_count == 0 ||
		                           longest_zone(t->fall_zones, t->fall_count, wire) != NULL);
		if (!through) {
			return K8S_TEMPLATE_SERVFAIL;
		}
	}
	return K8S_TEMPLATE_NONE;
}

uint16_t k8s_template_rcode(const k8s_template_match_t *m)
{
	return m->tpl->rcode;
}

size_t k8s_template_count(const k8s_template_match_t *m, k8s_template_section_t section)
{
	return m->tpl->rr_count[section];
}

/* Rendering. */

static bool append(char *out, size_t *n, size_t max, const char *s, size_t len)
{
	if (*n + len >= max) {
		return false;
	}
	memcpy(out + *n, s, len);
	*n += len;
	out[*n] = '\0';
	return true;
}

static const char *type_text(uint16_t type, char *buf, size_t len)
{
	if (type == KNOT_RRTYPE_ANY) {
		return "ANY";
	}
	return (knot_rrtype_to_string(type, buf, len) > 0) ? buf : "";
}

static int render(const k8s_template_match_t *m, const gotpl_t *g, char *out, size_t max,
                  size_t *len)
{
	size_t n = 0;
	out[0] = '\0';
	unsigned groups = (m->re != NULL) ? k8s_regex_groups(m->re) : 0;
	for (size_t i = 0; i < g->count; i++) {
		const part_t *p = &g->parts[i];
		const char *s = NULL;
		size_t sl = 0;
		char buf[64];
		int group = -1;
		switch (p->kind) {
		case P_TEXT:   s = p->text; sl = p->len; break;
		case P_NAME:   s = m->name; sl = m->name_len; break;
		case P_ZONE: {
			char zt[K8S_NAME_TEXT_MAX];
			size_t zl = k8s_name_to_text(m->zone, zt, sizeof(zt));
			if (!append(out, &n, max, zt, zl)) {
				return KNOT_ESPACE;
			}
			continue;
		}
		case P_CLASS:  s = class_name(m->qclass); sl = strlen(s); break;
		case P_TYPE:   s = type_text(m->qtype, buf, sizeof(buf)); sl = strlen(s); break;
		case P_REMOTE: s = m->remote ? m->remote : ""; sl = strlen(s); break;
		case P_MATCH_INDEX:
			if (p->index > groups) {
				return KNOT_ERANGE;  // Go: "index out of range".
			}
			group = p->index;
			break;
		case P_GROUP:
		case P_GROUP_INDEX: {
			// .Group holds "0".."N" and the named groups (a name shadows a number).
			group = (m->re != NULL) ? k8s_regex_group_named(m->re, p->text, p->len) : -1;
			if (group < 0) {
				char *end;
				unsigned long v = strtoul(p->text, &end, 10);
				if (*end == '\0' && p->text[0] >= '0' && p->text[0] <= '9' && v <= groups &&
				    (p->len == 1 || p->text[0] != '0')) {
					group = v;
				}
			}
			if (group < 0) {
				s = (p->kind == P_GROUP) ? "<no value>" : "";
				sl = strlen(s);
			}
			break;
		}
		}
		if (group >= 0) {
			const k8s_regex_span_t *sp = &m->spans[group];
			s = (sp->start >= 0) ? m->name + sp->start : "";
			sl = (sp->start >= 0) ? (size_t)(sp->end - sp->start) : 0;
		}
		if (!append(out, &n, max, s, sl)) {
			return KNOT_ESPACE;
		}
	}
	*len = n;
	return KNOT_EOK;
}

/* A record's text, as miekg/dns's NewRR reads it (the types we answer). */

typedef struct {
	const char *p;
	size_t i, n;
	int paren;
} lex_t;

/*! \brief The next word (quoted: without its quotes, escapes kept), or 0 at the end. */
static size_t next_word(lex_t *l, const char **word, bool *quoted)
{
	for (;;) {
		while (l->i < l->n && (is_space(l->p[l->i]) || l->p[l->i] == '(' || l->p[l->i] == ')')) {
			l->paren += (l->p[l->i] == '(') - (l->p[l->i] == ')');
			l->i++;
		}
		if (l->i < l->n && l->p[l->i] == ';') {
			while (l->i < l->n && l->p[l->i] != '\n') {
				l->i++;
			}
			continue;
		}
		break;
	}
	if (l->i >= l->n) {
		return 0;
	}
	*quoted = (l->p[l->i] == '"');
	if (*quoted) {
		size_t start = ++l->i;
		while (l->i < l->n && l->p[l->i] != '"') {
			l->i += (l->p[l->i] == '\\' && l->i + 1 < l->n) ? 2 : 1;
		}
		*word = l->p + start;
		size_t len = l->i - start;
		l->i += (l->i < l->n);
		return len ? len : SIZE_MAX;  // SIZE_MAX: an empty quoted word.
	}
	size_t start = l->i;
	while (l->i < l->n && !is_space(l->p[l->i]) && l->p[l->i] != ';' && l->p[l->i] != '(' &&
	       l->p[l->i] != ')') {
		l->i += (l->p[l->i] == '\\' && l->i + 1 < l->n) ? 2 : 1;
	}
	*word = l->p + start;
	return l->i - start;
}

/*! \brief A name of the record (the origin "." for a relative one, "@" the origin). */
static size_t name_wire(const char *w, size_t len, uint8_t out[256])
{
	if (len == 1 && w[0] == '@') {
		out[0] = 0;
		return 1;
	}
	return k8s_name_from_text(w, len, out);
}

/*! \brief miekg's TTL: digits, or digits with s, m, h, d, w units. */
static bool ttl_of(const char *w, size_t len, uint32_t *out)
{
	uint64_t total = 0, cur = 0;
	bool digits = false, unit = false;
	for (size_t i = 0; i < len; i++) {
		char c = w[i];
		if (c >= '0' && c <= '9') {
			cur = cur * 10 + (c - '0');
			digits = true;
			if (cur > UINT32_MAX) {
				return false;
			}
			continue;
		}
		uint64_t mult;
		switch (c | 0x20) {
		case 's': mult = 1; break;
		case 'm': mult = 60; break;
		case 'h': mult = 3600; break;
		case 'd': mult = 86400; break;
		case 'w': mult = 604800; break;
		default: return false;
		}
		if (!digits) {
			return false;
		}
		total += cur * mult;
		cur = 0;
		digits = false;
		unit = true;
	}
	if (!unit && !digits) {
		return false;
	}
	total += cur;
	if (total > UINT32_MAX) {
		return false;
	}
	*out = total;
	return true;
}

static bool u32_of(const char *w, size_t len, uint64_t max, uint32_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 10) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (w[i] < '0' || w[i] > '9') {
			return false;
		}
		v = v * 10 + (w[i] - '0');
	}
	if (v > max) {
		return false;
	}
	*out = v;
	return true;
}

typedef size_t (*map_fn)(void *ctx, const char *in, size_t len, char *out, size_t max);

/*! \brief A name in the rdata, mapped by the response rules first. */
static int rdata_name(lex_t *l, map_fn map, void *ctx, uint8_t *out, size_t *pos, size_t max)
{
	const char *w;
	bool q;
	size_t len = next_word(l, &w, &q);
	if (len == 0 || len == SIZE_MAX || q) {
		return KNOT_EMALF;
	}
	char mapped[K8S_NAME_TEXT_MAX];
	char fq[K8S_NAME_TEXT_MAX];
	if (len + 2 > sizeof(fq)) {
		return KNOT_EMALF;
	}
	memcpy(fq, w, len);
	// Relative names are below the origin ".": the text with a final dot.
	if (!(len == 1 && w[0] == '@') && fq[len - 1] != '.') {
		fq[len++] = '.';
	}
	fq[len] = '\0';
	if (map != NULL) {
		size_t ml = map(ctx, fq, len, mapped, sizeof(mapped));
		if (ml == 0) {
			return KNOT_EMALF;
		}
		memcpy(fq, mapped, ml + 1);
		len = ml;
	}
	uint8_t wire[256];
	size_t size = name_wire(fq, len, wire);
	if (size == 0 || *pos + size > max) {
		return KNOT_EMALF;
	}
	memcpy(out + *pos, wire, size);
	*pos += size;
	return KNOT_EOK;
}

static int rdata_u(lex_t *l, unsigned bytes, uint8_t *out, size_t *pos, size_t max)
{
	const char *w;
	bool q;
	size_t len = next_word(l, &w, &q);
	uint32_t v;
	uint64_t lim = (bytes == 2) ? 0xffff : UINT32_MAX;
	if (len == 0 || len == SIZE_MAX || q || !u32_of(w, len, lim, &v) || *pos + bytes > max) {
		return KNOT_EMALF;
	}
	if (bytes == 2) {
		knot_wire_write_u16(out + *pos, v);
	} else {
		knot_wire_write_u32(out + *pos, v);
	}
	*pos += bytes;
	return KNOT_EOK;
}

/*! \brief TXT's strings: quoted (escapes \X, \DDD) or bare words. */
static int rdata_txt(lex_t *l, uint8_t *out, size_t *pos, size_t max)
{
	const char *w;
	bool q;
	size_t len;
	bool any = false;
	while ((len = next_word(l, &w, &q)) != 0) {
		if (len == SIZE_MAX) {
			len = 0;
		}
		size_t at = (*pos)++;
		if (at >= max) {
			return KNOT_EMALF;
		}
		size_t n = 0;
		for (size_t i = 0; i < len; i++) {
			uint8_t b = w[i];
			if (b == '\\' && i + 1 < len) {
				if (i + 3 < len && w[i + 1] >= '0' && w[i + 1] <= '9' &&
				    w[i + 2] >= '0' && w[i + 2] <= '9' && w[i + 3] >= '0' && w[i + 3] <= '9') {
					unsigned v = (w[i + 1] - '0') * 100 + (w[i + 2] - '0') * 10 + (w[i + 3] - '0');
					if (v > 255) {
						return KNOT_EMALF;
					}
					b = v;
					i += 3;
				} else {
					b = w[++i];
				}
			}
			if (n == 255 || *pos >= max) {
				return KNOT_EMALF;
			}
			out[(*pos)++] = b;
			n++;
		}
		out[at] = n;
		any = true;
	}
	return any ? KNOT_EOK : KNOT_EMALF;
}

/*! \brief The text of a record into \a rr. */
static int rr_parse(const char *text, size_t len, map_fn map, void *ctx, knot_mm_t *mm,
                    k8s_template_rr_t *rr, bool owner_only)
{
	lex_t l = { .p = text, .n = len };
	const char *w;
	bool q;
	size_t wl = next_word(&l, &w, &q);
	if (wl == 0 || wl == SIZE_MAX || q || wl + 2 > sizeof(rr->owner_text)) {
		return KNOT_EMALF;
	}
	memcpy(rr->owner_text, w, wl);
	if (!(wl == 1 && w[0] == '@') && w[wl - 1] != '.') {
		rr->owner_text[wl++] = '.';
	} else if (wl == 1 && w[0] == '@') {
		rr->owner_text[0] = '.';
	}
	rr->owner_text[wl] = '\0';
	if (owner_only) {
		return KNOT_EOK;
	}
	rr->ttl = 3600;
	rr->rclass = KNOT_CLASS_IN;
	bool have_ttl = false, have_class = false;
	for (;;) {
		wl = next_word(&l, &w, &q);
		if (wl == 0 || wl == SIZE_MAX || q || wl >= 32) {
			return KNOT_EMALF;
		}
		char word[32];
		memcpy(word, w, wl);
		word[wl] = '\0';
		uint32_t ttl;
		uint16_t cls;
		if (!have_ttl && ttl_of(word, wl, &ttl)) {
			rr->ttl = ttl;
			have_ttl = true;
		} else if (!have_class && class_of(word, &cls) == 0) {
			rr->rclass = cls;
			have_class = true;
		} else {
			for (size_t i = 0; i < wl; i++) {
				word[i] = (word[i] >= 'a' && word[i] <= 'z') ? word[i] - 32 : word[i];
			}
			if (knot_rrtype_from_string(word, &rr->type) != 0) {
				return KNOT_EMALF;
			}
			break;
		}
	}
	uint8_t buf[1024];
	size_t pos = 0;
	int ret = KNOT_EOK;
	switch (rr->type) {
	case KNOT_RRTYPE_A:
	case KNOT_RRTYPE_AAAA: {
		wl = next_word(&l, &w, &q);
		char addr[64];
		if (wl == 0 || wl == SIZE_MAX || q || wl >= sizeof(addr)) {
			return KNOT_EMALF;
		}
		memcpy(addr, w, wl);
		addr[wl] = '\0';
		int af = (rr->type == KNOT_RRTYPE_A) ? AF_INET : AF_INET6;
		if (inet_pton(af, addr, buf) != 1) {
			return KNOT_EMALF;
		}
		pos = (af == AF_INET) ? 4 : 16;
		break;
	}
	case KNOT_RRTYPE_CNAME: case KNOT_RRTYPE_DNAME: case KNOT_RRTYPE_NS: case KNOT_RRTYPE_PTR:
		ret = rdata_name(&l, map, ctx, buf, &pos, sizeof(buf));
		break;
	case KNOT_RRTYPE_MX:
		ret = rdata_u(&l, 2, buf, &pos, sizeof(buf));
		if (ret == KNOT_EOK) {
			ret = rdata_name(&l, map, ctx, buf, &pos, sizeof(buf));
		}
		break;
	case KNOT_RRTYPE_SRV:
		for (int k = 0; k < 3 && ret == KNOT_EOK; k++) {
			ret = rdata_u(&l, 2, buf, &pos, sizeof(buf));
		}
		if (ret == KNOT_EOK) {
			ret = rdata_name(&l, map, ctx, buf, &pos, sizeof(buf));
		}
		break;
	case KNOT_RRTYPE_SOA:
		ret = rdata_name(&l, map, ctx, buf, &pos, sizeof(buf));
		if (ret == KNOT_EOK) {
			ret = rdata_name(&l, NULL, NULL, buf, &pos, sizeof(buf));
		}
		for (int k = 0; k < 5 && ret == KNOT_EOK; k++) {
			ret = rdata_u(&l, 4, buf, &pos, sizeof(buf));
		}
		break;
	case KNOT_RRTYPE_TXT:
		ret = rdata_txt(&l, buf, &pos, sizeof(buf));
		break;
	default:
		return KNOT_ENOTSUP;
	}
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (next_word(&l, &w, &q) != 0 || l.paren != 0) {
		return KNOT_EMALF;  // Words left, or a ( not closed.
	}
	uint8_t owner[256];
	size_t osize = name_wire(rr->owner_text, strlen(rr->owner_text), owner);
	if (osize == 0) {
		return KNOT_EMALF;
	}
	memcpy(rr->owner, owner, osize);
	rr->rdata = (mm != NULL) ? mm->alloc(mm->ctx, pos) : NULL;
	if (mm != NULL && rr->rdata == NULL) {
		return KNOT_ENOMEM;
	}
	if (rr->rdata != NULL) {
		memcpy(rr->rdata, buf, pos);
	}
	rr->rdlen = pos;
	return KNOT_EOK;
}

/*! \brief At load: the record's type, rendered with stand-in values, is one we read. */
static int check_rendered(const k8s_template_t *t, const gotpl_t *g, perr_t *e)
{
	k8s_template_match_t m = {
		.tpl = t, .name = "example.", .name_len = 8, .zone = (const uint8_t *)"",
		.qtype = (t->qtype != KNOT_RRTYPE_ANY) ? t->qtype : KNOT_RRTYPE_A,
		.qclass = KNOT_CLASS_IN, .remote = "192.0.2.1",
	};
	for (size_t i = 0; i <= K8S_REGEX_GROUPS_MAX; i++) {
		m.spans[i] = (k8s_regex_span_t){ 0, 7 };
	}
	char text[K8S_TEMPLATE_TEXT_MAX];
	size_t len;
	if (render(&m, g, text, sizeof(text), &len) != KNOT_EOK) {
		return 0;  // Depends on the query (an index past the groups): SERVFAIL then.
	}
	k8s_template_rr_t rr;
	int ret = rr_parse(text, len, NULL, NULL, NULL, &rr, false);
	if (ret == KNOT_ENOTSUP) {
		return fail(e, "records of type %u are not supported (A, AAAA, CNAME, DNAME, NS, PTR, "
		            "MX, SRV, TXT, SOA)", rr.type);
	}
	return 0;
}

int k8s_template_rr(const k8s_template_match_t *m, k8s_template_section_t section, size_t i,
                    knot_mm_t *mm, map_fn value_map, void *map_ctx, k8s_template_rr_t *rr)
{
	if (i >= m->tpl->rr_count[section]) {
		return KNOT_EINVAL;
	}
	char text[K8S_TEMPLATE_TEXT_MAX];
	size_t len;
	int ret = render(m, &m->tpl->rrs[section][i], text, sizeof(text), &len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	return rr_parse(text, len, value_map, map_ctx, mm, rr, false);
}
