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

#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libknot/libknot.h>

#include "lib/dnsanswer.h"
#include "ops/dnsmetrics.h"
#include "ops/querylog.h"
#include "mod-k8s/mod-k8s.h"

struct k8s_dnsmetrics_tsc k8s_dnsmetrics_tsc;

#if defined(__x86_64__)
/*! \brief True if the file's first line is \a want (a sysfs value). */
static bool first_line_is(const char *path, const char *want)
{
	char line[64] = "";
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return false;
	}
	bool ok = fgets(line, sizeof(line), f) != NULL && strcmp(line, want) == 0;
	fclose(f);
	return ok;
}

/*! \brief True if the CPU's flags (/proc/cpuinfo) name \a flag. */
static bool cpu_has(const char *flags, const char *flag)
{
	size_t len = strlen(flag);
	for (const char *at = strstr(flags, flag); at != NULL; at = strstr(at + len, flag)) {
		if (at[-1] == ' ' && (at[len] == ' ' || at[len] == '\n' || at[len] == '\0')) {
			return true;
		}
	}
	return false;
}

/*! \brief The TSC and CLOCK_MONOTONIC at one instant: the TSC reads closest around it. */
static void tsc_sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	*tsc = 0;  // Set by the first try; said for GCC 14, which cannot see it.
	*ns = 0;
	for (int i = 0; i < 5; i++) {
		struct timespec ts;
		uint64_t t0 = __builtin_ia32_rdtsc();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t1 = __builtin_ia32_rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		}
	}
}

/*!
 * \brief The answers' clock by the TSC, as the kernel's own vDSO reads it, only where the
 * kernel keeps time by it (its clock source "tsc": it found the TSC synchronized across
 * CPUs and would have left it otherwise) and the CPU says it is invariant (constant_tsc,
 * nonstop_tsc: one rate in every P- and C-state). Calibrated over 10 ms: a rate error of
 * about 1e-5, 1 ns in CoreDNS's 100 us bucket. Once (k8s_dnsmetrics_clock_init()).
 */
static void tsc_init(void)
{
	if (!first_line_is("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	                   "tsc\n")) {
		return;
	}
	char line[4096];
	bool invariant = false;
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "flags", 5) == 0) {
			invariant = cpu_has(line, "constant_tsc") && cpu_has(line, "nonstop_tsc");
			break;
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	if (!invariant) {
		return;
	}
	uint64_t tsc0, ns0, tsc1, ns1;
	tsc_sample(&tsc0, &ns0);
	struct timespec pause = { .tv_nsec = 10000000 };
	nanosleep(&pause, NULL);
	tsc_sample(&tsc1, &ns1);
	if (tsc1 <= tsc0 || ns1 <= ns0 || ns1 - ns0 < 5000000) {
		return;  // Not a clock to trust: clock_gettime() it stays.
	}
	k8s_dnsmetrics_tsc.base = tsc0;
	k8s_dnsmetrics_tsc.base_ns = ns0;
	k8s_dnsmetrics_tsc.mult = (uint64_t)(((__uint128_t)(ns1 - ns0) << 32) / (tsc1 - tsc0));
}
#endif

/*
 * Not a constructor: knotc's configuration check, the tests and the fuzzers load this
 * code too, and would each read sysfs and sleep 10 ms before main().
 */
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static atomic_bool tsc_told;

bool k8s_dnsmetrics_clock_init(bool *first)
{
#if defined(__x86_64__)
	(void)pthread_once(&tsc_once, tsc_init);
#endif
	if (first != NULL) {
		*first = !atomic_exchange(&tsc_told, true);
	}
	return k8s_dnsmetrics_tsc.mult != 0;
}

/* CoreDNS's labels of a cluster's one server block (".:53"). */
#define SERVER_ZONE "server=\"dns://:53\",zone=\".\",view=\"\""

/*!
 * \brief CoreDNS's monitored query types (plugin/metrics/vars, qTypeString): a counter's
 * index by type (a table, not a search: every answer reads it); 0 is "other".
 */
const uint8_t k8s_dnsmetrics_qtype_slots[256] = {
	[KNOT_RRTYPE_A] = 1, [KNOT_RRTYPE_AAAA] = 2, [KNOT_RRTYPE_CNAME] = 3,
	[KNOT_RRTYPE_DNSKEY] = 4, [KNOT_RRTYPE_DS] = 5, [KNOT_RRTYPE_MX] = 6,
	[KNOT_RRTYPE_NSEC3] = 7, [KNOT_RRTYPE_NSEC] = 8, [KNOT_RRTYPE_NS] = 9,
	[KNOT_RRTYPE_PTR] = 10, [KNOT_RRTYPE_RRSIG] = 11, [KNOT_RRTYPE_SOA] = 12,
	[KNOT_RRTYPE_SRV] = 13, [KNOT_RRTYPE_TXT] = 14, [KNOT_RRTYPE_IXFR] = 15,
	[KNOT_RRTYPE_AXFR] = 16, [KNOT_RRTYPE_ANY] = 17,
};
static const char *qtype_names[] = {
	"other", "A", "AAAA", "CNAME", "DNSKEY", "DS", "MX", "NSEC3", "NSEC", "NS", "PTR", "RRSIG",
	"SOA", "SRV", "TXT", "IXFR", "AXFR", "ANY"
};
#define QTYPES K8S_DNSMETRICS_QTYPES
_Static_assert(sizeof(qtype_names) / sizeof(qtype_names[0]) == QTYPES, "a name per counted type");

/* The module answers from memory: microseconds, with room for a slow autopath walk. */
const uint64_t k8s_metrics_duration_bounds_ns[K8S_METRICS_DURATION_BUCKETS] = {
	10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 100000000
};

/* mod-k8s's own query types (metrics.h): a counter's index + 1, 0 is "other". */
const uint8_t k8s_dnsmetrics_module_qtypes[256] = {
	[KNOT_RRTYPE_A] = 1, [KNOT_RRTYPE_AAAA] = 2, [KNOT_RRTYPE_SRV] = 3, [KNOT_RRTYPE_PTR] = 4,
	[KNOT_RRTYPE_TXT] = 5, [KNOT_RRTYPE_CNAME] = 6, [KNOT_RRTYPE_NS] = 7, [KNOT_RRTYPE_SOA] = 8,
	[KNOT_RRTYPE_MX] = 9, [KNOT_RRTYPE_HTTPS] = 10, [KNOT_RRTYPE_ANY] = 11,
};

static const char *proto_names[K8S_METRICS_PROTO_COUNT] = { "udp", "tcp", "quic" };
static const char *plugin_names[K8S_DNSMETRICS_PLUGIN_COUNT] = {
	"", "kubernetes", "cache", "forward"
};
#define RCODES K8S_DNSMETRICS_RCODES

/*! \brief CoreDNS's size buckets (bytes). */
#define SIZE_BUCKETS K8S_DNSMETRICS_SIZE_BUCKETS
static const double size_bounds[SIZE_BUCKETS] = {
	0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3
};
const size_t k8s_dnsmetrics_size_bounds[SIZE_BUCKETS] = {
	0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16000, 32000, 48000, 64000
};

const double k8s_dnsmetrics_time_bounds[K8S_DNSMETRICS_TIME_BUCKETS] = {
	0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512,
	1.024, 2.048, 4.096, 8.192
};

k8s_dnsmetrics_slot_t k8s_dnsmetrics_slots[K8S_DNSMETRICS_LATE_SLOT + 1];

/*! \brief CoreDNS's SlimTimeBuckets: 0.25 ms times 10, 5 of them. */
#define HEALTH_BUCKETS 5
static const double health_bounds[HEALTH_BUCKETS] = { 0.00025, 0.0025, 0.025, 0.25, 2.5 };

/*! \brief The /health checks (the endpoint's thread counts, a scrape reads). */
static struct {
	atomic_uint_fast64_t duration[HEALTH_BUCKETS + 1];
	atomic_uint_fast64_t duration_sum_ns;
	atomic_uint_fast64_t failures;
} health;

void k8s_metrics_query(unsigned thread_id, k8s_metrics_proto_t proto, uint16_t qtype,
                       k8s_metrics_rcode_t rcode, uint64_t duration_ns)
{
	k8s_dnsmetrics_module_count(&k8s_dnsmetrics_slots[thread_id % K8S_METRICS_THREADS],
	                            (proto < K8S_METRICS_PROTO_COUNT) ? proto : K8S_METRICS_UDP,
	                            qtype, rcode, duration_ns);
}

void k8s_dnsmetrics_answer(unsigned slot, const k8s_dnsmetrics_answer_t *a,
                           uint64_t received_ns)
{
	k8s_dnsmetrics_count(slot, a, received_ns);
}

void k8s_dnsmetrics_late(bool tcp, const struct sockaddr_storage *remote,
                         const struct sockaddr_storage *local, const uint8_t *query,
                         size_t query_size, const uint8_t *answer, size_t answer_size,
                         uint64_t received_ns, k8s_dnsmetrics_plugin_t plugin)
{
	k8s_dnsmetrics_answer_t a = {
		.proto = tcp ? K8S_METRICS_TCP : K8S_METRICS_UDP,
		.ipv6 = (remote != NULL && remote->ss_family == AF_INET6),
		.query_size = query_size,
		.answer_size = answer_size,
		.plugin = plugin,
	};
	if (answer_size >= KNOT_WIRE_HEADER_SIZE) {
		a.rcode = knot_wire_get_rcode(answer);
	}
	// The question's type follows its name (uncompressed: the first name in the message).
	if (answer_size > KNOT_WIRE_HEADER_SIZE && knot_wire_get_qdcount(answer) > 0) {
		int name = knot_dname_wire_check(answer + KNOT_WIRE_HEADER_SIZE, answer + answer_size,
		                                  NULL);
		size_t at = KNOT_WIRE_HEADER_SIZE + (name > 0 ? name : 0);
		if (name > 0 && at + 2 <= answer_size) {
			a.qtype = knot_wire_read_u16(answer + at);
		}
	}
	k8s_dnsmetrics_answer(K8S_DNSMETRICS_LATE_SLOT, &a, received_ns);
	if (k8s_querylog_on()) {
		uint64_t now = k8s_dnsmetrics_clock();
		k8s_querylog_entry_t e = {
			.query = query, .query_size = query_size, .answer = answer,
			.answer_size = answer_size, .remote = remote, .local = local, .tcp = tcp,
			.duration_ns = (now > received_ns) ? now - received_ns : 0,
		};
		k8s_querylog_answer(&e);
	}
}

void k8s_dnsmetrics_health(uint64_t asked_ns, bool ok)
{
	uint64_t now = k8s_dnsmetrics_clock();
	uint64_t took = (now > asked_ns) ? now - asked_ns : 0;
	unsigned b = 0;
	while (b < HEALTH_BUCKETS && (double)took / 1e9 > health_bounds[b]) {
		b++;
	}
	k8s_dnsmetrics_add(&health.duration[b], 1);
	k8s_dnsmetrics_add(&health.duration_sum_ns, took);
	k8s_dnsmetrics_add(&health.failures, !ok);
}

/* Rendering. */

/*! \brief The slots summed (the endpoint's thread only: one scrape at a time). */
#define SUM_COUNTER(name, dims) uint64_t name dims;
static struct {
	K8S_DNSMETRICS_SENT_COUNTERS(SUM_COUNTER)
} sum;

static void sum_into(uint64_t *dst, atomic_uint_fast64_t *src, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		dst[i] += atomic_load_explicit(&src[i], memory_order_relaxed);
	}
}

#define SUM_SLOT(name, dims) \
	sum_into((uint64_t *)&sum.name, (atomic_uint_fast64_t *)&s->name, \
	         sizeof(sum.name) / sizeof(uint64_t));

static void sum_slots(void)
{
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i <= K8S_DNSMETRICS_LATE_SLOT; i++) {
		k8s_dnsmetrics_slot_t *s = &k8s_dnsmetrics_slots[i];
		K8S_DNSMETRICS_SENT_COUNTERS(SUM_SLOT)
	}
}

void k8s_dnsmetrics_queries(k8s_metrics_queries_t *total)
{
	memset(total, 0, sizeof(*total));
	for (size_t i = 0; i <= K8S_DNSMETRICS_LATE_SLOT; i++) {
		k8s_dnsmetrics_slot_t *s = &k8s_dnsmetrics_slots[i];
		sum_into(&total->responses[0][0][0], &s->module_responses[0][0][0],
		         sizeof(total->responses) / sizeof(uint64_t));
		sum_into(&total->duration[0][0], &s->module_duration[0][0],
		         sizeof(total->duration) / sizeof(uint64_t));
		sum_into(total->duration_sum_ns, s->module_duration_sum_ns,
		         sizeof(total->duration_sum_ns) / sizeof(uint64_t));
	}
}

static void render_answers(k8s_metrics_out_t *out)
{
	char labels[256];
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL, "counter",
	                   "Counter of DNS requests made per zone, protocol and family.");
	for (unsigned p = 0; p < K8S_METRICS_PROTO_COUNT; p++) {
		for (unsigned f = 0; f < 2; f++) {
			for (unsigned i = 1; i <= QTYPES; i++) {
				unsigned t = i % QTYPES;  // "other" (0) last.
				if (sum.requests[p][f][t] == 0) {
					continue;  // As CoreDNS: a series once seen.
				}
				snprintf(labels, sizeof(labels), SERVER_ZONE ",proto=\"%s\",family=\"%u\","
				         "type=\"%s\"", proto_names[p], f + 1,
				         qtype_names[t]);
				k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_DNS_REQUESTS_TOTAL, labels,
				                   (double)sum.requests[p][f][t]);
			}
		}
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_DNS_DO_REQUESTS_TOTAL, "counter",
	                   "Counter of DNS requests with DO bit set per zone.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_DNS_DO_REQUESTS_TOTAL, SERVER_ZONE, (double)sum.do_requests);
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL, "counter",
	                   "Counter of response status codes.");
	for (unsigned r = 0; r < RCODES; r++) {
		for (unsigned p = 0; p < K8S_DNSMETRICS_PLUGIN_COUNT; p++) {
			// NOERROR answered by a zone is always there: the ratio's denominator.
			bool always = (r == KNOT_RCODE_NOERROR && p == K8S_DNSMETRICS_KUBERNETES);
			if (sum.responses[r][p] == 0 && !always) {
				continue;
			}
			char num[8];
			snprintf(labels, sizeof(labels), SERVER_ZONE ",rcode=\"%s\",plugin=\"%s\"",
			         k8s_rcode_name(r, num, sizeof(num)), plugin_names[p]);
			k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_DNS_RESPONSES_TOTAL, labels,
			                   (double)sum.responses[r][p]);
		}
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_DNS_REQUEST_DURATION_SECONDS, "histogram",
	                   "Histogram of the time (in seconds) each request took per zone.");
	k8s_metrics_histogram(out, MOD_K8S_METRIC_COREDNS_DNS_REQUEST_DURATION_SECONDS, SERVER_ZONE,
	                      sum.duration, k8s_dnsmetrics_time_bounds,
	                      K8S_DNSMETRICS_TIME_BUCKETS, sum.duration_sum_ns / 1e9);
	static const struct {
		const char *name, *help;
	} sizes[2] = {
		{ MOD_K8S_METRIC_COREDNS_DNS_REQUEST_SIZE_BYTES,
		  "Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol." },
		{ MOD_K8S_METRIC_COREDNS_DNS_RESPONSE_SIZE_BYTES, "Size of the returned response in bytes." },
	};
	for (unsigned i = 0; i < 2; i++) {
		k8s_metrics_family(out, sizes[i].name, "histogram", sizes[i].help);
		for (unsigned p = 0; p < K8S_METRICS_PROTO_COUNT; p++) {
			snprintf(labels, sizeof(labels), SERVER_ZONE ",proto=\"%s\"", proto_names[p]);
			k8s_metrics_histogram(out, sizes[i].name, labels,
			                      i == 0 ? sum.query_size[p] : sum.answer_size[p],
			                      size_bounds, SIZE_BUCKETS,
			                      (double)(i == 0 ? sum.query_size_sum[p]
			                                      : sum.answer_size_sum[p]));
		}
	}
}

/* The process, from /proc/self (as client_golang's process collector reads it). */

static void render_process(k8s_metrics_out_t *out)
{
	long ticks = sysconf(_SC_CLK_TCK);
	long page = sysconf(_SC_PAGESIZE);
	unsigned long utime = 0, stime = 0, vsize = 0;
	unsigned long long starttime = 0;
	long rss = 0;
	bool stat_ok = false;
	FILE *f = fopen("/proc/self/stat", "r");
	if (f != NULL) {
		char line[1024];
		if (fgets(line, sizeof(line), f) != NULL) {
			// After the command's closing parenthesis: field 3 (state) onwards.
			char *p = strrchr(line, ')');
			stat_ok = p != NULL && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			                              "%lu %lu %*d %*d %*d %*d %*d %*d %llu %lu %ld",
			                              &utime, &stime, &starttime, &vsize, &rss) == 5;
		}
		fclose(f);
	}
	double btime = 0;
	f = fopen("/proc/stat", "r");
	if (f != NULL) {
		char line[256];
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "btime %lf", &btime) == 1) {
				break;
			}
		}
		fclose(f);
	}
	size_t fds = 0;
	DIR *dir = opendir("/proc/self/fd");
	if (dir != NULL) {
		struct dirent *e;
		while ((e = readdir(dir)) != NULL) {
			fds += (e->d_name[0] != '.');
		}
		closedir(dir);
		fds -= (fds > 0);  // The directory's own descriptor.
	}
	struct rlimit lim = { 0 };
	(void)getrlimit(RLIMIT_NOFILE, &lim);

	if (stat_ok && ticks > 0) {
		k8s_metrics_family(out, "process_cpu_seconds_total", "counter",
		                   "Total user and system CPU time spent in seconds.");
		k8s_metrics_sample(out, "process_cpu_seconds_total", NULL,
		                   (double)(utime + stime) / ticks);
		k8s_metrics_family(out, "process_resident_memory_bytes", "gauge",
		                   "Resident memory size in bytes.");
		k8s_metrics_sample(out, "process_resident_memory_bytes", NULL, (double)rss * page);
		k8s_metrics_family(out, "process_virtual_memory_bytes", "gauge",
		                   "Virtual memory size in bytes.");
		k8s_metrics_sample(out, "process_virtual_memory_bytes", NULL, (double)vsize);
		k8s_metrics_family(out, "process_start_time_seconds", "gauge",
		                   "Start time of the process since unix epoch in seconds.");
		k8s_metrics_sample(out, "process_start_time_seconds", NULL,
		                   btime + (double)starttime / ticks);
	}
	k8s_metrics_family(out, "process_open_fds", "gauge", "Number of open file descriptors.");
	k8s_metrics_sample(out, "process_open_fds", NULL, (double)fds);
	k8s_metrics_family(out, "process_max_fds", "gauge",
	                   "Maximum number of open file descriptors.");
	k8s_metrics_sample(out, "process_max_fds", NULL,
	                   lim.rlim_cur == RLIM_INFINITY ? 1048576.0 : (double)lim.rlim_cur);
}

static void render_health(k8s_metrics_out_t *out)
{
	uint64_t duration[HEALTH_BUCKETS + 1], count = 0;
	for (size_t b = 0; b <= HEALTH_BUCKETS; b++) {
		duration[b] = atomic_load_explicit(&health.duration[b], memory_order_relaxed);
		count += duration[b];
	}
	if (count == 0) {
		return;  // No check yet: no figures to give.
	}
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_DURATION_SECONDS, "histogram",
	                   "Histogram of the time (in seconds) each request took.");
	k8s_metrics_histogram(out, MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_DURATION_SECONDS, NULL, duration,
	                      health_bounds, HEALTH_BUCKETS,
	                      atomic_load_explicit(&health.duration_sum_ns, memory_order_relaxed) / 1e9);
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_FAILURES_TOTAL, "counter",
	                   "The number of times the health check failed.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_HEALTH_REQUEST_FAILURES_TOTAL, NULL,
	                   (double)atomic_load_explicit(&health.failures, memory_order_relaxed));
}

void k8s_dnsmetrics_render(k8s_metrics_out_t *out)
{
	sum_slots();
	render_answers(out);
	render_health(out);
	k8s_metrics_family(out, MOD_K8S_METRIC_COREDNS_BUILD_INFO, "gauge",
	                   "A metric with a constant '1' value labeled by version, revision, and "
	                   "goversion from which CoreDNS was built.");
	k8s_metrics_sample(out, MOD_K8S_METRIC_COREDNS_BUILD_INFO, "version=\"" PACKAGE_VERSION "\","
	                   "revision=\"mod-k8s\",goversion=\"knotd " KNOT_RELEASE "\"", 1);
	render_process(out);
}
