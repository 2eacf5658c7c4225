#!/usr/bin/env python3
"""CoreDNS's alerts and dashboards read knotd unchanged (issue 34 items 1 and 2; issue 40
item 5): a real Prometheus scrapes the shipped deployment (job kube-dns, every second,
forward-timeout 5 s as CoreDNS's forward deadline) with the coredns mixin's alerting rules
(coredns_mixin/alerts.yaml: its expressions and thresholds, windows scaled down). The
alerts stay quiet while the upstreams are healthy, and each fault fires the alerts it is
for, and only those, as CoreDNS's would: upstreams answering SERVFAIL fire the errors
alerts; upstreams answering in 0.6 s fire nothing (CoreDNS's 4 s latency thresholds, and
its health checks take any answer); a dead upstream beside a healthy one fires the health
check failures but not "broken" (CoreDNS counts broken only when every upstream of a
forwarder is unhealthy); dead upstreams fire the latency alert (SERVFAIL at 5 s: p99 over
4 s), the errors alert and both health check alerts. Every query of the CoreDNS dashboards
(coredns_mixin/dashboard.yaml) returns data, with its job/instance template variables
resolved as Grafana does. Skipped without prometheus.
"""

import os
import re
import threading
import time

import yaml

import knotd
import promserver
import shipped
import stubdns
import testing
import wire
from faults import log_lines, log_mark, wait_for

tests = testing.Tests()

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coredns_mixin")
RULES = os.path.join(FIXTURES, "alerts.yaml")
ALERTS = ("CoreDNSDown", "CoreDNSLatencyHigh", "CoreDNSErrorsHigh", "CoreDNSForwardLatencyHigh",
          "CoreDNSForwardErrorsHigh", "CoreDNSForwardHealthcheckFailureCount",
          "CoreDNSForwardHealthcheckBrokenCount")


class Traffic(threading.Thread):
    """Clients of the cluster: every 50 ms a cluster name, a new outside name (a cache
    miss, asked upstream) and an outside name asked before (a cache hit); not waiting
    long for answers, so a slow or dead upstream does not slow the traffic down."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.stopping = threading.Event()
        self.sent = 0

    def run(self):
        while not self.stopping.is_set():
            n = self.sent
            for qname in ("kubernetes.default.svc.cluster.local.", f"new{n}.alerts.example.",
                          "www.alerts.example."):
                wire.exchange(self.server, wire.query(qname, ident=n & 0xFFFF, rd=True),
                              timeout=0.02)
            self.sent += 1
            time.sleep(0.05)

    def stop(self):
        self.stopping.set()
        self.join(timeout=10)


class Monitored:
    """The shipped deployment forwarding to two stub upstreams (in order), under traffic,
    scraped by a Prometheus that evaluates the mixin's rules."""

    def __enter__(self):
        self.http_port = knotd.free_port()
        self.upstream = stubdns.StubDNS().__enter__()
        self.backup = stubdns.StubDNS().__enter__()
        self.deployment = shipped.deployment([self.upstream.address, self.backup.address],
                                             metrics_port=self.http_port)
        self.cluster = self.deployment.__enter__()
        self.cluster.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR")
        self.cluster.query("www.alerts.example.", "A", tcp=True)
        self.cluster.query("kubernetes.default.svc.cluster.local.", "A", tcp=True, dnssec=True)
        self.traffic = Traffic((self.cluster.server.address, self.cluster.server.port))
        self.traffic.start()
        self.prometheus = promserver.Prometheus({"kube-dns": [f"127.0.0.1:{self.http_port}"]},
                                                rules=RULES).__enter__()
        wait_for(lambda: any(r["value"][1] == "1" for r in self.prometheus.query('up{job="kube-dns"}')),
                 "Prometheus scraped knotd", timeout=60, interval=0.5)
        return self

    def __exit__(self, *exc):
        self.traffic.stop()
        self.prometheus.__exit__(*exc)
        self.deployment.__exit__(*exc)
        self.upstream.__exit__(*exc)
        self.backup.__exit__(*exc)
        return False

    def fault(self, mode="answer", delay=0.0, backup=None):
        """Both upstreams in `mode` (the backup in its own, if given), answering after `delay`."""
        for up, m in ((self.upstream, mode), (self.backup, backup or mode)):
            up.mode, up.delay = m, delay

    def wait_quiet(self, timeout=60):
        """Until no alert is pending or firing (the last fault's windows have passed)."""
        wait_for(lambda: self.prometheus.active() == {}, "no alert active", timeout=timeout,
                 interval=0.5)

    def expect_only(self, names, hold=4):
        """The alerts `names` fire, and no other is pending or firing, for `hold` seconds."""
        self.wait_firing(names)
        end = time.monotonic() + hold
        while True:
            active = self.prometheus.active()
            testing.expect_equal(sorted(active), sorted(names), "the alerts active")
            if time.monotonic() >= end:
                break
            time.sleep(1)

    def wait_firing(self, names, timeout=60):
        def fired():
            firing = self.prometheus.firing()
            return all(name in firing for name in names)
        try:
            wait_for(fired, f"{', '.join(names)} firing", timeout=timeout, interval=0.5)
        except AssertionError:
            raise testing.Failure(f"{', '.join(names)} not firing; active: "
                                  f"{self.prometheus.active()}; the forwarder: " +
                                  str(self.prometheus.query("coredns_forward_responses_total")))


tests.fixture(Monitored, "the shipped deployment, a stub upstream and Prometheus")


@tests.case
def the_alerts_stay_quiet_while_the_upstream_is_healthy(m):
    # Long enough for every window ([10s]) to be full of healthy traffic, and for `for`.
    time.sleep(14)
    testing.expect(m.prometheus.query("sum(rate(coredns_dns_requests_total[10s]))"),
                   "the traffic is counted")
    testing.expect_equal(m.prometheus.active(), {}, "alerts pending or firing while healthy")


@tests.case
def every_dashboard_query_returns_data(m):
    with open(os.path.join(FIXTURES, "dashboard.yaml"), encoding="utf-8") as f:
        dashboard = yaml.safe_load(f)
    values = {}
    for name, query in dashboard["variables"].items():
        # label_values(SELECTOR, LABEL): the label's values among the selector's series.
        match = re.fullmatch(r"label_values\((.*), (\w+)\)", query)
        testing.expect(match, f"variable {name}: {query}")
        selector = re.sub(r"\$(\w+)", lambda v: values[v.group(1)], match.group(1))
        series = m.prometheus.api("series", **{"match[]": selector}) or []
        found = sorted({s[match.group(2)] for s in series if match.group(2) in s})
        testing.expect(found, f"variable {name} ({query}) has values")
        values[name] = found[0]
    testing.expect_equal(values["job"], "kube-dns", "the job variable")
    empty = []
    for panel in dashboard["panels"]:
        expr = panel["expr"].replace("$__rate_interval", "30s")
        expr = re.sub(r"\$(\w+)", lambda v: values[v.group(1)], expr)
        if not m.prometheus.query(expr):
            empty.append(f"{panel['title']}: {expr}")
    testing.expect(len(dashboard["panels"]) >= 25, "the dashboards' queries")
    testing.expect_equal(empty, [], "dashboard queries without data")


@tests.case
def servfailing_upstreams_fire_the_errors_alerts_and_only_those(m):
    m.wait_quiet()
    m.fault("servfail")
    try:
        m.expect_only(("CoreDNSErrorsHigh", "CoreDNSForwardErrorsHigh"))
    finally:
        m.fault()


@tests.case
def upstreams_answering_in_0_6_s_fire_nothing(m):
    # Under CoreDNS's 4 s; its health checks take any answer within 1 s: no alert, no
    # "broken" (which fired for this before issue 40), and its state lines rate-limited.
    m.wait_quiet()
    mark = log_mark(m.cluster.server)
    m.fault(delay=0.6)
    try:
        end = time.monotonic() + 15
        while time.monotonic() < end:
            testing.expect_equal(m.prometheus.active(), {}, "alerts for a 0.6 s upstream")
            time.sleep(1)
        testing.expect(m.prometheus.query("sum(rate(coredns_forward_requests_total[10s]))"),
                       "the upstreams were asked")
        again = log_lines(m.cluster.server, "answers again", mark)
        testing.expect(len(again) <= 2 * 2, f"{len(again)} lines 'answers again' in 15 s")
    finally:
        m.fault()


@tests.case
def a_dead_upstream_beside_a_healthy_one_fires_the_health_check_failures_not_broken(m):
    m.wait_quiet()
    m.fault("silent", backup="answer")
    try:
        m.expect_only(("CoreDNSForwardHealthcheckFailureCount",), hold=6)
    finally:
        m.fault()


@tests.case
def dead_upstreams_fire_the_latency_errors_and_health_check_alerts(m):
    # SERVFAIL at the 5 s deadline, as CoreDNS's forward answers: p99 over 4 s.
    m.wait_quiet()
    m.fault("silent")
    try:
        m.expect_only(("CoreDNSLatencyHigh", "CoreDNSErrorsHigh",
                       "CoreDNSForwardHealthcheckFailureCount",
                       "CoreDNSForwardHealthcheckBrokenCount"))
    finally:
        m.fault()


@tests.case
def a_stopped_knotd_fires_coredns_down(m):
    testing.expect("CoreDNSDown" not in m.prometheus.firing(), "CoreDNSDown while knotd runs")
    m.traffic.stop()
    m.cluster.server.stop()
    m.wait_firing(("CoreDNSDown",))


tests.main()
