#!/usr/bin/env python3
"""Zone transfers of a mod-k8s zone, as doc/mod-k8s.rst ("Zone transfers") promises.

knotd answers AXFR and IXFR from the zone's contents (the zone file), where no
query module runs: without an `acl` allowing `transfer` they are refused
(NOTAUTH, knotd's default); with one they carry the zone file's records only,
never the names mod-k8s synthesizes, and the serial stays the zone file's.
"""

import subprocess

import dig
import testing
from cluster import Cluster
from faults import service

tests = testing.Tests()

ZONE = "cluster.local."
ZONE_FILE_RECORDS = {
    dig.make_rr(ZONE, None, "SOA", "ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5"),
    dig.make_rr(ZONE, None, "NS", "ns.dns.cluster.local."),
    dig.make_rr("ns.dns.cluster.local.", None, "A", "10.96.0.10"),
}
SECONDARY = "127.0.0.3"
ACL = f"""
acl:
  - id: secondary
    address: {SECONDARY}
    action: transfer
"""


def transfer(cluster, qtype, source="127.0.0.1"):
    """kdig's AXFR/IXFR from `source`: (error text or None, records without TTLs)."""
    command = dig.kdig_command(cluster.server, ZONE, qtype, extra=["-b", source])
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=20, check=False)
    error = next((line for line in result.stdout.splitlines() if "ERROR" in line), None)
    records = []
    for line in result.stdout.splitlines():
        if line.strip() and not line.startswith(";"):
            owner, _ttl, _cls, rtype, rdata = line.split(None, 4)
            records.append(dig.make_rr(owner, None, rtype, rdata))
    return error, records


def cluster_with(extra="", template=None):
    return lambda: Cluster(zones=(ZONE,), extra=extra, template=template,
                           zone_extra={ZONE: "ns.dns A 10.96.0.10"})


tests.fixture(cluster_with(), "knotd's default ACL")


@tests.case
def axfr_and_ixfr_are_refused_without_a_transfer_acl(cluster):
    for qtype in ("AXFR", "IXFR=0"):
        error, records = transfer(cluster, qtype)
        testing.expect(error and "NOTAUTH" in error, f"{qtype}: {error!r}, {records}")
    # The names themselves answer as ever.
    testing.expect_equal(cluster.query("kubernetes.default.svc.cluster.local.").rcode, "NOERROR",
                         "query")


tests.fixture(cluster_with(ACL, {"acl": "secondary"}), "an ACL allowing transfer")


@tests.case
def axfr_carries_the_zone_files_records_only(cluster):
    error, records = transfer(cluster, "AXFR", SECONDARY)
    testing.expect(error is None, f"AXFR: {error}")
    testing.expect_equal(records[0].type, "SOA", "first record")
    testing.expect_equal(records[-1], records[0], "last record (the SOA again)")
    testing.expect_equal(set(records), ZONE_FILE_RECORDS, "records")
    # Outside the ACL still refused.
    error, _ = transfer(cluster, "AXFR")
    testing.expect(error and "NOTAUTH" in error, f"AXFR outside the ACL: {error!r}")


@tests.case
def ixfr_falls_back_to_the_zone_file_and_the_serial_never_moves(cluster):
    error, records = transfer(cluster, "IXFR=0", SECONDARY)
    testing.expect_equal((error, set(records)), (None, ZONE_FILE_RECORDS), "IXFR from serial 0")
    # A new service changes what queries answer, not the zone's serial: a secondary
    # polling the SOA is up to date for ever.
    cluster.sim.apply(service("default", "late", "10.96.99.99"))
    cluster.expect_answer("late.default.svc.cluster.local.", "A", "NOERROR", ["10.96.99.99"])
    error, records = transfer(cluster, "IXFR=1", SECONDARY)
    testing.expect_equal((error, [rr.type for rr in records]), (None, ["SOA"]), "IXFR from serial 1")


if __name__ == "__main__":
    tests.main()
