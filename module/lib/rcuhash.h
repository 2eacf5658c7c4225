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
 * \brief Open-addressing hash of pointers: one writer, lock-free readers.
 *
 * Readers (knotd workers) run inside an RCU read-side section and see every
 * slot either before or after a writer's store, never torn: a slot holds one
 * pointer, written with a single release store. Keys live in the elements, so
 * the table only stores pointers and the caller compares keys. Several
 * elements may share a key (a PTR index maps one IP to many records).
 * Deleted slots become tombstones; the writer rebuilds the array (publishing
 * it with one pointer and retiring the old one) when too few slots are free.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/pointer.h>
#include <urcu/system.h>

#include "lib/retire.h"

/*! \brief Marks a deleted slot; never a valid element address. */
#define K8S_RCUHASH_TOMB ((void *)(uintptr_t)1)

typedef struct {
	size_t mask;        /*!< Capacity minus one; capacity is a power of two. */
	void *slots[];      /*!< NULL empty, K8S_RCUHASH_TOMB deleted, else an element. */
} k8s_rcuhash_arr_t;

/*! \brief Computes an element's hash (writer side, when the array is rebuilt). */
typedef uint32_t (*k8s_rcuhash_fn)(const void *elem);

typedef struct {
	k8s_rcuhash_arr_t *arr;  /*!< Published array. */
	size_t used;             /*!< Live elements plus tombstones (writer only). */
	size_t live;             /*!< Live elements (writer only). */
	k8s_rcuhash_fn hash;     /*!< Element hash, for rebuilds. */
	bool sparse;             /*!< Load at most a half, not three quarters (writer only). */
} k8s_rcuhash_t;

/*! \brief Reader cursor over the elements that may match one hash. */
typedef struct {
	const k8s_rcuhash_arr_t *arr;
	size_t pos;
} k8s_rcuhash_iter_t;

/*! \brief Starts a lookup of \a hash (reader, inside an RCU read-side section). */
static inline void k8s_rcuhash_iter_init(k8s_rcuhash_iter_t *it, const k8s_rcuhash_t *h,
                                         uint32_t hash)
{
	it->arr = rcu_dereference(((k8s_rcuhash_t *)h)->arr);
	it->pos = hash & it->arr->mask;
}

/*! \brief Next candidate element for the hash, NULL when there is none; the caller compares keys. */
static inline void *k8s_rcuhash_iter_next(k8s_rcuhash_iter_t *it)
{
	for (;;) {
		void *elem = rcu_dereference(((k8s_rcuhash_arr_t *)it->arr)->slots[it->pos]);
		if (elem == NULL) {
			return NULL;
		}
		it->pos = (it->pos + 1) & it->arr->mask;
		if (elem != K8S_RCUHASH_TOMB) {
			return elem;
		}
	}
}

/*!
 * \brief Creates an empty table.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM
 */
int k8s_rcuhash_init(k8s_rcuhash_t *h, k8s_rcuhash_fn hash);

/*! \brief Frees the array; only when no reader can see it any more. */
void k8s_rcuhash_deinit(k8s_rcuhash_t *h);

/*! \brief Empties the table, keeping its array; only when no reader can look at it. */
void k8s_rcuhash_clear(k8s_rcuhash_t *h);

/*!
 * \brief Adds an element (duplicates of a key are allowed).
 *
 * \param retire  Receives an outgrown array, to free after a grace period.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (table unchanged)
 */
int k8s_rcuhash_insert(k8s_rcuhash_t *h, uint32_t hash, void *elem, k8s_retire_t *retire);

/*!
 * \brief Makes room so that the next \a extra insertions cannot fail.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (table unchanged)
 */
int k8s_rcuhash_reserve(k8s_rcuhash_t *h, size_t extra, k8s_retire_t *retire);

/*! \brief Puts \a elem_new in the slot of \a elem_old (same hash); false if \a elem_old is absent. */
bool k8s_rcuhash_replace(k8s_rcuhash_t *h, uint32_t hash, const void *elem_old, void *elem_new);

/*! \brief Removes the slot holding \a elem; false if absent. */
bool k8s_rcuhash_remove(k8s_rcuhash_t *h, uint32_t hash, const void *elem);

/*! \brief Writer-side iteration over all live elements; \a pos starts at 0. NULL at the end. */
void *k8s_rcuhash_walk(const k8s_rcuhash_t *h, size_t *pos);
