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
#include <string.h>

#include "rewrite/dnstext.h"
#include "rewrite/rrtext.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int k8s_rrtext_class(const char *s, uint16_t *out)
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

const char *k8s_rrtext_class_name(uint16_t c)
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

/*! \brief A name in the rdata, mapped by the response rules first. */
static int rdata_name(lex_t *l, k8s_rrtext_map_t map, void *ctx, uint8_t *out, size_t *pos, size_t max)
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
int k8s_rrtext_parse(const char *text, size_t len, k8s_rrtext_map_t map, void *ctx,
                     knot_mm_t *mm, k8s_rrtext_t *rr)
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
		} else if (!have_class && k8s_rrtext_class(word, &cls) == 0) {
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
