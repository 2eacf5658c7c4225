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

/*
 * The Prometheus text exposition format: a family's HELP and TYPE, a sample, a
 * histogram (metrics.h). Every series writer calls these (metrics.c, dnsmetrics.c,
 * forward_metrics.c); they call nothing back.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include <libknot/errcode.h>

#include "ops/metrics.h"

static void out_printf(k8s_metrics_out_t *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_printf(k8s_metrics_out_t *out, const char *fmt, ...)
{
	if (out->failed) {
		return;
	}
	char line[512];
	va_list args;
	va_start(args, fmt);
	int len = vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	if (len < 0 || (size_t)len >= sizeof(line) ||
	    k8s_buf_append(&out->buf, line, len, K8S_METRICS_MAX_PAGE) != KNOT_EOK) {
		out->failed = true;
	}
}

void k8s_metrics_family(k8s_metrics_out_t *out, const char *name, const char *type,
                        const char *help)
{
	out_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void k8s_metrics_sample(k8s_metrics_out_t *out, const char *name, const char *labels,
                        double value)
{
	// Counts as integers (exact below 2^53); sums with every digit a double holds.
	char text[40];
	if (value == (double)(int64_t)value && value < 9007199254740992.0) {
		snprintf(text, sizeof(text), "%" PRId64, (int64_t)value);
	} else {
		snprintf(text, sizeof(text), "%.17g", value);
	}
	if (labels != NULL && labels[0] != '\0') {
		out_printf(out, "%s{%s} %s\n", name, labels, text);
	} else {
		out_printf(out, "%s %s\n", name, text);
	}
}

void k8s_metrics_histogram(k8s_metrics_out_t *out, const char *name, const char *labels,
                           const uint64_t *counts, const double *bounds, size_t bound_count,
                           double sum)
{
	char key[256], series[256];
	uint64_t cumulative = 0;
	const char *sep = (labels != NULL && labels[0] != '\0') ? "," : "";
	labels = (labels != NULL) ? labels : "";
	snprintf(series, sizeof(series), "%s_bucket", name);
	for (size_t i = 0; i <= bound_count; i++) {
		cumulative += counts[i];
		if (i < bound_count) {
			snprintf(key, sizeof(key), "%s%sle=\"%g\"", labels, sep, bounds[i]);
		} else {
			snprintf(key, sizeof(key), "%s%sle=\"+Inf\"", labels, sep);
		}
		k8s_metrics_sample(out, series, key, (double)cumulative);
	}
	snprintf(series, sizeof(series), "%s_sum", name);
	k8s_metrics_sample(out, series, labels, sum);
	snprintf(series, sizeof(series), "%s_count", name);
	k8s_metrics_sample(out, series, labels, (double)cumulative);
}
