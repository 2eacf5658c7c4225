#!/usr/bin/env python3
"""Liveness from the process, readiness from DNS (issue 40 item 4; doc/mod-k8s.rst, Metrics,
health and readiness), on the shipped deployment's knot.conf: /health asks knotd nothing over
DNS and says whether the process and its threads are alive and not wedged; /ready keeps its
meaning.

- /health answers 200 without a DNS query (CoreDNS's request counters do not move); a
  lameduck file fails /ready but not /health (test_metrics.py).
- A thread wedged in its loop (a preloaded shim, stall_thread.c, stops it in poll()) fails
  /health once it has owed a round for the bound (30 s), naming it: the forwarder (with the
  kept names on its thread), the watcher; /ready stays 200 meanwhile (the zones answer), and
  /health is 200 again as soon as the thread runs.
- knotd's UDP workers stalled in their receive call (stall_udp.c) with queries waiting fail
  /health after the bound; without queries waiting (nothing to do) they do not.
- A zone not synchronized fails /ready (with the reason) while /health is 200.
The flood that /health survives: test_health_flood.py.
"""

import os
import shutil
import socket
import tempfile
import time

import health
import knotd
import shipped
import stubdns
import testing
from promtext import parse

tests = testing.Tests()

HTTP_PORT = knotd.free_port()
DNS_PORT = knotd.free_port()
FLAGS = tempfile.mkdtemp(prefix="mod-k8s-health-")
STALL_THREAD = os.path.join(FLAGS, "stall-thread")
STALL_UDP = os.path.join(FLAGS, "stall-udp")
BOUND_S = 30  # K8S_LIVENESS_BOUND_MS


def get(path, port=HTTP_PORT):
    return health.get(port, path, timeout=health.liveness_probe()["timeoutSeconds"])


def requests_counted():
    status, body = get("/metrics")
    testing.expect_equal(status, 200, "GET /metrics")
    families = parse(body)
    return sum(v for name, _, v in families["coredns_dns_requests_total"]["samples"])


def wait_health(status, within, what):
    """Asks /health every second until it answers `status`; returns (seconds, body)."""
    started = time.monotonic()
    last = None
    while time.monotonic() - started < within:
        last = get("/health")
        if last[0] == status:
            return time.monotonic() - started, last[1]
        time.sleep(1)
    raise testing.Failure(f"{what}: /health never answered {status} within {within} s "
                          f"(last {last})")


def wedged(thread_name, expected_why, c):
    """Wedges the thread named thread_name; /health fails after the bound and recovers."""
    testing.expect_equal(get("/health"), (200, "OK\n"), "/health before")
    with open(STALL_THREAD, "w", encoding="utf-8") as f:
        f.write(thread_name + "\n")
    try:
        # Not before the bound: a round that is merely slow is not a wedge.
        time.sleep(BOUND_S - 5)
        testing.expect_equal(get("/health")[0], 200, f"/health {BOUND_S - 5} s into the wedge")
        took, body = wait_health(503, 20, f"{thread_name} wedged")
        testing.expect(expected_why in body, f"/health names it: {body!r}")
        testing.expect_equal(get("/ready")[0], 200, "/ready while a thread is wedged")
    finally:
        os.unlink(STALL_THREAD)
    wait_health(200, 5, f"{thread_name} running again")


@tests.case
def health_answers_ok_without_a_dns_query(c):
    before = requests_counted()
    for _ in range(5):
        testing.expect_equal(get("/health"), (200, "OK\n"), "/health")
        time.sleep(0.6)  # Past a verdict reused for 0.5 s: each one looked again.
    testing.expect_equal(requests_counted(), before, "queries knotd answered meanwhile")


@tests.case
def a_wedged_forwarder_fails_health_after_the_bound_naming_it(c):
    c.expect_answer("www.example.com.", "A", "NOERROR")  # The forwarder is in use.
    wedged("k8s-forward", f"not alive (forwarder of {c.upstream.address} made no progress for",
           c)
    c.expect_answer("www2.example.com.", "A", "NOERROR")


@tests.case
def a_wedged_watcher_fails_health_after_the_bound_naming_it(c):
    wedged("k8s-watch", "not alive (watcher ", c)
    c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR")


def send_queries(port, count):
    """Raw queries for kubernetes.default.svc.cluster.local. A (no answer awaited)."""
    query = (b"\x12\x34\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"
             b"\x0akubernetes\x07default\x03svc\x07cluster\x05local\x00\x00\x01\x00\x01")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(count):
            s.sendto(query, ("127.0.0.1", port))


@tests.case
def knotds_udp_workers_stuck_with_queries_waiting_fail_health(c):
    with open(STALL_UDP, "w", encoding="utf-8"):
        pass
    try:
        # Stuck but idle (nothing waits): nothing to blame them for.
        time.sleep(BOUND_S + 2)
        testing.expect_equal(get("/health"), (200, "OK\n"), "/health, workers stuck and idle")
        # Asked every 2 s, as the kubelet asks every period: a wait counts from the first
        # /health that sees it.
        send_queries(c.port, 20)
        sent = time.monotonic()
        while time.monotonic() - sent < BOUND_S - 3:
            testing.expect_equal(get("/health")[0], 200, "/health before the bound")
            time.sleep(2)
        _, body = wait_health(503, 10, "queries unread")
        testing.expect(f"knotd's UDP workers left queries on port {c.port} unread for" in body,
                       f"/health says why: {body!r}")
        testing.expect_equal(get("/ready")[0], 200, "/ready (the endpoint's own thread serves)")
    finally:
        os.unlink(STALL_UDP)
    wait_health(200, 5, "workers reading again")
    c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR")


@tests.case
def a_zone_not_synchronized_fails_ready_while_health_is_ok(c):
    # Another knotd of the same knot.conf whose API server never answers.
    port = knotd.free_port()
    kubeconfig = os.path.join(FLAGS, "kubeconfig")
    with open(c.sim.path(c.kubeconfig), encoding="utf-8") as f:
        text = f.read()
    with open(kubeconfig, "w", encoding="utf-8") as f:
        f.write(text.replace(f":{c.sim.port}", f":{knotd.free_port()}"))
    config = shipped.config(kubeconfig, [c.upstream.address], metrics_port=port)
    with knotd.Knotd(config=config) as other:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status, body = get("/ready", port)
            testing.expect(status == 503 and body.startswith("not ready (") and
                           body.endswith(". not synchronized)\n"), f"/ready: {status} {body!r}")
            testing.expect_equal(get("/health", port), (200, "OK\n"), "/health")
            time.sleep(1)
        testing.expect(other.is_running(), "knotd runs")


class Deployment(testing.Fixture):
    def start(self):
        self.upstream = self.enter_context(stubdns.StubDNS())
        c = self.enter_context(shipped.deployment(
            [self.upstream.address], metrics_port=HTTP_PORT, port=DNS_PORT,
            preload=[health.shim("stall_udp"), health.shim("stall_thread")],
            # stall_udp.c stalls the sockets of knotd's port only.
            environment={"MODK8S_STALL_UDP": STALL_UDP, "MODK8S_STALL_PORT": str(DNS_PORT),
                         "MODK8S_STALL_THREAD": STALL_THREAD}))
        c.upstream = self.upstream
        self.callback(shutil.rmtree, FLAGS, True)
        return c


tests.main(fixture=Deployment)
