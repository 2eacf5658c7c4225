#!/usr/bin/env python3
# run alone: no query lost under a steady load through two restarts
"""A rolling restart of two replicas behind one address loses no query (issue 25 item 2).

Two knotd + mod-k8s replicas watch the same simulator, each with its metrics endpoint and
lameduck file, as two pods of packaging/kubernetes/deployment.yaml. The client follows
readiness as kube-proxy does with a Service's endpoints: it sends each query to one of the
replicas whose /ready answered 200 at the last probe (every PROBE_S, standing in for the
readiness probe and the endpoints' propagation). The Deployment's rollout, one replica after
the other: a new replica starts; once it is ready, the old one terminates as the kubelet
terminates a pod (the preStop lameduck of the Deployment, then SIGTERM). Under a steady UDP
load, every query gets its answer.
"""

import itertools
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import yaml

import knotd
import testing
from cluster import Cluster, SRCDIR, wait_ready
from udpload import UdpLoad

tests = testing.Tests()

DEPLOYMENT = os.path.join(SRCDIR, "packaging", "kubernetes", "deployment.yaml")
# How often the client learns which replicas are ready: kube-proxy's view of the endpoints
# lags the readiness probe (every 1 s, failureThreshold 2 in the Deployment); the lameduck
# period covers it.
PROBE_S = 1.0
LAMEDUCK_S = "3"   # the Deployment's 5 s, shortened to keep the test short; PROBE_S < it


def container():
    with open(DEPLOYMENT, encoding="utf-8") as f:
        return yaml.safe_load(f)["spec"]["template"]["spec"]["containers"][0]


class Replica:
    """A pod: knotd with mod-k8s, its metrics port and its own /run/knot (an emptyDir)."""

    def __init__(self, c, name):
        self.name = name
        self.run = tempfile.mkdtemp(prefix=f"mod-k8s-{name}-run-")
        self.http_port = knotd.free_port()
        self.server = c.knotd(module={"metrics-listen": f"127.0.0.1@{self.http_port}",
                                      "lameduck-file": os.path.join(self.run, "lameduck")},
                              zones=c.zones)

    def start(self):
        self.server.start()
        wait_ready(self.server, ("cluster.local.", "clusterset.local."))
        return self

    def ready(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/ready", timeout=1) as r:
                return r.status == 200
        except (urllib.error.HTTPError, OSError):
            return False

    def terminate(self, pre_stop):
        """The kubelet's termination: preStop (when given), then SIGTERM."""
        if pre_stop:
            command = [arg.replace("/run/knot/", self.run + "/") for arg in pre_stop]
            subprocess.run(command, env=dict(os.environ, LAMEDUCK_SECONDS=LAMEDUCK_S),
                           check=True, timeout=30)
        self.server.stop()


class Endpoints(threading.Thread):
    """The replicas' ports that were ready at the last probe, probed every PROBE_S."""

    def __init__(self, replicas):
        super().__init__(daemon=True)
        self.replicas = list(replicas)
        self.ports = [r.server.port for r in self.replicas]
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.wait(PROBE_S):
            self.ports = [r.server.port for r in list(self.replicas) if r.ready()]


def roll(c, pre_stop):
    """Two replicas, rolled one after the other under load: the (port, answered) results."""
    old = [Replica(c, "a").start(), Replica(c, "b").start()]
    new = []
    endpoints = Endpoints(old)
    turn = itertools.count()
    # Round robin over the ports ready at the last probe.
    load = UdpLoad(lambda: endpoints.ports[next(turn) % len(endpoints.ports)]
                   if endpoints.ports else None)
    try:
        endpoints.ports = [r.server.port for r in old]
        endpoints.start()
        load.start()
        time.sleep(0.5)
        for replica in old:
            # maxUnavailable 1, maxSurge 1: the new pod first; the old one goes once it is ready.
            successor = Replica(c, replica.name + "2").start()
            new.append(successor)
            endpoints.replicas.append(successor)
            testing.eventually(lambda: testing.expect(successor.server.port in endpoints.ports,
                                                      "the new replica among the endpoints"), 10)
            # It stays an endpoint until a probe finds it unready (or it is gone).
            replica.terminate(pre_stop)
            endpoints.replicas.remove(replica)
        time.sleep(0.5)
    finally:
        load.finish()
        endpoints.stopping.set()
        for replica in old + new:
            replica.server.stop()
    return load


@tests.case
def a_rolling_restart_of_two_replicas_loses_no_query(c):
    spec = container()
    testing.expect_equal(spec["readinessProbe"]["httpGet"]["path"], "/ready", "the readiness probe")
    load = roll(c, spec["lifecycle"]["preStop"]["exec"]["command"])
    ports = {port for port, _, _ in load.results}
    testing.expect(len(load.results) > 300, f"a steady load ({len(load.results)} queries)")
    testing.expect_equal(len(ports), 4, f"queries went to the four replicas in turn: {ports}")
    testing.expect_equal(load.lost(), [], f"queries lost of {len(load.results)} (by port)")


if os.environ.get("MODK8S_ROLL_WITHOUT_LAMEDUCK"):
    # The test's own check (not run by default): without the preStop lameduck, queries are lost.
    @tests.case
    def without_the_lameduck_queries_are_lost(c):
        testing.expect(roll(c, None).lost(), "no query lost without lameduck")


tests.main(fixture=lambda: Cluster(module={}))
