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

#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/regex.h"

struct k8s_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
	unsigned groups;
	char *names[K8S_REGEX_GROUPS_MAX + 1];  /*!< Group names (NULL: unnamed). */
	char *pattern;
};

struct k8s_regex_scratch {
	pcre2_match_data *md;
};

/* The RE2 subset. Go's regexp/syntax and PCRE2 2 read these alike on ASCII subjects. */

typedef struct {
	const char *p;
	size_t i, n;
	unsigned groups;
	char *err;
	size_t err_len;
	char *names[K8S_REGEX_GROUPS_MAX + 1];
} scan_t;

__attribute__((format(printf, 2, 3)))
static bool refuse(scan_t *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, s->err_len, fmt, ap);
	va_end(ap);
	return false;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/*! \brief \xHH or \x{H...}: both read it as a code point; above 0xff is not a byte. */
static bool scan_hex(scan_t *s)
{
	if (s->i < s->n && s->p[s->i] == '{') {
		size_t j = s->i + 1;
		unsigned v = 0;
		while (j < s->n && is_hex(s->p[j]) && v <= 0xff) {
			v = v * 16 + (is_digit(s->p[j]) ? s->p[j] - '0' : (s->p[j] | 0x20) - 'a' + 10);
			j++;
		}
		if (j == s->i + 1 || j >= s->n || s->p[j] != '}' || v > 0x7f) {
			return refuse(s, "\\x{...} must be an ASCII code point");
		}
		s->i = j + 1;
		return true;
	}
	if (s->i + 2 > s->n || !is_hex(s->p[s->i]) || !is_hex(s->p[s->i + 1])) {
		return refuse(s, "\\x needs two hexadecimal digits");
	}
	s->i += 2;
	return true;
}

/*!
 * \brief An escape after its backslash. \a in_class: inside [...].
 * \param repeatable  Out: the escape is an atom (not an assertion).
 */
static bool scan_escape(scan_t *s, bool in_class, bool *repeatable)
{
	if (s->i >= s->n) {
		return refuse(s, "trailing backslash");
	}
	char c = s->p[s->i++];
	*repeatable = true;
	if (is_digit(c)) {
		return refuse(s, "\\%c: backreferences and octal escapes are not RE2's", c);
	}
	if (!is_alpha(c)) {
		return true;  // Escaped punctuation is itself in both.
	}
	switch (c) {
	case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
	case 't': case 'n': case 'r': case 'f': case 'a':
		return true;
	case 'x':
		return scan_hex(s);
	case 'b': case 'B': case 'A': case 'z':
		if (in_class) {
			return refuse(s, "\\%c inside [...]", c);
		}
		*repeatable = false;
		return true;
	case 'Q':
		if (in_class) {
			return refuse(s, "\\Q inside [...]");
		}
		// Literal text up to \E (or the end), as both read it.
		while (s->i < s->n && !(s->p[s->i] == '\\' && s->i + 1 < s->n && s->p[s->i + 1] == 'E')) {
			s->i++;
		}
		if (s->i < s->n) {
			s->i += 2;
		}
		return true;
	case 'p': case 'P':
		return refuse(s, "\\%c (Unicode classes) is not supported", c);
	case 'v':
		return refuse(s, "\\v is a vertical tab in RE2 but a class in PCRE2: write \\x0b");
	default:
		return refuse(s, "\\%c is not an RE2 escape", c);
	}
}

static bool scan_class(scan_t *s)
{
	// After '['.
	if (s->i < s->n && s->p[s->i] == '^') {
		s->i++;
	}
	bool first = true;
	while (s->i < s->n) {
		char c = s->p[s->i];
		if (c == ']' && !first) {
			s->i++;
			return true;
		}
		first = false;
		if (c == '[' && s->i + 1 < s->n && (s->p[s->i + 1] == '.' || s->p[s->i + 1] == '=')) {
			return refuse(s, "[[. and [[= are read differently by RE2 and PCRE2");
		}
		if (c == '[' && s->i + 1 < s->n && s->p[s->i + 1] == ':') {
			static const char *names[] = {
				"alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower",
				"print", "punct", "space", "upper", "word", "xdigit"
			};
			size_t j = s->i + 2;
			if (j < s->n && s->p[j] == '^') {
				j++;
			}
			size_t start = j;
			while (j < s->n && is_alpha(s->p[j])) {
				j++;
			}
			bool known = false;
			for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
				known |= (strlen(names[k]) == j - start &&
				          memcmp(names[k], s->p + start, j - start) == 0);
			}
			if (!known || j + 1 >= s->n || s->p[j] != ':' || s->p[j + 1] != ']') {
				return refuse(s, "unknown [:class:] in [...]");
			}
			s->i = j + 2;
			continue;
		}
		s->i++;
		if (c == '\\') {
			bool atom;
			if (!scan_escape(s, true, &atom)) {
				return false;
			}
		}
	}
	return refuse(s, "[ is not closed");
}

/*! \brief (?...) after "(?": a group kind or flags; sets *capture and the name. */
static bool scan_group_head(scan_t *s, bool *capture, bool *flags_only)
{
	*capture = false;
	*flags_only = false;
	const char *p = s->p;
	if (s->i < s->n && p[s->i] == 'P' && s->i + 1 < s->n && p[s->i + 1] == '<') {
		s->i++;
	}
	if (s->i < s->n && p[s->i] == '<' && s->i + 1 < s->n && p[s->i + 1] != '=' && p[s->i + 1] != '!') {
		size_t start = ++s->i;
		while (s->i < s->n && (is_alpha(p[s->i]) || is_digit(p[s->i]) || p[s->i] == '_')) {
			s->i++;
		}
		size_t len = s->i - start;
		if (len == 0 || s->i >= s->n || p[s->i] != '>') {
			return refuse(s, "a group name is letters, digits and _ in (?P<name>...)");
		}
		if (is_digit(p[start]) || len > 32) {
			return refuse(s, "a group name starts with a letter or _ and has at most 32 characters");
		}
		if (s->groups >= K8S_REGEX_GROUPS_MAX) {
			return refuse(s, "more than %d groups", K8S_REGEX_GROUPS_MAX);
		}
		for (unsigned g = 1; g <= s->groups; g++) {
			if (s->names[g] != NULL && strlen(s->names[g]) == len &&
			    memcmp(s->names[g], p + start, len) == 0) {
				return refuse(s, "group name %.*s given twice", (int)len, p + start);
			}
		}
		s->i++;
		*capture = true;
		s->groups++;
		s->names[s->groups] = strndup(p + start, len);
		return s->names[s->groups] != NULL || refuse(s, "no memory");
	}
	if (s->i < s->n && p[s->i] == ':') {
		s->i++;
		return true;
	}
	// Flags: (?flags) or (?flags:...), of imsU with at most one '-'.
	size_t start = s->i;
	bool minus = false;
	while (s->i < s->n && p[s->i] != ')' && p[s->i] != ':') {
		char c = p[s->i];
		if (c == '-' && !minus) {
			minus = true;
		} else if (c != 'i' && c != 'm' && c != 's' && c != 'U') {
			return refuse(s, "(?%c is not RE2 (only non-capturing groups, (?P<name>...) and "
			              "the flags i, m, s, U)", c);
		}
		s->i++;
	}
	if (s->i >= s->n || s->i == start || p[s->i - 1] == '-') {
		return refuse(s, "bad (?flags) group");
	}
	*flags_only = (p[s->i] == ')');
	s->i++;
	return true;
}

/*! \brief {n}, {n,}, {n,m} at s->i (on '{'): true and moved past it, or false (not one). */
static bool scan_counted(scan_t *s, bool *bad)
{
	size_t j = s->i + 1;
	unsigned lo = 0, hi = 0;
	size_t d = j;
	while (j < s->n && is_digit(s->p[j]) && lo <= 1000) {
		lo = lo * 10 + (s->p[j++] - '0');
	}
	*bad = false;
	if (j == d || j >= s->n) {
		return false;
	}
	if (s->p[j] == '}') {
		hi = lo;
	} else if (s->p[j] == ',') {
		j++;
		size_t h = j;
		while (j < s->n && is_digit(s->p[j]) && hi <= 1000) {
			hi = hi * 10 + (s->p[j++] - '0');
		}
		if (j >= s->n || s->p[j] != '}') {
			return false;
		}
		if (j == h) {
			hi = lo;  // {n,}: only n is checked.
		}
	} else {
		return false;
	}
	if (lo > 1000 || hi > 1000 || hi < lo) {
		*bad = true;
		return false;
	}
	s->i = j + 1;
	return true;
}

static bool scan(scan_t *s)
{
	int depth = 0;
	bool repeatable = false;   // The last item can take a quantifier.
	bool quantified = false;   // The last item is a quantifier (a '?' may make it lazy).
	bool lazy = false;
	while (s->i < s->n) {
		unsigned char c = s->p[s->i];
		if (c >= 0x80 || c < 0x20 || c == 0x7f) {
			return refuse(s, "byte 0x%02x: patterns are printable ASCII (names are "
			              "matched as ASCII text, other bytes as \\DDD)", c);
		}
		bool quant = false;
		if (c == '*' || c == '+' || c == '?') {
			quant = true;
			s->i++;
		} else if (c == '{') {
			bool bad;
			if (scan_counted(s, &bad)) {
				quant = true;
			} else if (bad) {
				return refuse(s, "a repetition {n,m} over 1000 or with m < n");
			} else {
				return refuse(s, "a { that is no repetition: write \\{");
			}
		}
		if (quant) {
			if (quantified && c == '?' && !lazy) {
				lazy = true;
				continue;
			}
			if (quantified) {
				return refuse(s, "a quantifier after a quantifier (possessive or nested "
				              "repetition)");
			}
			if (!repeatable) {
				return refuse(s, "a quantifier with nothing to repeat");
			}
			quantified = true;
			lazy = false;
			repeatable = false;
			continue;
		}
		quantified = false;
		lazy = false;
		s->i++;
		switch (c) {
		case '\\':
			if (!scan_escape(s, false, &repeatable)) {
				return false;
			}
			break;
		case '[':
			if (!scan_class(s)) {
				return false;
			}
			repeatable = true;
			break;
		case '(':
			if (s->i < s->n && s->p[s->i] == '*') {
				return refuse(s, "(* is PCRE2's, not RE2");
			}
			if (s->i < s->n && s->p[s->i] == '?') {
				s->i++;
				bool capture, flags_only;
				if (!scan_group_head(s, &capture, &flags_only)) {
					return false;
				}
				if (flags_only) {
					repeatable = false;
					break;
				}
			} else {
				if (s->groups >= K8S_REGEX_GROUPS_MAX) {
					return refuse(s, "more than %d groups", K8S_REGEX_GROUPS_MAX);
				}
				s->groups++;
			}
			if (++depth > 100) {
				return refuse(s, "groups nested deeper than 100");
			}
			repeatable = false;
			break;
		case ')':
			if (--depth < 0) {
				return refuse(s, "unbalanced )");
			}
			repeatable = true;
			break;
		case '|': case '^': case '$':
			repeatable = false;
			break;
		default:
			repeatable = true;
			break;
		}
	}
	if (depth != 0) {
		return refuse(s, "a ( is not closed");
	}
	return true;
}

k8s_regex_t *k8s_regex_new(const char *pattern, char *err, size_t err_len)
{
	size_t len = strlen(pattern);
	if (len > K8S_REGEX_PATTERN_MAX) {
		snprintf(err, err_len, "pattern longer than %d characters", K8S_REGEX_PATTERN_MAX);
		return NULL;
	}
	scan_t s = { .p = pattern, .n = len, .err = err, .err_len = err_len };
	k8s_regex_t *re = NULL;
	if (!scan(&s)) {
		goto fail;
	}
	re = calloc(1, sizeof(*re));
	if (re == NULL || (re->pattern = strdup(pattern)) == NULL) {
		snprintf(err, err_len, "no memory");
		goto fail;
	}
	memcpy(re->names, s.names, sizeof(re->names));
	memset(s.names, 0, sizeof(s.names));
	re->groups = s.groups;
	int code;
	PCRE2_SIZE offset;
	re->code = pcre2_compile((PCRE2_SPTR)pattern, len,
	                         PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF | PCRE2_NEVER_UCP |
	                         PCRE2_NEVER_BACKSLASH_C, &code, &offset, NULL);
	if (re->code == NULL) {
		char msg[128];
		pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof(msg));
		snprintf(err, err_len, "%s at offset %zu", msg, (size_t)offset);
		goto fail;
	}
	uint32_t count = 0;
	pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &count);
	if (count != re->groups) {
		snprintf(err, err_len, "PCRE2 counts %u groups where RE2 counts %u", count, re->groups);
		goto fail;
	}
	// JIT where executable memory is allowed; the interpreter otherwise.
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	re->mctx = pcre2_match_context_create(NULL);
	if (re->mctx == NULL) {
		snprintf(err, err_len, "no memory");
		goto fail;
	}
	pcre2_set_match_limit(re->mctx, K8S_REGEX_MATCH_LIMIT);
	pcre2_set_heap_limit(re->mctx, K8S_REGEX_HEAP_LIMIT_KIB);
	pcre2_set_depth_limit(re->mctx, K8S_REGEX_MATCH_LIMIT);
	return re;
fail:
	for (unsigned g = 0; g <= K8S_REGEX_GROUPS_MAX; g++) {
		free(s.names[g]);
	}
	k8s_regex_free(re);
	return NULL;
}

void k8s_regex_free(k8s_regex_t *re)
{
	if (re == NULL) {
		return;
	}
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	for (unsigned g = 0; g <= K8S_REGEX_GROUPS_MAX; g++) {
		free(re->names[g]);
	}
	free(re->pattern);
	free(re);
}

unsigned k8s_regex_groups(const k8s_regex_t *re)
{
	return re->groups;
}

int k8s_regex_group_named(const k8s_regex_t *re, const char *name, size_t len)
{
	for (unsigned g = 1; g <= re->groups; g++) {
		if (re->names[g] != NULL && strlen(re->names[g]) == len &&
		    memcmp(re->names[g], name, len) == 0) {
			return g;
		}
	}
	return -1;
}

const char *k8s_regex_group_name(const k8s_regex_t *re, unsigned i)
{
	return (i <= re->groups) ? re->names[i] : NULL;
}

const char *k8s_regex_pattern(const k8s_regex_t *re)
{
	return re->pattern;
}

k8s_regex_scratch_t *k8s_regex_scratch_new(void)
{
	k8s_regex_scratch_t *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return NULL;
	}
	s->md = pcre2_match_data_create(K8S_REGEX_GROUPS_MAX + 1, NULL);
	if (s->md == NULL) {
		free(s);
		return NULL;
	}
	return s;
}

void k8s_regex_scratch_free(k8s_regex_scratch_t *s)
{
	if (s != NULL) {
		pcre2_match_data_free(s->md);
		free(s);
	}
}

int k8s_regex_match(const k8s_regex_t *re, k8s_regex_scratch_t *s, const char *subject,
                    size_t len, k8s_regex_span_t *spans)
{
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, s->md, re->mctx);
	if (rc == PCRE2_ERROR_NOMATCH) {
		return 0;
	}
	if (rc < 0) {
		return -1;
	}
	if (spans != NULL) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
		for (unsigned g = 0; g <= re->groups; g++) {
			bool set = (g < (unsigned)rc) && ov[2 * g] != PCRE2_UNSET;
			spans[g].start = set ? (int)ov[2 * g] : -1;
			spans[g].end = set ? (int)ov[2 * g + 1] : -1;
		}
	}
	return 1;
}
