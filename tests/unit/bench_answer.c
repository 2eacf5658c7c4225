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
 * Cost of the answer path per query kind: k8s_answer() and its ADDITIONAL stage
 * against a small hand-built table, as knotd's hooks call them, each kind
 * queried N times (1000 unless given). Under callgrind only the answer is
 * collected and each kind is dumped apart, so a dump's total divided by N is
 * the instructions per query:
 *
 *   make tests/unit/bench_answer
 *   valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=cg.%p \
 *       tests/unit/bench_answer
 *   grep -H '^totals:' cg.*    (one dump per kind, in the order printed)
 *
 * Without valgrind it prints nanoseconds per query.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>
#include <valgrind/callgrind.h>

#include "answer/answer.h"
#include "answer/fedname.h"
#include "table/records.h"
#include "store/topology.h"
#include "fixtures.h"

/* Per-query memory: a bump arena emptied after each query, as knotd's mempool. */
static uint8_t arena[1 << 20];
static size_t arena_used;

static void *arena_alloc(void *ctx, size_t len)
{
	(void)ctx;
	len = (len + 15) & ~(size_t)15;
	if (arena_used + len > sizeof(arena)) {
		return NULL;
	}
	void *p = arena + arena_used;
	arena_used += len;
	return p;
}

static knot_mm_t mm = { .alloc = arena_alloc };

static k8s_table_t table;
static const k8s_records_conf_t rconf = { .endpoint_pod_names = false };

static void die(const char *what)
{
	fprintf(stderr, "bench_answer: %s\n", what);
	exit(1);
}

static void put_service(const k8s_service_t *svc, const k8s_slice_t *slices, size_t count)
{
	const k8s_slice_t *ptrs[8];
	for (size_t i = 0; i < count; i++) {
		ptrs[i] = &slices[i];
	}
	k8s_block_t *block = k8s_records_service(svc, ptrs, count, &rconf);
	if (block == NULL || k8s_table_put_block(&table, block) != KNOT_EOK) {
		die("cannot build the table");
	}
}

static void fill_table(void)
{
	for (const char *const *ns = (const char *[]){ "default", "shop", NULL }; *ns != NULL; ns++) {
		if (k8s_table_set_ns(&table, *ns, true) != KNOT_EOK) {
			die("cannot add a namespace");
		}
	}

	static const k8s_port_t https[] = { { .name = "https", .port = 443, .proto = K8S_PROTO_TCP } };
	k8s_service_t kubernetes = fx_service("default", "kubernetes", K8S_SVC_CLUSTERIP,
	                                      "10.3.0.1", NULL);
	kubernetes.ports = https;
	kubernetes.port_count = 1;
	static k8s_endpoint_t api_eps[1];
	api_eps[0] = fx_ep("172.18.0.2", true, NULL, NULL);
	k8s_slice_t api_slice = fx_slice("default", "kubernetes", "kubernetes", AF_INET, api_eps, 1,
	                                 NULL, 0);
	put_service(&kubernetes, &api_slice, 1);

	static const k8s_port_t web_ports[] = { { .name = "http", .port = 80, .proto = K8S_PROTO_TCP } };
	k8s_service_t web = fx_service("shop", "web", K8S_SVC_CLUSTERIP, "10.96.1.1", "fd00::1");
	web.ports = web_ports;
	web.port_count = 1;
	put_service(&web, NULL, 0);

	// A headless service of 8 pets, dual stack: SRV targets and their addresses.
	static k8s_endpoint_t v4[8], v6[8];
	static char names[8][16], ip4[8][16], ip6[8][32];
	for (int i = 0; i < 8; i++) {
		snprintf(names[i], sizeof(names[i]), "pet-%d", i);
		snprintf(ip4[i], sizeof(ip4[i]), "10.244.0.%d", 10 + i);
		snprintf(ip6[i], sizeof(ip6[i]), "fd00:244::%d", 10 + i);
		v4[i] = fx_ep(ip4[i], true, names[i], NULL);
		v6[i] = fx_ep(ip6[i], true, names[i], NULL);
	}
	static const k8s_port_t hl_ports[] = { { .name = "https", .port = 443, .proto = K8S_PROTO_TCP } };
	k8s_slice_t hl_slices[2] = {
		fx_slice("default", "pets-v4", "pets", AF_INET, v4, 8, hl_ports, 1),
		fx_slice("default", "pets-v6", "pets", AF_INET6, v6, 8, hl_ports, 1),
	};
	k8s_service_t pets = fx_service("default", "pets", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&pets, hl_slices, 2);

	// As many pets mid-rollout: half of them serve https on another number (port sets).
	static k8s_endpoint_t roll_v4[8], roll_v6[8];
	static char roll_ip4[8][16], roll_ip6[8][32];
	for (int i = 0; i < 8; i++) {
		snprintf(roll_ip4[i], sizeof(roll_ip4[i]), "10.245.0.%d", 10 + i);
		snprintf(roll_ip6[i], sizeof(roll_ip6[i]), "fd00:245::%d", 10 + i);
		roll_v4[i] = fx_ep(roll_ip4[i], true, names[i], NULL);
		roll_v6[i] = fx_ep(roll_ip6[i], true, names[i], NULL);
	}
	static const k8s_port_t next_ports[] = { { .name = "https", .port = 8443, .proto = K8S_PROTO_TCP } };
	k8s_slice_t roll_slices[4] = {
		fx_slice("default", "roll-v4", "roll", AF_INET, roll_v4, 4, hl_ports, 1),
		fx_slice("default", "roll-v6", "roll", AF_INET6, roll_v6, 4, hl_ports, 1),
		fx_slice("default", "roll-v4-next", "roll", AF_INET, roll_v4 + 4, 4, next_ports, 1),
		fx_slice("default", "roll-v6-next", "roll", AF_INET6, roll_v6 + 4, 4, next_ports, 1),
	};
	k8s_service_t roll = fx_service("default", "roll", K8S_SVC_HEADLESS, NULL, NULL);
	put_service(&roll, roll_slices, 4);

	k8s_service_t alias = fx_service("shop", "alias", K8S_SVC_EXTERNALNAME, NULL, NULL);
	alias.external_name = "web.shop.svc.cluster.local";
	put_service(&alias, NULL, 0);

	static k8s_pod_t pod = { .meta = { .kind = K8S_POD, .ns = "default", .name = "p" },
	                         .live = true };
	pod.ips[0] = fx_ip("10.244.1.5");
	pod.ip_count = 1;
	if (k8s_table_set_pod(&table, NULL, &pod) != KNOT_EOK) {
		die("cannot add a pod");
	}
	k8s_table_set_ready(&table, K8S_READY_CLUSTER | K8S_READY_CLUSTERSET);
}

typedef struct {
	const char *kind;
	const k8s_answer_conf_t *conf;
	const char *name;
	uint16_t type;
	const char *client;        /*!< The client's IPv4 address, or NULL. */
	k8s_answer_t expect;       /*!< K8S_ANSWER_PASS (0) means a hit. */
} query_t;

/*! \brief Answers one kind \a n times; only the answer and its ADDITIONAL stage are collected. */
static double run(const query_t *q, long n)
{
	knot_dname_t *qname = knot_dname_from_str_alloc(q->name);
	knot_pkt_t *query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	knot_pkt_t *resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	if (qname == NULL || query == NULL || resp == NULL ||
	    knot_pkt_put_question(query, qname, KNOT_CLASS_IN, q->type) != KNOT_EOK) {
		die("cannot build the query");
	}
	struct sockaddr_storage remote = { .ss_family = AF_INET };
	if (q->client != NULL &&
	    inet_pton(AF_INET, q->client, &((struct sockaddr_in *)&remote)->sin_addr) != 1) {
		die("bad client address");
	}
	k8s_answer_t first = K8S_ANSWER_PASS;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		if (knot_pkt_init_response(resp, query) != KNOT_EOK) {
			die("cannot build the response");
		}
		arena_used = 0;
		CALLGRIND_TOGGLE_COLLECT;
		k8s_answer_forget();
		k8s_autopath_outcome_t walked;
		k8s_answer_t res = k8s_answer(q->conf, &table, qname, q->type, query,
		                              q->client != NULL ? &remote : NULL, resp, &mm, &walked);
		if (res == K8S_ANSWER_HIT) {
			knot_pkt_begin(resp, KNOT_ADDITIONAL);
			k8s_answer_additional(q->conf, resp, resp, &mm);
		}
		CALLGRIND_TOGGLE_COLLECT;
		if (i == 0) {
			first = res;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CALLGRIND_DUMP_STATS_AT(q->kind);
	k8s_answer_t expect = (q->expect != K8S_ANSWER_PASS) ? q->expect : K8S_ANSWER_HIT;
	if (first != expect) {
		fprintf(stderr, "bench_answer: %s answered %d, not %d\n", q->kind, first, expect);
		exit(1);
	}
	printf("%-18s %3u records  ", q->kind, knot_wire_get_ancount(resp->wire) +
	       knot_wire_get_arcount(resp->wire));
	knot_pkt_free(resp);
	knot_pkt_free(query);
	free(qname);
	return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n;
}

int main(int argc, char **argv)
{
	long n = (argc > 1) ? atol(argv[1]) : 1000;
	if (n <= 0) {
		die("usage: bench_answer [queries per kind]");
	}
	urcu_memb_register_thread();
	if (k8s_table_init(&table) != KNOT_EOK) {
		die("cannot create the table");
	}
	fill_table();

	knot_dname_t *cluster = knot_dname_from_str_alloc("cluster.local.");
	knot_dname_t *clusterset = knot_dname_from_str_alloc("clusterset.local.");
	knot_dname_t *rev4 = knot_dname_from_str_alloc("in-addr.arpa.");
	knot_dname_t *rev6 = knot_dname_from_str_alloc("ip6.arpa.");
	knot_dname_t *ap = knot_dname_from_str_alloc("ap.k8s.io.");
	k8s_answer_conf_t base = {
		.role = K8S_ROLE_CLUSTER,
		.zone = cluster,
		.domains = { cluster, clusterset },
		.ttl = 5,
		.pods = K8S_PODS_VERIFIED,
	};
	if (k8s_answer_txt(&base.version, "1.1.0") != KNOT_EOK) {
		die("cannot build dns-version");
	}
	k8s_answer_conf_t r4 = base, r6 = base, autopath = base, fed = base, client = base;
	client.autopath = true;
	r4.role = r6.role = K8S_ROLE_REVERSE;
	r4.zone = rev4;
	r6.zone = rev6;
	autopath.role = K8S_ROLE_AUTOPATH;
	autopath.zone = ap;
	static k8s_federation_t feds[1];
	char err[128];
	if (k8s_federation_parse("myfederation=example.com", &feds[0], err, sizeof(err)) != KNOT_EOK) {
		die("cannot parse the federation");
	}
	fed.federations = feds;
	fed.federation_count = 1;
	fed.topology = k8s_topology_new("eu-west-1a", "eu-west-1");

	const query_t queries[] = {
		{ "service-a", &base, "kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A, NULL, 0 },
		{ "endpoint-a", &base, "pet-3.pets.default.svc.cluster.local.", KNOT_RRTYPE_A, NULL, 0 },
		{ "pod-a", &base, "10-244-1-5.default.pod.cluster.local.", KNOT_RRTYPE_A, NULL, 0 },
		{ "ptr-v4", &r4, "1.0.3.10.in-addr.arpa.", KNOT_RRTYPE_PTR, NULL, 0 },
		{ "ptr-v6", &r6, "3.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.4.4.2.0.0.0.d.f.ip6.arpa.",
		  KNOT_RRTYPE_PTR, NULL, 0 },
		{ "srv-clusterip", &base, "_https._tcp.kubernetes.default.svc.cluster.local.",
		  KNOT_RRTYPE_SRV, NULL, 0 },
		{ "srv-headless", &base, "_https._tcp.pets.default.svc.cluster.local.",
		  KNOT_RRTYPE_SRV, NULL, 0 },
		{ "srv-rollout", &base, "_https._tcp.roll.default.svc.cluster.local.",
		  KNOT_RRTYPE_SRV, NULL, 0 },
		{ "externalname", &base, "alias.shop.svc.cluster.local.", KNOT_RRTYPE_A, NULL, 0 },
		{ "autopath", &autopath, "kubernetes.default.search.shop.cluster.local.ap.k8s.io.",
		  KNOT_RRTYPE_A, NULL, 0 },
		{ "federation-local", &fed, "kubernetes.default.myfederation.svc.cluster.local.",
		  KNOT_RRTYPE_A, NULL, 0 },
		{ "federation-remote", &fed, "nope.default.myfederation.svc.cluster.local.",
		  KNOT_RRTYPE_A, NULL, 0 },
		// A name that does not exist: without autopath, and with it from no pod's address.
		{ "nxdomain", &base, "nope.shop.svc.cluster.local.", KNOT_RRTYPE_A, NULL,
		  K8S_ANSWER_NXDOMAIN },
		{ "nxdomain-autopath", &client, "nope.shop.svc.cluster.local.", KNOT_RRTYPE_A,
		  "192.0.2.1", K8S_ANSWER_NXDOMAIN },
		// Client-address autopath: the direct name, and the same name through the walk.
		{ "autopath-direct", &client, "kubernetes.default.svc.cluster.local.", KNOT_RRTYPE_A,
		  "10.244.1.5", 0 },
		{ "autopath-client", &client, "kubernetes.default.default.svc.cluster.local.",
		  KNOT_RRTYPE_A, "10.244.1.5", 0 },
	};
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		double ns = run(&queries[i], n);
		printf("%8.0f ns/query\n", ns);
	}

	free((void *)fed.topology);
	free(base.version.rdata);
	free(cluster);
	free(clusterset);
	free(rev4);
	free(rev6);
	free(ap);
	k8s_table_commit(&table);
	urcu_memb_barrier();
	k8s_table_deinit(&table);
	urcu_memb_unregister_thread();
	return 0;
}
