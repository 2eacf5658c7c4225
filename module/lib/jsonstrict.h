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

/*!
 * \file
 *
 * \brief JSON parsed strictly, with every json-c that Debian ships, and only within
 * bounds: its values and objects counted before json-c builds a tree or the API's texts
 * are scanned (k8s_json_bounded(), which jsonscan.c calls first). json-c parses the
 * stub zones (fedstub.c) and kube-dns's ConfigMap (kubedns_conf.c); the API's texts are
 * scanned into tapes (jsonscan.h), which the tests compare with k8s_json_parse().
 *
 * json-c 0.18 (Debian 13) refuses, in strict mode, every string holding a byte above
 * 0x7f (it compares a signed char with the control characters' 0x1f; json-c issues
 * 875 and 892, fixed after 0.18), so any non-ASCII UTF-8 character, which Kubernetes
 * objects may hold (annotations, status messages). configure.ac finds out whether the
 * json-c built against does (K8S_JSON_STRICT_REFUSES_UTF8).
 */

#pragma once

#include <json-c/json.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/*! Writes a lowercase reason into \a err (which may be NULL). */
__attribute__((format(printf, 3, 4)))
static inline void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (err == NULL || errlen == 0) {
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*!
 * \brief Most JSON values (objects, arrays, strings, numbers, literals; keys not
 * counted) in one object or event: an EndpointSlice of 1000 endpoints with 100
 * addresses each has about 120,000. json-c spends 64 to 144 bytes on each.
 */
#define K8S_JSON_VALUES_MAX (256u * 1024)

/*!
 * \brief Most JSON objects in one object or event: json-c spends about 800 bytes
 * on each, so 3 MiB of "{}," would take 800 MiB.
 */
#define K8S_JSON_OBJECTS_MAX (64u * 1024)

/*! \brief Deepest nesting of objects and arrays (pod managedFields nest deeply, a watch event adds two levels). */
#define K8S_JSON_DEPTH 128

/*!
 * \brief Whether json-c may build a tree of \a text: within K8S_JSON_VALUES_MAX and
 * K8S_JSON_OBJECTS_MAX. Counts without allocating; malformed text is left to json-c.
 *
 * \retval KNOT_EOK     within the limits.
 * \retval KNOT_ESPACE  over one (\a err says which; may be NULL).
 */
int k8s_json_bounded(const char *text, size_t len, char *err, size_t errlen);

/*!
 * \brief Parses exactly one JSON value filling \a text (trailing whitespace allowed),
 * within k8s_json_bounded(), strictly (k8s_json_tokener_parse()), at most 128 deep.
 *
 * \retval KNOT_EOK     \a root holds the value (the caller puts it).
 * \retval KNOT_ESPACE  over a limit of k8s_json_bounded().
 * \retval KNOT_EMALF   not one JSON value (\a err says why; may be NULL).
 */
int k8s_json_parse(const char *text, size_t len, json_object **root, char *err, size_t errlen);

/*!
 * \brief json_tokener_parse_ex() of \a text in strict mode (JSON_TOKENER_STRICT), \a tok
 * holding the error and the parse end as it does. With a json-c that refuses a byte above
 * 0x7f there, a text refused for a string is checked again strictly with every such byte
 * read as 'x' (a byte above 0x7f is valid only inside a string, where 'x' is valid too)
 * and, if that passes, parsed without strictness: the same value, as strict as elsewhere.
 */
json_object *k8s_json_tokener_parse(struct json_tokener *tok, const char *text, int len);
