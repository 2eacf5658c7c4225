#!/usr/bin/env python3
"""packaging/migrate/mod-k8s-migrate: CoreDNS and kube-dns configurations to knot.conf, and
the switch-over check (issue 25, item 4).

The fixtures in tests/migrate/ are the configurations that kubeadm, coredns/deployment,
EKS, AKS (with its coredns-custom imports) and GKE's kube-dns ship (their sources are in
tests/migrate/README.md). Each translation must pass `knotc conf-check` with the built
module and say what became of each line; the kubeadm one, and a Corefile with a stub
domain and hosts entries, then run: knotd with the translated knot.conf watches the API
simulator and answers a cluster name, a hosts name and names forwarded to stub upstreams.
"""

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import cluster
import dig
import knotd
import simctl
import stubdns
import testing
from knotd import Knotd

SRCDIR = knotd.find_build().srcdir
TOOL = os.path.join(SRCDIR, "packaging", "migrate", "mod-k8s-migrate")
FIXTURES = os.path.join(SRCDIR, "tests", "migrate")

tests = testing.Tests()


def run_tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60, check=False)


@contextlib.contextmanager
def translated(inputs, *options):
    out = tempfile.mkdtemp(prefix="mod-k8s-migrate-")
    try:
        result = run_tool("translate", "--out", out, *options,
                          *[os.path.join(FIXTURES, i) if not os.path.isabs(i) else i for i in inputs])
        testing.expect(result.returncode == 0, f"translate {inputs} failed:\n{result.stdout}")
        with open(os.path.join(out, "knot.conf"), encoding="utf-8") as f:
            conf = f.read()
        yield out, conf, result.stdout
    finally:
        shutil.rmtree(out, ignore_errors=True)


def conf_check(path):
    result = knotd.check_config(path=path)
    testing.expect(result.returncode == 0 and "Configuration is valid" in result.stdout,
                   f"knotc conf-check {path} failed:\n{result.stdout}\n{open(path).read()}")


def expect_lines(text, *patterns, what="knot.conf"):
    for pattern in patterns:
        testing.expect(re.search(pattern, text, re.M), f"no /{pattern}/ in {what}:\n{text}")


def report_row(report, kind, line_ref, text):
    """The report names the input line (source:line), its text and the kind of outcome."""
    pattern = rf"^{re.escape(kind)}\s+\S*:{line_ref}\s+{re.escape(text)}"
    testing.expect(re.search(pattern, report, re.M), f"no '{kind} ...:{line_ref} {text}' in:\n{report}")


def translation_case(fixture, conf_patterns, report_rows, zone_files=(), options=(),
                     report_patterns=()):
    def check():
        inputs = fixture if isinstance(fixture, (list, tuple)) else [fixture]
        with translated(inputs, *options) as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            expect_lines(conf, *conf_patterns)
            for kind, line_ref, text in report_rows:
                report_row(report, kind, line_ref, text)
            expect_lines(report, *report_patterns, what="the report")
            for name, patterns in zone_files:
                with open(os.path.join(out, name), encoding="utf-8") as f:
                    expect_lines(f.read(), *patterns, what=name)
    return check


COMMON = [r"^  - domain: cluster\.local\.\n    module: mod-k8s/default$",
          r"^  - domain: in-addr\.arpa\.\n    module: mod-k8s/default$",
          r"^  - domain: ip6\.arpa\.\n    module: mod-k8s/default$",
          r"^    forward: \[ 192\.0\.2\.53 \]  # @upstream$",
          r"^    global-module: mod-k8s/default$",
          r"^    metrics-listen: 0\.0\.0\.0@9153$",
          r"^    forward-cache-max-ttl: 30$",
          r"^    answer-rotation: on$"]

tests.add("kubeadm's Corefile translates and passes conf-check",
          translation_case("kubeadm-coredns.json",
                           COMMON + [r"^    ttl: 30$", r"^    pods: insecure$",
                                     r"^    forward-max-pending: 1000$",
                                     r"^    lameduck-file: /run/knot/lameduck$"],
                           [("NOT TRANSLATED", 21, "reload"),
                            ("built in", 17, "disable success cluster.local"),
                            ("built in", 9, "fallthrough in-addr.arpa ip6.arpa"),
                            ("translated", 7, "kubernetes cluster.local in-addr.arpa ip6.arpa")],
                           [("cluster.local.zone", [r"SOA\s+ns\.dns\.cluster\.local\. .* 30$",
                                                    r"^ns\.dns\s+A\s+10\.96\.0\.10$"])]))
tests.add("coredns/deployment's Corefile (a raw file) translates: pods disabled and ttl 5 as "
          "CoreDNS's defaults",
          translation_case("coredns-deployment.Corefile",
                           COMMON + [r"^    ttl: 5$", r"^    pods: disabled$"],
                           [("translated", 12, "max_concurrent 1000"), ("NOT TRANSLATED", 16, "reload")]))
tests.add("EKS's Corefile translates and passes conf-check",
          translation_case("eks-coredns.json", COMMON + [r"^    pods: insecure$", r"^    ttl: 5$"],
                           [("translated", 11, "prometheus :9153"), ("built in", 14, "loop")]))
tests.add("AKS's Corefile with its coredns-custom imports: stub domains, hosts zones; log and a "
          "stub inside the cluster zone named",
          translation_case("aks-coredns.json",
                           COMMON + [r'^    forward-stub: \[ "puglife\.local=192\.11\.0\.1", '
                                     r'"abc\.com=1\.2\.3\.4" \]$',
                                     r"^  - domain: example1\.org\.$", r"^  - domain: example3\.org\.$"],
                           [("NOT TRANSLATED", "import log.override:1", "log"),
                            ("translated", "import test.override:1", "hosts"),
                            ("translated", "import puglife.server:4", "forward . 192.11.0.1"),
                            ("NOT TRANSLATED", "import test.server:9", "forward . 2.3.4.5")],
                           [("example2.org.zone", [r"^example2\.org\.\s+3600\s+A\s+10\.0\.0\.2$"]),
                            ("in-addr.arpa.zone", [r"^3\.0\.0\.10\.in-addr\.arpa\.\s+3600\s+PTR"
                                                   r"\s+example3\.org\.$"])]))
tests.add("GKE's kube-dns ConfigMap: upstreamNameservers, stubDomains, federations, and the "
          "kube-dns-config alternative named",
          translation_case("gke-kube-dns.json",
                           [r"^    forward: \[ 8\.8\.8\.8, 8\.8\.4\.4 \]$",
                            r'^    forward-stub: \[ "acme\.local=1\.2\.3\.4" \]$',
                            r'^    federations: \[ "myfederation=example\.com" \]$',
                            r"^    ttl: 30$", r"^  - domain: cluster\.local\.$"],
                           [],
                           report_patterns=[r"^note\s+configmap/kube-dns\n.*-> alternative: .*"
                                            r"option kube-dns-config"]))


@tests.case
def a_kube_dns_configmap_with_only_stub_domains_forwards_the_rest_to_the_node():
    work = tempfile.mkdtemp(prefix="mod-k8s-migrate-")
    try:
        path = os.path.join(work, "kube-dns.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "kube-dns", "namespace": "kube-system"},
                       "data": {"stubDomains": '{"example.com": ["8.8.8.8", "8.8.4.4:5353"]}'}}, f)
        with translated([path], "--cluster-domain", "k8s.example") as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            expect_lines(conf, r"^    forward: \[ 192\.0\.2\.53 \]  # @upstream$",
                         r'^    forward-stub: \[ "example\.com=8\.8\.8\.8,8\.8\.4\.4@5353" \]$',
                         r"^  - domain: k8s\.example\.\n    module: mod-k8s/default$")
    finally:
        shutil.rmtree(work, ignore_errors=True)


@tests.case
def the_report_names_each_line_it_cannot_translate_with_the_reason():
    corefile = """.:53 {
    kubernetes cluster.local 10.0.0.0/22 {
        pods verified
        namespaces shop db
        endpoint_pod_names
        noendpoints
        fallthrough
        startup_timeout 5s
        somethingnew
    }
    rewrite name foo.example bar.example
    forward . tls://9.9.9.9 10.0.0.2 {
        tls_servername dns.quad9.net
        policy random
    }
    cache 30 {
        prefetch 10
    }
    autopath @kubernetes
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 127.0.0.1"
    }
}
"""
    work = tempfile.mkdtemp(prefix="mod-k8s-migrate-")
    try:
        path = os.path.join(work, "Corefile")
        with open(path, "w", encoding="utf-8") as f:
            f.write(corefile)
        with translated([path]) as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            for line_ref, text, reason in [
                (2, "kubernetes cluster.local 10.0.0.0/22", "octet"),
                (7, "fallthrough", "NXDOMAIN"),
                (9, "somethingnew", "no equivalent"),
                (11, "rewrite name", "no query or answer rewriting"),
                (12, "forward . tls://9.9.9.9", "plain DNS"),
                (13, "tls_servername", "no equivalent"),
                (14, "policy random", "in order"),
                (17, "prefetch 10", "no prefetch"),
                (20, "template IN A", "no templated answers")]:
                pattern = (rf"^NOT TRANSLATED\s+\S+:{line_ref}\s+{re.escape(text)}.*\n\s+-> .*"
                           + re.escape(reason))
                testing.expect(re.search(pattern, report, re.M),
                               f"line {line_ref} ({text}) not reported with '{reason}':\n{report}")
            expect_lines(conf, r"^    pods: verified$", r"^    namespaces: \[ shop, db \]$",
                         r"^    endpoint-pod-names: on$", r"^    no-endpoints: on$",
                         r"^    autopath: on$", r"^    upstream: 10\.0\.0\.2$",
                         r"^    forward: \[ 10\.0\.0\.2 \]$")
        strict = run_tool("translate", "--strict", "--out", os.path.join(work, "o"), path)
        testing.expect_equal(strict.returncode, 2, "--strict exit status with lines not translated")
    finally:
        shutil.rmtree(work, ignore_errors=True)


@tests.case
def a_snippet_is_translated_where_it_is_imported_and_a_looping_one_stops_the_tool():
    work = tempfile.mkdtemp(prefix="mod-k8s-migrate-")
    try:
        path = os.path.join(work, "Corefile")
        with open(path, "w", encoding="utf-8") as f:
            f.write("(upstreams) {\n    forward . 10.0.0.9\n}\n"
                    ".:53 {\n    kubernetes cluster.local\n    import upstreams\n}\n")
        with translated([path]) as (out, conf, report):
            expect_lines(conf, r"^    forward: \[ 10\.0\.0\.9 \]$")
            report_row(report, "translated", 2, "forward . 10.0.0.9")
        with open(path, "w", encoding="utf-8") as f:
            f.write("(again) {\n    import again\n}\n.:53 {\n    import again\n}\n")
        result = run_tool("translate", "--out", os.path.join(work, "o"), path)
        testing.expect(result.returncode == 3 and "more than 64 imports" in result.stdout,
                       f"a snippet importing itself: {result.returncode}\n{result.stdout}")
        testing.expect(not os.path.exists(os.path.join(work, "o")), "files written after the error")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_case(fixture, status, patterns):
    def check():
        result = run_tool("check", os.path.join(FIXTURES, fixture))
        testing.expect_equal(result.returncode, status, f"exit status of check {fixture}:\n{result.stdout}")
        expect_lines(result.stdout, *patterns, what="the check's output")
    return check


tests.add("check: coredns/deployment's Service selects app.kubernetes.io/name=coredns: blocker, "
          "selector fix, autoscaler and HPA stopped before CoreDNS is scaled down",
          check_case("check-coredns-deployment.json", 1, [
              r"BLOCKER .*selects app\.kubernetes\.io/name=coredns; the knot-dns pods carry "
              r"app\.kubernetes\.io/name=knot-dns",
              r"^  1\. Make the Service select.*\n.*\n.*patch service kube-dns --type json -p "
              r"'\[\{\"op\":\"remove\",\"path\":\"/spec/selector/app\.kubernetes\.io~1name\"\}\]'",
              r"^  2\. Stop the autoscaler kube-dns-autoscaler.*\n\s+kubectl -n kube-system scale "
              r"deployment kube-dns-autoscaler --replicas=0$",
              r"^  3\. Save and delete the HorizontalPodAutoscaler coredns",
              r"^  6\. Scale coredns down\n\s+kubectl -n kube-system scale deployment coredns --replicas=0$",
              r"WARN .*kube-dns-autoscaler is reconciled by the addon manager",
              r"^\s+kubectl -n kube-system scale deployment kube-dns-autoscaler --replicas=1$"]))
tests.add("check: kubeadm's Service selects only k8s-app=kube-dns: no blocker, CoreDNS scaled "
          "down last",
          check_case("check-kubeadm.json", 0, [
              r"OK .*selects k8s-app=kube-dns: the knot-dns pods carry every label",
              r"^  3\. Scale coredns down$", r"^0 blocker\(s\)"]))
tests.add("check: an addon-manager-reconciled CoreDNS with replicas in its manifest, new pods "
          "not ready: two blockers",
          check_case("check-addon-reconcile.json", 1, [
              r"BLOCKER .*knot-dns: 0 of 2 replicas ready",
              r"BLOCKER .*reconciled by the addon manager .*replicas: 2 in its manifest",
              r"^2 blocker\(s\)"]))


# -- knotd runs what the tool wrote

LIVE_COREFILE = """.:53 {
    errors
    health {
        lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    hosts {
        10.1.2.3 legacy.cluster.local
        10.1.2.4 db.corp.internal
        fallthrough
    }
    prometheus :9153
    forward . UPSTREAM
    cache 30
    loop
    loadbalance
}
corp.example:53 {
    errors
    cache 30
    forward . STUB
}
"""


class World:
    """One API simulator, two stub upstreams, and two knotds, each running what the tool
    translated: kubeadm's Corefile (`kubeadm`) and LIVE_COREFILE (`custom`). The
    switch-over check reads the same simulator's lists."""

    def __init__(self):
        self.stack = contextlib.ExitStack()
        self.servers = {}

    def __enter__(self):
        if knotd.load_mode() == "file":
            raise testing.Skip("the translated config relies on auto-loading, and knotd cannot "
                               "auto-load the build here")
        try:
            self.work = tempfile.mkdtemp(prefix="mod-k8s-migrate-live-")
            self.stack.callback(shutil.rmtree, self.work, True)
            self.upstream = self.stack.enter_context(stubdns.StubDNS())
            self.stub = self.stack.enter_context(stubdns.StubDNS())
            self.sim = simctl.Simulator(os.path.join(self.work, "apisim"), manifests=[cluster.SAMPLE])
            self.sim.start()
            self.stack.callback(self.sim.stop)
            custom = os.path.join(self.work, "Corefile")
            with open(custom, "w", encoding="utf-8") as f:
                f.write(LIVE_COREFILE.replace("UPSTREAM", self.upstream.address.replace("@", ":"))
                        .replace("STUB", self.stub.address.replace("@", ":")))
            for name, source in (("kubeadm", os.path.join(FIXTURES, "kubeadm-coredns.json")),
                                 ("custom", custom)):
                self.servers[name] = self.stack.enter_context(Knotd(config=self.translate(name, source)))
            for server in self.servers.values():
                cluster.wait_ready(server)
        except BaseException:
            self.stack.close()
            raise
        return self

    def translate(self, name, source):
        """knot.conf for `source`, with what only a pod has pointed at this test."""
        out = os.path.join(self.work, name)
        result = run_tool("translate", "--out", out, "--zone-dir", out,
                          "--listen", "${address}@${port}", "--rundir", "${dir}/run",
                          "--storage", "${dir}/storage", "--lameduck-file", "${dir}/run/lameduck",
                          "--metrics-listen", f"127.0.0.1@{knotd.free_port()}",
                          "--kubeconfig", self.sim.path("kubeconfig"),
                          "--upstream", self.upstream.address, source)
        if result.returncode != 0:
            raise knotd.KnotdError(f"translate {source} failed:\n{result.stdout}")
        with open(os.path.join(out, "knot.conf"), encoding="utf-8") as f:
            return f.read()

    def __exit__(self, *exc):
        return self.stack.__exit__(*exc)

    def is_running(self):
        return self.sim.alive() and all(s.is_running() for s in self.servers.values())

    def log_text(self):
        return "".join(s.log_text() for s in self.servers.values())

    def answer(self, server, name, rtype="A"):
        return dig.query(self.servers[server], name, rtype, timeout=5)

    def check(self):
        """Runs the switch-over check on the simulator's lists, as `kubectl get --raw` prints them."""
        paths = []
        for i, path in enumerate(["/api/v1/namespaces/kube-system/services",
                                  "/apis/apps/v1/namespaces/kube-system/deployments",
                                  "/api/v1/namespaces/kube-system/configmaps"]):
            reply = self.sim.get(path)
            testing.expect(reply.status == 200, f"GET {path}: {reply.status}")
            paths.append(os.path.join(self.work, f"list{i}.json"))
            with open(paths[-1], "w", encoding="utf-8") as f:
                json.dump(reply.json(), f)
        return run_tool("check", *paths)


def expect_answer(world, server, name, rtype, rdata):
    def check():
        reply = world.answer(server, name, rtype)
        testing.expect(reply.rcode == "NOERROR" and rdata in reply.text,
                       f"{server}: {name} {rtype}: expected {rdata}:\n{reply.text}")
    testing.eventually(check, timeout=10)


tests.fixture(World, "knotd on the translated configurations, the API simulator, stub upstreams")


@tests.case
def kubeadm_translated_answers_a_cluster_name_from_the_simulator(world):
    expect_answer(world, "kubeadm", "kubernetes.default.svc.cluster.local.", "A", "10.96.0.1")
    reply = world.answer("kubeadm", "kubernetes.default.svc.cluster.local.")
    testing.expect(re.search(r"\s30\s+IN\s+A\s", reply.text), f"not the Corefile's ttl 30:\n{reply.text}")


@tests.case
def kubeadm_translated_forwards_other_names_to_the_upstream(world):
    expect_answer(world, "kubeadm", "www.example.org.", "A", "192.0.2.")
    testing.expect(("www.example.org.", 1) in [(n.lower(), t) for n, t in world.upstream.names()],
                   f"the upstream was not asked: {world.upstream.names()}")


@tests.case
def a_stub_domain_goes_to_its_own_server(world):
    expect_answer(world, "custom", "host.corp.example.", "A", "192.0.2.")
    names = [n.lower() for n, _ in world.stub.names()]
    testing.expect("host.corp.example." in names, f"the stub was not asked: {names}")
    testing.expect("host.corp.example." not in [n.lower() for n, _ in world.upstream.names()],
                   "the stub domain's name went to the default upstream")


@tests.case
def a_hosts_entry_in_the_cluster_zone_is_answered_from_the_zone_file(world):
    expect_answer(world, "custom", "legacy.cluster.local.", "A", "10.1.2.3")


@tests.case
def a_hosts_entry_outside_answers_from_its_own_zone_with_its_ptr(world):
    expect_answer(world, "custom", "db.corp.internal.", "A", "10.1.2.4")
    expect_answer(world, "custom", "4.2.1.10.in-addr.arpa.", "PTR", "db.corp.internal.")


@tests.case
def cluster_names_still_answer_beside_the_hosts_records(world):
    expect_answer(world, "custom", "kubernetes.default.svc.cluster.local.", "A", "10.96.0.1")


@tests.case
def check_on_the_simulator_finds_the_selector_and_the_autoscaler_then_passes_once_fixed(world):
    # The objects of check-coredns-deployment.json (less the HPA, a kind the simulator
    # does not serve), the sample cluster's kube-dns with coredns/deployment's selector.
    with open(os.path.join(FIXTURES, "check-coredns-deployment.json"), encoding="utf-8") as f:
        items = [o for o in json.load(f)["items"] if o["kind"] != "HorizontalPodAutoscaler"]
    for obj in items:
        if obj["kind"] == "Service":
            svc = world.sim.get_object("services", "kube-system", "kube-dns")
            svc["spec"]["selector"] = obj["spec"]["selector"]
            obj = svc
        world.sim.apply(obj)
    result = world.check()
    testing.expect_equal(result.returncode, 1, f"exit status before the fix:\n{result.stdout}")
    expect_lines(result.stdout, r"BLOCKER .*selects app\.kubernetes\.io/name=coredns",
                 r"Stop the autoscaler kube-dns-autoscaler", what="the check's output")
    # Step 1 as printed: the selector keeps only the key both kinds of pods carry.
    svc = world.sim.get_object("services", "kube-system", "kube-dns")
    del svc["spec"]["selector"]["app.kubernetes.io/name"]
    world.sim.apply(svc)
    result = world.check()
    testing.expect_equal(result.returncode, 0, f"exit status after the fix:\n{result.stdout}")
    expect_lines(result.stdout, r"OK .*selects k8s-app=kube-dns: the knot-dns pods carry every label",
                 r"Stop the autoscaler kube-dns-autoscaler", r"^0 blocker\(s\)",
                 what="the check's output")


tests.main()
