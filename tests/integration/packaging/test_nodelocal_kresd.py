#!/usr/bin/env python3
"""The node-local cache tier: Knot Resolver (kresd 5.6) in front of knotd + mod-k8s.

packaging/kubernetes/node-local/kresd.conf is run as it is, by Debian's kresd, with
the settings the DaemonSet passes in its environment: the cluster DNS is this test's
knotd with mod-k8s watching the API simulator (configured like packaging/kubernetes:
mod-dnsproxy forwards names outside its zones to the node's resolvers), and "the node's
resolvers" are a second knotd on 127.0.0.2 serving example.com. Through kresd: every
kind of cluster answer, negative answers with their SOA, how long kresd keeps each
(counted on knotd: mod-k8s's query counters and mod-stats' per-protocol counters), that
it asks knotd over TCP only, that other names go to the node's resolvers, that an
API change shows through the cache within the TTL, and kresd's /metrics, /health and /ready
(KRESD_METRICS_LISTEN), which the DaemonSet scrapes and probes.

kresd comes from the Debian packages knot-resolver and knot-resolver-module-http
(`scripts/deps nodelocal`); without kresd the kresd cases are skipped, saying so. The manifests' rendering needs kubectl
(kustomize) and is skipped without it.
"""

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import dig
import knotd
import testing
from cluster import Cluster, SRCDIR
from faults import endpoint_slice, external_name_service, headless_service, service
from kresd import Kresd, kresd_path

tests = testing.Tests()

NODE_LOCAL = os.path.join(SRCDIR, "packaging", "kubernetes", "node-local")
CONF = os.path.join(NODE_LOCAL, "kresd.conf")
TTL = knotd.ZONE_TTL        # mod-k8s's ttl (5 by default) and the zones' SOA TTL and MINIMUM
# kresd's cache clock has whole seconds, and an entry at TTL 0 is still answered.
CLOCK = 1
SOA = "cluster.local. SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5"
# The node's resolvers: a plain knotd on another loopback address, as a node's resolver
# has an address of its own.
UPSTREAM_ADDRESS = "127.0.0.2"
EXAMPLE_COM = """
www     300 A     192.0.2.80
api     300 A     192.0.2.81
"""
# knotd as packaging/kubernetes/knot.conf runs it (names outside the zones forwarded),
# with mod-stats counting requests per protocol.
KNOTD_EXTRA = """
remote:
  - id: upstream
    address: {upstream}
mod-dnsproxy:
  - id: upstream
    remote: upstream
    fallback: on
mod-stats:
  - id: default
    request-protocol: on
"""


# -- the manifests

def kubectl():
    return shutil.which("kubectl")


class Manifests(contextlib.AbstractContextManager):
    """kubectl kustomize of packaging/kubernetes/node-local, or a skip without kubectl."""

    def __enter__(self):
        if not kubectl():
            raise testing.Skip("kubectl not found: kustomize rendering not checked")
        result = subprocess.run([kubectl(), "kustomize", NODE_LOCAL], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=60, check=False)
        self.text = result.stdout
        self.ok = result.returncode == 0
        return self

    def __exit__(self, *exc):
        return False


tests.fixture(Manifests, "manifests")


@tests.case
def the_node_local_manifests_render_with_kustomize(manifests):
    testing.expect(manifests.ok, f"kubectl kustomize failed:\n{manifests.text}")
    kinds = re.findall(r"^kind: (\S+)$", manifests.text, re.M)
    for kind in ("ConfigMap", "DaemonSet", "Service"):
        testing.expect(kind in kinds, f"no {kind} in the rendered manifests: {kinds}")


@tests.case
def the_configmap_holds_the_kresd_conf_the_test_runs(manifests):
    # A literal block of the file: every line of kresd.conf, indented, in the ConfigMap.
    with open(CONF, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    block = re.search(r"^  kresd\.conf: \|[-+]?\n((?:    .*\n|\n)+)", manifests.text, re.M)
    testing.expect(block is not None, "no kresd.conf key in a ConfigMap")
    rendered = [line[4:] for line in block.group(1).splitlines()]
    while rendered and rendered[-1] == "":
        rendered.pop()
    testing.expect_equal(rendered, lines, "kresd.conf in the ConfigMap")
    testing.expect("169.254.20.10" in manifests.text, "the link-local address is not set")


# -- kresd in front of knotd

class NodeLocal(testing.Fixture):
    """The node's resolvers (a knotd), the cluster (simulator + knotd + mod-k8s), kresd."""

    def start(self):
        if kresd_path() is None:
            raise testing.Skip("kresd not found: install the Debian package knot-resolver "
                               "(scripts/deps nodelocal)")
        upstream = knotd.Knotd(zones={"example.com.": None},
                               zone_extra={"example.com.": EXAMPLE_COM})
        upstream.address = UPSTREAM_ADDRESS
        self.upstream = self.enter_context(upstream)
        at = f"{UPSTREAM_ADDRESS}@{self.upstream.port}"
        self.cluster = self.enter_context(Cluster(
            extra=KNOTD_EXTRA.format(upstream=at),
            template={"global-module": ["mod-dnsproxy/upstream", "mod-stats/default"]}))
        self.metrics_port = knotd.free_port()
        # kube-dns's ConfigMap as the DaemonSet mounts it (empty: no such ConfigMap).
        self.kube_dns = tempfile.mkdtemp(prefix="mod-k8s-kube-dns-")
        self.callback(shutil.rmtree, self.kube_dns, True)
        self.kresd = self.enter_context(Kresd(CONF, {
            "KRESD_KUBE_DNS_CONFIG": self.kube_dns,
            "KRESD_CLUSTER_DNS": f"{self.cluster.address}@{self.cluster.port}",
            "KRESD_UPSTREAM": at,
            "KRESD_RESOLV_CONF": "/nonexistent",
            "KRESD_METRICS_LISTEN": f"127.0.0.1@{self.metrics_port}"}))
        return self

    def is_running(self):
        return self.kresd.is_running() and self.cluster.is_running() and self.upstream.is_running()

    def log_text(self):
        return self.cluster.log_text()

    def query(self, qname, qtype="A", **options):
        """A query through kresd."""
        return self.kresd.query(qname, qtype, **options)

    def knotd_query(self, qname, qtype="A", **options):
        """The same query asked of knotd directly."""
        return self.cluster.query(qname, qtype, **options)

    def knotd_queries(self, zone="cluster.local."):
        """Queries mod-k8s answered in a zone (every queries[...] counter)."""
        return sum(v for k, v in self.cluster.stats(zone).items() if k.startswith("queries["))

    def protocols(self):
        """knotd's requests per protocol (mod-stats): {"udp4": n, "tcp4": n, ...}."""
        out = {}
        for line in self.cluster.knotc("stats", "mod-stats").stdout.splitlines():
            match = re.match(r"\s*mod-stats\.request-protocol\[(\w+)\] = (\d+)", line)
            if match:
                out[match.group(1)] = int(match.group(2))
        return out


tests.fixture(NodeLocal, "kresd")


def rdata(answer, rtype, section="answer"):
    return sorted(rr.rdata for rr in answer.section(section) if rr.type == rtype)


def expect_resolved(answer, what):
    testing.expect(answer.rcode == "NOERROR", f"{what}: {answer.summary()}\n{answer.text}")
    testing.expect("ra" in answer.flags, f"{what}: no RA from the resolver: {answer.summary()}")


def kresd_container():
    """The DaemonSet's kresd container, as the API server reads the YAML."""
    import yaml
    with open(os.path.join(os.path.dirname(CONF), "daemonset.yaml"), encoding="utf-8") as f:
        pod = yaml.safe_load(f)["spec"]["template"]
    return pod["metadata"].get("annotations", {}), pod["spec"]["containers"][0]


def http_get(port, path):
    """(status, body) of GET http://127.0.0.1:PORT/PATH."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@tests.case
def the_daemonset_probes_and_scrapes_kresds_http_endpoint(node):
    annotations, container = kresd_container()
    # No declared ports (host ports on the host's network would keep the rollout's surge
    # pod from the node): the probes and the scrape name the metrics port by number.
    testing.expect("ports" not in container, f"the container declares ports: {container.get('ports')}")
    testing.expect_equal(annotations, {"prometheus.io/scrape": "true", "prometheus.io/port": "9253"},
                         "the pods' scrape annotations")
    for probe, path in (("readinessProbe", "/ready"), ("livenessProbe", "/health")):
        get = container[probe]["httpGet"]
        testing.expect_equal((get["path"], get["port"]), (path, 9253), f"the {probe}")
        status, body = http_get(node.metrics_port, path)
        testing.expect_equal((status, body), (200, "OK\n"), f"{path} of kresd in front of knotd")


@tests.case
def the_metrics_are_kresds_counters_in_prometheus_text_format(node):
    node.query("web.shop.svc.cluster.local.", "A")
    status, body = http_get(node.metrics_port, "/metrics")
    testing.expect_equal(status, 200, "/metrics")
    # kresd writes TYPE lines and samples, no HELP: read the samples.
    samples = dict(re.findall(r"(?m)^(kresd_[a-z_]+) (\S+)$", body))
    for name in ("kresd_request_total", "kresd_answer_total", "kresd_answer_noerror",
                 "kresd_latency_count"):
        testing.expect(float(samples.get(name, 0)) >= 1, f"{name} counted: {sorted(samples)[:60]}")


@tests.case
def ready_fails_while_the_cluster_dns_does_not_answer(node):
    # Not a probe that cannot fail: the same kresd.conf with no cluster DNS behind it.
    metrics_port = knotd.free_port()
    with Kresd(CONF, {"KRESD_CLUSTER_DNS": f"127.0.0.1@{knotd.free_port()}",
                      "KRESD_UPSTREAM": f"127.0.0.1@{knotd.free_port()}",
                      "KRESD_RESOLV_CONF": "/nonexistent",
                      "KRESD_METRICS_LISTEN": f"127.0.0.1@{metrics_port}"}):
        time.sleep(2.5)
        status, body = http_get(metrics_port, "/ready")
        testing.expect_equal(status, 503, f"/ready with no cluster DNS ({body.strip()})")
        testing.expect(body.startswith("not ready ("), f"the reason: {body}")
        testing.expect_equal(http_get(metrics_port, "/health")[0], 200, "/health")


@tests.case
def service_a_and_aaaa_come_through_the_cache(node):
    for qtype, want in (("A", ["10.96.12.34"]), ("AAAA", ["fd00:10:96::1234"])):
        answer = node.query("web.shop.svc.cluster.local.", qtype)
        expect_resolved(answer, qtype)
        testing.expect_equal(rdata(answer, qtype), want, f"web.shop {qtype}")
        ttls = {rr.ttl for rr in answer.answer}
        testing.expect(ttls and max(ttls) <= TTL, f"TTLs {ttls} above mod-k8s's {TTL}")


@tests.case
def srv_answers_pass_and_their_targets_resolve(node):
    name = "_grpc._tcp.web.shop.svc.cluster.local."
    direct = node.knotd_query(name, "SRV")
    extra = set(direct.additional)
    testing.expect_equal(rdata(direct, "A", "additional"), ["10.96.12.34"], "knotd's additional A")
    answer = node.query(name, "SRV")
    expect_resolved(answer, "SRV")
    testing.expect_equal(rdata(answer, "SRV"), ["0 100 9090 web.shop.svc.cluster.local."], "SRV")
    # kresd 5.6 builds its own answer and sends no additional section; what it would
    # send must be knotd's records.
    for rr in answer.additional:
        testing.expect(rr._replace(ttl=None) in {r._replace(ttl=None) for r in extra},
                       f"additional record {rr} is not knotd's")
    headless = node.query("_pg._tcp.postgres.db.svc.cluster.local.", "SRV")
    testing.expect_equal(rdata(headless, "SRV"),
                         ["0 50 5432 postgres-0.postgres.db.svc.cluster.local.",
                          "0 50 5432 postgres-1.postgres.db.svc.cluster.local."], "headless SRV")
    target = node.query("postgres-1.postgres.db.svc.cluster.local.", "A")
    testing.expect_equal(rdata(target, "A"), ["10.244.1.20"], "the SRV target's address")


@tests.case
def ptr_of_ipv4_and_ipv6_addresses(node):
    for name, want in (("34.12.96.10.in-addr.arpa.", "web.shop.svc.cluster.local."),
                       ("4.3.2.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.",
                        "web.shop.svc.cluster.local."),
                       ("20.0.244.10.in-addr.arpa.", "postgres-0.postgres.db.svc.cluster.local.")):
        answer = node.query(name, "PTR")
        expect_resolved(answer, name)
        testing.expect_equal(rdata(answer, "PTR"), [want], name)


@tests.case
def nxdomain_and_nodata_carry_the_zone_soa(node):
    nx = node.query("nope.shop.svc.cluster.local.", "A")
    testing.expect_equal(nx.rcode, "NXDOMAIN", "rcode")
    nodata = node.query("web.shop.svc.cluster.local.", "TXT")
    testing.expect_equal(nodata.rcode, "NOERROR", "NODATA rcode")
    testing.expect(not nodata.answer, f"NODATA with an answer: {nodata.text}")
    for answer in (nx, nodata):
        soa = [rr for rr in answer.authority if rr.type == "SOA"]
        testing.expect(len(soa) == 1 and f"{soa[0].owner} SOA {soa[0].rdata}" == SOA,
                       f"authority {sorted(map(str, answer.authority))}, want {SOA}")
        testing.expect(soa[0].ttl <= TTL, f"SOA TTL {soa[0].ttl} above the SOA's {TTL}")


@tests.case
def answers_and_negative_answers_are_cached_for_their_ttl(node):
    # Names no other case asks, so the first query of each is a cache miss.
    names = [("kubernetes.default.svc.cluster.local.", "A", "NOERROR"),
             ("cache-miss.shop.svc.cluster.local.", "A", "NXDOMAIN"),
             ("kubernetes.default.svc.cluster.local.", "TXT", "NOERROR")]
    before = node.knotd_queries()
    started = time.monotonic()
    for name, qtype, rcode in names:
        testing.expect_equal(node.query(name, qtype).rcode, rcode, f"{name} {qtype}")
    first = node.knotd_queries()
    testing.expect_equal(first - before, len(names), "knotd queries for the first answers")
    # Seconds later (an entry kept for 0 s would still answer within its second).
    time.sleep(CLOCK + 0.5)
    for name, qtype, rcode in names:
        again = node.query(name, qtype)
        testing.expect_equal(again.rcode, rcode, f"{name} {qtype} again")
        ttls = [rr.ttl for rr in again.answer | again.authority]
        testing.expect(ttls and max(ttls) < TTL, f"{name} {qtype}: TTLs {ttls}, not counting down")
    elapsed = time.monotonic() - started
    testing.expect(elapsed < TTL - CLOCK, f"the second round ended at {elapsed:.1f} s: too slow to tell")
    testing.expect_equal(node.knotd_queries(), first, "knotd queries while cached")
    # Past the TTL (5 s for the A, the SOA's MINIMUM for the negative answers) each is
    # asked of knotd again. kresd counts in whole seconds and still answers an entry
    # whose TTL has come down to 0: up to one second more.
    time.sleep(max(0.0, started + TTL + CLOCK + 0.5 - time.monotonic()))
    for name, qtype, rcode in names:
        testing.expect_equal(node.query(name, qtype).rcode, rcode, f"{name} {qtype} expired")
    testing.expect_equal(node.knotd_queries() - first, len(names), "knotd queries after the TTL")


@tests.case
def knotd_is_asked_over_tcp_only(node):
    before = node.protocols()
    for name in ("kube-dns.kube-system.svc.cluster.local.", "cache.shop.svc.cluster.local.",
                 "40.0.244.10.in-addr.arpa.", "postgres.db.svc.clusterset.local."):
        expect_resolved(node.query(name, "A" if "arpa" not in name else "PTR"), name)
    after = node.protocols()
    testing.expect_equal(after.get("udp4", 0), before.get("udp4", 0), "UDP requests to knotd")
    testing.expect(after.get("tcp4", 0) - before.get("tcp4", 0) >= 4,
                   f"TCP requests to knotd: {before} -> {after}")


@tests.case
def other_names_go_to_the_nodes_resolvers(node):
    before = node.protocols()
    answer = node.query("api.example.com.", "A")
    expect_resolved(answer, "api.example.com")
    testing.expect_equal(rdata(answer, "A"), ["192.0.2.81"], "api.example.com A")
    testing.expect_equal(node.protocols(), before, "requests to knotd")


def reaches_knotd(node, qname):
    """Whether a fresh name (no cache holds it) asked of kresd reaches knotd."""
    before = node.protocols()
    node.query(qname, "A")
    return node.protocols() != before


@tests.case
def kube_dns_stub_domains_and_upstream_nameservers_go_to_the_cluster_dns(node):
    # As NodeLocal DNSCache's node-cache applies kube-dns's ConfigMap: those names go to
    # knotd, whose mod-k8s applies it (kube-dns-config), not to the node's resolvers.
    counter = iter(range(1000))

    def set_key(key, text):
        path = os.path.join(node.kube_dns, key)
        if text is None:
            os.unlink(path)
        else:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".tmp", path)

    def eventually_reaches(qname_of, want, what):
        # kresd reads the files again every 5 s.
        deadline = time.monotonic() + 12
        while reaches_knotd(node, qname_of(next(counter))) != want:
            testing.expect(time.monotonic() < deadline, what)
            time.sleep(0.5)

    testing.expect(not reaches_knotd(node, "nx-first.example.com."),
                   "an outside name reached knotd without kube-dns's ConfigMap")
    set_key("stubDomains", '{"example.com": ["127.0.0.2"]}')
    eventually_reaches(lambda n: f"nx-stub{n}.example.com.", True,
                       "a stub domain's name did not reach knotd")
    testing.expect(not reaches_knotd(node, "nx-other.example.net."),
                   "a name outside the stub domain reached knotd")
    set_key("stubDomains", None)
    eventually_reaches(lambda n: f"nx-gone{n}.example.com.", False,
                       "the stub domain's names still reached knotd once it was removed")
    set_key("upstreamNameservers", '["127.0.0.2"]')
    eventually_reaches(lambda n: f"nx-up{n}.example.net.", True,
                       "with upstreamNameservers an outside name did not reach knotd")
    set_key("upstreamNameservers", "not json")
    eventually_reaches(lambda n: f"nx-bad{n}.example.net.", False,
                       "a broken upstreamNameservers still sent outside names to knotd")
    logged = False
    for _ in range(20):
        with open(node.kresd.log_path, encoding="utf-8", errors="replace") as f:
            logged = "is not a JSON object or list: ignored" in f.read()
        if logged:
            break
        time.sleep(0.25)
    testing.expect(logged, "the broken file was not logged")
    set_key("upstreamNameservers", None)


@tests.case
def externalname_chains_resolve_to_addresses(node):
    # Outside the cluster: the CNAME from mod-k8s, the target via knotd's forwarder.
    answer = node.query("external.shop.svc.cluster.local.", "A")
    expect_resolved(answer, "external.shop")
    testing.expect_equal(rdata(answer, "CNAME"), ["www.example.com."], "CNAME")
    testing.expect_equal(rdata(answer, "A"), ["192.0.2.80"], "the target's address")
    # Inside the cluster: the chain ends at a service's cluster IP.
    node.cluster.sim.apply(external_name_service("shop", "alias", "web.shop.svc.cluster.local"))

    def chained():
        inner = node.query("alias.shop.svc.cluster.local.", "A")
        expect_resolved(inner, "alias.shop")
        testing.expect_equal(rdata(inner, "CNAME"), ["web.shop.svc.cluster.local."], "CNAME")
        testing.expect_equal(rdata(inner, "A"), ["10.96.12.34"], "the service's address")
    testing.eventually(chained, timeout=TTL + 5, interval=0.2)


@tests.case
def clusterset_names_resolve(node):
    answer = node.query("web.shop.svc.clusterset.local.", "A")
    expect_resolved(answer, "web.shop clusterset")
    testing.expect_equal(rdata(answer, "A"), ["10.42.0.10"], "clusterset IP")
    headless = node.query("postgres-0.cluster-b.postgres.db.svc.clusterset.local.", "A")
    testing.expect_equal(rdata(headless, "A"), ["10.245.3.4"], "another cluster's endpoint")
    ptr = node.query("10.0.42.10.in-addr.arpa.", "PTR")
    testing.expect_equal(rdata(ptr, "PTR"), ["web.shop.svc.clusterset.local."], "clusterset PTR")


def visible_within(node, qname, expected, changed_at):
    """Polls kresd until qname's A set is `expected`; the seconds since changed_at."""
    def check():
        answer = node.query(qname, "A")
        testing.expect_equal(rdata(answer, "A"), sorted(expected), qname)
    testing.eventually(check, timeout=TTL + 10, interval=0.1)
    return time.monotonic() - changed_at


@tests.case
def a_new_service_shows_through_a_cached_nxdomain_within_the_ttl(node):
    name = "late.shop.svc.cluster.local."
    testing.expect_equal(node.query(name, "A").rcode, "NXDOMAIN", "before the service exists")
    node.cluster.sim.apply(service("shop", "late", "10.96.77.7"))
    elapsed = visible_within(node, name, ["10.96.77.7"], time.monotonic())
    # The negative answer lives for the SOA's MINIMUM; mod-k8s needs milliseconds.
    testing.expect(elapsed <= TTL + CLOCK + 0.5, f"visible after {elapsed:.1f} s, TTL {TTL} s")


@tests.case
def a_changed_endpoint_set_shows_through_the_cache_within_the_ttl(node):
    name = "moving.shop.svc.cluster.local."
    node.cluster.sim.apply(headless_service("shop", "moving"))
    node.cluster.sim.apply(endpoint_slice("shop", "moving", ["10.244.2.1"]))
    visible_within(node, name, ["10.244.2.1"], time.monotonic())
    node.cluster.sim.apply(endpoint_slice("shop", "moving", ["10.244.2.1", "10.244.2.2"]))
    elapsed = visible_within(node, name, ["10.244.2.1", "10.244.2.2"], time.monotonic())
    testing.expect(elapsed <= TTL + CLOCK + 0.5, f"visible after {elapsed:.1f} s, TTL {TTL} s")


@tests.case
def kresd_logged_no_error(node):
    bad = [line for line in node.kresd.log_text().splitlines()
           if re.search(r"error|panic|failed", line, re.I)]
    testing.expect(not bad, "kresd log:\n" + "\n".join(bad[:20]))


if __name__ == "__main__":
    tests.main()
