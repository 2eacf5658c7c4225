/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.

    This program is distributed in the hope that it will be useful,
    but WITHOUT ANY WARRANTY; without even the implied warranty of
    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
    GNU General Public License for more details.

    You should have received a copy of the GNU General Public License
    along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */

/*!
 * \file
 *
 * \brief Memory that readers may still see, freed after an RCU grace period.
 *
 * The writer collects what it unpublishes during one commit, then hands the
 * whole batch to call_rcu() at once: one grace period per commit, and the
 * writer never waits for readers.
 */

#pragma once

#include <stddef.h>

typedef struct {
	void **ptrs;    /*!< Blocks to k8s_bulk_free() after the grace period. */
	size_t count;
	size_t cap;
} k8s_retire_t;

/*!
 * \brief Adds a block (of malloc() or k8s_bulk_calloc()) to free after the next grace period.
 *
 * If memory for the list cannot be had, waits for a grace period and frees
 * the block at once, so nothing leaks.
 */
void k8s_retire(k8s_retire_t *r, void *ptr);

/*! \brief Hands the collected blocks to call_rcu(); the list is empty afterwards. */
void k8s_retire_commit(k8s_retire_t *r);

/*! \brief Frees the collected blocks now; only when no reader can exist (teardown). */
void k8s_retire_flush_now(k8s_retire_t *r);
