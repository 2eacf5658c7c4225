/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Growable byte buffer with a hard size cap.
 */

#pragma once

#include <stddef.h>

typedef struct {
	char *data;
	size_t len;
	size_t cap;
} k8s_buf_t;

/*!
 * \brief Appends bytes, growing the buffer geometrically.
 *
 * \param buf    Buffer.
 * \param data   Bytes to append.
 * \param len    Their count.
 * \param limit  The buffer never grows beyond this many bytes.
 *
 * \retval KNOT_EOK     on success.
 * \retval KNOT_ESPACE  if the result would exceed \a limit (buffer unchanged).
 * \retval KNOT_ENOMEM  on allocation failure (buffer unchanged).
 */
int k8s_buf_append(k8s_buf_t *buf, const void *data, size_t len, size_t limit);

/*! \brief Empties the buffer; keeps memory up to \a keep bytes, frees a larger one. */
void k8s_buf_reset(k8s_buf_t *buf, size_t keep);

/*! \brief Frees the memory. */
void k8s_buf_free(k8s_buf_t *buf);
