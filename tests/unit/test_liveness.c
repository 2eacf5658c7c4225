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
 * /health's verdict (ops/liveness.h, lib/beat.h): a thread that loops on a timer is wedged
 * once it owes a round for the bound, a thread woken by work only while work waits for
 * it; a UDP socket of knotd's ports is wedged when a datagram has waited for the bound
 * with none read meanwhile, whatever the datagrams hold; reading one is progress.
 * The sockets are this test's own, looked up as /health looks up knotd's.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/beat.h"
#include "lib/clock.h"
#include "ops/liveness.h"

#define BOUND K8S_LIVENESS_BOUND_MS

static void a_looping_thread_is_wedged_once_it_owes_a_round_for_the_bound(void **state)
{
	k8s_beat_t b = { 0 };
	k8s_beat_start(&b, true, "watcher %s", "0123");
	uint64_t now = k8s_now_ms();
	char name[K8S_BEAT_NAME_MAX] = "";
	uint64_t late = 0;
	assert_false(k8s_beat_late(now + BOUND / 2, BOUND, name, sizeof(name), &late));
	assert_true(k8s_beat_late(now + BOUND + 1000, BOUND, name, sizeof(name), &late));
	assert_string_equal(name, "watcher 0123");
	assert_true(late >= BOUND + 1000 && late < BOUND + 2000);
	// A round: it owes the next from now.
	k8s_beat(&b);
	assert_false(k8s_beat_late(k8s_now_ms() + BOUND - 100, BOUND, name, sizeof(name), &late));
	k8s_beat_stop(&b);
	assert_false(k8s_beat_late(now + 10 * BOUND, BOUND, name, sizeof(name), &late));
}

static void a_thread_woken_by_work_owes_only_while_work_waits(void **state)
{
	k8s_beat_t b = { 0 };
	k8s_beat_start(&b, false, "cold waiter of %s", "cluster.local.");
	uint64_t now = k8s_now_ms();
	char name[K8S_BEAT_NAME_MAX] = "";
	uint64_t late = 0;
	assert_false(k8s_beat_late(now + 10 * BOUND, BOUND, name, sizeof(name), &late));
	k8s_beat_owe(&b);
	uint64_t owed = atomic_load(&b.owed_ms);
	assert_true(owed >= now);
	// More work does not move the clock: the first waits since then.
	usleep(2000);
	k8s_beat_owe(&b);
	assert_int_equal(atomic_load(&b.owed_ms), owed);
	assert_true(k8s_beat_late(owed + BOUND, BOUND, name, sizeof(name), &late));
	assert_string_equal(name, "cold waiter of cluster.local.");
	k8s_beat_paid(&b);
	assert_false(k8s_beat_late(owed + 10 * BOUND, BOUND, name, sizeof(name), &late));
	k8s_beat_stop(&b);
}

static void the_latest_of_several_is_named(void **state)
{
	k8s_beat_t a = { 0 }, b = { 0 }, c = { 0 };
	k8s_beat_start(&a, true, "forwarder of 10.0.0.1");
	k8s_beat_start(&b, true, "watcher 1");
	k8s_beat_start(&c, false, "cold waiter");
	atomic_store(&a.owed_ms, 1000);
	atomic_store(&b.owed_ms, 500);
	char name[K8S_BEAT_NAME_MAX] = "";
	uint64_t late = 0;
	assert_true(k8s_beat_late(500 + BOUND, BOUND, name, sizeof(name), &late));
	assert_string_equal(name, "watcher 1");
	assert_int_equal(late, BOUND);
	k8s_beat_stop(&b);
	assert_false(k8s_beat_late(500 + BOUND, BOUND, name, sizeof(name), &late));
	k8s_beat_stop(&a);
	k8s_beat_stop(&c);
	// Stopping one never started, or twice, is harmless.
	k8s_beat_t never = { 0 };
	k8s_beat_stop(&never);
	k8s_beat_stop(&c);
}

static void a_socket_waits_since_first_seen_waiting_until_one_is_read(void **state)
{
	// Nothing waits: never wedged.
	assert_int_equal(k8s_liveness_unread_since(NULL, false, -1, 5000), 0);
	// First seen waiting: since now, nothing known of before.
	assert_int_equal(k8s_liveness_unread_since(NULL, true, -1, 5000), 5000);
	k8s_liveness_socket_t old = { .ino = 1, .read_ns = 42, .unread_ms = 5000 };
	// Still nothing read: since the first sight.
	assert_int_equal(k8s_liveness_unread_since(&old, true, 42, 9000), 5000);
	// One read since: what waits now is measured from now.
	assert_int_equal(k8s_liveness_unread_since(&old, true, 43, 9000), 9000);
	// Emptied: nothing waits.
	assert_int_equal(k8s_liveness_unread_since(&old, false, 42, 9000), 0);
	// It was empty last time: waiting from now, whatever the stamp.
	old.unread_ms = 0;
	assert_int_equal(k8s_liveness_unread_since(&old, true, 42, 9000), 9000);
}

/*! \brief A UDP socket bound on loopback, its port in \a port. */
static int udp_socket(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	socklen_t len = sizeof(addr);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	*port = ntohs(addr.sin_port);
	return fd;
}

static void send_to(int from, uint16_t port, const char *text)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	                          .sin_port = htons(port) };
	assert_int_equal(sendto(from, text, strlen(text), 0, (struct sockaddr *)&to, sizeof(to)),
	                 (ssize_t)strlen(text));
	usleep(10000);  // Queued on loopback.
}

static void a_udp_socket_with_a_datagram_unread_for_the_bound_is_a_stuck_worker(void **state)
{
	uint16_t port = 0, other_port = 0;
	int listener = udp_socket(&port);
	int other = udp_socket(&other_port);  // Not a port of knotd's: never looked at.
	int client = socket(AF_INET, SOCK_DGRAM, 0);
	k8s_liveness_t *l = test_calloc(1, sizeof(*l));
	k8s_liveness_add_port(l, port);
	k8s_liveness_add_port(l, port);
	assert_int_equal(l->port_count, 1);
	char why[192] = "";
	uint64_t now = k8s_now_ms();

	assert_true(k8s_liveness_check(l, now, why, sizeof(why)));
	assert_int_equal(l->socket_count, 1);
	assert_int_equal(l->sockets[0].unread_ms, 0);

	// A query waits: seen now, wedged only once it has waited the bound unread.
	send_to(client, port, "query 1");
	send_to(client, other_port, "not knotd's");
	assert_true(k8s_liveness_check(l, now, why, sizeof(why)));
	assert_int_equal(l->sockets[0].unread_ms, now);
	assert_true(k8s_liveness_check(l, now + BOUND - 1, why, sizeof(why)));
	assert_false(k8s_liveness_check(l, now + BOUND, why, sizeof(why)));
	char expected[96];
	snprintf(expected, sizeof(expected), "queries on port %u unread for %d s", port, BOUND / 1000);
	assert_non_null(strstr(why, expected));

	// One read (the same bytes arrive again: a flood of equal datagrams): progress.
	send_to(client, port, "query 1");
	char buf[64];
	assert_true(recv(listener, buf, sizeof(buf), 0) > 0);
	assert_true(k8s_liveness_check(l, now + BOUND + 1, why, sizeof(why)));
	assert_int_equal(l->sockets[0].unread_ms, now + BOUND + 1);
	assert_false(k8s_liveness_check(l, now + 2 * BOUND + 1, why, sizeof(why)));
	assert_true(recv(listener, buf, sizeof(buf), 0) > 0);
	assert_true(k8s_liveness_check(l, now + 3 * BOUND, why, sizeof(why)));
	assert_int_equal(l->sockets[0].unread_ms, 0);

	// Gone: no longer followed.
	close(listener);
	assert_true(k8s_liveness_check(l, now + 4 * BOUND, why, sizeof(why)));
	assert_int_equal(l->socket_count, 0);
	close(other);
	close(client);
	test_free(l);
}

static void a_wedged_thread_is_named_by_the_verdict(void **state)
{
	k8s_liveness_t *l = test_calloc(1, sizeof(*l));
	k8s_beat_t b = { 0 };
	k8s_beat_start(&b, true, "forwarder of 10.0.0.10@53");
	uint64_t now = k8s_now_ms();
	char why[192] = "";
	assert_true(k8s_liveness_check(l, now, why, sizeof(why)));
	assert_false(k8s_liveness_check(l, now + BOUND + 2000, why, sizeof(why)));
	assert_string_equal(why, "forwarder of 10.0.0.10@53 made no progress for 32 s");
	k8s_beat_stop(&b);
	assert_true(k8s_liveness_check(l, now + BOUND + 2000, why, sizeof(why)));
	test_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_looping_thread_is_wedged_once_it_owes_a_round_for_the_bound),
		cmocka_unit_test(a_thread_woken_by_work_owes_only_while_work_waits),
		cmocka_unit_test(the_latest_of_several_is_named),
		cmocka_unit_test(a_socket_waits_since_first_seen_waiting_until_one_is_read),
		cmocka_unit_test(a_udp_socket_with_a_datagram_unread_for_the_bound_is_a_stuck_worker),
		cmocka_unit_test(a_wedged_thread_is_named_by_the_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
