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
 * The list splitter is a lexer, not a parser: it follows the top-level object
 * key by key, and inside a value it only tracks strings (with escapes) and
 * bracket depth to find where the value ends. Each "items" element is then
 * parsed for real by the object decoder, which rejects what is not JSON.
 */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "api/jsonsplit.h"
#include "lib/jsonscan.h"

/*! ListMeta holds a resourceVersion and a continue token: small. */
#define LIST_META_MAX (64 * 1024)

/*! Buffer memory kept between items; a larger one is freed after its item. */
#define BUF_KEEP (1024 * 1024)

/*! Lexer states (s->state). */
enum {
	LS_START = 0,    /*!< Before the document's opening brace. */
	LS_KEY_OR_END,   /*!< After '{': a key or '}'. */
	LS_KEY_START,    /*!< After ',': a key. */
	LS_KEY,          /*!< Inside a top-level key. */
	LS_KEY_ESC,      /*!< After a backslash inside a top-level key. */
	LS_COLON,        /*!< After a top-level key. */
	LS_VALUE,        /*!< Before a top-level value. */
	LS_VALUE_NEXT,   /*!< After a top-level value: ',' or '}'. */
	LS_ITEM_OR_END,  /*!< After the '[' of "items": an element or ']'. */
	LS_ITEM,         /*!< After ',' in "items": an element. */
	LS_ITEM_NEXT,    /*!< After an element: ',' or ']'. */
	LS_SCAN,         /*!< Inside a value, looking for its end. */
	LS_DONE,         /*!< After the document's closing brace. */
};

/*! Lexer flags (s->flags). */
enum {
	F_STRING   = 1 << 0,  /*!< Inside a string of the scanned value. */
	F_ESCAPE   = 1 << 1,  /*!< After a backslash in that string. */
	F_SCALAR   = 1 << 2,  /*!< The scanned value is a number or literal: a delimiter ends it. */
	F_OVERSIZE = 1 << 3,  /*!< The scanned item outgrew max_item: not buffered. */
	F_KEY_ODD  = 1 << 4,  /*!< The key had an escape or was too long: no key we know. */
	F_ITEM     = 1 << 5,  /*!< The scanned value is an element of "items". */
	F_META     = 1 << 6,  /*!< The scanned value is "metadata". */
	F_NULL     = 1 << 7,  /*!< The scanned value must be null ("items", "metadata"). */
};

/*! Bytes that end a run inside a string: its quote, or a backslash. */
static const bool STRING_STOP[256] = { ['"'] = true, ['\\'] = true };

/*! Bytes that end a run outside strings, within a value: a string's start, nesting. */
static const bool VALUE_STOP[256] = {
	['"'] = true, ['{'] = true, ['['] = true, ['}'] = true, [']'] = true,
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static bool is_delim(char c)
{
	return c == ',' || c == '}' || c == ']' || is_ws(c);
}

void k8s_listsplit_init(k8s_listsplit_t *s, size_t max_item)
{
	memset(s, 0, sizeof(*s));
	s->max_item = max_item;
}

void k8s_listsplit_deinit(k8s_listsplit_t *s)
{
	k8s_buf_free(&s->buf);
	free(s->cont);
	s->cont = NULL;
	s->rv[0] = '\0';
}

/*! Reads resourceVersion and continue from the captured ListMeta. */
static int meta_parse(k8s_listsplit_t *s, const char *text, size_t len)
{
	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	int ret = k8s_jtape_scan(&tape, text, len, NULL, 0);
	k8s_jv_t meta = k8s_jtape_root(&tape);
	if (ret != KNOT_ENOMEM && (ret != KNOT_EOK || !jv_is(meta, K8S_JOBJECT))) {
		ret = KNOT_EMALF;
	}
	k8s_str_t rv = jv_str(meta, "resourceVersion");
	if (ret == KNOT_EOK && rv.ptr != NULL) {
		if (k8s_rv_valid(rv.ptr, rv.len)) {
			memcpy(s->rv, rv.ptr, rv.len);
			s->rv[rv.len] = '\0';
		} else {
			ret = KNOT_EMALF;
		}
	}
	k8s_str_t cont = jv_str(meta, "continue");
	if (ret == KNOT_EOK && cont.len > 0) {
		char *copy = strndup(cont.ptr, cont.len);
		if (copy == NULL) {
			ret = KNOT_ENOMEM;
		} else {
			free(s->cont);
			s->cont = copy;
		}
	}
	k8s_jtape_deinit(&tape);
	return ret;
}

/*! Starts scanning a value whose first byte is \a c; \a what is F_ITEM, F_META, F_NULL or 0. */
static int scan_begin(k8s_listsplit_t *s, char c, int what)
{
	s->flags = what;
	s->depth = 0;
	s->key_len = 0;
	if (c == '{' || c == '[') {
		s->depth = 1;
	} else if (c == '"') {
		s->flags |= F_STRING;
	} else if (c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) {
		s->flags |= F_SCALAR;
	} else {
		return KNOT_EMALF;
	}
	if ((what & F_NULL) && c != 'n') {
		return KNOT_EMALF;
	}
	s->state = LS_SCAN;
	return KNOT_EOK;
}

/*! Whether the value is still being buffered (items within max_item, metadata). */
static bool capturing(const k8s_listsplit_t *s)
{
	return (s->flags & (F_ITEM | F_META)) && !(s->flags & F_OVERSIZE);
}

static size_t capture_limit(const k8s_listsplit_t *s)
{
	return (s->flags & F_META) ? LIST_META_MAX : s->max_item;
}

/*! Gives the first \a max bytes of a skipped value (buffered ones, then \a data) to on_skip. */
static int skip_head(k8s_buf_t *buf, size_t max, const char *data, size_t len,
                     k8s_split_cb on_skip, void *ctx)
{
	if (on_skip == NULL) {
		return KNOT_EOK;
	}
	if (buf->len == 0) {
		return on_skip(ctx, data, (len < max) ? len : max);
	}
	size_t room = (buf->len < max) ? max - buf->len : 0;
	int ret = k8s_buf_append(buf, data, (len < room) ? len : room, max);
	if (ret != KNOT_EOK) {
		return ret;
	}
	return on_skip(ctx, buf->data, (buf->len < max) ? buf->len : max);
}

/*! Buffers bytes of the value; an item that outgrows max_item is dropped and only scanned. */
static int capture(k8s_listsplit_t *s, const char *data, size_t len)
{
	int ret = k8s_buf_append(&s->buf, data, len, capture_limit(s));
	if (ret == KNOT_ESPACE) {
		if (s->flags & F_META) {
			return KNOT_EMALF;
		}
		s->flags |= F_OVERSIZE;
		ret = skip_head(&s->buf, s->max_item, data, len, s->on_skip, s->skip_ctx);
		k8s_buf_reset(&s->buf, BUF_KEEP);
	}
	return ret;
}

/*! The scanned value ended; \a text is its bytes when captured. */
static int scan_end(k8s_listsplit_t *s, const char *text, size_t len,
                    k8s_split_cb cb, void *ctx)
{
	int flags = s->flags;
	s->flags = 0;
	s->state = (flags & F_ITEM) ? LS_ITEM_NEXT : LS_VALUE_NEXT;

	int ret = KNOT_EOK;
	if (flags & F_NULL) {
		if (s->key_len != 4 || memcmp(s->key, "null", 4) != 0) {
			ret = KNOT_EMALF;
		}
	} else if (flags & F_META) {
		ret = meta_parse(s, text, len);
	} else if (flags & F_ITEM) {
		if (flags & F_OVERSIZE) {
			s->skipped++; // on_skip had its head when it outgrew the buffer.
		} else if (len > s->max_item) {
			s->skipped++;
			ret = skip_head(&s->buf, s->max_item, text, len, s->on_skip, s->skip_ctx);
		} else {
			ret = cb(ctx, text, len);
		}
	}
	k8s_buf_reset(&s->buf, BUF_KEEP);
	s->key_len = 0;
	return ret;
}

/*!
 * Advances through a value from data[*pos]; returns with *pos past its last
 * byte and *ended set, or at len. A scalar ends before its delimiter.
 */
static void scan(k8s_listsplit_t *s, const char *data, size_t len, size_t *pos, bool *ended)
{
	size_t i = *pos;
	*ended = false;
	if (s->flags & F_SCALAR) {
		while (i < len && !is_delim(data[i])) {
			// The start of a literal is kept to check that "items" is null.
			if (s->key_len < sizeof(s->key)) {
				s->key[s->key_len++] = data[i];
			}
			i++;
		}
		*ended = (i < len);
		*pos = i;
		return;
	}
	// Locals, not s's fields, in the loop: a byte of data may alias them for the compiler.
	int flags = s->flags;
	int depth = s->depth;
	if ((flags & F_ESCAPE) && i < len) {
		flags &= ~F_ESCAPE;  // the previous piece ended with the backslash: skip what it escapes
		i++;
	}
	while (i < len) {
		if (flags & F_STRING) {
			// Most bytes of a list are inside strings: only a quote or a backslash matters.
			while (i < len && !STRING_STOP[(uint8_t)data[i]]) {
				i++;
			}
			if (i == len) {
				break;
			}
			char c = data[i++];
			if (c == '\\') {
				if (i == len) {
					flags |= F_ESCAPE;
					break;
				}
				i++;  // the escaped byte
				continue;
			}
			flags &= ~F_STRING;
			if (depth == 0) {
				*ended = true;
				break;
			}
			continue;
		}
		while (i < len && !VALUE_STOP[(uint8_t)data[i]]) {
			i++;
		}
		if (i == len) {
			break;
		}
		char c = data[i++];
		if (c == '"') {
			flags |= F_STRING;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (--depth == 0) {  // '}' or ']'
			*ended = true;
			break;
		}
	}
	s->flags = flags;
	s->depth = depth;
	*pos = i;
}

/*! Handles one byte outside of scanned values; may start a scan. */
static int step(k8s_listsplit_t *s, char c)
{
	switch (s->state) {
	case LS_START:
		if (c == '{') {
			s->state = LS_KEY_OR_END;
			return KNOT_EOK;
		}
		break;
	case LS_KEY_OR_END:
	case LS_KEY_START:
		if (c == '"') {
			s->state = LS_KEY;
			s->key_len = 0;
			s->flags = 0;
			return KNOT_EOK;
		}
		if (c == '}' && s->state == LS_KEY_OR_END) {
			s->state = LS_DONE;
			s->done = true;
			return KNOT_EOK;
		}
		break;
	case LS_KEY:
		if (c == '"') {
			s->state = LS_COLON;
		} else if (c == '\\') {
			s->flags |= F_KEY_ODD;
			s->state = LS_KEY_ESC;
		} else if (s->key_len < sizeof(s->key)) {
			s->key[s->key_len++] = c;
		} else {
			s->flags |= F_KEY_ODD;
		}
		return KNOT_EOK;
	case LS_KEY_ESC:
		s->state = LS_KEY;
		return KNOT_EOK;
	case LS_COLON:
		if (c == ':') {
			s->state = LS_VALUE;
			return KNOT_EOK;
		}
		break;
	case LS_VALUE: {
		bool known = !(s->flags & F_KEY_ODD);
		bool items = known && s->key_len == 5 && memcmp(s->key, "items", 5) == 0;
		bool meta = known && s->key_len == 8 && memcmp(s->key, "metadata", 8) == 0;
		if (items && c == '[') {
			s->state = LS_ITEM_OR_END;
			return KNOT_EOK;
		}
		// "items" is an array or null, "metadata" an object or null.
		if (items || (meta && c != '{')) {
			return scan_begin(s, c, F_NULL);
		}
		return scan_begin(s, c, meta ? F_META : 0);
	}
	case LS_VALUE_NEXT:
		if (c == ',') {
			s->state = LS_KEY_START;
			return KNOT_EOK;
		}
		if (c == '}') {
			s->state = LS_DONE;
			s->done = true;
			return KNOT_EOK;
		}
		break;
	case LS_ITEM_OR_END:
	case LS_ITEM:
		if (c == ']' && s->state == LS_ITEM_OR_END) {
			s->state = LS_VALUE_NEXT;
			return KNOT_EOK;
		}
		return scan_begin(s, c, F_ITEM);
	case LS_ITEM_NEXT:
		if (c == ',') {
			s->state = LS_ITEM;
			return KNOT_EOK;
		}
		if (c == ']') {
			s->state = LS_VALUE_NEXT;
			return KNOT_EOK;
		}
		break;
	default:
		break;
	}
	return KNOT_EMALF;
}

int k8s_listsplit_feed(k8s_listsplit_t *s, const char *data, size_t len,
                       k8s_split_cb cb, void *ctx)
{
	// Bytes of the current value start at data[mark] when it is being captured.
	size_t mark = 0;
	size_t i = 0;
	while (i < len) {
		if (s->state != LS_SCAN) {
			char c = data[i];
			bool in_key = (s->state == LS_KEY || s->state == LS_KEY_ESC);
			if (is_ws(c) && !in_key) {
				i++;
				continue;
			}
			int ret = step(s, c);
			if (ret != KNOT_EOK) {
				return ret;
			}
			if (s->state == LS_SCAN) {
				mark = i;
				// A scalar has no opening byte: scan() reads it from its first one.
				if (s->flags & F_SCALAR) {
					continue;
				}
			}
			i++;
			continue;
		}

		bool ended = false;
		scan(s, data, len, &i, &ended);
		if (!ended) {
			break;
		}
		const char *text = data + mark;
		size_t text_len = i - mark;
		if (capturing(s) && s->buf.len > 0) {
			// The value began in an earlier piece: complete it in the buffer.
			int ret = capture(s, text, text_len);
			if (ret != KNOT_EOK) {
				return ret;
			}
			text = s->buf.data;
			text_len = s->buf.len;
		}
		int ret = scan_end(s, text, text_len, cb, ctx);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}

	if (s->state == LS_SCAN && capturing(s) && i > mark) {
		int ret = capture(s, data + mark, i - mark);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}
	return KNOT_EOK;
}

void k8s_linesplit_init(k8s_linesplit_t *s, size_t max_line)
{
	memset(s, 0, sizeof(*s));
	s->max_line = max_line;
}

void k8s_linesplit_deinit(k8s_linesplit_t *s)
{
	k8s_buf_free(&s->buf);
}

/*! A line without its newline; a trailing CR is dropped, empty lines ignored. */
static int line_emit(k8s_linesplit_t *s, const char *text, size_t len,
                     k8s_split_cb cb, void *ctx)
{
	if (len > 0 && text[len - 1] == '\r') {
		len--;
	}
	if (len == 0) {
		return KNOT_EOK;
	}
	if (len > s->max_line) {
		s->skipped++;
		return (s->on_skip != NULL) ? s->on_skip(s->skip_ctx, text, s->max_line) : KNOT_EOK;
	}
	return cb(ctx, text, len);
}

int k8s_linesplit_feed(k8s_linesplit_t *s, const char *data, size_t len,
                       k8s_split_cb cb, void *ctx)
{
	// Room for a line of max_line bytes and its CR.
	size_t limit = (s->max_line < SIZE_MAX) ? s->max_line + 1 : SIZE_MAX;

	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t piece = (nl != NULL) ? (size_t)(nl - data) : len;
		size_t used = (nl != NULL) ? piece + 1 : len;
		int ret = KNOT_EOK;

		if (s->skipping) {
			s->skipping = (nl == NULL);
		} else if (nl != NULL && s->buf.len == 0) {
			ret = line_emit(s, data, piece, cb, ctx);
		} else {
			ret = k8s_buf_append(&s->buf, data, piece, limit);
			if (ret == KNOT_ESPACE) {
				// Too long already: drop it and the rest up to its newline.
				s->skipped++;
				s->skipping = (nl == NULL);
				ret = skip_head(&s->buf, s->max_line, data, piece, s->on_skip, s->skip_ctx);
				k8s_buf_reset(&s->buf, BUF_KEEP);
			} else if (ret == KNOT_EOK && nl != NULL) {
				ret = line_emit(s, s->buf.data, s->buf.len, cb, ctx);
				k8s_buf_reset(&s->buf, BUF_KEEP);
			}
		}
		if (ret != KNOT_EOK) {
			return ret;
		}
		data += used;
		len -= used;
	}
	return KNOT_EOK;
}

size_t k8s_linesplit_pending(const k8s_linesplit_t *s)
{
	// Inside an oversize line, at least more than max_line bytes are unterminated.
	if (s->skipping) {
		return (s->max_line < SIZE_MAX) ? s->max_line + 1 : SIZE_MAX;
	}
	return s->buf.len;
}

/*! Roles of the containers k8s_json_ident() looks into. */
enum {
	R_OTHER = 0,
	R_EVENT,     /*!< A watch event: "type" and "object". */
	R_OBJECT,    /*!< An API object: "metadata". */
	R_METADATA,  /*!< Its metadata: "namespace", "name", "resourceVersion". */
};

/*! Depth of metadata inside an event; deeper containers only count. */
#define IDENT_DEPTH 3

/*! Copies a string value that is a plain DNS name or resourceVersion; else leaves \a out empty. */
static void ident_copy(char *out, size_t size, const char *val, size_t len)
{
	out[0] = '\0';
	if (len >= size) {
		return;
	}
	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)val[i];
		if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '/') {
			return;
		}
	}
	memcpy(out, val, len);
	out[len] = '\0';
}

int k8s_json_ident(const char *text, size_t len, bool event, k8s_json_ident_t *id)
{
	memset(id, 0, sizeof(*id));
	uint8_t role[IDENT_DEPTH + 1] = { R_OTHER };
	bool is_object[IDENT_DEPTH + 1] = { false };
	size_t depth = 0;
	bool key_next = false;
	const char *key = NULL;
	size_t key_len = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		bool here = depth <= IDENT_DEPTH;
		switch (c) {
		case '{':
		case '[': {
			uint8_t r = R_OTHER;
			if (c == '{' && depth == 0) {
				r = event ? R_EVENT : R_OBJECT;
			} else if (c == '{' && here && key != NULL) {
				if (role[depth] == R_EVENT && key_len == 6 && memcmp(key, "object", 6) == 0) {
					r = R_OBJECT;
				} else if (role[depth] == R_OBJECT && key_len == 8 &&
				           memcmp(key, "metadata", 8) == 0) {
					r = R_METADATA;
				}
			}
			depth++;
			if (depth <= IDENT_DEPTH) {
				role[depth] = r;
				is_object[depth] = (c == '{');
			}
			key_next = (c == '{');
			key = NULL;
			break;
		}
		case '}':
		case ']':
			if (depth == 0) {
				return KNOT_EMALF;
			}
			if (here && role[depth] == R_METADATA) {
				// Metadata comes before spec and status (Go's field order, sorted keys).
				return (id->name[0] != '\0') ? KNOT_EOK : KNOT_ENOENT;
			}
			if (--depth == 0) {
				return (id->name[0] != '\0') ? KNOT_EOK : KNOT_ENOENT;
			}
			key_next = false;
			break;
		case ',':
			key_next = here && is_object[depth];
			key = NULL;
			break;
		case '"': {
			size_t start = i + 1, end = start;
			bool escaped = false;
			while (end < len && text[end] != '"') {
				if (text[end] == '\\') {
					escaped = true;
					end++;
				}
				end++;
			}
			if (end >= len) {
				i = len;
				break;
			}
			i = end;
			if (!here) {
				break;
			}
			if (key_next) {
				// An escaped key is none of ours (only "\u0022" could spell one: never sent).
				key = escaped ? "" : text + start;
				key_len = escaped ? 0 : end - start;
				key_next = false;
				break;
			}
			if (key == NULL || escaped) {
				break;
			}
			const char *v = text + start;
			size_t vlen = end - start;
			if (role[depth] == R_EVENT && key_len == 4 && memcmp(key, "type", 4) == 0) {
				ident_copy(id->type, sizeof(id->type), v, vlen);
			} else if (role[depth] == R_METADATA && key_len == 4 && memcmp(key, "name", 4) == 0) {
				ident_copy(id->name, sizeof(id->name), v, vlen);
			} else if (role[depth] == R_METADATA && key_len == 9 &&
			           memcmp(key, "namespace", 9) == 0) {
				ident_copy(id->ns, sizeof(id->ns), v, vlen);
			} else if (role[depth] == R_METADATA && key_len == 15 &&
			           memcmp(key, "resourceVersion", 15) == 0) {
				ident_copy(id->rv, sizeof(id->rv), v, vlen);
			}
			key = NULL;
			break;
		}
		default:
			break;
		}
	}
	// The head was cut inside the object: what it named so far.
	return (id->name[0] != '\0') ? KNOT_EOK : KNOT_ENOENT;
}
