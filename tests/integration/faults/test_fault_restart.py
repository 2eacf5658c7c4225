#!/usr/bin/env python3
"""API server restarts and compactions: the watch history is lost, so a watch resumed from
an old resourceVersion gets 410 Gone and the module relists (issue 2, issue 3).

A real API server rebuilds its watch cache on restart: every resourceVersion from before is
"too old" (reference k8s_api.md 1.8, table 5 rows 3 and 6), and while the cache fills,
requests get 429 "storage is (re)initializing" with a Retry-After. The module must relist
each resource (the `resyncs` counter), reconcile the relist with what it held (objects
deleted while it was disconnected are removed, none is held twice), and keep serving the
last known state throughout.

Real clusters write to resources the module does not watch all the time (leases, events),
so the last resourceVersion the module saw is older than the restart's; the tests write a
Pod (pods are not watched with `pods: insecure`) to model that.
"""

from urllib.parse import parse_qs

import knotd
import testing
from cluster import Cluster
from faults import (Watch, age_watches, counter, endpoint_slice, expect_addresses,
                    expect_objects_match_api, headless_service, log_lines, log_mark, unwatched_write,
                    wait_counter)

tests = testing.Tests()

# The module's reflectors for a cluster and a clusterset zone: namespaces, services,
# endpointslices, serviceimports, imported endpointslices, clusterproperties.
REFLECTORS = 6
STEADY = [
    ("kubernetes.default.svc.cluster.local.", "A"),
    ("web.shop.svc.cluster.local.", "A"),
    ("postgres-0.postgres.db.svc.cluster.local.", "A"),
    ("1.0.96.10.in-addr.arpa.", "PTR"),
    ("web.shop.svc.clusterset.local.", "A"),
]


def quiet_bookmarks(c):
    # A bookmark carries the current resourceVersion: one arriving between the unwatched
    # write and the compaction would make a resume legitimately succeed.
    c.sim.set_bookmark_interval(3600)


@tests.case
def after_a_compaction_a_resumed_watch_gets_410_and_the_module_relists_without_change(c):
    quiet_bookmarks(c)
    age_watches(c.sim, REFLECTORS)  # Ended, they are resumed (not relisted as very short).
    before = c.stats()
    unwatched_write(c.sim, "compaction-marker")
    c.sim.compact()
    with Watch(c.server, STEADY) as watch:
        ended = c.sim.cut_streams("clean")  # The server ends its watches, as at their timeout.
        testing.expect_equal(ended, REFLECTORS, "watch streams ended")
        wait_counter(c.server, "resyncs", lambda v: v == before.get("resyncs", 0) + REFLECTORS,
                     "every resource relisted once", timeout=30)
        wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    watch.expect_unchanged()
    testing.expect_equal(counter(c.server, "api-errors[gone]") - before.get("api-errors[gone]", 0),
                         REFLECTORS, "api-errors[gone] counted per resource")
    expect_objects_match_api(c.server, c.sim)


@tests.case
def a_restart_loses_the_history_and_the_relist_removes_what_was_deleted_meanwhile(c):
    mark = log_mark(c.server)
    resyncs = counter(c.server, "resyncs")
    with Watch(c.server, STEADY) as watch:
        # The streams stop delivering (events queue unseen), the objects change, then the
        # server restarts: the queued events are lost with the connections.
        c.sim.hang(True)
        c.sim.delete("services", "shop", "cache")
        c.sim.delete("serviceimports", "db", "postgres")
        c.sim.apply(endpoint_slice("db", "cassandra-peers", ["10.244.2.40"],
                                   name="cassandra-peers-j4v9c"))
        unwatched_write(c.sim, "restart-marker")
        c.sim.restart()
        c.sim.hang(False)
        wait_counter(c.server, "resyncs", lambda v: v == resyncs + REFLECTORS,
                     "every resource relisted once", timeout=40)
        # Only this service's records change; the steady names must not blink meanwhile.
        expect_addresses(c.server, "cache.shop.svc.cluster.local.", [])
    watch.expect_unchanged()
    expect_addresses(c.server, "postgres.db.svc.clusterset.local.", [])
    expect_addresses(c.server, "cassandra-peers.db.svc.cluster.local.", ["10.244.2.40"])
    expect_objects_match_api(c.server, c.sim)
    removed = log_lines(c.server, "relist of services removed 1 objects", mark)
    testing.expect(removed, "a log line says the relist removed the deleted service")


@tests.case
def while_a_restarted_server_initializes_the_module_waits_retry_after_then_relists(c):
    age_watches(c.sim, REFLECTORS)  # Dropped, they are resumed at once.
    resyncs = counter(c.server, "resyncs")
    throttled = counter(c.server, "api-errors[throttled]")
    seq = c.sim.counters()["last_seq"]
    unwatched_write(c.sim, "initializing-marker")
    # 429 "storage is (re)initializing" (JSON Status, Retry-After = seconds left + 1) for 3 s.
    c.sim.restart(initializing_seconds=3)
    wait_counter(c.server, "resyncs", lambda v: v == resyncs + REFLECTORS,
                 "every resource relisted once", timeout=40)
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    refused = {}
    for r in c.sim.requests(seq):
        if r["code"] == 429:
            reflector = (r["resource"], parse_qs(r["query"]).get("labelSelector", [""])[0])
            refused[reflector] = refused.get(reflector, 0) + 1
    # Each dropped watch is resumed at once and refused; Retry-After outlasts the
    # initialization, so each reflector meets exactly one 429.
    testing.expect_equal(sorted(refused.values()), [1] * REFLECTORS,
                         f"429 answers per reflector {refused}")
    wait_counter(c.server, "api-errors[throttled]", lambda v: v == throttled + REFLECTORS,
                 "api-errors[throttled]")
    expect_objects_match_api(c.server, c.sim)


@tests.case
def changes_after_the_restarts_appear_at_once(c):
    c.sim.apply(endpoint_slice("shop", "cache", ["10.244.2.33"], name="cache-new"))
    c.sim.apply(headless_service("shop", "cache", ports=(("redis", 6379),)))
    took = expect_addresses(c.server, "cache.shop.svc.cluster.local.", ["10.244.2.33"], timeout=5)
    testing.expect(took < knotd.goal_bound(2), f"the change took {took:.1f} s to appear")


tests.main(fixture=lambda: Cluster())
