#!/usr/bin/env python3
"""The Prometheus alerting rules of packaging/kubernetes/monitoring (issue 25 item 6): valid
for promtool, each alert firing on the series that mean it and not on healthy ones
(alerts_test.yaml, promtool test rules), and every series they use is one mod-k8s serves
(doc/mod-k8s.rst's metrics reference names it). Skipped without promtool (Debian package
prometheus, scripts/deps metrics).
"""

import os
import re
import shutil
import subprocess

import testing
from cluster import SRCDIR

tests = testing.Tests()

MONITORING = os.path.join(SRCDIR, "packaging", "kubernetes", "monitoring")


def promtool(*args):
    binary = shutil.which("promtool")
    if binary is None:
        raise testing.Skip("promtool absent (Debian package prometheus, scripts/deps metrics)")
    return subprocess.run([binary, *args], cwd=MONITORING, capture_output=True, text=True, timeout=120)


@tests.case
def promtool_checks_the_rules():
    result = promtool("check", "rules", "alerts.yaml")
    testing.expect(result.returncode == 0, f"promtool check rules:\n{result.stdout}{result.stderr}")


@tests.case
def each_alert_fires_on_its_series_and_not_on_healthy_ones():
    result = promtool("test", "rules", "alerts_test.yaml")
    testing.expect(result.returncode == 0, f"promtool test rules:\n{result.stdout}{result.stderr}")


@tests.case
def the_rules_use_only_documented_series():
    with open(os.path.join(MONITORING, "alerts.yaml"), encoding="utf-8") as f:
        rules = f.read()
    with open(os.path.join(SRCDIR, "doc", "mod-k8s.rst"), encoding="utf-8") as f:
        doc = f.read()
    used = set(re.findall(r"\bmod_k8s_[a-z_]+", rules))
    testing.expect(len(used) >= 5, f"series used: {used}")
    for series in sorted(used):
        base = re.sub(r"_(bucket|sum|count)$", "", series)
        testing.expect(f"``{base}``" in doc, f"{series} is not in doc/mod-k8s.rst's reference")


tests.main()
