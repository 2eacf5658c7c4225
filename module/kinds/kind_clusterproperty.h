/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief about.k8s.io ClusterProperty (kind_clusterproperty.c).
 */

#pragma once

#include "kinds/kind.h"

/*! \brief about.k8s.io ClusterProperty. */
typedef struct {
	k8s_object_t meta;
	const char *value;         /*!< spec.value. */
} k8s_clusterproperty_t;
