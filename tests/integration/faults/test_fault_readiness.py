#!/usr/bin/env python3
"""Readiness (issue 3): "until the first complete sync, answers are SERVFAIL with EDE 14
(Not Ready)", and readiness comes by itself once the API answers and every list is complete.

knotd starts while the API server refuses connections (an API server that is not up yet),
so mod-k8s cannot list anything; then the API server comes up, and the same knotd must
start answering without a restart. Last, a knotd whose EndpointSlice list trickles in
slowly must stay not ready until that list is complete.
"""

import re
import time

import dig
import testing
from cluster import Cluster, stats, wait_ready
from faults import (begin_outage, counter, end_outage, expect_addresses, log_lines, start_knotd,
                    wait_for)
from knotd import zone_soa

tests = testing.Tests()


class ClusterNotUpYet(Cluster):
    """The simulated cluster, but its API server refuses connections when knotd starts."""

    def __enter__(self):
        try:
            self.sim.start()
            begin_outage(self.sim)  # Ended by a test.
            self.server = self.knotd(module=self.module, zones=self.zones,
                                     **self.knotd_options).__enter__()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self


# Every synthesized name, existing or not, in each kind of zone.
tests.table("""
kubernetes.default.svc.cluster.local.  A    SERVFAIL ede=14
nonexistent.shop.svc.cluster.local.    A    SERVFAIL ede=14
_https._tcp.kubernetes.default.svc.cluster.local. SRV SERVFAIL ede=14
10-244-0-10.shop.pod.cluster.local.    A    SERVFAIL ede=14
1.0.96.10.in-addr.arpa.                PTR  SERVFAIL ede=14
4.3.2.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa. PTR SERVFAIL ede=14
web.shop.svc.clusterset.local.         A    SERVFAIL ede=14
""")

# The zone files' own records do not depend on the API.
tests.table(f"""
cluster.local.     SOA NOERROR aa {zone_soa("cluster.local.")}
cluster.local.     NS  NOERROR aa ns.dns.cluster.local.
in-addr.arpa.      SOA NOERROR aa {zone_soa("in-addr.arpa.")}
clusterset.local.  SOA NOERROR aa {zone_soa("clusterset.local.")}
""")


@tests.case
def not_ready_shows_in_the_counters_and_the_log(c):
    wait_for(lambda: counter(c.server, "api-errors[network]") > 0, "api-errors[network] counted")
    for zone in ("cluster.local.", "clusterset.local."):
        counters = stats(c.server, zone)
        ready = [counters.get("ready[cluster]", 0), counters.get("ready[clusterset]", 0)]
        testing.expect(ready == [0, 0], f"{zone} ready counters are 0: {counters}")
        testing.expect_equal(counters.get("connected", 0), 0, f"{zone} connected")
    testing.expect(counter(c.server, "queries[not-ready]") > 0, "queries[not-ready] counted")
    failed = log_lines(c.server, "list services failed, retrying in")
    testing.expect(failed, "a log line says the list failed and is retried")


@tests.case
def once_the_api_server_is_up_names_resolve_without_restarting_knotd(c):
    pid = c.server.pid
    end_outage(c.sim)
    # The module retries with backoff (0.8 s doubling, jitter): a few seconds at most here.
    wait_ready(c.server, ("cluster.local.", "clusterset.local."), timeout=40)
    testing.expect_equal(c.server.pid, pid, "knotd's pid")
    expect_addresses(c.server, "kubernetes.default.svc.cluster.local.", ["10.96.0.1"])
    expect_addresses(c.server, "1.0.96.10.in-addr.arpa.", ["kubernetes.default.svc.cluster.local."],
                     qtype="PTR")
    expect_addresses(c.server, "web.shop.svc.clusterset.local.", ["10.42.0.10"])
    expect_addresses(c.server, "nonexistent.shop.svc.cluster.local.", [])
    lines = log_lines(c.server, "synchronized the cluster zone")
    testing.expect(lines, "a log line says the zone synchronized")
    # ... and how long after the watcher's start: here, across the outage's retries.
    spent = re.search(r"address records, (\d+\.\d{3}) s after the watcher's start$", lines[0])
    testing.expect(spent and float(spent.group(1)) > 0, f"no time in {lines[0]!r}")


# The sample cluster's EndpointSlice list is about 12 kB: some 4 s at this rate.
SLOW_LIST_RATE = 3000


def slow_list_keeps_the_zone_not_ready(c, watch_list):
    seq = c.sim.counters()["last_seq"]
    c.sim.slow_list(SLOW_LIST_RATE, resource="endpointslices")
    server = start_knotd(c, module={"watch-list": watch_list}, ready=False)
    try:
        started = time.monotonic()
        answered_before_list_end = 0

        def list_done():
            return any(" completed, " in line for line in log_lines(server, "list endpointslices"))
        while True:
            answer = dig.query(server, "cache.shop.svc.cluster.local.", "A", edns=True)
            if list_done():
                break
            # The list had not ended when this answer was sent.
            testing.expect(answer.rcode == "SERVFAIL" and answer.ede == [14],
                           "while the list trickles in: expected SERVFAIL ede=14, got "
                           + answer.summary())
            answered_before_list_end += 1
            testing.expect(time.monotonic() - started < 30, "the slow list did not end in 30 s")
            time.sleep(0.1)
        c.sim.slow_list(0, resource="endpointslices")
        testing.expect(answered_before_list_end >= 5,
                       f"only {answered_before_list_end} queries ran while the list was slow")
        wait_ready(server, ("cluster.local.",), timeout=10)
        # Headless answers come from the EndpointSlices: the list must be complete.
        expect_addresses(server, "cache.shop.svc.cluster.local.", ["10.244.0.30", "10.244.1.30"])
        expect_addresses(server, "postgres.db.svc.cluster.local.", ["10.244.0.20", "10.244.1.20"])
        requests = [r for r in c.sim.requests(seq) if r["resource"] == "endpointslices"]
        if watch_list == "off":
            lists = [r["code"] for r in requests if r["verb"] == "list"]
        else:
            lists = [r["code"] for r in requests if "sendInitialEvents" in r["query"]]
        testing.expect_equal(lists, [200], "EndpointSlice lists (one, not cut)")
    finally:
        c.sim.slow_list(0, resource="endpointslices")
        server.stop()


@tests.case
def a_slow_watch_list_keeps_the_zone_not_ready_until_it_is_complete(c):
    slow_list_keeps_the_zone_not_ready(c, "on")


@tests.case
def a_slow_list_keeps_the_zone_not_ready_until_it_is_complete(c):
    slow_list_keeps_the_zone_not_ready(c, "off")


tests.main(fixture=lambda: ClusterNotUpYet())
