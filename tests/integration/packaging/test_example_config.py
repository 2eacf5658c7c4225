"""knot.conf.example (packaging/kubernetes/knot.conf) is a working deployment config.

It runs here as written, with the zone files of packaging/kubernetes/zones, except
for what only a pod has: its listen address, directories and the node resolver are
pointed at a test directory, a free port and a second knotd that plays the upstream
resolver.
"""

import contextlib
import os
import re

import dig
import knotd
import testing
from knotd import Knotd

EXAMPLE = os.path.join(knotd.find_build().srcdir, "knot.conf.example")
# The zone files the ConfigMap ships (read only: the example never writes them).
ZONES = os.path.join(knotd.find_build().srcdir, "packaging", "kubernetes", "zones")

tests = testing.Tests()


def example_text():
    with open(EXAMPLE, encoding="utf-8") as f:
        return f.read()


def runnable_here(text, upstream, dead=None):
    """The example with the pod-only settings replaced (and nothing else). dead: a port
    where no resolver listens, listed first, as a node's resolv.conf may list one that
    is down (the init container writes every nameserver)."""
    upstreams = f"{upstream.address}@{upstream.port}"
    if dead is not None:
        upstreams = f"{upstream.address}@{dead}, {upstreams}"
    # (pattern, replacement, lines it must match): the database's and the zones' storage
    # are one directory, an emptyDir in the pod.
    replacements = [
        (r"(?m)^(\s*listen:).*$", r"\1 ${address}@${port}", 1),
        (r"(?m)^(\s*rundir:).*$", r"\1 ${dir}/run", 1),
        (r"(?m)^(\s*storage:) /var/lib/knot$", r"\1 ${dir}/storage", 2),
        (r"(?m)^(\s*file:) \"/etc/knot/%s\.zone\"$", rf'\1 "{ZONES}/%s.zone"', 1),
        (r"(?m)^(\s*forward:).*# @upstream$", rf"\1 [ {upstreams} ]", 1),
        # The metrics endpoint on a free loopback port, not the machine's 9153.
        (r"(?m)^(\s*metrics-listen:) \"::@9153\"$", rf"\1 127.0.0.1@{knotd.free_port()}", 1),
        (r"(?m)^(\s*lameduck-file:) /run/knot/lameduck$", r"\1 ${dir}/run/lameduck", 1),
    ]
    for pattern, replacement, lines in replacements:
        text, count = re.subn(pattern, replacement, text)
        testing.expect(count == lines, f"knot.conf.example: expected {lines} lines matching {pattern}")
    return text


@contextlib.contextmanager
def example_server(dead_first=False):
    if knotd.load_mode() == "file":
        raise testing.Skip("the example relies on auto-loading, and knotd cannot auto-load the build here")
    upstream_zones = {"example.": None, "8.8.8.8.in-addr.arpa.": None}
    extra = {"example.": "www A 192.0.2.80", "8.8.8.8.in-addr.arpa.": "@ PTR dns.google."}
    with Knotd(zones=upstream_zones, zone_extra=extra) as upstream:
        dead = knotd.free_port(upstream.address) if dead_first else None
        with Knotd(config=runnable_here(example_text(), upstream, dead)) as server:
            yield server


@tests.case
def knotc_conf_check_accepts_knot_conf_example(server):
    result = knotd.check_config(path=EXAMPLE)
    testing.expect(result.returncode == 0 and "Configuration is valid" in result.stdout,
                   f"knotc conf-check {EXAMPLE} failed:\n{result.stdout}")


tests.table("""
# Cluster zones are answered by mod-k8s (not synced here: Not Ready), never forwarded.
kubernetes.default.svc.cluster.local.  A    SERVFAIL ede=14
cluster.local.                         SOA  NOERROR aa ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5
ns.dns.cluster.local.                  A    NOERROR aa 10.96.0.10
ip6.arpa.                              NS   NOERROR aa ns.dns.cluster.local.
# Names in no served zone go to the node's resolver (mod-k8s as the global module).
www.example.                           A    NOERROR 192.0.2.80
www.example.                           A    NOERROR tcp 192.0.2.80
# A reverse name is not forwarded while mod-k8s is not synced. Once it syncs, one it does
# not know (NXDOMAIN) goes upstream: 8.8.8.8.in-addr.arpa. PTR NOERROR dns.google.
8.8.8.8.in-addr.arpa.                  PTR  SERVFAIL ede=14
""")

# The node's first resolver is down (nothing listens on its port), the second answers:
# mod-k8s's forwarder fails over on either Knot release (3.2's mod-dnsproxy did not).
tests.fixture(lambda: example_server(dead_first=True), "the node's first resolver is down")


@tests.case
def a_name_outside_the_zones_is_forwarded_to_the_next_resolver(server):
    reply = dig.query(server, "www.example.", "A", timeout=5)
    testing.expect(reply.rcode == "NOERROR" and "192.0.2.80" in reply.text,
                   f"Knot {knotd.knot_release()}: not forwarded to the second resolver:\n{reply.text}")


tests.main(fixture=example_server)
