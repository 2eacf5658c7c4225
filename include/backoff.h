/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */


/*!
 * \file
 *
 * \brief Retry delays of a reflector, as client-go's reflector computes them.
 *
 * 0.8 s doubling to a 30 s cap, plus a uniform jitter of up to the same
 * duration again (so [0.8, 1.6) s first and [30, 60) s at the cap), and back
 * to the start after 2 minutes without a failure.
 */

#pragma once

#include <stdint.h>

#define K8S_BACKOFF_BASE_MS   800
#define K8S_BACKOFF_CAP_MS    (30 * 1000)
#define K8S_BACKOFF_RESET_MS  (2 * 60 * 1000)

/*! \brief Backoff state; zero-initialised means "no failure yet". */
typedef struct {
	unsigned steps;     /*!< Delays handed out since the last reset. */
	uint64_t last_ms;   /*!< When the last delay was handed out (monotonic ms). */
} k8s_backoff_t;

/*!
 * \brief The delay before the next retry, in milliseconds.
 *
 * \param b        Backoff state (updated).
 * \param now_ms   Monotonic time of the failure.
 * \param jitter   A uniformly random number in [0, 1).
 */
uint64_t k8s_backoff_next(k8s_backoff_t *b, uint64_t now_ms, double jitter);
