#!/usr/bin/env python3
"""The Federated-DNS role (shared/specs/federated-service-discovery.md, "Federated-DNS").

Three member clusters, each an API simulator, and one knotd whose mod-k8s watches all three
(federation-member) and serves the federation zone `federation.` and the external zone
`federation.example.com.`: tests/lib/federation.py sets them up and lists the members,
their service `web` in namespace `shop` (the design's myservice/myns) and its addresses.
"It then looks at the source cluster information in the EDNS(0) section of the request
and obtains the 'clusterIP' for that cluster ... obtains the 'externalIP' from all other
records, sorts these IP addresses with the 'clusterIP' at the front of the list": the
source cluster is the EDNS option 65350 (kdig +ednsopt=65350:<hex of the name>).
"""

import glob
import os
import shutil
import tempfile
import time

import knotd
import testing
from cluster import stats
from faults import begin_outage, end_outage
from federation import (EXTERNAL, NAME, OUTSIDER, ZONES, Federation, lb_service, ordered,
                        ready_slice, wait_members)

tests = testing.Tests()


def expect_order(f, qname, expected, source=None, qtype="A", server=None, client=None, tcp=False):
    answer = f.query(qname, qtype, source, server, client=client, tcp=tcp)
    testing.expect_equal(answer.rcode, "NOERROR", f"{qname} {qtype} rcode")
    testing.expect_equal(ordered(answer, qtype), expected, f"{qname} {qtype} from {source}")
    testing.expect("aa" in answer.flags, f"{qname}: authoritative")


# -- internal clients: the source cluster's clusterIP first

@tests.case
def the_source_clusters_cluster_ip_comes_first_then_same_region_then_the_others(f):
    # foo (us-east1-b): its clusterIP, bar (us-east1, same region), baz (elsewhere).
    expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="foo")


@tests.case
def each_member_gets_its_own_cluster_ip_first(f):
    expect_order(f, NAME, ["10.0.2.20", "104.32.64.128", "108.120.45.12"], source="bar")
    # baz shares no zone or region: the others in configuration order.
    expect_order(f, NAME, ["10.0.3.30", "104.32.64.130", "104.32.64.128"], source="baz")


@tests.case
def without_the_option_only_external_addresses_answer(f):
    expect_order(f, NAME, ["108.120.45.12", "104.32.64.130", "104.32.64.128"])
    expect_order(f, NAME, ["2001:db8::128"], qtype="AAAA")


@tests.case
def an_unknown_source_cluster_gets_external_addresses_only(f):
    expect_order(f, NAME, ["108.120.45.12", "104.32.64.130", "104.32.64.128"], source="qux")


@tests.case
def the_source_option_is_matched_case_insensitively(f):
    expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="FOO")


@tests.case
def a_source_without_a_shard_gets_the_others_in_its_region_first(f):
    # Issue 22: bar (us-east1-c) has no shard of solo; foo (us-east1-b, bar's region) comes
    # before baz (europe-west1), the first configured, as when bar has a shard.
    solo = "solo.shop.myfed.svc.federation."
    f.sims["baz"].apply([lb_service("shop", "solo", "10.0.3.40", ["108.120.45.40"]),
                         ready_slice("shop", "solo", ["10.244.3.40"])])
    f.sims["foo"].apply([lb_service("shop", "solo", "10.0.1.40", ["104.32.64.40"]),
                         ready_slice("shop", "solo", ["10.244.1.40"])])
    testing.eventually(lambda: expect_order(f, solo, ["10.0.1.40", "108.120.45.40"], source="foo"),
                       5, 0.05)
    expect_order(f, solo, ["104.32.64.40", "108.120.45.40"], source="bar")
    expect_order(f, solo, ["104.32.64.40", "108.120.45.40"], source="bar", tcp=True)
    # Without a source: configuration order.
    expect_order(f, solo, ["108.120.45.40", "104.32.64.40"])


@tests.case
def the_source_option_counts_only_from_the_members_source_prefixes(f):
    # Issue 23: the members query from 127.0.0.1/32 (federation-member source=); any other
    # client's option is ignored: external addresses only, no cluster IP to read.
    external = ["108.120.45.12", "104.32.64.130", "104.32.64.128"]
    for tcp in (False, True):
        expect_order(f, NAME, external, source="foo", client=OUTSIDER, tcp=tcp)
        expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="foo",
                     client="127.0.0.1", tcp=tcp)
    # The explicit shards answer external addresses to anyone, as before.
    expect_order(f, "foo." + NAME, ["104.32.64.128"], source="foo", client=OUTSIDER)


@tests.case
def a_big_headless_shard_answers_its_lowest_cluster_addresses_up_to_the_cap(f):
    # Issue 23: foo's shard of bulk is headless with 4000 ready endpoints; an answer
    # carries at most 32 of them (K8S_FED_LOCAL_MAX), the lowest, then the others.
    bulk = "bulk.shop.myfed.svc.federation."
    addresses = [f"10.3.{i // 250}.{1 + i % 250}" for i in range(4000)]
    svc = lb_service("shop", "bulk", "None", ["104.32.64.50"])
    svc["spec"].update({"type": "ClusterIP", "clusterIPs": ["None"]})
    # An EndpointSlice holds at most 1000 endpoints.
    slices = []
    for i in range(4):
        part = ready_slice("shop", "bulk", addresses[1000 * i:1000 * (i + 1)])
        part["metadata"]["name"] = f"bulk-{i}"
        slices.append(part)
    f.sims["foo"].apply([svc] + slices)
    f.sims["bar"].apply([lb_service("shop", "bulk", "10.0.2.50", ["10.3.0.5", "104.32.64.51"]),
                         ready_slice("shop", "bulk", ["10.244.2.50"])])
    expected = addresses[:32] + ["104.32.64.51"]
    try:
        def check():
            got = ordered(f.query(bulk, source="foo", tcp=True))
            testing.expect(got == expected, f"foo's 32 lowest then bar's ingress once: got "
                           f"{len(got)} addresses, {got[:2]} ... {got[-2:]}")
        testing.eventually(check, 10, 0.1)
        # Outside the members' prefixes: load-balancer addresses only.
        expect_order(f, bulk, ["10.3.0.5", "104.32.64.51", "104.32.64.50"], source="foo",
                     client=OUTSIDER, tcp=True)
    finally:
        f.sims["bar"].delete("services", "shop", "bulk")
        f.sims["bar"].delete("endpointslices", "shop", "bulk-abcde")
        f.sims["foo"].delete("services", "shop", "bulk")
        for i in range(4):
            f.sims["foo"].delete("endpointslices", "shop", f"bulk-{i}")


@tests.case
def a_missing_service_is_nxdomain_and_an_empty_non_terminal_nodata_with_soa(f):
    for qname, rcode in (("nosuch.shop.myfed.svc.federation.", "NXDOMAIN"),
                         ("web.nosuch.myfed.svc.federation.", "NXDOMAIN"),
                         ("web.shop.otherfed.svc.federation.", "NXDOMAIN"),
                         ("shop.myfed.svc.federation.", "NOERROR"),
                         ("myfed.svc.federation.", "NOERROR"),
                         ("svc.federation.", "NOERROR")):
        answer = f.query(qname, source="foo")
        testing.expect_equal(answer.rcode, rcode, qname)
        testing.expect_equal(len(answer.answer), 0, f"{qname}: no answer records")
        testing.expect([rr for rr in answer.authority if rr.type == "SOA"], f"{qname}: SOA")
    answer = f.query(NAME, "TXT", source="foo")
    testing.expect_equal((answer.rcode, len(answer.answer)), ("NOERROR", 0), "TXT is NODATA")
    testing.expect([rr for rr in answer.authority if rr.type == "SOA"], "TXT: SOA")


# -- explicit shards: <member>.<svc>.<ns>.<fed>.svc.federation.

@tests.case
def an_explicit_shard_answers_that_members_external_address_only(f):
    expect_order(f, "bar." + NAME, ["104.32.64.130"])
    expect_order(f, "bar." + NAME, ["104.32.64.130"], source="bar")
    expect_order(f, "foo." + NAME, ["2001:db8::128"], qtype="AAAA", source="foo")
    answer = f.query("qux." + NAME)
    testing.expect_equal(answer.rcode, "NXDOMAIN", "an unknown member")
    answer = f.query("bar." + NAME, "AAAA")
    testing.expect_equal((answer.rcode, len(answer.answer)), ("NOERROR", 0), "no IPv6 ingress")


# -- external clients: the registered domain

@tests.case
def the_external_domain_answers_every_shards_external_addresses(f):
    expect_order(f, EXTERNAL, ["108.120.45.12", "104.32.64.130", "104.32.64.128"])
    # An external client never gets a clusterIP, whatever it sends.
    expect_order(f, EXTERNAL, ["108.120.45.12", "104.32.64.130", "104.32.64.128"], source="foo")
    expect_order(f, "foo." + EXTERNAL, ["104.32.64.128"])
    answer = f.query("nosuch.shop.myfed.svc.federation.example.com.")
    testing.expect_equal(answer.rcode, "NXDOMAIN", "no such service")
    answer = f.query("web.shop.other.svc.federation.example.com.")
    testing.expect_equal(answer.rcode, "NXDOMAIN", "outside the external domain")


# -- programming latency

@tests.case
def a_shard_losing_its_endpoints_drops_out_within_two_seconds(f):
    bar = f.sims["bar"]
    start = time.monotonic()
    bar.apply(ready_slice("shop", "web", ["10.244.2.20"], ready=False))
    expected = ["10.0.1.10", "108.120.45.12"]

    def check():
        testing.expect_equal(ordered(f.query(NAME, source="foo")), expected, "without bar")
    testing.eventually(check, 5, 0.05)
    elapsed = time.monotonic() - start
    testing.expect(elapsed < 2.0, f"bar dropped out after {elapsed:.2f} s (goal: 2 s)")
    # Its explicit shard still exists, without addresses; the source bar has no local shard now.
    answer = f.query("bar." + NAME)
    testing.expect_equal((answer.rcode, len(answer.answer)), ("NOERROR", 0), "bar's shard: NODATA")
    # bar without a shard still orders the others: foo (its region) before baz.
    expect_order(f, NAME, ["104.32.64.128", "108.120.45.12"], source="bar")
    bar.apply(ready_slice("shop", "web", ["10.244.2.20"]))
    testing.eventually(lambda: expect_order(f, NAME, ["10.0.2.20", "104.32.64.128", "108.120.45.12"],
                                            source="bar"), 5, 0.05)


@tests.case
def a_new_load_balancer_address_is_answered(f):
    baz = f.sims["baz"]
    baz.apply(lb_service("shop", "web", "10.0.3.30", ["108.120.45.12", "2001:db8::12"]))
    testing.eventually(lambda: expect_order(f, NAME, ["2001:db8::12", "2001:db8::128"], qtype="AAAA"),
                       5, 0.05)
    baz.apply(lb_service("shop", "web", "10.0.3.30", ["108.120.45.12"]))
    testing.eventually(lambda: expect_order(f, NAME, ["2001:db8::128"], qtype="AAAA"), 5, 0.05)


# -- members that cannot be reached

@tests.case
def a_member_whose_api_is_down_does_not_take_the_federation_down(f):
    baz = f.sims["baz"]
    begin_outage(baz)
    try:
        server = f.knotd()
        server.start()
        try:
            wait_members(server, 2)
            expect_order(f, NAME, ["10.0.1.10", "104.32.64.130"], source="foo", server=server)
            expect_order(f, NAME, ["104.32.64.130", "104.32.64.128"], server=server)
            answer = f.query("baz." + NAME, server=server)
            testing.expect_equal((answer.rcode, answer.ede_code), ("SERVFAIL", 14),
                                 "baz's explicit shard before baz's first sync")
            testing.expect("member baz: " in server.log_text(), "the log names the member")
            # Counters are reported about once a second.
            testing.eventually(lambda: testing.expect(
                stats(server, "federation.").get("member-api-errors[0]", 0) > 0,
                "member-api-errors counts baz's failures"), 10, 0.25)
            testing.expect_equal(stats(server, "federation.").get("member-ready[0]", 0), 0,
                                 "member-ready[0] (baz)")
            # The running server keeps baz's last state through the outage.
            expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="foo")
            end_outage(baz)
            wait_members(server, 3)
            expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="foo",
                         server=server)
        finally:
            server.stop()
    finally:
        end_outage(baz)


@tests.case
def a_restart_with_every_member_api_down_answers_every_members_last_state(f):
    # Issue 22: each member's watcher writes a snapshot of its own in the zone's storage,
    # named by its API server (kubeconfig, context); before, all wrote one file in turn.
    workdir = tempfile.mkdtemp(prefix="mod-k8s-fed-warm-")
    snapshots = os.path.join(workdir, "zones", "mod-k8s", "*.snapshot")
    server = None
    try:
        server = knotd.Knotd(module=f.module(), zones=ZONES, workdir=workdir)
        server.start()
        wait_members(server, 3)
        testing.eventually(lambda: testing.expect_equal(
            server.log_text().count("wrote snapshot"), 3, "snapshots written"), 15, 0.2)
        server.stop()
        files = sorted(glob.glob(snapshots))
        testing.expect_equal(len(files), 3, f"one snapshot per member: {files}")
        log = server.log_text()
        testing.expect("cannot write snapshot" not in log, "a snapshot write failed")
        for sim in f.sims.values():
            begin_outage(sim)
        server = knotd.Knotd(module=f.module(), zones=ZONES, workdir=workdir)
        server.start()
        # Every member's last state, in the order of the design, with no API to list.
        expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="foo",
                     server=server)
        expect_order(f, NAME, ["10.0.3.30", "104.32.64.130", "104.32.64.128"], source="baz",
                     server=server)
        expect_order(f, "bar." + NAME, ["104.32.64.130"], server=server)
        testing.expect_equal(server.log_text().count("answering from the snapshot"), 3,
                             "members answering from their snapshots")
    finally:
        for sim in f.sims.values():
            end_outage(sim)
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@tests.case
def before_any_members_first_sync_the_answer_is_servfail_not_ready(f):
    for sim in f.sims.values():
        begin_outage(sim)
    try:
        server = f.knotd()
        server.start()
        try:
            for qname in (NAME, "foo." + NAME, EXTERNAL):
                answer = f.query(qname, source="foo", server=server)
                testing.expect_equal((answer.rcode, answer.ede_code), ("SERVFAIL", 14), qname)
        finally:
            server.stop()
    finally:
        for sim in f.sims.values():
            end_outage(sim)


@tests.case
def the_labels_option_narrows_the_shards_to_labelled_services(f):
    label = {"federation.example.com/myfed": "true"}
    server = f.knotd(labels="federation.example.com/myfed=true")
    server.start()
    try:
        wait_members(server, 3)
        answer = f.query(NAME, server=server)
        testing.expect_equal(answer.rcode, "NXDOMAIN", "no labelled service")
        # Kubernetes copies a Service's labels onto its EndpointSlices.
        bar = f.sims["bar"]
        svc = lb_service("shop", "web", "10.0.2.20", ["104.32.64.130"])
        eps = ready_slice("shop", "web", ["10.244.2.20"])
        svc["metadata"]["labels"] = dict(label)
        eps["metadata"]["labels"].update(label)
        bar.apply([svc, eps])
        testing.eventually(lambda: expect_order(f, NAME, ["104.32.64.130"], source="foo",
                                                server=server), 5, 0.05)
    finally:
        server.stop()
        f.sims["bar"].apply([lb_service("shop", "web", "10.0.2.20", ["104.32.64.130"]),
                             ready_slice("shop", "web", ["10.244.2.20"])])


def rewrite_config(server):
    with open(server.conf_path, "w", encoding="utf-8") as f:
        f.write(server.config_text())


@tests.case
def a_reload_that_drops_a_member_keeps_answering_from_the_others(f):
    server = f.knotd()
    server.start()
    try:
        wait_members(server, 3)
        # Without baz: its shard leaves at once, foo and bar answer without a new first sync.
        server.module_options["federation-member"] = [
            m for m in f.module()["federation-member"] if not m.startswith("baz ")]
        rewrite_config(server)
        server.reload()
        expect_order(f, NAME, ["10.0.1.10", "104.32.64.130"], source="foo", server=server)
        answer = f.query("baz." + NAME, server=server)
        testing.expect_equal(answer.rcode, "NXDOMAIN", "baz is no member any more")
        server.module_options = f.module()
        rewrite_config(server)
        server.reload()
        wait_members(server, 3)
        expect_order(f, NAME, ["10.0.1.10", "104.32.64.130", "108.120.45.12"], source="foo",
                     server=server)
    finally:
        server.stop()


@tests.case
def a_zone_that_is_neither_the_federation_domain_nor_external_is_refused(f):
    server = knotd.Knotd(module=f.module(), zones=("federation.", "elsewhere.example."))
    try:
        server.start()
        testing.expect(False, "knotd loaded a federation module into elsewhere.example.")
    except knotd.KnotdError as e:
        # The whole log: knotd 3.4 logs more after the failure than the error's tail holds.
        testing.expect("must be federation-domain or hold federation-external" in server.log_text(),
                       str(e))
    finally:
        server.stop()


tests.main(fixture=Federation)
