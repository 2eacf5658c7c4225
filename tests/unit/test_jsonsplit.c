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
 * Splitting of LIST bodies into items and of WATCH streams into lines
 * (module/api/jsonsplit.c), fed whole, byte by byte and in random pieces.
 * Body shapes follow the API reference (k8s_api.md, sections 1.4, 1.5, 1.11).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "api/jsonsplit.h"
#include "kinds/objects.h"

#define ITEMS_MAX 64

/*! What a callback received. */
typedef struct {
	char *text[ITEMS_MAX];
	size_t count;
	size_t stop_at;  /*!< Return 42 on this item (1-based), 0: never. */
} got_t;

static int collect(void *ctx, const char *text, size_t len)
{
	got_t *got = ctx;
	assert_true(got->count < ITEMS_MAX);
	char *copy = malloc(len + 1);
	assert_non_null(copy);
	memcpy(copy, text, len);
	copy[len] = '\0';
	got->text[got->count++] = copy;
	return (got->count == got->stop_at) ? 42 : 0;
}

static void got_free(got_t *got)
{
	for (size_t i = 0; i < got->count; i++) {
		free(got->text[i]);
	}
	memset(got, 0, sizeof(*got));
}

static void assert_items(const got_t *got, const char **want, size_t count)
{
	assert_int_equal(got->count, count);
	for (size_t i = 0; i < count; i++) {
		assert_string_equal(got->text[i], want[i]);
	}
}

/*! How a body is cut into pieces. */
typedef enum {
	WHOLE,
	BYTES,   /*!< One byte at a time. */
	RANDOM,  /*!< Random sizes from 1 to 64, seeded. */
} cut_t;

/*! Next piece length; each piece is a fresh heap copy so ASan sees over-reads. */
static size_t piece_len(cut_t cut, size_t left, unsigned *seed)
{
	switch (cut) {
	case BYTES:
		return 1;
	case RANDOM: {
		size_t n = 1 + rand_r(seed) % 64;
		return (n < left) ? n : left;
	}
	default:
		return left;
	}
}

static int list_feed(k8s_listsplit_t *s, const char *body, cut_t cut, unsigned seed, got_t *got)
{
	size_t len = strlen(body);
	size_t at = 0;
	while (at < len) {
		size_t n = piece_len(cut, len - at, &seed);
		char *piece = malloc(n);
		memcpy(piece, body + at, n);
		int ret = k8s_listsplit_feed(s, piece, n, collect, got);
		free(piece);
		if (ret != KNOT_EOK) {
			return ret;
		}
		at += n;
	}
	return KNOT_EOK;
}

/*! Splits \a body every way there is and checks each gives \a want, rv and cont. */
static void assert_list(const char *body, size_t max_item, const char **want, size_t count,
                        const char *rv, const char *cont, size_t skipped)
{
	for (unsigned seed = 0; seed < 40; seed++) {
		cut_t cut = (seed == 0) ? WHOLE : (seed == 1) ? BYTES : RANDOM;
		k8s_listsplit_t s;
		k8s_listsplit_init(&s, max_item);
		got_t got = { 0 };
		assert_int_equal(list_feed(&s, body, cut, seed, &got), KNOT_EOK);
		assert_true(s.done);
		assert_items(&got, want, count);
		assert_string_equal(s.rv, rv);
		if (cont == NULL) {
			assert_null(s.cont);
		} else {
			assert_non_null(s.cont);
			assert_string_equal(s.cont, cont);
		}
		assert_int_equal(s.skipped, skipped);
		got_free(&got);
		k8s_listsplit_deinit(&s);
		assert_null(s.cont);
		assert_string_equal(s.rv, "");
	}
}

static int list_once(const char *body, size_t max_item)
{
	k8s_listsplit_t s;
	k8s_listsplit_init(&s, max_item);
	got_t got = { 0 };
	int ret = list_feed(&s, body, WHOLE, 0, &got);
	got_free(&got);
	k8s_listsplit_deinit(&s);
	return ret;
}

/* --- list splitter ------------------------------------------------------------- */

static void list_items_after_metadata(void **state)
{
	const char *body =
		"{\"kind\":\"EndpointSliceList\",\"apiVersion\":\"discovery.k8s.io/v1\","
		"\"metadata\":{\"resourceVersion\":\"48230\",\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEi\","
		"\"remainingItemCount\":753},"
		"\"items\":[{\"metadata\":{\"name\":\"a\"},\"addressType\":\"IPv4\"},"
		"{\"metadata\":{\"name\":\"b\"},\"endpoints\":[{\"addresses\":[\"10.0.0.1\"]}]}]}";
	const char *want[] = {
		"{\"metadata\":{\"name\":\"a\"},\"addressType\":\"IPv4\"}",
		"{\"metadata\":{\"name\":\"b\"},\"endpoints\":[{\"addresses\":[\"10.0.0.1\"]}]}",
	};
	assert_list(body, 1 << 20, want, 2, "48230", "eyJ2IjoibWV0YS5rOHMuaW8vdjEi", 0);
}

static void list_items_before_metadata(void **state)
{
	const char *body =
		"{\"items\":[{\"metadata\":{\"name\":\"a\"}}],\"kind\":\"ServiceList\","
		"\"metadata\":{\"resourceVersion\":\"7\"},\"apiVersion\":\"v1\"}";
	const char *want[] = { "{\"metadata\":{\"name\":\"a\"}}" };
	assert_list(body, 1 << 20, want, 1, "7", NULL, 0);
}

static void list_items_null_empty_or_absent_give_none(void **state)
{
	const char *bodies[] = {
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":null}",
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[]}",
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"}}",
		"{ \"items\" : null , \"metadata\" : { \"resourceVersion\" : \"9\" } }",
		"{\"items\":[ ],\"metadata\":{\"resourceVersion\":\"9\"}}",
	};
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		assert_list(bodies[i], 1 << 20, NULL, 0, "9", NULL, 0);
	}
}

static void list_continue_empty_or_absent_is_null(void **state)
{
	assert_list("{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"\"},\"items\":[]}",
	            1 << 20, NULL, 0, "5", NULL, 0);
	assert_list("{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}", 1 << 20, NULL, 0, "5", NULL, 0);
	assert_list("{\"metadata\":{},\"items\":[]}", 1 << 20, NULL, 0, "", NULL, 0);
	assert_list("{\"metadata\":null,\"items\":[]}", 1 << 20, NULL, 0, "", NULL, 0);
	assert_list("{\"metadata\":{\"continue\":\"abc\"},\"items\":[]}", 1 << 20, NULL, 0, "", "abc", 0);
}

static void list_pretty_printed_body(void **state)
{
	// kubectl and curl User-Agents get this shape.
	const char *body =
		"{\n"
		"  \"kind\": \"ServiceList\",\n"
		"  \"apiVersion\": \"v1\",\n"
		"  \"metadata\": {\n"
		"    \"resourceVersion\": \"48230\"\n"
		"  },\n"
		"  \"items\": [\n"
		"    {\n"
		"      \"metadata\": {\n"
		"        \"name\": \"web\"\n"
		"      }\n"
		"    },\n"
		"    {\n"
		"      \"metadata\": {\n"
		"        \"name\": \"db\"\n"
		"      }\n"
		"    }\n"
		"  ]\n"
		"}\n";
	const char *want[] = {
		"{\n      \"metadata\": {\n        \"name\": \"web\"\n      }\n    }",
		"{\n      \"metadata\": {\n        \"name\": \"db\"\n      }\n    }",
	};
	assert_list(body, 1 << 20, want, 2, "48230", NULL, 0);
}

static void list_strings_with_escapes_and_brackets(void **state)
{
	const char *item1 = "{\"a\":\"}]\\\"{[\",\"b\":\"\\\\\",\"c\":\"\\\\\\\"}\",\"d\":\"\\u007d\"}";
	const char *item2 = "{\"items\":[\"not top level\"],\"metadata\":{\"resourceVersion\":\"0\"}}";
	char body[512];
	snprintf(body, sizeof(body),
	         "{\"it\\\"ems\":[{\"x\":1}],\"metadata\":{\"resourceVersion\":\"3\",\"x\":\"\\\"}\"},"
	         "\"items\":[%s,%s]}", item1, item2);
	const char *want[] = { item1, item2 };
	assert_list(body, 1 << 20, want, 2, "3", NULL, 0);
}

static void list_other_top_level_values_are_skipped(void **state)
{
	const char *body =
		"{\"kind\":\"X\",\"num\":-1.5e3,\"t\":true,\"f\":false,\"n\":null,\"obj\":{\"items\":[1]},"
		"\"arr\":[{\"a\":\"]\"},[]],\"a_key_longer_than_sixteen_bytes\":{\"items\":[2]},"
		"\"\\u0069tems\":[3],\"itemsX\":[4],\"item\":[5],"
		"\"items\":[{\"k\":1}],\"tail\":0}";
	const char *want[] = { "{\"k\":1}" };
	assert_list(body, 1 << 20, want, 1, "", NULL, 0);
}

static void list_items_that_are_not_objects_are_handed_over(void **state)
{
	// The object decoder rejects them; the splitter only finds where they end.
	const char *body = "{\"items\":[1,\"two\",null,[3,[4]],-5.5e-1, true ]}";
	const char *want[] = { "1", "\"two\"", "null", "[3,[4]]", "-5.5e-1", "true" };
	assert_list(body, 1 << 20, want, 6, "", NULL, 0);
}

static void list_oversize_items_are_skipped_and_counted(void **state)
{
	const char *small = "{\"metadata\":{\"name\":\"a\"}}";
	const char *big = "{\"metadata\":{\"name\":\"b\",\"annotations\":{\"x\":\"0123456789012345678901234567890123456789\"}}}";
	char body[512];
	snprintf(body, sizeof(body), "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[%s,%s,%s,%s]}",
	         small, big, small, big);
	const char *want[] = { small, small };
	assert_list(body, 40, want, 2, "1", NULL, 2);

	// An item of exactly max_item bytes is kept.
	const char *want_all[] = { small, big, small, big };
	assert_list(body, strlen(big), want_all, 4, "1", NULL, 0);
	assert_list(body, strlen(big) - 1, want, 2, "1", NULL, 2);
}

static void list_large_item_memory_is_released(void **state)
{
	size_t n = 3 << 20;
	char *body = malloc(n + 64);
	strcpy(body, "{\"items\":[{\"x\":\"");
	size_t at = strlen(body);
	memset(body + at, 'x', n);
	strcpy(body + at + n, "\"}]}");

	k8s_listsplit_t s;
	k8s_listsplit_init(&s, 16 << 20);
	got_t got = { 0 };
	size_t len = strlen(body);
	for (size_t off = 0; off < len; off += 16384) {
		size_t piece = (len - off < 16384) ? len - off : 16384;
		assert_int_equal(k8s_listsplit_feed(&s, body + off, piece, collect, &got), KNOT_EOK);
	}
	assert_true(s.done);
	assert_int_equal(got.count, 1);
	assert_int_equal(strlen(got.text[0]), n + 8);
	assert_int_equal(s.buf.cap, 0);
	got_free(&got);
	k8s_listsplit_deinit(&s);
	free(body);
}

static void list_callback_return_stops_the_feed(void **state)
{
	const char *body = "{\"items\":[{\"a\":1},{\"b\":2},{\"c\":3}]}";
	k8s_listsplit_t s;
	k8s_listsplit_init(&s, 1 << 20);
	got_t got = { .stop_at = 2 };
	assert_int_equal(k8s_listsplit_feed(&s, body, strlen(body), collect, &got), 42);
	assert_int_equal(got.count, 2);
	assert_false(s.done);
	got_free(&got);
	k8s_listsplit_deinit(&s);
}

static void list_done_only_after_the_closing_brace(void **state)
{
	const char *body = "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"a\":1}]}";
	size_t len = strlen(body);
	k8s_listsplit_t s;
	k8s_listsplit_init(&s, 1 << 20);
	got_t got = { 0 };
	assert_int_equal(k8s_listsplit_feed(&s, body, len - 1, collect, &got), KNOT_EOK);
	assert_false(s.done);
	assert_int_equal(got.count, 1);
	assert_int_equal(k8s_listsplit_feed(&s, body + len - 1, 1, collect, &got), KNOT_EOK);
	assert_true(s.done);
	// Whitespace may follow; anything else may not.
	assert_int_equal(k8s_listsplit_feed(&s, " \n", 2, collect, &got), KNOT_EOK);
	assert_int_equal(k8s_listsplit_feed(&s, "{", 1, collect, &got), KNOT_EMALF);
	got_free(&got);
	k8s_listsplit_deinit(&s);
}

static void list_malformed_bodies_are_rejected(void **state)
{
	const char *bodies[] = {
		"[]", "\"items\"", "x", "{,}", "{items:[]}", "{\"items\" []}", "{\"items\":\"x\"}",
		"{\"items\":5}", "{\"items\":{}}", "{\"items\":nul}", "{\"items\":nullx}", "{\"items\":[1,]}",
		"{\"items\":[,1]}", "{\"items\":[}]}", "{\"items\":[]]}", "{\"items\":[] \"kind\":1}",
		"{\"items\":[]} x", "{\"items\":[]}{}", "{\"metadata\":5,\"items\":[]}",
		"{\"metadata\":[],\"items\":[]}", "{\"metadata\":{\"resourceVersion\":\"1 2\"}}",
		"{\"metadata\":{\"resourceVersion\":\"1\",}}", "{\"kind\":}", "{\"kind\":@}",
		"{\"metadata\":{\"resourceVersion\":\"01234567890123456789012345678901234567890123456789012345678901234\"}}",
	};
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		if (list_once(bodies[i], 1 << 20) != KNOT_EMALF) {
			fail_msg("accepted: %s", bodies[i]);
		}
	}
}

static void list_items_of_a_real_list_decode(void **state)
{
	const char *body =
		"{\"kind\":\"EndpointSliceList\",\"apiVersion\":\"discovery.k8s.io/v1\","
		"\"metadata\":{\"resourceVersion\":\"48230\"},\"items\":["
		"{\"metadata\":{\"name\":\"db-x7k2p\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"db\"}},"
		"\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.244.1.17\"],\"conditions\":{\"ready\":true},"
		"\"hostname\":\"db-0\"}],\"ports\":[{\"name\":\"pg\",\"protocol\":\"TCP\",\"port\":5432}]},"
		"{\"metadata\":{\"name\":\"web-abcde\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"web\"}},"
		"\"addressType\":\"IPv6\",\"endpoints\":null,\"ports\":null}]}";
	k8s_listsplit_t s;
	k8s_listsplit_init(&s, 1 << 20);
	got_t got = { 0 };
	assert_int_equal(list_feed(&s, body, BYTES, 0, &got), KNOT_EOK);
	assert_int_equal(got.count, 2);
	for (size_t i = 0; i < got.count; i++) {
		k8s_object_t *obj = NULL;
		assert_int_equal(k8s_object_decode(K8S_ENDPOINTSLICE, got.text[i], strlen(got.text[i]),
		                                   &obj, NULL, 0), KNOT_EOK);
		assert_string_equal(((k8s_slice_t *)obj)->service, (i == 0) ? "db" : "web");
		k8s_object_free(obj);
	}
	got_free(&got);
	k8s_listsplit_deinit(&s);
}

static int check_item(void *ctx, const char *text, size_t len)
{
	size_t max_item = *(size_t *)ctx;
	assert_true(len > 0 && len <= max_item);
	return 0;
}

static void list_mutated_bodies_split_or_fail_cleanly(void **state)
{
	const char *body =
		"{\"kind\":\"ServiceList\",\"metadata\":{\"resourceVersion\":\"48230\",\"continue\":\"e30\"},"
		"\"items\":[{\"metadata\":{\"name\":\"a\\\"b\"},\"spec\":{\"ports\":[{\"port\":80}]}},"
		"{\"metadata\":{\"name\":\"c\"},\"x\":[1,2.5,true,null,\"]}\"]}]}";
	const char bytes[] = "\"\\{}[],:0n ";
	size_t len = strlen(body);
	unsigned seed = 11;
	for (int round = 0; round < 3000; round++) {
		char *text = malloc(len);
		memcpy(text, body, len);
		int edits = 1 + rand_r(&seed) % 3;
		for (int e = 0; e < edits; e++) {
			text[rand_r(&seed) % len] = bytes[rand_r(&seed) % (sizeof(bytes) - 1)];
		}
		size_t max_item = 20 + rand_r(&seed) % 100;
		k8s_listsplit_t s;
		k8s_listsplit_init(&s, max_item);
		int ret = KNOT_EOK;
		for (size_t at = 0; at < len && ret == KNOT_EOK; ) {
			size_t n = piece_len(RANDOM, len - at, &seed);
			char *piece = malloc(n);
			memcpy(piece, text + at, n);
			ret = k8s_listsplit_feed(&s, piece, n, check_item, &max_item);
			free(piece);
			at += n;
		}
		assert_true(ret == KNOT_EOK || ret == KNOT_EMALF);
		assert_true(strlen(s.rv) < sizeof(s.rv));
		k8s_listsplit_deinit(&s);
		free(text);
	}
}

/* --- line splitter ------------------------------------------------------------- */

static int line_feed(k8s_linesplit_t *s, const char *stream, cut_t cut, unsigned seed, got_t *got)
{
	size_t len = strlen(stream);
	size_t at = 0;
	while (at < len) {
		size_t n = piece_len(cut, len - at, &seed);
		char *piece = malloc(n);
		memcpy(piece, stream + at, n);
		int ret = k8s_linesplit_feed(s, piece, n, collect, got);
		free(piece);
		if (ret != KNOT_EOK) {
			return ret;
		}
		at += n;
	}
	return KNOT_EOK;
}

/*! Splits \a stream every way there is; each must give \a want, \a skipped and \a pending. */
static void assert_lines(const char *stream, size_t max_line, const char **want, size_t count,
                         size_t skipped, size_t pending)
{
	for (unsigned seed = 0; seed < 40; seed++) {
		cut_t cut = (seed == 0) ? WHOLE : (seed == 1) ? BYTES : RANDOM;
		k8s_linesplit_t s;
		k8s_linesplit_init(&s, max_line);
		got_t got = { 0 };
		assert_int_equal(line_feed(&s, stream, cut, seed, &got), KNOT_EOK);
		assert_items(&got, want, count);
		assert_int_equal(s.skipped, skipped);
		assert_int_equal(k8s_linesplit_pending(&s), pending);
		got_free(&got);
		k8s_linesplit_deinit(&s);
	}
}

static void line_events_split_across_feeds(void **state)
{
	const char *stream =
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":\"web-7x2kq\"}}}\n"
		"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"EndpointSlice\",\"metadata\":{\"resourceVersion\":\"48294\"}}}\n";
	const char *want[] = {
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":\"web-7x2kq\"}}}",
		"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"EndpointSlice\",\"metadata\":{\"resourceVersion\":\"48294\"}}}",
	};
	assert_lines(stream, 1 << 20, want, 2, 0, 0);
}

static void line_many_events_in_one_feed(void **state)
{
	const char *want[] = { "{\"a\":1}", "{\"b\":2}", "{\"c\":3}", "{\"d\":4}", "{\"e\":5}" };
	k8s_linesplit_t s;
	k8s_linesplit_init(&s, 1 << 20);
	got_t got = { 0 };
	const char *stream = "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n{\"e\":5}\n";
	assert_int_equal(k8s_linesplit_feed(&s, stream, strlen(stream), collect, &got), KNOT_EOK);
	assert_items(&got, want, 5);
	got_free(&got);
	k8s_linesplit_deinit(&s);
}

static void line_crlf_and_empty_lines(void **state)
{
	const char *want[] = { "{\"a\":1}", "{\"b\":2}", "c\rd" };
	assert_lines("\n{\"a\":1}\r\n\r\n\n{\"b\":2}\nc\rd\n\r\n", 1 << 20, want, 3, 0, 0);
}

static void line_cut_mid_line_is_pending(void **state)
{
	const char *want[] = { "{\"a\":1}" };
	assert_lines("{\"a\":1}\n{\"b\":", 1 << 20, want, 1, 0, 5);

	k8s_linesplit_t s;
	k8s_linesplit_init(&s, 1 << 20);
	got_t got = { 0 };
	assert_int_equal(k8s_linesplit_feed(&s, "{\"b\":", 5, collect, &got), KNOT_EOK);
	assert_int_equal(k8s_linesplit_pending(&s), 5);
	assert_int_equal(k8s_linesplit_feed(&s, "2}\n", 3, collect, &got), KNOT_EOK);
	assert_int_equal(k8s_linesplit_pending(&s), 0);
	const char *whole[] = { "{\"b\":2}" };
	assert_items(&got, whole, 1);
	got_free(&got);
	k8s_linesplit_deinit(&s);
}

static void line_oversize_lines_are_skipped_and_counted(void **state)
{
	const char *want[] = { "short", "12345678", "ok" };
	assert_lines("short\n123456789\n12345678\r\n123456789\r\nxxxxxxxxxxxxxxxxxxxxxxxxx\nok\n",
	             8, want, 3, 3, 0);

	// A cut inside an oversize line still leaves something pending.
	const char *first[] = { "short" };
	assert_lines("short\nxxxxxxxxxxxxxxxxxxxxxxxxx", 8, first, 1, 1, 9);
}

static void line_callback_return_stops_the_feed(void **state)
{
	k8s_linesplit_t s;
	k8s_linesplit_init(&s, 1 << 20);
	got_t got = { .stop_at = 1 };
	assert_int_equal(k8s_linesplit_feed(&s, "a\nb\n", 4, collect, &got), 42);
	assert_int_equal(got.count, 1);
	got_free(&got);
	k8s_linesplit_deinit(&s);
}

/* --- heads of skipped items, and what they name ------------------------------- */

static void list_oversize_items_give_their_head_to_on_skip(void **state)
{
	const char *small = "{\"metadata\":{\"name\":\"a\"}}";
	const char *big = "{\"metadata\":{\"name\":\"b\",\"annotations\":{\"x\":\"0123456789012345678901234567890123456789\"}}}";
	char body[512];
	snprintf(body, sizeof(body), "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[%s,%s,%s,%s]}",
	         small, big, small, big);
	char head[41];
	memcpy(head, big, 40);
	head[40] = '\0';
	const char *want[] = { small, small };
	const char *heads[] = { head, head };
	for (unsigned seed = 0; seed < 40; seed++) {
		cut_t cut = (seed == 0) ? WHOLE : (seed == 1) ? BYTES : RANDOM;
		k8s_listsplit_t s;
		k8s_listsplit_init(&s, 40);
		got_t got = { 0 }, skipped = { 0 };
		s.on_skip = collect;
		s.skip_ctx = &skipped;
		assert_int_equal(list_feed(&s, body, cut, seed, &got), KNOT_EOK);
		assert_items(&got, want, 2);
		assert_items(&skipped, heads, 2); // The first max_item bytes of each.
		assert_int_equal(s.skipped, 2);
		got_free(&got);
		got_free(&skipped);
		k8s_listsplit_deinit(&s);
	}
}

static void line_oversize_lines_give_their_head_to_on_skip(void **state)
{
	const char *stream = "short\n123456789\n12345678\r\nabcdefghijklmnopqrstuvwxy\nok\n";
	const char *want[] = { "short", "12345678", "ok" };
	const char *heads[] = { "12345678", "abcdefgh" };
	for (unsigned seed = 0; seed < 40; seed++) {
		cut_t cut = (seed == 0) ? WHOLE : (seed == 1) ? BYTES : RANDOM;
		k8s_linesplit_t s;
		k8s_linesplit_init(&s, 8);
		got_t got = { 0 }, skipped = { 0 };
		s.on_skip = collect;
		s.skip_ctx = &skipped;
		assert_int_equal(line_feed(&s, stream, cut, seed, &got), KNOT_EOK);
		assert_items(&got, want, 3);
		assert_items(&skipped, heads, 2);
		got_free(&got);
		got_free(&skipped);
		k8s_linesplit_deinit(&s);
	}
}

static void ident_reads_namespace_name_and_version_from_a_cut_head(void **state)
{
	const char *obj = "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web\","
	                  "\"namespace\":\"shop\",\"uid\":\"u\",\"resourceVersion\":\"48211\","
	                  "\"labels\":{\"name\":\"not-this\"},\"annotations\":{\"x\":\"[{\\\"";
	k8s_json_ident_t id;
	assert_int_equal(k8s_json_ident(obj, strlen(obj), false, &id), KNOT_EOK);
	assert_string_equal(id.ns, "shop");
	assert_string_equal(id.name, "web");
	assert_string_equal(id.rv, "48211");
	assert_string_equal(id.type, "");

	// Cut before the name: nothing to name it by.
	assert_int_equal(k8s_json_ident(obj, 55, false, &id), KNOT_ENOENT);
	assert_string_equal(id.name, "");
}

static void ident_reads_the_type_and_the_object_of_a_watch_event(void **state)
{
	const char *ev = "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Namespace\",\"spec\":"
	                 "{\"metadata\":{\"name\":\"nested\"}},\"metadata\":{\"name\":\"team-a\","
	                 "\"resourceVersion\":\"9\"},\"status\":{\"phase\":\"Terminating\"}}}";
	k8s_json_ident_t id;
	assert_int_equal(k8s_json_ident(ev, strlen(ev), true, &id), KNOT_EOK);
	assert_string_equal(id.type, "DELETED");
	assert_string_equal(id.name, "team-a");
	assert_string_equal(id.ns, "");
	assert_string_equal(id.rv, "9");

	// Read as an object, the event has no metadata of its own.
	assert_int_equal(k8s_json_ident(ev, strlen(ev), false, &id), KNOT_ENOENT);
}

static void ident_leaves_escaped_or_odd_values_empty(void **state)
{
	const char *obj = "{\"metadata\":{\"name\":\"we\\u0062\",\"namespace\":\"a b\","
	                  "\"resourceVersion\":\"1\"}}";
	k8s_json_ident_t id;
	assert_int_equal(k8s_json_ident(obj, strlen(obj), false, &id), KNOT_ENOENT);
	assert_string_equal(id.name, "");
	assert_string_equal(id.ns, "");
	assert_string_equal(id.rv, "1");
	assert_int_equal(k8s_json_ident("]", 1, false, &id), KNOT_EMALF);
	assert_int_equal(k8s_json_ident("", 0, false, &id), KNOT_ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_items_after_metadata),
		cmocka_unit_test(list_items_before_metadata),
		cmocka_unit_test(list_items_null_empty_or_absent_give_none),
		cmocka_unit_test(list_continue_empty_or_absent_is_null),
		cmocka_unit_test(list_pretty_printed_body),
		cmocka_unit_test(list_strings_with_escapes_and_brackets),
		cmocka_unit_test(list_other_top_level_values_are_skipped),
		cmocka_unit_test(list_items_that_are_not_objects_are_handed_over),
		cmocka_unit_test(list_oversize_items_are_skipped_and_counted),
		cmocka_unit_test(list_large_item_memory_is_released),
		cmocka_unit_test(list_callback_return_stops_the_feed),
		cmocka_unit_test(list_done_only_after_the_closing_brace),
		cmocka_unit_test(list_malformed_bodies_are_rejected),
		cmocka_unit_test(list_items_of_a_real_list_decode),
		cmocka_unit_test(list_mutated_bodies_split_or_fail_cleanly),
		cmocka_unit_test(line_events_split_across_feeds),
		cmocka_unit_test(line_many_events_in_one_feed),
		cmocka_unit_test(line_crlf_and_empty_lines),
		cmocka_unit_test(line_cut_mid_line_is_pending),
		cmocka_unit_test(line_oversize_lines_are_skipped_and_counted),
		cmocka_unit_test(line_callback_return_stops_the_feed),
		cmocka_unit_test(list_oversize_items_give_their_head_to_on_skip),
		cmocka_unit_test(line_oversize_lines_give_their_head_to_on_skip),
		cmocka_unit_test(ident_reads_namespace_name_and_version_from_a_cut_head),
		cmocka_unit_test(ident_reads_the_type_and_the_object_of_a_watch_event),
		cmocka_unit_test(ident_leaves_escaped_or_odd_values_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
