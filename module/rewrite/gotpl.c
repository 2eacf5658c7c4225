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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/gotpl.h"
#include "rewrite/perr.h"


static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_ident(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9')) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
			return false;
		}
	}
	return true;
}

static int add_part(k8s_gotpl_t *t, k8s_gotpl_part_t p, k8s_perr_t *e)
{
	k8s_gotpl_part_t *parts = realloc(t->parts, (t->count + 1) * sizeof(*parts));
	if (parts == NULL) {
		free(p.text);
		return k8s_perr(e, "no memory");
	}
	t->parts = parts;
	t->parts[t->count++] = p;
	return 0;
}

static int add_text(k8s_gotpl_t *t, const char *s, size_t len, k8s_perr_t *e)
{
	if (len == 0) {
		return 0;
	}
	char *text = strndup(s, len);
	if (text == NULL) {
		return k8s_perr(e, "no memory");
	}
	return add_part(t, (k8s_gotpl_part_t){ .kind = K8S_GOTPL_TEXT, .text = text, .len = len }, e);
}

/*! \brief One action's words (between the delimiters and trim markers). */
static int parse_action(k8s_gotpl_t *t, const char *a, size_t len, k8s_perr_t *e)
{
	while (len > 0 && is_space(a[len - 1])) {
		len--;
	}
	while (len > 0 && is_space(*a)) {
		a++;
		len--;
	}
	static const struct { const char *field; k8s_gotpl_kind_t kind; } fields[] = {
		{ ".Name", K8S_GOTPL_NAME }, { ".Zone", K8S_GOTPL_ZONE }, { ".Class", K8S_GOTPL_CLASS },
		{ ".Type", K8S_GOTPL_TYPE }, { ".Remote", K8S_GOTPL_REMOTE },
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (len == strlen(fields[i].field) && memcmp(a, fields[i].field, len) == 0) {
			return add_part(t, (k8s_gotpl_part_t){ .kind = fields[i].kind }, e);
		}
	}
	if (len > 7 && memcmp(a, ".Group.", 7) == 0 && is_ident(a + 7, len - 7)) {
		char *name = strndup(a + 7, len - 7);
		return name ? add_part(t, (k8s_gotpl_part_t){ .kind = K8S_GOTPL_GROUP, .text = name, .len = len - 7 }, e)
		            : k8s_perr(e, "no memory");
	}
	if (len > 6 && memcmp(a, "index", 5) == 0 && is_space(a[5])) {
		const char *r = a + 6;
		size_t rl = len - 6;
		while (rl > 0 && is_space(*r)) {
			r++;
			rl--;
		}
		if (rl > 7 && memcmp(r, ".Match", 6) == 0 && is_space(r[6])) {
			const char *n = r + 7;
			size_t nl = rl - 7;
			while (nl > 0 && is_space(*n)) {
				n++;
				nl--;
			}
			unsigned v = 0;
			bool ok = nl > 0 && nl <= 3;
			for (size_t i = 0; ok && i < nl; i++) {
				ok = n[i] >= '0' && n[i] <= '9';
				v = v * 10 + (n[i] - '0');
			}
			if (ok) {
				return add_part(t, (k8s_gotpl_part_t){ .kind = K8S_GOTPL_MATCH_INDEX, .index = v }, e);
			}
		}
		if (rl > 7 && memcmp(r, ".Group", 6) == 0 && is_space(r[6])) {
			const char *n = r + 7;
			size_t nl = rl - 7;
			while (nl > 0 && is_space(*n)) {
				n++;
				nl--;
			}
			if (nl >= 2 && n[0] == '"' && n[nl - 1] == '"' && memchr(n + 1, '\\', nl - 2) == NULL &&
			    memchr(n + 1, '"', nl - 2) == NULL) {
				char *name = strndup(n + 1, nl - 2);
				return name ? add_part(t, (k8s_gotpl_part_t){ .kind = K8S_GOTPL_GROUP_INDEX, .text = name,
				                                    .len = nl - 2 }, e)
				            : k8s_perr(e, "no memory");
			}
		}
	}
	return k8s_perr(e, "{{ %.*s }} is not supported (only .Name, .Zone, .Class, .Type, .Remote, "
	            ".Group.NAME, index .Match N and index .Group \"NAME\")", (int)len, a);
}

void k8s_gotpl_free(k8s_gotpl_t *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->parts[i].text);
	}
	free(t->parts);
	t->parts = NULL;
	t->count = 0;
}

static int parse(k8s_gotpl_t *t, const char *src, k8s_perr_t *e)
{
	memset(t, 0, sizeof(*t));
	size_t n = strlen(src);
	size_t i = 0;
	while (i < n) {
		const char *open = strstr(src + i, "{{");
		if (open == NULL) {
			if (add_text(t, src + i, n - i, e) != 0) {
				goto fail;
			}
			break;
		}
		size_t at = open - src;
		size_t text_end = at;
		size_t body = at + 2;
		// "{{- " trims the space before it (a '-' with a space after it).
		if (body + 1 < n && src[body] == '-' && is_space(src[body + 1])) {
			while (text_end > i && is_space(src[text_end - 1])) {
				text_end--;
			}
			body += 2;
		}
		if (add_text(t, src + i, text_end - i, e) != 0) {
			goto fail;
		}
		const char *close = strstr(src + body, "}}");
		if (close == NULL) {
			k8s_perr(e, "unclosed action {{");
			goto fail;
		}
		size_t end = close - src;
		size_t after = end + 2;
		size_t body_end = end;
		bool trim = false;
		if (end >= body + 2 && src[end - 1] == '-' && is_space(src[end - 2])) {
			body_end = end - 1;
			trim = true;
		}
		if (parse_action(t, src + body, body_end - body, e) != 0) {
			goto fail;
		}
		if (trim) {
			while (after < n && is_space(src[after])) {
				after++;
			}
		}
		i = after;
	}
	return 0;
fail:
	k8s_gotpl_free(t);
	return -1;
}

int k8s_gotpl_parse(k8s_gotpl_t *t, const char *src, char *err, size_t err_len)
{
	k8s_perr_t e = { err, err_len };
	return parse(t, src, &e);
}
