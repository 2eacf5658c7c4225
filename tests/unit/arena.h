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
 * Per-query memory for the unit tests of module/rewrite/: a knot_mm_t whose blocks
 * are freed by the teardown after each case.
 */

#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include <libknot/libknot.h>

static void *arena[4096];
static size_t arena_used;

static void *arena_alloc(void *ctx, size_t len)
{
	assert_true(arena_used < sizeof(arena) / sizeof(arena[0]));
	return arena[arena_used++] = malloc(len);
}

/*! \brief cmocka teardown: frees what the case took. */
static int arena_free(void **state)
{
	while (arena_used > 0) {
		free(arena[--arena_used]);
	}
	return 0;
}

static knot_mm_t mm = { .alloc = arena_alloc };
