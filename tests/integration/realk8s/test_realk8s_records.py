#!/usr/bin/env python3
"""mod-k8s against the real control plane: every record family, from objects kubectl applied.

The world is created with the built kubectl (apply) on a real kube-apiserver and
etcd; the real EndpointSlice controller of kube-controller-manager writes the
EndpointSlices from pods whose status a kubelet stand-in sets (tests/lib/realk8s.py).
Answers are checked with kdig. Nothing here comes from the API simulator.

Skips (exit 77) where the control plane is not built (tests/realk8s/build; no Go).
"""

import ipaddress
import os

import cases
import realk8s
import testing
from realk8s import namespace, pod, service

realk8s.skip_unless_available()

tests = testing.Tests()
Z = "cluster.local."


def rev(address):
    return ipaddress.ip_address(address).reverse_pointer + "."


def world(plane):
    objects = [namespace("shop", {"team": "shop"}), namespace("db", {"team": "db"})]
    web = service("web", "shop", [{"name": "http", "port": 80, "targetPort": 8080}],
                  selector={"app": "web"}, policy="RequireDualStack", cluster_ip="10.96.1.10",
                  families=["IPv4", "IPv6"], labels={"app": "web"})
    web["spec"]["clusterIPs"] = ["10.96.1.10", "fd00:10:96::1:10"]
    objects += [web,
                pod("web-a", "shop", {"app": "web"}, ips=["10.244.1.10", "fd00:10:244::1:10"]),
                pod("web-b", "shop", {"app": "web"}, ips=["10.244.1.11", "fd00:10:244::1:11"])]
    objects += [service("postgres", "db", [{"name": "pg", "port": 5432}], cluster_ip="None",
                        selector={"app": "postgres"}, labels={"app": "postgres"})]
    objects += [pod(f"pg-{i}", "db", {"app": "postgres"}, ips=[f"10.244.2.{10 + i}"],
                    hostname=f"pg-{i}", subdomain="postgres", ready=(i < 2)) for i in range(3)]
    objects += [service("cache", "shop", [{"name": "redis", "port": 6379}], cluster_ip="None",
                        selector={"app": "cache"}, policy="RequireDualStack",
                        families=["IPv4", "IPv6"], labels={"app": "cache"}),
                pod("cache-x", "shop", {"app": "cache"}, ips=["10.244.3.10", "fd00:10:244::3:10"])]
    objects += [service("ext", "shop", [], svc_type="ExternalName",
                        external_name="www.example.com", labels={"app": "ext"})]
    objects += [service("dns", "shop", [{"name": "dns", "port": 53, "protocol": "UDP"},
                                         {"name": "dns-tcp", "port": 53, "protocol": "TCP"}],
                        cluster_ip="10.96.1.20", selector={"app": "none"}, labels={"app": "dns"})]
    plane.apply(objects)
    # The real controller's work, before the module lists: every slice it must write.
    ready = lambda n: lambda items: sum(  # noqa: E731
        1 for s in items for e in s.get("endpoints") or [] if e["conditions"].get("ready")) == n
    plane.wait_for_slices("shop", "web", ready(4))
    plane.wait_for_slices("db", "postgres", lambda items: sum(
        len(s.get("endpoints") or []) for s in items) == 3)
    plane.wait_for_slices("shop", "cache", ready(2))


# Spec 2.3: a ClusterIP service, dual stack (A, AAAA, SRV, PTR of both addresses).
# Spec 2.4: headless, with hostname/subdomain pods, a pod that is not ready, dual stack.
# ExternalName (2.5), pod records (insecure), the API server's own service.
RECORDS = f"""
web.shop.svc.{Z}   A    NOERROR aa 10.96.1.10
web.shop.svc.{Z}   AAAA NOERROR aa fd00:10:96::1:10
_http._tcp.web.shop.svc.{Z} SRV NOERROR aa 0 100 80 web.shop.svc.{Z}
_http._udp.web.shop.svc.{Z} SRV NXDOMAIN aa
{rev("10.96.1.10")} PTR NOERROR aa web.shop.svc.{Z}
{rev("fd00:10:96::1:10")} PTR NOERROR aa web.shop.svc.{Z}
10-244-1-10.web.shop.svc.{Z} A NOERROR aa 10.244.1.10
fd00-10-244--1-11.web.shop.svc.{Z} AAAA NOERROR aa fd00:10:244::1:11
{rev("10.244.1.10")} PTR NOERROR aa 10-244-1-10.web.shop.svc.{Z}
postgres.db.svc.{Z} A    NOERROR aa 10.244.2.10 | 10.244.2.11
postgres.db.svc.{Z} AAAA NOERROR aa
pg-0.postgres.db.svc.{Z} A NOERROR aa 10.244.2.10
pg-1.postgres.db.svc.{Z} A NOERROR aa 10.244.2.11
pg-2.postgres.db.svc.{Z} A NXDOMAIN aa
_pg._tcp.postgres.db.svc.{Z} SRV NOERROR aa 0 50 5432 pg-0.postgres.db.svc.{Z} | 0 50 5432 pg-1.postgres.db.svc.{Z}
{rev("10.244.2.10")} PTR NOERROR aa pg-0.postgres.db.svc.{Z}
{rev("10.244.2.12")} PTR NXDOMAIN aa
cache.shop.svc.{Z} A    NOERROR aa 10.244.3.10
cache.shop.svc.{Z} AAAA NOERROR aa fd00:10:244::3:10
10-244-3-10.cache.shop.svc.{Z} A NOERROR aa 10.244.3.10
fd00-10-244--3-10.cache.shop.svc.{Z} AAAA NOERROR aa fd00:10:244::3:10
_redis._tcp.cache.shop.svc.{Z} SRV NOERROR aa 0 50 6379 10-244-3-10.cache.shop.svc.{Z} | 0 50 6379 fd00-10-244--3-10.cache.shop.svc.{Z}
{rev("fd00:10:244::3:10")} PTR NOERROR aa fd00-10-244--3-10.cache.shop.svc.{Z}
ext.shop.svc.{Z}   CNAME NOERROR aa www.example.com.
dns.shop.svc.{Z}   A     NOERROR aa 10.96.1.20
_dns._udp.dns.shop.svc.{Z} SRV NOERROR aa 0 100 53 dns.shop.svc.{Z}
_dns-tcp._tcp.dns.shop.svc.{Z} SRV NOERROR aa 0 100 53 dns.shop.svc.{Z}
10-244-1-10.shop.pod.{Z} A NOERROR aa 10.244.1.10
fd00-10-244--1-10.shop.pod.{Z} AAAA NOERROR aa fd00:10:244::1:10
kubernetes.default.svc.{Z} A NOERROR aa 10.96.0.1
_https._tcp.kubernetes.default.svc.{Z} SRV NOERROR aa 0 100 443 kubernetes.default.svc.{Z}
{rev("10.96.0.1")} PTR NOERROR aa kubernetes.default.svc.{Z}
nope.shop.svc.{Z}  A NXDOMAIN aa
dns-version.{Z}    TXT NOERROR aa "1.1.0"
"""

for record_case in cases.parse(RECORDS):
    # The module lists after the controller wrote its slices, but the first answers may
    # still race the last events: each case waits for its answer a moment.
    tests.add(record_case.name,
              lambda cl, c=record_case: testing.eventually(lambda: c.run(cl), timeout=15))


# ---------------------------------------------------------------- changes through the API

@tests.case
def a_pod_that_stops_being_ready_leaves_the_headless_answer(cl):
    cl.plane.kubectl("annotate", "-n", "db", "pod", "pg-0", "--overwrite",
                     f"{realk8s.ANNOTATION}ready=false")
    cl.expect_answer(f"postgres.db.svc.{Z}", "A", "NOERROR", ["10.244.2.11"], timeout=20)
    cl.expect_answer(f"pg-0.postgres.db.svc.{Z}", "A", "NXDOMAIN", timeout=5)
    cl.plane.kubectl("annotate", "-n", "db", "pod", "pg-0", f"{realk8s.ANNOTATION}ready-")
    cl.expect_answer(f"postgres.db.svc.{Z}", "A", "NOERROR", ["10.244.2.10", "10.244.2.11"],
                     timeout=20)


@tests.case
def a_terminating_pod_leaves_the_answer_then_the_slice(cl):
    cl.plane.apply(pod("cache-y", "shop", {"app": "cache"}, ips=["10.244.3.11"], linger=True))
    cl.expect_answer(f"10-244-3-11.cache.shop.svc.{Z}", "A", "NOERROR", ["10.244.3.11"],
                     timeout=20)
    cl.plane.kubectl("delete", "-n", "shop", "pod", "cache-y", "--wait=false")
    # The controller keeps it as serving, terminating, not ready: not in DNS.
    cl.plane.wait_for_slices("shop", "cache", lambda items: any(
        e["conditions"].get("terminating") for s in items for e in s.get("endpoints") or []))
    cl.expect_answer(f"10-244-3-11.cache.shop.svc.{Z}", "A", "NXDOMAIN", timeout=20)
    cl.expect_answer(f"cache.shop.svc.{Z}", "A", "NOERROR", ["10.244.3.10"], timeout=5)
    cl.plane.kubectl("annotate", "-n", "shop", "pod", "cache-y", f"{realk8s.ANNOTATION}linger-")
    cl.plane.wait_for_slices("shop", "cache", lambda items: not any(
        "10.244.3.11" in e["addresses"] for s in items for e in s.get("endpoints") or []))


@tests.case
def a_new_service_and_its_deletion_reach_dns(cl):
    cl.plane.apply(service("late", "shop", [{"name": "http", "port": 80}],
                           cluster_ip="10.96.1.30", selector={"app": "late"}))
    cl.expect_answer(f"late.shop.svc.{Z}", "A", "NOERROR", ["10.96.1.30"], timeout=20)
    cl.plane.kubectl("delete", "-n", "shop", "service", "late")
    cl.expect_answer(f"late.shop.svc.{Z}", "A", "NXDOMAIN", timeout=20)
    cl.expect_answer(rev("10.96.1.30"), "PTR", "NXDOMAIN", timeout=5)


def srv_pairs(cl, qname):
    answer = cl.query(qname, "SRV")
    return answer, sorted((int(rr.rdata.split()[2]), rr.rdata.split()[3])
                          for rr in answer.answer if rr.type == "SRV")


@tests.case
def a_rolling_update_that_moves_a_named_target_port_gives_each_endpoint_its_port(cl):
    """The controller puts the old and the new pods in slices of different ports:
    each endpoint's SRV record must carry its own slice's port (spec 2.4.2)."""
    cl.plane.apply([service("api", "shop", [{"name": "http", "port": 80, "targetPort": "web"}],
                            cluster_ip="None", selector={"app": "api"}),
                    pod("api-v1", "shop", {"app": "api"}, ips=["10.244.4.10"],
                        ports=[{"name": "web", "containerPort": 8080}]),
                    pod("api-v2", "shop", {"app": "api"}, ips=["10.244.4.20"],
                        ports=[{"name": "web", "containerPort": 9090}])])
    slices = cl.plane.wait_for_slices("shop", "api", lambda items: sorted(
        p["port"] for s in items if s.get("endpoints") for p in s.get("ports") or []) == [8080, 9090])
    testing.expect(len(slices) >= 2, f"expected one slice per port set, got {len(slices)}")
    want = [(8080, f"10-244-4-10.api.shop.svc.{Z}"), (9090, f"10-244-4-20.api.shop.svc.{Z}")]
    testing.eventually(lambda: testing.expect_equal(
        srv_pairs(cl, f"_http._tcp.api.shop.svc.{Z}")[1], want, "(port, target) of SRV"),
        timeout=15)


@tests.case
def the_rollout_ends_with_the_new_port_only(cl):
    cl.plane.kubectl("delete", "-n", "shop", "pod", "api-v1", "--wait=false")
    cl.plane.wait_for_slices("shop", "api", lambda items: sorted(
        p["port"] for s in items if s.get("endpoints") for p in s.get("ports") or []) == [9090])
    testing.eventually(lambda: testing.expect_equal(
        srv_pairs(cl, f"_http._tcp.api.shop.svc.{Z}")[1],
        [(9090, f"10-244-4-20.api.shop.svc.{Z}")], "(port, target) of SRV"), timeout=20)


# ---------------------------------------------------------------- clusterset (ServiceImports)

@tests.case
def service_imports_answer_in_the_clusterset_zone(cl):
    mcs = "multicluster.x-k8s.io/v1alpha1"
    cl.plane.apply([
        {"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
         "metadata": {"name": "cluster.clusterset.k8s.io"}, "spec": {"value": "cluster-a"}},
        {"apiVersion": mcs, "kind": "ServiceImport", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"type": "ClusterSetIP", "ips": ["10.42.0.10"], "ipFamilies": ["IPv4"],
                  "ports": [{"name": "http", "protocol": "TCP", "port": 80}]},
         "status": {"clusters": [{"cluster": "cluster-a"}, {"cluster": "cluster-b"}]}},
        {"apiVersion": mcs, "kind": "ServiceImport", "metadata": {"name": "postgres", "namespace": "db"},
         "spec": {"type": "Headless", "ipFamilies": ["IPv4"],
                  "ports": [{"name": "pg", "protocol": "TCP", "port": 5432}]},
         "status": {"clusters": [{"cluster": "cluster-b"}]}},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "imported-postgres-cluster-b", "namespace": "db",
                      "labels": {"multicluster.kubernetes.io/service-name": "postgres",
                                 "multicluster.kubernetes.io/source-cluster": "cluster-b",
                                 "endpointslice.kubernetes.io/managed-by": "mcs.modk8s.test"}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": ["10.245.3.4"], "hostname": "pg-0",
                        "conditions": {"ready": True}}],
         "ports": [{"name": "pg", "protocol": "TCP", "port": 5432}]}])
    cs = "clusterset.local."
    cl.expect_answer(f"web.shop.svc.{cs}", "A", "NOERROR", ["10.42.0.10"], timeout=20)
    testing.eventually(lambda: cases.Case(
        f"_http._tcp.web.shop.svc.{cs} SRV NOERROR aa 0 100 80 web.shop.svc.{cs}").run(cl), 10)
    cl.expect_answer(f"pg-0.cluster-b.postgres.db.svc.{cs}", "A", "NOERROR", ["10.245.3.4"],
                     timeout=20)
    cl.expect_answer(f"postgres.db.svc.{cs}", "A", "NOERROR", ["10.245.3.4"], timeout=5)
    cl.expect_answer(f"cache.shop.svc.{cs}", "A", "NXDOMAIN", timeout=5)
    testing.eventually(lambda: cases.Case(
        f"{rev('10.42.0.10')} PTR NOERROR aa web.shop.svc.{cs}").run(cl), 10)


# ---------------------------------------------------------------- filters (another knotd each)

def with_module(cl, options, checks):
    with cl.knotd(module=options, zones=realk8s.cluster.ZONES) as server:
        realk8s.cluster.wait_ready(server, ("cluster.local.", "clusterset.local."), timeout=60)
        for line in checks:
            c = cases.Case(line)
            testing.eventually(lambda: c.run(server), timeout=10)


@tests.case
def namespaces_serves_only_those_namespaces(cl):
    with_module(cl, {"namespaces": ["shop"]}, [
        f"web.shop.svc.{Z} A NOERROR aa 10.96.1.10",
        f"postgres.db.svc.{Z} A NXDOMAIN aa",
        f"kubernetes.default.svc.{Z} A NXDOMAIN aa"])


@tests.case
def namespace_labels_select_namespaces_by_their_labels(cl):
    with_module(cl, {"namespace-labels": "team=db"}, [
        f"postgres.db.svc.{Z} A NOERROR aa 10.244.2.10 | 10.244.2.11",
        f"web.shop.svc.{Z} A NXDOMAIN aa"])


@tests.case
def labels_are_applied_by_the_real_api_server(cl):
    with_module(cl, {"labels": "app in (web,cache)"}, [
        f"web.shop.svc.{Z} A NOERROR aa 10.96.1.10",
        f"cache.shop.svc.{Z} A NOERROR aa 10.244.3.10",
        f"postgres.db.svc.{Z} A NXDOMAIN aa",
        f"dns.shop.svc.{Z} A NXDOMAIN aa"])


@tests.case
def pods_verified_answers_only_live_pods_of_that_namespace(cl):
    with_module(cl, {"pods": "verified"}, [
        f"10-244-1-10.shop.pod.{Z} A NOERROR aa 10.244.1.10",
        f"fd00-10-244--1-11.shop.pod.{Z} AAAA NOERROR aa fd00:10:244::1:11",
        f"10-244-1-10.db.pod.{Z} A NXDOMAIN aa",
        f"10-244-9-9.shop.pod.{Z} A NXDOMAIN aa"])


@tests.case
def the_module_made_no_failed_request(cl):
    counters = cl.stats()
    errors = {k: v for k, v in counters.items() if k.startswith("api-errors") and v}
    testing.expect(not errors, f"api-errors: {errors}")


tests.main(fixture=lambda: realk8s.RealCluster(world=world))
