/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief core/v1 Node (kind_node.c).
 */

#pragma once

#include "kinds/kind.h"

/*!
 * \brief core/v1 Node: its topology, for federation names.
 *
 * Zone and region come from topology.kubernetes.io/zone and /region, else from
 * the deprecated failure-domain.beta.kubernetes.io labels; a value that is no
 * DNS name (lowercased, dot-separated RFC 1123 labels) counts as absent.
 */
typedef struct {
	k8s_object_t meta;
	const char *zone;          /*!< Lowercase zone, or NULL. */
	const char *region;        /*!< Lowercase region, or NULL. */
} k8s_node_t;
