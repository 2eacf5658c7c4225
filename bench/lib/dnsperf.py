"""Running dnsperf (Debian package dnsperf, 2.10) and reading its report.

Throughput runs use the settings of ../shared/reference/performance.md: two
client sockets (-c 2), 100 outstanding queries (-q 100, the default), UDP, no
EDNS, the query file looped for a fixed time; dnsperf pinned to the CPU knotd
does not use. Latency runs cap the rate (-Q) and ask for every response's
latency (-v), from which the percentiles are computed here (dnsperf itself
prints only the average and standard deviation); `latencies_us` holds them all, sorted.
"""

import re
import subprocess
import tempfile

from common import BenchError, CLIENT_CPU, percentile

_NUMBER = r"([0-9.]+)"
_PATTERNS = {
    "sent": re.compile(r"Queries sent:\s+(\d+)"),
    "completed": re.compile(r"Queries completed:\s+(\d+)"),
    "lost": re.compile(r"Queries lost:\s+(\d+)"),
    "qps": re.compile(r"Queries per second:\s+" + _NUMBER),
    "avg_latency_s": re.compile(r"Average Latency \(s\):\s+" + _NUMBER),
    "request_bytes": re.compile(r"Average packet size:\s+request (\d+)"),
    "response_bytes": re.compile(r"Average packet size:\s+request \d+, response (\d+)"),
}
_RCODES = re.compile(r"Response codes:\s+(.*)")
_VERBOSE = re.compile(r"^> (\S+) \S+ \S+ ([0-9.]+)$")


def command(port, query_file, seconds=None, runs=None, clients=2, outstanding=100, qps=None,
            verbose=False, pin=True, dnssec=False, server="127.0.0.1", prefix=(), extra=()):
    """dnsperf's argv; prefix goes first (e.g. `ip netns exec NS` to send from another
    namespace), extra options last (e.g. `-e`, EDNS)."""
    argv = ["dnsperf", "-s", server, "-p", str(port), "-d", query_file,
            "-c", str(clients), "-q", str(outstanding), *extra]
    if dnssec:
        argv.append("-D")  # the DO bit: a signing server signs the answer
    if seconds is not None:
        argv += ["-l", str(seconds)]
    if runs is not None:
        argv += ["-n", str(runs)]
    if qps is not None:
        argv += ["-Q", str(int(qps))]
    if verbose:
        argv.append("-v")
    return list(prefix) + (["taskset", "-c", CLIENT_CPU] if pin else []) + argv


def run(port, query_file, **options):
    """Runs dnsperf; returns its figures (qps, completed, lost, rcodes, sizes, latencies)."""
    argv = command(port, query_file, **options)
    # Into a file, not a pipe: a reader that falls behind would stall dnsperf and add latency.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        result = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, text=True, check=False)
        out.seek(0)
        text = out.read()
    if result.returncode != 0:
        raise BenchError(f"dnsperf failed ({result.returncode}): {result.stderr.strip()}")
    return parse(text, verbose=options.get("verbose", False))


def parse(text, verbose=False):
    out = {}
    for key, pattern in _PATTERNS.items():
        match = pattern.search(text)
        if match is None:
            raise BenchError(f"dnsperf output lacks '{key}':\n{text[-2000:]}")
        out[key] = float(match.group(1)) if "." in match.group(1) else int(match.group(1))
    match = _RCODES.search(text)
    out["rcodes"] = dict((code, int(n)) for code, n in re.findall(r"(\w+) (\d+) \(", match.group(1))) \
        if match else {}
    if verbose:
        latencies = sorted(float(m.group(2)) for m in map(_VERBOSE.match, text.splitlines()) if m)
        out["latency_us"] = {
            "p50": _us(percentile(latencies, 0.50)),
            "p90": _us(percentile(latencies, 0.90)),
            "p99": _us(percentile(latencies, 0.99)),
            "p999": _us(percentile(latencies, 0.999)),
            "max": _us(latencies[-1] if latencies else None),
            "samples": len(latencies),
        }
        out["latencies_us"] = [s * 1e6 for s in latencies]
    return out


def _us(seconds):
    return None if seconds is None else round(seconds * 1e6, 1)
