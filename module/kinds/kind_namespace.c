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
 * core/v1 Namespace: its name (a DNS label) is all it holds.
 */

#include "kinds/kind_priv.h"

static int namespace_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	(void)root;
	k8s_pack_t p;
	k8s_namespace_t *ns = k8s_decode_alloc(sizeof(*ns), 0, k8s_meta_strings(m), &p, NULL);
	if (ns == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&ns->meta, K8S_NAMESPACE, m, &p);
	*out = &ns->meta;
	return KNOT_EOK;
}

static void namespace_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	k8s_form_put_meta(w, obj);
}

static k8s_object_t *namespace_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	k8s_namespace_t *ns = k8s_form_alloc(r, sizeof(*ns), 0, strings, &arrays);
	if (ns == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &ns->meta, K8S_NAMESPACE);
	return &ns->meta;
}

/*! A DNS-1123 label; the digest is the name's (no digest function). */
const k8s_kind_def_t k8s_kind_namespace = {
	.plural = "namespaces", .field = "Namespace", .namespaced = false, .name_is_label = true,
	.decode = namespace_decode, .digest = NULL,
	.write = namespace_write, .read = namespace_read,
};
