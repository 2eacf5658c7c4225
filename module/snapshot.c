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
 * Objects are written as the JSON the API would send, reduced to the fields the
 * decoder of objects.c reads, so that reading a snapshot back is decoding, with
 * every check the API's objects get: a hostile file can give us no object that
 * the API could not. One writer per kind below; tests/unit/test_snapshot.c checks
 * that each gives back an object of the same digest.
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "snapfile.h"
#include "snapshot.h"

#define HEAD_LEN 8         // u32 sources, u32 ready.
#define ENTRY_HEAD_LEN 5   // u8 source, u32 length.

/* --- writing JSON ---------------------------------------------------------------- */

/*! A JSON writer; the first error sticks. */
typedef struct {
	k8s_buf_t *buf;
	int ret;
} jw_t;

/*! Appends bytes; inline while they fit, as most do (the encode runs on the watcher's loop). */
static inline void put(jw_t *w, const char *data, size_t len)
{
	k8s_buf_t *b = w->buf;
	if (w->ret == KNOT_EOK && len <= b->cap - b->len) {
		memcpy(b->data + b->len, data, len);
		b->len += len;
	} else if (w->ret == KNOT_EOK) {
		w->ret = k8s_buf_append(b, data, len, K8S_SNAP_MAX);
	}
}

static inline void raw(jw_t *w, const char *text)
{
	put(w, text, strlen(text));
}

/*! A JSON string: quotes, backslashes and control characters escaped. */
static void str(jw_t *w, const char *s)
{
	raw(w, "\"");
	const char *run = s;
	for (const char *p = s; w->ret == KNOT_EOK; p++) {
		unsigned char c = (unsigned char)*p;
		if (c >= 0x20 && c != '"' && c != '\\') {
			continue;
		}
		// The run of plain bytes before it, then its escape.
		put(w, run, (size_t)(p - run));
		if (c == '\0') {
			break;
		}
		char esc[8];
		snprintf(esc, sizeof(esc), "\\u%04x", c);
		raw(w, esc);
		run = p + 1;
	}
	raw(w, "\"");
}

/*! ,"key":"value" when value is set (the comma unless \a first). */
static void field_str(jw_t *w, const char *key, const char *value, bool first)
{
	if (value == NULL) {
		return;
	}
	raw(w, first ? "\"" : ",\"");
	raw(w, key);
	raw(w, "\":");
	str(w, value);
}

static void field_bool(jw_t *w, const char *key, bool value)
{
	raw(w, ",\"");
	raw(w, key);
	raw(w, value ? "\":true" : "\":false");
}

static void ip(jw_t *w, const k8s_ip_t *addr)
{
	char text[INET6_ADDRSTRLEN + 2] = "\"";
	if (addr->family == AF_INET) {
		// inet_ntop() costs more than the rest of an endpoint: IPv4 by hand.
		char *p = text + 1;
		for (int i = 0; i < 4; i++) {
			unsigned b = addr->bytes[i];
			if (b >= 100) {
				*p++ = (char)('0' + b / 100);
			}
			if (b >= 10) {
				*p++ = (char)('0' + b / 10 % 10);
			}
			*p++ = (char)('0' + b % 10);
			*p++ = (i < 3) ? '.' : '"';
		}
		*p = '\0';
	} else {
		inet_ntop(addr->family, addr->bytes, text + 1, sizeof(text) - 2);
		strcat(text, "\"");
	}
	raw(w, text);
}

static void ips(jw_t *w, const k8s_ip_t *list, unsigned count, const char *key)
{
	raw(w, "[");
	for (unsigned i = 0; i < count; i++) {
		raw(w, (i > 0) ? "," : "");
		if (key != NULL) {
			raw(w, "{\"");
			raw(w, key);
			raw(w, "\":");
		}
		ip(w, &list[i]);
		raw(w, (key != NULL) ? "}" : "");
	}
	raw(w, "]");
}

static void ports(jw_t *w, const k8s_port_t *list, unsigned count)
{
	static const char *PROTOS[K8S_PROTO_COUNT] = { "TCP", "UDP", "SCTP" };
	raw(w, ",\"ports\":[");
	for (unsigned i = 0; i < count; i++) {
		char num[32];
		snprintf(num, sizeof(num), "%s{\"port\":%u,\"protocol\":", (i > 0) ? "," : "",
		         list[i].port);
		raw(w, num);
		str(w, PROTOS[list[i].proto < K8S_PROTO_COUNT ? list[i].proto : 0]);
		field_str(w, "name", list[i].name, false);
		raw(w, "}");
	}
	raw(w, "]");
}

/*! {"metadata":{"name":..,"namespace":..[,"labels":{ (left open when \a labels). */
static void meta(jw_t *w, const k8s_object_t *obj, bool labels)
{
	raw(w, "{\"metadata\":{");
	field_str(w, "name", obj->name, true);
	if (obj->ns[0] != '\0') {
		field_str(w, "namespace", obj->ns, false);
	}
	raw(w, labels ? ",\"labels\":{" : "}");
}

/*! Labels of which some may be unset: the commas come from what was written. */
static void labels(jw_t *w, const char *const keys[], const char *const values[], size_t n)
{
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (values[i] != NULL) {
			field_str(w, keys[i], values[i], first);
			first = false;
		}
	}
	raw(w, "}}");
}

/* --- one writer per kind ---------------------------------------------------------- */

static void service_write(jw_t *w, const k8s_service_t *svc)
{
	meta(w, &svc->meta, false);
	raw(w, ",\"spec\":{");
	switch (svc->type) {
	case K8S_SVC_EXTERNALNAME:
		raw(w, "\"type\":\"ExternalName\"");
		field_str(w, "externalName", svc->external_name, false);
		break;
	case K8S_SVC_HEADLESS:
		raw(w, "\"type\":\"ClusterIP\",\"clusterIP\":\"None\"");
		break;
	default:
		raw(w, "\"type\":\"ClusterIP\",\"clusterIPs\":");
		ips(w, svc->ips, svc->ip_count, NULL);
		break;
	}
	field_bool(w, "publishNotReadyAddresses", svc->publish_not_ready);
	ports(w, svc->ports, svc->port_count);
	raw(w, "}}");
}

static void slice_write(jw_t *w, const k8s_slice_t *slice)
{
	static const char *const KEYS[] = {
		"kubernetes.io/service-name", "multicluster.kubernetes.io/service-name",
		"multicluster.kubernetes.io/source-cluster",
	};
	const char *values[] = { slice->service, slice->mcs_service, slice->source_cluster };
	meta(w, &slice->meta, true);
	labels(w, KEYS, values, 3);
	raw(w, (slice->family == AF_INET) ? ",\"addressType\":\"IPv4\"" :
	       (slice->family == AF_INET6) ? ",\"addressType\":\"IPv6\"" : ",\"addressType\":\"FQDN\"");
	// One endpoint per address: the decoder flattens them so anyway.
	raw(w, ",\"endpoints\":[");
	for (uint32_t i = 0; i < slice->endpoint_count; i++) {
		const k8s_endpoint_t *ep = &slice->endpoints[i];
		raw(w, (i > 0) ? ",{\"addresses\":[" : "{\"addresses\":[");
		ip(w, &ep->ip);
		// Absent means ready: a JSON object less per endpoint to read back.
		raw(w, ep->ready ? "]" : "],\"conditions\":{\"ready\":false}");
		field_str(w, "hostname", ep->hostname, false);
		if (ep->target != NULL) {
			raw(w, ",\"targetRef\":{\"kind\":\"Pod\"");
			field_str(w, "name", ep->target, false);
			raw(w, "}");
		}
		raw(w, "}");
	}
	raw(w, "]");
	ports(w, slice->ports, slice->port_count);
	raw(w, "}");
}

static void pod_write(jw_t *w, const k8s_pod_t *pod)
{
	meta(w, &pod->meta, false);
	raw(w, ",\"spec\":{\"hostNetwork\":");
	raw(w, pod->host_network ? "true" : "false");
	raw(w, pod->live ? "},\"status\":{\"phase\":\"Running\",\"podIPs\":"
	                 : "},\"status\":{\"phase\":\"Failed\",\"podIPs\":");
	ips(w, pod->ips, pod->ip_count, "ip");
	raw(w, "}}");
}

static void import_write(jw_t *w, const k8s_serviceimport_t *imp)
{
	meta(w, &imp->meta, false);
	raw(w, imp->headless ? ",\"spec\":{\"type\":\"Headless\",\"ips\":"
	                     : ",\"spec\":{\"type\":\"ClusterSetIP\",\"ips\":");
	ips(w, imp->ips, imp->ip_count, NULL);
	ports(w, imp->ports, imp->port_count);
	raw(w, "},\"status\":{\"clusters\":[");
	for (uint16_t i = 0; i < imp->cluster_count; i++) {
		raw(w, (i > 0) ? ",{" : "{");
		field_str(w, "cluster", imp->clusters[i], true);
		raw(w, "}");
	}
	raw(w, "]}}");
}

static void object_write(jw_t *w, const k8s_object_t *obj)
{
	switch (obj->kind) {
	case K8S_SERVICE:
		service_write(w, (const k8s_service_t *)obj);
		break;
	case K8S_ENDPOINTSLICE:
		slice_write(w, (const k8s_slice_t *)obj);
		break;
	case K8S_POD:
		pod_write(w, (const k8s_pod_t *)obj);
		break;
	case K8S_SERVICEIMPORT:
		import_write(w, (const k8s_serviceimport_t *)obj);
		break;
	case K8S_CLUSTERPROPERTY: {
		const k8s_clusterproperty_t *prop = (const k8s_clusterproperty_t *)obj;
		meta(w, obj, false);
		raw(w, ",\"spec\":{");
		field_str(w, "value", prop->value, true);
		raw(w, "}}");
		break;
	}
	case K8S_NODE: {
		static const char *const KEYS[] = {
			"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
		};
		const k8s_node_t *node = (const k8s_node_t *)obj;
		const char *values[] = { node->zone, node->region };
		meta(w, obj, true);
		labels(w, KEYS, values, 2);
		raw(w, "}");
		break;
	}
	default:  // Namespaces: the name is all.
		meta(w, obj, false);
		raw(w, "}");
		break;
	}
}

/* --- the payload -------------------------------------------------------------------- */

static void put_le(unsigned char *out, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = (unsigned char)(v >> (8 * i));
	}
}

static uint64_t get_le(const unsigned char *in, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		v |= (uint64_t)in[i] << (8 * i);
	}
	return v;
}

uint64_t k8s_snapshot_fingerprint(const k8s_watcher_conf_t *conf)
{
	uint64_t h = k8s_watcher_conf_hash(conf, K8S_WCONF_HELD);
	// A build with another resource table numbers its sources otherwise.
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		const char *name = k8s_resource_name(src);
		h = k8s_fnv64(name, strlen(name) + 1, h);
	}
	return h;
}

int k8s_snapshot_encode(const k8s_store_t *store, uint32_t sources, uint32_t ready,
                        k8s_buf_t *out, uint64_t counts[K8S_SRC_COUNT])
{
	unsigned char head[HEAD_LEN];
	put_le(head, sources, 4);
	put_le(head + 4, ready, 4);
	jw_t w = { .buf = out, .ret = k8s_buf_append(out, head, sizeof(head), K8S_SNAP_MAX) };
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		counts[src] = 0;
		if (!(sources & (1u << src))) {
			continue;
		}
		size_t pos = 0;
		const k8s_object_t *obj;
		while (w.ret == KNOT_EOK && (obj = k8s_store_next(store, src, &pos)) != NULL) {
			unsigned char entry[ENTRY_HEAD_LEN] = { (unsigned char)src };
			size_t at = out->len;
			w.ret = k8s_buf_append(out, entry, sizeof(entry), K8S_SNAP_MAX);
			object_write(&w, obj);
			if (w.ret == KNOT_EOK) {
				size_t len = out->len - at - ENTRY_HEAD_LEN;
				if (len > K8S_SNAP_ENTRY_MAX) {
					// Larger than any reader takes: kept out, the LIST brings it.
					out->len = at;
					continue;
				}
				put_le((unsigned char *)out->data + at + 1, len, 4);
				counts[src]++;
			}
		}
	}
	return w.ret;
}

__attribute__((format(printf, 3, 4)))
static int refuse(char *why, size_t why_len, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	vsnprintf(why, why_len, fmt, args);
	va_end(args);
	return KNOT_EMALF;
}

void k8s_snapshot_free(k8s_snapshot_t *snap)
{
	for (size_t i = 0; i < snap->count; i++) {
		k8s_object_free(snap->objects[i]);
	}
	free(snap->objects);
	free(snap->source_of);
	memset(snap, 0, sizeof(*snap));
}

/*! First pass: the framing only; counts the entries per source. */
static int frame_check(const unsigned char *data, size_t len, uint32_t sources,
                       const uint64_t counts[K8S_SRC_COUNT], size_t *total,
                       char *why, size_t why_len)
{
	uint64_t seen[K8S_SRC_COUNT] = { 0 };
	*total = 0;
	for (size_t off = HEAD_LEN; off < len; ) {
		if (len - off < ENTRY_HEAD_LEN) {
			return refuse(why, why_len, "truncated object");
		}
		unsigned src = data[off];
		uint64_t elen = get_le(data + off + 1, 4);
		if (src >= K8S_SRC_COUNT || !(sources & (1u << src))) {
			return refuse(why, why_len, "object of an unknown source");
		}
		if (elen > K8S_SNAP_ENTRY_MAX || elen > len - off - ENTRY_HEAD_LEN) {
			return refuse(why, why_len, "object of %s longer than %s", k8s_resource_name(src),
			              (elen > K8S_SNAP_ENTRY_MAX) ? "allowed" : "the file");
		}
		off += ENTRY_HEAD_LEN + elen;
		seen[src]++;
		(*total)++;
	}
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		if (seen[src] != counts[src]) {
			return refuse(why, why_len, "count of %s differs from the header",
			              k8s_resource_name(src));
		}
	}
	return KNOT_EOK;
}

int k8s_snapshot_decode(const char *text, size_t len, const uint64_t counts[K8S_SRC_COUNT],
                        k8s_snapshot_t *snap, char *why, size_t why_len)
{
	const unsigned char *data = (const unsigned char *)text;
	memset(snap, 0, sizeof(*snap));
	if (len < HEAD_LEN) {
		return refuse(why, why_len, "truncated payload");
	}
	uint32_t sources = (uint32_t)get_le(data, 4);
	if (sources >= (1u << K8S_SRC_COUNT)) {
		return refuse(why, why_len, "unknown sources");
	}
	size_t total = 0;
	int ret = frame_check(data, len, sources, counts, &total, why, why_len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	snap->sources = sources;
	snap->ready = (uint32_t)get_le(data + 4, 4);
	if (total > 0) {
		snap->objects = calloc(total, sizeof(*snap->objects));
		snap->source_of = calloc(total, sizeof(*snap->source_of));
		if (snap->objects == NULL || snap->source_of == NULL) {
			k8s_snapshot_free(snap);
			return KNOT_ENOMEM;
		}
	}
	for (size_t off = HEAD_LEN; off < len; snap->count++) {
		unsigned src = data[off];
		size_t elen = get_le(data + off + 1, 4);
		char err[256] = "";
		ret = k8s_object_decode(k8s_resources[src].kind, text + off + ENTRY_HEAD_LEN, elen,
		                        &snap->objects[snap->count], err, sizeof(err));
		if (ret != KNOT_EOK) {
			k8s_snapshot_free(snap);
			if (ret == KNOT_ENOMEM) {
				return ret;
			}
			return refuse(why, why_len, "an object of %s does not decode (%s)",
			              k8s_resource_name(src), err);
		}
		snap->source_of[snap->count] = (uint8_t)src;
		off += ENTRY_HEAD_LEN + elen;
	}
	return KNOT_EOK;
}

/* --- the file ----------------------------------------------------------------------- */

int k8s_snapshot_write(const char *path, uint64_t fingerprint, int64_t now_s,
                       const k8s_store_t *store, uint32_t sources, uint32_t ready,
                       size_t *objects)
{
	k8s_snaphdr_t hdr = { .settings_hash = fingerprint, .created_s = now_s,
	                      .sources = K8S_SRC_COUNT };
	k8s_buf_t payload = { 0 };
	int ret = k8s_snapshot_encode(store, sources, ready, &payload, hdr.counts);
	if (ret == KNOT_EOK) {
		ret = k8s_snapfile_write(path, &hdr, payload.data, payload.len);
	}
	*objects = 0;
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		*objects += hdr.counts[src];
	}
	k8s_buf_free(&payload);
	return ret;
}

int k8s_snapshot_read(const char *path, uint64_t fingerprint, int64_t now_s,
                      int64_t max_age_s, k8s_snapshot_t *snap, char *why, size_t why_len)
{
	memset(snap, 0, sizeof(*snap));
	k8s_snaphdr_t hdr;
	char *payload = NULL;
	size_t len = 0;
	int ret = k8s_snapfile_read(path, fingerprint, now_s, max_age_s, &hdr, &payload, &len,
	                            why, why_len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (hdr.sources != K8S_SRC_COUNT) {
		free(payload);
		return refuse(why, why_len, "counts of another resource table");
	}
	ret = k8s_snapshot_decode(payload, len, hdr.counts, snap, why, why_len);
	free(payload);
	snap->created_s = hdr.created_s;
	return ret;
}
