#!/usr/bin/env python3
"""Knot's own modules next to mod-k8s, in the order doc/mod-k8s.rst recommends.

The cluster DNS of the doc's section "Knot's modules next to mod-k8s": the
global modules mod-queryacl (answer only the node and the pod CIDRs), mod-cookies,
mod-rrl (rate-limit a flooding pod), mod-dnstap (query log to a file) and
mod-stats in front of the zones' mod-k8s. Loopback addresses stand for the
cluster: 127.0.0.1 is the node (a NodeLocal DNSCache, exempt from rate
limiting), 127.0.1.0/24 and 127.0.2.0/24 are the pod CIDRs of two nodes,
127.0.0.2 is outside the cluster. A second knotd has the zone-scoped list
`[mod-queryacl/pods, mod-k8s/default, mod-stats]`.

mod-dnstap is Debian's package knot-module-dnstap (the others are built into
knotd); its tests skip, saying so, without it.
"""

import os
import re
import shutil
import subprocess
import tempfile
import time

import dig
import knotd
import testing
import wire
from cluster import Cluster

tests = testing.Tests()

SERVICE = "kubernetes.default.svc.cluster.local."
MISSING = "nonexistent.default.svc.cluster.local."
NODE, OUTSIDE = "127.0.0.1", "127.0.0.2"
FLOODING_POD, OTHER_POD, COOKIE_POD = "127.0.1.9", "127.0.2.5", "127.0.2.6"

MODULES = """
mod-queryacl:
  - id: pods
    address: [ 127.0.0.1/32, 127.0.1.0/24, 127.0.2.0/24 ]
mod-rrl:
  - id: pods
    rate-limit: 10
    slip: 2
    whitelist: 127.0.0.1/32
""" + ("""    # Knot 3.4's mod-rrl lets a burst of instant-limit answers (default 125) through
    # at once; as 3.2 does, the flood gets no more than rate-limit.
    instant-limit: 10
""" if knotd.knot_release() != "3.2" else "")
DNSTAP = """
mod-dnstap:
  - id: log
    sink: {sink}
"""
GLOBAL_CHAIN = ["mod-queryacl/pods", "mod-cookies", "mod-rrl/pods", "mod-dnstap/log", "mod-stats"]


def dnstap_available():
    try:
        knotd.shared_module("dnstap")
        return True
    except knotd.KnotdError:
        return False


class GlobalChain(Cluster):
    """The recommended configuration: Knot's modules global, mod-k8s on the zones."""

    def __init__(self):
        self.tap_dir = tempfile.mkdtemp(prefix="mod-k8s-dnstap-")
        self.tap = os.path.join(self.tap_dir, "queries.tap") if dnstap_available() else None
        extra = MODULES + (DNSTAP.format(sink=self.tap) if self.tap else "")
        chain = [m for m in GLOBAL_CHAIN if self.tap or not m.startswith("mod-dnstap")]
        super().__init__(zones=("cluster.local.", "in-addr.arpa."), extra=extra,
                         template={"global-module": chain},
                         knot_modules=("dnstap",) if self.tap else ())

    def __exit__(self, kind, value, traceback):
        try:
            return super().__exit__(kind, value, traceback)
        finally:
            shutil.rmtree(self.tap_dir, ignore_errors=True)

    def udp(self, qname, qtype="A", source=NODE, cookie=None):
        reply = wire.exchange((self.address, self.port), wire.query(qname, qtype, cookie=cookie),
                              source=source)
        testing.expect(reply is not None, f"no answer to {qname} {qtype} from {source}")
        return reply

    def global_stats(self, module):
        """Counters of a global module (`knotc stats mod-x`) as {"name[idx]": value}."""
        out = {}
        for line in self.knotc("stats", module).stdout.splitlines():
            match = re.match(rf"^{re.escape(module)}\.(\S+) = (\d+)$", line.strip())
            if match:
                out[match[1]] = int(match[2])
        return out


def _k8s_answers(cluster):
    return cluster.stats().get("queries[answer]", 0)


# mod-queryacl: only the node and the pod CIDRs are answered; a denied query never reaches
# mod-k8s (a BEGIN hook fails it before the zone is searched): NOTAUTH, no counter moves.
@tests.case
def queryacl_answers_pods_and_refuses_others_before_mod_k8s(cluster):
    testing.expect_equal(cluster.udp(SERVICE, source=OTHER_POD).rcode, "NOERROR", "pod CIDR")
    before = _k8s_answers(cluster)
    denied = cluster.udp(SERVICE, source=OUTSIDE)
    testing.expect_equal((denied.rcode, denied.aa, denied.ancount), ("NOTAUTH", False, 0),
                         "outside the ACL")
    testing.expect_equal(_k8s_answers(cluster), before, "mod-k8s answers after a denied query")


# mod-cookies: a stub without cookies (glibc, musl) is answered as before; a client sending
# its cookie gets a server cookie (first as BADCOOKIE over UDP, which kdig retries with).
@tests.case
def cookies_are_added_without_changing_answers(cluster):
    plain = cluster.udp(SERVICE)
    testing.expect_equal((plain.rcode, plain.ancount, plain.cookie), ("NOERROR", 1, None),
                         "query without a cookie")
    answer = dig.query(cluster.server, SERVICE, "A", extra=["+cookie"])
    testing.expect_equal((answer.rcode, {rr.rdata for rr in answer.answer}),
                         ("NOERROR", {"10.96.0.1"}), "kdig +cookie")
    match = re.search(r";; COOKIE: ([0-9A-F]+)", answer.text)
    testing.expect(match and len(match[1]) == 48, f"no server cookie in:\n{answer.text}")


# mod-rrl: a pod flooding one name is slipped (TC) or dropped past 10 answers a second;
# another node's pods and the node itself (whitelisted) are answered meanwhile.
@tests.case
def rrl_limits_a_flooding_pod_only(cluster):
    before = cluster.global_stats("mod-rrl")
    started = time.monotonic()
    flood = wire.burst((cluster.address, cluster.port), SERVICE, count=200, source=FLOODING_POD)
    elapsed = time.monotonic() - started
    full = [r for r in flood if not r.tc]
    # 10 a second over the burst's own duration (longer under sanitizers), plus a bucket's worth.
    allowed = min(int(10 * (elapsed + 1)) + 40, 120)
    testing.expect(len(full) < allowed,
                   f"{len(full)} of 200 flooding queries answered in full in {elapsed:.1f} s")
    testing.expect(any(r.tc for r in flood), "no slipped (TC) answer to the flood")
    after = cluster.global_stats("mod-rrl")
    limited = sum(after.get(k, 0) - before.get(k, 0) for k in ("slipped", "dropped"))
    testing.expect(limited >= 200 - len(full) - 20, f"mod-rrl counted {limited} limited answers")
    for source in (OTHER_POD, NODE):
        reply = cluster.udp(SERVICE, source=source)
        testing.expect_equal((reply.rcode, reply.tc, reply.ancount), ("NOERROR", False, 1),
                             f"answer to {source} during the flood")


# mod-cookies + mod-rrl: answers with a valid server cookie are exempt from rate limiting
# (the source address is proven), so a pod that does cookies is never slipped.
@tests.case
def rrl_spares_a_pod_with_a_valid_cookie(cluster):
    client = wire.client_cookie()
    first = cluster.udp(SERVICE, source=COOKIE_POD, cookie=client)
    testing.expect_equal(first.rcode, "BADCOOKIE", "first query with only a client cookie")
    testing.expect(first.cookie and len(first.cookie) == 24, f"server cookie {first.cookie!r}")
    replies = wire.burst((cluster.address, cluster.port), SERVICE, count=100, source=COOKIE_POD,
                         cookie=first.cookie)
    testing.expect_equal(sum(1 for r in replies if r.rcode == "NOERROR" and not r.tc), 100,
                         "answers in full to 100 queries with a valid cookie")


# mod-stats, last: counts what was sent, after mod-rrl and mod-queryacl decided.
@tests.case
def stats_counts_rcodes_of_mod_k8s_and_of_the_other_modules(cluster):
    before = cluster.global_stats("mod-stats")
    cluster.udp(SERVICE)
    cluster.udp(MISSING)
    cluster.udp(SERVICE, source=OUTSIDE)
    after = cluster.global_stats("mod-stats")
    for rcode in ("NOERROR", "NXDOMAIN", "NOTAUTH"):
        key = f"response-code[{rcode}]"
        testing.expect_equal(after.get(key, 0) - before.get(key, 0), 1, key)
    testing.expect(after.get("response-code[BADCOOKIE]", 0) >= 1, "BADCOOKIE not counted")


# mod-dnstap: every query and answer, also the refused ones, logged to a file, read back
# by kdig -G. knotd writes the file out when it stops, so this test stops it (last).
@tests.case
def dnstap_logs_queries_and_answers_to_a_file(cluster):
    if cluster.tap is None:
        raise testing.Skip("Debian package knot-module-dnstap is not installed")
    for qname, source in ((SERVICE, OTHER_POD), (MISSING, NODE), (SERVICE, OUTSIDE)):
        cluster.udp(qname, source=source)
    cluster.server.stop()
    result = subprocess.run(["kdig", "-G", cluster.tap], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, check=False)
    logged = set()
    for block in result.stdout.split(";; ->>HEADER<<-")[1:]:
        answer = dig.Answer(["kdig", "-G"], ";; ->>HEADER<<-" + block)
        client = re.search(r";; To (\S+)@\d+\(UDP\)", block)
        question = re.search(r";; (\S+)\s+IN\s+(\S+)", block)
        logged.add((client and client[1], question and question[1].lower(), answer.rcode))
    for expected in ((OTHER_POD, SERVICE, "NOERROR"), (NODE, MISSING, "NXDOMAIN"),
                     (OUTSIDE, SERVICE, "NOTAUTH")):
        testing.expect(expected in logged, f"{expected} not in the dnstap log:\n{result.stdout}")


# The zone-scoped form: `module: [ mod-queryacl/pods, mod-k8s/default, mod-stats ]`.
tests.fixture(lambda: ZoneChain(), "zone-scoped modules")


class ZoneChain(GlobalChain):
    def __init__(self):  # pylint: disable=super-init-not-called
        self.tap_dir = tempfile.mkdtemp(prefix="mod-k8s-dnstap-")
        self.tap = None
        Cluster.__init__(self, zones={"cluster.local.": "[ mod-queryacl/pods, mod-k8s/default, "
                                                        "mod-stats ]"},
                         extra=MODULES)


@tests.case
def zone_queryacl_and_stats_around_mod_k8s(cluster):
    testing.expect_equal(cluster.udp(SERVICE, source=OTHER_POD).rcode, "NOERROR", "pod CIDR")
    testing.expect_equal(cluster.udp(SERVICE, source=OUTSIDE).rcode, "NOTAUTH", "outside the ACL")
    counters = {}
    for line in cluster.knotc("zone-stats", "cluster.local.", "mod-stats").stdout.splitlines():
        match = re.match(r"^\[cluster\.local\.\] mod-stats\.(\S+) = (\d+)$", line.strip())
        if match:
            counters[match[1]] = int(match[2])
    testing.expect(counters.get("response-code[NOTAUTH]") == 1, f"zone counters {counters}")
    testing.expect(counters.get("response-code[NOERROR]", 0) >= 2, f"zone counters {counters}")


if __name__ == "__main__":
    tests.main(fixture=GlobalChain)
