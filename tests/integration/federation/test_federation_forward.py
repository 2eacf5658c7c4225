#!/usr/bin/env python3
"""The K8S-DNS role of federated service discovery (issue 13, items 4 and 5).

A member cluster's knotd serves the zone svc.federation. with mod-k8s and
forwards every name below <federation>.svc.federation. to that federation's
nameservers (its Federated-DNS), adding the source-cluster EDNS(0) option
(65350) with this cluster's name, and returns their answer. The Federated-DNS
here is a tiny DNS server in this file that records what it was asked (name,
type, the option's value) and answers one address of its own.

The stub zones are also programmed at run time, as the design's stubzone
server: POST /federations/<name> {"nameservers": [...]} and DELETE over HTTPS
with a client certificate of the configured CA (tests/lib/federation.py makes it);
programmed federations persist in knotd's storage across a restart.
"""

import contextlib
import http.client
import json
import os
import socket
import ssl
import struct
import threading
import time

import knotd
import testing
from cluster import Cluster
from federation import OPTION, api_options, https_request, pki_in
from slowloris import SlowAttack, SlowClient


tests = testing.Tests()

SOURCE_OPTION = OPTION
CLUSTER_NAME = "member-one"
AP = "search.shop.cluster.local.ap.k8s.io."


# -- a Federated-DNS stand-in

def _read_name(msg, pos):
    labels = []
    while True:
        length = msg[pos]
        if length == 0:
            return ".".join(labels).lower() + ".", pos + 1
        if length & 0xC0:
            raise ValueError("compression in a question")
        labels.append(msg[pos + 1:pos + 1 + length].decode("ascii"))
        pos += 1 + length


class FakeFederationDNS:
    """UDP and TCP on one port: answers every A question with `address` (TTL `ttl`),
    AAAA with no records; records (qname, qtype, source-cluster value or None)."""

    def __init__(self, address, ttl=300):
        self.address = address
        self.ttl = ttl
        self.seen = []
        self.lock = threading.Lock()
        self.udp, self.tcp = self._bind_pair()
        self.port = self.udp.getsockname()[1]
        self.tcp.listen(8)
        self.stopped = False
        for target in (self._serve_udp, self._serve_tcp):
            threading.Thread(target=target, daemon=True).start()

    @staticmethod
    def _bind_pair():
        """A UDP and a TCP socket on one port that another process may take meanwhile."""
        for _ in range(50):
            port = knotd.free_port()
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                udp.bind(("127.0.0.1", port))
                tcp.bind(("127.0.0.1", port))
                return udp, tcp
            except OSError:
                udp.close()
                tcp.close()
        raise OSError("no port free for both UDP and TCP")

    def close(self):
        self.stopped = True
        self.udp.close()
        self.tcp.close()

    def asked(self, qname=None):
        with self.lock:
            return [s for s in self.seen if qname is None or s[0] == qname]

    def _answer(self, msg):
        qid, flags, qdcount, _, _, arcount = struct.unpack("!HHHHHH", msg[:12])
        qname, pos = _read_name(msg, 12)
        qtype, qclass = struct.unpack("!HH", msg[pos:pos + 4])
        question = msg[12:pos + 4]
        pos += 4
        source = None
        for _ in range(arcount):
            _, pos = _read_name(msg, pos)
            rtype, _, _, rdlen = struct.unpack("!HHIH", msg[pos:pos + 10])
            rdata = msg[pos + 10:pos + 10 + rdlen]
            pos += 10 + rdlen
            if rtype == 41:
                opos = 0
                while opos + 4 <= len(rdata):
                    code, olen = struct.unpack("!HH", rdata[opos:opos + 4])
                    if code == SOURCE_OPTION:
                        source = rdata[opos + 4:opos + 4 + olen].decode("ascii", "replace")
                    opos += 4 + olen
        with self.lock:
            self.seen.append((qname, qtype, source))
        answers = b""
        ancount = 0
        if qtype == 1:
            answers = (b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, self.ttl, 4)
                       + socket.inet_aton(self.address))
            ancount = 1
        header = struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x0100), 1, ancount, 0, 0)
        return header + question + answers

    def _serve_udp(self):
        while not self.stopped:
            try:
                msg, peer = self.udp.recvfrom(4096)
                self.udp.sendto(self._answer(msg), peer)
            except OSError:
                return
            except (ValueError, struct.error, IndexError):
                continue

    def _serve_tcp(self):
        while not self.stopped:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            with conn:
                try:
                    size = struct.unpack("!H", conn.recv(2))[0]
                    msg = b""
                    while len(msg) < size:
                        msg += conn.recv(size - len(msg))
                    reply = self._answer(msg)
                    conn.sendall(struct.pack("!H", len(reply)) + reply)
                except (OSError, ValueError, struct.error, IndexError):
                    continue


class Fixture(testing.Fixture):
    """Two Federated-DNS stand-ins, certificates, and a member knotd in the K8S-DNS role."""

    def start(self):
        self.pki = pki_in(self)
        self.fed1 = FakeFederationDNS("192.0.2.11")
        self.callback(self.fed1.close)
        self.fed2 = FakeFederationDNS("192.0.2.22")
        self.callback(self.fed2.close)
        self.upstream = FakeFederationDNS("192.0.2.99")
        self.callback(self.upstream.close)
        self.api_port = knotd.free_port()
        self.cluster = self.enter_context(Cluster(
            zones=("cluster.local.", "svc.federation.", "ap.k8s.io."),
            ready_zones=("cluster.local.",),
            module={"federation-nameservers": [f"myfederation=127.0.0.1@{self.fed1.port}"],
                    "federation-cluster-name": CLUSTER_NAME,
                    **api_options(self.pki, self.api_port),
                    "upstream": f"127.0.0.1@{self.upstream.port}"}))
        self.cluster.fixture = self
        return self.cluster


def fixture_of(c):
    return c.fixture


def api(c, method, path, body=None, cert="client"):
    """One HTTPS request to the programming endpoint; (status, parsed JSON or text)."""
    f = fixture_of(c)
    return https_request(f.pki, f.api_port, method, path, body, cert)


def rewrite_config(server):
    with open(server.conf_path, "w", encoding="utf-8") as fh:
        fh.write(server.config_text())


def addresses(answer):
    return sorted(rr.rdata for rr in answer.answer if rr.type == "A")


@tests.case
def a_federated_name_is_forwarded_with_the_source_cluster_and_its_answer_reaches_the_client(c):
    f = fixture_of(c)
    name = "mysvc.myns.myfederation.svc.federation."
    # Answered late on the first query, once the resolver thread has the answer.
    answer = c.expect_answer(name, "A", "NOERROR", ["192.0.2.11"], timeout=15)
    testing.expect_equal({(rr.owner, rr.type) for rr in answer.answer}, {(name, "A")}, "answer")
    asked = f.fed1.asked(name)
    testing.expect(asked, "the federation's nameserver was not asked")
    testing.expect_equal({s for _, _, s in asked}, {CLUSTER_NAME}, "source-cluster option values")
    # Cached: more queries do not reach the nameserver again within the TTL.
    count = len(f.fed1.asked(name))
    for _ in range(5):
        testing.expect_equal(addresses(c.query(name, "A")), ["192.0.2.11"], "cached answer")
    testing.expect(len([s for s in f.fed1.asked(name) if s[1] == 1]) <= count,
                   "cached answer asked again")


@tests.case
def a_cold_federated_name_answers_on_the_first_query(c):
    # Issue 24 item 5: no SERVFAIL while the name is resolved; the answer comes late.
    name = "firstquery.myns.myfederation.svc.federation."
    answer = c.query(name, "A", edns=True, timeout=5)
    testing.expect_equal(answer.rcode, "NOERROR", f"first answer: {answer.summary()}")
    testing.expect_equal(addresses(answer), ["192.0.2.11"], "first answer")


@tests.case
def a_federation_without_nameservers_is_refused(c):
    testing.expect_equal(c.query("mysvc.myns.nowhere.svc.federation.", "A").rcode, "REFUSED",
                         "unknown federation")


@tests.case
def the_cache_is_keyed_by_the_source_cluster(c):
    f = fixture_of(c)
    name = "keyed.myns.myfederation.svc.federation."
    c.expect_answer(name, "A", "NOERROR", ["192.0.2.11"], timeout=15)
    # Another cluster name (a reload with another federation-cluster-name) asks afresh
    # under its own key instead of taking the other cluster's answer.
    server = c.server
    server.module_options["federation-cluster-name"] = "member-two"
    try:
        rewrite_config(server)
        server.reload()
        c.expect_answer(name, "A", "NOERROR", ["192.0.2.11"], timeout=15)
        testing.expect("member-two" in {s for _, _, s in f.fed1.asked(name)},
                       "member-two's query never reached the nameserver")
    finally:
        server.module_options["federation-cluster-name"] = CLUSTER_NAME
        rewrite_config(server)
        server.reload()


@tests.case
def autopath_never_expands_to_a_federation_name(c):
    f = fixture_of(c)
    # The KEP form: the name itself and a listed svc.federation domain would both give
    # autopath.myns.myfederation.svc.federation., which the upstream would answer.
    search = "svc.federation".encode().hex()
    fed_name = "autopath.myns.myfederation.svc.federation."
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        plain = c.query(f"autopath.myns.myfederation.svc.federation.{AP}", "A")
        listed = c.query(f"autopath.myns.myfederation.{AP}", "A",
                         extra=(f"+ednsopt=65001:{search}",))
        testing.expect_equal(plain.rcode, "NXDOMAIN", "the name itself")
        # The listed domain is skipped; the name itself (autopath.myns.myfederation.) is
        # the upstream's, which answers any name.
        testing.expect(all(rr.rdata != fed_name and rr.owner != fed_name for rr in listed.answer),
                       f"listed svc.federation: {listed.summary()}")
        time.sleep(0.3)
    testing.expect_equal(f.upstream.asked(fed_name), [], "federation name asked of the upstream")
    testing.expect_equal(f.fed1.asked(fed_name), [], "federation name forwarded")


def refused(c, cert):
    """A POST with make_pki()'s certificate `cert`: its status, or "handshake refused"."""
    try:
        status, _ = api(c, "POST", "/federations/myfederation",
                        {"nameservers": ["127.0.0.1@1"]}, cert=cert)
    except (ssl.SSLError, ConnectionError, http.client.HTTPException):
        status = "handshake refused"
    return status


@tests.case
def the_endpoint_refuses_a_client_without_a_certificate_at_the_handshake(c):
    testing.expect_equal(refused(c, None), "handshake refused", "without a client certificate")
    testing.expect("refused a client at the TLS handshake" in c.server.log_text(),
                   "no log line about the refused client")


@tests.case
def the_endpoint_refuses_a_certificate_of_another_ca_at_the_handshake(c):
    testing.expect_equal(refused(c, "intruder"), "handshake refused", "another CA's certificate")
    # Nothing was programmed: the static nameserver still answers.
    c.expect_answer("mysvc.myns.myfederation.svc.federation.", "A", "NOERROR", ["192.0.2.11"],
                    timeout=15)


@tests.case
def the_endpoint_refuses_a_certificate_for_servers_only_at_the_handshake(c):
    testing.expect_equal(refused(c, "server-only"), "handshake refused",
                         "a serverAuth-only certificate")


# A TLS handshake record of 512 bytes, of which at most one more byte comes each second.
HANDSHAKE_START = b"\x16\x03\x01\x02\x00"


def slow_handshake(port, source):
    return SlowClient(port, source, HANDSHAKE_START, 1.0, more=b"\x01")


@tests.case
def a_request_that_does_not_arrive_whole_within_5_s_is_closed_however_it_trickles(c):
    f = fixture_of(c)
    started = time.monotonic()
    client = slow_handshake(f.api_port, "127.0.0.1")
    try:
        while client.alive() and time.monotonic() - started < 12:
            time.sleep(0.1)
        lasted = time.monotonic() - started
    finally:
        client.close()
    # 5 s from the accept, whatever the idle timeout (10 s) says; slack for a loaded machine.
    testing.expect(4.5 <= lasted < 8, f"the trickling connection lasted {lasted:.1f} s")


def slow_handshakes(port, count, addresses):
    """`count` never-ending handshakes from `addresses` source addresses (127.0.1.x)."""
    return SlowAttack(port, [f"127.0.1.{1 + i % addresses}" for i in range(count)],
                      HANDSHAKE_START, 1.0, more=b"\x01")


def the_controller_programs_within_2_s(c, pause, after_each=lambda: None):
    """Three POSTs of the controller, `pause` s apart: each answered 200 within 2 s."""
    for round_ in range(3):
        started = time.monotonic()
        status, body = api(c, "POST", "/federations/slowloris", {"nameservers": ["127.0.0.1@1"]})
        took = time.monotonic() - started
        testing.expect_equal(status, 200, f"POST {round_} status ({body})")
        testing.expect(took < 2, f"POST {round_} took {took:.1f} s")
        after_each()
        time.sleep(pause)


@tests.case
def the_controller_is_served_within_2_s_while_64_clients_without_certificates_hold_connections(c):
    f = fixture_of(c)
    # 16 addresses with 4 connections each: under the per-address cap (8), so what keeps
    # the controller in is the cap on handshakes in progress, not the per-address one.
    with slow_handshakes(f.api_port, 64, 16) as attack:
        testing.eventually(lambda: attack.open_now() == 64, timeout=10)
        time.sleep(1)
        the_controller_programs_within_2_s(c, 2, lambda: testing.expect_equal(
            attack.open_now(), 64, "the attack's connections"))
    status, _ = api(c, "DELETE", "/federations/slowloris")
    testing.expect_equal(status, 200, "DELETE")


@tests.case
def past_the_cap_on_handshakes_in_progress_the_oldest_gives_way_to_the_controller(c):
    f = fixture_of(c)
    # 30 addresses with 8 connections each (the per-address cap): 240, past the 192
    # handshakes in progress that are kept.
    with slow_handshakes(f.api_port, 240, 30) as attack:
        testing.eventually(lambda: attack.opened >= 240, timeout=20)
        time.sleep(1)
        the_controller_programs_within_2_s(c, 1)
    testing.expect("closed the oldest connection in its TLS handshake" in c.server.log_text(),
                   "no log line about a handshake that gave way")
    status, _ = api(c, "DELETE", "/federations/slowloris")
    testing.expect_equal(status, 200, "DELETE")


@tests.case
def the_endpoint_refuses_hostile_bodies(c):
    for body, why in ((b"{", "not JSON"), ({"nameservers": []}, "no nameservers"),
                      ({"nameservers": ["999.1.1.1"]}, "bad address"),
                      ({"nameservers": ["127.0.0.1"] * 9}, "too many"),
                      ({"nameservers": ["127.0.0.1"], "x": 1}, "extra key"),
                      (b"{\"nameservers\": [\"" + b"1" * 5000 + b"\"]}", "too large")):
        status, _ = api(c, "POST", "/federations/bad", body)
        testing.expect(status in (400, 413), f"{why}: status {status}")
    status, _ = api(c, "POST", "/federations/Not_A_Label", {"nameservers": ["127.0.0.1"]})
    testing.expect_equal(status, 400, "bad federation name")
    status, _ = api(c, "GET", "/federations/myfederation")
    testing.expect_equal(status, 405, "GET")


@tests.case
def a_programmed_federation_is_used_without_reload_deleted_and_survives_a_restart(c):
    f = fixture_of(c)
    name = "prog.myns.newfed.svc.federation."
    testing.expect_equal(c.query(name, "A").rcode, "REFUSED", "before programming")
    status, body = api(c, "POST", "/federations/newfed",
                       {"nameservers": [f"127.0.0.1@{f.fed2.port}"]})
    testing.expect_equal(status, 200, f"POST status ({body})")
    c.expect_answer(name, "A", "NOERROR", ["192.0.2.22"], timeout=15)
    testing.expect_equal({s for _, _, s in f.fed2.asked(name)}, {CLUSTER_NAME}, "option")

    # Programming overrides the static nameservers of the same federation.
    static_name = "mysvc.myns.myfederation.svc.federation."
    status, _ = api(c, "POST", "/federations/myfederation",
                    {"nameservers": [f"127.0.0.1@{f.fed2.port}"]})
    testing.expect_equal(status, 200, "POST over a static federation")
    c.expect_answer(static_name, "A", "NOERROR", ["192.0.2.22"], timeout=15)

    # Persisted: a restarted knotd loads the programmed federations.
    server = c.server
    with open(persisted_path(server), encoding="utf-8") as fh:
        testing.expect_equal(sorted(json.load(fh)["federations"]), ["myfederation", "newfed"],
                             "persisted federations")
    restart_keeping_storage(server)
    c.expect_answer(name, "A", "NOERROR", ["192.0.2.22"], timeout=15)
    c.expect_answer(static_name, "A", "NOERROR", ["192.0.2.22"], timeout=15)

    # DELETE: the programmed federation goes; the static one comes back.
    status, _ = api(c, "DELETE", "/federations/newfed")
    testing.expect_equal(status, 200, "DELETE status")
    testing.expect_equal(c.query(name, "A").rcode, "REFUSED", "after DELETE")
    status, _ = api(c, "DELETE", "/federations/newfed")
    testing.expect_equal(status, 404, "second DELETE")
    status, _ = api(c, "DELETE", "/federations/myfederation")
    testing.expect_equal(status, 200, "DELETE of the override")
    c.expect_answer(static_name, "A", "NOERROR", ["192.0.2.11"], timeout=15)


@tests.case
def a_link_planted_at_the_temporary_name_of_the_persisted_file_is_not_followed(c):
    server = c.server
    path = persisted_path(server)
    victim = os.path.join(server.dir, "victim")
    with open(victim, "w", encoding="utf-8") as fh:
        fh.write("precious")
    os.symlink(victim, path + ".tmp")
    try:
        status, body = api(c, "POST", "/federations/linked", {"nameservers": ["127.0.0.1@1"]})
        testing.expect_equal(status, 200, f"POST status ({body})")
        with open(victim, encoding="utf-8") as fh:
            testing.expect_equal(fh.read(), "precious", "the link's target")
        testing.expect(not os.path.islink(path), "the persisted file is a link")
        status, _ = api(c, "DELETE", "/federations/linked")
        testing.expect_equal(status, 200, "DELETE")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path + ".tmp")
        os.unlink(victim)


def restart_keeping_storage(server, planted=None, mode=None):
    """Restarts knotd with its storage kept; with \a planted, that text is the persisted
    federations file it starts from (given \a mode if set)."""
    path = persisted_path(server)
    server.keep_dir = True
    try:
        server.stop()
        if planted is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(planted)
        if mode is not None:
            os.chmod(path, mode)
        server.start()
    finally:
        server.keep_dir = False
    return path


def persisted_path(server):
    return os.path.join(server.dir, "zones", "k8s-federations.json")


@tests.case
def a_persisted_file_that_others_may_write_is_ignored(c):
    server = c.server
    path = restart_keeping_storage(
        server, '{"version": 1, "federations": {"planted": {"nameservers": ["127.0.0.1@1"]}}}',
        mode=0o666)
    testing.expect("writable by group or others" in server.log_text(),
                   "no log line about the file others may write")
    testing.expect_equal(c.query("x.myns.planted.svc.federation.", "A").rcode, "REFUSED",
                         "the planted federation")
    os.unlink(path)


@tests.case
def a_bad_persisted_file_is_ignored(c):
    server = c.server
    restart_keeping_storage(
        server, '{"version": 1, "federations": {"evil": {"nameservers": ["nope"]}}}')
    testing.expect("ignoring" in server.log_text(), "no log line about the bad file")
    testing.expect_equal(c.query("x.myns.evil.svc.federation.", "A").rcode, "REFUSED", "evil")
    c.expect_answer("mysvc.myns.myfederation.svc.federation.", "A", "NOERROR",
                    ["192.0.2.11"], timeout=15)


if __name__ == "__main__":
    tests.main(Fixture)
