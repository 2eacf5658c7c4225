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
 * httpd.h's choice of the connection that gives way past the cap: the oldest of the
 * address holding the most, never the new one, whatever the set of addresses.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "ops/httpd.h"
#include "lib/sockaddr.h"

#define MAX (K8S_HTTPD_MAX_CONNECTIONS + 1)

static k8s_httpd_peer_t peers[MAX];
static size_t count;

/*! \brief Adds a connection from \a ip (any port) whose clock started at \a since. */
static size_t add(const char *ip, uint64_t since)
{
	assert_true(count < MAX);
	assert_int_equal(k8s_sockaddr_set(&peers[count].addr, ip, 40000 + count), 0);
	peers[count].since_ms = since;
	return count++;
}

static int reset(void **state)
{
	count = 0;
	return 0;
}

static void four_addresses_holding_every_slot_give_way_to_a_fifth(void **state)
{
	// 127.0.0.2 .. 5 hold 8 each, 127.0.0.3's first is the oldest of all.
	for (unsigned i = 0; i < 32; i++) {
		char ip[16];
		snprintf(ip, sizeof(ip), "127.0.0.%u", 2 + i % 4);
		add(ip, 1000 + i);
	}
	peers[1].since_ms = 10;  // 127.0.0.3
	size_t probe = add("127.0.0.9", 5000);
	size_t victim = k8s_httpd_victim(peers, count);
	assert_int_not_equal(victim, probe);
	assert_int_equal(victim, 1);
}

static void one_connection_per_address_the_oldest_gives_way_not_the_new_one(void **state)
{
	for (unsigned i = 0; i < 32; i++) {
		char ip[16];
		snprintf(ip, sizeof(ip), "127.0.1.%u", 1 + i);
		add(ip, 2000 - i);  // The last added is the oldest.
	}
	size_t probe = add("127.0.0.9", 3000);
	assert_int_equal(k8s_httpd_victim(peers, count), 31);
	// Again with the new one of the same millisecond as the others: not it either.
	for (size_t i = 0; i < count; i++) {
		peers[i].since_ms = 3000;
	}
	size_t victim = k8s_httpd_victim(peers, count);
	assert_int_not_equal(victim, probe);
	assert_int_equal(victim, 0);
}

static void an_address_holding_the_most_closes_its_own_oldest(void **state)
{
	add("10.0.0.1", 100);
	add("10.0.0.2", 50);   // The oldest of all, but its address holds one.
	add("10.0.0.1", 300);
	add("10.0.0.1", 200);
	add("10.0.0.2", 400);
	add("10.0.0.1", 500);  // The new one.
	assert_int_equal(k8s_httpd_victim(peers, count), 0);
}

static void addresses_holding_as_many_the_oldest_of_them_gives_way(void **state)
{
	add("10.0.0.1", 300);
	add("10.0.0.2", 200);
	add("10.0.0.3", 10);   // Holds fewer: kept, however old.
	add("10.0.0.1", 400);
	add("10.0.0.2", 250);
	assert_int_equal(k8s_httpd_victim(peers, count), 1);
}

static void ports_do_not_tell_addresses_apart_families_do(void **state)
{
	add("fd00::1", 100);
	add("fd00::1", 200);
	add("fd00::2", 50);
	add("127.0.0.1", 10);
	add("::ffff:127.0.0.1", 20);  // Another family: another address.
	assert_int_equal(k8s_httpd_victim(peers, count), 0);
}

static void nothing_to_choose_from_none(void **state)
{
	assert_int_equal(k8s_httpd_victim(peers, 0), 0);
	add("10.0.0.1", 1);
	assert_int_equal(k8s_httpd_victim(peers, count), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(four_addresses_holding_every_slot_give_way_to_a_fifth, reset),
		cmocka_unit_test_setup(one_connection_per_address_the_oldest_gives_way_not_the_new_one, reset),
		cmocka_unit_test_setup(an_address_holding_the_most_closes_its_own_oldest, reset),
		cmocka_unit_test_setup(addresses_holding_as_many_the_oldest_of_them_gives_way, reset),
		cmocka_unit_test_setup(ports_do_not_tell_addresses_apart_families_do, reset),
		cmocka_unit_test_setup(nothing_to_choose_from_none, reset),
	};
	return cmocka_run_group_tests_name("httpd", tests, NULL, NULL);
}
