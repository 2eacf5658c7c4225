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

#include <stdarg.h>
#include <stdio.h>

#include "lib/log.h"

void k8s_logf(const k8s_log_t *log, int priority, const char *fmt, ...)
{
	if (log == NULL || log->fn == NULL) {
		return;
	}

	char msg[512];
	va_list args;
	va_start(args, fmt);
	int ret = vsnprintf(msg, sizeof(msg), fmt, args);
	va_end(args);
	if (ret < 0) {
		return;
	}

	log->fn(log->ctx, priority, msg);
}
