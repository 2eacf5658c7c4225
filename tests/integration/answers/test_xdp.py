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

import re

import dig
import knotd
import testing
import xdpnet
from cluster import Cluster

tests = testing.Tests()

NET = xdpnet.VethPair()

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


class XdpKnotd(knotd.Knotd):
    """knotd with an XDP listener on the veth and a kernel listener on the same address."""

    def __init__(self, kernel_port, **options):
        self.kernel_port = kernel_port
        super().__init__(**options)

    def config_text(self):
        return NET.with_kernel_listener(super().config_text(), self.address, self.port,
                                        self.kernel_port)


class XdpCluster(Cluster):
    """The sample cluster behind knotd with XDP; the veth pair and the client's namespace."""

    def __init__(self):
        self.kernel_port = knotd.free_port()
        super().__init__(extra=NET.xdp_section(), template={"global-module": "mod-stats"})

    def knotd(self, module=None, **options):
        return XdpKnotd(self.kernel_port, module=self.module_options(module), **options)

    def __enter__(self):
        try:
            NET.up()
        except xdpnet.Unavailable as e:
            raise testing.Skip(str(e)) from None
        try:
            super().__enter__()
            xdpnet.check_xdp_log(self.server)
        except xdpnet.Unavailable as e:
            NET.down()
            raise testing.Skip(str(e)) from None
        except BaseException:
            NET.down()
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            return super().__exit__(kind, value, traceback)
        finally:
            NET.down()

    def ask(self, qname, qtype, port, tcp):
        """kdig from the client's namespace to the veth address."""
        command = dig.kdig_command((NET.server, port), qname, qtype, tcp=tcp, timeout=3)
        result = xdpnet.run(*NET.in_peer(command))
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
