#!/usr/bin/env python3
"""Hosts-file entries served by mod-k8s, as CoreDNS's hosts plugin serves them (options
hosts-*): A, AAAA and PTR of a file's or a ConfigMap key's names and of inline entries,
the TTL, no PTR with hosts-no-reverse, SERVFAIL for a name of the zones the table lacks
unless hosts-fallthrough passes it on (to the cluster zone's answer, to forwarding).

A file is re-read when it changes, within hosts-reload, without a knotd reload; a
ConfigMap key (k3s's coredns/NodeHosts) is read through the API the watcher already
reads (a field-selected watch of that one ConfigMap in its namespace), so a change
reaches DNS within seconds; without RBAC for it (403) the rest works as before.
"""

import os
import re
import tempfile
import time

import cluster
import stubdns
import testing

tests = testing.Tests()

GLOBAL = {"global-module": "mod-k8s/default"}


def write(path, text):
    """As an editor or the kubelet replaces a file: whole, renamed over the old one."""
    tmp = path + ".new"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.rename(tmp, path)


def configmap(name, namespace, data):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": data}


def rdata(answer, rtype):
    return sorted(rr.rdata for rr in answer.answer if rr.type == rtype)


@tests.case
def a_hosts_file_answers_a_aaaa_and_ptr_and_its_changes_within_the_reload_period():
    with tempfile.TemporaryDirectory() as d, stubdns.StubDNS() as up:
        hosts = os.path.join(d, "hosts")
        write(hosts, "192.168.1.10 node-1 node-1.lab\nfd00::10 node-1\n192.168.1.11 node-2\n")
        module = {"hosts-file": hosts, "hosts-reload": 1, "hosts-ttl": 60,
                  "hosts-fallthrough": ".", "forward": f"127.0.0.1@{up.port}"}
        with cluster.Cluster(module=module, template=GLOBAL) as c:
            # Names in no zone: the global instance, before forwarding.
            a = c.query("node-1.", "A")
            testing.expect_equal((a.rcode, rdata(a, "A")), ("NOERROR", ["192.168.1.10"]), a.summary())
            testing.expect("aa" in a.flags, f"not authoritative: {a.summary()}")
            testing.expect(all(rr.ttl == 60 for rr in a.answer), "hosts-ttl")
            c.expect_answer("node-1.", "AAAA", "NOERROR", ["fd00::10"])
            # A name with addresses of the other family only: NODATA.
            c.expect_answer("node-2.", "AAAA", "NOERROR", [])
            # PTR in a reverse zone mod-k8s serves: the hosts table first.
            c.expect_answer("10.1.168.192.in-addr.arpa.", "PTR", "NOERROR",
                            ["node-1.", "node-1.lab."])
            # Fallthrough: cluster names and the rest are answered as without hosts.
            c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR", ["10.96.0.1"])
            c.expect_answer("1.0.96.10.in-addr.arpa.", "PTR", "NOERROR",
                            ["kubernetes.default.svc.cluster.local."])
            c.expect_answer("www.example.net.", "A", "NOERROR")
            testing.expect("www.example.net." in [n for n, _ in up.names()], "not forwarded")
            testing.expect("node-1." not in [n for n, _ in up.names()], "a hosts name forwarded")

            # The file changes: within the reload period, without a knotd reload.
            write(hosts, "192.168.1.20 node-1\n192.168.1.12 node-3\n")
            started = time.monotonic()
            c.expect_answer("node-3.", "A", "NOERROR", ["192.168.1.12"], timeout=5)
            took = time.monotonic() - started
            testing.expect(took < 3, f"a change took {took:.1f} s with hosts-reload 1 s")
            c.expect_answer("node-1.", "A", "NOERROR", ["192.168.1.20"])
            c.expect_answer("node-1.", "AAAA", "NOERROR", [])
            # node-2 is gone: forwarded now (fallthrough), no longer the table's.
            c.expect_answer("node-2.", "A", "NOERROR")
            testing.expect("node-2." in [n for n, _ in up.names()], "node-2 not forwarded")
            testing.expect(re.search(r"hosts, file \S+ applied \(2 entries from 2 lines",
                                     c.log_text()), "no log line")

            # The file goes: what was read stays (as CoreDNS keeps it).
            os.unlink(hosts)
            time.sleep(2.5)
            c.expect_answer("node-3.", "A", "NOERROR", ["192.168.1.12"])
            testing.expect("not read, the table in use stays" in c.log_text(), "no log line")


@tests.case
def inline_entries_without_fallthrough_servfail_unknown_names_of_their_zones_and_no_reverse():
    module = {"hosts-entry": ["10.0.0.1 app.example.org", "10.0.0.2 db.example.org db"],
              "hosts-zone": "example.org.", "hosts-no-reverse": True}
    with cluster.Cluster(module=module, template=GLOBAL) as c:
        c.expect_answer("app.example.org.", "A", "NOERROR", ["10.0.0.1"])
        c.expect_answer("db.example.org.", "A", "NOERROR", ["10.0.0.2"])
        # A name of the zone the table lacks: SERVFAIL ("we don't have a SOA").
        c.expect_answer("other.example.org.", "A", "SERVFAIL")
        c.expect_answer("app.example.org.", "TXT", "NOERROR", [])
        # No PTR: the reverse zone answers as without hosts (NXDOMAIN).
        c.expect_answer("1.0.0.10.in-addr.arpa.", "PTR", "NXDOMAIN")
        # Cluster names are outside the zone: untouched.
        c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR", ["10.96.0.1"])
        # db (the line's second name) is outside the zone example.org: left out, and a
        # name in no zone outside example.org is knotd's REFUSED, nothing forwards here.
        c.expect_answer("db.", "A", "REFUSED")


@tests.case
def a_configmap_key_is_read_through_the_api_and_its_changes_answer_within_seconds():
    module = {"hosts-configmap": "kube-system/coredns/NodeHosts", "hosts-fallthrough": "."}
    with cluster.Cluster(module=module, template=GLOBAL) as c:
        c.sim.apply(configmap("coredns", "kube-system",
                              {"Corefile": ".:53 {}", "NodeHosts": "172.18.0.2 k3d-server-0\n"}))
        c.expect_answer("k3d-server-0.", "A", "NOERROR", ["172.18.0.2"], timeout=10)

        # Only that ConfigMap, in its namespace: a Role there is enough.
        cm = [r for r in c.sim.requests() if r["resource"] == "configmaps"]
        testing.expect(cm, "no configmap request")
        for r in cm:
            testing.expect_equal(r["path"], "/api/v1/namespaces/kube-system/configmaps", r)
            testing.expect("fieldSelector=metadata.name%3Dcoredns" in r["query"] or
                           "fieldSelector=metadata.name=coredns" in r["query"], r)

        # A node joins: k3s adds a line; DNS follows within seconds (CoreDNS: the kubelet's
        # sync of the mounted file, then its reload period).
        c.sim.apply(configmap("coredns", "kube-system",
                              {"Corefile": ".:53 {}",
                               "NodeHosts": "172.18.0.2 k3d-server-0\n172.18.0.3 k3d-agent-0\n"}))
        started = time.monotonic()
        c.expect_answer("k3d-agent-0.", "A", "NOERROR", ["172.18.0.3"], timeout=10)
        took = time.monotonic() - started
        print(f"# the new node's name answered {took:.1f} s after the ConfigMap's update")
        testing.expect(took < 5, f"the new node answered after {took:.1f} s")
        c.expect_answer("3.0.18.172.in-addr.arpa.", "PTR", "NOERROR", ["k3d-agent-0."])

        # Another key changes: nothing to apply. The ConfigMap goes: so do its names.
        applied = c.log_text().count("hosts, configmap kube-system/coredns key NodeHosts")
        c.sim.apply(configmap("coredns", "kube-system",
                              {"Corefile": ".:53 { log }",
                               "NodeHosts": "172.18.0.2 k3d-server-0\n172.18.0.3 k3d-agent-0\n"}))
        time.sleep(2.5)
        testing.expect_equal(c.log_text().count("hosts, configmap kube-system/coredns key NodeHosts"),
                             applied, "an unchanged key applied again")
        c.sim.delete("configmaps", "kube-system", "coredns")
        c.expect_answer("k3d-agent-0.", "A", "REFUSED", timeout=10)
        testing.expect("(no such configmap)" in c.log_text(), "no log line")


@tests.case
def without_rbac_for_the_configmap_the_zones_answer_and_it_is_logged_once():
    module = {"hosts-configmap": "kube-system/coredns/NodeHosts", "crd-retry-interval": 1,
              "hosts-entry": "10.0.0.9 inline-host", "hosts-fallthrough": "."}
    c = cluster.Cluster(module=module)
    try:
        # Forbidden before knotd asks at all.
        c.sim.start()
        c.sim.forbid("configmaps")
        c.sim.apply(configmap("coredns", "kube-system", {"NodeHosts": "172.18.0.2 node-a\n"}))
        c.server = c.knotd(module=c.module, zones=c.zones, template=GLOBAL).__enter__()
        # The cluster zone is ready without it: a ConfigMap read aside holds nothing back.
        cluster.wait_ready(c.server, ("cluster.local.",))
        c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR", ["10.96.0.1"])
        c.expect_answer("inline-host.", "A", "NOERROR", ["10.0.0.9"])
        c.expect_answer("node-a.", "A", "REFUSED")
        testing.eventually(lambda: testing.expect(
            re.search(r"configmaps \(metadata.name=coredns\) not permitted, not read",
                      c.log_text()), "no log line"), timeout=10)
        # Permitted again: read at the next try (crd-retry-interval, here 1 s).
        c.sim.forbid("configmaps", on=False)
        c.expect_answer("node-a.", "A", "NOERROR", ["172.18.0.2"], timeout=10)
        testing.expect(c.log_text().count("not permitted, not read") == 1, "logged more than once")
    finally:
        c.__exit__(None, None, None)


if __name__ == "__main__":
    tests.main()
