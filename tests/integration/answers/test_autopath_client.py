#!/usr/bin/env python3
"""Autopath with a real client: glibc's resolver, both forms (issue 12).

A pod keeps the standard search list ("<ns>.svc.<zone>", "svc.<zone>",
"<zone>", the host's domains) with ndots:5, so a short name costs up to one
query per search domain. With `autopath: on` the server knows the pod by its
source address and walks the rest of the list itself, as CoreDNS's
`autopath @kubernetes` does; with the KEP's single search domain
`search.<ns>.<zone>.ap.k8s.io` it walks the same list for any client. Either
way every in-cluster name takes one query per address family, and a name
outside (below a host search domain, or the name itself) as well once the
upstream cache holds it.

The client is glibc (`getent ahostsv4`) in a private network namespace
(unshare -n -m): knotd listens on 127.0.0.1@53, /etc/resolv.conf is replaced
by a bind mount, and the pod address 10.244.0.10 (a pod of namespace shop in
the sample cluster) sits on lo as the source address of queries to 127.0.0.1
(it is also the non-loopback IPv4 address glibc's AI_ADDRCONFIG wants). The
queries knotd received are counted by its mod-stats module.
"""

import re
import subprocess
import tempfile
import time

import knotd
import netns
import testing
from cluster import Cluster

NETNS_MARK = "MODK8S_AUTOPATH_CLIENT_NETNS"
POD_IP = "10.244.0.10"  # web-7d9f8b6c5d-k8x2m, namespace shop

UPSTREAM_ZONES = {
    "example.org.": "www 300 A 192.0.2.80\n",
    "example.com.": "www 300 A 192.0.2.53\n",
    "corp.example.": "intranet 300 A 198.51.100.7\n",
}

STANDARD = ("search shop.svc.cluster.local svc.cluster.local cluster.local corp.example\n"
            "options ndots:5 attempts:1 timeout:2\n")
KEP = "search search.shop.cluster.local.ap.k8s.io\noptions ndots:5 attempts:1 timeout:2\n"

# name, its addresses, whether it is in the cluster (answered at once, never cold)
NAMES = [
    ("web", {"10.96.12.34"}, True),                             # same namespace
    ("kubernetes.default", {"10.96.0.1"}, True),                # another namespace
    ("postgres.db", {"10.244.0.20", "10.244.1.20"}, True),      # headless
    ("postgres-0.postgres.db", {"10.244.0.20"}, True),          # endpoint hostname
    ("external", {"192.0.2.53"}, True),                         # ExternalName
    ("intranet", {"198.51.100.7"}, False),                      # host search domain
    ("www.example.org", {"192.0.2.80"}, False),                 # the name itself, outside
]

tests = testing.Tests()


class Fixture(testing.Fixture):
    """Network, resolver files, an upstream knotd and the cluster's knotd on 127.0.0.1@53."""

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="mod-k8s-realclient-")
        netns.run("ip", "link", "set", "lo", "up")
        netns.run("ip", "addr", "add", f"{POD_IP}/32", "dev", "lo")
        # Queries to 127.0.0.1 leave from the pod's address, as from a pod to the DNS service.
        netns.run("ip", "route", "replace", "local", "127.0.0.1", "dev", "lo", "table", "local",
                  "proto", "kernel", "scope", "host", "src", POD_IP)
        self.resolv = netns.resolver_files(self.dir, STANDARD)

        self.upstream = self.enter_context(knotd.Knotd(zones={z: None for z in UPSTREAM_ZONES},
                                                       zone_extra=UPSTREAM_ZONES))
        self.cluster = self.enter_context(Cluster(
            zones=("cluster.local.", "ap.k8s.io."), port=53,
            module={"upstream": f"127.0.0.1@{self.upstream.port}", "autopath": True,
                    "autopath-host-search": ["corp.example"]},
            extra="mod-stats:\n  - id: default\n    query-type: on",
            template={"global-module": "mod-stats/default"}))
        return self

    def search(self, text):
        """Rewrites the bind-mounted resolv.conf in place."""
        with open(self.resolv, "w", encoding="utf-8") as f:
            f.write(text)

    def a_queries(self):
        """A queries knotd has received (mod-stats)."""
        out = self.cluster.knotc("stats", "mod-stats").stdout
        match = re.search(r"mod-stats\.query-type\[A\] = (\d+)", out)
        return int(match.group(1)) if match else 0


def getent(name):
    """Addresses glibc's getaddrinfo (AF_INET) finds for name; None if it fails."""
    result = subprocess.run(["getent", "ahostsv4", name], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, timeout=30, check=False)
    if result.returncode != 0:
        return None
    return {line.split()[0] for line in result.stdout.splitlines() if line.strip()}


def resolve_in_one_query(fx, name, addresses, in_cluster):
    """Looks name up; once warm, expects its addresses from exactly one A query."""
    if not in_cluster:
        # A cold outside name is NXDOMAIN while it is resolved in the background.
        deadline = time.monotonic() + 10
        while getent(name) != addresses and time.monotonic() < deadline:
            time.sleep(0.2)
    before = fx.a_queries()
    got = getent(name)
    after = fx.a_queries()
    testing.expect_equal(got, addresses, f"{name}: addresses")
    testing.expect_equal(after - before, 1, f"{name}: A queries knotd received")


def register(form, text):
    for name, addresses, in_cluster in NAMES:
        def case(fx, name=name, addresses=addresses, in_cluster=in_cluster):
            fx.search(text)
            resolve_in_one_query(fx, name, addresses, in_cluster)
        tests.add(f"{form}: {name} resolves in one query", case)


register("standard search list, autopath on", STANDARD)
register("KEP search domain", KEP)


@tests.case
def the_walks_are_counted_by_outcome(fx):
    stats = fx.cluster.stats()
    testing.expect(stats.get("autopath[expanded]", 0) > 0, f"expanded counted: {stats}")
    testing.expect(stats.get("autopath[hit-svc]", 0) > 0, f"hit-svc counted: {stats}")
    testing.expect(stats.get("autopath[hit-name]", 0) > 0, f"hit-name counted: {stats}")
    testing.expect(stats.get("autopath[hit-host]", 0) > 0, f"hit-host counted: {stats}")


netns.main(tests, Fixture, NETNS_MARK)
