#!/usr/bin/env python3
# run alone: no query lost under a steady load through SIGTERM
"""The lameduck period of packaging/kubernetes (issue 25 item 2; doc/mod-k8s.rst, Lameduck):
the pod's termination as the kubelet runs it, without a cluster. The preStop command of
deployment.yaml runs (its /run/knot is the test's directory, LAMEDUCK_SECONDS the
Deployment's value), then knotd gets SIGTERM, as the kubelet sends it once preStop is done.
Under a steady UDP query load: /ready turns 503 at once, every query sent before SIGTERM is
answered, and the period lasts LAMEDUCK_SECONDS.
"""

import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import yaml

import knotd
import testing
from cluster import Cluster, SRCDIR
from udpload import UdpLoad

tests = testing.Tests()

DEPLOYMENT = os.path.join(SRCDIR, "packaging", "kubernetes", "deployment.yaml")
HTTP_PORT = knotd.free_port()
RUN = None  # The pod's /run/knot: set by the fixture.


def container():
    with open(DEPLOYMENT, encoding="utf-8") as f:
        return yaml.safe_load(f)["spec"]["template"]["spec"]["containers"][0]


def ready_status():
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{HTTP_PORT}/ready", timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


@tests.case
def the_pods_termination_loses_no_query_during_the_lameduck_period(c):
    spec = container()
    command = spec["lifecycle"]["preStop"]["exec"]["command"]
    seconds = next(e["value"] for e in spec["env"] if e["name"] == "LAMEDUCK_SECONDS")
    testing.expect_equal(seconds, "5", "the Deployment's lameduck period (the issue's default)")
    testing.expect_equal(spec["readinessProbe"]["httpGet"]["path"], "/ready", "the readiness probe")
    testing.expect_equal(ready_status(), 200, "/ready before the termination")
    command = [arg.replace("/run/knot/", RUN + "/") for arg in command]

    load = UdpLoad(lambda: c.port)
    load.start()
    time.sleep(0.5)
    started = time.monotonic()
    pre_stop = subprocess.Popen(command, env=dict(os.environ, LAMEDUCK_SECONDS=seconds))
    # The kubelet's readiness probe sees the lameduck within a probe period.
    deadline = time.monotonic() + 2
    while ready_status() != 503 and time.monotonic() < deadline:
        time.sleep(0.05)
    testing.expect_equal(ready_status(), 503, "/ready during the lameduck period")
    testing.expect_equal(pre_stop.wait(timeout=30), 0, "the preStop command")
    lasted = time.monotonic() - started
    # The kubelet's SIGTERM, once preStop is done (Knotd.stop() sends it, checks a clean exit).
    sigterm = time.monotonic()
    c.server.stop()
    load.finish()

    during = [sent for _, sent, _ in load.results if sent < sigterm - 0.05]
    testing.expect(len(during) > 100, f"a steady load ({len(during)} queries before SIGTERM)")
    testing.expect_equal(len(load.lost(before=sigterm - 0.05)), 0,
                         f"queries lost before SIGTERM (of {len(during)})")
    testing.expect(float(seconds) <= lasted < float(seconds) + 5,
                   f"the lameduck period lasted {lasted:.1f} s")


def fixture():
    global RUN
    RUN = tempfile.mkdtemp(prefix="mod-k8s-run-")
    knot_conf = os.path.join(SRCDIR, "packaging", "kubernetes", "knot.conf")
    with open(knot_conf, encoding="utf-8") as f:
        conf = f.read()
    # The packaging's own settings, on the test's port and directory.
    testing.expect("lameduck-file: /run/knot/lameduck" in conf and 'metrics-listen: "::@9153"' in conf,
                   "packaging/kubernetes/knot.conf sets metrics-listen and lameduck-file")
    return Cluster(module={"metrics-listen": f"127.0.0.1@{HTTP_PORT}",
                           "lameduck-file": os.path.join(RUN, "lameduck")})


tests.main(fixture=fixture)
