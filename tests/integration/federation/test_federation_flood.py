#!/usr/bin/env python3
# run alone: counts the upstream queries a flood causes within fixed windows
"""Junk names below a federation do not displace a name in use (issue 23, item 2).

The resolver thread keeps at most 4096 names that queries asked for (names
below a federation in the K8S-DNS role, autopath's names, federated names'
remote shards). One client sending thousands of unique names below a
federation must neither keep a name that other clients use from being
resolved, nor make the resolver ask the Federated-DNS without queries: a
name is asked for again only if a query looked it up since its last answer.

The Federated-DNS here is a tiny DNS server in this file that counts what it
is asked and answers every name at once: legit.* with an address, every other
name NXDOMAIN with an SOA whose minimum is 5 s (so that a refresh of the junk
would come every 4 s).
"""

import socket
import struct
import threading
import time

import knotd
import testing
import wire
from cluster import Cluster

tests = testing.Tests()

FEDERATION = "myfederation.svc.federation."
LEGIT = "legit.myns." + FEDERATION
LEGIT_TTL = 5
JUNK_NAMES = 9000
SOA_MINIMUM = 5


class CountingFederationDNS:
    """UDP: legit.* has one A record (TTL LEGIT_TTL), every other name is NXDOMAIN."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.count = 0
        self.names = set()
        self.stopped = False
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self):
        self.stopped = True
        self.sock.close()

    def queries(self):
        with self.lock:
            return self.count

    def distinct(self):
        with self.lock:
            return len(self.names)

    def _answer(self, msg):
        qid, flags = struct.unpack("!HH", msg[:4])
        pos = 12
        labels = []
        while msg[pos] != 0:
            labels.append(msg[pos + 1:pos + 1 + msg[pos]].decode("ascii").lower())
            pos += 1 + msg[pos]
        qtype = struct.unpack("!H", msg[pos + 1:pos + 3])[0]
        question = msg[12:pos + 5]
        name = ".".join(labels) + "."
        with self.lock:
            self.count += 1
            self.names.add(name)
        if name.startswith("legit."):
            answers = b""
            if qtype == 1:
                answers = (b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, LEGIT_TTL, 4)
                           + socket.inet_aton("192.0.2.11"))
            header = struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x0100), 1,
                                 1 if answers else 0, 0, 0)
            return header + question + answers
        soa = (wire.encode_name("ns." + FEDERATION) + wire.encode_name("admin." + FEDERATION)
               + struct.pack("!IIIII", 1, 3600, 600, 86400, SOA_MINIMUM))
        authority = (wire.encode_name(FEDERATION)
                     + struct.pack("!HHIH", 6, 1, SOA_MINIMUM, len(soa)) + soa)
        header = struct.pack("!HHHHHH", qid, 0x8403 | (flags & 0x0100), 1, 0, 1, 0)
        return header + question + authority

    def _serve(self):
        while not self.stopped:
            try:
                msg, peer = self.sock.recvfrom(4096)
                self.sock.sendto(self._answer(msg), peer)
            except OSError:
                return
            except (ValueError, struct.error, IndexError):
                continue


class Fixture(testing.Fixture):
    def start(self):
        self.fed = CountingFederationDNS()
        self.callback(self.fed.close)
        self.cluster = self.enter_context(Cluster(
            zones=("cluster.local.", "svc.federation."),
            ready_zones=("cluster.local.",),
            module={"federation-nameservers": [f"myfederation=127.0.0.1@{self.fed.port}"],
                    "federation-cluster-name": "member-one"}))
        self.cluster.fixture = self
        return self.cluster


class Client:
    """One UDP socket sending queries `window` at a time; counts what it sent."""

    def __init__(self, port):
        self.server = ("127.0.0.1", port)
        self.sent = 0

    def send(self, names, window=50, timeout=0.5):
        """Queries for A of each name; returns {name: rcode} of the replies received."""
        rcodes = {}
        for start in range(0, len(names), window):
            batch = names[start:start + window]
            messages = [wire.query(name, "A", ident=(self.sent + i) & 0xFFFF)
                        for i, name in enumerate(batch)]
            self.sent += len(messages)
            for i, reply in enumerate(wire._send(self.server, messages, "127.0.0.1", timeout)):
                rcodes[reply.id] = reply.rcode
        return rcodes


def junk(i):
    return f"j{i}.junk.{FEDERATION}"


@tests.case
def a_name_in_use_answers_while_one_client_floods_the_federation_with_junk(c):
    f = c.fixture
    attacker = Client(c.port)
    legit = Client(c.port)
    # More unique names than the resolver keeps, from one client, as fast as it can.
    attacker.send([junk(i) for i in range(JUNK_NAMES)])
    # The resolver works through what was asked, 32 queries at a time.
    seen = -1
    deadline = time.monotonic() + 15
    while f.fed.distinct() != seen and time.monotonic() < deadline:
        seen = f.fed.distinct()
        time.sleep(0.5)
    testing.expect(f.fed.distinct() >= 4096,
                   f"the flood did not fill the cache ({f.fed.distinct()} names reached it)")

    # The attacker renews its names and adds more while a real client asks for its name.
    stop = threading.Event()

    def renew():
        i = 0
        while not stop.is_set():
            attacker.send([junk(i % JUNK_NAMES) for i in range(i, i + 50)] +
                          [junk(JUNK_NAMES + i + k) for k in range(5)])
            i += 50
            time.sleep(0.05)

    thread = threading.Thread(target=renew, daemon=True)
    thread.start()
    try:
        answered = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            reply = wire.exchange(legit.server, wire.query(LEGIT, "A"))
            legit.sent += 1
            if reply is not None and reply.rcode == "NOERROR" and reply.ancount == 1:
                answered = time.monotonic()
                break
            time.sleep(0.2)
        testing.expect(answered is not None, "the name in use stayed unanswered during the flood")
        # And it keeps answering while the flood goes on.
        for _ in range(10):
            reply = wire.exchange(legit.server, wire.query(LEGIT, "A"))
            legit.sent += 1
            testing.expect(reply is not None and reply.rcode == "NOERROR",
                           f"the name in use answered {reply and reply.rcode} during the flood")
            time.sleep(0.2)
    finally:
        stop.set()
        thread.join()

    # Each query costs the Federated-DNS at most one resolution of A and AAAA.
    clients = attacker.sent + legit.sent
    asked = f.fed.queries()
    testing.expect(asked <= 2 * clients + 64,
                   f"{asked} queries to the Federated-DNS for {clients} client queries")
    # Without queries: at most one refresh of what was looked up last, then nothing.
    time.sleep(2 * max(SOA_MINIMUM, LEGIT_TTL) + 2)
    quiet = f.fed.queries()
    time.sleep(2 * max(SOA_MINIMUM, LEGIT_TTL))
    testing.expect_equal(f.fed.queries() - quiet, 0,
                         "queries to the Federated-DNS without client traffic")
    testing.expect(quiet - asked <= 2 * 4096,
                   f"{quiet - asked} queries to the Federated-DNS after the clients stopped")


if __name__ == "__main__":
    tests.main(Fixture)
