#!/usr/bin/env python3
# run alone: changes under churn answer within 2 s
"""Big objects that keep changing do not hold up other changes (issue 10, item 6).

The watcher thread rebuilds a service's records at every change of its slices; the work
must stay O(n log n) in the slices' size. A headless service with 4 EndpointSlices of
20,000 named ports each (the API's limit per slice) took 7.7 s per rebuild when ports
were merged by a linear search, and every other change waited behind it. Here one of its
slices changes all the time while unrelated services are created: each must answer
within 2 s, and the big service's names must stay right.
"""

import threading
import time

import knotd
import testing
from cluster import Cluster
from faults import endpoint_slice, expect_addresses, headless_service, service

tests = testing.Tests()

PORTS = 20000
SLICES = 4
state = {}


def wide_slice(index, address):
    """One of the big service's slices: one endpoint and PORTS named ports."""
    obj = endpoint_slice("shop", "wide", [address], name=f"wide-{index}")
    obj["ports"] = [{"name": f"p{i}", "protocol": "TCP", "port": 1 + i} for i in range(PORTS)]
    return obj


class Churn:
    """Re-applies slice 0 of the big service with a new address, over and over."""

    def __init__(self, sim):
        self.sim = sim
        self.stop = threading.Event()
        self.changes = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            self.changes += 1
            self.sim.apply(wide_slice(0, f"10.244.50.{self.changes % 200 + 1}"), validate=False)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=60)


@tests.case
def a_service_of_4_slices_of_20000_ports_is_published(c):
    c.sim.apply(headless_service("shop", "wide"))
    for i in range(SLICES):
        c.sim.apply(wide_slice(i, f"10.244.60.{i + 1}"), validate=False)
    expect_addresses(c.server, "wide.shop.svc.cluster.local.",
                     [f"10.244.60.{i + 1}" for i in range(SLICES)], timeout=60)
    c.expect_answer("_p19999._tcp.wide.shop.svc.cluster.local.", "SRV", "NOERROR")


@tests.case
def unrelated_changes_reach_dns_within_2_s_while_it_churns(c):
    with Churn(c.sim) as churn:
        n = 0
        # At least 5 services, and on until the big slice changed 5 times meanwhile.
        while n < 5 or (churn.changes < 6 and n < 60):
            n += 1
            address = f"10.96.120.{n}"
            c.sim.apply(service("shop", f"tick-{n}", address))
            took = expect_addresses(c.server, f"tick-{n}.shop.svc.cluster.local.", [address],
                                    timeout=30)
            testing.expect(took < knotd.goal_bound(2), f"tick-{n} answered after {took:.1f} s")
    testing.expect(churn.changes >= 6, f"the big slice changed {churn.changes} times meanwhile")
    # The last change of the big slice reached DNS too.
    last = f"10.244.50.{churn.changes % 200 + 1}"
    expect_addresses(c.server, "wide.shop.svc.cluster.local.",
                     [last] + [f"10.244.60.{i + 1}" for i in range(1, SLICES)], timeout=30)


tests.main(fixture=lambda: Cluster())
