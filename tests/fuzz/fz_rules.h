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

/*
 * What the rewrite and template targets share: per-input memory freed after each input,
 * the rules' values (one per line up to a NUL byte) and a query name from the bytes after it.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "fz_check.h"

static void *fz_arena[4096];
static size_t fz_arena_used;

static void *fz_arena_alloc(void *ctx, size_t len)
{
	if (fz_arena_used == sizeof(fz_arena) / sizeof(fz_arena[0])) {
		return NULL;
	}
	return fz_arena[fz_arena_used++] = malloc(len);
}

static void fz_arena_free(void)
{
	while (fz_arena_used > 0) {
		free(fz_arena[--fz_arena_used]);
	}
}

/*!
 * \brief The values, one per line before the first NUL (\a text: a copy to free), and
 * where the bytes after it start.
 */
static size_t fz_values(const uint8_t *data, size_t size, char **text, const char **values,
                        size_t max, const uint8_t **rest)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t len = (nul != NULL) ? (size_t)(nul - data) : size;
	*text = malloc(len + 1);
	CHECK(*text != NULL);
	memcpy(*text, data, len);
	(*text)[len] = '\0';
	size_t count = 0;
	for (char *line = strtok(*text, "\n"); line != NULL && count < max; line = strtok(NULL, "\n")) {
		values[count++] = line;
	}
	*rest = (nul != NULL) ? nul + 1 : data + size;
	return count;
}

/*! \brief A wire name from bytes: labels of at most 63, a 0 or a byte over 63 a dot. */
static void fz_wire_name(const uint8_t *data, size_t size, uint8_t out[256])
{
	size_t pos = 0, label = 0;
	for (size_t i = 0; i < size && pos + label + 2 < 255; i++) {
		if (data[i] == 0 || data[i] > 63 || label == 63) {
			if (label > 0) {
				out[pos] = label;
				pos += 1 + label;
				label = 0;
			}
			continue;
		}
		out[pos + 1 + label++] = data[i];
	}
	if (label > 0) {
		out[pos] = label;
		pos += 1 + label;
	}
	out[pos] = 0;
}
