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
 * The Federated-DNS role without knotd: the federation-member option, which
 * members' addresses answer and in which order (the design's preference:
 * the source cluster's clusterIP, then same zone, same region, the others),
 * and whole answers from hand-built member tables.
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "federation/fedserve.h"
#include "table/records.h"
#include "fixtures.h"

/* --- federation-member ------------------------------------------------------- */

static void a_member_gives_its_name_kubeconfig_context_and_topology(void **state)
{
	k8s_fedmember_t m;
	char err[128] = "";
	assert_int_equal(k8s_fedmember_parse("foo  kubeconfig=/etc/knot/foo.yaml context=admin@foo "
	                                     "zone=us-east1-b region=us-east1", &m, err, sizeof(err)),
	                 KNOT_EOK);
	assert_memory_equal(m.name, "\x03""foo", 4);
	assert_string_equal(m.kubeconfig, "/etc/knot/foo.yaml");
	assert_string_equal(m.context, "admin@foo");
	assert_string_equal(m.zone, "us-east1-b");
	assert_string_equal(m.region, "us-east1");
	k8s_fedmember_free(&m);

	assert_int_equal(k8s_fedmember_parse("bar kubeconfig=/k", &m, err, sizeof(err)), KNOT_EOK);
	assert_null(m.context);
	assert_string_equal(m.zone, "");
	assert_int_equal(m.source_count, 0);
	k8s_fedmember_free(&m);
}

static struct sockaddr_storage sockaddr(const char *text)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, text, &in4->sin_addr) == 1) {
		ss.ss_family = AF_INET;
	} else {
		assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
		ss.ss_family = AF_INET6;
	}
	return ss;
}

static void a_members_source_prefixes_say_which_clients_speak_for_it(void **state)
{
	k8s_fedmember_t m;
	char err[128] = "";
	assert_int_equal(k8s_fedmember_parse("foo kubeconfig=/k source=10.1.0.0/16,192.0.2.7,"
	                                     "fd00:1::/32,10.9.8.0/23", &m, err, sizeof(err)),
	                 KNOT_EOK);
	assert_int_equal(m.source_count, 4);
	assert_int_equal(m.sources[1].len, 32);
	struct sockaddr_storage in[] = {
		sockaddr("10.1.0.0"), sockaddr("10.1.255.255"), sockaddr("192.0.2.7"),
		sockaddr("fd00:1:ffff::1"), sockaddr("::ffff:10.1.2.3"), sockaddr("10.9.9.1"),
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_true(k8s_fedserve_from_member(&m, &in[i]));
	}
	struct sockaddr_storage out[] = {
		sockaddr("10.2.0.1"), sockaddr("192.0.2.8"), sockaddr("fd00:2::1"),
		sockaddr("::ffff:10.2.0.1"), sockaddr("::a01:203"), sockaddr("10.9.10.1"),
	};
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		assert_false(k8s_fedserve_from_member(&m, &out[i]));
	}
	assert_false(k8s_fedserve_from_member(&m, NULL));
	k8s_fedmember_free(&m);

	// 0.0.0.0/0 and ::/0 are every address: an administrator's explicit choice.
	assert_int_equal(k8s_fedmember_parse("foo kubeconfig=/k source=0.0.0.0/0", &m, err,
	                                     sizeof(err)), KNOT_EOK);
	struct sockaddr_storage any = sockaddr("203.0.113.9");
	assert_true(k8s_fedserve_from_member(&m, &any));
	k8s_fedmember_free(&m);
	// Without source= no client speaks for the member.
	assert_int_equal(k8s_fedmember_parse("foo kubeconfig=/k", &m, err, sizeof(err)), KNOT_EOK);
	assert_false(k8s_fedserve_from_member(&m, &any));
	k8s_fedmember_free(&m);
}

static void a_member_without_kubeconfig_or_with_a_bad_field_is_refused(void **state)
{
	static const char *bad[] = {
		"",                                    // no name
		"foo",                                 // no kubeconfig
		"Foo kubeconfig=/k",                   // the name is what the option carries: lowercase
		"foo.bar kubeconfig=/k",               // one label
		"foo kubeconfig=/k kubeconfig=/l",     // twice
		"foo kubeconfig=/k zone=US-East",      // not a lowercase label
		"foo kubeconfig=/k colour=blue",       // unknown key
		"foo kubeconfig=",                     // no value
		"foo /path/without/key",
		"foo kubeconfig=/k source=10.1.0.1/16",          // host bits set
		"foo kubeconfig=/k source=10.1.0.0/33",
		"foo kubeconfig=/k source=fd00::/129",
		"foo kubeconfig=/k source=10.1.0.0/",
		"foo kubeconfig=/k source=10.1.0.0/+8",
		"foo kubeconfig=/k source=10.1.0.0,",            // an empty prefix
		"foo kubeconfig=/k source=node-a",
		"foo kubeconfig=/k source=10.0.0.0/8 source=10.1.0.0/16",
		"foo kubeconfig=/k source=1.0.0.0/8,2.0.0.0/8,3.0.0.0/8,4.0.0.0/8,5.0.0.0/8,"
		"6.0.0.0/8,7.0.0.0/8,8.0.0.0/8,9.0.0.0/8",    // more than K8S_FED_MAX_SOURCES
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k8s_fedmember_t m;
		char err[128] = "";
		assert_int_equal(k8s_fedmember_parse(bad[i], &m, err, sizeof(err)), KNOT_EINVAL);
		assert_true(err[0] != '\0');
		assert_null(m.kubeconfig);
	}
}

/* --- selection and order ----------------------------------------------------- */

static k8s_fedmember_t member(const char *name, const char *zone, const char *region)
{
	k8s_fedmember_t m = { 0 };
	m.name[0] = strlen(name);
	memcpy(m.name + 1, name, strlen(name));
	snprintf(m.zone, sizeof(m.zone), "%s", zone);
	snprintf(m.region, sizeof(m.region), "%s", region);
	// Every member's K8S-DNS queries from 192.0.2.0/24 (the answers' tests ask from 192.0.2.1).
	m.sources[0] = (k8s_fedprefix_t){ .family = AF_INET, .len = 24, .bytes = { 192, 0, 2 } };
	m.source_count = 1;
	return m;
}

static k8s_fedmember_t members[5];
static k8s_fedzone_t fz = { .members = members, .member_count = 5, .ttl = 5 };

static int setup_members(void **state)
{
	// Configuration order differs from the preference each source has.
	members[0] = member("asia", "asia-east1-a", "asia-east1");
	members[1] = member("west", "us-west1-a", "us-west1");
	members[2] = member("east-c", "us-east1-c", "us-east1");
	members[3] = member("east-b", "us-east1-b", "us-east1");
	members[4] = member("east-b2", "us-east1-b", "us-east1");
	return 0;
}

static void order_is(size_t source, const bool *shard, const uint8_t *expected, size_t count)
{
	uint8_t order[K8S_FED_MAX_MEMBERS];
	size_t n = k8s_fedserve_order(&fz, source, shard, order);
	assert_int_equal(n, count);
	if (count > 0) {
		assert_memory_equal(order, expected, count);
	}
}

static void same_zone_comes_before_same_region_before_the_others(void **state)
{
	bool all[5] = { true, true, true, true, true };
	// east-b: east-b2 (same zone), east-c (same region), then asia and west in configuration order.
	order_is(3, all, (const uint8_t[]){ 4, 2, 0, 1 }, 4);
	// east-c: no member shares its zone; east-b and east-b2 share its region.
	order_is(2, all, (const uint8_t[]){ 3, 4, 0, 1 }, 4);
	// asia shares nothing: configuration order.
	order_is(0, all, (const uint8_t[]){ 1, 2, 3, 4 }, 4);
}

static void without_a_source_every_shard_answers_in_configuration_order(void **state)
{
	bool all[5] = { true, true, true, true, true };
	order_is(SIZE_MAX, all, (const uint8_t[]){ 0, 1, 2, 3, 4 }, 5);
}

static void members_without_a_shard_are_left_out(void **state)
{
	bool some[5] = { true, false, true, false, true };
	order_is(3, some, (const uint8_t[]){ 4, 2, 0 }, 3);
	bool none[5] = { false };
	order_is(SIZE_MAX, none, NULL, 0);
}

static void a_zone_name_of_another_region_is_another_place(void **state)
{
	k8s_fedmember_t two[2] = { member("x", "a", "r1"), member("y", "a", "r2") };
	k8s_fedzone_t z = { .members = two, .member_count = 2 };
	bool all[2] = { true, true };
	uint8_t order[K8S_FED_MAX_MEMBERS];
	assert_int_equal(k8s_fedserve_order(&z, 0, all, order), 1);
	// Rank "elsewhere", not "same zone": checked through a third member that is in r1.
	k8s_fedmember_t three[3] = { member("x", "a", "r1"), member("y", "a", "r2"),
	                             member("z", "b", "r1") };
	z.members = three;
	z.member_count = 3;
	bool all3[3] = { true, true, true };
	assert_int_equal(k8s_fedserve_order(&z, 0, all3, order), 2);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[1], 1);
}

static void the_source_option_names_a_member_in_any_case(void **state)
{
	assert_int_equal(k8s_fedserve_member(&fz, (const uint8_t *)"east-b", 6), 3);
	assert_int_equal(k8s_fedserve_member(&fz, (const uint8_t *)"EAST-B2", 7), 4);
	assert_int_equal(k8s_fedserve_member(&fz, (const uint8_t *)"east", 4), SIZE_MAX);
	assert_int_equal(k8s_fedserve_member(&fz, (const uint8_t *)"", 0), SIZE_MAX);
	assert_int_equal(k8s_fedserve_member(&fz, NULL, 0), SIZE_MAX);
}

/* --- answers from member tables ---------------------------------------------- */

static void *arena[256];
static size_t arena_used;

static void *arena_alloc(void *ctx, size_t len)
{
	assert_true(arena_used < sizeof(arena) / sizeof(arena[0]));
	return arena[arena_used++] = malloc(len);
}

static knot_mm_t mm = { .alloc = arena_alloc };

static k8s_table_t tables[3];
static k8s_fedmember_t three[3];
static k8s_fedzone_t tz = { .members = three, .member_count = 3, .ttl = 5 };
static const k8s_records_conf_t rconf = { 0 };

/*! \brief web.shop in a member: a LoadBalancer with ingress, ready endpoints or not. */
static void put_web(k8s_table_t *t, const char *cluster_ip, const char *lb4, const char *lb6,
                    bool ready)
{
	k8s_service_t svc = fx_service("shop", "web", K8S_SVC_CLUSTERIP, cluster_ip, NULL);
	if (lb4 != NULL) {
		svc.ingress[svc.ingress_count++] = fx_ip(lb4);
	}
	if (lb6 != NULL) {
		svc.ingress[svc.ingress_count++] = fx_ip(lb6);
	}
	k8s_endpoint_t ep = fx_ep("10.244.0.9", ready, NULL, NULL);
	k8s_slice_t slice = fx_slice("shop", "web-x", "web", AF_INET, &ep, 1, NULL, 0);
	const k8s_slice_t *ptr = &slice;
	k8s_block_t *block = k8s_records_service(&svc, &ptr, 1, &rconf);
	assert_non_null(block);
	assert_int_equal(k8s_table_put_block(t, block), KNOT_EOK);
	k8s_table_commit(t);
}

static int setup_tables(void **state)
{
	urcu_memb_register_thread();
	three[0] = member("baz", "europe-west1-b", "europe-west1");
	three[1] = member("bar", "us-east1-c", "us-east1");
	three[2] = member("foo", "us-east1-b", "us-east1");
	tz.suffix = (const knot_dname_t *)"\x05myfed\x03svc\x0a""federation";
	for (int i = 0; i < 3; i++) {
		assert_int_equal(k8s_table_init(&tables[i]), KNOT_EOK);
		assert_int_equal(k8s_table_set_ns(&tables[i], "shop", true), KNOT_EOK);
		k8s_table_set_ready(&tables[i], K8S_READY_CLUSTER);
	}
	put_web(&tables[0], "10.0.3.30", "108.120.45.12", NULL, true);
	put_web(&tables[1], "10.0.2.20", "104.32.64.130", NULL, false);  // no ready endpoint
	put_web(&tables[2], "10.0.1.10", "104.32.64.128", "2001:db8::128", true);
	return 0;
}

static int teardown_tables(void **state)
{
	urcu_memb_barrier();
	for (int i = 0; i < 3; i++) {
		k8s_table_deinit(&tables[i]);
	}
	urcu_memb_unregister_thread();
	return 0;
}

typedef struct {
	k8s_answer_t result;
	char addrs[1024];  /*!< The answer's addresses in wire order, space-separated. */
	size_t count;      /*!< How many. */
} reply_t;

static reply_t ask_from(const k8s_table_t *const *t, const char *name, uint16_t type,
                        const char *source, const char *client)
{
	struct sockaddr_storage remote = sockaddr(client);
	knot_dname_t *qname = knot_dname_from_str_alloc(name);
	knot_pkt_t *query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_put_question(query, qname, KNOT_CLASS_IN, type), KNOT_EOK);
	knot_pkt_t *resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	assert_int_equal(knot_pkt_init_response(resp, query), KNOT_EOK);

	reply_t reply = { 0 };
	urcu_memb_read_lock();
	reply.result = k8s_fedserve_answer(&tz, t, qname, type, (const uint8_t *)source,
	                                   source != NULL ? strlen(source) : 0, &remote, resp, &mm);
	urcu_memb_read_unlock();

	knot_pkt_t *parsed = knot_pkt_new(resp->wire, resp->size, NULL);
	assert_int_equal(knot_pkt_parse(parsed, 0), KNOT_EOK);
	const knot_pktsection_t *answer = knot_pkt_section(parsed, KNOT_ANSWER);
	for (uint16_t i = 0; i < answer->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(answer, i);
		knot_rdata_t *rd = rr->rrs.rdata;
		for (uint16_t j = 0; j < rr->rrs.count; j++, rd = knot_rdataset_next(rd)) {
			char text[INET6_ADDRSTRLEN];
			inet_ntop(rd->len == 4 ? AF_INET : AF_INET6, rd->data, text, sizeof(text));
			size_t len = strlen(reply.addrs);
			snprintf(reply.addrs + len, sizeof(reply.addrs) - len, "%s%s", len > 0 ? " " : "", text);
			reply.count++;
		}
	}
	knot_pkt_free(parsed);
	knot_pkt_free(resp);
	knot_pkt_free(query);
	free(qname);
	while (arena_used > 0) {
		free(arena[--arena_used]);
	}
	return reply;
}

static reply_t ask(const k8s_table_t *const *t, const char *name, uint16_t type, const char *source)
{
	return ask_from(t, name, type, source, "192.0.2.1");
}

static const k8s_table_t *const synced[3] = { &tables[0], &tables[1], &tables[2] };

static void the_source_shard_comes_first_and_a_shard_without_endpoints_is_left_out(void **state)
{
	// bar has the service but no ready endpoint: not a shard, neither local nor external.
	reply_t r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo");
	assert_int_equal(r.result, K8S_ANSWER_HIT);
	assert_string_equal(r.addrs, "10.0.1.10 108.120.45.12");
	// bar has no shard, yet orders the others: foo (its region) before baz.
	r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "bar");
	assert_string_equal(r.addrs, "104.32.64.128 108.120.45.12");
	r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_AAAA, NULL);
	assert_string_equal(r.addrs, "2001:db8::128");
	r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_ANY, NULL);
	assert_string_equal(r.addrs, "108.120.45.12 104.32.64.128 2001:db8::128");
}

static void an_external_zone_never_answers_a_cluster_ip(void **state)
{
	tz.external = true;
	reply_t r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo");
	tz.external = false;
	assert_string_equal(r.addrs, "108.120.45.12 104.32.64.128");
}

static void explicit_shards_and_names_without_records(void **state)
{
	reply_t r = ask(synced, "foo.web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo");
	assert_int_equal(r.result, K8S_ANSWER_HIT);
	assert_string_equal(r.addrs, "104.32.64.128");
	assert_int_equal(ask(synced, "bar.web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NODATA);
	assert_int_equal(ask(synced, "qux.web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NXDOMAIN);
	assert_int_equal(ask(synced, "x.foo.web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NXDOMAIN);
	assert_int_equal(ask(synced, "db.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NXDOMAIN);
	assert_int_equal(ask(synced, "shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NODATA);
	assert_int_equal(ask(synced, "other.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NXDOMAIN);
	assert_int_equal(ask(synced, "svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NODATA);
	assert_int_equal(ask(synced, "web.shop.other.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NXDOMAIN);
	assert_int_equal(ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_MX, NULL).result,
	                 K8S_ANSWER_NODATA);
}

static void unsynced_members_are_skipped_and_none_synced_is_not_ready(void **state)
{
	const k8s_table_t *const partial[3] = { NULL, &tables[1], &tables[2] };
	reply_t r = ask(partial, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo");
	assert_string_equal(r.addrs, "10.0.1.10");
	assert_int_equal(ask(partial, "baz.web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL).result,
	                 K8S_ANSWER_NOTREADY);
	const k8s_table_t *const none[3] = { NULL, NULL, NULL };
	assert_int_equal(ask(none, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo").result,
	                 K8S_ANSWER_NOTREADY);
}

static void the_source_option_counts_only_from_the_members_source_prefixes(void **state)
{
	reply_t r = ask_from(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo",
	                     "198.51.100.1");
	assert_string_equal(r.addrs, "108.120.45.12 104.32.64.128");
	r = ask_from(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo", "::ffff:192.0.2.9");
	assert_string_equal(r.addrs, "10.0.1.10 108.120.45.12");
	three[2].source_count = 0;
	r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo");
	three[2].source_count = 1;
	assert_string_equal(r.addrs, "108.120.45.12 104.32.64.128");
}

static void a_source_without_a_shard_gets_its_zone_then_its_region_then_the_others(void **state)
{
	// Issue 22: four members, the asker in zone a of region r1 has no shard.
	k8s_fedmember_t four[4] = { member("far", "c", "r2"), member("near", "b", "r1"),
	                            member("asker", "a", "r1"), member("same", "a", "r1") };
	k8s_fedzone_t saved = tz;
	tz.members = four;
	tz.member_count = 4;
	k8s_table_t t4;
	assert_int_equal(k8s_table_init(&t4), KNOT_EOK);
	assert_int_equal(k8s_table_set_ns(&t4, "shop", true), KNOT_EOK);
	k8s_table_set_ready(&t4, K8S_READY_CLUSTER);
	put_web(&t4, "10.0.4.40", "104.32.64.140", NULL, true);
	// tables[1] (bar) has no ready endpoint: the asker's service without a shard.
	const k8s_table_t *const members4[4] = { &tables[0], &tables[2], &tables[1], &t4 };
	reply_t r = ask(members4, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "asker");
	assert_string_equal(r.addrs, "104.32.64.140 104.32.64.128 108.120.45.12");
	// Without a source: configuration order.
	r = ask(members4, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL);
	assert_string_equal(r.addrs, "108.120.45.12 104.32.64.128 104.32.64.140");
	tz = saved;
	urcu_memb_barrier();
	k8s_table_deinit(&t4);
}

/*! \brief web.shop as a headless service with \a count ready endpoints 10.1.x.y and the given ingress. */
static void put_headless(k8s_table_t *t, size_t count, const char *lb1, const char *lb2)
{
	k8s_service_t svc = fx_service("shop", "web", K8S_SVC_HEADLESS, NULL, NULL);
	svc.ingress[svc.ingress_count++] = fx_ip(lb1);
	svc.ingress[svc.ingress_count++] = fx_ip(lb2);
	k8s_endpoint_t *eps = calloc(count, sizeof(*eps));
	assert_non_null(eps);
	// Given from the highest down: the block sorts them.
	for (size_t i = 0; i < count; i++) {
		size_t v = count - 1 - i;
		eps[i].ip.family = AF_INET;
		eps[i].ip.bytes[0] = 10;
		eps[i].ip.bytes[1] = 1;
		eps[i].ip.bytes[2] = v / 250;
		eps[i].ip.bytes[3] = 1 + v % 250;
		eps[i].ready = true;
	}
	k8s_slice_t slice = fx_slice("shop", "web-x", "web", AF_INET, eps, count, NULL, 0);
	const k8s_slice_t *ptr = &slice;
	k8s_block_t *block = k8s_records_service(&svc, &ptr, 1, &rconf);
	assert_non_null(block);
	assert_int_equal(k8s_table_put_block(t, block), KNOT_EOK);
	k8s_table_commit(t);
	free(eps);
}

static void a_headless_shard_answers_its_lowest_addresses_up_to_the_cap(void **state)
{
	// foo's shard: 4000 endpoints; baz's ingress is one of the carried endpoints, bar's
	// one beyond the cap.
	put_headless(&tables[2], 4000, "104.32.64.128", "2001:db8::128");
	put_web(&tables[0], "10.0.3.30", "10.1.0.5", NULL, true);
	put_web(&tables[1], "10.0.2.20", "10.1.15.250", NULL, true);
	reply_t r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "foo");
	assert_int_equal(r.result, K8S_ANSWER_HIT);
	assert_int_equal(r.count, K8S_FED_LOCAL_MAX + 1);
	assert_true(strncmp(r.addrs, "10.1.0.1 10.1.0.2 10.1.0.3 ", 27) == 0);
	// The 32nd lowest endpoint, then bar's (foo's region); baz's 10.1.0.5 is not repeated.
	const char *tail = " 10.1.0.32 10.1.15.250";
	size_t len = strlen(r.addrs);
	assert_string_equal(r.addrs + len - strlen(tail), tail);
	// From elsewhere, foo's ingress addresses only.
	r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, "baz");
	assert_string_equal(r.addrs, "10.0.3.30 10.1.15.250 104.32.64.128");
	put_web(&tables[0], "10.0.3.30", "108.120.45.12", NULL, true);
	put_web(&tables[1], "10.0.2.20", "104.32.64.130", NULL, false);
	put_web(&tables[2], "10.0.1.10", "104.32.64.128", "2001:db8::128", true);
}

static void two_shards_behind_one_address_answer_it_once(void **state)
{
	put_web(&tables[1], "10.0.2.20", "108.120.45.12", NULL, true);
	reply_t r = ask(synced, "web.shop.myfed.svc.federation.", KNOT_RRTYPE_A, NULL);
	put_web(&tables[1], "10.0.2.20", "104.32.64.130", NULL, false);
	assert_string_equal(r.addrs, "108.120.45.12 104.32.64.128");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_member_gives_its_name_kubeconfig_context_and_topology),
		cmocka_unit_test(a_member_without_kubeconfig_or_with_a_bad_field_is_refused),
		cmocka_unit_test(a_members_source_prefixes_say_which_clients_speak_for_it),
		cmocka_unit_test_setup(same_zone_comes_before_same_region_before_the_others, setup_members),
		cmocka_unit_test_setup(without_a_source_every_shard_answers_in_configuration_order, setup_members),
		cmocka_unit_test_setup(members_without_a_shard_are_left_out, setup_members),
		cmocka_unit_test(a_zone_name_of_another_region_is_another_place),
		cmocka_unit_test_setup(the_source_option_names_a_member_in_any_case, setup_members),
		cmocka_unit_test_setup_teardown(the_source_shard_comes_first_and_a_shard_without_endpoints_is_left_out,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(an_external_zone_never_answers_a_cluster_ip,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(explicit_shards_and_names_without_records,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(unsynced_members_are_skipped_and_none_synced_is_not_ready,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(two_shards_behind_one_address_answer_it_once,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(the_source_option_counts_only_from_the_members_source_prefixes,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(a_source_without_a_shard_gets_its_zone_then_its_region_then_the_others,
		                                setup_tables, teardown_tables),
		cmocka_unit_test_setup_teardown(a_headless_shard_answers_its_lowest_addresses_up_to_the_cap,
		                                setup_tables, teardown_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
