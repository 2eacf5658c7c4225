"""packaging/kubernetes as a cluster would take it: `kubectl kustomize` renders it (skipped
without kubectl, which Debian bookworm lacks), the API simulator accepts every object as the
real API server would (strict field validation, schemas and validation of tests/apisim), and
the ClusterRole grants exactly the verbs and resources mod-k8s uses with every feature on,
compared with the requests the module makes to the simulator.

Without kubectl the kustomization is rendered here (resources, namespace, configMapGenerator,
images: what it uses); with kubectl, that rendering is checked against kustomize's.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile

import testing
import yaml
from cluster import Cluster, SAMPLE
from simctl import Simulator

tests = testing.Tests()

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PACKAGING = os.path.join(SRCDIR, "packaging", "kubernetes")
KUBECTL = shutil.which("kubectl")
# The kustomization features render() knows; anything else must fail this test, not be ignored.
KUSTOMIZATION_KEYS = {"apiVersion", "kind", "namespace", "resources", "configMapGenerator", "images"}
COLLECTIONS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Service": "/api/v1/namespaces/{ns}/services",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}
# Every feature that makes the module read something: the clusterset zone (ServiceImports,
# imported EndpointSlices, the ClusterProperty id), verified pods, federations without a
# configured zone and region (nodes), kube-dns's ConfigMap and a hosts ConfigMap's key.
ALL_FEATURES = {"pods": "verified", "endpoint-pod-names": True, "node-name": "node-a",
                "federations": ["myfederation=example.com"],
                "kube-dns-config": "/nonexistent/kube-dns-config",
                "hosts-configmap": "kube-system/coredns/NodeHosts", "hosts-fallthrough": "."}


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def kustomization():
    return load_yaml(os.path.join(PACKAGING, "kustomization.yaml"))[0]


def render():
    """What `kubectl kustomize packaging/kubernetes` makes of the kustomization, but for the
    ConfigMap's hash suffix (the ConfigMap is named knot-dns here)."""
    kust = kustomization()
    objs = []
    for name in kust.get("resources", []):
        objs += load_yaml(os.path.join(PACKAGING, name))
    for generator in kust.get("configMapGenerator", []):
        data = {}
        for path in generator.get("files", []):
            with open(os.path.join(PACKAGING, path), encoding="utf-8") as f:
                data[os.path.basename(path)] = f.read()
        objs.append({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": generator["name"]}, "data": data})
    for obj in objs:
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding") and kust.get("namespace"):
            obj["metadata"]["namespace"] = kust["namespace"]
        for subject in obj.get("subjects", []):
            if subject.get("kind") == "ServiceAccount" and kust.get("namespace"):
                subject["namespace"] = kust["namespace"]
        pod = obj.get("spec", {}).get("template", {}).get("spec", {})
        for container in pod.get("initContainers", []) + pod.get("containers", []):
            for image in kust.get("images", []):
                if container["image"] == image["name"]:
                    container["image"] = f"{image.get('newName', image['name'])}:{image['newTag']}"
    return objs


def kubectl(*args, sim=None, check=True):
    env = dict(os.environ, KUBECONFIG="", HOME=tempfile.gettempdir())
    command = [KUBECTL] + (["--kubeconfig", sim.kubeconfig, "--cache-dir",
                            sim.path("kubectl-cache")] if sim else []) + list(args)
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, check=False)
    if check:
        testing.expect(result.returncode == 0, f"kubectl {' '.join(args)} failed: {result.stderr}")
    return result


def need_kubectl():
    if not KUBECTL:
        raise testing.Skip("kubectl not found (not packaged for Debian 13 nor 12)")


def config_map_name(objs):
    return [o for o in objs if o["kind"] == "ConfigMap"][0]["metadata"]["name"]


def without_hash(objs):
    """The objects with the generated ConfigMap's name (and references to it) as knot-dns."""
    text = json.dumps(objs, sort_keys=True).replace(f'"{config_map_name(objs)}"', '"knot-dns"')
    return sorted(json.loads(text), key=lambda o: (o["kind"], o["metadata"]["name"]))


def simulator():
    """A fresh simulator: a new cluster, with its kube-system namespace."""
    return Simulator(tempfile.mkdtemp(prefix="manifests-sim-"))


# ---------------------------------------------------------------- the pod's storage

@tests.case
def the_zones_storage_is_an_empty_dir_so_the_snapshot_outlives_a_container_restart():
    # mod-k8s writes its snapshot to the zones' storage (option snapshot, on by default):
    # on the ConfigMap (read-only) there is none; on an emptyDir a restarted knotd answers
    # from it at once.
    with open(os.path.join(PACKAGING, "knot.conf"), encoding="utf-8") as f:
        conf = f.read()
    template = re.search(r"(?ms)^template:\n(.*?)(?=^\S|\Z)", conf)
    storage = re.search(r"(?m)^\s+storage:\s*(\S+)\s*$", template.group(1)) if template else None
    testing.expect(storage is not None, "knot.conf: the template sets the zones' storage")
    path = storage.group(1).rstrip("/")
    deployment = next(o for o in load_yaml(os.path.join(PACKAGING, "deployment.yaml"))
                      if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    knotd = next(c for c in pod["containers"] if c["name"] == "knotd")
    mount = next((m for m in knotd.get("volumeMounts", []) if m["mountPath"].rstrip("/") == path),
                 None)
    testing.expect(mount is not None and not mount.get("readOnly", False),
                   f"knotd mounts a writable volume at the zones' storage {path}")
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    testing.expect("emptyDir" in volume, f"the volume at {path} is an emptyDir: {volume}")


@tests.case
def knotd_mounts_kube_dns_s_optional_configmap_where_knot_conf_reads_it():
    # kube-dns's ConfigMap (upstreamNameservers, stubDomains), as kube-dns mounts it.
    with open(os.path.join(PACKAGING, "knot.conf"), encoding="utf-8") as f:
        found = re.search(r"(?m)^\s+kube-dns-config:\s*(\S+)\s*$", f.read())
    testing.expect(found is not None, "knot.conf sets kube-dns-config")
    deployment = next(o for o in load_yaml(os.path.join(PACKAGING, "deployment.yaml"))
                      if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    knotd = next(c for c in pod["containers"] if c["name"] == "knotd")
    mount = next((m for m in knotd.get("volumeMounts", [])
                  if m["mountPath"].rstrip("/") == found.group(1).rstrip("/")), None)
    testing.expect(mount is not None, f"knotd mounts nothing at {found.group(1)}")
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    testing.expect_equal(volume.get("configMap"), {"name": "kube-dns", "optional": True},
                         "the volume is kube-dns's ConfigMap, optional")


# ---------------------------------------------------------------- rendering

@tests.case
def the_kustomization_uses_only_what_this_test_renders():
    extra = set(kustomization()) - KUSTOMIZATION_KEYS
    testing.expect(not extra, f"render() does not know {sorted(extra)}: teach it, or the "
                   "checks without kubectl test something else than kubectl applies")


@tests.case
def kubectl_kustomize_renders_the_manifests_as_this_test_does():
    need_kubectl()
    result = kubectl("kustomize", PACKAGING)
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    kinds = sorted(o["kind"] for o in rendered)
    testing.expect_equal(kinds, ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment",
                                 "PodDisruptionBudget", "Role", "RoleBinding", "ServiceAccount"],
                         "kinds")
    name = config_map_name(rendered)
    # No hash suffix: a changed ConfigMap is updated in place, and the pods' reloader applies
    # it with knotc reload instead of a rollout (doc/mod-k8s.rst, Configuration changes).
    testing.expect_equal(name, "knot-dns", "the ConfigMap's name")
    deployment = [o for o in rendered if o["kind"] == "Deployment"][0]
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    testing.expect_equal(volumes["config"]["configMap"]["name"], name, "the Deployment's ConfigMap")
    testing.expect(without_hash(rendered) == without_hash(render()),
                   "kustomize renders something else than render():\n"
                   + json.dumps(without_hash(rendered), indent=1)[:3000])


# ---------------------------------------------------------------- the API server's view

@tests.case
def every_object_is_accepted_as_the_api_server_would():
    objs = render() + load_yaml(os.path.join(PACKAGING, "service.yaml"))
    with simulator() as sim:
        for obj in objs:
            collection = COLLECTIONS[obj["kind"]].format(ns=obj["metadata"].get("namespace"))
            resp = sim.request("POST", collection + "?fieldValidation=Strict&fieldManager=kubectl", obj)
            testing.expect(resp.status == 201, f"{obj['kind']} {obj['metadata']['name']}: "
                           f"{resp.status} {resp.body.decode(errors='replace')[:1000]}")
            testing.expect("warning" not in resp.headers, resp.headers.get("warning"))
            stored = sim.get(f"{collection}/{obj['metadata']['name']}")
            testing.expect(stored.status == 200, f"{obj['kind']}: GET {stored.status}")
        deployment = sim.get("/apis/apps/v1/namespaces/kube-system/deployments/knot-dns").json()
        pod = deployment["spec"]["template"]["spec"]
        knotd_container = pod["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in knotd_container["ports"]}
        testing.expect_equal(ports.get("metrics"), 9153, "the metrics port")
        for probe, path in (("readinessProbe", "/ready"), ("livenessProbe", "/health")):
            get = knotd_container[probe]["httpGet"]
            testing.expect_equal((get["path"], get["port"], get.get("scheme", "HTTP")),
                                 (path, "metrics", "HTTP"), f"the {probe}")
        testing.expect(all(isinstance(arg, str) for arg in
                           knotd_container["lifecycle"]["preStop"]["exec"]["command"]),
                       "the preStop command holds something else than strings")
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        testing.expect_equal(annotations, {"prometheus.io/scrape": "true", "prometheus.io/port": "9153"},
                             "the pods' scrape annotations")
        service = sim.get("/api/v1/namespaces/kube-system/services/kube-dns").json()
        testing.expect_equal(service["metadata"]["annotations"],
                             {"prometheus.io/scrape": "true", "prometheus.io/port": "9153"},
                             "the Service's scrape annotations")
        testing.expect(any(p["name"] == "metrics" and p["port"] == 9153 for p in service["spec"]["ports"]),
                       "the Service's metrics port")


@tests.case
def kubectl_creates_the_manifests_on_the_simulator():
    need_kubectl()
    with simulator() as sim:
        out = kubectl("create", "-k", PACKAGING, sim=sim).stdout.strip().splitlines()
        testing.expect(len(out) == 8 and all(line.endswith(" created") for line in out), out)
        out = kubectl("create", "-f", os.path.join(PACKAGING, "service.yaml"), sim=sim).stdout
        testing.expect_equal(out.strip(), "service/kube-dns created", "kubectl create -f service.yaml")
        out = kubectl("get", "deployment", "-n", "kube-system", "knot-dns", "-o", "name", sim=sim).stdout
        testing.expect_equal(out.strip(), "deployment.apps/knot-dns", "kubectl get deployment")
        again = kubectl("apply", "-k", PACKAGING, sim=sim, check=False)
        testing.expect(again.returncode == 0, f"kubectl apply -k after create: {again.stderr}")


# ---------------------------------------------------------------- the ClusterRole

def role_grants(kind="ClusterRole"):
    """{(apiGroup, resource, verb)} of the ClusterRole (or the Role) in rbac.yaml."""
    role = [o for o in load_yaml(os.path.join(PACKAGING, "rbac.yaml")) if o["kind"] == kind][0]
    return {(group, resource, verb) for rule in role["rules"] for group in rule["apiGroups"]
            for resource in rule["resources"] for verb in rule["verbs"]}


def role_names():
    """The Role's namespace and the names its rules are limited to."""
    role = [o for o in load_yaml(os.path.join(PACKAGING, "rbac.yaml")) if o["kind"] == "Role"][0]
    return role["metadata"]["namespace"], {n for rule in role["rules"] for n in rule["resourceNames"]}


def resource_requests(requests):
    """{(apiGroup, resource, verb)} of the API requests; the other requests' paths."""
    used, other = set(), set()
    for r in requests:
        if r["resource"]:
            match = re.match(r"^/apis/([^/]+)/", r["path"])
            used.add((match.group(1) if match else "", r["resource"], r["verb"]))
        else:
            other.add(r["path"])
    return used, other


# What every authenticated client may read (the system:discovery and
# system:public-info-viewer ClusterRoles of every cluster).
DISCOVERY = re.compile(r"^/(api|apis)(/[^/]+){0,2}/?$|^/version/?$|^/(healthz|livez|readyz)$")


tests.fixture(lambda: Cluster(manifests=[SAMPLE], module=ALL_FEATURES), "every feature on")


@tests.case
def the_cluster_role_grants_exactly_what_the_module_uses(cluster):
    # Federation answers need the node; the clusterset zone the ClusterProperty.
    cluster.expect_answer("mysvc.myns.myfederation.svc.cluster.local.", "A", "NOERROR")
    cluster.expect_answer("web.shop.svc.clusterset.local.", "A", "NOERROR")
    # A change the module misses, then a restart of the API server: every watch ends, the
    # history is gone, the module's resourceVersion is too old and it lists everything again.
    # The first sync took watch-lists (the module's default, verb watch); the restarted
    # server refuses them (as before Kubernetes 1.27, or with its WatchList gate off), so the
    # module lists with LISTs: every verb the Role grants is used.
    since = cluster.sim.counters()["last_seq"]
    cluster.sim.hang(True)
    cluster.sim.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "missed", "namespace": "shop"},
                       "spec": {"ports": [{"port": 80}]}})
    cluster.sim.set_config(watch_list="refused")
    cluster.sim.restart()
    cluster.sim.hang(False)
    granted = role_grants() | role_grants("Role")
    # Every collection the roles grant (the ConfigMaps read aside too) listed and watched again.
    again = {(r, v) for _, r, v in granted if v in ("list", "watch")}
    testing.eventually(lambda: testing.expect(
        again <= {(r["resource"], r["verb"]) for r in cluster.sim.requests(since) if r["code"] == 200},
        "the module did not list and watch everything again"), timeout=30)
    requests = cluster.sim.requests()
    used, other = resource_requests(requests)
    testing.expect(used == granted, "the ClusterRole and Role and the module's requests differ:\n"
                   f"used, not granted: {sorted(used - granted)}\n"
                   f"granted, not used: {sorted(granted - used)}")
    # The Role's: only in its namespace, each by one name the Role names (the API server
    # authorizes a list or watch with fieldSelector=metadata.name=X as a request for X).
    namespace, names = role_names()
    role_resources = {r for _, r, _ in role_grants("Role")}
    asked = set()
    for r in requests:
        if r["resource"] in role_resources:
            testing.expect(r["path"].startswith(f"/api/v1/namespaces/{namespace}/"), r["path"])
            match = re.search(r"fieldSelector=metadata\.name(?:%3D|=)([^&]+)", r["query"])
            testing.expect(match is not None, f"a request for no one name: {r}")
            asked.add(match.group(1))
    testing.expect_equal(asked, names, "the ConfigMaps read and those the Role names")
    testing.expect(all(DISCOVERY.match(path) for path in other),
                   f"requests outside the resources and discovery: {sorted(other)}")


tests.main()
