"""Where a server's CPU goes: `perf record -e cpu-clock` of one process during a load,
its samples by shared object (the module k8s.so, knotd and its libraries, the kernel).

cpu-clock, not cycles: the machine (a VM) has no hardware counters for perf. Unlike
callgrind's instruction counts, the samples include the kernel's part of each query
(the socket calls and the UDP/loopback path), which callgrind cannot see.
"""

import re
import subprocess
import time

_DSO = re.compile(r"^\s*([0-9.]+)%\s+(\S+)", re.MULTILINE)
FREQUENCY = 2999


def dso_shares(pid, load, data, seconds):
    """Samples pid for seconds + 1 s while load() runs (started 0.3 s in); returns
    {"module_pct", "kernel_pct", "module_user_pct", "samples_by_dso"} or {"error"}."""
    rec = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQUENCY),
                            "-p", str(pid), "-o", data, "--", "sleep", str(seconds + 1)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    load()
    _, err = rec.communicate(timeout=60)
    if rec.returncode != 0:
        return {"error": f"perf record failed: {err.strip()[-200:]}"}
    rep = subprocess.run(["perf", "report", "-i", data, "--sort", "dso", "--stdio"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False)
    shares = {name: float(pct) for pct, name in _DSO.findall(rep.stdout)}
    module = sum(v for k, v in shares.items() if k.startswith("k8s.so"))
    kernel = sum(v for k, v in shares.items() if k.startswith("[kernel"))
    return {"module_pct": round(module, 1), "kernel_pct": round(kernel, 1),
            # Of the user-space time: comparable with callgrind's (user-space) Ir shares.
            "module_user_pct": round(100 * module / (100 - kernel), 1) if kernel < 100 else None,
            "samples_by_dso": shares}


SYSCALLS = ("recvmmsg", "sendmmsg", "recvmsg", "sendmsg", "recvfrom", "sendto",
            "epoll_wait", "poll", "ppoll", "futex")


def syscalls(pid, load, seconds, names=SYSCALLS):
    """Counts pid's system calls (perf stat on the syscalls:sys_enter_* tracepoints)
    for seconds + 1 s while load() runs; returns ({name: count}, load()'s result) or
    ({"error": text}, result)."""
    events = ",".join(f"syscalls:sys_enter_{name}" for name in names)
    stat = subprocess.Popen(["perf", "stat", "-x", ",", "-e", events, "-p", str(pid),
                             "--", "sleep", str(seconds + 1)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    result = load()
    _, err = stat.communicate(timeout=60)
    if stat.returncode != 0:
        return {"error": f"perf stat failed: {err.strip()[-200:]}"}, result
    counts = {}
    for line in err.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("syscalls:sys_enter_"):
            counts[fields[2][len("syscalls:sys_enter_"):]] = \
                int(fields[0]) if fields[0].isdigit() else None
    return counts, result
