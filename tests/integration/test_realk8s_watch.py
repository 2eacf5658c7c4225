#!/usr/bin/env python3
"""mod-k8s's watches through what a real kube-apiserver and etcd do to them.

  * kube-apiserver restarted: the watches end, are resumed, changes flow again;
  * changes made (through a second kube-apiserver on the same etcd) while the
    module's server is down, then etcd compacted: the module's resumed watch gets
    410 Gone, it relists, and DNS shows exactly the new state;
  * bookmarks: with nothing changing for over a minute, the watch still delivers
    (the watch cache's bookmarks), and is not restarted for it.

Skips (exit 77) where the control plane is not built (tests/realk8s/build; no Go).
"""

import time

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
def changes_flow_after_a_kube_apiserver_restart(cl):
    cl.expect_answer(f"one.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.1"], timeout=15)
    restarts = cl.stats().get("watch-restarts", 0)
    cl.plane.restart_apiserver(down_seconds=2)
    cl.plane.apply(svc("three", "10.96.3.3"))
    cl.expect_answer(f"three.shop.svc.{Z}", "A", "NOERROR", ["10.96.3.3"], timeout=30)
    cl.plane.kubectl("delete", "-n", "shop", "service", "three")
    cl.expect_answer(f"three.shop.svc.{Z}", "A", "NXDOMAIN", timeout=20)
    testing.expect(cl.stats().get("watch-restarts", 0) > restarts,
                   "the watches were not restarted")
    testing.expect_equal(cl.stats().get("connected"), 1, "connected")


@tests.case
def changes_missed_past_a_compaction_come_from_a_relist_after_410(cl):
    resyncs = cl.stats().get("resyncs", 0)
    gone = cl.stats().get("api-errors[gone]", 0)
    second, kubeconfig = cl.plane.second_apiserver()
    try:
        cl.plane.apiserver.stop()
        # While the module's server is down: add, change, delete, through the other one.
        text = realk8s.json.dumps({"apiVersion": "v1", "kind": "List", "items": [
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
    counters = cl.stats()
    testing.expect(counters.get("resyncs", 0) > resyncs,
                   f"no relist after the compaction: {counters}")
    testing.expect(counters.get("api-errors[gone]", 0) > gone, f"no 410 Gone counted: {counters}")


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
