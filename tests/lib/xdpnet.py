"""A veth pair between the host's network namespace and one of its own, for knotd's XDP listener.

knotd runs in the host's namespace (it reaches the API simulator on loopback) with
`xdp: listen: <host end>@53`; clients (kdig, dnsperf) run in the other namespace, so that
their packets arrive on the veth and go through XDP. A second, kernel-socket listener on
another port of the same address is the reference path. Used by
tests/integration/answers/test_xdp.py and bench/lib/xdp.py; the pair and the namespace are removed
on exit.
"""

import os
import shutil
import subprocess

# knotd's log line once its XDP listener works, or why it does not.
XDP_LOG = r"initialized XDP interface|failed to initialize XDP|XDP.*(failed|not supported)"


class Unavailable(Exception):
    """The kernel, the tools or the privileges refuse: the reason, for a skip."""


def run(*argv):
    return subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)


class VethPair:
    """The pair, its addresses (a /30 of 198.18.0.0/15) and the client's namespace."""

    def __init__(self, tag=None):
        tag = tag or f"mk{os.getpid() % 100000}"
        self.host_if, self.peer_if, self.peer_ns = f"{tag}h", f"{tag}p", f"mod-k8s-{tag}"
        # The benchmarking range of RFC 2544, never a documentation network: the machine's
        # own interfaces may use those (a clash would shadow its gateway).
        subnet = f"198.18.{os.getpid() % 250}"
        self.server, self.client = f"{subnet}.1", f"{subnet}.2"

    def up(self):
        if os.geteuid() != 0:
            raise Unavailable("needs root: network namespaces, veth and XDP")
        if shutil.which("ip") is None:
            raise Unavailable("ip not found (Debian package iproute2)")
        taken = run("ip", "-br", "addr").stdout
        if "198.18." in taken or "198.19." in taken:
            raise Unavailable("198.18.0.0/15 is in use on this machine")
        steps = [["ip", "netns", "add", self.peer_ns],
                 ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if],
                 ["ip", "link", "set", self.peer_if, "netns", self.peer_ns],
                 ["ip", "addr", "add", f"{self.server}/30", "dev", self.host_if],
                 ["ip", "-n", self.peer_ns, "addr", "add", f"{self.client}/30", "dev", self.peer_if],
                 ["ip", "link", "set", self.host_if, "up"],
                 ["ip", "-n", self.peer_ns, "link", "set", self.peer_if, "up"],
                 ["ip", "-n", self.peer_ns, "link", "set", "lo", "up"]]
        for step in steps:
            result = run(*step)
            if result.returncode != 0:
                self.down()
                raise Unavailable(f"{' '.join(step)}: {result.stdout.strip()}")
        return self

    def down(self):
        run("ip", "link", "del", self.host_if)
        run("ip", "netns", "del", self.peer_ns)

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    def in_peer(self, argv):
        """argv run in the client's namespace."""
        return ["ip", "netns", "exec", self.peer_ns, *argv]

    def xdp_section(self, port=53, tcp=True):
        """knot.conf's xdp: section listening on the host end."""
        return f"\nxdp:\n    listen: {self.host_if}@{port}\n    tcp: {'on' if tcp else 'off'}\n"

    def with_kernel_listener(self, config_text, address, port, kernel_port):
        """config_text whose server listens on the veth address's kernel_port too (the reference)."""
        listen = f"    listen: {address}@{port}\n"
        if listen not in config_text:
            raise ValueError(f"no '{listen.strip()}' in the configuration")
        return config_text.replace(listen, f"    listen: [ {address}@{port}, "
                                           f"{self.server}@{kernel_port} ]\n", 1)


def check_xdp_log(server, timeout=10):
    """Raises Unavailable unless knotd says its XDP interface works."""
    line = server.wait_for_log(XDP_LOG, timeout=timeout)
    if "initialized" not in line:
        raise Unavailable(f"knotd could not use XDP here: {line}")
    return line

