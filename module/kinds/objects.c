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
 * The kinds' entry points: the metadata every object has, read and checked by its
 * kind's rule (the kind table, kind.c), then the kind's decoder.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/bulk.h"
#include "lib/dnsname.h"
#include "kinds/kind_priv.h"

/* --- metadata ------------------------------------------------------------------ */

static bool kind_name_valid(k8s_kind_t kind, k8s_str_t name)
{
	if (k8s_kind_name_is_label(kind)) {
		return k8s_dns_label_valid(name.ptr, name.len, false);
	}
	return k8s_dns_subdomain_valid(name.ptr, name.len);
}

/*! The keys of an object's metadata read, in one walk of its keys. */
enum { META_ANNOTATIONS, META_LABELS, META_NAME, META_NAMESPACE, META_KEYS };
static const k8s_jkey_t META_KEYS_READ[META_KEYS] = {
	[META_ANNOTATIONS] = JKEY("annotations", K8S_JOBJECT),
	[META_LABELS] = JKEY("labels", K8S_JOBJECT),
	[META_NAME] = JKEY("name", K8S_JSTRING),
	[META_NAMESPACE] = JKEY("namespace", K8S_JSTRING),
};

static int meta_read(k8s_kind_t kind, k8s_jv_t root, k8s_meta_t *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	k8s_str_t kind_field = jv_str(root, "kind");
	if (kind_field.ptr != NULL && !str_is(kind_field, k8s_kind_def(kind)->field)) {
		set_err(err, errlen, "unexpected kind (expected %s)", k8s_kind_def(kind)->field);
		return KNOT_EINVAL;
	}

	m->metadata = jv_obj(root, "metadata");
	if (m->metadata.t == NULL) {
		set_err(err, errlen, "missing metadata");
		return KNOT_EINVAL;
	}
	k8s_jv_t at[META_KEYS];
	jv_pick(m->metadata, META_KEYS_READ, META_KEYS, at);
	m->annotations = at[META_ANNOTATIONS];
	m->labels = at[META_LABELS];

	m->name = jv_str_of(at[META_NAME]);
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
	m->ns = jv_str_of(at[META_NAMESPACE]);
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

/* --- entry points -------------------------------------------------------------- */

int k8s_object_decode_jv(k8s_kind_t kind, k8s_jv_t root, k8s_object_t **obj,
                         char *err, size_t errlen)
{
	if (!jv_is(root, K8S_JOBJECT)) {
		set_err(err, errlen, "not a json object");
		return KNOT_EMALF;
	}
	k8s_meta_t m;
	int ret = meta_read(kind, root, &m, err, errlen);
	if (ret != KNOT_EOK) {
		return ret;
	}

	ret = k8s_kind_def(kind)->decode(root, &m, obj);
	if (ret != KNOT_EOK) {
		set_err(err, errlen, "cannot decode %s (%s)", k8s_kind_name(kind),
		        (ret == KNOT_ENOMEM) ? "out of memory" :
		        (ret == KNOT_ERANGE) ? "too many addresses" :
		        (ret == KNOT_ELIMIT) ? "over its caps" : "invalid content");
		return ret;
	}
	// No digest: it is computed when the store first compares the object (a first sync
	// compares none of its million addresses).
	return KNOT_EOK;
}

int k8s_object_decode_tape(k8s_jtape_t *tape, k8s_kind_t kind, const char *text, size_t len,
                           k8s_object_t **obj, char *err, size_t errlen)
{
	if ((unsigned)kind >= K8S_KIND_COUNT || text == NULL || obj == NULL) {
		return KNOT_EINVAL;
	}
	*obj = NULL;
	int ret = k8s_jtape_scan(tape, text, len, err, errlen);
	if (ret != KNOT_EOK) {
		return ret;
	}
	return k8s_object_decode_jv(kind, k8s_jtape_root(tape), obj, err, errlen);
}

int k8s_object_decode(k8s_kind_t kind, const char *text, size_t len,
                      k8s_object_t **obj, char *err, size_t errlen)
{
	k8s_jtape_t tape;
	k8s_jtape_init(&tape);
	int ret = k8s_object_decode_tape(&tape, kind, text, len, obj, err, errlen);
	k8s_jtape_deinit(&tape);
	return ret;
}

void k8s_object_free(k8s_object_t *obj)
{
	k8s_bulk_free(obj);
}
