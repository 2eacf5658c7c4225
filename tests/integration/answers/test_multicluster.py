#!/usr/bin/env python3
"""The clusterset zone as an MCS controller changes it: ServiceImports and imported
EndpointSlices come and go, clusters join and leave, the local cluster id changes.

The cluster is the sample (tests/manifests/sample, "cluster-a", with ServiceImports
shop/web and db/postgres imported from cluster-a and cluster-b). Each test writes its own
objects into its own namespace through the simulator, then waits until DNS shows the change
(`expect`: case lines, as in tests.table, retried for a few seconds). Tests that need another
setup (a v1beta1-only API, the cluster-id option, no clusterset zone) start their own cluster.
"""

import json
import os
import tempfile
import urllib.parse

import cases
import testing
from cluster import Cluster, SAMPLE
from faults import namespace

tests = testing.Tests()

CONTROLLER = "mcs-controller.example.org"


# -- objects an MCS controller (and the cluster's own controllers) would write

def ports_of(ports):
    return [{"name": name, "protocol": "TCP", "port": number} if name else
            {"protocol": "TCP", "port": number} for name, number in ports]


def service_import(ns, name, kind="Headless", ips=(), ports=(("http", 80),), clusters=(),
                   version="v1alpha1"):
    spec = {"type": kind, "ports": ports_of(ports)}
    if ips:
        spec["ips"] = list(ips)
    return {"apiVersion": f"multicluster.x-k8s.io/{version}", "kind": "ServiceImport",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec, "status": {"clusters": [{"cluster": c} for c in clusters]}}


def endpoint(addresses, hostname=None, ready=True):
    ep = {"addresses": addresses if isinstance(addresses, list) else [addresses],
          "conditions": {"ready": ready}}
    if hostname:
        ep["hostname"] = hostname
    return ep


def imported_slice(ns, name, service, cluster, endpoints, family="IPv4", ports=(("http", 80),),
                   extra_labels=None):
    labels = {"multicluster.kubernetes.io/service-name": service,
              "multicluster.kubernetes.io/source-cluster": cluster,
              "endpointslice.kubernetes.io/managed-by": CONTROLLER}
    labels.update(extra_labels or {})
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "addressType": family, "endpoints": endpoints, "ports": ports_of(ports)}


def local_service(ns, name, cluster_ip, ports=(("http", 80),)):
    ips = ["None"] if cluster_ip == "None" else [cluster_ip]
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": cluster_ip, "clusterIPs": ips,
                     "ports": [dict(p, targetPort=p["port"]) for p in ports_of(ports)]}}


def local_slice(ns, name, service, endpoints, ports=(("http", 80),)):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4", "endpoints": endpoints, "ports": ports_of(ports)}


def cluster_property(value):
    return {"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
            "metadata": {"name": "cluster.clusterset.k8s.io"}, "spec": {"value": value}}


def expect(cluster, lines, server=None):
    """Waits until every case line (the tests.table format) holds on server (default: cluster)."""
    for case in cases.parse(lines):
        cluster.eventually(lambda: case.run(server or cluster))


def verbs(sim):
    """The simulator's request counts by verb and resource ("list serviceimports": n)."""
    return sim.counters()["verbs"]


# -- the sample's imports

@tests.case
def a_headless_service_merges_identical_hostnames_of_two_clusters(cluster):
    # postgres-0 and postgres-1 run in cluster-a (10.244.x) and in cluster-b (10.245.3.x);
    # postgres-2 (cluster-a) is not ready.
    expect(cluster, """
postgres.db.svc.clusterset.local. A NOERROR aa 10.244.0.20 | 10.244.1.20 | 10.245.3.4 | 10.245.3.5
postgres-0.cluster-a.postgres.db.svc.clusterset.local. A NOERROR aa 10.244.0.20
postgres-0.cluster-b.postgres.db.svc.clusterset.local. A NOERROR aa 10.245.3.4
postgres-1.cluster-b.postgres.db.svc.clusterset.local. A NOERROR aa 10.245.3.5
postgres-2.cluster-a.postgres.db.svc.clusterset.local. A NXDOMAIN aa
postgres-0.postgres.db.svc.clusterset.local. A NXDOMAIN aa
_pg._tcp.postgres.db.svc.clusterset.local. SRV NOERROR aa tcp 0 25 5432 postgres-0.cluster-a.postgres.db.svc.clusterset.local. | 0 25 5432 postgres-1.cluster-a.postgres.db.svc.clusterset.local. | 0 25 5432 postgres-0.cluster-b.postgres.db.svc.clusterset.local. | 0 25 5432 postgres-1.cluster-b.postgres.db.svc.clusterset.local.
""")


@tests.case
def an_endpoint_ip_keeps_its_cluster_local_ptr_and_a_remote_one_gets_the_clusterset_name(cluster):
    # 10.244.0.20 is also postgres-0 of the local Service db/postgres; 10.245.3.4 is remote only.
    expect(cluster, """
20.0.244.10.in-addr.arpa. PTR NOERROR aa postgres-0.postgres.db.svc.cluster.local.
4.3.245.10.in-addr.arpa.  PTR NOERROR aa postgres-0.cluster-b.postgres.db.svc.clusterset.local.
""")


@tests.case
def an_exported_and_imported_service_keeps_its_cluster_local_records(cluster):
    # shop/web is a local dual-stack Service and a ServiceImport (ClusterSetIP 10.42.0.10).
    expect(cluster, """
web.shop.svc.cluster.local.    A    NOERROR aa 10.96.12.34
web.shop.svc.cluster.local.    AAAA NOERROR aa fd00:10:96::1234
_http._tcp.web.shop.svc.cluster.local. SRV NOERROR aa 0 100 80 web.shop.svc.cluster.local.
34.12.96.10.in-addr.arpa.      PTR  NOERROR aa web.shop.svc.cluster.local.
web.shop.svc.clusterset.local. A    NOERROR aa 10.42.0.10
web.shop.svc.clusterset.local. AAAA NOERROR aa
_http._tcp.web.shop.svc.clusterset.local. SRV NOERROR aa 0 100 80 web.shop.svc.clusterset.local.
10.0.42.10.in-addr.arpa.       PTR  NOERROR aa web.shop.svc.clusterset.local.
""")


@tests.case
def clusterset_names_exist_only_through_service_imports(cluster):
    # shop/cache is a local headless Service that nothing imports.
    expect(cluster, """
cache.shop.svc.cluster.local.    A NOERROR aa 10.244.0.30 | 10.244.1.30
cache.shop.svc.clusterset.local. A NXDOMAIN aa
kubernetes.default.svc.clusterset.local. A NXDOMAIN aa
""")


# -- changes

@tests.case
def imported_slices_never_join_the_cluster_zone(cluster):
    # Some controllers also set kubernetes.io/service-name on the slices they import.
    cluster.sim.apply([
        namespace("mirror"),
        local_service("mirror", "kv", "None"),
        local_slice("mirror", "kv-local", "kv", [endpoint("10.244.7.1", "kv-0")]),
        service_import("mirror", "kv", clusters=["cluster-b"]),
        imported_slice("mirror", "kv-b", "kv", "cluster-b", [endpoint("10.245.7.1", "kv-0")],
                       extra_labels={"kubernetes.io/service-name": "kv"}),
    ])
    expect(cluster, """
kv-0.cluster-b.kv.mirror.svc.clusterset.local. A NOERROR aa 10.245.7.1
kv.mirror.svc.cluster.local.      A NOERROR aa 10.244.7.1
kv-0.kv.mirror.svc.cluster.local. A NOERROR aa 10.244.7.1
kv.mirror.svc.clusterset.local.   A NOERROR aa 10.245.7.1
""")


@tests.case
def a_cluster_leaving_takes_its_endpoints_and_names_away(cluster):
    cluster.sim.apply([
        namespace("leave"),
        service_import("leave", "ring", clusters=["east", "west"]),
        imported_slice("leave", "ring-east", "ring", "east", [endpoint("10.61.0.1", "ring-0")]),
        imported_slice("leave", "ring-west", "ring", "west", [endpoint("10.62.0.1", "ring-0")]),
    ])
    expect(cluster, """
ring.leave.svc.clusterset.local. A NOERROR aa 10.61.0.1 | 10.62.0.1
ring-0.west.ring.leave.svc.clusterset.local. A NOERROR aa 10.62.0.1
1.0.62.10.in-addr.arpa. PTR NOERROR aa ring-0.west.ring.leave.svc.clusterset.local.
""")
    # KEP-1645: when a cluster's lease expires its slices are removed by their source-cluster label.
    cluster.sim.delete("endpointslices", "leave", "ring-west")
    expect(cluster, """
ring.leave.svc.clusterset.local. A NOERROR aa 10.61.0.1
ring-0.west.ring.leave.svc.clusterset.local. A NXDOMAIN aa
west.ring.leave.svc.clusterset.local. A NXDOMAIN aa
ring-0.east.ring.leave.svc.clusterset.local. A NOERROR aa 10.61.0.1
_http._tcp.ring.leave.svc.clusterset.local. SRV NOERROR aa 0 100 80 ring-0.east.ring.leave.svc.clusterset.local.
1.0.62.10.in-addr.arpa. PTR NXDOMAIN aa
""")
    # The last cluster leaves: no ready endpoint anywhere.
    cluster.sim.delete("endpointslices", "leave", "ring-east")
    expect(cluster, """
ring.leave.svc.clusterset.local. A NXDOMAIN aa
ring-0.east.ring.leave.svc.clusterset.local. A NXDOMAIN aa
1.0.61.10.in-addr.arpa. PTR NXDOMAIN aa
""")
    # The import goes: its names go, whatever slices remain.
    cluster.sim.apply(imported_slice("leave", "ring-east", "ring", "east", [endpoint("10.61.0.1", "ring-0")]))
    expect(cluster, "ring.leave.svc.clusterset.local. A NOERROR aa 10.61.0.1")
    cluster.sim.delete("serviceimports", "leave", "ring")
    expect(cluster, """
ring.leave.svc.clusterset.local. A NXDOMAIN aa
ring-0.east.ring.leave.svc.clusterset.local. A NXDOMAIN aa
1.0.61.10.in-addr.arpa. PTR NXDOMAIN aa
""")


@tests.case
def dual_stack_imports_answer_both_families(cluster):
    cluster.sim.apply([
        namespace("dual"),
        service_import("dual", "vip", kind="ClusterSetIP", ips=["10.42.5.5", "fd00:42::5"],
                       clusters=["cluster-b"]),
        imported_slice("dual", "vip-b", "vip", "cluster-b", [endpoint("10.245.5.5")]),
        service_import("dual", "pets", clusters=["cluster-b"]),
        imported_slice("dual", "pets-b4", "pets", "cluster-b", [endpoint("10.245.6.1", "pet-0")]),
        imported_slice("dual", "pets-b6", "pets", "cluster-b", [endpoint("fd00:245::6:1", "pet-0")],
                       family="IPv6"),
    ])
    expect(cluster, """
vip.dual.svc.clusterset.local. A    NOERROR aa 10.42.5.5
vip.dual.svc.clusterset.local. AAAA NOERROR aa fd00:42::5
_http._tcp.vip.dual.svc.clusterset.local. SRV NOERROR aa 0 100 80 vip.dual.svc.clusterset.local. ; additional: vip.dual.svc.clusterset.local. A 10.42.5.5 | vip.dual.svc.clusterset.local. AAAA fd00:42::5
5.5.42.10.in-addr.arpa. PTR NOERROR aa vip.dual.svc.clusterset.local.
5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.2.4.0.0.0.0.d.f.ip6.arpa. PTR NOERROR aa vip.dual.svc.clusterset.local.
pets.dual.svc.clusterset.local. A    NOERROR aa 10.245.6.1
pets.dual.svc.clusterset.local. AAAA NOERROR aa fd00:245::6:1
pet-0.cluster-b.pets.dual.svc.clusterset.local. A    NOERROR aa 10.245.6.1
pet-0.cluster-b.pets.dual.svc.clusterset.local. AAAA NOERROR aa fd00:245::6:1
_http._tcp.pets.dual.svc.clusterset.local. SRV NOERROR aa 0 100 80 pet-0.cluster-b.pets.dual.svc.clusterset.local. ; additional: pet-0.cluster-b.pets.dual.svc.clusterset.local. A 10.245.6.1 | pet-0.cluster-b.pets.dual.svc.clusterset.local. AAAA fd00:245::6:1
1.0.0.0.6.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.5.4.2.0.0.0.d.f.ip6.arpa. PTR NOERROR aa pet-0.cluster-b.pets.dual.svc.clusterset.local.
""")


@tests.case
def two_label_cluster_ids_name_endpoints_and_only_empty_non_terminals(cluster):
    # KEP-1645: a cluster id is a cluster name, or a name and a second label of context.
    # "prod" alone is also a cluster here; east.dev and east.stage have no ready endpoint.
    cluster.sim.apply([
        namespace("labels"),
        service_import("labels", "web", clusters=["east.prod", "west.prod", "prod", "east.dev",
                                                  "east.stage", "west.stage"]),
        imported_slice("labels", "web-ep", "web", "east.prod", [endpoint("10.71.0.1", "web-0")]),
        imported_slice("labels", "web-wp", "web", "west.prod", [endpoint("10.72.0.1", "web-0")]),
        imported_slice("labels", "web-p", "web", "prod", [endpoint("10.73.0.1", "web-0")]),
        imported_slice("labels", "web-ed", "web", "east.dev",
                       [endpoint("10.74.0.1", "web-0", ready=False)]),
        imported_slice("labels", "web-es", "web", "east.stage",
                       [endpoint("10.75.0.1", "web-0", ready=False)]),
        imported_slice("labels", "web-ws", "web", "west.stage", [endpoint("10.76.0.1", "web-1")]),
    ])
    expect(cluster, """
web.labels.svc.clusterset.local. A NOERROR aa 10.71.0.1 | 10.72.0.1 | 10.73.0.1 | 10.76.0.1
web-1.west.stage.web.labels.svc.clusterset.local. A NOERROR aa 10.76.0.1
web-0.east.prod.web.labels.svc.clusterset.local. A NOERROR aa 10.71.0.1
web-0.west.prod.web.labels.svc.clusterset.local. A NOERROR aa 10.72.0.1
web-0.prod.web.labels.svc.clusterset.local.      A NOERROR aa 10.73.0.1
web-0.east.dev.web.labels.svc.clusterset.local.  A NXDOMAIN aa
1.0.71.10.in-addr.arpa. PTR NOERROR aa web-0.east.prod.web.labels.svc.clusterset.local.
_http._tcp.web.labels.svc.clusterset.local. SRV NOERROR aa 0 25 80 web-0.east.prod.web.labels.svc.clusterset.local. | 0 25 80 web-0.west.prod.web.labels.svc.clusterset.local. | 0 25 80 web-0.prod.web.labels.svc.clusterset.local. | 0 25 80 web-1.west.stage.web.labels.svc.clusterset.local.
""")
    # <clusterid>.<svc> and the label above a two-label id exist only as empty non-terminals:
    # no addresses, whatever the type (MCS DNS 2.4.4), but not NXDOMAIN (names exist below).
    expect(cluster, """
east.prod.web.labels.svc.clusterset.local. A    NOERROR aa
east.prod.web.labels.svc.clusterset.local. AAAA NOERROR aa
west.prod.web.labels.svc.clusterset.local. A    NOERROR aa
prod.web.labels.svc.clusterset.local.      A    NOERROR aa
east.dev.web.labels.svc.clusterset.local.  A    NXDOMAIN aa
dev.web.labels.svc.clusterset.local.       A    NXDOMAIN aa
stage.web.labels.svc.clusterset.local.     A    NOERROR aa
east.stage.web.labels.svc.clusterset.local. A   NXDOMAIN aa
north.prod.web.labels.svc.clusterset.local. A   NXDOMAIN aa
""")


@tests.case
def an_import_without_ready_endpoints(cluster):
    cluster.sim.apply([
        namespace("idle"),
        service_import("idle", "batch", clusters=["cluster-b"]),
        imported_slice("idle", "batch-b", "batch", "cluster-b",
                       [endpoint("10.245.8.1", "batch-0", ready=False)]),
        service_import("idle", "vip", kind="ClusterSetIP", ips=["10.42.8.8"], clusters=["cluster-b"]),
        imported_slice("idle", "vip-b", "vip", "cluster-b", [endpoint("10.245.8.8", ready=False)]),
    ])
    # Headless: NXDOMAIN (MCS DNS 2.4.1). ClusterSetIP: the clusterset IP is the answer, as a
    # ClusterIP service's is without endpoints (unless ignore-empty-service).
    expect(cluster, """
vip.idle.svc.clusterset.local. A NOERROR aa 10.42.8.8
batch.idle.svc.clusterset.local. A    NXDOMAIN aa
batch.idle.svc.clusterset.local. AAAA NXDOMAIN aa
batch-0.cluster-b.batch.idle.svc.clusterset.local. A NXDOMAIN aa
cluster-b.batch.idle.svc.clusterset.local. A NXDOMAIN aa
_http._tcp.batch.idle.svc.clusterset.local. SRV NXDOMAIN aa
1.8.245.10.in-addr.arpa. PTR NXDOMAIN aa
""")
    cluster.sim.apply(imported_slice("idle", "batch-b", "batch", "cluster-b",
                                     [endpoint("10.245.8.1", "batch-0")]))
    expect(cluster, """
batch.idle.svc.clusterset.local. A NOERROR aa 10.245.8.1
batch-0.cluster-b.batch.idle.svc.clusterset.local. A NOERROR aa 10.245.8.1
""")


@tests.case
def a_clusterset_ip_gets_a_ptr_only_while_no_cluster_local_record_claims_it(cluster):
    cluster.sim.apply([
        namespace("claim"),
        service_import("claim", "api", kind="ClusterSetIP", ips=["10.96.77.77"], clusters=["cluster-b"]),
    ])
    expect(cluster, "77.77.96.10.in-addr.arpa. PTR NOERROR aa api.claim.svc.clusterset.local.")
    # A "dummy" local Service with the clusterset IP as its cluster IP claims the address.
    cluster.sim.apply(local_service("claim", "derived-api", "10.96.77.77"))
    expect(cluster, "77.77.96.10.in-addr.arpa. PTR NOERROR aa derived-api.claim.svc.cluster.local.")
    cluster.sim.delete("services", "claim", "derived-api")
    expect(cluster, "77.77.96.10.in-addr.arpa. PTR NOERROR aa api.claim.svc.clusterset.local.")


@tests.case
def the_local_cluster_endpoints_join_an_import_that_lists_the_local_cluster(cluster):
    # shop/kv is exported by this cluster (cluster-a, from the ClusterProperty) and by
    # cluster-b; the controller imported only cluster-b's slice.
    cluster.sim.apply([
        namespace("join"),
        local_service("join", "kv", "None"),
        local_slice("join", "kv-local", "kv", [endpoint("10.244.9.1", "kv-0")]),
        service_import("join", "kv", clusters=["cluster-a", "cluster-b"]),
        imported_slice("join", "kv-b", "kv", "cluster-b", [endpoint("10.245.9.1", "kv-0")]),
    ])
    expect(cluster, """
kv.join.svc.clusterset.local. A NOERROR aa 10.244.9.1 | 10.245.9.1
kv-0.cluster-a.kv.join.svc.clusterset.local. A NOERROR aa 10.244.9.1
kv-0.cluster-b.kv.join.svc.clusterset.local. A NOERROR aa 10.245.9.1
1.9.244.10.in-addr.arpa. PTR NOERROR aa kv-0.kv.join.svc.cluster.local.
""")
    # A local endpoint change reaches the clusterset zone.
    cluster.sim.apply(local_slice("join", "kv-local", "kv", [endpoint("10.244.9.1", "kv-0"),
                                                             endpoint("10.244.9.2", "kv-1")]))
    expect(cluster, "kv-1.cluster-a.kv.join.svc.clusterset.local. A NOERROR aa 10.244.9.2")
    # Once the controller imports the local cluster's own slice, it is the only source.
    cluster.sim.apply(imported_slice("join", "kv-a", "kv", "cluster-a", [endpoint("10.244.9.1", "kv-0")]))
    expect(cluster, """
kv-1.cluster-a.kv.join.svc.clusterset.local. A NXDOMAIN aa
kv.join.svc.clusterset.local. A NOERROR aa 10.244.9.1 | 10.245.9.1
""")
    # Without the local cluster in status.clusters, local endpoints never join.
    cluster.sim.delete("endpointslices", "join", "kv-a")
    cluster.sim.apply(service_import("join", "kv", clusters=["cluster-b"]))
    expect(cluster, """
kv.join.svc.clusterset.local. A NOERROR aa 10.245.9.1
kv-0.cluster-a.kv.join.svc.clusterset.local. A NXDOMAIN aa
""")


@tests.case
def the_local_cluster_id_follows_the_cluster_property(cluster):
    cluster.sim.apply([
        namespace("rename"),
        local_service("rename", "kv", "None"),
        local_slice("rename", "kv-local", "kv", [endpoint("10.244.10.1", "kv-0")]),
        service_import("rename", "kv", clusters=["cluster-a", "cluster-z"]),
    ])
    expect(cluster, "kv-0.cluster-a.kv.rename.svc.clusterset.local. A NOERROR aa 10.244.10.1")
    try:
        cluster.sim.apply(cluster_property("cluster-z"))
        expect(cluster, """
kv-0.cluster-z.kv.rename.svc.clusterset.local. A NOERROR aa 10.244.10.1
kv-0.cluster-a.kv.rename.svc.clusterset.local. A NXDOMAIN aa
""")
        # A property without value (the CRD forbids it; an old one may not): no local cluster id.
        cluster.sim.apply({**cluster_property(""), "spec": {}}, validate=False)
        expect(cluster, """
kv-0.cluster-z.kv.rename.svc.clusterset.local. A NXDOMAIN aa
kv.rename.svc.clusterset.local. A NXDOMAIN aa
""")
    finally:
        cluster.sim.apply(cluster_property("cluster-a"))
    expect(cluster, "kv-0.cluster-a.kv.rename.svc.clusterset.local. A NOERROR aa 10.244.10.1")


# -- other setups, each with its own simulator

@tests.case
def the_cluster_id_option_overrides_the_cluster_property(cluster):
    with tempfile.TemporaryDirectory() as work:
        extra = os.path.join(work, "90-join.json")
        with open(extra, "w") as f:
            json.dump({"kind": "List", "apiVersion": "v1", "items": [
                namespace("join"),
                local_service("join", "kv", "None"),
                local_slice("join", "kv-local", "kv", [endpoint("10.244.9.1", "kv-0")]),
                service_import("join", "kv", clusters=["cluster-a", "east.prod"]),
            ]}, f)
        with Cluster(manifests=[SAMPLE, extra], module={"cluster-id": "east.prod"}) as other:
            expect(other, """
kv-0.east.prod.kv.join.svc.clusterset.local. A NOERROR aa 10.244.9.1
kv-0.cluster-a.kv.join.svc.clusterset.local. A NXDOMAIN aa
""")
            seen = verbs(other.sim)
            testing.expect(not any("clusterproperties" in verb for verb in seen),
                           f"the ClusterProperty was read despite the option: {seen}")


@tests.case
def service_imports_served_only_at_v1beta1_are_watched_there(cluster):
    with tempfile.TemporaryDirectory() as work:
        manifest = os.path.join(work, "cluster.json")
        with open(manifest, "w") as f:
            json.dump({"kind": "List", "apiVersion": "v1", "items": [
                namespace("beta"),
                service_import("beta", "web", kind="ClusterSetIP", ips=["10.42.9.9"],
                               clusters=["cluster-b"], version="v1beta1"),
            ]}, f)
        with Cluster(manifests=[manifest], sim_args=["--serviceimport-version", "v1beta1"]) as other:
            expect(other, "web.beta.svc.clusterset.local. A NOERROR aa 10.42.9.9")
            # Watched, not only listed: a new import appears.
            other.sim.apply(service_import("beta", "api", kind="ClusterSetIP", ips=["10.42.9.10"],
                                           clusters=["cluster-b"], version="v1beta1"))
            expect(other, "api.beta.svc.clusterset.local. A NOERROR aa 10.42.9.10")
            paths = {r["path"] for r in other.sim.requests() if r["resource"] == "serviceimports"}
            testing.expect("/apis/multicluster.x-k8s.io/v1beta1/serviceimports" in paths,
                           f"no request for v1beta1 ServiceImports: {sorted(paths)}")


@tests.case
def without_a_clusterset_zone_nothing_multicluster_is_watched(cluster):
    zones = ("cluster.local.", "in-addr.arpa.", "ip6.arpa.")
    with Cluster(manifests=[SAMPLE], zones=zones) as other:
        expect(other, "web.shop.svc.cluster.local. A NOERROR aa 10.96.12.34")
        seen = verbs(other.sim)
        multicluster = [verb for verb in seen if "serviceimports" in verb or "clusterproperties" in verb]
        testing.expect(not multicluster, f"multicluster resources read: {multicluster}")
        selectors = [urllib.parse.parse_qs(r["query"]).get("labelSelector", [""])[0]
                     for r in other.sim.requests() if r["resource"] == "endpointslices"]
        imported = [s for s in selectors if s.startswith("multicluster.kubernetes.io/")]
        testing.expect(not imported, f"imported EndpointSlices listed or watched: {selectors}")
        # Listed, or watched from a watch-list's initial events (the module's default).
        read = seen.get("list endpointslices", 0) + seen.get("watch endpointslices", 0)
        testing.expect(read > 0, f"endpointslices not read: {seen}")


tests.main(fixture=lambda: Cluster(manifests=[SAMPLE]))
