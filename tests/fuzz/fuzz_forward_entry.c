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
 * Answers from an upstream, made into the forwarder's cache entries
 * (module/resolver/forward_cache.c) as the forwarder thread makes them, and put into
 * responses as the workers and the late answers put them.
 *
 * Input: one flags byte (bit 0: the entry is only to relay the answer once, as for an
 * answer the cache does not keep; bit 7: no cap on TTLs, else bits 1-6 plus 1 are the
 * cache's maximum TTL), then a DNS response as it came off the wire. It is taken as
 * module/resolver/dnsquery.c takes it (QR, no TC, parsed by libknot, one question of
 * class IN of any type), and its question, lowercase, is the key. What must hold: an
 * entry kept has a NOERROR or NXDOMAIN, at most K8S_FWD_ENTRY_MAX bytes, lives at most
 * the maximum TTL and at least a millisecond, a negative one no longer than its whole
 * IN SOA says; one relayed has at most K8S_FWD_RELAY_MAX bytes; either is its key's,
 * holds only records of class IN, no OPT or TSIG, each rdata whole, and goes into a
 * response of 64 KiB (whole, no TC, unless the message cannot hold it) and of 512 bytes
 * (TC when the answer or authority section is cut) that parse back with every TTL
 * within the cap, less the entry's age.
 *
 * The same entry as the module's own answers read it (upstream.h: ExternalName targets,
 * autopath's outside names, federation names, with a source label in the key for
 * these): the walk of its answer is the CNAME chain from the question's name (8 at
 * most, each the previous one's target) then records of the question's type owned by
 * the chain's end, every one a record of the entry's answer section, in a bounded
 * number of steps; a source's entry is its key's and never a client's.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "lib/dnsanswer.h"
#include "resolver/forward_cache.h"
#include "fz_check.h"
#include "resolver/upstream.h"

#define NOW_MS  (1000ULL * 1000 * 1000)  /*!< Any monotonic time: the checks are relative. */
#define AGE_MS  12500                    /*!< A later answer from the same entry. */

/*! \brief The answer path's walk of the entry (upstream.h). */
static void check_chain(const k8s_fwd_entry_t *e, const knot_dname_t *qname, uint16_t qtype)
{
	k8s_upstream_iter_t it;
	k8s_upstream_iter_init(e, &it);
	const knot_dname_t *owner = qname;
	size_t cnames = 0, records = 0, steps = 0;
	const knot_rrset_t *rr;
	while ((rr = k8s_upstream_next(e, &it)) != NULL) {
		CHECK(++steps <= (size_t)e->count[0] + 8);
		CHECK(rr >= e->rrs && rr < e->rrs + e->count[0]);
		CHECK(knot_dname_is_case_equal(rr->owner, owner));
		if (!it.records) {
			CHECK(rr->type == KNOT_RRTYPE_CNAME && records == 0 && ++cnames <= 8);
			owner = knot_cname_name(rr->rrs.rdata);
			// The answer path copies a link's target, lowercase, to see whether the
			// chain leads into one of our zones (answer_addr.c): a whole name inside.
			CHECK(knot_dname_size(owner) <= rr->rrs.rdata->len &&
			      knot_dname_size(owner) <= KNOT_DNAME_MAXLEN);
		} else {
			CHECK(rr->type == qtype);
			records++;
		}
	}
	CHECK(k8s_upstream_has_records(e) == (records > 0));
	CHECK(k8s_upstream_empty(e) == (cnames + records == 0));
	CHECK(k8s_upstream_rcode(e) == e->rcode);
}

static void check_entry(const k8s_fwd_entry_t *e, const knot_pkt_t *pkt,
                        const knot_dname_t *qname, uint16_t qtype, uint32_t max_ttl,
                        bool relay)
{
	CHECK(e->qtype == qtype && e->hash == k8s_fwd_key_hash(qname, qtype));
	CHECK(knot_dname_is_equal(e->qname, qname));
	CHECK(e->ttl_cap == max_ttl && e->stored_ms == NOW_MS);
	CHECK(e->bytes <= (relay ? K8S_FWD_RELAY_MAX : K8S_FWD_ENTRY_MAX));
	if (!relay) {
		CHECK(e->rcode == KNOT_RCODE_NOERROR || e->rcode == KNOT_RCODE_NXDOMAIN);
		CHECK(e->expires_ms > NOW_MS && e->expires_ms - NOW_MS <= (uint64_t)max_ttl * 1000);
		uint32_t neg;
		if (e->rcode == KNOT_RCODE_NXDOMAIN || e->count[0] == 0) {
			CHECK(k8s_negative_ttl(pkt, &neg));
			CHECK(e->expires_ms - NOW_MS <= (uint64_t)neg * 1000);
		}
	}
	size_t total = (size_t)e->count[0] + e->count[1] + e->count[2];
	uint8_t *end = (uint8_t *)e + e->bytes;
	for (size_t i = 0; i < total; i++) {
		const knot_rrset_t *rr = &e->rrs[i];
		CHECK(rr->rclass == KNOT_CLASS_IN);
		CHECK(rr->type != KNOT_RRTYPE_OPT && rr->type != KNOT_RRTYPE_TSIG);
		CHECK(rr->owner >= (uint8_t *)&e->rrs[total] &&
		      rr->owner + knot_dname_size(rr->owner) <= end);
		// Each rdata is whole and inside the entry: walking them reads exactly the set's size.
		const knot_rdata_t *rd = rr->rrs.rdata;
		size_t size = 0;
		for (uint16_t j = 0; j < rr->rrs.count; j++) {
			size += knot_rdata_size(rd->len);
			rd = knot_rdataset_next((knot_rdata_t *)rd);
		}
		CHECK(size == rr->rrs.size);
		CHECK((uint8_t *)rr->rrs.rdata + size <= end);
	}
}

/*! \brief The entry put into a response of \a max bytes at \a now: it parses back, within the cap. */
static void check_put(const k8s_fwd_entry_t *e, const knot_dname_t *qname, uint16_t qtype,
                      size_t max, uint64_t now)
{
	knot_pkt_t *q = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	CHECK(q != NULL);
	CHECK(knot_pkt_put_question(q, qname, KNOT_CLASS_IN, qtype) == KNOT_EOK);
	knot_pkt_t *r = knot_pkt_new(NULL, max, NULL);
	CHECK(r != NULL);
	CHECK(knot_pkt_init_response(r, q) == KNOT_EOK);
	int ret = k8s_fwd_entry_put(e, r, now);
	CHECK(ret == KNOT_EOK);
	size_t total = (size_t)e->count[0] + e->count[1] + e->count[2];
	if (!knot_wire_get_tc(r->wire) && max == KNOT_WIRE_MAX_PKTSIZE && e->bytes <= K8S_FWD_ENTRY_MAX) {
		// A cached entry came from a message: it fits one again (owners compressed as well).
		CHECK(knot_wire_get_ancount(r->wire) == e->count[0]);
		CHECK(knot_wire_get_nscount(r->wire) == e->count[1]);
	}
	CHECK(r->size <= max);

	knot_pkt_t *back = knot_pkt_new(NULL, r->size, NULL);
	CHECK(back != NULL);
	memcpy(back->wire, r->wire, r->size);
	back->size = r->size;
	CHECK(knot_pkt_parse(back, 0) == KNOT_EOK);
	uint64_t age = (now - e->stored_ms) / 1000;
	uint32_t cap = (e->ttl_cap > age) ? e->ttl_cap - age : 0;
	for (int s = KNOT_ANSWER; s <= KNOT_ADDITIONAL; s++) {
		const knot_pktsection_t *sec = knot_pkt_section(back, s);
		for (uint16_t i = 0; i < sec->count; i++) {
			CHECK(knot_pkt_rr(sec, i)->ttl <= cap);
		}
	}
	CHECK((size_t)knot_wire_get_ancount(back->wire) + knot_wire_get_nscount(back->wire) +
	      knot_wire_get_arcount(back->wire) <= total);
	knot_pkt_free(back);
	knot_pkt_free(r);
	knot_pkt_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 + KNOT_WIRE_HEADER_SIZE) {
		return 0;
	}
	bool relay = data[0] & 1;
	uint32_t max_ttl = (data[0] & 0x80) ? UINT32_MAX : 1 + ((data[0] >> 1) & 0x3f);
	data++;
	size--;
	// dnsquery.c: a TC answer is asked again over TCP (and refused there); QR set.
	if (!knot_wire_get_qr(data) || knot_wire_get_tc(data)) {
		return 0;
	}

	knot_pkt_t *pkt = knot_pkt_new(NULL, size, NULL);
	CHECK(pkt != NULL);
	memcpy(pkt->wire, data, size);
	pkt->size = size;
	int ret = knot_pkt_parse(pkt, 0);
	if ((ret != KNOT_EOK && ret != KNOT_ETRAIL) || knot_wire_get_qdcount(pkt->wire) != 1 ||
	    knot_pkt_qclass(pkt) != KNOT_CLASS_IN) {
		knot_pkt_free(pkt);
		return 0;
	}
	uint16_t qtype = knot_pkt_qtype(pkt);
	// The forwarder asks for lowercase names; an answer's question may be in any case.
	knot_dname_storage_t qname;
	knot_dname_copy_lower(qname, knot_pkt_qname(pkt));

	// As name_answered() in forward_names.c: kept, else relayed once.
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, qname, qtype, max_ttl, NOW_MS, relay);
	if (e == NULL && !relay) {
		relay = true;
		e = k8s_fwd_entry_new(pkt, qname, qtype, max_ttl, NOW_MS, relay);
	}
	if (e != NULL) {
		check_entry(e, pkt, qname, qtype, max_ttl, relay);
		check_chain(e, qname, qtype);
		check_put(e, qname, qtype, KNOT_WIRE_MAX_PKTSIZE, NOW_MS);
		check_put(e, qname, qtype, 512, NOW_MS + AGE_MS);
		k8s_fwd_entry_free(e);
	}
	// A federation's kept name: the same entry keyed by a source label too.
	const uint8_t source[] = "\x03one";
	e = k8s_fwd_entry_new_source(pkt, qname, qtype, source, max_ttl, NOW_MS, relay);
	if (e != NULL) {
		CHECK(e->hash == k8s_fwd_key_hash_source(qname, qtype, source));
		CHECK(e->source != NULL && memcmp(e->source, source, 4) == 0 && e->kept_only);
		CHECK(knot_dname_is_equal(e->qname, qname));
		check_chain(e, qname, qtype);
		k8s_fwd_entry_free(e);
	}
	knot_pkt_free(pkt);
	return 0;
}
