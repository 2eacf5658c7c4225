"""A real Prometheus server (Debian's /usr/bin/prometheus) scraping targets every second.

    with promserver.Prometheus({"kube-dns": ["127.0.0.1:9153"]}, rules=PATH) as prom:
        prom.query('up{job="kube-dns"}')        # the API's result list ([] on error)
        prom.firing()                           # {alert name: [labels]} of firing alerts

Rules are evaluated every second. Raises testing.Skip without the binary (Debian
package prometheus, scripts/deps metrics).
"""

import json
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request

import knotd
import testing


class Prometheus:
    def __init__(self, jobs, rules=None):
        self.binary = shutil.which("prometheus")
        if self.binary is None:
            raise testing.Skip("prometheus absent (Debian package prometheus, scripts/deps metrics)")
        self.jobs = jobs
        self.rules = rules
        self.port = knotd.free_port()
        self.workdir = None
        self.process = None

    def __enter__(self):
        self.workdir = tempfile.mkdtemp(prefix="mod-k8s-prometheus-")
        lines = ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s",
                 "  evaluation_interval: 1s"]
        if self.rules:
            lines += ["rule_files:", f"  - {self.rules}"]
        lines.append("scrape_configs:")
        for job, targets in self.jobs.items():
            lines += [f"  - job_name: {job}", "    static_configs:",
                      "      - targets: [" + ", ".join(f"'{t}'" for t in targets) + "]"]
        with open(os.path.join(self.workdir, "prometheus.yml"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        self.log = open(os.path.join(self.workdir, "log"), "w", encoding="utf-8")
        self.process = subprocess.Popen(
            [self.binary, f"--config.file={self.workdir}/prometheus.yml",
             f"--storage.tsdb.path={self.workdir}/data",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        return self

    def __exit__(self, *exc):
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return False

    def api(self, path, **params):
        """The `data` of a GET of /api/v1/<path>, or None on any error."""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return json.load(response)["data"]
        except (OSError, ValueError, KeyError):
            return None

    def query(self, expr):
        """An instant query's result list ([] on an error or no data)."""
        data = self.api("query", query=expr)
        return data["result"] if data else []

    def firing(self):
        """{alert name: [its labels]} of the alerts firing now."""
        alerts = {}
        for alert in (self.api("alerts") or {}).get("alerts", []):
            if alert["state"] == "firing":
                alerts.setdefault(alert["labels"]["alertname"], []).append(alert["labels"])
        return alerts

    def active(self):
        """{alert name: state} of the alerts pending or firing now."""
        return {alert["labels"]["alertname"]: alert["state"]
                for alert in (self.api("alerts") or {}).get("alerts", [])}
