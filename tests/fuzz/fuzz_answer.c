/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * The answer path, as knotd's ANSWER and ADDITIONAL stages call it, over a
 * table that the real pipeline (decoder, store, records) built from a fixed
 * small cluster and objects the input adds. Queries in every zone role, of
 * any type, size and search option: each response must stay within its size
 * and parse back with libknot, as a client would read it.
 *
 * Input: a byte of options, a count of events and the events (gen.h), then
 * queries: role, type, size, search option and the labels of the name. The
 * fixed cluster alone (no events) is built once and shared by all inputs.
 */

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

#include "answer/answer.h"
#include "check.h"
#include "fz_packet.h"
#include "answer/fedname.h"
#include "gen.h"
#include "store/store.h"

/*! \brief The fixed cluster: (source, watch event) pairs. */
static const struct {
	unsigned source;
	const char *event;
} cluster[] = {
#define EV(src, obj) { src, "{\"type\":\"ADDED\",\"object\":" obj "}" }
	EV(K8S_SRC_NAMESPACES, "{\"metadata\":{\"name\":\"default\"}}"),
	EV(K8S_SRC_NAMESPACES, "{\"metadata\":{\"name\":\"shop\"}}"),
	EV(K8S_SRC_NAMESPACES, "{\"metadata\":{\"name\":\"kube-system\"}}"),
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"kubernetes\",\"namespace\":\"default\"},"
	   "\"spec\":{\"clusterIPs\":[\"10.96.0.1\"],\"ports\":[{\"name\":\"https\",\"port\":443}]}}"),
	EV(K8S_SRC_SLICES, "{\"metadata\":{\"name\":\"kubernetes\",\"namespace\":\"default\","
	   "\"labels\":{\"kubernetes.io/service-name\":\"kubernetes\"}},\"addressType\":\"IPv4\","
	   "\"endpoints\":[{\"addresses\":[\"172.18.0.2\"]}],\"ports\":[{\"name\":\"https\",\"port\":6443}]}"),
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"clusterIPs\":[\"10.96.1.1\",\"fd00::1\"],\"ports\":[{\"name\":\"http\",\"port\":80},"
	   "{\"port\":8080},{\"name\":\"dns\",\"port\":53,\"protocol\":\"UDP\"}]}}"),
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"clusterIP\":\"None\"}}"),
	EV(K8S_SRC_SLICES, "{\"metadata\":{\"name\":\"db-v4\",\"namespace\":\"shop\","
	   "\"labels\":{\"kubernetes.io/service-name\":\"db\"}},\"addressType\":\"IPv4\","
	   "\"endpoints\":[{\"addresses\":[\"10.244.1.7\"],\"hostname\":\"db-0\",\"zone\":\"zone-a\"},"
	   "{\"addresses\":[\"10.244.1.8\"],\"hostname\":\"db-1\",\"zone\":\"corp.example\"},"
	   "{\"addresses\":[\"10.244.1.9\"],\"zone\":\"zone-a\"},"
	   "{\"addresses\":[\"10.244.1.10\"],\"conditions\":{\"ready\":false},\"hostname\":\"db-2\"}],"
	   "\"ports\":[{\"name\":\"pg\",\"port\":5432}]}"),
	// A rollout: db-0 in a second slice with another number, db-3 there only.
	EV(K8S_SRC_SLICES, "{\"metadata\":{\"name\":\"db-v4-next\",\"namespace\":\"shop\","
	   "\"labels\":{\"kubernetes.io/service-name\":\"db\"}},\"addressType\":\"IPv4\","
	   "\"endpoints\":[{\"addresses\":[\"10.244.1.7\"],\"hostname\":\"db-0\"},"
	   "{\"addresses\":[\"10.244.1.11\"],\"hostname\":\"db-3\"}],"
	   "\"ports\":[{\"name\":\"pg\",\"port\":5433},{\"name\":\"metrics\",\"port\":9100}]}"),
	EV(K8S_SRC_SLICES, "{\"metadata\":{\"name\":\"db-v6\",\"namespace\":\"shop\","
	   "\"labels\":{\"kubernetes.io/service-name\":\"db\"}},\"addressType\":\"IPv6\","
	   "\"endpoints\":[{\"addresses\":[\"fd00::7\"],\"hostname\":\"db-0\"}],"
	   "\"ports\":[{\"name\":\"pg\",\"port\":5432}]}"),
	// External addresses (k8s_external): the spec's and the load balancer's.
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"lb\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"type\":\"LoadBalancer\",\"clusterIPs\":[\"10.96.2.2\"],"
	   "\"externalIPs\":[\"192.0.2.10\"],\"ports\":[{\"name\":\"http\",\"port\":80}]},"
	   "\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"198.51.100.7\"},{\"ip\":\"2001:db8::7\"}]}}}"),
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"kube-dns\",\"namespace\":\"kube-system\"},"
	   "\"spec\":{\"clusterIPs\":[\"10.96.0.10\"],\"externalIPs\":[\"203.0.113.53\"]}}"),
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"ext\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"www.example.com\"}}"),
	EV(K8S_SRC_SERVICES, "{\"metadata\":{\"name\":\"alias\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"web.shop.svc.cluster.local\"}}"),
	EV(K8S_SRC_PODS, "{\"metadata\":{\"name\":\"db-0\",\"namespace\":\"shop\"},"
	   "\"status\":{\"phase\":\"Running\",\"podIPs\":[{\"ip\":\"10.244.1.7\"},{\"ip\":\"fd00::7\"}]}}"),
	EV(K8S_SRC_NODES, "{\"metadata\":{\"name\":\"node-1\",\"labels\":{"
	   "\"topology.kubernetes.io/zone\":\"eu-west1-b\",\"topology.kubernetes.io/region\":\"eu-west1\"}}}"),
	EV(K8S_SRC_CLUSTERPROPS, "{\"metadata\":{\"name\":\"cluster.clusterset.k8s.io\"},"
	   "\"spec\":{\"value\":\"cluster-a\"}}"),
	EV(K8S_SRC_IMPORTS, "{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"type\":\"Headless\",\"ports\":[{\"name\":\"pg\",\"port\":5432}]},"
	   "\"status\":{\"clusters\":[{\"cluster\":\"cluster-b\"},{\"cluster\":\"east.prod\"}]}}"),
	EV(K8S_SRC_MCS_SLICES, "{\"metadata\":{\"name\":\"db-b\",\"namespace\":\"shop\","
	   "\"labels\":{\"multicluster.kubernetes.io/service-name\":\"db\","
	   "\"multicluster.kubernetes.io/source-cluster\":\"east.prod\"}},\"addressType\":\"IPv4\","
	   "\"endpoints\":[{\"addresses\":[\"10.245.0.7\"],\"hostname\":\"db-0\"}],"
	   "\"ports\":[{\"name\":\"pg\",\"port\":5432}]}"),
	EV(K8S_SRC_IMPORTS, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
	   "\"spec\":{\"type\":\"ClusterSetIP\",\"ips\":[\"10.42.0.10\"],\"ports\":[{\"name\":\"http\",\"port\":80}]},"
	   "\"status\":{\"clusters\":[{\"cluster\":\"cluster-a\"}]}}"),
#undef EV
};

/*! \brief Labels queries are made of, besides raw ones. */
static const char *const tokens[] = {
	"_http", "_https", "_pg", "_metrics", "_dns", "_tcp", "_udp", "_sctp", "web", "db", "kubernetes",
	"ext", "alias", "shop", "default", "kube-system", "svc", "pod", "cluster", "local",
	"clusterset", "search", "db-0", "db-1", "db-2", "db-3", "10-244-1-7", "10-244-1-9", "fd00--7",
	"10-96-1-1", "cluster-a", "cluster-b", "east", "prod", "myfed", "dns-version", "example",
	"com", "ap", "k8s", "io", "*", GEN_LONG63,
	"lb", "_zone", "pin", "prefer", "zone-a", "corp", "ns1", "org",
};

static const char *const ips[] = {
	"10.96.0.1", "10.96.1.1", "10.244.1.7", "10.244.1.9", "10.245.0.7", "10.42.0.10",
	"172.18.0.2", "fd00::1", "fd00::7",
};

static const uint16_t qtypes[] = {
	KNOT_RRTYPE_A, KNOT_RRTYPE_AAAA, KNOT_RRTYPE_SRV, KNOT_RRTYPE_PTR, KNOT_RRTYPE_TXT,
	KNOT_RRTYPE_CNAME, KNOT_RRTYPE_ANY, KNOT_RRTYPE_NS, KNOT_RRTYPE_SOA, KNOT_RRTYPE_MX,
};

enum { ROLE_CLUSTER, ROLE_CLUSTERSET, ROLE_REVERSE4, ROLE_REVERSE6, ROLE_AUTOPATH, ROLE_EXTERNAL,
       ROLE_COUNT };

static knot_dname_t *zones[ROLE_COUNT];
static k8s_federation_t federation;
static knot_rdataset_t version;
static knot_pkt_t *query, *resp;
/* The fixed cluster alone, without and with endpoint-pod-names: answering never changes a table. */
static k8s_table_t fixed[2];
static k8s_store_t *fixed_store[2];

static void build(k8s_table_t *table, k8s_store_t **store, bool pod_names, fz_t *f,
                  unsigned events);

static void *blocks[1024];
static fz_arena_t arena = { .blocks = blocks, .cap = 1024 };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *names[ROLE_COUNT] = {
		"cluster.local.", "clusterset.local.", "in-addr.arpa.", "ip6.arpa.", "ap.k8s.io.",
		"example.org.",
	};
	for (int i = 0; i < ROLE_COUNT; i++) {
		zones[i] = knot_dname_from_str_alloc(names[i]);
		CHECK(zones[i] != NULL);
	}
	char err[128];
	CHECK(k8s_federation_parse("myfed=example.com", &federation, err, sizeof(err)) == KNOT_EOK);
	CHECK(k8s_answer_txt(&version, "1.1.0") == KNOT_EOK);
	query = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	resp = knot_pkt_new(NULL, KNOT_WIRE_MAX_PKTSIZE, NULL);
	CHECK(query != NULL && resp != NULL);
	for (int i = 0; i < 2; i++) {
		build(&fixed[i], &fixed_store[i], i, NULL, 0);
	}
	return 0;
}

/*! \brief A query name of the role's zone, from the input. */
static size_t make_qname(fz_t *f, int role, uint8_t out[KNOT_DNAME_MAXLEN])
{
	uint8_t labels[KNOT_DNAME_MAXLEN];
	size_t len = 0;
	if (role == ROLE_REVERSE4 || role == ROLE_REVERSE6) {
		// A whole address or a prefix of it, of the cluster's addresses or of any.
		k8s_ip_t ip = { 0 };
		const char *text = FZ_PICK(f, ips);
		ip.family = (strchr(text, ':') != NULL) ? AF_INET6 : AF_INET;
		CHECK(inet_pton(ip.family, text, ip.bytes) == 1);
		if (fz_byte(f) >= 192) {
			ip.bytes[fz_pick(f, 16)] = fz_byte(f);
		}
		bool v6 = role == ROLE_REVERSE6;
		unsigned count = v6 ? 32 : 4;
		unsigned keep = fz_pick(f, count + 2);  // count + 1: one label too many.
		for (unsigned i = count + (keep > count); i-- > 0; ) {
			if (i >= keep) {
				continue;
			}
			char label[4];
			int n = v6 ? snprintf(label, sizeof(label), "%x", (ip.bytes[(i % 32) / 2] >> ((i % 2) ? 0 : 4)) & 15)
			           : snprintf(label, sizeof(label), "%u", ip.bytes[i % 4]);
			labels[len++] = n;
			memcpy(labels + len, label, n);
			len += n;
		}
	} else {
		len = FZ_LABELS(f, fz_pick(f, 8), tokens, labels, 200);
	}
	size_t zone_size = knot_dname_size(zones[role]);
	if (len + zone_size > KNOT_DNAME_MAXLEN) {
		len = 0;
	}
	memcpy(out, labels, len);
	memcpy(out + len, zones[role], zone_size);
	knot_dname_to_lower(out);
	return len + zone_size;
}

static void ask(fz_t *f, const k8s_table_t *table, const k8s_answer_conf_t *base)
{
	int role = fz_pick(f, ROLE_COUNT);
	uint16_t qtype = FZ_PICK(f, qtypes);
	static const uint16_t sizes[] = { 512, 1232, 4096, KNOT_WIRE_MAX_PKTSIZE };
	uint16_t max_size = FZ_PICK(f, sizes);
	uint8_t search = fz_byte(f);
	uint8_t qname[KNOT_DNAME_MAXLEN];
	make_qname(f, role, qname);

	k8s_answer_conf_t conf = *base;
	conf.zone = zones[role];
	conf.role = (role == ROLE_CLUSTER) ? K8S_ROLE_CLUSTER :
	            (role == ROLE_CLUSTERSET) ? K8S_ROLE_CLUSTERSET :
	            (role == ROLE_AUTOPATH) ? K8S_ROLE_AUTOPATH :
	            (role == ROLE_EXTERNAL) ? K8S_ROLE_EXTERNAL : K8S_ROLE_REVERSE;

	knot_pkt_clear(query);
	CHECK(knot_pkt_put_question(query, qname, KNOT_CLASS_IN, qtype) == KNOT_EOK);
	knot_rrset_t opt;
	bool edns = search >= 128;
	if (edns) {
		// A search list: a usual one, or raw input bytes.
		static const char usual[] = "shop.svc.cluster.local,default.svc.cluster.local,"
		                            "svc.cluster.local,cluster.local,example.com";
		const uint8_t *data = (const uint8_t *)usual;
		size_t len = sizeof(usual) - 1;
		if (search >= 192) {
			len = fz_pick(f, 128);
			len = (len < f->n) ? len : f->n;
			data = f->p;
			f->p += len;
			f->n -= len;
		}
		CHECK(knot_edns_init(&opt, 1232, 0, 0, NULL) == KNOT_EOK);
		CHECK(knot_edns_add_option(&opt, 65001, len, data, NULL) == KNOT_EOK);
		query->opt_rr = &opt;
	}

	// As knotd: the response positioned at its answer section, then the additional stage.
	knot_pkt_clear(resp);
	CHECK(knot_pkt_init_response(resp, query) == KNOT_EOK);
	resp->max_size = max_size;
	knot_mm_t mm = fz_arena_mm(&arena);
	k8s_answer_forget();
	k8s_autopath_outcome_t walked;
	k8s_answer_t res = k8s_answer(&conf, table, qname, qtype, query, NULL, resp, &mm, &walked);
	CHECK(res <= K8S_ANSWER_SERVFAIL);
	if (res == K8S_ANSWER_HIT && knot_pkt_begin(resp, KNOT_ADDITIONAL) == KNOT_EOK) {
		k8s_answer_additional(&conf, resp, resp, &mm);
	}
	CHECK(resp->size <= max_size);

	// A client must be able to read every response.
	knot_pkt_free(fz_parse_back(resp));

	fz_arena_free(&arena);
	if (edns) {
		query->opt_rr = NULL;
		knot_rrset_clear(&opt, NULL);
	}
}

#define QUERIES_MAX 16

/*! \brief Builds a table from the fixed cluster and \a events input events (store in *store). */
static void build(k8s_table_t *table, k8s_store_t **store, bool pod_names, fz_t *f,
                  unsigned events)
{
	CHECK(k8s_table_init(table) == KNOT_EOK);
	k8s_store_conf_t conf = { .endpoint_pod_names = pod_names };
	*store = k8s_store_new(table, &conf, NULL);
	CHECK(*store != NULL);
	char key[GEN_KEY_MAX];
	for (size_t i = 0; i < sizeof(cluster) / sizeof(cluster[0]); i++) {
		CHECK(gen_apply(*store, cluster[i].source, cluster[i].event,
		                strlen(cluster[i].event), key) == K8S_EV_ADDED);
	}
	for (unsigned i = 0; i < events; i++) {
		unsigned source = fz_pick(f, K8S_SRC_COUNT);
		gen_buf_t b = { .len = 0 };
		gen_event(&b, f, source);
		gen_apply(*store, source, b.text, b.len, key);
	}
	k8s_store_commit(*store, 0);
	k8s_table_set_ready(table, K8S_READY_CLUSTER | K8S_READY_CLUSTERSET);
}

static void destroy(k8s_table_t *table, k8s_store_t *store)
{
	k8s_store_free(store);
	k8s_table_commit(table);
	k8s_table_deinit(table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_t f = { .p = data, .n = size };
	uint8_t opts = fz_byte(&f);
	bool pod_names = opts & 1;
	// Half the inputs only query the fixed cluster: no table to build, many more queries.
	uint8_t how = fz_byte(&f);
	unsigned events = (how >= 128) ? how % 8 : 0;
	k8s_table_t own, *table = &fixed[pod_names];
	k8s_store_t *store = NULL;
	if (events > 0) {
		table = &own;
		build(table, &store, pod_names, &f, events);
	}

	k8s_answer_conf_t conf = {
		.domains = { zones[ROLE_CLUSTER], zones[ROLE_CLUSTERSET] },
		.ttl = 5,
		.version = version,
		.pods = (opts >> 1) % 3,
		.ignore_empty = opts & 8,
		.autopath_option = (opts & 16) ? 65001 : 0,
		.federations = &federation,
		.federation_count = (opts & 32) ? 1 : 0,
		.zonal = opts & 64,
		.ext_apex = (const uint8_t *)"\x03" "dns",
		.ext_ttl = 10,
		.ext_headless = opts & 128,
	};
	for (unsigned q = 0; q < QUERIES_MAX && f.n > 0; q++) {
		ask(&f, table, &conf);
	}

	if (store != NULL) {
		destroy(table, store);
	}
	return 0;
}
