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
 * Decoding works in two passes over the json-c tree: the first validates and
 * measures (counts of ports and addresses, bytes of strings), the second packs
 * the structure, its arrays and its strings into one allocation. Both passes
 * call the same validating readers, so they agree on what is kept.
 */

#include <arpa/inet.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "bulk.h"
#include "digest.h"
#include "dnsname.h"
#include "jsonread.h"
#include "objects.h"
#include "rfc3339.h"

/*! At most this many ports are kept (k8s_port_t counts are 16-bit). */
#define PORTS_MAX UINT16_MAX

#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((size_t)(a) - 1))

/*! Where the second pass writes strings. */
typedef struct {
	char *at;
} pack_t;

/* --- validation ---------------------------------------------------------------- */

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static str_t label_or_null(str_t s, bool fold)
{
	if (s.ptr == NULL || !k8s_dns_label_valid(s.ptr, s.len, fold)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

/*! An ExternalName target: one trailing dot dropped, case folded, <= 253 bytes. */
static str_t hostname_or_null(str_t s)
{
	if (s.ptr != NULL && s.len > 0 && s.ptr[s.len - 1] == '.') {
		s.len--;
	}
	if (s.ptr == NULL || !k8s_dns_name_valid(s.ptr, s.len, K8S_DNS_NAME_MAX, 0, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

/*! An IP of \a family (AF_UNSPEC: either); false when invalid or of the other family. */
static bool ip_parse(str_t s, int family, k8s_ip_t *ip)
{
	char text[INET6_ADDRSTRLEN];
	if (s.ptr == NULL || s.len == 0 || s.len >= sizeof(text)) {
		return false;
	}
	memcpy(text, s.ptr, s.len);
	text[s.len] = '\0';

	memset(ip, 0, sizeof(*ip));
	if (family != AF_INET6 && inet_pton(AF_INET, text, ip->bytes) == 1) {
		ip->family = AF_INET;
		return true;
	}
	if (family != AF_INET && inet_pton(AF_INET6, text, ip->bytes) == 1) {
		ip->family = AF_INET6;
		return true;
	}
	return false;
}

/*! Up to two valid IPs from an array of strings (or of {"ip": ...} objects with \a key). */
static uint8_t ips_read(json_object *arr, const char *key, k8s_ip_t ips[2])
{
	uint8_t count = 0;
	size_t len = arr_len(arr);
	for (size_t i = 0; i < len && count < 2; i++) {
		json_object *item = json_object_array_get_idx(arr, i);
		str_t s = (key != NULL) ? get_str(item, key) : str_of(item);
		if (ip_parse(s, AF_UNSPEC, &ips[count])) {
			count++;
		}
	}
	return count;
}

/* --- packing ------------------------------------------------------------------- */

static size_t str_size(str_t s)
{
	return (s.ptr != NULL) ? s.len + 1 : 0;
}

/*! Copies a string behind the structure; DNS strings are lowercased on the way. */
static const char *pack_str(pack_t *p, str_t s, bool fold)
{
	if (s.ptr == NULL) {
		return NULL;
	}
	char *out = p->at;
	for (size_t i = 0; i < s.len; i++) {
		out[i] = fold ? lower(s.ptr[i]) : s.ptr[i];
	}
	out[s.len] = '\0';
	p->at += s.len + 1;
	return out;
}

/*! Allocates the object: \a head bytes of structure, \a arrays bytes of arrays, then strings. */
static void *object_alloc(size_t head, size_t arrays, size_t strings, pack_t *p, void **arr_at)
{
	size_t arr_off = ALIGN_UP(head, _Alignof(max_align_t));
	size_t str_off = arr_off + arrays;
	char *mem = calloc(1, str_off + strings);
	if (mem == NULL) {
		return NULL;
	}
	if (arr_at != NULL) {
		*arr_at = mem + arr_off;
	}
	p->at = mem + str_off;
	return mem;
}

/* --- ports --------------------------------------------------------------------- */

/*! Reads one port; false when it is to be skipped (not an object, unknown protocol). */
static bool port_read(json_object *item, k8s_port_t *port, str_t *name)
{
	if (!json_object_is_type(item, json_type_object)) {
		return false;
	}
	str_t proto = get_str(item, "protocol");
	if (proto.ptr == NULL || str_is(proto, "TCP")) {
		port->proto = K8S_PROTO_TCP;
	} else if (str_is(proto, "UDP")) {
		port->proto = K8S_PROTO_UDP;
	} else if (str_is(proto, "SCTP")) {
		port->proto = K8S_PROTO_SCTP;
	} else {
		return false;
	}
	int64_t number = get_int(item, "port", 0);
	port->port = (number >= 1 && number <= UINT16_MAX) ? (uint16_t)number : 0;
	*name = label_or_null(get_str(item, "name"), false);
	port->name = NULL;
	return true;
}

/*! First pass over a ports array: kept ports and their string bytes. */
static uint16_t ports_measure(json_object *arr, size_t *strings)
{
	size_t count = 0;
	size_t len = arr_len(arr);
	for (size_t i = 0; i < len && count < PORTS_MAX; i++) {
		k8s_port_t port;
		str_t name;
		if (port_read(json_object_array_get_idx(arr, i), &port, &name)) {
			*strings += str_size(name);
			count++;
		}
	}
	return (uint16_t)count;
}

static void ports_pack(json_object *arr, k8s_port_t *out, uint16_t count, pack_t *p)
{
	size_t len = arr_len(arr);
	uint16_t done = 0;
	for (size_t i = 0; i < len && done < count; i++) {
		str_t name;
		if (port_read(json_object_array_get_idx(arr, i), &out[done], &name)) {
			out[done].name = pack_str(p, name, false);
			done++;
		}
	}
}

/* --- metadata ------------------------------------------------------------------ */

/*! Name and namespace as read and validated from metadata. */
typedef struct {
	json_object *metadata;
	json_object *annotations;
	json_object *labels;
	str_t ns;
	str_t name;
} meta_t;

/*! How one kind decodes; the table is at the end of the kinds' decoders. */
typedef struct {
	const char *plural;        /*!< As in API paths. */
	const char *field;         /*!< The object's "kind" field, checked when present. */
	bool namespaced;
	bool name_is_label;        /*!< The API server's rule: a DNS label, else a DNS subdomain. */
	int (*decode)(json_object *root, const meta_t *m, k8s_object_t **out);
	uint64_t (*digest)(uint64_t h, const k8s_object_t *obj); /*!< digest.h; NULL: name only. */
} kind_t;

static const kind_t KINDS[K8S_KIND_COUNT];

const char *k8s_kind_name(k8s_kind_t kind)
{
	if ((unsigned)kind >= K8S_KIND_COUNT) {
		return "unknown";
	}
	return KINDS[kind].plural;
}

bool k8s_kind_namespaced(k8s_kind_t kind)
{
	return (unsigned)kind < K8S_KIND_COUNT && KINDS[kind].namespaced;
}

bool k8s_kind_name_is_label(k8s_kind_t kind)
{
	return (unsigned)kind < K8S_KIND_COUNT && KINDS[kind].name_is_label;
}

static bool kind_name_valid(k8s_kind_t kind, str_t name)
{
	if (k8s_kind_name_is_label(kind)) {
		return k8s_dns_label_valid(name.ptr, name.len, false);
	}
	return k8s_dns_subdomain_valid(name.ptr, name.len);
}

static int meta_read(k8s_kind_t kind, json_object *root, meta_t *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	str_t kind_field = get_str(root, "kind");
	if (kind_field.ptr != NULL && !str_is(kind_field, KINDS[kind].field)) {
		set_err(err, errlen, "unexpected kind (expected %s)", KINDS[kind].field);
		return KNOT_EINVAL;
	}

	m->metadata = get_obj(root, "metadata");
	if (m->metadata == NULL) {
		set_err(err, errlen, "missing metadata");
		return KNOT_EINVAL;
	}
	m->annotations = get_obj(m->metadata, "annotations");
	m->labels = get_obj(m->metadata, "labels");

	m->name = get_str(m->metadata, "name");
	if (m->name.ptr == NULL) {
		set_err(err, errlen, "missing metadata.name");
		return KNOT_EINVAL;
	}
	if (!kind_name_valid(kind, m->name)) {
		set_err(err, errlen, "invalid metadata.name (not a dns %s)",
		        k8s_kind_name_is_label(kind) ? "label" : "subdomain");
		return KNOT_EINVAL;
	}

	if (!k8s_kind_namespaced(kind)) {
		m->ns.ptr = "";
		return KNOT_EOK;
	}
	m->ns = get_str(m->metadata, "namespace");
	if (m->ns.ptr == NULL) {
		set_err(err, errlen, "missing metadata.namespace");
		return KNOT_EINVAL;
	}
	if (!k8s_dns_label_valid(m->ns.ptr, m->ns.len, false)) {
		set_err(err, errlen, "invalid metadata.namespace (not a dns label)");
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}

static size_t meta_strings(const meta_t *m)
{
	return str_size(m->ns) + str_size(m->name);
}

static void meta_pack(k8s_object_t *obj, k8s_kind_t kind, const meta_t *m, pack_t *p)
{
	obj->kind = kind;
	obj->ns = pack_str(p, m->ns, false);
	obj->name = pack_str(p, m->name, false);
}

/* --- kinds --------------------------------------------------------------------- */

static int service_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	json_object *spec = get_obj(root, "spec");
	str_t type = get_str(spec, "type");

	// clusterIPs[0] equals clusterIP; servers older than dual-stack send clusterIP only.
	json_object *ip_list = get_arr(spec, "clusterIPs");
	json_object *ip_one = get_field(spec, "clusterIP", json_type_string);
	str_t first = (arr_len(ip_list) > 0) ? str_of(json_object_array_get_idx(ip_list, 0))
	                                     : str_of(ip_one);

	k8s_service_t head = { 0 };
	str_t external = { NULL, 0 };
	if (str_is(type, "ExternalName")) {
		head.type = K8S_SVC_EXTERNALNAME;
		external = hostname_or_null(get_str(spec, "externalName"));
	} else if ((type.ptr == NULL || str_is(type, "ClusterIP")) && str_is(first, "None")) {
		head.type = K8S_SVC_HEADLESS;
	} else {
		head.type = K8S_SVC_CLUSTERIP;
		if (arr_len(ip_list) > 0) {
			head.ip_count = ips_read(ip_list, NULL, head.ips);
		} else if (ip_parse(str_of(ip_one), AF_UNSPEC, &head.ips[0])) {
			head.ip_count = 1;
		}
	}
	if (head.type != K8S_SVC_EXTERNALNAME) {
		json_object *ingress = get_arr(get_obj(get_obj(root, "status"), "loadBalancer"), "ingress");
		head.ingress_count = ips_read(ingress, "ip", head.ingress);
	}
	str_t tolerate = get_str(m->annotations,
	                         "service.alpha.kubernetes.io/tolerate-unready-endpoints");
	head.publish_not_ready = get_bool(spec, "publishNotReadyAddresses", false) ||
	                         str_is(tolerate, "true");

	json_object *ports = get_arr(spec, "ports");
	size_t strings = meta_strings(m) + str_size(external);
	uint16_t port_count = ports_measure(ports, &strings);

	pack_t p;
	void *arrays = NULL;
	k8s_service_t *svc = object_alloc(sizeof(*svc), port_count * sizeof(k8s_port_t),
	                                  strings, &p, &arrays);
	if (svc == NULL) {
		return KNOT_ENOMEM;
	}
	*svc = head;
	meta_pack(&svc->meta, K8S_SERVICE, m, &p);
	svc->external_name = pack_str(&p, external, true);
	svc->port_count = port_count;
	svc->ports = (port_count > 0) ? arrays : NULL;
	ports_pack(ports, arrays, port_count, &p);

	*out = &svc->meta;
	return KNOT_EOK;
}

/*! The DNS fields of one EndpointSlice endpoint, shared by its addresses. */
typedef struct {
	json_object *addresses;
	bool ready;
	str_t hostname;
	str_t target;
	str_t unlabelled;  /*!< A pod name that cannot be a DNS label (k8s_slice_t). */
} endpoint_view_t;

static void endpoint_read(json_object *item, endpoint_view_t *v)
{
	v->addresses = get_arr(item, "addresses");
	v->ready = get_bool(get_obj(item, "conditions"), "ready", true);
	v->hostname = label_or_null(get_str(item, "hostname"), false);
	json_object *ref = get_obj(item, "targetRef");
	str_t pod = str_is(get_str(ref, "kind"), "Pod") ? get_str(ref, "name") : (str_t){ NULL, 0 };
	v->target = label_or_null(pod, false);
	v->unlabelled = (str_t){ NULL, 0 };
	if (v->target.ptr == NULL && pod.ptr != NULL && k8s_dns_subdomain_valid(pod.ptr, pod.len)) {
		v->unlabelled = pod;
	}
}

/*! The j-th address of an endpoint, if it is a valid IP of the slice's family. */
static bool address_read(json_object *addresses, size_t j, int family, k8s_ip_t *ip)
{
	return ip_parse(str_of(json_object_array_get_idx(addresses, j)), family, ip);
}

/*! Label values may be mixed case; a slice's service is found by its lowercase name. */
static str_t slice_label(const meta_t *m, const char *key)
{
	return label_or_null(get_str(m->labels, key), true);
}

static str_t cluster_label(const meta_t *m)
{
	str_t s = get_str(m->labels, "multicluster.kubernetes.io/source-cluster");
	if (!k8s_cluster_id_valid(s.ptr, s.len, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

static int slice_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	str_t service = slice_label(m, "kubernetes.io/service-name");
	str_t mcs_service = slice_label(m, "multicluster.kubernetes.io/service-name");
	str_t source_cluster = cluster_label(m);

	str_t type = get_str(root, "addressType");
	uint8_t family = str_is(type, "IPv4") ? AF_INET : str_is(type, "IPv6") ? AF_INET6 : 0;

	size_t strings = meta_strings(m) + str_size(service) + str_size(mcs_service) +
	                 str_size(source_cluster);

	json_object *endpoints = get_arr(root, "endpoints");
	size_t ep_len = arr_len(endpoints);
	size_t addr_count = 0;
	str_t unlabelled = { NULL, 0 };
	for (size_t i = 0; i < ep_len && family != 0; i++) {
		endpoint_view_t v;
		endpoint_read(json_object_array_get_idx(endpoints, i), &v);
		size_t valid = 0;
		for (size_t j = 0; j < arr_len(v.addresses); j++) {
			k8s_ip_t ip;
			valid += address_read(v.addresses, j, family, &ip);
		}
		if (valid > 0) {
			addr_count += valid;
			strings += str_size(v.hostname) + str_size(v.target);
			if (unlabelled.ptr == NULL) {
				unlabelled = v.unlabelled;
			}
		}
	}
	strings += str_size(unlabelled);
	if (addr_count > UINT32_MAX) {
		return KNOT_ERANGE;
	}

	json_object *ports = get_arr(root, "ports");
	uint16_t port_count = ports_measure(ports, &strings);

	size_t ep_bytes = addr_count * sizeof(k8s_endpoint_t);
	size_t port_off = ALIGN_UP(ep_bytes, _Alignof(k8s_port_t));
	pack_t p;
	void *arrays = NULL;
	size_t arrays_size = port_off + port_count * sizeof(k8s_port_t);
	k8s_slice_t *slice = object_alloc(sizeof(*slice), arrays_size, strings, &p, &arrays);
	if (slice == NULL) {
		return KNOT_ENOMEM;
	}
	meta_pack(&slice->meta, K8S_ENDPOINTSLICE, m, &p);
	slice->service = pack_str(&p, service, true);
	slice->mcs_service = pack_str(&p, mcs_service, true);
	slice->source_cluster = pack_str(&p, source_cluster, true);
	slice->unlabelled_pod = pack_str(&p, unlabelled, false);
	slice->family = family;
	str_t trigger = get_str(m->annotations, "endpoints.kubernetes.io/last-change-trigger-time");
	if (trigger.ptr != NULL) {
		slice->trigger_time_ns = k8s_rfc3339_parse(trigger.ptr);
	}

	k8s_endpoint_t *eps = arrays;
	size_t done = 0;
	for (size_t i = 0; i < ep_len && done < addr_count; i++) {
		endpoint_view_t v;
		endpoint_read(json_object_array_get_idx(endpoints, i), &v);
		const char *hostname = NULL;
		const char *target = NULL;
		bool packed = false;
		for (size_t j = 0; j < arr_len(v.addresses); j++) {
			k8s_ip_t ip;
			if (!address_read(v.addresses, j, family, &ip)) {
				continue;
			}
			k8s_endpoint_t *ep = &eps[done];
			ep->ip = ip;
			// The addresses of one endpoint share its name strings.
			if (!packed) {
				hostname = pack_str(&p, v.hostname, false);
				target = pack_str(&p, v.target, false);
				packed = true;
			}
			ep->ready = v.ready;
			ep->hostname = hostname;
			ep->target = target;
			done++;
		}
	}
	slice->endpoint_count = (uint32_t)addr_count;
	slice->endpoints = (addr_count > 0) ? eps : NULL;

	k8s_port_t *port_arr = (k8s_port_t *)((char *)arrays + port_off);
	slice->port_count = port_count;
	slice->ports = (port_count > 0) ? port_arr : NULL;
	ports_pack(ports, port_arr, port_count, &p);

	*out = &slice->meta;
	return KNOT_EOK;
}

static int namespace_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	pack_t p;
	k8s_namespace_t *ns = object_alloc(sizeof(*ns), 0, meta_strings(m), &p, NULL);
	if (ns == NULL) {
		return KNOT_ENOMEM;
	}
	meta_pack(&ns->meta, K8S_NAMESPACE, m, &p);
	*out = &ns->meta;
	return KNOT_EOK;
}

static int pod_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	json_object *spec = get_obj(root, "spec");
	json_object *status = get_obj(root, "status");

	pack_t p;
	k8s_pod_t *pod = object_alloc(sizeof(*pod), 0, meta_strings(m), &p, NULL);
	if (pod == NULL) {
		return KNOT_ENOMEM;
	}
	meta_pack(&pod->meta, K8S_POD, m, &p);

	str_t phase = get_str(status, "phase");
	bool finished = str_is(phase, "Succeeded") || str_is(phase, "Failed") ||
	                str_is(phase, "Unknown");
	bool deleting = get_str(m->metadata, "deletionTimestamp").ptr != NULL;
	pod->live = !finished && !deleting;
	pod->host_network = get_bool(spec, "hostNetwork", false);
	pod->ip_count = ips_read(get_arr(status, "podIPs"), "ip", pod->ips);
	if (pod->ip_count == 0 && ip_parse(get_str(status, "podIP"), AF_UNSPEC, &pod->ips[0])) {
		pod->ip_count = 1;
	}

	*out = &pod->meta;
	return KNOT_EOK;
}

static int serviceimport_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	json_object *spec = get_obj(root, "spec");
	json_object *ports = get_arr(spec, "ports");
	size_t strings = meta_strings(m);
	uint16_t port_count = ports_measure(ports, &strings);

	// status.clusters[].cluster: who exports it (lets the local cluster's endpoints join).
	json_object *clusters = get_arr(get_obj(root, "status"), "clusters");
	size_t cluster_len = arr_len(clusters);
	uint16_t cluster_count = 0;
	for (size_t i = 0; i < cluster_len && cluster_count < UINT16_MAX; i++) {
		str_t id = get_str(json_object_array_get_idx(clusters, i), "cluster");
		if (k8s_cluster_id_valid(id.ptr, id.len, true)) {
			strings += str_size(id);
			cluster_count++;
		}
	}

	size_t ids_off = ALIGN_UP(port_count * sizeof(k8s_port_t), _Alignof(char *));
	pack_t p;
	void *arrays = NULL;
	k8s_serviceimport_t *imp = object_alloc(sizeof(*imp),
	                                        ids_off + cluster_count * sizeof(char *),
	                                        strings, &p, &arrays);
	if (imp == NULL) {
		return KNOT_ENOMEM;
	}
	meta_pack(&imp->meta, K8S_SERVICEIMPORT, m, &p);
	imp->headless = str_is(get_str(spec, "type"), "Headless");
	imp->ip_count = ips_read(get_arr(spec, "ips"), NULL, imp->ips);
	imp->port_count = port_count;
	imp->ports = (port_count > 0) ? arrays : NULL;
	ports_pack(ports, arrays, port_count, &p);

	const char **ids = (const char **)((char *)arrays + ids_off);
	for (size_t i = 0; i < cluster_len && imp->cluster_count < cluster_count; i++) {
		str_t id = get_str(json_object_array_get_idx(clusters, i), "cluster");
		if (k8s_cluster_id_valid(id.ptr, id.len, true)) {
			ids[imp->cluster_count++] = pack_str(&p, id, true);
		}
	}
	imp->clusters = (cluster_count > 0) ? ids : NULL;

	*out = &imp->meta;
	return KNOT_EOK;
}

static int clusterproperty_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	str_t value = get_str(get_obj(root, "spec"), "value");
	if (value.len == 0) {
		value.ptr = NULL; // the schema requires at least one character
	}

	pack_t p;
	k8s_clusterproperty_t *prop = object_alloc(sizeof(*prop), 0,
	                                           meta_strings(m) + str_size(value), &p, NULL);
	if (prop == NULL) {
		return KNOT_ENOMEM;
	}
	meta_pack(&prop->meta, K8S_CLUSTERPROPERTY, m, &p);
	prop->value = pack_str(&p, value, false);

	*out = &prop->meta;
	return KNOT_EOK;
}

/*! A topology label: the current key, else the deprecated one; absent unless a DNS name. */
static str_t topology_label(const meta_t *m, const char *key, const char *deprecated)
{
	str_t s = get_str(m->labels, key);
	if (s.ptr == NULL) {
		s = get_str(m->labels, deprecated);
	}
	if (s.ptr == NULL || !k8s_dns_name_valid(s.ptr, s.len, K8S_DNS_LABEL_MAX, 0, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

static int node_decode(json_object *root, const meta_t *m, k8s_object_t **out)
{
	str_t zone = topology_label(m, "topology.kubernetes.io/zone",
	                            "failure-domain.beta.kubernetes.io/zone");
	str_t region = topology_label(m, "topology.kubernetes.io/region",
	                              "failure-domain.beta.kubernetes.io/region");

	pack_t p;
	k8s_node_t *node = object_alloc(sizeof(*node), 0,
	                                meta_strings(m) + str_size(zone) + str_size(region), &p, NULL);
	if (node == NULL) {
		return KNOT_ENOMEM;
	}
	meta_pack(&node->meta, K8S_NODE, m, &p);
	node->zone = pack_str(&p, zone, true);
	node->region = pack_str(&p, region, true);

	*out = &node->meta;
	return KNOT_EOK;
}

/*
 * Names as the API server checks them: a Service's is a DNS-1035 label, or a
 * DNS-1123 label with its RelaxedServiceNameValidation feature gate, which the
 * module cannot see, so it takes both; a Namespace's a DNS-1123 label; pods',
 * slices', nodes' and custom resources' (ServiceImport, ClusterProperty) DNS
 * subdomains, up to 253 bytes with labels of any length.
 */
static const kind_t KINDS[K8S_KIND_COUNT] = {
	[K8S_SERVICE] = { "services", "Service", true, true,
	                  service_decode, k8s_digest_service },
	[K8S_ENDPOINTSLICE] = { "endpointslices", "EndpointSlice", true, false,
	                        slice_decode, k8s_digest_slice },
	[K8S_NAMESPACE] = { "namespaces", "Namespace", false, true,
	                    namespace_decode, NULL },
	[K8S_POD] = { "pods", "Pod", true, false,
	              pod_decode, k8s_digest_pod },
	[K8S_SERVICEIMPORT] = { "serviceimports", "ServiceImport", true, false,
	                        serviceimport_decode, k8s_digest_serviceimport },
	[K8S_CLUSTERPROPERTY] = { "clusterproperties", "ClusterProperty", false, false,
	                          clusterproperty_decode, k8s_digest_clusterproperty },
	[K8S_NODE] = { "nodes", "Node", false, false,
	               node_decode, k8s_digest_node },
};

uint64_t k8s_object_digest(const k8s_object_t *obj)
{
	uint64_t h = k8s_digest_meta(obj);
	if ((unsigned)obj->kind < K8S_KIND_COUNT && KINDS[obj->kind].digest != NULL) {
		h = KINDS[obj->kind].digest(h, obj);
	}
	return h;
}

uint64_t k8s_object_digest_of(k8s_object_t *obj)
{
	if (!obj->digested) {
		obj->digest = k8s_object_digest(obj);
		obj->digested = true;
	}
	return obj->digest;
}

/* --- entry points -------------------------------------------------------------- */

int k8s_object_decode_json(k8s_kind_t kind, json_object *root, k8s_object_t **obj,
                           char *err, size_t errlen)
{
	if (!json_object_is_type(root, json_type_object)) {
		set_err(err, errlen, "not a json object");
		return KNOT_EMALF;
	}
	meta_t m;
	int ret = meta_read(kind, root, &m, err, errlen);
	if (ret != KNOT_EOK) {
		return ret;
	}

	ret = KINDS[kind].decode(root, &m, obj);
	if (ret != KNOT_EOK) {
		set_err(err, errlen, "cannot decode %s (%s)", k8s_kind_name(kind),
		        (ret == KNOT_ENOMEM) ? "out of memory" : "too many addresses");
		return ret;
	}
	(void)k8s_object_digest_of(*obj);
	return KNOT_EOK;
}

int k8s_object_decode(k8s_kind_t kind, const char *text, size_t len,
                      k8s_object_t **obj, char *err, size_t errlen)
{
	if ((unsigned)kind >= K8S_KIND_COUNT || text == NULL || obj == NULL) {
		return KNOT_EINVAL;
	}
	*obj = NULL;
	json_object *root = NULL;
	int ret = k8s_json_parse(text, len, &root, err, errlen);
	if (ret != KNOT_EOK) {
		return ret;
	}
	ret = k8s_object_decode_json(kind, root, obj, err, errlen);
	json_object_put(root);
	return ret;
}

void k8s_object_free(k8s_object_t *obj)
{
	k8s_bulk_free(obj);
}
