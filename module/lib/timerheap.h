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
 * \brief Timers ordered by due time: a binary min-heap of pointers to timers
 * that the caller embeds in its own records (one thread; no lock).
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#define K8S_TIMER_IDLE SIZE_MAX /*!< A timer's position when it is not in a heap. */

/*! \brief A timer embedded in the caller's record. */
typedef struct {
	uint64_t due_ms;       /*!< When it is due. */
	size_t pos;            /*!< Index in the heap, or K8S_TIMER_IDLE. */
} k8s_timer_t;

typedef struct {
	k8s_timer_t **items;
	size_t count;
	size_t cap;
} k8s_timer_heap_t;

/*! \brief Room for cap timers (grown at least twofold): KNOT_EOK or KNOT_ENOMEM. */
int k8s_timer_heap_reserve(k8s_timer_heap_t *h, size_t cap);

/*! \brief Schedules a timer; room must have been reserved. */
void k8s_timer_heap_push(k8s_timer_heap_t *h, k8s_timer_t *t, uint64_t due_ms);

/*! \brief Unschedules a timer that is in the heap; its pos becomes K8S_TIMER_IDLE. */
void k8s_timer_heap_remove(k8s_timer_heap_t *h, k8s_timer_t *t);

/*! \brief The timer due first, or NULL when the heap is empty. */
static inline k8s_timer_t *k8s_timer_heap_first(const k8s_timer_heap_t *h)
{
	return (h->count > 0) ? h->items[0] : NULL;
}

/*! \brief Frees the heap's array (not the timers). */
void k8s_timer_heap_deinit(k8s_timer_heap_t *h);
