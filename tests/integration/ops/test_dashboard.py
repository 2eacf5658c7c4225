#!/usr/bin/env python3
"""The Grafana dashboard and the alerting rules of packaging/kubernetes/monitoring and the
metrics reference against what /metrics really serves (issue 25 items 5 and 6). The shipped
knot.conf runs here, forwarding to a stub resolver, so that the watcher's, the queries' and
the forwarder's series are all on the page: every series it serves is documented in
doc/mod-k8s.rst; every expression of the dashboard and of the alerting rules names only served
series, and labels they carry (or the scrape's own: instance, job, pod); promtool parses each
dashboard expression (as a recording rule: `promtool query` needs a server).
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request

import yaml

import knotd
import promtext
import shipped
import stubdns
import testing
from cluster import SRCDIR

tests = testing.Tests()

MONITORING = os.path.join(SRCDIR, "packaging", "kubernetes", "monitoring")
DOC = os.path.join(SRCDIR, "doc", "mod-k8s.rst")
# Labels Prometheus adds when it scrapes a pod (and le, a histogram bucket's).
SCRAPE_LABELS = {"instance", "job", "pod", "namespace", "le"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def dashboard_expressions():
    with open(os.path.join(MONITORING, "dashboard.json"), encoding="utf-8") as f:
        dashboard = json.load(f)
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"]
            for target in panel.get("targets", [])]


class Served:
    """The shipped deployment's /metrics once every family is on it: {family: labels}."""

    def __enter__(self):
        http_port = knotd.free_port()
        with stubdns.StubDNS() as upstream, \
                shipped.deployment([upstream.address], metrics_port=http_port) as c:
            c.query("www.dashboard.example.")   # A forwarded name, a cache miss.
            c.query("www.dashboard.example.")   # A cache hit.
            c.query("kubernetes.default.svc.cluster.local.")

            def scraped():
                with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=5) as r:
                    families = promtext.parse(r.read().decode())
                # The forwarder pushes its counters once a second.
                testing.expect("mod_k8s_forward_upstream_healthy" in families, "the forwarder's series")
                return families
            families = testing.eventually(scraped, timeout=5)
        self.families = {name: {label for _, labels, _ in family["samples"] for label in labels}
                         for name, family in families.items()}
        self.types = {name: family["type"] for name, family in families.items()}
        return self

    def __exit__(self, *exc):
        return False

    def family(self, series):
        """The family a series name belongs to, or None."""
        if series in self.families:
            return series
        for suffix in HISTOGRAM_SUFFIXES:
            base = series[:-len(suffix)]
            if series.endswith(suffix) and self.types.get(base) == "histogram":
                return base
        return None


@tests.case
def promtool_parses_every_dashboard_expression():
    promtool = shutil.which("promtool")
    if promtool is None:
        raise testing.Skip("promtool absent (Debian package prometheus, scripts/deps metrics)")
    # Grafana's $__rate_interval is no PromQL: the check uses a fixed range instead.
    rules = [{"record": f"dashboard:expression_{i}", "expr": expr.replace("$__rate_interval", "5m")}
             for i, (_, expr) in enumerate(dashboard_expressions())]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dashboard-rules.yaml")
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
        result = subprocess.run([promtool, "check", "rules", path], capture_output=True,
                                text=True, timeout=120)
    testing.expect(result.returncode == 0, f"promtool check rules:\n{result.stdout}{result.stderr}")
    testing.expect(f"SUCCESS: {len(rules)} rules found" in result.stdout, result.stdout)


tests.fixture(Served, "the shipped deployment's /metrics")


@tests.case
def every_served_series_is_in_the_metrics_reference(served):
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    testing.expect(len(served.families) >= 35, f"families served: {sorted(served.families)}")
    missing = [name for name in sorted(served.families) if f"``{name}``" not in doc]
    testing.expect_equal(missing, [], "series served but not in doc/mod-k8s.rst's metrics reference")


def expect_served(served, expressions):
    """Each (title, expr) names served series only, and only labels they carry (or the
    scrape's); returns the families named."""
    used = set()
    for title, expr in expressions:
        names = set(re.findall(r"\bmod_k8s_[a-z_]+", expr))
        testing.expect(names, f"{title}: {expr} names no mod-k8s series")
        families = {name: served.family(name) for name in names}
        unknown = [name for name, family in families.items() if family is None]
        testing.expect_equal(unknown, [], f"{title}: series not served in {expr}")
        used |= set(families.values())
        labels = set().union(*(served.families[f] for f in families.values()))
        named = set(re.findall(r"\b(?:by|without) \(([^)]*)\)", expr))
        named = {label.strip() for group in named for label in group.split(",")} | \
            set(re.findall(r"[{,]\s*([a-z_]+)\s*=~?", expr))
        stray = sorted(named - labels - SCRAPE_LABELS)
        testing.expect_equal(stray, [], f"{title}: labels its series do not carry in {expr}")
    return used


@tests.case
def the_dashboard_names_only_served_series_and_their_labels(served):
    expressions = dashboard_expressions()
    testing.expect(len(expressions) >= 20, f"the dashboard's expressions: {len(expressions)}")
    used = expect_served(served, expressions)
    # Every mod-k8s family has a panel (CoreDNS's and process_* have CoreDNS's dashboards:
    # test_coredns_alerts.py).
    own = {family for family in served.families if family.startswith("mod_k8s_")}
    testing.expect_equal(sorted(own - used), [], "series without a panel")


@tests.case
def the_alerts_name_only_served_series_and_their_labels(served):
    with open(os.path.join(MONITORING, "alerts.yaml"), encoding="utf-8") as f:
        rules = [rule for group in yaml.safe_load(f)["groups"] for rule in group["rules"]]
    testing.expect(len(rules) >= 5, f"the alerting rules: {len(rules)}")
    expect_served(served, [(rule["alert"], rule["expr"]) for rule in rules])


tests.main()
