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

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "lib/beat.h"

static pthread_mutex_t beats_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_beat_t *beats;

void k8s_beat_start(k8s_beat_t *b, bool owing, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	(void)vsnprintf(b->name, sizeof(b->name), fmt, args);
	va_end(args);
	atomic_init(&b->owed_ms, owing ? k8s_now_ms() : 0);
	pthread_mutex_lock(&beats_lock);
	b->next = beats;
	beats = b;
	pthread_mutex_unlock(&beats_lock);
}

void k8s_beat_stop(k8s_beat_t *b)
{
	pthread_mutex_lock(&beats_lock);
	for (k8s_beat_t **p = &beats; *p != NULL; p = &(*p)->next) {
		if (*p == b) {
			*p = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&beats_lock);
	b->next = NULL;
}

bool k8s_beat_late(uint64_t now, uint64_t bound_ms, char *name, size_t name_len,
                   uint64_t *for_ms)
{
	uint64_t latest = 0;
	pthread_mutex_lock(&beats_lock);
	for (const k8s_beat_t *b = beats; b != NULL; b = b->next) {
		uint64_t owed = atomic_load_explicit(&b->owed_ms, memory_order_relaxed);
		// A beat a moment newer than `now` (read before it) owes nothing yet.
		uint64_t late = (owed != 0 && now > owed) ? now - owed : 0;
		if (late >= bound_ms && late > latest) {
			latest = late;
			(void)snprintf(name, name_len, "%s", b->name);
		}
	}
	pthread_mutex_unlock(&beats_lock);
	*for_ms = latest;
	return latest > 0;
}
