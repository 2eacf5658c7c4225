/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Logging sink for code that must not call knotd directly.
 *
 * The watcher and its parts log through a k8s_log_t; the knotd glue points it
 * at knotd_mod_log(), unit tests at a capture buffer.
 */

#pragma once

#include <syslog.h>

/*! \brief Receives one formatted message (no "mod-k8s:" prefix, no newline). */
typedef void (*k8s_log_fn)(void *ctx, int priority, const char *msg);

typedef struct {
	k8s_log_fn fn;
	void *ctx;
} k8s_log_t;

/*!
 * \brief Formats and emits a message; does nothing when \a log or its fn is NULL.
 *
 * Messages follow Knot's style: lowercase, context first, reason in
 * parentheses, never a secret.
 */
void k8s_logf(const k8s_log_t *log, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
