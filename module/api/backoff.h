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
 * to the start after 2 minutes without a failure or at once after a success
 * (k8s_backoff_reset). A server's Retry-After is taken as it is, a little
 * jittered, and does not grow the delay (k8s_backoff_retry_after).
 */

#pragma once

#include <stdint.h>

#define K8S_BACKOFF_BASE_MS   800
#define K8S_BACKOFF_CAP_MS    (30 * 1000)
#define K8S_BACKOFF_RESET_MS  (2 * 60 * 1000)
/*! A Retry-After delay is lengthened by up to this share, so that clients do not return in step. */
#define K8S_BACKOFF_RETRY_AFTER_JITTER 0.1
/*! The longest wait a Retry-After gets, jitter included (real servers ask for 30 s at most). */
#define K8S_BACKOFF_RETRY_AFTER_MAX_MS (300 * 1000)

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

/*!
 * \brief The delay before retrying after a server asked for \a retry_after_ms.
 *
 * The server's own delay plus up to a tenth of it, at most
 * K8S_BACKOFF_RETRY_AFTER_MAX_MS in all; the backoff state is not stepped: the
 * server said when it will be ready, so asking often is no failure.
 *
 * \param retry_after_ms  The server's Retry-After.
 * \param jitter          A uniformly random number in [0, 1).
 */
uint64_t k8s_backoff_retry_after(uint64_t retry_after_ms, double jitter);

/*! \brief A success (a completed list, a watch that delivered or lasted): start small again. */
void k8s_backoff_reset(k8s_backoff_t *b);
