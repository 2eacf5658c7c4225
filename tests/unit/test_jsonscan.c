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
 * The JSON tape (module/lib/jsonscan.c): RFC 8259 strictly, values as json-c reads them
 * (the last of equal keys, integers clamped, escapes and surrogates), the bounds, and
 * against json-c itself on real objects and every one-byte edit of them
 * (tests/fuzz/fz_jsondiff.h, which fuzz_jsonscan.c runs on libFuzzer's inputs).
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

#include "lib/jsonscan.h"
#include "../fuzz/fz_jsondiff.h"

static int scan(k8s_jtape_t *t, const char *text)
{
	char err[128] = "";
	return k8s_jtape_scan(t, text, strlen(text), err, sizeof(err));
}

static void rfc8259_is_accepted_and_everything_else_refused(void **state)
{
	(void)state;
	static const char *good[] = {
		"{}", "[]", " {\"a\":1} ", "{\"a\":-0}", "{\"a\":1e5}", "{\"a\":1E+2}", "{\"a\":0.5e-3}",
		"{\"a\":[1,2,{\"b\":null}]}", "{\"a\":\"x\\ty\\u0041\\/\"}", "\t{\"a\":true,\"b\":false}\r\n",
		"\"text\"", "12", "null", "{\"\\u0061\":1}",
	};
	static const char *bad[] = {
		"", " ", "{", "{\"a\":01}", "{\"a\":00}", "{\"a\":-01}", "{\"a\":1.}", "{\"a\":.5}",
		"{\"a\":1e}", "{\"a\":-}", "{\"a\":+1}", "{\"a\":NaN}", "{'a':1}", "{a:1}",
		"{\"a\":True}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":1,}", "[1,]", "[1 2]",
		"{\"a\" 1}", "{\"a\":1 \"b\":2}", "{\"a\":true}x", "{/*c*/\"a\":1}",
		"{\"a\":\"x\x01y\"}", "{\"a\":\"x\ny\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"\\uZZZZ\"}", "{\"a\":\"\\U0041\"}", "{\v\"a\":1}", "{\f\"a\":1}",
		"{\"a\":\"unterminated}", "{\"a\":1}}", "[[]", "{} {}",
	};
	k8s_jtape_t t;
	k8s_jtape_init(&t);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (scan(&t, good[i]) != KNOT_EOK) {
			fail_msg("refused: %s", good[i]);
		}
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (scan(&t, bad[i]) != KNOT_EMALF) {
			fail_msg("accepted: %s", bad[i]);
		}
		assert_int_equal(t.count, 0);  // a refused text leaves nothing to read
	}
	// A NUL ends nothing: it is a byte that is not JSON.
	static const char nul[] = "{\"a\":1}\0";
	assert_int_equal(k8s_jtape_scan(&t, nul, sizeof(nul) - 1, NULL, 0), KNOT_EMALF);
	k8s_jtape_deinit(&t);
}

static void values_read_as_json_c_reads_them(void **state)
{
	(void)state;
	k8s_jtape_t t;
	k8s_jtape_init(&t);
	assert_int_equal(scan(&t, "{\"a\":1,\"s\":\"x\",\"a\":2,\"big\":18446744073709551616,"
	                          "\"low\":-9223372036854775809,\"max\":9223372036854775807,"
	                          "\"d\":1.5,\"b\":true,\"n\":null,\"o\":{\"k\":[]}}"), KNOT_EOK);
	k8s_jv_t root = k8s_jtape_root(&t);
	assert_int_equal(jv_int(root, "a", 0), 2);           // the last of equal keys
	assert_int_equal(jv_int(root, "big", 0), INT64_MAX);  // clamped
	assert_int_equal(jv_int(root, "low", 0), INT64_MIN);
	assert_int_equal(jv_int(root, "max", 0), INT64_MAX);
	assert_int_equal(jv_int(root, "d", 7), 7);            // not an integer
	assert_int_equal(jv_int(root, "s", 7), 7);            // another type reads as absent
	assert_true(jv_bool(root, "b", false));
	assert_true(jv_bool(root, "n", true));                // null: the default
	assert_true(jv_is(jv_get(root, "n", K8S_JNULL), K8S_JNULL));
	assert_true(str_is(jv_str(root, "s"), "x"));
	assert_null(jv_str(root, "missing").ptr);
	assert_int_equal(jv_len(jv_arr(jv_obj(root, "o"), "k")), 0);
	assert_null(jv_first(jv_arr(jv_obj(root, "o"), "k")).t);
	assert_null(jv_obj(jv_obj(root, "missing"), "k").t);  // reads chain through absence

	// jv_pick() reads several keys in one walk, each as jv_get() reads it.
	static const k8s_jkey_t keys[] = {
		JKEY("a", K8S_JINT), JKEY("s", K8S_JINT), JKEY("o", K8S_JOBJECT),
		JKEY("missing", K8S_JSTRING), JKEY("n", K8S_JNULL),
	};
	k8s_jv_t at[5];
	jv_pick(root, keys, 5, at);
	for (size_t i = 0; i < 5; i++) {
		k8s_jv_t one = jv_get(root, keys[i].name, keys[i].type);
		assert_ptr_equal(at[i].t, one.t);
		assert_int_equal(at[i].i, one.i);
	}
	assert_int_equal(root.t->toks[at[0].i].i, 2);          // the last of equal keys
	assert_null(at[1].t);                                   // another type reads as absent
	assert_int_equal(jv_len(jv_arr(at[2], "k")), 0);
	jv_pick(jv_obj(root, "missing"), keys, 2, at);          // absent: every key absent
	assert_null(at[0].t);
	assert_null(at[1].t);

	// Escapes, surrogate pairs, lone halves as U+FFFD, an embedded NUL reads as absent.
	assert_int_equal(scan(&t, "{\"e\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\",\"u\":\"\\u00e9\\ud83d\\ude00\","
	                          "\"lone\":\"\\ud83dx\\ude00\",\"nul\":\"a\\u0000b\"}"), KNOT_EOK);
	root = k8s_jtape_root(&t);
	assert_true(str_is(jv_str(root, "e"), "a\"b\\c/d\b\f\n\r\t"));
	assert_true(str_is(jv_str(root, "u"), "\xc3\xa9\xf0\x9f\x98\x80"));
	assert_true(str_is(jv_str(root, "lone"), "\xef\xbf\xbdx\xef\xbf\xbd"));
	assert_null(jv_str(root, "nul").ptr);
	static const k8s_jkey_t escaped[] = { JKEY("e", K8S_JSTRING), JKEY("u", K8S_JSTRING) };
	k8s_jv_t picked[2];
	jv_pick(root, escaped, 2, picked);
	assert_true(str_is(jv_str_of(picked[0]), "a\"b\\c/d\b\f\n\r\t"));
	assert_true(str_is(jv_str_of(picked[1]), "\xc3\xa9\xf0\x9f\x98\x80"));

	// Arrays in order, however nested.
	assert_int_equal(scan(&t, "[[1,[2]],{\"x\":3},4]"), KNOT_EOK);
	root = k8s_jtape_root(&t);
	assert_int_equal(jv_len(root), 3);
	int kinds[3], n = 0;
	JV_EACH(elem, root) {
		kinds[n++] = jv_type(elem);
	}
	assert_int_equal(n, 3);
	assert_int_equal(kinds[0], K8S_JARRAY);
	assert_int_equal(kinds[1], K8S_JOBJECT);
	assert_int_equal(kinds[2], K8S_JINT);
	k8s_jtape_deinit(&t);
}

static void nesting_and_counts_are_bounded_as_json_c_trees_are(void **state)
{
	(void)state;
	k8s_jtape_t t;
	k8s_jtape_init(&t);
	char deep[2 * (K8S_JSON_DEPTH + 1) + 1];
	for (size_t d = K8S_JSON_DEPTH; d <= K8S_JSON_DEPTH + 1; d++) {
		memset(deep, '[', d);
		memset(deep + d, ']', d);
		deep[2 * d] = '\0';
		assert_int_equal(scan(&t, deep), (d <= K8S_JSON_DEPTH) ? KNOT_EOK : KNOT_EMALF);
		assert_true(fz_jsondiff(&t, deep, 2 * d));
	}
	// An array of MAX - 1 numbers is MAX values; one more is refused before it is scanned,
	// as json-c's tree was.
	size_t numbers = K8S_JSON_VALUES_MAX, len = 2 * numbers + 1;
	char *many = malloc(len + 1);
	assert_non_null(many);
	many[0] = '[';
	for (size_t i = 0; i < numbers; i++) {
		memcpy(many + 1 + 2 * i, (i + 1 < numbers) ? "1," : "1]", 2);
	}
	many[len] = '\0';
	assert_int_equal(k8s_jtape_scan(&t, many, len, NULL, 0), KNOT_ESPACE);
	memcpy(many + len - 4, "1]  ", 4);  // one number fewer
	assert_int_equal(k8s_jtape_scan(&t, many, len, NULL, 0), KNOT_EOK);
	assert_int_equal(jv_len(k8s_jtape_root(&t)), numbers - 1);
	// A tape grown for a large text gives its memory back before the next one.
	assert_true(t.cap >= K8S_JSON_VALUES_MAX);
	assert_int_equal(scan(&t, "{}"), KNOT_EOK);
	assert_true(t.cap < K8S_JSON_VALUES_MAX);
	free(many);
	k8s_jtape_deinit(&t);
}

/*! Objects as the API server sends them, which every one-byte edit below starts from. */
static const char *SEEDS[] = {
	"{\"kind\":\"EndpointSlice\",\"apiVersion\":\"discovery.k8s.io/v1\",\"metadata\":{\"name\":"
	"\"web-abc\",\"namespace\":\"default\",\"uid\":\"5b0c\",\"resourceVersion\":\"123\","
	"\"labels\":{\"kubernetes.io/service-name\":\"web\"},\"annotations\":{\"endpoints."
	"kubernetes.io/last-change-trigger-time\":\"2026-01-01T00:00:00.123456Z\"}},"
	"\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.1.2.3\"],\"conditions\":"
	"{\"ready\":true},\"hostname\":\"web-0\",\"targetRef\":{\"kind\":\"Pod\",\"name\":\"web-0\"}}],"
	"\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":8080}]}",
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":"
	"{\"resourceVersion\":\"77\",\"creationTimestamp\":null,\"annotations\":{\"k8s.io/initial-"
	"events-end\":\"true\"}},\"spec\":{},\"status\":{\"loadBalancer\":{}}}}",
	"{\"kind\":\"Status\",\"code\":410,\"message\":\"too old: \\u003c7\\u003e \\ud83d\\ude00\","
	"\"details\":{\"retryAfterSeconds\":-1.5e2}}",
};

static void every_one_byte_edit_reads_as_json_c_reads_it(void **state)
{
	(void)state;
	static const char bytes[] = "{}[]\",:\\0-.eE+u \x00\x1f\x7f\x80" "a";
	k8s_jtape_t t;
	k8s_jtape_init(&t);
	size_t checked = 0;
	for (size_t s = 0; s < sizeof(SEEDS) / sizeof(SEEDS[0]); s++) {
		size_t len = strlen(SEEDS[s]);
		char *text = malloc(len + 1);
		assert_non_null(text);
		assert_true(fz_jsondiff(&t, SEEDS[s], len));
		for (size_t at = 0; at < len; at++) {
			// The byte deleted, then replaced by each of the bytes that matter to a lexer.
			memcpy(text, SEEDS[s], at);
			memcpy(text + at, SEEDS[s] + at + 1, len - at - 1);
			if (!fz_jsondiff(&t, text, len - 1)) {
				fail_msg("seed %zu without byte %zu: %.*s", s, at, (int)(len - 1), text);
			}
			memcpy(text, SEEDS[s], len);
			for (size_t b = 0; b < sizeof(bytes) - 1; b++) {
				text[at] = bytes[b];
				if (!fz_jsondiff(&t, text, len)) {
					fail_msg("seed %zu with 0x%02x at %zu: %.*s", s, (unsigned char)bytes[b],
					         at, (int)len, text);
				}
				checked++;
			}
		}
		free(text);
	}
	assert_true(checked > 10000);
	k8s_jtape_deinit(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc8259_is_accepted_and_everything_else_refused),
		cmocka_unit_test(values_read_as_json_c_reads_them),
		cmocka_unit_test(nesting_and_counts_are_bounded_as_json_c_trees_are),
		cmocka_unit_test(every_one_byte_edit_reads_as_json_c_reads_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
