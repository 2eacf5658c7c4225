/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief RFC 3339 timestamps, as the API writes them (the EndpointSlice trigger time).
 */

#pragma once

#include <stdint.h>

/*! \brief Parses an RFC 3339 timestamp (with optional fraction) to Unix ns; 0 on error. */
int64_t k8s_rfc3339_parse(const char *text);
