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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/tokens.h"

int k8s_tokens_split(const char *value, k8s_tokens_t *out, char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	size_t n = strlen(value);
	if (n > K8S_TOKENS_TEXT_MAX) {
		snprintf(err, err_len, "longer than %d characters", K8S_TOKENS_TEXT_MAX);
		return -1;
	}
	// Every word is at most as long as the value, and each gets one NUL.
	out->buf = malloc(2 * n + 2);
	if (out->buf == NULL) {
		snprintf(err, err_len, "no memory");
		return -1;
	}
	char *w = out->buf;
	unsigned line = 0;
	size_t i = 0;
	while (i < n) {
		unsigned char c = value[i];
		if (c == '\n' || c == ';') {
			line++;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			snprintf(err, err_len, "control character 0x%02x", c);
			goto fail;
		}
		if (out->count == K8S_TOKENS_MAX) {
			snprintf(err, err_len, "more than %d words", K8S_TOKENS_MAX);
			goto fail;
		}
		k8s_token_t *t = &out->tok[out->count++];
		t->text = w;
		t->line = line;
		if (c == '`') {
			// `...`: a word as it is, quotes and backslashes too (knot.conf cannot hold \" ).
			t->quoted = true;
			i++;
			while (i < n && value[i] != '`') {
				if ((unsigned char)value[i] < 0x20 && value[i] != '\t') {
					snprintf(err, err_len, "control character in a quoted word");
					goto fail;
				}
				*w++ = value[i++];
			}
			if (i == n) {
				snprintf(err, err_len, "a ` is not closed");
				goto fail;
			}
			i++;
		} else if (c == '"') {
			t->quoted = true;
			i++;
			while (i < n && value[i] != '"') {
				if (value[i] == '\\' && i + 1 < n && value[i + 1] == '"') {
					i++;
				}
				if ((unsigned char)value[i] < 0x20 && value[i] != '\t') {
					snprintf(err, err_len, "control character in a quoted word");
					goto fail;
				}
				*w++ = value[i++];
			}
			if (i == n) {
				snprintf(err, err_len, "a quote is not closed");
				goto fail;
			}
			i++;
		} else {
			while (i < n && value[i] != ' ' && value[i] != '\t' && value[i] != '\r' &&
			       value[i] != '\n' && value[i] != ';') {
				if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f) {
					snprintf(err, err_len, "control character 0x%02x", (unsigned char)value[i]);
					goto fail;
				}
				*w++ = value[i++];
			}
		}
		t->len = w - t->text;
		*w++ = '\0';
	}
	return 0;
fail:
	k8s_tokens_free(out);
	return -1;
}

void k8s_tokens_free(k8s_tokens_t *t)
{
	free(t->buf);
	t->buf = NULL;
	t->count = 0;
}

bool k8s_token_is(const k8s_tokens_t *t, size_t i, const char *word)
{
	return i < t->count && !t->tok[i].quoted && strcmp(t->tok[i].text, word) == 0;
}
