#!/usr/bin/env python3
"""Differential test of a translation (issue 41, items 7 and 9): one Corefile served by
CoreDNS (the project's build, tests/realk8s/build: v1.15.0) and its translation by
packaging/migrate/mod-k8s-migrate served by knotd + mod-k8s, the same queries to both
against the same stub upstreams (tests/lib/stubdns.py), answers compared.

The Corefile has the per-block settings of item 7 as real Corefiles write them (OpenShift's
DNS operator's, NodeLocal DNSCache's, kubespray's): a root block with `forward ... {
policy round_robin }`, `cache 60 { success 9984 60 10; denial 9984 20 3 }`, `bufsize 512`,
`log . { class denial error }` and `errors`; a stub block with `force_tcp` and its own
`cache 300`; a stub block with `policy sequential` and no cache; a stub block inside the
cluster zone (AKS's `my.cluster.local` example). No kubernetes plugin:
CoreDNS needs no API for these; the translation adds the cluster zone (a loss it says,
accepted here) and knotd watches the API simulator for it.

Compared, name for name: the RCODE, the answer and authority records, their TTLs (the
first answer's exactly; a cached one's after the same wait within a second: CoreDNS and
mod-k8s both count whole seconds, each from its own receipt), TC over UDP, which upstream
answered each name (round_robin's sequence, the stub block inside the cluster zone), the
transport to the stub (force_tcp), a
SERVFAIL kept 5 s, and the query log's lines for the same names (which are written, and
their fields). Skips (exit 77) where CoreDNS is not built.
"""

import contextlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import cluster
import dig
import knotd
import realk8s
import simctl
import stubdns
import testing
import wire
from knotd import Knotd

realk8s.skip_unless_available(("coredns",))

tests = testing.Tests()
SRCDIR = knotd.find_build().srcdir
TOOL = os.path.join(SRCDIR, "packaging", "migrate", "mod-k8s-migrate")


def tagged_answer(tag):
    """A stub's answers that say which stub answered: A 192.0.2.<tag>, its TTL from the
    name's first label (t<N>-...: N seconds, else 300); a CNAME (TTL 300) to an A (TTL 40)
    for names starting cname-; NXDOMAIN with an SOA (its TTL 3600, MINIMUM 100) for nx-;
    NODATA (SOA) for AAAA; SERVFAIL for sf-; 60 A records for big-."""
    def answer(query, ttl, tcp):
        ident, flags = struct.unpack_from(">HH", query)
        name, qtype, end = stubdns._question(query)
        label = name.split(".")[0].lower()
        rd = flags & 0x0100
        question = query[12:end]
        m = re.match(r"^t(\d+)-", label)
        rr_ttl = int(m.group(1)) if m else 300

        def rr(rtype, rttl, rdata, owner=b"\xc0\x0c"):
            return owner + struct.pack(">HHIH", rtype, 1, rttl, len(rdata)) + rdata

        soa_rdata = (wire.encode_name("ns.example.") + wire.encode_name("host.example.") +
                     struct.pack(">IIIII", 1, 3600, 600, 86400, 100))
        soa = b"\x00" + struct.pack(">HHIH", 6, 1, 3600, len(soa_rdata)) + soa_rdata
        rcode, answers, authority = 0, [], []
        if label.startswith("sf-"):
            rcode = 2
        elif label.startswith("nx-"):
            rcode, authority = 3, [soa]
        elif qtype != 1:
            authority = [soa]
        elif label.startswith("cname-"):
            target = wire.encode_name("target." + name.split(".", 1)[1])
            answers = [rr(5, 300, target), rr(1, 40, bytes([192, 0, 2, tag]), owner=target)]
        elif label.startswith("big-"):
            answers = [rr(1, rr_ttl, bytes([192, 0, 2, i + 1])) for i in range(60)]
        else:
            answers = [rr(1, rr_ttl, bytes([192, 0, 2, tag]))]
        reply_flags = 0x8000 | rd | 0x0080 | rcode
        if not tcp and len(answers) > 20:
            reply_flags |= 0x0200
            answers = []
        header = struct.pack(">HHHHHH", ident, reply_flags, 1, len(answers), len(authority), 0)
        return header + question + b"".join(answers) + b"".join(authority)
    return answer


COREFILE = """.:{port} {{
    bufsize 512
    errors {{
        consolidate 5m ".* i/o timeout$"
    }}
    log . {{
        class denial error
    }}
    forward . {up1} {up2} {{
        policy round_robin
    }}
    cache 60 {{
        success 9984 60 10
        denial 9984 20 3
    }}
}}
corp.example:{port} {{
    forward . {stub} {{
        force_tcp
    }}
    cache 300
}}
plain.example:{port} {{
    forward . {plain1} {plain2} {{
        policy sequential
    }}
}}
inner.cluster.local:{port} {{
    forward . {inner}
}}
"""


class CoreDNS(dig.Server):
    address = "127.0.0.1"

    def __init__(self, workdir, text, port):
        self.binary = realk8s.binaries(("coredns",))["coredns"]
        self.port = port
        self.dir = tempfile.mkdtemp(prefix="coredns-", dir=workdir)
        self.log_path = os.path.join(self.dir, "coredns.log")
        self.corefile = os.path.join(self.dir, "Corefile")
        self.text = text
        self.process = None

    def __enter__(self):
        with open(self.corefile, "w", encoding="utf-8") as f:
            f.write(self.text)
        self.process = realk8s.Process("coredns", [self.binary, "-conf", self.corefile],
                                       self.log_path)
        self.process.start()
        deadline = time.monotonic() + 30
        while True:
            if not self.process.alive():
                raise testing.Failure("coredns exited:\n" + self.process.log_tail())
            try:
                if dig.query(self, "up.example.com.", "A", timeout=1).rcode == "NOERROR":
                    return self
            except dig.QueryError:
                pass
            if time.monotonic() > deadline:
                raise testing.Failure("coredns does not answer:\n" + self.process.log_tail())
            time.sleep(0.2)

    def __exit__(self, *exc):
        if self.process:
            self.process.stop()
        return False


class Pair:
    """CoreDNS and knotd on one Corefile, each with stub upstreams of its own (the same
    answers), so that what one asks never warms the other's."""

    def __init__(self):
        self.stack = contextlib.ExitStack()

    def stubs(self, base):
        names = ("up1", "up2", "stub", "plain1", "plain2", "inner")
        tags = (1, 2, 3, 4, 5, 6)
        return {n: self.stack.enter_context(stubdns.StubDNS(answer=tagged_answer(t)))
                for n, t in zip(names, tags)}

    def __enter__(self):
        if knotd.load_mode() == "file":
            raise testing.Skip("the translated config relies on auto-loading")
        try:
            self.work = tempfile.mkdtemp(prefix="mod-k8s-migrate-coredns-")
            self.stack.callback(shutil.rmtree, self.work, True)
            self.up = {"coredns": self.stubs(0), "knotd": self.stubs(10)}
            port = knotd.free_port()

            def text(which, port):
                ups = {k: v.address.replace("@", ":") for k, v in self.up[which].items()}
                return COREFILE.format(port=port, **ups)
            self.coredns = self.stack.enter_context(CoreDNS(self.work, text("coredns", port), port))
            self.sim = simctl.Simulator(os.path.join(self.work, "apisim"), manifests=[cluster.SAMPLE])
            self.sim.start()
            self.stack.callback(self.sim.stop)
            corefile = os.path.join(self.work, "Corefile")
            with open(corefile, "w", encoding="utf-8") as f:
                f.write(text("knotd", 53))
            self.knotd = self.stack.enter_context(Knotd(config=self.translate(corefile)))
            cluster.wait_ready(self.knotd)
        except BaseException:
            self.stack.close()
            raise
        return self

    def translate(self, corefile):
        out = os.path.join(self.work, "out")
        result = subprocess.run(
            [sys.executable, TOOL, "translate", "--out", out, "--zone-dir", out,
             "--listen", "${address}@${port}", "--rundir", "${dir}/run",
             "--storage", "${dir}/storage", "--lameduck-file", "${dir}/run/lameduck",
             "--metrics-listen", f"127.0.0.1@{knotd.free_port()}",
             "--kubeconfig", self.sim.path("kubeconfig"), "--accept-loss", corefile],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, check=False)
        testing.expect(result.returncode == 0, f"translate:\n{result.stdout}")
        # The only losses: no kubernetes plugin (the cluster zone is the translation's own)
        # and this test's loopback metrics endpoint.
        losses = re.findall(r"^  - (.*)$", result.stdout.split("SERVES WORSE")[-1], re.M) \
            if "SERVES WORSE" in result.stdout else []
        others = [l for l in losses if "no cluster zone" not in l and
                  not l.startswith("--metrics-listen")]
        testing.expect(not others, f"losses other than the cluster zone:\n{result.stdout}")
        self.report = result.stdout
        with open(os.path.join(out, "knot.conf"), encoding="utf-8") as f:
            return f.read()

    def __exit__(self, *exc):
        return self.stack.__exit__(*exc)

    def is_running(self):
        return self.sim.alive() and self.knotd.is_running() and self.coredns.process.alive()

    def log_text(self):
        return self.knotd.log_text() + self.coredns.log_text()

    def both(self, name, rtype="A", **options):
        return (dig.query(self.coredns, name, rtype, timeout=5, **options),
                dig.query(self.knotd, name, rtype, timeout=5, **options))


def records(answer):
    """The answer and authority records with their TTLs, as sets."""
    return {section: sorted((rr.owner, rr.type, rr.rdata, rr.ttl) for rr in answer.section(section))
            for section in ("answer", "authority")}


def without_ttls(answer):
    return {k: [r[:3] for r in v] for k, v in records(answer).items()}


def ttls_close(theirs, ours, slack):
    a, b = records(theirs), records(ours)
    for section in a:
        for x, y in zip(a[section], b[section]):
            if abs(x[3] - y[3]) > slack:
                return False
    return True


def same(pair, name, rtype="A", slack=0, **options):
    theirs, ours = pair.both(name, rtype, **options)
    testing.expect(theirs.rcode == ours.rcode and without_ttls(theirs) == without_ttls(ours),
                   f"{name} {rtype}: CoreDNS and knotd differ:\n{theirs.text}\n----\n{ours.text}")
    testing.expect(ttls_close(theirs, ours, slack),
                   f"{name} {rtype}: TTLs differ by more than {slack}:\n{theirs.text}\n----\n{ours.text}")
    return theirs, ours


tests.fixture(Pair, "CoreDNS 1.15.0 and knotd + mod-k8s on one Corefile, stub upstreams for each")


@tests.case
def the_first_answers_records_rcodes_and_ttls_are_coredns_ones(pair):
    for name, rtype in [("t300-a.example.com.", "A"),    # capped at the block's 60
                        ("t2-a.example.com.", "A"),      # raised to success's minimum, 10
                        ("cname-a.example.com.", "A"),   # one TTL, the least (40), for both
                        ("nx-a.example.com.", "A"),      # denial: the SOA's 3600, capped at 20
                        ("nodata-a.example.com.", "AAAA"),
                        ("host.corp.example.", "A"),     # the stub block's cache 300: TTL 300
                        ("t600-host.corp.example.", "A"),
                        ("t300-x.plain.example.", "A"),  # no cache: as the upstream said
                        ("nx-x.plain.example.", "A")]:
        same(pair, name, rtype)


@tests.case
def a_cached_answer_counts_down_alike(pair):
    for name in ("t300-b.example.com.", "nx-b.example.com.", "host2.corp.example."):
        same(pair, name)
    time.sleep(3.2)
    for name in ("t300-b.example.com.", "nx-b.example.com.", "host2.corp.example."):
        same(pair, name, slack=1)


@tests.case
def round_robin_sends_the_names_to_the_upstreams_in_turns_alike(pair):
    # Each answer says its upstream (192.0.2.1 or .2); the turn each starts from is its
    # count of names forwarded so far (CoreDNS's start-up probe is one more), so the
    # turns alternate in both, each from its own place.
    for which in ("coredns", "knotd"):
        server = pair.coredns if which == "coredns" else pair.knotd
        got = []
        for i in range(6):
            answer = dig.query(server, f"t300-rr{i}.example.com.", timeout=5)
            got += [rr.rdata for rr in answer.answer if rr.type == "A"]
        testing.expect(len(got) == 6 and all(a != b for a, b in zip(got, got[1:])) and
                       set(got) == {"192.0.2.1", "192.0.2.2"}, f"{which}'s turns: {got}")


@tests.case
def force_tcp_asks_the_stub_over_tcp_and_sequential_keeps_to_the_first(pair):
    same(pair, "tcp-host.corp.example.")
    same(pair, "t300-seq.plain.example.")
    for which in ("coredns", "knotd"):
        got = [t for n, t in pair.up[which]["stub"].transports() if n == "tcp-host.corp.example."]
        testing.expect(got and set(got) == {"tcp"}, f"{which}: {got}")
        testing.expect(any(n == "t300-seq.plain.example." for n, _ in pair.up[which]["plain1"].names()),
                       f"{which}: plain1 not asked")
        testing.expect(not any(n == "t300-seq.plain.example." for n, _ in pair.up[which]["plain2"].names()),
                       f"{which}: plain2 asked")


@tests.case
def a_stub_block_inside_the_cluster_zone_forwards_its_names_alike(pair):
    for name in ("db.inner.cluster.local.", "inner.cluster.local.", "nx-a.inner.cluster.local."):
        theirs, ours = same(pair, name)
        testing.expect(name.startswith("nx-") or
                       [rr.rdata for rr in ours.answer] == ["192.0.2.6"],
                       f"{name}: not the inner stub's answer:\n{ours.text}")
    for which in ("coredns", "knotd"):
        asked = [n for n, _ in pair.up[which]["inner"].names() if n != "."]
        testing.expect("db.inner.cluster.local." in asked, f"{which}'s inner stub asked {asked}")


@tests.case
def an_upstreams_servfail_is_relayed_and_kept_five_seconds(pair):
    same(pair, "sf-a.example.com.")
    same(pair, "sf-a.example.com.")  # from the cache, within 5 s
    for which in ("coredns", "knotd"):
        asked = sum(1 for up in ("up1", "up2") for n, _ in pair.up[which][up].names()
                    if n == "sf-a.example.com.")
        testing.expect_equal(asked, 1, f"{which}: times the upstreams were asked")


@tests.case
def bufsize_cuts_udp_answers_at_512_bytes_alike(pair):
    # A truncated answer's records are not compared: CoreDNS relays the upstream's TC (no
    # records), mod-k8s asked over TCP and sends what fits (a client takes neither).
    theirs, ours = pair.both("big-a.example.com.", bufsize=1232)
    testing.expect(theirs.rcode == ours.rcode == "NOERROR" and "tc" in theirs.flags and
                   "tc" in ours.flags, f"TC: {theirs.summary()} / {ours.summary()}")
    theirs, ours = same(pair, "big-a.example.com.", tcp=True, slack=1)
    testing.expect_equal(len(ours.answer), 60, "records over TCP")


@tests.case
def the_query_log_writes_the_same_classes_and_fields(pair):
    names = ["nx-log.example.com.", "t300-log.example.com.", "sf-log.example.com."]
    for name in names:
        pair.both(name)
    line = re.compile(r'(\d+\.\d+\.\d+\.\d+):\d+ - \d+ "(\S+) IN (\S+) (udp|tcp) \d+ (true|false) '
                      r'(\d+)" (\S+) (\S+) \d+ \d+(\.\d+)?s')

    def logged(text):
        return sorted((m.group(3), m.group(2), m.group(4), m.group(6), m.group(7), m.group(8))
                      for m in line.finditer(text) if m.group(3) in names)

    def check():
        theirs, ours = logged(pair.coredns.log_text()), logged(pair.knotd.log_text())
        testing.expect(theirs == ours and len(theirs) == 2,
                       f"CoreDNS's lines {theirs}\nknotd's lines {ours}")
    testing.eventually(check, timeout=5)


tests.main()
