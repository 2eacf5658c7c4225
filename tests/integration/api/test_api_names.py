#!/usr/bin/env python3
"""Names are checked exactly as the API server checks them (issue 22, item 2).

Every object the API server accepts is read, none it refuses: a pod's name is a DNS
subdomain (253 bytes, labels of any length), so a pod named with 253 characters of one
label is a pod like any other and `pods: verified` answers its address. Where a valid
name cannot be a DNS label, what is answered instead: `endpoint-pod-names` names the
endpoint of a pod whose name is over 63 bytes or dotted by its address, a ServiceImport
named so has no records, and a record whose full name would exceed 255 octets is left
out of the answers that would name it; each logged once, not on every update.
"""

import cases
import testing
from cluster import Cluster, wait_ready
from faults import (counter, endpoint_slice, expect_addresses, external_name_service,
                    headless_service, log_lines, log_mark, pod, service_import, wait_for, wait_log)

tests = testing.Tests()

MODULE = {"pods": "verified", "endpoint-pod-names": True}


def decode_errors(c):
    return counter(c.server, "api-errors[decode]")


@tests.case
def a_pod_named_with_253_characters_of_one_label_answers_with_pods_verified(c):
    before = decode_errors(c)
    c.sim.apply(pod("shop", "p" * 253, "10.244.7.7"))
    c.expect_answer("10-244-7-7.shop.pod.cluster.local.", "A", "NOERROR", ["10.244.7.7"])
    testing.expect_equal(decode_errors(c), before, "decode errors (the pod is valid)")


@tests.case
def a_pod_name_with_a_label_over_63_bytes_and_dots_answers_too(c):
    c.sim.apply(pod("shop", "p" * 64 + ".v1", "10.244.7.8"))
    c.expect_answer("10-244-7-8.shop.pod.cluster.local.", "A", "NOERROR", ["10.244.7.8"])


@tests.case
def a_pod_name_the_api_server_refuses_is_skipped(c):
    # 254 bytes: the simulator refuses it as the API server does; sent unchecked, the
    # module refuses it too (no looser than the API server).
    before = decode_errors(c)
    c.sim.apply(pod("shop", "p" * 254, "10.244.7.9"), validate=False)
    wait_for(lambda: decode_errors(c) == before + 1, "the 254-byte pod name counted as a decode error")
    c.expect_answer("10-244-7-9.shop.pod.cluster.local.", "A", "NXDOMAIN")


def pod_named_slice(ns, service, endpoints):
    """A slice of `service` with endpoints [(address, pod name or None)], no hostnames."""
    slice_ = endpoint_slice(ns, service, [a for a, _ in endpoints])
    for ep, (_, name) in zip(slice_["endpoints"], endpoints):
        if name is not None:
            ep["targetRef"] = {"kind": "Pod", "namespace": ns, "name": name}
    return slice_


LONG_POD = "q" * 64
DOTTED_POD = "web.v1-0"


@tests.case
def endpoint_pod_names_names_a_pod_that_is_no_dns_label_by_its_address(c):
    mark = log_mark(c.server)
    c.sim.apply(headless_service("shop", "named"))
    slice_ = pod_named_slice("shop", "named", [("10.250.1.1", LONG_POD), ("10.250.1.2", DOTTED_POD),
                                               ("10.250.1.3", "short-0")])
    c.sim.apply(slice_)
    c.expect_answer("named.shop.svc.cluster.local.", "A", "NOERROR",
                    ["10.250.1.1", "10.250.1.2", "10.250.1.3"])
    for case in cases.parse("""
    short-0.named.shop.svc.cluster.local.     A   NOERROR aa 10.250.1.3
    10-250-1-3.named.shop.svc.cluster.local.  A   NXDOMAIN aa
    10-250-1-1.named.shop.svc.cluster.local.  A   NOERROR aa 10.250.1.1
    10-250-1-2.named.shop.svc.cluster.local.  A   NOERROR aa 10.250.1.2
    web.v1-0.named.shop.svc.cluster.local.    A   NXDOMAIN aa
    _http._tcp.named.shop.svc.cluster.local.  SRV NOERROR aa 0 33 8080 10-250-1-1.named.shop.svc.cluster.local. | 0 33 8080 10-250-1-2.named.shop.svc.cluster.local. | 0 33 8080 short-0.named.shop.svc.cluster.local.
    1.1.250.10.in-addr.arpa.                  PTR NOERROR aa 10-250-1-1.named.shop.svc.cluster.local.
    2.1.250.10.in-addr.arpa.                  PTR NOERROR aa 10-250-1-2.named.shop.svc.cluster.local.
    """):
        case.run(c.server)
    line = wait_log(c.server, "endpointslice shop/named-abcde names the endpoints of pod", mark)
    testing.expect(LONG_POD in line, f"the log line names the first such pod: {line}")

    # Updates of the slice (an endpoint going unready and back) log nothing more.
    for ready in (False, True, False, True):
        slice_["endpoints"][2]["conditions"]["ready"] = ready
        c.sim.apply(slice_)
        want = ["10.250.1.1", "10.250.1.2"] + (["10.250.1.3"] if ready else [])
        expect_addresses(c.server, "named.shop.svc.cluster.local.", want)
    lines = log_lines(c.server, "names the endpoints of pod", mark)
    testing.expect_equal(len(lines), 1, f"log lines about pod names ({lines})")


@tests.case
def without_endpoint_pod_names_nothing_is_logged(c):
    with c.knotd(module={}) as server:
        wait_ready(server)
        mark = log_mark(server)
        c.sim.apply(headless_service("shop", "quiet"))
        c.sim.apply(pod_named_slice("shop", "quiet", [("10.250.3.1", LONG_POD)]))
        expect_addresses(server, "10-250-3-1.quiet.shop.svc.cluster.local.", ["10.250.3.1"])
        testing.expect_equal(log_lines(server, "names the endpoints of pod", mark), [],
                             "log lines about pod names")


@tests.case
def a_serviceimport_named_with_dots_is_read_and_has_no_records(c):
    # A custom resource's name is a DNS subdomain to the API server: valid, read (no
    # decode error), but no name of clusterset.local can hold it.
    mark = log_mark(c.server)
    before = decode_errors(c)
    c.sim.apply(service_import("shop", "web.v2", ["10.42.9.9"]))
    c.sim.apply(service_import("shop", "plain", ["10.42.9.10"]))
    c.expect_answer("plain.shop.svc.clusterset.local.", "A", "NOERROR", ["10.42.9.10"])
    wait_log(c.server, "serviceimport shop/web.v2 has no records", mark)
    testing.expect_equal(decode_errors(c), before, "decode errors (both imports are valid)")
    c.expect_answer("9.9.42.10.in-addr.arpa.", "PTR", "NXDOMAIN")
    # Updated, it is not logged again; deleted, it leaves nothing behind.
    updated = service_import("shop", "web.v2", ["10.42.9.11"])
    c.sim.apply(updated)
    c.sim.apply(service_import("shop", "plain", ["10.42.9.12"]))
    c.expect_answer("plain.shop.svc.clusterset.local.", "A", "NOERROR", ["10.42.9.12"])
    testing.expect_equal(len(log_lines(c.server, "serviceimport shop/web.v2", mark)), 1,
                         "log lines about the import")
    c.sim.delete("ServiceImport", "shop", "web.v2")
    c.sim.delete("ServiceImport", "shop", "plain")
    c.expect_answer("plain.shop.svc.clusterset.local.", "A", "NXDOMAIN")


@tests.case
def an_externalname_target_with_a_label_over_63_bytes_answers_nodata(c):
    target = "x" * 64 + ".example.com"
    c.sim.apply(external_name_service("shop", "longext", target))
    c.expect_answer("longext.shop.svc.cluster.local.", "A", "NOERROR", [])
    answer = c.query("longext.shop.svc.cluster.local.", "CNAME")
    testing.expect_equal((answer.rcode, len(answer.answer)), ("NOERROR", 0), "no CNAME")


# A zone of 124 octets: <63-byte hostname>.<63-byte service>.shop.svc.<zone> is 261.
LONG_ZONE = "z" * 63 + "." + "y" * 50 + ".example."
LONG_SVC = "h" * 63
LONG_HOST = "e" * 63


@tests.case
def a_record_whose_name_would_exceed_255_octets_is_left_out(c):
    c.sim.apply(headless_service("shop", LONG_SVC))
    slice_ = endpoint_slice("shop", LONG_SVC, ["10.250.2.1", "10.250.2.2"])
    slice_["endpoints"][0]["hostname"] = LONG_HOST
    c.sim.apply(slice_)
    zones = (LONG_ZONE, "in-addr.arpa.")
    with c.knotd(module={"cluster-domain": LONG_ZONE}, zones=zones) as server:
        wait_ready(server, [LONG_ZONE])
        svc = f"{LONG_SVC}.shop.svc.{LONG_ZONE}"
        for case in cases.parse(f"""
        {svc}              A   NOERROR 10.250.2.1 | 10.250.2.2
        10-250-2-2.{svc}   A   NOERROR 10.250.2.2
        _http._tcp.{svc}   SRV NOERROR 0 50 8080 10-250-2-2.{svc}
        1.2.250.10.in-addr.arpa. PTR NOERROR
        2.2.250.10.in-addr.arpa. PTR NOERROR 10-250-2-2.{svc}
        """):
            case.run(server)


tests.main(fixture=lambda: Cluster(module=MODULE))
