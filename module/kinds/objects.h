/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Slim copies of Kubernetes API objects: only the fields DNS needs.
 *
 * The decoder turns the JSON of one API object (a LIST item or the object of
 * a watch event) into its kind's structure (kind_*.h, included below; the kind's
 * decoder, digest and snapshot form are in its kind_*.c). Every decoded object is a
 * single allocation (structure, arrays and strings packed behind it), released
 * with k8s_object_free(). Strings are NUL-terminated, lowercase where the API
 * guarantees case-insensitive meaning (names, hostnames, port names), and
 * already validated as DNS labels where they become one.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kinds/kind.h"
#include "kinds/kind_service.h"
#include "kinds/kind_endpointslice.h"
#include "kinds/kind_namespace.h"
#include "kinds/kind_pod.h"
#include "kinds/kind_serviceimport.h"
#include "kinds/kind_clusterproperty.h"
#include "kinds/kind_node.h"
#include "kinds/kind_configmap.h"
#include "lib/jsonscan.h"

/*!
 * \brief Decodes one API object.
 *
 * \param kind    Expected kind.
 * \param text    JSON text of the object (need not be NUL-terminated).
 * \param len     Its length.
 * \param obj     Out: the object (single allocation) on success.
 * \param err     Out: a lowercase reason on failure (may be NULL).
 * \param errlen  Size of \a err.
 *
 * \retval KNOT_EOK     decoded.
 * \retval KNOT_ESPACE  too many JSON values or objects (k8s_json_bounded(), events.h): not parsed.
 * \retval KNOT_EMALF   not JSON, or not an object.
 * \retval KNOT_EINVAL  a required field is missing or invalid (e.g. a name that is no DNS label).
 * \retval KNOT_ENOMEM  out of memory.
 */
int k8s_object_decode(k8s_kind_t kind, const char *text, size_t len,
                      k8s_object_t **obj, char *err, size_t errlen);

/*! As k8s_object_decode(), scanning into \a tape (reused from object to object: a reflector's). */
int k8s_object_decode_tape(k8s_jtape_t *tape, k8s_kind_t kind, const char *text, size_t len,
                           k8s_object_t **obj, char *err, size_t errlen);

/*! Decodes an object from a scanned value, as k8s_object_decode() (events.c's watch events). */
int k8s_object_decode_jv(k8s_kind_t kind, k8s_jv_t root, k8s_object_t **obj,
                         char *err, size_t errlen);

/*!
 * \brief The digest of a decoded object: FNV-1a (64-bit) over the fields that make records.
 *
 * Ports and endpoints are sets to DNS, so reordering them keeps the digest;
 * resourceVersion, annotations other than those used, and the trigger time
 * are left out.
 */
uint64_t k8s_object_digest(const k8s_object_t *obj);

/*!
 * \brief The object's digest, computed on first use and kept.
 *
 * Neither decoded nor read objects get it at once: the store computes it when it first
 * compares an object with its next version, in the watcher's thread, so that a first
 * sync or a warm start, which compare nothing, answer sooner.
 */
uint64_t k8s_object_digest_of(k8s_object_t *obj);

/*! \brief Frees a decoded object (NULL is fine). */
void k8s_object_free(k8s_object_t *obj);
