#!/usr/bin/env python3
# run alone: answers before a 2 s deadline
"""No SERVFAIL for a cold name (issue 24, item 5).

Where mod-k8s resolves a name outside its zones through its own upstream resolver
(ExternalName targets, autopath's outside names, kube-dns federation names), a name
the upstream cache does not hold yet is handed to the zone's cold waiter: the worker
sends nothing, and the answer goes out from knotd's socket once the upstream has
answered, on the client's FIRST query; past the deadline (2 s) it is SERVFAIL with
Extended DNS Error 22. The upstream is a stub the test controls: it answers every
name (A 192.0.2.<n>) after DELAY, or never ("silent"). 64 queries wait per zone, a
pool shared by the tenants (issue 40, item 1; a client that is no pod is its address):
one address alone may fill it, the others answer SERVFAIL at once; past 64, a tenant
still within its part (64 over the tenants waiting) takes the headroom at once, so one
address's flood, over UDP or TCP, leaves the other addresses their slots.
"""

import os
import select
import socket
import struct
import threading
import time

import stubdns
import testing
import wire
from cluster import Cluster, MANIFESTS
from faults import external_name_service

tests = testing.Tests()

# Longer than a query takes to reach a cold name, shorter than the resolver's 1 s attempt.
DELAY = 0.6
FEDERATIONS = ["myfederation=example.com"]
AP = "search.default.cluster.local.ap.k8s.io."


class Fixture(testing.Fixture):
    """A stub upstream and a cluster (cluster zone with federations, autopath zone) using it."""

    def start(self):
        self.up = self.enter_context(stubdns.StubDNS(delay=DELAY))
        self.cluster = self.enter_context(Cluster(
            manifests=[os.path.join(MANIFESTS, "spec-clusterip")],
            zones=("cluster.local.", "ap.k8s.io."),
            module={"upstream": self.up.address, "federations": FEDERATIONS}))
        self.cluster.up = self.up
        return self.cluster


def address(name):
    return f"192.0.2.{stubdns._number(name)}"


def records(answer):
    return {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}


def late_count(c, zone="cluster.local."):
    return c.stats(zone).get("queries[late]", 0)


def first_query(c, name, qtype="A", **options):
    """The first query of a cold name: its answer and how long it took."""
    start = time.monotonic()
    answer = c.query(name, qtype, edns=True, timeout=5, **options)
    return answer, time.monotonic() - start


def externalname_first_query(c, svc, target, **options):
    """Creates an ExternalName service and asks for its A once the table holds it."""
    c.up.mode = "answer"
    c.sim.apply(external_name_service("default", svc, target))
    name = f"{svc}.default.svc.cluster.local."
    # A TXT query needs no upstream: the CNAME alone shows the service is in the table.
    c.expect_answer(name, "TXT", "NOERROR", timeout=10)
    return name, first_query(c, name, **options)


@tests.case
def a_cold_externalname_target_answers_on_the_first_query(c):
    before = late_count(c)
    target = "coldext.example.net."
    name, (answer, took) = externalname_first_query(c, "coldext", target)
    testing.expect_equal(answer.rcode, "NOERROR", f"first answer: {answer.summary()}")
    testing.expect_equal(records(answer), {(name, "CNAME", target), (target, "A", address(target))},
                         "first answer")
    testing.expect("aa" in answer.flags, f"no AA: {answer.summary()}")
    testing.expect(late_count(c) > before, "queries[late] not counted")


@tests.case
def a_cold_externalname_target_answers_on_the_first_query_over_tcp(c):
    target = "coldtcp.example.net."
    name, (answer, took) = externalname_first_query(c, "coldtcp", target, tcp=True)
    testing.expect_equal(answer.rcode, "NOERROR", f"first answer: {answer.summary()}")
    testing.expect_equal(records(answer), {(name, "CNAME", target), (target, "A", address(target))},
                         "first answer")


@tests.case
def a_silent_upstream_answers_servfail_with_ede_22_at_the_deadline(c):
    c.up.mode = "silent"
    try:
        c.sim.apply(external_name_service("default", "coldsilent", "coldsilent.example.net"))
        name = "coldsilent.default.svc.cluster.local."
        c.expect_answer(name, "TXT", "NOERROR", timeout=10)
        answer, took = first_query(c, name)
        testing.expect_equal(answer.rcode, "SERVFAIL", f"answer: {answer.summary()}")
        testing.expect(answer.ede_code == 22, f"EDE: {answer.summary()}")
        testing.expect(1.5 <= took < 4, f"answered after {took:.2f} s, not at the 2 s deadline")
        # Cluster names stay fast meanwhile.
        answer = c.query("kubernetes.default.svc.cluster.local.", "A")
        testing.expect_equal(answer.rcode, "NOERROR", "a cluster name")
    finally:
        c.up.mode = "answer"


def silent_burst(c, name, sources, per_source, pause=0.0):
    """Sends per_source queries for name from each source address (UDP, the upstream
    silent), the last address `pause` seconds after the others; returns how long each
    address's answers took (all SERVFAIL), from its first query."""
    took = {}
    socks = []
    try:
        for source in sources:
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(sock)
            sock.bind((source, 0))
            sock.connect((c.address, c.port))
            took[sock] = []
        start = {}
        for n, sock in enumerate(socks):
            if n == len(socks) - 1 and pause > 0:
                time.sleep(pause)
            start[sock] = time.monotonic()
            for i in range(per_source):
                sock.send(wire.query(name, "A", ident=i))
        count = len(socks) * per_source
        first = min(start.values())
        while sum(len(t) for t in took.values()) < count and time.monotonic() - first < 6:
            for sock in select.select(socks, [], [], 0.2)[0]:
                reply = wire.parse(sock.recv(65535))
                testing.expect_equal(reply.rcode, "SERVFAIL", "rcode")
                took[sock].append(time.monotonic() - start[sock])
    finally:
        for sock in socks:
            sock.close()
    return [took[sock] for sock in socks]


def at_once_and_late(took):
    return len([t for t in took if t < 1]), len([t for t in took if t >= 1.5])


def silent_externalname(c, svc):
    c.sim.apply(external_name_service("default", svc, f"{svc}.example.net"))
    name = f"{svc}.default.svc.cluster.local."
    c.expect_answer(name, "TXT", "NOERROR", timeout=10)
    return name


@tests.case
def one_address_alone_may_have_all_64_queries_waiting_its_others_answer_servfail_at_once(c):
    c.up.mode = "silent"
    try:
        name = silent_externalname(c, "coldshare")
        took, = silent_burst(c, name, ["127.0.0.1"], 80)
        testing.expect_equal(at_once_and_late(took), (80 - 64, 64),
                             f"answered at once, at the deadline ({len(took)} answers)")
    finally:
        c.up.mode = "answer"


@tests.case
def four_addresses_fill_the_64_a_fifth_still_gets_its_part_at_once(c):
    c.up.mode = "silent"
    try:
        name = silent_externalname(c, "coldcap")
        # Four addresses of 16 each fill the 64 slots; the fifth, asking after them, is
        # within its part (64 over five: 13) and waits as they do, its excess at once.
        took = silent_burst(c, name, [f"127.0.0.{i}" for i in range(1, 6)], 16, pause=0.3)
        for n, times in enumerate(took[:4]):
            testing.expect_equal(at_once_and_late(times), (0, 16), f"127.0.0.{n + 1}")
        testing.expect_equal(at_once_and_late(took[4]), (16 - 13, 13), "127.0.0.5")
    finally:
        c.up.mode = "answer"


def tcp_pipelined(c, source, messages):
    """A TCP connection from source sending messages at once; a thread collects the
    answers (the Replies, with the time each came) until all came or 5 s."""
    conn = socket.create_connection((c.address, c.port), timeout=5, source_address=(source, 0))
    got = []
    start = time.monotonic()

    def read():
        for reply in wire.tcp_replies(conn, len(messages), 5):
            got.append((reply, time.monotonic() - start))
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    conn.sendall(b"".join(struct.pack(">H", len(m)) + m for m in messages))
    return conn, reader, got


@tests.case
def pipelined_tcp_queries_from_one_address_leave_the_others_their_slots(c):
    # The flood's name is never answered, every other name is (after DELAY).
    answer = c.up.answer
    c.up.answer = lambda query, ttl, tcp: None if b"coldflood" in query else answer(query, ttl, tcp)
    try:
        flood = silent_externalname(c, "coldflood")
        c.up.mode = "answer"
        count = 80
        conn, reader, got = tcp_pipelined(c, "127.0.0.2",
                                          [wire.query(flood, "A", ident=i) for i in range(count)])
        with conn:
            time.sleep(0.5)  # The flood's queries are in (or refused) before the others ask.
            target = "coldfair.example.net."
            c.sim.apply(external_name_service("default", "coldfair", target))
            name = "coldfair.default.svc.cluster.local."
            c.expect_answer(name, "TXT", "NOERROR", timeout=10)
            answer_other, took = first_query(c, name, extra=("-b", "127.0.0.3"))
            reader.join(timeout=6)
        testing.expect_equal(answer_other.rcode, "NOERROR",
                             f"the other address's first answer: {answer_other.summary()}")
        testing.expect_equal(records(answer_other),
                             {(name, "CNAME", target), (target, "A", address(target))},
                             "the other address's first answer")
        testing.expect_equal(len(got), count, "every pipelined query answered")
        testing.expect(all(r.rcode == "SERVFAIL" for r, _ in got), "the flood's rcodes")
        late = [t for _, t in got if t >= 1.5]
        testing.expect_equal(len(late), 64, "the flood's queries that waited (alone: the 64)")
    finally:
        c.up.answer = answer
        c.up.mode = "answer"


@tests.case
def a_cold_autopath_outside_name_answers_on_the_first_query(c):
    c.up.mode = "answer"
    outside = "coldwalk.example.org."
    name = "coldwalk.example.org." + AP
    answer, took = first_query(c, name)
    testing.expect_equal(answer.rcode, "NOERROR", f"first answer: {answer.summary()}")
    testing.expect_equal(records(answer), {(name, "CNAME", outside),
                                           (outside, "A", address(outside))}, "first answer")
    testing.expect(late_count(c, "ap.k8s.io.") > 0, "queries[late] not counted")


@tests.case
def a_silent_upstream_ends_an_autopath_walk_in_servfail_with_ede_22(c):
    c.up.mode = "silent"
    try:
        answer, took = first_query(c, "coldsilent.example.org." + AP)
        testing.expect_equal(answer.rcode, "SERVFAIL", f"answer: {answer.summary()}")
        testing.expect(answer.ede_code == 22, f"EDE: {answer.summary()}")
    finally:
        c.up.mode = "answer"


@tests.case
def a_cold_federation_name_answers_on_the_first_query(c):
    c.up.mode = "answer"
    name = "coldfed.myns.myfederation.svc.cluster.local."
    # The spec-clusterip cluster has no nodes, hence no zone and region in the name.
    remote = "coldfed.myns.myfederation.svc.example.com."
    answer, took = first_query(c, name)
    testing.expect_equal(answer.rcode, "NOERROR", f"first answer: {answer.summary()}")
    testing.expect_equal(records(answer), {(name, "CNAME", remote), (remote, "A", address(remote))},
                         "first answer")


@tests.case
def a_silent_upstream_answers_a_federation_name_servfail_with_ede_22(c):
    c.up.mode = "silent"
    try:
        answer, took = first_query(c, "coldsilent.myns.myfederation.svc.cluster.local.")
        testing.expect_equal(answer.rcode, "SERVFAIL", f"answer: {answer.summary()}")
        testing.expect(answer.ede_code == 22, f"EDE: {answer.summary()}")
    finally:
        c.up.mode = "answer"


tests.main(fixture=Fixture)
