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
 * The K8S-DNS role's stub zones (module/federation/fedstub.c): request bodies and the
 * persisted file are hostile input, read with caps; sets are merged with
 * programming over configuration.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "federation/fedstub.h"

static int body(const char *text, k8s_fedstub_t *fed)
{
	char err[160];
	memset(fed, 0, sizeof(*fed));
	return k8s_fedstub_body(text, strlen(text), fed, err, sizeof(err));
}

static const char *ns_text(const k8s_fedstub_t *fed, size_t i)
{
	static char buf[64];
	k8s_sockaddr_text(&fed->ns[i], buf, sizeof(buf));
	return buf;
}

static void a_body_gives_the_nameservers_in_order(void **state)
{
	k8s_fedstub_t fed;
	assert_int_equal(body("{\"nameservers\": [\"108.45.90.180\", \"108.180.64.128\"]}", &fed),
	                 KNOT_EOK);
	assert_int_equal(fed.count, 2);
	assert_string_equal(ns_text(&fed, 0), "108.45.90.180");
	assert_string_equal(ns_text(&fed, 1), "108.180.64.128");
	assert_int_equal(body("{\"nameservers\": [\"2001:db8::1@5353\", \"127.0.0.1@53\"]}", &fed),
	                 KNOT_EOK);
	assert_string_equal(ns_text(&fed, 0), "2001:db8::1@5353");
	assert_string_equal(ns_text(&fed, 1), "127.0.0.1");
}

static void a_nameserver_given_twice_is_refused_another_port_is_another_one(void **state)
{
	k8s_fedstub_t fed;
	assert_int_equal(body("{\"nameservers\": [\"10.0.0.1\", \"10.0.0.1@53\"]}", &fed),
	                 KNOT_EINVAL);
	assert_int_equal(body("{\"nameservers\": [\"2001:db8::1\", \"2001:db8:0::1\"]}", &fed),
	                 KNOT_EINVAL);
	assert_int_equal(body("{\"nameservers\": [\"10.0.0.1\", \"10.0.0.1@54\"]}", &fed),
	                 KNOT_EOK);
	assert_int_equal(fed.count, 2);
	assert_string_equal(ns_text(&fed, 1), "10.0.0.1@54");
}

static void a_body_that_is_not_exactly_the_nameserver_list_is_refused(void **state)
{
	k8s_fedstub_t fed;
	static const char *bad[] = {
		"", "{", "[]", "null", "{}", "{\"nameservers\": []}",
		"{\"nameservers\": \"1.2.3.4\"}",
		"{\"nameservers\": [1234]}",
		"{\"nameservers\": [\"1.2.3.4\"], \"extra\": true}",
		"{\"nameservers\": [\"1.2.3.4\"]} trailing",
		"{\"nameservers\": [\"1.2.3.4\"]}{}",
		"{\"nameservers\": [\"example.com\"]}",
		"{\"nameservers\": [\"1.2.3.4@0\"]}",
		"{\"nameservers\": [\"1.2.3.4@65536\"]}",
		"{\"nameservers\": [\"1.2.3.4@\"]}",
		"{\"nameservers\": [\"1.2.3.4@+53\"]}",
		"{\"nameservers\": [\"1.2.3.4 \"]}",
		"{\"nameservers\": [\"1.2.3.4\\u0000x\"]}",
		"{\"nameservers\": [\"1.2.3.4\", \"1.2.3.4\"]}",
		"{\"nameservers\": [[[[[[[[[[\"1.2.3.4\"]]]]]]]]]]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(body(bad[i], &fed), KNOT_EOK);
	}
}

static void a_body_over_the_caps_is_refused(void **state)
{
	k8s_fedstub_t fed;
	char text[K8S_FEDSTUB_MAX_BODY + 64];
	int len = snprintf(text, sizeof(text), "{\"nameservers\": [");
	for (int i = 0; i <= K8S_FEDSTUB_MAX_NS; i++) {
		len += snprintf(text + len, sizeof(text) - len, "%s\"10.0.0.%d\"", i ? "," : "", i + 1);
	}
	snprintf(text + len, sizeof(text) - len, "]}");
	assert_int_equal(body(text, &fed), KNOT_ELIMIT);

	memset(text, ' ', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	memcpy(text + sizeof(text) - 32, "{\"nameservers\": [\"1.2.3.4\"]}", 29);
	char err[160];
	assert_int_equal(k8s_fedstub_body(text, K8S_FEDSTUB_MAX_BODY + 1, &fed, err, sizeof(err)),
	                 KNOT_ELIMIT);
}

static void a_static_value_is_name_and_nameservers(void **state)
{
	k8s_fedstub_t fed;
	char err[128];
	assert_int_equal(k8s_fedstub_static("myfed=10.0.0.1,10.0.0.2@5353", &fed, err, sizeof(err)),
	                 KNOT_EOK);
	assert_memory_equal(fed.name, "\x05myfed", 6);
	assert_int_equal(fed.count, 2);
	assert_string_equal(ns_text(&fed, 1), "10.0.0.2@5353");
	assert_int_not_equal(k8s_fedstub_static("myfed", &fed, err, sizeof(err)), KNOT_EOK);
	assert_int_not_equal(k8s_fedstub_static("My_Fed=10.0.0.1", &fed, err, sizeof(err)), KNOT_EOK);
	assert_int_not_equal(k8s_fedstub_static("myfed=", &fed, err, sizeof(err)), KNOT_EOK);
	assert_int_not_equal(k8s_fedstub_static("myfed=10.0.0.1,", &fed, err, sizeof(err)), KNOT_EOK);
	assert_int_not_equal(k8s_fedstub_static("=10.0.0.1", &fed, err, sizeof(err)), KNOT_EOK);
}

static void the_file_reads_back_what_was_written(void **state)
{
	k8s_fedstub_t a, b;
	char err[160];
	assert_int_equal(k8s_fedstub_static("alpha=10.0.0.1", &a, err, sizeof(err)), KNOT_EOK);
	assert_int_equal(k8s_fedstub_static("beta=::1@5353,10.0.0.2", &b, err, sizeof(err)), KNOT_EOK);
	k8s_fedstub_set_t *one = k8s_fedstub_put(NULL, &a);
	k8s_fedstub_set_t *two = k8s_fedstub_put(one, &b);
	char *text = k8s_fedstub_file_format(two);
	assert_non_null(text);
	k8s_fedstub_set_t *read = NULL;
	assert_int_equal(k8s_fedstub_file_parse(text, strlen(text), &read, err, sizeof(err)), KNOT_EOK);
	assert_int_equal(read->count, 2);
	const k8s_fedstub_t *got = k8s_fedstub_find(read, (const uint8_t *)"\x04""beta");
	assert_non_null(got);
	assert_int_equal(got->count, 2);
	assert_string_equal(ns_text(got, 0), "::1@5353");
	free(text);
	free(read);
	free(one);
	free(two);
}

static void a_bad_file_is_refused(void **state)
{
	static const char *bad[] = {
		"",
		"{}",
		"{\"version\": 2, \"federations\": {}}",
		"{\"version\": \"1\", \"federations\": {}}",
		"{\"version\": 1, \"federations\": []}",
		"{\"version\": 1, \"federations\": {\"Bad\": {\"nameservers\": [\"1.2.3.4\"]}}}",
		"{\"version\": 1, \"federations\": {\"ok\": {\"nameservers\": [\"nope\"]}}}",
		"{\"version\": 1, \"federations\": {\"ok\": {\"nameservers\": []}}}",
		"{\"version\": 1, \"federations\": {\"ok\": 1}}",
		"{\"version\": 1, \"federations\": {}} x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k8s_fedstub_set_t *set = NULL;
		char err[160];
		assert_int_not_equal(k8s_fedstub_file_parse(bad[i], strlen(bad[i]), &set, err,
		                                             sizeof(err)), KNOT_EOK);
		assert_null(set);
	}
}

static void a_file_with_too_many_federations_is_refused(void **state)
{
	size_t cap = 64 * (K8S_FEDSTUB_MAX_FEDS + 2) + 64;
	char *text = malloc(cap);
	int len = snprintf(text, cap, "{\"version\": 1, \"federations\": {");
	for (int i = 0; i <= K8S_FEDSTUB_MAX_FEDS; i++) {
		len += snprintf(text + len, cap - len, "%s\"f%d\": {\"nameservers\": [\"10.0.0.1\"]}",
		                i ? "," : "", i);
	}
	snprintf(text + len, cap - len, "}}");
	k8s_fedstub_set_t *set = NULL;
	char err[160];
	assert_int_equal(k8s_fedstub_file_parse(text, strlen(text), &set, err, sizeof(err)),
	                 KNOT_ELIMIT);
	free(text);
}

static void programming_overrides_configuration_and_delete_restores_it(void **state)
{
	k8s_fedstub_t conf_fed, prog_fed, other;
	char err[128];
	assert_int_equal(k8s_fedstub_static("fed=10.0.0.1", &conf_fed, err, sizeof(err)), KNOT_EOK);
	assert_int_equal(k8s_fedstub_static("fed=10.0.0.9", &prog_fed, err, sizeof(err)), KNOT_EOK);
	assert_int_equal(k8s_fedstub_static("other=10.0.0.5", &other, err, sizeof(err)), KNOT_EOK);
	k8s_fedstub_set_t *configured = k8s_fedstub_put(NULL, &conf_fed);
	k8s_fedstub_set_t *programmed = k8s_fedstub_put(NULL, &prog_fed);
	k8s_fedstub_set_t *more = k8s_fedstub_put(programmed, &other);
	k8s_fedstub_set_t *merged = k8s_fedstub_merge(more, configured);
	assert_int_equal(merged->count, 2);
	assert_string_equal(ns_text(k8s_fedstub_find(merged, (const uint8_t *)"\x03""fed"), 0),
	                    "10.0.0.9");
	k8s_fedstub_set_t *less = k8s_fedstub_del(more, (const uint8_t *)"\x03""fed");
	k8s_fedstub_set_t *merged2 = k8s_fedstub_merge(less, configured);
	assert_string_equal(ns_text(k8s_fedstub_find(merged2, (const uint8_t *)"\x03""fed"), 0),
	                    "10.0.0.1");
	assert_non_null(k8s_fedstub_find(merged2, (const uint8_t *)"\x05""other"));
	free(configured);
	free(programmed);
	free(more);
	free(merged);
	free(less);
	free(merged2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_body_gives_the_nameservers_in_order),
		cmocka_unit_test(a_nameserver_given_twice_is_refused_another_port_is_another_one),
		cmocka_unit_test(a_body_that_is_not_exactly_the_nameserver_list_is_refused),
		cmocka_unit_test(a_body_over_the_caps_is_refused),
		cmocka_unit_test(a_static_value_is_name_and_nameservers),
		cmocka_unit_test(the_file_reads_back_what_was_written),
		cmocka_unit_test(a_bad_file_is_refused),
		cmocka_unit_test(a_file_with_too_many_federations_is_refused),
		cmocka_unit_test(programming_overrides_configuration_and_delete_restores_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
