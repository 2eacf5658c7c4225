"""What every part of the benchmark suite shares: paths, progress output, process facts.

The suite reuses the integration tests' harness (tests/lib: Knotd, Simulator,
kdig parsing), so this module puts tests/lib on sys.path first.
"""

import math
import os
import resource
import statistics
import subprocess
import sys
import time

SRCDIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTLIB = os.path.join(SRCDIR, "tests", "lib")
if TESTLIB not in sys.path:
    sys.path.insert(0, TESTLIB)

# CPU placement on a 2-core machine: knotd on one core, the load generator on the other.
SERVER_CPU = "0"
CLIENT_CPU = "1"

_START = time.monotonic()


class BenchError(Exception):
    """A benchmark step could not run (a tool is missing, a server did not start...)."""


def progress(message):
    """One progress line on stderr, with the time since the suite started."""
    print(f"[{time.monotonic() - _START:6.1f} s] {message}", file=sys.stderr, flush=True)


def elapsed():
    """Seconds since the suite started."""
    return time.monotonic() - _START


def proc_status(pid):
    """VmRSS and VmHWM of a process, in bytes."""
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0]) * 1024
    return out


def reset_peak_rss(pid):
    """Makes VmHWM start again from the current RSS (Linux 4.0+: clear_refs 5)."""
    with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as f:
        f.write("5")


def pin(pid, cpus):
    """Moves every thread of a running process onto the given CPU list (taskset -a)."""
    subprocess.run(["taskset", "-a", "-p", "-c", cpus, str(pid)], check=True,
                   stdout=subprocess.DEVNULL)


def cpu_time(pid):
    """User + system CPU seconds a process has used so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def cpu_busy():
    """CPU seconds the whole machine has spent busy, all CPUs together (/proc/stat)."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu():
    """CPU seconds used by the finished child processes of this one (dnsperf runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median(values):
    return statistics.median(values) if values else None


def percentile(sorted_values, fraction):
    """The nearest-rank percentile of an already sorted list (None if empty)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def require(program, package):
    """Raises BenchError naming the Debian package when a program is missing."""
    from shutil import which
    if which(program) is None and which(program, path="/usr/sbin:/sbin") is None:
        raise BenchError(f"{program} not found; install the Debian package '{package}'")
