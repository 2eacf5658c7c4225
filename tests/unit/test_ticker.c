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
 * The glue's poller thread (module/lib/ticker.c): its function called once a period from
 * a thread of its own, never after the stop, and the stop not waiting out a period.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "lib/ticker.h"

typedef struct {
	pthread_mutex_t lock;
	unsigned ticks;
	pthread_t thread;
	char name[16];
} counter_t;

static void count(void *arg)
{
	counter_t *c = arg;
	pthread_mutex_lock(&c->lock);
	c->ticks++;
	c->thread = pthread_self();
	(void)pthread_getname_np(c->thread, c->name, sizeof(c->name));
	pthread_mutex_unlock(&c->lock);
}

static unsigned ticks(counter_t *c)
{
	pthread_mutex_lock(&c->lock);
	unsigned n = c->ticks;
	pthread_mutex_unlock(&c->lock);
	return n;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void the_function_is_called_every_period_from_the_tickers_thread(void **state)
{
	counter_t c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	k8s_ticker_t t;
	assert_int_equal(k8s_ticker_start(&t, "k8s-test-ticker-long", "a test", 20, count, &c), KNOT_EOK);
	double deadline = seconds() + 10;
	while (ticks(&c) < 3 && seconds() < deadline) {
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	k8s_ticker_stop(&t);
	unsigned after_stop = ticks(&c);
	assert_true(after_stop >= 3);
	assert_false(pthread_equal(c.thread, pthread_self()));
	assert_string_equal(c.name, "k8s-test-ticker");  // Named for top -H: cut to 15 bytes.
	// Stopped: never called again.
	nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
	assert_int_equal(ticks(&c), after_stop);
	// Stopping twice, or a ticker never started, does nothing.
	k8s_ticker_stop(&t);
	k8s_ticker_t never = { 0 };
	k8s_ticker_stop(&never);
}

static void the_stop_wakes_the_thread_without_waiting_the_period(void **state)
{
	counter_t c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	k8s_ticker_t t;
	assert_int_equal(k8s_ticker_start(&t, "k8s-test", "a test", 3600 * 1000, count, &c), KNOT_EOK);
	double started = seconds();
	k8s_ticker_stop(&t);
	assert_true(seconds() - started < 30);  // Not an hour: woken, not timed out.
	assert_int_equal(ticks(&c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_function_is_called_every_period_from_the_tickers_thread),
		cmocka_unit_test(the_stop_wakes_the_thread_without_waiting_the_period),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
