"""The harness itself: knotd starts with the built mod-k8s, and what exists before any sync.

No Kubernetes API is configured here, so the module never syncs: every name it
would synthesize gets SERVFAIL with EDE 14 (Not Ready), while the zone apex data
comes from the zone file and names outside the served zones are refused.
"""

import knotd
import testing
from knotd import Knotd, zone_soa, ZONE_NS

tests = testing.Tests()


@tests.case
def knotd_loads_the_module_from_the_build_under_test(server):
    testing.expect(not knotd.LOAD_FAILURES.search(server.log_text()),
                   "knotd logged a module load failure")
    server.reload()
    # knotd names shared modules only on reload, at debug level.
    server.wait_for_log(r"module 'mod-k8s', loaded shared")


@tests.case
def knotd_auto_loads_the_module_from_its_module_directory(server):
    if server.load == "file":
        raise testing.Skip("no mount namespace and nothing installed: the build is loaded by 'module: file:'")
    testing.expect("\nmodule:" not in server.config_text(), "the generated knot.conf has a module: section")
    answer = server.query("auto-load.cluster.local.", "A", edns=True)
    testing.expect(answer.rcode == "SERVFAIL" and answer.ede == [14],
                   f"the module's hook did not answer: {answer.summary()}")


@tests.case
def knotc_conf_check_accepts_the_generated_config(server):
    result = server.knotc("conf-check")
    testing.expect(result.returncode == 0 and "Configuration is valid" in result.stdout,
                   f"knotc conf-check failed:\n{result.stdout}")


@tests.case
def knotc_conf_check_rejects_a_negative_ttl(server):
    result = knotd.check_config(module={"ttl": -1})
    testing.expect(result.returncode != 0, f"ttl: -1 was accepted:\n{result.stdout}")
    testing.expect("'ttl'" in result.stdout and "out of range" in result.stdout,
                   f"the error does not name the ttl item:\n{result.stdout}")


# The apex records come from the zone file the harness wrote, over UDP and TCP.
for zone in knotd.DEFAULT_ZONES:
    tests.table(f"""
    {zone} SOA NOERROR aa {zone_soa(zone)}
    {zone} NS  NOERROR aa {ZONE_NS}
    {zone} NS  NOERROR aa tcp {ZONE_NS}
    """)

# Not synced: names the module would answer get SERVFAIL + EDE 14, over UDP and TCP.
tests.table("""
kubernetes.default.svc.cluster.local.        A    SERVFAIL noaa ede=14
kubernetes.default.svc.cluster.local.        A    SERVFAIL tcp ede=14
_https._tcp.kubernetes.default.svc.cluster.local. SRV SERVFAIL ede=14
1.0.96.10.in-addr.arpa.                      PTR  SERVFAIL ede=14
1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. PTR SERVFAIL ede=14
web.default.svc.clusterset.local.            A    SERVFAIL ede=14
""")

# Outside every served zone: knotd refuses (EDE 20, Not Authoritative).
tests.table("""
example.org.                                 A    REFUSED ede=20
kubernetes.default.svc.cluster.local.example. A   REFUSED
""")


@tests.case
def the_module_does_not_answer_for_a_zone_it_is_not_configured_on(server):
    with Knotd(zones={"cluster.local.": knotd.MODULE_REF, "example.": None}) as other:
        testing.expect_equal(other.query("x.example.", "A").rcode, "NXDOMAIN", "rcode in example.")
        testing.expect_equal(other.query("x.cluster.local.", "A").rcode, "SERVFAIL",
                             "rcode in cluster.local.")


tests.main(fixture=Knotd)
