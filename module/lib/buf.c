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

#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/buf.h"

int k8s_buf_append(k8s_buf_t *buf, const void *data, size_t len, size_t limit)
{
	if (len == 0) {
		return KNOT_EOK;
	}
	if (len > limit || buf->len > limit - len) {
		return KNOT_ESPACE;
	}

	size_t need = buf->len + len;
	if (need > buf->cap) {
		size_t cap = (buf->cap > 0) ? buf->cap : 4096;
		while (cap < need) {
			cap *= 2;
		}
		if (cap > limit) {
			cap = limit;
		}
		char *data_new = realloc(buf->data, cap);
		if (data_new == NULL) {
			return KNOT_ENOMEM;
		}
		buf->data = data_new;
		buf->cap = cap;
	}

	memcpy(buf->data + buf->len, data, len);
	buf->len = need;
	return KNOT_EOK;
}

void k8s_buf_reset(k8s_buf_t *buf, size_t keep)
{
	buf->len = 0;
	// A giant object must not pin its memory for the life of the stream.
	if (buf->cap > keep) {
		k8s_buf_free(buf);
	}
}

void k8s_buf_free(k8s_buf_t *buf)
{
	free(buf->data);
	buf->data = NULL;
	buf->len = 0;
	buf->cap = 0;
}
