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
 * core/v1 Service: its slim structure (kind_service.h) from the API JSON, its digest,
 * its snapshot form, and its name rule (a DNS label).
 */

#include <arpa/inet.h>

#include "kinds/kind_priv.h"

/*! \brief The valid addresses of a list (strings, or objects' \a key), after \a count of them. */
static size_t externals_read(k8s_jv_t arr, const char *key, k8s_ip_t *out, size_t count)
{
	for (k8s_jv_t item = jv_first(arr); item.t != NULL && count < K8S_EXTERNAL_MAX;
	     item = jv_next(arr, item)) {
		k8s_ip_t ip;
		if (k8s_decode_ip((key != NULL) ? jv_str(item, key) : jv_str_of(item), AF_UNSPEC, &ip)) {
			if (out != NULL) {
				out[count] = ip;
			}
			count++;
		}
	}
	return count;
}

static int service_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	k8s_jv_t spec = jv_obj(root, "spec");
	k8s_str_t type = jv_str(spec, "type");

	// clusterIPs[0] equals clusterIP; servers older than dual-stack send clusterIP only.
	k8s_jv_t ip_list = jv_arr(spec, "clusterIPs");
	k8s_jv_t ip_one = jv_get(spec, "clusterIP", K8S_JSTRING);
	k8s_str_t first = (jv_len(ip_list) > 0) ? jv_str_of(jv_first(ip_list)) : jv_str_of(ip_one);

	k8s_service_t head = { 0 };
	k8s_str_t external = { NULL, 0 };
	if (str_is(type, "ExternalName")) {
		head.type = K8S_SVC_EXTERNALNAME;
		external = k8s_decode_hostname(jv_str(spec, "externalName"));
	} else if ((type.ptr == NULL || str_is(type, "ClusterIP")) && str_is(first, "None")) {
		head.type = K8S_SVC_HEADLESS;
	} else {
		head.type = K8S_SVC_CLUSTERIP;
		if (jv_len(ip_list) > 0) {
			head.ip_count = k8s_decode_ips(ip_list, NULL, head.ips);
		} else if (k8s_decode_ip(jv_str_of(ip_one), AF_UNSPEC, &head.ips[0])) {
			head.ip_count = 1;
		}
	}
	if (head.type != K8S_SVC_EXTERNALNAME) {
		k8s_jv_t ingress = jv_arr(jv_obj(jv_obj(root, "status"), "loadBalancer"), "ingress");
		head.ingress_count = k8s_decode_ips(ingress, "ip", head.ingress);
	}
	k8s_str_t tolerate = jv_str(m->annotations,
	                         "service.alpha.kubernetes.io/tolerate-unready-endpoints");
	head.publish_not_ready = jv_bool(spec, "publishNotReadyAddresses", false) ||
	                         str_is(tolerate, "true");

	k8s_jv_t ports = jv_arr(spec, "ports");
	size_t strings = k8s_meta_strings(m) + k8s_str_size(external);
	uint16_t port_count = k8s_ports_measure(ports, &strings);
	// As CoreDNS's ExternalIPs: of every type, the spec's first, then the load balancer's.
	k8s_jv_t external_ips = jv_arr(spec, "externalIPs");
	k8s_jv_t lb = jv_arr(jv_obj(jv_obj(root, "status"), "loadBalancer"), "ingress");
	size_t external_count = externals_read(lb, "ip", NULL,
	                                       externals_read(external_ips, NULL, NULL, 0));

	k8s_pack_t p;
	void *arrays = NULL;
	size_t ports_size = port_count * sizeof(k8s_port_t);
	k8s_service_t *svc = k8s_decode_alloc(sizeof(*svc),
	                                      ports_size + external_count * sizeof(k8s_ip_t),
	                                      strings, &p, &arrays);
	if (svc == NULL) {
		return KNOT_ENOMEM;
	}
	*svc = head;
	k8s_meta_pack(&svc->meta, K8S_SERVICE, m, &p);
	svc->external_name = k8s_pack_str(&p, external, true);
	svc->port_count = port_count;
	svc->ports = k8s_ports_pack(ports, arrays, port_count, &p);
	k8s_ip_t *externals = (k8s_ip_t *)((char *)arrays + ports_size);
	svc->external_count = (uint8_t)externals_read(lb, "ip", externals,
	                                              externals_read(external_ips, NULL, externals, 0));
	svc->externals = (svc->external_count > 0) ? externals : NULL;

	*out = &svc->meta;
	return KNOT_EOK;
}

static uint64_t service_digest(uint64_t h, const k8s_object_t *obj)
{
	const k8s_service_t *svc = (const k8s_service_t *)obj;
	h = k8s_digest_u64(h, svc->type);
	h = k8s_digest_u64(h, svc->publish_not_ready);
	h = k8s_digest_ips(h, svc->ips, svc->ip_count);
	h = k8s_digest_ips(h, svc->ingress, svc->ingress_count);
	h = k8s_digest_str(h, svc->external_name);
	// In order: CoreDNS answers them so (and the first is not special, but order is cheap).
	h = k8s_digest_u64(h, svc->external_count);
	for (uint8_t i = 0; i < svc->external_count; i++) {
		h = k8s_digest_ip(h, &svc->externals[i]);
	}
	return k8s_digest_ports(h, svc->ports, svc->port_count);
}

/*! Counts: u16 ports, u8 external addresses. */
static void service_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_service_t *svc = (const k8s_service_t *)obj;
	k8s_form_put_u(w, svc->port_count, 2);
	k8s_form_put_u(w, svc->external_count, 1);
	k8s_form_put_meta(w, obj);
	k8s_form_put_u(w, svc->type, 1);
	k8s_form_put_u(w, svc->publish_not_ready, 1);
	k8s_form_put_ips(w, svc->ips, svc->ip_count);
	k8s_form_put_ips(w, svc->ingress, svc->ingress_count);
	k8s_form_put_str(w, svc->external_name);
	k8s_form_put_ports(w, svc->ports, svc->port_count);
	for (uint8_t i = 0; i < svc->external_count; i++) {
		k8s_form_put_ip(w, &svc->externals[i]);
	}
}

/*! Fewest bytes an external address takes in the form: a tag and IPv4. */
#define FORM_EXTERNAL_MIN 5

static k8s_object_t *service_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	uint16_t port_count = (uint16_t)k8s_form_get_count(r, 2, K8S_FORM_PORT_MIN);
	uint8_t external_count = (uint8_t)k8s_form_get_count(r, 1, FORM_EXTERNAL_MIN);
	k8s_form_check(r, external_count <= K8S_EXTERNAL_MAX, "more external addresses than kept");
	size_t ports_size = port_count * sizeof(k8s_port_t);
	k8s_service_t *svc = k8s_form_alloc(r, sizeof(*svc),
	                                    ports_size + external_count * sizeof(k8s_ip_t),
	                                    strings, &arrays);
	if (svc == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &svc->meta, K8S_SERVICE);
	svc->type = (uint8_t)k8s_form_get_u(r, 1);
	k8s_form_check(r, svc->type <= K8S_SVC_EXTERNALNAME, "unknown service type");
	svc->publish_not_ready = k8s_form_get_bool(r);
	svc->ip_count = k8s_form_get_ips(r, svc->ips);
	svc->ingress_count = k8s_form_get_ips(r, svc->ingress);
	svc->external_name = k8s_form_get_str(r, K8S_FORM_NAME, false);
	// As the decoder keeps them: cluster IPs of ClusterIP services, ingress of all but
	// ExternalName services, a target of ExternalName services only.
	k8s_form_check(r, (svc->ip_count == 0 || svc->type == K8S_SVC_CLUSTERIP) &&
	                  (svc->ingress_count == 0 || svc->type != K8S_SVC_EXTERNALNAME) &&
	                  (svc->external_name == NULL || svc->type == K8S_SVC_EXTERNALNAME),
	               "fields of another service type");
	svc->port_count = port_count;
	svc->ports = k8s_form_get_ports(r, arrays, port_count);
	k8s_ip_t *externals = (k8s_ip_t *)((char *)arrays + ports_size);
	for (uint8_t i = 0; i < external_count && r->bad == NULL; i++) {
		k8s_form_get_ip(r, AF_UNSPEC, &externals[i]);
	}
	svc->external_count = (r->bad == NULL) ? external_count : 0;
	svc->externals = (svc->external_count > 0) ? externals : NULL;
	return &svc->meta;
}

/*!
 * A DNS-1035 label, or a DNS-1123 label with RelaxedServiceNameValidation: both taken.
 * Form 1: the external addresses.
 */
const k8s_kind_def_t k8s_kind_service = {
	.plural = "services", .field = "Service", .namespaced = true, .name_is_label = true,
	.form = 1,
	.decode = service_decode, .digest = service_digest,
	.write = service_write, .read = service_read,
};
