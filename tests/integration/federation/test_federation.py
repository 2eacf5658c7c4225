#!/usr/bin/env python3
"""Federated services (shared/specs/federated-service-discovery.md), as kube-dns answered them.

"Clients running within the clusters should be able to preferentially connect to the
shard of the service running within the same cluster, if one exists. Otherwise, they
should be able to connect to the shard of the service within the same zone or the same
region in that order of preference." kube-dns did it with CNAMEs: with the option
federations (`myfederation=example.com`) a query <svc>.<ns>.myfederation.svc.cluster.local
answers `CNAME <svc>.<ns>.svc.cluster.local.` when that local service has endpoints, else
`CNAME <svc>.<ns>.myfederation.svc.<zone>.<region>.example.com.` with the zone and region
labels of a node. The sample cluster's node-a (the first node by name) carries kube-dns's
test values: zone testcontinent-testreg-testzone, region testcontinent-testreg.
"""

import dig
import testing
from cluster import Cluster
from faults import counter, endpoint_slice, service, start_knotd, wait_counter

tests = testing.Tests()

FEDERATIONS = ["myfederation=example.com", "secondfederation=second.example.com"]
TOPOLOGY = "testcontinent-testreg-testzone.testcontinent-testreg"
NODE_A = "testcontinent-testreg-testzone"
MERGE = {"Content-Type": "application/merge-patch+json"}

tests.table(f"""
# kube-dns's test: no local service, the federation's name in this cluster's zone and region.
mysvc.myns.myfederation.svc.cluster.local.      A    NOERROR aa mysvc.myns.myfederation.svc.cluster.local. CNAME mysvc.myns.myfederation.svc.{TOPOLOGY}.example.com.
mysvc.myns.secondfederation.svc.cluster.local.  A    NOERROR aa mysvc.myns.secondfederation.svc.cluster.local. CNAME mysvc.myns.secondfederation.svc.{TOPOLOGY}.second.example.com.
# The design document's example service, in a namespace this cluster has.
myservice.shop.myfederation.svc.cluster.local.  AAAA NOERROR aa myservice.shop.myfederation.svc.cluster.local. CNAME myservice.shop.myfederation.svc.{TOPOLOGY}.example.com.
# Local services with endpoints: a CNAME to the local name, then its records.
kubernetes.default.myfederation.svc.cluster.local. A NOERROR aa kubernetes.default.myfederation.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local. | kubernetes.default.svc.cluster.local. A 10.96.0.1
web.shop.secondfederation.svc.cluster.local.    AAAA NOERROR aa web.shop.secondfederation.svc.cluster.local. CNAME web.shop.svc.cluster.local. | web.shop.svc.cluster.local. AAAA fd00:10:96::1234
postgres.db.myfederation.svc.cluster.local.     A    NOERROR aa postgres.db.myfederation.svc.cluster.local. CNAME postgres.db.svc.cluster.local. | postgres.db.svc.cluster.local. A 10.244.0.20 | postgres.db.svc.cluster.local. A 10.244.1.20
external.shop.myfederation.svc.cluster.local.   A    NOERROR aa external.shop.myfederation.svc.cluster.local. CNAME external.shop.svc.cluster.local. | external.shop.svc.cluster.local. CNAME www.example.com.
# A CNAME owns its name for every type.
mysvc.myns.myfederation.svc.cluster.local.      TXT  NOERROR aa mysvc.myns.myfederation.svc.cluster.local. CNAME mysvc.myns.myfederation.svc.{TOPOLOGY}.example.com.
kubernetes.default.myfederation.svc.cluster.local. SRV NOERROR aa kubernetes.default.myfederation.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local. | kubernetes.default.svc.cluster.local. SRV 0 100 443 kubernetes.default.svc.cluster.local.
# A name is matched case-insensitively; another federation name is today's endpoint name.
Kubernetes.Default.MyFederation.svc.cluster.local. A NOERROR aa kubernetes.default.myfederation.svc.cluster.local. CNAME kubernetes.default.svc.cluster.local. | kubernetes.default.svc.cluster.local. A 10.96.0.1
kubernetes.default.otherfederation.svc.cluster.local. A NXDOMAIN aa
postgres-0.postgres.db.svc.cluster.local.       A    NOERROR aa 10.244.0.20
""")


def server_query(server, qname, qtype="A"):
    return dig.query(server, qname, qtype)


def server_cname(server, qname):
    """The CNAME target a name answers on a knotd (None without one)."""
    answer = server_query(server, qname)
    testing.expect(answer.rcode == "NOERROR", f"{qname}: {answer.summary()}")
    targets = [rr.rdata for rr in answer.answer if rr.type == "CNAME" and rr.owner == qname]
    return targets[0] if targets else None


def cname(c, qname):
    """The CNAME target a name answers on the fixture's knotd."""
    return server_cname(c.server, qname)


def expect_cname(c, qname, target, timeout=10):
    def check():
        testing.expect_equal(cname(c, qname), target, qname)
    c.eventually(check, timeout)


def label_node(c, node, **labels):
    """Sets (a value) or removes (None) labels of a node, as kubectl label does."""
    resp = c.sim.request("PATCH", f"/api/v1/nodes/{node}", {"metadata": {"labels": labels}},
                         headers=MERGE)
    testing.expect(resp.status == 200, f"PATCH node {node}: {resp.status}")


@tests.case
def a_federation_answer_counts_as_an_answer(c):
    before = counter(c.server, "queries[answer]")
    cname(c, "mysvc.myns.myfederation.svc.cluster.local.")
    cname(c, "kubernetes.default.myfederation.svc.cluster.local.")
    wait_counter(c.server, "queries[answer]", lambda v: v == before + 2, "two answers counted")
    testing.expect_equal(counter(c.server, "objects[nodes]"), 3, "objects[nodes]")


@tests.case
def a_local_service_gaining_and_losing_endpoints_switches_the_answer(c):
    name = "fresh.shop.myfederation.svc.cluster.local."
    remote = f"fresh.shop.myfederation.svc.{TOPOLOGY}.example.com."
    c.sim.apply(service("shop", "fresh", "10.96.77.7"))
    c.expect_answer("fresh.shop.svc.cluster.local.", "A", "NOERROR", ["10.96.77.7"])
    testing.expect_equal(cname(c, name), remote, "without endpoints")
    c.sim.apply(endpoint_slice("shop", "fresh", ["10.244.7.7"]))
    expect_cname(c, name, "fresh.shop.svc.cluster.local.")
    answer = c.query(name, "A")
    testing.expect_equal(sorted((rr.owner, rr.type, rr.rdata) for rr in answer.answer),
                         [(name, "CNAME", "fresh.shop.svc.cluster.local."),
                          ("fresh.shop.svc.cluster.local.", "A", "10.96.77.7")], "local answer")
    c.sim.apply(endpoint_slice("shop", "fresh", ["10.244.7.7"], ready=False))
    expect_cname(c, name, remote)
    c.sim.delete("services", "shop", "fresh")
    c.sim.delete("endpointslices", "shop", "fresh-abcde")


@tests.case
def the_topology_follows_the_node_labels(c):
    name = "mysvc.myns.myfederation.svc.cluster.local."
    label_node(c, "node-a", **{"topology.kubernetes.io/zone": "testcontinent-testreg-newzone"})
    expect_cname(c, name, "mysvc.myns.myfederation.svc.testcontinent-testreg-newzone"
                          ".testcontinent-testreg.example.com.")
    # Without its topology labels node-a no longer counts: node-b is the first that has both.
    label_node(c, "node-a", **{"topology.kubernetes.io/zone": None, "topology.kubernetes.io/region": None,
                               "failure-domain.beta.kubernetes.io/zone": None,
                               "failure-domain.beta.kubernetes.io/region": None})
    expect_cname(c, name, "mysvc.myns.myfederation.svc.testcontinent-testreg-otherzone"
                          ".testcontinent-testreg.example.com.")
    label_node(c, "node-a", **{"topology.kubernetes.io/zone": NODE_A,
                               "topology.kubernetes.io/region": "testcontinent-testreg"})
    expect_cname(c, name, f"mysvc.myns.myfederation.svc.{TOPOLOGY}.example.com.")


@tests.case
def the_node_named_by_node_name_gives_the_topology(c):
    # node-c has only the deprecated failure-domain.beta.kubernetes.io labels.
    seq = c.sim.counters()["last_seq"]
    server = start_knotd(c, module={"federations": FEDERATIONS, "node-name": "node-c"})
    try:
        def check():
            answer = server_cname(server, "mysvc.myns.myfederation.svc.cluster.local.")
            testing.expect_equal(answer, "mysvc.myns.myfederation.svc.testcontinent-otherreg-thirdzone"
                                         ".testcontinent-otherreg.example.com.", "CNAME")
        c.eventually(check)
        # Listed, or watched from a watch-list's initial events (the module's default).
        lists = [r for r in c.sim.requests(seq) if r["resource"] == "nodes" and
                 (r["verb"] == "list" or "sendInitialEvents" in r["query"])]
        testing.expect(lists and all("fieldSelector=metadata.name%3Dnode-c" in r["query"] for r in lists),
                       f"only node-c is listed: {lists}")
    finally:
        server.stop()


@tests.case
def node_name_defaults_to_the_environment_variable_node_name(c):
    server = start_knotd(c, module={"federations": FEDERATIONS}, environment={"NODE_NAME": "node-b"})
    try:
        def check():
            testing.expect_equal(server_cname(server, "mysvc.myns.myfederation.svc.cluster.local."),
                                 "mysvc.myns.myfederation.svc.testcontinent-testreg-otherzone"
                                 ".testcontinent-testreg.example.com.", "CNAME")
        c.eventually(check)
    finally:
        server.stop()


@tests.case
def federation_zone_and_region_options_replace_the_nodes(c):
    server = start_knotd(c, module={"federations": FEDERATIONS, "federation-zone": "us-central1-b",
                                    "federation-region": "us-central1"})
    try:
        testing.expect_equal(server_cname(server, "mysvc.myns.myfederation.svc.cluster.local."),
                             "mysvc.myns.myfederation.svc.us-central1-b.us-central1.example.com.", "CNAME")
        testing.expect_equal(counter(server, "objects[nodes]"), 0, "objects[nodes] (nodes not read)")
    finally:
        server.stop()


@tests.case
def without_a_topology_the_federations_global_name_answers(c):
    # Nodes the module may not read do not hold the cluster zone back.
    c.sim.forbid("nodes")
    try:
        server = start_knotd(c, module={"federations": FEDERATIONS})
        try:
            testing.expect_equal(server_cname(server, "mysvc.myns.myfederation.svc.cluster.local."),
                                 "mysvc.myns.myfederation.svc.example.com.", "CNAME")
            testing.expect_equal(server_cname(server, "kubernetes.default.myfederation.svc.cluster.local."),
                                 "kubernetes.default.svc.cluster.local.", "local CNAME")
        finally:
            server.stop()
    finally:
        c.sim.forbid("nodes", on=False)
    # A named node that does not exist gives no topology either.
    server = start_knotd(c, module={"federations": FEDERATIONS, "node-name": "node-z"})
    try:
        testing.expect_equal(server_cname(server, "mysvc.myns.secondfederation.svc.cluster.local."),
                             "mysvc.myns.secondfederation.svc.second.example.com.", "CNAME")
    finally:
        server.stop()


@tests.case
def without_federations_the_name_is_an_endpoint_name_as_before(c):
    server = start_knotd(c, module={})
    try:
        answer = server_query(server, "kubernetes.default.myfederation.svc.cluster.local.")
        testing.expect_equal(answer.rcode, "NXDOMAIN", "no federation, no namespace myfederation")
        testing.expect_equal(counter(server, "objects[nodes]"), 0, "objects[nodes]")
    finally:
        server.stop()


tests.main(fixture=lambda: Cluster(zones=("cluster.local.",), module={"federations": FEDERATIONS}))
