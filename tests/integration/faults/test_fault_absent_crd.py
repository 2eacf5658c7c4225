#!/usr/bin/env python3
"""A missing CRD (issue 3): "A missing CRD (404) turns that feature off with one log line and
is retried later."

The simulated cluster has no ServiceImport CRD: its paths answer 404 "404 page not found"
(reference k8s_api.md 1.7). Both zones must still become ready, the clusterset zone empty;
one log line says so, and the module looks again every crd-retry-interval (doc/mod-k8s.rst):
once the CRD is installed its ServiceImports appear without a restart. Removing the CRD again
(which deletes its objects) empties the zone again.

The interval is set to RETRY_S here (60 s by default) so that the file waits out two periods.
"""

import testing
from cluster import Cluster, wait_ready
from faults import (counter, expect_addresses, log_lines, service_import, wait_for)

tests = testing.Tests()

RETRY_S = 8  # crd-retry-interval
NOT_SERVED = "serviceimports not served by the API server"
IMPORT_PATHS = ("/apis/multicluster.x-k8s.io/v1alpha1/serviceimports",
                "/apis/multicluster.x-k8s.io/v1beta1/serviceimports")


@tests.case
def without_the_crd_both_zones_are_ready_and_the_clusterset_zone_is_empty(c):
    wait_ready(c.server, ("cluster.local.", "clusterset.local."))
    expect_addresses(c.server, "web.shop.svc.clusterset.local.", [])
    expect_addresses(c.server, "postgres.db.svc.clusterset.local.", [])
    expect_addresses(c.server, "web.shop.svc.cluster.local.", ["10.96.12.34"])
    testing.expect_equal(counter(c.server, "objects[serviceimports]", "clusterset.local."), 0,
                         "objects[serviceimports]")


@tests.case
def one_log_line_says_the_resource_is_not_served_and_when_it_is_looked_for_again(c):
    lines = log_lines(c.server, NOT_SERVED)
    testing.expect_equal(len(lines), 1, "log lines about the missing resource")
    testing.expect(f"checking again every {RETRY_S} s" in lines[0], lines[0])
    testing.expect(counter(c.server, "api-errors[not-found]", "clusterset.local.") >= 1,
                   "api-errors[not-found] counted")


@tests.case
def the_missing_resource_is_asked_for_again_once_per_retry_period(c):
    def asked():
        return [r for r in c.sim.requests(0) if r["path"] in IMPORT_PATHS]
    wait_for(lambda: len(asked()) >= 4, "a second look for ServiceImports",
             timeout=RETRY_S + 20)
    times = {}
    for request in asked():
        testing.expect_equal(request["code"], 404, request["path"])
        times.setdefault(request["path"], []).append(request["time"])
    for path, seen in times.items():
        gaps = [later - earlier for earlier, later in zip(seen, seen[1:])]
        testing.expect(gaps and min(gaps) >= RETRY_S - 0.5, f"{path}: asked at intervals {gaps}")
    testing.expect_equal(len(log_lines(c.server, NOT_SERVED)), 1,
                         "log lines about the missing resource (none for a retry)")


@tests.case
def once_the_crd_is_installed_its_service_imports_appear_without_a_restart(c):
    pid = c.server.pid
    c.sim.set_absent("serviceimports", absent=False)
    c.sim.apply(service_import("shop", "late", ["10.42.0.20"]))
    expect_addresses(c.server, "late.shop.svc.clusterset.local.", ["10.42.0.20"], timeout=RETRY_S + 20)
    expect_addresses(c.server, "web.shop.svc.clusterset.local.", ["10.42.0.10"])
    testing.expect_equal(c.server.pid, pid, "knotd's pid")
    testing.expect_equal(len(log_lines(c.server, NOT_SERVED)), 1, "log lines about the missing resource")
    testing.expect(log_lines(c.server, "list serviceimports completed"), "a log line says it was listed")


@tests.case
def when_the_crd_is_removed_again_its_service_imports_go(c):
    c.sim.set_absent("serviceimports", absent=True)  # Ends the open watches.
    expect_addresses(c.server, "late.shop.svc.clusterset.local.", [], timeout=20)
    expect_addresses(c.server, "web.shop.svc.clusterset.local.", [])
    wait_for(lambda: len(log_lines(c.server, NOT_SERVED)) == 2, "a second log line about the removal")
    testing.expect_equal(counter(c.server, "ready[clusterset]", "clusterset.local."), 1,
                         "ready[clusterset] (an empty zone is still ready)")


tests.main(fixture=lambda: Cluster(sim_args=["--absent", "serviceimports"],
                                   module={"crd-retry-interval": RETRY_S}))
