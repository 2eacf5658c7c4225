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
 * core/v1 ConfigMap: its data keys (kind_configmap.h) from the API JSON, their digest,
 * the snapshot form, and its name rule (a DNS subdomain). Only the ConfigMaps the
 * settings name are watched (a field selector on the name): kube-dns's, a hosts key.
 */

#include "kinds/kind_priv.h"

bool k8s_configmap_key_valid(const char *s, size_t len)
{
	// validation.IsConfigMapKey: at most 253 of [-._a-zA-Z0-9], not "." nor "..".
	if (len == 0 || len > 253 || (len == 1 && s[0] == '.') ||
	    (len == 2 && s[0] == '.' && s[1] == '.')) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_')) {
			return false;
		}
	}
	return true;
}

const k8s_cm_entry_t *k8s_configmap_get(const k8s_configmap_t *cm, const char *key)
{
	for (uint16_t i = 0; cm != NULL && i < cm->count; i++) {
		if (strcmp(cm->data[i].key, key) == 0) {
			return &cm->data[i];
		}
	}
	return NULL;
}

/*!
 * One key and its value; false when the API could not have stored it. A key seen
 * earlier in the object is skipped (\a dup): as json-c kept it, at its first place with
 * the last value.
 */
static bool entry_read(k8s_jv_t obj, k8s_jv_t at, k8s_str_t *key, k8s_str_t *value,
                       bool *dup)
{
	*key = jv_str_of(at);
	*dup = false;
	if (key->ptr == NULL || memchr(key->ptr, '\0', key->len) != NULL) {
		return false;
	}
	JV_EACH_KEY(k, obj) {
		if (k.i >= at.i) {
			break;
		}
		k8s_str_t earlier = jv_str_of(k);
		if (earlier.len == key->len && memcmp(earlier.ptr, key->ptr, key->len) == 0) {
			*dup = true;
			return true;
		}
	}
	// NULL for another type, or a string holding a NUL.
	*value = jv_str_of(jv_getn(obj, key->ptr, key->len, K8S_JSTRING));
	return k8s_configmap_key_valid(key->ptr, key->len) && value->ptr != NULL;
}

static int configmap_decode(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out)
{
	k8s_jv_t data = jv_obj(root, "data");
	size_t count = 0;
	size_t strings = k8s_meta_strings(m);
	// Members, duplicates too: the quadratic test of duplicates stays within the cap.
	if (jv_keys(data) > K8S_CONFIGMAP_KEYS_MAX) {
		return KNOT_ELIMIT;
	}
	JV_EACH_KEY(at, data) {
		k8s_str_t key, value;
		bool dup;
		if (!entry_read(data, at, &key, &value, &dup)) {
			return KNOT_EINVAL;
		}
		if (dup) {
			continue;
		}
		if (++count > K8S_CONFIGMAP_KEYS_MAX || value.len > K8S_CONFIGMAP_VALUE_MAX) {
			return KNOT_ELIMIT;
		}
		strings += key.len + 1 + value.len + 1;
	}

	k8s_pack_t p;
	void *arrays = NULL;
	k8s_configmap_t *cm = k8s_decode_alloc(sizeof(*cm), count * sizeof(k8s_cm_entry_t),
	                                       strings, &p, &arrays);
	if (cm == NULL) {
		return KNOT_ENOMEM;
	}
	k8s_meta_pack(&cm->meta, K8S_CONFIGMAP, m, &p);
	k8s_cm_entry_t *entries = arrays;
	JV_EACH_KEY(at, data) {
		k8s_str_t key, value;
		bool dup;
		(void)entry_read(data, at, &key, &value, &dup);
		if (dup) {
			continue;
		}
		k8s_cm_entry_t *e = &entries[cm->count++];
		e->key = k8s_pack_str(&p, key, false);
		e->value = k8s_pack_str(&p, value, false);
		e->len = (uint32_t)value.len;
	}
	cm->data = (count > 0) ? entries : NULL;

	*out = &cm->meta;
	return KNOT_EOK;
}

/*! The keys as a set: a reordered map is the same ConfigMap. */
static uint64_t configmap_digest(uint64_t h, const k8s_object_t *obj)
{
	const k8s_configmap_t *cm = (const k8s_configmap_t *)obj;
	uint64_t sum = 0;
	for (uint16_t i = 0; i < cm->count; i++) {
		uint64_t e = k8s_digest_str(K8S_DIGEST_INIT, cm->data[i].key);
		sum += k8s_digest_mix(k8s_digest_str(e, cm->data[i].value));
	}
	return k8s_digest_u64(k8s_digest_u64(h, cm->count), sum);
}

/*! Counts: u16 keys; then each key a str, each value a u32 length + 1 and its bytes. */
static void configmap_write(k8s_form_writer_t *w, const k8s_object_t *obj)
{
	const k8s_configmap_t *cm = (const k8s_configmap_t *)obj;
	k8s_form_put_u(w, cm->count, 2);
	k8s_form_put_meta(w, obj);
	for (uint16_t i = 0; i < cm->count; i++) {
		const k8s_cm_entry_t *e = &cm->data[i];
		k8s_form_put_str(w, e->key);
		if (w->strings > UINT32_MAX - e->len - 1) {
			w->unfit = true;
			return;
		}
		k8s_form_put_u(w, (uint64_t)e->len + 1, 4);
		k8s_form_put(w, e->value, e->len);
		w->strings += e->len + 1;
	}
}

/*! Fewest bytes a key takes in the form: a str of one byte and an empty value. */
#define FORM_ENTRY_MIN (2 + 4)

static k8s_object_t *configmap_read(k8s_form_reader_t *r, size_t strings)
{
	void *arrays = NULL;
	uint16_t count = (uint16_t)k8s_form_get_count(r, 2, FORM_ENTRY_MIN);
	k8s_form_check(r, count <= K8S_CONFIGMAP_KEYS_MAX, "more keys than a configmap keeps");
	k8s_configmap_t *cm = k8s_form_alloc(r, sizeof(*cm), count * sizeof(k8s_cm_entry_t),
	                                     strings, &arrays);
	if (cm == NULL) {
		return NULL;
	}
	k8s_form_get_meta(r, &cm->meta, K8S_CONFIGMAP);
	k8s_cm_entry_t *entries = arrays;
	for (uint16_t i = 0; i < count && r->bad == NULL; i++) {
		k8s_form_view_t key = k8s_form_get_view(r, false);
		k8s_form_check(r, key.ptr != NULL && k8s_configmap_key_valid(key.ptr, key.len),
		               "invalid configmap key");
		k8s_form_view_t value = k8s_form_get_view(r, true);
		k8s_form_check(r, value.ptr != NULL && value.len <= K8S_CONFIGMAP_VALUE_MAX,
		               "invalid configmap value");
		entries[i].key = k8s_form_pack(r, key);
		entries[i].value = k8s_form_pack(r, value);
		entries[i].len = (uint32_t)value.len;
	}
	cm->count = (r->bad == NULL) ? count : 0;
	cm->data = (cm->count > 0) ? entries : NULL;
	return &cm->meta;
}

/*! A DNS subdomain, as every object name of core/v1 but services' and namespaces'. */
const k8s_kind_def_t k8s_kind_configmap = {
	.plural = "configmaps", .field = "ConfigMap", .namespaced = true, .name_is_label = false,
	.decode = configmap_decode, .digest = configmap_digest,
	.write = configmap_write, .read = configmap_read,
};
