#!/usr/bin/env python3
"""CoreDNS's alerts and dashboards read knotd unchanged (issue 34 items 1 and 2): a real
Prometheus scrapes the shipped deployment (job kube-dns, every second) with the coredns
mixin's alerting rules (coredns_mixin/alerts.yaml: its expressions, time scaled down). The
alerts stay quiet while the upstream is healthy, and fire under injected faults: a
SERVFAIL-ing upstream (errors), a slow one (latency), a dead one (health checks); every
query of the CoreDNS dashboards (coredns_mixin/dashboard.yaml) returns data, with its
job/instance template variables resolved as Grafana does. Skipped without prometheus.
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
from faults import wait_for

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
    """The shipped deployment forwarding to a stub upstream, under traffic, scraped by a
    Prometheus that evaluates the mixin's rules."""

    def __enter__(self):
        self.http_port = knotd.free_port()
        self.upstream = stubdns.StubDNS().__enter__()
        self.deployment = shipped.deployment([self.upstream.address], metrics_port=self.http_port)
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
        return False

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
def a_servfailing_upstream_fires_the_errors_alerts(m):
    m.upstream.mode = "servfail"
    try:
        m.wait_firing(("CoreDNSErrorsHigh", "CoreDNSForwardErrorsHigh"))
    finally:
        m.upstream.mode = "answer"


@tests.case
def a_slow_upstream_fires_the_latency_alerts(m):
    m.upstream.delay = 0.6
    try:
        m.wait_firing(("CoreDNSForwardLatencyHigh", "CoreDNSLatencyHigh"))
    finally:
        m.upstream.delay = 0


@tests.case
def a_dead_upstream_fires_the_health_check_alerts(m):
    m.upstream.mode = "silent"
    try:
        m.wait_firing(("CoreDNSForwardHealthcheckFailureCount",
                       "CoreDNSForwardHealthcheckBrokenCount"))
    finally:
        m.upstream.mode = "answer"


@tests.case
def a_stopped_knotd_fires_coredns_down(m):
    testing.expect("CoreDNSDown" not in m.prometheus.firing(), "CoreDNSDown while knotd runs")
    m.traffic.stop()
    m.cluster.server.stop()
    m.wait_firing(("CoreDNSDown",))


tests.main()
