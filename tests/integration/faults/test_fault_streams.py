#!/usr/bin/env python3
"""Faults inside a watch stream (issue 2, issue 3): a stream cut in the middle of an event
line, a hung connection, and objects of several MiB.

- A cut stream (FIN or RST, with or without the terminating chunk, inside a chunk or
  between chunks) ends with half an event line: client-go treats it as a normal end and
  re-watches from the last complete event's resourceVersion, no relist (reference
  k8s_api.md table 5 row 7). The half event must be discarded, then delivered whole by
  the resumed watch: nothing lost, nothing twice.
- A hung connection (socket open, no bytes) must be detected by the module's own stall
  timer (`watch-stall-timeout`, here its minimum of 5 s) and the watch resumed; the
  simulator sends bookmarks every second, so a healthy watch is never silent that long.
- One object, hence one watch line, can be several MiB (the API server takes request
  bodies up to 3 MiB); it must be processed. A line above the module's cap (3 MiB, see
  test_fault_big_objects.py) is skipped with a log line, without holding up anything else.
"""

import knotd
import testing
from cluster import Cluster
from faults import (Watch, addresses, age_watches, counter, endpoint_slice, expect_addresses,
                    expect_objects_match_api, log_mark, service, start_knotd, wait_counter, wait_log)

tests = testing.Tests()

STALL_S = 5
STEADY = [("kubernetes.default.svc.cluster.local.", "A"), ("web.shop.svc.cluster.local.", "A"),
          ("postgres.db.svc.cluster.local.", "A"), ("34.12.96.10.in-addr.arpa.", "PTR")]


def cut_case(mode, octet):
    def case(c):
        age_watches(c.sim, 3)  # Cut, they are resumed (not relisted as very short).
        before = c.stats()
        mark = log_mark(c.server)
        rv = c.sim.resource_version()
        testing.expect(c.sim.cut_streams(mode, "services") >= 1, "a services watch armed")
        name = f"cut-{mode}"
        c.sim.apply(service("shop", name, f"10.96.100.{octet}"))  # Its line is the one cut.
        expect_addresses(c.server, f"{name}.shop.svc.cluster.local.", [f"10.96.100.{octet}"])
        wait_counter(c.server, "watch-restarts", lambda v: v > before.get("watch-restarts", 0),
                     "watch-restarts grows")
        testing.expect_equal(counter(c.server, "resyncs"), before.get("resyncs", 0),
                             "resyncs (a cut stream resumes, it does not relist)")
        testing.expect(counter(c.server, "api-errors[network]") > before.get("api-errors[network]", 0),
                       "the cut counts as a network error")
        interrupted = wait_log(c.server, "watch services interrupted", mark)
        testing.expect("incomplete event discarded" in interrupted
                       and f"resource version {rv}" in interrupted,
                       f"the log says the half event was discarded and the watch resumes from {rv}: "
                       + interrupted)
        expect_objects_match_api(c.server, c.sim, clusterset=False)
    case.__name__ = (f"a_watch_cut_mid_line_by_{mode.replace('-', '_')}"
                     "_resumes_from_the_last_event_without_loss")
    return case


for number, cut_mode in enumerate(("chunk-end", "close", "mid-chunk", "rst"), 1):
    tests.case(cut_case(cut_mode, number))


@tests.case
def a_watch_the_server_ends_cleanly_resumes_without_an_error(c):
    before = c.stats()
    testing.expect(c.sim.cut_streams("clean") >= 3, "every watch ended")
    c.sim.apply(service("shop", "after-clean", "10.96.100.10"))
    expect_addresses(c.server, "after-clean.shop.svc.cluster.local.", ["10.96.100.10"])
    wait_counter(c.server, "watch-restarts", lambda v: v >= before.get("watch-restarts", 0) + 3,
                 "every watch restarted")
    after = c.stats()
    for key in ("resyncs", "api-errors[network]", "api-errors[timeout]"):
        testing.expect_equal(after.get(key, 0), before.get(key, 0), key)


@tests.case
def a_hung_watch_is_cut_after_the_stall_timeout_and_resumed(c):
    mark = log_mark(c.server)
    timeouts = counter(c.server, "api-errors[timeout]")
    resyncs = counter(c.server, "resyncs")
    with Watch(c.server, STEADY) as watch:
        c.sim.hang(True, "services")
        try:
            c.sim.apply(service("shop", "behind-hang", "10.96.100.20"))  # Queued in the hung stream.
            wait_counter(c.server, "api-errors[timeout]", lambda v: v > timeouts,
                         "api-errors[timeout] grows", timeout=STALL_S * 3)
            line = wait_log(c.server, "watch services interrupted", mark)
            testing.expect(f"{STALL_S} seconds" in line, f"the log line names the stall: {line}")
            # Other resources are not held up by the hung one.
            c.sim.apply(endpoint_slice("shop", "cache", ["10.244.2.36"], name="cache-mw5tq"))
            took = expect_addresses(c.server, "cache.shop.svc.cluster.local.", ["10.244.2.36"],
                                    timeout=5)
            testing.expect(took < knotd.goal_bound(2), f"an EndpointSlice change took {took:.1f} s during the hang")
            # The hung watch's pending change is not there yet.
            testing.expect_equal(addresses(c.server, "behind-hang.shop.svc.cluster.local."),
                                 ("NXDOMAIN", []), "the service behind the hang")
        finally:
            c.sim.hang(False, "services")
        expect_addresses(c.server, "behind-hang.shop.svc.cluster.local.", ["10.96.100.20"],
                         timeout=STALL_S * 3)
    watch.expect_unchanged()
    testing.expect_equal(counter(c.server, "resyncs"), resyncs, "resyncs (a stalled watch resumes)")


MIB = 1024 * 1024


@tests.case
def a_service_just_under_3_mib_is_processed(c):
    decode = counter(c.server, "api-errors[decode]")
    big = service("shop", "big", "10.96.100.30", annotations={"example.com/blob": "x" * (3 * MIB - 8192)})
    # One ADDED line of almost 3 MiB; an API server refuses annotations over 256 KiB
    # (validate=False): big objects come from elsewhere (managedFields, many ports).
    c.sim.apply(big, validate=False)
    expect_addresses(c.server, "big.shop.svc.cluster.local.", ["10.96.100.30"], timeout=10)
    c.sim.big_object("services", "shop", "web", size=3 * MIB - 8192)  # MODIFIED, nothing for DNS.
    c.sim.apply(service("shop", "after-big", "10.96.100.31"))
    expect_addresses(c.server, "after-big.shop.svc.cluster.local.", ["10.96.100.31"], timeout=10)
    expect_addresses(c.server, "web.shop.svc.cluster.local.", ["10.96.12.34"])
    testing.expect_equal(counter(c.server, "api-errors[decode]"), decode, "api-errors[decode]")
    testing.expect_equal(counter(c.server, "api-errors[too-large]"), 0, "api-errors[too-large]")
    # The same objects in a LIST.
    server = start_knotd(c)
    try:
        expect_addresses(server, "big.shop.svc.cluster.local.", ["10.96.100.30"])
        expect_addresses(server, "web.shop.svc.cluster.local.", ["10.96.12.34"])
    finally:
        server.stop()


@tests.case
def a_watch_line_above_3_mib_is_skipped_with_a_log_line_without_holding_up_others(c):
    mark = log_mark(c.server)
    too_large = counter(c.server, "api-errors[too-large]")
    huge = service("shop", "huge", "10.96.100.40", annotations={"example.com/blob": "x" * (4 * MIB)})
    c.sim.apply(huge, validate=False)
    c.sim.apply(endpoint_slice("shop", "cache", ["10.244.2.37"], name="cache-mw5tq"))
    took = expect_addresses(c.server, "cache.shop.svc.cluster.local.", ["10.244.2.37"], timeout=5)
    testing.expect(took < 3, f"an EndpointSlice change took {took:.1f} s beside the huge line")
    line = wait_log(c.server, "skipped (larger than", mark, timeout=30)
    testing.expect("services object shop/huge" in line, f"the log line names the object: {line}")
    wait_counter(c.server, "api-errors[too-large]", lambda v: v == too_large + 1,
                 "api-errors[too-large]")
    expect_addresses(c.server, "huge.shop.svc.cluster.local.", [])
    # The services watch goes on after the skipped line.
    c.sim.apply(service("shop", "after-huge", "10.96.100.41"))
    expect_addresses(c.server, "after-huge.shop.svc.cluster.local.", ["10.96.100.41"], timeout=10)
    # In a LIST the huge item is skipped alike, and the list completes.
    server = start_knotd(c)
    try:
        wait_log(server, "list services object shop/huge skipped (larger than")
        expect_addresses(server, "after-huge.shop.svc.cluster.local.", ["10.96.100.41"])
        expect_addresses(server, "huge.shop.svc.cluster.local.", [])
    finally:
        server.stop()
    c.sim.delete("services", "shop", "huge")
    c.sim.delete("services", "shop", "big")


tests.main(fixture=lambda: Cluster(module={"watch-stall-timeout": STALL_S},
                                   sim_args=["--bookmark-interval", "1"],
                                   zones=("cluster.local.", "in-addr.arpa.")))
