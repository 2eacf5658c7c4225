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
 * The resolver's pools shared by tenants (module/resolver/share.c): work-conserving, a
 * newcomer's part at once, max-min as units end, units of bytes, workers racing without
 * a lock, the lines about refusals (the tenants' keys: test_slots.c).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>

#include "resolver/share.h"

#define CAP 64

static k8s_share_t *pool_new(unsigned cap)
{
	k8s_share_t *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	k8s_share_init(s, cap, "test", "test");
	return s;
}

/*! \brief Takes one unit after another for \a tenant until refused; returns how many. */
static unsigned take_all(k8s_share_t *s, k8s_tenant_t tenant, k8s_share_ref_t *refs,
                         unsigned max)
{
	unsigned n = 0;
	while (n < max && k8s_share_take(s, tenant, 1, &refs[n])) {
		n++;
	}
	return n;
}

static void put_all(k8s_share_t *s, k8s_share_ref_t *refs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		k8s_share_put(s, &refs[i]);
	}
}

static void a_tenant_alone_takes_the_whole_cap_and_no_more(void **state)
{
	(void)state;
	k8s_share_t *s = pool_new(CAP);
	static k8s_share_ref_t refs[2 * CAP];
	assert_int_equal(take_all(s, 1, refs, 2 * CAP), CAP);  // Work-conserving.
	assert_int_equal(k8s_share_held(s, 1), CAP);
	assert_int_equal(atomic_load(&s->tenants), 1);
	assert_int_equal(atomic_load(&s->refused), 1);  // The refusal took nothing.
	assert_int_equal(k8s_share_used(s), CAP);
	put_all(s, refs, CAP);
	assert_int_equal(k8s_share_used(s), 0);
	assert_int_equal(atomic_load(&s->tenants), 0);
	free(s);
}

static void a_newcomer_gets_its_fair_part_at_once_however_many_heavy_tenants(void **state)
{
	(void)state;
	// Four tenants (four pods) or forty (addresses) fill the cap between them...
	for (unsigned heavy = 4; heavy <= 40; heavy *= 10) {
		k8s_share_t *s = pool_new(CAP);
		static k8s_share_ref_t refs[40][CAP], mine[CAP];
		unsigned held[40] = { 0 };
		for (unsigned round = 0; round < CAP; round++) {
			for (unsigned t = 0; t < heavy; t++) {
				held[t] += take_all(s, 100 + t, &refs[t][held[t]], 1);
			}
		}
		// (each its part: forty of 2 take 80, past the cap within the headroom)...
		assert_true(k8s_share_used(s) >= CAP && k8s_share_used(s) <= s->room);
		// ...and take nothing more while it is full.
		for (unsigned t = 0; t < heavy; t++) {
			assert_false(k8s_share_take(s, 100 + t, 1, &refs[t][held[t]]));
		}
		// A tenant that asks for the first time: its part of the cap among five (41).
		unsigned part = (CAP + heavy) / (heavy + 1);
		assert_int_equal(take_all(s, 7, mine, CAP), part);
		assert_true(k8s_share_used(s) <= s->room);
		put_all(s, mine, part);
		for (unsigned t = 0; t < heavy; t++) {
			put_all(s, refs[t], held[t]);
		}
		assert_int_equal(k8s_share_used(s), 0);
		free(s);
	}
}

static void heavy_tenants_past_the_cap_wait_until_the_pool_is_below_it(void **state)
{
	(void)state;
	k8s_share_t *s = pool_new(CAP);
	static k8s_share_ref_t heavy[CAP], light[CAP];
	assert_int_equal(take_all(s, 1, heavy, CAP), CAP);
	unsigned l = take_all(s, 2, light, 8);  // Within its part (32 of two): all 8.
	assert_int_equal(l, 8);
	// The heavy one's units end one by one: it takes none back while the pool is past its
	// cap; below it, it may (work-conserving), and the light one keeps its 8: max-min.
	for (unsigned i = 0; i < 8; i++) {
		k8s_share_put(s, &heavy[CAP - 1 - i]);
		assert_false(k8s_share_take(s, 1, 1, &heavy[CAP - 1 - i]));
	}
	assert_int_equal(k8s_share_used(s), CAP);
	k8s_share_put(s, &heavy[CAP - 9]);
	assert_true(k8s_share_take(s, 1, 1, &heavy[CAP - 9]));
	assert_int_equal(k8s_share_held(s, 1), CAP - 8);
	assert_int_equal(k8s_share_held(s, 2), 8);
	put_all(s, heavy, CAP - 8);
	put_all(s, light, l);
	free(s);
}

static void bytes_are_units_and_an_upstream_past_its_part_leaves_another_its_own(void **state)
{
	(void)state;
	k8s_share_t *s = pool_new(4 << 20);
	k8s_share_ref_t hostile[64], healthy;
	unsigned n = 0;
	while (n < 64 && k8s_share_take(s, 1, 65535, &hostile[n])) {
		n++;
	}
	assert_int_equal(n, (4 << 20) / 65535);  // It alone: the 4 MiB.
	// A healthy upstream's large answer: within its part, from the headroom.
	assert_true(k8s_share_take(s, 2, 65535, &healthy));
	k8s_share_put(s, &healthy);
	put_all(s, hostile, n);
	assert_int_equal(k8s_share_used(s), 0);
	free(s);
}

typedef struct {
	k8s_share_t *s;
	k8s_tenant_t tenant;
	unsigned taken;
} racer_t;

static void *race(void *arg)
{
	racer_t *r = arg;
	k8s_share_ref_t refs[16];
	// 2000 rounds, and on until it took something: a racer that the scheduler (TSan's, a
	// loaded machine) kept behind the others' holds takes once they are done.
	for (long round = 0; round < 2000 || (r->taken == 0 && round < 20000000); round++) {
		unsigned n = take_all(r->s, r->tenant, refs, 16);
		r->taken += n;
		put_all(r->s, refs, n);
	}
	return NULL;
}

static void workers_racing_give_back_everything_they_take(void **state)
{
	(void)state;
	k8s_share_t *s = pool_new(16);
	pthread_t threads[4];
	racer_t racers[4];
	for (int i = 0; i < 4; i++) {
		racers[i] = (racer_t){ .s = s, .tenant = (i < 2) ? 1 : 2 + i };
		assert_int_equal(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
	}
	// Every thread joined before any check: a failed one must not leave racers writing.
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
	}
	for (int i = 0; i < 4; i++) {
		assert_true(racers[i].taken > 0);
	}
	assert_int_equal(k8s_share_used(s), 0);
	assert_int_equal(atomic_load(&s->tenants), 0);
	for (size_t i = 0; i < K8S_SHARE_BUCKETS; i++) {
		assert_int_equal(atomic_load(&s->count[i]), 0);
	}
	free(s);
}

static char logged[512];
static int log_lines;

static void test_log(void *ctx, int priority, const char *msg)
{
	(void)ctx;
	(void)priority;
	snprintf(logged, sizeof(logged), "%s", msg);
	log_lines++;
}

static void refusals_are_logged_at_most_every_ten_seconds_with_their_count(void **state)
{
	(void)state;
	k8s_share_t *s = pool_new(1);
	k8s_log_t log = { .fn = test_log };
	k8s_share_ref_t r, x;
	assert_true(k8s_share_take(s, 1, 1, &r));
	k8s_share_log(s, &log, 1000);
	assert_int_equal(log_lines, 0);  // Nothing refused: no line.
	for (int i = 0; i < 5; i++) {
		assert_false(k8s_share_take(s, 1, 1, &x));
	}
	k8s_share_log(s, &log, 1000);
	assert_int_equal(log_lines, 1);
	assert_non_null(strstr(logged, "test, test full, 5 refused since the last line"));
	assert_false(k8s_share_take(s, 1, 1, &x));
	k8s_share_log(s, &log, 5000);
	assert_int_equal(log_lines, 1);  // Within 10 s: counted for the next line.
	k8s_share_log(s, &log, 11000);
	assert_int_equal(log_lines, 2);
	assert_non_null(strstr(logged, "1 refused since the last line"));
	k8s_share_put(s, &r);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_tenant_alone_takes_the_whole_cap_and_no_more),
		cmocka_unit_test(a_newcomer_gets_its_fair_part_at_once_however_many_heavy_tenants),
		cmocka_unit_test(heavy_tenants_past_the_cap_wait_until_the_pool_is_below_it),
		cmocka_unit_test(bytes_are_units_and_an_upstream_past_its_part_leaves_another_its_own),
		cmocka_unit_test(workers_racing_give_back_everything_they_take),
		cmocka_unit_test(refusals_are_logged_at_most_every_ten_seconds_with_their_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
