#!/usr/bin/env python3
"""Cluster DNS beyond the specification's examples, on the sample cluster.

The sample cluster (tests/manifests/sample, see its README) has a dual-stack
service, StatefulSet hostnames, a not-ready endpoint, publishNotReadyAddresses,
an ExternalName, named and unnamed UDP/TCP ports and pods. These cases check
every kind of record, the negative answers (NODATA vs NXDOMAIN, with the SOA),
answers too big for UDP, changes made through the API, and every option, each
on a knotd of its own watching the same simulator.
"""

import ipaddress

import cases
import testing
from cluster import Cluster, wait_ready
from faults import endpoint_slice, headless_service, service

tests = testing.Tests()
SOA = "cluster.local. SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5"

# Every kind of record of the sample cluster.
tests.table("""
kubernetes.default.svc.cluster.local.        A    NOERROR aa 10.96.0.1
kube-dns.kube-system.svc.cluster.local.      A    NOERROR aa 10.96.0.10
_dns._udp.kube-dns.kube-system.svc.cluster.local.     SRV NOERROR aa 0 100 53 kube-dns.kube-system.svc.cluster.local.
_dns-tcp._tcp.kube-dns.kube-system.svc.cluster.local. SRV NOERROR aa 0 100 53 kube-dns.kube-system.svc.cluster.local.
_metrics._tcp.kube-dns.kube-system.svc.cluster.local. SRV NOERROR aa 0 100 9153 kube-dns.kube-system.svc.cluster.local.
_grpc._tcp.web.shop.svc.cluster.local.       SRV  NOERROR aa 0 100 9090 web.shop.svc.cluster.local. ; additional: web.shop.svc.cluster.local. A 10.96.12.34 | web.shop.svc.cluster.local. AAAA fd00:10:96::1234
postgres.db.svc.cluster.local.               A    NOERROR aa 10.244.0.20 | 10.244.1.20
postgres-0.postgres.db.svc.cluster.local.    A    NOERROR aa 10.244.0.20
postgres-2.postgres.db.svc.cluster.local.    A    NXDOMAIN aa
_pg._tcp.postgres.db.svc.cluster.local.      SRV  NOERROR aa 0 50 5432 postgres-0.postgres.db.svc.cluster.local. | 0 50 5432 postgres-1.postgres.db.svc.cluster.local.
cache.shop.svc.cluster.local.                A    NOERROR aa 10.244.0.30 | 10.244.1.30
10-244-0-30.cache.shop.svc.cluster.local.    A    NOERROR aa 10.244.0.30
cassandra-peers.db.svc.cluster.local.        A    NOERROR aa 10.244.0.40 | 10.244.1.40
cassandra-1.cassandra-peers.db.svc.cluster.local. A NOERROR aa 10.244.1.40
external.shop.svc.cluster.local.             CNAME NOERROR aa www.example.com.
syslog.shop.svc.cluster.local.               A    NOERROR aa 10.96.40.14
syslog.shop.svc.cluster.local.               SRV  NOERROR aa
_sip._udp.voip.shop.svc.cluster.local.       SRV  NOERROR aa 0 100 5060 voip.shop.svc.cluster.local.
_sip-tcp._tcp.voip.shop.svc.cluster.local.   SRV  NOERROR aa 0 100 5060 voip.shop.svc.cluster.local.
_rtp._udp.voip.shop.svc.cluster.local.       SRV  NOERROR aa 0 100 10000 voip.shop.svc.cluster.local.
_sip._tcp.voip.shop.svc.cluster.local.       SRV  NXDOMAIN aa
prometheus.monitoring.svc.cluster.local.     A    NOERROR aa 10.96.50.90
10-244-0-10.shop.pod.cluster.local.          A    NOERROR aa 10.244.0.10
34.12.96.10.in-addr.arpa.                    PTR  NOERROR aa web.shop.svc.cluster.local.
20.0.244.10.in-addr.arpa.                    PTR  NOERROR aa postgres-0.postgres.db.svc.cluster.local.
dns-version.cluster.local.                   TXT  NOERROR aa ttl=28800 "1.1.0"
""")

# Query labels longer than the stored label they are compared with (issue 10): a plain
# NXDOMAIN, never a read past the port name ending the service's record block.
tests.table("""
_pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp._tcp.kubernetes.default.svc.cluster.local. SRV NXDOMAIN aa
_httpsx._tcp.kubernetes.default.svc.cluster.local. SRV NXDOMAIN aa
""")

# Dual stack (schema 1.1.0): A and AAAA of both cluster IPs, endpoints of both families,
# IPv6 PTR and pod names.
tests.table("""
web.shop.svc.cluster.local.                 A    NOERROR aa 10.96.12.34
web.shop.svc.cluster.local.                 AAAA NOERROR aa fd00:10:96::1234
web.shop.svc.cluster.local.                 SRV  NOERROR aa 0 100 80 web.shop.svc.cluster.local. | 0 100 9090 web.shop.svc.cluster.local.
fd00-10-244--a.web.shop.svc.cluster.local.  AAAA NOERROR aa fd00:10:244::a
fd00-10-244--a.web.shop.svc.cluster.local.  A    NOERROR aa
10-244-1-11.web.shop.svc.cluster.local.     A    NOERROR aa 10.244.1.11
4.3.2.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa. PTR NOERROR aa web.shop.svc.cluster.local.
a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.4.4.2.0.0.1.0.0.0.0.d.f.ip6.arpa. PTR NOERROR aa fd00-10-244--a.web.shop.svc.cluster.local.
fd00-10-244--a.shop.pod.cluster.local.      AAAA NOERROR aa fd00:10:244::a
""")

# Negative answers: NODATA for names that exist (with other types, or without records:
# namespaces, svc., pod., _proto, reverse prefixes), NXDOMAIN for the rest; both with the SOA.
tests.table(f"""
kubernetes.default.svc.cluster.local.   TXT  NOERROR aa ; authority: {SOA}
default.svc.cluster.local.              A    NOERROR aa ; authority: {SOA}
svc.cluster.local.                      A    NOERROR aa ; authority: {SOA}
pod.cluster.local.                      A    NOERROR aa ; authority: {SOA}
shop.pod.cluster.local.                 A    NOERROR aa ; authority: {SOA}
_tcp.web.shop.svc.cluster.local.        SRV  NOERROR aa ; authority: {SOA}
_udp.voip.shop.svc.cluster.local.       A    NOERROR aa ; authority: {SOA}
nonexistent.shop.svc.cluster.local.     A    NXDOMAIN aa ; authority: {SOA}
web.nonexistent.svc.cluster.local.      A    NXDOMAIN aa ; authority: {SOA}
nonexistent.svc.cluster.local.          A    NXDOMAIN aa ; authority: {SOA}
_udp.web.shop.svc.cluster.local.        SRV  NXDOMAIN aa
a.b.c.web.shop.svc.cluster.local.       A    NXDOMAIN aa
nothing.cluster.local.                  A    NXDOMAIN aa
external.shop.svc.cluster.local.        SRV  NOERROR aa external.shop.svc.cluster.local. CNAME www.example.com.
x.external.shop.svc.cluster.local.      A    NXDOMAIN aa
*.shop.svc.cluster.local.               A    NXDOMAIN aa
244.10.in-addr.arpa.                    PTR  NOERROR aa
99.10.in-addr.arpa.                     PTR  NXDOMAIN aa
""")

# Case variants: the answer carries the query's case, targets are lowercase.
tests.table("""
WEB.Shop.SVC.Cluster.Local.                 AAAA NOERROR aa web.shop.svc.cluster.local. AAAA fd00:10:96::1234
_PG._TCP.postgres.DB.svc.cluster.local.     SRV  NOERROR aa _pg._tcp.postgres.db.svc.cluster.local. SRV 0 50 5432 postgres-0.postgres.db.svc.cluster.local. | _pg._tcp.postgres.db.svc.cluster.local. SRV 0 50 5432 postgres-1.postgres.db.svc.cluster.local.
Postgres-0.Postgres.db.svc.cluster.local.   A    NOERROR aa postgres-0.postgres.db.svc.cluster.local. A 10.244.0.20
34.12.96.10.IN-ADDR.ARPA.                   PTR  NOERROR aa 34.12.96.10.in-addr.arpa. PTR web.shop.svc.cluster.local.
""")


def big_headless(count):
    """A headless service with `count` ready endpoints in one EndpointSlice."""
    addresses = [str(ipaddress.ip_address("10.250.0.1") + i) for i in range(count)]
    return (headless_service("shop", f"big{count}"),
            endpoint_slice("shop", f"big{count}", addresses, name=f"big{count}-x"), addresses)


@tests.case
def an_answer_too_big_for_udp_sets_tc_and_is_complete_over_tcp(cluster):
    svc, slice_, addresses = big_headless(1000)
    cluster.sim.apply(svc)
    cluster.sim.apply(slice_)
    name = "big1000.shop.svc.cluster.local."
    answer = cluster.expect_answer(name, "A", "NOERROR", addresses, tcp=True)
    testing.expect("aa" in answer.flags, "no AA over TCP")
    udp = cluster.query(name, "A", bufsize=1232)
    testing.expect("tc" in udp.flags, f"no TC over UDP: {udp.summary()}")
    plain = cluster.query(name, "A")
    testing.expect("tc" in plain.flags, f"no TC over UDP without EDNS: {plain.summary()}")


@tests.case
def many_srv_records_fit_over_tcp_with_their_addresses(cluster):
    svc, slice_, addresses = big_headless(300)
    cluster.sim.apply(svc)
    cluster.sim.apply(slice_)
    name = "_http._tcp.big300.shop.svc.cluster.local."
    answer = cluster.eventually(lambda: _srv_count(cluster, name, 300))
    targets = {rr.rdata.split()[3] for rr in answer.answer}
    owners = {rr.owner for rr in answer.additional if rr.type == "A"}
    testing.expect(owners <= targets and len(owners) > 0,
                   "additional A records are not the SRV targets")
    testing.expect("tc" in cluster.query(name, "SRV", bufsize=1232).flags, "no TC over UDP")


@tests.case
def srv_with_do_keeps_its_additional_records_without_onlinesign(cluster):
    # Only a zone that mod-onlinesign signs after mod-k8s leaves them out of DO answers.
    answer = cluster.query("_grpc._tcp.web.shop.svc.cluster.local.", "SRV", dnssec=True)
    testing.expect_equal({(rr.owner, rr.type, rr.rdata) for rr in answer.additional
                          if rr.type != "OPT"},
                         {("web.shop.svc.cluster.local.", "A", "10.96.12.34"),
                          ("web.shop.svc.cluster.local.", "AAAA", "fd00:10:96::1234")},
                         "additional records with DO")


def _srv_count(cluster, name, count):
    answer = cluster.query(name, "SRV", tcp=True)
    testing.expect_equal(len(answer.answer), count, f"SRV records of {name}")
    return answer


@tests.case
def a_new_service_resolves_and_a_deleted_one_stops(cluster):
    cluster.sim.apply(service("shop", "fresh", "10.96.99.1"))
    cluster.expect_answer("fresh.shop.svc.cluster.local.", "A", "NOERROR", ["10.96.99.1"])
    cluster.expect_answer("1.99.96.10.in-addr.arpa.", "PTR", "NOERROR", ["fresh.shop.svc.cluster.local."])
    cluster.sim.delete("Service", "shop", "fresh")
    cluster.expect_answer("fresh.shop.svc.cluster.local.", "A", "NXDOMAIN")
    cluster.expect_answer("1.99.96.10.in-addr.arpa.", "PTR", "NXDOMAIN")


@tests.case
def an_endpoint_turning_ready_joins_the_headless_answer(cluster):
    svc, slice_, addresses = big_headless(3)
    slice_["endpoints"][2]["conditions"]["ready"] = False
    cluster.sim.apply(svc)
    cluster.sim.apply(slice_)
    cluster.expect_answer("big3.shop.svc.cluster.local.", "A", "NOERROR", addresses[:2])
    cluster.expect_answer("10-250-0-3.big3.shop.svc.cluster.local.", "A", "NXDOMAIN")
    slice_["endpoints"][2]["conditions"]["ready"] = True
    cluster.sim.apply(slice_)
    cluster.expect_answer("big3.shop.svc.cluster.local.", "A", "NOERROR", addresses)
    cluster.expect_answer("10-250-0-3.big3.shop.svc.cluster.local.", "A", "NOERROR", addresses[2:])


# Options: each on a knotd of its own, watching the same simulator.

def with_options(cluster, options, table, zones=("cluster.local.", "in-addr.arpa.")):
    with cluster.knotd(module=options, zones=zones) as server:
        wait_ready(server)
        for case in cases.parse(table):
            case.run(server)


@tests.case
def option_ttl_sets_the_ttl_of_every_synthesized_record(cluster):
    with_options(cluster, {"ttl": 30}, """
    kubernetes.default.svc.cluster.local.  A   NOERROR ttl=30 10.96.0.1
    _pg._tcp.postgres.db.svc.cluster.local. SRV NOERROR ttl=30 0 50 5432 postgres-0.postgres.db.svc.cluster.local. | 0 50 5432 postgres-1.postgres.db.svc.cluster.local.
    1.0.96.10.in-addr.arpa.               PTR NOERROR ttl=30 kubernetes.default.svc.cluster.local.
    """)


@tests.case
def option_dns_version_sets_the_txt_value(cluster):
    with_options(cluster, {"dns-version": "1.0.1"}, """
    dns-version.cluster.local. TXT NOERROR "1.0.1"
    """)


@tests.case
def option_namespaces_exposes_only_those(cluster):
    with_options(cluster, {"namespaces": ["shop", "db"]}, """
    web.shop.svc.cluster.local.           A NOERROR 10.96.12.34
    postgres.db.svc.cluster.local.        A NOERROR 10.244.0.20 | 10.244.1.20
    kubernetes.default.svc.cluster.local. A NXDOMAIN
    default.svc.cluster.local.            A NXDOMAIN
    1.0.96.10.in-addr.arpa.               PTR NXDOMAIN
    """)


@tests.case
def option_namespace_labels_exposes_matching_namespaces(cluster):
    with_options(cluster, {"namespace-labels": "team in (shop,sre)"}, """
    web.shop.svc.cluster.local.               A NOERROR 10.96.12.34
    prometheus.monitoring.svc.cluster.local.  A NOERROR 10.96.50.90
    postgres.db.svc.cluster.local.            A NXDOMAIN
    db.svc.cluster.local.                     A NXDOMAIN
    """)


@tests.case
def option_labels_selects_services_and_their_endpoints(cluster):
    with_options(cluster, {"labels": "app in (web,postgres)"}, """
    web.shop.svc.cluster.local.            A NOERROR 10.96.12.34
    postgres.db.svc.cluster.local.         A NOERROR 10.244.0.20 | 10.244.1.20
    cache.shop.svc.cluster.local.          A NXDOMAIN
    kubernetes.default.svc.cluster.local.  A NXDOMAIN
    """)


@tests.case
def option_endpoint_pod_names_names_endpoints_by_pod(cluster):
    with_options(cluster, {"endpoint-pod-names": True}, """
    cache-6c8f7d5b9-hq4w2.cache.shop.svc.cluster.local. A NOERROR 10.244.0.30
    10-244-0-30.cache.shop.svc.cluster.local.           A NXDOMAIN
    postgres-0.postgres.db.svc.cluster.local.           A NOERROR 10.244.0.20
    30.0.244.10.in-addr.arpa.                           PTR NOERROR cache-6c8f7d5b9-hq4w2.cache.shop.svc.cluster.local.
    """)


@tests.case
def option_no_endpoints_drops_endpoint_records(cluster):
    with_options(cluster, {"no-endpoints": True}, """
    kubernetes.default.svc.cluster.local.      A   NOERROR 10.96.0.1
    postgres.db.svc.cluster.local.             A   NXDOMAIN
    postgres-0.postgres.db.svc.cluster.local.  A   NXDOMAIN
    20.0.244.10.in-addr.arpa.                  PTR NXDOMAIN
    1.0.96.10.in-addr.arpa.                    PTR NOERROR kubernetes.default.svc.cluster.local.
    """)


@tests.case
def option_ignore_empty_service_hides_services_without_ready_endpoints(cluster):
    cluster.sim.apply(service("shop", "idle", "10.96.99.2"))
    cluster.expect_answer("idle.shop.svc.cluster.local.", "A", "NOERROR", ["10.96.99.2"])
    with_options(cluster, {"ignore-empty-service": True}, """
    idle.shop.svc.cluster.local.          A NXDOMAIN
    kubernetes.default.svc.cluster.local. A NOERROR 10.96.0.1
    postgres.db.svc.cluster.local.        A NOERROR 10.244.0.20 | 10.244.1.20
    """)


@tests.case
def option_pods_disabled_has_no_pod_records(cluster):
    with_options(cluster, {"pods": "disabled"}, """
    10-244-0-10.shop.pod.cluster.local. A NXDOMAIN
    """)


@tests.case
def option_pods_verified_answers_only_pods_of_that_namespace(cluster):
    with_options(cluster, {"pods": "verified"}, """
    10-244-0-10.shop.pod.cluster.local.     A    NOERROR 10.244.0.10
    fd00-10-244--a.shop.pod.cluster.local.  AAAA NOERROR fd00:10:244::a
    10-244-0-10.db.pod.cluster.local.       A    NXDOMAIN
    10-244-0-10.kube-system.pod.cluster.local. A NXDOMAIN
    10-244-9-9.shop.pod.cluster.local.      A    NXDOMAIN
    10-244-0-20.db.pod.cluster.local.       A    NOERROR 10.244.0.20
    """)


@tests.case
def option_cluster_domain_names_ptr_targets(cluster):
    zones = ("k8s.example.", "in-addr.arpa.")
    with cluster.knotd(module={"cluster-domain": "k8s.example."}, zones=zones) as server:
        wait_ready(server, ["k8s.example."])
        for case in cases.parse("""
        kubernetes.default.svc.k8s.example. A   NOERROR 10.96.0.1
        _https._tcp.kubernetes.default.svc.k8s.example. SRV NOERROR 0 100 443 kubernetes.default.svc.k8s.example.
        1.0.96.10.in-addr.arpa.             PTR NOERROR kubernetes.default.svc.k8s.example.
        """):
            case.run(server)


tests.main(fixture=Cluster)
