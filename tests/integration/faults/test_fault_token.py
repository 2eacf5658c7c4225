#!/usr/bin/env python3
"""401 after the bearer token expires, then a rotated token in the token file (issue 2, issue 3).

Projected service-account tokens expire and the kubelet writes a new one into the token
file (an atomic ..data symlink swap). The API server answers 401 to an expired token; the
module must re-read the token file (kubeconfig `tokenFile`, as in-cluster), recover on
its own once the file holds a valid token, keep answering from what it knew meanwhile,
count the 401s, and never write a token into knotd's log.
"""

import time

import knotd
import testing
from cluster import Cluster
from faults import (Watch, age_watches, counter, expect_addresses, expect_objects_match_api, log_lines,
                    log_mark, service, wait_counter)

tests = testing.Tests()

STEADY = [("kubernetes.default.svc.cluster.local.", "A"), ("web.shop.svc.cluster.local.", "AAAA"),
          ("cache.shop.svc.cluster.local.", "A"), ("34.12.96.10.in-addr.arpa.", "PTR")]
# Reflectors of a cluster zone: namespaces, services, endpointslices.
REFLECTORS = 3
tokens = []
state = {}


@tests.case
def while_every_token_is_refused_the_last_known_state_is_served(c):
    age_watches(c.sim, REFLECTORS)
    tokens.append(c.sim.token)
    state["mark"] = log_mark(c.server)
    state["unauthorized"] = counter(c.server, "api-errors[unauthorized]")
    with Watch(c.server, STEADY) as watch:
        c.sim.expire_token()
        # The open streams were authorized when they started: end them, as the server
        # does at their timeout, so that the module must authenticate again.
        testing.expect(c.sim.cut_streams("clean") >= REFLECTORS, "the watches ended")
        c.sim.apply(service("shop", "rotated", "10.96.90.1"))  # Made while refused.
        wait_counter(c.server, "api-errors[unauthorized]",
                     lambda v: v >= state["unauthorized"] + 2 * REFLECTORS,
                     "every reflector refused twice", timeout=30)
        wait_counter(c.server, "connected", lambda v: v == 0, "connected drops to 0")
    watch.expect_unchanged()


@tests.case
def the_refusals_are_counted_and_logged_as_unauthorized(c):
    refused = counter(c.server, "api-errors[unauthorized]") - state["unauthorized"]
    testing.expect(refused >= 2 * REFLECTORS, f"api-errors[unauthorized] grew by {refused}")
    lines = log_lines(c.server, "HTTP 401", state["mark"])
    testing.expect(lines, "a log line names the 401")
    testing.expect_equal(counter(c.server, "ready[cluster]"), 1, "ready[cluster] (the data stays)")


@tests.case
def after_the_token_file_is_rotated_the_module_recovers_by_itself(c):
    c.sim.rotate_token()
    tokens.append(c.sim.token)
    # The next retry (after its backoff) reads the new token: a few seconds at most.
    expect_addresses(c.server, "rotated.shop.svc.cluster.local.", ["10.96.90.1"], timeout=30)
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=30)
    expect_objects_match_api(c.server, c.sim, clusterset=False)
    c.sim.delete("services", "shop", "rotated")
    took = expect_addresses(c.server, "rotated.shop.svc.cluster.local.", [], timeout=5)
    testing.expect(took < knotd.goal_bound(2), f"a change took {took:.1f} s after the recovery")


ROTATIONS = 3


@tests.case
def a_token_file_rotated_a_moment_after_the_server_switched_is_used_within_3_s(c):
    # The server refuses the old token first; the kubelet writes the new file a moment
    # later, while the reflectors already back off (grown by the cases above and by each
    # earlier round): the file is watched meanwhile, so the backoff does not delay it.
    took = []
    for i in range(ROTATIONS):
        age_watches(c.sim, REFLECTORS)
        c.sim.expire_token()
        testing.expect(c.sim.cut_streams("clean") >= REFLECTORS, "the watches ended")
        c.sim.apply(service("shop", f"late-{i}", f"10.96.91.{i + 1}"))
        time.sleep(1.5)  # Every reflector refused at least once, backing off.
        c.sim.rotate_token()
        tokens.append(c.sim.token)
        started = time.monotonic()
        expect_addresses(c.server, f"late-{i}.shop.svc.cluster.local.", [f"10.96.91.{i + 1}"],
                         timeout=90)
        took.append(time.monotonic() - started)
    testing.expect(max(took) <= knotd.goal_bound(3), f"changes took {[round(t, 1) for t in took]} s after the rotations")


@tests.case
def a_token_rotation_seen_by_one_reflector_serves_every_reflector_at_once(c):
    # The soak's rotation: file and server switch together, the streams end, and every
    # reflector reconnects with the old token; the first 401 reads the new file, and the
    # others must not wait out their backoff because the file no longer looks changed.
    age_watches(c.sim, REFLECTORS)
    c.sim.rotate_token()
    tokens.append(c.sim.token)
    testing.expect(c.sim.cut_streams("clean") >= REFLECTORS, "the watches ended")
    started = time.monotonic()
    c.sim.apply(service("shop", "together", "10.96.92.1"))
    expect_addresses(c.server, "together.shop.svc.cluster.local.", ["10.96.92.1"], timeout=90)
    wait_counter(c.server, "connected", lambda v: v == 1, "connected again", timeout=90)
    took = time.monotonic() - started
    testing.expect(took <= knotd.goal_bound(3), f"every watch was back {took:.1f} s after the rotation")


@tests.case
def no_token_appears_in_knotds_log(c):
    text = c.log_text()
    testing.expect(len(tokens) >= 2 and len(set(tokens)) == len(tokens), "an old and new tokens")
    for token in tokens:
        # The whole JWT and each of its parts (header, claims, signature).
        for part in [token] + token.split("."):
            testing.expect(part not in text,
                           f"knotd's log contains a token or a part of one: {part[:12]}...")
    testing.expect("Bearer" not in text and "Authorization" not in text,
                   "knotd's log mentions an Authorization header")


tests.main(fixture=lambda: Cluster(kubeconfig="kubeconfig-tokenfile",
                                   zones=("cluster.local.", "in-addr.arpa.")))
