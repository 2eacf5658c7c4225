#!/usr/bin/env python3
"""knotd's XDP listener with mod-k8s: the same answers as over kernel sockets.

The test makes a veth pair: one end in the host's network namespace, where
knotd runs (it reaches the API simulator on loopback) with `xdp: listen:
<veth>@53` and `tcp: on`, the other end in a network namespace of its own, from
which kdig queries. Port 53 of the veth's address goes through XDP; a second,
kernel-socket listener on another port of the same address is the reference.
Every record family is asked over XDP UDP, XDP TCP, kernel UDP and kernel TCP,
and the four answers must be identical. mod-stats counts the XDP requests, which
proves that they did not go through the kernel. The namespace and the veth pair
are removed at the end.

Skips, saying why, without root, `ip`, veth or XDP support.
"""

import os
import re
import shutil
import subprocess

import dig
import knotd
import testing
from cluster import Cluster

tests = testing.Tests()

TAG = f"mk{os.getpid() % 100000}"
HOST_IF, PEER_IF, PEER_NS = f"{TAG}h", f"{TAG}p", f"mod-k8s-{TAG}"
# A /30 of the benchmarking range 198.18.0.0/15 (RFC 2544), never a documentation network:
# the machine's own interfaces may use those (a clash would shadow its gateway).
SUBNET = f"198.18.{os.getpid() % 250}"
SERVER, CLIENT = f"{SUBNET}.1", f"{SUBNET}.2"

SAMPLE = [
    ("kubernetes.default.svc.cluster.local.", "A"),
    ("web.shop.svc.cluster.local.", "AAAA"),
    ("postgres.db.svc.cluster.local.", "A"),
    ("postgres-0.postgres.db.svc.cluster.local.", "A"),
    ("_https._tcp.kubernetes.default.svc.cluster.local.", "SRV"),
    ("_pg._tcp.postgres.db.svc.cluster.local.", "SRV"),
    ("external.shop.svc.cluster.local.", "CNAME"),
    ("10-244-0-10.shop.pod.cluster.local.", "A"),
    ("34.12.96.10.in-addr.arpa.", "PTR"),
    ("4.3.2.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.", "PTR"),
    ("dns-version.cluster.local.", "TXT"),
    ("web.shop.svc.clusterset.local.", "A"),
    ("nonexistent.shop.svc.cluster.local.", "A"),
    ("kubernetes.default.svc.cluster.local.", "TXT"),
    ("cluster.local.", "SOA"),
]


def run(*argv):
    return subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)


class XdpKnotd(knotd.Knotd):
    """knotd with an XDP listener on the veth and a kernel listener on the same address."""

    def __init__(self, kernel_port, **options):
        self.kernel_port = kernel_port
        super().__init__(**options)

    def config_text(self):
        text = super().config_text()
        listen = f"    listen: {self.address}@{self.port}\n"
        return text.replace(listen, f"    listen: [ {self.address}@{self.port}, "
                                    f"{SERVER}@{self.kernel_port} ]\n", 1)


class XdpCluster(Cluster):
    """The sample cluster behind knotd with XDP; the veth pair and the client's namespace."""

    def __init__(self):
        if os.geteuid() != 0:
            raise testing.Skip("needs root: network namespaces, veth and XDP")
        if shutil.which("ip") is None:
            raise testing.Skip("ip not found (Debian package iproute2)")
        self.kernel_port = knotd.free_port()
        extra = f"""
xdp:
    listen: {HOST_IF}@53
    tcp: on
"""
        super().__init__(extra=extra, template={"global-module": "mod-stats"})

    def knotd(self, module=None, **options):
        return XdpKnotd(self.kernel_port, module=self.module_options(module), **options)

    def __enter__(self):
        self._network_up()
        try:
            super().__enter__()
            line = self.server.wait_for_log(r"initialized XDP interface|failed to initialize XDP|"
                                            r"XDP.*(failed|not supported)", timeout=10)
            if "initialized" not in line:
                raise testing.Skip(f"knotd could not use XDP here: {line}")
        except BaseException:
            self._network_down()
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            return super().__exit__(kind, value, traceback)
        finally:
            self._network_down()

    def _network_up(self):
        steps = [["ip", "netns", "add", PEER_NS],
                 ["ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", PEER_IF],
                 ["ip", "link", "set", PEER_IF, "netns", PEER_NS],
                 ["ip", "addr", "add", f"{SERVER}/30", "dev", HOST_IF],
                 ["ip", "-n", PEER_NS, "addr", "add", f"{CLIENT}/30", "dev", PEER_IF],
                 ["ip", "link", "set", HOST_IF, "up"],
                 ["ip", "-n", PEER_NS, "link", "set", PEER_IF, "up"],
                 ["ip", "-n", PEER_NS, "link", "set", "lo", "up"]]
        taken = run("ip", "-br", "addr").stdout
        if "198.18." in taken or "198.19." in taken:
            raise testing.Skip("198.18.0.0/15 is in use on this machine")
        for step in steps:
            result = run(*step)
            if result.returncode != 0:
                self._network_down()
                raise testing.Skip(f"{' '.join(step)}: {result.stdout.strip()}")

    @staticmethod
    def _network_down():
        run("ip", "link", "del", HOST_IF)
        run("ip", "netns", "del", PEER_NS)

    def ask(self, qname, qtype, port, tcp):
        """kdig from the client's namespace to the veth address."""
        command = dig.kdig_command((SERVER, port), qname, qtype, tcp=tcp, timeout=3)
        result = run("ip", "netns", "exec", PEER_NS, *command)
        return dig.Answer(command, result.stdout)

    def protocol_counters(self):
        out = {}
        for line in self.knotc("stats", "mod-stats").stdout.splitlines():
            match = re.match(r"^mod-stats\.request-protocol\[(\S+)\] = (\d+)$", line.strip())
            if match:
                out[match[1]] = int(match[2])
        return out


def view(answer):
    return (answer.rcode, answer.flags, answer.answer, answer.authority, answer.additional)


@tests.case
def xdp_udp_and_tcp_answer_every_record_family_as_kernel_sockets_do(cluster):
    before = cluster.protocol_counters()
    for qname, qtype in SAMPLE:
        answers = {(path, proto): cluster.ask(qname, qtype, port, proto == "tcp")
                   for path, port in (("xdp", 53), ("kernel", cluster.kernel_port))
                   for proto in ("udp", "tcp")}
        reference = view(answers[("kernel", "udp")])
        testing.expect(reference[0] in ("NOERROR", "NXDOMAIN"), f"{qname} {qtype}: {reference}")
        testing.expect(reference[2] or reference[3], f"{qname} {qtype}: empty answer")
        for key, answer in answers.items():
            testing.expect_equal(view(answer), reference, f"{qname} {qtype} over {key}")
    after = cluster.protocol_counters()
    for proto in ("udp4-xdp", "tcp4-xdp"):
        got = after.get(proto, 0) - before.get(proto, 0)
        testing.expect_equal(got, len(SAMPLE), f"mod-stats request-protocol[{proto}]")


if __name__ == "__main__":
    tests.main(fixture=XdpCluster)
