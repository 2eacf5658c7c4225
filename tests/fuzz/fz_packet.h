/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * What the answer targets (fuzz_answer, fuzz_fedserve) do around each query: the
 * per-query memory knotd's mempool would give, and the check that a client can read
 * the response.
 */

#pragma once

#include <stdio.h>
#include <stdlib.h>

#include <libknot/libknot.h>

#include "fz_check.h"

/*! \brief Per-query memory: one malloc a block, so that ASan sees every overrun. */
typedef struct {
	void **blocks;
	size_t cap;     /*!< Blocks at most: past them an allocation fails. */
	size_t used;
} fz_arena_t;

static inline void *fz_arena_alloc(void *ctx, size_t len)
{
	fz_arena_t *a = ctx;
	if (a->used == a->cap) {
		return NULL;
	}
	return a->blocks[a->used++] = malloc(len);
}

/*! \brief A mempool over \a a, as knotd hands the hooks (nothing freed before fz_arena_free()). */
static inline knot_mm_t fz_arena_mm(fz_arena_t *a)
{
	return (knot_mm_t){ .ctx = a, .alloc = fz_arena_alloc };
}

static inline void fz_arena_free(fz_arena_t *a)
{
	while (a->used > 0) {
		free(a->blocks[--a->used]);
	}
}

/*! \brief \a resp parsed back as a client would, or an abort (knot_pkt_free() the result). */
static inline knot_pkt_t *fz_parse_back(const knot_pkt_t *resp)
{
	knot_pkt_t *parsed = knot_pkt_new(resp->wire, resp->size, NULL);
	CHECK(parsed != NULL);
	int ret = knot_pkt_parse(parsed, 0);
	if (ret != KNOT_EOK) {
		fprintf(stderr, "response does not parse (%s)\n", knot_strerror(ret));
		abort();
	}
	return parsed;
}
