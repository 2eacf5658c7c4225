#!/usr/bin/env python3
"""Headless SRV records follow each EndpointSlice's own ports (issue 22, item 1).

An EndpointSlice's ports are "the network ports exposed by each endpoint within
this slice" (discovery.k8s.io/v1): the EndpointSlice controller puts pods whose
named targetPort resolves to different numbers into different slices (a rolling
update that moves a port, two versions side by side). For each slice, each ready
endpoint of it and each of its ports with the queried name and protocol, one SRV
record with that slice's number, as kube-dns and CoreDNS answer; the additional
section holds the addresses of those targets only. The cluster is the sample
(its clusterset zone included); each test writes its own namespace.
"""

import time

import cases
import testing
from cluster import Cluster, SAMPLE
from faults import namespace

tests = testing.Tests()


def ports_of(ports):
    return [{"name": name, "protocol": "TCP", "port": number} for name, number in ports]


def endpoint(address, hostname=None, ready=True):
    ep = {"addresses": [address], "conditions": {"ready": ready}}
    if hostname:
        ep["hostname"] = hostname
    return ep


def headless_service(ns, name, ports=(("http", 80),)):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": "None", "clusterIPs": ["None"],
                     "ports": [dict(p, targetPort=p["name"]) for p in ports_of(ports)]}}


def local_slice(ns, name, service, endpoints, ports):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4", "endpoints": endpoints, "ports": ports_of(ports)}


def headless_import(ns, name, clusters, ports=(("http", 80),)):
    return {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"type": "Headless", "ports": ports_of(ports)},
            "status": {"clusters": [{"cluster": c} for c in clusters]}}


def imported_slice(ns, name, service, cluster, endpoints, ports):
    labels = {"multicluster.kubernetes.io/service-name": service,
              "multicluster.kubernetes.io/source-cluster": cluster}
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "addressType": "IPv4", "endpoints": endpoints, "ports": ports_of(ports)}


def expect(cluster, lines):
    """Waits until every case line (the tests.table format) holds."""
    for case in cases.parse(lines):
        cluster.eventually(lambda: case.run(cluster))


@tests.case
def headless_srv_records_follow_each_endpoint_slices_own_ports(cluster):
    # The reproducer: a rollout moved http from 8080 to 9090 and added metrics on 9100.
    cluster.sim.apply([
        namespace("roll"),
        headless_service("roll", "roll", ports=(("http", 80), ("metrics", 9100))),
        local_slice("roll", "roll-a", "roll",
                    [endpoint("10.1.1.1"), endpoint("10.1.1.3")], [("http", 8080)]),
        local_slice("roll", "roll-b", "roll",
                    [endpoint("10.1.1.2")], [("http", 9090), ("metrics", 9100)]),
    ])
    expect(cluster, """
_http._tcp.roll.roll.svc.cluster.local. SRV NOERROR aa 0 33 8080 10-1-1-1.roll.roll.svc.cluster.local. | 0 33 8080 10-1-1-3.roll.roll.svc.cluster.local. | 0 33 9090 10-1-1-2.roll.roll.svc.cluster.local. ; additional: 10-1-1-1.roll.roll.svc.cluster.local. A 10.1.1.1 | 10-1-1-3.roll.roll.svc.cluster.local. A 10.1.1.3 | 10-1-1-2.roll.roll.svc.cluster.local. A 10.1.1.2
_http._tcp.roll.roll.svc.cluster.local. SRV NOERROR aa tcp 0 33 8080 10-1-1-1.roll.roll.svc.cluster.local. | 0 33 8080 10-1-1-3.roll.roll.svc.cluster.local. | 0 33 9090 10-1-1-2.roll.roll.svc.cluster.local.
_metrics._tcp.roll.roll.svc.cluster.local. SRV NOERROR aa 0 100 9100 10-1-1-2.roll.roll.svc.cluster.local. ; additional: 10-1-1-2.roll.roll.svc.cluster.local. A 10.1.1.2
_grpc._tcp.roll.roll.svc.cluster.local. SRV NXDOMAIN aa
roll.roll.svc.cluster.local. A NOERROR aa 10.1.1.1 | 10.1.1.2 | 10.1.1.3
""")
    # The rollout ends: the old slice goes, and with it the old number.
    cluster.sim.delete("endpointslices", "roll", "roll-a")
    expect(cluster, """
_http._tcp.roll.roll.svc.cluster.local. SRV NOERROR aa 0 100 9090 10-1-1-2.roll.roll.svc.cluster.local. ; additional: 10-1-1-2.roll.roll.svc.cluster.local. A 10.1.1.2
""")


@tests.case
def the_same_address_in_two_slices_gives_a_record_per_number(cluster):
    cluster.sim.apply([
        namespace("twice"),
        headless_service("twice", "twice"),
        local_slice("twice", "twice-old", "twice", [endpoint("10.1.2.1", "web-0")], [("http", 8080)]),
        local_slice("twice", "twice-new", "twice",
                    [endpoint("10.1.2.1", "web-0"), endpoint("10.1.2.4", "web-1")], [("http", 8081)]),
    ])
    expect(cluster, """
_http._tcp.twice.twice.svc.cluster.local. SRV NOERROR aa 0 33 8080 web-0.twice.twice.svc.cluster.local. | 0 33 8081 web-0.twice.twice.svc.cluster.local. | 0 33 8081 web-1.twice.twice.svc.cluster.local. ; additional: web-0.twice.twice.svc.cluster.local. A 10.1.2.1 | web-1.twice.twice.svc.cluster.local. A 10.1.2.4
web-0.twice.twice.svc.cluster.local. A NOERROR aa 10.1.2.1
twice.twice.svc.cluster.local. A NOERROR aa 10.1.2.1 | 10.1.2.4
""")


@tests.case
def dual_stack_slices_answer_every_endpoint_of_both_families(cluster):
    # A dual-stack headless service as the EndpointSlice controller writes it: a
    # placeholder slice first, one slice per family with the same ports, endpoints
    # not ready and then ready. (CoreDNS differential seed 281010364 looked like a
    # defect here; it was UDP truncation: eight SRV records need TCP.)
    ports = [("p0", 8000), ("p1", 8001)]
    def family_slice(name, family, endpoints, ports=ports):
        return dict(local_slice("dual", name, "mix", endpoints, ports), addressType=family)
    placeholder = family_slice("mix-ph", "IPv4", [], [])
    placeholder["ports"] = None
    cluster.sim.apply([
        namespace("dual"),
        headless_service("dual", "mix", ports=(("p0", 1000), ("p1", 1010))),
        placeholder,
    ])
    time.sleep(1)
    cluster.sim.apply([
        family_slice("mix-v4", "IPv4", [endpoint(f"10.3.0.{n}", ready=False) for n in (1, 2, 3, 4)]),
        family_slice("mix-v6", "IPv6", [endpoint(f"fd00::{n}", ready=False) for n in (1, 2, 3)]),
    ])
    time.sleep(1)
    cluster.sim.delete("EndpointSlice", "dual", "mix-ph")
    cluster.sim.apply([
        family_slice("mix-v4", "IPv4", [endpoint(f"10.3.0.{n}") for n in (1, 2, 3, 4)]),
        family_slice("mix-v6", "IPv6", [endpoint(f"fd00::{n}") for n in (1, 2, 3)]),
    ])
    expect(cluster, """
_p0._tcp.mix.dual.svc.cluster.local. SRV NOERROR aa 0 14 8000 10-3-0-1.mix.dual.svc.cluster.local. | 0 14 8000 10-3-0-2.mix.dual.svc.cluster.local. | 0 14 8000 10-3-0-3.mix.dual.svc.cluster.local. | 0 14 8000 10-3-0-4.mix.dual.svc.cluster.local. | 0 14 8000 fd00--1.mix.dual.svc.cluster.local. | 0 14 8000 fd00--2.mix.dual.svc.cluster.local. | 0 14 8000 fd00--3.mix.dual.svc.cluster.local.
_p1._tcp.mix.dual.svc.cluster.local. SRV NOERROR aa 0 14 8001 10-3-0-1.mix.dual.svc.cluster.local. | 0 14 8001 10-3-0-2.mix.dual.svc.cluster.local. | 0 14 8001 10-3-0-3.mix.dual.svc.cluster.local. | 0 14 8001 10-3-0-4.mix.dual.svc.cluster.local. | 0 14 8001 fd00--1.mix.dual.svc.cluster.local. | 0 14 8001 fd00--2.mix.dual.svc.cluster.local. | 0 14 8001 fd00--3.mix.dual.svc.cluster.local.
""")


@tests.case
def clusterset_headless_srv_follows_each_clusters_slices_ports(cluster):
    # web-0 and web-2 of cluster-a serve http on 8080; web-0 of cluster-b on 9090, with metrics.
    cluster.sim.apply([
        namespace("croll"),
        headless_import("croll", "roll", ["cluster-a", "cluster-b"]),
        imported_slice("croll", "roll-a", "roll", "cluster-a",
                       [endpoint("10.2.0.1", "web-0"), endpoint("10.2.0.3", "web-2")], [("http", 8080)]),
        imported_slice("croll", "roll-b", "roll", "cluster-b",
                       [endpoint("10.2.1.1", "web-0")], [("http", 9090), ("metrics", 9100)]),
    ])
    expect(cluster, """
_http._tcp.roll.croll.svc.clusterset.local. SRV NOERROR aa 0 33 8080 web-0.cluster-a.roll.croll.svc.clusterset.local. | 0 33 8080 web-2.cluster-a.roll.croll.svc.clusterset.local. | 0 33 9090 web-0.cluster-b.roll.croll.svc.clusterset.local. ; additional: web-0.cluster-a.roll.croll.svc.clusterset.local. A 10.2.0.1 | web-2.cluster-a.roll.croll.svc.clusterset.local. A 10.2.0.3 | web-0.cluster-b.roll.croll.svc.clusterset.local. A 10.2.1.1
_metrics._tcp.roll.croll.svc.clusterset.local. SRV NOERROR aa 0 100 9100 web-0.cluster-b.roll.croll.svc.clusterset.local. ; additional: web-0.cluster-b.roll.croll.svc.clusterset.local. A 10.2.1.1
_grpc._tcp.roll.croll.svc.clusterset.local. SRV NXDOMAIN aa
""")


tests.main(fixture=lambda: Cluster(manifests=[SAMPLE]))
