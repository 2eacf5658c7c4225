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

#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/jsonstrict.h"

#ifdef K8S_JSON_STRICT_REFUSES_UTF8
/*! \brief True if \a text, with every byte above 0x7f read as 'x', is strict JSON. */
static bool strict_as_ascii(struct json_tokener *tok, const char *text, int len)
{
	char *copy = malloc(len > 0 ? (size_t)len : 1);
	if (copy == NULL) {
		return false;
	}
	for (int i = 0; i < len; i++) {
		copy[i] = ((unsigned char)text[i] > 0x7f) ? 'x' : text[i];
	}
	json_tokener_reset(tok);
	json_object *val = json_tokener_parse_ex(tok, copy, len);
	free(copy);
	json_object_put(val);
	return val != NULL;
}

static bool has_high_byte(const char *text, int len)
{
	for (int i = 0; i < len; i++) {
		if ((unsigned char)text[i] > 0x7f) {
			return true;
		}
	}
	return false;
}
#endif

json_object *k8s_json_tokener_parse(struct json_tokener *tok, const char *text, int len)
{
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *val = json_tokener_parse_ex(tok, text, len);
#ifdef K8S_JSON_STRICT_REFUSES_UTF8
	if (val == NULL && json_tokener_get_error(tok) == json_tokener_error_parse_string &&
	    has_high_byte(text, len)) {
		bool strict = strict_as_ascii(tok, text, len);
		json_tokener_reset(tok);
		// Not strict JSON: parsed strictly again, for the error and the end it leaves in tok.
		json_tokener_set_flags(tok, strict ? 0 : JSON_TOKENER_STRICT);
		val = json_tokener_parse_ex(tok, text, len);
	}
#endif
	return val;
}


/*! Skips a string whose opening quote is text[i - 1]; returns the index past its closing quote. */
static size_t string_skip(const char *text, size_t len, size_t i)
{
	while (i < len) {
		const char *q = memchr(text + i, '"', len - i);
		if (q == NULL) {
			return len;
		}
		// The quote ends the string unless an odd number of backslashes precedes it.
		size_t end = (size_t)(q - text), slashes = 0;
		while (end - slashes > i && text[end - slashes - 1] == '\\') {
			slashes++;
		}
		i = end + 1;
		if (slashes % 2 == 0) {
			return i;
		}
	}
	return len;
}

int k8s_json_bounded(const char *text, size_t len, char *err, size_t errlen)
{
	// Whether the container at each depth is an object (a key comes after '{' and ',').
	bool in_object[K8S_JSON_DEPTH + 1] = { false };
	size_t depth = 0, values = 0, objects = 0;
	bool key_next = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		switch (c) {
		case ' ': case '\t': case '\r': case '\n': case ':':
			continue;
		case ',':
			key_next = in_object[depth];
			continue;
		case '}': case ']':
			depth -= (depth > 0);
			key_next = false;
			continue;
		case '"':
			i = string_skip(text, len, i + 1) - 1;
			values += !key_next;
			key_next = false;
			break;
		case '{': case '[':
			if (depth == K8S_JSON_DEPTH) {
				return KNOT_EOK; // json-c refuses it there, before it allocates more.
			}
			in_object[++depth] = (c == '{');
			objects += (c == '{');
			key_next = (c == '{');
			values++;
			break;
		default:
			// A number or literal: one value up to its delimiter.
			while (i + 1 < len && strchr(",:]} \t\r\n\"{[", text[i + 1]) == NULL) {
				i++;
			}
			values++;
			key_next = false;
			break;
		}
		if (values > K8S_JSON_VALUES_MAX) {
			set_err(err, errlen, "more than %u json values", K8S_JSON_VALUES_MAX);
			return KNOT_ESPACE;
		}
		if (objects > K8S_JSON_OBJECTS_MAX) {
			set_err(err, errlen, "more than %u json objects", K8S_JSON_OBJECTS_MAX);
			return KNOT_ESPACE;
		}
	}
	return KNOT_EOK;
}

int k8s_json_parse(const char *text, size_t len, json_object **root, char *err, size_t errlen)
{
	if (len > INT_MAX) {
		set_err(err, errlen, "json text too large");
		return KNOT_EMALF;
	}
	// json-c spends 64 to 800 bytes on each value: its tree is bounded before it is built.
	int ret = k8s_json_bounded(text, len, err, errlen);
	if (ret != KNOT_EOK) {
		return ret;
	}
	struct json_tokener *tok = json_tokener_new_ex(K8S_JSON_DEPTH);
	if (tok == NULL) {
		return KNOT_ENOMEM;
	}
	json_object *val = k8s_json_tokener_parse(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);

	if (val == NULL) {
		set_err(err, errlen, "malformed json (%s)", (jerr == json_tokener_continue) ?
		        "truncated" : json_tokener_error_desc(jerr));
		return KNOT_EMALF;
	}
	for (size_t i = end; i < len; i++) {
		char c = text[i];
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
			json_object_put(val);
			set_err(err, errlen, "malformed json (trailing data)");
			return KNOT_EMALF;
		}
	}
	*root = val;
	return KNOT_EOK;
}
