#!/usr/bin/env python3
"""The packaging/kubernetes manifests applied to a real control plane, and least privilege.

`kubectl apply -k packaging/kubernetes` (a server-side dry run first) on a real
kube-apiserver; then mod-k8s reads the API with a bound token of the
ServiceAccount that the shipped ClusterRole binds, so that the real RBAC
authorizer decides what it may do: it must synchronize every zone with no
refused request, and the token must be able to do nothing else; the Role lets it
list and watch two ConfigMaps of kube-system by name, and no other. A narrower copy
of the role (no EndpointSlices) must leave the module forbidden and unready:
the check can fail. The token is rotated for real: a token bound to a pod stops
working when the pod is deleted, and the module takes the new one from its
tokenFile.

Skips (exit 77) where the control plane is not built (tests/realk8s/build; no Go).
"""

import json
import os

import cases
import cluster
import dig
import realk8s
import testing
from realk8s import pod, service

realk8s.skip_unless_available()

tests = testing.Tests()
PACKAGING = os.path.join(realk8s.SRCDIR, "packaging", "kubernetes")
SA = "system:serviceaccount:kube-system:knot-dns"
Z = "cluster.local."


def world(plane):
    dry = plane.kubectl("apply", "-k", PACKAGING, "--dry-run=server")
    testing.expect("(server dry run)" in dry.stdout, f"no server dry run: {dry.stdout}")
    # Nothing was created by the dry run.
    testing.expect(plane.kubectl("get", "serviceaccount", "-n", "kube-system", "knot-dns",
                                 ok=False).returncode != 0, "the dry run created the ServiceAccount")
    plane.kubectl("apply", "-k", PACKAGING)
    plane.apply([realk8s.namespace("shop"),
                 service("web", "shop", [{"name": "http", "port": 80}], cluster_ip="10.96.2.10",
                         selector={"app": "web"}),
                 pod("web-a", "shop", {"app": "web"}, ips=["10.244.5.10"])])
    # A pod of the account, to bind the module's tokens to (no kubelet runs it).
    plane.apply(_account_pod("knot-dns-a"))


def _account_pod(name):
    p = pod(name, "kube-system", {"app": "knot-dns-token"})
    p["spec"]["serviceAccountName"] = "knot-dns"
    return p


def module_kubeconfig(plane):
    """The module's kubeconfig: a tokenFile holding a token bound to pod knot-dns-a."""
    token_file = os.path.join(plane.workdir, "token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write(plane.token("knot-dns", "kube-system", seconds=3600, bound_pod="knot-dns-a"))
    return plane.module_kubeconfig(os.path.join(plane.workdir, "module.kubeconfig"),
                                   token_file=token_file)


@tests.case
def the_shipped_objects_exist(cl):
    for kind, name, ns in (("serviceaccount", "knot-dns", "kube-system"),
                           ("clusterrole", "system:knot-dns", None),
                           ("clusterrolebinding", "system:knot-dns", None),
                           ("deployment", "knot-dns", "kube-system"),
                           ("poddisruptionbudget", "knot-dns", "kube-system")):
        args = ["get", kind, name, "-o", "name"] + (["-n", ns] if ns else [])
        cl.plane.kubectl(*args)
    # Updated in place (no name hash): the reloader applies a change with knotc reload.
    out = cl.plane.kubectl("get", "configmap", "-n", "kube-system", "-o", "name").stdout
    testing.expect("configmap/knot-dns\n" in out + "\n", f"no knot-dns ConfigMap: {out}")


@tests.case
def the_kube_dns_service_passes_a_server_side_dry_run(cl):
    out = cl.plane.kubectl("apply", "-f", os.path.join(PACKAGING, "service.yaml"),
                           "--dry-run=server").stdout
    testing.expect("(server dry run)" in out, out)


@tests.case
def the_module_synchronizes_with_the_service_account_token(cl):
    counters = cl.stats()
    testing.expect_equal(counters.get("ready[cluster]"), 1, "ready[cluster]")
    testing.expect_equal(cl.stats("clusterset.local.").get("ready[clusterset]"), 1,
                         "ready[clusterset]")
    errors = {k: v for k, v in counters.items() if k.startswith("api-errors") and v}
    testing.expect(not errors, f"api-errors: {errors}")
    testing.eventually(lambda: cases.Case(
        f"web.shop.svc.{Z} A NOERROR aa 10.96.2.10").run(cl), 15)
    testing.eventually(lambda: cases.Case(
        f"10-244-5-10.shop.pod.{Z} A NOERROR aa 10.244.5.10").run(cl), 5)


def module_token(cl):
    with open(os.path.join(cl.plane.workdir, "token"), encoding="utf-8") as f:
        return f.read().strip()


def can_i(cl, verb, resource, namespace=None, object_name=None):
    """What `kubectl auth can-i VERB RESOURCE -A` asks, with the module's token: a
    SelfSubjectAccessReview to the real authorizer ("yes" or "no")."""
    token = module_token(cl)
    name, _, group = resource.partition(".")
    resource_name, _, subresource = name.partition("/")
    attributes = {"verb": verb, "resource": resource_name, "group": group,
                  "subresource": subresource}
    if namespace:
        attributes["namespace"] = namespace
    if object_name:
        attributes["name"] = object_name
    status, body = cl.plane.api("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                {"apiVersion": "authorization.k8s.io/v1",
                                 "kind": "SelfSubjectAccessReview",
                                 "spec": {"resourceAttributes": attributes}}, token=token)
    testing.expect_equal(status, 201, f"SelfSubjectAccessReview: {body}")
    return "yes" if body["status"].get("allowed") else "no"


@tests.case
def the_token_may_list_and_watch_what_dns_needs(cl):
    for resource in ("services", "endpointslices.discovery.k8s.io", "namespaces", "pods",
                     "serviceimports.multicluster.x-k8s.io",
                     "clusterproperties.about.k8s.io", "nodes"):
        for verb in ("list", "watch"):
            testing.expect_equal(can_i(cl, verb, resource), "yes", f"can-i {verb} {resource}")


@tests.case
def the_token_may_do_nothing_else(cl):
    for verb, resource in (("get", "secrets"), ("list", "secrets"), ("get", "services"),
                           ("create", "services"), ("update", "endpointslices.discovery.k8s.io"),
                           ("delete", "pods"), ("list", "configmaps"),
                           ("create", "serviceaccounts/token"), ("patch", "nodes"),
                           ("list", "serviceexports.multicluster.x-k8s.io")):
        testing.expect_equal(can_i(cl, verb, resource), "no", f"can-i {verb} {resource}")
    rules = json.loads(cl.plane.kubectl("get", "clusterrole", "system:knot-dns",
                                        "-o", "json").stdout)["rules"]
    verbs = sorted({v for rule in rules for v in rule["verbs"]})
    testing.expect_equal(verbs, ["list", "watch"], "verbs of the shipped ClusterRole")


@tests.case
def the_token_may_list_and_watch_two_configmaps_of_kube_system_by_name_only(cl):
    """The Role: kube-dns's and coredns's ConfigMaps, list and watch, in kube-system. The
    API server authorizes a list or watch with the field selector metadata.name=NAME as
    a request for NAME (k8s.io/apiserver, requestinfo.go), so resourceNames limits them:
    the module's requests are allowed, the same without the selector are not."""
    for verb in ("list", "watch"):
        for name in ("kube-dns", "coredns"):
            testing.expect_equal(can_i(cl, verb, "configmaps", "kube-system", name), "yes",
                                 f"can-i {verb} configmaps/{name} -n kube-system")
        for namespace, name in (("kube-system", None), ("kube-system", "knot-dns"),
                                ("default", "kube-dns"), (None, "coredns")):
            testing.expect_equal(can_i(cl, verb, "configmaps", namespace, name), "no",
                                 f"can-i {verb} configmaps/{name} -n {namespace}")
    for verb in ("get", "update", "patch", "delete", "create"):
        testing.expect_equal(can_i(cl, verb, "configmaps", "kube-system", "coredns"), "no",
                             f"can-i {verb} configmaps/coredns")
    token = module_token(cl)
    path = "/api/v1/namespaces/kube-system/configmaps"
    for query, status in (("?fieldSelector=metadata.name%3Dcoredns", 200),
                          ("?fieldSelector=metadata.name%3Dkube-dns&watch=1&timeoutSeconds=1", 200),
                          ("", 403), ("?fieldSelector=metadata.name%3Dknot-dns", 403),
                          ("?watch=1&timeoutSeconds=1", 403)):
        got, body = cl.plane.api("GET", path + query, token=token)
        testing.expect_equal(got, status, f"GET {path}{query}: {body}")

    # The module reads k3s's NodeHosts with the shipped RBAC, nothing refused.
    cl.plane.apply([{"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "coredns", "namespace": "kube-system"},
                     "data": {"NodeHosts": "172.18.0.2 k3d-server-0\n"}}])
    options = {"kubeconfig": cl.kubeconfig_path, "hosts-configmap": "kube-system/coredns/NodeHosts"}
    with realk8s.knotd.Knotd(module=options, zones=("cluster.local.",),
                             template={"global-module": "mod-k8s/default"}) as server:
        cluster.wait_ready(server, ("cluster.local.",), timeout=60)
        testing.eventually(lambda: testing.expect_equal(
            [rr.rdata for rr in dig.query(server, "k3d-server-0.", "A").answer], ["172.18.0.2"],
            "k3d-server-0. A"), timeout=15)
        errors = {k: v for k, v in cluster.stats(server).items()
                  if k.startswith("api-errors") and v}
        testing.expect(not errors, f"api-errors: {errors}")


@tests.case
def a_role_without_endpointslices_leaves_the_module_forbidden(cl):
    """The same check with a narrower role fails: the authorizer is really asked."""
    rules = json.loads(cl.plane.kubectl("get", "clusterrole", "system:knot-dns",
                                        "-o", "json").stdout)["rules"]
    narrow = [r for r in rules if "discovery.k8s.io" not in r.get("apiGroups", [])]
    cl.plane.apply([
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "narrow", "namespace": "kube-system"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": "narrow"}, "rules": narrow},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "narrow"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "narrow"},
         "subjects": [{"kind": "ServiceAccount", "name": "narrow", "namespace": "kube-system"}]}])
    path = cl.plane.module_kubeconfig(os.path.join(cl.plane.workdir, "narrow.kubeconfig"),
                                      token=cl.plane.token("narrow", "kube-system"))
    with realk8s.knotd.Knotd(module={"kubeconfig": path}, zones=("cluster.local.",)) as server:
        def forbidden():
            counters = cluster.stats(server)
            testing.expect(counters.get("api-errors[forbidden]", 0) > 0,
                           f"no forbidden request counted: {counters}")
            return counters
        counters = testing.eventually(forbidden, timeout=30)
        # knotc 3.2 leaves out an indexed counter that is zero.
        testing.expect_equal(counters.get("ready[cluster]", 0), 0, "ready[cluster] without slices")


@tests.case
def a_rotated_bound_token_is_taken_from_the_token_file(cl):
    """Deleting the pod a token is bound to invalidates it at once; the module is sent
    to the API server again by a restart, is refused (401), and takes the new token."""
    cl.plane.apply(_account_pod("knot-dns-b"))
    new_token = cl.plane.token("knot-dns", "kube-system", seconds=3600, bound_pod="knot-dns-b")
    cl.plane.kubectl("delete", "pod", "-n", "kube-system", "knot-dns-a", "--wait=true",
                     "--timeout=30s")
    before = cl.stats().get("api-errors[unauthorized]", 0)
    cl.plane.restart_apiserver()
    testing.eventually(lambda: testing.expect(
        cl.stats().get("api-errors[unauthorized]", 0) > before,
        "the deleted pod's token was not refused"), timeout=30)
    with open(os.path.join(cl.plane.workdir, "token"), "w", encoding="utf-8") as f:
        f.write(new_token)
    cl.plane.apply(service("rotated", "shop", [{"name": "http", "port": 80}],
                           cluster_ip="10.96.2.20", selector={"app": "none"}))
    cl.expect_answer(f"rotated.shop.svc.{Z}", "A", "NOERROR", ["10.96.2.20"], timeout=30)
    # The restarted server's watch cache starts at etcd's current revision: the watches
    # resumed with the new token get 410 and relist, each after its own backoff.
    testing.eventually(lambda: testing.expect_equal(cl.stats().get("connected"), 1, "connected"),
                       timeout=30)


tests.main(fixture=lambda: realk8s.RealCluster(world=world, kubeconfig=module_kubeconfig))
