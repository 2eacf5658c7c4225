#!/usr/bin/env python3
# run alone: a new service answers within 5 s while big objects stream
"""Objects too large to read (issue 10, item 5): one API object of `{}` elements, 16 MiB of
text, made knotd reach 4.2 GiB and 38 s of CPU (json-c builds about 800 bytes per `{}`).

The API server takes request bodies up to 3 MiB, so a larger object is not a real one:
the module reads at most K8S_OBJECT_MAX (3 MiB) of an object's JSON, and hands json-c at
most K8S_JSON_OBJECTS_MAX (65,536) objects and K8S_JSON_VALUES_MAX (262,144) values. An
object over a cap is skipped, logged and counted as api-errors[too-large], in a LIST or a
WATCH; knotd's memory stays bounded, the stream goes on with the next event, a LIST keeps
its other items, and what the module held of the object is kept (a relist does not drop
it) until a DELETED event names it. An object just under the cap is read as before.
"""

import time

import knotd
import testing
from cluster import Cluster
from faults import (counter, expect_addresses, log_mark, service, start_knotd, unwatched_write,
                    wait_counter, wait_log)

tests = testing.Tests()
state = {}

MIB = 1024 * 1024
CAP = 3 * MIB
# The peak resident memory knotd may reach (VmHWM): the 3 MiB line buffer and json-c's tree of
# at most 64 Ki objects and 256 Ki values are far below it, a parsed 3 MiB of "{}" far above.
# ASan's allocator keeps freed memory in quarantine (256 MiB) and adds redzones.
RSS_BOUND_KIB = (1024 if knotd.find_build().sanitized else 128) * 1024


def peak_rss_kib(server):
    """knotd's peak resident set size (VmHWM) in KiB."""
    with open(f"/proc/{server.pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise testing.Failure("no VmHWM in /proc/PID/status")


def expect_bounded_memory(server, what):
    peak = peak_rss_kib(server)
    print(f"# {what}: knotd peak RSS {peak // 1024} MiB", flush=True)
    testing.expect(peak < RSS_BOUND_KIB, f"{what}: knotd peaked at {peak // 1024} MiB "
                   f"(bound {RSS_BOUND_KIB // 1024} MiB)")


def after_log_interval():
    """Waits out the 10 s in which a reflector logs one skipped object (the rest are counted)."""
    left = state.get("logged", 0) + 10.5 - time.monotonic()
    if left > 0:
        time.sleep(left)


def expect_prompt(c, name, address, what):
    """A service created now answers within 5 s: the watcher was not held up."""
    c.sim.apply(service("shop", name, address))
    took = expect_addresses(c.server, f"{name}.shop.svc.cluster.local.", [address], timeout=5)
    testing.expect(took < 5, f"{what}: a change took {took:.1f} s")


@tests.case
def a_16_mib_object_of_empty_objects_is_skipped_counted_and_memory_stays_bounded(c):
    c.sim.apply(service("shop", "huge", "10.96.130.1"))
    expect_addresses(c.server, "huge.shop.svc.cluster.local.", ["10.96.130.1"])
    mark = log_mark(c.server)
    before = counter(c.server, "api-errors[too-large]")
    started = time.monotonic()
    # Just under the 16 MiB the module used to accept: 5.6 million "{}" for json-c.
    c.sim.big_object("services", "shop", "huge", 16 * MIB - 4096, shape="empty-objects")
    expect_prompt(c, "after-huge", "10.96.130.2", "after the 16 MiB line")
    line = wait_log(c.server, "watch services object shop/huge skipped (larger than 3145728 bytes)",
                    mark)
    state["logged"] = time.monotonic()
    testing.expect("warning" in line.lower(), f"logged as a warning: {line}")
    wait_counter(c.server, "api-errors[too-large]", lambda v: v == before + 1, "api-errors[too-large]")
    testing.expect(time.monotonic() - started < 20, "the skip took long")
    # What was known of it stays: its cluster IP did not change.
    expect_addresses(c.server, "huge.shop.svc.cluster.local.", ["10.96.130.1"])
    expect_bounded_memory(c.server, "a 16 MiB watch line")


@tests.case
def an_object_under_3_mib_with_a_million_json_objects_is_skipped(c):
    c.sim.apply(service("shop", "dense", "10.96.130.3"))
    expect_addresses(c.server, "dense.shop.svc.cluster.local.", ["10.96.130.3"])
    after_log_interval()
    mark = log_mark(c.server)
    before = counter(c.server, "api-errors[too-large]")
    info = c.sim.big_object("services", "shop", "dense", CAP - 64 * 1024, shape="empty-objects")
    testing.expect(info["bytes"] < CAP, f"the object is under the byte cap: {info}")
    expect_prompt(c, "after-dense", "10.96.130.4", "after 1 M json objects")
    wait_log(c.server, "watch services object shop/dense skipped (more than 65536 json objects)", mark)
    wait_counter(c.server, "api-errors[too-large]", lambda v: v == before + 1, "api-errors[too-large]")
    expect_addresses(c.server, "dense.shop.svc.cluster.local.", ["10.96.130.3"])
    expect_bounded_memory(c.server, "3 MiB of {}")


@tests.case
def an_object_just_under_3_mib_is_read(c):
    before = counter(c.server, "api-errors[too-large]")
    # An API server refuses annotations over 256 KiB (validate=False): big objects
    # come from elsewhere (managedFields, many ports), the module's cap is the same.
    c.sim.apply(service("shop", "near", "10.96.130.5",
                        annotations={"example.com/blob": "x" * (CAP - 8 * 1024)}), validate=False)
    expect_addresses(c.server, "near.shop.svc.cluster.local.", ["10.96.130.5"], timeout=10)
    testing.expect_equal(counter(c.server, "api-errors[too-large]"), before, "api-errors[too-large]")


@tests.case
def a_list_skips_and_counts_the_objects_too_large_and_keeps_the_rest(c):
    server = start_knotd(c)
    try:
        expect_addresses(server, "near.shop.svc.cluster.local.", ["10.96.130.5"])
        expect_addresses(server, "after-dense.shop.svc.cluster.local.", ["10.96.130.4"])
        expect_addresses(server, "kubernetes.default.svc.cluster.local.", ["10.96.0.1"])
        # Never read by this knotd: not known.
        expect_addresses(server, "huge.shop.svc.cluster.local.", [])
        expect_addresses(server, "dense.shop.svc.cluster.local.", [])
        testing.expect_equal(counter(server, "api-errors[too-large]"), 2, "api-errors[too-large]")
        # Items come in name order; the second skip within 10 s is counted, not logged.
        wait_log(server, "list services object shop/dense skipped (more than 65536 json objects)")
        expect_bounded_memory(server, "a LIST with both")
    finally:
        server.stop()


@tests.case
def a_relist_keeps_what_was_known_of_an_object_now_too_large(c):
    resyncs = counter(c.server, "resyncs")
    c.sim.apply(service("shop", "gone-meanwhile", "10.96.130.6"))
    expect_addresses(c.server, "gone-meanwhile.shop.svc.cluster.local.", ["10.96.130.6"])
    # A deletion the module does not see, then a restart: the history is lost, it relists.
    c.sim.hang(True)
    c.sim.delete("services", "shop", "gone-meanwhile")
    unwatched_write(c.sim, "big-objects-marker")
    c.sim.restart()
    c.sim.hang(False)
    wait_counter(c.server, "resyncs", lambda v: v >= resyncs + 3, "every resource relisted",
                 timeout=40)
    # The relist drops what it did not return, and keeps what it returned too large to read.
    expect_addresses(c.server, "gone-meanwhile.shop.svc.cluster.local.", [])
    expect_addresses(c.server, "huge.shop.svc.cluster.local.", ["10.96.130.1"])
    expect_addresses(c.server, "dense.shop.svc.cluster.local.", ["10.96.130.3"])
    expect_bounded_memory(c.server, "a relist with both")


@tests.case
def a_deletion_of_an_object_too_large_to_read_removes_it(c):
    # DELETED carries the last state, too large to read: its name is enough.
    c.sim.delete("services", "shop", "huge")
    c.sim.delete("services", "shop", "dense")
    expect_addresses(c.server, "huge.shop.svc.cluster.local.", [], timeout=10)
    expect_addresses(c.server, "dense.shop.svc.cluster.local.", [], timeout=10)
    expect_prompt(c, "after-delete", "10.96.130.7", "after the deletions")


tests.main(fixture=lambda: Cluster(zones=("cluster.local.", "in-addr.arpa.")))
