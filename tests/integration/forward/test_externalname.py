#!/usr/bin/env python3
"""ExternalName services (specification 2.5) with an upstream resolver.

"Given a Service named <service> in Namespace <ns> with ExternalName
<extname>, a CNAME record named <service>.<ns>.svc.<zone> pointing to
<extname> must exist", and the example answer carries the target's address
too: "foo.default.svc.cluster.local. 10 IN CNAME www.example.com." /
"www.example.com. 28715 IN A 192.0.2.53". With the `upstream` option the
module resolves targets outside its zones ahead of time, so a stub resolver
gets the CNAME and the addresses in one answer; a target in our zones is
answered from the table. The upstream here is a second knotd serving
example.com.
"""

import os
import threading
import time
import urllib.request

import dig
import knotd
import promtext
import shipped
import stubdns
import testing
from cluster import Cluster, MANIFESTS, wait_ready
from faults import external_name_service

tests = testing.Tests()

EXAMPLE_COM = """
www     300 A     192.0.2.53
www     300 AAAA  2001:db8::53
alias   300 CNAME www
mail    300 MX    10 www
v6only  300 AAAA  2001:db8::66
"""


class Fixture(testing.Fixture):
    """The upstream (a plain knotd with example.com) and a cluster whose mod-k8s uses it."""

    def start(self):
        self.upstream = self.enter_context(knotd.Knotd(
            zones={"example.com.": None}, zone_extra={"example.com.": EXAMPLE_COM}))
        self.cluster = self.enter_context(Cluster(
            manifests=[os.path.join(MANIFESTS, "spec-clusterip")], sim_args=["--no-bootstrap"],
            module={"upstream": f"127.0.0.1@{self.upstream.port}"},
            zones=("cluster.local.",)))
        return self.cluster


# 2.5, the specification's example: the CNAME and the target's address in one answer.
# (The target's TTL is the upstream's, counting down: not checked.)
@tests.case
def externalname_answer_has_the_cname_and_the_targets_address(cluster):
    cluster.expect_answer("foo.default.svc.cluster.local.", "A", "NOERROR")
    answer = cluster.query("foo.default.svc.cluster.local.", "A")
    got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
    testing.expect_equal(got, {("foo.default.svc.cluster.local.", "CNAME", "www.example.com."),
                               ("www.example.com.", "A", "192.0.2.53")}, "answer")
    testing.expect("aa" in answer.flags, "no AA")


tests.table("""
foo.default.svc.cluster.local. AAAA  NOERROR foo.default.svc.cluster.local. CNAME www.example.com. | www.example.com. AAAA 2001:db8::53
foo.default.svc.cluster.local. CNAME NOERROR www.example.com.
foo.default.svc.cluster.local. MX    NOERROR foo.default.svc.cluster.local. CNAME www.example.com.
""")


@tests.case
def a_cname_chain_at_the_upstream_comes_whole(cluster):
    cluster.sim.apply(external_name_service("default", "chain", "alias.example.com"))
    answer = cluster.expect_answer("chain.default.svc.cluster.local.", "A", "NOERROR")
    got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
    testing.expect_equal(got, {("chain.default.svc.cluster.local.", "CNAME", "alias.example.com."),
                               ("alias.example.com.", "CNAME", "www.example.com."),
                               ("www.example.com.", "A", "192.0.2.53")}, "answer")


@tests.case
def a_target_that_does_not_exist_is_nxdomain_after_the_cname(cluster):
    cluster.sim.apply(external_name_service("default", "missing", "nope.example.com"))
    answer = cluster.expect_answer("missing.default.svc.cluster.local.", "A", "NXDOMAIN")
    testing.expect_equal({(rr.type, rr.rdata) for rr in answer.answer},
                         {("CNAME", "nope.example.com.")}, "answer")


@tests.case
def a_target_without_the_type_is_the_cname_alone(cluster):
    cluster.sim.apply(external_name_service("default", "sixonly", "v6only.example.com"))
    answer = cluster.expect_answer("sixonly.default.svc.cluster.local.", "A", "NOERROR")
    testing.expect_equal({(rr.type, rr.rdata) for rr in answer.answer},
                         {("CNAME", "v6only.example.com.")}, "answer")
    answer = cluster.query("sixonly.default.svc.cluster.local.", "AAAA")
    testing.expect_equal({(rr.type, rr.rdata) for rr in answer.answer},
                         {("CNAME", "v6only.example.com."), ("AAAA", "2001:db8::66")}, "AAAA answer")


@tests.case
def a_target_in_our_zone_is_answered_from_the_table(cluster):
    cluster.sim.apply(external_name_service("default", "api", "kubernetes.default.svc.cluster.local"))
    answer = cluster.expect_answer("api.default.svc.cluster.local.", "A", "NOERROR")
    got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
    testing.expect_equal(got, {("api.default.svc.cluster.local.", "CNAME",
                                "kubernetes.default.svc.cluster.local."),
                               ("kubernetes.default.svc.cluster.local.", "A", "10.3.0.1")}, "answer")


@tests.case
def a_changed_target_is_resolved_anew(cluster):
    cluster.sim.apply(external_name_service("default", "moving", "www.example.com"))
    cluster.expect_answer("moving.default.svc.cluster.local.", "A", "NOERROR")
    cluster.sim.apply(external_name_service("default", "moving", "alias.example.com"))

    def moved():
        answer = cluster.query("moving.default.svc.cluster.local.", "A")
        rdata = {rr.rdata for rr in answer.answer}
        testing.expect("alias.example.com." in rdata and "192.0.2.53" in rdata,
                       f"not the new target: {answer.summary()}")
    cluster.eventually(moved)


@tests.case
def a_silent_upstream_answers_servfail_never_a_stalled_worker(cluster):
    with stubdns.StubDNS() as silent, cluster.knotd(
            module={"upstream": silent.address}, zones=("cluster.local.",)) as server:
        silent.mode = "silent"
        wait_ready(server)
        # The query waits for the target off the worker, up to the 2 s deadline (issue 24 item 5).
        cold = {}
        waiter = threading.Thread(target=lambda: cold.update(answer=server.query(
            "foo.default.svc.cluster.local.", "A", edns=True, timeout=5)))
        waiter.start()
        time.sleep(0.3)
        # Other names are unaffected, and fast, meanwhile.
        start = time.monotonic()
        answer = server.query("kubernetes.default.svc.cluster.local.", "A")
        testing.expect_equal(answer.rcode, "NOERROR", "rcode of a service")
        testing.expect(time.monotonic() - start < 1, "a service waited on the dead upstream")
        waiter.join()
        testing.expect_equal(cold["answer"].rcode, "SERVFAIL", "rcode with a dead upstream")
        testing.expect_equal(cold["answer"].ede_code, 22, "EDE with a dead upstream")


@tests.case
def a_refused_connection_to_the_upstream_answers_the_cname_alone_at_once(cluster):
    # Nothing listens there (ICMP port unreachable): the server's "no", as REFUSED, and
    # as CoreDNS answers (Kubernetes' e2e "should forward externalname lookup" wants it).
    dead = knotd.free_port()
    with cluster.knotd(module={"upstream": f"127.0.0.1@{dead}"}, zones=("cluster.local.",)) as server:
        wait_ready(server)
        name = "foo.default.svc.cluster.local."
        for attempt in ("first", "second"):
            start = time.monotonic()
            answer = server.query(name, "A", edns=True, timeout=5)
            took = time.monotonic() - start
            testing.expect_equal(answer.rcode, "NOERROR", f"{attempt} rcode ({answer.summary()})")
            testing.expect_equal([(rr.owner, rr.type, rr.rdata) for rr in answer.answer],
                                 [(name, "CNAME", "www.example.com.")],
                                 f"{attempt} answer")
            testing.expect(took < 1, f"{attempt} answer after {took:.3f} s")


def stub_a(name):
    return f"192.0.2.{stubdns._number(name)}"


def targets_asked(stub, targets):
    """How many queries the stub got for each target."""
    names = stub.names()
    return {t: sum(1 for n, _ in names if n == t) for t in targets}


@tests.case
def the_shipped_deployment_answers_an_externalname_with_the_targets_address(_cluster):
    # knot.conf sets forward (the node's resolvers), not upstream: the resolver uses them.
    with stubdns.StubDNS() as stub, shipped.deployment([stub.address]) as c:
        c.sim.apply(external_name_service("default", "ext", "www.example.org"))
        name = "ext.default.svc.cluster.local."
        c.expect_answer(name, "TXT", "NOERROR", timeout=10)
        start = time.monotonic()
        answer = c.query(name, "A", edns=True, timeout=5)
        took = time.monotonic() - start
        got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
        testing.expect_equal(got, {(name, "CNAME", "www.example.org."),
                                   ("www.example.org.", "A", stub_a("www.example.org."))},
                             f"first answer ({answer.summary()})")
        testing.expect(took < 1, f"first answer after {took:.3f} s")


@tests.case
def without_upstream_the_forward_servers_are_asked_in_order_with_failover(cluster):
    dead = knotd.free_port()
    with stubdns.StubDNS() as stub, knotd.Knotd(
            module={"kubeconfig": cluster.sim.path(cluster.kubeconfig),
                    "forward": [f"127.0.0.1@{dead}", stub.address]},
            zones=("cluster.local.",)) as server:
        wait_ready(server)
        cluster.sim.apply(external_name_service("default", "failover", "fo.example.net"))
        name = "failover.default.svc.cluster.local."
        cluster.eventually(lambda: testing.expect_equal(dig.query(server, name, "TXT").rcode,
                                                        "NOERROR", "TXT"))
        answer = dig.query(server, name, "A", edns=True, timeout=5)
        got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
        testing.expect_equal(got, {(name, "CNAME", "fo.example.net."),
                                   ("fo.example.net.", "A", stub_a("fo.example.net."))},
                             f"first answer ({answer.summary()})")


@tests.case
def externalname_targets_are_resolved_only_while_clients_ask(cluster):
    count = 20
    targets = [f"t{i}.example.net." for i in range(count)]
    with stubdns.StubDNS(ttl=2) as stub, \
            cluster.knotd(module={"upstream": stub.address}, zones=("cluster.local.",)) as server:
        wait_ready(server)
        for i, target in enumerate(targets):
            cluster.sim.apply(external_name_service("default", f"idle{i}", target.rstrip(".")))
        for i in range(count):
            cluster.eventually(lambda i=i: testing.expect_equal(dig.query(
                server, f"idle{i}.default.svc.cluster.local.", "TXT").rcode, "NOERROR", "TXT"))
        # No client asks for an address: no upstream query (a 2 s TTL would refresh each
        # name every 1.6 s, 25 queries/s in all, if targets were kept resolved ahead).
        time.sleep(3.5)
        testing.expect_equal(sum(targets_asked(stub, targets).values()), 0,
                             "queries for targets nobody asked for")
        # A client asking one name for 5 s keeps that one, and only it, refreshed.
        end = time.monotonic() + 5
        while time.monotonic() < end:
            answer = dig.query(server, "idle0.default.svc.cluster.local.", "A", edns=True,
                               timeout=5)
            testing.expect(answer.rcode == "NOERROR", f"idle0: {answer.summary()}")
            time.sleep(0.2)
        asked = targets_asked(stub, targets)
        testing.expect(asked[targets[0]] >= 3, f"the asked target refreshed: {asked[targets[0]]}")
        testing.expect_equal(sum(asked.values()) - asked[targets[0]], 0,
                             "queries for the other targets")
        # The client gone, its target is no longer refreshed once its answer runs out.
        time.sleep(2.5)
        settled = targets_asked(stub, targets)[targets[0]]
        time.sleep(3)
        testing.expect_equal(targets_asked(stub, targets)[targets[0]], settled,
                             "queries for a target no client asks for any more")


def non_probes(stub):
    """What a stub was asked besides health probes (". NS") and loop probes."""
    return [n for n, t in stub.names() if n != "." and not n.endswith(".mod-k8s-loop.")]


@tests.case
def a_target_shares_the_forwarders_flights_health_and_metrics(_cluster):
    # One resolver core: an ExternalName target is the forwarder's flight, so a client's
    # forwarded query for the same name at the same time makes no second upstream query,
    # an upstream the forwarder marked down is not asked for it while another is up, and
    # the per-upstream series count its queries.
    http_port = knotd.free_port()
    with stubdns.StubDNS(mode="silent") as silent, stubdns.StubDNS(delay=0.2) as healthy, \
            shipped.deployment([silent.address, healthy.address], metrics_port=http_port) as c:
        # A forwarded name marks the silent one down (no answer within 300 ms).
        answer = c.query("warm.share.example.", "A", timeout=5)
        testing.expect(answer.rcode == "NOERROR", f"warm: {answer.summary()}")
        target = "target.share.example."
        c.sim.apply(external_name_service("default", "shared", target.rstrip(".")))
        name = "shared.default.svc.cluster.local."
        c.expect_answer(name, "TXT", "NOERROR", timeout=10)
        got = {}
        both = [threading.Thread(target=lambda: got.update(ext=c.query(name, "A", edns=True,
                                                                       timeout=5))),
                threading.Thread(target=lambda: got.update(fwd=c.query(target, "A", edns=True,
                                                                       timeout=5)))]
        for t in both:
            t.start()
        for t in both:
            t.join()
        testing.expect_equal({(rr.owner, rr.type, rr.rdata) for rr in got["ext"].answer},
                             {(name, "CNAME", target), (target, "A", stub_a(target))},
                             f"the target's answer ({got['ext'].summary()})")
        testing.expect_equal([(rr.type, rr.rdata) for rr in got["fwd"].answer],
                             [("A", stub_a(target))], f"the client's ({got['fwd'].summary()})")
        testing.expect_equal(sum(1 for n, t in healthy.names() if n == target and t == 1), 1,
                             f"upstream queries for the target's A: {healthy.names()}")
        testing.expect(target not in non_probes(silent),
                       f"the down upstream was asked for the target: {non_probes(silent)}")
        alive = f"127.0.0.1:{healthy.port}"

        def counted():
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=5) as r:
                families = promtext.parse(r.read().decode())
            testing.expect_equal(
                promtext.value(families, "mod_k8s_forward_upstream_requests_total",
                               upstream=alive),
                len(non_probes(healthy)), f"requests counted for {non_probes(healthy)}")
        testing.eventually(counted, timeout=5)


tests.main(fixture=Fixture)
