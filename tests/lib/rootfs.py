"""Run a Debian root filesystem (a bare Debian 13 or 12, an image's rootfs) against the simulator.

    import rootfs
    rootfs.need_root("mmdebstrap")          # testing.Skip, with the reason, where it cannot run
    rootfs.make_root(root, ["--include=git,ca-certificates"], rootfs.release_of_deb(deb))
    rootfs.private_network()                # this process and its children: only lo, up
    proc = rootfs.start(root, ["knotd"], binds=[(src, "/etc/knot", "ro")], env={...})
    rootfs.run(root, ["knotc", "conf-check"])

    class Installed(rootfs.Knotd):          # a test's fixture: `with Installed() as root:`
        def check(self): ...                # testing.Skip where it cannot run
        def _start(self): ...               # the root in self.workdir, self.sim, self.proc

Commands run through packaging/in-root (chroot with /proc, /dev and /sys in a mount
namespace of their own), so nothing stays mounted on the host and the root can be
removed as a plain directory. The simulator and kdig run on the host: after
private_network() they share the root's loopback, and port 53 is free whatever the
host runs.
"""

import ctypes
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import dig
import testing

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGING = os.path.join(SRCDIR, "packaging")
IN_ROOT = os.path.join(PACKAGING, "in-root")
MKROOT = os.path.join(PACKAGING, "mkroot")
# Where the pod's service account volume is; /var/run is a link to /run in Debian.
SERVICEACCOUNT = "/run/secrets/kubernetes.io/serviceaccount"

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
CAP_NET_BIND_SERVICE = 10


def need_root(*programs):
    """Skips (testing.Skip) unless this runs as root and every program is installed."""
    if os.geteuid() != 0:
        raise testing.Skip("needs root (chroot, mount namespaces, a network namespace)")
    for program in ("unshare", "chroot", *programs):
        if not (shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")):
            raise testing.Skip(f"{program} not found (scripts/deps package installs it)")


DEB_RELEASE = os.path.join(PACKAGING, "deb-release")
# The Knot release of each supported Debian release: a package built for one runs there only.
RELEASES = {"3.4": "trixie", "3.2": "bookworm"}


def release_of_deb(deb):
    """The Debian release (trixie, bookworm) whose knot a knot-module-k8s .deb depends on
    (packaging/deb-release)."""
    result = subprocess.run([DEB_RELEASE, deb], check=True, stdout=subprocess.PIPE, text=True)
    return result.stdout.split()[0]


def make_root(root, options, release=None, timeout=1200):
    """A bare Debian root (release: trixie, bookworm; default: this machine's) in root by
    packaging/mkroot (downloaded .debs are cached)."""
    release_option = ["--release", release] if release else []
    result = subprocess.run([MKROOT, *release_option, root, *options], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    if result.returncode != 0:
        tail = "\n".join(result.stdout.decode(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"packaging/mkroot failed (status {result.returncode}):\n{tail}")


def private_network():
    """Moves this process (and what it starts from now on) to a new network namespace whose
    loopback is up: the root's knotd binds port 53 there, whatever the host runs."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def command(root, args, binds=(), tmpfs=(), read_only=False):
    """The packaging/in-root command line; binds are (host path, path in root[, "ro"])."""
    cmd = [IN_ROOT] + (["--read-only"] if read_only else [])
    for bind in binds:
        cmd += ["--bind", ":".join(bind)]
    for path in tmpfs:
        cmd += ["--tmpfs", path]
    return cmd + [root, *args]


def _env(env):
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    return dict(base, **(env or {}))


def run(root, args, binds=(), tmpfs=(), env=None, timeout=60, read_only=False):
    """Runs a command in the root; returns the CompletedProcess (text, stderr in stdout)."""
    return subprocess.run(command(root, args, binds, tmpfs, read_only), env=_env(env), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


def start(root, args, log_path, binds=(), tmpfs=(), env=None, read_only=False):
    """Starts a long-running command in the root, output to log_path. in-root, unshare,
    chroot (and setpriv) exec each other: the process is the command itself, in the
    caller's process group, so the integration runner's kill of the group reaches it."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(command(root, args, binds, tmpfs, read_only), env=_env(env), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)


def stop(proc, grace=10):
    """Stops what start() started: SIGTERM, then SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def service_account(sim, directory, mode=0o644):
    """The simulator's token, ca.crt and namespace as a pod's service account volume
    (plain files, readable by the pod's user as the kubelet's default mode makes them)."""
    os.makedirs(directory, exist_ok=True)
    for name in ("token", "ca.crt", "namespace"):
        target = os.path.join(directory, name)
        shutil.copyfile(sim.path(name), target)
        os.chmod(target, mode)
    return directory


def in_cluster_env(sim):
    """What the kubelet puts in every container's environment for the API server."""
    return {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(sim.port)}


def wait_answer(address, port, qname, rcode="NOERROR", timeout=60, proc=None, log_path=None):
    """Waits until the server answers qname with rcode (mod-k8s synced); fails with the log."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        try:
            last = dig.query((address, port), qname, "A")
            if last.rcode == rcode:
                return last
        except dig.QueryError as e:
            last = e
        time.sleep(0.2)
    log = ""
    if log_path and os.path.exists(log_path):
        with open(log_path, errors="replace") as f:
            log = "".join(f.readlines()[-30:])
    raise RuntimeError(f"no {rcode} for {qname} at {address}@{port} (last: {last}):\n{log}")


def user_ids(root, name):
    """(uid, gid) of a user of the root's /etc/passwd."""
    with open(os.path.join(root, "etc", "passwd")) as f:
        for line in f:
            fields = line.split(":")
            if fields[0] == name:
                return int(fields[2]), int(fields[3])
    raise RuntimeError(f"no user {name} in {root}/etc/passwd")


def proc_status(pid):
    """/proc/PID/status as a dict of stripped strings (Name, Uid, CapEff, CapBnd...)."""
    with open(f"/proc/{pid}/status") as f:
        return {key: value.strip() for key, _, value in (line.partition(":") for line in f)}


def mounted_under(path):
    """Mount points under path in this mount namespace (there should be none to remove it)."""
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    return [p for p in points if p == path or p.startswith(path + "/")]


def remove(path):
    """Removes a root directory, never through a mount still in place (e.g. the host's /dev)."""
    if not os.path.exists(path):
        return
    left = mounted_under(path)
    if left:
        raise RuntimeError(f"not removing {path}: still mounted there: {', '.join(left)}")
    shutil.rmtree(path)


class Knotd:
    """knotd run in a root against the simulator, as a test's `with` fixture, answering on
    address:port. A subclass checks what it needs (check(): testing.Skip, with the reason)
    and starts it in self.workdir (_start(): self.root, self.sim, self.proc, self.log_path);
    whatever of it started is stopped, and the work directory removed unless
    MODK8S_KEEP_TMP is set, when the `with` ends or _start() fails."""

    address = "127.0.0.1"
    port = 53
    prefix = "mod-k8s-root-"  # Of the work directory's name.

    def __init__(self):
        self.workdir = None
        self.root = None
        self.sim = None
        self.proc = None
        self.log_path = None

    def check(self):
        """Raises testing.Skip where the fixture cannot run."""

    def _start(self):
        raise NotImplementedError

    def __enter__(self):
        self.check()
        self.workdir = tempfile.mkdtemp(prefix=self.prefix)
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        stop(self.proc)
        if self.sim:
            self.sim.stop()
        if self.workdir and not os.environ.get("MODK8S_KEEP_TMP"):
            remove(self.workdir)
        return False

    def is_running(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()
