#!/usr/bin/env python3
"""What N replicas of the cluster DNS ask of the API server, from the simulator's request log.

Knotds with mod-k8s start back to back against one simulator (a rollout, or every replica
restarting after an API server upgrade): three with the default watch-lists and three with
`watch-list: off`, whose requests the log tells apart (a watch-list's watch carries
sendInitialEvents; only the others LIST). Per resource (and label or field selector):

- a watch-list replica makes one request per collection, a watch-list from the watch cache
  (sendInitialEvents=true, resourceVersionMatch=NotOlderThan, bookmarks, a timeout in
  client-go's [300, 600) s), whose stream goes on as the watch;
- a LIST replica LISTs it once, at resourceVersion=0 with client-go's page size 500 (which
  the watch cache ignores: one answer from the cache, none from etcd), then WATCHes it from
  the list's resourceVersion;
- bookmarks move the resume point on, a watch that ends resumes without a list; a change
  reaches every replica over its open watch without any new request;
- when the API server restarts and every watch gets 410, each replica lists each
  collection once more at its last resourceVersion: a watch-list not older than it, or a
  LIST without a limit (from the cache again).

BENCHMARKS.md ("Capacity model") uses these request counts.
"""

import collections
import shutil
import tempfile
import time
import urllib.parse

import knotd
import simctl
import testing
from cluster import wait_ready
from faults import pod, service

tests = testing.Tests()

REPLICAS = 3
PAGE = 500                       # client-go's pager page size, mod-k8s's default page-limit
SERVICES = 1200                  # generated, plus the sample's: three pages from etcd
GENERATE = f"services={SERVICES},endpoints=5,pods=0,namespaces=10,headless-every=10"


def params(request):
    return dict(urllib.parse.parse_qsl(request["query"], keep_blank_values=True))


def collection(request):
    """A resource and its selectors: what one reflector reads."""
    p = params(request)
    return (request["resource"], p.get("labelSelector", ""), p.get("fieldSelector", ""))


class Replicas(testing.Fixture):
    """The simulator with the sample and generated services, and REPLICAS knotds."""

    def start(self):
        self.tmp = tempfile.mkdtemp(prefix="mod-k8s-replicas-")
        self.sim = self.enter_context(simctl.Simulator(
            f"{self.tmp}/sim", manifests=[simctl.SAMPLE], args=["--generate", GENERATE]))
        self.services = len(self.sim.get("/api/v1/services?resourceVersion=0").json()["items"])
        self.seq = self.sim.counters()["last_seq"]
        self.rv = self.sim.resource_version()
        self.servers = []
        for mode in ("on", "off") * REPLICAS:
            # start() returns once knotd answers; the modules synchronize side by side.
            self.servers.append(self.enter_context(
                knotd.Knotd(module={"kubeconfig": self.sim.kubeconfig, "watch-list": mode})))
        for server in self.servers:
            wait_ready(server, ("cluster.local.", "clusterset.local."), timeout=60)
        return self

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def requests(self, verb=None, since=None):
        return [r for r in self.sim.requests(self.seq if since is None else since)
                if verb is None or r["verb"].startswith(verb)]

    def is_running(self):
        return self.sim.alive() and all(s.is_running() for s in self.servers)

    def log_text(self):
        return self.servers[0].log_text()


def is_watch_list(request):
    return "sendInitialEvents" in params(request)


def lists_by_collection(replicas, since=None):
    firsts, pages = collections.Counter(), collections.Counter()
    for r in replicas.requests("list", since):
        (pages if "continue" in params(r) else firsts)[collection(r)] += 1
    return firsts, pages


def watch_lists_by_collection(replicas, since=None):
    return collections.Counter(collection(r) for r in replicas.requests("watch", since)
                               if is_watch_list(r))


@tests.case
def each_watch_list_replica_makes_one_request_per_collection_from_the_watch_cache(replicas):
    lists = watch_lists_by_collection(replicas)
    testing.expect(len(lists) >= 5, f"collections watch-listed: {sorted(lists)}")
    for what, count in lists.items():
        testing.expect_equal(count, REPLICAS, f"watch-lists of {what}")
    for r in replicas.requests("watch"):
        if not is_watch_list(r):
            continue
        p = params(r)
        timeout = int(p.pop("timeoutSeconds", 0))
        testing.expect(300 <= timeout < 600, f"timeoutSeconds outside client-go's [300, 600): "
                       f"{r['query']}")
        testing.expect_equal(p, {**{k: v for k, v in p.items() if k.endswith("Selector")},
                                 "watch": "1", "sendInitialEvents": "true",
                                 "allowWatchBookmarks": "true",
                                 "resourceVersionMatch": "NotOlderThan"}, "watch-list query")
    # The LIST replicas list exactly the same collections.
    testing.expect_equal(dict(lists_by_collection(replicas)[0]), dict(lists), "LISTs per collection")


@tests.case
def each_list_replica_lists_each_collection_once_at_version_0_from_the_watch_cache(replicas):
    firsts, pages = lists_by_collection(replicas)
    testing.expect(len(firsts) >= 5, f"collections listed: {sorted(firsts)}")
    for what, count in firsts.items():
        testing.expect_equal(count, REPLICAS, f"LISTs of {what}")
    # The cache ignores the limit at "0": 1,200 services in one answer, no continue pages.
    testing.expect(replicas.services > PAGE, f"{replicas.services} services fit in one page")
    testing.expect_equal(sum(pages.values()), 0, "continue pages")
    for r in replicas.requests("list"):
        p = params(r)
        testing.expect_equal(p, {**{k: v for k, v in p.items() if k.endswith("Selector")},
                                 "resourceVersion": "0", "limit": str(PAGE)}, "LIST query")
        testing.expect(r["code"] == 200, f"LIST answered {r['code']}: {r['query']}")
        testing.expect_equal(r["served_from"], "cache", f"served from, {r['query']}")
    first = next(r for r in replicas.requests("list") if r["resource"] == "services")
    print(f"# first LIST: ?{first['query']}, from the {first['served_from']}, "
          f"{replicas.services} services in one answer")


@tests.case
def each_list_replica_watches_each_collection_once_with_bookmarks(replicas):
    firsts, _ = lists_by_collection(replicas)
    watches = collections.Counter()
    for r in replicas.requests("watch"):
        if is_watch_list(r):
            continue
        p = params(r)
        watches[collection(r)] += 1
        testing.expect_equal(p.get("allowWatchBookmarks"), "true", f"bookmarks in {r['query']}")
        # Nothing was written since the lists: every list, and so every watch, is at this RV.
        testing.expect_equal(p.get("resourceVersion"), str(replicas.rv), f"RV of {r['query']}")
        testing.expect(300 <= int(p.get("timeoutSeconds", 0)) < 600,
                       f"timeoutSeconds outside client-go's [300, 600): {r['query']}")
    testing.expect_equal(dict(watches), {k: REPLICAS for k in firsts}, "watches per collection")


@tests.case
def a_change_reaches_every_replica_without_a_request(replicas):
    before = len(replicas.requests())
    replicas.sim.apply(service("shop", "fresh", "10.96.99.9"))
    for server in replicas.servers:
        testing.eventually(lambda: testing.expect_equal(
            [rr.rdata for rr in server.query("fresh.shop.svc.cluster.local.").answer],
            ["10.96.99.9"], "fresh.shop A"), timeout=10)
    testing.expect_equal(len(replicas.requests()), before, "API requests for one change")


@tests.case
def bookmarks_move_the_resume_point_and_ended_watches_resume_without_a_list(replicas):
    lists = len(replicas.requests("list"))
    watches = len(replicas.requests("watch"))
    streams = len(lists_by_collection(replicas)[0]) * 2 * REPLICAS
    # A write to a resource nobody watches moves the API's RV; only bookmarks carry it.
    replicas.sim.apply(pod("shop", "unwatched"))
    rv = replicas.sim.resource_version()
    replicas.sim.set_bookmark_interval(1)
    time.sleep(2.5)
    replicas.sim.set_bookmark_interval(60)
    replicas.sim.cut_streams("clean")           # as at the watches' timeoutSeconds

    def resumed():
        again = replicas.requests("watch")[watches:]
        testing.expect(len(again) >= streams, f"{len(again)} of {streams} watches resumed")
        return again
    again = testing.eventually(resumed, timeout=15)
    for r in again:
        testing.expect(int(params(r)["resourceVersion"]) >= rv and not is_watch_list(r),
                       f"resumed before the last bookmark ({rv}), or listed: {r['query']}")
    testing.expect_equal(len(replicas.requests("list")), lists, "LISTs after the watches ended")


@tests.case
def an_api_server_restart_costs_each_replica_one_relist_per_collection_from_the_cache(replicas):
    streams = {k: REPLICAS for k in lists_by_collection(replicas)[0]}
    time.sleep(1.5)                             # the watches are past client-go's "very short"
    before = replicas.sim.counters()["last_seq"]
    # A write nobody watches, then a restart: the new watch cache starts after every watch's
    # version, so each watch resumes into 410 Expired and its reflector must relist.
    replicas.sim.apply(pod("shop", "before-restart"))
    replicas.sim.restart()
    replicas.sim.apply(service("shop", "after-restart", "10.96.99.10"))
    for server in replicas.servers:
        testing.eventually(lambda: testing.expect_equal(
            [rr.rdata for rr in server.query("after-restart.shop.svc.cluster.local.").answer],
            ["10.96.99.10"], "after-restart.shop A"), timeout=60)
    time.sleep(3)                               # a second relist would come within the backoff
    lists = [r for r in replicas.sim.requests(before) if r["verb"] == "list"]
    per = collections.Counter(collection(r) for r in lists)
    testing.expect_equal(dict(per), streams, "LISTs per collection after the restart")
    for r in lists:
        p = params(r)
        # client-go: at the last version seen ("not older than"), no limit: the cache serves it.
        testing.expect(p.get("resourceVersion") not in (None, "", "0") and "limit" not in p,
                       f"relist not at the last version, unlimited: {r['query']}")
        testing.expect_equal((r["code"], r["served_from"]), (200, "cache"), f"relist {r['query']}")
    print(f"# relist after a restart: ?{lists[0]['query']}, from the {lists[0]['served_from']}")
    relists = [r for r in replicas.requests("watch", before) if is_watch_list(r)]
    testing.expect_equal(dict(collections.Counter(collection(r) for r in relists)), streams,
                         "watch-lists per collection after the restart")
    for r in relists:
        testing.expect(params(r).get("resourceVersion") not in (None, "", "0"),
                       f"watch-list not at the last version: {r['query']}")
    print(f"# watch-list after a restart: ?{relists[0]['query']}")


if __name__ == "__main__":
    tests.main(fixture=Replicas)
