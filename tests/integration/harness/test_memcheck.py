#!/usr/bin/env python3
# run alone: knotd under valgrind takes a whole CPU
"""`make memcheck`'s parts (tests/lib/valgrind.py): reading valgrind's logs, and a knotd run
under memcheck when MODK8S_VALGRIND asks for it.

The verdict of tests/memcheck rests on valgrind.scan(): a log with errors must fail the
run, a clean one pass, and a knotd a test killed (no summary, so no leak check) must be
told apart from both, unless its log already holds an invalid access.
"""

import os
import shutil
import tempfile

import testing
import valgrind
from knotd import Knotd, find_build

tests = testing.Tests()

HEAD = """==4242== Memcheck, a memory error detector
==4242== Command: /usr/sbin/knotd -c /tmp/mod-k8s-test_x/knot.conf
==4242== Parent PID: 1
==4242==
"""
CLEAN = HEAD + """==4242== LEAK SUMMARY:
==4242==    definitely lost: 0 bytes in 0 blocks
==4242== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)
"""
LEAK = HEAD + """==4242== 40 bytes in 1 blocks are definitely lost in loss record 3 of 9
==4242==    at 0x48407B4: malloc (vg_replace_malloc.c:381)
==4242==    by 0x5A1B2C3: k8s_store_put (store.c:120)
==4242== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)
"""
KILLED = HEAD
KILLED_INVALID = HEAD + """==4242== Invalid read of size 8
==4242==    at 0x5A1B2C3: k8s_table_find (table.c:88)
"""


def with_logs(logs):
    directory = tempfile.mkdtemp(prefix="memcheck-logs-")
    for name, text in logs.items():
        with open(os.path.join(directory, f"knotd.{name}.log"), "w", encoding="utf-8") as f:
            f.write(text)
    return directory


@tests.case
def scan_counts_clean_runs_errors_and_runs_without_a_leak_check():
    directory = with_logs({"1": CLEAN, "2": LEAK, "3": KILLED, "4": KILLED_INVALID})
    try:
        found = valgrind.scan(directory)
    finally:
        shutil.rmtree(directory)
    testing.expect_equal(found["runs"], 4, "runs")
    testing.expect_equal(found["clean"], 1, "clean runs")
    testing.expect_equal(sorted((os.path.basename(p), n) for p, n, _ in found["errors"]),
                         [("knotd.2.log", 1), ("knotd.4.log", 1)], "runs with errors")
    testing.expect_equal([os.path.basename(p) for p, _ in found["unchecked"]], ["knotd.3.log"],
                         "runs killed before the leak check")
    testing.expect_equal(found["errors"][0][2],
                         "/usr/sbin/knotd -c /tmp/mod-k8s-test_x/knot.conf", "the command")


@tests.case
def the_report_starts_at_the_first_error():
    directory = with_logs({"2": LEAK})
    try:
        text = valgrind.report(os.path.join(directory, "knotd.2.log"))
    finally:
        shutil.rmtree(directory)
    testing.expect(text.startswith("==4242== 40 bytes in 1 blocks are definitely lost"), text)


@tests.case
def waits_are_scaled_under_valgrind_only():
    saved = {k: os.environ.pop(k, None) for k in ("MODK8S_VALGRIND", "MODK8S_TIMEOUT_SCALE")}
    try:
        testing.expect_equal(valgrind.scaled(20), 20, "without valgrind")
        testing.expect_equal(valgrind.wrapper(), [], "no wrapper without valgrind")
        os.environ["MODK8S_VALGRIND"] = tempfile.gettempdir()
        testing.expect_equal(valgrind.scaled(20), 20 * valgrind.DEFAULT_SCALE, "under valgrind")
        os.environ["MODK8S_TIMEOUT_SCALE"] = "3"
        testing.expect_equal(valgrind.scaled(20), 60, "MODK8S_TIMEOUT_SCALE=3")
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value


@tests.case
def knotd_runs_under_memcheck_and_stops_clean():
    if shutil.which("valgrind") is None:
        raise testing.Skip("valgrind not found (Debian package valgrind)")
    if find_build().sanitized:
        raise testing.Skip("memcheck needs a build without sanitizers")
    directory = tempfile.mkdtemp(prefix="memcheck-")
    saved = os.environ.get("MODK8S_VALGRIND")
    os.environ["MODK8S_VALGRIND"] = directory
    try:
        with Knotd() as server:
            testing.expect_equal(server.query("cluster.local.", "SOA").rcode, "NOERROR", "SOA")
            pid = server.pid
        found = valgrind.scan(directory)
        testing.expect_equal(found["runs"], 1, f"valgrind logs in {directory}")
        testing.expect_equal(found["clean"], 1, f"clean runs: {found}")
        with open(os.path.join(directory, f"knotd.{pid}.log"), encoding="utf-8") as f:
            text = f.read()
        testing.expect("Command: " in text and "knotd -c" in text, "the log names knotd")
        testing.expect("definitely lost: 0 bytes" in text or "All heap blocks were freed" in text,
                       "the leak check ran at exit")
    finally:
        if saved is None:
            os.environ.pop("MODK8S_VALGRIND", None)
        else:
            os.environ["MODK8S_VALGRIND"] = saved
        shutil.rmtree(directory, ignore_errors=True)


tests.main()
