#!/usr/bin/env python3
# run alone: a log burst within a 10 s rate-limit window
"""Malformed, hostile and unexpected watch events (issue 3): "A malformed, oversize or
unexpected object is logged and skipped; it never crashes, blocks or stalls knotd."

The simulator writes raw event lines into the open watches (an API server does not send
most of these, but a proxy, a buggy aggregated API or a future version might). After each
bad event a valid one follows in the same stream: it must be applied at once, the bad one
counted as a decode error, the stream kept open (no restart, no relist), and every other
name must answer as before. Events that are unusual but legal (DELETED of an object never
seen, MODIFIED of an unknown one, ADDED of a known one) are applied as client-go does.
"""

import time

import knotd
import testing
from cluster import Cluster
from faults import (Watch, addresses, api_items, counter, endpoint_slice, expect_addresses, log_lines,
                    log_mark, service, wait_counter, wait_for, wait_log)

tests = testing.Tests()

STEADY = [("kubernetes.default.svc.cluster.local.", "A"), ("web.shop.svc.cluster.local.", "AAAA"),
          ("postgres.db.svc.cluster.local.", "A"), ("34.12.96.10.in-addr.arpa.", "PTR")]
state = {"valid": 0}


def injected(sim, obj):
    """obj with kind, apiVersion and the current resourceVersion, as a watch event carries it."""
    obj = dict(obj)
    obj.setdefault("metadata", {})
    obj["metadata"] = dict(obj["metadata"], resourceVersion=str(sim.resource_version()))
    return obj


def follow_with_valid_event(c):
    """Sends a valid ADDED right after, in the same stream; returns its name once it answers."""
    state["valid"] += 1
    name, address = f"valid-{state['valid']}", f"10.96.110.{state['valid']}"
    c.sim.inject_event("services", "ADDED", injected(c.sim, service("shop", name, address)))
    took = expect_addresses(c.server, f"{name}.shop.svc.cluster.local.", [address], timeout=5)
    testing.expect(took < knotd.goal_bound(2), f"the valid event after the bad one took {took:.1f} s")


def skipped_case(description, event_type, make_object, absent=None):
    def case(c):
        decode = counter(c.server, "api-errors[decode]")
        delivered = c.sim.inject_event("services", event_type, make_object(c.sim))["delivered"]
        testing.expect(delivered >= 1, "the event reached the module's watch")
        follow_with_valid_event(c)
        wait_counter(c.server, "api-errors[decode]", lambda v: v == decode + 1,
                     "the bad event counted once as a decode error")
        if absent:
            testing.expect_equal(addresses(c.server, absent), ("NXDOMAIN", []), f"{absent} (skipped)")
    case.__name__ = f"{description}_is_skipped_and_the_stream_goes_on"
    return case


def svc(name, ns="shop", **spec):
    obj = service(ns, name, "10.96.111.1")
    obj["spec"].update(spec)
    return obj


def nested(depth):
    value = "bottom"
    for _ in range(depth):
        value = {"deeper": value}
    return value


@tests.case
def before_the_bad_events_the_stream_is_healthy(c):
    c.sim.wait_for_watches("services")
    state["restarts"] = counter(c.server, "watch-restarts")
    state["resyncs"] = counter(c.server, "resyncs")
    state["mark"] = log_mark(c.server)
    follow_with_valid_event(c)


@tests.case
def a_skipped_event_is_logged_with_its_reason_and_a_burst_at_a_limited_rate(c):
    decode = counter(c.server, "api-errors[decode]")
    mark = log_mark(c.server)
    c.sim.inject_event("services", "ADDED", injected(c.sim, svc("first_bad")))
    follow_with_valid_event(c)
    line = wait_log(c.server, "watch services event skipped (", mark)
    testing.expect("not a dns label" in line, f"the log line gives the reason: {line}")
    logged = time.monotonic()
    # Two more within the rate limit's 10 s: counted, not logged.
    mark = log_mark(c.server)
    c.sim.inject_event("services", "ADDED", injected(c.sim, svc("second_bad")))
    c.sim.inject_event("services", "ADDED", injected(c.sim, svc("third_bad")))
    follow_with_valid_event(c)
    wait_counter(c.server, "api-errors[decode]", lambda v: v == decode + 3, "three decode errors")
    testing.expect(not log_lines(c.server, "skipped", mark), "the burst was not logged line by line")
    testing.expect(time.monotonic() - logged < 10, "the burst came within 10 s (machine too slow)")
    # The first one after the 10 s says how many were not logged.
    wait_for(lambda: time.monotonic() - logged > 10.5, "the rate limit's 10 s to pass", 15)
    c.sim.inject_event("services", "ADDED", injected(c.sim, svc("fourth_bad")))
    line = wait_log(c.server, "watch services event skipped (", mark)
    testing.expect("2 similar errors suppressed before" in line,
                   f"the suppressed count is logged: {line}")
    wait_counter(c.server, "api-errors[decode]", lambda v: v == decode + 4, "four decode errors")


BAD = [
    ("an_event_whose_object_is_a_string", "ADDED", lambda sim: "not an object", None),
    ("an_object_without_metadata", "ADDED",
     lambda sim: {"kind": "Service", "apiVersion": "v1", "spec": {"clusterIP": "10.96.111.2"}}, None),
    ("an_object_without_a_name", "ADDED",
     lambda sim: injected(sim, {"kind": "Service", "apiVersion": "v1",
                                "metadata": {"namespace": "shop"}}),
     None),
    ("a_name_with_an_underscore", "ADDED", lambda sim: injected(sim, svc("bad_name")), None),
    ("a_name_with_a_dot", "ADDED", lambda sim: injected(sim, svc("dotted.name")),
     "dotted.name.shop.svc.cluster.local."),
    ("an_uppercase_name", "ADDED", lambda sim: injected(sim, svc("UPPER")),
     "upper.shop.svc.cluster.local."),
    ("a_name_of_64_characters", "ADDED", lambda sim: injected(sim, svc("n" * 64)), None),
    ("a_namespace_that_is_not_a_dns_label", "ADDED", lambda sim: injected(sim, svc("good", ns="bad/ns")),
     None),
    ("an_object_of_another_kind", "ADDED",
     lambda sim: injected(sim, dict(svc("podlike"), kind="Pod")), "podlike.shop.svc.cluster.local."),
    ("an_unknown_event_type", "RENAMED", lambda sim: injected(sim, svc("renamed")),
     "renamed.shop.svc.cluster.local."),
    ("a_resource_version_with_a_space", "ADDED",
     lambda sim: dict(svc("spacy"), metadata={"name": "spacy", "namespace": "shop",
                                              "resourceVersion": "1 2"}),
     "spacy.shop.svc.cluster.local."),
    ("a_resource_version_of_200_characters", "ADDED",
     lambda sim: dict(svc("longrv"), metadata={"name": "longrv", "namespace": "shop",
                                               "resourceVersion": "9" * 200}),
     "longrv.shop.svc.cluster.local."),
    ("json_nested_200_levels_deep", "ADDED",
     lambda sim: injected(sim, svc("deep", selector=nested(200))),
     "deep.shop.svc.cluster.local."),
]

for bad in BAD:
    tests.case(skipped_case(*bad))


@tests.case
def a_label_value_of_1_mib_is_accepted(c):
    obj = service("shop", "big-label", "10.96.111.10")
    obj["metadata"]["labels"] = {"example.com/big": "v" * (1024 * 1024)}
    decode = counter(c.server, "api-errors[decode]")
    c.sim.inject_event("services", "ADDED", injected(c.sim, obj))
    expect_addresses(c.server, "big-label.shop.svc.cluster.local.", ["10.96.111.10"])
    testing.expect_equal(counter(c.server, "api-errors[decode]"), decode, "api-errors[decode]")


@tests.case
def an_endpointslice_with_unusable_addresses_and_labels_is_taken_for_what_it_is(c):
    bad = endpoint_slice("shop", "cache", ["999.1.1.1", "10.244.2.50"], name="cache-mw5tq")
    c.sim.inject_event("endpointslices", "MODIFIED", injected(c.sim, bad))
    expect_addresses(c.server, "cache.shop.svc.cluster.local.", ["10.244.2.50"])
    orphan = endpoint_slice("shop", "x" * 300, ["10.244.2.51"], name="orphan")
    c.sim.inject_event("endpointslices", "ADDED", injected(c.sim, orphan))
    follow_with_valid_event(c)
    testing.expect_equal(addresses(c.server, "cache.shop.svc.cluster.local."),
                         ("NOERROR", ["10.244.2.50"]), "cache keeps its one valid address")


def services_held_expected(c):
    """The services the module must hold: the API's and the valid ones injected so far."""
    return len(api_items(c.sim, "/api/v1/services")) + state["valid"] + 1  # + big-label


@tests.case
def deleted_for_an_object_never_seen_changes_nothing(c):
    decode = counter(c.server, "api-errors[decode]")
    wait_counter(c.server, "objects[services]", lambda v: v == services_held_expected(c),
                 "services held")
    ghost = service("shop", "never-seen", "10.96.111.20")
    c.sim.inject_event("services", "DELETED", injected(c.sim, ghost))
    follow_with_valid_event(c)
    wait_counter(c.server, "objects[services]", lambda v: v == services_held_expected(c),
                 "only the valid service added")
    testing.expect_equal(counter(c.server, "api-errors[decode]"), decode, "api-errors[decode]")


@tests.case
def modified_for_an_unknown_object_adds_it_and_added_for_a_known_one_updates_it(c):
    surprise = service("shop", "surprise", "10.96.111.30")
    c.sim.inject_event("services", "MODIFIED", injected(c.sim, surprise))
    expect_addresses(c.server, "surprise.shop.svc.cluster.local.", ["10.96.111.30"])
    c.sim.inject_event("services", "ADDED", injected(c.sim, service("shop", "surprise", "10.96.111.31")))
    expect_addresses(c.server, "surprise.shop.svc.cluster.local.", ["10.96.111.31"])


@tests.case
def after_all_that_the_stream_was_never_restarted_and_every_other_name_answers_as_before(c):
    testing.expect_equal(counter(c.server, "watch-restarts"), state["restarts"], "watch-restarts")
    testing.expect_equal(counter(c.server, "resyncs"), state["resyncs"], "resyncs")
    with Watch(c.server, STEADY) as watch:
        wait_for(lambda: len(watch.answers) >= len(STEADY), "one round of queries", 10)
    testing.expect_equal(watch.before, {
        ("kubernetes.default.svc.cluster.local.", "A"): ("NOERROR", ["10.96.0.1"]),
        ("web.shop.svc.cluster.local.", "AAAA"): ("NOERROR", ["fd00:10:96::1234"]),
        ("postgres.db.svc.cluster.local.", "A"): ("NOERROR", ["10.244.0.20", "10.244.1.20"]),
        ("34.12.96.10.in-addr.arpa.", "PTR"): ("NOERROR", ["web.shop.svc.cluster.local."]),
    }, "answers")
    watch.expect_unchanged()


tests.main(fixture=lambda: Cluster(zones=("cluster.local.", "in-addr.arpa.")))
