/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * The LIST and WATCH splitters fed a body whole and in pieces of sizes the
 * input chooses: both must hand out the same items or lines, stop with the
 * same error (or callback result), and end in the same state.
 *
 * Input: a byte of options (which splitter, the size limit, when the callback
 * stops the feed), a byte giving how many piece sizes follow, the piece sizes
 * (used in turn), then the body.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "api/jsonsplit.h"
#include "fz_check.h"

/*! \brief What a feed handed out: the items back to back, their ends, the result. */
typedef struct {
	char *text;
	size_t len, cap;
	size_t ends[1024];
	size_t count;
	size_t stop_at;   /*!< The callback returns 42 at this item (1-based); 0: never. */
	int ret;
} got_t;

static int collect(void *ctx, const char *text, size_t len)
{
	got_t *got = ctx;
	if (got->len + len > got->cap) {
		got->cap = 2 * (got->len + len);
		got->text = realloc(got->text, got->cap);
		CHECK(got->text != NULL);
	}
	memcpy(got->text + got->len, text, len);
	got->len += len;
	if (got->count < sizeof(got->ends) / sizeof(got->ends[0])) {
		got->ends[got->count] = got->len;
	}
	got->count++;
	return (got->count == got->stop_at) ? 42 : 0;
}

static void check_same(const got_t *a, const got_t *b)
{
	CHECK(a->ret == b->ret);
	CHECK(a->count == b->count);
	CHECK(a->len == b->len);
	CHECK(a->len == 0 || memcmp(a->text, b->text, a->len) == 0);
	size_t n = a->count < 1024 ? a->count : 1024;
	CHECK(memcmp(a->ends, b->ends, n * sizeof(a->ends[0])) == 0);
}

typedef struct {
	const uint8_t *sizes;
	size_t size_count;
	const char *body;
	size_t len;
} plan_t;

/*! \brief The next piece: its size from the plan in turn, 1 to 256 bytes. */
static size_t piece(const plan_t *p, size_t *turn, size_t left)
{
	size_t n = (p->size_count > 0) ? (size_t)p->sizes[(*turn)++ % p->size_count] + 1 : left;
	return (n < left) ? n : left;
}

static void list_feed(const plan_t *p, size_t max, bool whole, got_t *got, k8s_listsplit_t *s)
{
	k8s_listsplit_init(s, max);
	got->ret = KNOT_EOK;
	size_t pos = 0, turn = 0;
	while (pos < p->len && got->ret == KNOT_EOK) {
		size_t n = whole ? p->len : piece(p, &turn, p->len - pos);
		got->ret = k8s_listsplit_feed(s, p->body + pos, n, collect, got);
		pos += n;
	}
}

static void line_feed(const plan_t *p, size_t max, bool whole, got_t *got, k8s_linesplit_t *s)
{
	k8s_linesplit_init(s, max);
	got->ret = KNOT_EOK;
	size_t pos = 0, turn = 0;
	while (pos < p->len && got->ret == KNOT_EOK) {
		size_t n = whole ? p->len : piece(p, &turn, p->len - pos);
		got->ret = k8s_linesplit_feed(s, p->body + pos, n, collect, got);
		pos += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t limits[] = { SIZE_MAX, 0, 1, 8, 32, 100, 1000, 1 << 20 };
	if (size < 2) {
		return 0;
	}
	uint8_t opts = data[0];
	size_t size_count = data[1] % 16;
	if (size < 2 + size_count) {
		return 0;
	}
	plan_t plan = {
		.sizes = data + 2,
		.size_count = size_count,
		.body = (const char *)data + 2 + size_count,
		.len = size - 2 - size_count,
	};
	size_t max = limits[(opts >> 1) & 7];
	size_t stop_at = opts >> 4;

	got_t whole = { .stop_at = stop_at }, pieces = { .stop_at = stop_at };
	if (opts & 1) {
		k8s_linesplit_t a, b;
		line_feed(&plan, max, true, &whole, &a);
		line_feed(&plan, max, false, &pieces, &b);
		check_same(&whole, &pieces);
		CHECK(a.skipped == b.skipped);
		if (whole.ret == KNOT_EOK) {
			CHECK(k8s_linesplit_pending(&a) == k8s_linesplit_pending(&b));
		}
		k8s_linesplit_deinit(&a);
		k8s_linesplit_deinit(&b);
	} else {
		k8s_listsplit_t a, b;
		list_feed(&plan, max, true, &whole, &a);
		list_feed(&plan, max, false, &pieces, &b);
		check_same(&whole, &pieces);
		if (whole.ret == KNOT_EOK) {
			CHECK(a.skipped == b.skipped);
			CHECK(a.done == b.done);
			CHECK(strcmp(a.rv, b.rv) == 0);
			CHECK((a.cont == NULL) == (b.cont == NULL));
			CHECK(a.cont == NULL || strcmp(a.cont, b.cont) == 0);
		}
		k8s_listsplit_deinit(&a);
		k8s_listsplit_deinit(&b);
	}
	free(whole.text);
	free(pieces.text);
	return 0;
}
