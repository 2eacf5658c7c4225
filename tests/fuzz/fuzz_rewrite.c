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
 * CoreDNS's rewrite rules as module/rewrite/ reads them (an option value: the Corefile
 * words after `rewrite`, after a server block's `ZONE,...:` or not, the regexes checked
 * against the RE2 subset and compiled by PCRE2), then the rules of the block a query
 * name is handed to applied to it and their response rules to names and TTLs.
 *
 * Input: the rules' values, one per line, up to a NUL byte; after it the query name's
 * bytes, cut into labels of at most 63 (a length byte 0 or over 63 is a dot).
 * What must hold: a value is read or refused with a reason; a rewritten name is a name
 * (k8s_name_from_text() reads it back) or the query is SERVFAIL; every text the
 * response rules make fits its buffer; a TTL clamp stays in its range.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "fz_rules.h"
#include "rewrite/blocks.h"
#include "rewrite/dnstext.h"
#include "rewrite/rewrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	const char *values[K8S_REWRITE_RULES_MAX];
	const uint8_t *rest;
	size_t count = fz_values(data, size, &text, values, K8S_REWRITE_RULES_MAX, &rest);
	char err[512] = "";
	k8s_rw_blocks_t *b = k8s_rw_blocks_new(values, count, NULL, 0, err, sizeof(err));
	if (b == NULL) {
		CHECK(err[0] != '\0');
		free(text);
		return 0;
	}
	size_t rules, templates;
	size_t blocks = k8s_rw_blocks_count(b, &rules, &templates);
	CHECK(blocks >= 1 && blocks <= K8S_RW_BLOCKS_MAX && rules <= count && templates == 0);

	uint8_t wire[256];
	fz_wire_name(rest, data + size - rest, wire);
	char name[K8S_NAME_TEXT_MAX];
	size_t len = k8s_name_to_text(wire, name, sizeof(name));
	CHECK(len > 0 && len < sizeof(name));
	// The rules of the block the name is handed to (none: nothing to apply).
	const k8s_rw_block_t *block = k8s_rw_blocks_of(b, wire);
	const k8s_rewrite_t *rw = (block != NULL) ? block->rewrite : NULL;
	CHECK(block == NULL || block->rewrite != NULL);
	if (rw == NULL) {
		k8s_rw_blocks_free(b);
		free(text);
		return 0;
	}

	k8s_regex_scratch_t *s = k8s_regex_scratch_new();
	CHECK(s != NULL);
	knot_mm_t mm = { .alloc = fz_arena_alloc };
	static k8s_rewrite_req_t req;
	if (k8s_rewrite_request(rw, s, &mm, name, len, KNOT_RRTYPE_A, KNOT_CLASS_IN, &req) &&
	    !req.invalid) {
		uint8_t back[256];
		CHECK(req.name_len < K8S_NAME_TEXT_MAX && strlen(req.name) == req.name_len);
		if (req.renamed) {
			CHECK(k8s_name_from_text(req.name, req.name_len, back) > 0);
		}
		char out[K8S_NAME_TEXT_MAX];
		size_t n = k8s_rewrite_owner(&req, s, req.name, req.name_len, out, sizeof(out));
		CHECK(n < sizeof(out) && (n == 0 || strlen(out) == n));
		n = k8s_rewrite_value(&req, s, name, len, out, sizeof(out));
		CHECK(n < sizeof(out) && (n == 0 || strlen(out) == n));
		uint32_t ttl = k8s_rewrite_ttl(&req, 5);
		(void)ttl;
		(void)k8s_rewrite_rcode(&req, KNOT_RCODE_NXDOMAIN);
	}
	k8s_regex_scratch_free(s);
	k8s_rw_blocks_free(b);
	fz_arena_free();
	free(text);
	return 0;
}
