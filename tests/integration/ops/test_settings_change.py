#!/usr/bin/env python3
"""A `knotc reload` that changes the watch settings hands the table over.

New watch settings (here `watch-stall-timeout`, or `namespaces`) need a new
watcher, which starts from nothing; until it has synchronized, the zones
answer from the watcher of the previous configuration, then that one is
released. No name answers SERVFAIL on the way, and no watcher is left behind.
"""

import os
import threading
import time

import testing
from cluster import Cluster

tests = testing.Tests()


def threads(server):
    return len(os.listdir(f"/proc/{server.pid}/task"))


def change_settings(cluster, **options):
    server = cluster.server
    server.module_options.update(options)
    with open(server.conf_path, "w", encoding="utf-8") as f:
        f.write(server.config_text())
    server.reload()


def query_during(cluster, action, name="postgres.db.svc.cluster.local."):
    """Runs action() while querying name in a loop; returns the rcodes seen."""
    seen = []
    done = threading.Event()

    def loop():
        while not done.is_set():
            seen.append(cluster.query(name, "A").rcode)
    worker = threading.Thread(target=loop)
    worker.start()
    try:
        action()
        time.sleep(0.5)
    finally:
        done.set()
        worker.join()
    return seen


@tests.case
def changed_settings_answer_without_a_gap(cluster):
    before = threads(cluster.server)
    rcodes = query_during(cluster, lambda: change_settings(cluster, **{"watch-stall-timeout": 60}))
    testing.expect(rcodes and set(rcodes) == {"NOERROR"}, f"rcodes during the reload: {sorted(set(rcodes))}")
    cluster.server.wait_for_log(r"synchronized with the new settings, the previous watcher is released")

    def one_watcher():
        testing.expect_equal(threads(cluster.server), before, "knotd's threads after the hand-over")
    cluster.eventually(one_watcher)


@tests.case
def the_new_settings_take_effect(cluster):
    rcodes = query_during(cluster, lambda: change_settings(cluster, namespaces=["db"]))
    testing.expect(set(rcodes) == {"NOERROR"}, f"rcodes during the reload: {sorted(set(rcodes))}")
    cluster.expect_answer("web.shop.svc.cluster.local.", "A", "NXDOMAIN")
    cluster.expect_answer("postgres.db.svc.cluster.local.", "A", "NOERROR", ["10.244.0.20", "10.244.1.20"])


@tests.case
def unchanged_settings_keep_the_watcher_and_its_table(cluster):
    resyncs = cluster.stats().get("resyncs", 0)
    before = threads(cluster.server)
    rcodes = query_during(cluster, lambda: change_settings(cluster, ttl=7))
    testing.expect(set(rcodes) == {"NOERROR"}, f"rcodes during the reload: {sorted(set(rcodes))}")
    testing.expect_equal(threads(cluster.server), before, "knotd's threads")
    answer = cluster.query("postgres.db.svc.cluster.local.", "A")
    testing.expect(all(rr.ttl == 7 for rr in answer.answer), f"ttl not applied: {answer.summary()}")
    testing.expect_equal(cluster.stats().get("resyncs", 0), resyncs, "resyncs")


tests.main(fixture=Cluster)
