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
 * \brief A Corefile directive's arguments as an option value holds them: words split
 * as CoreDNS's lexer splits them (whitespace, "quoted" with \" inside), a block's lines
 * separated by `;` or a newline, `{` and `}` words of their own. A word may also be
 * quoted with backquotes, taken as it is: knot.conf's quoted values cannot hold a
 * backslash before a quote, which a Corefile's "...\"..." word needs. What rewrite.c
 * and template.c parse; read at load only.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

/*! \brief Most words in one value (a template's lines included). */
#define K8S_TOKENS_MAX 256

/*! \brief Longest option value read (CoreDNS caps a regex at 10,000 characters). */
#define K8S_TOKENS_TEXT_MAX 32768

typedef struct {
	const char *text;   /*!< NUL-terminated, in the list's own buffer. */
	size_t len;
	unsigned line;      /*!< Line of the value (0 first): `;` and newlines count. */
	bool quoted;        /*!< Was "quoted": never `{`, `}` or a keyword. */
} k8s_token_t;

typedef struct {
	k8s_token_t tok[K8S_TOKENS_MAX];
	size_t count;
	char *buf;          /*!< The words, each NUL-terminated (malloc). */
} k8s_tokens_t;

/*!
 * \brief Splits \a value into words.
 *
 * \return 0, or -1 with the reason in \a err (an unclosed quote, too many words,
 *         a control character, too long).
 */
int k8s_tokens_split(const char *value, k8s_tokens_t *out, char *err, size_t err_len);

/*! \brief Frees the words' buffer. */
void k8s_tokens_free(k8s_tokens_t *t);

/*! \brief True if token \a i is the unquoted word \a word. */
bool k8s_token_is(const k8s_tokens_t *t, size_t i, const char *word);
