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
 * \brief A thread that calls a function once a period until it is stopped: the knotd
 * glue's pollers (kube-dns's ConfigMap, the hosts table). It waits on CLOCK_MONOTONIC
 * (a clock step changes nothing), and stopping it wakes it at once, so a knotd reload
 * never waits a period. Its thread beats each round (lib/beat.h), so /health sees a tick
 * that never returns.
 */

#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "lib/beat.h"

typedef struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;                /*!< Under lock. */
	bool running;
	unsigned period_ms;
	void (*tick)(void *arg);  /*!< Called without the lock, from the ticker's thread. */
	void *arg;
	k8s_beat_t beat;          /*!< A round each period (/health). */
} k8s_ticker_t;

/*!
 * \brief Starts \a t: \a tick(\a arg) every \a period_ms, the first time one period after
 * the start; its thread named \a thread (top -H, at most 15 characters), its beat \a what.
 * \retval KNOT_EOK, KNOT_ENOMEM (no thread)
 */
int k8s_ticker_start(k8s_ticker_t *t, const char *thread, const char *what,
                     unsigned period_ms, void (*tick)(void *arg), void *arg);

/*! \brief Stops \a t and joins its thread (a tick under way ends first); nothing if not started. */
void k8s_ticker_stop(k8s_ticker_t *t);
