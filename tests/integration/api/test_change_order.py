#!/usr/bin/env python3
"""No change lost or reordered (issue 42, item 3): what the API wrote, in the order it wrote
it, is what DNS answers, however fast the changes come and however many a round of the
watcher takes at once.

A writer thread applies changes to the simulator back to back while the test asks knotd
over UDP about once a millisecond: the versions an answer shows never go back, an answer
never shows a state between two writes (a slice replaced is never seen empty or doubled),
the last write is the answer at the end, and every object of a burst is there (or gone)
after it.
"""

import ipaddress
import random
import socket
import struct
import threading
import time

import testing
from cluster import Cluster
from faults import endpoint_slice, headless_service, service
import wire

tests = testing.Tests()


def version_address(i):
    return str(ipaddress.IPv4Address("10.77.0.0") + i)


def a_records(message):
    """(rcode, [IPv4 addresses]) of a response."""
    _, flags, qdcount, ancount = struct.unpack_from(">HHHH", message)
    offset = 12
    for _ in range(qdcount):
        offset = wire._skip_name(message, offset) + 4
    out = []
    for _ in range(ancount):
        start = wire._skip_name(message, offset)
        rtype, _, _, rdlength = struct.unpack_from(">HHIH", message, start)
        if rtype == 1 and rdlength == 4:
            out.append(socket.inet_ntoa(message[start + 10:start + 14]))
        offset = start + 10 + rdlength
    return flags & 0xF, out


class Asker:
    """A UDP socket to knotd: one question at a time, its answer's addresses."""

    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect(("127.0.0.1", port))
        self.sock.settimeout(1)
        self.ident = 0

    def ask(self, qname):
        self.ident = (self.ident + 1) & 0xFFFF
        self.sock.send(wire.query(qname, "A", ident=self.ident))
        while True:
            data = self.sock.recv(4096)
            if struct.unpack_from(">H", data)[0] == self.ident:
                return a_records(data)

    def close(self):
        self.sock.close()


class Writer(threading.Thread):
    """Applies the objects given, one request each, as fast as the simulator takes them."""

    def __init__(self, sim, objects):
        super().__init__(daemon=True)
        self.sim, self.objects = sim, objects
        self.done = threading.Event()

    def run(self):
        try:
            for obj in self.objects:
                self.sim.apply(obj, validate=False)
        finally:
            self.done.set()


@tests.case
def a_burst_of_changes_to_one_slice_is_seen_in_order_and_ends_at_the_last(c):
    versions = 400
    c.sim.apply(headless_service("shop", "order"))
    c.sim.apply(endpoint_slice("shop", "order", [version_address(0)], name="order-1"))
    asker = Asker(c.server.port)
    qname = "order.shop.svc.cluster.local."
    testing.eventually(lambda: testing.expect_equal(asker.ask(qname)[1], [version_address(0)],
                                                    "version 0"), timeout=10)
    writer = Writer(c.sim, [endpoint_slice("shop", "order", [version_address(i)], name="order-1")
                            for i in range(1, versions + 1)])
    seen, odd = [], []
    writer.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rcode, addresses = asker.ask(qname)
        if rcode != 0 or len(addresses) != 1:
            odd.append((rcode, addresses))
        else:
            seen.append(int(ipaddress.IPv4Address(addresses[0])) - int(ipaddress.IPv4Address("10.77.0.0")))
        if writer.done.is_set() and seen and seen[-1] == versions:
            break
        time.sleep(0.001)
    writer.join(timeout=10)
    asker.close()
    testing.expect_equal(odd, [], "answers between two writes (empty, doubled or failed)")
    back = [(a, b) for a, b in zip(seen, seen[1:]) if b < a]
    testing.expect_equal(back, [], "versions that went back")
    testing.expect_equal(seen[-1] if seen else None, versions, "the last version answered")
    distinct = len(set(seen))
    print(f"# {len(seen)} answers saw {distinct} of {versions} versions, in order")
    testing.expect(distinct > 10, f"the answers followed the writes ({distinct} versions seen)")


@tests.case
def a_burst_of_new_services_loses_none_and_a_later_one_never_shows_before_an_earlier(c):
    count = 300
    names = [f"burst-{i}" for i in range(count)]
    writer = Writer(c.sim, [service("shop", name, f"10.96.140.{i % 250 + 1}" if i < 250 else
                                    f"10.96.141.{i - 249}") for i, name in enumerate(names)])
    asker = Asker(c.server.port)
    rng = random.Random(42)
    newest, checks, missing_earlier = -1, 0, []
    writer.start()
    deadline = time.monotonic() + 60
    while newest < count - 1 and time.monotonic() < deadline:
        # The next one not seen yet; once it answers, an earlier one must too.
        rcode, addresses = asker.ask(f"{names[newest + 1]}.shop.svc.cluster.local.")
        if rcode == 0 and addresses:
            newest += 1
            earlier = rng.randrange(newest + 1)
            rcode, addresses = asker.ask(f"{names[earlier]}.shop.svc.cluster.local.")
            checks += 1
            if rcode != 0 or not addresses:
                missing_earlier.append((newest, earlier))
        else:
            time.sleep(0.001)
    writer.join(timeout=10)
    testing.expect_equal(missing_earlier, [], "a service answered before an earlier one")
    testing.expect_equal(newest, count - 1, "the burst's last service answered")
    lost = [n for n in names if asker.ask(f"{n}.shop.svc.cluster.local.")[0] != 0]
    testing.expect_equal(lost, [], "services of the burst lost")
    print(f"# {checks} checks of an earlier service, none missing")
    # Deleted back to back: every one gone.
    deleter = threading.Thread(target=lambda: [c.sim.delete("services", "shop", n) for n in names],
                               daemon=True)
    deleter.start()
    deleter.join(timeout=120)
    testing.eventually(lambda: testing.expect_equal(
        [n for n in names if asker.ask(f"{n}.shop.svc.cluster.local.")[0] != 3], [],
        "services of the burst still answering"), timeout=20)
    asker.close()


@tests.case
def changes_spread_over_many_slices_end_at_each_ones_last_write(c):
    slices, rounds = 40, 15
    for s in range(slices):
        c.sim.apply(headless_service("shop", f"spread-{s}"))
    rng = random.Random(7)
    writes, last = [], {}
    for r in range(rounds):
        for s in rng.sample(range(slices), slices):
            address = str(ipaddress.IPv4Address("10.78.0.0") + r * 256 + s)
            writes.append(endpoint_slice("shop", f"spread-{s}", [address], name=f"spread-{s}-1"))
            last[s] = address
    writer = Writer(c.sim, writes)
    writer.start()
    writer.join(timeout=120)
    asker = Asker(c.server.port)

    def at_last_write():
        wrong = {s: asker.ask(f"spread-{s}.shop.svc.cluster.local.")[1] for s in range(slices)}
        wrong = {s: a for s, a in wrong.items() if a != [last[s]]}
        testing.expect_equal(wrong, {}, "slices not at their last write")
    testing.eventually(at_last_write, timeout=20)
    asker.close()


tests.main(fixture=lambda: Cluster())
