/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Reading json-c trees, shared by the object decoders (decode.c, objects.c) and
 * the event and Status decoders (events.c). Private to them.
 *
 * A field of the wrong type reads as absent, as does a string with an
 * embedded NUL.
 */

#pragma once

#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/jsonstrict.h"

/*! A string inside the json-c tree; ptr is NULL when absent. */
typedef struct {
	const char *ptr;
	size_t len;
} k8s_str_t;

static inline json_object *get_field(json_object *parent, const char *key, json_type type)
{
	json_object *val = NULL;
	if (!json_object_is_type(parent, json_type_object) ||
	    !json_object_object_get_ex(parent, key, &val) ||
	    !json_object_is_type(val, type)) {
		return NULL;
	}
	return val;
}

static inline json_object *get_obj(json_object *parent, const char *key)
{
	return get_field(parent, key, json_type_object);
}

static inline json_object *get_arr(json_object *parent, const char *key)
{
	return get_field(parent, key, json_type_array);
}

/*! A string value; one with an embedded NUL is treated as absent. */
static inline k8s_str_t str_of(json_object *val)
{
	k8s_str_t s = { NULL, 0 };
	if (!json_object_is_type(val, json_type_string)) {
		return s;
	}
	const char *ptr = json_object_get_string(val);
	size_t len = json_object_get_string_len(val);
	if (memchr(ptr, '\0', len) == NULL) {
		s.ptr = ptr;
		s.len = len;
	}
	return s;
}

static inline k8s_str_t get_str(json_object *parent, const char *key)
{
	return str_of(get_field(parent, key, json_type_string));
}

static inline bool str_is(k8s_str_t s, const char *lit)
{
	return s.ptr != NULL && s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0;
}

/*! A boolean; absent, null or another type gives \a dflt. */
static inline bool get_bool(json_object *parent, const char *key, bool dflt)
{
	json_object *val = get_field(parent, key, json_type_boolean);
	return (val != NULL) ? json_object_get_boolean(val) : dflt;
}

/*! An integer; absent, null, fractional or another type gives \a dflt. */
static inline int64_t get_int(json_object *parent, const char *key, int64_t dflt)
{
	json_object *val = get_field(parent, key, json_type_int);
	return (val != NULL) ? json_object_get_int64(val) : dflt;
}

static inline size_t arr_len(json_object *arr)
{
	return (arr != NULL) ? json_object_array_length(arr) : 0;
}

