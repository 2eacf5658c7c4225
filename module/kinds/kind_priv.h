/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Private to module/kinds/: what a kind file defines (k8s_kind_def_t) and the
 * helpers its decoder shares with the other kinds'.
 *
 * A kind is one file, kind_<kind>.c with its structure in kind_<kind>.h: the decoder
 * of its API JSON, its digest (digest.h's helpers), its snapshot form (form.h's
 * helpers) and the rule for its names, in one k8s_kind_def_t that the kind table
 * (kind.c) lists. Decoding works in two passes over the object's tape (jsonscan.h): the first
 * validates and measures (counts of ports and addresses, bytes of strings), the
 * second packs the structure, its arrays and its strings into one allocation.
 * Both passes call the same validating readers, so they agree on what is kept.
 */

#pragma once

#include "kinds/digest.h"
#include "kinds/form.h"
#include "lib/jsonscan.h"
#include "lib/jsonstrict.h"
#include "kinds/objects.h"

#define K8S_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((size_t)(a) - 1))

/*! \brief Name and namespace as read and validated from metadata. */
typedef struct {
	k8s_jv_t metadata;
	k8s_jv_t annotations;
	k8s_jv_t labels;
	k8s_str_t ns;
	k8s_str_t name;
} k8s_meta_t;

/*! \brief Where the second pass writes strings. */
typedef struct {
	char *at;
} k8s_pack_t;

/*! \brief One kind: its row of the kind table, defined in its kind_*.c. */
typedef struct {
	const char *plural;        /*!< As in API paths. */
	const char *field;         /*!< The object's "kind" field, checked when present. */
	bool namespaced;
	bool name_is_label;        /*!< The API server's rule: a DNS label, else a DNS subdomain. */
	/*! Revision of the snapshot form, 0 until it changes: stepped with the form, it is
	 *  hashed into the snapshot's fingerprint, so a file of the old form is refused. */
	uint32_t form;
	/*! The kind's fields from the API JSON (metadata read and checked already). */
	int (*decode)(k8s_jv_t root, const k8s_meta_t *m, k8s_object_t **out);
	/*! Continues \a h (kind, namespace, name) with the fields that make records. */
	uint64_t (*digest)(uint64_t h, const k8s_object_t *obj);
	/*! Writes the snapshot form: counts, k8s_form_put_meta(), fields. */
	void (*write)(k8s_form_writer_t *w, const k8s_object_t *obj);
	/*! Reads it back with the decoder's checks, into one allocation of \a strings bytes
	 *  of strings; NULL when out of memory or r->bad says why not. */
	k8s_object_t *(*read)(k8s_form_reader_t *r, size_t strings);
} k8s_kind_def_t;

/* Each kind's row, in its kind_<file>.c. */
#define K8S_KIND_ROW_DECL(kind, file) extern const k8s_kind_def_t k8s_kind_##file;
K8S_KINDS(K8S_KIND_ROW_DECL)
#undef K8S_KIND_ROW_DECL

/*! \brief The row of \a kind (which must be below K8S_KIND_COUNT). */
const k8s_kind_def_t *k8s_kind_def(k8s_kind_t kind);

/* Decoding helpers (decode.c). */

/*! \brief \a s if it is a DNS label (case folded when \a fold), else none. */
k8s_str_t k8s_decode_label(k8s_str_t s, bool fold);

/*! \brief An ExternalName target: one trailing dot dropped, case folded, <= 253 bytes. */
k8s_str_t k8s_decode_hostname(k8s_str_t s);

/*! \brief An IP of \a family (AF_UNSPEC: either); false when invalid or of the other family. */
bool k8s_decode_ip(k8s_str_t s, int family, k8s_ip_t *ip);

/*! \brief Up to two valid IPs from an array of strings (or of {"ip": ...} objects with \a key). */
uint8_t k8s_decode_ips(k8s_jv_t arr, const char *key, k8s_ip_t ips[2]);

/*! \brief Bytes a string takes behind the structure (with its NUL; none: 0). */
static inline size_t k8s_str_size(k8s_str_t s)
{
	return (s.ptr != NULL) ? s.len + 1 : 0;
}

/*! \brief Copies a string behind the structure; DNS strings are lowercased on the way. */
const char *k8s_pack_str(k8s_pack_t *p, k8s_str_t s, bool fold);

/*! \brief Allocates an object: \a head bytes of structure, \a arrays bytes of arrays, then strings. */
void *k8s_decode_alloc(size_t head, size_t arrays, size_t strings, k8s_pack_t *p, void **arr_at);

/*! \brief First pass over a ports array: kept ports and their string bytes. */
uint16_t k8s_ports_measure(k8s_jv_t arr, size_t *strings);

/*!
 * \brief Second pass: the \a count ports measured into \a out, their names packed.
 *
 * \return \a out, or NULL when \a count is 0 (an object's ports field).
 */
const k8s_port_t *k8s_ports_pack(k8s_jv_t arr, k8s_port_t *out, uint16_t count,
                                 k8s_pack_t *p);

/*! \brief Bytes of the name and namespace. */
size_t k8s_meta_strings(const k8s_meta_t *m);

/*! \brief Sets the kind, packs name and namespace. */
void k8s_meta_pack(k8s_object_t *obj, k8s_kind_t kind, const k8s_meta_t *m, k8s_pack_t *p);
