#!/usr/bin/env python3
"""kube-dns's ConfigMap (`upstreamNameservers`, `stubDomains`) read by mod-k8s's
forwarder from where the pod mounts it (option kube-dns-config), in the shipped
deployment, against stub upstreams the test controls (tests/lib/stubdns.py).

As kube-dns: upstreamNameservers replaces the resolvers of resolv.conf (the forward
option), stubDomains sends a domain to its own servers ("IP" or "IP:port"); a change of
the files is applied without a restart (the kubelet swaps the mounted files whole), and
a file that is not valid keeps the settings in force, with a log line saying why.

The ConfigMap is read through the API too (the Role of packaging/kubernetes/rbac.yaml): a
change is applied within about a second, where the kubelet's update of the mounted files
takes up to a minute or more; where the API does not have it (no such ConfigMap) or
forbids it (no RBAC for it), the mounted files are read as before.
"""

import json
import os
import re
import tempfile
import time

import cluster
import knotd
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


def kube_dns(data):
    """kube-dns's ConfigMap: each key's value a JSON text, as kubectl --from-literal writes it."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kube-dns", "namespace": "kube-system"},
            "data": {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}}


def applied(c, source, count, timeout=5):
    testing.eventually(lambda: testing.expect_equal(
        c.log_text().count(f"kube-dns-config {source} applied"), count, "applied"), timeout=timeout)


API = "kube-system/kube-dns (the API)"


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


@tests.case
def the_configmap_through_the_api_applies_within_a_second_the_files_where_it_has_none():
    with stubdns.StubDNS() as resolv, stubdns.StubDNS() as files, stubdns.StubDNS() as upstream, \
            stubdns.StubDNS() as corp, tempfile.TemporaryDirectory() as cm:
        write(cm, "upstreamNameservers", [f"127.0.0.1:{files.port}"])
        with shipped.deployment([resolv.address], kube_dns_config=cm) as c:
            # No such ConfigMap in the API: the mounted files.
            answered_by(c, files, "first.example.net.")

            # Created: read through the API (a watch of that one ConfigMap), applied at the
            # next look (once a second), not at the kubelet's sync of the mount.
            started = time.monotonic()
            c.sim.apply(kube_dns({"upstreamNameservers": [f"127.0.0.1:{upstream.port}"],
                                  "stubDomains": {"corp.example": [f"127.0.0.1:{corp.port}"]}}))
            applied(c, API, 1)
            took = time.monotonic() - started
            print(f"# the ConfigMap's settings applied {took:.1f} s after its creation")
            testing.expect(took < 3, f"applied after {took:.1f} s")
            answered_by(c, upstream, "www.example.net.")
            answered_by(c, corp, "host.corp.example.")
            cm_requests = [r for r in c.sim.requests() if r["resource"] == "configmaps"]
            testing.expect(cm_requests and all(
                r["path"] == "/api/v1/namespaces/kube-system/configmaps"
                and "metadata.name%3Dkube-dns" in r["query"] for r in cm_requests), cm_requests)

            # Changed: the new domain; a key of another name changes nothing.
            c.sim.apply(kube_dns({"upstreamNameservers": [f"127.0.0.1:{upstream.port}"],
                                  "stubDomains": {"lab.example": [f"127.0.0.1:{corp.port}"]}}))
            applied(c, API, 2)
            answered_by(c, corp, "host.lab.example.")
            answered_by(c, upstream, "other.corp.example.")
            c.sim.apply(kube_dns({"upstreamNameservers": [f"127.0.0.1:{upstream.port}"],
                                  "stubDomains": {"lab.example": [f"127.0.0.1:{corp.port}"]},
                                  "other": "x"}))
            time.sleep(2.5)
            testing.expect_equal(c.log_text().count(f"kube-dns-config {API} applied"), 2,
                                 "an unchanged setting applied again")
            # A reload (new instances, a new watcher): the API's settings stay, the files
            # (which say otherwise) are not taken in between.
            c.server.reload()
            time.sleep(2.5)
            answered_by(c, corp, "reloaded.lab.example.")
            testing.expect_equal(c.log_text().count(f"kube-dns-config {cm} applied"), 0,
                                 "the files applied at the reload")

            # Not valid: the settings in force stay, with the reason.
            c.sim.apply(kube_dns({"stubDomains": '{"lab.example": ['}))
            testing.eventually(lambda: testing.expect(
                f"kube-dns-config {API} not applied, the forwarder keeps its settings "
                "(stubDomains: bad JSON" in c.log_text(), "no log line"), timeout=5)
            answered_by(c, corp, "again.lab.example.")

            # Deleted: the mounted files again (here still there).
            c.sim.delete("configmaps", "kube-system", "kube-dns")
            applied(c, cm, 1)
            answered_by(c, files, "second.example.net.")


@tests.case
def without_rbac_for_the_configmap_the_mounted_files_are_read_until_it_is_permitted():
    if knotd.load_mode() == "file":
        raise testing.Skip("the shipped config relies on auto-loading, which is not possible here")
    with stubdns.StubDNS() as resolv, stubdns.StubDNS() as files, stubdns.StubDNS() as upstream, \
            tempfile.TemporaryDirectory() as cm:
        write(cm, "upstreamNameservers", [f"127.0.0.1:{files.port}"])
        c = cluster.Cluster(zones=("cluster.local.",))
        try:
            c.sim.start()
            c.sim.forbid("configmaps")
            c.sim.apply(kube_dns({"upstreamNameservers": [f"127.0.0.1:{upstream.port}"]}))
            text = shipped.config(c.sim.path(c.kubeconfig), [resolv.address], ("crd-retry-interval: 1",),
                                  True, None, cm, None)
            c.server = c.knotd(zones=c.zones, config=text).__enter__()
            cluster.wait_ready(c.server, ("cluster.local.",))
            answered_by(c, files, "www.example.net.")
            testing.eventually(lambda: testing.expect(
                "configmaps (metadata.name=kube-dns) not permitted, not read" in c.log_text(),
                "no log line"), timeout=10)
            # Permitted: the API's (the next try, crd-retry-interval), files no longer.
            c.sim.forbid("configmaps", on=False)
            applied(c, API, 1, timeout=10)
            answered_by(c, upstream, "www2.example.net.")
        finally:
            c.__exit__(None, None, None)


tests.main()
