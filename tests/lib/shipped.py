"""The shipped deployment's knot.conf (packaging/kubernetes/knot.conf) run here.

    with shipped.deployment([up.address]) as cluster:    # Cluster fed by the simulator
        cluster.query("www.example.com.")

Only what a pod has is replaced: the listen address, the directories, the node's
resolvers (the `forward` line the init container rewrites) and the kubeconfig
(the simulator's, where a pod reads its service account).
"""

import contextlib
import os
import re

import knotd
import testing
from cluster import Cluster

SRCDIR = knotd.find_build().srcdir
CONFIG = os.path.join(SRCDIR, "packaging", "kubernetes", "knot.conf")
ZONES = os.path.join(SRCDIR, "packaging", "kubernetes", "zones")


def config(kubeconfig, upstreams, extra_options=(), forward=True, metrics_port=None,
           kube_dns_config=None, listen=None):
    """The shipped knot.conf pointed at this machine. forward=False: mod-k8s alone (no
    global instance, no forward), the baseline of the forwarding benchmark. The metrics
    endpoint listens on 127.0.0.1@metrics_port (a free port if None), not on 9153.
    kube_dns_config: the directory of kube-dns's ConfigMap files (the pod's
    /kube-dns-config, absent here, if None). listen: the address knotd listens on
    (the test's loopback address if None; "0.0.0.0" as in the pod)."""
    if metrics_port is None:
        metrics_port = knotd.free_port()
    with open(CONFIG, encoding="utf-8") as f:
        text = f.read()
    # An extra option the shipped file sets already (forward-timeout) replaces its line.
    for option in extra_options:
        key = option.split(":", 1)[0].strip()
        text = re.sub(rf"(?m)^    {re.escape(key)}:.*\n", "", text)
    replacements = [
        (r"(?m)^(\s*listen:).*$", r"\1 " + (listen or "${address}") + "@${port}", 1),
        (r"(?m)^(\s*metrics-listen:).*$", rf"\1 127.0.0.1@{metrics_port}", 1),
        (r"(?m)^(\s*rundir:).*$", r"\1 ${dir}/run", 1),
        (r"(?m)^(\s*storage:) /var/lib/knot$", r"\1 ${dir}/storage", 2),
        (r"(?m)^(\s*file:) \"/etc/knot/%s\.zone\"$", rf'\1 "{ZONES}/%s.zone"', 1),
        (r"(?m)^(\s*kube-dns-config:) /kube-dns-config$",
         r"\1 " + kube_dns_config if kube_dns_config else r"\1 ${dir}/kube-dns-config", 1),
        (r"(?m)^(\s*forward:).*# @upstream$",
         (r"\1 [ " + ", ".join(upstreams) + " ]") if forward else "", 1),
        (r"(?m)^(\s*)(ttl: 5)$", "\\1\\2\n\\1kubeconfig: " + kubeconfig +
         "".join(f"\n\\1{option}" for option in extra_options), 1),
    ]
    if not forward:
        replacements.append((r"(?m)^\s*global-module: mod-k8s/default$", "", 1))
    for pattern, replacement, lines in replacements:
        text, count = re.subn(pattern, replacement, text)
        testing.expect(count == lines, f"knot.conf: expected {lines} lines matching {pattern}")
    return text


@contextlib.contextmanager
def deployment(upstreams, extra_options=(), forward=True, metrics_port=None, kube_dns_config=None,
               listen=None, **knotd_options):
    """A Cluster served by the shipped knot.conf, forwarding to `upstreams` (addresses)."""
    if knotd.load_mode() == "file":
        raise testing.Skip("the shipped config relies on auto-loading, which is not possible here")
    cluster = Cluster(zones=("cluster.local.",), **knotd_options)
    cluster.knotd_options["config"] = config(
        cluster.sim.path(cluster.kubeconfig), upstreams, extra_options, forward, metrics_port,
        kube_dns_config, listen)
    with cluster:
        yield cluster
