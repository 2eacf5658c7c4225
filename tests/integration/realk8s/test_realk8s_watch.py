#!/usr/bin/env python3
"""mod-k8s's watches through what a real kube-apiserver and etcd do to them.

  * kube-apiserver restarted, with changes made (through a second kube-apiserver on
    the same etcd) while it is down, then etcd compacted: the module's resumed
    watches get 410 Gone, it relists, DNS shows exactly the new state, and later
    changes flow again;
  * a large LIST through the watch cache: 400 EndpointSlices of a hundred
    addresses each (about 4 MB), and a new server's module synchronizes from its
    first LIST (resourceVersion=0, answered whole by the cache) with no error;
  * bookmarks: with nothing changing for over a minute, the watch still delivers
    (the watch cache's bookmarks), and is not restarted for it.

Skips (exit 77) where the control plane is not built (tests/realk8s/build; no Go).
"""

import concurrent.futures
import json
import time

import cluster
import dig
import realk8s
import testing
from realk8s import namespace, service

realk8s.skip_unless_available()

tests = testing.Tests()
Z = "cluster.local."


def svc(name, ip):
    return service(name, "shop", [{"name": "http", "port": 80}], cluster_ip=ip,
                   selector={"app": "none"})


def world(plane):
    plane.apply([namespace("shop"), svc("one", "10.96.3.1"), svc("two", "10.96.3.2")])


@tests.case
def changes_missed_while_down_past_a_compaction_come_from_a_relist_then_changes_flow(cl):
    """One restart of the module's kube-apiserver (they take the time of this file): changes
    made meanwhile through another server, etcd compacted past them; the new watch cache
    refuses the old versions (410), the module relists, and later changes flow again."""
    cl.expect_answer(f"one.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.1"], timeout=15)
    before = cl.stats()
    second, kubeconfig = cl.plane.second_apiserver()
    try:
        cl.plane.apiserver.stop()
        # While the module's server is down: add, change, delete, through the other one.
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            svc("four", "10.96.3.4"), svc("five", "10.96.3.5")]})
        cl.plane.kubectl("apply", "-f", "-", input=text, kubeconfig=kubeconfig)
        cl.plane.kubectl("delete", "-n", "shop", "service", "two", kubeconfig=kubeconfig)
        cl.plane.kubectl("label", "-n", "shop", "service", "one", "touched=yes",
                         kubeconfig=kubeconfig)
        revision = cl.plane.compact_etcd()
        print(f"# etcd compacted at revision {revision}")
        cl.plane._start_apiserver()
    finally:
        second.stop()
    cl.expect_answer(f"four.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.4"], timeout=40)
    cl.expect_answer(f"five.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.5"], timeout=5)
    cl.expect_answer(f"two.shop.svc.{Z}", "A", "NXDOMAIN", timeout=5)
    cl.expect_answer(f"one.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.1"], timeout=5)

    def counted():
        # The counters are published once a second, the answers at once: they may lag.
        counters = cl.stats()
        for name, why in (("resyncs", "no relist after the compaction"),
                          ("api-errors[gone]", "no 410 Gone counted"),
                          ("watch-restarts", "the watches were not restarted")):
            testing.expect(counters.get(name, 0) > before.get(name, 0), f"{why}: {counters}")
    testing.eventually(counted, timeout=5, interval=0.2)
    cl.plane.apply(svc("three", "10.96.3.3"))
    cl.expect_answer(f"three.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.3"], timeout=30)
    cl.plane.kubectl("delete", "-n", "shop", "service", "three")
    cl.expect_answer(f"three.shop.svc.{Z}", "A", "NXDOMAIN", timeout=20)
    testing.eventually(lambda: testing.expect_equal(cl.stats().get("connected"), 1, "connected"),
                       timeout=30)


BIG_SERVICES, BIG_SLICES, BIG_ENDPOINTS = 20, 20, 100


def big_slice(service, index):
    """A slice of BIG_ENDPOINTS addresses with hostnames, of headless service big-<service>."""
    endpoints = [{"addresses": [f"10.{100 + service}.{index}.{j + 1}"], "hostname": f"e{index}-{j}",
                  "conditions": {"ready": True}} for j in range(BIG_ENDPOINTS)]
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"big-{service}-{index}", "namespace": "big",
                         "labels": {"kubernetes.io/service-name": f"big-{service}",
                                    "endpointslice.kubernetes.io/managed-by": "test.modk8s"}},
            "addressType": "IPv4", "endpoints": endpoints,
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}


@tests.case
def a_large_list_through_the_watch_cache_synchronizes_a_new_server(cl):
    plane = cl.plane
    plane.apply([namespace("big")] + [
        service(f"big-{i}", "big", [{"name": "http", "port": 80}], cluster_ip="None")
        for i in range(BIG_SERVICES)])
    path = "/apis/discovery.k8s.io/v1/namespaces/big/endpointslices"

    def create(args):
        status, body = plane.api("POST", path, big_slice(*args))
        return status if status == 201 else f"{status} {str(body)[:200]}"

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(create, [(i, j) for i in range(BIG_SERVICES)
                                         for j in range(BIG_SLICES)]))
    bad = [r for r in results if r != 201]
    testing.expect(not bad, f"{len(bad)} slices not created: {bad[:3]}")
    status, body = plane.api("GET", "/apis/discovery.k8s.io/v1/endpointslices?resourceVersion=0",
                             timeout=60)
    size = len(json.dumps(body))
    print(f"# {len(results)} slices created in {time.monotonic() - started:.1f} s; "
          f"the cache's LIST at 0: {len(body['items'])} items, {size / 1e6:.1f} MB")
    testing.expect(not body["metadata"].get("continue"), "the cache paged a LIST at 0")
    started = time.monotonic()
    with cl.knotd(module=cl.module, zones=cl.zones) as server:
        cluster.wait_ready(server, ("cluster.local.",), timeout=120)
        print(f"# a new server synchronized in {time.monotonic() - started:.1f} s")
        counters = cluster.stats(server)
        testing.expect(counters.get("objects[endpointslices]", 0) >= len(results),
                       f"objects: {counters}")
        errors = {k: v for k, v in counters.items() if k.startswith("api-errors") and v}
        testing.expect(not errors, f"api-errors: {errors}")
        last = BIG_SERVICES - 1
        answer = dig.query(server, f"e{BIG_SLICES - 1}-{BIG_ENDPOINTS - 1}.big-{last}"
                                   f".big.svc.{Z}", "A")
        testing.expect_equal([rr.rdata for rr in answer.answer],
                             [f"10.{100 + last}.{BIG_SLICES - 1}.{BIG_ENDPOINTS}"], "answer")
    # The fixture's module took them as events.
    cl.expect_answer(f"e0-0.big-0.big.svc.{Z}", "A", "NOERROR", ["10.100.0.1"], timeout=30)


@tests.case
def bookmarks_keep_an_idle_watch_alive(cl):
    """While nothing changes, the watch cache's bookmarks (about one a minute per watch)
    must still arrive (last-event-age falls back), without a watch restart."""
    restarts = cl.stats().get("watch-restarts", 0)
    started = time.monotonic()
    previous = 0
    while True:
        age = cl.stats().get("last-event-age", 0)
        # The age falling back while nothing changes: something arrived, a bookmark.
        if previous >= 5 and age < previous:
            break
        testing.expect(time.monotonic() - started < 100,
                       f"nothing arrived from the API for {previous} s")
        previous = age
        time.sleep(1)
    print(f"# a bookmark after {previous} s idle")
    testing.expect_equal(cl.stats().get("watch-restarts", 0), restarts, "watch restarts")


tests.main(fixture=lambda: realk8s.RealCluster(world=world, zones=("cluster.local.",)))
