"""knotd's CPU time per answered query over XDP and over kernel sockets, at the same load.

One knotd with mod-k8s on the throughput cluster, with one UDP worker, listens on a veth pair
(tests/lib/xdpnet.py): `xdp: listen: <veth>@53` and a kernel UDP socket on another
port of the same address. dnsperf runs in the other network namespace, pinned to the
client CPU, and offers the same rate (-Q) to each path in turn, per mix. knotd's
utime + stime (/proc/PID/stat) over a run, divided by the answers dnsperf counted,
is the CPU per answered query. The receive path's softirq work (veth NAPI, the XDP
program, the kernel's UDP input) runs on the sender's CPU or in ksoftirqd on either
path and is charged to neither; what is compared is knotd's own cost.

Then, per mix, `perf record -e cpu-clock` samples knotd on the XDP path and counts the
samples in mod-k8s's k8s.so: the module's share of knotd's CPU time there (this
machine has no hardware counters for perf, and callgrind cannot follow AF_XDP's
rings, so the module's share of the XDP path's instructions is derived from it and
stated with the callgrind part's module Ir/q in BENCHMARKS.md).

The autopath mix is left out: its client-address step needs the client to be a pod
(127.0.0.1 is one in the throughput cluster), and the namespace's address is not.
"""

import os
import shutil
import subprocess

from common import BenchError, SERVER_CPU, cpu_time, pin, progress
import dnsperf
import perfshare
import knotd as knotd_lib
import servers
import xdpnet

RATE = 30000     # queries per second offered to each path: below either path's peak here
SECONDS = 5
WARMUP_SECONDS = 1
PERF_SECONDS = 3
SKIPPED_MIXES = ("autopath",)


class XdpServer(servers.Server):
    """servers.Server with the XDP listener on the veth and a kernel listener beside it."""

    def __init__(self, net, kernel_port, **options):
        self.net = net
        self.kernel_port = kernel_port
        super().__init__(**options)

    def config_text(self):
        return self.net.with_kernel_listener(super().config_text(), self.address, self.port,
                                             self.kernel_port)


def _measure(server, net, port, path, rate, seconds):
    """knotd CPU us per answered query over one dnsperf run from the other namespace."""
    before = cpu_time(server.pid)
    result = dnsperf.run(port, path, seconds=seconds, qps=rate, server=net.server,
                         prefix=net.in_peer([]))
    used = cpu_time(server.pid) - before
    answered = result["completed"]
    if answered == 0:
        raise BenchError(f"no answers from {net.server}@{port}")
    return {"cpu_us_per_query": round(used / answered * 1e6, 2), "answered": answered,
            "qps": result["qps"], "lost": result["lost"], "cpu_s": round(used, 2)}


def _module_share(server, net, path, rate, seconds, out_dir, mix):
    """Share (%) of knotd's cpu-clock samples in k8s.so and in the kernel, on the XDP path."""
    return perfshare.dso_shares(
        server.pid, lambda: dnsperf.run(53, path, seconds=seconds, qps=rate, server=net.server,
                                        prefix=net.in_peer([])),
        os.path.join(out_dir, f"perf-xdp-{mix}.data"), seconds)


def run(sim, module_options, files, out_dir, rate=RATE, seconds=SECONDS):
    """{"rate": q/s, "mixes": {mix: {"kernel": {...}, "xdp": {...}, "ratio": x, "perf": {...}}}},
    or {"skipped": reason} where the kernel, the tools or the privileges refuse."""
    net = xdpnet.VethPair()
    try:
        net.up()
    except xdpnet.Unavailable as e:
        return {"skipped": str(e)}
    try:
        kernel_port = knotd_lib.free_port()
        # One UDP worker serves the kernel socket and the veth's one XDP queue: with two,
        # SO_REUSEPORT spreads dnsperf's sockets over one or both by their source ports,
        # and the kernel path's CPU per query varied twofold from run to run.
        server = servers.module_server(sim, module_options, extra=net.xdp_section(),
                                       net=net, kernel_port=kernel_port, cls=XdpServer,
                                       udp_workers=1)
        try:
            server.start()
            try:
                xdpnet.check_xdp_log(server)
            except xdpnet.Unavailable as e:
                return {"skipped": str(e)}
            servers.wait_ready(server)
            pin(server.pid, SERVER_CPU)
            with_perf = shutil.which("perf") is not None and subprocess.run(
                ["perf", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                check=False).returncode == 0
            results = {"rate": rate, "seconds": seconds, "address": net.server,
                       "skipped_mixes": list(SKIPPED_MIXES), "mixes": {}}
            for mix, path in files.items():
                if mix in SKIPPED_MIXES:
                    continue
                entry = {}
                for name, port in (("kernel", kernel_port), ("xdp", 53)):
                    dnsperf.run(port, path, seconds=WARMUP_SECONDS, qps=rate, server=net.server,
                                prefix=net.in_peer([]))
                    entry[name] = _measure(server, net, port, path, rate, seconds)
                entry["ratio"] = round(entry["xdp"]["cpu_us_per_query"]
                                       / entry["kernel"]["cpu_us_per_query"], 3)
                if with_perf:
                    entry["perf"] = _module_share(server, net, path, rate, PERF_SECONDS,
                                                  out_dir, mix)
                results["mixes"][mix] = entry
                progress(f"xdp {mix}: knotd {entry['kernel']['cpu_us_per_query']} us/q kernel, "
                         f"{entry['xdp']['cpu_us_per_query']} us/q XDP ({entry['ratio']} x)")
            return results
        finally:
            servers.stop(server)
    finally:
        net.down()


def text(results):
    """A table per mix."""
    if "skipped" in results:
        return f"xdp: skipped ({results['skipped']})"
    lines = [f"Offered load {results['rate']:,} queries/s per path, {results['seconds']} s per run.",
             "", "| mix | knotd CPU us/q, kernel UDP | knotd CPU us/q, XDP | XDP / kernel | "
             "answered, kernel / XDP | XDP: kernel's share of knotd's CPU samples | "
             "XDP: mod-k8s's share | XDP: mod-k8s's share of user space |",
             "|---|---|---|---|---|---|---|---|"]
    for mix, e in results["mixes"].items():
        perf = e.get("perf") or {}
        lines.append(f"| {mix} | {e['kernel']['cpu_us_per_query']} | {e['xdp']['cpu_us_per_query']} | "
                     f"{e['ratio']} | {e['kernel']['answered']:,} / {e['xdp']['answered']:,} | "
                     f"{perf.get('kernel_pct', '-')} % | {perf.get('module_pct', '-')} % | "
                     f"{perf.get('module_user_pct', '-')} % |")
    return "\n".join(lines)


def write(results, out_dir):
    path = os.path.join(out_dir, "xdp.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text(results) + "\n")
    return path

