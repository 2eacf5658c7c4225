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
 * multicluster.x-k8s.io ServiceImport: its slim structure (kind_serviceimport.h) from
 * the API JSON, its digest, its snapshot form, and its name rule (a DNS subdomain, as
 * the API server checks a custom resource's; only one that is a DNS label names
 * records, store.c).
 */

#include "kinds/kind_priv.h"

static int serviceimport_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	k8s_jv_t spec = jv_obj(root, "spec");
	k8s_jv_t ports = jv_arr(spec, "ports");
	size_t strings = k8s_meta_strings(m);
	uint16_t port_count = k8s_ports_measure(ports, &strings);

	// status.clusters[].cluster: who exports it (lets the local cluster's endpoints join).
	k8s_jv_t clusters = jv_arr(jv_obj(root, "status"), "clusters");
	uint16_t cluster_count = 0;
	JV_EACH(item, clusters) {
		if (cluster_count == UINT16_MAX) {
			break;
		}
		k8s_str_t id = jv_str(item, "cluster");
		if (k8s_cluster_id_valid(id.ptr, id.len, true)) {
			strings += k8s_str_size(id);
			cluster_count++;
		}
	}

	size_t ids_off = K8S_ALIGN_UP(port_count * sizeof(k8s_port_t), _Alignof(char *));
	k8s_pack_t p;
	void *arrays = NULL;
	k8s_serviceimport_t *imp = k8s_decode_alloc(sizeof(*imp),
	                                            ids_off + cluster_count * sizeof(char *),
	                                            strings, &p, &arrays);
	if (imp == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&imp->meta, K8S_SERVICEIMPORT, m, &p);
	imp->headless = str_is(jv_str(spec, "type"), "Headless");
	imp->ip_count = k8s_decode_ips(jv_arr(spec, "ips"), NULL, imp->ips);
	imp->port_count = port_count;
	imp->ports = k8s_ports_pack(ports, arrays, port_count, &p);

	const char **ids = (const char **)((char *)arrays + ids_off);
	JV_EACH(item, clusters) {
		if (imp->cluster_count == cluster_count) {
			break;
		}
		k8s_str_t id = jv_str(item, "cluster");
		if (k8s_cluster_id_valid(id.ptr, id.len, true)) {
			ids[imp->cluster_count++] = k8s_pack_str(&p, id, true);
		}
	}
	imp->clusters = (cluster_count > 0) ? ids : NULL;

	*out = &imp->meta;
	return KNOT_EOK;
}

/*! Ports and clusters as sets. */
static uint64_t serviceimport_digest(uint64_t h, const k8s_object_t *obj)
{
	const k8s_serviceimport_t *imp = (const k8s_serviceimport_t *)obj;
	h = k8s_digest_u64(h, imp->headless);
	h = k8s_digest_ips(h, imp->ips, imp->ip_count);
	h = k8s_digest_ports(h, imp->ports, imp->port_count);
	uint64_t sum = 0;
	for (uint16_t i = 0; i < imp->cluster_count; i++) {
		sum += k8s_digest_mix(k8s_digest_str(K8S_DIGEST_INIT, imp->clusters[i]));
	}
	return k8s_digest_u64(k8s_digest_u64(h, imp->cluster_count), sum);
}

/*! Counts: u16 ports, u16 clusters. */
static void serviceimport_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_serviceimport_t *imp = (const k8s_serviceimport_t *)obj;
	k8s_form_put_u(w, imp->port_count, 2);
	k8s_form_put_u(w, imp->cluster_count, 2);
	k8s_form_put_meta(w, obj);
	k8s_form_put_u(w, imp->headless, 1);
	k8s_form_put_ips(w, imp->ips, imp->ip_count);
	k8s_form_put_ports(w, imp->ports, imp->port_count);
	for (uint16_t i = 0; i < imp->cluster_count; i++) {
		k8s_form_put_str(w, imp->clusters[i]);
	}
}

static k8s_object_t *serviceimport_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	uint16_t port_count = (uint16_t)k8s_form_get_count(r, 2, K8S_FORM_PORT_MIN);
	uint16_t cluster_count = (uint16_t)k8s_form_get_count(r, 2, K8S_FORM_CLUSTER_MIN);
	size_t ids_off = K8S_ALIGN_UP(port_count * sizeof(k8s_port_t), _Alignof(char *));
	k8s_serviceimport_t *imp = k8s_form_alloc(r, sizeof(*imp),
	                                          ids_off + cluster_count * sizeof(char *),
	                                          strings, &arrays);
	if (imp == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &imp->meta, K8S_SERVICEIMPORT);
	imp->headless = k8s_form_get_bool(r);
	imp->ip_count = k8s_form_get_ips(r, imp->ips);
	imp->port_count = port_count;
	imp->ports = k8s_form_get_ports(r, arrays, port_count);
	const char **ids = (const char **)((char *)arrays + ids_off);
	for (uint16_t i = 0; i < cluster_count; i++) {
		ids[i] = k8s_form_get_str(r, K8S_FORM_CLUSTER, true);
	}
	imp->cluster_count = cluster_count;
	imp->clusters = (cluster_count > 0) ? ids : NULL;
	return &imp->meta;
}

const k8s_kind_def_t k8s_kind_serviceimport = {
	.plural = "serviceimports", .field = "ServiceImport", .namespaced = true,
	.name_is_label = false,
	.decode = serviceimport_decode, .digest = serviceimport_digest,
	.write = serviceimport_write, .read = serviceimport_read,
};
