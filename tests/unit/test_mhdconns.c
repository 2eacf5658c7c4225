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
 * mhdconns.h's connections of the operations endpoint and of the programming one:
 * which connection gives way past the cap (the oldest of the address holding the most,
 * or the oldest), never the new one, whatever the set of addresses; what counts against
 * the cap; which deadlines close a connection.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "lib/mhdconns.h"
#include "lib/sockaddr.h"
#include "ops/httpd.h"

/* The cap, a new one, and the one after it. */
#define MAX (K8S_HTTPD_MAX_CONNECTIONS + 2)

static k8s_mhdconns_t set;
static k8s_mhdconn_t *conns[MAX];
static size_t count;

/*! \brief Tracks a connection from \a ip (any port) whose clock started at \a since. */
static size_t add(const char *ip, uint64_t since)
{
	assert_true(count < MAX);
	struct sockaddr_storage addr;
	assert_int_equal(k8s_sockaddr_set(&addr, ip, 40000 + count), 0);
	// No socket: closing one shuts down nothing.
	conns[count] = k8s_mhdconns_add(&set, -1, (const struct sockaddr *)&addr, since);
	assert_non_null(conns[count]);
	return count++;
}

/*! \brief The index of the connection that gives way (count for none). */
static size_t victim(void)
{
	k8s_mhdconn_t *v = k8s_mhdconns_victim(&set);
	for (size_t i = 0; i < count; i++) {
		if (conns[i] == v) {
			return i;
		}
	}
	assert_null(v);
	return count;
}

static int by_address(void **state)
{
	k8s_mhdconns_init(&set, K8S_HTTPD_MAX_CONNECTIONS, K8S_MHDCONNS_OLDEST_OF_MOST,
	                  K8S_HTTPD_REQUEST_MS);
	count = 0;
	return 0;
}

static int oldest(void **state)
{
	k8s_mhdconns_init(&set, 4, K8S_MHDCONNS_OLDEST, 5000);
	count = 0;
	return 0;
}

static int forget(void **state)
{
	for (size_t i = 0; i < count; i++) {
		k8s_mhdconns_remove(conns[i]);
	}
	assert_true(cds_list_empty(&set.list));
	assert_int_equal(set.capped, 0);
	return 0;
}

/*! \brief The cap's 32 from 127.0.0.2 .. 5, 8 each, the clocks started at 1000 .. 1031 in turn. */
static void fill_four_addresses(void)
{
	for (unsigned i = 0; i < 32; i++) {
		char ip[16];
		snprintf(ip, sizeof(ip), "127.0.0.%u", 2 + i % 4);
		add(ip, 1000 + i);
	}
}

static void four_addresses_holding_every_slot_give_way_to_a_fifth(void **state)
{
	fill_four_addresses();
	conns[1]->since_ms = 10;  // 127.0.0.3's first: the oldest of all.
	size_t probe = add("127.0.0.9", 5000);
	assert_int_not_equal(victim(), probe);
	assert_int_equal(victim(), 1);
}

static void one_connection_per_address_the_oldest_gives_way_not_the_new_one(void **state)
{
	for (unsigned i = 0; i < 32; i++) {
		char ip[16];
		snprintf(ip, sizeof(ip), "127.0.1.%u", 1 + i);
		add(ip, 2000 - i);  // The last added is the oldest.
	}
	size_t probe = add("127.0.0.9", 3000);
	assert_int_equal(victim(), 31);
	// Again with the new one of the same millisecond as the others: not it either.
	for (size_t i = 0; i < count; i++) {
		conns[i]->since_ms = 3000;
	}
	assert_int_not_equal(victim(), probe);
	assert_int_equal(victim(), 0);
}

static void an_address_holding_the_most_closes_its_own_oldest(void **state)
{
	add("10.0.0.1", 100);
	add("10.0.0.2", 50);   // The oldest of all, but its address holds one.
	add("10.0.0.1", 300);
	add("10.0.0.1", 200);
	add("10.0.0.2", 400);
	add("10.0.0.1", 500);  // The new one.
	assert_int_equal(victim(), 0);
}

static void addresses_holding_as_many_the_oldest_of_them_gives_way(void **state)
{
	add("10.0.0.1", 300);
	add("10.0.0.2", 200);
	add("10.0.0.3", 10);   // Holds fewer: kept, however old.
	add("10.0.0.1", 400);
	add("10.0.0.2", 250);
	assert_int_equal(victim(), 1);
}

static void ports_do_not_tell_addresses_apart_families_do(void **state)
{
	add("fd00::1", 100);
	add("fd00::1", 200);
	add("fd00::2", 50);
	add("127.0.0.1", 10);
	add("::ffff:127.0.0.1", 20);  // Another family: another address.
	assert_int_equal(victim(), 0);
}

static void nothing_to_choose_from_none(void **state)
{
	assert_int_equal(victim(), 0);
	add("10.0.0.1", 1);
	assert_int_equal(victim(), 0);
}

static void connections_closing_or_uncapped_neither_give_way_nor_count(void **state)
{
	add("10.0.0.1", 100);
	add("10.0.0.1", 200);
	add("10.0.0.1", 300);
	add("10.0.0.2", 10);
	add("10.0.0.2", 20);
	k8s_mhdconn_close(conns[0]);
	k8s_mhdconn_uncap(conns[1]);
	// 10.0.0.1 holds one that counts now, 10.0.0.2 two.
	assert_int_equal(set.capped, 3);
	assert_int_equal(victim(), 3);
	// Closed twice or uncapped twice, counted once.
	k8s_mhdconn_close(conns[0]);
	k8s_mhdconn_uncap(conns[1]);
	k8s_mhdconn_uncap(conns[0]);
	assert_int_equal(set.capped, 3);
	k8s_mhdconn_close(conns[1]);
	assert_int_equal(set.capped, 3);
}

static void past_the_cap_one_gives_way_and_the_new_one_is_kept(void **state)
{
	fill_four_addresses();
	assert_int_equal(k8s_mhdconns_make_room(&set), 0);
	size_t probe = add("127.0.0.9", 5000);
	assert_int_equal(k8s_mhdconns_make_room(&set), 1);
	assert_true(conns[0]->closing);
	assert_false(conns[probe]->closing);
	assert_int_equal(set.capped, K8S_HTTPD_MAX_CONNECTIONS);
	// 127.0.0.2 holds 7 now: the next new one takes the oldest of 127.0.0.3 .. 5.
	add("127.0.0.9", 5001);
	assert_int_equal(k8s_mhdconns_make_room(&set), 1);
	for (size_t i = 0; i < count; i++) {
		assert_int_equal(conns[i]->closing, i <= 1);
	}
}

static void handshakes_past_the_cap_the_oldest_gives_way_whatever_its_address(void **state)
{
	add("10.0.0.1", 100);  // Verified: no longer counted.
	add("10.0.0.2", 200);  // The oldest handshake, its address holds one.
	add("10.0.0.3", 300);
	add("10.0.0.3", 400);
	add("10.0.0.3", 500);
	k8s_mhdconn_uncap(conns[0]);
	assert_int_equal(k8s_mhdconns_make_room(&set), 0);
	size_t probe = add("10.0.0.4", 600);
	assert_int_equal(victim(), 1);
	assert_int_equal(k8s_mhdconns_make_room(&set), 1);
	assert_true(conns[1]->closing);
	assert_false(conns[0]->closing);
	assert_false(conns[probe]->closing);
	assert_int_equal(set.capped, 4);
}

static void a_request_not_done_within_the_deadline_is_closed_however_it_trickles(void **state)
{
	add("10.0.0.1", 1000);
	add("10.0.0.1", 2000);
	add("10.0.0.2", 3000);
	add("10.0.0.3", 500);
	conns[3]->answering = true;  // Its request is in: the clock stops.
	size_t closed = 0;
	assert_int_equal(k8s_mhdconns_expire(&set, 5999, &closed), 1);
	assert_int_equal(closed, 0);
	assert_int_equal(k8s_mhdconns_expire(&set, 6000, &closed), 1000);
	assert_int_equal(closed, 1);
	assert_true(conns[0]->closing);
	// Its clock started again at 6000 (a kept-alive connection's previous request).
	conns[1]->since_ms = 6000;
	assert_int_equal(k8s_mhdconns_expire(&set, 7999, NULL), 1);
	assert_false(conns[1]->closing);
	assert_false(conns[2]->closing);
	assert_int_equal(k8s_mhdconns_expire(&set, 20000, &closed), -1);
	assert_int_equal(closed, 3);
	assert_false(conns[3]->closing);
	assert_int_equal(set.capped, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(four_addresses_holding_every_slot_give_way_to_a_fifth, by_address, forget),
		cmocka_unit_test_setup_teardown(one_connection_per_address_the_oldest_gives_way_not_the_new_one, by_address, forget),
		cmocka_unit_test_setup_teardown(an_address_holding_the_most_closes_its_own_oldest, by_address, forget),
		cmocka_unit_test_setup_teardown(addresses_holding_as_many_the_oldest_of_them_gives_way, by_address, forget),
		cmocka_unit_test_setup_teardown(ports_do_not_tell_addresses_apart_families_do, by_address, forget),
		cmocka_unit_test_setup_teardown(nothing_to_choose_from_none, by_address, forget),
		cmocka_unit_test_setup_teardown(connections_closing_or_uncapped_neither_give_way_nor_count, by_address, forget),
		cmocka_unit_test_setup_teardown(past_the_cap_one_gives_way_and_the_new_one_is_kept, by_address, forget),
		cmocka_unit_test_setup_teardown(handshakes_past_the_cap_the_oldest_gives_way_whatever_its_address, oldest, forget),
		cmocka_unit_test_setup_teardown(a_request_not_done_within_the_deadline_is_closed_however_it_trickles, oldest, forget),
	};
	return cmocka_run_group_tests_name("mhdconns", tests, NULL, NULL);
}
