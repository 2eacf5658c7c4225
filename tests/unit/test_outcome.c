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
 * What each outcome of an answer replies (outcome.h), as ARCHITECTURE.md's
 * "Answer" step and doc/mod-k8s.rst say: the worker's ANSWER hook and the cold
 * waiter's late answers both reply from this table.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libknot/libknot.h>

#include "answer/outcome.h"

static void assert_reply(k8s_answer_t res, uint8_t rcode, bool negative, int ede)
{
	const k8s_answer_reply_t *reply = &k8s_answer_replies[res];
	assert_int_equal(reply->rcode, rcode);
	assert_int_equal(reply->negative, negative);
	assert_int_equal(reply->ede, ede);
}

static void not_ready_is_servfail_with_extended_error_14_until_the_first_list(void **state)
{
	assert_reply(K8S_ANSWER_NOTREADY, KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NOT_READY);
	assert_int_equal(KNOT_EDNS_EDE_NOT_READY, 14);
}

static void no_such_name_is_nxdomain_with_the_zone_soa(void **state)
{
	assert_reply(K8S_ANSWER_NXDOMAIN, KNOT_RCODE_NXDOMAIN, true, KNOT_EDNS_EDE_NONE);
}

static void a_name_without_records_of_the_type_is_nodata_with_the_zone_soa(void **state)
{
	assert_reply(K8S_ANSWER_NODATA, KNOT_RCODE_NOERROR, true, KNOT_EDNS_EDE_NONE);
}

static void a_cname_to_a_missing_name_is_nxdomain_with_the_cname(void **state)
{
	assert_reply(K8S_ANSWER_HIT_NXDOMAIN, KNOT_RCODE_NXDOMAIN, false, KNOT_EDNS_EDE_NONE);
}

static void records_and_truncated_answers_are_noerror(void **state)
{
	assert_reply(K8S_ANSWER_HIT, KNOT_RCODE_NOERROR, false, KNOT_EDNS_EDE_NONE);
	assert_reply(K8S_ANSWER_TRUNC, KNOT_RCODE_NOERROR, false, KNOT_EDNS_EDE_NONE);
}

static void a_failed_upstream_is_servfail_and_a_refused_search_list_refused(void **state)
{
	assert_reply(K8S_ANSWER_SERVFAIL, KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NONE);
	assert_reply(K8S_ANSWER_REFUSED, KNOT_RCODE_REFUSED, false, KNOT_EDNS_EDE_NONE);
}

static void a_dead_target_is_servfail_with_extended_error_22_no_reachable_authority(void **state)
{
	assert_reply(K8S_ANSWER_UNREACHABLE, KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NREACH_AUTH);
}

static void a_late_answer_that_is_not_ours_is_servfail(void **state)
{
	assert_reply(K8S_ANSWER_PASS, KNOT_RCODE_SERVFAIL, false, KNOT_EDNS_EDE_NONE);
}

static void every_outcome_has_a_reply(void **state)
{
	// A row left out would read as RCODE 0 with EDE 0 (Other), which no outcome replies.
	for (k8s_answer_t res = 0; res < K8S_ANSWER_COUNT; res++) {
		int ede = k8s_answer_replies[res].ede;
		assert_true(ede == KNOT_EDNS_EDE_NONE || ede == KNOT_EDNS_EDE_NOT_READY ||
		            ede == KNOT_EDNS_EDE_NREACH_AUTH);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_ready_is_servfail_with_extended_error_14_until_the_first_list),
		cmocka_unit_test(no_such_name_is_nxdomain_with_the_zone_soa),
		cmocka_unit_test(a_name_without_records_of_the_type_is_nodata_with_the_zone_soa),
		cmocka_unit_test(a_cname_to_a_missing_name_is_nxdomain_with_the_cname),
		cmocka_unit_test(records_and_truncated_answers_are_noerror),
		cmocka_unit_test(a_failed_upstream_is_servfail_and_a_refused_search_list_refused),
		cmocka_unit_test(a_dead_target_is_servfail_with_extended_error_22_no_reachable_authority),
		cmocka_unit_test(a_late_answer_that_is_not_ours_is_servfail),
		cmocka_unit_test(every_outcome_has_a_reply),
	};
	return cmocka_run_group_tests_name("outcome", tests, NULL, NULL);
}
