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
 * about.k8s.io ClusterProperty: its value (the cluster id, trackers.c), its digest, its
 * snapshot form, and its name rule (a DNS subdomain).
 */

#include "kinds/kind_priv.h"

static int clusterproperty_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	k8s_str_t value = jv_str(jv_obj(root, "spec"), "value");
	if (value.len == 0) {
		value.ptr = NULL; // the schema requires at least one character
	}

	k8s_pack_t p;
	k8s_clusterproperty_t *prop = k8s_decode_alloc(sizeof(*prop), 0,
	                                               k8s_meta_strings(m) + k8s_str_size(value),
	                                               &p, NULL);
	if (prop == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&prop->meta, K8S_CLUSTERPROPERTY, m, &p);
	prop->value = k8s_pack_str(&p, value, false);

	*out = &prop->meta;
	return KNOT_EOK;
}

static uint64_t clusterproperty_digest(uint64_t h, const k8s_object_t *obj)
{
	return k8s_digest_str(h, ((const k8s_clusterproperty_t *)obj)->value);
}

static void clusterproperty_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_clusterproperty_t *prop = (const k8s_clusterproperty_t *)obj;
	k8s_form_put_meta(w, obj);
	// The one free-form string: u32 length + 1, 0 for none.
	size_t len = (prop->value != NULL) ? strlen(prop->value) : 0;
	if (prop->value != NULL && len < K8S_SNAP_ENTRY_MAX) {
		k8s_form_put_u(w, len + 1, 4);
		k8s_form_put(w, prop->value, len);
		w->strings += (uint32_t)(len + 1);
	} else {
		w->unfit = w->unfit || prop->value != NULL;
		k8s_form_put_u(w, 0, 4);
	}
}

static k8s_object_t *clusterproperty_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	k8s_clusterproperty_t *prop = k8s_form_alloc(r, sizeof(*prop), 0, strings, &arrays);
	if (prop == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &prop->meta, K8S_CLUSTERPROPERTY);
	prop->value = k8s_form_pack(r, k8s_form_get_view(r, true));
	return &prop->meta;
}

const k8s_kind_def_t k8s_kind_clusterproperty = {
	.plural = "clusterproperties", .field = "ClusterProperty", .namespaced = false,
	.name_is_label = false,
	.decode = clusterproperty_decode, .digest = clusterproperty_digest,
	.write = clusterproperty_write, .read = clusterproperty_read,
};
