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
 * DNS names as Kubernetes spells them (module/lib/dnsname.c): the rules the API
 * decoder, the federation options and the conf check share.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/dnsname.h"

static bool label(const char *s, bool fold)
{
	return k8s_dns_label_valid(s, strlen(s), fold);
}

static bool cluster_id(const char *s, bool fold)
{
	return k8s_cluster_id_valid(s, strlen(s), fold);
}

/*
 * One row per boundary of apimachinery's rules (k8s.io/apimachinery/pkg/util/
 * validation): IsDNS1123Label, IsDNS1035Label and IsDNS1123Subdomain. A row's
 * text is prefix + fill repeated n times + suffix, so lengths are exact.
 */
typedef struct {
	const char *prefix;
	const char *fill;
	size_t n;
	const char *suffix;
	bool label;      /*!< IsDNS1123Label: <= 63, [a-z0-9]([-a-z0-9]*[a-z0-9])? */
	bool label1035;  /*!< IsDNS1035Label: also a letter first. */
	bool subdomain;  /*!< IsDNS1123Subdomain: <= 253, labels of any length joined by dots. */
} name_case_t;

static const name_case_t NAME_CASES[] = {
	/* lengths */
	{ "", "", 0, "",            false, false, false },  // empty
	{ "a", "", 0, "",           true,  true,  true  },  // 1
	{ "", "a", 63, "",          true,  true,  true  },  // 63: the longest label
	{ "", "a", 64, "",          false, false, true  },  // 64: no label, still a subdomain
	{ "", "a", 253, "",         false, false, true  },  // 253 of one label (issue 22)
	{ "", "a", 254, "",         false, false, false },  // 254: too long for anything
	{ "", "abc.", 63, "a",      false, false, true  },  // 253 with dots
	{ "", "abc.", 63, "ab",     false, false, false },  // 254 with dots
	{ "", "a", 64, ".b",        false, false, true  },  // a long label inside a subdomain
	{ "b.", "a", 200, "",       false, false, true  },
	/* digits */
	{ "0", "", 0, "",           true,  false, true  },
	{ "9a", "", 0, "",          true,  false, true  },  // digits first: 1123, not 1035
	{ "a9", "", 0, "",          true,  true,  true  },
	{ "", "0", 63, "",          true,  false, true  },
	{ "a", "0", 62, "",         true,  true,  true  },
	{ "a", "0", 63, "",         false, false, true  },
	{ "1.2.3.4", "", 0, "",     false, false, true  },
	/* hyphens */
	{ "-a", "", 0, "",          false, false, false },
	{ "a-", "", 0, "",          false, false, false },
	{ "-", "", 0, "",           false, false, false },
	{ "a-b", "", 0, "",         true,  true,  true  },
	{ "a--b", "", 0, "",        true,  true,  true  },  // '--' is fine (not IsValidPortName)
	{ "a.-b", "", 0, "",        false, false, false },
	{ "a-.b", "", 0, "",        false, false, false },
	{ "xn--bcher-kva", "", 0, "", true, true,  true  },
	/* dots */
	{ "a.b", "", 0, "",         false, false, true  },
	{ ".a", "", 0, "",          false, false, false },
	{ "a.", "", 0, "",          false, false, false },
	{ "a..b", "", 0, "",        false, false, false },
	{ ".", "", 0, "",           false, false, false },
	/* characters */
	{ "A", "", 0, "",           false, false, false },  // uppercase, not folded
	{ "aB", "", 0, "",          false, false, false },
	{ "a.B", "", 0, "",         false, false, false },
	{ "a_b", "", 0, "",         false, false, false },
	{ "_a", "", 0, "",          false, false, false },
	{ "a b", "", 0, "",         false, false, false },
	{ "a/b", "", 0, "",         false, false, false },
	{ "a*", "", 0, "",          false, false, false },
	{ "*.a", "", 0, "",         false, false, false },
	{ "\xc3\xa9", "", 0, "",  false, false, false },  // UTF-8
};

static char *name_case_text(const name_case_t *c, size_t *len)
{
	size_t fill = strlen(c->fill);
	*len = strlen(c->prefix) + fill * c->n + strlen(c->suffix);
	char *text = malloc(*len + 1);
	assert_non_null(text);
	size_t at = strlen(c->prefix);
	memcpy(text, c->prefix, at);
	for (size_t i = 0; i < c->n; i++, at += fill) {
		memcpy(text + at, c->fill, fill);
	}
	memcpy(text + at, c->suffix, strlen(c->suffix) + 1);
	return text;
}

static void names_follow_the_api_servers_rules(void **state)
{
	for (size_t i = 0; i < sizeof(NAME_CASES) / sizeof(NAME_CASES[0]); i++) {
		const name_case_t *c = &NAME_CASES[i];
		size_t len;
		char *text = name_case_text(c, &len);
		if (k8s_dns_label_valid(text, len, false) != c->label ||
		    k8s_dns1035_label_valid(text, len) != c->label1035 ||
		    k8s_dns_subdomain_valid(text, len) != c->subdomain) {
			fail_msg("row %zu (%zu bytes, \"%.40s...\"): label %d 1035 %d subdomain %d",
			         i, len, text, k8s_dns_label_valid(text, len, false),
			         k8s_dns1035_label_valid(text, len), k8s_dns_subdomain_valid(text, len));
		}
		// A DNS name (what a DNS message can carry) is a subdomain with labels of <= 63.
		bool dns_name = k8s_dns_name_valid(text, len, K8S_DNS_NAME_MAX, 0, false);
		assert_true(!dns_name || c->subdomain);
		free(text);
	}
}

static void a_nul_byte_is_in_no_name(void **state)
{
	assert_false(k8s_dns_label_valid("a\0b", 3, false));
	assert_false(k8s_dns_label_valid("a\0b", 3, true));
	assert_false(k8s_dns1035_label_valid("a\0b", 3));
	assert_false(k8s_dns_subdomain_valid("a\0b", 3));
	assert_false(k8s_dns_subdomain_valid("a.\0", 3));
}

static void a_label_is_at_most_63_bytes_even_folded(void **state)
{
	char text[65];
	memset(text, 'A', 64);
	text[64] = '\0';
	assert_false(label(text, true));
	text[63] = '\0';
	assert_true(label(text, true));
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

static void bytes_are_equal_only_when_every_byte_is(void **state)
{
	(void)state;
	// Every length the word loads cover (and past them), a difference at every place.
	uint8_t a[48], b[48];
	for (size_t len = 0; len <= sizeof(a); len++) {
		for (size_t i = 0; i < sizeof(a); i++) {
			a[i] = b[i] = (uint8_t)(i * 7 + 1);
		}
		assert_true(k8s_bytes_equal(a, b, len));
		for (size_t at = 0; at < len; at++) {
			b[at] ^= 0x20;
			assert_false(k8s_bytes_equal(a, b, len));
			b[at] ^= 0x20;
		}
		// Bytes past the length are not compared.
		if (len < sizeof(a)) {
			b[len] ^= 0x20;
			assert_true(k8s_bytes_equal(a, b, len));
		}
	}
	assert_true(k8s_label_equal((const uint8_t *)"\x04shop", (const uint8_t *)"\x04shop"));
	assert_false(k8s_label_equal((const uint8_t *)"\x04shop", (const uint8_t *)"\x04shoq"));
	assert_false(k8s_label_equal((const uint8_t *)"\x03sho", (const uint8_t *)"\x04shop"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_follow_the_api_servers_rules),
		cmocka_unit_test(a_nul_byte_is_in_no_name),
		cmocka_unit_test(a_label_is_at_most_63_bytes_even_folded),
		cmocka_unit_test(uppercase_passes_only_when_folded),
		cmocka_unit_test(a_name_is_labels_joined_by_dots),
		cmocka_unit_test(a_cluster_id_is_one_or_two_labels),
		cmocka_unit_test(bytes_are_equal_only_when_every_byte_is),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
