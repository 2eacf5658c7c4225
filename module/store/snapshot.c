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
 * Objects are written as their slim fields in a compact binary form and read back
 * without the API's JSON decoder (a JSON tree per object cost 20 times the rest of a
 * warm start). The file is still not trusted: every length and count is checked
 * against the bytes left before anything is read or allocated, and every field gets
 * the checks the API objects' decoder gives it (names and hostnames DNS labels,
 * addresses of the slice's family, one value per enum), stricter where the writer
 * never writes otherwise (lowercase, no embedded NUL), so that a hostile file can give
 * us no object that the API could not. tests/unit/test_snapshot.c checks that each
 * kind gives back an object of the same digest. The digest itself is never read from the
 * file: it is computed when the first LIST compares the object.
 *
 * An object (integers little-endian; str: u8 length + 1, 0 for none, then the bytes;
 * ip: u8 4 or 6, then 4 or 16 bytes; bool: u8 0 or 1):
 *   u32 bytes of its strings with their NULs (the allocation is sized before reading),
 *   the counts of its arrays, str name, str namespace (namespaced kinds), its fields.
 * The counts and fields of each kind are in its writer and reader below.
 */

#include <arpa/inet.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "bulk.h"
#include "dnsname.h"
#include "snapfile.h"
#include "snapshot.h"

#define HEAD_LEN 8         // u32 sources, u32 ready.
#define ENTRY_HEAD_LEN 5   // u8 source, u32 length.
#define STR_MAX 254        // Longest str (its length + 1 is a byte); DNS names are <= 253.

/* Fewest bytes an array item takes in the file: a count is checked against them. */
#define PORT_MIN 4         // u16 port, u8 protocol, str name.
#define ENDPOINT_MIN 7     // IPv4, bool ready, str hostname, str target.
#define CLUSTER_MIN 2      // A non-empty str.

#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((size_t)(a) - 1))

/* --- writing ------------------------------------------------------------------------ */

/*! A writer; the first error sticks; \a unfit marks an object that cannot be written. */
typedef struct {
	k8s_buf_t *buf;
	int ret;
	bool unfit;
	uint32_t strings;   /*!< Bytes of the object's strings with their NULs. */
} bw_t;

/*! Appends bytes; inline while they fit, as most do (the encode runs on the watcher's loop). */
static inline void put(bw_t *w, const void *data, size_t len)
{
	k8s_buf_t *b = w->buf;
	if (w->ret == KNOT_EOK && len <= b->cap - b->len) {
		memcpy(b->data + b->len, data, len);
		b->len += len;
	} else if (w->ret == KNOT_EOK) {
		w->ret = k8s_buf_append(b, data, len, K8S_SNAP_MAX);
	}
}

static inline void put_u(bw_t *w, uint64_t v, size_t n)
{
	unsigned char bytes[8];
	k8s_snap_put_le(bytes, v, n);
	put(w, bytes, n);
}

static void put_str(bw_t *w, const char *s)
{
	if (s == NULL) {
		put_u(w, 0, 1);
		return;
	}
	size_t len = strlen(s);
	if (len > STR_MAX || w->strings > UINT32_MAX - len - 1) {
		// No decoder makes one; kept out rather than cut.
		w->unfit = true;
		return;
	}
	put_u(w, len + 1, 1);
	put(w, s, len);
	w->strings += (uint32_t)(len + 1);
}

static void put_ip(bw_t *w, const k8s_ip_t *ip)
{
	bool v4 = ip->family == AF_INET;
	put_u(w, v4 ? 4 : 6, 1);
	put(w, ip->bytes, v4 ? 4 : 16);
}

static void put_ips(bw_t *w, const k8s_ip_t *list, uint8_t count)
{
	put_u(w, count, 1);
	for (uint8_t i = 0; i < count; i++) {
		put_ip(w, &list[i]);
	}
}

static void put_ports(bw_t *w, const k8s_port_t *list, uint16_t count)
{
	for (uint16_t i = 0; i < count; i++) {
		put_u(w, list[i].port, 2);
		put_u(w, list[i].proto, 1);
		put_str(w, list[i].name);
	}
}

/*! Counts: service u16 ports; slice u32 endpoints, u16 ports; import u16 ports, u16 clusters. */
static void object_write(bw_t *w, const k8s_object_t *obj)
{
	switch (obj->kind) {
	case K8S_SERVICE: {
		const k8s_service_t *svc = (const k8s_service_t *)obj;
		put_u(w, svc->port_count, 2);
		put_str(w, obj->name);
		put_str(w, obj->ns);
		put_u(w, svc->type, 1);
		put_u(w, svc->publish_not_ready, 1);
		put_ips(w, svc->ips, svc->ip_count);
		put_ips(w, svc->ingress, svc->ingress_count);
		put_str(w, svc->external_name);
		put_ports(w, svc->ports, svc->port_count);
		break;
	}
	case K8S_ENDPOINTSLICE: {
		const k8s_slice_t *slice = (const k8s_slice_t *)obj;
		put_u(w, slice->endpoint_count, 4);
		put_u(w, slice->port_count, 2);
		put_str(w, obj->name);
		put_str(w, obj->ns);
		put_str(w, slice->service);
		put_str(w, slice->mcs_service);
		put_str(w, slice->source_cluster);
		put_u(w, (slice->family == AF_INET) ? 4 : (slice->family == AF_INET6) ? 6 : 0, 1);
		// The addresses only: their family is the slice's.
		size_t ip_len = (slice->family == AF_INET) ? 4 : 16;
		for (uint32_t i = 0; i < slice->endpoint_count; i++) {
			const k8s_endpoint_t *ep = &slice->endpoints[i];
			put(w, ep->ip.bytes, ip_len);
			put_u(w, ep->ready, 1);
			put_str(w, ep->hostname);
			put_str(w, ep->target);
		}
		put_ports(w, slice->ports, slice->port_count);
		break;
	}
	case K8S_POD: {
		const k8s_pod_t *pod = (const k8s_pod_t *)obj;
		put_str(w, obj->name);
		put_str(w, obj->ns);
		put_u(w, pod->live, 1);
		put_u(w, pod->host_network, 1);
		put_ips(w, pod->ips, pod->ip_count);
		break;
	}
	case K8S_SERVICEIMPORT: {
		const k8s_serviceimport_t *imp = (const k8s_serviceimport_t *)obj;
		put_u(w, imp->port_count, 2);
		put_u(w, imp->cluster_count, 2);
		put_str(w, obj->name);
		put_str(w, obj->ns);
		put_u(w, imp->headless, 1);
		put_ips(w, imp->ips, imp->ip_count);
		put_ports(w, imp->ports, imp->port_count);
		for (uint16_t i = 0; i < imp->cluster_count; i++) {
			put_str(w, imp->clusters[i]);
		}
		break;
	}
	case K8S_CLUSTERPROPERTY: {
		const k8s_clusterproperty_t *prop = (const k8s_clusterproperty_t *)obj;
		put_str(w, obj->name);
		// The one free-form string: u32 length + 1, 0 for none.
		size_t len = (prop->value != NULL) ? strlen(prop->value) : 0;
		if (prop->value != NULL && len < K8S_SNAP_ENTRY_MAX) {
			put_u(w, len + 1, 4);
			put(w, prop->value, len);
			w->strings += (uint32_t)(len + 1);
		} else {
			w->unfit = w->unfit || prop->value != NULL;
			put_u(w, 0, 4);
		}
		break;
	}
	case K8S_NODE: {
		const k8s_node_t *node = (const k8s_node_t *)obj;
		put_str(w, obj->name);
		put_str(w, node->zone);
		put_str(w, node->region);
		break;
	}
	default:  // Namespaces: the name is all.
		put_str(w, obj->name);
		break;
	}
}

/* --- reading ------------------------------------------------------------------------ */

/*! A reader over one object; the first failure sticks with its reason. */
typedef struct {
	const unsigned char *at;
	const unsigned char *end;
	char *str_at;          /*!< Where the next string goes. */
	size_t str_left;       /*!< Bytes left for strings (the object's announced total). */
	const char *bad;       /*!< Why it does not read, or NULL. */
} br_t;

static inline size_t left(const br_t *r)
{
	return (size_t)(r->end - r->at);
}

static inline bool check(br_t *r, bool ok, const char *why)
{
	if (!ok && r->bad == NULL) {
		r->bad = why;
	}
	return ok && r->bad == NULL;
}

static inline uint64_t get_u(br_t *r, size_t n)
{
	if (!check(r, left(r) >= n, "truncated")) {
		return 0;
	}
	uint64_t v = k8s_snap_get_le(r->at, n);
	r->at += n;
	return v;
}

static bool get_bool(br_t *r)
{
	uint64_t v = get_u(r, 1);
	check(r, v <= 1, "not a boolean");
	return v == 1;
}

/*! A string view; \a wide: the u32 length of the free-form value, else u8. */
typedef struct {
	const char *ptr;
	size_t len;
} view_t;

static view_t get_view(br_t *r, bool wide)
{
	view_t v = { NULL, 0 };
	uint64_t n = get_u(r, wide ? 4 : 1);
	if (n == 0 || !check(r, n - 1 <= left(r), "string longer than the object")) {
		return v;
	}
	v.ptr = (const char *)r->at;
	v.len = (size_t)(n - 1);
	r->at += v.len;
	check(r, memchr(v.ptr, '\0', v.len) == NULL, "string with a nul");
	return v;
}

/*! Copies a string behind the structure, within the announced bytes. */
static const char *pack(br_t *r, view_t v)
{
	if (v.ptr == NULL || !check(r, v.len < r->str_left, "strings longer than announced")) {
		return NULL;
	}
	char *out = r->str_at;
	memcpy(out, v.ptr, v.len);
	out[v.len] = '\0';
	r->str_at += v.len + 1;
	r->str_left -= v.len + 1;
	return out;
}

/*! How a string must look: what the API objects' decoder keeps there, lowercase. */
typedef enum {
	STR_LABEL,      /*!< A DNS label (names, hostnames, port names, service labels). */
	STR_NAME,       /*!< Dot-separated DNS labels of at most 253 bytes (ExternalName). */
	STR_SUBDOMAIN,  /*!< A DNS subdomain, labels of any length (names of kinds that are no label). */
	STR_TOPOLOGY,   /*!< Dot-separated labels of at most 63 bytes (node zone, region). */
	STR_CLUSTER,    /*!< A cluster id. */
} str_kind_t;

static const char *get_str(br_t *r, str_kind_t kind, bool required)
{
	view_t v = get_view(r, false);
	if (v.ptr == NULL) {
		check(r, !required, "missing name");
		return NULL;
	}
	bool valid = false;
	switch (kind) {
	case STR_LABEL:
		valid = k8s_dns_label_valid(v.ptr, v.len, false);
		break;
	case STR_NAME:
		valid = k8s_dns_name_valid(v.ptr, v.len, K8S_DNS_NAME_MAX, 0, false);
		break;
	case STR_SUBDOMAIN:
		valid = k8s_dns_subdomain_valid(v.ptr, v.len);
		break;
	case STR_TOPOLOGY:
		valid = k8s_dns_name_valid(v.ptr, v.len, K8S_DNS_LABEL_MAX, 0, false);
		break;
	case STR_CLUSTER:
		valid = k8s_cluster_id_valid(v.ptr, v.len, false);
		break;
	}
	return check(r, valid, "invalid name") ? pack(r, v) : NULL;
}

/*! An address of \a family, or of either (AF_UNSPEC: then the file says which). */
static void get_ip(br_t *r, int family, k8s_ip_t *ip)
{
	if (family == AF_UNSPEC) {
		uint64_t tag = get_u(r, 1);
		check(r, tag == 4 || tag == 6, "unknown address family");
		family = (tag == 4) ? AF_INET : AF_INET6;
	}
	size_t len = (family == AF_INET) ? 4 : 16;
	if (check(r, left(r) >= len, "truncated")) {
		ip->family = (uint8_t)family;
		memcpy(ip->bytes, r->at, len);
		r->at += len;
	}
}

static uint8_t get_ips(br_t *r, k8s_ip_t ips[2])
{
	uint64_t count = get_u(r, 1);
	if (!check(r, count <= 2, "more than two addresses")) {
		return 0;
	}
	for (uint64_t i = 0; i < count; i++) {
		get_ip(r, AF_UNSPEC, &ips[i]);
	}
	return (uint8_t)count;
}

static void get_ports(br_t *r, k8s_port_t *out, uint16_t count)
{
	for (uint16_t i = 0; i < count && r->bad == NULL; i++) {
		out[i].port = (uint16_t)get_u(r, 2);
		out[i].proto = (uint8_t)get_u(r, 1);
		check(r, out[i].proto < K8S_PROTO_COUNT, "unknown protocol");
		out[i].name = get_str(r, STR_LABEL, false);
	}
}

/*! A count of items of at least \a min bytes each: no larger than the bytes left allow. */
static uint64_t get_count(br_t *r, size_t n, size_t min)
{
	uint64_t count = get_u(r, n);
	return check(r, count <= left(r) / min, "count larger than the object") ? count : 0;
}

/*!
 * One allocation as the API objects' decoder makes it (objects.h): \a head bytes of
 * structure, then \a arrays, then \a strings.
 */
static void *object_alloc(br_t *r, size_t head, size_t arrays, size_t strings, void **arr_at)
{
	size_t arr_off = ALIGN_UP(head, alignof(max_align_t));
	char *mem = k8s_bulk_calloc(arr_off + arrays + strings);
	if (mem != NULL) {
		*arr_at = mem + arr_off;
		r->str_at = mem + arr_off + arrays;
		r->str_left = strings;
	}
	return mem;
}

static void meta_read(br_t *r, k8s_object_t *obj, k8s_kind_t kind)
{
	obj->kind = kind;
	// The decoder's rule for the kind's names (objects.c).
	obj->name = get_str(r, k8s_kind_name_is_label(kind) ? STR_LABEL : STR_SUBDOMAIN, true);
	obj->ns = k8s_kind_namespaced(kind) ? get_str(r, STR_LABEL, true) : "";
}

/*! Reads the object of \a kind; NULL when out of memory or r->bad says why not. */
static k8s_object_t *object_read(br_t *r, k8s_kind_t kind)
{
	size_t strings = get_count(r, 4, 1);
	void *arrays = NULL;
	switch (kind) {
	case K8S_SERVICE: {
		uint16_t port_count = (uint16_t)get_count(r, 2, PORT_MIN);
		k8s_service_t *svc = (r->bad != NULL) ? NULL :
		                     object_alloc(r, sizeof(*svc), port_count * sizeof(k8s_port_t),
		                                  strings, &arrays);
		if (svc == NULL) {
			return NULL;
		}
		meta_read(r, &svc->meta, kind);
		svc->type = (uint8_t)get_u(r, 1);
		check(r, svc->type <= K8S_SVC_EXTERNALNAME, "unknown service type");
		svc->publish_not_ready = get_bool(r);
		svc->ip_count = get_ips(r, svc->ips);
		svc->ingress_count = get_ips(r, svc->ingress);
		svc->external_name = get_str(r, STR_NAME, false);
		// As the decoder keeps them: cluster IPs of ClusterIP services, ingress of all but
		// ExternalName services, a target of ExternalName services only.
		check(r, (svc->ip_count == 0 || svc->type == K8S_SVC_CLUSTERIP) &&
		         (svc->ingress_count == 0 || svc->type != K8S_SVC_EXTERNALNAME) &&
		         (svc->external_name == NULL || svc->type == K8S_SVC_EXTERNALNAME),
		      "fields of another service type");
		svc->port_count = port_count;
		svc->ports = (port_count > 0) ? arrays : NULL;
		get_ports(r, arrays, port_count);
		return &svc->meta;
	}
	case K8S_ENDPOINTSLICE: {
		uint32_t ep_count = (uint32_t)get_count(r, 4, ENDPOINT_MIN);
		uint16_t port_count = (uint16_t)get_count(r, 2, PORT_MIN);
		size_t port_off = ALIGN_UP(ep_count * sizeof(k8s_endpoint_t), alignof(k8s_port_t));
		k8s_slice_t *slice = (r->bad != NULL) ? NULL :
		                     object_alloc(r, sizeof(*slice),
		                                  port_off + port_count * sizeof(k8s_port_t),
		                                  strings, &arrays);
		if (slice == NULL) {
			return NULL;
		}
		meta_read(r, &slice->meta, kind);
		slice->service = get_str(r, STR_LABEL, false);
		slice->mcs_service = get_str(r, STR_LABEL, false);
		slice->source_cluster = get_str(r, STR_CLUSTER, false);
		uint64_t tag = get_u(r, 1);
		check(r, tag == 0 || tag == 4 || tag == 6, "unknown address family");
		slice->family = (tag == 4) ? AF_INET : (tag == 6) ? AF_INET6 : 0;
		// FQDN slices keep no addresses.
		check(r, slice->family != 0 || ep_count == 0, "addresses in an fqdn slice");
		k8s_endpoint_t *eps = arrays;
		for (uint32_t i = 0; i < ep_count && r->bad == NULL; i++) {
			get_ip(r, slice->family, &eps[i].ip);
			eps[i].ready = get_bool(r);
			eps[i].hostname = get_str(r, STR_LABEL, false);
			eps[i].target = get_str(r, STR_LABEL, false);
		}
		slice->endpoint_count = ep_count;
		slice->endpoints = (ep_count > 0) ? eps : NULL;
		k8s_port_t *ports = (k8s_port_t *)((char *)arrays + port_off);
		slice->port_count = port_count;
		slice->ports = (port_count > 0) ? ports : NULL;
		get_ports(r, ports, port_count);
		return &slice->meta;
	}
	case K8S_POD: {
		k8s_pod_t *pod = (r->bad != NULL) ? NULL :
		                 object_alloc(r, sizeof(*pod), 0, strings, &arrays);
		if (pod == NULL) {
			return NULL;
		}
		meta_read(r, &pod->meta, kind);
		pod->live = get_bool(r);
		pod->host_network = get_bool(r);
		pod->ip_count = get_ips(r, pod->ips);
		return &pod->meta;
	}
	case K8S_SERVICEIMPORT: {
		uint16_t port_count = (uint16_t)get_count(r, 2, PORT_MIN);
		uint16_t cluster_count = (uint16_t)get_count(r, 2, CLUSTER_MIN);
		size_t ids_off = ALIGN_UP(port_count * sizeof(k8s_port_t), alignof(char *));
		k8s_serviceimport_t *imp = (r->bad != NULL) ? NULL :
		                           object_alloc(r, sizeof(*imp),
		                                        ids_off + cluster_count * sizeof(char *),
		                                        strings, &arrays);
		if (imp == NULL) {
			return NULL;
		}
		meta_read(r, &imp->meta, kind);
		imp->headless = get_bool(r);
		imp->ip_count = get_ips(r, imp->ips);
		imp->port_count = port_count;
		imp->ports = (port_count > 0) ? arrays : NULL;
		get_ports(r, arrays, port_count);
		const char **ids = (const char **)((char *)arrays + ids_off);
		for (uint16_t i = 0; i < cluster_count; i++) {
			ids[i] = get_str(r, STR_CLUSTER, true);
		}
		imp->cluster_count = cluster_count;
		imp->clusters = (cluster_count > 0) ? ids : NULL;
		return &imp->meta;
	}
	case K8S_CLUSTERPROPERTY: {
		k8s_clusterproperty_t *prop = (r->bad != NULL) ? NULL :
		                              object_alloc(r, sizeof(*prop), 0, strings, &arrays);
		if (prop == NULL) {
			return NULL;
		}
		meta_read(r, &prop->meta, kind);
		prop->value = pack(r, get_view(r, true));
		return &prop->meta;
	}
	case K8S_NODE: {
		k8s_node_t *node = (r->bad != NULL) ? NULL :
		                   object_alloc(r, sizeof(*node), 0, strings, &arrays);
		if (node == NULL) {
			return NULL;
		}
		meta_read(r, &node->meta, kind);
		node->zone = get_str(r, STR_TOPOLOGY, false);
		node->region = get_str(r, STR_TOPOLOGY, false);
		return &node->meta;
	}
	case K8S_NAMESPACE: {
		k8s_namespace_t *ns = (r->bad != NULL) ? NULL :
		                      object_alloc(r, sizeof(*ns), 0, strings, &arrays);
		if (ns == NULL) {
			return NULL;
		}
		meta_read(r, &ns->meta, kind);
		return &ns->meta;
	}
	default:
		check(r, false, "unknown kind");
		return NULL;
	}
}

/*!
 * Reads one object of \a len bytes: all of them, its strings exactly as announced.
 *
 * \retval KNOT_EOK, KNOT_EMALF (\a err says why), KNOT_ENOMEM
 */
static int object_decode(k8s_kind_t kind, const char *data, size_t len, k8s_object_t **out,
                         char *err, size_t err_len)
{
	br_t r = { .at = (const unsigned char *)data, .end = (const unsigned char *)data + len };
	k8s_object_t *obj = object_read(&r, kind);
	if (obj != NULL) {
		check(&r, left(&r) == 0, "trailing bytes");
		check(&r, r.str_left == 0, "strings shorter than announced");
	}
	if (r.bad != NULL) {
		k8s_object_free(obj);
		snprintf(err, err_len, "%s", r.bad);
		return KNOT_EMALF;
	} else if (obj == NULL) {
		snprintf(err, err_len, "out of memory");
		return KNOT_ENOMEM;
	}
	// No digest yet: the first LIST computes it (k8s_object_digest_of()), not the warm start.
	*out = obj;
	return KNOT_EOK;
}

/* --- the payload -------------------------------------------------------------------- */

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
	k8s_snap_put_le(head, sources, 4);
	k8s_snap_put_le(head + 4, ready, 4);
	bw_t w = { .buf = out, .ret = k8s_buf_append(out, head, sizeof(head), K8S_SNAP_MAX) };
	for (unsigned src = 0; src < K8S_SRC_COUNT; src++) {
		counts[src] = 0;
		if (!(sources & (1u << src))) {
			continue;
		}
		size_t pos = 0;
		const k8s_object_t *obj;
		while (w.ret == KNOT_EOK && (obj = k8s_store_next(store, src, &pos)) != NULL) {
			// Source and length, then the object's string bytes: both filled in after it.
			unsigned char entry[ENTRY_HEAD_LEN + 4] = { (unsigned char)src };
			size_t at = out->len;
			w.ret = k8s_buf_append(out, entry, sizeof(entry), K8S_SNAP_MAX);
			w.unfit = false;
			w.strings = 0;
			object_write(&w, obj);
			if (w.ret == KNOT_EOK) {
				size_t len = out->len - at - ENTRY_HEAD_LEN;
				if (len > K8S_SNAP_ENTRY_MAX || w.unfit) {
					// Larger than any reader takes: kept out, the LIST brings it.
					out->len = at;
					continue;
				}
				k8s_snap_put_le((unsigned char *)out->data + at + 1, len, 4);
				k8s_snap_put_le((unsigned char *)out->data + at + ENTRY_HEAD_LEN, w.strings, 4);
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

void k8s_snapshot_sizes(const k8s_snapshot_t *snap, size_t *svcs, size_t *addrs)
{
	*svcs = 0;
	*addrs = 0;
	for (size_t i = 0; i < snap->count; i++) {
		const k8s_object_t *obj = snap->objects[i];
		if (obj == NULL) {
			continue;
		}
		switch (obj->kind) {
		case K8S_SERVICE:
			*svcs += 1;
			*addrs += ((const k8s_service_t *)obj)->ip_count;
			break;
		case K8S_SERVICEIMPORT:
			*svcs += 1;
			*addrs += ((const k8s_serviceimport_t *)obj)->ip_count;
			break;
		case K8S_ENDPOINTSLICE:
			*addrs += ((const k8s_slice_t *)obj)->endpoint_count;
			break;
		default:
			break;
		}
	}
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
		uint64_t elen = k8s_snap_get_le(data + off + 1, 4);
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
	uint32_t sources = (uint32_t)k8s_snap_get_le(data, 4);
	if (sources >= (1u << K8S_SRC_COUNT)) {
		return refuse(why, why_len, "unknown sources");
	}
	size_t total = 0;
	int ret = frame_check(data, len, sources, counts, &total, why, why_len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	snap->sources = sources;
	snap->ready = (uint32_t)k8s_snap_get_le(data + 4, 4);
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
		size_t elen = k8s_snap_get_le(data + off + 1, 4);
		char err[256] = "";
		ret = object_decode(k8s_resources[src].kind, text + off + ENTRY_HEAD_LEN, elen,
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
	k8s_snapmap_t map;
	int ret = k8s_snapfile_read(path, fingerprint, now_s, max_age_s, &hdr, &map, why, why_len);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (hdr.sources != K8S_SRC_COUNT) {
		k8s_snapfile_unmap(&map);
		return refuse(why, why_len, "counts of another resource table");
	}
	ret = k8s_snapshot_decode(map.payload, map.len, hdr.counts, snap, why, why_len);
	k8s_snapfile_unmap(&map);
	snap->created_s = hdr.created_s;
	return ret;
}
