"""The integration runner's verdicts (tests/integration/run): a file that cannot run here
(exit 77 before any test) is skipped with its reason, never failed; one that crashes, runs
no test or exits 77 after running tests fails. test_kubectl.py without kubectl (Debian
bookworm has none) is such a skip.
"""

import os
import subprocess
import sys
import tempfile

import testing

tests = testing.Tests()

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(SRCDIR, "tests", "integration", "run")

PASSES = 'print("ok - it works")\nprint("1 passed, 0 failed")\n'


def run_files(files):
    """Runs the runner on a directory holding `files` (name -> Python source)."""
    with tempfile.TemporaryDirectory(prefix="runner-") as testdir:
        for name, source in files.items():
            with open(os.path.join(testdir, name), "w", encoding="utf-8") as f:
                f.write("import sys\n" + source)
        env = dict(os.environ, MODK8S_TESTDIR=testdir)
        result = subprocess.run([sys.executable, RUNNER], env=env, stdout=subprocess.PIPE,
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


@tests.case
def test_kubectl_skips_when_kubectl_is_absent():
    # A PATH with python3 and nothing else: no kubectl, as on Debian bookworm.
    with tempfile.TemporaryDirectory(prefix="nokubectl-") as bindir:
        os.symlink(sys.executable, os.path.join(bindir, "python3"))
        result = subprocess.run([sys.executable, os.path.join(SRCDIR, "tests", "integration",
                                                              "test_kubectl.py")],
                                env=dict(os.environ, PATH=bindir), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=60, check=False)
    testing.expect_equal(result.returncode, 77, "exit status")
    testing.expect(result.stdout.startswith("1..0 # SKIP kubectl not found"), result.stdout)


tests.main()
