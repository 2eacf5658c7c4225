#!/usr/bin/env python3
"""metrics-listen "::@PORT" serves both families (doc/mod-k8s.rst, metrics-listen; issue 39,
item 3): packaging/kubernetes listens so, since the kubelet probes a pod at its first
family's address, IPv6 in an IPv6-only cluster, where 0.0.0.0 was never reached and the
pods never became Ready (found in tests/realcluster/dualstack's IPv6-only cluster).
"""

import socket
import urllib.request

import knotd
import testing
from cluster import Cluster

tests = testing.Tests()
HTTP_PORT = knotd.free_port()


def status(host):
    with urllib.request.urlopen(f"http://{host}:{HTTP_PORT}/health", timeout=3) as r:
        return r.status


def has_ipv6():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@tests.case
def the_ipv6_wildcard_answers_over_ipv4_and_over_ipv6(c):
    testing.expect_equal(status("127.0.0.1"), 200, "/health over IPv4 (127.0.0.1)")
    if not has_ipv6():
        raise testing.Skip("no IPv6 on this machine's loopback")
    testing.expect_equal(status("[::1]"), 200, "/health over IPv6 ([::1])")


tests.main(fixture=lambda: Cluster(module={"metrics-listen": f"::@{HTTP_PORT}"}))
