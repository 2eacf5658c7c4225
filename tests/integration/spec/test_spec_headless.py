#!/usr/bin/env python3
"""Kubernetes DNS specification 1.0.1, section 2.4: a headless service.

The cluster is tests/manifests/spec-headless: headless.default with ready
endpoints 10.3.0.1, 10.3.0.2 (my-pet-2), 10.3.0.3 and 10.3.0.100 (my-pet), one
endpoint that is not ready, and empty.default without a ready endpoint.
Endpoints without a hostname are named by their dashed address, the
"unique, system-assigned identifier" of 2.1.
"""

import os

import testing
from cluster import Cluster, MANIFESTS

tests = testing.Tests()

# 2.4.1 "There must be an A record for each ready endpoint of the headless Service"
tests.table("""
headless.default.svc.cluster.local. A NOERROR aa 10.3.0.1 | 10.3.0.2 | 10.3.0.3 | 10.3.0.100
headless.default.svc.cluster.local. A NOERROR aa tcp 10.3.0.1 | 10.3.0.2 | 10.3.0.3 | 10.3.0.100
headless.default.svc.cluster.local. AAAA NOERROR aa
""")

# 2.4.1 "If there are no ready endpoints for the headless Service, the answer should be NXDOMAIN."
tests.table("""
empty.default.svc.cluster.local.  A NXDOMAIN aa
unready.empty.default.svc.cluster.local. A NXDOMAIN aa
""")

# 2.4.1 "There must also be an A record of the following form for each ready endpoint with
# hostname of <hostname>": <hostname>.<service>.<ns>.svc.<zone>.
tests.table("""
my-pet.headless.default.svc.cluster.local.   A NOERROR aa 10.3.0.100
my-pet-2.headless.default.svc.cluster.local. A NOERROR aa 10.3.0.2
10-3-0-1.headless.default.svc.cluster.local. A NOERROR aa 10.3.0.1
sleeping-pet.headless.default.svc.cluster.local. A NXDOMAIN aa
""")

# 2.4.2 "For each combination of ready endpoint with hostname of <hostname>, and port in the
# Service with name <port> [...] an SRV record [...] must exist." N endpoints x M ports.
tests.table("""
_https._tcp.headless.default.svc.cluster.local. SRV NOERROR aa 0 25 443 my-pet.headless.default.svc.cluster.local. | 0 25 443 my-pet-2.headless.default.svc.cluster.local. | 0 25 443 10-3-0-1.headless.default.svc.cluster.local. | 0 25 443 10-3-0-3.headless.default.svc.cluster.local. ; additional: my-pet.headless.default.svc.cluster.local. A 10.3.0.100 | my-pet-2.headless.default.svc.cluster.local. A 10.3.0.2 | 10-3-0-1.headless.default.svc.cluster.local. A 10.3.0.1 | 10-3-0-3.headless.default.svc.cluster.local. A 10.3.0.3
""")

# 2.4.3 "Given a ready endpoint with hostname of <hostname> and IP address <a>.<b>.<c>.<d>,
# a PTR record of the following form must exist."
tests.table("""
100.0.3.10.in-addr.arpa. PTR NOERROR aa my-pet.headless.default.svc.cluster.local.
2.0.3.10.in-addr.arpa.   PTR NOERROR aa my-pet-2.headless.default.svc.cluster.local.
200.0.3.10.in-addr.arpa. PTR NXDOMAIN aa
""")

tests.main(fixture=lambda: Cluster(manifests=[os.path.join(MANIFESTS, "spec-headless")],
                                   sim_args=["--no-bootstrap"], zones=("cluster.local.", "in-addr.arpa.")))
