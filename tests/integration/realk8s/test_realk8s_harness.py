#!/usr/bin/env python3
"""The real control plane's harness (tests/lib/realk8s.py), in the parts that need no build.

Runs everywhere, unlike test_realk8s_*.py: the certificates it makes are the ones a
TLS client with its CA and client certificate accepts (openssl s_server asking for
the client's), the kubeconfigs it writes for mod-k8s (client certificate, token,
tokenFile) pass `knotc conf-check`, the versions file names every component, and a
test file whose binaries are missing skips (exit 77, `1..0 # SKIP`) saying why.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import knotd
import realk8s
import testing

tests = testing.Tests()
WORK = tempfile.mkdtemp(prefix="realk8s-harness-")
PKI = os.path.join(WORK, "pki")


class FakePlane(realk8s.ControlPlane):
    """The plane's certificate and kubeconfig parts, with no process started."""

    def __init__(self, port):
        self.pki = PKI
        self.port = port
        self.server = f"https://127.0.0.1:{port}"


@tests.case
def the_versions_file_names_every_component():
    versions = realk8s.versions()
    for key in ("K8S_VERSION", "ETCD_VERSION", "COREDNS_VERSION"):
        testing.expect(re.fullmatch(r"v\d+\.\d+\.\d+", versions.get(key, "")),
                       f"{key}: {versions.get(key)!r}")


@tests.case
def the_certificates_make_a_mutual_tls_connection():
    realk8s.make_pki(PKI)
    port = knotd.free_port()
    server = subprocess.Popen(["openssl", "s_server", "-accept", f"127.0.0.1:{port}",
                               "-cert", "apiserver.crt", "-key", "apiserver.key",
                               "-CAfile", "ca.crt", "-Verify", "1", "-www"], cwd=PKI,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    try:
        def listening():
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
        testing.eventually(lambda: testing.expect(_connects(listening), "not listening"), 10)
        status, body = FakePlane(port).api("GET", "/")
        testing.expect_equal(status, 200, "status")
        # -www echoes the session: the client sent its certificate (admin, system:masters).
        testing.expect("s_server" in str(body), str(body)[:200])
    finally:
        server.kill()
        out = server.communicate()[0].decode(errors="replace")
    testing.expect("verify return:1" in out, f"client certificate not verified:\n{out[-500:]}")


def _connects(function):
    try:
        function()
        return True
    except OSError:
        return False


@tests.case
def the_module_kubeconfigs_pass_the_conf_check():
    if not os.path.exists(os.path.join(PKI, "ca.crt")):
        realk8s.make_pki(PKI)
    plane = FakePlane(6443)
    token_file = os.path.join(WORK, "token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write("header.payload.signature")
    for options in ({}, {"token": "header.payload.signature"}, {"token_file": token_file}):
        path = plane.module_kubeconfig(os.path.join(WORK, "module.kubeconfig"), **options)
        result = knotd.check_config(module={"kubeconfig": path})
        testing.expect(result.returncode == 0 and "valid" in result.stdout,
                       f"{list(options) or ['client certificate']}: {result.stdout}{result.stderr}")


@tests.case
def a_test_file_without_its_binaries_skips_saying_why():
    empty = os.path.join(WORK, "empty-cache")
    os.makedirs(empty, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, REALK8S_CACHE=empty)
    env.pop("MODK8S_REALK8S", None)  # CI's "skip" would answer before the binaries are looked for
    result = subprocess.run([sys.executable, os.path.join(here, "test_realk8s_watch.py")],
                            env=env, capture_output=True, text=True, timeout=60)
    testing.expect_equal(result.returncode, 77, "exit status")
    testing.expect(re.match(r"1\.\.0 # SKIP (not built: run tests/realk8s/build|no Go toolchain)",
                            result.stdout), result.stdout + result.stderr)


@tests.case
def the_stand_in_reports_ready_and_addresses_as_a_kubelet_would():
    standin = realk8s.KubeletStandIn(None)
    pod = realk8s.pod("a", "ns", {"app": "a"}, ips=["10.244.0.5", "fd00::5"], ready=False)
    pod["metadata"]["uid"] = "u1"
    status = standin.desired_status(pod)
    testing.expect_equal(status["podIPs"], [{"ip": "10.244.0.5"}, {"ip": "fd00::5"}], "podIPs")
    testing.expect_equal(status["podIP"], "10.244.0.5", "podIP")
    ready = {c["type"]: c["status"] for c in status["conditions"]}
    testing.expect_equal((ready["Ready"], ready["ContainersReady"]), ("False", "False"), "ready")
    other = realk8s.pod("b", "ns", {"app": "b"})
    other["metadata"]["uid"] = "u2"
    first = standin.desired_status(other)["podIPs"]
    testing.expect_equal(standin.desired_status(other)["podIPs"], first, "stable addresses")
    testing.expect_equal(len(first), 2, "one address of each family by default")


try:
    tests.main()
finally:
    shutil.rmtree(WORK, ignore_errors=True)
