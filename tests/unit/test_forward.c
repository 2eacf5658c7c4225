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
 * The forwarder's cache (module/resolver/forward_cache.c): which upstream answers are
 * kept and for how long, the TTLs served, the two-slot table; the forward options'
 * parsers (module/forward/servers.c) and the settings' copy
 * (module/resolver/forward_conf.c); kube-dns's ConfigMap read and merged
 * (module/forward/kubedns_conf.c).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "lib/dnsanswer.h"
#include "resolver/forward.h"
#include "forward/servers.h"
#include "resolver/forward_cache.h"
#include "forward/kubedns_conf.h"
#include "resolver/upstream.h"

#define NAME "\x03""www""\x07""example""\x03""com"

static void put_rr(knot_pkt_t *pkt, const char *owner, uint16_t type, uint32_t ttl,
                   const uint8_t *rdata, uint16_t len)
{
	// The packet copies the struct and frees what it points to (KNOT_PF_FREE).
	knot_rrset_t rr;
	knot_rrset_init(&rr, knot_dname_copy((const uint8_t *)owner, &pkt->mm), type,
	                KNOT_CLASS_IN, ttl);
	assert_non_null(rr.owner);
	assert_int_equal(knot_rrset_add_rdata(&rr, rdata, len, &pkt->mm), KNOT_EOK);
	assert_int_equal(knot_pkt_put(pkt, KNOT_COMPR_HINT_NONE, &rr, KNOT_PF_FREE), KNOT_EOK);
}

static const uint8_t addr[4] = { 192, 0, 2, 1 };

/* SOA rdata: mname, rname (root), serial, refresh, retry, expire, minimum. */
static void soa_rdata(uint8_t *out, uint32_t minimum)
{
	memset(out, 0, 22);
	out[21] = minimum & 0xff;
	out[20] = (minimum >> 8) & 0xff;
}

/*! \brief An upstream answer to NAME A being written, at its answer section. */
static knot_pkt_t *answer_begin(uint16_t rcode)
{
	knot_pkt_t *out = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_non_null(out);
	knot_wire_set_qr(out->wire);
	knot_wire_set_rcode(out->wire, rcode);
	assert_int_equal(knot_pkt_put_question(out, (const uint8_t *)NAME, KNOT_CLASS_IN,
	                                       KNOT_RRTYPE_A), KNOT_EOK);
	assert_int_equal(knot_pkt_begin(out, KNOT_ANSWER), KNOT_EOK);
	return out;
}

/*! \brief The answer written as the forwarder gets it: parsed back (\a out is freed). */
static knot_pkt_t *answer_received(knot_pkt_t *out)
{
	knot_pkt_t *in = knot_pkt_new(NULL, out->size, NULL);
	assert_non_null(in);
	memcpy(in->wire, out->wire, out->size);
	in->size = out->size;
	assert_int_equal(knot_pkt_parse(in, 0), KNOT_EOK);
	knot_pkt_free(out);
	return in;
}

/*! \brief An upstream answer as the forwarder gets it: written, then parsed back. */
static knot_pkt_t *answer(uint16_t rcode, uint32_t a_ttl, int soa_ttl, uint32_t minimum)
{
	knot_pkt_t *out = answer_begin(rcode);
	if (a_ttl > 0) {
		put_rr(out, NAME, KNOT_RRTYPE_A, a_ttl, addr, sizeof(addr));
	}
	assert_int_equal(knot_pkt_begin(out, KNOT_AUTHORITY), KNOT_EOK);
	if (soa_ttl >= 0) {
		uint8_t soa[22];
		soa_rdata(soa, minimum);
		put_rr(out, "\x07""example""\x03""com", KNOT_RRTYPE_SOA, soa_ttl, soa, sizeof(soa));
	}
	return answer_received(out);
}

static void a_positive_answer_lives_its_smallest_ttl_at_most_the_maximum(void **state)
{
	knot_pkt_t *pkt = answer(KNOT_RCODE_NOERROR, 300, -1, 0);
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 1000, false);
	assert_non_null(e);
	assert_int_equal(e->expires_ms, 1000 + 30 * 1000);
	assert_int_equal(e->count[0], 1);
	k8s_fwd_entry_free(e);

	e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 600, 1000, false);
	assert_int_equal(e->expires_ms, 1000 + 300 * 1000);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

static void a_negative_answer_lives_its_soa_ttl_or_minimum_and_needs_a_soa(void **state)
{
	knot_pkt_t *pkt = answer(KNOT_RCODE_NXDOMAIN, 0, 20, 7);
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false);
	assert_non_null(e);
	assert_int_equal(e->rcode, KNOT_RCODE_NXDOMAIN);
	assert_int_equal(e->expires_ms, 7 * 1000);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);

	// NODATA without SOA: not kept (RFC 2308), but relayed.
	pkt = answer(KNOT_RCODE_NOERROR, 0, -1, 0);
	assert_null(k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false));
	e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, true);
	assert_non_null(e);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

static void errors_and_ttl_0_are_never_kept(void **state)
{
	knot_pkt_t *pkt = answer(KNOT_RCODE_SERVFAIL, 0, -1, 0);
	assert_null(k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false));
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, true);
	assert_non_null(e);
	assert_int_equal(e->rcode, KNOT_RCODE_SERVFAIL);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);

	pkt = answer(KNOT_RCODE_NOERROR, 0, -1, 0);
	knot_pkt_free(pkt);
	pkt = answer(KNOT_RCODE_NOERROR, 300, 0, 0);  // An SOA of TTL 0 beside the answer.
	assert_null(k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false));
	knot_pkt_free(pkt);
}

static uint32_t served_ttl(const k8s_fwd_entry_t *e, uint64_t now)
{
	knot_pkt_t *q = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_put_question(q, (const uint8_t *)NAME, KNOT_CLASS_IN,
	                                       KNOT_RRTYPE_A), KNOT_EOK);
	assert_int_equal(k8s_fwd_entry_put(e, q, now), KNOT_EOK);
	assert_int_equal(knot_wire_get_ancount(q->wire), 1);
	uint32_t ttl = knot_pkt_rr(knot_pkt_section(q, KNOT_ANSWER), 0)->ttl;
	knot_pkt_free(q);
	return ttl;
}

static void the_ttl_served_is_capped_and_counts_down(void **state)
{
	knot_pkt_t *pkt = answer(KNOT_RCODE_NOERROR, 300, -1, 0);
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 1000, false);
	assert_int_equal(served_ttl(e, 1000), 30);
	assert_int_equal(served_ttl(e, 1000 + 12500), 18);
	assert_int_equal(served_ttl(e, 1000 + 90000), 0);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

static void an_answer_that_does_not_fit_is_truncated(void **state)
{
	knot_pkt_t *pkt = answer(KNOT_RCODE_NOERROR, 300, -1, 0);
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false);
	knot_pkt_t *q = knot_pkt_new(NULL, KNOT_WIRE_HEADER_SIZE + 17 + 10, NULL);
	assert_int_equal(knot_pkt_put_question(q, (const uint8_t *)NAME, KNOT_CLASS_IN,
	                                       KNOT_RRTYPE_A), KNOT_EOK);
	assert_int_equal(k8s_fwd_entry_put(e, q, 0), KNOT_EOK);
	assert_true(knot_wire_get_tc(q->wire));
	assert_int_equal(knot_wire_get_ancount(q->wire), 0);
	knot_pkt_free(q);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

/*! \brief NXDOMAIN for NAME with the authority records \a ns (wire, owners written out). */
static knot_pkt_t *nxdomain_wire(const uint8_t *ns, size_t ns_len, uint16_t nscount)
{
	uint8_t wire[512] = { 0, 1, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0 };
	wire[9] = nscount;
	size_t len = KNOT_WIRE_HEADER_SIZE;
	memcpy(wire + len, NAME, sizeof(NAME));
	len += sizeof(NAME);
	memcpy(wire + len, "\x00\x01\x00\x01", 4);
	len += 4;
	assert_true(len + ns_len <= sizeof(wire));
	memcpy(wire + len, ns, ns_len);
	len += ns_len;
	knot_pkt_t *pkt = knot_pkt_new(NULL, len, NULL);
	assert_non_null(pkt);
	memcpy(pkt->wire, wire, len);
	pkt->size = len;
	assert_int_equal(knot_pkt_parse(pkt, 0), KNOT_EOK);
	return pkt;
}

/* example.com. SOA of class CH (3) with no rdata: libknot takes it unmeasured. */
#define CH_SOA_EMPTY "\x07""example""\x03""com""\x00" "\x00\x06\x00\x03" "\x00\x00\x00\x3c" "\x00\x00"
/* example.com. IN SOA, TTL 20: ". . 0 0 0 0 9". */
#define IN_SOA_9 "\x07""example""\x03""com""\x00" "\x00\x06\x00\x01" "\x00\x00\x00\x14" "\x00\x16" \
	"\x00\x00" "\x00\x00\x00\x00" "\x00\x00\x00\x00" "\x00\x00\x00\x00" "\x00\x00\x00\x00" \
	"\x00\x00\x00\x09"

static void an_soa_of_another_class_gives_no_negative_ttl_and_is_left_out(void **state)
{
	static const uint8_t ch[] = CH_SOA_EMPTY;
	knot_pkt_t *pkt = nxdomain_wire(ch, sizeof(ch) - 1, 1);
	uint32_t ttl = 0;
	assert_false(k8s_negative_ttl(pkt, &ttl));
	// Without an SOA to take its life from: not kept; relayed without the CH record.
	assert_null(k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false));
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, true);
	assert_non_null(e);
	assert_int_equal(e->rcode, KNOT_RCODE_NXDOMAIN);
	assert_int_equal(e->count[1], 0);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);

	// The CH one first, a whole IN one next: the IN one's MINIMUM (9 s) counts.
	static const uint8_t both[] = CH_SOA_EMPTY IN_SOA_9;
	pkt = nxdomain_wire(both, sizeof(both) - 1, 2);
	assert_true(k8s_negative_ttl(pkt, &ttl));
	assert_int_equal(ttl, 9);
	e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false);
	assert_non_null(e);
	assert_int_equal(e->expires_ms, 9 * 1000);
	assert_int_equal(e->count[1], 1);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

static void an_soa_rdata_cut_short_has_no_minimum(void **state)
{
	uint8_t buf[2 + 22];
	knot_rdata_t *rd = (knot_rdata_t *)buf;
	uint32_t minimum = 0;
	soa_rdata(rd->data, 9);
	for (uint16_t len = 0; len < 22; len++) {
		rd->len = len;
		assert_false(k8s_soa_minimum(rd, &minimum));
	}
	rd->len = 22;
	assert_true(k8s_soa_minimum(rd, &minimum));
	assert_int_equal(minimum, 9);
	// A name running past the rdata's end.
	rd->data[0] = 63;
	assert_false(k8s_soa_minimum(rd, &minimum));
}

static void an_answer_above_the_entry_size_is_relayed_whole_not_kept(void **state)
{
	knot_pkt_t *out = answer_begin(KNOT_RCODE_NOERROR);
	for (int i = 0; i < 300; i++) {
		uint8_t a[4] = { 192, 0, 2 + i / 256, i % 256 };
		put_rr(out, NAME, KNOT_RRTYPE_A, 300, a, sizeof(a));
	}
	knot_pkt_t *pkt = answer_received(out);

	assert_null(k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, false));
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0, true);
	assert_non_null(e);
	assert_true(e->bytes > K8S_FWD_ENTRY_MAX);
	assert_int_equal(e->count[0], 300);
	for (int i = 0; i < 300; i++) {
		// Owners of odd size between them: each rdata still 2-byte aligned (its length).
		assert_int_equal((uintptr_t)e->rrs[i].rrs.rdata & 1, 0);
	}
	// Whole into a TCP-sized response, truncated (TC) into a UDP-sized one.
	size_t sizes[2] = { KNOT_WIRE_MAX_PKTSIZE, 1232 };
	for (int i = 0; i < 2; i++) {
		knot_pkt_t *r = knot_pkt_new(NULL, sizes[i], NULL);
		assert_int_equal(knot_pkt_put_question(r, (const uint8_t *)NAME, KNOT_CLASS_IN,
		                                       KNOT_RRTYPE_A), KNOT_EOK);
		assert_int_equal(k8s_fwd_entry_put(e, r, 0), KNOT_EOK);
		assert_int_equal(knot_wire_get_tc(r->wire) != 0, i == 1);
		assert_true(i == 1 || knot_wire_get_ancount(r->wire) == 300);
		knot_pkt_free(r);
	}
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

static k8s_fwd_entry_t *entry_for(const char *name, uint32_t ttl, uint64_t now)
{
	knot_pkt_t *pkt = answer(KNOT_RCODE_NOERROR, ttl, -1, 0);
	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)name, KNOT_RRTYPE_A, 3600, now, false);
	knot_pkt_free(pkt);
	assert_non_null(e);
	return e;
}

static void the_cache_finds_live_entries_and_replaces_equal_keys(void **state)
{
	k8s_fwd_cache_t c;
	assert_int_equal(k8s_fwd_cache_init(&c, 16), KNOT_EOK);
	urcu_memb_read_lock();
	assert_null(k8s_fwd_cache_get(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A, 0));
	urcu_memb_read_unlock();
	k8s_fwd_entry_t *first = entry_for(NAME, 10, 0);
	k8s_fwd_cache_put(&c, first, 0);
	k8s_fwd_entry_t *second = entry_for(NAME, 20, 5000);
	k8s_fwd_cache_put(&c, second, 5000);
	assert_int_equal(atomic_load(&c.entries), 1);
	assert_int_equal(atomic_load(&c.bytes), second->bytes);
	urcu_memb_read_lock();
	assert_ptr_equal(k8s_fwd_cache_get(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A, 6000), second);
	assert_null(k8s_fwd_cache_get(&c, (const uint8_t *)NAME, KNOT_RRTYPE_AAAA, 6000));
	assert_null(k8s_fwd_cache_get(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A, 25000));
	urcu_memb_read_unlock();
	urcu_memb_barrier();
	k8s_fwd_cache_deinit(&c);
}

static void a_full_cache_keeps_at_most_its_slots(void **state)
{
	k8s_fwd_cache_t c;
	assert_int_equal(k8s_fwd_cache_init(&c, 16), KNOT_EOK);
	char name[32];
	for (int i = 0; i < 200; i++) {
		name[0] = snprintf(name + 1, sizeof(name) - 1, "n%d", i);
		name[1 + name[0]] = '\0';
		k8s_fwd_cache_put(&c, entry_for(name, 10 + i, 0), 0);
	}
	assert_true(atomic_load(&c.entries) <= 16);
	urcu_memb_barrier();
	k8s_fwd_cache_deinit(&c);
}

/*! \brief Which of \a names (3) the two-slot cache \a c still finds at \a now. */
static unsigned cache_finds(k8s_fwd_cache_t *c, const char *names[3], uint64_t now)
{
	unsigned found = 0;
	urcu_memb_read_lock();
	for (unsigned i = 0; i < 3; i++) {
		found |= (k8s_fwd_cache_get(c, (const uint8_t *)names[i], KNOT_RRTYPE_A, now) !=
		          NULL) << i;
	}
	urcu_memb_read_unlock();
	return found;
}

static void a_kept_name_in_use_outlives_names_asked_once(void **state)
{
	// Two slots: the third name makes one go.
	const char *names[3] = { "\x04""used""\x00", "\x04""once""\x00", "\x03""new""\x00" };
	for (int mark = 0; mark < 2; mark++) {
		k8s_fwd_cache_t c;
		assert_int_equal(k8s_fwd_cache_init(&c, 2), KNOT_EOK);
		k8s_fwd_entry_t *used = entry_for(names[0], 10, 0);  // Runs out first.
		used->kept = true;
		if (mark == 0) {
			atomic_store(&used->used, true);  // Looked up since published.
		} else {
			used->in_use = true;              // Published for a name in use.
		}
		k8s_fwd_cache_put(&c, used, 0);
		k8s_fwd_entry_t *once = entry_for(names[1], 20, 0);
		once->kept = true;
		k8s_fwd_cache_put(&c, once, 0);
		k8s_fwd_cache_put(&c, entry_for(names[2], 30, 1000), 1000);
		assert_int_equal(cache_finds(&c, names, 2000), 1 | 4);
		// Without the mark, the entry that runs out first goes.
		used = entry_for(names[0], 10, 2000);
		used->kept = true;
		k8s_fwd_cache_put(&c, used, 2000);
		assert_int_equal(cache_finds(&c, names, 2500), 1 | 4);
		k8s_fwd_cache_put(&c, entry_for(names[1], 40, 3000), 3000);
		assert_int_equal(cache_finds(&c, names, 3500), 2 | 4);
		urcu_memb_barrier();
		k8s_fwd_cache_deinit(&c);
	}
}

static void stub_domains_are_a_zone_and_addresses(void **state)
{
	char msg[256];
	k8s_fwd_group_t g;
	assert_int_equal(k8s_fwd_stub_parse("Corp.Example=10.0.0.1,2001:db8::1@5353", &g, msg,
	                                    sizeof(msg)), KNOT_EOK);
	assert_true(knot_dname_is_equal(g.zone, (const uint8_t *)"\x04""corp""\x07""example"));
	assert_int_equal(g.count, 2);
	assert_int_equal(g.servers[0].ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&g.servers[1])->sin6_port), 5353);
	free(g.zone);
	free(g.servers);

	assert_int_equal(k8s_fwd_stub_parse("corp.example", &g, msg, sizeof(msg)), KNOT_EINVAL);
	assert_int_equal(k8s_fwd_stub_parse("=10.0.0.1", &g, msg, sizeof(msg)), KNOT_EINVAL);
	assert_int_equal(k8s_fwd_stub_parse("corp.example=", &g, msg, sizeof(msg)), KNOT_EINVAL);
	assert_int_equal(k8s_fwd_stub_parse("corp.example=10.0.0.1,", &g, msg, sizeof(msg)), KNOT_EINVAL);
	assert_int_equal(k8s_fwd_stub_parse("corp.example=host.example", &g, msg, sizeof(msg)), KNOT_EINVAL);
	assert_int_equal(k8s_fwd_stub_parse("corp.example=10.0.0.1@0", &g, msg, sizeof(msg)), KNOT_EINVAL);
	assert_int_equal(k8s_fwd_stub_parse("corp.example=10.0.0.1@65536", &g, msg, sizeof(msg)), KNOT_EINVAL);
}


static uint16_t port_of(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
	                                       : ((const struct sockaddr_in *)ss)->sin_port);
}

static int upstreams(k8s_kubedns_t *cm, const char *json)
{
	char msg[256];
	return k8s_kubedns_parse(cm, K8S_KUBEDNS_UPSTREAMS, json, strlen(json), msg, sizeof(msg));
}

static int stubs(k8s_kubedns_t *cm, const char *json)
{
	char msg[256];
	return k8s_kubedns_parse(cm, K8S_KUBEDNS_STUBS, json, strlen(json), msg, sizeof(msg));
}

static void upstream_nameservers_are_a_json_list_of_ip_or_ip_port_at_most_3(void **state)
{
	k8s_kubedns_t cm = { 0 };
	assert_int_equal(upstreams(&cm, "[\"10.0.0.1\", \"10.0.0.2:5353\", \"[2001:db8::1]:54\"]"),
	                 KNOT_EOK);
	assert_true(cm.has_upstreams);
	assert_int_equal(cm.upstreams.count, 3);
	assert_int_equal(port_of(&cm.upstreams.servers[0]), 53);
	assert_int_equal(port_of(&cm.upstreams.servers[1]), 5353);
	assert_int_equal(cm.upstreams.servers[2].ss_family, AF_INET6);
	assert_int_equal(port_of(&cm.upstreams.servers[2]), 54);
	assert_int_equal(upstreams(&cm, "[\"2001:db8::2\"]"), KNOT_EOK);
	assert_int_equal(cm.upstreams.servers[0].ss_family, AF_INET6);
	assert_int_equal(port_of(&cm.upstreams.servers[0]), 53);
	// An empty list keeps resolv.conf's servers, as kube-dns does.
	assert_int_equal(upstreams(&cm, " [ ] "), KNOT_EOK);
	assert_false(cm.has_upstreams);
	k8s_kubedns_deinit(&cm);

	const char *bad[] = {
		"[\"10.0.0.1\", \"10.0.0.2\", \"10.0.0.3\", \"10.0.0.4\"]",  // kube-dns: at most 3
		"[\"10.0.0.1\"", "{\"a\": 1}", "[1]", "[\"\"]", "[\"host.example\"]",
		"[\"10.0.0.1:0\"]", "[\"10.0.0.1:65536\"]", "[\"10.0.0.1:\"]", "[\"10.0.0.1@53\"]",
		"[\"10.0.0.1:5x\"]", "[\"10.0.0.1\\u0000x\"]", "[\"[2001:db8::1]\"]", "[\"10.0.0.1\"] x", "", "[\"1.2.3.4\",]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k8s_kubedns_t b = { 0 };
		if (upstreams(&b, bad[i]) != KNOT_EINVAL) {
			fail_msg("accepted: %s", bad[i]);
		}
		k8s_kubedns_deinit(&b);
	}
}

static void stub_domains_are_a_json_object_of_domain_to_addresses(void **state)
{
	k8s_kubedns_t cm = { 0 };
	assert_int_equal(stubs(&cm, "{\"Acme.Local\": [\"1.2.3.4\"], \"corp.\": "
	                            "[\"10.0.0.1:5300\", \"10.0.0.2\"]}"), KNOT_EOK);
	assert_int_equal(cm.stub_count, 2);
	assert_true(knot_dname_is_equal(cm.stubs[0].zone, (const uint8_t *)"\x04""acme""\x05""local"));
	assert_int_equal(cm.stubs[1].count, 2);
	assert_int_equal(port_of(&cm.stubs[1].servers[0]), 5300);
	k8s_kubedns_deinit(&cm);

	const char *bad[] = {
		"[]", "{\"a\": \"1.2.3.4\"}", "{\"a\": []}", "{\"\": [\"1.2.3.4\"]}",
		"{\".\": [\"1.2.3.4\"]}", "{\"a..b\": [\"1.2.3.4\"]}", "{\"a\": [\"x\"]}",
		"{\"a\": [\"1.2.3.4\"], \"A.\": [\"1.2.3.5\"]}", "{\"a\": [\"1.2.3.4\"]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k8s_kubedns_t b = { 0 };
		if (stubs(&b, bad[i]) != KNOT_EINVAL) {
			fail_msg("accepted: %s", bad[i]);
		}
		k8s_kubedns_deinit(&b);
	}
	// More domains than the cap.
	char big[4096] = "{";
	for (int i = 0; i <= K8S_FWD_GROUPS_MAX; i++) {
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "%s\"d%d\": [\"1.2.3.4\"]",
		         i ? ", " : "", i);
	}
	strcat(big, "}");
	assert_int_equal(stubs(&cm, big), KNOT_EINVAL);
	k8s_kubedns_deinit(&cm);
}

static void the_configmap_replaces_the_default_servers_and_adds_stub_domains(void **state)
{
	char msg[256];
	k8s_fwd_conf_t base = { .timeout_ms = 2000, .cache_size = 64, .max_pending = 8 };
	base.groups = calloc(3, sizeof(*base.groups));
	base.group_count = 3;
	base.groups[0].servers = calloc(1, sizeof(struct sockaddr_storage));
	assert_int_equal(k8s_fwd_addr_parse("192.0.2.53", &base.groups[0].servers[0]), KNOT_EOK);
	base.groups[0].count = 1;
	assert_int_equal(k8s_fwd_stub_parse("corp=10.1.1.1", &base.groups[1], msg, sizeof(msg)), KNOT_EOK);
	assert_int_equal(k8s_fwd_stub_parse("lab=10.2.2.2", &base.groups[2], msg, sizeof(msg)), KNOT_EOK);

	k8s_kubedns_t cm = { 0 };
	k8s_fwd_conf_t out;
	// No ConfigMap: the options as they are.
	assert_int_equal(k8s_kubedns_merge(&base, &cm, &out, msg, sizeof(msg)), KNOT_EOK);
	assert_true(k8s_fwd_conf_equal(&out, &base));
	k8s_fwd_conf_deinit(&out);

	assert_int_equal(upstreams(&cm, "[\"10.9.9.9\"]"), KNOT_EOK);
	assert_int_equal(stubs(&cm, "{\"corp\": [\"10.3.3.3:5300\"], \"acme\": [\"10.4.4.4\"]}"),
	                 KNOT_EOK);
	assert_int_equal(k8s_kubedns_merge(&base, &cm, &out, msg, sizeof(msg)), KNOT_EOK);
	assert_int_equal(out.timeout_ms, 2000);
	assert_int_equal(out.group_count, 4);  // default, lab (kept), corp (replaced), acme
	assert_null(out.groups[0].zone);
	assert_int_equal(out.groups[0].count, 1);
	assert_int_equal(((struct sockaddr_in *)&out.groups[0].servers[0])->sin_addr.s_addr,
	                 inet_addr("10.9.9.9"));
	assert_true(knot_dname_is_equal(out.groups[1].zone, (const uint8_t *)"\x03""lab"));
	assert_true(knot_dname_is_equal(out.groups[2].zone, (const uint8_t *)"\x04""corp"));
	assert_int_equal(port_of(&out.groups[2].servers[0]), 5300);
	assert_true(knot_dname_is_equal(out.groups[3].zone, (const uint8_t *)"\x04""acme"));
	k8s_fwd_conf_deinit(&out);

	// Over the servers' cap in all: refused, nothing half applied.
	k8s_kubedns_deinit(&cm);
	char big[2048] = "{";
	for (int i = 0; i < 14; i++) {
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "%s\"d%d\": [\"1.2.3.4\"]",
		         i ? ", " : "", i);
	}
	strcat(big, "}");
	assert_int_equal(stubs(&cm, big), KNOT_EOK);
	assert_int_equal(k8s_kubedns_merge(&base, &cm, &out, msg, sizeof(msg)), KNOT_EINVAL);
	assert_null(out.groups);
	k8s_kubedns_deinit(&cm);
	k8s_fwd_conf_deinit(&base);
}

static void a_forwarder_keeps_its_own_copy_of_the_settings(void **state)
{
	char msg[256];
	// Only a stub domain: the default group is empty, without an array.
	k8s_fwd_conf_t base = { .timeout_ms = 2000, .cache_max_ttl = 30, .cache_size = 64,
	                        .max_pending = 8 };
	base.groups = calloc(2, sizeof(*base.groups));
	assert_non_null(base.groups);
	base.group_count = 2;
	assert_int_equal(k8s_fwd_stub_parse("corp=10.1.1.1,10.1.1.2@5300", &base.groups[1], msg,
	                                    sizeof(msg)), KNOT_EOK);

	k8s_fwd_conf_t copy;
	assert_int_equal(k8s_fwd_conf_copy(&copy, &base), KNOT_EOK);
	assert_true(k8s_fwd_conf_equal(&copy, &base));
	assert_ptr_not_equal(copy.groups, base.groups);
	assert_ptr_not_equal(copy.groups[1].zone, base.groups[1].zone);
	assert_ptr_not_equal(copy.groups[1].servers, base.groups[1].servers);
	k8s_fwd_conf_deinit(&base);
	// Still whole once the original is gone.
	assert_int_equal(copy.cache_max_ttl, 30);
	assert_int_equal(copy.groups[0].count, 0);
	assert_true(knot_dname_is_equal(copy.groups[1].zone, (const uint8_t *)"\x04""corp"));
	assert_int_equal(copy.groups[1].count, 2);
	assert_int_equal(port_of(&copy.groups[1].servers[1]), 5300);
	k8s_fwd_conf_deinit(&copy);
}

/*!
 * \brief The answer path reads an entry as a resolver would (upstream.h): the CNAME chain
 * from the name, then the records of the type at its end; nothing else the upstream sent.
 */
static void the_answer_path_reads_only_the_chain_and_its_records(void **state)
{
	knot_pkt_t *out = answer_begin(KNOT_RCODE_NOERROR);
	const uint8_t edge[] = "\x04""edge""\x07""example""\x03""net";
	const uint8_t other[4] = { 198, 51, 100, 7 };
	// A record of another owner first (not the chain's), then the chain, in any case.
	put_rr(out, "\x05""other""\x07""example""\x03""com", KNOT_RRTYPE_A, 60, other, 4);
	put_rr(out, "\x03""WWW""\x07""example""\x03""com", KNOT_RRTYPE_CNAME, 60, edge,
	       sizeof(edge));
	put_rr(out, (const char *)edge, KNOT_RRTYPE_A, 60, addr, sizeof(addr));
	put_rr(out, (const char *)edge, KNOT_RRTYPE_AAAA, 60,
	       (const uint8_t *)"\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	knot_pkt_t *pkt = answer_received(out);

	k8s_fwd_entry_t *e = k8s_fwd_entry_new(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A, 30, 0,
	                                       false);
	assert_non_null(e);
	assert_int_equal(e->count[0], 4);  // The clients get what the upstream sent.
	k8s_upstream_iter_t it;
	k8s_upstream_iter_init(e, &it);
	const knot_rrset_t *rr = k8s_upstream_next(e, &it);
	assert_non_null(rr);
	assert_int_equal(rr->type, KNOT_RRTYPE_CNAME);
	rr = k8s_upstream_next(e, &it);
	assert_non_null(rr);
	assert_int_equal(rr->type, KNOT_RRTYPE_A);
	assert_true(knot_dname_is_equal(rr->owner, edge));
	assert_memory_equal(rr->rrs.rdata->data, addr, 4);
	assert_null(k8s_upstream_next(e, &it));
	assert_true(k8s_upstream_has_records(e));
	assert_false(k8s_upstream_empty(e));
	assert_false(k8s_upstream_failed(e));
	// A source's entry is its key's, and never a client's.
	k8s_fwd_cache_t c;
	assert_int_equal(k8s_fwd_cache_init(&c, 16), KNOT_EOK);
	k8s_fwd_entry_t *src = k8s_fwd_entry_new_source(pkt, (const uint8_t *)NAME, KNOT_RRTYPE_A,
	                                                (const uint8_t *)"\x03""one", 30, 0, false);
	assert_non_null(src);
	k8s_fwd_cache_put(&c, src, 0);
	assert_null(k8s_fwd_cache_get(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A, 0));
	assert_ptr_equal(k8s_fwd_cache_find(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A,
	                                    (const uint8_t *)"\x03""one"), src);
	assert_null(k8s_fwd_cache_find(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A,
	                               (const uint8_t *)"\x03""two"));
	// A failure is kept for the answer path, never served to a client.
	k8s_fwd_entry_t *fail = k8s_fwd_entry_failure((const uint8_t *)NAME, KNOT_RRTYPE_A, NULL,
	                                              KNOT_RCODE_REFUSED, 0, 5000);
	assert_non_null(fail);
	k8s_fwd_cache_put(&c, fail, 0);
	assert_null(k8s_fwd_cache_get(&c, (const uint8_t *)NAME, KNOT_RRTYPE_A, 0));
	assert_true(k8s_upstream_failed(fail) && k8s_upstream_empty(fail));
	urcu_memb_barrier();
	k8s_fwd_cache_deinit(&c);
	k8s_fwd_entry_free(e);
	knot_pkt_free(pkt);
}

int main(void)
{
	urcu_memb_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_positive_answer_lives_its_smallest_ttl_at_most_the_maximum),
		cmocka_unit_test(a_negative_answer_lives_its_soa_ttl_or_minimum_and_needs_a_soa),
		cmocka_unit_test(errors_and_ttl_0_are_never_kept),
		cmocka_unit_test(the_ttl_served_is_capped_and_counts_down),
		cmocka_unit_test(the_answer_path_reads_only_the_chain_and_its_records),
		cmocka_unit_test(an_answer_that_does_not_fit_is_truncated),
		cmocka_unit_test(an_soa_of_another_class_gives_no_negative_ttl_and_is_left_out),
		cmocka_unit_test(an_soa_rdata_cut_short_has_no_minimum),
		cmocka_unit_test(an_answer_above_the_entry_size_is_relayed_whole_not_kept),
		cmocka_unit_test(the_cache_finds_live_entries_and_replaces_equal_keys),
		cmocka_unit_test(a_full_cache_keeps_at_most_its_slots),
		cmocka_unit_test(a_kept_name_in_use_outlives_names_asked_once),
		cmocka_unit_test(stub_domains_are_a_zone_and_addresses),
		cmocka_unit_test(a_forwarder_keeps_its_own_copy_of_the_settings),
		cmocka_unit_test(upstream_nameservers_are_a_json_list_of_ip_or_ip_port_at_most_3),
		cmocka_unit_test(stub_domains_are_a_json_object_of_domain_to_addresses),
		cmocka_unit_test(the_configmap_replaces_the_default_servers_and_adds_stub_domains),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_memb_unregister_thread();
	return ret;
}
