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
 * The JSON tape (module/lib/jsonscan.c) against json-c: any text, scanned twice into one
 * reused tape (as a reflector reuses it) and parsed by json-c; what the tape accepts
 * json-c accepts with the same values (fz_jsondiff.h), and every read of it stays in it.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fz_check.h"
#include "fz_jsondiff.h"

/*! Reads every value the way the decoders do, by key and element. */
static void walk(k8s_jv_t v, unsigned depth)
{
	CHECK(depth <= K8S_JSON_DEPTH);
	switch (jv_type(v)) {
	case K8S_JARRAY:
		JV_EACH(elem, v) {
			walk(elem, depth + 1);
		}
		break;
	case K8S_JOBJECT:
		JV_EACH_KEY(k, v) {
			k8s_str_t key = jv_str_of(k);
			if (key.ptr != NULL && key.len < 64) {
				char name[64];
				memcpy(name, key.ptr, key.len);
				name[key.len] = '\0';
				CHECK(jv_get(v, name, jv_type(jv_value_of(k))).t != NULL ||
				      jv_get(v, name, K8S_JNONE).t == NULL);
			}
			walk(jv_value_of(k), depth + 1);
		}
		break;
	case K8S_JSTRING: {
		k8s_str_t s = jv_str_of(v);
		CHECK(s.ptr == NULL || memchr(s.ptr, '\0', s.len) == NULL);
		break;
	}
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	// Its own copy: a read past the text is one past the allocation, which ASan sees.
	char *text = malloc(size > 0 ? size : 1);
	CHECK(text != NULL);
	memcpy(text, data, size);
	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	CHECK(fz_jsondiff(&tape, text, size));
	if (k8s_jtape_scan(&tape, text, size, NULL, 0) == 0) {
		walk(k8s_jtape_root(&tape), 0);
	}
	k8s_jtape_deinit(&tape);
	free(text);
	return 0;
}
