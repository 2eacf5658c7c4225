/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * Object decoding of every kind, as a LIST item, as a watch event and as a
 * Status, then what the watcher makes of a decoded object: its digest, the
 * record block of a service or import (with fixed slices, or a slice with
 * fixed services), pod and namespace entries, the federation topology.
 *
 * Input: a byte choosing the kind and the form, a byte of record options,
 * then the JSON text.
 */

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "api/events.h"
#include "answer/fedname.h"
#include "kinds/objects.h"
#include "table/records.h"
#include "store/topology.h"

static k8s_table_t table;
static k8s_object_t *fixed[5];  /* headless service, ClusterIP service, headless import, two slices */

static k8s_object_t *decode_fixed(k8s_kind_t kind, const char *json)
{
	k8s_object_t *obj = NULL;
	char err[256];
	int ret = k8s_object_decode(kind, json, strlen(json), &obj, err, sizeof(err));
	if (ret != KNOT_EOK) {
		fprintf(stderr, "fixed object does not decode (%s): %s\n", err, json);
		abort();
	}
	return obj;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	CHECK(k8s_table_init(&table) == KNOT_EOK);
	fixed[0] = decode_fixed(K8S_SERVICE, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
		"\"spec\":{\"clusterIP\":\"None\",\"ports\":[{\"name\":\"http\",\"port\":80}]}}");
	fixed[1] = decode_fixed(K8S_SERVICE, "{\"metadata\":{\"name\":\"api\",\"namespace\":\"shop\"},"
		"\"spec\":{\"clusterIPs\":[\"10.96.0.10\",\"fd00::10\"],\"ports\":[{\"name\":\"http\",\"port\":80},"
		"{\"name\":\"dns\",\"port\":53,\"protocol\":\"UDP\"}]}}");
	fixed[2] = decode_fixed(K8S_SERVICEIMPORT, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},"
		"\"spec\":{\"type\":\"Headless\",\"ports\":[{\"name\":\"http\",\"port\":80}]},"
		"\"status\":{\"clusters\":[{\"cluster\":\"cluster-a\"},{\"cluster\":\"east.prod\"}]}}");
	fixed[3] = decode_fixed(K8S_ENDPOINTSLICE, "{\"metadata\":{\"name\":\"web-a\",\"namespace\":\"shop\","
		"\"labels\":{\"kubernetes.io/service-name\":\"web\",\"multicluster.kubernetes.io/service-name\":\"web\","
		"\"multicluster.kubernetes.io/source-cluster\":\"cluster-a\"}},\"addressType\":\"IPv4\","
		"\"endpoints\":[{\"addresses\":[\"10.244.1.7\"],\"hostname\":\"web-0\"},"
		"{\"addresses\":[\"10.244.1.8\"],\"conditions\":{\"ready\":false}},"
		"{\"addresses\":[\"10.244.1.9\"],\"targetRef\":{\"kind\":\"Pod\",\"name\":\"web-2\"}}],"
		"\"ports\":[{\"name\":\"http\",\"port\":8080}]}");
	fixed[4] = decode_fixed(K8S_ENDPOINTSLICE, "{\"metadata\":{\"name\":\"web-b\",\"namespace\":\"shop\","
		"\"labels\":{\"kubernetes.io/service-name\":\"web\",\"multicluster.kubernetes.io/service-name\":\"web\","
		"\"multicluster.kubernetes.io/source-cluster\":\"east.prod\"}},\"addressType\":\"IPv6\","
		"\"endpoints\":[{\"addresses\":[\"fd00::7\"],\"hostname\":\"web-0\"}],"
		"\"ports\":[{\"name\":\"http\",\"port\":8080}]}");
	return 0;
}

static void check_block(k8s_block_t *block)
{
	if (block != NULL) {
		check_svc(block);
		free(block);
	}
}

static void records(const k8s_object_t *obj, const k8s_records_conf_t *rc)
{
	const k8s_slice_t *fixed_slices[] = {
		(const k8s_slice_t *)fixed[3], (const k8s_slice_t *)fixed[4],
	};
	switch (obj->kind) {
	case K8S_SERVICE: {
		const k8s_service_t *svc = (const k8s_service_t *)obj;
		check_block(k8s_records_service(svc, NULL, 0, rc));
		check_block(k8s_records_service(svc, fixed_slices, 2, rc));
		break;
	}
	case K8S_ENDPOINTSLICE: {
		// The same slice twice (as during a rollout), then beside a fixed one.
		const k8s_slice_t *slice = (const k8s_slice_t *)obj;
		const k8s_slice_t *slices[] = { slice, slice, fixed_slices[0] };
		for (int i = 0; i < 2; i++) {
			check_block(k8s_records_service((const k8s_service_t *)fixed[i], slices, 3, rc));
		}
		check_block(k8s_records_import((const k8s_serviceimport_t *)fixed[2], slices, 3, rc));
		k8s_slice_t local = *slice;
		local.source_cluster = "cluster-a";
		const k8s_slice_t *locals[] = { &local, fixed_slices[1] };
		check_block(k8s_records_import((const k8s_serviceimport_t *)fixed[2], locals, 2, rc));
		break;
	}
	case K8S_SERVICEIMPORT:
		check_block(k8s_records_import((const k8s_serviceimport_t *)obj, fixed_slices, 2, rc));
		break;
	case K8S_POD: {
		const k8s_pod_t *pod = (const k8s_pod_t *)obj;
		CHECK(pod->ip_count <= 2);
		CHECK(k8s_table_set_pod(&table, NULL, pod) == KNOT_EOK);
		CHECK(k8s_table_stats(&table).pod_count <= pod->ip_count);
		CHECK(k8s_table_set_pod(&table, pod, NULL) == KNOT_EOK);
		CHECK(k8s_table_stats(&table).pod_count == 0);
		break;
	}
	case K8S_NAMESPACE: {
		CHECK(k8s_table_set_ns(&table, obj->name, true) == KNOT_EOK);
		uint8_t label[64] = { strlen(obj->name) };
		CHECK(label[0] >= 1 && label[0] <= 63);
		memcpy(label + 1, obj->name, label[0]);
		CHECK(k8s_table_ns(&table, label));
		CHECK(k8s_table_set_ns(&table, obj->name, false) == KNOT_EOK);
		CHECK(k8s_table_stats(&table).ns_count == 0);
		break;
	}
	case K8S_NODE: {
		const k8s_node_t *node = (const k8s_node_t *)obj;
		if (node->zone != NULL && node->region != NULL) {
			k8s_topology_t *topology = k8s_topology_new(node->zone, node->region);
			CHECK(topology != NULL);
			size_t pos = 0;
			while (pos < topology->size) {
				CHECK(topology->labels[pos] >= 1 && topology->labels[pos] <= 63);
				pos += 1 + topology->labels[pos];
			}
			CHECK(pos == topology->size);
			free(topology);
		}
		break;
	}
	case K8S_CONFIGMAP: {
		// Within the caps, every key valid and found, every value whole (no NUL in it).
		const k8s_configmap_t *cm = (const k8s_configmap_t *)obj;
		CHECK(cm->count <= K8S_CONFIGMAP_KEYS_MAX && (cm->count == 0) == (cm->data == NULL));
		for (uint16_t i = 0; i < cm->count; i++) {
			const k8s_cm_entry_t *e = &cm->data[i];
			CHECK(k8s_configmap_key_valid(e->key, strlen(e->key)));
			CHECK(e->len <= K8S_CONFIGMAP_VALUE_MAX && strlen(e->value) == e->len);
			CHECK(k8s_configmap_get(cm, e->key) != NULL);
		}
		break;
	}
	case K8S_CLUSTERPROPERTY:
		// No value (or an empty one) is NULL: the property says nothing.
		CHECK(((const k8s_clusterproperty_t *)obj)->value == NULL ||
		      ((const k8s_clusterproperty_t *)obj)->value[0] != '\0');
		break;
	default:
		CHECK(false);
	}
	k8s_table_commit(&table);
}

static void check_object(const k8s_object_t *obj, k8s_kind_t kind, const k8s_records_conf_t *rc)
{
	CHECK(obj->kind == kind);
	CHECK(obj->ns != NULL && obj->name != NULL && obj->name[0] != '\0');
	CHECK(strlen(obj->ns) <= 63 && strlen(obj->name) <= 253);
	CHECK(!obj->digested);  // computed when the store first compares it
	(void)k8s_object_digest(obj);  // reads every field that makes records
	records(obj, rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2) {
		return 0;
	}
	k8s_kind_t kind = data[0] % K8S_KIND_COUNT;
	unsigned form = (data[0] / K8S_KIND_COUNT) % 3;
	k8s_records_conf_t rc = { .endpoint_pod_names = data[1] & 1 };
	const char *text = (const char *)data + 2;
	size_t len = size - 2;
	char err[128];

	if (form == 0) {
		k8s_object_t *obj = NULL;
		memset(err, 'x', sizeof(err));
		if (k8s_object_decode(kind, text, len, &obj, err, sizeof(err)) == KNOT_EOK) {
			check_object(obj, kind, &rc);
			k8s_object_free(obj);
		} else {
			CHECK(obj == NULL && memchr(err, '\0', sizeof(err)) != NULL);
		}
	} else if (form == 1) {
		k8s_event_t ev;
		memset(err, 'x', sizeof(err));
		int ret;
		k8s_jtape_t tape;
		k8s_jtape_init(&tape);
		ret = k8s_event_decode(&tape, kind, text, len, &ev, err, sizeof(err));
		k8s_jtape_deinit(&tape);
		if (ret == KNOT_EOK) {
			CHECK(ev.type <= K8S_EV_ERROR);
			CHECK(memchr(ev.rv, '\0', sizeof(ev.rv)) != NULL);
			CHECK(ev.rv[0] == '\0' || k8s_rv_valid(ev.rv, strlen(ev.rv)));
			if (ev.obj != NULL && ev.type != K8S_EV_BOOKMARK) {
				check_object(ev.obj, kind, &rc);
			}
			k8s_object_free(ev.obj);
		} else {
			CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		}
	} else {
		k8s_status_t st;
		CHECK(k8s_status_decode(text, len, &st) == KNOT_EOK);
		CHECK(memchr(st.reason, '\0', sizeof(st.reason)) != NULL);
		CHECK(memchr(st.message, '\0', sizeof(st.message)) != NULL);
	}
	return 0;
}
