"""Run Knot Resolver (kresd 5, Debian's knot-resolver) as the node-local cache of a test.

    from kresd import Kresd, kresd_path

    with Kresd(CONF, {"KRESD_CLUSTER_DNS": "127.0.0.1@5300"}) as cache:
        answer = cache.query("web.shop.svc.cluster.local.", "A")

kresd runs in the foreground without systemd: `kresd -n -c CONF DIR`, DIR a temporary
directory that is its working directory and holds its cache (LMDB). It listens where
the configuration says; the environment given (plus KRESD_LISTEN=127.0.0.1@PORT, a free
port) is how packaging/kubernetes/node-local/kresd.conf takes its settings. It is stopped
by PID when the `with` block ends, and by the kernel if the test process dies
(PR_SET_PDEATHSIG).
"""

import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time

import dig
import knotd


class KresdError(Exception):
    """kresd could not start, or did not stop cleanly."""


def kresd_path():
    """The kresd program, or None when the Debian package knot-resolver is not installed."""
    return shutil.which("kresd") or shutil.which("kresd", path="/usr/sbin:/sbin")


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


class Kresd(dig.Server):
    """One kresd with the given configuration file and environment; a context manager."""

    address = "127.0.0.1"

    def __init__(self, config, environment=None, probe="localhost.", start_timeout=15):
        self.config = os.path.abspath(config)
        self.environment = dict(environment or {})
        self.probe = probe
        self.start_timeout = start_timeout
        self.dir = tempfile.mkdtemp(prefix="mod-k8s-kresd-")
        self.log_path = os.path.join(self.dir, "kresd.log")
        self.port = None
        self.process = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self._kill()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            self.stop()
        except KresdError as e:
            if kind is None:
                raise
            print(f"# {e}".replace("\n", "\n# "))
        return False

    def start(self):
        """Starts kresd on a free port and waits until it answers `probe` (kresd answers
        localhost. itself)."""
        program = kresd_path()
        if program is None:
            raise KresdError("kresd not found; install the Debian package 'knot-resolver'")
        self.port = knotd.free_port(self.address)
        env = dict(os.environ, **self.environment)
        env["KRESD_LISTEN"] = f"{self.address}@{self.port}"
        with open(self.log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen([program, "-n", "-c", self.config, self.dir], env=env,
                                            cwd=self.dir, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise KresdError(f"kresd exited during start-up (status {code}):\n{self.log_tail()}")
            try:
                self.query(self.probe, "A", timeout=1)
                return
            except dig.QueryError:
                pass
            if time.monotonic() > deadline:
                raise KresdError(f"kresd did not answer within {self.start_timeout} s:\n"
                                 + self.log_tail())
            time.sleep(0.1)

    def stop(self):
        """Stops kresd by PID; raises KresdError if it had died or does not stop."""
        if self.process is None:
            return
        problem = knotd.stop_process(self.process, "kresd", 10)
        self.process = None
        tail = self.log_tail()
        if not os.environ.get("MODK8S_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        if problem:
            raise KresdError(problem + "\nkresd log (last lines):\n" + tail)

    def _kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def is_running(self):
        return self.process is not None and self.process.poll() is None

