#!/usr/bin/env python3
"""The mod-k8s counters of `knotc zone-stats` (doc/mod-k8s.rst, Counters; issue 3): objects per
kind, records, resyncs, watch restarts, API errors by class, seconds since the last event
and programming latency buckets, each with a value that follows what happened.

knotc omits a counter index whose value is 0, so each test first makes its counters move.
Counters that need a fault of their own are checked in the fault files: queries[not-ready]
(test_fault_readiness), api-errors[network] (test_fault_outage), [timeout]
(test_fault_streams), [unauthorized] (test_fault_token), [forbidden] (test_fault_forbidden),
[not-found] (test_fault_absent_crd). queries[servfail] needs an unreachable upstream
resolver and api-errors[server] a 5xx from the API server; neither is made here.
"""

import json
import os
import re
import tempfile

import dig
import testing
from cluster import Cluster, SRCDIR, stats
from faults import (api_items, counter, endpoint_slice, expect_addresses, headless_service,
                    objects_in_api, service, start_knotd, trigger_time, unwatched_write, wait_counter,
                    wait_for, wait_log)

tests = testing.Tests()

ZONES = ("cluster.local.", "in-addr.arpa.", "clusterset.local.")
# The counters and indices as doc/mod-k8s.rst names them (checked against its text below).
DOCUMENTED = {
    "queries": {"answer", "nodata", "nxdomain", "truncated", "not-ready", "servfail"},
    "objects": None,   # One index per resource.
    "services": {"cluster", "clusterset"},
    "records": None, "table-bytes": None, "records-capped": None,
    "ready": {"cluster", "clusterset"},
    "connected": None, "resyncs": None, "watch-restarts": None,
    "api-errors": {"network", "tls", "timeout", "unauthorized", "forbidden", "not-found", "gone",
                   "throttled", "server", "http", "decode", "too-large"},
    "last-event-age": None,
    "programming-latency": "buckets",
    "snapshot": {"stale", "loaded", "writes", "write-errors", "refused"},
}
BUCKET = re.compile(r"^(le|gt)-(\d+)ms$")
REFLECTORS = 6
shown = {}


def snapshot(c, zone="cluster.local."):
    """The zone's counters, remembered for the documentation check at the end."""
    values = stats(c.server, zone)
    shown.update(values)
    return values


@tests.case
def the_synchronized_state_shows_in_objects_services_ready_and_connected(c):
    for zone in ZONES:
        values = snapshot(c, zone)
        held = {k: v for k, v in values.items() if k.startswith("objects[")}
        testing.expect_equal(held, objects_in_api(c.sim), f"{zone} objects held")
        testing.expect_equal(values.get("services[cluster]"), len(api_items(c.sim, "/api/v1/services")),
                             f"{zone} services[cluster]")
        testing.expect_equal(values.get("services[clusterset]"), 2, f"{zone} services[clusterset]")
        for key in ("ready[cluster]", "ready[clusterset]", "connected"):
            testing.expect_equal(values.get(key), 1, f"{zone} {key}")
        for key in ("resyncs", "watch-restarts"):
            testing.expect_equal(values.get(key), 0, f"{zone} {key}")
        testing.expect(values.get("records", 0) > 0 and values.get("table-bytes", 0) > values["records"],
                       f"{zone} records and table-bytes: {values}")
        testing.expect(not any(k.startswith("programming-latency") for k in values),
                       f"{zone}: the first list counts no programming latency")


@tests.case
def query_outcomes_are_counted_in_the_zone_that_answered(c):
    c.sim.apply([headless_service("shop", "many"),
                 endpoint_slice("shop", "many", [f"10.244.50.{i}" for i in range(1, 61)])])
    expect_addresses(c.server, "many.shop.svc.cluster.local.", [f"10.244.50.{i}" for i in range(1, 61)],
                     tcp=True)
    # The counters follow within a second: then they are the base of the next test.
    wait_counter(c.server, "records", lambda v: v == shown["records"] + 60, "60 more address records")
    before = {zone: stats(c.server, zone) for zone in ZONES}
    queries = [("kubernetes.default.svc.cluster.local.", "A", "answer"),
               ("kubernetes.default.svc.cluster.local.", "AAAA", "nodata"),
               ("nonexistent.shop.svc.cluster.local.", "A", "nxdomain"),
               ("many.shop.svc.cluster.local.", "A", "truncated")]
    for qname, qtype, _ in queries:
        dig.query(c.server, qname, qtype)
    dig.query(c.server, "1.0.96.10.in-addr.arpa.", "PTR")
    for zone, outcome in [("cluster.local.", o) for _, _, o in queries] + [("in-addr.arpa.", "answer")]:
        key = f"queries[{outcome}]"
        wait_counter(c.server, key, lambda v, z=zone, k=key: v == before[z].get(k, 0) + 1,
                     f"{zone} {key} grows by one", zone=zone)
    snapshot(c)
    testing.expect_equal(stats(c.server, "clusterset.local.").get("queries[answer]", 0),
                         before["clusterset.local."].get("queries[answer]", 0),
                         "clusterset.local. queries[answer]")


@tests.case
def records_and_table_bytes_follow_what_is_published(c):
    base = snapshot(c)
    c.sim.apply(service("shop", "one", "10.96.120.1"))
    wait_counter(c.server, "records", lambda v: v == base["records"] + 1, "one more address record")
    testing.expect(counter(c.server, "table-bytes") > base["table-bytes"], "table-bytes grows")
    c.sim.apply(endpoint_slice("shop", "many", [f"10.244.50.{i}" for i in range(1, 31)]))
    wait_counter(c.server, "records", lambda v: v == base["records"] + 1 - 30, "30 endpoints fewer")
    c.sim.delete("services", "shop", "one")
    c.sim.delete("services", "shop", "many")
    wait_counter(c.server, "records", lambda v: v == base["records"] - 60, "the services' records gone")
    testing.expect(counter(c.server, "table-bytes") < base["table-bytes"], "table-bytes shrinks")


def latency_buckets(c):
    return {k: v for k, v in stats(c.server).items() if k.startswith("programming-latency[")}


def bucket_limit(key):
    kind, ms = BUCKET.match(key[len("programming-latency["):-1]).groups()
    return int(ms) if kind == "le" else float("inf")


@tests.case
def programming_latency_counts_a_watched_change_from_its_trigger_time(c):
    before = latency_buckets(c)
    # The annotation has whole seconds: the latency measured is below 1 s plus the processing.
    c.sim.apply([service("shop", "fresh", "10.96.121.1"),
                 endpoint_slice("shop", "fresh", ["10.244.51.1"], trigger=trigger_time())])
    wait_for_latency_count(c, before, 1)
    after = latency_buckets(c)
    grown = [k for k in after if after[k] != before.get(k, 0)]
    testing.expect(len(grown) == 1 and bucket_limit(grown[0]) <= 2048,
                   f"one count in a bucket of at most 2048 ms: {grown}")
    shown.update(after)


def wait_for_latency_count(c, before, count):
    wait_for(lambda: sum(latency_buckets(c).values()) == sum(before.values()) + count,
             f"{count} more programming latency count", timeout=10, interval=0.25)


@tests.case
def programming_latency_puts_an_old_trigger_in_the_open_ended_bucket_and_ignores_a_missing_one(c):
    before = latency_buckets(c)
    c.sim.apply(endpoint_slice("shop", "fresh", ["10.244.51.2"], trigger="2026-01-10T09:12:00Z"))
    wait_for_latency_count(c, before, 1)
    after = latency_buckets(c)
    grown = [k for k in after if after[k] != before.get(k, 0)]
    testing.expect(len(grown) == 1 and grown[0].startswith("programming-latency[gt-"),
                   f"the count is in the open-ended bucket: {grown}")
    c.sim.apply(endpoint_slice("shop", "fresh", ["10.244.51.3"]))
    expect_addresses(c.server, "fresh.shop.svc.cluster.local.", ["10.96.121.1"])
    testing.expect_equal(latency_buckets(c), after, "buckets after a change without a trigger time")


@tests.case
def last_event_age_grows_while_nothing_happens_and_restarts_with_an_event(c):
    age = wait_counter(c.server, "last-event-age", lambda v: v >= 3, "last-event-age reaches 3 s",
                       timeout=10)
    c.sim.apply(service("shop", "wake", "10.96.122.1"))
    # Restarted: below the age before the event (0 lasts only a second, a loaded knotc
    # poll may miss it, and an age that kept growing would not go below `age` at all).
    wait_counter(c.server, "last-event-age", lambda v: v < age, f"last-event-age back below {age}",
                 timeout=5)


@tests.case
def resyncs_watch_restarts_and_api_errors_count_relists_and_their_causes(c):
    c.sim.set_bookmark_interval(3600)  # See test_fault_restart.py: no bookmark may move the RV.
    before = snapshot(c)
    unwatched_write(c.sim, "counters-marker")
    c.sim.compact()
    c.sim.cut_streams("clean")
    wait_counter(c.server, "resyncs", lambda v: v == before["resyncs"] + REFLECTORS, "one relist each",
                 timeout=30)
    wait_counter(c.server, "watch-restarts", lambda v: v >= before["watch-restarts"] + 2 * REFLECTORS,
                 "a resumed watch and a watch after the relist each")
    wait_counter(c.server, "api-errors[gone]",
                 lambda v: v == before.get("api-errors[gone]", 0) + REFLECTORS, "api-errors[gone]")
    # A bookmark whose resourceVersion the server then rejects (400): api-errors[http].
    c.sim.inject_event("services", "BOOKMARK",
                       {"kind": "Service", "apiVersion": "v1", "metadata": {"resourceVersion": "abc"}})
    c.sim.inject_event("services", "ADDED", {"kind": "Service", "apiVersion": "v1", "metadata": {}})
    wait_counter(c.server, "api-errors[decode]", lambda v: v == before.get("api-errors[decode]", 0) + 1,
                 "api-errors[decode]")
    c.sim.too_many_requests(count=1, retry_after=1, match="/api/v1/services", verbs=["watch"])
    c.sim.cut_streams("clean", "services")
    wait_counter(c.server, "api-errors[http]", lambda v: v == before.get("api-errors[http]", 0) + 1,
                 "api-errors[http]", timeout=30)
    wait_counter(c.server, "api-errors[throttled]",
                 lambda v: v == before.get("api-errors[throttled]", 0) + 1, "api-errors[throttled]",
                 timeout=30)
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    snapshot(c)


@tests.case
def a_server_certificate_the_ca_does_not_vouch_for_counts_as_tls(c):
    with open(c.sim.kubeconfig, encoding="utf-8") as f:
        text = f.read()
    wrong = text.replace(json.dumps(c.sim.ca_path), json.dumps(c.sim.client_cert))
    testing.expect(wrong != text, "the kubeconfig names the CA file")
    path = os.path.join(tempfile.mkdtemp(prefix="wrong-ca-"), "kubeconfig")
    with open(path, "w", encoding="utf-8") as f:
        f.write(wrong)
    server = start_knotd(c, module={"kubeconfig": path}, ready=False)
    try:
        wait_counter(server, "api-errors[tls]", lambda v: v > 0, "api-errors[tls]")
        wait_log(server, "failed, retrying in")
        answer = dig.query(server, "kubernetes.default.svc.cluster.local.", "A", edns=True)
        testing.expect(answer.rcode == "SERVFAIL" and answer.ede == [14], answer.summary())
        shown.update(stats(server))
    finally:
        server.stop()


@tests.case
def every_counter_shown_is_documented_and_every_documented_counter_was_shown(c):
    with open(os.path.join(SRCDIR, "doc", "mod-k8s.rst"), encoding="utf-8") as f:
        doc = f.read()
    for name, indices in DOCUMENTED.items():
        testing.expect(f"``{name}``" in doc, f"doc/mod-k8s.rst names ``{name}``")
        for index in indices if isinstance(indices, set) else ():
            testing.expect(f"``{index}``" in doc, f"doc/mod-k8s.rst names ``{index}`` ({name})")
    seen = set()
    for key in shown:
        name, _, index = key.partition("[")
        index = index.rstrip("]")
        testing.expect(name in DOCUMENTED, f"{key} is not documented")
        indices = DOCUMENTED[name]
        if indices == "buckets":
            testing.expect(BUCKET.match(index), f"{key}: not a le-Nms/gt-Nms bucket")
        elif isinstance(indices, set):
            testing.expect(index in indices, f"{key}: index not documented")
        seen.add(name)
    testing.expect_equal(sorted(set(DOCUMENTED) - seen), [], "documented counters never shown")


tests.main(fixture=lambda: Cluster())
