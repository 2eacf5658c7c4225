#!/usr/bin/env python3
"""The real kubectl (1.32) against the API simulator, through the kubeconfig files it writes:
get, get -w, create -f, create namespace/service (protobuf bodies), replace -f, delete.  If
kubectl cannot use the simulator, the simulator is wrong: fix it there, never the expectations
here.

Run: python3 tests/integration/harness/test_kubectl.py [name-substring ...]
Prints "ok - NAME" / "not ok - NAME" per case and "N passed, N failed"; exit status 1 on
failure. Without kubectl (Debian bookworm does not package it) it prints
"1..0 # SKIP kubectl not found" and exits 77, which tests/integration/run reports as skipped.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib"))

from simctl import SAMPLE, Simulator, case_collector, check, run_cases  # noqa: E402

KUBECTL = shutil.which("kubectl")
CASES = []
SIM = None
WORK = None

case = case_collector(CASES)


def kubectl(*args, kubeconfig=None, ok=True, timeout=30):
    """Runs kubectl with a fresh discovery cache; returns (exit status, stdout, stderr)."""
    cache = tempfile.mkdtemp(dir=WORK, prefix="cache-")
    cmd = [KUBECTL, "--kubeconfig", kubeconfig or SIM.kubeconfig, "--request-timeout=10s",
           "--cache-dir", cache, *args]
    env = dict(os.environ, HOME=WORK, KUBECONFIG="")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if ok and result.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result.returncode, result.stdout, result.stderr


def manifest(name, obj):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def service(name, namespace="shop", ports=None, labels=None):
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": name}},
            "spec": {"selector": {"app": name},
                     "ports": ports or [{"name": "http", "port": 80, "targetPort": 8080}]}}


def rows(text):
    return [line.split() for line in text.strip().splitlines()]


# ---------------------------------------------------------------- get

@case
def kubectl_version_shows_the_server_version():
    _, out, _ = kubectl("version", "-o", "json")
    check(json.loads(out)["serverVersion"]["gitVersion"] == "v1.32.4", out)


@case
def kubectl_get_services_prints_the_server_side_table():
    _, out, _ = kubectl("get", "services", "-A")
    table = rows(out)
    check(table[0] == ["NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], table[0])
    dns = [r for r in table if r[1] == "kube-dns"][0]
    check(dns[:6] == ["kube-system", "kube-dns", "ClusterIP", "10.96.0.10", "<none>",
                      "53/UDP,53/TCP,9153/TCP"], dns)
    external = [r for r in table if r[1] == "external"][0]
    check(external[2:5] == ["ExternalName", "<none>", "www.example.com"], external)


@case
def kubectl_get_every_served_resource():
    expect = {"endpointslices": "kube-dns-8xk2p", "pods": "coredns-668d6bf9bc-4rk7x",
              "namespaces": "kube-system", "serviceimports": "web", "endpoints": "kube-dns",
              "clusterproperties": "cluster.clusterset.k8s.io", "nodes": "node-a"}
    for resource, name in expect.items():
        _, out, _ = kubectl("get", resource, "-A", "-o", "name")
        check(any(line.endswith("/" + name) for line in out.split()), (resource, out))


@case
def kubectl_get_wide_shows_priority_columns():
    _, out, _ = kubectl("get", "pods", "-n", "db", "-o", "wide")
    table = rows(out)
    check("NODE" in table[0] and "IP" in table[0], table[0])
    check(["postgres-2", "0/1", "Running"] == table[-1][:3] and "10.244.2.20" in table[-1], table[-1])


@case
def kubectl_get_json_returns_the_object():
    _, out, _ = kubectl("get", "service", "-n", "kube-system", "kube-dns", "-o", "json")
    obj = json.loads(out)
    check(obj["kind"] == "Service" and obj["spec"]["clusterIP"] == "10.96.0.10", obj)
    _, out, _ = kubectl("get", "endpointslices", "-n", "shop", "-l", "kubernetes.io/service-name=web",
                        "-o", "jsonpath={.items[*].addressType}")
    check(sorted(out.split()) == ["IPv4", "IPv6"], out)


@case
def kubectl_get_with_selectors():
    _, out, _ = kubectl("get", "services", "-A", "-l", "app in (web,cache)", "-o", "name")
    check(sorted(out.split()) == ["service/cache", "service/web"], out)
    _, out, _ = kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=node-c", "-o", "name")
    check(sorted(out.split()) == ["pod/postgres-2", "pod/syslog-0", "pod/web-7d9f8b6c5d-t9wbn"], out)


@case
def kubectl_get_pages_with_chunk_size():
    since = SIM.counters()["last_seq"]
    _, out, _ = kubectl("get", "pods", "-A", "--chunk-size=4", "-o", "name")
    check(len(out.split()) == 15, out)
    lists = [r for r in SIM.requests(since) if r["verb"] == "list" and r["resource"] == "pods"]
    check(len(lists) == 4 and sum("continue=" in r["query"] for r in lists) == 3, lists)


@case
def kubectl_get_watch_prints_changes():
    cache = tempfile.mkdtemp(dir=WORK, prefix="cache-")
    proc = subprocess.Popen([KUBECTL, "--kubeconfig", SIM.kubeconfig, "--cache-dir", cache,
                             "get", "services", "-n", "shop", "-w", "--output-watch-events"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, HOME=WORK, KUBECONFIG=""))
    try:
        SIM.wait_for_watches("services", 1, timeout=15)
        SIM.apply(service("watched"))
        SIM.delete("services", "shop", "watched")
        seen = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not any(r[:2] == ["DELETED", "watched"] for r in seen):
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line.split())
    finally:
        os.kill(proc.pid, 15)
        proc.wait(timeout=5)
    check(["ADDED", "web"] in [r[:2] for r in seen], seen)
    check(["ADDED", "watched", "ClusterIP"] in [r[:3] for r in seen], seen)
    check(["DELETED", "watched"] in [r[:2] for r in seen], seen)


# ---------------------------------------------------------------- create, replace, delete

@case
def kubectl_create_from_a_file():
    path = manifest("create.json", service("created-by-kubectl"))
    _, out, _ = kubectl("create", "-f", path)
    check(out.strip() == "service/created-by-kubectl created", out)
    obj = SIM.get_object("services", "shop", "created-by-kubectl")
    check(obj["spec"]["clusterIP"].startswith("10.96.") and obj["spec"]["ports"][0]["protocol"] == "TCP", obj)
    check(obj["metadata"]["managedFields"][0]["manager"] == "kubectl-create")
    code, _, err = kubectl("create", "-f", path, ok=False)
    check(code != 0 and "AlreadyExists" in err and "already exists" in err, err)
    kubectl("delete", "-f", path)


@case
def kubectl_create_of_a_list_of_several_kinds():
    objs = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubectl-ns"}},
        service("multi", "kubectl-ns"),
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "multi-1", "namespace": "kubectl-ns",
                      "labels": {"kubernetes.io/service-name": "multi"}},
         "addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}}],
         "ports": [{"name": "http", "port": 8080}]},
        {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
         "metadata": {"name": "multi", "namespace": "kubectl-ns"},
         "spec": {"type": "ClusterSetIP", "ips": ["10.42.0.99"], "ports": [{"port": 80}]}}]}
    _, out, _ = kubectl("create", "-f", manifest("list.json", objs))
    check(len(out.strip().splitlines()) == 4, out)
    check(SIM.get_object("serviceimports", "kubectl-ns", "multi")["spec"]["ips"] == ["10.42.0.99"])
    _, out, _ = kubectl("delete", "namespace", "kubectl-ns")
    check('namespace "kubectl-ns" deleted' in out, out)
    code, _, _ = kubectl("get", "namespace", "kubectl-ns", ok=False)
    check(code != 0, "namespace still there")


@case
def kubectl_create_of_the_sample_manifests_into_an_empty_cluster():
    with Simulator(os.path.join(WORK, "empty"), args=["--no-bootstrap"]) as empty:
        _, out, _ = kubectl("create", "-f", SAMPLE, kubeconfig=empty.kubeconfig)
        created = out.strip().splitlines()
        check(len(created) == 55 and all(line.endswith(" created") for line in created), out)
        _, out, _ = kubectl("get", "endpointslices", "-n", "kube-system", "-o", "name",
                            kubeconfig=empty.kubeconfig)
        check(out.strip() == "endpointslice.discovery.k8s.io/kube-dns-8xk2p", out)


@case
def kubectl_create_reports_invalid_objects():
    bad = service("Not_Valid")
    bad["spec"]["ports"] = []
    code, _, err = kubectl("create", "-f", manifest("invalid.json", bad), ok=False)
    check(code != 0 and 'The Service "Not_Valid" is invalid' in err and "spec.ports: Required value" in err, err)


@case
def kubectl_create_with_unknown_field_fails_strict_validation():
    bad = service("typo")
    bad["spec"]["clusterIp"] = "10.96.1.1"
    code, _, err = kubectl("create", "-f", manifest("typo.json", bad), ok=False)
    check(code != 0 and 'unknown field "spec.clusterIp"' in err, err)
    kubectl("create", "-f", manifest("typo.json", bad), "--validate=false")
    kubectl("delete", "service", "-n", "shop", "typo")


@case
def kubectl_replace_from_a_file():
    kubectl("create", "-f", manifest("replace.json", service("replaced")))
    changed = service("replaced", ports=[{"name": "http", "port": 80, "targetPort": 8080},
                                         {"name": "admin", "port": 9000}],
                      labels={"app": "replaced", "tier": "backend"})
    rv = SIM.resource_version()
    _, out, _ = kubectl("replace", "-f", manifest("replace.json", changed))
    check(out.strip() == "service/replaced replaced", out)
    obj = SIM.get_object("services", "shop", "replaced")
    check([p["name"] for p in obj["spec"]["ports"]] == ["http", "admin"], obj["spec"])
    check(obj["metadata"]["labels"]["tier"] == "backend" and int(obj["metadata"]["resourceVersion"]) > rv)
    kubectl("delete", "service", "-n", "shop", "replaced")


@case
def kubectl_delete_removes_the_object():
    SIM.apply(service("to-delete"))
    _, out, _ = kubectl("delete", "service", "-n", "shop", "to-delete")
    check(out.strip() == 'service "to-delete" deleted', out)
    code, _, err = kubectl("get", "service", "-n", "shop", "to-delete", ok=False)
    check(code != 0 and 'services "to-delete" not found' in err, err)


# ---------------------------------------------------------------- kubectl create's generators

def create_with_protobuf(*args):
    """kubectl create NAMESPACE|SERVICE ...: its typed client POSTs a protobuf body (-v=8
    shows the request headers).  Returns the stdout line."""
    code, out, err = kubectl("create", *args, "-v=8", ok=False)
    last = err.strip().splitlines()[-1:]      # the error line, not the whole -v=8 log
    check(code == 0, f"kubectl create {' '.join(args)} failed ({code}): {last}")
    check("Content-Type: application/vnd.kubernetes.protobuf" in err,
          "the body was not sent as protobuf:\n" + err[-3000:])
    return out.strip()


def get_json(*args):
    _, out, _ = kubectl("get", *args, "-o", "json")
    return json.loads(out)


@case
def kubectl_create_namespace():
    check(create_with_protobuf("namespace", "demo-ns") == "namespace/demo-ns created")
    obj = get_json("namespace", "demo-ns")
    check(obj["metadata"]["labels"] == {"kubernetes.io/metadata.name": "demo-ns"}, obj)
    check(obj["spec"] == {"finalizers": ["kubernetes"]}, obj["spec"])
    check(obj["status"] == {"phase": "Active"}, obj["status"])
    kubectl("delete", "namespace", "demo-ns")


@case
def kubectl_create_service_clusterip():
    out = create_with_protobuf("service", "clusterip", "demo-x", "-n", "shop", "--tcp=80:8080",
                               "--tcp=443:https")
    check(out == "service/demo-x created", out)
    obj = get_json("service", "-n", "shop", "demo-x")
    spec = obj["spec"]
    check(spec["ports"] == [
        {"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080},
        {"name": "443-https", "port": 443, "protocol": "TCP", "targetPort": "https"}], spec)
    check(spec["selector"] == {"app": "demo-x"} and obj["metadata"]["labels"] == {"app": "demo-x"})
    check(spec["type"] == "ClusterIP" and spec["clusterIP"].startswith("10.96.")
          and spec["clusterIPs"] == [spec["clusterIP"]], spec)
    kubectl("delete", "service", "-n", "shop", "demo-x")


@case
def kubectl_create_service_clusterip_none_is_headless():
    out = create_with_protobuf("service", "clusterip", "demo-headless", "-n", "shop",
                               "--clusterip=None")
    check(out == "service/demo-headless created", out)
    spec = get_json("service", "-n", "shop", "demo-headless")["spec"]
    check(spec["clusterIP"] == "None" and spec["clusterIPs"] == ["None"], spec)
    check(spec["selector"] == {"app": "demo-headless"} and "ports" not in spec, spec)
    kubectl("delete", "service", "-n", "shop", "demo-headless")


@case
def kubectl_create_service_externalname():
    out = create_with_protobuf("service", "externalname", "demo-ext", "-n", "shop",
                               "--external-name=www.example.org")
    check(out == "service/demo-ext created", out)
    spec = get_json("service", "-n", "shop", "demo-ext")["spec"]
    check(spec["type"] == "ExternalName" and spec["externalName"] == "www.example.org", spec)
    check("clusterIP" not in spec, spec)
    kubectl("delete", "service", "-n", "shop", "demo-ext")


@case
def kubectl_create_service_nodeport_and_loadbalancer():
    out = create_with_protobuf("service", "nodeport", "demo-np", "-n", "shop", "--tcp=80:8080",
                               "--node-port=30080")
    check(out == "service/demo-np created", out)
    spec = get_json("service", "-n", "shop", "demo-np")["spec"]
    check(spec["type"] == "NodePort" and spec["clusterIP"].startswith("10.96."), spec)
    check(spec["ports"] == [{"name": "80-8080", "nodePort": 30080, "port": 80, "protocol": "TCP",
                             "targetPort": 8080}], spec)
    out = create_with_protobuf("service", "loadbalancer", "demo-lb", "-n", "shop", "--tcp=443")
    check(out == "service/demo-lb created", out)
    spec = get_json("service", "-n", "shop", "demo-lb")["spec"]
    check(spec["type"] == "LoadBalancer" and spec["clusterIP"].startswith("10.96."), spec)
    check(spec["ports"] == [{"name": "443", "port": 443, "protocol": "TCP", "targetPort": 443}],
          spec)
    kubectl("delete", "service", "-n", "shop", "demo-np", "demo-lb")


# ---------------------------------------------------------------- credentials and API shape

@case
def kubectl_works_with_every_kubeconfig_form():
    for path in (SIM.kubeconfig, SIM.kubeconfig_tokenfile, SIM.kubeconfig_cert, SIM.kubeconfig_data):
        _, out, _ = kubectl("get", "namespace", "kube-system", "-o", "name", kubeconfig=path)
        check(out.strip() == "namespace/kube-system", (path, out))


@case
def kubectl_reads_the_rotated_token_from_the_token_file():
    SIM.rotate_token()
    _, out, _ = kubectl("get", "namespace", "default", "-o", "name", kubeconfig=SIM.kubeconfig_tokenfile)
    check(out.strip() == "namespace/default", out)


@case
def kubectl_with_an_expired_token_is_unauthorized():
    SIM.expire_token()
    try:
        code, _, err = kubectl("get", "services", ok=False)
        check(code != 0 and "You must be logged in to the server" in err, err)
    finally:
        SIM.rotate_token()


@case
def kubectl_does_not_know_a_missing_crd():
    SIM.set_absent("serviceimports")
    try:
        code, _, err = kubectl("get", "serviceimports", "-A", ok=False)
        check(code != 0 and 'the server doesn\'t have a resource type "serviceimports"' in err, err)
    finally:
        SIM.set_absent("serviceimports", False)
    kubectl("get", "serviceimports", "-A")


def main(argv):
    global SIM, WORK
    if not KUBECTL:
        print("1..0 # SKIP kubectl not found (not packaged for Debian 13 nor 12)")
        return 77
    WORK = tempfile.mkdtemp(prefix="kubectl-test-")
    SIM = Simulator(os.path.join(WORK, "sim"), manifests=[SAMPLE])
    try:
        SIM.start()
        return run_cases(CASES, argv, SIM)
    finally:
        SIM.stop()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
