"""knotd under valgrind's memcheck, and the longer waits that needs (`make memcheck`).

    MODK8S_VALGRIND=DIR tests/integration/run cluster_dns   # knotd under memcheck, logs in DIR
    MODK8S_TIMEOUT_SCALE=N                                  # multiply the harness's waits by N

With MODK8S_VALGRIND set to a directory, every knotd the harness starts runs as
`valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect
--error-exitcode=99 --suppressions=tests/valgrind.supp --log-file=DIR/knotd.PID.log knotd ...`:
an invalid access or a definite or indirect leak (checked when knotd exits
after SIGTERM) makes knotd exit with status 99, which Knotd.stop() reports with
the log. scan() reads every log of DIR afterwards (tests/memcheck prints it).

Under memcheck knotd runs 20-50 times slower, so the harness's waits (knotd's
start and stop, eventually(), wait_for(), wait_ready(), a test file's timeout)
are multiplied by MODK8S_TIMEOUT_SCALE, 10 by default under valgrind, 1 otherwise.
Timings a test asserts (a change within 2 s) are not scaled: those tests fail
under memcheck for time, not for memory, and scan() tells the two apart.
"""

import glob
import os
import re

SRCDIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUPPRESSIONS = os.path.join(SRCDIR, "tests", "valgrind.supp")
ERROR_EXIT = 99
DEFAULT_SCALE = 10

_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors")
_COMMAND = re.compile(r"^==\d+== Command: (.*)$", re.MULTILINE)


def log_dir():
    """The directory of the valgrind logs, or None when knotd runs without valgrind."""
    value = os.environ.get("MODK8S_VALGRIND", "")
    return os.path.abspath(value) if value else None


def timeout_scale():
    """The factor of every wait of the harness: MODK8S_TIMEOUT_SCALE, else 10 under valgrind."""
    value = os.environ.get("MODK8S_TIMEOUT_SCALE")
    if value:
        return max(1.0, float(value))
    return float(DEFAULT_SCALE) if log_dir() else 1.0


def scaled(seconds):
    return seconds * timeout_scale()


def wrapper():
    """The argv prefix that runs knotd under memcheck ([] without MODK8S_VALGRIND)."""
    directory = log_dir()
    if directory is None:
        return []
    os.makedirs(directory, exist_ok=True)
    return ["valgrind", "--tool=memcheck", "--leak-check=full",
            "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
            f"--error-exitcode={ERROR_EXIT}", f"--suppressions={SUPPRESSIONS}",
            "--num-callers=30", "--gen-suppressions=all",
            f"--log-file={directory}/knotd.%p.log"]


def scan(directory):
    """{"runs", "clean", "errors": [(log, count, command)], "unchecked": [(log, command)]}.

    unchecked: knotd never got to valgrind's summary (killed by a test on purpose, or
    still running): its invalid accesses would still be in the log, its leaks were not checked.
    """
    out = {"runs": 0, "clean": 0, "errors": [], "unchecked": []}
    for path in sorted(glob.glob(os.path.join(directory, "knotd.*.log"))):
        errors, command = _classify(path)
        out["runs"] += 1
        if errors is None:
            out["unchecked"].append((path, command))
        elif errors:
            out["errors"].append((path, errors, command))
        else:
            out["clean"] += 1
    return out


def scan_one(path):
    """The number of errors of one log (0 also for a run without summary and no error)."""
    return _classify(path)[0] or 0


def _classify(path):
    """(errors, command): errors None when the log has neither a summary nor an error."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    command = _COMMAND.search(text)
    command = command.group(1) if command else "?"
    summary = _SUMMARY.search(text)
    if summary:
        return int(summary.group(1)), command
    # Killed before the summary: errors found while running are in the log all the same.
    found = len(re.findall(r"^==\d+== (Invalid |Conditional jump|Use of uninitialised|Syscall param)",
                           text, re.MULTILINE))
    return (found or None), command


def report(path, lines=80):
    """The first lines of a valgrind log from its first error on (for a failure message)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read().splitlines()
    start = next((i for i, line in enumerate(text)
                  if re.search(r"== (Invalid|Conditional|Use of|Syscall|\d[\d,]* .*bytes in)", line)), 0)
    return "\n".join(text[start:start + lines])
