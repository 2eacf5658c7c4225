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
 * \brief JSON parsed strictly, with every json-c that Debian ships.
 *
 * json-c 0.18 (Debian 13) refuses, in strict mode, every string holding a byte above
 * 0x7f (it compares a signed char with the control characters' 0x1f; json-c issues
 * 875 and 892, fixed after 0.18), so any non-ASCII UTF-8 character, which Kubernetes
 * objects may hold (annotations, status messages). configure.ac finds out whether the
 * json-c built against does (K8S_JSON_STRICT_REFUSES_UTF8).
 */

#pragma once

#include <json-c/json.h>

/*!
 * \brief json_tokener_parse_ex() of \a text in strict mode (JSON_TOKENER_STRICT), \a tok
 * holding the error and the parse end as it does. With a json-c that refuses a byte above
 * 0x7f there, a text refused for a string is checked again strictly with every such byte
 * read as 'x' (a byte above 0x7f is valid only inside a string, where 'x' is valid too)
 * and, if that passes, parsed without strictness: the same value, as strict as elsewhere.
 */
json_object *k8s_json_tokener_parse(struct json_tokener *tok, const char *text, int len);
