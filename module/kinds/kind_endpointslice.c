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
 * discovery.k8s.io/v1 EndpointSlice, the cluster's own or imported: its slim structure
 * (kind_endpointslice.h) from the API JSON, its digest, its snapshot form, and its
 * name rule (a DNS subdomain).
 */

#include <arpa/inet.h>

#include "kinds/kind_priv.h"
#include "lib/rfc3339.h"

/*! Fewest bytes an endpoint takes in the snapshot: IPv4, bool ready, str hostname, target, zone. */
#define ENDPOINT_MIN 8

/*! The DNS fields of one EndpointSlice endpoint, shared by its addresses. */
typedef struct {
	k8s_jv_t addresses;
	bool ready;
	k8s_str_t hostname;
	k8s_str_t target;
	k8s_str_t zone;
	k8s_str_t unlabelled;  /*!< A pod name that cannot be a DNS label (k8s_slice_t). */
} endpoint_view_t;

/*! A zone a query name can spell (zonal names): labels of at most 63 bytes, as a node's. */
static k8s_str_t zone_read(k8s_jv_t item)
{
	k8s_str_t s = jv_str(item, "zone");
	if (s.ptr == NULL || !k8s_dns_name_valid(s.ptr, s.len, K8S_DNS_LABEL_MAX, 0, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

static void endpoint_read(k8s_jv_t item, endpoint_view_t *v)
{
	v->addresses = jv_arr(item, "addresses");
	v->ready = jv_bool(jv_obj(item, "conditions"), "ready", true);
	v->hostname = k8s_decode_label(jv_str(item, "hostname"), false);
	k8s_jv_t ref = jv_obj(item, "targetRef");
	k8s_str_t pod = str_is(jv_str(ref, "kind"), "Pod") ? jv_str(ref, "name") : (k8s_str_t){ NULL, 0 };
	v->target = k8s_decode_label(pod, false);
	v->zone = zone_read(item);
	v->unlabelled = (k8s_str_t){ NULL, 0 };
	if (v->target.ptr == NULL && pod.ptr != NULL && k8s_dns_subdomain_valid(pod.ptr, pod.len)) {
		v->unlabelled = pod;
	}
}

/*! An address of an endpoint, if it is a valid IP of the slice's family. */
static bool address_read(k8s_jv_t address, int family, k8s_ip_t *ip)
{
	return k8s_decode_ip(jv_str_of(address), family, ip);
}

/*! Label values may be mixed case; a slice's service is found by its lowercase name. */
static k8s_str_t slice_label(const k8s_meta_t *m, const char *key)
{
	return k8s_decode_label(jv_str(m->labels, key), true);
}

static k8s_str_t cluster_label(const k8s_meta_t *m)
{
	k8s_str_t s = jv_str(m->labels, "multicluster.kubernetes.io/source-cluster");
	if (!k8s_cluster_id_valid(s.ptr, s.len, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

static int slice_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	k8s_str_t service = slice_label(m, "kubernetes.io/service-name");
	k8s_str_t mcs_service = slice_label(m, "multicluster.kubernetes.io/service-name");
	k8s_str_t source_cluster = cluster_label(m);

	k8s_str_t type = jv_str(root, "addressType");
	uint8_t family = str_is(type, "IPv4") ? AF_INET : str_is(type, "IPv6") ? AF_INET6 : 0;

	size_t strings = k8s_meta_strings(m) + k8s_str_size(service) + k8s_str_size(mcs_service) +
	                 k8s_str_size(source_cluster);

	// FQDN slices keep no addresses: their endpoints are not read.
	k8s_jv_t endpoints = (family != 0) ? jv_arr(root, "endpoints") : (k8s_jv_t){ NULL, 0 };
	size_t addr_count = 0;
	k8s_str_t unlabelled = { NULL, 0 };
	JV_EACH(item, endpoints) {
		endpoint_view_t v;
		endpoint_read(item, &v);
		size_t valid = 0;
		JV_EACH(address, v.addresses) {
			k8s_ip_t ip;
			valid += address_read(address, family, &ip);
		}
		if (valid > 0) {
			addr_count += valid;
			strings += k8s_str_size(v.hostname) + k8s_str_size(v.target) +
			           k8s_str_size(v.zone);
			if (unlabelled.ptr == NULL) {
				unlabelled = v.unlabelled;
			}
		}
	}
	strings += k8s_str_size(unlabelled);
	if (addr_count > UINT32_MAX) {
		return KNOT_ERANGE;
	}

	k8s_jv_t ports = jv_arr(root, "ports");
	uint16_t port_count = k8s_ports_measure(ports, &strings);

	size_t ep_bytes = addr_count * sizeof(k8s_endpoint_t);
	size_t port_off = K8S_ALIGN_UP(ep_bytes, _Alignof(k8s_port_t));
	k8s_pack_t p;
	void *arrays = NULL;
	size_t arrays_size = port_off + port_count * sizeof(k8s_port_t);
	k8s_slice_t *slice = k8s_decode_alloc(sizeof(*slice), arrays_size, strings, &p, &arrays);
	if (slice == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&slice->meta, K8S_ENDPOINTSLICE, m, &p);
	slice->service = k8s_pack_str(&p, service, true);
	slice->mcs_service = k8s_pack_str(&p, mcs_service, true);
	slice->source_cluster = k8s_pack_str(&p, source_cluster, true);
	slice->unlabelled_pod = k8s_pack_str(&p, unlabelled, false);
	slice->family = family;
	k8s_str_t trigger = jv_str(m->annotations, "endpoints.kubernetes.io/last-change-trigger-time");
	char stamp[64];  // the tape's strings are not terminated; a longer one is no timestamp
	if (trigger.ptr != NULL && trigger.len < sizeof(stamp)) {
		memcpy(stamp, trigger.ptr, trigger.len);
		stamp[trigger.len] = '\0';
		slice->trigger_time_ns = k8s_rfc3339_parse(stamp);
	}

	k8s_endpoint_t *eps = arrays;
	size_t done = 0;
	JV_EACH(item, endpoints) {
		if (done == addr_count) {
			break;
		}
		endpoint_view_t v;
		endpoint_read(item, &v);
		const char *hostname = NULL;
		const char *target = NULL;
		const char *zone = NULL;
		bool packed = false;
		JV_EACH(address, v.addresses) {
			k8s_ip_t ip;
			if (!address_read(address, family, &ip)) {
				continue;
			}
			k8s_endpoint_t *ep = &eps[done];
			ep->ip = ip;
			// The addresses of one endpoint share its name strings.
			if (!packed) {
				hostname = k8s_pack_str(&p, v.hostname, false);
				target = k8s_pack_str(&p, v.target, false);
				zone = k8s_pack_str(&p, v.zone, true);
				packed = true;
			}
			ep->ready = v.ready;
			ep->hostname = hostname;
			ep->target = target;
			ep->zone = zone;
			done++;
		}
	}
	slice->endpoint_count = (uint32_t)addr_count;
	slice->endpoints = (addr_count > 0) ? eps : NULL;

	k8s_port_t *port_arr = (k8s_port_t *)((char *)arrays + port_off);
	slice->port_count = port_count;
	slice->ports = k8s_ports_pack(ports, port_arr, port_count, &p);

	*out = &slice->meta;
	return KNOT_EOK;
}

/*! Endpoints as a set; the trigger time is metadata and left out, as unlabelled_pod. */
static uint64_t slice_digest(uint64_t h, const k8s_object_t *obj)
{
	const k8s_slice_t *slice = (const k8s_slice_t *)obj;
	h = k8s_digest_str(h, slice->service);
	h = k8s_digest_str(h, slice->mcs_service);
	h = k8s_digest_str(h, slice->source_cluster);
	h = k8s_digest_u64(h, slice->family);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < slice->endpoint_count; i++) {
		const k8s_endpoint_t *ep = &slice->endpoints[i];
		uint64_t e = k8s_digest_ip(K8S_DIGEST_INIT, &ep->ip);
		e = k8s_digest_u64(e, ep->ready);
		e = k8s_digest_str(e, ep->hostname);
		e = k8s_digest_str(e, ep->target);
		e = k8s_digest_str(e, ep->zone);
		sum += k8s_digest_mix(e);
	}
	h = k8s_digest_u64(k8s_digest_u64(h, slice->endpoint_count), sum);
	return k8s_digest_ports(h, slice->ports, slice->port_count);
}

/*! Counts: u32 endpoints, u16 ports. */
static void slice_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_slice_t *slice = (const k8s_slice_t *)obj;
	k8s_form_put_u(w, slice->endpoint_count, 4);
	k8s_form_put_u(w, slice->port_count, 2);
	k8s_form_put_meta(w, obj);
	k8s_form_put_str(w, slice->service);
	k8s_form_put_str(w, slice->mcs_service);
	k8s_form_put_str(w, slice->source_cluster);
	k8s_form_put_u(w, (slice->family == AF_INET) ? 4 : (slice->family == AF_INET6) ? 6 : 0, 1);
	// The addresses only: their family is the slice's.
	size_t ip_len = (slice->family == AF_INET) ? 4 : 16;
	for (uint32_t i = 0; i < slice->endpoint_count; i++) {
		const k8s_endpoint_t *ep = &slice->endpoints[i];
		k8s_form_put(w, ep->ip.bytes, ip_len);
		k8s_form_put_u(w, ep->ready, 1);
		k8s_form_put_str(w, ep->hostname);
		k8s_form_put_str(w, ep->target);
		k8s_form_put_str(w, ep->zone);
	}
	k8s_form_put_ports(w, slice->ports, slice->port_count);
}

static k8s_object_t *slice_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	uint32_t ep_count = (uint32_t)k8s_form_get_count(r, 4, ENDPOINT_MIN);
	uint16_t port_count = (uint16_t)k8s_form_get_count(r, 2, K8S_FORM_PORT_MIN);
	size_t port_off = K8S_ALIGN_UP(ep_count * sizeof(k8s_endpoint_t), _Alignof(k8s_port_t));
	k8s_slice_t *slice = k8s_form_alloc(r, sizeof(*slice),
	                                    port_off + port_count * sizeof(k8s_port_t),
	                                    strings, &arrays);
	if (slice == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &slice->meta, K8S_ENDPOINTSLICE);
	slice->service = k8s_form_get_str(r, K8S_FORM_LABEL, false);
	slice->mcs_service = k8s_form_get_str(r, K8S_FORM_LABEL, false);
	slice->source_cluster = k8s_form_get_str(r, K8S_FORM_CLUSTER, false);
	uint64_t tag = k8s_form_get_u(r, 1);
	k8s_form_check(r, tag == 0 || tag == 4 || tag == 6, "unknown address family");
	slice->family = (tag == 4) ? AF_INET : (tag == 6) ? AF_INET6 : 0;
	// FQDN slices keep no addresses.
	k8s_form_check(r, slice->family != 0 || ep_count == 0, "addresses in an fqdn slice");
	k8s_endpoint_t *eps = arrays;
	for (uint32_t i = 0; i < ep_count && r->bad == NULL; i++) {
		k8s_form_get_ip(r, slice->family, &eps[i].ip);
		eps[i].ready = k8s_form_get_bool(r);
		eps[i].hostname = k8s_form_get_str(r, K8S_FORM_LABEL, false);
		eps[i].target = k8s_form_get_str(r, K8S_FORM_LABEL, false);
		eps[i].zone = k8s_form_get_str(r, K8S_FORM_TOPOLOGY, false);
	}
	slice->endpoint_count = ep_count;
	slice->endpoints = (ep_count > 0) ? eps : NULL;
	k8s_port_t *ports = (k8s_port_t *)((char *)arrays + port_off);
	slice->port_count = port_count;
	slice->ports = k8s_form_get_ports(r, ports, port_count);
	return &slice->meta;
}

/*! Form 1: an endpoint's zone. */
const k8s_kind_def_t k8s_kind_endpointslice = {
	.plural = "endpointslices", .field = "EndpointSlice", .namespaced = true,
	.name_is_label = false, .form = 1,
	.decode = slice_decode, .digest = slice_digest,
	.write = slice_write, .read = slice_read,
};
