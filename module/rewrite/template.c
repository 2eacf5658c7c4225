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
#include "rewrite/gotpl.h"
#include "rewrite/perr.h"
#include "rewrite/rcodes.h"
#include "rewrite/rrtext.h"
#include "rewrite/template.h"
#include "rewrite/tokens.h"


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
	k8s_gotpl_t rrs[K8S_TEMPLATE_SECTIONS][RRS_MAX];
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

static uint8_t *zone_wire(const char *text, k8s_perr_t *e)
{
	uint8_t wire[256];
	size_t len = strlen(text);
	size_t size = k8s_name_from_text(text, len, wire);
	if (size == 0) {
		k8s_perr(e, "'%s' is not a zone name", text);
		return NULL;
	}
	uint8_t *out = malloc(size);
	if (out == NULL) {
		k8s_perr(e, "no memory");
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
			k8s_gotpl_free(&t->rrs[s][i]);
		}
	}
	for (size_t i = 0; i < t->fall_count; i++) {
		free(t->fall_zones[i]);
	}
}

static int check_rendered(const k8s_template_t *t, const k8s_gotpl_t *g, k8s_perr_t *e);

/*! \brief One value: CLASS TYPE [ZONE...] [{ lines }]; no ZONE: \a block's zones. */
static int template_parse(k8s_template_t *t, const k8s_tokens_t *tk,
                          const char *const *block, size_t block_count, k8s_perr_t *e)
{
	size_t i = 0;
	if (tk->count < 2) {
		return k8s_perr(e, "a template is CLASS TYPE [ZONE...] { ... }");
	}
	if (k8s_rrtext_class(tk->tok[0].text, &t->qclass) != 0) {
		return k8s_perr(e, "invalid query class %s", tk->tok[0].text);
	}
	if (type_of(tk->tok[1].text, &t->qtype) != 0) {
		return k8s_perr(e, "invalid RR type %s", tk->tok[1].text);
	}
	i = 2;
	size_t named = 0;
	while (i < tk->count && !k8s_token_is(tk, i, "{")) {
		named++;
		i++;
	}
	// CoreDNS: no ZONE is the server block's zones.
	for (size_t k = 0; k < (named > 0 ? named : block_count); k++) {
		if (t->zone_count == ZONES_MAX) {
			return k8s_perr(e, "more than %d zones", ZONES_MAX);
		}
		uint8_t *z = zone_wire(named > 0 ? tk->tok[2 + k].text : block[k], e);
		if (z == NULL) {
			return -1;
		}
		t->zones[t->zone_count] = z;
		char text[K8S_NAME_TEXT_MAX];
		k8s_name_to_text(z, text, sizeof(text));
		t->zone_text[t->zone_count++] = strdup(text);
	}
	if (t->zone_count == 0) {
		// No block: the root's.
		t->zones[0] = calloc(1, 1);
		t->zone_text[0] = strdup(".");
		t->zone_count = 1;
		if (t->zones[0] == NULL || t->zone_text[0] == NULL) {
			return k8s_perr(e, "no memory");
		}
	}
	if (i < tk->count) {
		if (!k8s_token_is(tk, tk->count - 1, "}")) {
			return k8s_perr(e, "the block is not closed with }");
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
			return k8s_perr(e, "'%s' where a template option belongs", k);
		}
		if (strcmp(k, "match") == 0) {
			if (nargs == 0) {
				return k8s_perr(e, "match needs a regex");
			}
			for (size_t a = 0; a < nargs; a++) {
				char msg[256];
				if (t->re_count == REGEX_MAX) {
					return k8s_perr(e, "more than %d match regexes", REGEX_MAX);
				}
				k8s_regex_t *re = k8s_regex_new(args[a].text, msg, sizeof(msg));
				if (re == NULL) {
					return k8s_perr(e, "could not parse regex: %s, %s", args[a].text, msg);
				}
				t->re[t->re_count++] = re;
			}
		} else if (strcmp(k, "answer") == 0 || strcmp(k, "additional") == 0 ||
		           strcmp(k, "authority") == 0) {
			k8s_template_section_t s = (k[1] == 'n') ? K8S_TEMPLATE_ANSWER :
			                           (k[1] == 'd') ? K8S_TEMPLATE_ADDITIONAL :
			                                           K8S_TEMPLATE_AUTHORITY;
			if (nargs == 0) {
				return k8s_perr(e, "%s needs a record", k);
			}
			for (size_t a = 0; a < nargs; a++) {
				if (t->rr_count[s] == RRS_MAX) {
					return k8s_perr(e, "more than %d %s records", RRS_MAX, k);
				}
				k8s_gotpl_t *g = &t->rrs[s][t->rr_count[s]];
				char msg[384];
				k8s_perr_t sub = { msg, sizeof(msg) };
				if (k8s_gotpl_parse(g, args[a].text, msg, sizeof(msg)) != 0) {
					return k8s_perr(e, "could not compile template: %s, %s", args[a].text, msg);
				}
				t->rr_count[s]++;
				if (check_rendered(t, g, &sub) != 0) {
					return k8s_perr(e, "%s \"%s\": %s", k, args[a].text, msg);
				}
			}
		} else if (strcmp(k, "rcode") == 0) {
			if (nargs < 1 || k8s_rcode_parse_as(args[0].text, &t->rcode, 0) != 0) {
				return k8s_perr(e, "unknown rcode %s", nargs ? args[0].text : "");
			}
		} else if (strcmp(k, "fallthrough") == 0) {
			t->fall = true;
			for (size_t a = 0; a < nargs; a++) {
				if (t->fall_count == ZONES_MAX) {
					return k8s_perr(e, "more than %d fallthrough zones", ZONES_MAX);
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
			return k8s_perr(e, "%s is not supported", k);
		} else {
			return k8s_perr(e, "unknown template option '%s'", k);
		}
		i = j;
	}
	return 0;
}

k8s_templates_t *k8s_templates_new(const char *const *values, size_t count,
                                   const char *const *zones, size_t zone_count, char *err,
                                   size_t err_len)
{
	k8s_perr_t e = { err, err_len };
	if (count > K8S_TEMPLATES_MAX) {
		k8s_perr(&e, "more than %d templates", K8S_TEMPLATES_MAX);
		return NULL;
	}
	k8s_templates_t *ts = calloc(1, sizeof(*ts));
	if (ts == NULL || (count > 0 && (ts->tpl = calloc(count, sizeof(*ts->tpl))) == NULL)) {
		free(ts);
		k8s_perr(&e, "no memory");
		return NULL;
	}
	for (size_t i = 0; i < count; i++) {
		k8s_tokens_t tk;
		char msg[512];
		k8s_perr_t sub = { msg, sizeof(msg) };
		int ret = k8s_tokens_split(values[i], &tk, msg, sizeof(msg));
		ts->count = i + 1;
		if (ret == 0) {
			ret = template_parse(&ts->tpl[i], &tk, zones, zone_count, &sub);
			k8s_tokens_free(&tk);
		}
		if (ret != 0) {
			k8s_perr(&e, "template '%s': %s", values[i], msg);
			k8s_templates_free(ts);
			return NULL;
		}
		for (size_t z = 0; z < ts->tpl[i].zone_count; z++) {
			ts->zones[ts->zone_count++] = ts->tpl[i].zones[z];
		}
	}
	return ts;
}

size_t k8s_templates_count(const k8s_templates_t *ts)
{
	return (ts != NULL) ? ts->count : 0;
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

static int render(const k8s_template_match_t *m, const k8s_gotpl_t *g, char *out, size_t max,
                  size_t *len)
{
	size_t n = 0;
	out[0] = '\0';
	unsigned groups = (m->re != NULL) ? k8s_regex_groups(m->re) : 0;
	for (size_t i = 0; i < g->count; i++) {
		const k8s_gotpl_part_t *p = &g->parts[i];
		const char *s = NULL;
		size_t sl = 0;
		char buf[64];
		int group = -1;
		switch (p->kind) {
		case K8S_GOTPL_TEXT:   s = p->text; sl = p->len; break;
		case K8S_GOTPL_NAME:   s = m->name; sl = m->name_len; break;
		case K8S_GOTPL_ZONE: {
			char zt[K8S_NAME_TEXT_MAX];
			size_t zl = k8s_name_to_text(m->zone, zt, sizeof(zt));
			if (!append(out, &n, max, zt, zl)) {
				return KNOT_ESPACE;
			}
			continue;
		}
		case K8S_GOTPL_CLASS:  s = k8s_rrtext_class_name(m->qclass); sl = strlen(s); break;
		case K8S_GOTPL_TYPE:   s = type_text(m->qtype, buf, sizeof(buf)); sl = strlen(s); break;
		case K8S_GOTPL_REMOTE: s = m->remote ? m->remote : ""; sl = strlen(s); break;
		case K8S_GOTPL_MATCH_INDEX:
			if (p->index > groups) {
				return KNOT_ERANGE;  // Go: "index out of range".
			}
			group = p->index;
			break;
		case K8S_GOTPL_GROUP:
		case K8S_GOTPL_GROUP_INDEX: {
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
				s = (p->kind == K8S_GOTPL_GROUP) ? "<no value>" : "";
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


/*! \brief At load: the record's type, rendered with stand-in values, is one we read. */
static int check_rendered(const k8s_template_t *t, const k8s_gotpl_t *g, k8s_perr_t *e)
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
	int ret = k8s_rrtext_parse(text, len, NULL, NULL, NULL, &rr);
	if (ret == KNOT_ENOTSUP) {
		return k8s_perr(e, "records of type %u are not supported (A, AAAA, CNAME, DNAME, NS, PTR, "
		            "MX, SRV, TXT, SOA)", rr.type);
	}
	return 0;
}

int k8s_template_rr(const k8s_template_match_t *m, k8s_template_section_t section, size_t i,
                    knot_mm_t *mm, k8s_rrtext_map_t value_map, void *map_ctx, k8s_template_rr_t *rr)
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
	return k8s_rrtext_parse(text, len, value_map, map_ctx, mm, rr);
}
