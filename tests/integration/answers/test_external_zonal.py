#!/usr/bin/env python3
"""CoreDNS's k8s_external zone (options external-*) and the kubernetes plugin's zonal
names (option zonal), served by knotd with mod-k8s from the API simulator's objects.

k8s_external: <svc>.<ns>.<zone> answers a Service's externalIPs and its load
balancer's ingress IPs (A, AAAA, SRV with the addresses in the additional section),
_<port>._<proto> the same for a port, ns1.<apex>.<zone> the addresses of the Service in
front of the DNS, the apex its zone file's SOA and NS; a change of the Service answers
at once. Zonal names: <zone>.pin._zone.<svc>.<ns>.svc.<cluster> the endpoints of one
topology zone of a headless service (EndpointSlice endpoints' `zone`), NODATA when none;
.prefer. every endpoint then.
"""

import cluster
import testing

tests = testing.Tests()

EXTERNAL = "example.org."
# The NS mod-k8s-migrate writes for `k8s_external example.org` (CoreDNS's apex), beside
# the fixture's own.
EXTERNAL_ZONE_FILE = "@ 5 NS ns1.dns.example.org.\n"


def service(name, ns="shop", spec=None, status=None):
    obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
           "spec": dict({"ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}, **(spec or {}))}
    if status is not None:
        obj["status"] = status
    return obj


def slice_of(svc, name, endpoints, ns="shop", family="IPv4"):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kubernetes.io/service-name": svc}},
            "addressType": family, "endpoints": endpoints,
            "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]}


def rdata(answer, rtype):
    return sorted(rr.rdata for rr in answer.answer if rr.type == rtype)


def external_cluster(**module):
    zones = cluster.ZONES + (EXTERNAL,)
    options = dict({"external-zone": EXTERNAL, "external-ttl": 10}, **module)
    return cluster.Cluster(module=options, zones=zones,
                           zone_extra={EXTERNAL: EXTERNAL_ZONE_FILE})


@tests.case
def a_services_external_and_load_balancer_addresses_answer_under_the_external_zone():
    with external_cluster() as c:
        c.sim.apply(service("lb", spec={"type": "LoadBalancer", "clusterIP": "10.96.7.7",
                                        "externalIPs": ["192.0.2.10"]},
                            status={"loadBalancer": {"ingress": [{"ip": "198.51.100.7"},
                                                                 {"ip": "2001:db8::7"}]}}))
        a = c.expect_answer("lb.shop.example.org.", "A", "NOERROR", ["192.0.2.10", "198.51.100.7"])
        testing.expect(all(rr.ttl == 10 for rr in a.answer), "external-ttl")
        testing.expect("aa" in a.flags, a.summary())
        c.expect_answer("lb.shop.example.org.", "AAAA", "NOERROR", ["2001:db8::7"])
        srv = c.expect_answer("_http._tcp.lb.shop.example.org.", "SRV", "NOERROR",
                              ["0 33 80 lb.shop.example.org."])
        testing.expect_equal(sorted(rr.rdata for rr in srv.additional if rr.type in ("A", "AAAA")),
                             ["192.0.2.10", "198.51.100.7", "2001:db8::7"], "the targets' addresses")
        c.expect_answer("lb.shop.example.org.", "TXT", "NOERROR", [])
        # A Service without external address, a name too long, a namespace.
        c.expect_answer("kubernetes.default.example.org.", "A", "NXDOMAIN")
        c.expect_answer("a.b.c.lb.shop.example.org.", "A", "NXDOMAIN")
        c.expect_answer("shop.example.org.", "A", "NOERROR", [])
        c.expect_answer("nowhere.example.org.", "A", "NXDOMAIN")
        # The apex is the zone file's (test_migrate.py checks the one the migration writes).
        ns = c.query("example.org.", "NS")
        testing.expect("ns1.dns.example.org." in rdata(ns, "NS"), ns.summary())
        c.expect_answer("example.org.", "A", "NOERROR", [])
        c.expect_answer("dns.example.org.", "A", "NOERROR", [])

        # A change of the Service answers at once, a deletion goes.
        c.sim.apply(service("lb", spec={"type": "LoadBalancer", "clusterIP": "10.96.7.7",
                                        "externalIPs": ["192.0.2.11"]}))
        c.expect_answer("lb.shop.example.org.", "A", "NOERROR", ["192.0.2.11"], timeout=5)
        c.sim.delete("services", "shop", "lb")
        c.expect_answer("lb.shop.example.org.", "A", "NXDOMAIN", timeout=5)


@tests.case
def the_nameserver_name_answers_the_dns_services_external_addresses():
    with external_cluster() as c:
        dns = c.sim.get_object("services", "kube-system", "kube-dns")
        dns["spec"]["externalIPs"] = ["203.0.113.53"]
        c.sim.apply(dns)
        c.expect_answer("ns1.dns.example.org.", "A", "NOERROR", ["203.0.113.53"], timeout=5)
        c.expect_answer("ns2.dns.example.org.", "A", "NXDOMAIN")


@tests.case
def headless_endpoints_answer_with_external_headless():
    with external_cluster(**{"external-headless": True}) as c:
        c.sim.apply(service("db", spec={"clusterIP": "None",
                                        "ports": [{"name": "pg", "port": 5432}]}))
        c.sim.apply(slice_of("db", "db-a", [
            {"addresses": ["10.244.1.10"], "hostname": "db-0", "conditions": {"ready": True}},
            {"addresses": ["10.244.1.11"], "hostname": "db-1", "conditions": {"ready": True}}]))
        c.expect_answer("db.shop.example.org.", "A", "NOERROR", ["10.244.1.10", "10.244.1.11"])
        c.expect_answer("db-1.db.shop.example.org.", "A", "NOERROR", ["10.244.1.11"])
        c.expect_answer("_pg._tcp.db.shop.example.org.", "SRV", "NOERROR",
                        ["0 50 5432 db-0.db.shop.example.org.", "0 50 5432 db-1.db.shop.example.org."])


@tests.case
def zonal_names_answer_one_topology_zone_of_a_headless_service():
    with cluster.Cluster(module={"zonal": True}) as c:
        c.sim.apply(service("db", spec={"clusterIP": "None", "ports": [{"name": "pg", "port": 5432}]}))
        c.sim.apply(slice_of("db", "db-a", [
            {"addresses": ["10.244.1.10"], "hostname": "db-0", "zone": "us-west-2a"},
            {"addresses": ["10.244.2.11"], "hostname": "db-1", "zone": "us-west-2b"},
            {"addresses": ["10.244.2.12"], "hostname": "db-2", "zone": "us-west-2b"},
            {"addresses": ["10.244.3.13"], "hostname": "db-3"}]))
        base = "pin._zone.db.shop.svc.cluster.local."
        c.expect_answer("us-west-2a." + base, "A", "NOERROR", ["10.244.1.10"], timeout=5)
        c.expect_answer("us-west-2b." + base, "A", "NOERROR", ["10.244.2.11", "10.244.2.12"])
        c.expect_answer("US-West-2B." + base, "A", "NOERROR", ["10.244.2.11", "10.244.2.12"])
        c.expect_answer("us-west-2c." + base, "A", "NOERROR", [])
        c.expect_answer("us-west-2c.prefer._zone.db.shop.svc.cluster.local.", "A", "NOERROR",
                        ["10.244.1.10", "10.244.2.11", "10.244.2.12", "10.244.3.13"])
        srv = c.expect_answer("us-west-2b." + base, "SRV", "NOERROR",
                              ["0 50 5432 db-1.db.shop.svc.cluster.local.",
                               "0 50 5432 db-2.db.shop.svc.cluster.local."])
        testing.expect_equal(sorted(rr.rdata for rr in srv.additional if rr.type == "A"),
                             ["10.244.2.11", "10.244.2.12"], "the zone's targets only")
        # Defined for headless services only; another directive is the old NXDOMAIN.
        c.expect_answer("us-west-2a.pin._zone.kubernetes.default.svc.cluster.local.", "A", "NXDOMAIN")
        c.expect_answer("us-west-2a.florp._zone.db.shop.svc.cluster.local.", "A", "NXDOMAIN")
        # An endpoint moves: the zone's answer follows.
        c.sim.apply(slice_of("db", "db-a", [
            {"addresses": ["10.244.1.10"], "hostname": "db-0", "zone": "us-west-2b"}]))
        c.expect_answer("us-west-2a." + base, "A", "NOERROR", [], timeout=5)
        c.expect_answer("us-west-2b." + base, "A", "NOERROR", ["10.244.1.10"])


@tests.case
def without_the_zonal_option_zonal_names_are_nxdomain():
    with cluster.Cluster() as c:
        c.sim.apply(service("db", spec={"clusterIP": "None"}))
        c.sim.apply(slice_of("db", "db-a", [{"addresses": ["10.244.1.10"], "zone": "z1"}]))
        c.expect_answer("db.shop.svc.cluster.local.", "A", "NOERROR", ["10.244.1.10"], timeout=5)
        c.expect_answer("z1.pin._zone.db.shop.svc.cluster.local.", "A", "NXDOMAIN")


if __name__ == "__main__":
    tests.main()
