"""Test registration and TAP output for the integration tests.

A test file registers its tests, then hands control to main():

    from knotd import Knotd
    import testing

    tests = testing.Tests()

    @tests.case
    def soa_comes_from_the_zone_file(server):
        answer = server.query("cluster.local.", "SOA")
        testing.expect_equal(answer.rcode, "NOERROR", "rcode")

    tests.table('''
    nope.default.svc.cluster.local.  A  NXDOMAIN
    ''')

    tests.main(fixture=Knotd)

main() enters the fixture (a context manager, e.g. a running knotd) once,
passes its value to every test, prints one TAP line per test
(`ok - name`, `not ok - name # reason`, `ok - name # SKIP reason`), then
`N passed, N failed`, and exits 0 only if nothing failed (and something ran).
Leaving the fixture is checked too: a knotd that crashed or left a sanitizer
report fails the file even if every query looked right.

A test fails by raising AssertionError (expect(), expect_equal(), a case
mismatch) or any other exception (printed with its traceback), and skips by
raising Skip("reason"). A fixture that raises Skip skips the whole file. After
a failure the fixture's new log lines are printed (anything with log_text());
once the fixture is down (is_running() false) the remaining tests fail at once.

A file whose cases cannot share one fixture (examples that contradict each
other) gives each group its own: tests registered after `tests.fixture(make,
"label")` run inside make(), one group after the other; main() needs no fixture
then.
"""

import contextlib
import signal
import sys
import time
import traceback

import cases
import valgrind


class Fixture(contextlib.ExitStack):
    """A fixture made of other context managers. Its start() enters them with
    enter_context() (other clean-up with callback()) and returns what the tests get;
    leaving the fixture, or a start() that fails half-way, leaves what was entered,
    last first."""

    def __enter__(self):
        super().__enter__()
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def start(self):
        raise NotImplementedError


class Skip(Exception):
    """Raised by a test that cannot run here; reported as `ok - name # SKIP reason`."""


class Failure(AssertionError):
    """A failed expectation; its message is printed without a traceback."""


def expect(condition, message):
    """Fails the current test with `message` unless `condition` holds."""
    if not condition:
        raise Failure(message)


def expect_equal(actual, expected, what):
    """Fails the current test unless `actual == expected`, naming `what` differs."""
    if actual != expected:
        raise Failure(f"{what}: expected {expected!r}, got {actual!r}")


def eventually(check, timeout=10, interval=0.02):
    """Calls check() until it returns without raising AssertionError; fails after timeout s."""
    deadline = time.monotonic() + valgrind.scaled(timeout)
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        time.sleep(interval)


def _title(name):
    return name.replace("_", " ")


def _diag(text):
    """Prints text as TAP diagnostics, one `# ` line per line."""
    for line in str(text).rstrip("\n").splitlines():
        print(f"# {line}" if line else "#")


def _raise_system_exit(signum, frame):
    # Unwinds `with` blocks, so every knotd started by the test is stopped.
    raise SystemExit(128 + signum)


class Tests:
    """The tests of one file, in registration order."""

    def __init__(self):
        self._tests = []
        # (fixture factory or None for main()'s, label, tests), in registration order.
        self._groups = [(None, None, self._tests)]
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self._log_lines_shown = 0

    def case(self, function):
        """Decorator: registers `function` as a test named after it."""
        self._tests.append((_title(function.__name__), function))
        return function

    def add(self, name, function):
        """Registers `function(fixture_value)` as a test called `name`."""
        self._tests.append((name, function))

    def fixture(self, factory, label):
        """Tests registered from now on run inside factory(), not main()'s fixture."""
        self._tests = []
        self._groups.append((factory, label, self._tests))

    def table(self, text):
        """Registers one test per case line of `text` (see cases.py for the format)."""
        for case in cases.parse(text):
            self.add(case.name, case.run)

    def table_file(self, path):
        """Registers one test per case line of the file at `path`."""
        with open(path, encoding="utf-8") as f:
            for case in cases.parse(f.read(), source=path):
                self.add(case.name, case.run)

    def _report(self, ok, name, note=""):
        if ok:
            self.passed += 1
            print(f"ok - {name}")
        else:
            self.failed += 1
            print(f"not ok - {name}" + (f" # {note}" if note else ""))
        sys.stdout.flush()

    def _run_one(self, name, function, value, with_value):
        is_running = getattr(value, "is_running", None)
        if callable(is_running) and not is_running():
            self._report(False, name, "not run: the server is down")
            return
        started = time.monotonic()
        try:
            function(value) if with_value else function()
        except Skip as e:
            self.skipped += 1
            print(f"ok - {name} # SKIP {e}")
            return
        except AssertionError as e:
            lines = str(e).splitlines() or ["failed"]
            self._report(False, name, lines[0])
            _diag("\n".join(lines[1:]))
            self._print_context(value)
            return
        except Exception as e:
            self._report(False, name, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            _diag(traceback.format_exc())
            self._print_context(value)
            return
        self._report(True, name)
        elapsed = time.monotonic() - started
        if elapsed > 5:
            _diag(f"{name} took {elapsed:.1f} s")

    def _print_context(self, value):
        """After a failure: the fixture's log lines (knotd's) not shown before, at most 30."""
        log_text = getattr(value, "log_text", None)
        if not callable(log_text):
            return
        lines = log_text().splitlines()
        new = lines[self._log_lines_shown:]
        self._log_lines_shown = len(lines)
        if new:
            _diag("knotd log (new lines):")
            _diag("\n".join(new[-30:]))

    def run(self, value=None, with_value=True, tests=None):
        """Runs the registered tests (or the given ones) with the fixture value."""
        self._log_lines_shown = 0
        if tests is None:
            tests = [test for _, _, group in self._groups for test in group]
        for name, function in tests:
            self._run_one(name, function, value, with_value)

    def main(self, fixture=None):
        """Runs the file's tests inside `fixture()` (if given), prints the totals, exits."""
        signal.signal(signal.SIGTERM, _raise_system_exit)
        signal.signal(signal.SIGHUP, _raise_system_exit)
        try:
            for factory, label, tests in self._groups:
                factory = factory or fixture
                if not tests:
                    continue
                if factory is None:
                    self.run(with_value=False, tests=tests)
                else:
                    self._run_in_fixture(factory, tests, label)
        finally:
            if self.skipped:
                print(f"# {self.skipped} skipped")
            print(f"{self.passed} passed, {self.failed} failed")
            sys.stdout.flush()
        sys.exit(0 if self.failed == 0 and self.passed + self.skipped > 0 else 1)

    def _run_in_fixture(self, fixture, tests, label=None):
        stopped = "the server stops cleanly with no sanitizer report" + (f" ({label})" if label else "")
        try:
            context = fixture()
            value = context.__enter__()
        except Skip as e:
            for name, _ in tests:
                self.skipped += 1
                print(f"ok - {name} # SKIP {e}")
            return
        except Exception as e:
            self._report(False, "start the test fixture",
                         f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
            _diag(str(e) or traceback.format_exc())
            for name, _ in tests:
                self._report(False, name, "not run: the fixture did not start")
            return
        try:
            self.run(value, tests=tests)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): still stop the fixture, then let it propagate.
            context.__exit__(*sys.exc_info())
            raise
        try:
            context.__exit__(None, None, None)
        except Exception as e:
            self._report(False, stopped, type(e).__name__)
            _diag(str(e))
            return
        self._report(True, stopped)


class _TapResult:
    """unittest result that prints this module's `ok - name` lines."""

    def __init__(self):
        import unittest
        self._base = unittest.TestResult()

    @staticmethod
    def name(test):
        return _title(test.id().rsplit(".", 1)[-1])


def unittest_main(module="__main__"):
    """Runs a unittest module's tests with this module's output: TAP lines and the totals."""
    import unittest

    class Result(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.ok = 0
            self.bad = 0

        def addSuccess(self, test):
            super().addSuccess(test)
            self.ok += 1
            print(f"ok - {_TapResult.name(test)}", flush=True)

        def _fail(self, test, err):
            self.bad += 1
            print(f"not ok - {_TapResult.name(test)}", flush=True)
            _diag("".join(traceback.format_exception(*err)))

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._fail(test, err)

        def addError(self, test, err):
            super().addError(test, err)
            self._fail(test, err)

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self.ok += 1
            print(f"ok - {_TapResult.name(test)} # SKIP {reason}", flush=True)

    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module])
    result = Result()
    signal.signal(signal.SIGTERM, _raise_system_exit)
    suite.run(result)
    print(f"{result.ok} passed, {result.bad} failed", flush=True)
    sys.exit(0 if result.bad == 0 and result.ok > 0 else 1)
