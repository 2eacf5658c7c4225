#!/usr/bin/env python3
"""A late answer reaches glibc's resolver on a wildcard listener (issue 33, item 3).

knotd listens on 0.0.0.0@53 (as in a pod, or for node-local DNS), the client's
resolv.conf names 127.0.0.7, another of the host's addresses. glibc connects its UDP
socket to the server it asks and drops an answer from any other address; a name not
cached is answered late, by the forwarder thread from knotd's socket, so that answer
must leave from 127.0.0.7 (IP_PKTINFO), not from the kernel's choice (127.0.0.1).

The file runs itself in a private network and mount namespace (unshare -n -m): port 53
is its own, /etc/resolv.conf and /etc/nsswitch.conf are bind mounts. Knot 3.3 or later
(Knot 3.2 does not tell modules the address a query was sent to).
"""

import random
import subprocess
import tempfile

import knotd
import netns
import shipped
import stubdns
import testing

NETNS_MARK = "MODK8S_LATE_SOURCE_NETNS"
ASKED = "127.0.0.7"

tests = testing.Tests()


def _skip_reason():
    if knotd.knot_release() == "3.2":
        return ("Knot 3.2 gives modules the query's local address only by getsockname() "
                "(0.0.0.0 on a wildcard listener): knotd_qdata_params_t.local is Knot 3.3+")
    return ""


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


@tests.case
def glibc_asking_another_local_address_resolves_a_cold_outside_name_on_its_first_try(fx):
    name = f"cold{random.randrange(1 << 30)}.example.com"
    got = getent_hosts(name)
    testing.expect(got is not None and (got.startswith("2001:db8::") or got.startswith("192.0.2.")),
                   f"getent hosts {name}: {got}")


netns.main(tests, Fixture, NETNS_MARK, reason=_skip_reason())
