"""Throughput and latency of knotd+mod-k8s against the same knotd serving zone files.

Both servers run at the same time from the start (knotd pinned to CPU 0 with
every thread, dnsperf to CPU 1), and take turns: for each mix, round r runs
the module first when r is even and the zone file first when r is odd, so
that drift on the machine (other load, frequency) hits both alike. The
figure per server is the median QPS of its rounds; the ratio is the median
of the rounds' ratios (module / zone file of the same round). knotd's CPU
time during each run is read from /proc, which gives the server's own CPU
cost per query (on this machine the QPS itself is bound by the load
generator and the kernel's UDP path, see performance.md), and the CPU time
the rest of the machine used meanwhile is reported as a measure of
disturbance.

Latency at half load: for each mix, both servers get the same offered rate,
half of the lower of their two peaks, for a few seconds, and every
response's latency is recorded (dnsperf -v) for the percentiles.
"""

import time

from common import SERVER_CPU, children_cpu, cpu_busy, cpu_time, median, pin, progress
import dnsperf
from world import MIXES

ROUNDS = 5
SECONDS = 4
WARMUP_SECONDS = 2
LATENCY_SECONDS = 4


def _one(server, path, seconds):
    """One dnsperf run; adds knotd's CPU per query and the CPU everything else used meanwhile."""
    before = (cpu_time(server.pid), children_cpu(), cpu_busy(), time.monotonic())
    result = dnsperf.run(server.port, path, seconds=seconds)
    after = (cpu_time(server.pid), children_cpu(), cpu_busy(), time.monotonic())
    knotd, client, busy, wall = (a - b for a, b in zip(after, before))
    result["server_cpu_us_per_query"] = round(knotd / max(1, result["completed"]) * 1e6, 2)
    # Busy CPU time not used by knotd or dnsperf (other processes, and softirq work the
    # kernel charges to no process), in cores: what disturbs the comparison.
    result["other_cores"] = round((busy - knotd - client) / wall, 3)
    return result


def run(module, zone, files, rounds=ROUNDS, seconds=SECONDS):
    """{mix: {"module": {...}, "zone": {...}, "ratio": q}} from alternating dnsperf runs."""
    servers = {"module": module, "zone": zone}
    for server in servers.values():
        pin(server.pid, SERVER_CPU)
    for name, server in servers.items():
        dnsperf.run(server.port, files[MIXES[0][0]], seconds=WARMUP_SECONDS)
    results = {}
    for mix, title in MIXES:
        runs = {"module": [], "zone": []}
        for r in range(rounds):
            order = ("module", "zone") if r % 2 == 0 else ("zone", "module")
            for name in order:
                runs[name].append(_one(servers[name], files[mix], seconds))
        entry = {}
        for name, rs in runs.items():
            entry[name] = {
                "qps_runs": [round(x["qps"]) for x in rs],
                "qps": round(median([x["qps"] for x in rs])),
                "lost": sum(x["lost"] for x in rs),
                "rcodes": rs[0]["rcodes"],
                "response_bytes": rs[0]["response_bytes"],
                "avg_latency_us": round(median([x["avg_latency_s"] for x in rs]) * 1e6, 1),
                "server_cpu_us_per_query": median([x["server_cpu_us_per_query"] for x in rs]),
            }
        # The rounds' own ratios: a round's two runs are adjacent, so they share the
        # machine's state; their median resists a disturbed run better than a ratio of medians.
        entry["round_ratios"] = [round(m["qps"] / z["qps"], 3)
                                 for m, z in zip(runs["module"], runs["zone"])]
        entry["ratio"] = round(median(entry["round_ratios"]), 3)
        entry["other_cores"] = median([x["other_cores"] for rs in runs.values() for x in rs])
        results[mix] = entry
        progress(f"throughput {title}: module {entry['module']['qps']} QPS, "
                 f"zone file {entry['zone']['qps']} QPS, ratio {entry['ratio']}")
    return results


def latency(module, zone, files, peaks, seconds=LATENCY_SECONDS):
    """{mix: {"qps": offered, "module": percentiles, "zone": percentiles}} at half the lower peak."""
    results = {}
    for mix, title in MIXES:
        rate = int(min(peaks[mix]["module"]["qps"], peaks[mix]["zone"]["qps"]) / 2)
        entry = {"offered_qps": rate}
        for name, server in (("module", module), ("zone", zone)):
            result = dnsperf.run(server.port, files[mix], seconds=seconds, qps=rate, verbose=True)
            entry[name] = dict(result["latency_us"], qps=round(result["qps"]),
                               lost=result["lost"])
        results[mix] = entry
        progress(f"latency {title} at {rate} QPS: p50/p99 module "
                 f"{entry['module']['p50']}/{entry['module']['p99']} us, zone file "
                 f"{entry['zone']['p50']}/{entry['zone']['p99']} us")
    return results
