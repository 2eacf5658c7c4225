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
 * DNS names as Kubernetes spells them (module/dnsname.c): the one rule the API
 * decoder, the federation options and the conf check share.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dnsname.h"

static bool label(const char *s, bool fold)
{
	return k8s_dns_label_valid(s, strlen(s), fold);
}

static bool cluster_id(const char *s, bool fold)
{
	return k8s_cluster_id_valid(s, strlen(s), fold);
}

static void a_label_is_lowercase_letters_digits_and_inner_hyphens(void **state)
{
	assert_true(label("web", false));
	assert_true(label("0db-1", false));
	assert_true(label("a--b", false));
	assert_false(label("", false));
	assert_false(label("-web", false));
	assert_false(label("web-", false));
	assert_false(label("w_b", false));
	assert_false(label("w.b", false));
}

static void a_label_is_at_most_63_bytes(void **state)
{
	char text[65];
	memset(text, 'a', 64);
	text[64] = '\0';
	assert_false(label(text, false));
	text[63] = '\0';
	assert_true(label(text, false));
}

static void uppercase_passes_only_when_folded(void **state)
{
	assert_false(label("Web", false));
	assert_true(label("Web", true));
	assert_false(label("-Web", true));
}

static void a_name_is_labels_joined_by_dots(void **state)
{
	const char *name = "db.shop.example";
	assert_true(k8s_dns_name_valid(name, strlen(name), K8S_DNS_NAME_MAX, 0, false));
	assert_false(k8s_dns_name_valid(name, strlen(name), K8S_DNS_NAME_MAX, 2, false));
	assert_false(k8s_dns_name_valid(name, strlen(name), 10, 0, false));
	assert_false(k8s_dns_name_valid("a.", 2, K8S_DNS_NAME_MAX, 0, false));
	assert_false(k8s_dns_name_valid("a..b", 4, K8S_DNS_NAME_MAX, 0, false));
	assert_false(k8s_dns_name_valid(".a", 2, K8S_DNS_NAME_MAX, 0, false));
}

static void a_cluster_id_is_one_or_two_labels(void **state)
{
	assert_true(cluster_id("east", false));
	assert_true(cluster_id("east.prod", false));
	assert_false(cluster_id("a.b.c", false));
	assert_false(cluster_id("-east", false));
	assert_false(cluster_id("east.prod-", false));
	assert_false(cluster_id("Bad_Id", true));
	assert_false(cluster_id("East", false));
	assert_true(cluster_id("East", true));
	assert_false(k8s_cluster_id_valid(NULL, 0, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_label_is_lowercase_letters_digits_and_inner_hyphens),
		cmocka_unit_test(a_label_is_at_most_63_bytes),
		cmocka_unit_test(uppercase_passes_only_when_folded),
		cmocka_unit_test(a_name_is_labels_joined_by_dots),
		cmocka_unit_test(a_cluster_id_is_one_or_two_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
