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
 * The hand-over slots between knotd's workers and a late-answering thread
 * (module/forward/slots.c), as the forwarder and the cold waiter use them.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "slots.h"

#define COUNT 16

typedef struct {
	k8s_slot_t h;
	uint8_t wire[32];
} test_slot_t;

typedef struct {
	k8s_slots_t slots;
	test_slot_t array[COUNT];
} owner_t;

static owner_t *owner_new(void)
{
	owner_t *o = calloc(1, sizeof(*o));
	assert_non_null(o);
	assert_int_equal(k8s_slots_init(&o->slots, o->array, COUNT, sizeof(test_slot_t)),
	                 KNOT_EOK);
	return o;
}

static bool woken(k8s_slots_t *slots)
{
	struct pollfd pfd = { .fd = slots->wake_fd, .events = POLLIN };
	return poll(&pfd, 1, 0) == 1;
}

static void a_claimed_slot_is_seen_by_the_thread_only_once_published(void **state)
{
	(void)state;
	owner_t *o = owner_new();
	struct sockaddr_storage remote = { .ss_family = AF_INET };
	test_slot_t *s = (test_slot_t *)k8s_slots_claim(&o->slots, 7, false, 5, &remote);
	assert_non_null(s);
	assert_int_equal(s->h.fd, 7);  // UDP: knotd's socket itself.
	assert_false(s->h.tcp);
	assert_int_equal(s->h.len, 5);
	assert_int_equal(s->h.remote.ss_family, AF_INET);
	size_t i = (size_t)(s - o->array);
	assert_null(k8s_slots_ready(&o->slots, i));  // Filling: not the thread's yet.
	assert_false(woken(&o->slots));

	memcpy(s->wire, "query", 5);
	k8s_slots_publish(&o->slots, &s->h);
	assert_true(woken(&o->slots));
	k8s_slots_woken(&o->slots);
	assert_false(woken(&o->slots));
	assert_ptr_equal(k8s_slots_ready(&o->slots, i), &s->h);
	assert_memory_equal(s->wire, "query", 5);

	k8s_slots_release(&s->h, true);
	assert_null(k8s_slots_ready(&o->slots, i));
	k8s_slots_deinit(&o->slots);
	free(o);
}

static void a_worker_tries_eight_slots_and_never_waits(void **state)
{
	(void)state;
	owner_t *o = owner_new();
	k8s_slot_t *taken[COUNT];
	for (size_t i = 0; i < COUNT; i++) {
		// Each claim starts one further on: the i-th finds slot i free.
		taken[i] = k8s_slots_claim(&o->slots, 3, false, 1, NULL);
		assert_ptr_equal(taken[i], &o->array[i].h);
		k8s_slots_publish(&o->slots, taken[i]);
	}
	// A free slot more than seven on from where a worker starts is not looked at: the
	// workers starting at 0 to 4 fail (0 to 7, ..., 4 to 11), the one at 5 finds 12.
	k8s_slots_release(taken[12], true);
	size_t failed = 0;
	k8s_slot_t *found;
	while ((found = k8s_slots_claim(&o->slots, 3, false, 1, NULL)) == NULL) {
		failed++;
		assert_true(failed <= COUNT);
	}
	assert_int_equal(failed, 5);
	assert_ptr_equal(found, taken[12]);
	k8s_slots_deinit(&o->slots);
	free(o);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void *thread_idle(void *arg)
{
	k8s_slots_t *slots = arg;
	while (!k8s_slots_stopping(slots)) {
		struct pollfd pfd = { .fd = slots->wake_fd, .events = POLLIN };
		(void)poll(&pfd, 1, -1);
		k8s_slots_woken(slots);
	}
	return NULL;
}

static void a_tcp_connection_is_duplicated_and_its_duplicate_closed_by_the_last_holder(void **state)
{
	(void)state;
	int pair[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	owner_t *o = owner_new();
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, thread_idle, &o->slots), 0);

	// Released with its duplicate closed: the connection itself stays knotd's.
	k8s_slot_t *a = k8s_slots_claim(&o->slots, pair[0], true, 2, NULL);
	assert_non_null(a);
	assert_true(a->tcp);
	assert_int_not_equal(a->fd, pair[0]);
	int dup_a = a->fd;
	k8s_slots_publish(&o->slots, a);
	k8s_slots_release(a, true);
	assert_false(fd_open(dup_a));
	assert_true(fd_open(pair[0]));

	// Released with its duplicate taken by the caller: still open.
	k8s_slot_t *b = k8s_slots_claim(&o->slots, pair[0], true, 2, NULL);
	assert_non_null(b);
	int dup_b = b->fd;
	k8s_slots_publish(&o->slots, b);
	k8s_slots_release(b, false);
	assert_true(fd_open(dup_b));
	close(dup_b);

	// Still waiting when the thread stops: closed by the stop.
	k8s_slot_t *c = k8s_slots_claim(&o->slots, pair[0], true, 2, NULL);
	assert_non_null(c);
	int dup_c = c->fd;
	k8s_slots_publish(&o->slots, c);
	int wake_fd = o->slots.wake_fd;
	k8s_slots_stop(&o->slots, thread);
	assert_false(fd_open(dup_c));
	assert_false(fd_open(wake_fd));
	assert_true(fd_open(pair[0]));

	close(pair[0]);
	close(pair[1]);
	free(o);
}

static void a_failed_dup_frees_the_slot(void **state)
{
	(void)state;
	owner_t *o = owner_new();
	assert_null(k8s_slots_claim(&o->slots, -1, true, 1, NULL));
	for (size_t i = 0; i < COUNT; i++) {
		assert_non_null(k8s_slots_claim(&o->slots, 3, false, 1, NULL));
	}
	k8s_slots_deinit(&o->slots);
	free(o);
}

static uint64_t wake_count(k8s_slots_t *slots)
{
	uint64_t value = 0;
	(void)!read(slots->wake_fd, &value, sizeof(value));
	return value;
}

static void a_batch_of_hand_overs_wakes_the_thread_once(void **state)
{
	(void)state;
	owner_t *o = owner_new();
	struct sockaddr_storage remote = { .ss_family = AF_INET };
	for (int n = 0; n < 3; n++) {
		k8s_slots_publish(&o->slots, k8s_slots_claim(&o->slots, 7, false, 5, &remote));
	}
	assert_int_equal(wake_count(&o->slots), 1);  // One write for the three.
	// Not looked yet: a fourth is seen with the others, no write.
	k8s_slots_publish(&o->slots, k8s_slots_claim(&o->slots, 7, false, 5, &remote));
	assert_false(woken(&o->slots));
	// Once the thread looks, the next hand-over wakes it again.
	k8s_slots_looking(&o->slots);
	k8s_slots_publish(&o->slots, k8s_slots_claim(&o->slots, 7, false, 5, &remote));
	assert_int_equal(wake_count(&o->slots), 1);
	k8s_slots_deinit(&o->slots);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_claimed_slot_is_seen_by_the_thread_only_once_published),
		cmocka_unit_test(a_worker_tries_eight_slots_and_never_waits),
		cmocka_unit_test(a_tcp_connection_is_duplicated_and_its_duplicate_closed_by_the_last_holder),
		cmocka_unit_test(a_failed_dup_frees_the_slot),
		cmocka_unit_test(a_batch_of_hand_overs_wakes_the_thread_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
