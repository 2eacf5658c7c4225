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

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsonstrict.h"

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
