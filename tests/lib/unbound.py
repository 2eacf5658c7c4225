"""A validating resolver (Debian's unbound) in front of a knotd, for the DNSSEC tests.

    from unbound import Unbound

    anchors = zone_keys(server, "cluster.local.")
    with Unbound(stubs={"cluster.local.": server}, anchors=anchors) as resolver:
        answer = resolver.query("kubernetes.default.svc.cluster.local.", "A", dnssec=True)
        "ad" in answer.flags

unbound runs in the foreground with its own directory, a free loopback port and
no root hints use: every zone it is asked about is a stub zone pointing at a
test server, with that zone's DNSKEYs as trust anchors. It is stopped by PID
when the `with` block ends. Unbound.available() tells whether it is installed
(Debian package unbound; scripts/deps compose).
"""

import os
import shutil
import subprocess
import tempfile
import time

import dig
import knotd


def zone_keys(server, zone):
    """The zone's DNSKEY records as presentation lines ("zone. DNSKEY 257 3 13 base64"), as
    the server answers them (dig.RR would fold the base64's case)."""
    answer = dig.query(server, zone, "DNSKEY", dnssec=True)
    keys = []
    for line in answer.text.splitlines():
        fields = line.split(None, 4)
        if len(fields) == 5 and not line.startswith(";") and fields[3] == "DNSKEY":
            keys.append(f"{fields[0]} DNSKEY {fields[4]}")
    if not keys:
        raise UnboundError(f"no DNSKEY for {zone}:\n{answer.text}")
    return keys


class UnboundError(Exception):
    """unbound could not start or stopped badly."""


class Unbound(dig.Server):
    """unbound validating with the given trust anchors; a context manager."""

    address = "127.0.0.1"

    def __init__(self, stubs, anchors, address="127.0.0.1", port=None, options=()):
        """stubs: zone name -> server (.address, .port); anchors: DNSKEY lines (zone_keys());
        options: more `server:` lines, e.g. "aggressive-nsec: no"."""
        self.stubs = dict(stubs)
        self.anchors = list(anchors)
        self.address = address
        self.port = port
        self.options = list(options)
        self.dir = tempfile.mkdtemp(prefix="mod-k8s-unbound-")
        self.process = None

    @staticmethod
    def program():
        return shutil.which("unbound") or shutil.which("unbound", path="/usr/sbin:/sbin")

    @classmethod
    def available(cls):
        return cls.program() is not None

    def config_text(self):
        lines = ["server:",
                 f"  interface: {self.address}",
                 f"  port: {self.port}",
                 "  do-daemonize: no", '  username: ""', '  chroot: ""', '  pidfile: ""',
                 f'  directory: "{self.dir}"', '  logfile: ""', "  use-syslog: no",
                 "  verbosity: 1", "  val-log-level: 2",
                 "  access-control: 127.0.0.0/8 allow",
                 "  do-not-query-localhost: no",
                 # The RFC 1918 reverse zones are local zones of unbound's own by default.
                 "  unblock-lan-zones: yes",
                 "  module-config: \"validator iterator\"",
                 "  num-threads: 1", "  so-reuseport: no",
                 "  cache-max-negative-ttl: 5"]
        lines += [f"  {option}" for option in self.options]
        for anchor in self.anchors:
            lines.append(f'  trust-anchor: "{anchor}"')
        for zone, server in self.stubs.items():
            lines += ["stub-zone:", f"  name: {zone}", f"  stub-addr: {server.address}@{server.port}"]
        return "\n".join(lines) + "\n"

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop(check=False)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        self.stop(check=kind is None)
        return False

    def start(self):
        if self.program() is None:
            raise UnboundError("unbound not found; install the Debian package 'unbound'")
        if self.port is None:
            self.port = knotd.free_port(self.address)
        conf = os.path.join(self.dir, "unbound.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(self.config_text())
        check = subprocess.run([shutil.which("unbound-checkconf") or "/usr/sbin/unbound-checkconf",
                                conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, check=False)
        if check.returncode != 0:
            raise UnboundError(f"unbound-checkconf refused the configuration:\n{check.stdout}")
        self.log_path = os.path.join(self.dir, "unbound.log")
        with open(self.log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen([self.program(), "-d", "-c", conf],
                                            stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        zone = next(iter(self.stubs))
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise UnboundError(f"unbound exited (status {self.process.returncode}):\n"
                                   + self.log_text())
            try:
                dig.query(self, zone, "SOA", timeout=1)
                return
            except dig.QueryError:
                time.sleep(0.1)
        raise UnboundError(f"unbound did not answer within 15 s:\n{self.log_text()}")

    def stop(self, check=True, keep_dir=False):
        problem = None
        if self.process is not None:
            problem = knotd.stop_process(self.process, "unbound", 10)
            if problem:
                problem += "\n" + self.log_text()
            self.process = None
        if not keep_dir and not os.environ.get("MODK8S_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        if problem and check:
            raise UnboundError(problem)

    def flush(self):
        """Empties the caches by restarting (unbound-control needs keys set up)."""
        self.stop(keep_dir=True)
        self.start()

