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
 * The contract of metrics.h and httpd.h's probe: a query is counted once, by transport,
 * type and rcode; requests are the responses summed; the duration histogram is
 * cumulative; a source's series and readiness come and go with it; /health's query and
 * the check of its answer.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <libknot/descriptor.h>
#include <libknot/errcode.h>

#include "httpd.h"
#include "metrics.h"

static char *render(bool lameduck)
{
	static k8s_metrics_out_t out;
	k8s_buf_reset(&out.buf, 0);
	out.failed = false;
	assert_int_equal(k8s_metrics_render(&out, lameduck), KNOT_EOK);
	assert_int_equal(k8s_buf_append(&out.buf, "", 1, K8S_METRICS_MAX_PAGE + 1), KNOT_EOK);
	return out.buf.data;
}

static void has_line(const char *page, const char *line)
{
	char wanted[512];
	snprintf(wanted, sizeof(wanted), "\n%s\n", line);
	if (strstr(page, wanted) == NULL) {
		fail_msg("no line '%s' in the page", line);
	}
}

static void a_query_is_counted_once_by_transport_type_and_rcode(void **state)
{
	k8s_metrics_query(0, K8S_METRICS_UDP, KNOT_RRTYPE_A, K8S_METRICS_NOERROR, 30000);
	// Thread ids past the slots share them: still counted.
	k8s_metrics_query(K8S_METRICS_THREADS + 6, K8S_METRICS_TCP, KNOT_RRTYPE_SRV,
	                  K8S_METRICS_NXDOMAIN, 2000000);
	k8s_metrics_query(1, K8S_METRICS_UDP, 65280, K8S_METRICS_SERVFAIL, 10);
	const char *page = render(false);
	has_line(page, "mod_k8s_dns_requests_total{proto=\"udp\",type=\"A\"} 1");
	has_line(page, "mod_k8s_dns_requests_total{proto=\"tcp\",type=\"SRV\"} 1");
	has_line(page, "mod_k8s_dns_requests_total{proto=\"udp\",type=\"other\"} 1");
	has_line(page, "mod_k8s_dns_responses_total{proto=\"udp\",type=\"A\",rcode=\"NOERROR\"} 1");
	has_line(page, "mod_k8s_dns_responses_total{proto=\"udp\",type=\"A\",rcode=\"NXDOMAIN\"} 0");
	has_line(page, "mod_k8s_dns_responses_total{proto=\"tcp\",type=\"SRV\",rcode=\"NXDOMAIN\"} 1");
	has_line(page, "mod_k8s_dns_responses_total{proto=\"udp\",type=\"other\",rcode=\"SERVFAIL\"} 1");
}

static void the_request_duration_is_a_cumulative_histogram(void **state)
{
	const char *page = render(false);
	// 30 us: past 10 and 25 us, within 50 us; counted in every bucket after.
	has_line(page, "mod_k8s_dns_request_duration_seconds_bucket{type=\"A\",le=\"1e-05\"} 0");
	has_line(page, "mod_k8s_dns_request_duration_seconds_bucket{type=\"A\",le=\"2.5e-05\"} 0");
	has_line(page, "mod_k8s_dns_request_duration_seconds_bucket{type=\"A\",le=\"5e-05\"} 1");
	has_line(page, "mod_k8s_dns_request_duration_seconds_bucket{type=\"A\",le=\"0.1\"} 1");
	has_line(page, "mod_k8s_dns_request_duration_seconds_bucket{type=\"A\",le=\"+Inf\"} 1");
	has_line(page, "mod_k8s_dns_request_duration_seconds_count{type=\"A\"} 1");
	has_line(page, "mod_k8s_dns_request_duration_seconds_sum{type=\"A\"} 3.0000000000000001e-05");
	has_line(page, "# TYPE mod_k8s_dns_request_duration_seconds histogram");
}

static bool source_ready;

static void source_collect(void *ctx, k8s_metrics_out_t *out)
{
	k8s_metrics_family(out, "test_forwarder_queries_total", "counter", "A later part's series.");
	k8s_metrics_sample(out, "test_forwarder_queries_total", "upstream=\"10.0.0.1\"", 7);
}

static bool source_ready_fn(void *ctx, char *why, size_t why_len)
{
	snprintf(why, why_len, "%s", (const char *)ctx);
	return source_ready;
}

static void a_source_adds_its_series_and_its_readiness_until_removed(void **state)
{
	k8s_metrics_source_t src = { .collect = source_collect, .ready = source_ready_fn,
	                             .ctx = "forwarder not started" };
	char why[64] = "";
	assert_true(k8s_metrics_ready(why, sizeof(why)));
	k8s_metrics_source_add(&src);
	source_ready = false;
	assert_false(k8s_metrics_ready(why, sizeof(why)));
	assert_string_equal(why, "forwarder not started");
	const char *page = render(false);
	has_line(page, "test_forwarder_queries_total{upstream=\"10.0.0.1\"} 7");
	has_line(page, "mod_k8s_serving 0");
	source_ready = true;
	page = render(true);
	has_line(page, "mod_k8s_serving 0");  // Lameduck.
	has_line(page, "mod_k8s_lameduck 1");
	page = render(false);
	has_line(page, "mod_k8s_serving 1");
	k8s_metrics_source_remove(&src);
	source_ready = false;
	assert_true(k8s_metrics_ready(why, sizeof(why)));
	assert_null(strstr(render(false), "test_forwarder"));
}

static void the_health_query_is_one_question_without_recursion(void **state)
{
	const uint8_t name[] = "\x0b""dns-version""\x07""cluster""\x05""local";
	uint8_t wire[512];
	size_t len = k8s_httpd_probe_query(name, KNOT_RRTYPE_TXT, 0xbeef, wire, sizeof(wire));
	assert_int_equal(len, 12 + sizeof(name) + 4);
	const uint8_t header[12] = { 0xbe, 0xef, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	assert_memory_equal(wire, header, 12);
	assert_memory_equal(wire + 12, name, sizeof(name));
	const uint8_t tail[4] = { 0, KNOT_RRTYPE_TXT, 0, 1 };
	assert_memory_equal(wire + 12 + sizeof(name), tail, 4);
	assert_int_equal(k8s_httpd_probe_query(name, KNOT_RRTYPE_TXT, 1, wire, 20), 0);
}

static void only_a_response_of_the_same_id_answers_the_health_query(void **state)
{
	uint8_t reply[12] = { 0xbe, 0xef, 0x84, 0x02 };  // QR, AA, SERVFAIL: alive all the same.
	assert_true(k8s_httpd_probe_answered(reply, sizeof(reply), 0xbeef));
	assert_false(k8s_httpd_probe_answered(reply, sizeof(reply), 0xbeee));
	assert_false(k8s_httpd_probe_answered(reply, 11, 0xbeef));
	reply[2] = 0x04;  // A query, not a response (a reflected packet).
	assert_false(k8s_httpd_probe_answered(reply, sizeof(reply), 0xbeef));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_query_is_counted_once_by_transport_type_and_rcode),
		cmocka_unit_test(the_request_duration_is_a_cumulative_histogram),
		cmocka_unit_test(a_source_adds_its_series_and_its_readiness_until_removed),
		cmocka_unit_test(the_health_query_is_one_question_without_recursion),
		cmocka_unit_test(only_a_response_of_the_same_id_answers_the_health_query),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
