/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief core/v1 Namespace (kind_namespace.c).
 */

#pragma once

#include "kinds/kind.h"

/*! \brief core/v1 Namespace. */
typedef struct {
	k8s_object_t meta;
} k8s_namespace_t;
