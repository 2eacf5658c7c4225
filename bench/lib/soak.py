"""The soak run (`make soak`, bench/soak): hours of churn, faults and load; memory must stay flat.

The cluster is the throughput runs' (world.GENERATE and the dual-stack
manifest) plus a namespace `soak` whose objects churn at RATE changes per
second for the whole run, each change one write through the simulator's
control API, in a fixed cycle of ten: four EndpointSlice replacements (one of
HEADLESS headless services gets 1-4 new addresses out of its own /24), three
pod creations or deletions (one of PODS pods, each with a fixed address) and
three service creations or deletions (one of SERVICES ClusterIP services,
each with a fixed address). The pools are bounded, so a module that keeps
nothing it should not needs no more memory at the end than after warm-up.

Every FAULT_PERIOD seconds one fault, in turn: an outage of OUTAGE seconds
(connections refused and dropped), the watch history compacted and the
streams ended (every watch resumes with a too-old resourceVersion: 410 Gone,
relist), a burst of THROTTLE 429s (Retry-After 1 s) with the streams ended so
that the reconnections meet them, and a token rotation (the old token
refused; the module reads the new one from its kubeconfig's tokenFile) with
the streams ended.

Meanwhile dnsperf sends half of the capacity measured just before (dnsperf
unthrottled for CAPACITY_SECONDS on the same query file: every mix of the
throughput runs plus the churning names), pinned to the CPU knotd does not use.

Every INTERVAL seconds a sampler records knotd's VmRSS (/proc) and the
module's counters (table-bytes, records, connected, resyncs, SERVFAIL and
not-ready answers). Every round a checker queries SAMPLE churning names of
each kind (service A, headless A, pod A) and compares each answer with the
object the simulator holds at that moment (GET of the control API): an
answer that still differs after SETTLE seconds of re-reading and re-querying,
while every watch streamed all along (`connected`, no watch restart, no
relist), is wrong. Rounds during an outage or while the module is not
connected after a fault (backing off, relisting) check nothing, and an answer
that differed while a watch restarted during its check is left out
(unsettled): the module serves the last state it knew then, by design. Faults
come after a round's checks. SERVFAILs count from the first sync on (the
module's counters of both zones, and dnsperf's own count).

Memory verdict: mean RSS of the last WINDOW against the mean RSS of the
WINDOW after WARMUP; flat when within FLAT (5 %). For one hour both are
10 minutes; other durations scale them (duration / 6) and say so.
"""

import ipaddress
import json
import os
import random
import shutil
import subprocess
import threading
import time

from common import BenchError, SERVER_CPU, pin, proc_status, progress
import dig
import dnsperf
import servers
import simctl
import world

GENERATE = world.GENERATE
RATE = 100                 # changes per second
HEADLESS = 400             # headless services whose slices change (each every ~10 s)
PODS = 600                 # pods created and deleted in turn (each every ~20 s)
SERVICES = 600             # ClusterIP services created and deleted in turn
NS = "soak"
INTERVAL = 10              # seconds between samples and rounds
SAMPLE = 10                # names checked per kind per round
SETTLE = 10                # seconds an answer may lag the simulator before it is wrong
FAULT_PERIOD = 60          # seconds between faults
OUTAGE = 5                 # seconds of an outage
THROTTLE = 10              # 429s of a burst
CAPACITY_SECONDS = 5
QUERIES_PER_MIX = 2000
FLAT = 0.05
FAULTS = ("outage", "gone", "throttle", "token")
MODULE_OPTIONS = {"pods": "verified", "ttl": world.TTL, "autopath": True}


# -- the churning objects

def _svc_ip(n):
    return str(ipaddress.IPv4Address("10.62.0.0") + n + 1)


def _pod_ip(n):
    return str(ipaddress.IPv4Address("10.60.0.0") + n + 1)


def _endpoint_ip(n, host):
    return str(ipaddress.IPv4Address("10.64.0.0") + n * 256 + host)


def _service(n):
    ip = _svc_ip(n)
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": f"soak-s-{n}", "namespace": NS},
            "spec": {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip],
                     "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                     "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}]}}


def _headless(n):
    svc = _service(n)
    svc["metadata"]["name"] = f"soak-h-{n}"
    svc["spec"].update(clusterIP="None", clusterIPs=["None"])
    return svc


def _slice(n, hosts):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"soak-h-{n}-abcde", "namespace": NS,
                         "labels": {"kubernetes.io/service-name": f"soak-h-{n}",
                                    "endpointslice.kubernetes.io/managed-by":
                                        "endpointslice-controller.k8s.io"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [_endpoint_ip(n, h)],
                           "conditions": {"ready": True, "serving": True, "terminating": False}}
                          for h in sorted(hosts)],
            "ports": [{"name": "http", "protocol": "TCP", "port": 8080}]}


def _pod(n):
    ip = _pod_ip(n)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"soak-p-{n}", "namespace": NS},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}}


def initial_objects():
    """The namespace, every headless service with its slice, half of the pods and services."""
    rng = random.Random(1)
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}]
    for n in range(HEADLESS):
        items += [_headless(n), _slice(n, rng.sample(range(1, 251), 3))]
    items += [_pod(n) for n in range(0, PODS, 2)]
    items += [_service(n) for n in range(0, SERVICES, 2)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}


def _dashed(ip):
    return ip.replace(".", "-")


def churn_queries():
    """dnsperf lines for the churning names (they come and go: NOERROR and NXDOMAIN)."""
    lines = [f"soak-s-{n}.{NS}.svc.cluster.local A" for n in range(SERVICES)]
    lines += [f"soak-h-{n}.{NS}.svc.cluster.local A" for n in range(HEADLESS)]
    lines += [f"{_dashed(_pod_ip(n))}.{NS}.pod.cluster.local A" for n in range(PODS)]
    return lines


class Churn(threading.Thread):
    """Writes RATE changes per second to the simulator until stop() (the cycle of ten above)."""

    def __init__(self, sim, rate=RATE):
        super().__init__(daemon=True)
        self.sim = sim
        self.rate = rate
        self.rng = random.Random(2)
        self.pods = set(range(0, PODS, 2))
        self.services = set(range(0, SERVICES, 2))
        self.counts = {"slices": 0, "pods": 0, "services": 0}
        self.late = 0
        self.errors = []
        self.started = self.ended = None
        self._halt = threading.Event()

    def _apply(self, obj):
        # Stored as given, without the simulator's (slow) checks.
        self.sim.apply(obj, validate=False)

    def _remove(self, resource, name):
        self.sim.delete(resource, NS, name)

    def change(self, i):
        step = i % 10
        if step < 4:
            n = self.rng.randrange(HEADLESS)
            self._apply(_slice(n, self.rng.sample(range(1, 251), self.rng.randint(1, 4))))
            self.counts["slices"] += 1
        elif step < 7:
            n = self.rng.randrange(PODS)
            if n in self.pods:
                self._remove("pods", f"soak-p-{n}")
                self.pods.discard(n)
            else:
                self._apply(_pod(n))
                self.pods.add(n)
            self.counts["pods"] += 1
        else:
            n = self.rng.randrange(SERVICES)
            if n in self.services:
                self._remove("services", f"soak-s-{n}")
                self.services.discard(n)
            else:
                self._apply(_service(n))
                self.services.add(n)
            self.counts["services"] += 1

    def run(self):
        self.started = time.monotonic()
        i = 0
        while not self._halt.is_set():
            wait = self.started + i / self.rate - time.monotonic()
            if wait > 0:
                self._halt.wait(wait)
            elif wait < -1:
                self.late += 1
            try:
                self.change(i)
            except (OSError, BenchError, simctl.SimulatorError) as e:
                self.errors.append(str(e))
                if len(self.errors) > 100:
                    return
            i += 1
        self.ended = time.monotonic()

    def stop(self):
        self._halt.set()
        self.join(timeout=30)
        self.ended = self.ended or time.monotonic()

    def total(self):
        return sum(self.counts.values())


# -- what the simulator holds, what DNS answers

def _get(sim, resource, name):
    try:
        return sim.get_object(resource, NS, name)
    except simctl.SimulatorError as e:
        if "404" in str(e):
            return None
        raise


def expected(sim, kind, n):
    """(qname, rcode, sorted addresses) DNS must answer for a churning object, from the simulator."""
    if kind == "service":
        obj = _get(sim, "services", f"soak-s-{n}")
        qname = f"soak-s-{n}.{NS}.svc.cluster.local."
        return qname, ("NOERROR", [_svc_ip(n)]) if obj else ("NXDOMAIN", [])
    if kind == "pod":
        obj = _get(sim, "pods", f"soak-p-{n}")
        qname = f"{_dashed(_pod_ip(n))}.{NS}.pod.cluster.local."
        return qname, ("NOERROR", [_pod_ip(n)]) if obj else ("NXDOMAIN", [])
    obj = _get(sim, "endpointslices", f"soak-h-{n}-abcde")
    qname = f"soak-h-{n}.{NS}.svc.cluster.local."
    ips = sorted({a for ep in (obj or {}).get("endpoints") or []
                  if (ep.get("conditions") or {}).get("ready") is not False
                  for a in ep["addresses"][:1]}, key=ipaddress.IPv4Address)
    return qname, ("NOERROR", ips)


def answered(server, qname):
    try:
        answer = dig.query(server, qname, "A")
    except dig.QueryError as e:
        return ("no answer", [str(e)[:60]])
    ips = sorted((rr.rdata for rr in answer.answer if rr.type == "A"), key=ipaddress.IPv4Address)
    return (answer.rcode, ips)


def watch_state(server):
    """(connected, watch restarts, relists) of the module (counters refreshed once a second)."""
    counters = servers.stats(server)
    return (counters.get("connected"), counters.get("watch-restarts"), counters.get("resyncs"))


def check_round(sim, server, samples):
    """Checks [(kind, n)] against the simulator; returns (checked, wrong [why], unsettled).

    Every answer is compared with the object the simulator holds then; those that differ
    are re-read and re-queried until they agree or SETTLE seconds passed. One still
    different is wrong if every watch streamed all along (connected, no watch restarted,
    no relist), else unsettled: the module lost a watch meanwhile and serves what it knew.
    """
    before = watch_state(server)
    deadline = time.monotonic() + SETTLE
    pending = list(samples)
    while True:
        differ = []
        for kind, n in pending:
            qname, want = expected(sim, kind, n)
            got = answered(server, qname)
            if got != want:
                differ.append((kind, n, f"{qname}: the simulator holds {want}, DNS answers {got}"))
        pending = [(kind, n) for kind, n, _ in differ]
        if not differ or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    after = watch_state(server)
    if differ and (after != before or after[0] != 1):
        return len(samples) - len(differ), [], len(differ)
    return len(samples), [why for _, _, why in differ], 0


# -- sampling

def servfail_count(server, cluster=None):
    """SERVFAIL answers of the module so far, both zones (not-ready ones are SERVFAIL too)."""
    counters = (cluster or servers.stats(server), servers.stats(server, "in-addr.arpa."))
    return sum(c.get(k, 0) for c in counters for k in ("queries[servfail]", "queries[not-ready]"))


class Sampler(threading.Thread):
    """Every INTERVAL seconds: knotd's RSS and the module's counters."""

    def __init__(self, server, started, interval=INTERVAL):
        super().__init__(daemon=True)
        self.server = server
        self.started = started
        self.interval = interval
        self.rows = []
        self.error = None
        self._halt = threading.Event()

    def sample(self):
        cluster = servers.stats(self.server)
        bad = servfail_count(self.server, cluster)
        return {"t": round(time.monotonic() - self.started, 1),
                "rss": proc_status(self.server.pid)["VmRSS"],
                "table_bytes": cluster.get("table-bytes", 0),
                "records": cluster.get("records", 0),
                "connected": cluster.get("connected", 0),
                "resyncs": cluster.get("resyncs", 0),
                "watch_restarts": cluster.get("watch-restarts", 0),
                "servfail_total": bad}

    def run(self):
        k = 0
        while not self._halt.is_set():
            wait = self.started + k * self.interval - time.monotonic()
            if wait > 0 and self._halt.wait(wait):
                break
            try:
                self.rows.append(self.sample())
            except Exception as e:  # knotd died: the run reports it
                self.error = str(e)
                return
            k += 1

    def stop(self):
        self._halt.set()
        self.join(timeout=30)


# -- faults

def fault(sim, kind):
    """Starts one fault; returns the seconds it lasts (0: a moment)."""
    if kind == "outage":
        sim.outage(OUTAGE)
        return OUTAGE
    if kind == "gone":
        sim.compact()
    elif kind == "throttle":
        sim.too_many_requests(count=THROTTLE, retry_after=1)
    elif kind == "token":
        sim.rotate_token()
    sim.cut_streams("clean")
    return 0


# -- the run

def write_query_file(sim, path):
    cluster = world.World(sim)
    rng = random.Random(3)
    lines = []
    for mix, names in cluster.queries().items():
        lines += [f"{qname} {qtype}" for qname, qtype in names[:QUERIES_PER_MIX]]
    lines += churn_queries()
    rng.shuffle(lines)
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines)


def run(workdir, duration, fault_period=FAULT_PERIOD, interval=INTERVAL, rate=RATE):
    """The soak; returns its results (see summarize())."""
    manifests = world.write_manifests(os.path.join(workdir, "manifests"))
    with open(os.path.join(manifests, "soak.json"), "w", encoding="utf-8") as f:
        json.dump(initial_objects(), f)
    sim = simctl.Simulator(os.path.join(workdir, "apisim"), manifests=[manifests], generate=GENERATE)
    sim.start()
    options = dict(MODULE_OPTIONS, kubeconfig=sim.kubeconfig_tokenfile)
    server = servers.Server(module=options, zones=("cluster.local.", "in-addr.arpa."))
    out = {"duration_s": duration, "interval_s": interval, "rate": rate,
           "fault_period_s": fault_period, "generate": GENERATE,
           "pools": {"headless": HEADLESS, "pods": PODS, "services": SERVICES}}
    dnsperf_proc = None
    try:
        query_file = os.path.join(workdir, "queries.txt")
        out["query_names"] = write_query_file(sim, query_file)
        server.start()
        servers.wait_ready(server)
        pin(server.pid, SERVER_CPU)
        # SERVFAILs count from here on (the capacity run included).
        servfail_at_sync = servfail_count(server)
        progress("soak: synchronized; measuring the query capacity")
        capacity = dnsperf.run(server.port, query_file, seconds=CAPACITY_SECONDS)["qps"]
        out["capacity_qps"] = round(capacity)
        out["offered_qps"] = round(capacity / 2)
        progress(f"soak: capacity {capacity:.0f} QPS; {duration} s at {capacity / 2:.0f} QPS, "
                 f"{rate} changes/s, a fault every {fault_period} s")

        dnsperf_out = open(os.path.join(workdir, "dnsperf.out"), "w+", encoding="utf-8")
        dnsperf_proc = subprocess.Popen(
            dnsperf.command(server.port, query_file, seconds=duration, qps=capacity / 2),
            stdout=dnsperf_out, stderr=subprocess.STDOUT)
        started = time.monotonic()
        churn = Churn(sim, rate)
        sampler = Sampler(server, started, interval)
        churn.start()
        sampler.start()
        rounds, faults, wrong = [], [], []
        outage_until = -1e9
        k = 1
        while True:
            at = started + k * interval
            if at > started + duration:
                break
            if at > time.monotonic():
                time.sleep(at - time.monotonic())
            if not server.is_running():
                raise BenchError("knotd exited during the soak:\n" + server.log_tail(20))
            t = time.monotonic() - started
            entry = {"t": round(t, 1), "checked": 0, "wrong": 0, "unsettled": 0, "skipped": None}
            if time.monotonic() < outage_until + 1:
                entry["skipped"] = "outage"
            elif watch_state(server)[0] != 1:
                # Backing off or relisting after a fault: the last state it knew, by design.
                entry["skipped"] = "reconnecting"
            else:
                rng = random.Random(k)
                samples = [(kind, n) for kind, pool in (("service", SERVICES),
                                                        ("headless", HEADLESS), ("pod", PODS))
                           for n in rng.sample(range(pool), SAMPLE)]
                checked, whys, unsettled = check_round(sim, server, samples)
                entry.update(checked=checked, wrong=len(whys), unsettled=unsettled)
                for why in whys:
                    wrong.append({"t": round(t, 1), "what": why})
                    progress(f"soak: WRONG: {why}")
            # The fault comes after the round's checks: the next round sees its effect.
            t_end = time.monotonic() - started
            if fault_period and t_end >= len(faults) * fault_period + fault_period \
                    and t_end < duration - interval:
                kind = FAULTS[len(faults) % len(FAULTS)]
                lasts = fault(sim, kind)
                if kind == "outage":
                    outage_until = time.monotonic() + lasts
                faults.append({"t": round(t_end, 1), "kind": kind})
                entry["fault"] = kind
                progress(f"soak: {t_end:.0f} s: fault {kind}")
            rounds.append(entry)
            if k % max(1, 60 // interval) == 0:
                last = sampler.rows[-1] if sampler.rows else {}
                progress(f"soak: {t:.0f} s: RSS {last.get('rss', 0) / 2**20:.1f} MiB, table "
                         f"{last.get('table_bytes', 0) / 2**20:.2f} MiB, {churn.total()} changes, "
                         f"{sum(r['checked'] for r in rounds)} answers checked, {len(wrong)} wrong")
            # A round that overran its slot: the next starts at the next slot, none is crowded in.
            k = max(k + 1, int((time.monotonic() - started) // interval) + 1)
        churn.stop()
        sampler.stop()
        remaining = started + duration + 30 - time.monotonic()
        try:
            dnsperf_proc.wait(timeout=max(5, remaining))
        except subprocess.TimeoutExpired:
            dnsperf_proc.kill()
            dnsperf_proc.wait()
        dnsperf_out.seek(0)
        text = dnsperf_out.read()
        dnsperf_out.close()
        try:
            load = dnsperf.parse(text)
        except BenchError as e:
            load = {"error": str(e)[:300]}
        if sampler.error:
            raise BenchError(f"sampling failed: {sampler.error}")
        churn_seconds = (churn.ended or time.monotonic()) - churn.started
        out.update({
            "samples": sampler.rows,
            "rounds": rounds,
            "faults": faults,
            "wrong": wrong,
            "servfail_at_sync": servfail_at_sync,
            "churn": {"changes": churn.total(), "by_kind": dict(churn.counts),
                      "achieved_rate": round(churn.total() / churn_seconds, 1),
                      "late": churn.late, "errors": churn.errors[:5],
                      "error_count": len(churn.errors)},
            "dnsperf": load,
            "final": servers.stats(server),
        })
        return out
    finally:
        if dnsperf_proc is not None and dnsperf_proc.poll() is None:
            dnsperf_proc.kill()
            dnsperf_proc.wait()
        servers.stop(server)
        sim.stop()


# -- the verdict and the report

def windows(duration):
    """(warm-up end, window length) in seconds: 10 min each in an hour, duration / 6 otherwise."""
    window = duration / 6
    return window, window


def summarize(results):
    """Adds the memory verdict and the totals to results; returns it."""
    samples = results["samples"]
    duration = results["duration_s"]
    warmup, window = windows(duration)
    first = [s["rss"] for s in samples if warmup <= s["t"] < warmup + window]
    last = [s["rss"] for s in samples if s["t"] >= duration - window]
    if not first or not last:
        raise BenchError("too few samples for the memory verdict (a longer --duration)")
    first_mean, last_mean = sum(first) / len(first), sum(last) / len(last)
    drift = (last_mean - first_mean) / first_mean
    servfail = samples[-1]["servfail_total"] - results["servfail_at_sync"]
    rcodes = results["dnsperf"].get("rcodes", {})
    results["verdict"] = {
        "warmup_s": round(warmup), "window_s": round(window),
        "scaled": duration != 3600,
        "rss_after_warmup": round(first_mean), "rss_last": round(last_mean),
        "drift": round(drift, 4), "flat": abs(drift) <= FLAT,
        "checked": sum(r["checked"] for r in results["rounds"]),
        "rounds_checked": sum(1 for r in results["rounds"] if r["skipped"] is None),
        "rounds": len(results["rounds"]),
        "wrong": len(results["wrong"]),
        "unsettled": sum(r.get("unsettled", 0) for r in results["rounds"]),
        "rounds_outage": sum(1 for r in results["rounds"] if r["skipped"] == "outage"),
        "rounds_reconnecting": sum(1 for r in results["rounds"] if r["skipped"] == "reconnecting"),
        "disconnected_s": disconnected(results),
        "servfail_module": servfail,
        "servfail_dnsperf": rcodes.get("SERVFAIL", 0),
    }
    v = results["verdict"]
    v["pass"] = v["flat"] and v["wrong"] == 0 and v["servfail_module"] == 0 \
        and v["servfail_dnsperf"] == 0
    return results


def disconnected(results):
    """{fault kind: [seconds until the samples saw connected = 1 again]} (0: never seen down)."""
    out = {}
    samples = results["samples"]
    for f in results["faults"]:
        after = [s for s in samples if s["t"] > f["t"]]
        back = next((s["t"] for s in after if s["connected"] == 1), None)
        if back is None:
            # Still down when the run (or the next fault) ended: a lower bound.
            out.setdefault(f["kind"], []).append(f"> {round(samples[-1]['t'] - f['t'])}")
            continue
        down = any(s["connected"] != 1 for s in after if s["t"] < back)
        out.setdefault(f["kind"], []).append(round(back - f["t"]) if down else 0)
    return out


def _range(values):
    numbers = [v for v in values if isinstance(v, int)]
    bounds = [v for v in values if not isinstance(v, int)]
    parts = []
    if numbers:
        parts.append(f"{min(numbers)}-{max(numbers)} s" if min(numbers) != max(numbers)
                     else f"{numbers[0]} s")
    if bounds:
        parts.append(f"{len(bounds)}x not back by the end ({', '.join(bounds)} s)")
    return ", ".join(parts) or "-"


def _mib(n):
    return f"{n / 2**20:.1f} MiB"


def _clock(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _duration_text(seconds):
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds / 60:g} min"


def markdown(results, plot_path="bench/soak-rss.png"):
    """The BENCHMARKS.md section: the summary, a table per period, the plot."""
    v = results["verdict"]
    samples = results["samples"]
    duration = results["duration_s"]
    churn = results["churn"]
    load = results["dnsperf"]
    counts = {}
    for f in results["faults"]:
        counts[f["kind"]] = counts.get(f["kind"], 0) + 1
    rss = [s["rss"] for s in samples]
    table = [s["table_bytes"] for s in samples]
    scaled = (f" (windows scaled for a {_duration_text(duration)} run: warm-up and windows of "
              f"{v['window_s']} s, duration / 6)") if v["scaled"] else ""
    lines = [
        f"Soak of {_duration_text(duration)} (`make soak`, bench/soak; how it runs: bench/lib/soak.py). "
        f"Verdict: **{'pass' if v['pass'] else 'FAIL'}**.",
        "",
        "| | |",
        "|---|---|",
        f"| Churn | {churn['changes']:,} changes at {churn['achieved_rate']}/s "
        f"(slices {churn['by_kind']['slices']:,}, pods {churn['by_kind']['pods']:,}, services "
        f"{churn['by_kind']['services']:,}); {churn['error_count']} failed writes |",
        f"| Faults | {counts.get('outage', 0)} outages of {OUTAGE} s, {counts.get('gone', 0)} "
        f"relists after 410, {counts.get('throttle', 0)} bursts of {THROTTLE} 429s, "
        f"{counts.get('token', 0)} token rotations (one every {results['fault_period_s']} s) |",
        f"| Load | dnsperf at {results['offered_qps']:,} QPS (half of the {results['capacity_qps']:,} "
        f"measured): {load.get('completed', 0):,} answered, {load.get('lost', 0):,} lost, "
        + ", ".join(f"{k} {n:,}" for k, n in sorted(load.get('rcodes', {}).items())) + " |",
        f"| RSS | start {_mib(rss[0])}, min {_mib(min(rss))}, max {_mib(max(rss))}, "
        f"end {_mib(rss[-1])} |",
        f"| Memory flat (≤ {FLAT:.0%}) | after warm-up {_mib(v['rss_after_warmup'])}, last "
        f"{_mib(v['rss_last'])}: {v['drift']:+.2%}, **{'flat' if v['flat'] else 'NOT flat'}**{scaled} |",
        f"| Table bytes | start {_mib(table[0])}, min {_mib(min(table))}, max {_mib(max(table))}, "
        f"end {_mib(table[-1])} |",
        f"| Answers checked | {v['checked']:,} in {v['rounds_checked']} of {v['rounds']} rounds "
        f"(not checked: {v['rounds_outage']} rounds during an outage, {v['rounds_reconnecting']} "
        f"while the module was not connected after a fault; {v['unsettled']} answers that "
        f"differed while a watch restarted during their check left out), **{v['wrong']} wrong** |",
        f"| Not connected after a fault | " + "; ".join(
            f"{kind} {_range(secs)}" for kind, secs in sorted(v["disconnected_s"].items()))
        + " (seconds from the fault to `connected` = 1, by the 10-s samples) |",
        f"| SERVFAIL after the first sync | module {v['servfail_module']}, dnsperf "
        f"{v['servfail_dnsperf']} |",
        f"| Relists, watch restarts | {results['final'].get('resyncs', 0)}, "
        f"{results['final'].get('watch-restarts', 0)} |",
        "",
        "| Time | RSS | Table bytes | Records | Answers checked | Wrong | SERVFAIL | Faults |",
        "|---|---|---|---|---|---|---|---|",
    ]
    step = max(results["interval_s"], duration / 12)
    start = 0.0
    base = results["servfail_at_sync"]
    while start < duration:
        end = start + step
        final = end >= duration
        inside = [s for s in samples if start <= s["t"] < end or (final and s["t"] >= end)] \
            or samples[-1:]
        rounds = [r for r in results["rounds"] if start <= r["t"] < end or (final and r["t"] >= end)]
        faults = [f["kind"] for f in results["faults"]
                  if start <= f["t"] < end or (final and f["t"] >= end)]
        last = inside[-1]
        lines.append(
            f"| {_clock(end)} | {_mib(last['rss'])} | {_mib(last['table_bytes'])} | "
            f"{last['records']:,} | {sum(r['checked'] for r in rounds)} | "
            f"{sum(r['wrong'] for r in rounds)} | {last['servfail_total'] - base} | "
            f"{', '.join(faults) or '-'} |")
        start = end
    lines += ["", f"![knotd RSS over the soak]({plot_path})", ""]
    return "\n".join(lines)


def text(results):
    v = results["verdict"]
    scaled = f" (windows scaled: {v['window_s']} s each)" if v["scaled"] else ""
    return (f"soak: RSS after warm-up {_mib(v['rss_after_warmup'])}, last window "
            f"{_mib(v['rss_last'])}, drift {v['drift']:+.2%}: "
            f"{'flat' if v['flat'] else 'NOT FLAT'} (limit {FLAT:.0%}){scaled}\n"
            f"soak: {v['checked']} answers checked, {v['wrong']} wrong; SERVFAIL after first sync: "
            f"module {v['servfail_module']}, dnsperf {v['servfail_dnsperf']}\n"
            f"soak: {'PASS' if v['pass'] else 'FAIL'}")


def plot(results, out_dir):
    """soak.tsv and soak-rss.png (gnuplot); returns the PNG's path, or None without gnuplot."""
    tsv = os.path.join(out_dir, "soak.tsv")
    with open(tsv, "w", encoding="ascii") as f:
        f.write("# minutes\trss_mib\ttable_mib\trecords\n")
        for s in results["samples"]:
            f.write(f"{s['t'] / 60:.3f}\t{s['rss'] / 2**20:.2f}\t{s['table_bytes'] / 2**20:.3f}\t"
                    f"{s['records']}\n")
    if shutil.which("gnuplot") is None:
        progress("soak: gnuplot not found (Debian package gnuplot-nox): no plot")
        return None
    v = results["verdict"]
    png = os.path.join(out_dir, "soak-rss.png")
    w0, w1 = v["warmup_s"] / 60, (v["warmup_s"] + v["window_s"]) / 60
    l0, l1 = (results["duration_s"] - v["window_s"]) / 60, results["duration_s"] / 60
    arrows = "".join(f'set arrow from {f["t"] / 60:.3f}, graph 0 to {f["t"] / 60:.3f}, graph 0.06 '
                     f'nohead lc rgb "#cc4444"\n' for f in results["faults"])
    script = f"""set terminal pngcairo size 1000,500 font ",10"
set output "{png}"
set title "knotd with mod-k8s: RSS over the soak ({_duration_text(results['duration_s'])}, {results['rate']} changes/s, a fault at each red mark)"
set xlabel "minutes"
set ylabel "MiB"
set key right center box opaque
set grid
set yrange [0:*]
set xrange [0:{results['duration_s'] / 60:.3f}]
set object 1 rect from {w0:.3f}, graph 0 to {w1:.3f}, graph 1 fc rgb "#ddeeff" fs solid 0.5 noborder behind
set object 2 rect from {l0:.3f}, graph 0 to {l1:.3f}, graph 1 fc rgb "#ddeeff" fs solid 0.5 noborder behind
{arrows}plot "{tsv}" using 1:2 with lines lw 2 title "RSS", \\
     "{tsv}" using 1:3 with lines lw 2 title "table bytes", \\
     {v['rss_after_warmup'] / 2**20:.2f} with lines dt 2 lc rgb "#888888" title "mean RSS after warm-up (shaded windows compared)"
"""
    gp = os.path.join(out_dir, "soak.gp")
    with open(gp, "w", encoding="utf-8") as f:
        f.write(script)
    result = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, check=False)
    if result.returncode != 0:
        raise BenchError(f"gnuplot failed: {result.stdout.strip()}")
    return png
