#!/usr/bin/env python3
"""Federated services without a local shard, resolved through the upstream (issue 13, item 6).

A query <svc>.<ns>.myfederation.svc.cluster.local for a service without local
endpoints answers a CNAME to the federation's name for this cluster's zone and
region, <svc>.<ns>.myfederation.svc.<zone>.<region>.example.com. Pods' stub
resolvers (glibc, musl) do not chase CNAMEs, so with the `upstream` option that
name is resolved like an ExternalName target and the client gets the CNAME and
the remote shard's addresses in one response. The watcher cannot know these
names ahead, so the first query asks the resolver thread for the name and is
answered late, once the name is cached, as a cold ExternalName target is. The upstream here is a second knotd serving
example.com, the federation's domain.
"""


import knotd
import testing
from cluster import Cluster
from faults import endpoint_slice, service

tests = testing.Tests()

FEDERATIONS = ["myfederation=example.com"]
TOPOLOGY = "testcontinent-testreg-testzone.testcontinent-testreg"

EXAMPLE_COM = f"""
mysvc.myns.myfederation.svc.{TOPOLOGY}    300 A     192.0.2.77
mysvc.myns.myfederation.svc.{TOPOLOGY}    300 AAAA  2001:db8::77
cold.myns.myfederation.svc.{TOPOLOGY}     300 A     192.0.2.78
lonely.shop.myfederation.svc.{TOPOLOGY}   300 CNAME lb.example.com.
lb                                        300 A     192.0.2.79
"""


class Fixture(testing.Fixture):
    """The upstream (a plain knotd with example.com) and a cluster with a federation using it."""

    def start(self):
        self.upstream = self.enter_context(knotd.Knotd(
            zones={"example.com.": None}, zone_extra={"example.com.": EXAMPLE_COM}))
        self.cluster = self.enter_context(Cluster(
            zones=("cluster.local.",),
            module={"federations": FEDERATIONS,
                    "upstream": f"127.0.0.1@{self.upstream.port}"}))
        return self.cluster


def records(answer):
    return {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}


@tests.case
def a_federated_service_without_a_local_shard_gets_the_cname_and_the_remote_addresses(c):
    name = "mysvc.myns.myfederation.svc.cluster.local."
    remote = f"mysvc.myns.myfederation.svc.{TOPOLOGY}.example.com."
    answer = c.expect_answer(name, "A", "NOERROR", ["192.0.2.77"], timeout=15)
    testing.expect_equal(records(answer), {(name, "CNAME", remote), (remote, "A", "192.0.2.77")},
                         "A answer")
    testing.expect("aa" in answer.flags, "no AA")
    answer = c.expect_answer(name, "AAAA", "NOERROR", ["2001:db8::77"], timeout=15)
    testing.expect_equal(records(answer),
                         {(name, "CNAME", remote), (remote, "AAAA", "2001:db8::77")}, "AAAA answer")
    # Other types: the CNAME alone, as before.
    answer = c.query(name, "TXT")
    testing.expect_equal(records(answer), {(name, "CNAME", remote)}, "TXT answer")


@tests.case
def a_cold_remote_name_answers_the_cname_and_addresses_on_the_first_query(c):
    name = "cold.myns.myfederation.svc.cluster.local."
    remote = f"cold.myns.myfederation.svc.{TOPOLOGY}.example.com."
    # The name is cold: the query is answered late, once the resolver thread has it.
    answer = c.query(name, "A", timeout=5)
    testing.expect_equal(answer.rcode, "NOERROR", f"first answer: {answer.summary()}")
    testing.expect_equal(records(answer), {(name, "CNAME", remote), (remote, "A", "192.0.2.78")},
                         "first answer")


@tests.case
def a_remote_name_the_federation_does_not_have_is_nxdomain_after_the_cname(c):
    name = "ghost.myns.myfederation.svc.cluster.local."
    remote = f"ghost.myns.myfederation.svc.{TOPOLOGY}.example.com."
    answer = c.expect_answer(name, "A", "NXDOMAIN", timeout=15)
    testing.expect_equal(records(answer), {(name, "CNAME", remote)}, "answer")


@tests.case
def a_local_service_losing_its_endpoints_answers_the_remote_chain(c):
    name = "lonely.shop.myfederation.svc.cluster.local."
    remote = f"lonely.shop.myfederation.svc.{TOPOLOGY}.example.com."
    c.sim.apply(service("shop", "lonely", "10.96.77.8"))
    c.sim.apply(endpoint_slice("shop", "lonely", ["10.244.7.8"]))
    answer = c.expect_answer(name, "A", "NOERROR", ["10.96.77.8"])
    testing.expect_equal(records(answer), {(name, "CNAME", "lonely.shop.svc.cluster.local."),
                                           ("lonely.shop.svc.cluster.local.", "A", "10.96.77.8")},
                         "local answer")
    c.sim.apply(endpoint_slice("shop", "lonely", ["10.244.7.8"], ready=False))
    answer = c.expect_answer(name, "A", "NOERROR", ["192.0.2.79"], timeout=15)
    testing.expect_equal(records(answer), {(name, "CNAME", remote),
                                           (remote, "CNAME", "lb.example.com."),
                                           ("lb.example.com.", "A", "192.0.2.79")}, "remote answer")
    c.sim.delete("services", "shop", "lonely")
    c.sim.delete("endpointslices", "shop", "lonely-abcde")


tests.main(fixture=Fixture)
