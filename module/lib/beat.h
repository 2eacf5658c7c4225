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
 * \brief The module threads' heartbeats, which /health reads (ops/liveness.h): whether
 * a thread that has work makes progress, without asking it anything.
 *
 * A beat holds since when its thread owes progress (0: it owes none). A thread that loops
 * on a timer (the watcher, the forwarder, the endpoints) beats at each round of its loop
 * (k8s_beat()), so it always owes the next one: wedged once a round takes longer than
 * the bound. A thread that sleeps until work comes (the cold waiter) owes progress from
 * the moment work is handed to it (k8s_beat_owe()) until it takes it up
 * (k8s_beat_paid()): idle, it is never wedged. Every write is one relaxed atomic store
 * (a compare-and-swap in k8s_beat_owe()): no lock, nothing that waits.
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/clock.h"

/*! \brief Bytes of a beat's name ("watcher 0123456789abcdef", "cold waiter of cluster.local."). */
#define K8S_BEAT_NAME_MAX 96

typedef struct k8s_beat {
	struct k8s_beat *next;            /*!< The registry's list (its mutex). */
	char name[K8S_BEAT_NAME_MAX];     /*!< What /health names when it is wedged. */
	_Atomic uint64_t owed_ms;         /*!< k8s_now_ms() since progress is owed; 0: none. */
} k8s_beat_t;

/*!
 * \brief Registers \a b, named by \a fmt; \a owing: it owes progress from now on (a thread
 * that loops on a timer), else only once work is handed to it.
 */
void k8s_beat_start(k8s_beat_t *b, bool owing, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*! \brief Unregisters \a b (its memory may go afterwards); a beat never started is ignored. */
void k8s_beat_stop(k8s_beat_t *b);

/*! \brief A round of the thread's loop: progress now, the next owed from now. */
static inline void k8s_beat(k8s_beat_t *b)
{
	atomic_store_explicit(&b->owed_ms, k8s_now_ms(), memory_order_relaxed);
}

/*! \brief Work was handed to the thread: it owes progress from now, unless it already did. */
static inline void k8s_beat_owe(k8s_beat_t *b)
{
	uint64_t none = 0;
	(void)atomic_compare_exchange_strong_explicit(&b->owed_ms, &none, k8s_now_ms(),
	                                              memory_order_relaxed, memory_order_relaxed);
}

/*! \brief The thread took up its work: it owes nothing until work is handed to it again. */
static inline void k8s_beat_paid(k8s_beat_t *b)
{
	if (atomic_load_explicit(&b->owed_ms, memory_order_relaxed) != 0) {
		atomic_store_explicit(&b->owed_ms, 0, memory_order_relaxed);
	}
}

/*!
 * \brief The registered beat that has owed progress the longest, if that is \a bound_ms or
 * more at \a now: its name into \a name and for how long into \a for_ms.
 *
 * \return True if one is that late (a thread wedged).
 */
bool k8s_beat_late(uint64_t now, uint64_t bound_ms, char *name, size_t name_len,
                   uint64_t *for_ms);
