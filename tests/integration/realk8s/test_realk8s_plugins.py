#!/usr/bin/env python3
"""Differential: mod-k8s's hosts table, external zones and zonal names beside CoreDNS's
hosts, k8s_external and kubernetes `zonal`, the same objects on the same real API.

Each case starts a knotd with mod-k8s and a CoreDNS (tests/realk8s/build, the version of
tests/realk8s/versions.env) configured alike (the Corefile lines beside the module's
options, as mod-k8s-migrate translates them), asks both the same questions and compares
the rcode and the ANSWER section with TTLs (an SOA's serial aside; for SRV in an external
zone also the addresses of the additional section). What differs must be in KNOWN, each
with the reason mod-k8s answers as it does (doc/mod-k8s.rst, the sections Hosts, External
zones and Zonal names):

- hosts from a file and inline entries in zones (ttl, reload, fallthrough of one zone,
  wildcards, IPv4-mapped and scoped addresses, malformed lines, PTR), then the file
  changed; hosts for every name without fallthrough (SERVFAIL for cluster names) and
  no_reverse; a ConfigMap key read through the API (mod-k8s) beside the same text in a
  file (CoreDNS, as the kubelet mounts it), then the ConfigMap changed.
- k8s_external: externalIPs, load-balancer ingress IPs (the status written as a cloud
  controller does), SRV and its weights, a headless service's endpoints (headless), the
  apex, the apex label, names that do not exist.
- zonal: pin and prefer of a headless service whose EndpointSlices' endpoints are in
  several zones (one holding dots, some in none, not ready ones), A, AAAA, SRV and other
  types; a ClusterIP service, a headless one without endpoints, another directive.

Skips (exit 77) where the control plane or CoreDNS is not built.
"""

import ipaddress
import json
import os
import tempfile
import time

import cluster
import dig
import knotd
import realk8s
import stubdns
import testing
from realk8s import namespace, service

realk8s.skip_unless_available(("etcd", "k8s", "coredns"))

tests = testing.Tests()
Z = "cluster.local."
TTL = 5
EXT = "example.org."
GLOBAL = {"global-module": "mod-k8s/default"}
# With forward, mod-k8s passes the reverse names of no cluster address on, as the
# Corefile of kubeadm does: `fallthrough in-addr.arpa ip6.arpa` in its kubernetes block.
FALL = "        fallthrough in-addr.arpa ip6.arpa\n"

# The external zone's file as mod-k8s-migrate writes it for `k8s_external example.org
# { ttl 10 }`: CoreDNS's apex.
EXT_TTL = 10
EXTERNAL_ZONE = (f"$ORIGIN {EXT}\n$TTL {EXT_TTL}\n"
                 f"@\tSOA\tns1.dns.{EXT} hostmaster.dns.{EXT} 1 7200 1800 86400 {EXT_TTL}\n"
                 f"@\tNS\tns1.dns.{EXT}\n")


# ---------------------------------------------------------------------------
# Asking both and comparing

def key(answer, qname):
    """(rcode, records): the ANSWER section with TTLs (an SOA's serial aside); for an
    external zone's SRV also the address records of the additional section."""
    def record(rr):
        rdata = rr.rdata
        if rr.type == "SOA":
            fields = rdata.split()
            rdata = " ".join(fields[:2] + ["SERIAL"] + fields[3:])
        return rr.owner, rr.ttl, rr.type, rdata
    rrs = [record(rr) for rr in answer.answer]
    if qname.endswith("." + EXT) and any(rr.type == "SRV" for rr in answer.answer):
        rrs += [("additional",) + record(rr) for rr in answer.additional
                if rr.type in ("A", "AAAA")]
    return answer.rcode, tuple(sorted(rrs))


def ask(server, qname, qtype):
    answer = dig.query(server, qname, qtype)
    if "tc" in answer.flags:
        answer = dig.query(server, qname, qtype, tcp=True)
    return answer


def compare(questions, ours, theirs, known=()):
    """Asks both; fails with the differences no predicate of `known` explains. Returns
    the count of explained differences."""
    differences, explained = [], {}
    for qname, qtype in sorted(questions):
        a, b = key(ask(ours, qname, qtype), qname), key(ask(theirs, qname, qtype), qname)
        if a == b:
            continue
        why = next((why for match, why in known if match(qname, qtype, a, b)), None)
        if why is not None:
            explained[why] = explained.get(why, 0) + 1
            continue
        differences.append(f"{qname} {qtype}\n    mod-k8s: {a[0]} {list(a[1])}\n"
                           f"    CoreDNS: {b[0]} {list(b[1])}")
    print(f"# {len(questions)} questions, {sum(explained.values())} explained "
          f"({', '.join(f'{why}: {n}' for why, n in sorted(explained.items())) or 'none'}) "
          f"and {len(differences)} unexplained differences")
    testing.expect(not differences, f"{len(differences)} unexplained differences\n"
                   + "\n".join(differences[:40]))
    return sum(explained.values())


def both_answer(servers, qname, qtype, rdata, timeout=30):
    """Waits until every server answers `rdata` (sorted) at qname: both have seen the
    last change."""
    def check():
        for server in servers:
            got = sorted(rr.rdata for rr in ask(server, qname, qtype).answer if rr.type == qtype)
            testing.expect_equal(got, sorted(rdata), f"{qname} {qtype} of {server}")
    testing.eventually(check, timeout=timeout)


def forwarded(up):
    """A KNOWN entry: a name both forward to the stub upstream `up` may come from
    mod-k8s's forwarding cache with its TTL counted down (CoreDNS runs without cache)."""
    def aged_in_the_forwarding_cache(qname, qtype, ours, theirs):
        def without_ttl(k):
            return k[0], tuple(sorted(r[:1] + r[2:] for r in k[1]))
        return (qname in {n for n, _ in up.names()} and without_ttl(ours) == without_ttl(theirs)
                and all(a[1] <= b[1] for a, b in zip(sorted(ours[1]), sorted(theirs[1]))))
    return [(aged_in_the_forwarding_cache, "the forwarding cache")]


def questions(names, *qtypes):
    return {(n, t) for n in names for t in qtypes}


def ptr(address):
    return ipaddress.ip_address(address).reverse_pointer + "."


def write(path, text):
    """As an editor or the kubelet replaces a file: whole, renamed over the old one."""
    with open(path + ".new", "w", encoding="utf-8") as f:
        f.write(text)
    os.rename(path + ".new", path)


# ---------------------------------------------------------------------------
# hosts

HOSTS = """\
# nodes
192.168.1.10  node-1.lab node-1.example.org alias.example.org
fd00::10      node-1.lab
::ffff:192.168.1.11 node-2.lab
192.168.1.12  *.apps.example.org
192.168.1.13  web.apps.example.org
10.0.0.1      dup.example.org
192.168.1.14  other.net
010.1.1.1     bad.lab
192.168.1.15  UPPER.lab bad_name!.lab
fe80::1%eth0  link.lab
192.168.1.10  node-1.lab
"""
HOSTS_NAMES = ("node-1.lab.", "node-1.example.org.", "alias.example.org.", "node-2.lab.",
               "x.apps.example.org.", "web.apps.example.org.", "apps.example.org.",
               "deep.x.apps.example.org.", "inline.example.org.", "dup.example.org.",
               "db.lab.", "other.net.", "bad.lab.", "upper.lab.", "link.lab.", "missing.lab.",
               "missing.example.org.", "example.org.", "lab.")
HOSTS_ADDRESSES = ("192.168.1.10", "fd00::10", "192.168.1.11", "192.168.1.12", "192.168.1.13",
                   "10.0.0.1", "10.0.0.2", "192.168.1.14", "10.1.1.1", "192.168.1.15", "fe80::1",
                   "192.168.1.99", "10.96.0.1")


def hosts_questions(names=HOSTS_NAMES, addresses=HOSTS_ADDRESSES):
    return (questions(names, "A", "AAAA", "TXT")
            | {(ptr(a), "PTR") for a in addresses}
            | questions([f"kubernetes.default.svc.{Z}"], "A", "AAAA"))


@tests.case
def a_hosts_file_and_inline_entries_in_zones_answer_as_corednss_hosts(cl):
    with tempfile.TemporaryDirectory(dir=cl.plane.workdir) as d, stubdns.StubDNS() as up:
        path = os.path.join(d, "hosts")
        write(path, HOSTS)
        module = {"ttl": TTL, "hosts-file": path, "hosts-zone": [EXT, "lab."],
                  "hosts-entry": ["10.0.0.1 inline.example.org", "10.0.0.2 db.lab"],
                  "hosts-ttl": 60, "hosts-reload": 1, "hosts-fallthrough": "lab.",
                  "forward": f"127.0.0.1@{up.port}"}
        corefile = (f"    hosts {path} example.org lab {{\n"
                    "        10.0.0.1 inline.example.org\n        10.0.0.2 db.lab\n"
                    "        ttl 60\n        reload 1s\n        fallthrough lab\n    }\n"
                    f"    forward . 127.0.0.1:{up.port}\n")
        with cl.knotd(module=module, zones=cl.zones, template=GLOBAL) as ours, \
                realk8s.CoreDNS(cl.plane, ttl=TTL, extra=corefile, kubernetes_extra=FALL) as theirs:
            cluster.wait_ready(ours, cl.ready_zones, timeout=60)
            compare(hosts_questions(), ours, theirs)

            # The file changes: both re-read it (reload 1 s).
            write(path, HOSTS.replace("192.168.1.13", "192.168.1.23")
                  + "192.168.1.16 node-3.lab\n")
            both_answer((ours, theirs), "node-3.lab.", "A", ["192.168.1.16"], timeout=10)
            compare(hosts_questions(HOSTS_NAMES + ("node-3.lab.",),
                                    HOSTS_ADDRESSES + ("192.168.1.16", "192.168.1.23")),
                    ours, theirs, forwarded(up))


@tests.case
def hosts_for_every_name_without_fallthrough_and_no_reverse_answer_as_corednss(cl):
    with tempfile.TemporaryDirectory(dir=cl.plane.workdir) as d:
        path = os.path.join(d, "hosts")
        # The first line lets CoreDNS's start-up question be answered (by hosts).
        write(path, f"10.96.0.1 kubernetes.default.svc.{Z}\n192.168.1.10 node-1 node-1.lab\n"
              "fd00::10 node-1\n")
        module = {"ttl": TTL, "hosts-file": path, "hosts-no-reverse": True}
        with cl.knotd(module=module, zones=cl.zones, template=GLOBAL) as ours, \
                realk8s.CoreDNS(cl.plane, ttl=TTL,
                                extra=f"    hosts {path} {{\n        no_reverse\n    }}\n") as theirs:
            cluster.wait_ready(ours, cl.ready_zones, timeout=60)
            names = ("node-1.", "node-1.lab.", "missing.", "missing.lab.", f"kubernetes.default.svc.{Z}",
                     f"kube-dns.kube-system.svc.{Z}", f"default.svc.{Z}", f"nope.svc.{Z}")
            compare(questions(names, "A", "AAAA", "MX")
                    | {(ptr(a), "PTR") for a in ("192.168.1.10", "fd00::10", "10.96.0.1")},
                    ours, theirs)


def configmap(data):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coredns", "namespace": "kube-system"}, "data": data}


@tests.case
def a_configmap_key_read_through_the_api_answers_as_corednss_hosts_reading_its_mount(cl):
    node_hosts = "172.18.0.2 k3d-server-0\n172.18.0.3 k3d-agent-0\n"
    cl.plane.apply([configmap({"Corefile": ".:53 {}", "NodeHosts": node_hosts})])
    with tempfile.TemporaryDirectory(dir=cl.plane.workdir) as d, stubdns.StubDNS() as up:
        path = os.path.join(d, "NodeHosts")
        write(path, node_hosts)
        # k3s's Corefile: `hosts /etc/coredns/NodeHosts { ttl 60 reload 15s fallthrough }`
        # (reload 1 s here, for the mounted file's change below).
        module = {"ttl": TTL, "hosts-configmap": "kube-system/coredns/NodeHosts",
                  "hosts-ttl": 60, "hosts-fallthrough": ".", "forward": f"127.0.0.1@{up.port}"}
        corefile = (f"    hosts {path} {{\n        ttl 60\n        reload 1s\n"
                    f"        fallthrough\n    }}\n    forward . 127.0.0.1:{up.port}\n")
        with cl.knotd(module=module, zones=cl.zones, template=GLOBAL) as ours, \
                realk8s.CoreDNS(cl.plane, ttl=TTL, extra=corefile, kubernetes_extra=FALL) as theirs:
            cluster.wait_ready(ours, cl.ready_zones, timeout=60)
            both_answer((ours,), "k3d-agent-0.", "A", ["172.18.0.3"])
            names = ("k3d-server-0.", "k3d-agent-0.", "k3d-agent-1.", f"kubernetes.default.svc.{Z}")
            addresses = ("172.18.0.2", "172.18.0.3", "172.18.0.4", "10.96.0.1")
            compare(questions(names, "A", "AAAA") | {(ptr(a), "PTR") for a in addresses},
                    ours, theirs)

            # A node joins: k3s writes the ConfigMap, the kubelet the mount (here at once).
            node_hosts += "172.18.0.4 k3d-agent-1\n"
            started = time.monotonic()
            cl.plane.apply([configmap({"Corefile": ".:53 {}", "NodeHosts": node_hosts})])
            write(path, node_hosts)
            both_answer((ours,), "k3d-agent-1.", "A", ["172.18.0.4"], timeout=10)
            took = time.monotonic() - started
            print(f"# mod-k8s answered the new node {took:.1f} s after the ConfigMap's update")
            testing.expect(took < 5, f"the new node answered after {took:.1f} s")
            both_answer((theirs,), "k3d-agent-1.", "A", ["172.18.0.4"], timeout=10)
            compare(questions(names, "A", "AAAA") | {(ptr(a), "PTR") for a in addresses},
                    ours, theirs, forwarded(up))


# ---------------------------------------------------------------------------
# k8s_external and zonal: one world, one pair of servers

def srv_at_a_service_name_with_an_unnamed_port(qname, qtype, ours, theirs):
    """CoreDNS answers SRV at <svc>.<ns>.<zone> for a Service's unnamed port too; mod-k8s
    keeps SRV to named ports, as the Kubernetes DNS specification (2.3.2: "for each named
    port") and its cluster zone do: NOERROR without records."""
    return (qname.endswith("." + EXT) and qtype == "SRV" and ours == ("NOERROR", ())
            and theirs[0] == "NOERROR"
            and all(r[2] == "SRV" or r[0] == "additional" for r in theirs[1]))


def srv_weights_only(qname, qtype, ours, theirs):
    """The cluster zone's SRV weights (the zonal names'): the Kubernetes DNS specification
    (2.3.2, 2.4.2) leaves them open; mod-k8s writes the spec's equal weights as in its
    cluster zone (test_realk8s_coredns.py, the same difference)."""
    def without(k):
        return k[0], tuple(sorted(r[:3] + (" ".join(r[3].split()[:1] + r[3].split()[2:]),)
                                  if r[2] == "SRV" else r for r in k[1]))
    return qname.endswith("." + Z) and qtype == "SRV" and without(ours) == without(theirs)


KNOWN = [(srv_at_a_service_name_with_an_unnamed_port, "unnamed ports"),
         (srv_weights_only, "SRV weights")]


def slice_of(svc, ns, name, family, endpoints, ports):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kubernetes.io/service-name": svc,
                                    "endpointslice.kubernetes.io/managed-by": "test"}},
            "addressType": family, "endpoints": endpoints, "ports": ports}


def endpoint(address, zone=None, hostname=None, ready=True, serving=None):
    e = {"addresses": [address], "conditions": {"ready": ready}}
    if serving is not None:
        e["conditions"]["serving"] = serving
    if zone:
        e["zone"] = zone
    if hostname:
        e["hostname"] = hostname
    return e


def external_world(plane):
    ns = "ext"
    plane.apply([namespace(ns), namespace("zonal")])
    web = service("web", ns, [{"name": "http", "port": 80, "protocol": "TCP"},
                              {"name": "dns", "port": 53, "protocol": "UDP"}])
    web["spec"]["externalIPs"] = ["192.0.2.10", "2001:db8::10"]
    lb = service("lb", ns, [{"name": "https", "port": 443}], svc_type="LoadBalancer")
    both = service("both", ns, [{"name": "a", "port": 1000}, {"name": "b", "port": 1001}],
                   svc_type="LoadBalancer")
    both["spec"]["externalIPs"] = ["192.0.2.20"]
    solo = service("solo", ns, [{"port": 8080}])
    solo["spec"]["externalIPs"] = ["192.0.2.30"]
    hl = service("hl", ns, [{"name": "pg", "port": 5432}], cluster_ip="None")
    plane.apply([web, lb, both, solo, hl,
                 service("plain", ns, [{"name": "http", "port": 80}]),
                 service("en", ns, [], svc_type="ExternalName", external_name="www.example.net"),
                 slice_of("hl", ns, "hl-1", "IPv4",
                          [endpoint("10.244.9.1", hostname="pg-0"), endpoint("10.244.9.2"),
                           endpoint("10.244.9.3", ready=False)],
                          [{"name": "pg", "port": 5432, "protocol": "TCP"}])])
    # What a cloud's controller writes: the load balancers' addresses.
    for name, ingress in (("lb", [{"ip": "198.51.100.7"}, {"ip": "2001:db8::7"}]),
                          ("both", [{"ip": "192.0.2.20"}, {"ip": "198.51.100.20"}])):
        plane.kubectl("patch", "service", name, "-n", ns, "--subresource=status", "--type=merge",
                      "-p", json.dumps({"status": {"loadBalancer": {"ingress": ingress}}}))

    # Zonal: a headless service's endpoints in zones.
    pg = [{"name": "pg", "port": 5432, "protocol": "TCP"}]
    plane.apply([
        service("db", "zonal", [{"name": "pg", "port": 5432}], cluster_ip="None"),
        service("nr", "zonal", [{"name": "pg", "port": 5432}], cluster_ip="None",
                publish_not_ready=True),
        service("empty", "zonal", [{"name": "pg", "port": 5432}], cluster_ip="None"),
        service("vip", "zonal", [{"name": "pg", "port": 5432}]),
        slice_of("db", "zonal", "db-4", "IPv4",
                 [endpoint("10.244.1.1", "us-east-1a", "db-0"), endpoint("10.244.1.2", "us-east-1a"),
                  endpoint("10.244.1.3", "us-east-1a", ready=False),
                  endpoint("10.244.2.1", "us-east-1b", "db-1"),
                  endpoint("10.244.3.1", "corp.example.com"), endpoint("10.244.4.1"),
                  endpoint("10.244.5.1", "Zone-C")], pg),
        slice_of("db", "zonal", "db-6", "IPv6",
                 [endpoint("fd00:1::1", "us-east-1a", "db-0"), endpoint("fd00:2::1", "us-east-1b")], pg),
        # A pod not ready behind a service that publishes it: ready, not serving, as the
        # EndpointSlice controller writes it.
        slice_of("nr", "zonal", "nr-4", "IPv4",
                 [endpoint("10.244.6.1", "us-east-1a", serving=False),
                  endpoint("10.244.6.2", "us-east-1b")], pg),
        slice_of("vip", "zonal", "vip-4", "IPv4", [endpoint("10.244.7.1", "us-east-1a")], pg)])


class ExternalKnotd(knotd.Knotd):
    """knotd with the external zone's file as mod-k8s-migrate writes it."""

    def write_files(self):
        super().write_files()
        with open(os.path.join(self.dir, "zones", f"{EXT}zone"), "w", encoding="utf-8") as f:
            f.write(EXTERNAL_ZONE)


def external_questions():
    q = set()
    base = f"ext.{EXT}"
    for svc in ("web", "lb", "both", "solo", "plain", "en", "hl", "nope"):
        fqdn = f"{svc}.{base}"
        q |= questions([fqdn], "A", "AAAA", "SRV", "TXT")
        q |= questions([f"x.{fqdn}", f"a.b.{fqdn}", f"_http._tcp.{fqdn}"], "A", "SRV")
    q |= questions([f"_http._tcp.web.{base}", f"_dns._udp.web.{base}", f"_http._udp.web.{base}",
                    f"http.tcp.web.{base}", f"_https._tcp.lb.{base}", f"_a._tcp.both.{base}",
                    f"_b._tcp.both.{base}", f"_pg._tcp.hl.{base}", f"_nope._tcp.hl.{base}"],
                   "SRV", "A")
    q |= questions([f"pg-0.hl.{base}", f"10-244-9-2.hl.{base}", f"10-244-9-3.hl.{base}",
                    f"nohost.hl.{base}"], "A", "AAAA")
    q |= questions([base, f"kube-system.{EXT}", f"nowhere.{EXT}", f"dns.{EXT}",
                    f"ns1.dns.{EXT}", f"x.dns.{EXT}", f"a.ns1.dns.{EXT}"], "A", "AAAA", "TXT")
    q |= questions([EXT], "SOA", "NS", "A")
    return q


def zonal_questions():
    q = set()
    for svc in ("db", "nr", "empty", "vip", "nope"):
        for zone in ("us-east-1a", "us-east-1b", "corp.example.com", "us-east-1c", "zone-c",
                     "US-EAST-1A"):
            for directive in ("pin", "prefer"):
                q |= questions([f"{zone}.{directive}._zone.{svc}.zonal.svc.{Z}"],
                               "A", "AAAA", "SRV", "TXT")
    q |= questions([f"us-east-1a.near._zone.db.zonal.svc.{Z}", f"pin._zone.db.zonal.svc.{Z}",
                    f"_pg._tcp.us-east-1a.pin._zone.db.zonal.svc.{Z}",
                    f"us-east-1a.pin._zone.db.zonal.svc.clusterset.local.",
                    f"db.zonal.svc.{Z}"], "A", "SRV")
    q |= questions([f"db-0.db.zonal.svc.{Z}"], "A", "AAAA")
    return q


@tests.case
def external_zones_and_zonal_names_answer_as_corednss_k8s_external_and_zonal(cl):
    external_world(cl.plane)
    module = cl.module_options({"ttl": TTL, "zonal": True, "external-zone": EXT,
                                "external-ttl": EXT_TTL, "external-headless": True})
    corefile = f"    k8s_external {EXT} {{\n        ttl {EXT_TTL}\n        headless\n    }}\n"
    with ExternalKnotd(module=module, zones=cl.zones + (EXT,)) as ours, \
            realk8s.CoreDNS(cl.plane, ttl=TTL, extra=corefile, kubernetes_extra="        zonal\n") \
            as theirs:
        cluster.wait_ready(ours, cl.ready_zones, timeout=60)
        # Both have seen the last objects: the load balancers' status, the last slice.
        both_answer((ours, theirs), f"both.ext.{EXT}", "A", ["192.0.2.20", "198.51.100.20"])
        both_answer((ours, theirs), f"us-east-1b.pin._zone.nr.zonal.svc.{Z}", "A", ["10.244.6.2"])
        explained = compare(external_questions() | zonal_questions(), ours, theirs, KNOWN)
        testing.expect(explained > 0, "no explained difference: KNOWN is stale")


tests.main(fixture=lambda: realk8s.RealCluster(world=(), module={"ttl": TTL}))
