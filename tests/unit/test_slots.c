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
 * (module/resolver/slots.c), as the forwarder and the cold waiter use them.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "resolver/late.h"
#include "resolver/slots.h"

#define COUNT 16
/*! \brief The tenant of a flood. */
#define FLOOD 77

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
	assert_int_equal(k8s_slots_init(&o->slots, o->array, COUNT, sizeof(test_slot_t), NULL),
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
	test_slot_t *s = (test_slot_t *)k8s_slots_claim(&o->slots, 7, false, 5, &remote, NULL, 1);
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

static void a_worker_tries_each_slot_once_and_never_waits(void **state)
{
	(void)state;
	owner_t *o = owner_new();
	k8s_slot_t *taken[COUNT];
	for (size_t i = 0; i < COUNT; i++) {
		// Each claim starts one further on: the i-th finds slot i free.
		taken[i] = k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, 1);
		assert_ptr_equal(taken[i], &o->array[i].h);
		k8s_slots_publish(&o->slots, taken[i]);
	}
	// All busy: refused at once, however many try.
	for (size_t i = 0; i < COUNT; i++) {
		assert_null(k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, 1));
	}
	// One free anywhere: the next claim finds it, wherever it starts.
	k8s_slots_release(taken[12], true);
	k8s_slot_t *found = k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, 1);
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
	k8s_slot_t *a = k8s_slots_claim(&o->slots, pair[0], true, 2, NULL, NULL, 1);
	assert_non_null(a);
	assert_true(a->tcp);
	assert_int_not_equal(a->fd, pair[0]);
	int dup_a = a->fd;
	k8s_slots_publish(&o->slots, a);
	k8s_slots_release(a, true);
	assert_false(fd_open(dup_a));
	assert_true(fd_open(pair[0]));

	// Released with its duplicate taken by the caller: still open.
	k8s_slot_t *b = k8s_slots_claim(&o->slots, pair[0], true, 2, NULL, NULL, 1);
	assert_non_null(b);
	int dup_b = b->fd;
	k8s_slots_publish(&o->slots, b);
	k8s_slots_release(b, false);
	assert_true(fd_open(dup_b));
	assert_int_equal(k8s_share_used(k8s_share_tcp_dups()), 1);  // Its hold went with it, too.
	close(dup_b);
	k8s_hold_put(&b->hold);
	assert_int_equal(k8s_share_used(k8s_share_tcp_dups()), 0);

	// Still waiting when the thread stops: closed by the stop.
	k8s_slot_t *c = k8s_slots_claim(&o->slots, pair[0], true, 2, NULL, NULL, 1);
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
	assert_null(k8s_slots_claim(&o->slots, -1, true, 1, NULL, NULL, 1));
	for (size_t i = 0; i < COUNT; i++) {
		assert_non_null(k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, 1));
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
		k8s_slots_publish(&o->slots, k8s_slots_claim(&o->slots, 7, false, 5, &remote, NULL, 1));
	}
	assert_int_equal(wake_count(&o->slots), 1);  // One write for the three.
	// Not looked yet: a fourth is seen with the others, no write.
	k8s_slots_publish(&o->slots, k8s_slots_claim(&o->slots, 7, false, 5, &remote, NULL, 1));
	assert_false(woken(&o->slots));
	// Once the thread looks, the next hand-over wakes it again.
	k8s_slots_looking(&o->slots);
	k8s_slots_publish(&o->slots, k8s_slots_claim(&o->slots, 7, false, 5, &remote, NULL, 1));
	assert_int_equal(wake_count(&o->slots), 1);
	k8s_slots_deinit(&o->slots);
	free(o);
}

/* Addresses. */

static struct sockaddr_storage addr(const char *text)
{
	struct sockaddr_storage ss = { 0 };
	if (strchr(text, ':') != NULL) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
		a6->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, text, &a6->sin6_addr), 1);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
		a4->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, text, &a4->sin_addr), 1);
	}
	return ss;
}

static void a_client_is_its_whole_address_and_a_pod_its_namespace(void **state)
{
	(void)state;
	struct sockaddr_storage a1 = addr("2001:db8::1"), a2 = addr("2001:db8::2");
	struct sockaddr_storage v4 = addr("192.0.2.1"), mapped = addr("::ffff:192.0.2.1");
	// Two pods in one /64 are two tenants: none takes the other's slot.
	assert_true(k8s_tenant_addr(&a1) != k8s_tenant_addr(&a2));
	assert_true(k8s_tenant_addr(&v4) == k8s_tenant_addr(&mapped));
	// A namespace is one tenant whatever its pods' addresses, and not an address's.
	const uint8_t *ns = (const uint8_t *)"\x04""team", *other = (const uint8_t *)"\x05""teams";
	assert_true(k8s_tenant_ns(ns) == k8s_tenant_ns((const uint8_t *)"\x04""team"));
	assert_true(k8s_tenant_ns(ns) != k8s_tenant_ns(other));
	assert_true(k8s_tenant_ns(ns) != k8s_tenant_addr(&v4));
	// An upstream is its address and port.
	struct sockaddr_storage up1 = v4, up2 = v4;
	((struct sockaddr_in *)&up1)->sin_port = htons(53);
	((struct sockaddr_in *)&up2)->sin_port = htons(5353);
	assert_true(k8s_tenant_upstream(&up1) != k8s_tenant_upstream(&up2));

	k8s_share_t *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	k8s_share_init(s, 2, "test", "test");
	k8s_share_ref_t r[4];
	assert_true(k8s_share_take(s, k8s_tenant_addr(&a1), 1, &r[0]));
	assert_true(k8s_share_take(s, k8s_tenant_addr(&a1), 1, &r[1]));
	assert_true(k8s_share_take(s, k8s_tenant_addr(&a2), 1, &r[2]));  // Its part, past the cap.
	assert_int_equal(k8s_share_held(s, k8s_tenant_addr(&a2)), 1);
	for (int i = 0; i < 3; i++) {
		k8s_share_put(s, &r[i]);
	}
	free(s);
}

/* What a handed-over query holds (k8s_hold_t). */

/*! \brief knotd's descriptor limit in this process (main() sets it): 32 TCP duplicates. */
#define TEST_NOFILE 256

static void a_slot_holds_its_tenant_share_until_released_or_stopped(void **state)
{
	(void)state;
	k8s_share_t *waiting = calloc(1, sizeof(*waiting));
	assert_non_null(waiting);
	k8s_share_init(waiting, COUNT / 2, "test", "test");
	owner_t *o = calloc(1, sizeof(*o));
	assert_non_null(o);
	assert_int_equal(k8s_slots_init(&o->slots, o->array, COUNT, sizeof(test_slot_t), waiting),
	                 KNOT_EOK);
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, thread_idle, &o->slots), 0);
	int pair[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);

	// A tenant alone takes the pool's cap, over UDP and TCP together, and no more.
	k8s_slot_t *held[COUNT / 2];
	for (size_t i = 0; i < COUNT / 2; i++) {
		held[i] = k8s_slots_claim(&o->slots, (i % 2) ? pair[0] : 3, i % 2, 1, NULL, NULL,
		                          FLOOD);
		assert_non_null(held[i]);
		assert_int_equal(held[i]->tenant, FLOOD);
		k8s_slots_publish(&o->slots, held[i]);
	}
	assert_null(k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, FLOOD));
	assert_null(k8s_slots_claim(&o->slots, pair[0], true, 1, NULL, NULL, FLOOD));
	assert_int_equal(k8s_share_used(k8s_share_tcp_dups()), COUNT / 2 / 2);
	// Another tenant still has its part, from the headroom.
	k8s_slot_t *mine = k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, 2);
	assert_non_null(mine);
	k8s_slots_release(mine, true);

	// Answered: its unit comes back.
	k8s_slots_release(held[0], true);
	held[0] = k8s_slots_claim(&o->slots, 3, false, 1, NULL, NULL, FLOOD);
	assert_non_null(held[0]);
	k8s_slots_publish(&o->slots, held[0]);

	// Stopped with queries waiting: their units and TCP duplicates come back.
	k8s_slots_stop(&o->slots, thread);
	assert_int_equal(k8s_share_held(waiting, FLOOD), 0);
	assert_int_equal(k8s_share_used(waiting), 0);
	assert_int_equal(k8s_share_used(k8s_share_tcp_dups()), 0);
	close(pair[0]);
	close(pair[1]);
	free(o);
	free(waiting);
}

static void a_udp_slot_keeps_the_address_asked_and_a_tcp_or_unknown_one_none(void **state)
{
	(void)state;
	owner_t *o = owner_new();
	int pair[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	struct sockaddr_storage remote = addr("127.0.0.1"), asked = addr("127.0.0.7");
	k8s_slot_t *udp = k8s_slots_claim(&o->slots, 3, false, 1, &remote, &asked, 1);
	assert_non_null(udp);
	assert_int_equal(udp->local.ss_family, AF_INET);
	assert_memory_equal(&udp->local, &asked, sizeof(struct sockaddr_in));
	// Over TCP the answer goes on the connection: no source to choose.
	k8s_slot_t *tcp = k8s_slots_claim(&o->slots, pair[0], true, 1, &remote, &asked, 1);
	assert_non_null(tcp);
	assert_int_equal(tcp->local.ss_family, AF_UNSPEC);
	// A slot used before keeps no stale source.
	k8s_slots_release(udp, true);
	k8s_slot_t *unknown = NULL;
	while (unknown != udp) {
		unknown = k8s_slots_claim(&o->slots, 3, false, 1, &remote, NULL, 1);
		assert_non_null(unknown);
	}
	assert_int_equal(unknown->local.ss_family, AF_UNSPEC);
	k8s_slots_release(tcp, true);
	close(pair[0]);
	close(pair[1]);
	k8s_slots_deinit(&o->slots);
	free(o);
}

static void tcp_duplicates_are_an_eighth_of_the_descriptors_shared_by_tenants(void **state)
{
	(void)state;
	k8s_share_t *dups = k8s_share_tcp_dups();
	unsigned cap = dups->cap;
	assert_int_equal(cap, TEST_NOFILE / K8S_SHARE_FDS_PART);
	static k8s_hold_t holds[TEST_NOFILE];
	size_t n = 0;
	// One tenant alone: the whole cap, over UDP without any.
	while (n < TEST_NOFILE && k8s_hold_take(NULL, FLOOD, true, &holds[n])) {
		n++;
	}
	assert_int_equal(n, cap);
	k8s_hold_t udp;
	assert_true(k8s_hold_take(NULL, FLOOD, false, &udp));
	k8s_hold_put(&udp);
	assert_int_equal(k8s_share_used(dups), n);
	// Others, each within its part, until the headroom is used: a forwarder's or a
	// cold waiter's duplicates are one pool.
	for (k8s_tenant_t t = 2; n < TEST_NOFILE; t++) {
		if (!k8s_hold_take(NULL, t, true, &holds[n])) {
			break;
		}
		n++;
	}
	assert_int_equal(n, dups->room);
	assert_int_equal(k8s_share_used(dups), dups->room);
	// Given back once, then another's is taken.
	k8s_hold_put(&holds[n - 1]);
	k8s_hold_put(&holds[n - 1]);
	assert_int_equal(k8s_share_used(dups), dups->room - 1);
	assert_true(k8s_hold_take(NULL, 1000, true, &holds[n - 1]));
	for (size_t i = 0; i < n; i++) {
		k8s_hold_put(&holds[i]);
	}
	assert_int_equal(k8s_share_used(dups), 0);
}

/* A late answer's source. */

static int udp_bound(const char *ip, uint16_t port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_storage ss = addr(ip);
	((struct sockaddr_in *)&ss)->sin_port = htons(port);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in)), 0);
	return fd;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

static void a_late_answer_on_a_wildcard_socket_leaves_from_the_address_asked(void **state)
{
	(void)state;
	// knotd's wildcard listener; IP_PKTINFO on, as knotd sets it.
	int server = udp_bound("0.0.0.0", 0);
	int on = 1;
	assert_int_equal(setsockopt(server, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on)), 0);
	uint16_t port = port_of(server);
	// A client connected to 127.0.0.7 (as glibc's resolver): it takes only that source.
	int client = udp_bound("127.0.0.1", 0);
	struct sockaddr_storage asked = addr("127.0.0.7");
	((struct sockaddr_in *)&asked)->sin_port = htons(port);
	assert_int_equal(connect(client, (struct sockaddr *)&asked, sizeof(struct sockaddr_in)), 0);
	struct sockaddr_storage remote = addr("127.0.0.1");
	((struct sockaddr_in *)&remote)->sin_port = htons(port_of(client));

	uint8_t buf[2 + 5] = { 0, 0, 'a', 'b', 'c', 'd', 'e' };
	uint8_t got[16];
	// Without the source, the kernel's (127.0.0.1): the connected client never sees it.
	k8s_late_send(server, false, &remote, buf, 5);
	struct pollfd pfd = { .fd = client, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 100), 0);
	// From the address asked: received.
	k8s_late_send_from(server, false, &remote, &asked, buf, 5);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(recv(client, got, sizeof(got), 0), 5);
	assert_memory_equal(got, "abcde", 5);
	// A wildcard or no source: the kernel chooses, as before.
	struct sockaddr_storage any = addr("0.0.0.0");
	k8s_late_send_from(server, false, &remote, &any, buf, 5);
	assert_int_equal(poll(&pfd, 1, 100), 0);
	close(client);
	close(server);
}

int main(void)
{
	// The process's TCP duplicates follow its descriptor limit, read once.
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_max < TEST_NOFILE) {
		return 1;
	}
	lim.rlim_cur = TEST_NOFILE;
	if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_claimed_slot_is_seen_by_the_thread_only_once_published),
		cmocka_unit_test(a_worker_tries_each_slot_once_and_never_waits),
		cmocka_unit_test(a_tcp_connection_is_duplicated_and_its_duplicate_closed_by_the_last_holder),
		cmocka_unit_test(a_failed_dup_frees_the_slot),
		cmocka_unit_test(a_batch_of_hand_overs_wakes_the_thread_once),
		cmocka_unit_test(a_client_is_its_whole_address_and_a_pod_its_namespace),
		cmocka_unit_test(a_slot_holds_its_tenant_share_until_released_or_stopped),
		cmocka_unit_test(a_udp_slot_keeps_the_address_asked_and_a_tcp_or_unknown_one_none),
		cmocka_unit_test(tcp_duplicates_are_an_eighth_of_the_descriptors_shared_by_tenants),
		cmocka_unit_test(a_late_answer_on_a_wildcard_socket_leaves_from_the_address_asked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
