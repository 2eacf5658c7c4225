"""The external-name fault scenarios of issue 24, mod-k8s's deployment beside CoreDNS's
(bench/coredns --faults; BENCHMARKS.md, "Beside CoreDNS: external names when upstreams fail").

For each scenario and each server, in turn: stub upstreams (tests/lib/stubdns.py) in the
scenario's state, the server started fresh against the real control plane, then for
SECONDS s at once:

- cluster names: dnsperf -Q 200 -v on kubernetes.default.svc.cluster.local. (the
  Service kube-apiserver itself makes), lost and p50/p99;
- external names: distinct names (never cached) at the scenario's rate, each
  outcome recorded: answered (NOERROR), SERVFAIL (or another rcode), or lost (no
  answer GRACE s after it was sent); failover is the time from the first external
  query to the first one from which every later one was answered within PROMPT
  (0 when all were, "never" when the last one was not).

The servers, both on CPU 0 (dnsperf and the external load on CPU 1):
- mod-k8s: packaging/kubernetes/knot.conf as shipped (tests/lib/shipped.py fills in
  the listen address, directories and `forward:`), kubeconfig to the real control plane;
- CoreDNS: the Corefile kubeadm installs (forward to the node's resolvers,
  `max_concurrent 1000`; `cache 30` with cluster.local's answers not cached; `loop`),
  the resolvers named directly instead of through /etc/resolv.conf, without the
  health/ready/prometheus/reload plugins (ports and files only).
"""

import os
import socket
import threading
import time

from common import BenchError, CLIENT_CPU, SERVER_CPU, percentile, pin, progress
import dnsperf
import knotd as knotd_lib
import realk8s
import shipped
import stubdns
import wire

CLUSTER_NAME = "kubernetes.default.svc.cluster.local."
CLUSTER_RATE = 200
SECONDS = 10
GRACE = 5.0
PROMPT = 0.2

# name, title, upstream stubs (kind, delay), external names per second
SCENARIOS = [
    ("silent_first", "first upstream silent, second fine", [("silent", 0), ("answer", 0)], 5),
    ("dead_first", "first upstream dead (port closed), second fine", [("dead", 0), ("answer", 0)], 5),
    ("slow_50ms", "upstream answers in 50 ms", [("answer", 0.05)], 100),
    ("slow_5ms", "upstream answers in 5 ms", [("answer", 0.005)], 300),
    ("loop", "forwarding loop (the upstream relays back to the server)", [("loop", 0)], 2),
]

KUBEADM_COREFILE = """\
.:{port} {{
    bind 127.0.0.1
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig} real
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }}
    forward . {upstreams} {{
        max_concurrent 1000
    }}
    cache 30 {{
        disable success cluster.local
        disable denial cluster.local
    }}
    loop
    loadbalance
}}
"""


class DeadPort:
    """A loopback UDP/TCP port nothing listens on (the kernel answers port unreachable)."""

    def __init__(self):
        self.port = knotd_lib.free_port()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _upstreams(spec, server_port):
    out = []
    for kind, delay in spec:
        if kind == "dead":
            out.append(DeadPort())
        elif kind == "loop":
            out.append(stubdns.StubDNS(mode="loop", loop_to=("127.0.0.1", server_port)))
        else:
            out.append(stubdns.StubDNS(mode=kind, delay=delay, ttl=300))
    return out


class ModK8s:
    name = "mod-k8s"

    def __init__(self, plane, workdir, upstreams, port):
        kubeconfig = plane.module_kubeconfig(os.path.join(workdir, "faults-module.kubeconfig"))
        text = shipped.config(kubeconfig, [f"127.0.0.1@{u.port}" for u in upstreams])
        self.server = knotd_lib.Knotd(config=text, port=port, log_level="info")
        self.port = port

    def start(self):
        self.server.start()
        pin(self.server.pid, SERVER_CPU)

    def alive(self):
        return self.server.is_running()

    def log(self):
        with open(self.server.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        self.server.stop()


class CoreDNSKubeadm:
    name = "coredns"

    def __init__(self, plane, workdir, upstreams, port):
        self.port = port
        self.dir = os.path.join(workdir, f"coredns-faults-{port}")
        os.makedirs(self.dir, exist_ok=True)
        corefile = os.path.join(self.dir, "Corefile")
        with open(corefile, "w", encoding="utf-8") as f:
            f.write(KUBEADM_COREFILE.format(
                port=port, kubeconfig=plane.admin_kubeconfig,
                upstreams=" ".join(f"127.0.0.1:{u.port}" for u in upstreams)))
        self.log_path = os.path.join(self.dir, "coredns.log")
        self.process = realk8s.Process("coredns", [
            "taskset", "-c", SERVER_CPU, realk8s.binaries(("coredns",))["coredns"],
            "-conf", corefile], self.log_path)

    def start(self):
        self.process.start()

    def alive(self):
        return self.process.alive()

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        if self.process.alive():
            self.process.stop()


def _wait_ready(server, timeout=30):
    """Seconds until the server answers the cluster name, or None if it exited first."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if not server.alive():
            return None
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.settimeout(0.2)
        try:
            sock.sendto(wire.query(CLUSTER_NAME, "A", ident=7, rd=True), ("127.0.0.1", server.port))
            if wire.parse(sock.recv(4096)).rcode == "NOERROR":
                return time.monotonic() - started
        except OSError:
            pass
        finally:
            sock.close()
        time.sleep(0.05)
    raise BenchError(f"{server.name} did not answer {CLUSTER_NAME} in {timeout} s:\n"
                     + server.log()[-2000:])


def _external_load(port, rate, seconds, tag):
    """Distinct external names at `rate`/s for `seconds`; per query (sent, answered or None, rcode)."""
    # This thread only (Linux applies pid 0 to the calling thread): on dnsperf's CPU.
    os.sched_setaffinity(0, {int(CLIENT_CPU)})
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(("127.0.0.1", port))
    sock.settimeout(0.01)
    count = int(rate * seconds)
    sent = [None] * count
    outcome = [None] * count
    start = time.monotonic()
    i = 0
    deadline = start + seconds + GRACE
    while time.monotonic() < deadline:
        now = time.monotonic()
        while i < count and start + i / rate <= now:
            try:
                sock.send(wire.query(f"q{i}-{tag}.load.example.", "A", ident=i, rd=True))
            except OSError:
                pass  # port unreachable after the server died: the query is lost
            sent[i] = time.monotonic()
            i += 1
        try:
            data = sock.recv(65535)
        except socket.timeout:
            continue
        except OSError:
            time.sleep(0.01)
            continue
        at = time.monotonic()
        try:
            reply = wire.parse(data)
        except Exception:  # noqa: BLE001 - a malformed reply counts as none
            continue
        n = reply.id
        if n < count and sent[n] is not None and outcome[n] is None \
                and at - sent[n] <= GRACE:
            outcome[n] = (at - sent[n], reply.rcode)
    sock.close()
    return start, sent, outcome


def _summary(start, sent, outcome):
    answered = [o[0] for o in outcome if o and o[1] == "NOERROR"]
    servfail = sum(1 for o in outcome if o and o[1] != "NOERROR")
    lost = sum(1 for o in outcome if o is None)
    last_bad = max((n for n, o in enumerate(outcome)
                    if not o or o[1] != "NOERROR" or o[0] > PROMPT), default=-1)
    if last_bad == len(outcome) - 1:
        failover = None
    else:
        failover = round(sent[last_bad + 1] - start, 2) if last_bad >= 0 else 0.0
    return {"sent": len(outcome), "answered": len(answered), "servfail_or_other": servfail,
            "lost": lost, "failover_s": failover,
            "answer_p50_ms": round(percentile(sorted(answered), 0.5) * 1e3, 1) if answered else None,
            "answer_p99_ms": round(percentile(sorted(answered), 0.99) * 1e3, 1) if answered else None}


def run_one(plane, workdir, cls, scenario, query_file):
    name, title, spec, rate = scenario
    port = knotd_lib.free_port()
    upstreams = _upstreams(spec, port)
    for u in upstreams:
        u.__enter__()
    server = cls(plane, workdir, upstreams, port)
    result = {}
    try:
        server.start()
        ready = _wait_ready(server)
        result["ready_s"] = round(ready, 2) if ready is not None else None
        if ready is None:
            result["exited"] = server.log().strip().splitlines()[-1:]
        box = {}
        load = threading.Thread(target=lambda: box.update(
            ext=_external_load(port, rate, SECONDS, f"{name}-{cls.name}")))
        load.start()
        try:
            cluster = dnsperf.run(port, query_file, seconds=SECONDS, qps=CLUSTER_RATE,
                                  verbose=True)
        except BenchError as e:  # the server is gone: every query lost
            progress(f"{server.name}: {e}")
            cluster = {"sent": CLUSTER_RATE * SECONDS, "lost": CLUSTER_RATE * SECONDS,
                       "rcodes": {}, "latency_us": {"p50": None, "p99": None}}
        load.join()
        result["cluster"] = {"sent": cluster["sent"], "lost": cluster["lost"],
                             "rcodes": cluster["rcodes"],
                             "p50_us": cluster["latency_us"]["p50"],
                             "p99_us": cluster["latency_us"]["p99"]}
        result["external"] = _summary(*box["ext"])
        result["alive_after"] = server.alive()
        if not result["alive_after"] and "exited" not in result:
            result["exited"] = [line for line in server.log().strip().splitlines()
                                if "loop" in line.lower()][-1:] or server.log().strip().splitlines()[-1:]
        log = server.log()
        result["loop_logged"] = "loop" in log.lower()
    finally:
        try:
            server.stop()
        except Exception as e:  # noqa: BLE001 - a server killed by its own loop check
            progress(f"{server.name} stop: {e}")
        for u in upstreams:
            u.__exit__(None, None, None)
    c, e = result["cluster"], result["external"]
    progress(f"faults {name} {cls.name}: cluster lost {c['lost']}/{c['sent']} p50 {c['p50_us']} us "
             f"p99 {c['p99_us']} us; external answered {e['answered']} servfail "
             f"{e['servfail_or_other']} lost {e['lost']} of {e['sent']}, failover {e['failover_s']} s"
             + ("" if result["alive_after"] else f"; EXITED {result.get('exited')}"))
    return result


def run(plane, workdir):
    """{scenario: {server: result}} for every scenario, mod-k8s then CoreDNS."""
    query_file = os.path.join(workdir, "faults-cluster.txt")
    with open(query_file, "w", encoding="utf-8") as f:
        f.write(f"{CLUSTER_NAME} A\n")
    out = {}
    for scenario in SCENARIOS:
        out[scenario[0]] = {cls.name: run_one(plane, workdir, cls, scenario, query_file)
                            for cls in (ModK8s, CoreDNSKubeadm)}
    out["load_average"] = os.getloadavg()
    return out


def _cell(r):
    c = r["cluster"]
    p99 = "–" if c["p99_us"] is None else f"{c['p99_us'] / 1000:.2f}"
    p50 = "–" if c["p50_us"] is None else f"{c['p50_us'] / 1000:.2f}"
    return f"{c['lost']}/{c['sent']} lost, {p50} / {p99} ms"


def _ext(r):
    e = r["external"]
    failover = "never" if e["failover_s"] is None else f"{e['failover_s']} s"
    text = (f"{e['answered']} / {e['servfail_or_other']} / {e['lost']} of {e['sent']}, "
            f"failover {failover}")
    if e["answer_p50_ms"] is not None:
        text += f", answered in {e['answer_p50_ms']} / {e['answer_p99_ms']} ms"
    if not r["alive_after"]:
        text += " (server exited)"
    return text


def report(results):
    lines = ["| scenario (external q/s) | mod-k8s: cluster names at 200 q/s, lost, p50 / p99 | "
             "CoreDNS | mod-k8s: external answered / SERVFAIL / lost, failover, answer p50 / p99 | "
             "CoreDNS |",
             "|---|---|---|---|---|"]
    for name, title, _, rate in SCENARIOS:
        r = results[name]
        lines.append(f"| {title} ({rate}/s) | {_cell(r['mod-k8s'])} | {_cell(r['coredns'])} | "
                     f"{_ext(r['mod-k8s'])} | {_ext(r['coredns'])} |")
    return "\n".join(lines)
