"""What online signing costs per query: mod-k8s alone against mod-k8s + mod-onlinesign.

Both knotd run under callgrind as the callgrind part does (callgrind.py), on the
throughput cluster, and both get the same queries with the DO bit (dnsperf -D),
so the difference is what mod-onlinesign adds: an ECDSA P-256 signature per
RRset in the answer (and the SOA and the NSEC of a denial). Every mix is measured,
srv too: mod-k8s leaves its SRV additional records out of DO answers when
mod-onlinesign follows it, which knotd 3.2.6 crashed signing (doc/mod-k8s.rst, "DNSSEC").
"""

import os

from common import progress
import callgrind
import servers

QUERIES = 300   # per mix: a signature costs about as much as a thousand unsigned answers
SIGNING = """
mod-onlinesign:
  - id: k8s
    nsec-bitmap: [ A, AAAA, SRV, PTR, TXT ]
"""
# libdnssec's signing call (knotd's own onlinesign functions carry no symbols in Debian's build).
SIGNING_FUNCTIONS = ("dnssec_sign_write",)


def run(sim, module_options, files, warm, dumps):
    """{"unsigned": {mix: figures}, "signed": {mix: figures}, "signing_ir_per_query": {mix: n}}."""
    results = {"queries_per_mix": QUERIES}
    for name, module in (("unsigned", "mod-k8s/default"),
                         ("signed", "[ mod-k8s/default, mod-onlinesign/k8s ]")):
        options = {"wrapper": callgrind.wrapper(dumps), "udp_workers": 1, "start_timeout": 600}
        server = servers.module_server(sim, module_options,
                                       zones={"cluster.local.": module, "in-addr.arpa.": module},
                                       extra=SIGNING, **options)
        try:
            server.start()
            servers.wait_ready(server, timeout=900)
            progress(f"dnssec: callgrind, {name}")
            results[name] = callgrind.measure(server, files, warm, dumps, dnssec=True,
                                              functions=SIGNING_FUNCTIONS if name == "signed" else None)
        finally:
            servers.stop(server)
    results["signing_ir_per_query"] = {
        mix: results["signed"][mix]["ir_per_query"] - results["unsigned"][mix]["ir_per_query"]
        for mix in files}
    return results


def text(results):
    """A table: Ir per query unsigned, signed, the difference, per mix."""
    lines = ["| mix | Ir/query, DO, unsigned | Ir/query, DO, mod-onlinesign | signing Ir/query | "
             "of it in dnssec_sign_write |", "|---|---|---|---|---|"]
    for mix, cost in results["signing_ir_per_query"].items():
        lines.append(f"| {mix} | {results['unsigned'][mix]['ir_per_query']:,} | "
                     f"{results['signed'][mix]['ir_per_query']:,} | {cost:,} | "
                     f"{results['signed'][mix]['module_ir_per_query']:,} |")
    return "\n".join(lines)


def write(results, out_dir):
    path = os.path.join(out_dir, "dnssec.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text(results) + "\n")
    return path
