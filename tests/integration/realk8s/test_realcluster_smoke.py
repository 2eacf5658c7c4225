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

The cluster is dual-stack (issue 39): a dual-stack Service's AAAA is asked over IPv6 of
the kube-dns Service's IPv6 address; and the node's resolver is a link-local address,
169.254.53.1, where a stub server of the test's own (tests/lib/stubdns.py) answers in
the node's namespace only (which has no route out), as GKE's and AWS's resolvers are
link-local: an outside name asked by the pod goes through mod-k8s's forwarder to it.

# run alone: a whole cluster on 2 cores (about 3 minutes)
Skips (exit 77), saying why, when not root or when the binaries or images are not built
(tests/realk8s/build, tests/realcluster/build, packaging/build-image or packaging/ci);
MODK8S_REALCLUSTER=skip skips it anyway.
"""

import json
import os
import sys

import realcluster
import stubdns
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
# The node's resolver: link-local, as GKE's 169.254.169.254 and AWS's 169.254.169.253 are
# (never those: they are the metadata and VPC addresses of real machines, maybe this one's).
NODE_RESOLVER = "169.254.53.1"
OUTSIDE_NAME = "www.example.org"


def world(c):
    """The namespace, the querier pod and its two Services; waits for the pod Ready."""
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dual", "namespace": NS},
         "spec": {"selector": {"app": POD}, "ipFamilyPolicy": "RequireDualStack",
                  "ports": [{"name": "http", "port": 80}]}},
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


def node_resolver(c):
    """The stub server on the node's link-local resolver address, before knot-dns starts
    (its init container reads the node's resolv.conf, which names it)."""
    c.start("node-resolver", ["python3", stubdns.__file__, NODE_RESOLVER])
    realcluster.wait("the node's resolver", lambda: "192.0.2." in c.innode(
        "kdig", f"@{NODE_RESOLVER}", "+short", "+timeout=1", "+retry=0", "probe.example.",
        check=False).stdout, timeout=30)


class Fixture:
    def __enter__(self):
        # Its own name: it runs beside a developer's `tests/realcluster/cluster up`.
        self.cluster = realcluster.Cluster(
            name=os.environ.get("REALCLUSTER_NAME", "mk8s-smoke"), families="dual",
            node_resolver=NODE_RESOLVER, before_dns=node_resolver).__enter__()
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
                        "-o", "jsonpath={.items[*].status.podIPs[*].ip}").split())
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


@tests.case
def a_dual_stack_service_has_its_aaaa_over_ipv6_to_kube_dns_ipv6_address(c):
    ips = jsonpath(c, "service", "-n", NS, "dual", "-o", "jsonpath={.spec.clusterIPs}")
    v6 = next(ip for ip in json.loads(ips) if ":" in ip)
    dns6 = realcluster.DNS_IP6
    out = in_pod(c, "dig", f"@{dns6}", "+noall", "+answer", "+comments", "+stats",
                 f"dual.{NS}.svc.cluster.local", "AAAA")
    testing.expect("status: NOERROR" in out and f"SERVER: {dns6}#53" in out
                   and v6 in out.split(), f"dig @{dns6} AAAA (want {v6}):\n{out}")
    out = in_pod(c, "getent", "ahostsv6", f"dual.{NS}.svc.cluster.local")
    testing.expect(v6 in out.split(), f"getent ahostsv6 (want {v6}): {out!r}")


@tests.case
def an_outside_name_goes_through_mod_k8s_to_the_link_local_node_resolver(c):
    # The stub answers A 192.0.2.N for a name (N from the name): as stubdns computes it.
    want = stubdns.answer_address(OUTSIDE_NAME + ".")
    out = in_pod(c, "getent", "ahostsv4", OUTSIDE_NAME)
    testing.expect_equal(out.split()[:1], [want], f"getent ahostsv4 {OUTSIDE_NAME}: {out!r}")
    asked = c.log_tail("node-resolver", 200)
    testing.expect(f"{OUTSIDE_NAME}. 1" in asked.splitlines(),
                   f"the node's resolver at {NODE_RESOLVER} was not asked:\n{asked}")
    knot = jsonpath(c, "pods", "-n", "kube-system", "-l", "app.kubernetes.io/name=knot-dns",
                    "-o", "jsonpath={.items[0].metadata.name}")
    init = c.kubectl("logs", "-n", "kube-system", knot, "-c", "upstream", check=False).stdout
    testing.expect(NODE_RESOLVER in init, f"the init container's log:\n{init}")


tests.main(fixture=Fixture)
