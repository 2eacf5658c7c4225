#!/usr/bin/env python3
"""Multicluster DNS specification (shared/specs/multicluster-dns-spec.md) and the DNS and
EndpointSlice sections of KEP-1645: every question/answer example, one case per sentence.

The examples contradict each other (myservice.test is a ClusterSetIP service in 2.3 and a
headless one in 2.4; 10.3.0.100 and 2001:db8::1 belong to three different names), so they
are served by four clusters, one after the other: tests/manifests/mcs-spec/<scene>, see its
README. Every cluster imports from cluster 721ab723-13bc-11e5-aec2-42010af0021e (the
examples' id) and others; its own cluster id is "importer".

Expected answers are the examples' answers, except where an example contradicts its own
record format (noted at the case). TTLs, priorities and weights are not prescribed by the
specification; the cases state the module's (TTL 5, SRV priority 0, weight 100 / targets),
and the TTL of dns-version is the example's 28800.
"""

import os

import testing
from cluster import Cluster, MANIFESTS

SCENES = os.path.join(MANIFESTS, "mcs-spec")
ID = "721ab723-13bc-11e5-aec2-42010af0021e"

tests = testing.Tests()


def scene(name):
    """Cases registered after this run against the cluster tests/manifests/mcs-spec/<name>."""
    tests.fixture(lambda: Cluster(manifests=[os.path.join(SCENES, name)],
                                  sim_args=["--no-bootstrap"]), name)


def table(text):
    """tests.table() with {ID} standing for the examples' cluster id."""
    tests.table(text.replace("{ID}", ID))


# ---------------------------------------------------------------------------
# 2.2 and 2.3: a ClusterSetIP service (scene clusterset-ip)

scene("clusterset-ip")

# 2.2 "clusters implementing multi cluster DNS will contain an additional TXT record responding
# with the semantic version of the DNS schema used for the multi cluster DNS <zone>"
# Example: dns-version.clusterset.local. 28800 IN TXT "1.1.0"
table("""
dns-version.clusterset.local. TXT NOERROR aa dns-version.clusterset.local. 28800 TXT "1.1.0"
dns-version.clusterset.local. A   NOERROR aa
""")

# 2.3.1 "If the <clusterset-ip> is an IPv4 address, an A record of the following form must
# exist. <service>.<ns>.svc.<clustersetzone>. <ttl> IN A <clusterset-ip>"
# Example: myservice.test.svc.clusterset.local. 4 IN A 10.42.42.42
table("""
myservice.test.svc.clusterset.local. A NOERROR aa ttl=5 10.42.42.42
myservice.test.svc.clusterset.local. A NOERROR aa tcp 10.42.42.42
MyService.Test.SVC.ClusterSet.Local. A NOERROR aa myservice.test.svc.clusterset.local. A 10.42.42.42
""")

# 2.3.1 "If the <clusterset-ip> is an IPv6 address, an AAAA record of the following form must
# exist." Example: myservice.test.svc.clusterset.local. 4 IN AAAA 2001:db8::1
table("""
myservice.test.svc.clusterset.local. AAAA NOERROR aa 2001:db8::1
""")

# 2.3.2 "For each port in an exported Service with name <port> and number <port-number> using
# protocol <proto>, an SRV record of the following form must exist.
# _<port>._<proto>.<service>.<ns>.svc.<clustersetzone>. <ttl> IN SRV <weight> <priority>
# <port-number> <service>.<ns>.svc.<zone>."
# Example: _https._tcp.myservice.test.svc.clusterset.local. 30 IN SRV 10 100 443 myservice.test.svc.clusterset.local.
# "The Additional section of the response may include the Service A/AAAA record referred to in
# the SRV record."
table("""
_https._tcp.myservice.test.svc.clusterset.local. SRV NOERROR aa 0 100 443 myservice.test.svc.clusterset.local. ; additional: myservice.test.svc.clusterset.local. A 10.42.42.42 | myservice.test.svc.clusterset.local. AAAA 2001:db8::1
_https._udp.myservice.test.svc.clusterset.local. SRV NXDOMAIN aa
_tcp.myservice.test.svc.clusterset.local.        SRV NOERROR aa
""")

# 2.3.2 "Unnamed ports do not have an SRV record." The import's second port (8443) has no name:
# every SRV record of the service (the module answers them all at the service name) is https's.
table("""
myservice.test.svc.clusterset.local. SRV NOERROR aa 0 100 443 myservice.test.svc.clusterset.local.
""")

# 2.3.3 "Given an exported Service assigned the IPv4 ClusterSet IP <a>.<b>.<c>.<d> that does not
# already have a PTR record, a PTR record of the following form must exist.
# <d>.<c>.<b>.<a>.in-addr.arpa. <ttl> IN PTR <service>.<ns>.svc.<clustersetzone>." (and the
# same for IPv6 as reversed nibbles). The examples' PTR owner is kubernetes.test (next scene);
# here: myservice's own clusterset IPs, which no cluster-local record has.
table("""
42.42.42.10.in-addr.arpa. PTR NOERROR aa myservice.test.svc.clusterset.local.
1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. PTR NOERROR aa myservice.test.svc.clusterset.local.
""")

# 2.3.3 / KEP "No PTR records necessary for multicluster DNS": the endpoints behind a
# ClusterSetIP are not named in the clusterset zone, so they get no PTR from it.
table("""
5.1.244.10.in-addr.arpa. PTR NXDOMAIN aa
5.1.245.10.in-addr.arpa. PTR NXDOMAIN aa
""")

# 2.3.4 "ClusterSetIP Services should NOT have a record disambiguating to a single cluster's
# backends, ex. <clusterid>.<svc>.<ns>.svc.<clustersetzone>." Nothing is named below a
# ClusterSetIP service but its SRV records: the name does not exist.
table("""
{ID}.myservice.test.svc.clusterset.local. A    NXDOMAIN aa
{ID}.myservice.test.svc.clusterset.local. AAAA NXDOMAIN aa
west.myservice.test.svc.clusterset.local.  A    NXDOMAIN aa
""")

# KEP DNS: "All service consumers must use the *.svc.clusterset.local name to enable
# clusterset routing, even if there is a matching Service with the same namespaced name in the
# local cluster. [...] There will be no change to existing behavior of the cluster.local zone."
# test/myservice also exists as a local Service (10.96.0.50).
table("""
myservice.test.svc.cluster.local.    A NOERROR aa 10.96.0.50
myservice.test.svc.clusterset.local. A NOERROR aa 10.42.42.42
50.0.96.10.in-addr.arpa.           PTR NOERROR aa myservice.test.svc.cluster.local.
""")

# 2.1 "<clustersetzone> = domain for multi-cluster services in the clusterset, which must be
# clusterset.local": names outside svc.clusterset.local do not exist there.
table("""
test.svc.clusterset.local.              A NOERROR aa
nowhere.test.svc.clusterset.local.      A NXDOMAIN aa
10-244-1-5.test.pod.clusterset.local.   A NXDOMAIN aa
""")

# ---------------------------------------------------------------------------
# 2.3.3: the PTR examples (scene clusterset-ip-ptr)

scene("clusterset-ip-ptr")

# 2.3.3 Example: 1.0.3.10.in-addr.arpa. 14 IN PTR kubernetes.test.svc.clusterset.local.
# and for 2001:db8::1: ...8.b.d.0.1.0.0.2.ip6.arpa. 14 IN PTR kubernetes.test.svc.clusterset.local.
table("""
1.0.3.10.in-addr.arpa. PTR NOERROR aa kubernetes.test.svc.clusterset.local.
1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. PTR NOERROR aa kubernetes.test.svc.clusterset.local.
kubernetes.test.svc.clusterset.local. A    NOERROR aa 10.3.0.1
kubernetes.test.svc.clusterset.local. AAAA NOERROR aa 2001:db8::1
""")

# 2.3.3 Limitations: "By definition, only one PTR record may exist per IP address. For
# implementations of Multicluster DNS that use IPs that already have a PTR record assigned
# from the cluster-local DNS specification, no further PTR records are required. In
# particular, implementations that create a new "dummy" cluster-local Service object for
# every ServiceImport will already have a PTR record generated due to the DNS resolution of
# the "dummy" Service." test/dummy's clusterset IP 10.3.0.2 is the cluster IP of the local
# "dummy" Service test/derived-dummy.
table("""
2.0.3.10.in-addr.arpa.           PTR NOERROR aa derived-dummy.test.svc.cluster.local.
dummy.test.svc.clusterset.local. A   NOERROR aa 10.3.0.2
derived-dummy.test.svc.cluster.local. A NOERROR aa 10.3.0.2
""")

# ---------------------------------------------------------------------------
# 2.4: multicluster headless services (scene headless)

scene("headless")

# 2.4.1 "for each ready endpoint accessible across the cluster set with the IPv4 address
# <endpoint-ip> the following records must exist. <service>.<ns>.svc.<clustersetzone>. IN A
# <endpoint-ip>" Example: myservice.test.svc.clusterset.local 4 IN A 10.42.42.42,
# myservice.test.svc.clusterset.local 4 IN A 10.10.10.10
# (10.42.42.42 is an endpoint in cluster {ID}, 10.10.10.10 one in cluster west.)
table("""
myservice.test.svc.clusterset.local. A NOERROR aa 10.42.42.42 | 10.10.10.10
myservice.test.svc.clusterset.local. A NOERROR aa tcp 10.42.42.42 | 10.10.10.10
""")

# 2.4.1 "There must be an AAAA record for each ready endpoint of the headless Service with IPv6
# address <endpoint-ip>" Example: headless.test.svc.clusterset.local. 4 IN AAAA 2001:db8::1,
# ... 2001:db8::2, ... 2001:db8::3
table("""
headless.test.svc.clusterset.local. AAAA NOERROR aa 2001:db8::1 | 2001:db8::2 | 2001:db8::3
headless.test.svc.clusterset.local. A    NOERROR aa 10.3.0.100 | 10.3.0.2
""")

# 2.4.1 "There must also be an A record of the following form for each ready endpoint with
# hostname of <hostname>, member cluster ID of <clusterid>, and IPv4 address <endpoint-ip>.
# <hostname>.<clusterid>.<service>.<ns>.svc.<clustersetzone>. <ttl> IN A <endpoint-ip>"
# (and the AAAA likewise); a not-ready endpoint (sleepy) has none.
table("""
my-pet.{ID}.headless.test.svc.clusterset.local.   A    NOERROR aa 10.3.0.100
my-pet.{ID}.headless.test.svc.clusterset.local.   AAAA NOERROR aa 2001:db8::1
my-pet-2.{ID}.headless.test.svc.clusterset.local. A    NOERROR aa 10.3.0.2
sleepy.{ID}.headless.test.svc.clusterset.local.   A    NXDOMAIN aa
my-pet.west.headless.test.svc.clusterset.local.   A    NXDOMAIN aa
my-pet.headless.test.svc.clusterset.local.        A    NXDOMAIN aa
""")

# 2.4.1 "If there are no ready endpoints for the headless Service, the answer should be
# NXDOMAIN." test/empty has one endpoint, not ready.
table("""
empty.test.svc.clusterset.local.              A    NXDOMAIN aa
empty.test.svc.clusterset.local.              AAAA NXDOMAIN aa
_https._tcp.empty.test.svc.clusterset.local.  SRV  NXDOMAIN aa
empty-0.{ID}.empty.test.svc.clusterset.local. A    NXDOMAIN aa
""")

# 2.4.2 "For each combination of ready endpoint with hostname of <hostname>, member cluster ID
# of <clusterid>, and port in the Service with name <port> [...] an SRV record of the
# following form must exist. _<port>._<proto>.<service>.<ns>.svc.<clustersetzone>. <ttl> IN
# SRV <weight> <priority> <port-number> <hostname>.<clusterid>.<service>.<ns>.svc.<clustersetzone>."
# Example: _https._tcp.headless.test.svc.clusterset.local. 4 IN SRV 10 100 443
# my-pet.721ab723-....headless.test.svc.clusterset.local., ... my-pet-2.721ab723-...., and
# ... 721ab723-13bc-11e5-aec2-42010af0021e.headless.test.svc.clusterset.local.
# The third target contradicts the record format and 2.4.4 (it is <clusterid>.<svc>); it is
# the endpoint without a hostname, whose <hostname> is its dashed address as in cluster DNS.
# "The Additional section of the response may include the A/AAAA records referred to in the
# SRV records." (over TCP: over UDP without EDNS, 512 bytes hold only the first target's)
table("""
_https._tcp.headless.test.svc.clusterset.local. SRV NOERROR aa tcp 0 33 443 my-pet.{ID}.headless.test.svc.clusterset.local. | 0 33 443 my-pet-2.{ID}.headless.test.svc.clusterset.local. | 0 33 443 2001-db8--3.{ID}.headless.test.svc.clusterset.local. ; additional: my-pet.{ID}.headless.test.svc.clusterset.local. A 10.3.0.100 | my-pet.{ID}.headless.test.svc.clusterset.local. AAAA 2001:db8::1 | my-pet-2.{ID}.headless.test.svc.clusterset.local. A 10.3.0.2 | my-pet-2.{ID}.headless.test.svc.clusterset.local. AAAA 2001:db8::2 | 2001-db8--3.{ID}.headless.test.svc.clusterset.local. AAAA 2001:db8::3
2001-db8--3.{ID}.headless.test.svc.clusterset.local. AAAA NOERROR aa 2001:db8::3
_https._udp.headless.test.svc.clusterset.local. SRV NXDOMAIN aa
""")

# 2.4.2 "This implies that if there are N ready endpoints and the Service defines M named ports
# and it is exported in P clusters, there will be N X M X P SRV RRs for the Service."
# test/etcd: N = 2 (etcd-0, etcd-1, the same hostnames in both clusters), M = 2 (client,
# peer), P = 2 ({ID}, west): 4 records per port, 8 in all.
table("""
_client._tcp.etcd.test.svc.clusterset.local. SRV NOERROR aa 0 25 2379 etcd-0.{ID}.etcd.test.svc.clusterset.local. | 0 25 2379 etcd-1.{ID}.etcd.test.svc.clusterset.local. | 0 25 2379 etcd-0.west.etcd.test.svc.clusterset.local. | 0 25 2379 etcd-1.west.etcd.test.svc.clusterset.local.
_peer._tcp.etcd.test.svc.clusterset.local.   SRV NOERROR aa 0 25 2380 etcd-0.{ID}.etcd.test.svc.clusterset.local. | 0 25 2380 etcd-1.{ID}.etcd.test.svc.clusterset.local. | 0 25 2380 etcd-0.west.etcd.test.svc.clusterset.local. | 0 25 2380 etcd-1.west.etcd.test.svc.clusterset.local.
""")

# KEP DNS: "necessary records will be created based on each ready endpoint's hostname and the
# multicluster.kubernetes.io/source-cluster label on the EndpointSlice. This allows naming
# collisions to be avoided for headless services backed by identical StatefulSets deployed in
# multiple clusters."
table("""
etcd-0.{ID}.etcd.test.svc.clusterset.local. A NOERROR aa 10.3.1.10
etcd-0.west.etcd.test.svc.clusterset.local. A NOERROR aa 10.4.1.10
etcd-1.west.etcd.test.svc.clusterset.local. A NOERROR aa 10.4.1.11
etcd.test.svc.clusterset.local.             A NOERROR aa 10.3.1.10 | 10.3.1.11 | 10.4.1.10 | 10.4.1.11
""")

# KEP EndpointSlices: "Each imported EndpointSlice will also have a
# multicluster.kubernetes.io/source-cluster label with the cluster id". A slice of test/headless
# without it (endpoint "stray", 10.3.0.66) names no cluster: it is not served.
table("""
stray.{ID}.headless.test.svc.clusterset.local. A NXDOMAIN aa
66.0.3.10.in-addr.arpa. PTR NXDOMAIN aa
""")

# 2.4.3 "Given a ready endpoint with hostname of <hostname>, member cluster ID of <clusterid>,
# and IPv4 address <a>.<b>.<c>.<d> that does not already have a PTR record, a PTR record of the
# following form must exist. <d>.<c>.<b>.<a>.in-addr.arpa. <ttl> IN PTR
# <hostname>.<clusterid>.<service>.<ns>.svc.<clustersetzone>."
# Example: 100.0.3.10.in-addr.arpa. 14 IN PTR my-pet.headless.721ab723-....test.svc.clusterset.local.
# (the example swaps <service> and <clusterid>; the case follows the record format).
table("""
100.0.3.10.in-addr.arpa. PTR NOERROR aa my-pet.{ID}.headless.test.svc.clusterset.local.
2.0.3.10.in-addr.arpa.   PTR NOERROR aa my-pet-2.{ID}.headless.test.svc.clusterset.local.
9.0.3.10.in-addr.arpa.   PTR NXDOMAIN aa
""")

# 2.4.3 IPv6: "h4.h3.[...].a1.ip6.arpa <ttl> IN PTR <hostname>.<clusterid>.<service>.<ns>.svc.<clustersetzone>."
# Example: 1.0.0.[...].8.b.d.0.1.0.0.2.ip6.arpa. 14 IN PTR my-pet.721ab723-....headless.test.svc.clusterset.local.
table("""
1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. PTR NOERROR aa my-pet.{ID}.headless.test.svc.clusterset.local.
3.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. PTR NOERROR aa 2001-db8--3.{ID}.headless.test.svc.clusterset.local.
""")

# 2.4.3 Limitations: "For implementations of Multicluster DNS that use IPs that already have a
# PTR record assigned from the cluster-local DNS specification, no further PTR records are
# required." db-0 of test/db (10.3.0.50) is also db-0 of the local headless "dummy" Service
# test/derived-db: its PTR stays the cluster-local one.
table("""
50.0.3.10.in-addr.arpa.                  PTR NOERROR aa db-0.derived-db.test.svc.cluster.local.
db-0.{ID}.db.test.svc.clusterset.local.  A   NOERROR aa 10.3.0.50
""")

# 2.4.4 "Multicluster Headless Services should NOT have a record disambiguating to a single
# cluster's backends, ex. <clusterid>.<svc>.<ns>.svc.<clustersetzone>." It has no record of any
# type; it exists only as the empty non-terminal above <hostname>.<clusterid>.<svc>, so it is
# NOERROR without answer (RFC 8020: NXDOMAIN would deny the names below it).
table("""
{ID}.headless.test.svc.clusterset.local. A    NOERROR aa
{ID}.headless.test.svc.clusterset.local. AAAA NOERROR aa
{ID}.headless.test.svc.clusterset.local. ANY  NOERROR aa
west.etcd.test.svc.clusterset.local.     A    NOERROR aa
west.headless.test.svc.clusterset.local. A    NXDOMAIN aa
""")

# KEP cluster id: "composed of two valid RFC 1123 DNS labels separated with a dot. The first
# label equals cluster name and the second one gives additional context" and "The
# implementation may in such case use clusterid composed of cluster name and an additional DNS
# label, separated with a dot." test/cache comes from cluster east.prod.
table("""
cache-0.east.prod.cache.test.svc.clusterset.local. A   NOERROR aa 10.5.0.1
east.prod.cache.test.svc.clusterset.local.         A   NOERROR aa
prod.cache.test.svc.clusterset.local.              A   NOERROR aa
cache-0.prod.cache.test.svc.clusterset.local.      A   NXDOMAIN aa
_redis._tcp.cache.test.svc.clusterset.local.       SRV NOERROR aa 0 100 6379 cache-0.east.prod.cache.test.svc.clusterset.local.
1.0.5.10.in-addr.arpa.                             PTR NOERROR aa cache-0.east.prod.cache.test.svc.clusterset.local.
""")

# ---------------------------------------------------------------------------
# 2.4.1: the hostname examples (scene headless-hostname)

scene("headless-hostname")

# 2.4.1 Example: my-hostname.721ab723-13bc-11e5-aec2-42010af0021e.myservice.test.svc.clusterset.local. 4 IN A 10.3.0.100
table("""
my-hostname.{ID}.myservice.test.svc.clusterset.local. A NOERROR aa 10.3.0.100
""")

# 2.4.1 "There must also be an AAAA record of the following form for each ready endpoint with
# hostname of <hostname>, member cluster ID of <clusterid>, and IPv6 address <endpoint-ip>."
# Example: my-hostname.721ab723-....test.svc.clusterset.local. 4 IN AAAA 2001:db8::1
# The example's name lacks the <service> label of the record format; as printed it names a
# service "721ab723-..." that does not exist.
table("""
my-hostname.{ID}.myservice.test.svc.clusterset.local. AAAA NOERROR aa 2001:db8::1
my-hostname.{ID}.test.svc.clusterset.local.           AAAA NXDOMAIN aa
""")

# 2.4.1 "If there are multiple IPv4 addresses for a given hostname, then there must be one such
# A record returned for each IP." (and the same sentence for IPv6). twin has two of each.
table("""
twin.{ID}.twins.test.svc.clusterset.local. A    NOERROR aa 10.3.2.1 | 10.3.2.2
twin.{ID}.twins.test.svc.clusterset.local. AAAA NOERROR aa 2001:db8:2::1 | 2001:db8:2::2
""")

tests.main()
