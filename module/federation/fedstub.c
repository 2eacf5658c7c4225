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
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libknot/errcode.h>

#include "lib/dnsname.h"
#include "federation/fedstub.h"
#include "lib/jsonstrict.h"
#include "mod-k8s/mod-k8s.h"

/*! Nesting of a body or file: object, object, object, array. */
#define JSON_DEPTH 6
#define FILE_VERSION 1

int k8s_fedstub_name(const char *text, size_t len, uint8_t label[64])
{
	if (len == 0 || len > 63 || !k8s_dns_label_valid(text, len, false)) {
		return KNOT_EINVAL;
	}
	label[0] = len;
	memcpy(label + 1, text, len);
	return KNOT_EOK;
}

int k8s_fedstub_addr(const char *text, size_t len, struct sockaddr_storage *addr)
{
	char buf[INET6_ADDRSTRLEN + 8];
	if (len == 0 || len >= sizeof(buf) || memchr(text, '\0', len) != NULL) {
		return KNOT_EINVAL;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	unsigned port = 53;
	char *at = strchr(buf, '@');
	if (at != NULL) {
		*at = '\0';
		const char *p = at + 1;
		size_t digits = strlen(p);
		if (digits == 0 || digits > 5 || strspn(p, "0123456789") != digits) {
			return KNOT_EINVAL;
		}
		port = (unsigned)strtoul(p, NULL, 10);
		if (port == 0 || port > 65535) {
			return KNOT_EINVAL;
		}
	}
	return k8s_sockaddr_set(addr, buf, port);
}

/*! \brief Adds a nameserver, refusing a duplicate and one over the cap. */
static int ns_add(k8s_fedstub_t *fed, const char *text, size_t len, char *err, size_t errlen)
{
	struct sockaddr_storage addr;
	if (k8s_fedstub_addr(text, len, &addr) != KNOT_EOK) {
		snprintf(err, errlen, "nameserver %zu is no IP address (optionally with @port)",
		         fed->count + 1);
		return KNOT_EINVAL;
	}
	for (size_t i = 0; i < fed->count; i++) {
		if (k8s_sockaddr_equal(&fed->ns[i], &addr)) {
			snprintf(err, errlen, "nameserver %zu given twice", fed->count + 1);
			return KNOT_EINVAL;
		}
	}
	if (fed->count >= K8S_FEDSTUB_MAX_NS) {
		snprintf(err, errlen, "more than %d nameservers", K8S_FEDSTUB_MAX_NS);
		return KNOT_ELIMIT;
	}
	fed->ns[fed->count++] = addr;
	return KNOT_EOK;
}

/*! \brief Reads {"nameservers": [...]} from a parsed object into \a fed. */
static int nameservers_read(json_object *obj, k8s_fedstub_t *fed, char *err, size_t errlen)
{
	if (!json_object_is_type(obj, json_type_object)) {
		snprintf(err, errlen, "not a JSON object");
		return KNOT_EINVAL;
	}
	json_object *list = NULL;
	if (json_object_object_length(obj) != 1 ||
	    !json_object_object_get_ex(obj, MOD_K8S_FEDAPI_NAMESERVERS, &list) ||
	    !json_object_is_type(list, json_type_array)) {
		snprintf(err, errlen, "not {\"nameservers\": [...]}");
		return KNOT_EINVAL;
	}
	size_t count = json_object_array_length(list);
	if (count == 0) {
		snprintf(err, errlen, "no nameservers");
		return KNOT_EINVAL;
	}
	if (count > K8S_FEDSTUB_MAX_NS) {
		snprintf(err, errlen, "more than %d nameservers", K8S_FEDSTUB_MAX_NS);
		return KNOT_ELIMIT;
	}
	fed->count = 0;
	for (size_t i = 0; i < count; i++) {
		json_object *item = json_object_array_get_idx(list, i);
		if (!json_object_is_type(item, json_type_string)) {
			snprintf(err, errlen, "nameserver %zu is not a string", i + 1);
			return KNOT_EINVAL;
		}
		int ret = ns_add(fed, json_object_get_string(item),
		                 (size_t)json_object_get_string_len(item), err, errlen);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}
	return KNOT_EOK;
}

/*! \brief Parses JSON text of at most \a max bytes, all of it, with bounded nesting. */
static json_object *json_read(const char *data, size_t len, size_t max, int *ret,
                              char *err, size_t errlen)
{
	if (len > max) {
		snprintf(err, errlen, "larger than %zu bytes", max);
		*ret = KNOT_ELIMIT;
		return NULL;
	}
	json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	if (tok == NULL) {
		*ret = KNOT_ENOMEM;
		snprintf(err, errlen, "no memory");
		return NULL;
	}
	json_object *obj = k8s_json_tokener_parse(tok, data, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	// Trailing bytes after the value (or an unfinished value) make no valid document.
	if (obj == NULL || jerr != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		snprintf(err, errlen, "invalid JSON (%s)",
		         (obj == NULL || jerr != json_tokener_success) ?
		         json_tokener_error_desc(jerr) : "trailing data");
		json_object_put(obj);
		obj = NULL;
		*ret = KNOT_EINVAL;
	}
	json_tokener_free(tok);
	return obj;
}

int k8s_fedstub_body(const char *body, size_t len, k8s_fedstub_t *fed, char *err, size_t errlen)
{
	int ret = KNOT_EOK;
	json_object *obj = json_read(body, len, K8S_FEDSTUB_MAX_BODY, &ret, err, errlen);
	if (obj == NULL) {
		return ret;
	}
	ret = nameservers_read(obj, fed, err, errlen);
	json_object_put(obj);
	return ret;
}

int k8s_fedstub_static(const char *text, k8s_fedstub_t *fed, char *err, size_t errlen)
{
	memset(fed, 0, sizeof(*fed));
	const char *eq = strchr(text, '=');
	if (eq == NULL) {
		snprintf(err, errlen, "not NAME=IP[@port][,IP[@port]...]");
		return KNOT_EINVAL;
	}
	if (k8s_fedstub_name(text, eq - text, fed->name) != KNOT_EOK) {
		snprintf(err, errlen, "the name is no lowercase DNS label");
		return KNOT_EINVAL;
	}
	const char *pos = eq + 1;
	for (;;) {
		const char *comma = strchr(pos, ',');
		size_t len = (comma != NULL) ? (size_t)(comma - pos) : strlen(pos);
		int ret = ns_add(fed, pos, len, err, errlen);
		if (ret != KNOT_EOK) {
			return ret;
		}
		if (comma == NULL) {
			return KNOT_EOK;
		}
		pos = comma + 1;
	}
}

static k8s_fedstub_set_t *set_new(size_t count)
{
	k8s_fedstub_set_t *set = calloc(1, sizeof(*set) + count * sizeof(k8s_fedstub_t));
	return set;
}

int k8s_fedstub_file_parse(const char *data, size_t len, k8s_fedstub_set_t **out,
                           char *err, size_t errlen)
{
	int ret = KNOT_EOK;
	json_object *obj = json_read(data, len, K8S_FEDSTUB_MAX_FILE, &ret, err, errlen);
	if (obj == NULL) {
		return ret;
	}
	json_object *version = NULL, *feds = NULL;
	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, "version", &version) ||
	    !json_object_is_type(version, json_type_int) ||
	    !json_object_object_get_ex(obj, "federations", &feds) ||
	    !json_object_is_type(feds, json_type_object)) {
		snprintf(err, errlen, "not {\"version\": %d, \"federations\": {...}}", FILE_VERSION);
		json_object_put(obj);
		return KNOT_EINVAL;
	}
	if (json_object_get_int64(version) != FILE_VERSION) {
		snprintf(err, errlen, "version %lld, not %d",
		         (long long)json_object_get_int64(version), FILE_VERSION);
		json_object_put(obj);
		return KNOT_EINVAL;
	}
	size_t count = json_object_object_length(feds);
	if (count > K8S_FEDSTUB_MAX_FEDS) {
		snprintf(err, errlen, "more than %d federations", K8S_FEDSTUB_MAX_FEDS);
		json_object_put(obj);
		return KNOT_ELIMIT;
	}
	k8s_fedstub_set_t *set = set_new(count);
	if (set == NULL) {
		json_object_put(obj);
		snprintf(err, errlen, "no memory");
		return KNOT_ENOMEM;
	}
	json_object_object_foreach(feds, key, val) {
		k8s_fedstub_t *fed = &set->feds[set->count];
		char why[128];
		if (k8s_fedstub_name(key, strlen(key), fed->name) != KNOT_EOK) {
			snprintf(err, errlen, "federation %zu has no valid name", set->count + 1);
			ret = KNOT_EINVAL;
			break;
		}
		// json-c keeps the last of duplicate keys, so each name is there once.
		ret = nameservers_read(val, fed, why, sizeof(why));
		if (ret != KNOT_EOK) {
			snprintf(err, errlen, "federation '%s': %s", key, why);
			break;
		}
		set->count++;
	}
	json_object_put(obj);
	if (ret != KNOT_EOK) {
		free(set);
		return ret;
	}
	*out = set;
	return KNOT_EOK;
}

char *k8s_fedstub_file_format(const k8s_fedstub_set_t *set)
{
	json_object *root = json_object_new_object();
	json_object *feds = json_object_new_object();
	if (root == NULL || feds == NULL) {
		json_object_put(root);
		json_object_put(feds);
		return NULL;
	}
	json_object_object_add(root, "version", json_object_new_int(FILE_VERSION));
	json_object_object_add(root, "federations", feds);
	bool ok = true;
	for (size_t i = 0; ok && set != NULL && i < set->count; i++) {
		const k8s_fedstub_t *fed = &set->feds[i];
		json_object *entry = json_object_new_object();
		json_object *list = json_object_new_array();
		ok = entry != NULL && list != NULL;
		for (size_t j = 0; ok && j < fed->count; j++) {
			char text[INET6_ADDRSTRLEN + 8];
			k8s_sockaddr_text(&fed->ns[j], text, sizeof(text));
			ok = json_object_array_add(list, json_object_new_string(text)) == 0;
		}
		if (!ok) {
			json_object_put(entry);
			json_object_put(list);
			break;
		}
		json_object_object_add(entry, MOD_K8S_FEDAPI_NAMESERVERS, list);
		char name[64];
		memcpy(name, fed->name + 1, fed->name[0]);
		name[fed->name[0]] = '\0';
		json_object_object_add(feds, name, entry);
	}
	char *text = ok ? strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY))
	                : NULL;
	json_object_put(root);
	return text;
}

const k8s_fedstub_t *k8s_fedstub_find(const k8s_fedstub_set_t *set, const uint8_t *name)
{
	for (size_t i = 0; set != NULL && i < set->count; i++) {
		if (set->feds[i].name[0] == name[0] &&
		    memcmp(set->feds[i].name + 1, name + 1, name[0]) == 0) {
			return &set->feds[i];
		}
	}
	return NULL;
}

k8s_fedstub_set_t *k8s_fedstub_put(const k8s_fedstub_set_t *set, const k8s_fedstub_t *fed)
{
	size_t count = (set != NULL) ? set->count : 0;
	bool present = k8s_fedstub_find(set, fed->name) != NULL;
	k8s_fedstub_set_t *copy = set_new(count + (present ? 0 : 1));
	if (copy == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < count; i++) {
		const k8s_fedstub_t *f = &set->feds[i];
		copy->feds[copy->count++] = (f->name[0] == fed->name[0] &&
		                             memcmp(f->name + 1, fed->name + 1, f->name[0]) == 0) ? *fed : *f;
	}
	if (!present) {
		copy->feds[copy->count++] = *fed;
	}
	return copy;
}

k8s_fedstub_set_t *k8s_fedstub_del(const k8s_fedstub_set_t *set, const uint8_t *name)
{
	size_t count = (set != NULL) ? set->count : 0;
	k8s_fedstub_set_t *copy = set_new(count);
	if (copy == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < count; i++) {
		const k8s_fedstub_t *f = &set->feds[i];
		if (!(f->name[0] == name[0] && memcmp(f->name + 1, name + 1, name[0]) == 0)) {
			copy->feds[copy->count++] = *f;
		}
	}
	return copy;
}

k8s_fedstub_set_t *k8s_fedstub_merge(const k8s_fedstub_set_t *programmed,
                                     const k8s_fedstub_set_t *configured)
{
	size_t np = (programmed != NULL) ? programmed->count : 0;
	size_t nc = (configured != NULL) ? configured->count : 0;
	k8s_fedstub_set_t *set = set_new(np + nc);
	if (set == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < np; i++) {
		set->feds[set->count++] = programmed->feds[i];
	}
	for (size_t i = 0; i < nc; i++) {
		if (k8s_fedstub_find(programmed, configured->feds[i].name) == NULL) {
			set->feds[set->count++] = configured->feds[i];
		}
	}
	return set;
}
