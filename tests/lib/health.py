"""/health and /ready as the kubelet asks them (test_health.py, test_health_flood.py).

    spec = health.liveness_probe()          # packaging/kubernetes/deployment.yaml's
    status, body = health.get(port, "/health", timeout=spec["timeoutSeconds"])
    health.shim("stall_thread")             # a preloaded fault injector's path

A probe that times out or cannot connect is a failure to the kubelet: get() returns
(None, reason) then.
"""

import os
import urllib.error
import urllib.request

import yaml

import knotd

SRCDIR = knotd.find_build().srcdir
DEPLOYMENT = os.path.join(SRCDIR, "packaging", "kubernetes", "deployment.yaml")


def container():
    """The knotd container of the shipped Deployment."""
    with open(DEPLOYMENT, encoding="utf-8") as f:
        return yaml.safe_load(f)["spec"]["template"]["spec"]["containers"][0]


def liveness_probe():
    """The shipped livenessProbe: httpGet, periodSeconds, timeoutSeconds, failureThreshold."""
    return container()["livenessProbe"]


def get(port, path, timeout=5):
    """(status, body) of GET path on 127.0.0.1:port; (None, reason) if it got no answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def shim(name):
    """The path of a library the build made to preload into knotd (tests/integration/NAME.c)."""
    return os.path.join(knotd.find_build().builddir, "tests", "integration", ".libs", f"{name}.so")
