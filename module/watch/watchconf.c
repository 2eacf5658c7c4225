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

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "api/kubeconfig.h"
#include "store/snapfile.h"
#include "watch/watchconf.h"

#define OFF(field) offsetof(k8s_watcher_conf_t, field)

#define OPTION_NAME(id, name, type, value, flags, check, watch) [K8S_OPTION_##id] = name,
const char *const k8s_option_names[K8S_OPTION_COUNT] = { K8S_OPTIONS(OPTION_NAME) };

/*
 * The watch settings' rows from K8S_OPTIONS: a row's watch tuple picks one of
 * the W_* forms below, which puts it at its fixed place. Only a string's default
 * (what a copy holds for NULL) matters here: the other value forms are NULL.
 */
#define V_NONE NULL
#define V_STR(dflt) dflt
#define V_INT(min, max, dflt) NULL
#define V_TIME(min, max, dflt) NULL
#define V_BOOL(dflt) NULL
#define V_DNAME(size, wire) NULL
#define V_OPT(list, dflt) NULL
#define V_ADDR(port) NULL

#define WATCH_W_NONE(name, dflt_, unused)
#define WATCH_W_READ(name, dflt_, row, kind_, scope_, field) \
	[row] = { .item = name, .kind = kind_, .scope = scope_, .offset = OFF(field), .dflt = dflt_ },
#define WATCH_W_LOAD(name, dflt_, row, kind_, scope_, field) \
	[row] = { .item = NULL, .kind = kind_, .scope = scope_, .offset = OFF(field), .dflt = dflt_ },
#define WATCH_W_LIST(name, dflt_, row, scope_, field, count) \
	[row] = { .item = name, .kind = K8S_WCONF_STRLIST, .scope = scope_, .offset = OFF(field), \
	          .count_offset = OFF(count) },
#define WATCH_FORM(name, dflt_, form, ...) WATCH_##form(name, dflt_, __VA_ARGS__)
#define WATCH_CALL(macro, ...) macro(__VA_ARGS__)
#define WATCH_ROW(id, name, type, value, flags, check, watch) \
	WATCH_CALL(WATCH_FORM, name, value, K8S_UNPAREN watch)

#define COUNT_W_NONE 0
#define COUNT_W_READ 1
#define COUNT_W_LOAD 1
#define COUNT_W_LIST 1
#define COUNT_FORM(form, ...) + COUNT_##form
#define COUNT_ROW(id, name, type, value, flags, check, watch) \
	WATCH_CALL(COUNT_FORM, K8S_UNPAREN watch)

/*! \brief How many fields the watch settings have: the END row's place. */
enum { WATCH_FIELDS = 0 K8S_OPTIONS(COUNT_ROW) };

const k8s_wconf_field_t k8s_watcher_conf_fields[] = {
	K8S_OPTIONS(WATCH_ROW)
	[WATCH_FIELDS] = { .kind = K8S_WCONF_END }
};

#define AT(conf, off, type) ((type *)((char *)(conf) + (off)))
#define AT_CONST(conf, off, type) ((const type *)((const char *)(conf) + (off)))

static bool str_equal(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

static bool list_equal(const k8s_watcher_conf_t *a, const k8s_watcher_conf_t *b,
                       const k8s_wconf_field_t *f)
{
	size_t count = *AT_CONST(a, f->count_offset, size_t);
	if (count != *AT_CONST(b, f->count_offset, size_t)) {
		return false;
	}
	const char *const *la = *AT_CONST(a, f->offset, const char *const *);
	const char *const *lb = *AT_CONST(b, f->offset, const char *const *);
	for (size_t i = 0; i < count; i++) {
		if (strcmp(la[i], lb[i]) != 0) {
			return false;
		}
	}
	return true;
}

static bool field_equal(const k8s_watcher_conf_t *a, const k8s_watcher_conf_t *b,
                        const k8s_wconf_field_t *f)
{
	switch (f->kind) {
	case K8S_WCONF_STR:
		return str_equal(*AT_CONST(a, f->offset, const char *),
		                 *AT_CONST(b, f->offset, const char *));
	case K8S_WCONF_STRLIST:
		return list_equal(a, b, f);
	case K8S_WCONF_BOOL:
		return *AT_CONST(a, f->offset, bool) == *AT_CONST(b, f->offset, bool);
	case K8S_WCONF_UINT:
		return *AT_CONST(a, f->offset, unsigned) == *AT_CONST(b, f->offset, unsigned);
	default:
		return true;
	}
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	// The length first: ("ab", "c") and ("a", "bc") differ.
	uint64_t n = len;
	h = k8s_fnv64(&n, sizeof(n), h);
	return k8s_fnv64(data, len, h);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	// NULL (unset) differs from "" by its length.
	return (s != NULL) ? hash_bytes(h, s, strlen(s)) : hash_bytes(h, NULL, 0) + 1;
}

static uint64_t field_hash(uint64_t h, const k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f)
{
	switch (f->kind) {
	case K8S_WCONF_STR:
		return hash_str(h, *AT_CONST(conf, f->offset, const char *));
	case K8S_WCONF_STRLIST: {
		size_t count = *AT_CONST(conf, f->count_offset, size_t);
		const char *const *list = *AT_CONST(conf, f->offset, const char *const *);
		h = hash_bytes(h, &count, sizeof(count));
		for (size_t i = 0; i < count; i++) {
			h = hash_str(h, list[i]);
		}
		return h;
	}
	case K8S_WCONF_BOOL: {
		uint8_t b = *AT_CONST(conf, f->offset, bool);
		return hash_bytes(h, &b, 1);
	}
	case K8S_WCONF_UINT:
		return hash_bytes(h, AT_CONST(conf, f->offset, unsigned), sizeof(unsigned));
	default:
		return h;  // No HELD or SERVER field of another kind.
	}
}

uint64_t k8s_watcher_conf_hash(const k8s_watcher_conf_t *conf, k8s_wconf_scope_t scope)
{
	uint64_t h = K8S_FNV64_INIT;
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		bool in = (scope == K8S_WCONF_HELD) ? f->scope != K8S_WCONF_HOW : f->scope == scope;
		if (in) {
			// The row's place too: two unset fields in a row are not one.
			uint64_t row = (uint64_t)(f - k8s_watcher_conf_fields);
			h = field_hash(hash_bytes(h, &row, sizeof(row)), conf, f);
		}
	}
	return h;
}

bool k8s_watcher_conf_equal(const k8s_watcher_conf_t *a, const k8s_watcher_conf_t *b)
{
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		if (!field_equal(a, b, f)) {
			return false;
		}
	}
	return true;
}

int k8s_watcher_conf_set_snapshot(k8s_watcher_conf_t *conf, const char *dir, size_t dir_len)
{
	char path[4096];
	if (dir_len >= sizeof(path)) {
		return KNOT_ERANGE;
	}
	int len = snprintf(path, sizeof(path), "%.*s/" K8S_SNAP_DIR "/%016llx.snapshot",
	                   (int)dir_len, dir,
	                   (unsigned long long)k8s_watcher_conf_hash(conf, K8S_WCONF_SERVER));
	if (len < 0 || (size_t)len >= sizeof(path)) {
		return KNOT_ERANGE;
	}
	char *copy = strdup(path);
	if (copy == NULL) {
		return KNOT_ENOMEM;
	}
	free((char *)conf->snapshot);
	conf->snapshot = copy;
	return KNOT_EOK;
}

size_t k8s_watcher_conf_snapshot_storage(const char *snapshot)
{
	// "<storage>/mod-k8s/<name>": the slash before the last one.
	const char *name = strrchr(snapshot, '/');
	const char *dir = (name != NULL) ? memrchr(snapshot, '/', (size_t)(name - snapshot)) : NULL;
	return (dir != NULL) ? (size_t)(dir - snapshot) : 0;
}

void k8s_watcher_conf_free(k8s_watcher_conf_t *conf)
{
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields; f->kind != K8S_WCONF_END; f++) {
		void **ptr = AT(conf, f->offset, void *);
		if (f->kind == K8S_WCONF_STRLIST) {
			char **list = *ptr;
			for (size_t i = 0; i < *AT(conf, f->count_offset, size_t); i++) {
				free(list[i]);
			}
		}
		if (f->kind == K8S_WCONF_STR || f->kind == K8S_WCONF_STRLIST) {
			free(*ptr);
		}
	}
	memset(conf, 0, sizeof(*conf));
}

int k8s_watcher_conf_set_str(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f,
                             const char *value)
{
	char *copy = strdup(value);
	if (copy == NULL) {
		return KNOT_ENOMEM;
	}
	char **field = AT(conf, f->offset, char *);
	free(*field);
	*field = copy;
	return KNOT_EOK;
}

int k8s_watcher_conf_add_str(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f,
                             const char *value)
{
	size_t *count = AT(conf, f->count_offset, size_t);
	char ***list = AT(conf, f->offset, char **);
	if (*count >= SIZE_MAX / sizeof(char *) - 1) {
		return KNOT_ENOMEM;
	}
	char **grown = realloc(*list, (*count + 1) * sizeof(char *));
	if (grown == NULL) {
		return KNOT_ENOMEM;
	}
	*list = grown;
	if ((grown[*count] = strdup(value)) == NULL) {
		return KNOT_ENOMEM;
	}
	(*count)++;
	return KNOT_EOK;
}

void k8s_watcher_conf_set_bool(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f, bool value)
{
	*AT(conf, f->offset, bool) = value;
}

void k8s_watcher_conf_set_uint(k8s_watcher_conf_t *conf, const k8s_wconf_field_t *f,
                               unsigned value)
{
	*AT(conf, f->offset, unsigned) = value;
}

static int field_copy(k8s_watcher_conf_t *dst, const k8s_watcher_conf_t *src,
                      const k8s_wconf_field_t *f)
{
	switch (f->kind) {
	case K8S_WCONF_STR: {
		const char *value = *AT_CONST(src, f->offset, const char *);
		value = (value != NULL) ? value : f->dflt;
		return (value != NULL) ? k8s_watcher_conf_set_str(dst, f, value) : KNOT_EOK;
	}
	case K8S_WCONF_STRLIST: {
		const char *const *list = *AT_CONST(src, f->offset, const char *const *);
		int ret = KNOT_EOK;
		for (size_t i = 0; ret == KNOT_EOK && i < *AT_CONST(src, f->count_offset, size_t); i++) {
			ret = k8s_watcher_conf_add_str(dst, f, list[i]);
		}
		return ret;
	}
	case K8S_WCONF_BOOL:
		k8s_watcher_conf_set_bool(dst, f, *AT_CONST(src, f->offset, bool));
		return KNOT_EOK;
	case K8S_WCONF_UINT:
		k8s_watcher_conf_set_uint(dst, f, *AT_CONST(src, f->offset, unsigned));
		return KNOT_EOK;
	default:
		return KNOT_EOK;
	}
}

int k8s_watcher_conf_copy(k8s_watcher_conf_t *dst, const k8s_watcher_conf_t *src)
{
	memset(dst, 0, sizeof(*dst));
	int ret = KNOT_EOK;
	for (const k8s_wconf_field_t *f = k8s_watcher_conf_fields;
	     ret == KNOT_EOK && f->kind != K8S_WCONF_END; f++) {
		ret = field_copy(dst, src, f);
	}
	if (ret != KNOT_EOK) {
		k8s_watcher_conf_free(dst);
	}
	return ret;
}
