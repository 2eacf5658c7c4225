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

#include <arpa/inet.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/bulk.h"
#include "lib/hash.h"
#include "kinds/kind_priv.h"

/* --- writing ------------------------------------------------------------------------ */

void k8s_form_put_str(k8s_form_writer_t *w, const char *s)
{
	if (s == NULL) {
		k8s_form_put_u(w, 0, 1);
		return;
	}
	size_t len = strlen(s);
	if (len > K8S_FORM_STR_MAX || w->strings > UINT32_MAX - len - 1) {
		// No decoder makes one; kept out rather than cut.
		w->unfit = true;
		return;
	}
	k8s_form_put_u(w, len + 1, 1);
	k8s_form_put(w, s, len);
	w->strings += (uint32_t)(len + 1);
}

void k8s_form_put_ip(k8s_form_writer_t *w, const k8s_ip_t *ip)
{
	bool v4 = ip->family == AF_INET;
	k8s_form_put_u(w, v4 ? 4 : 6, 1);
	k8s_form_put(w, ip->bytes, v4 ? 4 : 16);
}

void k8s_form_put_ips(k8s_form_writer_t *w, const k8s_ip_t *list, uint8_t count)
{
	k8s_form_put_u(w, count, 1);
	for (uint8_t i = 0; i < count; i++) {
		k8s_form_put_ip(w, &list[i]);
	}
}

void k8s_form_put_ports(k8s_form_writer_t *w, const k8s_port_t *list, uint16_t count)
{
	for (uint16_t i = 0; i < count; i++) {
		k8s_form_put_u(w, list[i].port, 2);
		k8s_form_put_u(w, list[i].proto, 1);
		k8s_form_put_str(w, list[i].name);
	}
}

void k8s_form_put_meta(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	k8s_form_put_str(w, obj->name);
	if (k8s_kind_namespaced(obj->kind)) {
		k8s_form_put_str(w, obj->ns);
	}
}

void k8s_object_form_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	if ((unsigned)obj->kind >= K8S_KIND_COUNT) {
		w->unfit = true;
		return;
	}
	k8s_kind_def(obj->kind)->write(w, obj);
}

/* --- reading ------------------------------------------------------------------------ */

uint8_t k8s_form_get_ips(k8s_form_reader_t *r, k8s_ip_t ips[2])
{
	uint64_t count = k8s_form_get_u(r, 1);
	if (!k8s_form_check(r, count <= 2, "more than two addresses")) {
		return 0;
	}
	for (uint64_t i = 0; i < count; i++) {
		k8s_form_get_ip(r, AF_UNSPEC, &ips[i]);
	}
	return (uint8_t)count;
}

const k8s_port_t *k8s_form_get_ports(k8s_form_reader_t *r, k8s_port_t *out, uint16_t count)
{
	for (uint16_t i = 0; i < count && r->bad == NULL; i++) {
		out[i].port = (uint16_t)k8s_form_get_u(r, 2);
		out[i].proto = (uint8_t)k8s_form_get_u(r, 1);
		k8s_form_check(r, out[i].proto < K8S_PROTO_COUNT, "unknown protocol");
		out[i].name = k8s_form_get_str(r, K8S_FORM_LABEL, false);
	}
	return (count > 0) ? out : NULL;
}

void *k8s_form_alloc(k8s_form_reader_t *r, size_t head, size_t arrays, size_t strings,
                     void **arr_at)
{
	if (r->bad != NULL) {
		return NULL;
	}
	size_t arr_off = K8S_ALIGN_UP(head, alignof(max_align_t));
	char *mem = k8s_bulk_calloc(arr_off + arrays + strings);
	if (mem != NULL) {
		*arr_at = mem + arr_off;
		r->str_at = mem + arr_off + arrays;
		r->str_left = strings;
	}
	return mem;
}

void k8s_form_get_meta(k8s_form_reader_t *r, k8s_object_t *obj, k8s_kind_t kind)
{
	obj->kind = kind;
	// The decoder's rule for the kind's names (the kind's row).
	obj->name = k8s_form_get_str(r, k8s_kind_name_is_label(kind) ? K8S_FORM_LABEL :
	                                K8S_FORM_SUBDOMAIN, true);
	obj->ns = k8s_kind_namespaced(kind) ? k8s_form_get_str(r, K8S_FORM_LABEL, true) : "";
}

int k8s_object_form_read(k8s_kind_t kind, const char *data, size_t len, k8s_object_t **out,
                         char *err, size_t err_len)
{
	k8s_form_reader_t r = { .at = (const unsigned char *)data,
	                        .end = (const unsigned char *)data + len };
	k8s_object_t *obj = NULL;
	size_t strings = k8s_form_get_count(&r, 4, 1);
	if (k8s_form_check(&r, (unsigned)kind < K8S_KIND_COUNT, "unknown kind")) {
		obj = k8s_kind_def(kind)->read(&r, strings);
	}
	if (obj != NULL) {
		k8s_form_check(&r, k8s_form_left(&r) == 0, "trailing bytes");
		k8s_form_check(&r, r.str_left == 0, "strings shorter than announced");
	}
	if (r.bad != NULL) {
		k8s_object_free(obj);
		snprintf(err, err_len, "%s", r.bad);
		return KNOT_EMALF;
	} else if (obj == NULL) {
		snprintf(err, err_len, "out of memory");
		return KNOT_ENOMEM;
	}
	*out = obj;
	return KNOT_EOK;
}

uint64_t k8s_object_forms_hash(uint64_t h)
{
	for (unsigned kind = 0; kind < K8S_KIND_COUNT; kind++) {
		uint32_t form = k8s_kind_def(kind)->form;
		if (form != 0) {
			// 0 hashes nothing: the fingerprints of files written before revisions existed.
			unsigned char bytes[8];
			k8s_snap_put_le(bytes, kind, 4);
			k8s_snap_put_le(bytes + 4, form, 4);
			h = k8s_fnv64(bytes, sizeof(bytes), h);
		}
	}
	return h;
}
