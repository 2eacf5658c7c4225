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
 * core/v1 Node: its topology labels (kind_node.h) from the API JSON, its digest, its
 * snapshot form, and its name rule (a DNS subdomain).
 */

#include "kinds/kind_priv.h"

/*! A topology label: the current key, else the deprecated one; absent unless a DNS name. */
static k8s_str_t topology_label(const k8s_meta_t *m, const char *key, const char *deprecated)
{
	k8s_str_t s = jv_str(m->labels, key);
	if (s.ptr == NULL) {
		s = jv_str(m->labels, deprecated);
	}
	if (s.ptr == NULL || !k8s_dns_name_valid(s.ptr, s.len, K8S_DNS_LABEL_MAX, 0, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

static int node_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	(void)root;
	k8s_str_t zone = topology_label(m, "topology.kubernetes.io/zone",
	                            "failure-domain.beta.kubernetes.io/zone");
	k8s_str_t region = topology_label(m, "topology.kubernetes.io/region",
	                              "failure-domain.beta.kubernetes.io/region");

	k8s_pack_t p;
	k8s_node_t *node = k8s_decode_alloc(sizeof(*node), 0,
	                                    k8s_meta_strings(m) + k8s_str_size(zone) +
	                                    k8s_str_size(region), &p, NULL);
	if (node == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&node->meta, K8S_NODE, m, &p);
	node->zone = k8s_pack_str(&p, zone, true);
	node->region = k8s_pack_str(&p, region, true);

	*out = &node->meta;
	return KNOT_EOK;
}

static uint64_t node_digest(uint64_t h, const k8s_object_t *obj)
{
	const k8s_node_t *node = (const k8s_node_t *)obj;
	h = k8s_digest_str(h, node->zone);
	return k8s_digest_str(h, node->region);
}

static void node_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_node_t *node = (const k8s_node_t *)obj;
	k8s_form_put_meta(w, obj);
	k8s_form_put_str(w, node->zone);
	k8s_form_put_str(w, node->region);
}

static k8s_object_t *node_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	k8s_node_t *node = k8s_form_alloc(r, sizeof(*node), 0, strings, &arrays);
	if (node == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &node->meta, K8S_NODE);
	node->zone = k8s_form_get_str(r, K8S_FORM_TOPOLOGY, false);
	node->region = k8s_form_get_str(r, K8S_FORM_TOPOLOGY, false);
	return &node->meta;
}

const k8s_kind_def_t k8s_kind_node = {
	.plural = "nodes", .field = "Node", .namespaced = false, .name_is_label = false,
	.decode = node_decode, .digest = node_digest,
	.write = node_write, .read = node_read,
};
