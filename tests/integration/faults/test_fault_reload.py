#!/usr/bin/env python3
"""`knotc reload` and shutdown (issue 3): "`knotc reload` must not leave two watchers running
or lose the table. Stop and join cleanly on unload; knotd's shutdown is never delayed by a
hung connection."

knotd loads a reloaded configuration's modules before it unloads the old ones; zones with
the same mod-k8s settings share one watcher, so a reload hands the watcher, its table and
its open watches over to the new module instances: no second watcher thread, no relist,
no moment without answers, even while the API server is down. A reload that changes the
watch settings starts one new watcher and stops the old one. Stopping knotd must not wait
for the API server, whatever state its connections are in.
"""

import os
import shutil
import subprocess
import tempfile
import time

import knotd
import testing
from cluster import Cluster, SRCDIR, wait_ready
from udpload import UdpLoad
from faults import (Watch, begin_outage, counter, end_outage, expect_addresses, log_lines, log_mark,
                    namespace, start_knotd, thread_count, wait_counter, wait_for, wait_log)

tests = testing.Tests()

# Names and what they answer throughout.
EXPECTED = {
    ("kubernetes.default.svc.cluster.local.", "A"): ["10.96.0.1"],
    ("web.shop.svc.cluster.local.", "AAAA"): ["fd00:10:96::1234"],
    ("postgres-0.postgres.db.svc.cluster.local.", "A"): ["10.244.0.20"],
    ("nonexistent.shop.svc.cluster.local.", "A"): [],
    ("34.12.96.10.in-addr.arpa.", "PTR"): ["web.shop.svc.cluster.local."],
    ("web.shop.svc.clusterset.local.", "A"): ["10.42.0.10"],
}
NAMES = list(EXPECTED)
RELOADS = 5
NEW_WATCHER = "watching the API server"
STOP_LIMIT_S = 2
state = {}


def reload_while_querying(c, reloads):
    with Watch(c.server, NAMES) as watch:
        for _ in range(reloads):
            rounds = len(watch.answers)
            c.server.reload()
            # Queries between reloads, so that each reload's aftermath is seen.
            wait_for(lambda: len(watch.answers) >= rounds + len(NAMES), "queries after a reload", 10)
    return watch


@tests.case
def reloads_keep_one_watcher_its_table_and_its_watches(c):
    state["threads"] = thread_count(c.server)
    mark = log_mark(c.server)
    seq = c.sim.counters()["last_seq"]
    watch = reload_while_querying(c, RELOADS)
    watch.expect_unchanged(minimum=RELOADS)
    testing.expect_equal(thread_count(c.server), state["threads"], "knotd's threads after the reloads")
    testing.expect_equal(log_lines(c.server, NEW_WATCHER, mark), [], "log lines of a new watcher")
    testing.expect_equal([f"{r['verb']} {r['resource']}" for r in c.sim.requests(seq)], [],
                         "API requests during the reloads (no relist, no new watch)")
    wait_counter(c.server, "ready[cluster]", lambda v: v == 1, "the reloaded zone's counters")
    testing.expect_equal(counter(c.server, "resyncs"), 0, "resyncs")
    testing.expect_equal(counter(c.server, "watch-restarts"), 0, "watch-restarts")


@tests.case
def a_reload_during_an_api_outage_keeps_serving_the_table(c):
    begin_outage(c.sim)
    wait_counter(c.server, "connected", lambda v: v == 0, "connected drops to 0")
    watch = reload_while_querying(c, 3)
    end_outage(c.sim)
    watch.expect_unchanged(minimum=3)
    testing.expect_equal(thread_count(c.server), state["threads"], "knotd's threads after the reloads")
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=40)


@tests.case
def a_reload_with_other_watch_settings_replaces_the_watcher_by_one_new_one(c):
    mark = log_mark(c.server)
    c.sim.set_bookmark_interval(1)  # The simulator notices closed watches when it writes.
    try:
        c.server.module_options["watch-stall-timeout"] = 30
        with open(c.server.conf_path, "w", encoding="utf-8") as f:
            f.write(c.server.config_text())
        c.server.reload()
        wait_ready(c.server, ("cluster.local.", "clusterset.local."))
        testing.expect_equal(len(log_lines(c.server, NEW_WATCHER, mark)), 1,
                             "log lines of a new watcher")
        wait_for(lambda: thread_count(c.server) == state["threads"], "the old watcher's thread is gone")
        for (qname, qtype), rdata in EXPECTED.items():
            expect_addresses(c.server, qname, rdata, qtype=qtype)
        # The old watcher's six watches are closed: only the new one's remain.
        wait_for(lambda: c.sim.open_watches() == 6, "only the new watcher's watches open", 15)
    finally:
        c.sim.set_bookmark_interval(60)


def rewrite_config(server):
    with open(server.conf_path, "w", encoding="utf-8") as f:
        f.write(server.config_text())


def knotc_reload(server):
    """`knotc reload` alone: Knotd.reload() refuses a log with a load failure in it."""
    result = server.knotc("reload")
    testing.expect_equal(result.returncode, 0, f"knotc reload ({result.stdout.strip()})")


# packaging/kubernetes: the reloader container's script (knotd's config from the ConfigMap).
KNOT_CONF_SH = os.path.join(SRCDIR, "packaging", "kubernetes", "knot-conf.sh")


def ttl_of(c, qname):
    answer = c.query(qname, "A")
    return {rr.ttl for rr in answer.answer if rr.type == "A"}


def write_atomically(path, text):
    # As the kubelet updates a ConfigMap volume: the new files appear at once.
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


@tests.case
def the_pods_reloader_applies_a_changed_configmap_with_no_query_lost(c):
    # knot-conf.sh watch, as the Deployment's reloader runs it: the ConfigMap's directory,
    # knotd's run directory (where it writes the knot.conf knotd runs), knotc as the test's.
    server = c.server
    scratch = tempfile.mkdtemp(prefix="mod-k8s-configmap-")
    configmap = os.path.join(scratch, "etc-knot")
    os.mkdir(configmap)
    write_atomically(os.path.join(configmap, "knot.conf"), server.config_text())
    with open(os.path.join(scratch, "resolv.conf"), "w", encoding="utf-8") as f:
        f.write("nameserver 192.0.2.1\n")
    argv, env = server.command("knotc")
    testing.expect_equal(argv[-2:], ["-c", server.conf_path], "knotc's argv ends with its config")
    knotc = os.path.join(scratch, "knotc")
    with open(knotc, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\nexec " + " ".join(f"'{arg}'" for arg in argv[:-2]) + ' "$@"\n')
    os.chmod(knotc, 0o755)
    env.update(KNOT_CONFIG_DIR=configmap, KNOT_RUN_DIR=server.dir, KNOTC=knotc,
               KNOT_RESOLV_CONF=os.path.join(scratch, "resolv.conf"), RELOAD_CHECK_SECONDS="0.2")
    qname = "kubernetes.default.svc.cluster.local."
    before = ttl_of(c, qname)
    testing.expect_equal(before, {5}, "the TTL before (mod-k8s's default)")
    mark = log_mark(server)
    reloader = subprocess.Popen(["/bin/sh", KNOT_CONF_SH, "watch"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    load = UdpLoad(lambda: server.port, qname=qname.rstrip("."))
    try:
        load.start()
        time.sleep(0.5)
        # A broken ConfigMap is refused: knotd keeps running the one it has.
        write_atomically(os.path.join(configmap, "knot.conf"), "mod-k8s:\n  - id: default\n    ttl: x\n")
        time.sleep(1)
        testing.expect_equal(ttl_of(c, qname), {5}, "the TTL after a broken ConfigMap")
        server.module_options["ttl"] = 9
        write_atomically(os.path.join(configmap, "knot.conf"), server.config_text())
        wait_for(lambda: ttl_of(c, qname) == {9}, "the changed ttl answered", 10)
        time.sleep(0.5)
    finally:
        load.finish()
        reloader.terminate()
        output = reloader.communicate(timeout=10)[0]
        server.module_options.pop("ttl", None)
        rewrite_config(server)
        knotc_reload(server)
        shutil.rmtree(scratch, ignore_errors=True)
    testing.expect("not valid, knotd keeps the running one" in output, f"the reloader's output: {output}")
    testing.expect("configuration changed, knotd reloaded" in output, f"the reloader's output: {output}")
    testing.expect_equal(reloader.returncode, 0, "the reloader's exit at SIGTERM")
    testing.expect(len(load.results) > 200, f"a steady load ({len(load.results)} queries)")
    testing.expect_equal(load.lost(), [], f"queries lost of {len(load.results)}")
    testing.expect_equal(log_lines(server, NEW_WATCHER, mark), [], "log lines of a new watcher")


@tests.case
def a_module_that_fails_to_load_leaves_nothing_behind_for_later_reloads(c):
    # knotd 3.2 frees a module whose load failed without calling its unload: the watcher
    # must not hold the zone. An upstream needs a resolver, and the resolver an eventfd,
    # which the preloaded fail_eventfd.so refuses while the flag file exists.
    shim = os.path.join(knotd.find_build().builddir, "tests", "integration", ".libs",
                        "fail_eventfd.so")
    flag = os.path.join(tempfile.mkdtemp(prefix="mod-k8s-fail-"), "eventfd")
    server = start_knotd(c, preload=[shim], environment={"MODK8S_FAIL_EVENTFD": flag})
    try:
        mark = log_mark(server)
        open(flag, "w", encoding="utf-8").close()
        server.module_options["upstream"] = "127.0.0.1@53"
        rewrite_config(server)
        knotc_reload(server)
        wait_log(server, "failed to start the watcher (cannot start the upstream resolver)", mark)
        wait_log(server, "failed to load", mark)
        # The zone is served without the module meanwhile.
        wait_for(lambda: server.query("cluster.local.", "SOA").rcode == "NOERROR", "the zone's SOA")
        knotc_reload(server)  # Fails again, after the instances of the failed load are gone.
        wait_for(lambda: len(log_lines(server, "failed to load", mark)) >= 4, "a second failed load")
        os.remove(flag)
        knotc_reload(server)
        wait_ready(server, ("cluster.local.",))
        expect_addresses(server, "kubernetes.default.svc.cluster.local.", ["10.96.0.1"])
    finally:
        if os.path.exists(flag):
            os.remove(flag)
        os.rmdir(os.path.dirname(flag))
        server.stop()


def timed_stop(server):
    started = time.monotonic()
    server.stop()
    return time.monotonic() - started


@tests.case
def knotd_stops_at_once_while_every_watch_hangs(c):
    server = start_knotd(c)
    c.sim.hang(True)
    try:
        c.sim.apply(namespace("hung"))  # An event queued behind the hang.
        took = timed_stop(server)
    finally:
        c.sim.hang(False)
    testing.expect(took < knotd.goal_bound(STOP_LIMIT_S), f"knotd took {took:.1f} s to stop")


@tests.case
def knotd_stops_at_once_in_the_middle_of_a_slow_list(c):
    c.sim.slow_list(50, resource="endpointslices")  # 12 kB at 50 B/s: minutes.
    try:
        server = start_knotd(c, ready=False)
        wait_for(lambda: counter(server, "objects[services]") > 0, "services listed")
        testing.expect_equal(counter(server, "ready[cluster]"), 0, "ready (the slices are still coming)")
        took = timed_stop(server)
    finally:
        c.sim.slow_list(0, resource="endpointslices")
    testing.expect(took < knotd.goal_bound(STOP_LIMIT_S), f"knotd took {took:.1f} s to stop")


@tests.case
def knotd_stops_at_once_while_the_api_server_refuses_connections(c):
    server = start_knotd(c)
    begin_outage(c.sim)
    try:
        wait_counter(server, "connected", lambda v: v == 0, "connected drops to 0")
        took = timed_stop(server)
    finally:
        end_outage(c.sim)
    testing.expect(took < knotd.goal_bound(STOP_LIMIT_S), f"knotd took {took:.1f} s to stop")


tests.main(fixture=lambda: Cluster())
