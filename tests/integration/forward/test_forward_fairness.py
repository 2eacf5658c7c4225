#!/usr/bin/env python3
"""The forwarder's fair shares, its bounded TCP buffers and its late answers' source
(issue 33, item 3; issue 40, items 1 and 2), in the shipped deployment.

The waiting queries, the names asked upstream, the TCP duplicates (an eighth of knotd's
descriptors) and the upstream sockets (another eighth) are pools shared by the tenants
(a client that is no pod is its address): one client alone may fill a pool, its excess
answered SERVFAIL at once, and the other clients still get their part. A local shortage
(descriptors, memory, a pool's part) never marks an upstream down. The TCP answers'
bytes (4 MiB, and half again for the upstreams within their part) are shared by the
upstreams: a hostile stub-domain server that announces 64 KiB and trickles holds its
part, and a healthy upstream's large answers still come. A late answer over UDP leaves
from the address the client asked, also on a wildcard listener (Knot 3.3+, which gives
that address to modules).
"""

import contextlib
import os
import random
import resource
import select
import selectors
import socket
import struct
import threading
import time
import urllib.request

import faults
import knotd
import promtext
import shipped
import stubdns
import testing
import wire
from udpflood import Flood

tests = testing.Tests()

FLOOD = "127.0.0.2"   # the hostile client
OTHER = "127.0.0.3"   # a client beside it
TCP_BYTES_CAP = 4 << 20  # the TCP answers' pool (resolver/share.c)
TCP_BYTES_ROOM = TCP_BYTES_CAP * 3 // 2  # and its headroom


def server_of(c):
    return (knotd.Knotd.address, c.port)


def readable(sock, timeout):
    """Whether sock has something to read within timeout (poll: descriptors past 1,024)."""
    p = select.poll()
    p.register(sock, select.POLLIN)
    return bool(p.poll(max(0, timeout) * 1000))


def udp_client(source):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((source, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    return s


def resolve_each(c, names, source, timeout=3):
    """Asks each name once from `source` over UDP (one at a time, as a client would);
    returns the RCODEs (None: no answer)."""
    rcodes = []
    with udp_client(source) as s:
        s.connect(server_of(c))
        for i, name in enumerate(names):
            ident = i & 0xFFFF
            s.send(wire.query(name, ident=ident, rd=True))
            deadline = time.monotonic() + timeout
            got = None
            while got is None and time.monotonic() < deadline:
                if not readable(s, deadline - time.monotonic()):
                    break
                reply = wire.parse(s.recv(65535))
                if reply.id == ident:
                    got = reply.rcode
            rcodes.append(got)
    return rcodes


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return promtext.parse(r.read().decode())


def healthy(port, stub):
    return promtext.value(metrics(port), "mod_k8s_forward_upstream_healthy",
                          upstream=f"127.0.0.1:{stub.port}")


def proc_status(pid, field):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{pid}/status")


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def descriptor_limit(pid):
    with open(f"/proc/{pid}/limits", encoding="ascii") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no descriptor limit")


@contextlib.contextmanager
def descriptor_limit_of_1024():
    """knotd started meanwhile inherits a soft limit of 1,024 descriptors (a common default;
    knotd does not raise it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, soft), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# -- one client address's flood


@tests.case
def one_address_flooding_names_no_upstream_answers_leaves_another_address_its_names():
    http_port = knotd.free_port()
    # 256 names at once: the flood (800 a second for 2 s each) would take them all.
    with stubdns.StubDNS(mode="silent") as silent, stubdns.StubDNS() as corp, \
            shipped.deployment([silent.address], metrics_port=http_port, extra_options=[
                f'forward-stub: [ "corp.example={corp.address}" ]',
                "forward-max-pending: 256"]) as c:
        tag = random.randrange(1 << 30)
        with Flood(server_of(c), [FLOOD], 800, lambda i: f"f{tag}-{i}.example.com.") as flood:
            time.sleep(2.5)  # The flood's names fill what one address may hold.
            names = [f"host{i}-{random.randrange(1 << 30)}.corp.example." for i in range(200)]
            rcodes = resolve_each(c, names, OTHER)
        resolved = sum(1 for r in rcodes if r == "NOERROR")
        testing.expect(resolved >= 0.95 * len(names),
                       f"{resolved} of {len(names)} names resolved beside the flood: "
                       f"{sorted(set(map(str, rcodes)))}")
        testing.expect(flood.sent >= 1600, f"the flood sent only {flood.sent} names")
        # Its excess was refused at once, not left to wait.
        testing.expect(flood.rcodes.get("SERVFAIL", 0) > 0, "no SERVFAIL for the flood's excess")
        testing.expect_equal(healthy(http_port, corp), 1, "the stub domain's upstream is up")


@tests.case
def pipelined_tcp_queries_from_one_client_leave_knotd_its_descriptors_and_the_upstream_up():
    http_port = knotd.free_port()
    with contextlib.ExitStack() as stack:
        up = stack.enter_context(stubdns.StubDNS(delay=0.1))
        with descriptor_limit_of_1024():
            c = stack.enter_context(shipped.deployment([up.address], metrics_port=http_port))
        pid = c.server.pid
        limit = descriptor_limit(pid)
        mark = faults.log_mark(c.server)
        count = 1600
        tag = random.randrange(1 << 30)
        peak = [descriptors(pid)]
        replies = []
        with socket.create_connection(server_of(c), timeout=10,
                                      source_address=(FLOOD, 0)) as conn:
            def read():
                replies.extend(wire.tcp_replies(conn, count, 15))
            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak.append(descriptors(pid))
                    time.sleep(0.005)
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            queries = b"".join(
                struct.pack(">H", len(q)) + q for q in
                (wire.query(f"p{tag}-{i}.example.net.", ident=i, rd=True) for i in range(count)))
            conn.sendall(queries)
            # Another client meanwhile, over UDP.
            other = resolve_each(c, [f"o{tag}-{i}.example.net." for i in range(20)], OTHER)
            reader.join(timeout=15)
            done.set()
            sampler.join()
        # One client alone may hold every TCP duplicate (an eighth of the limit, and half
        # again within its part), the upstream sockets as many: with knotd's own, well
        # within half.
        testing.expect(max(peak) < limit // 2,
                       f"knotd held {max(peak)} descriptors of its {limit}")
        testing.expect_equal(other, ["NOERROR"] * 20, "the other client's names")
        testing.expect_equal(len(replies), count, "every pipelined query answered")
        answered = sum(1 for r in replies if r.rcode == "NOERROR")
        testing.expect(answered >= 16, f"only {answered} of the flood's names answered")
        testing.expect_equal(healthy(http_port, up), 1, "the upstream is up")
        testing.expect_equal(faults.log_lines(c.server, "), marked down", mark), [],
                             "a log line marking the upstream down")


# -- hostile upstreams over TCP


class Trickle:
    """An upstream that answers TC over UDP, and over TCP announces 65,535 bytes, sends
    60,000 and holds the connection (as many as are opened)."""

    def __init__(self):
        self.udp, self.tcp, self.port = stubdns.bind_pair()
        self.tcp.listen(1024)
        self.address = f"127.0.0.1@{self.port}"
        self.stopping = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        sel = selectors.DefaultSelector()
        sel.register(self.udp, selectors.EVENT_READ, "udp")
        sel.register(self.tcp, selectors.EVENT_READ, "accept")
        held = []
        while not self.stopping.is_set():
            for key, _ in sel.select(0.1):
                if key.data == "udp":
                    query, address = self.udp.recvfrom(65535)
                    try:
                        _, _, end = stubdns._question(query)
                    except (IndexError, struct.error):
                        continue
                    # The question, no records, TC: ask again over TCP.
                    flags = 0x8000 | 0x0200 | (struct.unpack_from(">H", query, 2)[0] & 0x0100)
                    self.udp.sendto(query[:2] + struct.pack(">HHHHH", flags, 1, 0, 0, 0) +
                                    query[12:end], address)
                elif key.data == "accept":
                    conn, _ = self.tcp.accept()
                    conn.setblocking(False)
                    self.connections += 1
                    try:
                        conn.send(struct.pack(">H", 65535) + b"\0" * 60000)
                    except OSError:
                        pass
                    held.append(conn)
        for conn in held:
            conn.close()
        sel.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join()
        self.udp.close()
        self.tcp.close()
        return False


@tests.case
def upstreams_that_announce_64_kib_over_tcp_and_trickle_hold_6_mib_in_all():
    with Trickle() as a, Trickle() as b, stubdns.StubDNS() as corp, \
            shipped.deployment([a.address, b.address], extra_options=[
                f'forward-stub: [ "corp.example={corp.address}" ]']) as c:
        pid = c.server.pid
        mark = faults.log_mark(c.server)
        testing.expect_equal(resolve_each(c, ["warm.corp.example."], OTHER), ["NOERROR"],
                             "a stub domain name before")
        before = proc_status(pid, "VmRSS") * 1024
        peak = before
        tag = random.randrange(1 << 30)
        # Four client addresses, 200 names each: well within their shares.
        floods = [Flood(server_of(c), [f"127.0.0.{10 + k}"], 130,
                        lambda i, k=k: f"f{tag}-{i}.t{k}.example.com.") for k in range(4)]
        for f in floods:
            f.start()
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            peak = max(peak, proc_status(pid, "VmRSS") * 1024)
            time.sleep(0.05)
        rcodes = resolve_each(c, [f"n{tag}-{i}.corp.example." for i in range(20)], OTHER)
        for f in floods:
            f.__exit__(None, None, None)
        testing.expect(a.connections + b.connections >= 200,
                       f"only {a.connections + b.connections} TCP connections to the upstreams")
        margin = 12 << 20
        # A sanitizer's quarantine keeps freed buffers resident: there only the log line
        # and the names below show the cap.
        testing.expect(knotd.find_build().sanitized or peak - before < TCP_BYTES_ROOM + margin,
                       f"knotd grew by {(peak - before) >> 10} KiB "
                       f"(cap and headroom {TCP_BYTES_ROOM >> 10} KiB + {margin >> 10} KiB)")
        testing.expect_equal(rcodes, ["NOERROR"] * 20, "the stub domain's names meanwhile")
        testing.expect(faults.log_lines(c.server, "holds its part of the TCP answers' bytes",
                                        mark), "no log line about the TCP answers' part")
        testing.expect(faults.log_lines(c.server, "process, tcp_answer_bytes full", mark),
                       "no log line about the TCP answers' pool")


@tests.case
def a_hostile_stub_domain_server_leaves_a_healthy_upstream_its_large_answers():
    # The attack: a stub domain's server announces 64 KiB over TCP and stalls,
    # names of that domain asked from four addresses; the default upstream's answers,
    # too large for UDP (60 A records), were refused 8 of 8 while it held the 4 MiB.
    http_port = knotd.free_port()
    with Trickle() as hostile, stubdns.StubDNS() as healthy, \
            shipped.deployment([healthy.address], metrics_port=http_port, extra_options=[
                f'forward-stub: [ "hostile.example={hostile.address}" ]']) as c:
        tag = random.randrange(1 << 30)
        floods = [Flood(server_of(c), [f"127.0.0.{10 + k}"], 130,
                        lambda i, k=k: f"f{tag}-{k}-{i}.hostile.example.") for k in range(4)]
        for f in floods:
            f.start()
        try:
            # Until the hostile server holds its whole part of the bytes.
            faults.wait_for(lambda: hostile.connections >= 64, "64 TCP connections held",
                            timeout=20)
            tag = random.randrange(1 << 30)
            answers = [c.query(f"big{tag}-{i}.example.net.", "A", tcp=True, timeout=5)
                       for i in range(8)]
        finally:
            for f in floods:
                f.__exit__(None, None, None)
        families = metrics(http_port)
        held = promtext.value(families, "mod_k8s_share_used", pool="tcp_answer_bytes")
        testing.expect_equal([(a.rcode, len(a.answer)) for a in answers], [("NOERROR", 60)] * 8,
                             "the healthy upstream's large answers")
        testing.expect(hostile.connections >= 64,
                       f"the hostile server held only {hostile.connections} connections")
        testing.expect(promtext.value(families, "mod_k8s_share_refused_total",
                                      pool="tcp_answer_bytes") > 0,
                       "the hostile server's answers past its part were not refused")
        testing.expect(held <= TCP_BYTES_ROOM, f"{held} bytes of TCP answers held")


# -- the late answer's source


@tests.case
def a_late_answer_on_a_wildcard_listener_leaves_from_the_address_the_client_asked():
    if knotd.knot_release() in ("3.2",):
        raise testing.Skip("Knot 3.2 gives modules the query's local address only by "
                           "getsockname() (0.0.0.0 on a wildcard listener): "
                           "knotd_qdata_params_t.local is Knot 3.3+")
    with stubdns.StubDNS(delay=0.1) as up, \
            shipped.deployment([up.address], listen="0.0.0.0") as c:
        with udp_client("127.0.0.1") as s:
            s.connect(("127.0.0.7", c.port))  # As glibc's resolver: only that source counts.
            name = f"cold{random.randrange(1 << 30)}.example.com."
            s.send(wire.query(name, ident=7, rd=True))
            ready = readable(s, 5)
            testing.expect(ready, "no late answer from 127.0.0.7")
            reply = wire.parse(s.recv(65535))
            testing.expect(reply.rcode == "NOERROR" and reply.ancount == 1, str(reply))


tests.main()
