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
import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

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
def translated(inputs, *options, status=0):
    out = tempfile.mkdtemp(prefix="mod-k8s-migrate-")
    try:
        result = run_tool("translate", "--out", out, *options,
                          *[os.path.join(FIXTURES, i) if not os.path.isabs(i) else i for i in inputs])
        testing.expect(result.returncode == status,
                       f"translate {inputs}: exit {result.returncode}, not {status}:\n{result.stdout}")
        with open(os.path.join(out, "knot.conf"), encoding="utf-8") as f:
            conf = f.read()
        yield out, conf, result.stdout
    finally:
        shutil.rmtree(out, ignore_errors=True)


@contextlib.contextmanager
def translated_text(text, *options, status=0, name="Corefile"):
    """translated() of a Corefile (or, for name *.json, a ConfigMap) written from `text`."""
    work = tempfile.mkdtemp(prefix="mod-k8s-migrate-in-")
    try:
        path = os.path.join(work, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        with translated([path], *options, status=status) as result:
            yield result
    finally:
        shutil.rmtree(work, ignore_errors=True)


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
        if "--accept-loss" in options:
            # The loss is refused without the flag (before --strict's 2).
            with translated(inputs, "--strict", *[o for o in options if o != "--accept-loss"],
                            status=1):
                pass
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
          r'^    metrics-listen: "::@9153"$',
          r'^    forward-cache: ". 30"$',
          r"^    answer-rotation: on$"]

tests.add("kubeadm's Corefile translates and passes conf-check; the report says which alerts "
          "and dashboards to load",
          translation_case("kubeadm-coredns.json",
                           COMMON + [r"^    ttl: 30$", r"^    pods: insecure$",
                                     r"^    forward-max-pending: 1000$",
                                     r"^    lameduck-file: /run/knot/lameduck$"],
                           [("built in", 21, "reload"),
                            ("built in", 17, "disable success cluster.local"),
                            ("built in", 9, "fallthrough in-addr.arpa ip6.arpa"),
                            ("translated", 7, "kubernetes cluster.local in-addr.arpa ip6.arpa")],
                           [("cluster.local.zone", [r"SOA\s+ns\.dns\.cluster\.local\. .* 30$",
                                                    r"^ns\.dns\s+A\s+10\.96\.0\.10$"])],
                           report_patterns=[r"^  - Monitoring: the existing CoreDNS alerts and "
                                            r"dashboards keep working .*packaging/kubernetes/monitoring",
                                            r"^0 line\(s\) not translated"]))
tests.add("coredns/deployment's Corefile (a raw file) translates: pods disabled and ttl 5 as "
          "CoreDNS's defaults",
          translation_case("coredns-deployment.Corefile",
                           COMMON + [r"^    ttl: 5$", r"^    pods: disabled$"],
                           [("translated", 12, "max_concurrent 1000"), ("built in", 16, "reload")]))
tests.add("EKS's Corefile translates and passes conf-check",
          translation_case("eks-coredns.json", COMMON + [r"^    pods: insecure$", r"^    ttl: 5$"],
                           [("translated", 11, "prometheus :9153"), ("built in", 14, "loop")]))
tests.add("AKS's Corefile with its coredns-custom imports: stub domains (one inside the "
          "cluster zone, forwarded by it), inline hosts entries, log: exit 0",
          translation_case("aks-coredns.json",
                           COMMON + [r'^    forward-stub: \[ "puglife\.local=192\.11\.0\.1", '
                                     r'"abc\.com=1\.2\.3\.4", "my\.cluster\.local=2\.3\.4\.5" \]$',
                                     r'^    forward-cache: "my\.cluster\.local 30"$',
                                     r'^    hosts-entry: \[ "10\.0\.0\.1 example1\.org", '
                                     r'"10\.0\.0\.2 example2\.org", "10\.0\.0\.3 example3\.org" \]$',
                                     r"^    hosts-fallthrough: \[ \. \]$",
                                     r"^    global-module: mod-k8s/default$"],
                           [("translated", "import log.override:1", "log"),
                            ("translated", "import test.override:1", "hosts"),
                            ("translated", "import puglife.server:4", "forward . 192.11.0.1"),
                            ("translated", "import test.server:9", "forward . 2.3.4.5"),
                            ("built in", "import test.server:6", "my.cluster.local:53 {")],
                           [],
                           report_patterns=[r"^0 line\(s\) not translated"]))
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
    rewrite edns0 local set 0xffee abcd
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
        with translated([path], status=1) as (out, conf, report):
            # A rewrite not served and a tls:// upstream change answers: refused as losses.
            for pattern in [r"\S+:11: what this rewrite answered", r"\S+:12: upstream tls://"]:
                loss_line(report, pattern)
        with translated([path], "--accept-loss") as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            for line_ref, text, reason in [
                (2, "kubernetes cluster.local 10.0.0.0/22", "octet"),
                (7, "fallthrough", "NXDOMAIN"),
                (9, "somethingnew", "no equivalent"),
                (11, "rewrite edns0", "rewrite edns0 is not served"),
                (12, "forward . tls://9.9.9.9", "plain DNS"),
                (13, "tls_servername", "no equivalent"),
                (17, "prefetch 10", "no prefetch")]:
                pattern = (rf"^NOT TRANSLATED\s+\S+:{line_ref}\s+{re.escape(text)}.*\n\s+-> .*"
                           + re.escape(reason))
                testing.expect(re.search(pattern, report, re.M),
                               f"line {line_ref} ({text}) not reported with '{reason}':\n{report}")
            report_row(report, "translated", 14, "policy random")
            expect_lines(conf, r"^    pods: verified$", r"^    namespaces: \[ shop, db \]$",
                         r"^    endpoint-pod-names: on$", r"^    no-endpoints: on$",
                         r"^    autopath: on$", r"^    upstream: 10\.0\.0\.2$",
                         r"^    forward: \[ 10\.0\.0\.2 \]$",
                         r'^    template: "IN A example\.org \{ answer \\"\{\{ \.Name \}\} 60 IN A '
                         r'127\.0\.0\.1\\" \}"$')
        strict = run_tool("translate", "--strict", "--accept-loss", "--out", os.path.join(work, "o"),
                          path)
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


# -- issue 34: each class of input translated right, or refused with a loss and exit 1

def corefile(*lines, zones=()):
    """A root server block of kubeadm's kind with `lines` added, and more server blocks."""
    root = (".:53 {\n    errors\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n"
            "        pods insecure\n        fallthrough in-addr.arpa ip6.arpa\n    }\n"
            + "".join(f"    {line}\n" for line in lines) + "}\n")
    return root + "".join(zones)


def loss_line(report, pattern):
    expect_lines(report, r"^SERVES WORSE than the input", r"^  - " + pattern,
                 r"^NOT FOR USE AS IS: \d+ loss\(es\) above \(exit status 1\)", what="the report")


@tests.case
def proxy_translates_as_forward_root_and_stub_domain_with_its_options():
    text = corefile("proxy . 10.0.0.2:5353 10.0.0.3 {", "    policy first", "    max_fails 3",
                    "    fail_timeout 5s", "    health_check /health:8080", "    spray",
                    "    protocol dns", "    except internal.example", "}", "cache 30",
                    zones=["corp.example:53 {\n    proxy . 10.150.0.1\n}\n"])
    with translated_text(text, status=1) as (out, conf, report):
        loss_line(report, r"\S+:15: proxy option except: no equivalent")
    with translated_text(text, "--accept-loss") as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    forward: \[ 10\.0\.0\.2@5353, 10\.0\.0\.3 \]$",
                     r'^    forward-stub: \[ "corp\.example=10\.150\.0\.1" \]$',
                     r'^    forward-options: ". \{ policy sequential ; max_fails 3 \}"$',
                     r'^    forward-options: "corp\.example \{ policy random \}"$',
                     r'^    forward-cache: ". 30"$', r'^    forward-cache: "corp\.example off"$',
                     r"^    global-module: mod-k8s/default$")
        report_row(report, "translated", 8, "proxy . 10.0.0.2:5353 10.0.0.3")
        for line_ref, text_ in [(11, "fail_timeout 5s"), (12, "health_check /health:8080"),
                                (13, "spray"), (14, "protocol dns")]:
            report_row(report, "built in", line_ref, text_)
        report_row(report, "translated", 9, "policy first")
        report_row(report, "translated", 10, "max_fails 3")
        report_row(report, "NOT TRANSLATED", 15, "except internal.example")
        report_row(report, "translated", 20, "proxy . 10.150.0.1")


@tests.case
def proxy_to_resolv_conf_becomes_the_upstream_line():
    with translated_text(corefile("proxy . /etc/resolv.conf")) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    forward: \[ 192\.0\.2\.53 \]  # @upstream$")
        report_row(report, "translated", 8, "proxy . /etc/resolv.conf")


@tests.case
def proxy_over_grpc_is_refused_as_a_lost_forwarder_exit_1():
    text = corefile("proxy . 10.0.0.2 {", "    protocol grpc insecure", "}")
    with translated_text(text, status=1) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        testing.expect("forward:" not in conf, f"a forward line from a gRPC proxy:\n{conf}")
        report_row(report, "NOT TRANSLATED", 8, "proxy . 10.0.0.2")
        loss_line(report, r"\S+:8: names of this proxy line are not forwarded")
    with translated_text(text, "--accept-loss") as (out, conf, report):
        expect_lines(report, r"^1 loss\(es\) accepted \(--accept-loss\)", what="the report")


@tests.case
def a_forward_left_without_upstream_exits_1_and_says_why():
    with translated_text(corefile("forward . tls://9.9.9.9"), status=1) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        testing.expect(not re.search(r"^    forward:", conf, re.M), f"a forward line:\n{conf}")
        report_row(report, "NOT TRANSLATED", 8, "forward . tls://9.9.9.9")
        loss_line(report, r"\S+:8: upstream tls://9\.9\.9\.9 dropped")
        loss_line(report, r"\S+:8: no upstream of this line is kept")


@tests.case
def prometheus_on_loopback_keeps_the_probes_on_the_pod_address():
    with translated_text(corefile("prometheus 127.0.0.1:9153", "health {", "    lameduck 5s", "}",
                                  "forward . /etc/resolv.conf")) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r'^    metrics-listen: "::@9153"$')
        testing.expect("127.0.0.1" not in conf, f"loopback in knot.conf:\n{conf}")
        expect_lines(report, r"^translated\s+\S+:8\s+prometheus 127\.0\.0\.1:9153\n\s+-> "
                     r"metrics-listen: ::@9153 .*not 127\.0\.0\.1:9153: .*kubelet probes",
                     what="the report")
        testing.expect("lameduck 5s" in report and "LAMEDUCK_SECONDS=" not in report,
                       f"a lameduck step for the shipped 5 s:\n{report}")
    with translated_text(corefile("prometheus [::1]:9253", "forward . /etc/resolv.conf")) \
            as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r'^    metrics-listen: "::@9253"$')
        expect_lines(report, r"^  - Metrics on port 9253: .*change the containerPort to 9253",
                     what="the report")


@tests.case
def metrics_on_loopback_given_by_the_operator_is_a_loss_exit_1():
    with translated_text(corefile("forward . /etc/resolv.conf"), "--metrics-listen",
                         "127.0.0.1@9153", status=1) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        loss_line(report, r"--metrics-listen: metrics-listen 127\.0\.0\.1@9153: the kubelet's probes")


def forward_cache_values(conf):
    return re.findall(r'^    forward-cache: "([^"]*)"$', conf, re.M)


@tests.case
def each_blocks_cache_becomes_its_groups_forward_cache_and_a_block_without_one_caches_nothing():
    stub = "corp.example:53 {\n    cache 300 {\n        denial 5000 60 10\n        servfail 2s\n    }\n" \
           "    forward . 10.150.0.1\n}\n"
    bare = "other.example:53 {\n    forward . 10.150.0.2\n}\n"
    text = corefile("forward . /etc/resolv.conf", "cache 30", "forward inner.example 10.150.0.3",
                    zones=[stub, bare])
    with translated_text(text) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        testing.expect_equal(forward_cache_values(conf),
                             [". 30", "inner.example 30", "corp.example 300 { denial 5000 60 10 ; "
                              "servfail 2s }", "other.example off"], "the groups' caches")
        report_row(report, "translated", 14, "denial 5000 60 10")
        report_row(report, "translated", 15, "servfail 2s")
    # No cache in the root block: CoreDNS kept no forwarded answer, nor does the translation.
    with translated_text(corefile("forward . /etc/resolv.conf")) as (out, conf, report):
        testing.expect_equal(forward_cache_values(conf), [". off"], "the root's cache")
    # A cluster zone's block: its names are never cached (built in).
    with translated_text(corefile("forward . /etc/resolv.conf", "cache 30",
                                  zones=["cluster.local:53 {\n    cache 300\n    kubernetes\n}\n"])) \
            as (out, conf, report):
        expect_lines(report, r"^built in\s+\S+:\d+\s+cache 300\n\s+-> names of cluster\.local\. "
                     r"are answered from knotd's zones, never cached", what="the report")
    # prefetch and serve_stale change what is served: losses.
    with translated_text(corefile("forward . /etc/resolv.conf", "cache 30 {", "    prefetch 10",
                                  "    serve_stale 1h", "}"), status=1) as (out, conf, report):
        loss_line(report, r"\S+:10: cache option prefetch")
        loss_line(report, r"\S+:11: cache option serve_stale")


@tests.case
def lameduck_10s_and_1m_become_the_deployments_period_with_what_to_change():
    for duration, secs, grace in [("10s", 10, None), ("20s", 20, None), ("1m", 60, 70)]:
        text = corefile("health {", f"    lameduck {duration}", "}", "forward . /etc/resolv.conf")
        with translated_text(text) as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            expect_lines(conf, rf"^    # CoreDNS's lameduck {duration}: the Deployment's "
                         rf"LAMEDUCK_SECONDS must be {secs} ",
                         r"^    lameduck-file: /run/knot/lameduck$")
            report_row(report, "translated", 9, f"lameduck {duration}")
            expect_lines(report, rf"set env deployment/knot-dns -c knotd LAMEDUCK_SECONDS={secs} ",
                         what="the report")
            if grace is None:
                expect_lines(report, rf"terminationGracePeriodSeconds \(shipped 30\) leaves knotd "
                             rf"{30 - secs} s .*keep it", what="the report")
            else:
                expect_lines(report, rf"patch deployment knot-dns -p '\{{\"spec\":\{{\"template\":"
                             rf"\{{\"spec\":\{{\"terminationGracePeriodSeconds\":{grace}\}}\}}\}}\}}'",
                             what="the report")


def k3s_configmap(hosts_block):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "coredns", "namespace": "kube-system"},
            "data": {"Corefile": corefile(hosts_block, "forward . /etc/resolv.conf"),
                     "NodeHosts": "10.1.0.5 node-a\n10.1.0.6 node-b\n"}}


@tests.case
def k3s_node_hosts_become_the_hosts_table_read_through_the_api_exit_0():
    # k3s's Corefile: the NodeHosts key gains a line per node that joins; mod-k8s reads it
    # through the API and follows its changes (hosts-configmap).
    cm = k3s_configmap("hosts /etc/coredns/NodeHosts {\n        ttl 60\n        reload 15s\n"
                       "        fallthrough\n    }")
    with translated_text(cm, name="k3s.json") as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    hosts-configmap: kube-system/coredns/NodeHosts$",
                     r"^    hosts-ttl: 60$", r"^    hosts-reload: 15$",
                     r"^    hosts-fallthrough: \[ \. \]$", r"^    global-module: mod-k8s/default$")
        report_row(report, "translated", 8, "hosts /etc/coredns/NodeHosts")
        report_row(report, "translated", 10, "reload 15s")
        report_row(report, "translated", 11, "fallthrough")
        testing.expect("Role knot-dns" not in report, "a step for the Role that names coredns")
    # The default: every 5 s, CoreDNS's; without fallthrough, a note that unknown names SERVFAIL.
    with translated_text(k3s_configmap("hosts /etc/coredns/NodeHosts"),
                         name="k3s.json") as (out, conf, report):
        report_row(report, "translated", 8, "hosts /etc/coredns/NodeHosts")
        expect_lines(report, r"without fallthrough, a name of the hosts zones it lacks is SERVFAIL",
                     what="the report")
    cm = k3s_configmap("hosts /etc/coredns/NodeHosts {\n        reload 0\n    }")
    with translated_text(cm, name="k3s.json") as (out, conf, report):
        report_row(report, "translated", 9, "reload 0")
        expect_lines(conf, r"^    hosts-reload: 0$")
    # A ConfigMap of another name: the Role must name it.
    cm = k3s_configmap("hosts /etc/coredns/NodeHosts")
    cm["metadata"]["name"] = "dns-hosts"
    with translated_text(cm, name="k3s.json") as (out, conf, report):
        expect_lines(conf, r"^    hosts-configmap: kube-system/dns-hosts/NodeHosts$")
        expect_lines(report, r"Add dns-hosts to the resourceNames of the Role knot-dns",
                     what="the report")


# -- issue 41, items 3, 4, 8: rewrite and template lines become mod-k8s's options

K3S_CUSTOM = {
    # k3s's coredns-custom ConfigMap: *.override files imported into the root block.
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "coredns-custom", "namespace": "kube-system"},
    "data": {
        "split.override": "rewrite name exact git.example.com. traefik.kube-system.svc.cluster.local.\n",
        "corp.override": "rewrite stop {\n    name regex (.*)\\.corp\\.example\\. "
                         "{1}.default.svc.cluster.local.\n    answer name "
                         "(.*)\\.default\\.svc\\.cluster\\.local\\. {1}.corp.example.\n}\n",
        "k3d.override": 'template IN A host.k3d.internal {\n    answer "{{ .Name }} 60 IN A '
                        '172.18.0.1"\n}\n',
        "noaaaa.override": "template ANY AAAA {\n    rcode NOERROR\n}\n",
    },
}


def k3s_with_custom():
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "coredns", "namespace": "kube-system"},
          "data": {"Corefile": corefile("import /etc/coredns/custom/*.override",
                                        "forward . /etc/resolv.conf")}}
    return {"apiVersion": "v1", "kind": "List", "items": [cm, K3S_CUSTOM]}


@tests.case
def rewrite_and_template_lines_become_the_options_with_the_lines_words():
    with translated_text(k3s_with_custom(), name="k3s.json") as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf,
                     r'^    rewrite: "name exact git\.example\.com\. traefik\.kube-system\.svc\.cluster\.local\."$',
                     r'^    rewrite: "stop \{ name regex \(\.\*\)\\\.corp\\\.example\\\. \{1\}\.default\.svc\.cluster\.local\. ; '
                     r'answer name \(\.\*\)\\\.default\\\.svc\\\.cluster\\\.local\\\. \{1\}\.corp\.example\. \}"$',
                     r'^    template: "IN A host\.k3d\.internal \{ answer \\"\{\{ \.Name \}\} 60 IN A 172\.18\.0\.1\\" \}"$',
                     r'^    template: "ANY AAAA \{ rcode NOERROR \}"$',
                     r"^    global-module: mod-k8s/default$")
        expect_lines(report, r"^translated\s+.*import corp\.override:1\s+rewrite stop \{ \.\.\. \}\n\s+-> rewrite: stop \{",
                     r"^translated\s+.*import k3d\.override:1\s+template IN A host\.k3d\.internal",
                     what="the report")
        testing.expect("SERVES WORSE" not in report, f"a loss reported:\n{report}")


@tests.case
def a_blocks_forward_to_resolv_conf_is_the_default_servers_when_the_roots_is_too():
    # AKS's documented rewrite block: its names go to the node's resolvers either way.
    block = ("example.com:53 {\n    rewrite stop {\n        name regex (.*)\\.example\\.com "
             "{1}.default.svc.cluster.local\n        answer name (.*)\\.default\\.svc\\.cluster\\.local "
             "{1}.example.com\n    }\n    forward . /etc/resolv.conf\n}\n")
    with translated_text(corefile("forward . /etc/resolv.conf", zones=[block])) as (out, conf, report):
        report_row(report, "translated", 15, "forward . /etc/resolv.conf")
        expect_lines(report, r"-> no stub domain needed: names of example\.com\. go to mod-k8s's "
                     r"forward servers, the node's resolvers", what="the report")
        testing.expect("forward-stub" not in conf, f"a stub domain for the default servers:\n{conf}")
        conf_check(os.path.join(out, "knot.conf"))
    # The root forwards elsewhere: the block's names would leave the node's resolvers.
    with translated_text(corefile("forward . 10.150.0.9", zones=[block]), status=1) as (out, conf, report):
        report_row(report, "NOT TRANSLATED", 15, "forward . /etc/resolv.conf")
        loss_line(report, r"\S+:15: names of example\.com\. go to the root block's forward servers")


@tests.case
def a_blocks_rewrite_out_of_the_block_with_its_own_forward_is_a_loss():
    # CoreDNS sends the rewritten name to the block's forward; mod-k8s forwards it by its
    # new name. Into the cluster zones or the block's own zone: the same answer, no loss.
    def block(to, forward="10.150.0.3"):
        return ("example.com:53 {\n    rewrite stop {\n        name regex (.*)\\.example\\.com "
                f"{to}\n        answer auto\n    }}\n    forward . {forward}\n}}\n")
    for to, status in [("{1}.corp.internal", 1), ("{1}", 1), ("{1}.default.svc.cluster.local", 0),
                       ("{1}.in.example.com", 0)]:
        with translated_text(corefile("forward . /etc/resolv.conf", zones=[block(to)]),
                             status=status) as (out, conf, report):
            report_row(report, "translated", 11, "rewrite stop { ... }")
            if status:
                target = r"corp\.internal\." if "corp" in to else "the names it rewrites"
                loss_line(report, rf"\S+:11: (names rewritten to )?{target}.* leave the server "
                          r"block example\.com\.: .* not to this block's forward 10\.150\.0\.3")
            conf_check(os.path.join(out, "knot.conf"))
    # A block forwarding to the default servers loses nothing by it.
    with translated_text(corefile("forward . 10.150.0.3", zones=[block("{1}.corp.internal")])) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))


@tests.case
def a_rewrite_or_template_form_not_served_is_a_loss_exit_1():
    for line, why in [("rewrite edns0 local set 0xffee abcd", r"rewrite edns0 is not served"),
                      ("rewrite name regex a b answer value c d", r"answer value is not served"),
                      ("rewrite name regex (a)\\1 b", r"regex .*backreferences"),
                      ('template IN A e {\n        answer "{{ parseInt .Name }} 5 A 1.2.3.4"\n    }',
                       r".*only \.Name"),
                      ("template IN A e {\n        ederror 21\n    }", r"template's ederror is not served")]:
        text = corefile(line, "forward . /etc/resolv.conf")
        with translated_text(text, status=1) as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            testing.expect(not re.search(r"^    (rewrite|template):", conf, re.M),
                           f"{line}: written:\n{conf}")
            expect_lines(report, r"^NOT TRANSLATED\s+\S+:8\s+.*\n\s+-> (rewrite|template): " + why,
                         what="the report")
            loss_line(report, r"\S+:8: what this (rewrite|template) answered")


@tests.case
def a_rewrite_of_another_server_block_applies_to_that_blocks_names():
    # AKS's documented example: a server block of its own for the rewritten domain; the
    # root's rules beside it or not, and blocks without rules.
    blocks = [
        "example.com:53 {\n    rewrite stop {\n        name regex (.*)\\.example\\.com "
        "{1}.default.svc.cluster.local\n        answer name (.*)\\.default\\.svc\\.cluster\\.local "
        "{1}.example.com\n    }\n    template IN TXT {\n        answer \"{{ .Name }} 60 IN TXT {{ .Zone }}\"\n"
        "    }\n    forward . 10.150.0.3\n}\n",
        "corp.lan:53 {\n    forward . 10.150.0.1\n}\n",
        "in.example.com:53 {\n    forward . 10.150.0.2\n}\n"]
    text = corefile("forward . /etc/resolv.conf", "rewrite name suffix .lan. .default.svc.cluster.local.",
                    zones=blocks)
    with translated_text(text) as (out, conf, report):
        expect_lines(conf, r'^    rewrite: "name suffix \.lan\. \.default\.svc\.cluster\.local\."$',
                     r'^    rewrite: "example\.com: stop \{ name regex \(\.\*\)\\\.example\\\.com ',
                     r'^    template: "example\.com: IN TXT example\.com\. \{ answer ',
                     # Blocks inside a block with rules: named, so that its rules leave them.
                     r'^    rewrite: "corp\.lan:"$', r'^    rewrite: "in\.example\.com:"$')
        report_row(report, "translated", 12, "rewrite stop { ... }")
        expect_lines(report, r"-> rewrite: example\.com: stop .* to the names of the server block "
                     r"example\.com\. only", what="the report")
        conf_check(os.path.join(out, "knot.conf"))
    # Without the root's rules, a block that no block with rules holds is not named.
    with translated_text(corefile("forward . /etc/resolv.conf", zones=blocks)) as (out, conf, report):
        expect_lines(conf, r'^    rewrite: "in\.example\.com:"$')
        testing.expect(not re.search(r'rewrite: "corp\.lan:"', conf),
                       f"a block that no block with rules holds is named:\n{conf}")
        conf_check(os.path.join(out, "knot.conf"))


@tests.case
def a_hosts_file_is_read_where_coredns_read_it_and_a_second_hosts_plugin_is_a_loss():
    with translated_text(corefile("hosts /etc/hosts.extra example.org {", "    no_reverse",
                                  "    10.1.2.3 legacy.example.org", "    fallthrough",
                                  "}", "forward . /etc/resolv.conf")) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    hosts-file: /etc/hosts\.extra$", r"^    hosts-zone: \[ example\.org\. \]$",
                     r"^    hosts-no-reverse: on$", r'^    hosts-entry: \[ "10\.1\.2\.3 legacy\.example\.org" \]$')
        expect_lines(report, r"Mount the hosts file /etc/hosts\.extra in the knot-dns pod",
                     what="the report")
    text = corefile("hosts {", "    10.1.2.3 legacy.cluster.local", "    reload 15s", "}",
                    "hosts /etc/hosts.other", "forward . /etc/resolv.conf")
    with translated_text(text, status=1) as (out, conf, report):
        expect_lines(conf, r"^    hosts-file: /etc/hosts$", r"^    hosts-reload: 15$")
        report_row(report, "translated", 10, "reload 15s")
        loss_line(report, r"\S+:12: the names of this hosts plugin are not answered")


@tests.case
def k8s_external_and_zonal_names_translate_to_their_options_and_zone():
    text = (".:53 {\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        zonal\n    }\n"
            "    k8s_external example.org {\n        apex ns-apex\n        ttl 30\n        headless\n"
            "    }\n    forward . /etc/resolv.conf\n}\n")
    with translated_text(text) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    zonal: on$", r"^    external-zone: \[ example\.org\. \]$",
                     r"^    external-apex: ns-apex$", r"^    external-ttl: 30$",
                     r"^    external-headless: on$", r"^  - domain: example\.org\.$")
        with open(os.path.join(out, "example.org.zone"), encoding="utf-8") as f:
            expect_lines(f.read(), r"^\$TTL 30$",
                         r"^@\s+SOA\s+ns1\.ns-apex\.example\.org\. hostmaster\.ns-apex\.example\.org\. "
                         r"1 7200 1800 86400 30$", r"^@\s+NS\s+ns1\.ns-apex\.example\.org\.$",
                         what="example.org.zone")
        report_row(report, "translated", 5, "k8s_external example.org")
        report_row(report, "translated", 3, "zonal")
    text = ".:53 {\n    kubernetes cluster.local\n    k8s_external example.org {\n        fallthrough\n    }\n}\n"
    with translated_text(text, status=1) as (out, conf, report):
        loss_line(report, r"\S+:4: names of the external zones that are not Services' are not passed on")


@tests.case
def kubernetes_upstream_address_becomes_mod_k8s_upstream():
    text = (".:53 {\n    kubernetes cluster.local {\n        upstream 10.0.0.53 10.0.0.54\n    }\n"
            "    forward . /etc/resolv.conf\n}\n")
    with translated_text(text) as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    upstream: 10\.0\.0\.53$")
        report_row(report, "translated", 3, "upstream 10.0.0.53 10.0.0.54")
        expect_lines(report, r"one resolver: 10\.0\.0\.54 not used", what="the report")


@tests.case
def federation_and_chaos_become_federations_and_knotds_identity_and_version():
    text = corefile("federation cluster.local {", "    prod prod.feddomain.com",
                    "    staging staging.feddomain.com.", "}", "chaos CoreDNS-1.2.6 ops@example.org",
                    "nsid coredns-a", "forward . /etc/resolv.conf")
    with translated_text(text, status=1) as (out, conf, report):
        loss_line(report, r"\S+:12: authors\.bind: knotd does not answer it")
    with translated_text(text, "--accept-loss") as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        report_row(report, "translated", 8, "federation cluster.local")
        expect_lines(conf, r'^    federations: \[ "prod=prod\.feddomain\.com", '
                     r'"staging=staging\.feddomain\.com" \]$',
                     r"^    version: CoreDNS-1\.2\.6$", r"^    nsid: coredns-a$")
        report_row(report, "translated", 9, "prod prod.feddomain.com")
        expect_lines(report, r"^translated\s+\S+:12\s+chaos CoreDNS-1\.2\.6 ops@example\.org\n"
                     r"\s+-> server: version: CoreDNS-1\.2\.6 .*id\.server and hostname\.bind",
                     r"^NOT TRANSLATED\s+\S+:12\s+chaos .*\n\s+-> authors\.bind",
                     what="the report")


def expect_refused(result, *patterns):
    """Exit 3, one line on the output naming the reason, no traceback, nothing written."""
    lines = result.stdout.splitlines()
    testing.expect(result.returncode == 3 and len(lines) == 1 and "Traceback" not in result.stdout,
                   f"not a one-line refusal (exit {result.returncode}):\n{result.stdout}")
    expect_lines(result.stdout, *patterns, what="the error")


def refused_input(text, name, *patterns, command="translate"):
    work = tempfile.mkdtemp(prefix="mod-k8s-migrate-bad-")
    try:
        path = os.path.join(work, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        out = os.path.join(work, "out")
        result = run_tool(command, *(["--out", out] if command == "translate" else []), path)
        expect_refused(result, *patterns)
        testing.expect(not os.path.exists(out), f"files written for {name}: {os.listdir(work)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def kube_dns_configmap(**data):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kube-dns", "namespace": "kube-system"},
            "data": {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}}


@tests.case
def hostile_kube_dns_values_are_refused_before_knot_conf_is_written():
    injected = "\nserver:\n    listen: 203.0.113.1@53\n#"
    for data, pattern in [
            ({"federations": {'x" ]' + injected: "example.com"}}, "federation name .* lowercase DNS label"),
            ({"federations": {"x": "example.com\"\n  - id: evil"}}, "federation x's domain .* not a DNS name"),
            ({"federations": {"x#y": "example.com"}}, "federation name"),
            ({"federations": {"x": "example.com: {a: b}"}}, "not a DNS name"),
            ({"federations": {"x": ["example.com"]}}, "not a string"),
            ({"stubDomains": {"corp.example" + injected: ["10.0.0.1"]}}, "stub domain .* not a DNS name"),
            ({"stubDomains": 5}, "not a string")]:
        cm = kube_dns_configmap(**data)
        if data.get("stubDomains") == 5:
            cm["data"]["stubDomains"] = 5    # a number where kubectl prints strings
        refused_input(cm, "kube-dns.json",
                      r"^mod-k8s-migrate: configmap/kube-dns:\w+: .*" + pattern)
    # An address is written only as ipaddress printed it: a scope is not accepted.
    cm = kube_dns_configmap(upstreamNameservers=["fe80::1%eth0" + injected, "10.0.0.1"])
    with translated_text(cm, status=1, name="kube-dns.json") as (out, conf, report):
        conf_check(os.path.join(out, "knot.conf"))
        expect_lines(conf, r"^    forward: \[ 10\.0\.0\.1 \]$")
        testing.expect("203.0.113.1" not in conf and "fe80" not in conf, f"injected:\n{conf}")
        loss_line(report, r"configmap/kube-dns:upstreamNameservers: upstream fe80::1%eth0\\x0aserver")


@tests.case
def hostile_corefile_values_are_refused_with_one_line():
    for text, pattern in [
            ('.:53 {\n    kubernetes "cluster.local\nserver:"\n}\n', r"zone .* not a DNS name"),
            ('"cluster.local\nx":53 {\n    kubernetes\n}\n', r"server block zone .* not a DNS name"),
            (corefile('chaos "v1\\" ]\nserver:"'), r"not printable text without quotes"),
            ('.:53 {\n    kubernetes cluster.local {\n        namespaces "a\nb"\n    }\n}\n',
             r"namespace .* not a namespace name"),
            (corefile("federation {", "    Prod prod.example", "}"), r"federation name \"Prod\""),
            (corefile("forward corp\\x.example 10.0.0.1"), r"forward zone .* not a DNS name")]:
        refused_input(text, "Corefile", r"^mod-k8s-migrate: \S+:\d+: .*" + pattern)


@tests.case
def malformed_and_deeply_nested_input_ends_in_one_line_never_a_traceback():
    deep = '{"kind": "ConfigMap", "data": ' + "[" * 200000 + "]" * 200000 + "}"
    refused_input(deep, "deep.json", r"^mod-k8s-migrate: \S+deep\.json: JSON nested deeper than 64$")
    refused_input(kube_dns_configmap(stubDomains="[" * 100000 + "]" * 100000), "kube-dns.json",
                  r"stubDomains: JSON nested deeper than 64$")
    refused_input('{"kind": "ConfigMap", "data": {"Corefile": ["x"]}}', "cm.json",
                  r"Corefile is not a string$")
    refused_input('{"kind": "List", "items": [{"kind": "ConfigMap", "data": [1]}]}', "cm.json",
                  r"data is not a map$")
    refused_input('{"kind": "ConfigMap", "data": {"Corefile": ".:53 {"}', "cm.json", r"not valid JSON")
    refused_input(".:53 {\n    kubernetes cluster.local {\n", "Corefile", r"not closed")
    # check: a Deployment whose spec is a list (a map elsewhere) and deep JSON alike.
    refused_input({"kind": "List", "items": [
        {"kind": "Service", "metadata": {"name": "kube-dns", "namespace": "kube-system"},
         "spec": {"selector": {"k8s-app": "kube-dns"}}},
        {"kind": "Deployment", "metadata": {"name": "knot-dns", "namespace": "kube-system"},
         "spec": ["x"]}]}, "state.json", r"^mod-k8s-migrate: malformed input \(", command="check")
    refused_input(deep, "state.json", r"JSON nested deeper than 64$", command="check")


@tests.case
def check_prints_a_name_with_a_newline_on_its_own_line():
    work = tempfile.mkdtemp(prefix="mod-k8s-migrate-check-")
    try:
        with open(os.path.join(FIXTURES, "check-kubeadm.json"), encoding="utf-8") as f:
            state = json.load(f)
        state["items"].append({"kind": "HorizontalPodAutoscaler", "metadata": {
            "name": "h\nkubectl delete namespace kube-system", "namespace": "kube-system"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "coredns"}}})
        path = os.path.join(work, "state.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(state, f)
        result = run_tool("check", path)
        expect_lines(result.stdout, r"delete hpa h\\x0akubectl delete namespace", what="the check")
        testing.expect(not re.search(r"^kubectl delete namespace", result.stdout, re.M),
                       f"a line of the input's own:\n{result.stdout}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


@tests.case
def what_the_report_says_of_the_shipped_deployment_is_what_it_has():
    """The lameduck period, grace period and metrics port the report compares with."""
    loader = importlib.machinery.SourceFileLoader("mod_k8s_migrate", TOOL)
    tool = types.ModuleType(loader.name)
    loader.exec_module(tool)
    with open(os.path.join(SRCDIR, "packaging", "kubernetes", "deployment.yaml"),
              encoding="utf-8") as f:
        deployment = f.read()
    for pattern, value in [
            (r"- name: LAMEDUCK_SECONDS\n\s+value: \"(\d+)\"", tool.SHIPPED_LAMEDUCK),
            (r"terminationGracePeriodSeconds: (\d+)", tool.SHIPPED_GRACE),
            (r"- name: metrics\n\s+containerPort: (\d+)", tool.SHIPPED_METRICS_PORT)]:
        m = re.search(pattern, deployment)
        testing.expect(m is not None, f"no /{pattern}/ in deployment.yaml")
        testing.expect_equal(int(m.group(1)), value, f"deployment.yaml's /{pattern}/")


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


# -- the corpus (tests/migrate/README.md): every real input, its exit status and rows


def corefile_lines(fixture):
    """(source, line numbers of the input's Corefile lines that must have a row)."""
    with open(os.path.join(FIXTURES, fixture), encoding="utf-8") as f:
        text = f.read()
    if fixture.endswith(".json"):
        doc = json.loads(text)
        items = doc["items"] if doc.get("kind") == "List" else [doc]
        cm = next((i for i in items if "Corefile" in i.get("data", {})), None)
        if cm is None:
            return None, []  # kube-dns's ConfigMap: its keys' rows are checked by name
        source, text = f"configmap/{cm['metadata']['name']}:Corefile", cm["data"]["Corefile"]
    else:
        source = fixture
    numbers = [n for n, line in enumerate(text.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and
               not re.match(r"^\}(\s*#.*)?$", line.strip())]
    return source, numbers


def corpus_case(fixture, status, rows=(), conf_patterns=(), losses=()):
    """Translates a corpus input: its exit status, conf-check, a row for every line of its
    Corefile, the rows and knot.conf lines said, and with status 1 the losses said."""
    def check():
        with translated([fixture], status=status) as (out, conf, report):
            if status == 1:
                for loss in losses:
                    loss_line(report, loss)
        with translated([fixture], "--accept-loss") as (out, conf, report):
            conf_check(os.path.join(out, "knot.conf"))
            source, numbers = corefile_lines(fixture)
            kinds = "translated|built in|NOT TRANSLATED|note|part of"
            for number in numbers:
                testing.expect(re.search(rf"^({kinds})\s+\S*{re.escape(source)}:{number}\b", report,
                                         re.M), f"{fixture}: no row for line {number}:\n{report}")
            for kind, line_ref, text in rows:
                report_row(report, kind, line_ref, text)
            expect_lines(conf, *conf_patterns)
    return check


OPENSHIFT_GROUPS = [r'^    forward-options: "foo\.com \{ policy round_robin \}"$',
                    r'^    forward-options: "bar\.com \{ policy random \}"$',
                    r'^    forward-options: "fizz\.com \{ policy sequential \}"$',
                    r'^    forward-options: ". \{ policy sequential \}"$',
                    r'^    forward-cache: "foo\.com 900 \{ denial 9984 30 \}"$',
                    r'^    forward-cache: ". 900 \{ denial 9984 30 \}"$',
                    r'^    query-log: ". \{ class error \}"$',
                    r"^    listen: \[ 0\.0\.0\.0@5353, \"::@5353\" \]$"]

# k3s's NodeHosts key, read through the API (issue 41, item 2).
NODEHOSTS_CM = r"^    hosts-configmap: kube-system/coredns/NodeHosts$"


CORPUS = [
    ("kubeadm-coredns.json", 0, [("built in", 21, "reload")], [r'^    forward-cache: ". 30"$']),
    ("coredns-deployment.Corefile", 0, [("translated", 12, "max_concurrent 1000")], []),
    ("eks-coredns.json", 0, [], [r'^    forward-options: .$']),
    ("gke-kube-dns.json", 0, [], []),
    ("kubespray-coredns.json", 0, [("translated", 14, "prefer_udp"), ("built in", 2, "errors")],
     [r'^    forward-options: ". \{ prefer_udp \}"$']),
    ("kops-coredns.json", 0, [("translated", 7, "kubernetes cluster.local. in-addr.arpa ip6.arpa")], []),
    ("kube-up-coredns.json", 0, [], [r'^    forward-cache: ". 30"$']),
    ("talos-coredns.json", 0, [("translated", 7, "log . { ... }"), ("translated", 8, "class error")],
     [r'^    query-log: ". \{ class error \}"$']),
    ("microk8s-coredns.json", 0, [("translated", 15, "forward . 8.8.8.8 8.8.4.4")],
     [r"^    forward: \[ 8\.8\.8\.8, 8\.8\.4\.4 \]$", r'^    query-log: ". \{ class error \}"$']),
    ("minikube-coredns.json", 0, [("translated", 2, "log")], [r'^    query-log: "\."$']),
    ("rke2-coredns.json", 0, [("translated", 7, "kubernetes cluster.local cluster.local")], []),
    ("rke1-coredns.json", 0, [("translated", 12, "forward . /etc/resolv.conf")], []),
    ("aks-engine-coredns.json", 0, [("translated", 10, "proxy . /etc/resolv.conf"),
                                    ("built in", 6, "upstream")], []),
    ("openshift-dns-servers.Corefile", 0, [("translated", 11, "bufsize 512"),
                                           ("translated", 5, "policy round_robin")],
     OPENSHIFT_GROUPS + [r"^    bufsize: 512$"]),
    ("openshift-dns-force-tcp.Corefile", 0, [("translated", 6, "force_tcp"),
                                             ("built in", 41, "chaos")],
     [r'^    forward-options: "foo\.com \{ policy round_robin ; force_tcp \}"$',
      r"^    bufsize: 1232$"]),
    ("openshift-dns-cache.json", 0, [("translated", 19, "cache 9999 { ... }")],
     [r'^    forward-cache: ". 9999 \{ denial 9984 29 \}"$']),
    ("k8s-docs-stub-domain.Corefile", 0, [("translated", 17, "cache 30")],
     [r'^    forward-cache: "consul\.local 30"$', r"^    forward: \[ 172\.16\.0\.1 \]$"]),
    ("homelab-policy-random.Corefile", 0, [("translated", 19, "policy random"),
                                           ("built in", 20, "health_check 5s")],
     [r'^    forward-options: "ohkillsh\.win \{ policy random \}"$']),
    ("kubespray-external-zones.json", 1, [("built in", 1, "example.com {")],
     [r'^    forward-cache: "example\.com 5"$'], [r"\S+:32: cache option prefetch"]),
    ("nodelocaldns.Corefile", 1, [("translated", 11, "force_tcp")], [],
     [r"\S+:10: names of cluster\.local\. are answered from the cluster, not forwarded"]),
    ("aks-coredns.json", 0, [("translated", "import test.server:9", "forward . 2.3.4.5")],
     [r'^    forward-cache: "my\.cluster\.local 30"$']),
    # k3s's NodeHosts re-read every 15 s: the hosts table reads the key through the API.
    ("k3s-coredns.json", 0, [("translated", 9, "hosts /etc/coredns/NodeHosts { ... }"),
                             ("translated", 15, "forward . /etc/resolv.conf")],
     [NODEHOSTS_CM, r"^    hosts-reload: 15$"]),
    # k3s's coredns-custom overrides: a server block's own rewrite, for its names only.
    ("k3s-coredns-custom.json", 0, [("translated", "import log.override:1", "log"),
                                    ("translated", "import doma.lol.server:3", "rewrite continue { ... }")],
     [NODEHOSTS_CM, r'^    rewrite: "doma\.lol: continue \{ name regex \(\.\*\)\\\.doma\\\.lol '
                    r'traefik\.traefik\.svc\.cluster\.local ; answer auto \}"$']),
    ("homelab-k3s-stubs.json", 0, [("translated", 14, "forward nas01.home.macro.network 10.133.0.11")],
     [r'^    forward-cache: "home\.macro\.network 30"$', NODEHOSTS_CM]),
    ("homelab-k3s-rewrite.json", 0, [("translated", 5, "rewrite continue { ... }"),
                                     ("translated", 12, "hosts /etc/coredns/NodeHosts { ... }")],
     [NODEHOSTS_CM]),
    ("vcluster-coredns.json", 0, [("translated", 5, "rewrite name regex"),
                                  ("translated", 10, "hosts /etc/NodeHosts { ... }")],
     [r"^    hosts-configmap: vcluster-my-vcluster/coredns/NodeHosts$"]),
]
for fixture, status, rows, patterns, *losses in CORPUS:
    tests.add(f"corpus {fixture}: exit {status}, a row for every line", corpus_case(
        fixture, status, rows, patterns, losses[0] if losses else ()))


# -- doc/mod-k8s.rst's table of CoreDNS's plugins: each row's exit status, as translated

DOC = os.path.join(SRCDIR, "doc", "mod-k8s.rst")

# A plugin in its common form, in kubeadm's root block (or a block of its own).
PLUGIN_FORMS = {
    "kubernetes": [], "forward": ["forward . 10.0.0.2 {", "    policy random", "}"],
    "proxy": ["proxy . 10.0.0.2"], "cache": ["forward . 10.0.0.2", "cache 30"],
    "log": ["forward . 10.0.0.2", "log"], "errors": ["forward . 10.0.0.2"],
    "bufsize": ["forward . 10.0.0.2", "bufsize 1232"],
    "health": ["forward . 10.0.0.2", "health"], "ready": ["forward . 10.0.0.2"],
    "prometheus": ["forward . 10.0.0.2", "prometheus :9153"],
    "reload": ["forward . 10.0.0.2", "reload"], "loop": ["forward . 10.0.0.2", "loop"],
    "loadbalance": ["forward . 10.0.0.2", "loadbalance"],
    "autopath": ["forward . 10.0.0.2", "autopath @kubernetes"],
    "hosts": ["forward . 10.0.0.2", "hosts /etc/hosts.extra"],
    "rewrite": ["forward . 10.0.0.2", "rewrite name a.example b.example"],
    "template": ["forward . 10.0.0.2", "template IN A example.org {",
                 '    answer "{{ .Name }} 60 IN A 127.0.0.1"', "}"],
    "k8s_external": ["forward . 10.0.0.2", "k8s_external example.com"],
    "federation": ["forward . 10.0.0.2", "federation cluster.local {", "    fed example.com", "}"],
    "file": ["forward . 10.0.0.2"], "chaos": ["forward . 10.0.0.2", "chaos v1"],
    "nsid": ["forward . 10.0.0.2", "nsid"],
}
BLOCK_FORMS = {"file": "example.org:53 {\n    file /etc/coredns/example.org.db\n}\n"}
SERVER_BLOCKS = {"tls": "tls://.:853", "https": "https://.:443", "https3": "https3://.:443",
                 "quic": "quic://.:853", "grpc_server": "grpc://.:443"}


def doc_plugin_rows():
    """(plugins, exit status) of each row of the doc's plugin table."""
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    table = text.split(".. list-table:: CoreDNS 1.15.0's plugins", 1)[1].split("\n\n", 2)[1]
    rows = []
    for row in re.split(r"\n   \* - ", "\n" + table)[1:]:
        cells = re.split(r"\n     - ", row)
        if not cells[1].strip().isdigit():
            continue  # the header
        plugins = re.findall(r"``([a-z0-9_]+)``", cells[0].split("(server blocks")[0])
        rows.append((plugins, int(cells[1].strip())))
    return rows


@tests.case
def each_plugin_of_the_docs_table_exits_as_its_row_says():
    rows = doc_plugin_rows()
    testing.expect(len(rows) >= 20, f"the table's rows: {rows}")
    for plugins, status in rows:
        for plugin in plugins:
            if plugin in SERVER_BLOCKS:
                text = corefile("forward . 10.0.0.2", zones=[f"{SERVER_BLOCKS[plugin]} {{\n    "
                                                              "forward . 10.0.0.3\n}\n"])
            elif plugin in BLOCK_FORMS:
                text = corefile(*PLUGIN_FORMS[plugin], zones=[BLOCK_FORMS[plugin]])
            elif plugin in PLUGIN_FORMS:
                text = corefile(*PLUGIN_FORMS[plugin])
            else:
                text = corefile("forward . 10.0.0.2", plugin)
            work = tempfile.mkdtemp(prefix="mod-k8s-migrate-plugin-")
            try:
                path = os.path.join(work, "Corefile")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                result = run_tool("translate", "--out", os.path.join(work, "o"), path)
                testing.expect(result.returncode == status,
                               f"plugin {plugin}: exit {result.returncode}, the doc says {status}:"
                               f"\n{text}\n{result.stdout}")
            finally:
                shutil.rmtree(work, ignore_errors=True)


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
    k8s_external example.org
    prometheus :9153
    proxy . UPSTREAM
    cache 30
    chaos Migrated-DNS-1.0
    federation cluster.local {
        myfed example.com
    }
    loop
    loadbalance
    rewrite name exact git.example.com. kubernetes.default.svc.cluster.local.
    template IN A host.k3d.internal {
        answer "{{ .Name }} 60 IN A 172.18.0.1"
    }
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
                          "--upstream", self.upstream.address, "--accept-loss", source)
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
def a_proxy_line_forwards_outside_names_to_its_upstream(world):
    expect_answer(world, "custom", "www.proxied.example.", "A", "192.0.2.")
    testing.expect("www.proxied.example." in [n.lower() for n, _ in world.upstream.names()],
                   f"the proxy's upstream was not asked: {world.upstream.names()}")


@tests.case
def a_rewrite_and_a_template_answer_in_the_translated_configuration(world):
    expect_answer(world, "custom", "git.example.com.", "A", "10.96.0.1")
    reply = world.answer("custom", "git.example.com.")
    testing.expect(re.search(r"^git\.example\.com\.\s+30\s+IN\s+A\s+10\.96\.0\.1", reply.text, re.M),
                   f"git.example.com: not the service under the question's name:\n{reply.text}")
    expect_answer(world, "custom", "host.k3d.internal.", "A", "172.18.0.1")


@tests.case
def chaos_version_is_answered_by_knotd(world):
    def check():
        reply = dig.query(world.servers["custom"], "version.bind.", "TXT", timeout=5,
                          extra=("-c", "CH"))
        testing.expect(reply.rcode == "NOERROR" and "Migrated-DNS-1.0" in reply.text,
                       f"version.bind CH TXT:\n{reply.text}")
    testing.eventually(check, timeout=10)


@tests.case
def a_federation_line_answers_kube_dns_federation_names(world):
    expect_answer(world, "custom", "kubernetes.default.myfed.svc.cluster.local.", "A",
                  "kubernetes.default.svc.cluster.local.")
    expect_answer(world, "custom", "kubernetes.default.myfed.svc.cluster.local.", "A", "10.96.0.1")


@tests.case
def a_stub_domain_goes_to_its_own_server(world):
    expect_answer(world, "custom", "host.corp.example.", "A", "192.0.2.")
    names = [n.lower() for n, _ in world.stub.names()]
    testing.expect("host.corp.example." in names, f"the stub was not asked: {names}")
    testing.expect("host.corp.example." not in [n.lower() for n, _ in world.upstream.names()],
                   "the stub domain's name went to the default upstream")


@tests.case
def a_hosts_entry_in_the_cluster_zone_is_answered_before_the_cluster_names(world):
    expect_answer(world, "custom", "legacy.cluster.local.", "A", "10.1.2.3")


@tests.case
def a_hosts_entry_outside_every_zone_answers_with_its_ptr(world):
    expect_answer(world, "custom", "db.corp.internal.", "A", "10.1.2.4")
    expect_answer(world, "custom", "4.2.1.10.in-addr.arpa.", "PTR", "db.corp.internal.")


@tests.case
def a_services_external_address_answers_in_the_k8s_external_zone(world):
    svc = world.sim.get_object("services", "default", "kubernetes")
    svc["spec"]["externalIPs"] = ["192.0.2.44"]
    world.sim.apply(svc)
    expect_answer(world, "custom", "kubernetes.default.example.org.", "A", "192.0.2.44")
    expect_answer(world, "custom", "example.org.", "SOA", "ns1.dns.example.org. hostmaster.dns.example.org.")


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
