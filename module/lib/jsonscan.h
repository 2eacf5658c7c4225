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

/*!
 * \file
 *
 * \brief A JSON text scanned into a tape of tokens, without a tree: what the kinds'
 * decoders and the watch events read.
 *
 * json-c builds a tree with an allocation or more per value and frees it after the
 * object is read: most of the first sync's time (a 100-address EndpointSlice is some
 * 2,000 values, of which a decoder keeps a few hundred bytes). A tape is one array of
 * tokens in document order, each container followed by its children and knowing where
 * it ends; strings point into the text (or, escaped, into the tape's arena). One tape
 * is reused for every object a reflector reads: no allocation per value or per object.
 *
 * The grammar is RFC 8259's, strictly: no comments, single quotes, NaN, trailing commas,
 * leading zeros or bare control bytes in strings. Everything it accepts json-c's strict
 * mode accepts too, with the same values (tests/unit/test_jsonscan.c and
 * tests/fuzz/fuzz_jsonscan.c compare the two): the last of two equal keys wins, an
 * integer beyond int64 is clamped, a lone surrogate escape becomes U+FFFD, bytes above
 * 0x7f pass unchecked. The same bounds as json-c's trees (k8s_json_bounded(): values,
 * objects) are checked first, and the same nesting limit.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*! \brief A string of the text (not NUL-terminated); ptr is NULL when absent. */
typedef struct {
	const char *ptr;
	size_t len;
} k8s_str_t;

static inline bool str_is(k8s_str_t s, const char *lit)
{
	return s.ptr != NULL && s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0;
}

typedef enum {
	K8S_JNONE = 0,  /*!< Absent: a lookup that found nothing, or a value of another type. */
	K8S_JNULL,
	K8S_JBOOL,
	K8S_JINT,       /*!< A number without fraction or exponent. */
	K8S_JDOUBLE,    /*!< Any other number (its value is not read). */
	K8S_JSTRING,
	K8S_JARRAY,
	K8S_JOBJECT,
} k8s_jtype_t;

/*! \brief One value of the tape (an object's children alternate key and value). */
typedef struct {
	uint8_t type;       /*!< k8s_jtype_t. */
	bool truth;         /*!< K8S_JBOOL's value. */
	bool escaped;       /*!< K8S_JSTRING: unescaped into the arena. */
	uint32_t len;       /*!< String bytes; elements of an array; keys of an object. */
	uint32_t end;       /*!< Index of the token after this value (and its children). */
	union {
		uint64_t off;   /*!< K8S_JSTRING: where its bytes start (text or arena). */
		int64_t i;      /*!< K8S_JINT, clamped to int64. */
	};
} k8s_jtok_t;

/*! \brief Tokens of one text; reused from text to text. */
typedef struct {
	const char *text;
	k8s_jtok_t *toks;
	uint32_t count, cap;
	char *arena;        /*!< Unescaped strings. */
	size_t arena_len, arena_cap;
} k8s_jtape_t;

/*! \brief A value of a tape: the tape and a token's index (t NULL: absent). */
typedef struct {
	const k8s_jtape_t *t;
	uint32_t i;
} k8s_jv_t;

void k8s_jtape_init(k8s_jtape_t *t);

/*! \brief Frees the tape's arrays (it may be scanned into again). */
void k8s_jtape_deinit(k8s_jtape_t *t);

/*!
 * \brief Scans \a text (one JSON value, whitespace around it allowed) into \a t.
 *
 * The tape points into \a text, which must outlive its reads. Memory kept from an
 * earlier, larger text is given back first.
 *
 * \retval KNOT_EOK     scanned.
 * \retval KNOT_ESPACE  more values or objects than K8S_JSON_VALUES_MAX / K8S_JSON_OBJECTS_MAX.
 * \retval KNOT_EMALF   not JSON (\a err says where and why).
 * \retval KNOT_ENOMEM  out of memory.
 */
int k8s_jtape_scan(k8s_jtape_t *t, const char *text, size_t len, char *err, size_t errlen);

/*! \brief The scanned value. */
static inline k8s_jv_t k8s_jtape_root(const k8s_jtape_t *t)
{
	k8s_jv_t v = { (t->count > 0) ? t : NULL, 0 };
	return v;
}

/* Reading a tape. An absent value reads as absent, so reads chain without checks. */

static inline k8s_jtype_t jv_type(k8s_jv_t v)
{
	return (v.t != NULL) ? (k8s_jtype_t)v.t->toks[v.i].type : K8S_JNONE;
}

static inline bool jv_is(k8s_jv_t v, k8s_jtype_t type)
{
	return jv_type(v) == type;
}

/*! \brief The value of \a key (\a key_len bytes) in object \a obj if it has \a type (the last of equal keys). */
k8s_jv_t jv_getn(k8s_jv_t obj, const char *key, size_t key_len, k8s_jtype_t type);

/*! \brief A key jv_pick() looks for: its name (\a len bytes) and the type its value must have. */
typedef struct {
	const char *name;
	size_t len;
	k8s_jtype_t type;
} k8s_jkey_t;

/*! \brief A k8s_jkey_t of a string literal. */
#define JKEY(lit, jtype) { (lit), sizeof(lit) - 1, (jtype) }

/*!
 * \brief The values of \a count keys of \a obj in one walk of its keys: out[i] is what
 * jv_getn(obj, keys[i]...) gives, for objects whose keys are read several at a time.
 */
void jv_pick(k8s_jv_t obj, const k8s_jkey_t *keys, size_t count, k8s_jv_t *out);

/*! \brief jv_getn() of a C string (a literal's length is known at compile time). */
static inline k8s_jv_t jv_get(k8s_jv_t obj, const char *key, k8s_jtype_t type)
{
	return jv_getn(obj, key, strlen(key), type);
}

static inline k8s_jv_t jv_obj(k8s_jv_t obj, const char *key)
{
	return jv_get(obj, key, K8S_JOBJECT);
}

static inline k8s_jv_t jv_arr(k8s_jv_t obj, const char *key)
{
	return jv_get(obj, key, K8S_JARRAY);
}

/*! \brief A string value; one with an embedded NUL is treated as absent. */
static inline k8s_str_t jv_str_of(k8s_jv_t v)
{
	k8s_str_t s = { NULL, 0 };
	if (!jv_is(v, K8S_JSTRING)) {
		return s;
	}
	const k8s_jtok_t *tok = &v.t->toks[v.i];
	const char *ptr = (tok->escaped ? v.t->arena : v.t->text) + tok->off;
	if (!tok->escaped || memchr(ptr, '\0', tok->len) == NULL) {
		s.ptr = ptr;
		s.len = tok->len;
	}
	return s;
}

static inline k8s_str_t jv_str(k8s_jv_t obj, const char *key)
{
	return jv_str_of(jv_get(obj, key, K8S_JSTRING));
}

/*! \brief A boolean; absent, null or another type gives \a dflt. */
static inline bool jv_bool(k8s_jv_t obj, const char *key, bool dflt)
{
	k8s_jv_t v = jv_get(obj, key, K8S_JBOOL);
	return (v.t != NULL) ? v.t->toks[v.i].truth : dflt;
}

/*! \brief An integer; absent, null, fractional or another type gives \a dflt. */
static inline int64_t jv_int(k8s_jv_t obj, const char *key, int64_t dflt)
{
	k8s_jv_t v = jv_get(obj, key, K8S_JINT);
	return (v.t != NULL) ? v.t->toks[v.i].i : dflt;
}

/*! \brief Elements of an array (0 when absent). */
static inline size_t jv_len(k8s_jv_t arr)
{
	return jv_is(arr, K8S_JARRAY) ? arr.t->toks[arr.i].len : 0;
}

/*! \brief The first element of an array, absent if none. */
static inline k8s_jv_t jv_first(k8s_jv_t arr)
{
	k8s_jv_t v = { NULL, 0 };
	if (jv_len(arr) > 0) {
		v.t = arr.t;
		v.i = arr.i + 1;
	}
	return v;
}

/*! \brief The element after \a elem of \a arr, absent after the last. */
static inline k8s_jv_t jv_next(k8s_jv_t arr, k8s_jv_t elem)
{
	k8s_jv_t v = { NULL, 0 };
	if (elem.t != NULL) {
		uint32_t next = elem.t->toks[elem.i].end;
		if (next < arr.t->toks[arr.i].end) {
			v.t = arr.t;
			v.i = next;
		}
	}
	return v;
}

/*! \brief Every element \a elem of array \a arr, in order. */
#define JV_EACH(elem, arr) \
	for (k8s_jv_t elem = jv_first(arr); elem.t != NULL; elem = jv_next((arr), elem))

/*! \brief Keys of an object, equal ones each counted (0 when absent). */
static inline size_t jv_keys(k8s_jv_t obj)
{
	return jv_is(obj, K8S_JOBJECT) ? obj.t->toks[obj.i].len : 0;
}

/*! \brief The first key of an object (a string; its value is the next token), absent if none. */
static inline k8s_jv_t jv_first_key(k8s_jv_t obj)
{
	k8s_jv_t k = { NULL, 0 };
	if (jv_keys(obj) > 0) {
		k.t = obj.t;
		k.i = obj.i + 1;
	}
	return k;
}

/*! \brief The value of key \a key (jv_first_key(), jv_next_key()). */
static inline k8s_jv_t jv_value_of(k8s_jv_t key)
{
	return (k8s_jv_t){ key.t, key.i + 1 };
}

/*! \brief The key after \a key of \a obj (past its value), absent after the last. */
static inline k8s_jv_t jv_next_key(k8s_jv_t obj, k8s_jv_t key)
{
	k8s_jv_t k = { NULL, 0 };
	if (key.t != NULL) {
		uint32_t next = key.t->toks[key.i + 1].end;
		if (next < obj.t->toks[obj.i].end) {
			k.t = obj.t;
			k.i = next;
		}
	}
	return k;
}

/*! \brief Every key \a key of object \a obj, in order, equal keys each time. */
#define JV_EACH_KEY(key, obj) \
	for (k8s_jv_t key = jv_first_key(obj); key.t != NULL; key = jv_next_key((obj), key))
