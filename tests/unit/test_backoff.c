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
 * Retry delays (module/api/backoff.c): client-go's reflector backoff, k8s_api.md 1.10.
 * "The waits are [0.8,1.6), [1.6,3.2), [3.2,6.4), [6.4,12.8), [12.8,25.6),
 * [25.6,51.2), then [30,60) s", reset after 2 minutes.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/backoff.h"

static void first_delay_is_0_8_s_without_jitter(void **state)
{
	k8s_backoff_t b = { 0 };
	assert_int_equal(k8s_backoff_next(&b, 1000, 0.0), 800);
}

static void delays_double_up_to_the_30_s_cap(void **state)
{
	k8s_backoff_t b = { 0 };
	const uint64_t expect[] = { 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000 };
	uint64_t now = 1000;
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		assert_int_equal(k8s_backoff_next(&b, now, 0.0), expect[i]);
		now += 1000;
	}
}

static void jitter_adds_up_to_the_duration_again(void **state)
{
	k8s_backoff_t b = { 0 };
	assert_int_equal(k8s_backoff_next(&b, 1000, 0.5), 1200);     // 0.8 s + 0.4 s
	assert_int_equal(k8s_backoff_next(&b, 2000, 0.999), 1600 + 1598);
	for (int i = 0; i < 10; i++) {
		k8s_backoff_next(&b, 3000 + i, 0.0);
	}
	uint64_t capped = k8s_backoff_next(&b, 4000, 0.999);
	assert_true(capped >= 30000 && capped < 60000);
}

static void jitter_outside_0_1_is_ignored(void **state)
{
	k8s_backoff_t b = { 0 };
	assert_int_equal(k8s_backoff_next(&b, 1000, 1.0), 800);
	assert_int_equal(k8s_backoff_next(&b, 1000, -0.5), 1600);
}

static void two_minutes_without_failure_reset_to_0_8_s(void **state)
{
	k8s_backoff_t b = { 0 };
	uint64_t now = 10000;
	for (int i = 0; i < 5; i++) {
		k8s_backoff_next(&b, now, 0.0);
	}
	assert_int_equal(k8s_backoff_next(&b, now + K8S_BACKOFF_RESET_MS, 0.0), 25600);
	now += K8S_BACKOFF_RESET_MS;
	assert_int_equal(k8s_backoff_next(&b, now + K8S_BACKOFF_RESET_MS + 1, 0.0), 800);
	assert_int_equal(k8s_backoff_next(&b, now + K8S_BACKOFF_RESET_MS + 2, 0.0), 1600);
}

static void a_success_resets_to_0_8_s(void **state)
{
	k8s_backoff_t b = { 0 };
	for (int i = 0; i < 6; i++) {
		k8s_backoff_next(&b, 1000 + i, 0.0);
	}
	assert_int_equal(k8s_backoff_next(&b, 2000, 0.0), 30000);
	k8s_backoff_reset(&b);
	assert_int_equal(k8s_backoff_next(&b, 3000, 0.0), 800);
	assert_int_equal(k8s_backoff_next(&b, 4000, 0.0), 1600);
}

static void faults_between_successes_stay_below_1_6_s(void **state)
{
	// A fault every few seconds, each followed by a success: no escalation.
	k8s_backoff_t b = { 0 };
	for (int i = 0; i < 100; i++) {
		assert_true(k8s_backoff_next(&b, 1000 + 5000 * (uint64_t)i, 0.999) < 1600);
		k8s_backoff_reset(&b);
	}
}

static void retry_after_is_taken_with_a_tenth_of_jitter(void **state)
{
	assert_int_equal(k8s_backoff_retry_after(1000, 0.0), 1000);
	assert_int_equal(k8s_backoff_retry_after(1000, 0.5), 1050);
	assert_true(k8s_backoff_retry_after(1000, 0.999) < 1100);
	assert_int_equal(k8s_backoff_retry_after(3000, 1.0), 3000);   // Out of range: none.
	assert_int_equal(k8s_backoff_retry_after(3000, -0.1), 3000);
}

static void retry_after_waits_300_s_at_most_jitter_included(void **state)
{
	// 300 s asked, up to 330 s waited before: the documented cap is the whole wait.
	assert_true(k8s_backoff_retry_after(300 * 1000, 0.999) <= 300 * 1000);
	assert_true(k8s_backoff_retry_after(290 * 1000, 0.5) <= 300 * 1000);
	assert_int_equal(k8s_backoff_retry_after(UINT64_MAX, 0.999), 300 * 1000);
	assert_int_equal(k8s_backoff_retry_after(200 * 1000, 0.5), 210 * 1000);
	assert_int_equal(K8S_BACKOFF_RETRY_AFTER_MAX_MS, 300 * 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_delay_is_0_8_s_without_jitter),
		cmocka_unit_test(delays_double_up_to_the_30_s_cap),
		cmocka_unit_test(jitter_adds_up_to_the_duration_again),
		cmocka_unit_test(jitter_outside_0_1_is_ignored),
		cmocka_unit_test(two_minutes_without_failure_reset_to_0_8_s),
		cmocka_unit_test(a_success_resets_to_0_8_s),
		cmocka_unit_test(faults_between_successes_stay_below_1_6_s),
		cmocka_unit_test(retry_after_is_taken_with_a_tenth_of_jitter),
		cmocka_unit_test(retry_after_waits_300_s_at_most_jitter_included),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
