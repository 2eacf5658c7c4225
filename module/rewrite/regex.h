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
 * \brief CoreDNS's regular expressions (Go's RE2 syntax) with PCRE2: the subset whose
 * meaning is the same in both, checked before PCRE2 sees a pattern (anything else is
 * refused with the reason), compiled at load (JIT where the kernel allows it) and
 * matched with the calling thread's match data, so a match allocates nothing.
 *
 * The cost of a match is bounded: a subject is a name's text (K8S_NAME_TEXT_MAX), a
 * pattern at most K8S_REGEX_PATTERN_MAX characters, and PCRE2's match and heap limits
 * (K8S_REGEX_MATCH_LIMIT, K8S_REGEX_HEAP_LIMIT_KIB) end a match that would backtrack
 * past them: it counts as no match (doc/mod-k8s.rst, Rewriting and templates).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*! \brief Longest pattern, CoreDNS's own cap (maxRegexpLen). */
#define K8S_REGEX_PATTERN_MAX 10000

/*! \brief Most capturing groups of a pattern. */
#define K8S_REGEX_GROUPS_MAX 99

/*! \brief PCRE2's match limit: backtracking steps of one match. */
#define K8S_REGEX_MATCH_LIMIT 200000

/*! \brief PCRE2's heap limit of one match (the interpreter's frames), KiB. */
#define K8S_REGEX_HEAP_LIMIT_KIB 1024

typedef struct k8s_regex k8s_regex_t;

/*! \brief A thread's match data, made at load for each thread that matches. */
typedef struct k8s_regex_scratch k8s_regex_scratch_t;

/*! \brief Where group i matched: [start, end) in the subject, start < 0 when it did not. */
typedef struct {
	int start;
	int end;
} k8s_regex_span_t;

/*!
 * \brief Compiles \a pattern, refusing what RE2 and PCRE2 would read differently
 * (backreferences, lookaround, possessive quantifiers, \p, \v, `{` that is no
 * repetition, repetitions over 1000, non-ASCII bytes, PCRE2's own constructs).
 *
 * \return The regex, or NULL with the reason in \a err.
 */
k8s_regex_t *k8s_regex_new(const char *pattern, char *err, size_t err_len);

void k8s_regex_free(k8s_regex_t *re);

/*! \brief Capturing groups of the pattern (group 0, the whole match, not counted). */
unsigned k8s_regex_groups(const k8s_regex_t *re);

/*! \brief The number of the group named \a name, or -1. */
int k8s_regex_group_named(const k8s_regex_t *re, const char *name, size_t len);

/*! \brief The name of group \a i, or NULL. */
const char *k8s_regex_group_name(const k8s_regex_t *re, unsigned i);

/*! \brief The pattern's text. */
const char *k8s_regex_pattern(const k8s_regex_t *re);

/*! \brief Match data for one thread (K8S_REGEX_GROUPS_MAX groups); NULL on no memory. */
k8s_regex_scratch_t *k8s_regex_scratch_new(void);

void k8s_regex_scratch_free(k8s_regex_scratch_t *s);

/*!
 * \brief Searches \a subject as Go's regexp does (leftmost-first, unanchored).
 *
 * \param spans  Out: groups 0..k8s_regex_groups(), or NULL.
 * \return 1 on a match, 0 on none, -1 when a limit ended it (counted as none).
 */
int k8s_regex_match(const k8s_regex_t *re, k8s_regex_scratch_t *s, const char *subject,
                    size_t len, k8s_regex_span_t *spans);
