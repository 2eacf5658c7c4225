"""Instructions per query under callgrind: knotd with mod-k8s against knotd with zone files.

knotd runs under `valgrind --tool=callgrind --instr-atstart=no` with one UDP
worker, so start-up, zone loading and the module's first sync run
uninstrumented. Then instrumentation is switched on (callgrind_control -i on),
and for each mix: a warm-up of a few hundred queries, counters zeroed
(callgrind_control -z), a fixed number of queries sent by dnsperf (every
line of the file once, -n 1), counters dumped (callgrind_control -d). The
dump's total instruction count (Ir, the whole process: receive, parse,
answer, send) divided by the answered queries is the figure. The inclusive
count of the module's hooks tells what mod-k8s itself costs. The cache
simulation (--cache-sim=yes) adds the last-level data cache misses per query,
which instructions do not show: a lookup in a big zone's tree misses more.
"""

import glob
import os
import re
import subprocess
import time

from common import BenchError, progress
import dnsperf

QUERIES = 5000       # per mix, each name once
WARMUP = 300         # queries per mix before the counters are zeroed
HASH_KEY = "1"       # MODK8S_BENCH_HASH_KEY of the module's knotd (module/lib/hash.c)
VALGRIND = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-line=no",
            "--cache-sim=yes"]
MODULE_FUNCTIONS = ("k8s_answer_hook", "k8s_additional_hook")
_TOTALS = re.compile(r"^(?:summary|totals):\s+([\d ]+)$", re.MULTILINE)
_EVENTS = re.compile(r"^events:\s+(.*)$", re.MULTILINE)


def wrapper(out_dir):
    return VALGRIND + [f"--callgrind-out-file={out_dir}/callgrind.out.%p"]


def control(pid, *args):
    result = subprocess.run(["callgrind_control", *args, str(pid)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise BenchError(f"callgrind_control {' '.join(args)} failed:\n{result.stdout}")
    return result.stdout


def dump(pid, out_dir, label):
    """Dumps the counters; returns the path of the new dump file."""
    before = set(glob.glob(os.path.join(out_dir, f"callgrind.out.{pid}*")))
    control(pid, "-d", label)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        new = set(glob.glob(os.path.join(out_dir, f"callgrind.out.{pid}*"))) - before
        if new:
            path = new.pop()
            time.sleep(0.2)  # Let the writer finish the file.
            return path
        time.sleep(0.1)
    raise BenchError(f"callgrind wrote no dump for {label}")


def totals(path):
    """{event: count} of a dump (Ir, and the simulated cache's reads, writes and misses)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    events = _EVENTS.search(text)
    counts = _TOTALS.search(text)
    if events is None or counts is None:
        raise BenchError(f"no totals in {path}")
    return dict(zip(events.group(1).split(), (int(x) for x in counts.group(1).split())))


def inclusive(path, functions, top=15):
    """Inclusive Ir of the named functions, and the top functions, from callgrind_annotate."""
    result = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--show=Ir", path],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            check=False)
    found = {name: 0 for name in functions}
    lines = []
    for line in result.stdout.splitlines():
        match = re.match(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
        if not match or ":" not in match.group(2):
            continue
        ir = int(match.group(1).replace(",", ""))
        function = match.group(2).split(":", 1)[1].split(" ")[0]
        if function in found and found[function] == 0:
            found[function] = ir
        if len(lines) < top:
            lines.append((function, ir))
    return found, lines


def measure(server, files, warmup_files, out_dir, dnssec=False, functions=None):
    """Per mix: instructions per query, and the hooks' share of them (mod-k8s's, or the
    named `functions`). dnssec: queries with the DO bit."""
    control(server.pid, "-i", "on")
    results = {}
    for mix, path in files.items():
        dnsperf.run(server.port, warmup_files[mix], runs=1, clients=1, outstanding=10, pin=False,
                    dnssec=dnssec)
        control(server.pid, "-z")
        perf = dnsperf.run(server.port, path, runs=1, clients=1, outstanding=10, pin=False,
                           dnssec=dnssec)
        dumped = dump(server.pid, out_dir, mix)
        answered = perf["completed"]
        if answered == 0:
            raise BenchError(f"no answers under callgrind for {mix}")
        counts = totals(dumped)
        hooks, top = inclusive(dumped, functions or MODULE_FUNCTIONS)
        results[mix] = {
            "queries": answered,
            "ir_per_query": round(counts["Ir"] / answered),
            # Simulated last-level cache misses on data: what the instruction count misses.
            "ll_data_misses_per_query": round((counts.get("DLmr", 0) + counts.get("DLmw", 0))
                                              / answered, 2),
            "module_ir_per_query": round(sum(hooks.values()) / answered),
            "top_inclusive": [(name, round(value / answered)) for name, value in top],
            "dump": os.path.basename(dumped),
        }
        progress(f"callgrind {mix}: {results[mix]['ir_per_query']} Ir/query")
    return results
