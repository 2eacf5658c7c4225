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
 * answer.c writes addresses, SRV and PTR records itself (k8s_answer_put_raw(),
 * k8s_answer_put_ptr()), not
 * through knot_pkt_put(): the packet it leaves must be the one knot_pkt_put() leaves,
 * byte for byte and in the RR list, RR info and counts that knotd and its modules read.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <libknot/libknot.h>

#include "answer/answer_priv.h"

#define QNAME "\x04""web1""\x02""ns""\x03""svc""\x07""cluster""\x05""local"

#define REVERSE "\x01""7""\x01""1""\x03""244""\x02""10""\x07""in-addr""\x04""arpa"

/*! \brief A response to "qname qtype", of at most \a max bytes, as knotd begins it. */
static knot_pkt_t *response_to(const char *qname, uint16_t qtype, size_t max)
{
	knot_pkt_t *query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_non_null(query);
	assert_int_equal(knot_pkt_put_question(query, (const uint8_t *)qname, KNOT_CLASS_IN, qtype),
	                 KNOT_EOK);
	knot_pkt_t *resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_non_null(resp);
	assert_int_equal(knot_pkt_init_response(resp, query), KNOT_EOK);
	resp->max_size = max;
	knot_pkt_free(query);
	return resp;
}

static knot_pkt_t *response(uint16_t qtype, size_t max)
{
	return response_to(QNAME, qtype, max);
}

/*! \brief \a count addresses of \a type, the last byte of each its index. */
static void addresses(knot_rrset_t *rr, uint16_t type, uint16_t count, uint8_t *buf)
{
	size_t len = (type == KNOT_RRTYPE_A) ? 4 : 16;
	knot_rrset_init(rr, (knot_dname_t *)QNAME, type, KNOT_CLASS_IN, 30);
	uint8_t *pos = buf;
	for (uint16_t i = 0; i < count; i++) {
		uint8_t data[16] = { 10, 0, 0, 0 };
		data[len - 1] = i + 1;
		knot_rdata_init((knot_rdata_t *)pos, len, data);
		pos += knot_rdata_size(len);
	}
	rr->rrs.count = count;
	rr->rrs.size = pos - buf;
	rr->rrs.rdata = (knot_rdata_t *)buf;
}

/*! \brief \a count SRV records of "web1.ns.svc.cluster.local" and "web<i>.ns...". */
static void services(knot_rrset_t *rr, uint16_t count, uint8_t *buf)
{
	knot_rrset_init(rr, (knot_dname_t *)QNAME, KNOT_RRTYPE_SRV, KNOT_CLASS_IN, 30);
	uint8_t *pos = buf;
	for (uint16_t i = 0; i < count; i++) {
		uint8_t data[6 + sizeof(QNAME)] = { 0, 0, 0, 100, 0x1f, 0x90 };
		memcpy(data + 6, QNAME, sizeof(QNAME));
		data[6 + 4] = '1' + i;
		knot_rdata_init((knot_rdata_t *)pos, sizeof(data), data);
		pos += knot_rdata_size(sizeof(data));
	}
	rr->rrs.count = count;
	rr->rrs.size = pos - buf;
	rr->rrs.rdata = (knot_rdata_t *)buf;
}

static void assert_same_packet(const knot_pkt_t *a, const knot_pkt_t *b)
{
	assert_int_equal(a->size, b->size);
	assert_memory_equal(a->wire, b->wire, a->size);
	assert_int_equal(a->rrset_count, b->rrset_count);
	// libknot sets the compression suffix up on the first put, to the question; the
	// direct writes of names that are not compressed leave that to the next put.
	knot_compr_t ca = a->compr, cb = b->compr;
	const uint8_t *qname = a->wire + KNOT_WIRE_HEADER_SIZE;
	if (ca.suffix.pos == 0) {
		ca.suffix.pos = KNOT_WIRE_HEADER_SIZE;
		ca.suffix.labels = knot_dname_labels(qname, NULL);
	}
	if (cb.suffix.pos == 0) {
		cb.suffix.pos = KNOT_WIRE_HEADER_SIZE;
		cb.suffix.labels = knot_dname_labels(qname, NULL);
	}
	assert_int_equal(ca.suffix.pos, cb.suffix.pos);
	assert_int_equal(ca.suffix.labels, cb.suffix.labels);
	for (knot_section_t s = KNOT_ANSWER; s <= KNOT_ADDITIONAL; s++) {
		assert_int_equal(a->sections[s].count, b->sections[s].count);
		assert_int_equal(a->sections[s].pos, b->sections[s].pos);
	}
	for (uint16_t i = 0; i < a->rrset_count; i++) {
		assert_memory_equal(&a->rr_info[i], &b->rr_info[i], sizeof(knot_rrinfo_t));
		assert_ptr_equal(a->rr[i].owner, b->rr[i].owner);
		assert_int_equal(a->rr[i].type, b->rr[i].type);
		assert_int_equal(a->rr[i].rclass, b->rr[i].rclass);
		assert_int_equal(a->rr[i].ttl, b->rr[i].ttl);
		assert_ptr_equal(a->rr[i].rrs.rdata, b->rr[i].rrs.rdata);
		assert_int_equal(a->rr[i].rrs.count, b->rr[i].rrs.count);
	}
}

/*!
 * \brief Puts a CNAME with knot_pkt_put() into both packets (its owner and target can
 * be compressed against what is there), compares them again and frees them.
 */
static void then_a_cname(knot_pkt_t *ours, knot_pkt_t *theirs)
{
	knot_rrset_t cname;
	uint8_t rdata[64];
	knot_rrset_init(&cname, (knot_dname_t *)"\x01""x" QNAME, KNOT_RRTYPE_CNAME, KNOT_CLASS_IN, 5);
	knot_rdata_init((knot_rdata_t *)rdata, sizeof(QNAME), (const uint8_t *)QNAME);
	cname.rrs.count = 1;
	cname.rrs.size = knot_rdata_size(sizeof(QNAME));
	cname.rrs.rdata = (knot_rdata_t *)rdata;
	assert_int_equal(knot_pkt_put(ours, KNOT_COMPR_HINT_NONE, &cname, 0),
	                 knot_pkt_put(theirs, KNOT_COMPR_HINT_NONE, &cname, 0));
	assert_same_packet(ours, theirs);
	knot_pkt_free(theirs);
	knot_pkt_free(ours);
}

/*!
 * \brief Puts the same addresses both ways (in \a section, the owner a pointer to
 * \a hint), then a CNAME after them with knot_pkt_put().
 */
static void put_both_ways(uint16_t type, uint16_t count, size_t max, knot_section_t section,
                          uint16_t hint, uint16_t flags)
{
	uint8_t buf[64 * 48];
	knot_rrset_t rr;
	if (type == KNOT_RRTYPE_SRV) {
		services(&rr, count, buf);
	} else {
		addresses(&rr, type, count, buf);
	}
	knot_pkt_t *theirs = response(type, max), *ours = response(type, max);
	assert_int_equal(knot_pkt_begin(theirs, section), KNOT_EOK);
	assert_int_equal(knot_pkt_begin(ours, section), KNOT_EOK);
	int expected = knot_pkt_put(theirs, hint, &rr, flags);
	assert_int_equal(k8s_answer_put_raw(ours, hint, &rr, flags), expected);
	assert_int_equal(knot_wire_get_tc(ours->wire), knot_wire_get_tc(theirs->wire));
	assert_same_packet(ours, theirs);

	then_a_cname(ours, theirs);
}

static void one_a_record_is_written_as_knot_pkt_put_writes_it(void **state)
{
	put_both_ways(KNOT_RRTYPE_A, 1, KNOT_WIRE_MAX_PKTSIZE, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
}

static void ten_aaaa_records_are_written_as_knot_pkt_put_writes_them(void **state)
{
	put_both_ways(KNOT_RRTYPE_AAAA, 10, KNOT_WIRE_MAX_PKTSIZE, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
}

static void additional_addresses_under_a_pointer_are_written_as_knot_pkt_put_writes_them(void **state)
{
	// An SRV target's addresses: their owner points into the packet (here: the question's "ns").
	put_both_ways(KNOT_RRTYPE_A, 3, KNOT_WIRE_MAX_PKTSIZE, KNOT_ADDITIONAL,
	              KNOT_WIRE_HEADER_SIZE + 5, KNOT_PF_NOTRUNC);
	put_both_ways(KNOT_RRTYPE_AAAA, 2, KNOT_WIRE_MAX_PKTSIZE, KNOT_AUTHORITY,
	              KNOT_WIRE_HEADER_SIZE + 5, 0);
}

static void srv_records_are_written_as_knot_pkt_put_writes_them(void **state)
{
	// The targets uncompressed, the first one's position in the RR info for ADDITIONAL.
	put_both_ways(KNOT_RRTYPE_SRV, 1, KNOT_WIRE_MAX_PKTSIZE, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
	put_both_ways(KNOT_RRTYPE_SRV, 8, KNOT_WIRE_MAX_PKTSIZE, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
	put_both_ways(KNOT_RRTYPE_SRV, 8, 200, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
	// More targets than the RR info has hints for.
	put_both_ways(KNOT_RRTYPE_SRV, 20, KNOT_WIRE_MAX_PKTSIZE, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
}

/*!
 * \brief Puts PTR records of \a names (wire names, one after another) both ways, then a
 * CNAME whose owner and target can be compressed against them, with knot_pkt_put().
 */
static void ptr_both_ways(const uint8_t *names, uint16_t count, size_t max)
{
	uint8_t buf[1024];
	knot_rrset_t rr;
	knot_rrset_init(&rr, (knot_dname_t *)REVERSE, KNOT_RRTYPE_PTR, KNOT_CLASS_IN, 30);
	uint8_t *pos = buf;
	for (uint16_t i = 0; i < count; i++) {
		size_t size = knot_dname_size(names);
		knot_rdata_init((knot_rdata_t *)pos, size, names);
		pos += knot_rdata_size(size);
		names += size;
	}
	rr.rrs.count = count;
	rr.rrs.size = pos - buf;
	rr.rrs.rdata = (knot_rdata_t *)buf;
	knot_pkt_t *theirs = response_to(REVERSE, KNOT_RRTYPE_PTR, max);
	knot_pkt_t *ours = response_to(REVERSE, KNOT_RRTYPE_PTR, max);
	int expected = knot_pkt_put(theirs, KNOT_COMPR_HINT_QNAME, &rr, 0);
	assert_int_equal(k8s_answer_put_ptr(ours, &rr, 0), expected);
	assert_int_equal(knot_wire_get_tc(ours->wire), knot_wire_get_tc(theirs->wire));
	assert_same_packet(ours, theirs);

	then_a_cname(ours, theirs);
}

static void a_ptr_record_is_written_as_knot_pkt_put_writes_it(void **state)
{
	ptr_both_ways((const uint8_t *)QNAME, 1, KNOT_WIRE_MAX_PKTSIZE);
	// Without room: TC, as knot_pkt_put() sets it.
	ptr_both_ways((const uint8_t *)QNAME, 1, KNOT_WIRE_HEADER_SIZE + 24 + 30);
}

static void ptr_records_that_knot_compresses_go_to_knot_pkt_put(void **state)
{
	// Two names (the second compressed against the first); a name ending as the question.
	ptr_both_ways((const uint8_t *)QNAME "\0" "\x03""web" QNAME, 2, KNOT_WIRE_MAX_PKTSIZE);
	ptr_both_ways((const uint8_t *)"\x03""web""\x04""ARPA", 1, KNOT_WIRE_MAX_PKTSIZE);
	ptr_both_ways((const uint8_t *)"\x03""web""\x07""in-addr""\x04""arpa", 1,
	              KNOT_WIRE_MAX_PKTSIZE);
}

static void addresses_without_room_truncate_as_knot_pkt_put_truncates(void **state)
{
	// Question 34 bytes after the header; two AAAA records need 56, one fits.
	put_both_ways(KNOT_RRTYPE_AAAA, 2, KNOT_WIRE_HEADER_SIZE + 34 + 40, KNOT_ANSWER,
	              KNOT_COMPR_HINT_QNAME, 0);
	put_both_ways(KNOT_RRTYPE_A, 40, 512, KNOT_ANSWER, KNOT_COMPR_HINT_QNAME, 0);
	// Without TC where the caller says so (SRV targets' addresses).
	put_both_ways(KNOT_RRTYPE_A, 40, 512, KNOT_ADDITIONAL, KNOT_WIRE_HEADER_SIZE + 5,
	              KNOT_PF_NOTRUNC);
}

static void more_rrsets_than_the_packet_holds_go_to_knot_pkt_put(void **state)
{
	uint8_t buf[64];
	knot_rrset_t rr;
	addresses(&rr, KNOT_RRTYPE_A, 1, buf);
	knot_pkt_t *theirs = response(KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE);
	knot_pkt_t *ours = response(KNOT_RRTYPE_A, KNOT_WIRE_MAX_PKTSIZE);
	// Past the RR list's first allocation both grow it the same way.
	for (int i = 0; i < 40; i++) {
		assert_int_equal(knot_pkt_put(theirs, KNOT_COMPR_HINT_QNAME, &rr, 0), KNOT_EOK);
		assert_int_equal(k8s_answer_put_raw(ours, KNOT_COMPR_HINT_QNAME, &rr, 0), KNOT_EOK);
	}
	assert_same_packet(ours, theirs);
	knot_pkt_free(theirs);
	knot_pkt_free(ours);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_a_record_is_written_as_knot_pkt_put_writes_it),
		cmocka_unit_test(ten_aaaa_records_are_written_as_knot_pkt_put_writes_them),
		cmocka_unit_test(additional_addresses_under_a_pointer_are_written_as_knot_pkt_put_writes_them),
		cmocka_unit_test(srv_records_are_written_as_knot_pkt_put_writes_them),
		cmocka_unit_test(a_ptr_record_is_written_as_knot_pkt_put_writes_it),
		cmocka_unit_test(ptr_records_that_knot_compresses_go_to_knot_pkt_put),
		cmocka_unit_test(addresses_without_room_truncate_as_knot_pkt_put_truncates),
		cmocka_unit_test(more_rrsets_than_the_packet_holds_go_to_knot_pkt_put),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
