/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * A hosts file's text as module/hosts/ reads it (hostsfile.c): whatever a node's file or
 * a ConfigMap key holds (k3s writes NodeHosts; anyone who may edit it writes anything),
 * built into the table (hosts.c) and answered (hosts_answer.c).
 *
 * Input: one byte of settings (bit 0: no PTR, bit 1: fallthrough for every name, bit 2:
 * fallthrough for other types, bit 3: only the zone example.org., bits 4-7: where the
 * text splits into the file's part and the inline entries', in sixteenths), then the text.
 * What must hold: the table keeps at most its caps; every answer, of names taken from
 * the text and fixed ones, of every type the plugin distinguishes, into a 512-byte and a
 * 64 KiB response, is a known outcome and parses back with records only of the type
 * asked, owned by the question.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <libknot/libknot.h>

#include "hosts/hosts.h"
#include "fz_check.h"

static const char *const FIXED[] = {
	"node-1.", "example.org.", "a.example.org.", "x.y.example.org.", "localhost.",
	"1.0.0.10.in-addr.arpa.", "10.1.168.192.in-addr.arpa.",
	"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", ".",
};

static const uint16_t TYPES[] = {
	KNOT_RRTYPE_A, KNOT_RRTYPE_AAAA, KNOT_RRTYPE_PTR, KNOT_RRTYPE_TXT, KNOT_RRTYPE_ANY,
};

static void ask(const k8s_hosts_t *h, const k8s_hosts_conf_t *conf, const knot_dname_t *name,
                uint16_t type, uint16_t max_size)
{
	knot_pkt_t *query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	knot_pkt_t *resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	CHECK(query != NULL && resp != NULL);
	CHECK(knot_pkt_put_question(query, name, KNOT_CLASS_IN, type) == KNOT_EOK);
	CHECK(knot_pkt_init_response(resp, query) == KNOT_EOK);
	resp->max_size = max_size;
	CHECK(knot_pkt_begin(resp, KNOT_ANSWER) == KNOT_EOK);
	knot_dname_storage_t lower;
	knot_dname_copy_lower(lower, name);

	k8s_hosts_result_t res = k8s_hosts_answer(h, conf, lower, type, resp);
	CHECK(res <= K8S_HOSTS_ERROR && res != K8S_HOSTS_ERROR);
	CHECK(resp->size <= max_size);
	knot_pkt_t *parsed = knot_pkt_new(resp->wire, resp->size, NULL);
	CHECK(parsed != NULL && knot_pkt_parse(parsed, 0) == KNOT_EOK);
	const knot_pktsection_t *answer = knot_pkt_section(parsed, KNOT_ANSWER);
	CHECK((answer->count > 0) == (res == K8S_HOSTS_HIT));
	for (uint16_t i = 0; i < answer->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(answer, i);
		CHECK(rr->type == type && rr->ttl == conf->ttl);
		CHECK(knot_dname_is_case_equal(rr->owner, name));
		CHECK(rr->rrs.count <= K8S_HOSTS_PER_NAME_MAX);
	}
	CHECK(res != K8S_HOSTS_TRUNC || knot_wire_get_tc(resp->wire));
	knot_pkt_free(parsed);
	knot_pkt_free(resp);
	knot_pkt_free(query);
}

/*! \brief The names of the text's first lines (the second field on): asked too. */
static void ask_text_names(const k8s_hosts_t *h, const k8s_hosts_conf_t *conf, const char *text,
                           size_t len)
{
	size_t asked = 0;
	for (size_t at = 0; at < len && asked < 8; ) {
		while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n')) {
			at++;
		}
		size_t start = at;
		while (at < len && text[at] != ' ' && text[at] != '\t' && text[at] != '\n') {
			at++;
		}
		char field[256];
		if (at == start || at - start >= sizeof(field)) {
			continue;
		}
		memcpy(field, text + start, at - start);
		field[at - start] = '\0';
		knot_dname_storage_t name;
		if (knot_dname_from_str(name, field, sizeof(name)) != NULL) {
			for (size_t t = 0; t < sizeof(TYPES) / sizeof(TYPES[0]); t++) {
				ask(h, conf, name, TYPES[t], KNOT_WIRE_MAX_PKTSIZE);
			}
			asked++;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	uint8_t flags = data[0];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	size_t split = len * (flags >> 4) / 16;

	knot_dname_storage_t root, zone;
	CHECK(knot_dname_from_str(root, ".", sizeof(root)) != NULL);
	CHECK(knot_dname_from_str(zone, "example.org.", sizeof(zone)) != NULL);
	const knot_dname_t *zones[1] = { zone };
	const knot_dname_t *fall[1] = { root };
	k8s_hosts_conf_t conf = {
		.zones = zones, .zone_count = (flags & 8) ? 1 : 0,
		.fall = fall, .fall_count = (flags & 2) ? 1 : 0,
		.fall_unsupported = (flags & 6) == 6,
		.no_reverse = flags & 1,
		.ttl = 60,
	};
	k8s_hosts_builder_t *b = k8s_hosts_builder_new(&conf);
	CHECK(b != NULL);
	CHECK(k8s_hosts_parse(b, text, split) == KNOT_EOK);
	CHECK(k8s_hosts_parse(b, text + split, len - split) == KNOT_EOK);
	k8s_hosts_stats_t st;
	k8s_hosts_t *h = k8s_hosts_build(b, &st);
	CHECK(h != NULL);
	CHECK(k8s_hosts_count(h) == st.entries && st.entries <= K8S_HOSTS_ENTRIES_MAX);
	CHECK(st.lines <= len);

	for (size_t i = 0; i < sizeof(FIXED) / sizeof(FIXED[0]); i++) {
		knot_dname_storage_t name;
		CHECK(knot_dname_from_str(name, FIXED[i], sizeof(name)) != NULL);
		for (size_t t = 0; t < sizeof(TYPES) / sizeof(TYPES[0]); t++) {
			ask(h, &conf, name, TYPES[t], KNOT_WIRE_MAX_PKTSIZE);
			ask(h, &conf, name, TYPES[t], 512);
		}
	}
	ask_text_names(h, &conf, text, len);
	k8s_hosts_free(h);
	return 0;
}
