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

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/jsonscan.h"
#include "lib/jsonstrict.h"

/*! A tape that grew past these for one large text is given back before the next. */
#define KEEP_TOKENS (64u * 1024)
#define KEEP_ARENA  (256u * 1024)

/*! Bytes of a string that need a second look: the quote, the backslash, control bytes. */
static const bool special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

typedef struct {
	k8s_jtape_t *t;
	const char *s;
	size_t len, pos;
	unsigned depth;
	size_t values;      /*!< As k8s_json_bounded() counts them (keys not counted). */
	size_t objects;
	const char *why;    /*!< Set with the first error. */
} scan_t;

void k8s_jtape_init(k8s_jtape_t *t)
{
	memset(t, 0, sizeof(*t));
}

void k8s_jtape_deinit(k8s_jtape_t *t)
{
	free(t->toks);
	free(t->arena);
	k8s_jtape_init(t);
}

static int fail(scan_t *sc, const char *why)
{
	if (sc->why == NULL) {
		sc->why = why;
	}
	return KNOT_EMALF;
}

static void skip_ws_run(scan_t *sc)
{
	// A local position: a store to sc->pos may alias the text's bytes for the compiler.
	size_t pos = sc->pos;
	while (pos < sc->len) {
		char c = sc->s[pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			break;
		}
		pos++;
	}
	sc->pos = pos;
}

/*! Skips whitespace; the API's JSON has none between tokens, so that is checked inline. */
static inline void skip_ws(scan_t *sc)
{
	if (sc->pos < sc->len && (unsigned char)sc->s[sc->pos] > ' ') {
		return;
	}
	skip_ws_run(sc);
}

static int token(scan_t *sc, k8s_jtype_t type, uint32_t *at)
{
	k8s_jtape_t *t = sc->t;
	if (t->count == t->cap) {
		// Bounded by K8S_JSON_VALUES_MAX values and as many keys: no overflow of uint32_t.
		uint32_t cap = (t->cap > 0) ? 2 * t->cap : 256;
		k8s_jtok_t *toks = realloc(t->toks, (size_t)cap * sizeof(*toks));
		if (toks == NULL) {
			return KNOT_ENOMEM;
		}
		t->toks = toks;
		t->cap = cap;
	}
	t->toks[t->count] = (k8s_jtok_t){ .type = type };
	*at = t->count++;
	return KNOT_EOK;
}

static int arena_put(k8s_jtape_t *t, const char *bytes, size_t n)
{
	if (n == 0) {  // Nothing to copy, and no arena yet perhaps (NULL + 0 is undefined).
		return KNOT_EOK;
	}
	if (n > t->arena_cap - t->arena_len) {
		size_t cap = (t->arena_cap > 0) ? t->arena_cap : 1024;
		while (cap - t->arena_len < n) {
			cap *= 2;
		}
		char *arena = realloc(t->arena, cap);
		if (arena == NULL) {
			return KNOT_ENOMEM;
		}
		t->arena = arena;
		t->arena_cap = cap;
	}
	memcpy(t->arena + t->arena_len, bytes, n);
	t->arena_len += n;
	return KNOT_EOK;
}

static int hex4(scan_t *sc, size_t at, unsigned *out)
{
	if (sc->len - at < 4) {
		return fail(sc, "invalid string escape");
	}
	unsigned v = 0;
	for (size_t i = at; i < at + 4; i++) {
		char c = sc->s[i];
		unsigned d = (c >= '0' && c <= '9') ? (unsigned)(c - '0') :
		             (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10) :
		             (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10) : 16;
		if (d == 16) {
			return fail(sc, "invalid string escape");
		}
		v = v * 16 + d;
	}
	*out = v;
	return KNOT_EOK;
}

static int put_utf8(k8s_jtape_t *t, unsigned cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return arena_put(t, b, n);
}

/*! The rest of a string with an escape, from \a start (its first byte) into the arena. */
static int string_unescape(scan_t *sc, k8s_jtok_t *tok, size_t start)
{
	k8s_jtape_t *t = sc->t;
	size_t from = t->arena_len;
	int ret = arena_put(t, sc->s + start, sc->pos - start);
	while (ret == KNOT_EOK) {
		if (sc->pos >= sc->len) {
			return fail(sc, "unterminated string");
		}
		unsigned char c = (unsigned char)sc->s[sc->pos];
		if (c == '"') {
			sc->pos++;
			break;
		} else if (c < 0x20) {
			return fail(sc, "control character in a string");
		} else if (c != '\\') {
			size_t run = sc->pos;
			while (run < sc->len && !special[(unsigned char)sc->s[run]]) {
				run++;
			}
			ret = arena_put(t, sc->s + sc->pos, run - sc->pos);
			sc->pos = run;
			continue;
		}
		if (sc->pos + 1 >= sc->len) {
			return fail(sc, "unterminated string");
		}
		char e = sc->s[sc->pos + 1];
		static const char from_esc[] = "\"\\/bfnrt", to_esc[] = "\"\\/\b\f\n\r\t";
		const char *found = (e != '\0') ? strchr(from_esc, e) : NULL;
		if (found != NULL) {
			ret = arena_put(t, &to_esc[found - from_esc], 1);
			sc->pos += 2;
			continue;
		}
		if (e != 'u') {
			return fail(sc, "invalid string escape");
		}
		unsigned cp;
		if (hex4(sc, sc->pos + 2, &cp) != KNOT_EOK) {
			return KNOT_EMALF;
		}
		sc->pos += 6;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			// A pair's high half: the low half must follow at once, as json-c reads it.
			unsigned low;
			if (sc->len - sc->pos >= 6 && sc->s[sc->pos] == '\\' && sc->s[sc->pos + 1] == 'u' &&
			    hex4(sc, sc->pos + 2, &low) == KNOT_EOK && low >= 0xdc00 && low <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
				sc->pos += 6;
			} else {
				sc->why = NULL;  // hex4() above may have set it: not an error here
				cp = 0xfffd;
			}
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			cp = 0xfffd;
		}
		ret = put_utf8(t, cp);
	}
	if (ret != KNOT_EOK) {
		return ret;
	}
	size_t n = t->arena_len - from;
	if (n > UINT32_MAX) {
		return fail(sc, "string too long");
	}
	tok->escaped = true;
	tok->off = from;
	tok->len = (uint32_t)n;
	return KNOT_EOK;
}

/*! A string; sc->s[sc->pos] is its opening quote. */
static int string(scan_t *sc, uint32_t *at)
{
	int ret = token(sc, K8S_JSTRING, at);
	if (ret != KNOT_EOK) {
		return ret;
	}
	size_t start = ++sc->pos;
	const unsigned char *s = (const unsigned char *)sc->s;
	size_t pos = start, len = sc->len;  // locals, as in skip_ws()
	while (pos < len && !special[s[pos]]) {
		pos++;
	}
	sc->pos = pos;
	k8s_jtok_t *tok = &sc->t->toks[*at];
	if (sc->pos < sc->len && s[sc->pos] == '"') {
		if (sc->pos - start > UINT32_MAX) {
			return fail(sc, "string too long");
		}
		tok->off = start;
		tok->len = (uint32_t)(sc->pos - start);
		sc->pos++;
		return KNOT_EOK;
	}
	if (sc->pos < sc->len && s[sc->pos] == '\\') {
		return string_unescape(sc, tok, start);
	}
	return fail(sc, (sc->pos < sc->len) ? "control character in a string" : "unterminated string");
}

static bool digit(scan_t *sc)
{
	return sc->pos < sc->len && sc->s[sc->pos] >= '0' && sc->s[sc->pos] <= '9';
}

static int number(scan_t *sc, uint32_t *at)
{
	bool negative = sc->s[sc->pos] == '-';
	sc->pos += negative;
	if (!digit(sc)) {
		return fail(sc, "invalid number");
	}
	// Clamped as json-c clamps (int64, or uint64 read back as INT64_MAX).
	uint64_t magnitude = 0;
	bool over = false;
	if (sc->s[sc->pos] == '0') {
		sc->pos++;
		if (digit(sc)) {
			return fail(sc, "invalid number (leading zero)");
		}
	} else {
		while (digit(sc)) {
			unsigned d = (unsigned)(sc->s[sc->pos++] - '0');
			over = over || magnitude > (UINT64_MAX - d) / 10;
			magnitude = magnitude * 10 + d;
		}
	}
	bool integer = true;
	if (sc->pos < sc->len && sc->s[sc->pos] == '.') {
		sc->pos++;
		if (!digit(sc)) {
			return fail(sc, "invalid number");
		}
		while (digit(sc)) {
			sc->pos++;
		}
		integer = false;
	}
	if (sc->pos < sc->len && (sc->s[sc->pos] == 'e' || sc->s[sc->pos] == 'E')) {
		sc->pos++;
		if (sc->pos < sc->len && (sc->s[sc->pos] == '+' || sc->s[sc->pos] == '-')) {
			sc->pos++;
		}
		if (!digit(sc)) {
			return fail(sc, "invalid number");
		}
		while (digit(sc)) {
			sc->pos++;
		}
		integer = false;
	}
	int ret = token(sc, integer ? K8S_JINT : K8S_JDOUBLE, at);
	if (ret == KNOT_EOK && integer) {
		int64_t v;
		if (negative) {
			v = (over || magnitude > (uint64_t)INT64_MAX) ? INT64_MIN : -(int64_t)magnitude;
		} else {
			v = (over || magnitude > INT64_MAX) ? INT64_MAX : (int64_t)magnitude;
		}
		sc->t->toks[*at].i = v;
	}
	return ret;
}

static int literal(scan_t *sc, const char *word, k8s_jtype_t type, bool truth, uint32_t *at)
{
	size_t n = strlen(word);
	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0) {
		return fail(sc, "invalid literal");
	}
	sc->pos += n;
	int ret = token(sc, type, at);
	if (ret == KNOT_EOK) {
		sc->t->toks[*at].truth = truth;
	}
	return ret;
}

static int value(scan_t *sc);

/*! Counts a value (an object too) against k8s_json_bounded()'s limits. */
static int counted(scan_t *sc, bool object)
{
	sc->values++;
	sc->objects += object;
	return (sc->values > K8S_JSON_VALUES_MAX || sc->objects > K8S_JSON_OBJECTS_MAX)
	       ? KNOT_ESPACE : KNOT_EOK;
}

static int container(scan_t *sc, bool object)
{
	uint32_t at;
	int ret = counted(sc, object);
	if (ret != KNOT_EOK) {
		return ret;
	}
	ret = token(sc, object ? K8S_JOBJECT : K8S_JARRAY, &at);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (++sc->depth > K8S_JSON_DEPTH) {
		return fail(sc, "nesting too deep");
	}
	sc->pos++;
	skip_ws(sc);
	char close = object ? '}' : ']';
	uint32_t children = 0;
	if (sc->pos < sc->len && sc->s[sc->pos] == close) {
		sc->pos++;
	} else {
		while (true) {
			if (object) {
				uint32_t key;
				if (sc->pos >= sc->len || sc->s[sc->pos] != '"') {
					return fail(sc, "quoted key expected");
				}
				if ((ret = string(sc, &key)) != KNOT_EOK) {
					return ret;
				}
				sc->t->toks[key].end = sc->t->count;
				skip_ws(sc);
				if (sc->pos >= sc->len || sc->s[sc->pos] != ':') {
					return fail(sc, "':' expected");
				}
				sc->pos++;
				skip_ws(sc);
			}
			if ((ret = value(sc)) != KNOT_EOK) {
				return ret;
			}
			children++;
			skip_ws(sc);
			if (sc->pos >= sc->len) {
				return fail(sc, "unterminated container");
			}
			char c = sc->s[sc->pos++];
			if (c == close) {
				break;
			}
			if (c != ',') {
				return fail(sc, object ? "',' or '}' expected" : "',' or ']' expected");
			}
			skip_ws(sc);
		}
	}
	sc->depth--;
	sc->t->toks[at].len = children;
	sc->t->toks[at].end = sc->t->count;
	return KNOT_EOK;
}

static int value(scan_t *sc)
{
	if (sc->pos >= sc->len) {
		return fail(sc, "value expected");
	}
	uint32_t at = 0;
	int ret;
	switch (sc->s[sc->pos]) {
	case '{':
		return container(sc, true);
	case '[':
		return container(sc, false);
	default:
		if ((ret = counted(sc, false)) != KNOT_EOK) {
			return ret;
		}
		break;
	}
	switch (sc->s[sc->pos]) {
	case '"':
		ret = string(sc, &at);
		break;
	case 't':
		ret = literal(sc, "true", K8S_JBOOL, true, &at);
		break;
	case 'f':
		ret = literal(sc, "false", K8S_JBOOL, false, &at);
		break;
	case 'n':
		ret = literal(sc, "null", K8S_JNULL, false, &at);
		break;
	default:
		if (sc->s[sc->pos] != '-' && (sc->s[sc->pos] < '0' || sc->s[sc->pos] > '9')) {
			return fail(sc, "unexpected character");
		}
		ret = number(sc, &at);
		break;
	}
	if (ret == KNOT_EOK) {
		sc->t->toks[at].end = at + 1;
	}
	return ret;
}

int k8s_jtape_scan(k8s_jtape_t *t, const char *text, size_t len, char *err, size_t errlen)
{
	if (t->cap > KEEP_TOKENS || t->arena_cap > KEEP_ARENA) {
		k8s_jtape_deinit(t);
	}
	t->text = text;
	t->count = 0;
	t->arena_len = 0;
	if (text == NULL || len > UINT32_MAX) {
		set_err(err, errlen, "json text too large");
		return KNOT_EMALF;
	}
	scan_t sc = { .t = t, .s = text, .len = len };
	skip_ws(&sc);
	int ret = value(&sc);
	if (ret == KNOT_EOK) {
		skip_ws(&sc);
		if (sc.pos < len) {
			ret = fail(&sc, "trailing data");
		}
	}
	// Over a bound is said before anything else wrong, as json-c's tree was bounded first:
	// the scan counts as k8s_json_bounded() does and stops past a bound (a valid text so
	// far: the whole text is over it too); a text it refuses is counted whole.
	if (ret == KNOT_ESPACE || ret == KNOT_EMALF) {
		int bounded = k8s_json_bounded(text, len, err, errlen);
		ret = (bounded != KNOT_EOK) ? bounded : (ret == KNOT_ESPACE) ? KNOT_EMALF : ret;
	}
	if (ret != KNOT_EOK) {
		t->count = 0;
		if (ret == KNOT_EMALF) {
			set_err(err, errlen, "malformed json (%s at byte %zu)", sc.why, sc.pos);
		}
	}
	return ret;
}

/*! Whether \a tok, a key, is the \a len bytes of \a key. */
static bool key_is(const k8s_jtape_t *t, const k8s_jtok_t *tok, const char *key, size_t len)
{
	const char *bytes = (tok->escaped ? t->arena : t->text) + tok->off;
	return tok->len == len && (len == 0 || bytes[0] == key[0]) && memcmp(bytes, key, len) == 0;
}

/*! The value of key \a k if it has \a type, else absent (its index kept, as jv_getn's). */
static k8s_jv_t value_typed(k8s_jv_t k, k8s_jtype_t type)
{
	k8s_jv_t v = jv_value_of(k);
	v.t = (v.t->toks[v.i].type == type) ? v.t : NULL;
	return v;
}

k8s_jv_t jv_getn(k8s_jv_t obj, const char *key, size_t key_len, k8s_jtype_t type)
{
	k8s_jv_t found = { NULL, 0 };
	JV_EACH_KEY(k, obj) {
		// The last of equal keys wins, as json-c keeps it.
		if (key_is(k.t, &k.t->toks[k.i], key, key_len)) {
			found = value_typed(k, type);
		}
	}
	return found;
}

void jv_pick(k8s_jv_t obj, const k8s_jkey_t *keys, size_t count, k8s_jv_t *out)
{
	for (size_t i = 0; i < count; i++) {
		out[i] = (k8s_jv_t){ NULL, 0 };
	}
	JV_EACH_KEY(k, obj) {
		const k8s_jtok_t *tok = &k.t->toks[k.i];
		for (size_t i = 0; i < count; i++) {
			if (key_is(k.t, tok, keys[i].name, keys[i].len)) {
				out[i] = value_typed(k, keys[i].type);
				break;  // the keys asked are distinct
			}
		}
	}
}
