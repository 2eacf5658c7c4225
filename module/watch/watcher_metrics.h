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
 * \brief The watchers' Prometheus series (mod_k8s_ready ... mod_k8s_snapshot_*, the DNS
 * programming latency; doc/mod-k8s.rst, Metrics reference): one set per watcher,
 * labelled by its settings' fingerprint, however many zones share it. Private to the
 * watcher's files: watcher.c's metrics source copies each watcher's last counters under
 * the registry's lock and hands them here to be written.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ops/metrics.h"
#include "watch/watcher.h"

/*! \brief Watchers listed per scrape at most (a process has a few: one per API server and settings). */
#define K8S_WATCHER_METRICS_MAX 64

/*! \brief A watcher's last counters and the fingerprint of its settings. */
typedef struct {
	k8s_watcher_stats_t st;
	uint64_t fingerprint;
} k8s_watcher_row_t;

/*! \brief Writes the watchers' families and \a count rows' samples. */
void k8s_watcher_metrics_write(k8s_metrics_out_t *out, const k8s_watcher_row_t *rows,
                               size_t count);
