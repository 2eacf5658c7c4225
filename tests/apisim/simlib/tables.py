"""Server-side printing: the meta.k8s.io/v1 Table kubectl asks for (Accept: ...;as=Table)."""

import datetime
import json

from . import objects, resources


def _col(name, kind, description, priority=0, fmt=""):
    return {"name": name, "type": kind, "format": fmt, "description": description,
            "priority": priority}


_NAME = _col("Name", "string", "Name must be unique within a namespace.", fmt="name")
_AGE = _col("Age", "string", "CreationTimestamp is a timestamp representing the server time "
            "when this object was created.")

COLUMNS = {
    "services": [_NAME, _col("Type", "string", "Type of service"),
                 _col("Cluster-IP", "string", "ClusterIP of service"),
                 _col("External-IP", "string", "External IPs of service"),
                 _col("Port(s)", "string", "Ports of service"), _AGE,
                 _col("Selector", "string", "Route service traffic to pods with label keys "
                      "and values matching this selector.", priority=1)],
    "endpoints": [_NAME, _col("Endpoints", "string", "Endpoints of the resource"), _AGE],
    "endpointslices": [_NAME, _col("AddressType", "string", "Address type of endpoints"),
                       _col("Ports", "string", "Ports of endpoints"),
                       _col("Endpoints", "string", "Addresses of endpoints"), _AGE],
    "pods": [_NAME, _col("Ready", "string", "The aggregate readiness state of this pod"),
             _col("Status", "string", "The aggregate status of the containers in this pod."),
             _col("Restarts", "string", "The number of times the containers in this pod have "
                  "been restarted and when the last container in this pod has restarted."), _AGE,
             _col("IP", "string", "IP address allocated to the pod.", priority=1),
             _col("Node", "string", "Name of the node where the pod is running.", priority=1),
             _col("Nominated Node", "string", "Name of the node where the pod is nominated.", priority=1),
             _col("Readiness Gates", "string", "Pod readiness gates", priority=1)],
    "namespaces": [_NAME, _col("Status", "string", "The status of the namespace"), _AGE],
    "nodes": [_NAME, _col("Status", "string", "The status of the node"),
              _col("Roles", "string", "The roles of the node"), _AGE,
              _col("Version", "string", "Kubelet Version reported by the node."),
              _col("Internal-IP", "string", "List of internal IPs for the node.", priority=1),
              _col("External-IP", "string", "List of external IPs for the node.", priority=1),
              _col("OS-Image", "string", "OS image reported by the node from /etc/os-release "
                   "(e.g. Debian GNU/Linux 7 (wheezy)).", priority=1),
              _col("Kernel-Version", "string", "Kernel version reported by the node from "
                   "'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority=1),
              _col("Container-Runtime", "string", "Container runtime version reported by the "
                   "node through runtime remote API (e.g. containerd://1.4.2).", priority=1)],
    "serviceimports": [_NAME, _col("Type", "string", "The type of this ServiceImport"),
                       _col("IP", "string", "The VIP for this ServiceImport"), _AGE],
    "clusterproperties": [_NAME, _col("value", "string", "value of the cluster property"),
                          _col("age", "date", "age of the cluster property")],
    "serviceaccounts": [_NAME, _col("Secrets", "string", "Secrets is a list of the secrets in the "
                                    "same namespace that pods running using this ServiceAccount "
                                    "are allowed to use."), _AGE],
    "configmaps": [_NAME, _col("Data", "string", "Data contains the configuration data."), _AGE],
    "deployments": [_NAME, _col("Ready", "string", "Number of the pod with ready state"),
                    _col("Up-to-date", "string", "Total number of non-terminated pods targeted by "
                         "this deployment that have the desired template spec."),
                    _col("Available", "string", "Total number of available pods (ready for at "
                         "least minReadySeconds) targeted by this deployment."), _AGE,
                    _col("Containers", "string", "Names of each container in the template.",
                         priority=1),
                    _col("Images", "string", "Images referenced by each container in the "
                         "template.", priority=1),
                    _col("Selector", "string", "Label selector for pods. Existing ReplicaSets "
                         "whose pods are selected by this will be the ones affected by this "
                         "deployment.", priority=1)],
    "poddisruptionbudgets": [_NAME, _col("Min Available", "string", "The minimum number of pods "
                                         "that must be available"),
                             _col("Max Unavailable", "string", "The maximum number of pods that "
                                  "may be unavailable"),
                             _col("Allowed Disruptions", "integer", "Calculated number of pods that "
                                  "may be disrupted at this time"), _AGE],
    "clusterroles": [_NAME, _col("Created At", "date", "Time when this ClusterRole was created")],
    "roles": [_NAME, _col("Created At", "date", "Time when this Role was created")],
    "rolebindings": [_NAME, _col("Role", "string", "Role to which this binding refers"), _AGE,
                     _col("Users", "string", "Users in this binding", priority=1),
                     _col("Groups", "string", "Groups in this binding", priority=1),
                     _col("ServiceAccounts", "string", "ServiceAccounts in this binding",
                          priority=1)],
    "clusterrolebindings": [_NAME, _col("Role", "string", "Role to which this binding refers"),
                            _AGE,
                            _col("Users", "string", "Users in this binding", priority=1),
                            _col("Groups", "string", "Groups in this binding", priority=1),
                            _col("ServiceAccounts", "string", "ServiceAccounts in this binding",
                                 priority=1)],
}


def human_duration(seconds):
    """k8s.io/apimachinery duration.HumanDuration."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"


def _age(obj):
    created = objects.parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    if created is None:
        return "<unknown>"
    now = datetime.datetime.now(datetime.timezone.utc)
    return human_duration(int((now - created).total_seconds()))


def _ports(ports, with_target=False):
    out = []
    for p in ports or ():
        text = str(p.get("port", ""))
        if p.get("nodePort"):
            text += f":{p['nodePort']}"
        out.append(f"{text}/{p.get('protocol', 'TCP')}")
    return ",".join(out) if out else "<none>"


def _join_limited(items, limit=3):
    if not items:
        return "<none>"
    text = ",".join(items[:limit])
    if len(items) > limit:
        text += f" + {len(items) - limit} more..."
    return text


def _service_cells(obj):
    spec = obj.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    external = spec.get("externalName", "<none>") if kind == "ExternalName" else (
        ",".join(spec.get("externalIPs") or []) or "<none>")
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    cluster_ip = spec.get("clusterIP") or "<none>"
    return [kind, cluster_ip, external, _ports(spec.get("ports")), _age(obj), selector or "<none>"]


def _endpoints_cells(obj):
    addrs = []
    for subset in obj.get("subsets") or ():
        ports = [p.get("port") for p in subset.get("ports") or ()] or [None]
        for a in subset.get("addresses") or ():
            for port in ports:
                ip = a.get("ip", "")
                host = f"[{ip}]" if ":" in ip else ip
                addrs.append(f"{host}:{port}" if port else ip)
    return [_join_limited(addrs), _age(obj)]


def _slice_cells(obj):
    ports = [str(p.get("port")) if p.get("port") is not None else "<unset>" for p in obj.get("ports") or ()]
    addrs = [a for ep in obj.get("endpoints") or () for a in ep.get("addresses") or ()]
    return [obj.get("addressType", ""), ",".join(ports) if ports else "<unset>",
            _join_limited(addrs), _age(obj)]


def _pod_cells(obj):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses)
    phase = status.get("phase", "Pending")
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        phase = "Terminating"
    gates = spec.get("readinessGates")
    return [f"{ready}/{len(spec.get('containers') or [])}", phase, restarts, _age(obj),
            status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", str(len(gates)) if gates else "<none>"]


def _namespace_cells(obj):
    return [(obj.get("status") or {}).get("phase", "Active"), _age(obj)]


def _node_cells(obj):
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    ready = [c for c in status.get("conditions") or () if c.get("type") == "Ready"]
    state = "Unknown" if not ready else ("Ready" if ready[0].get("status") == "True" else "NotReady")
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix):] for k in meta.get("labels") or {} if k.startswith(prefix))
    info = status.get("nodeInfo") or {}

    def addresses(kind):
        found = [a.get("address") for a in status.get("addresses") or () if a.get("type") == kind]
        return ",".join(found) if found else "<none>"
    return [state, ",".join(roles) or "<none>", _age(obj), info.get("kubeletVersion", ""),
            addresses("InternalIP"), addresses("ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


def _import_cells(obj):
    spec = obj.get("spec") or {}
    return [spec.get("type", ""), json.dumps(spec["ips"], separators=(",", ":")) if spec.get("ips") else "",
            _age(obj)]


def _property_cells(obj):
    return [(obj.get("spec") or {}).get("value", ""), _age(obj)]


def _serviceaccount_cells(obj):
    return [len(obj.get("secrets") or ()), _age(obj)]


def _configmap_cells(obj):
    return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {}), _age(obj)]


def _deployment_cells(obj):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = pod.get("containers") or []
    selector = ",".join(f"{k}={v}" for k, v in sorted(((spec.get("selector") or {}).get(
        "matchLabels") or {}).items()))
    return [f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0), _age(obj),
            ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers), selector]


def _pdb_cells(obj):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [str(spec.get("minAvailable", "N/A")), str(spec.get("maxUnavailable", "N/A")),
            status.get("disruptionsAllowed", 0), _age(obj)]


def _clusterrole_cells(obj):
    return [obj["metadata"].get("creationTimestamp", "")]


def _clusterrolebinding_cells(obj):
    subjects = obj.get("subjects") or []

    def names(kind):
        return ", ".join((f"{s.get('namespace')}/" if kind == "ServiceAccount" else "") + s.get("name", "")
                         for s in subjects if s.get("kind") == kind)
    ref = obj.get('roleRef') or {}
    return [f"{ref.get('kind', 'ClusterRole')}/{ref.get('name', '')}", _age(obj),
            names("User"), names("Group"), names("ServiceAccount")]


_CELLS = {"services": _service_cells, "endpoints": _endpoints_cells,
          "endpointslices": _slice_cells, "pods": _pod_cells, "namespaces": _namespace_cells,
          "nodes": _node_cells,
          "serviceimports": _import_cells, "clusterproperties": _property_cells,
          "serviceaccounts": _serviceaccount_cells, "configmaps": _configmap_cells,
          "deployments": _deployment_cells, "poddisruptionbudgets": _pdb_cells,
          "clusterroles": _clusterrole_cells, "clusterrolebindings": _clusterrolebinding_cells,
          "roles": _clusterrole_cells, "rolebindings": _clusterrolebinding_cells}


def partial_metadata(rtype, obj):
    """The PartialObjectMetadata a row carries unless includeObject=Object or None."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def row(rtype, obj, include):
    """One Table row for an object dict (with kind/apiVersion for includeObject=Object)."""
    cells = [obj["metadata"]["name"]] + _CELLS[rtype.plural](obj)
    out = {"cells": cells}
    if include == "Object":
        full = dict(obj)
        if rtype.builtin:
            full = {"kind": rtype.kind, "apiVersion": rtype.api_version, **obj}
        out["object"] = full
    elif include != "None":
        out["object"] = partial_metadata(rtype, obj)
    return out


def table(rtype, rows, list_meta, headers=True):
    """The Table object; list_meta is the ListMeta (resourceVersion, continue, remainingItemCount)."""
    out = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta}
    if headers:
        out["columnDefinitions"] = COLUMNS[rtype.plural]
    out["rows"] = rows
    return out


assert set(COLUMNS) == set(resources.BY_PLURAL)
