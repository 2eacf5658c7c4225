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

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libknot/errcode.h>

#include "lib/ticker.h"

static void *ticker_main(void *arg)
{
	k8s_ticker_t *t = arg;
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		k8s_beat(&t->beat);  // A round waits period_ms.
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += t->period_ms / 1000;
		until.tv_nsec += (long)(t->period_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!t->stop && pthread_cond_timedwait(&t->cond, &t->lock, &until) == 0) {
			// Woken before the period's end: by the stop alone (or spuriously).
		}
		if (t->stop) {
			break;
		}
		pthread_mutex_unlock(&t->lock);
		t->tick(t->arg);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int k8s_ticker_start(k8s_ticker_t *t, const char *thread, const char *what,
                     unsigned period_ms, void (*tick)(void *arg), void *arg)
{
	memset(t, 0, sizeof(*t));
	k8s_beat_start(&t->beat, true, "%s", what);
	t->period_ms = period_ms;
	t->tick = tick;
	t->arg = arg;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &attr);
	pthread_condattr_destroy(&attr);
	t->running = pthread_create(&t->thread, NULL, ticker_main, t) == 0;
	if (!t->running) {
		k8s_beat_stop(&t->beat);
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		return KNOT_ENOMEM;
	}
	// Named for top -H and the tests' fault injection (a name is 15 characters at most).
	char name[16];
	(void)snprintf(name, sizeof(name), "%s", thread);
	(void)pthread_setname_np(t->thread, name);
	return KNOT_EOK;
}

void k8s_ticker_stop(k8s_ticker_t *t)
{
	if (!t->running) {
		return;
	}
	k8s_beat_stop(&t->beat);
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	t->running = false;
}
