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
 * Answers from an upstream resolver or a Federated-DNS, made into the upstream
 * cache's entries (module/upstream/upstream_entry.c), as the resolver thread makes them.
 *
 * Input: one flags byte (bit 0: the key has a source label, as a forwarder's),
 * then a DNS response as it came off the wire. It is taken as module/forward/dnsquery.c
 * takes it (parsed by libknot, one question of class IN, here for A or AAAA),
 * the question is the key, and a NOERROR or NXDOMAIN makes an entry. What must hold: the entry is its key's; the CNAME chain comes first,
 * each link from the last one's target, then at most one RRset of the type, all
 * of class IN with lowercase owners; it expires within a day; every RRset goes
 * into a response as the answer code puts it, and that response parses back.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "upstream/upstream_entry.h"
#include "fz_check.h"

#define NOW_MS  (1000ULL * 1000 * 1000)  /*!< Any monotonic time: the checks are relative. */
#define DAY_S   86400
#define CHAIN   9                        /*!< 8 CNAMEs and the records. */

static bool is_lower(const knot_dname_t *name)
{
	knot_dname_storage_t lower;
	knot_dname_copy_lower(lower, name);
	return knot_dname_is_equal(lower, name);
}

/*! \brief Every RRset into a response, as k8s_answer_upstream() puts them; it parses back. */
static void check_puts(const knot_dname_t *qname, uint16_t qtype, const k8s_upstream_answer_t *ans)
{
	knot_pkt_t *pkt = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	CHECK(pkt != NULL);
	CHECK(knot_pkt_put_question(pkt, qname, KNOT_CLASS_IN, qtype) == KNOT_EOK);
	CHECK(knot_pkt_begin(pkt, KNOT_ANSWER) == KNOT_EOK);
	for (uint16_t i = 0; i < ans->count; i++) {
		int ret = knot_pkt_put(pkt, KNOT_COMPR_HINT_NONE, &ans->rrsets[i], 0);
		if (ret == KNOT_ESPACE) {
			break;  // The answer code says so to the client (TC).
		}
		CHECK(ret == KNOT_EOK);
	}
	knot_pkt_t *back = knot_pkt_new(pkt->wire, pkt->size, NULL);
	CHECK(back != NULL);
	CHECK(knot_pkt_parse(back, 0) == KNOT_EOK);
	knot_pkt_free(back);
	knot_pkt_free(pkt);
}

static void check_entry(const k8s_upstream_entry_t *e, const knot_dname_t *qname, uint16_t qtype,
                        const uint8_t *source, uint16_t rcode)
{
	CHECK(e->qtype == qtype && e->hash == 42);
	CHECK(knot_dname_is_equal(e->name, qname));
	if (source != NULL) {
		CHECK(e->source != NULL && memcmp(e->source, source, 1 + source[0]) == 0);
	} else {
		CHECK(e->source == NULL);
	}
	const k8s_upstream_answer_t *ans = e->ans;
	CHECK(ans->rcode == rcode);
	CHECK(ans->expires <= NOW_MS / 1000 + DAY_S);
	CHECK(ans->count <= CHAIN);
	const knot_dname_t *owner = qname;
	for (uint16_t i = 0; i < ans->count; i++) {
		const knot_rrset_t *rr = &ans->rrsets[i];
		CHECK(rr->rclass == KNOT_CLASS_IN && rr->rrs.count > 0);
		CHECK(is_lower(rr->owner) && knot_dname_is_case_equal(rr->owner, owner));
		// Each rdata is whole: walking them reads exactly the set's size.
		const knot_rdata_t *rd = rr->rrs.rdata;
		size_t size = 0;
		for (uint16_t j = 0; j < rr->rrs.count; j++) {
			size += knot_rdata_size(rd->len);
			rd = knot_rdataset_next((knot_rdata_t *)rd);
		}
		CHECK(size == rr->rrs.size);
		if (rr->type == KNOT_RRTYPE_CNAME) {
			CHECK(rr->rrs.count == 1);
			owner = knot_cname_name(rr->rrs.rdata);
		} else {
			CHECK(rr->type == qtype && i == ans->count - 1);
		}
	}
	check_puts(qname, qtype, ans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 + KNOT_WIRE_HEADER_SIZE) {
		return 0;
	}
	static const uint8_t source_label[] = "\x0amember-one";
	const uint8_t *source = (data[0] & 1) ? source_label : NULL;
	data++;
	size--;

	knot_pkt_t *pkt = knot_pkt_new(NULL, size, NULL);
	CHECK(pkt != NULL);
	memcpy(pkt->wire, data, size);
	pkt->size = size;
	int ret = knot_pkt_parse(pkt, 0);
	if ((ret != KNOT_EOK && ret != KNOT_ETRAIL) || knot_wire_get_qdcount(pkt->wire) != 1 ||
	    knot_pkt_qclass(pkt) != KNOT_CLASS_IN ||
	    (knot_pkt_qtype(pkt) != KNOT_RRTYPE_A && knot_pkt_qtype(pkt) != KNOT_RRTYPE_AAAA)) {
		knot_pkt_free(pkt);
		return 0;
	}
	uint16_t qtype = knot_pkt_qtype(pkt);
	// The resolver asks for lowercase names; an answer's question may be in any case.
	knot_dname_storage_t qname;
	knot_dname_copy_lower(qname, knot_pkt_qname(pkt));
	uint16_t rcode = knot_pkt_ext_rcode(pkt);
	if (rcode != KNOT_RCODE_NOERROR && rcode != KNOT_RCODE_NXDOMAIN) {
		knot_pkt_free(pkt);
		return 0;
	}

	k8s_upstream_entry_t *e = NULL;
	ret = k8s_upstream_entry_build(pkt, qname, qtype, source, rcode, NOW_MS, 42, &e);
	if (ret == KNOT_EOK) {
		CHECK(e != NULL);
		check_entry(e, qname, qtype, source, rcode);
		free(e);
	} else {
		CHECK(ret == KNOT_ELIMIT || ret == KNOT_ESPACE || ret == KNOT_ENOMEM);
	}
	knot_pkt_free(pkt);
	return 0;
}
