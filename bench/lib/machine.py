"""A description of the machine and the software a benchmark ran with."""

import datetime
import os
import platform
import re
import subprocess


def _first_line(argv):
    try:
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = result.stdout.strip().splitlines()
    return lines[0].strip() if lines else None


def _cpu_model():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        match = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.MULTILINE)
    return match.group(1).strip() if match else platform.processor()


def _memory_gib():
    with open("/proc/meminfo", encoding="utf-8") as f:
        match = re.search(r"^MemTotal:\s+(\d+) kB", f.read(), re.MULTILINE)
    return round(int(match.group(1)) / 1024 / 1024, 1) if match else None


def _os_release():
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            match = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.MULTILINE)
        return match.group(1) if match else None
    except OSError:
        return None


def _dnsperf_version():
    line = _first_line(["sh", "-c", "dnsperf -h 2>&1 | grep -i '^version'"])
    return f"dnsperf {line.split()[-1]}" if line else None


def _git_commit(srcdir):
    return _first_line(["git", "-C", srcdir, "describe", "--always", "--dirty"])


def _load():
    return [round(x, 2) for x in os.getloadavg()]


def describe(srcdir, cflags):
    """Everything a reader needs to compare these results with another run."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "kernel": platform.release(),
        "os": _os_release(),
        "virtualization": _first_line(["systemd-detect-virt"]),
        "knotd": _first_line(["knotd", "-V"]),
        "dnsperf": _dnsperf_version(),
        "valgrind": _first_line(["valgrind", "--version"]),
        "python": platform.python_version(),
        "commit": _git_commit(srcdir),
        "module_cflags": cflags,
        "load_before": _load(),
    }
