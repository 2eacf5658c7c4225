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
 * The Federated-DNS answer (module/federation/fedserve.c) as the zone's ANSWER hook calls
 * it: member tables that the real pipeline built from four fixed member
 * clusters (one with a headless shard of more endpoints than an answer
 * carries, load-balancer addresses shared between members and with an
 * endpoint), the last member's table rebuilt with input events for some
 * inputs; the members' zones, regions and source prefixes, which members are
 * synchronized and the zone's kind (internal or external) from the input; then
 * queries of any name below the suffix, type, size, source-cluster option and
 * client address.
 *
 * What must hold: every response fits its size and parses back; an address
 * RRset holds each address once and at most K8S_FED_LOCAL_MAX plus every
 * member's load-balancer addresses; and, with the fixed members (their cluster
 * addresses in 10/8 and fd00::/8, load-balancer addresses elsewhere), a cluster
 * address is answered only to a client in the prefixes of the member its
 * option names, never in the external zone.
 *
 * Input: a byte of options, a byte of members' settings per member, source
 * prefixes, a count of events and the events (gen.h), then queries.
 */

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "check.h"
#include "fz_packet.h"
#include "federation/fedserve.h"
#include "gen.h"
#include "store/store.h"

#define MEMBERS 4
#define BULK_ENDPOINTS 40

static const char *const member_names[MEMBERS] = { "baz", "bar", "foo", "qux" };

#define SVC(name, spec, ingress) "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"" name \
	"\",\"namespace\":\"shop\"},\"spec\":" spec ",\"status\":{\"loadBalancer\":{\"ingress\":" \
	ingress "}}}}"
#define SLICE(name, svc, family, eps) "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"" \
	name "\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"" svc "\"}}," \
	"\"addressType\":\"" family "\",\"endpoints\":" eps ",\"ports\":[{\"name\":\"http\",\"port\":80}]}}"
#define NS(name) "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"" name "\"}}}"

/*! \brief Services and slices of the fixed members (namespaces come first, the bulk slice is made). */
static const char *const member_events[MEMBERS][4] = {
	{
		SVC("web", "{\"clusterIPs\":[\"10.0.3.30\",\"fd00::30\"]}",
		    "[{\"ip\":\"198.51.100.12\"},{\"ip\":\"2001:db8::12\"}]"),
		SLICE("web-a", "web", "IPv4", "[{\"addresses\":[\"10.244.3.1\"]}]"),
		SVC("bulk", "{\"clusterIP\":\"None\"}", "[{\"ip\":\"198.51.100.40\"}]"),
		NULL,
	}, {
		// Shares an address with baz's load balancer and with one of baz's bulk endpoints.
		SVC("web", "{\"clusterIPs\":[\"10.0.2.20\"]}",
		    "[{\"ip\":\"198.51.100.7\"},{\"ip\":\"198.51.100.12\"}]"),
		SLICE("web-a", "web", "IPv4", "[{\"addresses\":[\"10.244.2.1\"]}]"),
		SVC("bulk", "{\"clusterIPs\":[\"10.0.2.21\"]}", "[{\"ip\":\"198.51.100.7\"}]"),
		SLICE("bulk-a", "bulk", "IPv4", "[{\"addresses\":[\"10.244.2.2\"]}]"),
	}, {
		SVC("web", "{\"clusterIPs\":[\"fd00::10\"],\"ipFamilies\":[\"IPv6\"]}",
		    "[{\"ip\":\"2001:db8::12\"},{\"ip\":\"2001:db8::10\"}]"),
		SLICE("web-a", "web", "IPv6", "[{\"addresses\":[\"fd00:244::1\"]}]"),
		SVC("ext", "{\"type\":\"ExternalName\",\"externalName\":\"www.example.com\"}", "[]"),
		NULL,
	}, {
		SVC("web", "{\"clusterIPs\":[\"10.0.4.40\"]}", "[{\"ip\":\"198.51.100.99\"}]"),
		SLICE("web-a", "web", "IPv4", "[{\"addresses\":[\"10.244.4.1\"],\"conditions\":{\"ready\":false}}]"),
		SVC("bulk", "{\"clusterIPs\":[\"10.0.4.41\"]}", "[{\"ip\":\"203.0.113.41\"}]"),
		SLICE("bulk-a", "bulk", "IPv4", "[{\"addresses\":[\"10.244.4.2\"]}]"),
	},
};

static const char *const tokens[] = {
	"baz", "bar", "foo", "qux", "web", "bulk", "ext", "shop", "default", "myfed", "svc",
	"federation", "example", "com", "BAR", "*", GEN_LONG63,
};

static const uint16_t qtypes[] = {
	KNOT_RRTYPE_A, KNOT_RRTYPE_AAAA, KNOT_RRTYPE_ANY, KNOT_RRTYPE_TXT, KNOT_RRTYPE_SRV,
	KNOT_RRTYPE_CNAME,
};

static const char *const zones_text[2] = { "myfed.svc.federation.", "myfed.svc.federation.example.com." };
static knot_dname_t *suffixes[2];
static knot_pkt_t *query, *resp;
static k8s_table_t fixed[MEMBERS];
static k8s_store_t *fixed_store[MEMBERS];

static void *blocks[64];
static fz_arena_t arena = { .blocks = blocks, .cap = 64 };

static void apply(k8s_store_t *store, unsigned source, const char *text)
{
	char key[GEN_KEY_MAX];
	CHECK(gen_apply(store, source, text, strlen(text), key) == K8S_EV_ADDED);
}

/*! \brief A member's table from its fixed objects and \a events input events. */
static void build(unsigned m, k8s_table_t *table, k8s_store_t **store, fz_t *f, unsigned events)
{
	CHECK(k8s_table_init(table) == KNOT_EOK);
	k8s_store_conf_t conf = { 0 };
	*store = k8s_store_new(table, &conf, NULL);
	CHECK(*store != NULL);
	apply(*store, K8S_SRC_NAMESPACES, NS("shop"));
	apply(*store, K8S_SRC_NAMESPACES, NS("default"));
	for (size_t i = 0; i < 4 && member_events[m][i] != NULL; i++) {
		unsigned source = (strstr(member_events[m][i], "addressType") != NULL) ? K8S_SRC_SLICES
		                                                              : K8S_SRC_SERVICES;
		apply(*store, source, member_events[m][i]);
	}
	if (m == 0) {
		// More endpoints than an answer carries, one of them another member's load balancer.
		gen_buf_t b = { .len = 0 };
		gen_add(&b, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"bulk-a\","
		        "\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"bulk\"}},"
		        "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"198.51.100.7\"]}");
		for (unsigned i = 0; i < BULK_ENDPOINTS; i++) {
			gen_add(&b, ",{\"addresses\":[\"10.3.0.%u\"]}", 1 + i);
		}
		gen_add(&b, "]}}");
		char key[GEN_KEY_MAX];
		CHECK(gen_apply(*store, K8S_SRC_SLICES, b.text, b.len, key) == K8S_EV_ADDED);
	}
	char key[GEN_KEY_MAX];
	for (unsigned i = 0; i < events; i++) {
		unsigned source = fz_pick(f, 2) ? K8S_SRC_SLICES : K8S_SRC_SERVICES;
		gen_buf_t b = { .len = 0 };
		gen_event(&b, f, source);
		gen_apply(*store, source, b.text, b.len, key);
	}
	k8s_store_commit(*store, 0);
	k8s_table_set_ready(table, K8S_READY_CLUSTER);
}

static void destroy(k8s_table_t *table, k8s_store_t *store)
{
	k8s_store_free(store);
	k8s_table_commit(table);
	k8s_table_deinit(table);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	urcu_memb_register_thread();
	for (int i = 0; i < 2; i++) {
		suffixes[i] = knot_dname_from_str_alloc(zones_text[i]);
		CHECK(suffixes[i] != NULL);
	}
	query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	CHECK(query != NULL && resp != NULL);
	for (unsigned m = 0; m < MEMBERS; m++) {
		build(m, &fixed[m], &fixed_store[m], NULL, 0);
	}
	return 0;
}

/*! \brief A member's settings: zone, region and source prefixes from the input. */
static void make_member(fz_t *f, unsigned m, k8s_fedmember_t *out)
{
	static const char *const zones[] = { "", "a", "b" };
	static const char *const regions[] = { "", "r1", "r2" };
	memset(out, 0, sizeof(*out));
	out->name[0] = strlen(member_names[m]);
	memcpy(out->name + 1, member_names[m], out->name[0]);
	uint8_t how = fz_byte(f);
	strcpy(out->zone, zones[how % 3]);
	strcpy(out->region, regions[(how / 3) % 3]);
	out->source_count = (how / 9) % 3;
	for (size_t i = 0; i < out->source_count; i++) {
		k8s_fedprefix_t *p = &out->sources[i];
		bool v6 = fz_byte(f) & 1;
		p->family = v6 ? AF_INET6 : AF_INET;
		unsigned max = v6 ? 128 : 32;
		p->len = fz_pick(f, max + 1);
		for (unsigned b = 0; b < (p->len + 7u) / 8; b++) {
			p->bytes[b] = fz_byte(f);
		}
		// Host bits zero, as the option parser leaves them.
		for (unsigned b = p->len; b < max; b++) {
			p->bytes[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
		}
	}
}

/*! \brief A client address: none, IPv4, IPv6 or IPv4-mapped, near the usual ones or any. */
static const struct sockaddr_storage *make_remote(fz_t *f, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	uint8_t how = fz_byte(f);
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	switch (how % 4) {
	case 0:
		return NULL;
	case 1:
		ss->ss_family = AF_INET;
		for (int i = 0; i < 4; i++) {
			((uint8_t *)&in4->sin_addr)[i] = fz_byte(f);
		}
		return ss;
	case 2:
		ss->ss_family = AF_INET6;
		for (int i = 0; i < 16; i++) {
			in6->sin6_addr.s6_addr[i] = fz_byte(f);
		}
		return ss;
	default:
		ss->ss_family = AF_INET6;
		in6->sin6_addr.s6_addr[10] = 0xff;
		in6->sin6_addr.s6_addr[11] = 0xff;
		for (int i = 12; i < 16; i++) {
			in6->sin6_addr.s6_addr[i] = fz_byte(f);
		}
		return ss;
	}
}

/*! \brief True for an address the fixed members have as a cluster address (10/8, fd00::/8). */
static bool is_cluster_addr(const knot_rdata_t *rd)
{
	return (rd->len == 4 && rd->data[0] == 10) || (rd->len == 16 && rd->data[0] == 0xfd);
}

static void ask(fz_t *f, const k8s_fedzone_t *z, const k8s_table_t *const *tables, bool model)
{
	// The name: up to four labels (one too many) below the suffix, or a name above it.
	uint8_t qname[KNOT_DNAME_MAXLEN];
	unsigned count = fz_pick(f, 5);
	size_t len = FZ_LABELS(f, count, tokens, qname, 150);
	const knot_dname_t *suffix = z->suffix;
	uint8_t above = fz_byte(f);
	if (count == 0 && above >= 200) {
		suffix += 1 + suffix[0];  // svc.<zone>: above the suffix.
	}
	memcpy(qname + len, suffix, knot_dname_size(suffix));
	knot_dname_to_lower(qname);

	uint16_t qtype = FZ_PICK(f, qtypes);
	static const uint16_t sizes[] = { 512, 1232, 4096, KNOT_WIRE_MAX_PKTSIZE };
	uint16_t max_size = FZ_PICK(f, sizes);

	// The source-cluster option: none, a member's name in any case, or raw bytes.
	uint8_t opt[80];
	size_t opt_len = 0;
	const uint8_t *source = NULL;
	uint8_t how = fz_byte(f);
	if (how % 3 == 1) {
		const char *name = member_names[fz_pick(f, MEMBERS)];
		opt_len = strlen(name);
		for (size_t i = 0; i < opt_len; i++) {
			opt[i] = (how & 0x80) ? (uint8_t)(name[i] - 'a' + 'A') : (uint8_t)name[i];
		}
		source = opt;
	} else if (how % 3 == 2) {
		opt_len = fz_pick(f, sizeof(opt));
		for (size_t i = 0; i < opt_len; i++) {
			opt[i] = fz_byte(f);
		}
		source = opt;
	}
	struct sockaddr_storage ss;
	const struct sockaddr_storage *remote = make_remote(f, &ss);

	knot_pkt_clear(query);
	CHECK(knot_pkt_put_question(query, qname, KNOT_CLASS_IN, qtype) == KNOT_EOK);
	knot_pkt_clear(resp);
	CHECK(knot_pkt_init_response(resp, query) == KNOT_EOK);
	resp->max_size = max_size;
	knot_mm_t mm = fz_arena_mm(&arena);
	urcu_memb_read_lock();
	k8s_answer_t res = k8s_fedserve_answer(z, tables, qname, qtype, source, opt_len, remote,
	                                       resp, &mm);
	urcu_memb_read_unlock();
	CHECK(res <= K8S_ANSWER_SERVFAIL);
	CHECK(resp->size <= max_size);

	// Who may read cluster addresses: the client the option's member lists, internally.
	size_t src = (source != NULL) ? k8s_fedserve_member(z, source, opt_len) : SIZE_MAX;
	bool trusted = !z->external && src != SIZE_MAX &&
	               k8s_fedserve_from_member(&z->members[src], remote);

	knot_pkt_t *parsed = fz_parse_back(resp);
	const knot_pktsection_t *an = knot_pkt_section(parsed, KNOT_ANSWER);
	size_t per_type[2] = { 0 };
	const knot_rdata_t *seen[2][K8S_FED_LOCAL_MAX + K8S_FED_MAX_MEMBERS * K8S_INGRESS_MAX];
	for (uint16_t i = 0; i < an->count; i++) {
		const knot_rrset_t *rr = knot_pkt_rr(an, i);
		CHECK(rr->type == KNOT_RRTYPE_A || rr->type == KNOT_RRTYPE_AAAA);
		size_t t = rr->type == KNOT_RRTYPE_AAAA;
		const knot_rdata_t *rd = rr->rrs.rdata;
		for (uint16_t j = 0; j < rr->rrs.count; j++, rd = knot_rdataset_next((knot_rdata_t *)rd)) {
			CHECK(per_type[t] < sizeof(seen[t]) / sizeof(seen[t][0]));
			for (size_t k = 0; k < per_type[t]; k++) {
				CHECK(knot_rdata_cmp(seen[t][k], rd) != 0);
			}
			seen[t][per_type[t]++] = rd;
			if (model && is_cluster_addr(rd)) {
				CHECK(trusted);
			}
		}
	}
	knot_pkt_free(parsed);
	fz_arena_free(&arena);
}

#define QUERIES_MAX 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_t f = { .p = data, .n = size };
	uint8_t opts = fz_byte(&f);
	k8s_fedmember_t members[MEMBERS];
	k8s_fedzone_t z = {
		.members = members,
		.member_count = 1 + (opts & 3),
		.suffix = suffixes[(opts >> 2) & 1],
		.external = (opts >> 2) & 1,
		.ttl = 5,
	};
	for (unsigned m = 0; m < MEMBERS; m++) {
		make_member(&f, m, &members[m]);
	}
	// Which members are synchronized.
	uint8_t synced = fz_byte(&f);
	const k8s_table_t *tables[MEMBERS];
	for (unsigned m = 0; m < MEMBERS; m++) {
		tables[m] = (synced & (1u << m)) ? &fixed[m] : NULL;
	}
	// Some inputs rebuild qux's table with input events: no model of what it holds then.
	unsigned events = (opts >= 128) ? 1 + (opts >> 4) % 8 : 0;
	k8s_table_t own;
	k8s_store_t *store = NULL;
	if (events > 0) {
		build(MEMBERS - 1, &own, &store, &f, events);
		tables[MEMBERS - 1] = &own;
	}
	for (unsigned q = 0; q < QUERIES_MAX && f.n > 0; q++) {
		ask(&f, &z, tables, events == 0);
	}
	if (store != NULL) {
		destroy(&own, store);
	}
	return 0;
}
