#!/usr/bin/env python3
"""403 Forbidden on one resource (RBAC taken away): no busy loop, the others keep working.

A ClusterRole edited by mistake forbids the module to list or watch EndpointSlices. The
module must keep what it knew about them, retry with backoff (client-go relists with
backoff forever, reference k8s_api.md table 5 row 12), keep the other resources' changes
flowing, and recover once the permission is back.
"""

import time

import knotd
import testing
from cluster import Cluster
from faults import (Watch, counter, endpoint_slice, expect_addresses, expect_objects_match_api,
                    log_lines, log_mark, service, wait_counter, wait_for)

tests = testing.Tests()

RESOURCE = "endpointslices"
# Forbidden for this long, a backoff of 0.8 s doubling (with up to 100 % jitter) allows at
# most 5 attempts; a busy loop would make hundreds.
FORBIDDEN_S = 6
MAX_ATTEMPTS = 5
HEADLESS = [("cache.shop.svc.cluster.local.", "A"), ("postgres.db.svc.cluster.local.", "A"),
            ("postgres-0.postgres.db.svc.cluster.local.", "A")]
state = {}


def slice_requests(sim, seq):
    return [r for r in sim.requests(seq) if r["resource"] == RESOURCE]


@tests.case
def a_forbidden_resource_is_retried_with_backoff_not_in_a_busy_loop(c):
    # An event first, so that the ended watch is not a "very short watch" (relisted anyway).
    c.sim.apply(endpoint_slice("shop", "warmup", ["10.244.9.1"]))
    wait_counter(c.server, f"objects[{RESOURCE}]", lambda v: v == 11, "the warm-up slice arrived")
    state["mark"] = log_mark(c.server)
    seq = state["seq"] = c.sim.counters()["last_seq"]
    c.sim.forbid(RESOURCE)
    with Watch(c.server, HEADLESS) as watch:
        testing.expect(c.sim.cut_streams("clean", RESOURCE) >= 1, "the EndpointSlice watch ended")
        wait_for(lambda: any(r["code"] == 403 for r in slice_requests(c.sim, seq)), "a 403 answer")
        first = next(r for r in slice_requests(c.sim, seq) if r["code"] == 403)["time"]
        # The attempts are counted over a fixed window: waiting it out is the measurement.
        wait_for(lambda: time.time() >= first + FORBIDDEN_S, "the counting window", FORBIDDEN_S + 5)
        attempts = [r for r in slice_requests(c.sim, seq) if 0 <= r["time"] - first < FORBIDDEN_S]
    watch.expect_unchanged()
    codes = [r["code"] for r in attempts]
    testing.expect(set(codes) == {403}, f"every attempt was refused: {codes}")
    testing.expect(2 <= len(attempts) <= MAX_ATTEMPTS,
                   f"{len(attempts)} attempts in {FORBIDDEN_S} s (backoff expected)")


@tests.case
def the_refusal_is_counted_and_logged(c):
    testing.expect(counter(c.server, "api-errors[forbidden]") >= 2, "api-errors[forbidden]")
    testing.expect_equal(counter(c.server, "connected"), 0, "connected (one watch is down)")
    testing.expect_equal(counter(c.server, f"objects[{RESOURCE}]"), 11, f"objects[{RESOURCE}] kept")
    lines = log_lines(c.server, "HTTP 403", state["mark"])
    testing.expect(lines and RESOURCE in lines[0], "a log line names the resource and the 403")


@tests.case
def other_resources_keep_working_meanwhile(c):
    c.sim.apply(service("shop", "meanwhile", "10.96.91.1"))
    took = expect_addresses(c.server, "meanwhile.shop.svc.cluster.local.", ["10.96.91.1"], timeout=5)
    testing.expect(took < knotd.goal_bound(2), f"a service change took {took:.1f} s")


@tests.case
def once_allowed_again_the_resource_is_relisted_and_current(c):
    # Changed while forbidden: only a new list can tell.
    c.sim.apply(endpoint_slice("shop", "cache", ["10.244.2.35"], name="cache-mw5tq"))
    c.sim.delete(RESOURCE, "shop", "warmup-abcde")
    c.sim.forbid(RESOURCE, on=False)
    expect_addresses(c.server, "cache.shop.svc.cluster.local.", ["10.244.2.35"], timeout=40)
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    expect_objects_match_api(c.server, c.sim, clusterset=False)


tests.main(fixture=lambda: Cluster(zones=("cluster.local.", "in-addr.arpa.")))
