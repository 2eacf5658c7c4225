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
 * \brief String-keyed hash map for the watcher's own bookkeeping (one thread, no RCU).
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	char *key;          /*!< Owned copy, NULL for an empty slot. */
	void *value;
} k8s_map_slot_t;

typedef struct {
	k8s_map_slot_t *slots;
	size_t cap;         /*!< Power of two, or 0. */
	size_t count;       /*!< Live entries. */
	size_t used;        /*!< Live entries plus tombstones. */
} k8s_map_t;

/*! \brief Value stored under \a key, or NULL. */
void *k8s_map_get(const k8s_map_t *map, const char *key);

/*!
 * \brief Stores \a value under \a key (replacing any previous value).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (map unchanged)
 */
int k8s_map_set(k8s_map_t *map, const char *key, void *value);

/*! \brief Removes \a key; returns its value or NULL. */
void *k8s_map_del(k8s_map_t *map, const char *key);

/*! \brief Iterates: \a pos starts at 0; returns the next slot or NULL at the end. */
const k8s_map_slot_t *k8s_map_next(const k8s_map_t *map, size_t *pos);

/*! \brief Frees the map (not the values). */
void k8s_map_clear(k8s_map_t *map);
