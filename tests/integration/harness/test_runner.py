"""The integration runner's verdicts (tests/integration/run): a file that cannot run here
(exit 77 before any test) is skipped with its reason, never failed; one that crashes, runs
no test or exits 77 after running tests fails. test_kubectl.py without kubectl (Debian
bookworm has none) is such a skip.
"""

import os
import re
import subprocess
import sys
import tempfile

import testing

tests = testing.Tests()

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RUNNER = os.path.join(SRCDIR, "tests", "integration", "run")

PASSES = 'print("ok - it works")\nprint("1 passed, 0 failed")\n'


def run_files(files, jobs=1, args=()):
    """Runs the runner on a directory holding `files` (path -> Python source; a file not
    named test_*.py, such as the durations file, is written as it is given)."""
    with tempfile.TemporaryDirectory(prefix="runner-") as testdir:
        for name, source in files.items():
            os.makedirs(os.path.join(testdir, os.path.dirname(name)), exist_ok=True)
            with open(os.path.join(testdir, name), "w", encoding="utf-8") as f:
                f.write(("import sys\n" if name.endswith(".py") else "") + source)
        env = dict(os.environ, MODK8S_TESTDIR=testdir, MODK8S_TEST_JOBS=str(jobs))
        result = subprocess.run([sys.executable, RUNNER, *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=120, check=False)
    return result.returncode, result.stdout


def tap_lines(output):
    return [line for line in output.splitlines() if line.startswith(("ok", "not ok"))]


@tests.case
def a_file_that_exits_77_before_any_test_is_skipped_with_its_reason():
    code, out = run_files({"test_a.py": PASSES,
                           "test_b.py": 'print("1..0 # SKIP frobctl not found")\nsys.exit(77)\n'})
    testing.expect_equal(tap_lines(out), ["ok - test_a.py: it works",
                                          "ok - test_b.py # SKIP frobctl not found"], "TAP lines")
    testing.expect(out.rstrip().endswith("1 passed, 0 failed"), out)
    testing.expect("# test_b.py: 0 passed, 0 failed, 1 skipped" in out, out)
    testing.expect_equal(code, 0, "exit status")


@tests.case
def a_file_that_exits_77_without_a_plan_is_skipped_with_its_last_line():
    code, out = run_files({"test_a.py": PASSES,
                           "test_b.py": 'print("no frobctl here")\nsys.exit(77)\n'})
    testing.expect("ok - test_b.py # SKIP no frobctl here" in tap_lines(out), out)
    testing.expect_equal(code, 0, "exit status")


@tests.case
def a_file_that_exits_77_after_running_tests_fails():
    code, out = run_files({"test_a.py": PASSES + "sys.exit(77)\n"})
    testing.expect("not ok - test_a.py: exits cleanly # exited with status 77" in tap_lines(out), out)
    testing.expect(out.rstrip().endswith("1 passed, 1 failed"), out)
    testing.expect_equal(code, 1, "exit status")


@tests.case
def a_file_that_crashes_or_runs_no_test_fails():
    code, out = run_files({"test_a.py": PASSES, "test_b.py": 'raise RuntimeError("boom")\n',
                           "test_c.py": "sys.exit(0)\n"})
    lines = tap_lines(out)
    testing.expect("not ok - test_b.py: exits cleanly # exited with status 1" in lines, out)
    testing.expect("not ok - test_c.py: runs tests # no test result printed" in lines, out)
    testing.expect_equal(code, 1, "exit status")


# Each file writes when it starts and ends to one log, then waits: the log shows which overlapped.
# A file that overlaps another waits for its start (up to 30 s, so a runner that does
# not overlap them still fails the check, and a loaded machine does not).
TIMED = """import os, time
log = os.environ["RUNNER_LOG"]
with open(log, "a") as f: f.write("start {name}\\n")
deadline = time.monotonic() + 30
while "{partner}" and time.monotonic() < deadline:
    with open(log) as f:
        if "start {partner}\\n" in f.read(): break
    time.sleep(0.05)
time.sleep(0.3)
with open(log, "a") as f: f.write("end {name}\\n")
print("ok - {name} ran")
"""


def timed_files(path):
    """TIMED files a, b and c at path(name): a and c partners, b marked to run alone."""
    files = {path(n): TIMED.format(name=n, partner=p)
             for n, p in (("a", "c"), ("b", ""), ("c", "a"))}
    files[path("b")] = "# run alone: it measures time\n" + files[path("b")]
    return files


def run_logged(files):
    """run_files() with two jobs; returns its exit status, its output and the files' events."""
    with tempfile.NamedTemporaryFile(prefix="runner-log-", delete=False) as log:
        os.environ["RUNNER_LOG"] = log.name
    try:
        code, out = run_files(files, jobs=2)
        with open(log.name, encoding="utf-8") as f:
            events = f.read().split("\n")[:-1]
    finally:
        os.unlink(log.name)
        del os.environ["RUNNER_LOG"]
    return code, out, events


@tests.case
def with_two_jobs_files_run_at_once_and_one_marked_alone_runs_by_itself():
    files = timed_files(lambda n: f"test_{n}.py")
    files["test_d.py"] = 'print("not ok - d broke")\nsys.exit(1)\n'
    code, out, events = run_logged(files)
    testing.expect_equal(code, 1, "exit status (test_d failed)")
    testing.expect(out.rstrip().endswith("3 passed, 1 failed"), out)
    testing.expect("not ok - test_d.py: d broke" in tap_lines(out), out)
    for name in ("a", "b", "c", "d"):
        testing.expect(f"# test_{name}.py: " in out, f"test_{name}.py's totals line:\n{out}")
    # a and c overlapped; b started after both ended and nothing started before it ended.
    testing.expect(events.index("start c") < events.index("end a"), events)
    b_start, b_end = events.index("start b"), events.index("end b")
    testing.expect(b_start > max(events.index("end a"), events.index("end c")), events)
    testing.expect(b_end == len(events) - 1, events)


# A file that logs its start, runs `sleep` seconds and logs its end.
STEP = """import os, time
log = os.environ["RUNNER_LOG"]
with open(log, "a") as f: f.write("start {name}\\n")
time.sleep({sleep})
with open(log, "a") as f: f.write("end {name}\\n")
print("ok - {name} ran")
"""


@tests.case
def with_two_jobs_the_shared_files_start_longest_first_by_the_durations_file():
    # c ends well before b, so d takes c's job alone and a takes b's later: the files'
    # own start lines cannot race each other as two files started at once do.
    sleeps = {"a": 0.1, "b": 3.0, "c": 0.1, "d": 0.1}
    files = {f"test_{n}.py": STEP.format(name=n, sleep=sleeps[n]) for n in "abcd"}
    # b is not listed (it may be long: it starts first), then c and d, the longest, a last.
    files["durations"] = "# a comment\n1.0 test_a.py\n30.0 test_c.py\n20.0 test_d.py\nnonsense\n"
    code, out, events = run_logged(files)
    testing.expect_equal(code, 0, f"exit status:\n{out}")
    starts = [e.split()[1] for e in events if e.startswith("start ")]
    testing.expect_equal(sorted(starts[:2]), ["b", "c"], f"first two started: {events}")
    testing.expect_equal(starts[2:], ["d", "a"], f"then: {events}")


def rewrite_durations(log, before=None):
    """The runner's --durations on `log` in a directory whose durations file holds
    `before`; returns its exit status, its output and the file it leaves."""
    with tempfile.TemporaryDirectory(prefix="runner-") as testdir:
        path = os.path.join(testdir, "durations")
        if before is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(before)
        result = subprocess.run([sys.executable, RUNNER, "--durations"], input=log,
                                env=dict(os.environ, MODK8S_TESTDIR=testdir),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=60, check=False)
        with open(path, encoding="utf-8") as f:
            return result.returncode, result.stdout, f.read()


@tests.case
def durations_rewrites_the_file_from_a_runs_per_file_lines_longest_first():
    log = ("ok - test_a.py: it works\n# test_a.py: 1 passed, 0 failed (2.5 s)\n"
           "# test_b.py: 3 passed, 1 failed, 2 skipped (40.0 s)\n# 4 skipped\n1 passed, 0 failed\n")
    code, out, left = rewrite_durations(log)
    testing.expect_equal(code, 0, f"exit status:\n{out}")
    testing.expect_equal([line for line in left.splitlines() if not line.startswith("#")],
                         ["40.0 test_b.py", "2.5 test_a.py"], left)
    code, out, left = rewrite_durations("no such lines\n", before="1.0 test_a.py\n")
    testing.expect_equal(code, 1, f"exit status with no per-file line:\n{out}")
    testing.expect_equal(left, "1.0 test_a.py\n", "the file is left as it was")


@tests.case
def with_two_jobs_a_file_that_times_out_fails_and_the_rest_still_run():
    env_timeout = os.environ.get("MODK8S_TEST_TIMEOUT")
    os.environ["MODK8S_TEST_TIMEOUT"] = "2"
    try:
        code, out = run_files({"test_a.py": PASSES, "test_b.py": "import time\ntime.sleep(60)\n",
                               "test_c.py": PASSES}, jobs=2)
    finally:
        if env_timeout is None:
            del os.environ["MODK8S_TEST_TIMEOUT"]
        else:
            os.environ["MODK8S_TEST_TIMEOUT"] = env_timeout
    # 2 s, doubled for a sanitizer build (the runner's rule).
    testing.expect(any(re.fullmatch(r"not ok - test_b\.py: finishes in time # timed out after [24] s",
                                    line) for line in tap_lines(out)), out)
    testing.expect(out.rstrip().endswith("2 passed, 1 failed"), out)
    testing.expect_equal(code, 1, "exit status")


@tests.case
def files_in_folders_run_and_a_word_selects_by_file_name_or_folder():
    files = {"test_top.py": PASSES, "x/test_a.py": PASSES, "x/y/test_b.py": PASSES,
             "z/test_xa.py": PASSES, "z/helper.py": "raise RuntimeError('not a test')\n"}
    code, out = run_files(files)
    testing.expect_equal(code, 0, "exit status")
    testing.expect_equal(tap_lines(out), ["ok - test_a.py: it works", "ok - test_b.py: it works",
                                          "ok - test_top.py: it works",
                                          "ok - test_xa.py: it works"], "every file, by name")
    _, out = run_files(files, args=["a"])
    testing.expect_equal(tap_lines(out), ["ok - test_a.py: it works", "ok - test_xa.py: it works"],
                         "the word 'a': file names, not folders")
    _, out = run_files(files, args=["x/"])
    testing.expect_equal(tap_lines(out), ["ok - test_a.py: it works", "ok - test_b.py: it works"],
                         "the folder x/ and its subfolder")
    code, out = run_files(files, args=["--list", "x"])
    testing.expect_equal((code, out.split()), (0, ["z/test_xa.py"]), "--list x: by name")


@tests.case
def a_file_in_a_folder_marked_alone_runs_by_itself():
    code, out, events = run_logged(timed_files(lambda n: f"{n}/test_{n}.py"))
    testing.expect_equal(code, 0, "exit status")
    testing.expect(events.index("start c") < events.index("end a"), events)
    testing.expect(events.index("start b") > max(events.index("end a"), events.index("end c")),
                   events)


@tests.case
def two_files_of_one_name_in_two_folders_fail_the_run():
    code, out = run_files({"x/test_a.py": PASSES, "y/test_a.py": PASSES, "test_b.py": PASSES},
                          args=["b"])
    testing.expect_equal(code, 1, "exit status")
    testing.expect_equal(tap_lines(out), ["not ok - test file names are unique "
                                          "# in two folders: test_a.py"], "TAP lines")


@tests.case
def test_kubectl_skips_when_kubectl_is_absent():
    # A PATH with python3 and nothing else: no kubectl, as on Debian bookworm.
    with tempfile.TemporaryDirectory(prefix="nokubectl-") as bindir:
        os.symlink(sys.executable, os.path.join(bindir, "python3"))
        result = subprocess.run([sys.executable, os.path.join(SRCDIR, "tests", "integration",
                                                              "harness", "test_kubectl.py")],
                                env=dict(os.environ, PATH=bindir), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=60, check=False)
    testing.expect_equal(result.returncode, 77, "exit status")
    testing.expect(result.stdout.startswith("1..0 # SKIP kubectl not found"), result.stdout)


tests.main()
