#!/usr/bin/env python3
"""Server-side search path expansion (shared/specs/kep-dns-autopath.md).

"Using this mode will set the searchpath on the pod as
search.$NS.$SUFFIX.ap.k8s.io [...] The server [...] will require additional
metadata in order to complete searchpath expansion." A zone `ap.k8s.io.` with
mod-k8s answers <name>.search.<ns>.cluster.local.ap.k8s.io from the first name
of the pod's search path that exists ("$NS.svc.$SUFFIX", "svc.$SUFFIX",
"$SUFFIX"), or of the search list in the EDNS0 option ("a comma-separated
string consisting of all the searchpaths"), as a CNAME and its records: one
query instead of one per search domain.
"""

import dig
import testing
from cluster import Cluster
from faults import service

tests = testing.Tests()
AP = "search.shop.cluster.local.ap.k8s.io."

tests.table(f"""
web.{AP}                    A    NOERROR aa web.{AP} CNAME web.shop.svc.cluster.local. | web.shop.svc.cluster.local. A 10.96.12.34
web.{AP}                    AAAA NOERROR aa web.{AP} CNAME web.shop.svc.cluster.local. | web.shop.svc.cluster.local. AAAA fd00:10:96::1234
kubernetes.default.{AP}     A    NOERROR aa kubernetes.default.{AP} CNAME kubernetes.default.svc.cluster.local. | kubernetes.default.svc.cluster.local. A 10.96.0.1
postgres-0.postgres.db.svc.{AP} A NOERROR aa postgres-0.postgres.db.svc.{AP} CNAME postgres-0.postgres.db.svc.cluster.local. | postgres-0.postgres.db.svc.cluster.local. A 10.244.0.20
_pg._tcp.postgres.db.{AP}   SRV  NOERROR aa _pg._tcp.postgres.db.{AP} CNAME _pg._tcp.postgres.db.svc.cluster.local. | _pg._tcp.postgres.db.svc.cluster.local. SRV 0 50 5432 postgres-0.postgres.db.svc.cluster.local. | _pg._tcp.postgres.db.svc.cluster.local. SRV 0 50 5432 postgres-1.postgres.db.svc.cluster.local.
WEB.Search.Shop.Cluster.Local.AP.K8S.IO. A NOERROR aa web.search.shop.cluster.local.ap.k8s.io. CNAME web.shop.svc.cluster.local. | web.shop.svc.cluster.local. A 10.96.12.34
web.{AP}                    TXT  NOERROR aa web.{AP} CNAME web.shop.svc.cluster.local.
nope.{AP}                   A    NXDOMAIN aa
www.example.com.{AP}        A    NXDOMAIN aa
web.search.nowhere.cluster.local.ap.k8s.io. A NXDOMAIN aa
{AP}                        A    NOERROR aa
xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.ap.k8s.io. A NXDOMAIN aa
xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.local.ap.k8s.io. A NXDOMAIN aa
""")


def edns_search(domains):
    return f"+ednsopt=65001:{','.join(domains).encode().hex()}"


@tests.case
def the_edns_option_gives_the_search_list(cluster):
    answer = dig.query(cluster.server, f"postgres.{AP}", "A",
                       extra=(edns_search(["db.svc.cluster.local", "svc.cluster.local"]),))
    got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
    testing.expect_equal(got, {(f"postgres.{AP}", "CNAME", "postgres.db.svc.cluster.local."),
                               ("postgres.db.svc.cluster.local.", "A", "10.244.0.20"),
                               ("postgres.db.svc.cluster.local.", "A", "10.244.1.20")}, "answer")


@tests.case
def without_the_option_the_pods_namespace_comes_first(cluster):
    testing.expect_equal(cluster.query(f"postgres.{AP}", "A").rcode, "NXDOMAIN",
                         "postgres in shop's search path")


@tests.case
def a_new_service_is_found_through_the_search_path(cluster):
    cluster.sim.apply(service("shop", "fresh", "10.96.99.9"))
    cluster.expect_answer(f"fresh.{AP}", "A", "NOERROR", ["10.96.99.9"])


tests.main(fixture=lambda: Cluster(zones=("cluster.local.", "ap.k8s.io.")))
