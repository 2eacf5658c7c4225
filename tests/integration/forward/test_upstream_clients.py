#!/usr/bin/env python3
# run alone: answers timed against a client's 2 s timeout
"""Names outside the zones through the forwarders, asked as pods ask (issue 33).

Without the `upstream` option, the module's upstream resolver (ExternalName
targets, autopath's outside names) asks the instance's `forward` servers, in
order with failover, as the shipped deployment configures them: an
ExternalName to an outside host answers its CNAME and the target's addresses
in one response, on the first query (the cold waiter answers it late, once
resolved). An upstream's REFUSED or SERVFAIL is definitive: the answer goes
out at once, not at the cold waiter's 2 s deadline. In the KEP autopath form
a walk whose outside step fails ends NXDOMAIN, so that a pod with timeout:2
goes on to its next search domain, with glibc and with musl (which stops the
search list at SERVFAIL).

The clients are glibc's `getent` and a musl getaddrinfo client (built here with
musl-gcc) in a private network and mount namespace (unshare -n -m): knotd on
127.0.0.1@53, /etc/resolv.conf bind-mounted. The upstream is a stub the test
controls (stubdns.py): every name has A 192.0.2.<n> and AAAA 2001:db8::<n>, the
names of `rcodes` get that RCODE.
"""

import os
import shutil
import subprocess
import tempfile
import time

import knotd
import netns
import stubdns
import testing
from cluster import Cluster
from faults import external_name_service, log_lines, log_mark

NETNS_MARK = "MODK8S_UPSTREAM_CLIENTS_NETNS"
REFUSED, SERVFAIL = 5, 2
# A client gives up after its timeout:2; the waiter's deadline is 2 s: well below both.
FAST = 0.5
KEP = ("search search.shop.cluster.local.ap.k8s.io example.org\n"
       "options timeout:2 attempts:1\n")
SERVICES = "search default.svc.cluster.local svc.cluster.local cluster.local\n" \
           "options timeout:2 attempts:1\n"

tests = testing.Tests()


def stub_addresses(name):
    """What the stub answers for name: its A and AAAA."""
    n = stubdns._number(name)
    return {f"192.0.2.{n}", f"2001:db8::{n:x}"}


class Fixture(testing.Fixture):
    """A stub upstream and a cluster (cluster zone, KEP autopath zone) with `forward`, no
    `upstream`, on 127.0.0.1@53; the resolver files bind-mounted; the musl client."""

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="mod-k8s-upclients-")
        self.callback(shutil.rmtree, self.dir, ignore_errors=True)
        self.up = None
        self.cluster = None
        netns.run("ip", "link", "set", "lo", "up")
        self.resolv = netns.resolver_files(self.dir, SERVICES)
        self.musl = self._build_musl()
        self.up = self.enter_context(stubdns.StubDNS())
        self.cluster = self.enter_context(Cluster(
            zones=("cluster.local.", "ap.k8s.io."), port=53,
            module={"forward": [self.up.address]},
            template={"global-module": "mod-k8s/default"}))
        return self

    def is_running(self):
        return self.cluster is not None and self.cluster.is_running()

    def log_text(self):
        return self.cluster.log_text() if self.cluster else ""

    def _build_musl(self):
        """The musl client, or why there is none."""
        if shutil.which("musl-gcc") is None:
            return None
        source = os.path.join(knotd.find_build().srcdir, "tests", "lib", "getent_hosts.c")
        out = os.path.join(self.dir, "getent-musl")
        subprocess.run(["musl-gcc", "-static", "-O1", "-o", out, source], check=True)
        return out

    def search(self, text):
        """Rewrites the bind-mounted resolv.conf in place."""
        with open(self.resolv, "w", encoding="utf-8") as f:
            f.write(text)

    def externalname(self, svc, target):
        """An ExternalName service in default, once the table holds it (no upstream asked)."""
        self.cluster.sim.apply(external_name_service("default", svc, target))
        name = f"{svc}.default.svc.cluster.local."
        self.cluster.expect_answer(name, "TXT", "NOERROR", timeout=10)
        return name


def client(argv):
    """(addresses, seconds) of a getent-like client; addresses None if it failed."""
    start = time.monotonic()
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            timeout=30, check=False)
    took = time.monotonic() - start
    if result.returncode != 0:
        return None, took
    return {line.split()[0] for line in result.stdout.splitlines() if line.strip()}, took


def glibc(name):
    return client(["getent", "hosts", name])


def musl(fx, name):
    if fx.musl is None:
        raise testing.Skip("musl-gcc not found: no musl client")
    return client([fx.musl, "hosts", name])


def timed(fx, name, qtype="A"):
    start = time.monotonic()
    answer = fx.cluster.query(name, qtype, edns=True, timeout=5)
    return answer, time.monotonic() - start


def records(answer):
    return {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}


# -- 1. an ExternalName to an outside host, through the forwarders


@tests.case
def an_externalname_answers_its_cname_and_the_targets_address_on_the_first_query(fx):
    name = fx.externalname("ext", "www.example.org")
    answer, took = timed(fx, name)
    testing.expect_equal(answer.rcode, "NOERROR", f"rcode: {answer.summary()}")
    a = {x for x in stub_addresses("www.example.org.") if "." in x}.pop()
    testing.expect_equal(records(answer), {(name, "CNAME", "www.example.org."),
                                           ("www.example.org.", "A", a)}, "answer")
    testing.expect(took < FAST, f"first query took {took:.3f} s")
    testing.expect(("www.example.org.", 1) in fx.up.names(), "the forward server was not asked")


@tests.case
def glibc_resolves_an_externalname_to_an_outside_host(fx):
    name = fx.externalname("ext-glibc", "app.example.net")
    fx.search(SERVICES)
    got, took = glibc(name)
    testing.expect(got is not None and got <= stub_addresses("app.example.net.") and got,
                   f"glibc: {got}")
    testing.expect(took < 2, f"glibc took {took:.3f} s")


@tests.case
def musl_resolves_an_externalname_to_an_outside_host(fx):
    name = fx.externalname("ext-musl", "api.example.net")
    fx.search(SERVICES)
    got, took = musl(fx, name)
    testing.expect(got is not None and got <= stub_addresses("api.example.net.") and got,
                   f"musl: {got}")
    testing.expect(took < 2, f"musl took {took:.3f} s")


# -- 2. a definitive answer ends the wait at once


@tests.case
def an_externalname_whose_target_is_refused_answers_its_cname_alone_at_once(fx):
    fx.up.rcodes["refused.example.net."] = REFUSED
    name = fx.externalname("ext-refused", "refused.example.net")
    answer, took = timed(fx, name)
    testing.expect_equal(answer.rcode, "NOERROR", f"rcode: {answer.summary()}")
    testing.expect_equal(records(answer), {(name, "CNAME", "refused.example.net.")}, "answer")
    testing.expect(took < FAST, f"answered after {took:.3f} s, not at once")


def walk_ends_at_once(rcode, word):
    def case(fx):
        fx.up.rcodes[f"{word}."] = rcode
        answer, took = timed(fx, f"{word}.search.shop.cluster.local.ap.k8s.io.")
        testing.expect_equal(answer.rcode, "NXDOMAIN", f"rcode: {answer.summary()}")
        testing.expect(took < FAST, f"the walk answered after {took:.3f} s, not at once")
        testing.expect((f"{word}.", 1) in fx.up.names(), "the outside step was not asked")
    return case


def kep_client_goes_on(rcode, word, libc):
    def case(fx):
        fx.up.rcodes[f"{word}."] = rcode
        fx.search(KEP)
        got, took = glibc(word) if libc == "glibc" else musl(fx, word)
        testing.expect(got is not None and got <= stub_addresses(f"{word}.example.org.") and got,
                       f"{libc}: {word} -> {got} (after {took:.3f} s)")
        testing.expect(took < 2, f"{libc} took {took:.3f} s")
    return case


for rcode, text, words in ((REFUSED, "REFUSED", ("gone", "www", "shopfront")),
                           (SERVFAIL, "SERVFAIL", ("broken", "news", "blog"))):
    tests.add(f"a walk whose outside step gets {text} ends NXDOMAIN at once",
              walk_ends_at_once(rcode, words[0]))
    tests.add(f"KEP form, {text} outside: glibc goes on to the next search domain",
              kep_client_goes_on(rcode, words[1], "glibc"))
    tests.add(f"KEP form, {text} outside: musl goes on to the next search domain",
              kep_client_goes_on(rcode, words[2], "musl"))


@tests.case
def a_reload_keeps_the_watcher_its_resolver_and_the_forwarders(fx):
    # Every zone's watcher settings hold the same forwarder: they still share one watcher.
    name = fx.externalname("ext-reload", "reload.example.net")
    answer, _ = timed(fx, name)
    testing.expect_equal(len(answer.answer), 2, f"before: {answer.summary()}")
    mark = log_mark(fx.cluster.server)
    fx.cluster.server.reload()
    time.sleep(1)
    testing.expect_equal(log_lines(fx.cluster.server, "watching the API server", mark), [],
                         "log lines of a new watcher")
    answer, _ = timed(fx, name)
    testing.expect_equal(records(answer), {
        (name, "CNAME", "reload.example.net."),
        ("reload.example.net.", "A", {x for x in stub_addresses("reload.example.net.")
                                      if "." in x}.pop())}, "after the reload")


netns.main(tests, Fixture, NETNS_MARK)
