#!/usr/bin/env python3
"""CoreDNS's series on /metrics (issue 34 item 1; doc/mod-k8s.rst, CoreDNS's series),
counted over every answer knotd sends, against the shipped deployment forwarding to a stub
upstream: a cluster name, knotd's own REFUSED, a forwarded name answered late and then from
the cache, an upstream's SERVFAIL relayed, each counted once with its response code and
who wrote it; a late answer's duration from the query's receipt, the upstream's time
included; the forwarder's and the cache's series; the process's; the page as promtool
reads it.
"""

import shutil
import subprocess
import time
import urllib.request

import knotd
import promtext
import shipped
import stubdns
import testing
import wire
from promtext import value

tests = testing.Tests()

HTTP_PORT = knotd.free_port()


def page():
    with urllib.request.urlopen(f"http://127.0.0.1:{HTTP_PORT}/metrics", timeout=5) as r:
        return r.read().decode()


def scrape():
    return promtext.parse(page())


class Deployment:
    def __enter__(self):
        self.upstream = stubdns.StubDNS().__enter__()
        self.deployment = shipped.deployment([self.upstream.address], metrics_port=HTTP_PORT)
        self.cluster = self.deployment.__enter__()
        self.cluster.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR")
        return self

    def __exit__(self, *exc):
        self.deployment.__exit__(*exc)
        self.upstream.__exit__(*exc)
        return False

    def settled(self):
        """The page once the forwarder's counters (pushed once a second) are current."""
        time.sleep(1.5)
        return scrape()


def total(families, name, sample=None, **labels):
    """promtext.value(), with any label (`family` too) to match."""
    return sum(v for series, have, v in families[name]["samples"]
               if (sample or name) == series and all(have.get(k) == w for k, w in labels.items()))


def grew(after, before, name, sample=None, **labels):
    return total(after, name, sample, **labels) - total(before, name, sample, **labels)


tests.fixture(Deployment, "the shipped deployment forwarding to a stub upstream")


@tests.case
def every_kind_of_answer_is_counted_once_with_its_rcode_and_plugin(d):
    before = d.settled()
    c = d.cluster
    testing.expect_equal(c.query("kubernetes.default.svc.cluster.local.").rcode, "NOERROR", "cluster")
    testing.expect_equal(c.query("nothing.default.svc.cluster.local.").rcode, "NXDOMAIN", "cluster NX")
    testing.expect_equal(c.query("kubernetes.default.svc.cluster.local.", tcp=True).rcode,
                         "NOERROR", "over TCP")
    testing.expect_equal(c.query("www.counted.example.").rcode, "NOERROR", "forwarded, late")
    testing.expect_equal(c.query("www.counted.example.").rcode, "NOERROR", "from the cache")
    # Class NONE: knotd's own REFUSED, no module involved.
    query = bytearray(wire.query("refused.example.", ident=7))
    query[-1] = 254
    reply = wire.exchange((c.server.address, c.server.port), bytes(query))
    testing.expect(reply is not None and reply.rcode == "REFUSED", f"knotd's REFUSED: {reply}")
    after = d.settled()

    testing.expect_equal(grew(after, before, "coredns_dns_requests_total"), 6, "answers counted")
    testing.expect_equal(grew(after, before, "coredns_dns_responses_total"), 6, "responses counted")
    testing.expect_equal(grew(after, before, "coredns_dns_requests_total", proto="tcp", type="A"), 1,
                         "the TCP answer")
    testing.expect_equal(grew(after, before, "coredns_dns_requests_total", family="1",
                              server="dns://:53", zone="."), 6, "CoreDNS's labels")
    for rcode, plugin, count in (("NOERROR", "kubernetes", 2), ("NXDOMAIN", "kubernetes", 1),
                                 ("NOERROR", "forward", 1), ("NOERROR", "cache", 1),
                                 ("REFUSED", "", 1)):
        testing.expect_equal(grew(after, before, "coredns_dns_responses_total", rcode=rcode,
                                  plugin=plugin), count, f"{rcode} by {plugin or 'knotd'}")
    for family in ("coredns_dns_request_duration_seconds", "coredns_dns_request_size_bytes",
                   "coredns_dns_response_size_bytes"):
        testing.expect_equal(grew(after, before, family, family + "_count"), 6, f"{family} observed")
    testing.expect_equal(grew(after, before, "coredns_cache_hits_total"), 1, "a cache hit")
    testing.expect_equal(grew(after, before, "coredns_cache_misses_total"), 1, "a cache miss")
    testing.expect_equal(grew(after, before, "coredns_forward_requests_total"), 1, "asked upstream")
    testing.expect_equal(grew(after, before, "coredns_forward_responses_total", rcode="NOERROR"), 1,
                         "the upstream's answer")
    testing.expect(value(after, "coredns_cache_entries", type="success") >= 1, "cache entries")


@tests.case
def a_late_answer_lasts_from_the_receipt_to_the_send(d):
    d.upstream.delay = 0.3
    try:
        before = d.settled()
        testing.expect_equal(d.cluster.query("slow.counted.example.").rcode, "NOERROR", "forwarded")
        after = d.settled()
    finally:
        d.upstream.delay = 0
    bucket = "coredns_dns_request_duration_seconds_bucket"
    testing.expect_equal(grew(after, before, "coredns_dns_request_duration_seconds", bucket,
                              le="0.256"), 0, "not answered within 256 ms")
    testing.expect_equal(grew(after, before, "coredns_dns_request_duration_seconds", bucket,
                              le="0.512"), 1, "answered within 512 ms")
    forward = "coredns_forward_request_duration_seconds_bucket"
    testing.expect_equal(grew(after, before, "coredns_forward_request_duration_seconds", forward,
                              le="0.256"), 0, "the upstream's round trip over 256 ms")
    testing.expect_equal(grew(after, before, "coredns_forward_request_duration_seconds", forward,
                              le="0.512"), 1, "the upstream's round trip")


@tests.case
def an_upstreams_servfail_is_counted_by_both_sides(d):
    d.upstream.mode = "servfail"
    try:
        before = d.settled()
        testing.expect_equal(d.cluster.query("fail.counted.example.").rcode, "SERVFAIL", "relayed")
        after = d.settled()
    finally:
        d.upstream.mode = "answer"
    testing.expect_equal(grew(after, before, "coredns_forward_responses_total", rcode="SERVFAIL"), 1,
                         "the upstream's SERVFAIL")
    testing.expect_equal(grew(after, before, "coredns_dns_responses_total", rcode="SERVFAIL",
                              plugin="forward"), 1, "the client's SERVFAIL")


@tests.case
def a_dead_upstream_counts_failed_health_checks_and_broken_names(d):
    before = d.settled()
    d.upstream.mode = "silent"
    try:
        # Marks it down at 300 ms; its probes (1 s each) fail while the name waits for its
        # 5 s deadline: past two failed in a row it is unhealthy (CoreDNS's max_fails 2).
        d.cluster.query("dead.counted.example.", timeout=7)
        d.cluster.query("dead2.counted.example.", timeout=7)   # Asked with every server unhealthy.
        after = d.settled()
    finally:
        d.upstream.mode = "answer"
    testing.expect(grew(after, before, "coredns_forward_healthcheck_failures_total") >= 1,
                   "failed health checks")
    testing.expect(grew(after, before, "coredns_forward_healthcheck_broken_total") >= 1,
                   "a name asked while every upstream was down")


@tests.case
def the_process_series_describe_knotd(d):
    families = scrape()
    testing.expect_equal(value(families, "coredns_build_info"), 1, "coredns_build_info")
    testing.expect(value(families, "process_open_fds") > 3, "open descriptors")
    testing.expect(value(families, "process_max_fds") >= value(families, "process_open_fds"),
                   "the descriptors' limit")
    testing.expect(value(families, "process_resident_memory_bytes") > 1 << 20, "resident memory")
    testing.expect(value(families, "process_virtual_memory_bytes") >=
                   value(families, "process_resident_memory_bytes"), "virtual memory")
    started = value(families, "process_start_time_seconds")
    testing.expect(time.time() - 600 < started <= time.time() + 1, f"start time {started}")
    testing.expect(value(families, "process_cpu_seconds_total") > 0, "CPU time")


@tests.case
def a_health_check_is_timed_in_coredns_health_series(d):
    with urllib.request.urlopen(f"http://127.0.0.1:{HTTP_PORT}/health", timeout=5) as r:
        testing.expect_equal(r.status, 200, "/health")
    families = scrape()
    count = total(families, "coredns_health_request_duration_seconds",
                  "coredns_health_request_duration_seconds_count")
    testing.expect(count >= 1, f"{count} health checks timed")
    testing.expect_equal(total(families, "coredns_health_request_failures_total"), 0,
                         "failed health checks")


@tests.case
def promtool_checks_the_page(d):
    promtool = shutil.which("promtool")
    if promtool is None:
        raise testing.Skip("promtool absent (Debian package prometheus, scripts/deps metrics)")
    result = subprocess.run([promtool, "check", "metrics"], input=page(), text=True,
                            capture_output=True, timeout=60)
    testing.expect(result.returncode == 0, f"promtool check metrics:\n{result.stdout}{result.stderr}")


tests.main()
