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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/dnstext.h"
#include "rewrite/rewrite_priv.h"

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
static int name_rule(const rule_t *r, const k8s_regex_span_t *spans, const char *name,
                     size_t len, char *out, char *tmp, size_t max, size_t *out_len)
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
	case M_REGEX:
		// Matched by the caller (spans).
		*out_len = expand(r->re, spans, name, r->to, out, tmp, max);
		return 1;
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
			// The match first: the names' buffers only for a rule that rewrites.
			k8s_regex_span_t spans[K8S_REGEX_GROUPS_MAX + 1];
			bool hit = (r->match == M_REGEX)
			           ? k8s_regex_match(r->re, s, out->name, out->name_len, spans) == 1
			           : name_matches(r, s, out->name, out->name_len);
			if (!hit) {
				break;
			}
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
			if (!name_rule(r, spans, out->name, out->name_len, next, tmp, K8S_NAME_TEXT_MAX,
			               &next_len)) {
				break;
			}
			uint8_t wire[256];
			if (next_len == SIZE_MAX || k8s_name_from_text(next, next_len, wire) == 0) {
				out->invalid = true;
				return true;
			}
			bool room = true;
			if (r->autoback) {
				// Maps the name asked after this rule back to the one before it.
				room &= add_left(out, &r->auto_name, next, out->name);
				room &= add_left(out, &r->auto_value, next, out->name);
			}
			for (size_t k = 0; k < r->resp_count; k++) {
				room &= add_left(out, &r->resp[k], NULL, NULL);
			}
			if (!room) {
				out->invalid = true;
				return true;
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
				if (!add_left(out, &r->resp[0], NULL, NULL)) {
					out->invalid = true;
					return true;
				}
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
