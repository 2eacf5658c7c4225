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
 * \brief The rules as rewrite.c reads them and rewrite_apply.c applies them, private to
 * the two files.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rewrite/regex.h"
#include "rewrite/rewrite.h"

typedef enum {
	RESP_NAME_AUTO,    /*!< answer auto: the rewritten name (or below it) back to the asked one. */
	RESP_VALUE_AUTO,
	RESP_NAME_SUFFIX,  /*!< A suffix rule's auto: TO back to FROM at the end of a name. */
	RESP_VALUE_SUFFIX,
	RESP_NAME_REGEX,   /*!< answer name FROM TO. */
	RESP_TTL,
	RESP_RCODE,
} resp_kind_t;

typedef struct {
	resp_kind_t kind;
	const char *from, *to;   /*!< Owned by the rule. */
	k8s_regex_t *re;
	uint32_t min, max;
	uint16_t rc_from, rc_to;
} resp_rule_t;

typedef enum { F_NAME, F_TYPE, F_CLASS, F_TTL, F_RCODE } field_t;
typedef enum { M_EXACT, M_PREFIX, M_SUFFIX, M_SUBSTRING, M_REGEX } match_t;

typedef struct {
	bool stop;
	field_t field;
	match_t match;
	char *from, *to;
	size_t from_len;
	k8s_regex_t *re;
	bool autoback;           /*!< A name rule's answer auto (exact: always). */
	uint16_t t_from, t_to;   /*!< type or class. */
	resp_rule_t auto_name, auto_value;
	resp_rule_t resp[K8S_REWRITE_RESP_PER_RULE];  /*!< Left on every match, in order. */
	size_t resp_count;
	char *texts[K8S_REWRITE_RESP_PER_RULE * 2];   /*!< The answer rules' TO texts. */
	size_t text_count;
} rule_t;

struct k8s_rewrite {
	rule_t *rules;
	size_t count;
};
