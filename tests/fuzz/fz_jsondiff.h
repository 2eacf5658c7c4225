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
 * The tape (lib/jsonscan.h) against json-c (k8s_json_parse(), which the tape replaced in
 * the decoders): what the tape accepts json-c accepts, with the same values. Shared by
 * fuzz_jsonscan.c and tests/unit/test_jsonscan.c.
 */

#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/jsonscan.h"
#include "lib/jsonstrict.h"

/*! The raw bytes of a string token, an embedded NUL included. */
static inline const char *fz_jstr_bytes(k8s_jv_t v)
{
	const k8s_jtok_t *tok = &v.t->toks[v.i];
	return (tok->escaped ? v.t->arena : v.t->text) + tok->off;
}

static bool fz_json_same(k8s_jv_t v, json_object *j)
{
	const k8s_jtok_t *tok = &v.t->toks[v.i];
	switch (tok->type) {
	case K8S_JNULL:
		return j == NULL;
	case K8S_JBOOL:
		return json_object_is_type(j, json_type_boolean) && json_object_get_boolean(j) == tok->truth;
	case K8S_JINT:
		return json_object_is_type(j, json_type_int) && json_object_get_int64(j) == tok->i;
	case K8S_JDOUBLE:
		return json_object_is_type(j, json_type_double);
	case K8S_JSTRING:
		return json_object_is_type(j, json_type_string) &&
		       (size_t)json_object_get_string_len(j) == tok->len &&
		       memcmp(json_object_get_string(j), fz_jstr_bytes(v), tok->len) == 0;
	case K8S_JARRAY: {
		if (!json_object_is_type(j, json_type_array) || json_object_array_length(j) != tok->len) {
			return false;
		}
		size_t i = 0;
		JV_EACH(elem, v) {
			if (!fz_json_same(elem, json_object_array_get_idx(j, i++))) {
				return false;
			}
		}
		return i == tok->len;
	}
	case K8S_JOBJECT: {
		if (!json_object_is_type(j, json_type_object)) {
			return false;
		}
		// json-c's keys are C strings: one with a NUL is cut there, and may take the place
		// of another key, its value too. Such an object is not compared further.
		JV_EACH_KEY(k, v) {
			if (memchr(fz_jstr_bytes(k), '\0', v.t->toks[k.i].len) != NULL) {
				return true;
			}
		}
		// Each key's last value against json-c's (json-c keeps the last), and as many keys.
		size_t distinct = 0;
		JV_EACH_KEY(k, v) {
			const k8s_jtok_t *key = &v.t->toks[k.i];
			const char *bytes = fz_jstr_bytes(k);
			bool last = true;
			for (k8s_jv_t l = jv_next_key(v, k); l.t != NULL; l = jv_next_key(v, l)) {
				const k8s_jtok_t *later = &v.t->toks[l.i];
				last = last && !(later->len == key->len &&
				                 memcmp(fz_jstr_bytes(l), bytes, key->len) == 0);
			}
			if (!last) {
				continue;
			}
			distinct++;
			char name[4096];
			if (key->len >= sizeof(name)) {
				continue;
			}
			memcpy(name, bytes, key->len);
			name[key->len] = '\0';
			json_object *val = NULL;
			if (!json_object_object_get_ex(j, name, &val) ||
			    !fz_json_same(jv_value_of(k), val)) {
				return false;
			}
		}
		return (size_t)json_object_object_length(j) == distinct;
	}
	default:
		return false;
	}
}

/*!
 * \brief Scans \a text with a tape and parses it with json-c; false if the tape accepted
 * what json-c refused (but a number or literal ending the text, a top-level null, or an
 * integer beyond 64 bits) or read another value (json-c may accept more: NaN, '1.', ...).
 */
static bool fz_jsondiff(k8s_jtape_t *tape, const char *text, size_t len)
{
	int ret = k8s_jtape_scan(tape, text, len, NULL, 0);
	json_object *root = NULL;
	int ref = k8s_json_parse(text, len, &root, NULL, 0);
	bool ok = true;
	if (ret == KNOT_ESPACE || ref == KNOT_ESPACE) {
		ok = ret == ref;  // both bound the same counts first
	} else if (ret == KNOT_EOK && ref != KNOT_EOK) {
		// json-c waits for more after a number or literal that ends the text ("12", "true":
		// RFC 8259 JSON the tape reads), and its tree of a top-level null is NULL, which
		// k8s_json_parse() refuses: only there may it refuse what the tape accepts.
		k8s_jtype_t top = jv_type(k8s_jtape_root(tape));
		char last = (len > 0) ? text[len - 1] : ' ';
		bool waits = top != K8S_JOBJECT && top != K8S_JARRAY && top != K8S_JSTRING &&
		             last != ' ' && last != '\t' && last != '\r' && last != '\n';
		// json-c 0.17 (Debian 13) refuses an integer beyond 64 bits, which the tape clamps.
		bool clamped = false;
		for (uint32_t i = 0; i < tape->count; i++) {
			clamped = clamped || (tape->toks[i].type == K8S_JINT &&
			                      (tape->toks[i].i == INT64_MAX || tape->toks[i].i == INT64_MIN));
		}
		ok = ref == KNOT_EMALF && (waits || top == K8S_JNULL || clamped);
	} else if (ret == KNOT_EOK) {
		ok = fz_json_same(k8s_jtape_root(tape), root);
	}
	json_object_put(root);
	return ok;
}
