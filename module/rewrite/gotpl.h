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
 * \brief The Go text/template subset that real Corefiles' templates use, read at load:
 * text and the actions {{ .Name }}, {{ .Zone }}, {{ .Class }}, {{ .Type }},
 * {{ .Remote }}, {{ .Group.NAME }}, {{ index .Match N }} and {{ index .Group "NAME" }},
 * with the trim markers {{- and -}}. Anything else is refused with the reason, as
 * CoreDNS would run what we cannot.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	K8S_GOTPL_TEXT, K8S_GOTPL_NAME, K8S_GOTPL_ZONE, K8S_GOTPL_CLASS, K8S_GOTPL_TYPE,
	K8S_GOTPL_REMOTE,
	K8S_GOTPL_GROUP,        /*!< .Group.NAME: "<no value>" when the regex has no such group. */
	K8S_GOTPL_MATCH_INDEX,  /*!< index .Match N: an error (SERVFAIL) past the groups. */
	K8S_GOTPL_GROUP_INDEX,  /*!< index .Group "NAME": "" when there is no such group. */
} k8s_gotpl_kind_t;

typedef struct {
	k8s_gotpl_kind_t kind;
	char *text;     /*!< The text, a group's name. */
	size_t len;
	unsigned index;
} k8s_gotpl_part_t;

typedef struct {
	k8s_gotpl_part_t *parts;
	size_t count;
} k8s_gotpl_t;

/*! \brief Reads a template's text; 0, or -1 with the reason in \a err. */
int k8s_gotpl_parse(k8s_gotpl_t *t, const char *src, char *err, size_t err_len);

void k8s_gotpl_free(k8s_gotpl_t *t);
