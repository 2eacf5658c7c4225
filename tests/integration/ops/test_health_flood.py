#!/usr/bin/env python3
# run alone: a minute of UDP flood that makes knotd drop queries, against the kubelet's probes
"""A flood does not restart knotd (issue 40 item 4; doc/mod-k8s.rst, Metrics, health and
readiness). On the shipped deployment's knot.conf, knotd's UDP workers are slowed to 200
queries a second each (stall_udp.c, as an overloaded knotd) and flooded with 8,000 queries a
second from 32 ports for a minute: their sockets overflow and drop queries, and the query the
old /health sent (dns-version.cluster.local. TXT, answered within 1 s or failed) goes unanswered,
which five probe periods in a row would have turned into a restart. The kubelet's liveness
probe, as packaging/kubernetes/deployment.yaml ships it (period, timeout, threshold), is run
throughout, and /health asked every second besides: every probe answers 200.
"""

import os
import socket
import tempfile
import threading
import time

import dig
import health
import knotd
import shipped
import stubdns
import testing

tests = testing.Tests()

HTTP_PORT = knotd.free_port()
DNS_PORT = knotd.free_port()
SLOW = os.path.join(tempfile.mkdtemp(prefix="mod-k8s-flood-"), "slow")
FLOOD_S = 60
FLOOD_QPS = 8000


def udp_drops(port):
    """Datagrams the kernel dropped on the UDP sockets bound to `port` (/proc/net/udp*)."""
    drops = 0
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table, encoding="ascii") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    drops += int(fields[12])
    return drops


class Flood(threading.Thread):
    """FLOOD_QPS queries a second (varied IDs, names and ports) at knotd's port, until stopped."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stopping = threading.Event()
        self.sent = 0

    def run(self):
        names = [f"\x06flood{i:1x}".encode() for i in range(16)]
        # From many ports: knotd's socket per UDP worker takes the clients its hash gives it.
        senders = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(32)]
        for s in senders:
            s.setblocking(False)
        try:
            started = time.monotonic()
            while not self.stopping.is_set():
                due = int((time.monotonic() - started) * FLOOD_QPS)
                while self.sent < due:
                    i = self.sent
                    query = (bytes([(i >> 8) & 0xff, i & 0xff]) + b"\x00\x00\x00\x01" +
                             b"\x00" * 6 + names[i % 16] + b"\x07default\x03svc\x07cluster"
                             b"\x05local\x00\x00\x01\x00\x01")
                    try:
                        senders[i % len(senders)].sendto(query, ("127.0.0.1", self.port))
                    except BlockingIOError:
                        pass
                    self.sent += 1
                time.sleep(0.005)
        finally:
            for s in senders:
                s.close()


def old_health_query_answered(port):
    """The query the old /health sent: answered within its 1 s deadline?"""
    query = (b"\xbe\xef\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"
             b"\x0bdns-version\x07cluster\x05local\x00\x00\x10\x00\x01")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1.0)
        s.sendto(query, ("127.0.0.1", port))
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                reply = s.recv(512)
            except socket.timeout:
                return False
            if reply[:2] == b"\xbe\xef":
                return True
        return False


@tests.case
def a_flood_that_drops_queries_for_a_minute_never_fails_the_liveness_probe(c):
    probe = health.liveness_probe()
    period, timeout = probe["periodSeconds"], probe["timeoutSeconds"]
    threshold = probe["failureThreshold"]
    testing.expect_equal((probe["httpGet"]["path"], period, timeout, threshold),
                         ("/health", 10, 5, 5), "the shipped liveness probe")
    testing.expect(old_health_query_answered(c.port), "the old /health's query, before the flood")
    drops_before = udp_drops(c.port)

    with open(SLOW, "w", encoding="utf-8"):
        pass
    flood = Flood(c.port)
    flood.start()
    probes, polls, old_probes = [], [], []
    try:
        started = time.monotonic()
        next_probe = started + 2  # Once the sockets are full.
        while time.monotonic() - started < FLOOD_S:
            now = time.monotonic()
            if now >= next_probe:
                # The kubelet's probe: a failure is anything but 200 within timeoutSeconds.
                probes.append(health.get(HTTP_PORT, "/health", timeout=timeout))
                old_probes.append(old_health_query_answered(c.port))
                next_probe += period
            polls.append(health.get(HTTP_PORT, "/health", timeout=timeout))
            time.sleep(1)
    finally:
        flood.stopping.set()
        flood.join()
        os.unlink(SLOW)
    drops = udp_drops(c.port) - drops_before
    testing.expect(flood.sent >= FLOOD_S * FLOOD_QPS * 0.9, f"{flood.sent} queries sent")
    print(f"# {flood.sent} queries sent, {drops} dropped by knotd's sockets; the old /health's "
          f"query answered in time {sum(old_probes)} of {len(old_probes)}; {len(probes)} probes, "
          f"{len(polls)} polls of /health")
    # The flood bites: knotd drops queries, and the old /health would have failed.
    testing.expect(drops >= FLOOD_S * FLOOD_QPS / 4, f"knotd dropped {drops} queries")
    testing.expect(sum(old_probes) <= 1,
                   f"the old /health's query answered {sum(old_probes)} of {len(old_probes)}")
    testing.expect(len(probes) >= FLOOD_S // period - 1, f"{len(probes)} probes")
    # The kubelet restarts knotd after failureThreshold failed probes in a row: none fails.
    in_a_row = longest = 0
    for p in probes:
        in_a_row = in_a_row + 1 if p != (200, "OK\n") else 0
        longest = max(longest, in_a_row)
    failed = [p for p in probes + polls if p != (200, "OK\n")]
    testing.expect(not failed, f"{len(failed)} of {len(probes) + len(polls)} /health answers "
                   f"other than 200 ({longest} probes failed in a row, the kubelet restarts "
                   f"knotd at {threshold}): {sorted(set(map(str, failed)))}")
    # And after it, knotd answers again once its sockets are drained (a query may time out
    # behind what they still hold).
    stopped = time.monotonic()

    def answered():
        try:
            answer = c.query("kubernetes.default.svc.cluster.local.", "A")
        except dig.QueryError as e:
            raise testing.Failure(str(e)) from e
        testing.expect_equal(answer.rcode, "NOERROR", "kubernetes.default after the flood")
    testing.eventually(answered, timeout=20, interval=0.5)
    print(f"# answered again {time.monotonic() - stopped:.1f} s after the flood")


class Deployment(testing.Fixture):
    def start(self):
        upstream = self.enter_context(stubdns.StubDNS())
        return self.enter_context(shipped.deployment(
            [upstream.address], metrics_port=HTTP_PORT, port=DNS_PORT,
            preload=[health.shim("stall_udp")],
            environment={"MODK8S_SLOW_UDP": SLOW, "MODK8S_STALL_PORT": str(DNS_PORT)}))


tests.main(fixture=Deployment)
