#!/usr/bin/env python3
"""Kubernetes DNS specification 1.0.1, sections 2.1-2.3, 2.5, 2.6: a ClusterIP service.

Each case quotes the specification's question; the expected answer is the
specification's example answer (TTLs, priority and weight are the server's
business: the specification does not prescribe them). The cluster is
tests/manifests/spec-clusterip, served by the API simulator.
"""

import os

import testing
from cluster import Cluster, MANIFESTS

tests = testing.Tests()

# 2.2 Record for Schema Version: "There must be a TXT record named dns-version.<zone>."
# (The example answer says "1.0.0"; we serve 1.1.0 records, so we say so, and the value is configurable.)
tests.table("""
dns-version.cluster.local. TXT NOERROR aa "1.1.0"
dns-version.cluster.local. A   NOERROR aa
""")

# 2.3.1 A Record: "<service>.<ns>.svc.<zone>. <ttl> IN A <cluster-ip>"
tests.table("""
kubernetes.default.svc.cluster.local. A    NOERROR aa ttl=5 10.3.0.1
kubernetes.default.svc.cluster.local. AAAA NOERROR aa
""")

# 2.1 "All comparisons between query data and data in Kubernetes is case-insensitive."
tests.table("""
KUBERNETES.Default.SVC.cluster.LOCAL. A NOERROR aa kubernetes.default.svc.cluster.local. A 10.3.0.1
Kubernetes.Default.Svc.Cluster.Local. A NOERROR aa tcp kubernetes.default.svc.cluster.local. A 10.3.0.1
""")

# 2.3.2 SRV Records: "_<port>._<proto>.<service>.<ns>.svc.<zone>. IN SRV <weight> <priority>
# <port-number> <service>.<ns>.svc.<zone>." and "The Additional section of the response may
# include the Service A record referred to in the SRV record."
tests.table("""
_https._tcp.kubernetes.default.svc.cluster.local. SRV NOERROR aa 0 100 443 kubernetes.default.svc.cluster.local. ; additional: kubernetes.default.svc.cluster.local. A 10.3.0.1
_https._udp.kubernetes.default.svc.cluster.local. SRV NXDOMAIN aa
_http._tcp.kubernetes.default.svc.cluster.local.  SRV NXDOMAIN aa
_tcp.kubernetes.default.svc.cluster.local.        SRV NOERROR aa
""")

# 2.3.3 PTR Record: "<d>.<c>.<b>.<a>.in-addr.arpa. <ttl> IN PTR <service>.<ns>.svc.<zone>."
tests.table("""
1.0.3.10.in-addr.arpa. PTR NOERROR aa kubernetes.default.svc.cluster.local.
2.0.3.10.in-addr.arpa. PTR NXDOMAIN aa
0.3.10.in-addr.arpa.   PTR NOERROR aa
""")

# 2.5 Records for External Name Services: "<service>.<ns>.svc.<zone>. <ttl> IN CNAME <extname>."
# Without an upstream the CNAME comes alone (the client's resolver follows it).
tests.table("""
foo.default.svc.cluster.local. A     NOERROR aa foo.default.svc.cluster.local. CNAME www.example.com.
foo.default.svc.cluster.local. CNAME NOERROR aa www.example.com.
""")

# 2.6 Deprecated Records: "<a>-<b>-<c>-<d>.<ns>.pod.<zone>. <ttl> IN A <a>.<b>.<c>.<d>"
# "This behavior is deprecated but is required to satisfy this specification."
tests.table("""
1-2-3-4.default.pod.cluster.local.  A NOERROR aa 1.2.3.4
10-3-0-99.default.pod.cluster.local. A NOERROR aa 10.3.0.99
1-2-3-4.nowhere.pod.cluster.local.  A NXDOMAIN aa
""")

tests.main(fixture=lambda: Cluster(manifests=[os.path.join(MANIFESTS, "spec-clusterip")],
                                   sim_args=["--no-bootstrap"], zones=("cluster.local.", "in-addr.arpa.")))
