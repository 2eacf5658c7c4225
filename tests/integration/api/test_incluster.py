#!/usr/bin/env python3
"""In-cluster settings: no kubeconfig, the pod's environment and service account.

Issue 3: "without it [kubeconfig], in-cluster defaults (KUBERNETES_SERVICE_HOST/PORT,
the service-account token re-read from file periodically and after any 401,
its ca.crt). TLS verification on by default." knotd runs as it would in a
pod: the API server's address in the environment, and a service account
directory with `token` (a ..data symlink the simulator swaps when it rotates
the token, as the kubelet does) and `ca.crt`.
"""

import os
import shutil
import subprocess
import tempfile

import knotd
import testing
from cluster import SAMPLE, Cluster, stats
from faults import service

tests = testing.Tests()


class InCluster(Cluster):
    """The simulator and a knotd whose mod-k8s has no kubeconfig: the environment and the
    service account directory point it at the simulator."""

    def __init__(self, address="127.0.0.1"):
        super().__init__(manifests=[SAMPLE], sim_args=["--address", address], zones=("cluster.local.",))
        self.address_api = address

    def module_options(self, module=None):
        options = {"serviceaccount-dir": self.sim.workdir}
        options.update(module or {})
        return options

    def knotd(self, module=None, **options):
        environment = {"KUBERNETES_SERVICE_HOST": self.address_api,
                       "KUBERNETES_SERVICE_PORT": str(self.sim.port)}
        return super().knotd(module, environment=environment, **options)


@tests.case
def the_environment_and_the_service_account_are_enough(env):
    answer = env.query("kubernetes.default.svc.cluster.local.", "A")
    testing.expect_equal(answer.rcode, "NOERROR", "rcode")
    testing.expect("in-cluster" in env.log_text(), "the log does not say the settings are in-cluster")


@tests.case
def a_rotated_token_is_read_again_after_a_401(env):
    env.sim.rotate_token()  # The old token is refused from now on.
    env.sim.apply(service("shop", "after-rotation", "10.96.77.1"))
    # The watch in progress keeps its connection; cut it, so that the next request needs the token.
    env.sim.cut_streams(mode="clean")

    def arrived():
        answer = env.query("after-rotation.shop.svc.cluster.local.", "A")
        testing.expect_equal(answer.rcode, "NOERROR", "rcode of the service made after the rotation")
    testing.eventually(arrived, timeout=30)
    testing.expect(env.sim.token not in env.log_text(), "the token is in knotd's log")


@tests.case
def the_api_server_certificate_is_verified(env):
    # A service account whose ca.crt is another CA: the API server is not trusted.
    other = tempfile.mkdtemp(prefix="mod-k8s-otherca-")
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=not the cluster CA", "-keyout", os.path.join(other, "key"),
                        "-out", os.path.join(other, "ca.crt")],
                       check=True, capture_output=True)
        shutil.copy(env.sim.token_path, os.path.join(other, "token"))
        with env.knotd(module={"serviceaccount-dir": other}) as server:
            def refused():
                counters = stats(server)
                testing.expect(counters.get("api-errors[tls]", 0) > 0, f"no TLS error counted: {counters}")
            testing.eventually(refused, timeout=30)
            answer = server.query("kubernetes.default.svc.cluster.local.", "A", edns=True)
            testing.expect(answer.rcode == "SERVFAIL" and answer.ede == [14],
                           f"not SERVFAIL with EDE 14: {answer.summary()}")
    finally:
        shutil.rmtree(other, ignore_errors=True)


@tests.case
def a_missing_environment_is_named_in_the_log_and_retried(env):
    server = knotd.Knotd(module={"serviceaccount-dir": env.sim.workdir}, zones=("cluster.local.",))
    with server:
        server.wait_for_log(r"cannot read API server settings, retrying in 10 s \(.*KUBERNETES_SERVICE_HOST")
        answer = server.query("kubernetes.default.svc.cluster.local.", "A", edns=True)
        testing.expect(answer.rcode == "SERVFAIL" and answer.ede == [14],
                       f"not SERVFAIL with EDE 14: {answer.summary()}")


@tests.case
def an_ipv6_api_server_address_works(env):
    with InCluster(address="::1") as v6:
        answer = v6.query("kubernetes.default.svc.cluster.local.", "A")
        testing.expect_equal(answer.rcode, "NOERROR", "rcode with KUBERNETES_SERVICE_HOST=::1")


tests.main(fixture=InCluster)
