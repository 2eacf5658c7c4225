"""The resource types the simulator serves, as the real API server describes them."""

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class ResourceType:
    """One served resource (a plural name in one group/version)."""

    plural: str
    singular: str
    kind: str
    group: str
    version: str
    namespaced: bool
    short_names: tuple = ()
    categories: tuple = ()
    # Built-in types are encoded from Go structs: list items carry no kind/apiVersion.
    # CRD objects are unstructured maps: every item carries them and keys come out sorted.
    builtin: bool = True
    # Top-level keys after metadata, in the Go struct order of the type.
    body_keys: tuple = ()
    # Fields usable in fieldSelector besides metadata.name (and metadata.namespace).
    extra_fields: tuple = ()
    # Zero-valued fields the server writes into a BOOKMARK object of this type.
    bookmark_body: dict = field(default_factory=dict)
    # DELETE answers with the deleted object (registry ReturnDeletedObject) or a Status.
    delete_returns_object: bool = False
    storage_version_hash: str = ""

    @property
    def api_version(self):
        """The apiVersion string, "v1" for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self):
        return self.kind + "List"

    @property
    def prefix(self):
        """URL prefix of the group version: /api/v1 or /apis/GROUP/VERSION."""
        return "/api/v1" if not self.group else f"/apis/{self.group}/{self.version}"

    @property
    def group_resource(self):
        """"services" or "endpointslices.discovery.k8s.io", as error messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def field_names(self):
        """Every field label a fieldSelector may use on this type."""
        names = ["metadata.name"]
        if self.namespaced:
            names.append("metadata.namespace")
        return tuple(names) + self.extra_fields


_BUILTIN_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

SERVICES = ResourceType(
    plural="services", singular="service", kind="Service", group="", version="v1",
    namespaced=True, short_names=("svc",), categories=("all",),
    body_keys=("spec", "status"), extra_fields=("spec.clusterIP", "spec.type"),
    bookmark_body={"spec": {}, "status": {"loadBalancer": {}}},
    delete_returns_object=True, storage_version_hash="0/CO1lhkEBI=")

ENDPOINTS = ResourceType(
    plural="endpoints", singular="endpoints", kind="Endpoints", group="", version="v1",
    namespaced=True, short_names=("ep",),
    body_keys=("subsets",), bookmark_body={},
    storage_version_hash="fWeeMqaN/OA=")

PODS = ResourceType(
    plural="pods", singular="pod", kind="Pod", group="", version="v1",
    namespaced=True, short_names=("po",), categories=("all",),
    body_keys=("spec", "status"),
    extra_fields=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                  "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                  "status.podIP", "status.nominatedNodeName"),
    bookmark_body={"spec": {"containers": None}, "status": {}},
    delete_returns_object=True, storage_version_hash="xPOwRZ+Yhw8=")

NAMESPACES = ResourceType(
    plural="namespaces", singular="namespace", kind="Namespace", group="", version="v1",
    namespaced=False, short_names=("ns",),
    body_keys=("spec", "status"), extra_fields=("status.phase", "name"),
    bookmark_body={"spec": {}, "status": {}},
    delete_returns_object=True, storage_version_hash="Q3oi5N2YM8M=")

NODES = ResourceType(
    plural="nodes", singular="node", kind="Node", group="", version="v1",
    namespaced=False, short_names=("no",),
    body_keys=("spec", "status"), extra_fields=("spec.unschedulable",),
    bookmark_body={"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                                          "nodeInfo": {"machineID": "", "systemUUID": "",
                                                       "bootID": "", "kernelVersion": "",
                                                       "osImage": "", "containerRuntimeVersion": "",
                                                       "kubeletVersion": "", "kubeProxyVersion": "",
                                                       "operatingSystem": "", "architecture": ""}}},
    delete_returns_object=True, storage_version_hash="XwShjMxG9Fs=")

ENDPOINTSLICES = ResourceType(
    plural="endpointslices", singular="endpointslice", kind="EndpointSlice",
    group="discovery.k8s.io", version="v1", namespaced=True,
    body_keys=("addressType", "endpoints", "ports"),
    bookmark_body={"addressType": "", "endpoints": None, "ports": None},
    storage_version_hash="Nx3SIv6I0mE=")

SERVICEIMPORTS = ResourceType(
    plural="serviceimports", singular="serviceimport", kind="ServiceImport",
    group="multicluster.x-k8s.io", version="v1alpha1", namespaced=True,
    short_names=("svcim", "svcimport"), builtin=False,
    body_keys=("spec", "status"), storage_version_hash="H+Yf/dJv4zE=")

CLUSTERPROPERTIES = ResourceType(
    plural="clusterproperties", singular="clusterproperty", kind="ClusterProperty",
    group="about.k8s.io", version="v1alpha1", namespaced=False,
    categories=("multicluster",), builtin=False,
    body_keys=("spec", "status"), storage_version_hash="4dvTVU1m+Gs=")

# The other kinds of packaging/kubernetes, so that its manifests meet the server's
# validation (workloads.py) before a cluster sees them.
SERVICEACCOUNTS = ResourceType(
    plural="serviceaccounts", singular="serviceaccount", kind="ServiceAccount", group="",
    version="v1", namespaced=True, short_names=("sa",),
    body_keys=("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    storage_version_hash="pbx9ZvyFpBE=")

CONFIGMAPS = ResourceType(
    plural="configmaps", singular="configmap", kind="ConfigMap", group="", version="v1",
    namespaced=True, short_names=("cm",), body_keys=("immutable", "data", "binaryData"),
    storage_version_hash="qFsyl6wFWjQ=")

DEPLOYMENTS = ResourceType(
    plural="deployments", singular="deployment", kind="Deployment", group="apps", version="v1",
    namespaced=True, short_names=("deploy",), categories=("all",), body_keys=("spec", "status"),
    bookmark_body={"spec": {"selector": None, "template": {"metadata": {"creationTimestamp": None},
                                                           "spec": {"containers": None}},
                            "strategy": {}}, "status": {}},
    storage_version_hash="8aSe+NMegvE=")

PODDISRUPTIONBUDGETS = ResourceType(
    plural="poddisruptionbudgets", singular="poddisruptionbudget", kind="PodDisruptionBudget",
    group="policy", version="v1", namespaced=True, short_names=("pdb",),
    body_keys=("spec", "status"),
    bookmark_body={"spec": {}, "status": {"disruptionsAllowed": 0, "currentHealthy": 0,
                                          "desiredHealthy": 0, "expectedPods": 0}},
    storage_version_hash="6BGBu0kpHtk=")

CLUSTERROLES = ResourceType(
    plural="clusterroles", singular="clusterrole", kind="ClusterRole",
    group="rbac.authorization.k8s.io", version="v1", namespaced=False,
    body_keys=("rules", "aggregationRule"), bookmark_body={"rules": None},
    storage_version_hash="bYE5ZWDrJ44=")

CLUSTERROLEBINDINGS = ResourceType(
    plural="clusterrolebindings", singular="clusterrolebinding", kind="ClusterRoleBinding",
    group="rbac.authorization.k8s.io", version="v1", namespaced=False,
    body_keys=("subjects", "roleRef"), bookmark_body={"roleRef": {"apiGroup": "", "kind": "", "name": ""}},
    storage_version_hash="48tpQ8gZHFc=")

ROLES = ResourceType(
    plural="roles", singular="role", kind="Role",
    group="rbac.authorization.k8s.io", version="v1", namespaced=True,
    body_keys=("rules",), bookmark_body={"rules": None},
    storage_version_hash="7FuwZcIIItM=")

ROLEBINDINGS = ResourceType(
    plural="rolebindings", singular="rolebinding", kind="RoleBinding",
    group="rbac.authorization.k8s.io", version="v1", namespaced=True,
    body_keys=("subjects", "roleRef"), bookmark_body={"roleRef": {"apiGroup": "", "kind": "", "name": ""}},
    storage_version_hash="eGsCzGH6b1g=")

# In the real server's order of /apis: apps, policy, rbac, discovery, then CRD groups.
ALL = (NAMESPACES, NODES, SERVICES, ENDPOINTS, PODS, SERVICEACCOUNTS, CONFIGMAPS, DEPLOYMENTS,
       PODDISRUPTIONBUDGETS, CLUSTERROLES, CLUSTERROLEBINDINGS, ROLES, ROLEBINDINGS,
       ENDPOINTSLICES, SERVICEIMPORTS, CLUSTERPROPERTIES)
# Kinds whose schema, defaults and validation live in workloads.py.
WORKLOADS = ("serviceaccounts", "configmaps", "deployments", "poddisruptionbudgets",
             "clusterroles", "clusterrolebindings", "roles", "rolebindings")
BY_PLURAL = {r.plural: r for r in ALL}
BY_KIND = {r.kind: r for r in ALL}


def serve_version(plural, version):
    """Serves a CRD at another version (ServiceImport v1beta1, as mcs-api >= 0.5 can).

    Call before the store is built: other modules read these names at call time.
    """
    global ALL, BY_PLURAL, BY_KIND, SERVICEIMPORTS, CLUSTERPROPERTIES
    ALL = tuple(replace(r, version=version) if r.plural == plural else r for r in ALL)
    BY_PLURAL = {r.plural: r for r in ALL}
    BY_KIND = {r.kind: r for r in ALL}
    SERVICEIMPORTS = BY_PLURAL["serviceimports"]
    CLUSTERPROPERTIES = BY_PLURAL["clusterproperties"]


def verbs(rtype):
    """The verbs discovery announces for a resource (the same set for every served type)."""
    return list(_BUILTIN_VERBS)


def lookup(name):
    """Finds a type by plural, singular, kind or short name (case-insensitive), or None."""
    name = name.lower()
    for r in ALL:
        if name in (r.plural, r.singular, r.kind.lower()) or name in r.short_names:
            return r
    return None


def group_versions():
    """(group, version) pairs in the order /apis lists them; the core group is not included."""
    seen = []
    for r in ALL:
        if r.group and (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen
