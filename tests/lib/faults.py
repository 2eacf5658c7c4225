"""Helpers for the tests of mod-k8s under API faults (tests/integration/faults/).

    from faults import (Watch, begin_outage, end_outage, endpoint_slice, expect_addresses,
                        service, wait_counter)

    with Watch(c.server, [("web.shop.svc.cluster.local.", "A")]) as watch:
        begin_outage(c.sim)                     # queried in a loop meanwhile
        wait_counter(c.server, "connected", lambda v: v == 0)
        c.sim.apply([service("shop", "late", "10.96.70.1"),
                     endpoint_slice("shop", "late", ["10.244.7.1"])])
    watch.expect_unchanged()                    # the last known state was served throughout
    end_outage(c.sim)
    expect_addresses(c.server, "late.shop.svc.cluster.local.", ["10.96.70.1"])

Objects are written the way the cluster's controllers write them (as the
simulator's control API takes them); the helpers that wait poll with a
deadline, never sleep a fixed time. Counters come from `knotc zone-stats`,
which knotd updates about once a second: wait for a counter's value rather
than read it right after a change.
"""

import datetime
import os
import threading
import time
import urllib.parse

import cluster
import dig
import testing
import valgrind


# ---------------------------------------------------------------------------
# Objects


def namespace(name):
    """A Namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def service(ns, name, cluster_ip, ports=(("http", 80),), annotations=None):
    """A ClusterIP Service with one IPv4 cluster IP and named TCP ports [(name, port)]."""
    meta = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"type": "ClusterIP", "clusterIP": cluster_ip, "clusterIPs": [cluster_ip],
                     "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                     "ports": [{"name": p, "protocol": "TCP", "port": n, "targetPort": n}
                               for p, n in ports]}}


def headless_service(ns, name, ports=(("http", 80),)):
    """A headless Service: its names answer the ready endpoints' addresses."""
    svc = service(ns, name, "None", ports)
    svc["spec"]["clusterIPs"] = ["None"]
    return svc


def external_name_service(ns, name, target):
    """An ExternalName Service: its name is a CNAME to target."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"type": "ExternalName", "externalName": target}}


def pod(ns, name, ip=None):
    """A Pod with one container; running with one IPv4 address if ip is given."""
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
           "spec": {"containers": [{"name": "app", "image": "docker.io/library/busybox:1"}]}}
    if ip:
        obj["status"] = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}
    return obj


def trigger_time(when=None):
    """An endpoints.kubernetes.io/last-change-trigger-time value (RFC 3339, seconds, UTC)."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def endpoint_slice(ns, service_name, addresses, name=None, ready=True, trigger=None):
    """An EndpointSlice of a service with one ready (or not) endpoint per IPv4 address.

    trigger: the last-change-trigger-time annotation (a trigger_time() value), or None.
    """
    meta = {"name": name or f"{service_name}-abcde", "namespace": ns,
            "labels": {"kubernetes.io/service-name": service_name,
                       "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}}
    if trigger:
        meta["annotations"] = {"endpoints.kubernetes.io/last-change-trigger-time": trigger}
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta,
            "addressType": "IPv4",
            "endpoints": [{"addresses": [a], "conditions": {"ready": ready, "serving": ready,
                                                            "terminating": False}}
                          for a in addresses],
            "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]}


def service_import(ns, name, ips, ports=(("http", 80),)):
    """A ClusterSetIP ServiceImport (multicluster.x-k8s.io/v1alpha1)."""
    return {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"type": "ClusterSetIP", "ips": list(ips),
                     "ports": [{"name": p, "protocol": "TCP", "port": n} for p, n in ports]}}


def begin_outage(sim):
    """The API server refuses connections and drops open ones until end_outage()."""
    sim.outage(3600)


def end_outage(sim):
    """Ends an outage now: a new outage of 0 s moves the end of the current one to now."""
    sim.outage(0)


def unwatched_write(sim, name):
    """A write the module does not see: it moves the API's resourceVersion past the module's."""
    sim.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
               "spec": {"containers": [{"name": "main", "image": "busybox"}]}})


def api_items(sim, path):
    """The items of a LIST of the simulator's API (what a fresh client would read)."""
    response = sim.get(path)
    testing.expect(response.status == 200, f"GET {path}: HTTP {response.status}")
    return response.json()["items"] or []


# ---------------------------------------------------------------------------
# Waiting


def wait_for(condition, what, timeout=20, interval=0.05):
    """Polls condition() until it is true; fails naming `what` after timeout seconds.

    Returns the seconds it took.
    """
    started = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - started
        if time.monotonic() - started > valgrind.scaled(timeout):
            raise testing.Failure(f"{what}: not true after {valgrind.scaled(timeout):g} s")
        time.sleep(interval)


def age_watches(sim, count):
    """Waits until `count` watches are open and then 1 s more.

    A watch that ends younger than 1 s without an event is a "very short watch", which
    the module (as client-go) retries with a backoff and a relist instead of resuming it.
    """
    wait_for(lambda: sim.open_watches() >= count, f"{count} open watches")
    opened = time.monotonic()
    wait_for(lambda: time.monotonic() - opened > 1.1, "the watches to be older than 1 s")


def counter(server, name, zone="cluster.local."):
    """One mod-k8s counter of a zone ("connected", "api-errors[network]"); 0 when knotc omits it."""
    return cluster.stats(server, zone).get(name, 0)


def wait_counter(server, name, check, what=None, timeout=20, zone="cluster.local."):
    """Waits until check(value of the counter) is true; returns the value."""
    box = []

    def condition():
        box[:] = [counter(server, name, zone)]
        return check(box[0])
    try:
        # knotc logs every call: a slower poll keeps knotd's log readable.
        wait_for(condition, what or name, timeout, interval=0.25)
    except testing.Failure as e:
        raise testing.Failure(f"{e} (last value {box[0] if box else None})") from None
    return box[0]


def log_lines(server, pattern, after=0):
    """knotd log lines (from line number `after`) that contain `pattern`."""
    lines = server.log_text().splitlines()[after:]
    return [line for line in lines if pattern in line]


def log_mark(server):
    """The current number of knotd log lines, for log_lines(after=...)."""
    return len(server.log_text().splitlines())


def wait_log(server, pattern, after=0, timeout=20):
    """Waits until a knotd log line (from line `after`) contains `pattern`; returns the first."""
    found = []
    wait_for(lambda: found.extend(log_lines(server, pattern, after)) or found,
             f"a log line with {pattern!r}", timeout)
    return found[0]


def addresses(server, qname, qtype="A", **options):
    """(rcode, sorted rdata of qtype) of one query (options as for dig.query, e.g. tcp=True)."""
    answer = dig.query(server, qname, qtype, **options)
    return answer.rcode, sorted(rr.rdata for rr in answer.answer if rr.type == qtype)


def expect_addresses(server, qname, expected, qtype="A", timeout=20, **options):
    """Waits until qname answers exactly `expected` (a list of rdata; [] means NXDOMAIN)."""
    want = ("NOERROR", sorted(expected)) if expected else ("NXDOMAIN", [])
    got = []

    def condition():
        got[:] = [addresses(server, qname, qtype, **options)]
        return got[0] == want
    try:
        return wait_for(condition, f"{qname} {qtype} answers {want}", timeout)
    except testing.Failure as e:
        raise testing.Failure(f"{e}; last answer {got[0] if got else None}") from None


def snapshot(server, names):
    """{(qname, qtype): (rcode, rdata)} of each (qname, qtype) in names."""
    return {(qname, qtype): addresses(server, qname, qtype) for qname, qtype in names}


def objects_held(server, zone="cluster.local."):
    """The objects[...] counters of a zone (knotc omits the ones that are 0)."""
    return {k: v for k, v in cluster.stats(server, zone).items() if k.startswith("objects[")}


MCS_LABEL = "multicluster.kubernetes.io/service-name"
SOURCES = (  # objects[...] counter, API path, label selector (as the module's reflectors read them)
    ("namespaces", "/api/v1/namespaces", None),
    ("services", "/api/v1/services", None),
    ("endpointslices", "/apis/discovery.k8s.io/v1/endpointslices", "!" + MCS_LABEL),
    ("serviceimports", "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports", None),
    ("imported-endpointslices", "/apis/discovery.k8s.io/v1/endpointslices", MCS_LABEL),
)


def objects_in_api(sim, clusterset=True):
    """The objects[...] counters a module in sync with the simulator's API must show."""
    out = {}
    for name, path, selector in SOURCES:
        if not clusterset and name in ("serviceimports", "imported-endpointslices"):
            continue
        query = "?labelSelector=" + urllib.parse.quote(selector) if selector else ""
        count = len(api_items(sim, path + query))
        if count:
            out[f"objects[{name}]"] = count
    if clusterset:
        props = api_items(sim, "/apis/about.k8s.io/v1alpha1/clusterproperties")
        count = sum(1 for p in props if p["metadata"]["name"] == "cluster.clusterset.k8s.io")
        if count:
            out["objects[clusterproperties]"] = count
    return out


def expect_objects_match_api(server, sim, clusterset=True, timeout=20):
    """Waits until the module holds exactly as many objects per source as the API serves."""
    held = []

    def condition():
        held[:] = [objects_held(server)]
        return held[0] == objects_in_api(sim, clusterset)
    try:
        wait_for(condition, "objects held equal the API's", timeout)
    except testing.Failure:
        raise testing.Failure(f"objects held {held[0]}, the API serves "
                              f"{objects_in_api(sim, clusterset)}") from None


def start_knotd(c, module=None, zones=("cluster.local.", "in-addr.arpa."), ready=True,
                ready_zones=("cluster.local.",), **options):
    """Another knotd watching the cluster's simulator, started (and synchronized if ready)."""
    server = c.knotd(module=module, zones=zones, **options)
    server.start()
    try:
        if ready:
            cluster.wait_ready(server, ready_zones)
    except BaseException:
        server.stop()
        raise
    return server


def thread_count(server):
    """Threads of the knotd process now."""
    return len(os.listdir(f"/proc/{server.pid}/task"))


# ---------------------------------------------------------------------------
# Answers while a fault lasts


class Watch:
    """Queries names in a loop in a thread while a fault lasts; a context manager.

    Every answer is kept; expect_unchanged() fails if any answer differed from
    the one before the block (the last known state must be served throughout).
    """

    def __init__(self, server, names, interval=0.02):
        self.server = server
        self.names = list(names)
        self.interval = interval
        self.before = None
        self.answers = []
        self.errors = []
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        self.before = snapshot(self.server, self.names)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            for qname, qtype in self.names:
                try:
                    self.answers.append(((qname, qtype), addresses(self.server, qname, qtype)))
                except dig.QueryError as e:
                    self.errors.append(f"{qname} {qtype}: {e}")
            self._stop.wait(self.interval)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False

    def rounds(self):
        """How many times every name has been asked so far."""
        return len(self.answers) // max(1, len(self.names))

    def wait_rounds(self, more, timeout=30):
        """Waits until every name has been asked `more` times again (a loaded machine is slow)."""
        target = self.rounds() + more
        testing.eventually(lambda: testing.expect(
            self.rounds() >= target, f"{self.rounds()} query rounds in {timeout} s (wanted {target})"),
            timeout, 0.05)

    def expect_unchanged(self, minimum=1):
        """Fails unless every answer seen equals the one before, and at least `minimum` rounds ran."""
        testing.expect(not self.errors, "queries went unanswered: " + "; ".join(self.errors[:3]))
        rounds = self.rounds()
        testing.expect(rounds >= minimum, f"only {rounds} query rounds ran (wanted {minimum})")
        changed = [f"{q[0]} {q[1]}: {got} (before {self.before[q]})"
                   for q, got in self.answers if got != self.before[q]]
        testing.expect(not changed, f"{len(changed)} of {len(self.answers)} answers changed: "
                       + "; ".join(changed[:3]))

