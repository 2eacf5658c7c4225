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
 * core/v1 Pod: its slim structure (kind_pod.h) from the API JSON, its digest, its
 * snapshot form, and its name rule (a DNS subdomain).
 */

#include <arpa/inet.h>

#include "kinds/kind_priv.h"

static int pod_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	k8s_jv_t spec = jv_obj(root, "spec");
	k8s_jv_t status = jv_obj(root, "status");

	k8s_pack_t p;
	k8s_pod_t *pod = k8s_decode_alloc(sizeof(*pod), 0, k8s_meta_strings(m), &p, NULL);
	if (pod == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&pod->meta, K8S_POD, m, &p);

	k8s_str_t phase = jv_str(status, "phase");
	bool finished = str_is(phase, "Succeeded") || str_is(phase, "Failed") ||
	                str_is(phase, "Unknown");
	bool deleting = jv_str(m->metadata, "deletionTimestamp").ptr != NULL;
	pod->live = !finished && !deleting;
	pod->host_network = jv_bool(spec, "hostNetwork", false);
	pod->ip_count = k8s_decode_ips(jv_arr(status, "podIPs"), "ip", pod->ips);
	if (pod->ip_count == 0 &&
	    k8s_decode_ip(jv_str(status, "podIP"), AF_UNSPEC, &pod->ips[0])) {
		pod->ip_count = 1;
	}

	*out = &pod->meta;
	return KNOT_EOK;
}

static uint64_t pod_digest(uint64_t h, const k8s_object_t *obj)
{
	const k8s_pod_t *pod = (const k8s_pod_t *)obj;
	h = k8s_digest_u64(h, pod->live);
	h = k8s_digest_u64(h, pod->host_network);
	return k8s_digest_ips(h, pod->ips, pod->ip_count);
}

static void pod_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_pod_t *pod = (const k8s_pod_t *)obj;
	k8s_form_put_meta(w, obj);
	k8s_form_put_u(w, pod->live, 1);
	k8s_form_put_u(w, pod->host_network, 1);
	k8s_form_put_ips(w, pod->ips, pod->ip_count);
}

static k8s_object_t *pod_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	k8s_pod_t *pod = k8s_form_alloc(r, sizeof(*pod), 0, strings, &arrays);
	if (pod == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &pod->meta, K8S_POD);
	pod->live = k8s_form_get_bool(r);
	pod->host_network = k8s_form_get_bool(r);
	pod->ip_count = k8s_form_get_ips(r, pod->ips);
	return &pod->meta;
}

const k8s_kind_def_t k8s_kind_pod = {
	.plural = "pods", .field = "Pod", .namespaced = true, .name_is_label = false,
	.decode = pod_decode, .digest = pod_digest,
	.write = pod_write, .read = pod_read,
};
