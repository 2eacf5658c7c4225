#!/usr/bin/env python3
"""A late answer reaches glibc's resolver on a wildcard listener (issue 33, item 3).

knotd listens on 0.0.0.0@53 (as in a pod, or for node-local DNS), the client's
resolv.conf names 127.0.0.7, another of the host's addresses. glibc connects its UDP
socket to the server it asks and drops an answer from any other address; a name not
cached is answered late, by the forwarder thread from knotd's socket, so that answer
must leave from 127.0.0.7 (IP_PKTINFO), not from the kernel's choice (127.0.0.1). So
must the cold waiter's late answers (an ExternalName's target not cached yet).

The file runs itself in a private network and mount namespace (unshare -n -m): port 53
is its own, /etc/resolv.conf and /etc/nsswitch.conf are bind mounts. Knot 3.3 or later
(Knot 3.2 does not tell modules the address a query was sent to).
"""

import random
import subprocess
import tempfile
import time

import faults
import knotd
import netns
import shipped
import stubdns
import testing
import wire

NETNS_MARK = "MODK8S_LATE_SOURCE_NETNS"
ASKED = "127.0.0.7"

tests = testing.Tests()


def _skip_reason():
    if knotd.knot_release() == "3.2":
        return ("Knot 3.2 gives modules the query's local address only by getsockname() "
                "(0.0.0.0 on a wildcard listener): knotd_qdata_params_t.local is Knot 3.3+")
    return netns.enter(NETNS_MARK, tools=("unshare", "ip", "mount", "getent"))


def getent_hosts(name):
    """The first address glibc's `getent hosts` finds for name, None if it fails."""
    result = subprocess.run(["getent", "hosts", name], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, timeout=30, check=False)
    return result.stdout.split()[0] if result.returncode == 0 and result.stdout else None


class Fixture:
    """lo up, the resolver files bind-mounted, an upstream, the shipped deployment on
    0.0.0.0@53."""

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="mod-k8s-late-source-")
        netns.run("ip", "link", "set", "lo", "up")
        netns.bind(self.tmp, "/etc/resolv.conf", f"nameserver {ASKED}\noptions timeout:2 attempts:1\n")
        netns.bind(self.tmp, "/etc/nsswitch.conf", "hosts: dns\n")
        self.up = stubdns.StubDNS().__enter__()
        try:
            self.cm = shipped.deployment([self.up.address], listen="0.0.0.0", port=53)
            self.cluster = self.cm.__enter__()
        except BaseException:
            self.up.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.cm.__exit__(*exc)
        finally:
            self.up.__exit__(*exc)
        return False


SKIP_REASON = _skip_reason()


def fixture():
    if SKIP_REASON:
        raise testing.Skip(SKIP_REASON)
    return Fixture()


@tests.case
def glibc_asking_another_local_address_resolves_a_cold_outside_name_on_its_first_try(fx):
    name = f"cold{random.randrange(1 << 30)}.example.com"
    got = getent_hosts(name)
    testing.expect(got is not None and (got.startswith("2001:db8::") or got.startswith("192.0.2.")),
                   f"getent hosts {name}: {got}")


def cold_externalname(fx, svc):
    """An ExternalName service to a name the upstream was never asked: its A and AAAA
    are cold, answered late by the zone's cold waiter."""
    target = f"{svc}.example.net"
    fx.cluster.sim.apply(faults.external_name_service("default", svc, target))
    name = f"{svc}.default.svc.cluster.local."
    # A TXT query needs no upstream: the CNAME alone shows the service is in the table.
    fx.cluster.expect_answer(name, "TXT", "NOERROR", timeout=10)
    return name


def late_count(fx):
    return fx.cluster.stats("cluster.local.").get("queries[late]", 0)


@tests.case
def glibc_asking_another_local_address_resolves_a_cold_externalname_target_on_its_first_try(fx):
    name = cold_externalname(fx, f"late{random.randrange(1 << 30)}")
    before = late_count(fx)
    start = time.monotonic()
    got = getent_hosts(name.rstrip("."))
    took = time.monotonic() - start
    testing.expect(got is not None and (got.startswith("2001:db8::") or got.startswith("192.0.2.")),
                   f"getent hosts {name}: {got}")
    # A late answer dropped would cost glibc its 2 s timeout before a warm retry.
    testing.expect(took < 1.5, f"getent hosts {name} took {took:.2f} s: not its first try")
    testing.expect(late_count(fx) > before, "no query answered late (queries[late])")


@tests.case
def a_client_connected_to_another_local_address_gets_a_cold_externalname_target_late(fx):
    name = cold_externalname(fx, f"conn{random.randrange(1 << 30)}")
    before = late_count(fx)
    # The socket connected to 127.0.0.7 takes only answers from there.
    reply = wire.exchange((ASKED, 53), wire.query(name, "A", ident=7), timeout=5)
    testing.expect(reply is not None, f"{name}: no answer from {ASKED}")
    testing.expect_equal((reply.rcode, reply.ancount), ("NOERROR", 2),
                         f"{name}: the CNAME and the target's address")
    testing.expect(late_count(fx) > before, "not answered late (queries[late])")


tests.main(fixture=fixture)
