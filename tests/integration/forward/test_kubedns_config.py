#!/usr/bin/env python3
"""kube-dns's ConfigMap (`upstreamNameservers`, `stubDomains`) read by mod-k8s's
forwarder from where the pod mounts it (option kube-dns-config), in the shipped
deployment, against stub upstreams the test controls (tests/lib/stubdns.py).

As kube-dns: upstreamNameservers replaces the resolvers of resolv.conf (the forward
option), stubDomains sends a domain to its own servers ("IP" or "IP:port"); a change of
the files is applied without a restart (the kubelet swaps the mounted files whole), and
a file that is not valid keeps the settings in force, with a log line saying why.
"""

import json
import os
import re
import tempfile

import shipped
import stubdns
import testing
from faults import external_name_service

tests = testing.Tests()


def asked(stub, name):
    return sum(1 for n, _ in stub.names() if n == name)


def write(directory, name, value):
    """As the kubelet updates a mounted ConfigMap: the new file replaces the old whole."""
    text = value if isinstance(value, str) else json.dumps(value)
    tmp = os.path.join(directory, f".{name}.new")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.rename(tmp, os.path.join(directory, name))


def answered_by(c, stub, name):
    answer = c.query(name)
    testing.expect(answer.rcode == "NOERROR" and answer.answer, f"{name}: {answer.summary()}")
    testing.expect(asked(stub, name) == 1, f"{name} not asked of the expected upstream")


@tests.case
def a_bad_configmap_leaves_the_options_then_a_good_one_routes_changes_apply_bad_json_keeps_the_last():
    with stubdns.StubDNS() as resolv, stubdns.StubDNS() as upstream, \
            stubdns.StubDNS() as corp, tempfile.TemporaryDirectory() as cm:
        write(cm, "upstreamNameservers", [f"127.0.0.1:{upstream.port}"])
        write(cm, "stubDomains", {"corp.example": ["not-an-address"]})
        with shipped.deployment([resolv.address], kube_dns_config=cm) as c:
            # Not valid at start: the options alone (knot.conf's forward), and a line why.
            answered_by(c, resolv, "first.corp.example.")
            testing.expect(re.search(r"not applied, the forwarder keeps its settings \(stubDomains: "
                                     r"corp\.example: 'not-an-address' is no IP address",
                                     c.log_text()), "no log line")

            # Valid: upstreamNameservers replaces resolv.conf's servers; stubDomains adds a domain.
            write(cm, "stubDomains", {"corp.example": [f"127.0.0.1:{corp.port}"]})
            testing.eventually(lambda: testing.expect(
                c.log_text().count("kube-dns-config %s applied" % cm) == 1, "not applied"), timeout=5)
            answered_by(c, upstream, "www.example.net.")
            answered_by(c, corp, "host.corp.example.")
            testing.expect(asked(resolv, "www.example.net.") == 0, "resolv.conf's server asked")

            # The ConfigMap changes: no upstreamNameservers (resolv.conf's again), another domain.
            write(cm, "upstreamNameservers", [])
            write(cm, "stubDomains", {"lab.example": [f"127.0.0.1:{corp.port}"]})
            testing.eventually(lambda: testing.expect(
                c.log_text().count("kube-dns-config %s applied" % cm) == 2, "change not applied"),
                timeout=5)
            answered_by(c, resolv, "www2.example.net.")
            answered_by(c, corp, "host.lab.example.")
            answered_by(c, resolv, "other.corp.example.")  # No longer a stub domain.
            testing.expect(asked(upstream, "www2.example.net.") == 0, "the old upstream asked")

            # Not valid: logged, the settings in force stay.
            write(cm, "stubDomains", '{"lab.example": ["127.0.0.1:%d"' % corp.port)
            testing.eventually(lambda: testing.expect(
                re.search(r"kube-dns-config \S+ not applied, the forwarder keeps its settings "
                          r"\(stubDomains: bad JSON", c.log_text()), "no log line"), timeout=5)
            answered_by(c, corp, "again.lab.example.")
            write(cm, "upstreamNameservers", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"])
            testing.eventually(lambda: testing.expect(
                "upstreamNameservers: more than 3 addresses" in c.log_text(), "no log line"),
                timeout=5)
            answered_by(c, resolv, "www3.example.net.")
            testing.expect(c.log_text().count("applied (") == 2, "a bad file was applied")


@tests.case
def externalname_targets_follow_the_configmaps_upstream_nameservers_and_stub_domains():
    with stubdns.StubDNS() as resolv, stubdns.StubDNS() as upstream, \
            stubdns.StubDNS() as corp, tempfile.TemporaryDirectory() as cm:
        write(cm, "upstreamNameservers", [f"127.0.0.1:{upstream.port}"])
        write(cm, "stubDomains", {"corp.example": [f"127.0.0.1:{corp.port}"]})
        with shipped.deployment([resolv.address], kube_dns_config=cm) as c:
            for svc, target, stub in (("outside", "www.example.net", upstream),
                                      ("intranet", "app.corp.example", corp)):
                c.sim.apply(external_name_service("default", svc, target))
                name = f"{svc}.default.svc.cluster.local."
                c.expect_answer(name, "TXT", "NOERROR", timeout=10)
                answer = c.query(name, "A", edns=True, timeout=5)
                testing.expect_equal({rr.type for rr in answer.answer}, {"CNAME", "A"},
                                     f"{name}: {answer.summary()}")
                testing.expect(asked(stub, f"{target}.") >= 1, f"{target} not asked of its upstream")
                testing.expect(asked(resolv, f"{target}.") == 0, f"{target} asked of resolv.conf's")

            # The ConfigMap changes: resolv.conf's servers again, for the next names asked.
            write(cm, "upstreamNameservers", [])
            testing.eventually(lambda: testing.expect(
                c.log_text().count("kube-dns-config %s applied" % cm) == 1, "change not applied"),
                timeout=5)
            c.sim.apply(external_name_service("default", "later", "later.example.net"))
            c.expect_answer("later.default.svc.cluster.local.", "TXT", "NOERROR", timeout=10)
            answer = c.query("later.default.svc.cluster.local.", "A", edns=True, timeout=5)
            testing.expect_equal({rr.type for rr in answer.answer}, {"CNAME", "A"}, answer.summary())
            testing.expect(asked(resolv, "later.example.net.") >= 1, "resolv.conf's server not asked")
            testing.expect(asked(upstream, "later.example.net.") == 0, "the old upstream asked")


tests.main()
