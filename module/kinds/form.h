/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The snapshot form of a slim object (the warm restart, snapshot.h): its writer
 * and its checking reader, each kind's in its kind_*.c, built from the helpers here.
 *
 * Objects are written as their slim fields in a compact binary form and read back
 * without the API's JSON decoder (a JSON tree per object cost 20 times the rest of a
 * warm start). The file is still not trusted: every length and count is checked
 * against the bytes left before anything is read or allocated, and every field gets
 * the checks the API objects' decoder gives it (names and hostnames DNS labels,
 * addresses of the slice's family, one value per enum), stricter where the writer
 * never writes otherwise (lowercase, no embedded NUL), so that a hostile file can give
 * us no object that the API could not. tests/unit/test_snapshot.c checks that each
 * kind gives back an object of the same digest. The digest itself is never read from the
 * file: it is computed when the first LIST compares the object.
 *
 * An object (integers little-endian; str: u8 length + 1, 0 for none, then the bytes;
 * ip: u8 4 or 6, then 4 or 16 bytes; bool: u8 0 or 1):
 *   u32 bytes of its strings with their NULs (the allocation is sized before reading),
 *   the counts of its arrays, str name, str namespace (namespaced kinds), its fields.
 * The counts and fields of each kind are in its writer and reader (kind_*.c).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/buf.h"
#include "lib/dnsname.h"
#include "kinds/objects.h"

/*! A larger snapshot file is not read, nor a larger payload written (10,000 services take a few MiB). */
#define K8S_SNAP_MAX (512 * 1024 * 1024)

/*! \brief Writes the \a n low bytes of \a v little-endian (the file's byte order). */
static inline void k8s_snap_put_le(unsigned char *out, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = (unsigned char)(v >> (8 * i));
	}
}

/*! \brief Reads \a n bytes little-endian. */
static inline uint64_t k8s_snap_get_le(const unsigned char *in, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		v |= (uint64_t)in[i] << (8 * i);
	}
	return v;
}

/*! \brief Longest object entry read (the binary form of one object); a longer one is not written. */
#define K8S_SNAP_ENTRY_MAX (4 * 1024 * 1024)

#define K8S_FORM_STR_MAX 254     // Longest str (its length + 1 is a byte); DNS names are <= 253.

/* Fewest bytes an array item takes in the file: a count is checked against them. */
#define K8S_FORM_PORT_MIN 4      // u16 port, u8 protocol, str name.
#define K8S_FORM_CLUSTER_MIN 2   // A non-empty str.

/* --- writing ------------------------------------------------------------------------ */

/*! \brief A writer; the first error sticks; \a unfit marks an object that cannot be written. */
typedef struct {
	k8s_buf_t *buf;
	int ret;
	bool unfit;
	uint32_t strings;   /*!< Bytes of the object's strings with their NULs. */
} k8s_form_writer_t;

/*! \brief Appends bytes; inline while they fit, as most do (the encode runs on the watcher's loop). */
static inline void k8s_form_put(k8s_form_writer_t *w, const void *data, size_t len)
{
	k8s_buf_t *b = w->buf;
	if (w->ret == KNOT_EOK && len <= b->cap - b->len) {
		memcpy(b->data + b->len, data, len);
		b->len += len;
	} else if (w->ret == KNOT_EOK) {
		w->ret = k8s_buf_append(b, data, len, K8S_SNAP_MAX);
	}
}

/*! \brief Appends the \a n low bytes of \a v. */
static inline void k8s_form_put_u(k8s_form_writer_t *w, uint64_t v, size_t n)
{
	unsigned char bytes[8];
	k8s_snap_put_le(bytes, v, n);
	k8s_form_put(w, bytes, n);
}

/*! \brief Appends a str (NULL: none); one longer than a str can be marks the object unfit. */
void k8s_form_put_str(k8s_form_writer_t *w, const char *s);

/*! \brief Appends an ip. */
void k8s_form_put_ip(k8s_form_writer_t *w, const k8s_ip_t *ip);

/*! \brief Appends u8 \a count and the ips. */
void k8s_form_put_ips(k8s_form_writer_t *w, const k8s_ip_t *list, uint8_t count);

/*! \brief Appends each port: u16 port, u8 protocol, str name (the count is the kind's). */
void k8s_form_put_ports(k8s_form_writer_t *w, const k8s_port_t *list, uint16_t count);

/*! \brief Appends the name, and the namespace of a namespaced kind. */
void k8s_form_put_meta(k8s_form_writer_t *w, const k8s_object_t *obj);

/*!
 * \brief Appends \a obj's form (its kind's writer), without the u32 of its string bytes,
 * which \a w->strings holds after it; \a w->unfit when it cannot be written.
 */
void k8s_object_form_write(k8s_form_writer_t *w, const k8s_object_t *obj);

/* --- reading ------------------------------------------------------------------------ */

/*! \brief A reader over one object; the first failure sticks with its reason. */
typedef struct {
	const unsigned char *at;
	const unsigned char *end;
	char *str_at;          /*!< Where the next string goes. */
	size_t str_left;       /*!< Bytes left for strings (the object's announced total). */
	const char *bad;       /*!< Why it does not read, or NULL. */
} k8s_form_reader_t;

static inline size_t k8s_form_left(const k8s_form_reader_t *r)
{
	return (size_t)(r->end - r->at);
}

/*! \brief False, and \a why noted unless a reason is already, when not \a ok or bad already. */
static inline bool k8s_form_check(k8s_form_reader_t *r, bool ok, const char *why)
{
	if (!ok && r->bad == NULL) {
		r->bad = why;
	}
	return ok && r->bad == NULL;
}

static inline uint64_t k8s_form_get_u(k8s_form_reader_t *r, size_t n)
{
	if (!k8s_form_check(r, k8s_form_left(r) >= n, "truncated")) {
		return 0;
	}
	uint64_t v = k8s_snap_get_le(r->at, n);
	r->at += n;
	return v;
}

static inline bool k8s_form_get_bool(k8s_form_reader_t *r)
{
	uint64_t v = k8s_form_get_u(r, 1);
	k8s_form_check(r, v <= 1, "not a boolean");
	return v == 1;
}

/*! \brief A string view in the file. */
typedef struct {
	const char *ptr;
	size_t len;
} k8s_form_view_t;

/*! \brief A string's bytes; \a wide: after a u32 length (a free-form value), else a u8. */
static inline k8s_form_view_t k8s_form_get_view(k8s_form_reader_t *r, bool wide)
{
	k8s_form_view_t v = { NULL, 0 };
	uint64_t n = k8s_form_get_u(r, wide ? 4 : 1);
	if (n == 0 || !k8s_form_check(r, n - 1 <= k8s_form_left(r), "string longer than the object")) {
		return v;
	}
	v.ptr = (const char *)r->at;
	v.len = (size_t)(n - 1);
	r->at += v.len;
	k8s_form_check(r, memchr(v.ptr, '\0', v.len) == NULL, "string with a nul");
	return v;
}

/*! \brief Copies a string behind the structure, within the announced bytes. */
static inline const char *k8s_form_pack(k8s_form_reader_t *r, k8s_form_view_t v)
{
	if (v.ptr == NULL || !k8s_form_check(r, v.len < r->str_left, "strings longer than announced")) {
		return NULL;
	}
	char *out = r->str_at;
	memcpy(out, v.ptr, v.len);
	out[v.len] = '\0';
	r->str_at += v.len + 1;
	r->str_left -= v.len + 1;
	return out;
}

/*! \brief How a string must look: what the API objects' decoder keeps there, lowercase. */
typedef enum {
	K8S_FORM_LABEL,      /*!< A DNS label (names, hostnames, port names, service labels). */
	K8S_FORM_NAME,       /*!< Dot-separated DNS labels of at most 253 bytes (ExternalName). */
	K8S_FORM_SUBDOMAIN,  /*!< A DNS subdomain, labels of any length (names of kinds that are no label). */
	K8S_FORM_TOPOLOGY,   /*!< Dot-separated labels of at most 63 bytes (node zone, region). */
	K8S_FORM_CLUSTER,    /*!< A cluster id. */
} k8s_form_str_t;

static inline const char *k8s_form_get_str(k8s_form_reader_t *r, k8s_form_str_t kind,
                                           bool required)
{
	k8s_form_view_t v = k8s_form_get_view(r, false);
	if (v.ptr == NULL) {
		k8s_form_check(r, !required, "missing name");
		return NULL;
	}
	bool valid = false;
	switch (kind) {
	case K8S_FORM_LABEL:
		valid = k8s_dns_label_valid(v.ptr, v.len, false);
		break;
	case K8S_FORM_NAME:
		valid = k8s_dns_name_valid(v.ptr, v.len, K8S_DNS_NAME_MAX, 0, false);
		break;
	case K8S_FORM_SUBDOMAIN:
		valid = k8s_dns_subdomain_valid(v.ptr, v.len);
		break;
	case K8S_FORM_TOPOLOGY:
		valid = k8s_dns_name_valid(v.ptr, v.len, K8S_DNS_LABEL_MAX, 0, false);
		break;
	case K8S_FORM_CLUSTER:
		valid = k8s_cluster_id_valid(v.ptr, v.len, false);
		break;
	}
	return k8s_form_check(r, valid, "invalid name") ? k8s_form_pack(r, v) : NULL;
}

/*! \brief An address of \a family, or of either (AF_UNSPEC: then the file says which). */
static inline void k8s_form_get_ip(k8s_form_reader_t *r, int family, k8s_ip_t *ip)
{
	if (family == AF_UNSPEC) {
		uint64_t tag = k8s_form_get_u(r, 1);
		k8s_form_check(r, tag == 4 || tag == 6, "unknown address family");
		family = (tag == 4) ? AF_INET : AF_INET6;
	}
	size_t len = (family == AF_INET) ? 4 : 16;
	if (k8s_form_check(r, k8s_form_left(r) >= len, "truncated")) {
		ip->family = (uint8_t)family;
		memcpy(ip->bytes, r->at, len);
		r->at += len;
	}
}

/*! \brief A u8 count (at most two) and the ips. */
uint8_t k8s_form_get_ips(k8s_form_reader_t *r, k8s_ip_t ips[2]);

/*! \brief \a count ports as k8s_form_put_ports() writes them; \a out, or NULL for none. */
const k8s_port_t *k8s_form_get_ports(k8s_form_reader_t *r, k8s_port_t *out, uint16_t count);

/*! \brief A count of \a n bytes of items of at least \a min bytes each: no larger than
 *  the bytes left allow. */
static inline uint64_t k8s_form_get_count(k8s_form_reader_t *r, size_t n, size_t min)
{
	uint64_t count = k8s_form_get_u(r, n);
	return k8s_form_check(r, count <= k8s_form_left(r) / min, "count larger than the object") ?
	       count : 0;
}

/*!
 * \brief One allocation as the API objects' decoder makes it (objects.h): \a head bytes of
 * structure, then \a arrays, then \a strings; NULL when out of memory or \a r is bad already.
 */
void *k8s_form_alloc(k8s_form_reader_t *r, size_t head, size_t arrays, size_t strings,
                     void **arr_at);

/*! \brief Sets the kind, reads the name (by the kind's rule) and the namespace of a namespaced kind. */
void k8s_form_get_meta(k8s_form_reader_t *r, k8s_object_t *obj, k8s_kind_t kind);

/*!
 * \brief Reads one object of \a kind from \a len bytes: all of them, its strings exactly
 * as announced. No digest: the first LIST computes it (k8s_object_digest_of()).
 *
 * \retval KNOT_EOK, KNOT_EMALF (\a err says why), KNOT_ENOMEM
 */
int k8s_object_form_read(k8s_kind_t kind, const char *data, size_t len, k8s_object_t **out,
                         char *err, size_t err_len);

/*! \brief Hashes every kind's form revision that is not 0 into \a h (the snapshot's fingerprint). */
uint64_t k8s_object_forms_hash(uint64_t h);
