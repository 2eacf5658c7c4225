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
 * CoreDNS's templates as module/rewrite/ reads them (an option value: the Corefile
 * words after `template`, lines by `;`), matched against a query name, and their
 * records rendered (the Go template subset) and read back (miekg/dns's record text).
 *
 * Input: the templates' values, one per line, up to a NUL byte; after it a byte of the
 * query type (A, AAAA, TXT, PTR, MX, ANY) and the query name's bytes, cut into labels.
 * What must hold: a value is read or refused with a reason; a match gives records that
 * render or fail with an error (SERVFAIL), each within its caps: an owner that is a
 * name, rdata no longer than the record text allows, the section counts of the match.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "fz_rules.h"
#include "rewrite/dnstext.h"
#include "rewrite/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	const char *values[K8S_TEMPLATES_MAX];
	const uint8_t *rest;
	size_t count = fz_values(data, size, &text, values, K8S_TEMPLATES_MAX, &rest);
	char err[512] = "";
	k8s_templates_t *t = k8s_templates_new(values, count, NULL, 0, err, sizeof(err));
	if (t == NULL) {
		CHECK(err[0] != '\0');
		free(text);
		return 0;
	}
	static const uint16_t types[] = {
		KNOT_RRTYPE_A, KNOT_RRTYPE_AAAA, KNOT_RRTYPE_TXT, KNOT_RRTYPE_PTR, KNOT_RRTYPE_MX,
		KNOT_RRTYPE_ANY,
	};
	size_t rest_len = data + size - rest;
	uint16_t qtype = types[(rest_len > 0 ? rest[0] : 0) % 6];
	uint8_t wire[256];
	fz_wire_name(rest_len > 0 ? rest + 1 : rest, rest_len > 0 ? rest_len - 1 : 0, wire);
	knot_dname_to_lower(wire);
	char name[K8S_NAME_TEXT_MAX];
	size_t len = k8s_name_to_text(wire, name, sizeof(name));
	CHECK(len > 0);

	k8s_regex_scratch_t *s = k8s_regex_scratch_new();
	CHECK(s != NULL);
	knot_mm_t mm = { .alloc = fz_arena_alloc };
	static k8s_template_match_t m;
	static k8s_template_rr_t rr;
	m.remote = "192.0.2.1";
	k8s_template_result_t res = k8s_templates_match(t, s, name, len, wire, qtype,
	                                                KNOT_CLASS_IN, &m);
	CHECK(res == K8S_TEMPLATE_NONE || res == K8S_TEMPLATE_SERVFAIL || res == K8S_TEMPLATE_MATCH);
	if (res == K8S_TEMPLATE_MATCH) {
		CHECK(knot_dname_in_bailiwick(wire, m.zone) >= 0);
		for (int sec = 0; sec < K8S_TEMPLATE_SECTIONS; sec++) {
			for (size_t i = 0; i < k8s_template_count(&m, sec); i++) {
				if (k8s_template_rr(&m, sec, i, &mm, NULL, NULL, &rr) != KNOT_EOK) {
					continue;
				}
				CHECK(knot_dname_size(rr.owner) <= KNOT_DNAME_MAXLEN);
				CHECK(rr.rdlen <= 1024 && (rr.rdlen == 0 || rr.rdata != NULL));
				CHECK(strlen(rr.owner_text) < sizeof(rr.owner_text));
			}
		}
	}
	k8s_regex_scratch_free(s);
	k8s_templates_free(t);
	fz_arena_free();
	free(text);
	return 0;
}
