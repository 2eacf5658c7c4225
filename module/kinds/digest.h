/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The digests of decoded objects, one function per kind (the decoder's
 * kind table names them; k8s_object_digest() in objects.h is the entry point).
 *
 * Each continues the hash of the fields every object has (k8s_digest_meta())
 * with the fields of its kind that make records.
 */

#pragma once

#include <stdint.h>

#include "objects.h"

/*! \brief The hash of kind, namespace and name. */
uint64_t k8s_digest_meta(const k8s_object_t *obj);

uint64_t k8s_digest_service(uint64_t h, const k8s_object_t *obj);
uint64_t k8s_digest_slice(uint64_t h, const k8s_object_t *obj);
uint64_t k8s_digest_pod(uint64_t h, const k8s_object_t *obj);
uint64_t k8s_digest_serviceimport(uint64_t h, const k8s_object_t *obj);
uint64_t k8s_digest_clusterproperty(uint64_t h, const k8s_object_t *obj);
uint64_t k8s_digest_node(uint64_t h, const k8s_object_t *obj);
