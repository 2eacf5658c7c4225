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
static k8s_str_t zone_read(k8s_str_t s)
{
	if (s.ptr == NULL || !k8s_dns_name_valid(s.ptr, s.len, K8S_DNS_LABEL_MAX, 0, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

/*! The keys of an endpoint read, in one walk of its keys (a slice has a thousand). */
enum { EP_ADDRESSES, EP_CONDITIONS, EP_HOSTNAME, EP_TARGET_REF, EP_ZONE, EP_KEYS };
static const k8s_jkey_t ENDPOINT_KEYS[EP_KEYS] = {
	[EP_ADDRESSES] = JKEY("addresses", K8S_JARRAY),
	[EP_CONDITIONS] = JKEY("conditions", K8S_JOBJECT),
	[EP_HOSTNAME] = JKEY("hostname", K8S_JSTRING),
	[EP_TARGET_REF] = JKEY("targetRef", K8S_JOBJECT),
	[EP_ZONE] = JKEY("zone", K8S_JSTRING),
};

enum { REF_KIND, REF_NAME, REF_KEYS };
static const k8s_jkey_t REF_KEYS_READ[REF_KEYS] = {
	[REF_KIND] = JKEY("kind", K8S_JSTRING),
	[REF_NAME] = JKEY("name", K8S_JSTRING),
};

static void endpoint_read(k8s_jv_t item, endpoint_view_t *v)
{
	k8s_jv_t at[EP_KEYS], ref[REF_KEYS];
	jv_pick(item, ENDPOINT_KEYS, EP_KEYS, at);
	jv_pick(at[EP_TARGET_REF], REF_KEYS_READ, REF_KEYS, ref);
	v->addresses = at[EP_ADDRESSES];
	v->ready = jv_bool(at[EP_CONDITIONS], "ready", true);
	v->hostname = k8s_decode_label(jv_str_of(at[EP_HOSTNAME]), false);
	k8s_str_t pod = str_is(jv_str_of(ref[REF_KIND]), "Pod") ? jv_str_of(ref[REF_NAME]) :
	                (k8s_str_t){ NULL, 0 };
	v->target = k8s_decode_label(pod, false);
	v->zone = zone_read(jv_str_of(at[EP_ZONE]));
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

/*! An address read from a slice, with the endpoint it belongs to (its index in the views). */
typedef struct {
	k8s_ip_t ip;
	size_t view;
} address_seen_t;

/*! A slice's endpoints as read once: a view of each, their valid addresses. */
typedef struct {
	endpoint_view_t *views;  /*!< jv_len(endpoints) of them. */
	address_seen_t *seen;
	size_t seen_count, seen_cap;
} endpoints_read_t;

static void endpoints_free(endpoints_read_t *e)
{
	free(e->views);
	free(e->seen);
}

/*! Keeps an address; the array grows by doubling (past one address an endpoint). */
static int address_keep(endpoints_read_t *e, const k8s_ip_t *ip, size_t view)
{
	if (e->seen_count == e->seen_cap) {
		size_t cap = 2 * e->seen_cap;
		address_seen_t *grown = (cap > SIZE_MAX / sizeof(*grown)) ? NULL :
		                        realloc(e->seen, cap * sizeof(*grown));
		if (grown == NULL) {
			return KNOT_ENOMEM;
		}
		e->seen = grown;
		e->seen_cap = cap;
	}
	e->seen[e->seen_count].ip = *ip;
	e->seen[e->seen_count].view = view;
	e->seen_count++;
	return KNOT_EOK;
}

/*!
 * Reads the slice's endpoints, each once, and their valid addresses of \a family into
 * \a e; the bytes of the strings kept are added to \a strings, the first endpoint with
 * an address and a pod name that is no label in \a unlabelled.
 */
static int endpoints_read(k8s_jv_t endpoints, int family, endpoints_read_t *e,
                          size_t *strings, k8s_str_t *unlabelled)
{
	memset(e, 0, sizeof(*e));
	size_t count = jv_len(endpoints);  // at most K8S_JSON_VALUES_MAX: the product fits
	if (count == 0) {
		return KNOT_EOK;
	}
	e->views = malloc(count * sizeof(*e->views));
	e->seen = malloc(count * sizeof(*e->seen));  // one address an endpoint, as a rule
	if (e->views == NULL || e->seen == NULL) {
		return KNOT_ENOMEM;
	}
	e->seen_cap = count;
	size_t view = 0;
	JV_EACH(item, endpoints) {
		endpoint_view_t *v = &e->views[view];
		endpoint_read(item, v);
		size_t before = e->seen_count;
		JV_EACH(address, v->addresses) {
			k8s_ip_t ip;
			if (address_read(address, family, &ip) && address_keep(e, &ip, view) != KNOT_EOK) {
				return KNOT_ENOMEM;
			}
		}
		if (e->seen_count > before) {
			*strings += k8s_str_size(v->hostname) + k8s_str_size(v->target) +
			            k8s_str_size(v->zone);
			if (unlabelled->ptr == NULL) {
				*unlabelled = v->unlabelled;
			}
		}
		view++;
	}
	return KNOT_EOK;
}

/*! The endpoints of \a seen into \a eps, an endpoint's name strings packed once for its addresses. */
static void endpoints_pack(const endpoint_view_t *views, const address_seen_t *seen,
                           size_t count, k8s_endpoint_t *eps, k8s_pack_t *p)
{
	const char *hostname = NULL, *target = NULL, *zone = NULL;
	for (size_t i = 0; i < count; i++) {
		const endpoint_view_t *v = &views[seen[i].view];
		if (i == 0 || seen[i].view != seen[i - 1].view) {
			hostname = k8s_pack_str(p, v->hostname, false);
			target = k8s_pack_str(p, v->target, false);
			zone = k8s_pack_str(p, v->zone, true);
		}
		eps[i].ip = seen[i].ip;
		eps[i].ready = v->ready;
		eps[i].hostname = hostname;
		eps[i].target = target;
		eps[i].zone = zone;
	}
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
	endpoints_read_t read;
	k8s_str_t unlabelled = { NULL, 0 };
	int ret = endpoints_read(endpoints, family, &read, &strings, &unlabelled);
	if (ret != KNOT_EOK) {
		goto done;
	}
	size_t addr_count = read.seen_count;
	strings += k8s_str_size(unlabelled);

	k8s_jv_t ports = jv_arr(root, "ports");
	uint16_t port_count = k8s_ports_measure(ports, &strings);
	size_t ep_bytes = addr_count * sizeof(k8s_endpoint_t);
	size_t port_off = K8S_ALIGN_UP(ep_bytes, _Alignof(k8s_port_t));
	k8s_pack_t p;
	void *arrays = NULL;
	size_t arrays_size = port_off + port_count * sizeof(k8s_port_t);
	k8s_slice_t *slice = (addr_count > UINT32_MAX) ? NULL :
	                     k8s_decode_alloc(sizeof(*slice), arrays_size, strings, &p, &arrays);
	if (slice == NULL) {
		ret = (addr_count > UINT32_MAX) ? KNOT_ERANGE : KNOT_ENOMEM;
		goto done;
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
	endpoints_pack(read.views, read.seen, addr_count, eps, &p);
	slice->endpoint_count = (uint32_t)addr_count;
	slice->endpoints = (addr_count > 0) ? eps : NULL;

	k8s_port_t *port_arr = (k8s_port_t *)((char *)arrays + port_off);
	slice->port_count = port_count;
	slice->ports = k8s_ports_pack(ports, port_arr, port_count, &p);

	*out = &slice->meta;
done:
	endpoints_free(&read);
	return ret;
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
