#!/usr/bin/env python3
"""An API outage after the first sync (issue 3): the last known state is served, the outage
is visible in the counters and the log, and what changed meanwhile appears afterwards.

One outage, followed step by step: the simulator refuses connections and drops every open
stream (as a crashed or partitioned API server does) while objects keep changing behind
it; then it comes back. The module must not forget anything while disconnected, must
resume its watches from where they stopped (no relist: the history is still there), and
must end up holding exactly what the API serves.
"""

import knotd
import testing
from cluster import Cluster
from faults import (Watch, age_watches, begin_outage, counter, end_outage, endpoint_slice,
                    expect_addresses, expect_objects_match_api, log_lines, log_mark, service,
                    snapshot, wait_counter, wait_for)

tests = testing.Tests()

# What the sample cluster answers; none of these objects changes during the outage.
STEADY = [
    ("kubernetes.default.svc.cluster.local.", "A"),
    ("web.shop.svc.cluster.local.", "AAAA"),
    ("postgres.db.svc.cluster.local.", "A"),
    ("34.12.96.10.in-addr.arpa.", "PTR"),
    ("web.shop.svc.clusterset.local.", "A"),
    ("nonexistent.shop.svc.cluster.local.", "A"),
]
# What changes while the module is disconnected.
CHANGED = [
    ("cache.shop.svc.cluster.local.", "A"),       # endpoints replaced
    ("syslog.shop.svc.cluster.local.", "A"),      # service deleted
    ("during.shop.svc.cluster.local.", "A"),      # service created
]

state = {"mark": 0}


@tests.case
def during_an_outage_every_name_answers_its_last_known_state(c):
    age_watches(c.sim, 6)  # Dropped, they are resumed (not relisted as very short).
    state["mark"] = log_mark(c.server)
    with Watch(c.server, STEADY + CHANGED) as watch:
        # Refused until a later test ends it: the query loop ends before the module reconnects.
        begin_outage(c.sim)
        wait_counter(c.server, "connected", lambda v: v == 0, "connected drops to 0")
        c.sim.apply(endpoint_slice("shop", "cache", ["10.244.2.31", "10.244.2.32"], name="cache-mw5tq"))
        c.sim.delete("services", "shop", "syslog")
        c.sim.apply([service("shop", "during", "10.96.70.1"),
                     endpoint_slice("shop", "during", ["10.244.2.40"])])
        # Let the module retry (and fail) a few times while the changes wait behind the outage.
        network = counter(c.server, "api-errors[network]")
        wait_counter(c.server, "api-errors[network]", lambda v: v >= network + 3,
                     "connection attempts fail during the outage")
        # On a slow machine three retries may come before five rounds of queries.
        wait_for(lambda: watch.rounds() >= 5, "five rounds of queries during the outage")
    watch.expect_unchanged(minimum=5)
    state["before"] = watch.before


@tests.case
def the_outage_shows_as_disconnected_with_network_errors_and_a_log_line(c):
    stats = c.stats()
    testing.expect_equal(stats.get("connected", 0), 0, "connected during the outage")
    testing.expect(stats.get("api-errors[network]", 0) > 0, f"api-errors[network] counted: {stats}")
    testing.expect_equal(stats.get("ready[cluster]"), 1, "ready[cluster] (the data stays)")
    refused = log_lines(c.server, "failed, retrying in", state["mark"])
    # curl's words: "Couldn't connect" (Debian 12's 7.88), "Could not connect" (Debian 13's 8.14).
    testing.expect(any("Couldn't connect" in line or "Could not connect" in line for line in refused),
                   "a log line says the watch failed and is retried:\n" + "\n".join(refused[:3]))


@tests.case
def after_the_outage_changes_made_during_it_appear_and_deleted_objects_disappear(c):
    end_outage(c.sim)
    expect_addresses(c.server, "during.shop.svc.cluster.local.", ["10.96.70.1"], timeout=30)
    expect_addresses(c.server, "cache.shop.svc.cluster.local.", ["10.244.2.31", "10.244.2.32"])
    expect_addresses(c.server, "syslog.shop.svc.cluster.local.", [])
    expect_addresses(c.server, "14.40.96.10.in-addr.arpa.", [], qtype="PTR")


@tests.case
def the_watches_resume_without_a_relist_and_hold_each_object_once(c):
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    testing.expect_equal(counter(c.server, "resyncs"), 0, "resyncs (the history covered the outage)")
    testing.expect(counter(c.server, "watch-restarts") > 0, "watch-restarts counted")
    expect_objects_match_api(c.server, c.sim)


@tests.case
def changes_after_the_outage_appear_at_once(c):
    c.sim.apply([service("shop", "after", "10.96.70.2"),
                 endpoint_slice("shop", "after", ["10.244.2.41"])])
    took = expect_addresses(c.server, "after.shop.svc.cluster.local.", ["10.96.70.2"], timeout=5)
    testing.expect(took < knotd.goal_bound(2), f"the change took {took:.1f} s to appear (the watch should be streaming)")
    c.sim.delete("services", "shop", "during")
    expect_addresses(c.server, "during.shop.svc.cluster.local.", [], timeout=5)
    expect_objects_match_api(c.server, c.sim)


@tests.case
def the_names_that_did_not_change_answer_as_before_the_outage(c):
    now = snapshot(c.server, STEADY)
    before = {name: state["before"][name] for name in STEADY}
    testing.expect_equal(now, before, "answers after the outage")


tests.main(fixture=lambda: Cluster())
