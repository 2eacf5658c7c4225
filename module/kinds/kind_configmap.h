/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief core/v1 ConfigMap (kind_configmap.c): the keys of its `data`, read only for the
 * ConfigMaps the settings name (kube-dns's, a hosts key), never for records.
 */

#pragma once

#include "kinds/kind.h"

/*! \brief Most keys of one ConfigMap: one with more is skipped whole (logged, counted). */
#define K8S_CONFIGMAP_KEYS_MAX 64

/*!
 * \brief Longest value (bytes): the API server stores at most 1 MiB per object, so a
 * larger one is no real ConfigMap's; one with such a value is skipped whole.
 */
#define K8S_CONFIGMAP_VALUE_MAX (1024 * 1024)

/*! \brief One key of `data`. */
typedef struct {
	const char *key;     /*!< As the API checks it: [-._a-zA-Z0-9]+, at most 253 bytes, not "." nor "..". */
	const char *value;   /*!< Its text, without a NUL (a value holding one skips the object). */
	uint32_t len;        /*!< Bytes of value. */
} k8s_cm_entry_t;

/*! \brief core/v1 ConfigMap: its `data` (binaryData is not read). */
typedef struct {
	k8s_object_t meta;
	uint16_t count;               /*!< Keys of data, in the API's order (sorted). */
	const k8s_cm_entry_t *data;   /*!< NULL without keys. */
} k8s_configmap_t;

/*! \brief The entry of \a key, or NULL. */
const k8s_cm_entry_t *k8s_configmap_get(const k8s_configmap_t *cm, const char *key);

/*! \brief Whether \a s (\a len bytes) is a ConfigMap key the API server accepts. */
bool k8s_configmap_key_valid(const char *s, size_t len);
