#!/usr/bin/env python3
"""A pod in a real one-node cluster resolves through knotd + mod-k8s (issue 35's smoke test).

tests/lib/realcluster.py brings up the node (etcd, kube-apiserver, controller-manager,
scheduler, containerd, kubelet, kube-proxy, the CNI bridge) and deploys mod-k8s from
packaging/kubernetes as a user does; a pod of the e2e DNS tests' glibc image
(registry.k8s.io/e2e-test-images/glibc-dns-testing, built here) asks through the
resolv.conf the kubelet wrote for it, via kube-proxy's kube-dns address, with glibc's
getent and with dig: kubernetes.default, a ClusterIP Service and a headless Service
whose endpoint is the pod itself; its second container, of the e2e agnhost image, asks
with musl's getent (upstream's agnhost is Alpine). Then the whole node is torn down.

# run alone: a whole cluster on 2 cores (about 3 minutes)
Skips (exit 77), saying why, when not root or when the binaries or images are not built
(tests/realk8s/build, tests/realcluster/build, packaging/build-image or packaging/ci);
MODK8S_REALCLUSTER=skip skips it anyway.
"""

import json
import os
import sys

import realcluster
import testing

if os.environ.get("MODK8S_REALCLUSTER") == "skip":
    print("1..0 # SKIP MODK8S_REALCLUSTER=skip")
    sys.exit(77)
realcluster.skip_unless_available()

tests = testing.Tests()
NS = "smoke"
POD = "querier"
VERSIONS = realcluster.realk8s.versions()
IMAGE = "registry.k8s.io/e2e-test-images/glibc-dns-testing:" + VERSIONS["GLIBC_DNS_TESTING_VERSION"]
AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:" + VERSIONS["AGNHOST_VERSION"]


def world(c):
    """The namespace, the querier pod and its two Services; waits for the pod Ready."""
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": NS},
         "spec": {"selector": {"app": POD}, "ports": [{"name": "http", "port": 80}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "peers", "namespace": NS},
         "spec": {"clusterIP": "None", "selector": {"app": POD},
                  "ports": [{"name": "http", "port": 80}]}},
    ]
    c.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                     "items": objects}))
    realcluster.wait("the default ServiceAccount of " + NS, lambda: c.kubectl(
        "get", "-n", NS, "serviceaccount/default", check=False).returncode == 0, timeout=60)
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": POD, "namespace": NS, "labels": {"app": POD}},
           "spec": {"terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "q", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                                    "command": ["sleep", "3600"]},
                                   {"name": "musl", "image": AGNHOST,
                                    "imagePullPolicy": "IfNotPresent", "args": ["pause"]}]}}
    c.kubectl("apply", "-f", "-", input=json.dumps(pod))
    result = c.kubectl("wait", "-n", NS, "--for=condition=Ready", f"pod/{POD}", "--timeout=120s",
                       check=False, timeout=150)
    if result.returncode != 0:
        raise AssertionError("the querier pod is not Ready:\n" + c.kubectl(
            "describe", "-n", NS, f"pod/{POD}", check=False).stdout[-3000:])


class Fixture:
    def __enter__(self):
        # Its own name: it runs beside a developer's `tests/realcluster/cluster up`.
        self.cluster = realcluster.Cluster(name="mk8s-smoke").__enter__()
        try:
            world(self.cluster)
        except BaseException:
            self.cluster.__exit__(*sys.exc_info())
            raise
        return self.cluster

    def __exit__(self, *exc):
        return self.cluster.__exit__(*exc)


def in_pod(c, *argv, container="q"):
    """argv run in the querier pod's container (kubectl exec); its standard output."""
    result = c.kubectl("exec", "-n", NS, POD, "-c", container, "--", *argv, check=False,
                       timeout=60)
    testing.expect(result.returncode == 0, f"{' '.join(argv)} in the pod failed "
                   f"({result.returncode}): {result.stderr}{result.stdout}")
    return result.stdout


def jsonpath(c, *args):
    return c.kubectl("get", *args, check=False).stdout.strip()


@tests.case
def the_kubelet_wrote_the_pods_resolv_conf_with_the_kube_dns_address(c):
    text = in_pod(c, "cat", "/etc/resolv.conf")
    testing.expect(f"nameserver {realcluster.DNS_IP}" in text, f"resolv.conf:\n{text}")
    testing.expect(f"search {NS}.svc.cluster.local svc.cluster.local cluster.local" in text,
                   f"resolv.conf:\n{text}")


@tests.case
def the_kube_dns_service_is_served_by_the_knot_dns_pods_only(c):
    knot = set(jsonpath(c, "pods", "-n", "kube-system", "-l", "app.kubernetes.io/name=knot-dns",
                        "-o", "jsonpath={.items[*].status.podIP}").split())
    slices = set(jsonpath(c, "endpointslices", "-n", "kube-system", "-l",
                          "kubernetes.io/service-name=kube-dns", "-o",
                          "jsonpath={.items[*].endpoints[*].addresses[*]}").split())
    testing.expect(knot and slices == knot, f"kube-dns endpoints {slices}, knot-dns pods {knot}")
    version = in_pod(c, "dig", "+short", "CH", "TXT", "version.bind").strip()
    testing.expect("Knot DNS" in version, f"version.bind through kube-dns: {version!r}")


@tests.case
def glibc_getent_resolves_kubernetes_default_through_the_search_list(c):
    out = in_pod(c, "getent", "hosts", "kubernetes.default")
    testing.expect_equal(out.split()[:2], ["10.96.0.1", "kubernetes.default.svc.cluster.local"],
                         "getent hosts kubernetes.default")


@tests.case
def dig_resolves_kubernetes_default_over_udp_and_tcp(c):
    for transport in ("+notcp", "+tcp"):
        out = in_pod(c, "dig", transport, "+search", "+noall", "+answer", "kubernetes.default", "A")
        testing.expect("kubernetes.default.svc.cluster.local." in out and "10.96.0.1" in out,
                       f"dig {transport}: {out!r}")


@tests.case
def a_clusterip_service_resolves_by_its_short_name(c):
    ip = jsonpath(c, "service", "-n", NS, "web", "-o", "jsonpath={.spec.clusterIP}")
    out = in_pod(c, "getent", "hosts", "web")
    testing.expect_equal(out.split()[:2], [ip, f"web.{NS}.svc.cluster.local"], "getent hosts web")
    testing.expect_equal(in_pod(c, "dig", "+short", "+search", f"web.{NS}").split(), [ip],
                         "dig web.smoke")


@tests.case
def musl_getent_resolves_a_service_through_the_search_list(c):
    ip = jsonpath(c, "service", "-n", NS, "web", "-o", "jsonpath={.spec.clusterIP}")
    out = in_pod(c, "/usr/local/bin/getent", "hosts", "web", container="musl")
    testing.expect_equal(out.split()[:2], [ip, f"web.{NS}.svc.cluster.local"],
                         "musl getent hosts web")
    out = in_pod(c, "/usr/local/bin/getent", "hosts", "kubernetes.default", container="musl")
    testing.expect_equal(out.split()[:2], ["10.96.0.1", "kubernetes.default.svc.cluster.local"],
                         "musl getent hosts kubernetes.default")


@tests.case
def a_headless_service_resolves_to_the_pods_own_address(c):
    ip = jsonpath(c, "pod", "-n", NS, POD, "-o", "jsonpath={.status.podIP}")
    testing.eventually(lambda: testing.expect_equal(
        in_pod(c, "dig", "+short", f"peers.{NS}.svc.cluster.local").split(), [ip],
        "dig peers"), timeout=30)
    out = in_pod(c, "dig", "+short", "-x", ip)
    testing.expect(f".peers.{NS}.svc.cluster.local." in out, f"PTR of the pod address: {out!r}")


@tests.case
def a_missing_name_is_nxdomain(c):
    out = in_pod(c, "dig", "+noall", "+comments", f"nothing.{NS}.svc.cluster.local")
    testing.expect("status: NXDOMAIN" in out, out)


tests.main(fixture=Fixture)
