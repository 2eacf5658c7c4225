/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * The watcher's whole writer side: watch events and LISTs of every source,
 * decoded from JSON, into the store, which builds record blocks and publishes
 * them into the table at each commit. After every commit the table must hold
 * together (check.h), the store must hold exactly the objects a simple model
 * says it holds, and no block may outlive its Service or ServiceImport.
 *
 * Input: a byte of store options, then operations, each a byte and its
 * arguments: an event of a source, a whole LIST of a source, or a commit.
 */

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "gen.h"
#include "store/store.h"

/*! \brief What the store should hold: one entry per (source, namespace, name). */
typedef struct {
	unsigned source;
	unsigned gen;
	char ns[64];
	char name[256];
} model_t;

#define MODEL_MAX 512
#define OPS_MAX 64

static model_t model[MODEL_MAX];
static size_t model_count;
static unsigned model_gen[K8S_SRC_COUNT];

static const char *const filter[] = { "default", "shop" };

static model_t *model_find(unsigned source, const char *ns, const char *name)
{
	for (size_t i = 0; i < model_count; i++) {
		if (model[i].source == source && strcmp(model[i].ns, ns) == 0 &&
		    strcmp(model[i].name, name) == 0) {
			return &model[i];
		}
	}
	return NULL;
}

static void model_del(model_t *m)
{
	*m = model[--model_count];
}

static size_t model_source_count(unsigned source)
{
	size_t n = 0;
	for (size_t i = 0; i < model_count; i++) {
		n += model[i].source == source;
	}
	return n;
}

/*! \brief Follows a decoded event as the store should (same namespace filter). */
static void model_apply(unsigned source, int type, const char *key, bool filtered)
{
	if (type != K8S_EV_ADDED && type != K8S_EV_MODIFIED && type != K8S_EV_DELETED) {
		return;
	}
	const char *slash = strchr(key, '/');
	CHECK(slash != NULL && (size_t)(slash - key) < sizeof(model[0].ns));
	char ns[64];
	memcpy(ns, key, slash - key);
	ns[slash - key] = '\0';
	const char *name = slash + 1;
	CHECK(strlen(name) < sizeof(model[0].name));

	// The ConfigMaps read aside are no namespace's DNS data: the namespaces option keeps them.
	bool namespaced = source != K8S_SRC_CLUSTERPROPS && source != K8S_SRC_NODES &&
	                  !k8s_resources[source].aside;
	const char *scope = (source == K8S_SRC_NAMESPACES) ? name : ns;
	bool exposed = !filtered || strcmp(scope, filter[0]) == 0 || strcmp(scope, filter[1]) == 0;
	model_t *m = model_find(source, ns, name);
	if (type == K8S_EV_DELETED) {
		if (m != NULL) {
			model_del(m);
		}
		return;
	}
	if (namespaced && !exposed) {
		return;
	}
	if (m == NULL) {
		CHECK(model_count < MODEL_MAX);
		m = &model[model_count++];
		m->source = source;
		snprintf(m->ns, sizeof(m->ns), "%s", ns);
		snprintf(m->name, sizeof(m->name), "%s", name);
	}
	m->gen = model_gen[source];
}

/*! \brief A LIST of a source: the items replace what the source held. */
static void list(k8s_store_t *store, fz_t *f, unsigned source, bool filtered)
{
	k8s_store_list_begin(store, source);
	model_gen[source]++;
	unsigned count = fz_pick(f, 5);
	for (unsigned i = 0; i < count; i++) {
		gen_buf_t b = { .len = 0 };
		gen_object(&b, f, gen_source_kind[source]);
		k8s_object_t *obj = NULL;
		char err[256];
		if (k8s_object_decode(gen_source_kind[source], b.text, b.len, &obj, err,
		                      sizeof(err)) != KNOT_EOK) {
			continue;
		}
		char key[GEN_KEY_MAX];
		snprintf(key, sizeof(key), "%s/%s", obj->ns, obj->name);
		k8s_store_upsert(store, source, obj);
		model_apply(source, K8S_EV_ADDED, key, filtered);
	}
	k8s_store_list_end(store, source);
	for (size_t i = 0; i < model_count; ) {
		if (model[i].source == source && model[i].gen != model_gen[source]) {
			model_del(&model[i]);
		} else {
			i++;
		}
	}
}

/*! \brief Every published block belongs to an object the store holds. */
static void check_owners(const k8s_table_t *t)
{
	size_t pos = 0;
	const k8s_block_t *svc;
	while ((svc = k8s_rcuhash_walk(&t->svcs, &pos)) != NULL) {
		char name[64], ns[64];
		const uint8_t *l = svc->owner;
		memcpy(name, l + 1, l[0]);
		name[l[0]] = '\0';
		l += 1 + l[0];
		memcpy(ns, l + 1, l[0]);
		ns[l[0]] = '\0';
		unsigned source = (svc->zone == K8S_ZONE_CLUSTER) ? K8S_SRC_SERVICES : K8S_SRC_IMPORTS;
		CHECK(model_find(source, ns, name) != NULL);
	}
}

static void check_all(k8s_store_t *store, const k8s_table_t *t)
{
	const k8s_store_stats_t *stats = k8s_store_stats(store);
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		CHECK(stats->objects[src] == model_source_count(src));
	}
	CHECK(k8s_table_stats(t).ns_count == model_source_count(K8S_SRC_NAMESPACES));
	check_table(t);
	check_owners(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_t f = { .p = data, .n = size };
	uint8_t opts = fz_byte(&f);
	bool filtered = opts & 1;
	k8s_store_conf_t conf = {
		.endpoint_pod_names = opts & 2,
		.namespaces = filtered ? filter : NULL,
		.namespace_count = filtered ? 2 : 0,
		.cluster_id = (opts & 4) ? "cluster-a" : NULL,
		.node_name = (opts & 8) ? "node-1" : NULL,
	};

	k8s_table_t table;
	CHECK(k8s_table_init(&table) == KNOT_EOK);
	k8s_store_t *store = k8s_store_new(&table, &conf, NULL);
	CHECK(store != NULL);
	model_count = 0;
	memset(model_gen, 0, sizeof(model_gen));

	for (unsigned op = 0; op < OPS_MAX && f.n > 0; op++) {
		uint8_t code = fz_byte(&f);
		unsigned source = (code >> 3) % K8S_SRC_COUNT;
		switch (code & 7) {
		case 0:
			k8s_store_commit(store, 0);
			CHECK(!k8s_store_dirty(store));
			check_all(store, &table);
			break;
		case 1:
			list(store, &f, source, filtered);
			break;
		default: {
			gen_buf_t b = { .len = 0 };
			gen_event(&b, &f, source);
			char key[GEN_KEY_MAX];
			int type = gen_apply(store, source, b.text, b.len, key);
			model_apply(source, type, key, filtered);
			break;
		}
		}
	}
	k8s_store_commit(store, 0);
	check_all(store, &table);

	k8s_store_free(store);
	k8s_table_commit(&table);
	k8s_table_deinit(&table);
	return 0;
}
