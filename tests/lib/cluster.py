"""A simulated Kubernetes cluster and a knotd whose mod-k8s watches it.

    from cluster import Cluster
    tests.main(fixture=lambda: Cluster(manifests=[SPEC_DIR]))

The fixture starts the API simulator (tests/apisim) with the given manifests,
then knotd with mod-k8s pointed at the simulator's kubeconfig, and waits until
the module has synchronized (its `ready` counters are 1). Tests get the
Cluster: `.query()`, `.sim` (the simctl.Simulator, to change objects or inject
faults), `.server` (the Knotd), `.stats()` (mod-k8s counters of a zone),
`.eventually()` (retry a check until an API change has reached DNS) and
`.knotd(...)` (another knotd, e.g. with other options, watching the same
simulator).
"""

import os
import re
import shutil
import tempfile
import time

import dig
import knotd
import simctl
import testing
import valgrind

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
MANIFESTS = os.path.join(SRCDIR, "tests", "manifests")
SAMPLE = os.path.join(MANIFESTS, "sample")

# Zones of a cluster DNS: the cluster domain, both reverse trees, the clusterset domain.
ZONES = ("cluster.local.", "in-addr.arpa.", "ip6.arpa.", "clusterset.local.")

_STAT = re.compile(r"^\[(?P<zone>[^\]]+)\] mod-k8s\.(?P<name>[a-z-]+)(\[(?P<idx>[^\]]+)\])? = (?P<value>\d+)$")


def stats(server, zone="cluster.local."):
    """mod-k8s counters of a zone as {"name": value, "name[idx]": value}, as knotc 3.2 shows
    them: every counter without an index, those with one only when not zero. knotc 3.4
    leaves out every zero counter unless forced (-f): there the zeros without an index are
    put back."""
    force = knotd.knot_release() != "3.2"
    result = server.knotc(*(["-f"] if force else []), "zone-stats", zone)
    out = {}
    for line in result.stdout.splitlines():
        match = _STAT.match(line.strip())
        if match:
            if force and match["idx"] and match["value"] == "0":
                continue
            key = match["name"] + (f"[{match['idx']}]" if match["idx"] else "")
            out[key] = int(match["value"])
    return out


def wait_ready(server, zones=("cluster.local.",), timeout=30):
    """Waits until every zone's module reports its data synchronized."""
    deadline = time.monotonic() + valgrind.scaled(timeout)
    while True:
        ready = all(_zone_ready(server, zone) for zone in zones)
        if ready:
            return
        if time.monotonic() > deadline:
            raise knotd.KnotdError(f"mod-k8s not synchronized after {timeout} s:\n"
                                   + server.log_tail())
        time.sleep(0.05)


def _zone_ready(server, zone):
    counters = stats(server, zone)
    kind = "clusterset" if zone.startswith("clusterset") else "cluster"
    return counters.get(f"ready[{kind}]") == 1


class Cluster:
    """The API simulator and a knotd with mod-k8s watching it; a context manager."""

    address = knotd.Knotd.address

    def __init__(self, manifests=(SAMPLE,), generate=None, sim_args=(), module=None,
                 zones=ZONES, kubeconfig="kubeconfig", ready_zones=None, **knotd_options):
        self.workdir = tempfile.mkdtemp(prefix="mod-k8s-cluster-")
        self.sim = simctl.Simulator(os.path.join(self.workdir, "apisim"), manifests=manifests,
                                    generate=generate, args=sim_args)
        self.kubeconfig = kubeconfig
        self.module = dict(module or {})
        self.zones = zones
        self.ready_zones = ready_zones if ready_zones is not None else \
            tuple(z for z in zones if not z.endswith("arpa."))
        self.knotd_options = knotd_options
        self.server = None

    # -- context manager

    def __enter__(self):
        try:
            self.sim.start()
            self.server = self.knotd(module=self.module, zones=self.zones,
                                     **self.knotd_options).__enter__()
            wait_ready(self.server, self.ready_zones)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if self.server is not None:
                self.server.__exit__(kind, value, traceback)
        finally:
            self.sim.stop()
            if not os.environ.get("MODK8S_KEEP_TMP"):
                shutil.rmtree(self.workdir, ignore_errors=True)
        return False

    # -- another knotd on the same simulator

    def module_options(self, module=None):
        """mod-k8s options pointing at the simulator, plus `module`."""
        options = {"kubeconfig": self.sim.path(self.kubeconfig)}
        options.update(module or {})
        return options

    def knotd(self, module=None, **options):
        """A Knotd (not started) whose mod-k8s watches this cluster's simulator."""
        return knotd.Knotd(module=self.module_options(module), **options)

    # -- what tests use

    @property
    def port(self):
        return self.server.port

    def query(self, qname, qtype="A", **options):
        return dig.query(self.server, qname, qtype, **options)

    def stats(self, zone="cluster.local."):
        return stats(self.server, zone)

    def log_text(self):
        return self.server.log_text() if self.server else ""

    def log_tail(self, lines=30):
        return self.server.log_tail(lines) if self.server else ""

    def is_running(self):
        return self.server is not None and self.server.is_running() and self.sim.alive()

    def knotc(self, *args, **kw):
        return self.server.knotc(*args, **kw)

    def eventually(self, check, timeout=10, interval=0.02):
        """Calls check() until it returns without raising AssertionError, or fails after timeout."""
        return testing.eventually(check, timeout, interval)

    def expect_answer(self, qname, qtype, rcode, rdata=None, timeout=10, **options):
        """Waits until qname/qtype answers rcode (and exactly the rdata set, when given)."""
        def check():
            answer = self.query(qname, qtype, **options)
            testing.expect(answer.rcode == rcode,
                           f"{qname} {qtype}: expected {rcode}, got {answer.summary()}")
            if rdata is not None:
                got = sorted(rr.rdata for rr in answer.answer if rr.type == qtype)
                testing.expect(got == sorted(rdata),
                               f"{qname} {qtype}: expected {sorted(rdata)}, got {got}")
            return answer
        return self.eventually(check, timeout)
