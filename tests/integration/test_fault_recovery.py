#!/usr/bin/env python3
"""Fast recovery after an API outage (issue 14): a change made right after the API server
comes back reaches DNS within 2 s, although the retry backoff has grown to tens of seconds.

While backing off from a server that does not answer at all, each reflector probes it
(GET /version) about every second; the first answer ends the backoff and the watch
resumes from its last resourceVersion (no relist: the history covers the outage).
"""

import time

import testing
from cluster import Cluster
from faults import (age_watches, begin_outage, counter, end_outage, endpoint_slice,
                    expect_addresses, expect_objects_match_api, log_lines, log_mark, service,
                    wait_counter)

tests = testing.Tests()

OUTAGE_S = 20
state = {}


@tests.case
def an_outage_of_20_s_grows_the_backoff_beyond_2_s(c):
    age_watches(c.sim, 6)  # Dropped, they are resumed (not relisted as very short).
    state["mark"] = log_mark(c.server)
    begin_outage(c.sim)
    wait_counter(c.server, "connected", lambda v: v == 0, "connected drops to 0")
    time.sleep(OUTAGE_S)
    retries = log_lines(c.server, "failed, retrying in", state["mark"])
    delays = [float(line.split("retrying in ")[1].split(" s")[0]) for line in retries]
    testing.expect(delays and max(delays) > 5, f"the backoff grew beyond 5 s: {delays}")


@tests.case
def a_change_right_after_the_outage_reaches_dns_within_2_s(c):
    end_outage(c.sim)
    started = time.monotonic()
    c.sim.apply([service("shop", "back", "10.96.70.3"),
                 endpoint_slice("shop", "back", ["10.244.2.43"])])
    expect_addresses(c.server, "back.shop.svc.cluster.local.", ["10.96.70.3"], timeout=60)
    took = time.monotonic() - started
    testing.expect(took <= 2, f"the change took {took:.1f} s to reach DNS (2 s allowed)")


@tests.case
def the_recovery_resumes_the_watches_without_a_relist_and_says_so(c):
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    testing.expect_equal(counter(c.server, "resyncs"), 0, "resyncs (the history covered the outage)")
    back = log_lines(c.server, "API server reachable again", state["mark"])
    testing.expect(any("resuming the watch" in line for line in back),
                   "a log line says the probe ended the backoff:\n" + "\n".join(back[:3]))
    expect_objects_match_api(c.server, c.sim)


tests.main(fixture=lambda: Cluster())
