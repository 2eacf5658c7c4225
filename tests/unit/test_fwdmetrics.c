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
 * The contract of forward_metrics.h: the forwarder's pushed counters and the workers'
 * cache lookups become mod_k8s_forward_* series, one per upstream address ("addr:port"),
 * an address in two groups once.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "resolver/forward_metrics.h"
#include "forward/servers.h"
#include "mod-k8s/mod-k8s.h"

static char *collect(k8s_fwd_metrics_t *m)
{
	static k8s_metrics_out_t out;
	k8s_buf_reset(&out.buf, 0);
	out.failed = false;
	k8s_fwd_metrics_collect(m, &out);
	assert_false(out.failed);
	assert_int_equal(k8s_buf_append(&out.buf, "", 1, K8S_METRICS_MAX_PAGE + 1), KNOT_EOK);
	return out.buf.data;
}

static void has_line(const char *page, const char *line)
{
	char wanted[512];
	snprintf(wanted, sizeof(wanted), "\n%s\n", line);
	if (strstr(page, wanted) == NULL) {
		fail_msg("no line '%s' in the page:\n%s", line, page);
	}
}

static size_t count_of(const char *page, const char *text)
{
	size_t n = 0;
	for (const char *p = strstr(page, text); p != NULL; p = strstr(p + 1, text)) {
		n++;
	}
	return n;
}

/*! \brief Default servers 192.0.2.1@53 and [2001:db8::1]@5353; a stub domain at 192.0.2.1 again. */
static k8s_fwd_conf_t two_groups(void)
{
	k8s_fwd_conf_t conf = { 0 };
	conf.groups = calloc(2, sizeof(*conf.groups));
	assert_non_null(conf.groups);
	conf.group_count = 2;
	conf.groups[0].servers = calloc(2, sizeof(struct sockaddr_storage));
	conf.groups[1].servers = calloc(1, sizeof(struct sockaddr_storage));
	assert_non_null(conf.groups[0].servers);
	assert_non_null(conf.groups[1].servers);
	assert_int_equal(k8s_fwd_addr_parse("192.0.2.1", &conf.groups[0].servers[0]), KNOT_EOK);
	assert_int_equal(k8s_fwd_addr_parse("2001:db8::1@5353", &conf.groups[0].servers[1]), KNOT_EOK);
	assert_int_equal(k8s_fwd_addr_parse("192.0.2.1", &conf.groups[1].servers[0]), KNOT_EOK);
	conf.groups[0].count = 2;
	conf.groups[1].count = 1;
	return conf;
}

static void the_pushed_counters_are_the_series(void **state)
{
	k8s_fwd_conf_t conf = two_groups();
	k8s_fwd_metrics_t *m = k8s_fwd_metrics_new(&conf);
	k8s_fwd_conf_deinit(&conf);
	assert_non_null(m);
	assert_ptr_equal(m->src.ctx, m);
	assert_ptr_equal(m->src.collect, k8s_fwd_metrics_collect);

	// Before the first push: totals at 0, no upstream samples (only their families).
	char *page = collect(m);
	has_line(page, MOD_K8S_METRIC_FORWARD_REQUESTS_TOTAL " 0");
	has_line(page, "# TYPE mod_k8s_forward_upstream_healthy gauge");
	assert_null(strstr(page, "upstream=\""));

	k8s_fwd_stats_t st = {
		.forwarded = 7, .answered = 9, .servfail = 2, .timeouts = 3, .failovers = 4,
		.loops = 1, .dropped = 5, .waiting = 6, .cache_entries = 11, .cache_bytes = 1234,
		.server_count = 3,
	};
	st.server[0] = (typeof(st.server[0])){ .queries = 4, .answers = 1, .failures = 3, .timeouts = 3, .down = 1 };
	st.server[1] = (typeof(st.server[1])){ .queries = 5, .answers = 5 };
	st.server[2] = (typeof(st.server[2])){ .queries = 2, .answers = 2 };
	k8s_fwd_metrics_push(m, &st);
	page = collect(m);
	has_line(page, "# TYPE mod_k8s_forward_requests_total counter");
	has_line(page, MOD_K8S_METRIC_FORWARD_REQUESTS_TOTAL " 7");
	has_line(page, MOD_K8S_METRIC_FORWARD_RESPONSES_TOTAL " 9");
	has_line(page, MOD_K8S_METRIC_FORWARD_FAILURES_TOTAL " 2");
	has_line(page, MOD_K8S_METRIC_FORWARD_TIMEOUTS_TOTAL " 3");
	has_line(page, MOD_K8S_METRIC_FORWARD_FAILOVERS_TOTAL " 4");
	has_line(page, MOD_K8S_METRIC_FORWARD_LOOPS_TOTAL " 1");
	has_line(page, MOD_K8S_METRIC_FORWARD_DROPPED_TOTAL " 5");
	has_line(page, "# TYPE mod_k8s_forward_waiting_clients gauge");
	has_line(page, MOD_K8S_METRIC_FORWARD_WAITING_CLIENTS " 6");
	has_line(page, MOD_K8S_METRIC_FORWARD_CACHE_ENTRIES " 11");
	has_line(page, MOD_K8S_METRIC_FORWARD_CACHE_SIZE_BYTES " 1234");
	// 192.0.2.1 is the default group's first and the stub domain's: one series, summed.
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_REQUESTS_TOTAL "{upstream=\"192.0.2.1:53\"} 6");
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_RESPONSES_TOTAL "{upstream=\"192.0.2.1:53\"} 3");
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_FAILURES_TOTAL "{upstream=\"192.0.2.1:53\"} 3");
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_TIMEOUTS_TOTAL "{upstream=\"192.0.2.1:53\"} 3");
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_HEALTHY "{upstream=\"192.0.2.1:53\"} 0");
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_REQUESTS_TOTAL "{upstream=\"[2001:db8::1]:5353\"} 5");
	has_line(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_HEALTHY "{upstream=\"[2001:db8::1]:5353\"} 1");
	assert_int_equal(count_of(page, MOD_K8S_METRIC_FORWARD_UPSTREAM_REQUESTS_TOTAL "{"), 2);
	assert_int_equal(count_of(page, "# TYPE mod_k8s_forward_upstream_requests_total "), 1);
	k8s_fwd_metrics_free(m);
}

static void coredns_forward_and_cache_series_are_per_address(void **state)
{
	k8s_fwd_conf_t conf = two_groups();
	k8s_fwd_metrics_t *m = k8s_fwd_metrics_new(&conf);
	k8s_fwd_conf_deinit(&conf);
	assert_non_null(m);
	k8s_fwd_stats_t st = { .cache_entries = 11, .broken = 2, .server_count = 3 };
	st.server[0] = (typeof(st.server[0])){ .queries = 4, .probe_failures = 3 };
	st.server[2] = (typeof(st.server[2])){ .queries = 2, .probe_failures = 1 };
	// An answer in 0.3 ms (bucket le 0.0005), another in 5 s (le 8.192), a SERVFAIL.
	uint64_t now = k8s_dnsmetrics_clock();
	k8s_fwd_stats_answer(&st, 0, KNOT_RCODE_NOERROR, now - 300000);
	k8s_fwd_stats_answer(&st, 2, KNOT_RCODE_NOERROR, now - 5000000000ull);
	k8s_fwd_stats_answer(&st, 1, KNOT_RCODE_SERVFAIL, now);
	k8s_fwd_metrics_lookup(m, 0, true);
	k8s_fwd_metrics_lookup(m, 2, false);
	k8s_fwd_metrics_push(m, &st);
	char *page = collect(m);
#define LABELS(to) "server=\"dns://:53\",zones=\".\",view=\"\",to=\"" to "\""
	has_line(page, MOD_K8S_METRIC_COREDNS_FORWARD_REQUESTS_TOTAL "{" LABELS("192.0.2.1:53") "} 6");
	has_line(page, MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_FAILURES_TOTAL "{" LABELS("192.0.2.1:53") "} 4");
	has_line(page, "coredns_forward_request_duration_seconds_bucket{" LABELS("192.0.2.1:53")
	         ",le=\"0.00025\"} 0");
	has_line(page, "coredns_forward_request_duration_seconds_bucket{" LABELS("192.0.2.1:53")
	         ",le=\"0.0005\"} 1");
	has_line(page, "coredns_forward_request_duration_seconds_bucket{" LABELS("192.0.2.1:53")
	         ",le=\"4.096\"} 1");
	has_line(page, "coredns_forward_request_duration_seconds_bucket{" LABELS("192.0.2.1:53")
	         ",le=\"8.192\"} 2");
	has_line(page, "coredns_forward_request_duration_seconds_count{" LABELS("192.0.2.1:53") "} 2");
	has_line(page, MOD_K8S_METRIC_COREDNS_FORWARD_RESPONSES_TOTAL "{server=\"dns://:53\",zones=\".\",view=\"\","
	         "rcode=\"NOERROR\",to=\"192.0.2.1:53\"} 2");
	has_line(page, MOD_K8S_METRIC_COREDNS_FORWARD_RESPONSES_TOTAL "{server=\"dns://:53\",zones=\".\",view=\"\","
	         "rcode=\"SERVFAIL\",to=\"[2001:db8::1]:5353\"} 1");
	assert_null(strstr(page, "rcode=\"SERVFAIL\",to=\"192.0.2.1:53\""));
	has_line(page, MOD_K8S_METRIC_COREDNS_FORWARD_HEALTHCHECK_BROKEN_TOTAL "{server=\"dns://:53\",zones=\".\","
	         "view=\"\"} 2");
	has_line(page, MOD_K8S_METRIC_COREDNS_CACHE_ENTRIES "{server=\"dns://:53\",type=\"success\",zones=\".\","
	         "view=\"\"} 11");
	has_line(page, MOD_K8S_METRIC_COREDNS_CACHE_HITS_TOTAL "{server=\"dns://:53\",type=\"success\",zones=\".\","
	         "view=\"\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_CACHE_MISSES_TOTAL "{server=\"dns://:53\",zones=\".\",view=\"\"} 1");
	// Each family's samples follow its own TYPE line, once.
	assert_int_equal(count_of(page, "# TYPE coredns_forward_requests_total "), 1);
	assert_int_equal(count_of(page, MOD_K8S_METRIC_COREDNS_FORWARD_REQUESTS_TOTAL "{"), 2);
	const char *type = strstr(page, "# TYPE coredns_forward_responses_total ");
	assert_non_null(type);
	assert_true(strstr(page, "\ncoredns_forward_responses_total{") > type);
	assert_true(strstr(page, "\ncoredns_forward_requests_total{") < type);
#undef LABELS
	k8s_fwd_metrics_free(m);
}

static void the_workers_lookups_are_summed_over_threads(void **state)
{
	k8s_fwd_conf_t conf = two_groups();
	k8s_fwd_metrics_t *m = k8s_fwd_metrics_new(&conf);
	k8s_fwd_conf_deinit(&conf);
	assert_non_null(m);
	k8s_fwd_metrics_lookup(m, 0, true);
	k8s_fwd_metrics_lookup(m, 1, true);
	k8s_fwd_metrics_lookup(m, K8S_METRICS_THREADS + 1, true);  // Shares slot 1: still counted.
	k8s_fwd_metrics_lookup(m, 3, false);
	char *page = collect(m);
	has_line(page, "# TYPE mod_k8s_forward_cache_hits_total counter");
	has_line(page, MOD_K8S_METRIC_FORWARD_CACHE_HITS_TOTAL " 3");
	has_line(page, MOD_K8S_METRIC_FORWARD_CACHE_MISSES_TOTAL " 1");
	k8s_fwd_metrics_free(m);
}

static void a_source_renders_on_the_page_until_removed(void **state)
{
	k8s_fwd_conf_t conf = two_groups();
	k8s_fwd_metrics_t *m = k8s_fwd_metrics_new(&conf);
	k8s_fwd_conf_deinit(&conf);
	assert_non_null(m);
	k8s_metrics_out_t out = { 0 };
	k8s_metrics_source_add(&m->src);
	assert_int_equal(k8s_metrics_render(&out, false), KNOT_EOK);
	assert_int_equal(k8s_buf_append(&out.buf, "", 1, K8S_METRICS_MAX_PAGE + 1), KNOT_EOK);
	assert_non_null(strstr(out.buf.data, "\nmod_k8s_forward_cache_hits_total 0\n"));
	k8s_metrics_source_remove(&m->src);
	k8s_buf_reset(&out.buf, 0);
	assert_int_equal(k8s_metrics_render(&out, false), KNOT_EOK);
	assert_int_equal(k8s_buf_append(&out.buf, "", 1, K8S_METRICS_MAX_PAGE + 1), KNOT_EOK);
	assert_null(strstr(out.buf.data, "mod_k8s_forward_"));
	k8s_buf_free(&out.buf);
	k8s_fwd_metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_pushed_counters_are_the_series),
		cmocka_unit_test(coredns_forward_and_cache_series_are_per_address),
		cmocka_unit_test(the_workers_lookups_are_summed_over_threads),
		cmocka_unit_test(a_source_renders_on_the_page_until_removed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
