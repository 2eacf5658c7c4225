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
 * The contract of metrics.h: a query is counted once, by transport, type and rcode;
 * requests are the responses summed; the duration histogram is cumulative; a source's
 * series and readiness come and go with it, the watchers' with the first and the last
 * watcher; the answers' clock, calibrated by its init only, once.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <libknot/descriptor.h>
#include <libknot/errcode.h>
#include <libknot/packet/wire.h>
#include <libknot/consts.h>

#include "ops/dnsmetrics.h"
#include "ops/httpd.h"
#include "ops/metrics.h"
#include "watch/watcher.h"
#include "mod-k8s/mod-k8s.h"

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
	has_line(page, MOD_K8S_METRIC_DNS_REQUESTS_TOTAL "{proto=\"udp\",type=\"A\"} 1");
	has_line(page, MOD_K8S_METRIC_DNS_REQUESTS_TOTAL "{proto=\"tcp\",type=\"SRV\"} 1");
	has_line(page, MOD_K8S_METRIC_DNS_REQUESTS_TOTAL "{proto=\"udp\",type=\"other\"} 1");
	has_line(page, MOD_K8S_METRIC_DNS_RESPONSES_TOTAL "{proto=\"udp\",type=\"A\",rcode=\"NOERROR\"} 1");
	has_line(page, MOD_K8S_METRIC_DNS_RESPONSES_TOTAL "{proto=\"udp\",type=\"A\",rcode=\"NXDOMAIN\"} 0");
	has_line(page, MOD_K8S_METRIC_DNS_RESPONSES_TOTAL "{proto=\"tcp\",type=\"SRV\",rcode=\"NXDOMAIN\"} 1");
	has_line(page, MOD_K8S_METRIC_DNS_RESPONSES_TOTAL "{proto=\"udp\",type=\"other\",rcode=\"SERVFAIL\"} 1");
}

#define CORE "server=\"dns://:53\",zone=\".\",view=\"\""

static void an_answer_is_counted_in_coredns_series_with_its_labels(void **state)
{
	uint64_t now = k8s_dnsmetrics_clock();
	k8s_dnsmetrics_answer_t a = {
		.qtype = KNOT_RRTYPE_A, .rcode = KNOT_RCODE_NOERROR, .proto = K8S_METRICS_UDP,
		.query_size = 40, .answer_size = 120, .plugin = K8S_DNSMETRICS_KUBERNETES,
	};
	k8s_dnsmetrics_answer(0, &a, now);
	a = (k8s_dnsmetrics_answer_t){
		.qtype = KNOT_RRTYPE_HTTPS, .rcode = KNOT_RCODE_REFUSED, .proto = K8S_METRICS_TCP,
		.ipv6 = true, .dnssec_ok = true, .query_size = 600, .answer_size = 600,
	};
	// Thread ids past the slots share them; a received time in the future is 0 s.
	k8s_dnsmetrics_answer(K8S_METRICS_THREADS + 3, &a, now + 1000000000);
	const char *page = render(false);
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL "{" CORE ",proto=\"udp\",family=\"1\",type=\"A\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL "{" CORE ",proto=\"tcp\",family=\"2\",type=\"other\"} 1");
	assert_null(strstr(page, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL "{" CORE ",proto=\"quic\""));
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL "{" CORE ",rcode=\"NOERROR\",plugin=\"kubernetes\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL "{" CORE ",rcode=\"REFUSED\",plugin=\"\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_DO_REQUESTS_TOTAL "{" CORE "} 1");
	has_line(page, "coredns_dns_request_duration_seconds_bucket{" CORE ",le=\"0.00025\"} 2");
	has_line(page, "coredns_dns_request_duration_seconds_count{" CORE "} 2");
	has_line(page, "coredns_dns_request_size_bytes_bucket{" CORE ",proto=\"udp\",le=\"0\"} 0");
	has_line(page, "coredns_dns_request_size_bytes_bucket{" CORE ",proto=\"udp\",le=\"100\"} 1");
	has_line(page, "coredns_dns_request_size_bytes_sum{" CORE ",proto=\"udp\"} 40");
	has_line(page, "coredns_dns_response_size_bytes_bucket{" CORE ",proto=\"udp\",le=\"100\"} 0");
	has_line(page, "coredns_dns_response_size_bytes_bucket{" CORE ",proto=\"udp\",le=\"200\"} 1");
	has_line(page, "coredns_dns_response_size_bytes_bucket{" CORE ",proto=\"tcp\",le=\"511\"} 0");
	has_line(page, "coredns_dns_response_size_bytes_bucket{" CORE ",proto=\"tcp\",le=\"1023\"} 1");
	has_line(page, "coredns_dns_response_size_bytes_bucket{" CORE ",proto=\"tcp\",le=\"64000\"} 1");
	has_line(page, "# TYPE coredns_build_info gauge");
	assert_non_null(strstr(page, "\nprocess_open_fds "));
}

static void a_health_check_is_timed_in_coredns_slim_buckets(void **state)
{
	// No check yet: no figures (absent, not zeros).
	assert_null(strstr(render(false), "coredns_health_request"));
	uint64_t now = k8s_dnsmetrics_clock();
	k8s_dnsmetrics_health(now - 3000000, true);
	k8s_dnsmetrics_health(now - 3000000000ull, false);
	const char *page = render(false);
	has_line(page, "# TYPE coredns_health_request_duration_seconds histogram");
	has_line(page, "coredns_health_request_duration_seconds_bucket{le=\"0.0025\"} 0");
	has_line(page, "coredns_health_request_duration_seconds_bucket{le=\"0.025\"} 1");
	has_line(page, "coredns_health_request_duration_seconds_bucket{le=\"2.5\"} 1");
	has_line(page, "coredns_health_request_duration_seconds_bucket{le=\"+Inf\"} 2");
	has_line(page, MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_FAILURES_TOTAL " 1");
}

static void the_time_buckets_are_coredns_ones(void **state)
{
	// prometheus.ExponentialBuckets(0.00025, 2, 16): 0.25 ms ... 8.192 s, bounds inclusive.
	assert_int_equal(k8s_dnsmetrics_time_bucket(0), 0);
	assert_int_equal(k8s_dnsmetrics_time_bucket(250000), 0);
	assert_int_equal(k8s_dnsmetrics_time_bucket(250001), 1);
	assert_int_equal(k8s_dnsmetrics_time_bucket(600000000), 12);  // 0.6 s: le 1.024
	assert_int_equal(k8s_dnsmetrics_time_bucket(8192000000ull), 15);
	assert_int_equal(k8s_dnsmetrics_time_bucket(8192000001ull), 16);  // +Inf
	for (unsigned b = 0; b < K8S_DNSMETRICS_TIME_BUCKETS; b++) {
		assert_true(k8s_dnsmetrics_time_bounds[b] == 0.00025 * (double)(1u << b));
	}
}

static void a_late_answer_is_read_from_its_wire(void **state)
{
	// A SERVFAIL answer to "a.example. SRV", 15 s after its receipt.
	static const uint8_t answer[] = {
		0x12, 0x34, 0x81, 0x82, 0, 1, 0, 0, 0, 0, 0, 0,
		1, 'a', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 33, 0, 1,
	};
	struct sockaddr_storage v6 = { .ss_family = AF_INET6 };
	k8s_dnsmetrics_late(false, &v6, NULL, NULL, 30, answer, sizeof(answer),
	                    k8s_dnsmetrics_clock() - 15000000000ull, K8S_DNSMETRICS_FORWARD);
	// Truncated: no type, no RCODE to read (NOERROR, "other").
	k8s_dnsmetrics_late(true, NULL, NULL, NULL, 30, answer, 5, k8s_dnsmetrics_clock(),
	                    K8S_DNSMETRICS_FORWARD);
	const char *page = render(false);
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL "{" CORE ",proto=\"udp\",family=\"2\",type=\"SRV\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL "{" CORE ",proto=\"tcp\",family=\"1\",type=\"other\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL "{" CORE ",rcode=\"SERVFAIL\",plugin=\"forward\"} 1");
	has_line(page, MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL "{" CORE ",rcode=\"NOERROR\",plugin=\"forward\"} 1");
	has_line(page, "coredns_dns_request_duration_seconds_bucket{" CORE ",le=\"8.192\"} 3");
	has_line(page, "coredns_dns_request_duration_seconds_bucket{" CORE ",le=\"+Inf\"} 4");
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
	has_line(page, MOD_K8S_METRIC_SERVING " 0");
	source_ready = true;
	page = render(true);
	has_line(page, MOD_K8S_METRIC_SERVING " 0");  // Lameduck.
	has_line(page, MOD_K8S_METRIC_LAMEDUCK " 1");
	page = render(false);
	has_line(page, MOD_K8S_METRIC_SERVING " 1");
	k8s_metrics_source_remove(&src);
	source_ready = false;
	assert_true(k8s_metrics_ready(why, sizeof(why)));
	assert_null(strstr(render(false), "test_forwarder"));
}

/*! \brief How many samples of \a family the page holds. */
static size_t samples(const char *page, const char *family)
{
	char wanted[128];
	snprintf(wanted, sizeof(wanted), "\n%s{", family);
	size_t count = 0;
	for (const char *p = strstr(page, wanted); p != NULL; p = strstr(p + 1, wanted)) {
		count++;
	}
	return count;
}

static void the_watchers_series_come_with_the_first_watcher_and_go_with_the_last(void **state)
{
	assert_null(strstr(render(false), "# TYPE " MOD_K8S_METRIC_READY " gauge"));
	char err[128] = "";
	k8s_watcher_conf_t a = { .labels = "app=a" }, b = { .labels = "app=b" };
	k8s_watcher_t *wa = k8s_watcher_acquire(&a, err, sizeof(err));
	assert_non_null(wa);
	const char *page = render(false);
	has_line(page, "# TYPE " MOD_K8S_METRIC_READY " gauge");
	has_line(page, "# TYPE " MOD_K8S_METRIC_COREDNS_KUBERNETES_DNS_PROGRAMMING_DURATION_SECONDS
	         " histogram");
	assert_int_equal(samples(page, MOD_K8S_METRIC_CONNECTED), 1);
	// One set of families, a sample per watcher (not per zone).
	k8s_watcher_t *wb = k8s_watcher_acquire(&b, err, sizeof(err));
	k8s_watcher_conf_t a2;  // A's settings as its watcher holds them (defaults filled in).
	assert_int_equal(k8s_watcher_conf_copy(&a2, &a), KNOT_EOK);
	k8s_watcher_t *wa2 = k8s_watcher_acquire(&a2, err, sizeof(err));
	k8s_watcher_conf_free(&a2);
	assert_ptr_equal(wa2, wa);
	page = render(false);
	assert_int_equal(samples(page, MOD_K8S_METRIC_CONNECTED), 2);
	assert_non_null(strstr(page, "# TYPE " MOD_K8S_METRIC_CONNECTED " gauge"));
	assert_null(strstr(strstr(page, "# TYPE " MOD_K8S_METRIC_CONNECTED " gauge") + 1,
	                   "# TYPE " MOD_K8S_METRIC_CONNECTED " gauge"));
	k8s_watcher_release(wa2);
	k8s_watcher_release(wa);
	assert_int_equal(samples(render(false), MOD_K8S_METRIC_CONNECTED), 1);
	k8s_watcher_release(wb);
	assert_null(strstr(render(false), "# TYPE " MOD_K8S_METRIC_READY " gauge"));
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*! \brief Monotonic ns bracketing one k8s_dnsmetrics_clock() read: *clock, *ns, the window. */
static uint64_t clock_read_between(uint64_t *clock, uint64_t *ns)
{
	uint64_t before = monotonic_ns();
	*clock = k8s_dnsmetrics_clock();
	uint64_t after = monotonic_ns();
	*ns = before + (after - before) / 2;
	return after - before;
}

static void runs_at_monotonic_rate_and_never_back(void)
{
	uint64_t prev = k8s_dnsmetrics_clock();
	for (int i = 0; i < 100000; i++) {
		uint64_t now = k8s_dnsmetrics_clock();
		assert_true(now >= prev);
		prev = now;
	}
	// Over a 50 ms sleep both clocks see the same time: 0.2%, plus the windows of the
	// reads (a preemption between two reads widens them, not the error) and 20 us.
	uint64_t c0, m0, c1, m1;
	uint64_t window = clock_read_between(&c0, &m0);
	struct timespec pause = { .tv_nsec = 50000000 };
	nanosleep(&pause, NULL);
	window += clock_read_between(&c1, &m1);
	int64_t diff = (int64_t)(c1 - c0) - (int64_t)(m1 - m0);
	if (llabs(diff) > (int64_t)((m1 - m0) / 500 + window + 20000)) {
		fail_msg("the clock saw %" PRIu64 " ns, CLOCK_MONOTONIC %" PRIu64 " ns (windows %"
		         PRIu64 " ns)", c1 - c0, m1 - m0, window);
	}
}

static void loading_the_code_leaves_the_answers_clock_on_clock_gettime(void **state)
{
	// Linked in, and nothing called k8s_dnsmetrics_clock_init() (the module's load does):
	// no calibration ran before main() (it was a constructor: 10 ms in every process).
	assert_true(k8s_dnsmetrics_tsc.mult == 0);
	assert_true(k8s_dnsmetrics_tsc.base == 0 && k8s_dnsmetrics_tsc.base_ns == 0);
	runs_at_monotonic_rate_and_never_back();
}

/*! \brief What dnsmetrics.c asks of the machine for the TSC, read the test's own way. */
static bool machine_keeps_time_by_an_invariant_tsc(void)
{
#if defined(__x86_64__)
	char buf[8192] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	bool tsc = f != NULL && fgets(buf, sizeof(buf), f) != NULL && strcmp(buf, "tsc\n") == 0;
	if (f != NULL) {
		fclose(f);
	}
	f = fopen("/proc/cpuinfo", "r");
	bool flags = false;
	while (tsc && f != NULL && !flags && fgets(buf, sizeof(buf), f) != NULL) {
		flags = strncmp(buf, "flags", 5) == 0;
	}
	if (f != NULL) {
		fclose(f);
	}
	return flags && strstr(buf, " constant_tsc") != NULL && strstr(buf, " nonstop_tsc") != NULL;
#else
	return false;
#endif
}

static void after_the_init_the_answers_clock_is_the_tsc_where_invariant_and_once(void **state)
{
	bool invariant = machine_keeps_time_by_an_invariant_tsc();
	bool first = false;
	assert_int_equal(k8s_dnsmetrics_clock_init(&first), invariant);
	assert_true(first);
	if (!invariant) {
		print_message("skipped: no invariant TSC the kernel keeps time by here; "
		              "the clock stays clock_gettime()\n");
		assert_true(k8s_dnsmetrics_tsc.mult == 0);
	}
	// About 1 ns per tick: a TSC between 100 MHz and 100 GHz (32.32 fixed point).
	if (invariant && (k8s_dnsmetrics_tsc.mult < (1ull << 32) / 100 ||
	                  k8s_dnsmetrics_tsc.mult > (10ull << 32))) {
		fail_msg("a rate of %" PRIu64 "/2^32 ns per tick", k8s_dnsmetrics_tsc.mult);
	}
	runs_at_monotonic_rate_and_never_back();

	// A second instance's or a reload's load: the calibration the readers use stays.
	struct k8s_dnsmetrics_tsc calibrated = k8s_dnsmetrics_tsc;
	assert_int_equal(k8s_dnsmetrics_clock_init(&first), invariant);
	assert_false(first);
	assert_memory_equal(&calibrated, &k8s_dnsmetrics_tsc, sizeof(calibrated));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		// First: before anything calls k8s_dnsmetrics_clock_init().
		cmocka_unit_test(loading_the_code_leaves_the_answers_clock_on_clock_gettime),
		cmocka_unit_test(after_the_init_the_answers_clock_is_the_tsc_where_invariant_and_once),
		cmocka_unit_test(a_query_is_counted_once_by_transport_type_and_rcode),
		cmocka_unit_test(the_request_duration_is_a_cumulative_histogram),
		cmocka_unit_test(an_answer_is_counted_in_coredns_series_with_its_labels),
		cmocka_unit_test(the_time_buckets_are_coredns_ones),
		cmocka_unit_test(a_health_check_is_timed_in_coredns_slim_buckets),
		cmocka_unit_test(a_late_answer_is_read_from_its_wire),
		cmocka_unit_test(a_source_adds_its_series_and_its_readiness_until_removed),
		cmocka_unit_test(the_watchers_series_come_with_the_first_watcher_and_go_with_the_last),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
