/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * API objects from fuzzer bytes: the input picks every field from small sets
 * of names, addresses and ports, so that objects collide, share labels and
 * replace each other as in a real cluster, and the JSON still goes through
 * the real decoder. Used by fuzz_pipeline and fuzz_answer.
 */

#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libknot/errcode.h>

#include "api/events.h"
#include "kinds/objects.h"
#include "store/store.h"

/*! \brief The unread rest of the input; reading past its end gives zeros. */
typedef struct {
	const uint8_t *p;
	size_t n;
} fz_t;

static inline uint8_t fz_byte(fz_t *f)
{
	if (f->n == 0) {
		return 0;
	}
	f->n--;
	return *f->p++;
}

static inline unsigned fz_pick(fz_t *f, unsigned n)
{
	return fz_byte(f) % n;
}

#define FZ_PICK(f, arr) ((arr)[fz_pick((f), sizeof(arr) / sizeof((arr)[0]))])

/*!
 * \brief \a count DNS labels (wire format, no root) at \a out, each one of the \a n
 * \a tokens or, one in eight, 1 to 63 bytes of input, ending before they pass
 * \a max bytes (at most the size of \a out); returns their length.
 */
static inline size_t fz_labels(fz_t *f, unsigned count, const char *const *tokens, size_t n,
                               uint8_t *out, size_t max)
{
	size_t len = 0;
	for (unsigned i = 0; i < count; i++) {
		uint8_t how = fz_byte(f);
		const char *token = tokens[how % n];
		size_t size = (how < 224) ? strlen(token) : 1 + fz_pick(f, 63);
		if (len + 1 + size > max) {
			break;
		}
		out[len] = size;
		if (how < 224) {
			memcpy(out + len + 1, token, size);
		} else {
			for (size_t j = 0; j < size; j++) {
				out[len + 1 + j] = fz_byte(f);
			}
		}
		len += 1 + size;
	}
	return len;
}

#define FZ_LABELS(f, count, tokens, out, max) \
	fz_labels((f), (count), (tokens), sizeof(tokens) / sizeof((tokens)[0]), (out), (max))

/*! \brief A JSON text being written; what does not fit is cut (and then fails to decode). */
typedef struct {
	char text[16384];
	size_t len;
} gen_buf_t;

static inline void gen_add(gen_buf_t *b, const char *fmt, ...)
{
	if (b->len >= sizeof(b->text) - 1) {
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->text + b->len, sizeof(b->text) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0) {
		b->len += (size_t)n;
		if (b->len > sizeof(b->text) - 1) {
			b->len = sizeof(b->text) - 1;
		}
	}
}

#define GEN_LONG63 "l23456789012345678901234567890123456789012345678901234567890123"
#define GEN_LONG253 GEN_LONG63 "." GEN_LONG63 "." GEN_LONG63 ".s2345678901234567890123456789012345678901234567890123456789"

static const char *const gen_namespaces[] = { "default", "shop", "kube-system", GEN_LONG63 };
static const char *const gen_names[] = {
	"web", "db", "kubernetes", "10-244-1-7", "a", GEN_LONG63, GEN_LONG253, "web.v2",
};
static const char *const gen_hostnames[] = {
	NULL, "web-0", "web-1", "10-244-1-7", "my-pet", GEN_LONG63, "fd00--1", "Web-0",
};
static const char *const gen_ipv4[] = {
	"10.244.1.7", "10.244.1.8", "10.96.0.10", "10.96.0.1", "172.18.0.2", "10.0.0.1",
};
static const char *const gen_ipv6[] = { "fd00::1", "fd00::2", "2001:db8::100", "fd00:10:244:1::11" };
static const char *const gen_clusters[] = { "cluster-a", "cluster-b", "east.prod", "prod", "Bad_Id" };
static const char *const gen_port_names[] = { NULL, "http", "https", "dns", "metrics", "a" };
static const char *const gen_protos[] = { NULL, "TCP", "UDP", "SCTP", "tcp" };

/*! \brief A string field, or nothing when \a value is NULL. */
static inline void gen_field(gen_buf_t *b, const char *key, const char *value)
{
	if (value != NULL) {
		gen_add(b, ",\"%s\":\"%s\"", key, value);
	}
}

/*! \brief An address of the family: one of the shared ones, or one made of input bytes. */
static inline void gen_ip(gen_buf_t *b, fz_t *f, bool v6)
{
	uint8_t how = fz_byte(f);
	if (how < 224) {
		gen_add(b, "\"%s\"", v6 ? gen_ipv6[how % 4] : gen_ipv4[how % 6]);
	} else if (v6) {
		gen_add(b, "\"fd00::%x:%x\"", fz_byte(f), fz_byte(f));
	} else {
		gen_add(b, "\"10.%u.%u.%u\"", fz_byte(f) % 4, fz_byte(f) % 4, fz_byte(f));
	}
}

static inline void gen_ports(gen_buf_t *b, fz_t *f)
{
	static const unsigned numbers[] = { 80, 443, 53, 8080, 0, 65535 };
	unsigned count = fz_pick(f, 4);
	gen_add(b, ",\"ports\":[");
	for (unsigned i = 0; i < count; i++) {
		gen_add(b, "%s{\"port\":%u", i > 0 ? "," : "", FZ_PICK(f, numbers));
		gen_field(b, "name", FZ_PICK(f, gen_port_names));
		gen_field(b, "protocol", FZ_PICK(f, gen_protos));
		gen_add(b, "}");
	}
	gen_add(b, "]");
}

static inline void gen_meta(gen_buf_t *b, fz_t *f, bool namespaced, const char *extra)
{
	gen_add(b, "\"metadata\":{\"name\":\"%s\"", FZ_PICK(f, gen_names));
	if (namespaced) {
		gen_add(b, ",\"namespace\":\"%s\"", FZ_PICK(f, gen_namespaces));
	}
	gen_add(b, "%s}", extra);
}

static inline void gen_service(gen_buf_t *b, fz_t *f)
{
	static const char *const types[] = { "ClusterIP", "NodePort", "ExternalName", NULL };
	static const char *const external[] = {
		"www.example.com", "web.shop.svc.cluster.local", "10.0.0.1", "kubernetes.default.svc.cluster.local.",
	};
	uint8_t flags = fz_byte(f);
	gen_meta(b, f, true, (flags & 1) ?
	         ",\"annotations\":{\"service.alpha.kubernetes.io/tolerate-unready-endpoints\":\"true\"}" : "");
	gen_add(b, ",\"spec\":{\"publishNotReadyAddresses\":%s", (flags & 2) ? "true" : "false");
	gen_field(b, "type", FZ_PICK(f, types));
	if (flags & 4) {
		gen_field(b, "externalName", FZ_PICK(f, external));
	}
	if (flags & 8) {
		gen_add(b, ",\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"]");
	} else if (flags & 16) {
		gen_add(b, ",\"clusterIPs\":[");
		gen_ip(b, f, false);
		if (flags & 32) {
			gen_add(b, ",");
			gen_ip(b, f, true);
		}
		gen_add(b, "]");
	}
	gen_ports(b, f);
	gen_add(b, "}");
}

static inline void gen_slice(gen_buf_t *b, fz_t *f)
{
	static const char *const types[] = { "IPv4", "IPv6", "FQDN" };
	uint8_t flags = fz_byte(f);
	gen_buf_t labels = { .len = 0 };
	gen_add(&labels, ",\"labels\":{\"x\":\"y\"");
	if (flags & 1) {
		gen_field(&labels, "kubernetes.io/service-name", FZ_PICK(f, gen_names));
	}
	if (flags & 2) {
		gen_field(&labels, "multicluster.kubernetes.io/service-name", FZ_PICK(f, gen_names));
		gen_field(&labels, "multicluster.kubernetes.io/source-cluster", FZ_PICK(f, gen_clusters));
	}
	gen_add(&labels, "}");
	gen_meta(b, f, true, labels.text);
	const char *type = FZ_PICK(f, types);
	bool v6 = strcmp(type, "IPv6") == 0;
	gen_add(b, ",\"addressType\":\"%s\",\"endpoints\":[", type);
	unsigned count = fz_pick(f, 6);
	for (unsigned i = 0; i < count; i++) {
		uint8_t ep = fz_byte(f);
		gen_add(b, "%s{\"addresses\":[", i > 0 ? "," : "");
		for (unsigned j = 0; j <= (ep & 1u); j++) {
			if (j > 0) {
				gen_add(b, ",");
			}
			gen_ip(b, f, v6);
		}
		gen_add(b, "]");
		if (ep & 2) {
			gen_add(b, ",\"conditions\":{\"ready\":%s}", (ep & 4) ? "false" : "true");
		}
		gen_field(b, "hostname", FZ_PICK(f, gen_hostnames));
		if (ep & 8) {
			gen_add(b, ",\"targetRef\":{\"kind\":\"Pod\",\"name\":\"%s\"}", FZ_PICK(f, gen_names));
		}
		gen_add(b, "}");
	}
	gen_add(b, "]");
	gen_ports(b, f);
}

static inline void gen_pod(gen_buf_t *b, fz_t *f)
{
	static const char *const phases[] = { "Running", "Pending", "Succeeded", "Failed" };
	uint8_t flags = fz_byte(f);
	gen_meta(b, f, true, (flags & 1) ? ",\"deletionTimestamp\":\"2026-01-10T09:00:00Z\"" : "");
	gen_add(b, ",\"spec\":{\"hostNetwork\":%s},\"status\":{\"phase\":\"%s\",\"podIPs\":[",
	        (flags & 2) ? "true" : "false", FZ_PICK(f, phases));
	for (unsigned i = 0; i <= ((flags >> 2) & 1u); i++) {
		gen_add(b, "%s{\"ip\":", i > 0 ? "," : "");
		gen_ip(b, f, i > 0);
		gen_add(b, "}");
	}
	gen_add(b, "]}");
}

static inline void gen_import(gen_buf_t *b, fz_t *f)
{
	uint8_t flags = fz_byte(f);
	gen_meta(b, f, true, "");
	gen_add(b, ",\"spec\":{\"type\":\"%s\",\"ips\":[", (flags & 1) ? "Headless" : "ClusterSetIP");
	if (flags & 2) {
		gen_ip(b, f, false);
	}
	gen_add(b, "]");
	gen_ports(b, f);
	gen_add(b, "},\"status\":{\"clusters\":[");
	unsigned count = fz_pick(f, 4);
	for (unsigned i = 0; i < count; i++) {
		gen_add(b, "%s{\"cluster\":\"%s\"}", i > 0 ? "," : "", FZ_PICK(f, gen_clusters));
	}
	gen_add(b, "]}");
}

static inline void gen_node(gen_buf_t *b, fz_t *f)
{
	static const char *const zones[] = { NULL, "eu-west1-b", "zone-a", "Zone_A", GEN_LONG63 };
	gen_add(b, "\"metadata\":{\"name\":\"node-%u\",\"labels\":{\"x\":\"y\"", fz_pick(f, 4));
	gen_field(b, "topology.kubernetes.io/zone", FZ_PICK(f, zones));
	gen_field(b, "topology.kubernetes.io/region", FZ_PICK(f, zones));
	gen_field(b, "failure-domain.beta.kubernetes.io/zone", FZ_PICK(f, zones));
	gen_add(b, "}}");
}

static inline void gen_configmap(gen_buf_t *b, fz_t *f)
{
	static const char *const keys[] = { "NodeHosts", "stubDomains", "upstreamNameservers",
	                                    "Corefile", "a.b-c_d", "bad/key" };
	static const char *const values[] = { "", "10.0.0.1 node-1\\n", "{\\\"a\\\": 1}",
	                                      "[\\\"10.0.0.2\\\"]", "x\\u0000y" };
	gen_meta(b, f, true, "");
	unsigned count = fz_pick(f, 4);
	gen_add(b, ",\"data\":{");
	for (unsigned i = 0; i < count; i++) {
		gen_add(b, "%s\"%s\":\"%s\"", i > 0 ? "," : "", FZ_PICK(f, keys), FZ_PICK(f, values));
	}
	gen_add(b, "}");
}

/*! \brief Kind of the objects of each store source. */
static const k8s_kind_t gen_source_kind[K8S_SRC_COUNT] = {
	[K8S_SRC_NAMESPACES] = K8S_NAMESPACE,
	[K8S_SRC_SERVICES] = K8S_SERVICE,
	[K8S_SRC_SLICES] = K8S_ENDPOINTSLICE,
	[K8S_SRC_PODS] = K8S_POD,
	[K8S_SRC_IMPORTS] = K8S_SERVICEIMPORT,
	[K8S_SRC_MCS_SLICES] = K8S_ENDPOINTSLICE,
	[K8S_SRC_CLUSTERPROPS] = K8S_CLUSTERPROPERTY,
	[K8S_SRC_NODES] = K8S_NODE,
	[K8S_SRC_KUBEDNS_CM] = K8S_CONFIGMAP,
	[K8S_SRC_HOSTS_CM] = K8S_CONFIGMAP,
};

/*! \brief The JSON of an object of \a kind, its fields taken from the input. */
static inline void gen_object(gen_buf_t *b, fz_t *f, k8s_kind_t kind)
{
	gen_add(b, "{");
	switch (kind) {
	case K8S_SERVICE:       gen_service(b, f); break;
	case K8S_ENDPOINTSLICE: gen_slice(b, f); break;
	case K8S_POD:           gen_pod(b, f); break;
	case K8S_SERVICEIMPORT: gen_import(b, f); break;
	case K8S_NODE:          gen_node(b, f); break;
	case K8S_CONFIGMAP:     gen_configmap(b, f); break;
	case K8S_NAMESPACE:
		gen_add(b, "\"metadata\":{\"name\":\"%s\"}", FZ_PICK(f, gen_namespaces));
		break;
	case K8S_CLUSTERPROPERTY:
		gen_add(b, "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"value\":\"%s\"}",
		        fz_pick(f, 4) ? "cluster.clusterset.k8s.io" : "id.k8s.io",
		        FZ_PICK(f, gen_clusters));
		break;
	default:
		break;
	}
	gen_add(b, "}");
}

/*!
 * \brief One watch event line for a source, as the reflector reads it: a generated
 * object, or (rarely) raw input bytes as the object, so the decoder meets anything.
 */
static inline void gen_event(gen_buf_t *b, fz_t *f, unsigned source)
{
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK" };
	uint8_t how = fz_byte(f);
	gen_add(b, "{\"type\":\"%s\",\"object\":", types[how % 4]);
	if (how >= 240) {
		size_t len = fz_byte(f);
		len = (len < f->n) ? len : f->n;
		gen_add(b, "%.*s", (int)len, (const char *)f->p);
		f->p += len;
		f->n -= len;
	} else {
		gen_object(b, f, gen_source_kind[source]);
	}
	gen_add(b, "}");
}

/*! \brief Room for a store key: a namespace, a slash and a name. */
#define GEN_KEY_MAX (64 + 1 + 254)

/*!
 * \brief Applies a watch event line to the store as the reflector would.
 *
 * \param key  Out: "<namespace>/<name>" of the event's object, when it has one.
 *
 * \return The event type applied (K8S_EV_*), or -1 if it did not decode.
 */
static inline int gen_apply(k8s_store_t *store, unsigned source, const char *text, size_t len,
                            char key[GEN_KEY_MAX])
{
	k8s_event_t ev;
	char err[256];
	key[0] = '\0';
	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	int ret = k8s_event_decode(&tape, gen_source_kind[source], text, len, &ev, err, sizeof(err));
	k8s_jtape_deinit(&tape);
	if (ret != KNOT_EOK) {
		return -1;
	}
	if (ev.obj != NULL) {
		snprintf(key, GEN_KEY_MAX, "%s/%s", ev.obj->ns, ev.obj->name);
	}
	switch (ev.type) {
	case K8S_EV_ADDED:
	case K8S_EV_MODIFIED:
		k8s_store_upsert(store, source, ev.obj);
		break;
	case K8S_EV_DELETED:
		k8s_store_remove(store, source, ev.obj);
		break;
	default:
		k8s_object_free(ev.obj);
		break;
	}
	return (int)ev.type;
}
