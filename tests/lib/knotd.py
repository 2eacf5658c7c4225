"""Run a real knotd with the built mod-k8s module, for integration tests and the demo.

    from knotd import Knotd

    with Knotd(module={"ttl": 5}) as server:          # own dir, free port, zone files
        answer = server.query("foo.cluster.local.", "A", edns=True)
        server.knotc("reload")

Each Knotd gets its own temporary directory (rundir, storage, zone files,
knot.conf, log), a free loopback port (checked for UDP and TCP), and runs in
the foreground as a child process. It is stopped by PID when the `with` block
ends, at interpreter exit, on SIGTERM/SIGINT (via testing.main), and by the
kernel if the test process dies (PR_SET_PDEATHSIG). Stopping fails loudly if
knotd crashed, exited non-zero or left a sanitizer report.

How the module is loaded (knotd auto-loads every *.so in its module directory,
and a `module: file:` line for a second copy is a "duplicate module" error):
  namespace  knotd runs in a private mount namespace (unshare -m, or -r -m when
             not root) where its module directory holds only the built k8s.so:
             the production auto-load path, with no `module:` section.
  file       nothing is installed: a `module: - id: mod-k8s file: <build>` section.
  installed  the installed k8s.so is byte-identical to the build: no `module:` section.
A different installed copy is an error. MODK8S_LOAD=namespace|file|installed
forces a mode.

An ASan/UBSan build of k8s.so (--enable-sanitizers) or a ThreadSanitizer build
(--enable-tsan) is detected from its dependencies; knotd and knotc then run with
the sanitizer runtimes preloaded and reports written into the server's directory.

Command line (used by scripts/demo):
    knotd.py start --dir DIR [--port N] [--load installed]   prints "pid port"
    knotd.py stop --dir DIR
"""

import argparse
import atexit
import ctypes
import filecmp
import functools
import glob
import os
import random
import re
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time

import dig
import valgrind

DEFAULT_ZONES = ("cluster.local.", "in-addr.arpa.", "ip6.arpa.", "clusterset.local.")
MODULE_REF = "mod-k8s/default"
ZONE_NS = "ns.dns.cluster.local."
ZONE_TTL = 5

# knotd log lines that mean the module is not loaded as it should be.
LOAD_FAILURES = re.compile(r"incompatible version|failed to load|failed to open|module name mismatch"
                           r"|duplicate module|unknown module|undefined symbol|out of scope"
                           r"|invalid module|ASan runtime does not come first")
# A sanitizer report printed on knotd's stderr (UBSan does not honour log_path here).
SANITIZER_OUTPUT = re.compile(r"runtime error:|ERROR: \w+Sanitizer|SUMMARY: \w+Sanitizer"
                              r"|WARNING: ThreadSanitizer")
PORT_IN_USE = re.compile(r"address already in use|cannot bind")


class KnotdError(Exception):
    """knotd could not start, stop cleanly, or load the module as expected."""


def zone_soa(zone):
    """The SOA rdata the harness writes into every zone file."""
    return f"{ZONE_NS} hostmaster.{zone} 1 7200 1800 86400 {ZONE_TTL}"


def zone_file_text(zone, extra=""):
    """A minimal zone: SOA and NS (knotd needs both to run a zone's modules), plus `extra` lines."""
    return (f"$ORIGIN {zone}\n$TTL {ZONE_TTL}\n"
            f"@\tSOA\t{zone_soa(zone)}\n"
            f"@\tNS\t{ZONE_NS}\n" + (extra.strip() + "\n" if extra.strip() else ""))


# ---------------------------------------------------------------------------
# The build under test


class Build:
    """Where the sources and the built k8s.so are, and its sanitizer runtimes."""

    def __init__(self, srcdir, builddir):
        self.srcdir = srcdir
        self.builddir = builddir
        self.module = os.path.join(builddir, ".libs", "k8s.so")
        self.sanitizer_runtimes = _sanitizer_runtimes(self.module)

    @property
    def sanitized(self):
        """True for an --enable-sanitizers or --enable-tsan build."""
        return bool(self.sanitizer_runtimes)

    @property
    def tsan(self):
        """True for an --enable-tsan build."""
        return any("libtsan" in path for path in self.sanitizer_runtimes)


def _sanitizer_runtimes(module):
    """Paths of libasan/libubsan (ASan first: it must be preloaded first) or libtsan the module links to."""
    result = subprocess.run(["ldd", module], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, check=False)
    found = {}
    for line in result.stdout.splitlines():
        match = re.match(r"\s*(lib(asan|ubsan|tsan)\.so\S*) => (\S+)", line)
        if match:
            found[match.group(2)] = match.group(3)
    return [found[name] for name in ("asan", "ubsan", "tsan") if name in found]


# ASan and UBSan make the watcher's decoding and table builds about two to three times
# slower: a goal's bound (a change in DNS within 2 s) is this much longer in such a build.
SANITIZER_GOAL_SCALE = 3.0
# ThreadSanitizer slows every access of the module, the watcher's most of all.
TSAN_GOAL_SCALE = 6.0


def goal_bound(seconds):
    """The bound of a timing goal for the build under test.

    As measured in a plain build; longer under the sanitizers (SANITIZER_GOAL_SCALE)
    and under memcheck (valgrind.timeout_scale()), where the goal is not what is tested.
    """
    scale = valgrind.timeout_scale()
    if scale == 1.0 and find_build().sanitized:
        scale = TSAN_GOAL_SCALE if find_build().tsan else SANITIZER_GOAL_SCALE
    return seconds * scale


@functools.lru_cache(maxsize=None)
def find_build():
    """The build to test: $MODK8S_BUILDDIR (set by make check), else the source tree or build/."""
    srcdir = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    if os.environ.get("MODK8S_BUILDDIR"):
        candidates = [os.environ["MODK8S_BUILDDIR"]]
    else:
        candidates = [srcdir, os.path.join(srcdir, "build")]
    for builddir in candidates:
        if os.path.isfile(os.path.join(builddir, ".libs", "k8s.so")):
            return Build(os.path.abspath(srcdir), os.path.abspath(builddir))
    raise KnotdError("k8s.so is not built; run 'make' first (looked in "
                     + ", ".join(os.path.join(c, ".libs") for c in candidates) + ")")


def _program(name):
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        raise KnotdError(f"{name} not found; install the Debian package 'knot'")
    return path


@functools.lru_cache(maxsize=None)
def knot_release():
    """The Knot release (x.y, e.g. "3.4") the module is built for: libknot-dev's, which
    configure checked to be knotd's."""
    result = subprocess.run(["pkg-config", "--modversion", "libknot"], stdout=subprocess.PIPE,
                            text=True, check=True)
    return ".".join(result.stdout.strip().split(".")[:2])


@functools.lru_cache(maxsize=None)
def module_instdir():
    """The directory knotd auto-loads modules from (pkg-config knotd module_instdir)."""
    result = subprocess.run(["pkg-config", "--variable=module_instdir", "knotd"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0 or not result.stdout.strip():
        raise KnotdError("pkg-config knotd not found; install the Debian package 'libknot-dev'")
    return result.stdout.strip()


# ---------------------------------------------------------------------------
# Loading the module

# Runs in a fresh private mount namespace: makes knotd's module directory hold
# only the staged k8s.so, then execs the command. Nothing leaks to the host.
_NAMESPACE_SCRIPT = r"""
set -e
moddir=$1 stage=$2 scratch=$3
shift 3
if [ -d "$moddir" ]; then
	mount --bind "$stage" "$moddir"
else
	# The directory does not exist on the host: overlay its nearest existing ancestor.
	base=$moddir
	while [ ! -d "$base" ]; do base=$(dirname "$base"); done
	mount -t tmpfs mod-k8s-test "$scratch"
	mkdir -p "$scratch/upper${moddir#"$base"}" "$scratch/work"
	cp "$stage"/*.so "$scratch/upper${moddir#"$base"}/"
	mount -t overlay mod-k8s-test -o "lowerdir=$base,upperdir=$scratch/upper,workdir=$scratch/work" "$base"
fi
exec "$@"
"""


def _namespace_prefix(stage, scratch):
    unshare = ["unshare", "-m", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare.insert(1, "-r")
    return unshare + ["sh", "-c", _NAMESPACE_SCRIPT, "mod-k8s-namespace",
                      module_instdir(), stage, scratch]


@functools.lru_cache(maxsize=None)
def _namespace_works():
    """Whether this machine lets us build the private module directory (tried once)."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="mod-k8s-probe-") as tmp:
        stage = os.path.join(tmp, "stage")
        scratch = os.path.join(tmp, "scratch")
        os.mkdir(stage)
        os.mkdir(scratch)
        shutil.copy(find_build().module, stage)
        probe = ["test", "-f", os.path.join(module_instdir(), "k8s.so")]
        result = subprocess.run(_namespace_prefix(stage, scratch) + probe,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return result.returncode == 0


@functools.lru_cache(maxsize=None)
def load_mode():
    """How knotd gets the built module: "namespace", "file" or "installed" (see the top of this file)."""
    build = find_build()
    forced = os.environ.get("MODK8S_LOAD", "")
    if forced not in ("", "namespace", "file", "installed"):
        raise KnotdError(f"MODK8S_LOAD={forced}: expected namespace, file or installed")
    if forced in ("", "namespace") and _namespace_works():
        return "namespace"
    if forced == "namespace":
        raise KnotdError("MODK8S_LOAD=namespace, but 'unshare -m' with mounts does not work here")
    installed = os.path.join(module_instdir(), "k8s.so")
    if not os.path.exists(installed):
        if forced == "installed":
            raise KnotdError(f"MODK8S_LOAD=installed, but {installed} does not exist (run 'make install')")
        return "file"
    if forced == "file":
        raise KnotdError(f"MODK8S_LOAD=file, but {installed} is installed: knotd would report "
                         "a duplicate module")
    if filecmp.cmp(installed, build.module, shallow=False):
        return "installed"
    raise KnotdError(
        f"{installed} is installed and differs from the build under test ({build.module}); "
        "knotd would load the installed copy, and a 'module: file:' line for the build would be a "
        "duplicate module. Run the tests as root (they then use a private mount namespace), "
        "or 'make install' this build, or remove the installed copy.")


def shared_module(name):
    """Path of Knot's shared module `name` (e.g. "dnstap") in knotd's module directory.

    Debian ships the built-in modules inside knotd and a few as packages
    (knot-module-dnstap, knot-module-geoip) installing NAME.so there. Raises
    KnotdError naming the package when it is not installed.
    """
    path = os.path.join(module_instdir(), f"{name}.so")
    if not os.path.isfile(path):
        raise KnotdError(f"{path} not found; install the Debian package 'knot-module-{name}'")
    return path


# ---------------------------------------------------------------------------
# The server

_running = set()


@atexit.register
def _stop_all():
    for server in list(_running):
        try:
            server.stop()
        except KnotdError as e:
            print(f"# {e}".replace("\n", "\n# "), file=sys.stderr)


def _die_with_parent():
    # PR_SET_PDEATHSIG: the kernel sends SIGTERM to knotd if the test process dies.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def stop_process(process, name, timeout):
    """Stops a server this harness started: SIGTERM to its PID, then a kill if it has
    not exited within timeout s. Returns what went wrong (it had died, it did not stop),
    or None; its exit status is the caller's to judge."""
    if process.poll() is not None:
        return f"{name} died while running (status {process.returncode})"
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return f"{name} did not stop within {timeout:g} s of SIGTERM (killed)"
    return None


def _port_is_free(address, port):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(family, kind) as s:
            try:
                s.bind((address, port))
            except OSError:
                return False
    return True


def free_port(address="127.0.0.1"):
    """A port free for both UDP and TCP, below the kernel's ephemeral range."""
    for _ in range(200):
        port = random.randrange(20000, 32000)
        if _port_is_free(address, port):
            return port
    raise KnotdError(f"no free port found on {address}")


def _yaml_value(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    text = str(value)
    if text == "" or re.search(r'[\s#:"\[\]{},]', text):
        # knotd reads \" as " and every other backslash as it is.
        return '"' + text.replace('"', '\\"') + '"'
    return text


class Knotd(dig.Server):
    """One knotd with mod-k8s; a context manager that starts and stops it.

    module:     mod-k8s options, e.g. {"ttl": 5} (the section is `mod-k8s: - id: default`).
    zones:      zone names served with `module: mod-k8s/default`, or a dict mapping a zone
                name to its module reference (None for a zone without the module).
    zone_extra: a dict mapping a zone name to extra zone file lines.
    extra:      raw knot.conf text placed before the mod-k8s section (e.g. remote:, acl:).
    template:   more options of the default template, e.g. {"global-module": "mod-dnsproxy/x"}.
    config:     a whole knot.conf instead of the generated one, with ${dir}, ${address} and
                ${port} filled in (needs a module directory: not in "file" load mode).
    workdir:    a directory to use and keep (default: a temporary one, removed on stop).
    daemon:     leave it running when this process exits (scripts/demo).
    environment: extra environment variables of knotd (e.g. KUBERNETES_SERVICE_HOST).
    preload:    libraries preloaded into knotd after the sanitizer runtimes (fault injection).
    knot_modules: Knot's own shared modules (e.g. "dnstap" of knot-module-dnstap) that knotd
                loads from its module directory beside k8s.so; see shared_module().
    """

    address = "127.0.0.1"

    def __init__(self, module=None, zones=DEFAULT_ZONES, zone_extra=None, extra="", template=None,
                 config=None, workdir=None, daemon=False, port=None, log_level="debug",
                 start_timeout=None, environment=None, preload=(), knot_modules=()):
        self.build = find_build()
        self.knot_modules = [shared_module(name) for name in knot_modules]
        self.module_options = dict(module or {})
        self.template_options = dict(template or {})
        self.environment = dict(environment or {})
        self.preload = list(preload)
        self.config = config
        self.zones = dict(zones) if isinstance(zones, dict) else {z: MODULE_REF for z in zones}
        self.zone_extra = dict(zone_extra or {})
        self.extra = extra
        self.daemon = daemon
        self.port = port
        self.log_level = log_level
        self.start_timeout = valgrind.scaled(start_timeout or (45 if self.build.sanitized else 15))
        self.load = load_mode()
        if config is not None and self.load == "file":
            raise KnotdError("a given config needs knotd to auto-load the module, "
                             "but it is loaded by 'module: file:' here")
        self.keep_dir = workdir is not None or bool(os.environ.get("MODK8S_KEEP_TMP"))
        self.dir = os.path.abspath(workdir) if workdir else tempfile.mkdtemp(prefix="mod-k8s-knotd-")
        self.process = None
        self.conf_path = os.path.join(self.dir, "knot.conf")
        self.log_path = os.path.join(self.dir, "knotd.log")
        self.sanitizer_dir = os.path.join(self.dir, "sanitizer")

    # -- context manager

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self._cleanup_after_failed_start()
            raise
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.stop()
        else:
            # The test already failed; report stop problems without hiding its exception.
            try:
                self.stop()
            except KnotdError as e:
                print(f"# {e}".replace("\n", "\n# "))
        return False

    @property
    def pid(self):
        """knotd's process id (None when not running)."""
        return self.process.pid if self.process else None

    # -- files

    def config_text(self):
        """The knot.conf this server runs with."""
        if self.config is not None:
            return string.Template(self.config).substitute(
                dir=self.dir, address=self.address, port=self.port)
        lines = [
            "server:",
            f"    rundir: {self.dir}/run",
            f"    listen: {self.address}@{self.port}",
            "    udp-workers: 2",
            "    tcp-workers: 1",
            "    background-workers: 1",
            "log:",
            "  - target: stdout",
            f"    any: {self.log_level}",
            "database:",
            f"    storage: {self.dir}/storage",
        ]
        if self.load == "file":
            # Must precede every mod-k8s section and reference.
            lines += ["module:", "  - id: mod-k8s", f"    file: {self._module_copy()}"]
        if self.extra.strip():
            lines += self.extra.strip("\n").splitlines()
        lines += ["mod-k8s:", "  - id: default"]
        lines += [f"    {key}: {_yaml_value(value)}" for key, value in self.module_options.items()]
        lines += ["template:", "  - id: default", f"    storage: {self.dir}/zones",
                  '    file: "%s.zone"']
        lines += [f"    {key}: {_yaml_value(value)}" for key, value in self.template_options.items()]
        lines.append("zone:")
        for zone, module in self.zones.items():
            lines.append(f"  - domain: {zone}")
            if module:
                lines.append(f"    module: {module}")
        return "\n".join(lines) + "\n"

    def _module_copy(self):
        # knotd maps the .so; a private copy survives a rebuild during the run.
        return os.path.join(self.dir, "modules", "k8s.so")

    def write_files(self):
        """Writes knot.conf, the zone files and the module copy into the server's directory."""
        for sub in ("run", "storage", "zones", "modules", "sanitizer", "scratch"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        shutil.copy(self.build.module, self._module_copy())
        # The private module directory of the namespace mode holds them beside k8s.so;
        # in the other modes knotd finds them in the host's directory.
        for path in self.knot_modules:
            shutil.copy(path, os.path.join(self.dir, "modules"))
        for zone in self.zones:
            with open(os.path.join(self.dir, "zones", f"{zone}zone"), "w", encoding="utf-8") as f:
                f.write(zone_file_text(zone, self.zone_extra.get(zone, "")))
        if self.port is None:
            self.port = free_port(self.address)
        with open(self.conf_path, "w", encoding="utf-8") as f:
            f.write(self.config_text())

    # -- running programs with the module

    def _sanitizer_env(self):
        preload = self.build.sanitizer_runtimes + self.preload
        if not self.build.sanitized:
            return {}, [f"LD_PRELOAD={' '.join(preload)}"] if preload else []
        common = f"log_path={self.sanitizer_dir}"
        env = {
            "ASAN_OPTIONS": f"{common}/asan:abort_on_error=1:halt_on_error=1:detect_leaks=1",
            "UBSAN_OPTIONS": f"{common}/ubsan:halt_on_error=1:abort_on_error=1:print_stacktrace=1",
            # knotd itself is not instrumented: only the module's accesses are checked,
            # with liburcu's grace periods modelled by module/lib/tsan_rcu.h.
            "TSAN_OPTIONS": f"{common}/tsan:suppressions={self.build.srcdir}/tests/tsan.supp"
                            ":second_deadlock_stack=1",
        }
        # Only the final program gets the runtimes; unshare, sh and mount stay plain.
        return env, [f"LD_PRELOAD={' '.join(preload)}"]

    def command(self, program, *args):
        """argv and environment that run `program` (knotd, knotc) seeing the built module."""
        env_vars, preload = self._sanitizer_env()
        env = dict(os.environ, **env_vars)
        # Hermetic: a test run inside a pod must not reach that cluster's API server
        # nor take its node for the federation topology.
        for name in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "NODE_NAME"):
            env.pop(name, None)
        env.update(self.environment)
        memcheck = valgrind.wrapper() if program == "knotd" else []
        if memcheck and self.build.sanitized:
            raise KnotdError("MODK8S_VALGRIND needs a build without sanitizers (scripts/build)")
        argv = ["env"] + preload + memcheck + [_program(program), "-c", self.conf_path] + list(args)
        if self.load == "namespace":
            argv = _namespace_prefix(os.path.join(self.dir, "modules"),
                                     os.path.join(self.dir, "scratch")) + argv
        return argv, env

    def knotc(self, *args, timeout=60):
        """Runs `knotc -c knot.conf ARGS...`; returns the CompletedProcess (output in .stdout).

        A sanitizer report from knotc (it loads the module for conf-check) raises KnotdError.
        """
        argv, env = self.command("knotc", *args)
        before = set(self.sanitizer_reports())
        result = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, timeout=timeout, check=False)
        new = [r for r in self.sanitizer_reports() if r not in before]
        if new or SANITIZER_OUTPUT.search(result.stdout):
            raise KnotdError(f"knotc {' '.join(args)} reported a sanitizer error:\n"
                             + self._read_reports(new) + result.stdout)
        return result

    # -- lifecycle

    def start(self):
        """Writes the files, starts knotd and waits until every zone answers its SOA."""
        if self.process:
            return
        for attempt in range(3):
            self.write_files()
            self._spawn()
            if self._wait_until_ready():
                return
            # Someone took the port between our check and knotd's bind: try another.
            self._kill()
            self.port = None
        raise KnotdError(f"knotd could not bind a free port after 3 attempts\n{self.log_tail(40)}")

    def _spawn(self):
        argv, env = self.command("knotd")
        log = open(self.log_path, "w", encoding="utf-8")
        try:
            if self.daemon:
                self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True)
            else:
                self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
                _running.add(self)
        finally:
            log.close()

    def _wait_until_ready(self):
        """True once every zone answers; False on a port clash; raises on anything else."""
        deadline = time.monotonic() + self.start_timeout
        pending = list(self.zones)
        while time.monotonic() < deadline:
            log = self.log_text()
            if LOAD_FAILURES.search(log):
                self._kill()
                raise KnotdError(f"knotd reported a load failure (module load mode {self.load}):\n"
                                 + self.log_tail(40))
            if PORT_IN_USE.search(log):
                return False
            if self.process.poll() is not None:
                code = self.process.returncode
                self._forget()
                raise KnotdError(f"knotd exited during start-up (status {code}):\n"
                                 + self.log_tail(40) + self._report_text())
            try:
                if dig.query(self, pending[0], "SOA", timeout=1).rcode == "NOERROR":
                    pending.pop(0)
                    if not pending:
                        return True
                    continue
            except dig.QueryError:
                pass
            time.sleep(0.1)
        self._kill()
        raise KnotdError(f"knotd did not answer SOA of {pending[0]} within {self.start_timeout} s:\n"
                         + self.log_tail(40))

    def stop(self):
        """Stops knotd by PID and checks it went cleanly; raises KnotdError if not.

        Clean means: exited by itself within 20 s of SIGTERM with status 0, and no
        sanitizer report. The directory is removed unless it was given or
        MODK8S_KEEP_TMP is set.
        """
        if not self.process:
            return
        problems = []
        problem = stop_process(self.process, "knotd", valgrind.scaled(20))
        if problem:
            problems.append(problem)
        elif self.process.returncode != 0:
            problems.append(f"knotd exited with status {self.process.returncode}")
        reports = self._report_text()
        if reports:
            problems.append("sanitizer report:" + reports)
        memcheck = self._memcheck_text()
        if memcheck:
            problems.append("valgrind memcheck report:\n" + memcheck)
        if problems:
            problems.append("knotd log (last lines):\n" + self.log_tail(40))
        self._forget()
        self._remove_dir()
        if problems:
            raise KnotdError("\n".join(problems))

    def _kill(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._forget()

    def _forget(self):
        _running.discard(self)
        self.process = None

    def _remove_dir(self):
        if not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _cleanup_after_failed_start(self):
        self._kill()
        self._remove_dir()

    def reload(self):
        """`knotc reload`, then waits until every zone answers again."""
        result = self.knotc("reload")
        if result.returncode != 0:
            raise KnotdError(f"knotc reload failed:\n{result.stdout}")
        if not self._wait_until_ready():
            raise KnotdError("knotd stopped answering after reload")

    # -- observing (query, log_text and log_tail: dig.Server)

    def wait_for_log(self, pattern, timeout=10):
        """Waits until a log line matches the regex `pattern`; returns that line."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + valgrind.scaled(timeout)
        while True:
            for line in self.log_text().splitlines():
                if regex.search(line):
                    return line
            if time.monotonic() > deadline:
                raise KnotdError(f"no knotd log line matched {pattern!r} within {timeout} s:\n"
                                 + self.log_tail(20))
            time.sleep(0.1)

    def sanitizer_reports(self):
        """Paths of sanitizer report files written so far."""
        return sorted(glob.glob(os.path.join(self.sanitizer_dir, "*san.*")))

    @staticmethod
    def _read_reports(paths):
        text = []
        for path in paths:
            with open(path, encoding="utf-8", errors="replace") as f:
                text.append(f"--- {os.path.basename(path)}\n" + "".join(f.readlines()[:80]))
        return "\n".join(text)

    def _memcheck_text(self):
        """The error part of this knotd's valgrind log if memcheck counted errors, else ""."""
        directory = valgrind.log_dir()
        if directory is None or self.process is None:
            return ""
        path = os.path.join(directory, f"knotd.{self.process.pid}.log")
        if not os.path.exists(path):
            return ""
        found = valgrind.scan_one(path)
        return valgrind.report(path) if found else ""

    def _report_text(self):
        """Sanitizer reports: the files ASan writes, and UBSan's lines in knotd's own output."""
        reports = self.sanitizer_reports()
        text = ("\n" + self._read_reports(reports)) if reports else ""
        lines = self.log_text().splitlines()
        for number, line in enumerate(lines):
            if SANITIZER_OUTPUT.search(line):
                text += "\n--- knotd output\n" + "\n".join(lines[number:number + 40])
                break
        return text

    def is_running(self):
        """Whether knotd is still up (False after a crash)."""
        return self.process is not None and self.process.poll() is None


def check_config(path=None, **options):
    """Runs `knotc conf-check` without starting knotd, seeing the built module.

    Checks the config file at `path`, or else the one Knotd(**options) would generate.
    Returns the CompletedProcess: returncode 0 and "Configuration is valid" when accepted.
    """
    server = Knotd(**options)
    try:
        server.write_files()
        if path is not None:
            server.conf_path = os.path.abspath(path)
        return server.knotc("conf-check")
    finally:
        server._remove_dir()


# ---------------------------------------------------------------------------
# Command line for scripts/demo


def _cli(argv):
    parser = argparse.ArgumentParser(description="start or stop a knotd with mod-k8s")
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("--dir", required=True, help="directory for config, zones, log, PID")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--module-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a mod-k8s option (repeatable)")
    parser.add_argument("--load", default="installed", choices=("installed", "namespace", "file"),
                        help="how knotd gets the module (default: the 'make install' copy)")
    args = parser.parse_args(argv)
    os.environ["MODK8S_LOAD"] = args.load
    pid_path = os.path.join(args.dir, "knotd.pid")
    if args.action == "stop":
        return _cli_stop(pid_path)
    os.makedirs(args.dir, exist_ok=True)
    options = dict(option.split("=", 1) for option in args.module_option)
    server = Knotd(module=options, workdir=args.dir, daemon=True, port=args.port)
    server.start()
    with open(pid_path, "w", encoding="utf-8") as f:
        f.write(f"{server.pid}\n")
    print(server.pid, server.port)
    return 0


def _cli_stop(pid_path):
    try:
        with open(pid_path, encoding="utf-8") as f:
            pid = int(f.read().strip())
    except FileNotFoundError:
        return 0
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(200):
            if not _alive(pid):
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.remove(pid_path)
    return 0


def _alive(pid):
    """Whether `pid` runs (a zombie left for an init that does not reap counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


if __name__ == "__main__":
    try:
        sys.exit(_cli(sys.argv[1:]))
    except KnotdError as e:
        print(f"knotd.py: {e}", file=sys.stderr)
        sys.exit(1)
