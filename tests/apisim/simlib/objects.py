"""What the API server does to an object between the request body and storage:
defaulting, validation (422 Invalid with causes), server-set metadata and key order."""

import copy
import datetime
import ipaddress
import json
import random
import re
import threading
import uuid

from . import resources, workloads
from .encoding import ApiError, invalid

# ObjectMeta fields in Go struct order.
META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
              "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
              "labels", "annotations", "ownerReferences", "finalizers", "managedFields")
# Map-typed fields: Go's encoder writes map keys sorted.
_MAP_FIELDS = (("metadata", "labels"), ("metadata", "annotations"), ("spec", "selector"),
               ("spec", "nodeSelector"))

# Types whose status only the status subresource writes: the main resource ignores it
# (by plural: a CRD may be served at another version, see resources.serve_version).
STATUS_SUBRESOURCE = ("services", "pods", "namespaces", "serviceimports", "nodes", "deployments",
                      "poddisruptionbudgets")
# Of those, types that take status on create (a kubelet registers its Node with its status).
STATUS_ON_CREATE = ("nodes",)

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None


def normalize(rtype, obj):
    """Key order of the Go types (built-ins) or sorted keys (CRDs, done by the encoder).

    Built-in objects are stored without kind/apiVersion: list items do not carry them."""
    obj = dict(obj)
    if rtype.builtin:
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
    else:
        obj["apiVersion"] = rtype.api_version
        obj["kind"] = rtype.kind
    # The store fills in resourceVersion; a placeholder keeps its place in the key order.
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("resourceVersion", "")
    ordered_meta = {k: meta[k] for k in META_ORDER if k in meta}
    ordered_meta.update({k: v for k, v in meta.items() if k not in ordered_meta})
    obj["metadata"] = ordered_meta
    for outer, inner in _MAP_FIELDS:
        if (outer, inner) == ("spec", "selector") and rtype is not resources.SERVICES:
            continue        # a LabelSelector object elsewhere, not a map
        part = obj.get(outer)
        if isinstance(part, dict) and isinstance(part.get(inner), dict):
            obj[outer] = dict(part)
            obj[outer][inner] = dict(sorted(part[inner].items()))
    if rtype is resources.ENDPOINTSLICES:
        # Stored as protobuf, an empty list comes back as nil: JSON null.
        for name in ("endpoints", "ports"):
            if not obj.get(name):
                obj[name] = None
    head = {"metadata": obj.pop("metadata")}
    if not rtype.builtin:
        head = {"apiVersion": obj.pop("apiVersion"), "kind": obj.pop("kind"), **head}
    for name in rtype.body_keys:
        if name in obj:
            head[name] = obj.pop(name)
    head.update(obj)
    return head


class IpAllocator:
    """Hands out ClusterIPs the way the service IP allocator would (no reuse while in use)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.used = set()
        self.next_v4 = int(ipaddress.IPv4Address("10.96.64.1"))
        self.next_v6 = int(ipaddress.IPv6Address("fd00:10:96::4001"))

    def mark(self, ips):
        with self.lock:
            self.used.update(ip for ip in ips if ip and ip != "None")

    def allocate(self, family):
        with self.lock:
            while True:
                if family == "IPv6":
                    ip = str(ipaddress.IPv6Address(self.next_v6))
                    self.next_v6 += 1
                else:
                    ip = str(ipaddress.IPv4Address(self.next_v4))
                    self.next_v4 += 1
                if ip not in self.used:
                    self.used.add(ip)
                    return ip


ALLOCATOR = IpAllocator()


def ip_family(ip):
    try:
        return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    except ValueError:
        return None


def _default_service(spec):
    spec.setdefault("type", "ClusterIP")
    if spec["type"] == "ExternalName":
        spec.setdefault("sessionAffinity", "None")
        return
    for port in spec.get("ports") or ():
        port.setdefault("protocol", "TCP")
        if not port.get("targetPort"):     # absent, 0 or "": SetDefaults_ServicePort
            port["targetPort"] = port.get("port")
    if spec.get("clusterIPs") and not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0]
    headless = spec.get("clusterIP") == "None"
    policy = spec.get("ipFamilyPolicy")
    if not policy:
        policy = "RequireDualStack" if headless and not spec.get("selector") else "SingleStack"
        spec["ipFamilyPolicy"] = policy
    if not spec.get("ipFamilies"):
        if spec.get("clusterIPs") and not headless:
            spec["ipFamilies"] = [ip_family(ip) for ip in spec["clusterIPs"]]
        elif spec.get("clusterIP") and not headless:
            spec["ipFamilies"] = [ip_family(spec["clusterIP"])]
        else:
            spec["ipFamilies"] = ["IPv4", "IPv6"] if policy != "SingleStack" else ["IPv4"]
        if policy != "SingleStack" and len(spec["ipFamilies"]) == 1:
            other = "IPv6" if spec["ipFamilies"][0] == "IPv4" else "IPv4"
            spec["ipFamilies"].append(other)
    if not spec.get("clusterIP"):
        spec["clusterIP"] = ALLOCATOR.allocate(spec["ipFamilies"][0])
    if not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    if headless:
        spec["clusterIPs"] = ["None"]
    elif policy != "SingleStack" and len(spec["clusterIPs"]) < len(spec["ipFamilies"]):
        spec["clusterIPs"].append(ALLOCATOR.allocate(spec["ipFamilies"][1]))
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("internalTrafficPolicy", "Cluster")


def apply_defaults(rtype, obj):
    """Defaulting as the API server's scheme does it for the fields DNS cares about."""
    meta = obj["metadata"]
    if rtype is resources.SERVICES:
        spec = obj.setdefault("spec", {})
        _default_service(spec)
        obj.setdefault("status", {"loadBalancer": {}})
    elif rtype is resources.NAMESPACES:
        meta["labels"] = dict(meta.get("labels") or {}, **{"kubernetes.io/metadata.name": meta["name"]})
        # The strategy adds the kubernetes finalizer to whatever spec the client sent ({} too).
        spec = obj.setdefault("spec", {})
        finalizers = spec.get("finalizers") or []
        if "kubernetes" not in finalizers:
            spec["finalizers"] = finalizers + ["kubernetes"]
        obj.setdefault("status", {"phase": "Active"})
    elif rtype is resources.PODS:
        spec = obj.setdefault("spec", {})
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        obj.setdefault("status", {"phase": "Pending"})
    elif rtype is resources.ENDPOINTSLICES:
        for port in obj.get("ports") or ():
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")
    elif rtype is resources.ENDPOINTS:
        for subset in obj.get("subsets") or ():
            for port in subset.get("ports") or ():
                port.setdefault("protocol", "TCP")
    elif rtype is resources.SERVICEIMPORTS:
        for port in (obj.get("spec") or {}).get("ports") or ():
            port.setdefault("protocol", "TCP")
    elif rtype.plural in resources.WORKLOADS:
        workloads.apply_defaults(rtype.plural, obj)


# -- validation --

def _name_errors(rtype, name):
    if rtype in (resources.CLUSTERROLES, resources.CLUSTERROLEBINDINGS):
        why = workloads.rbac_name_errors(name)
        return [("metadata.name", "FieldValueInvalid", f"Invalid value: \"{name}\": {why}")] if why else []
    if rtype in (resources.SERVICES, resources.NAMESPACES):
        rule, regex, what = "DNS-1035 label", _DNS1035_LABEL, "a lowercase RFC 1035 label"
        if rtype is resources.NAMESPACES:
            rule, regex, what = "DNS-1123 label", _DNS1123_LABEL, "a lowercase RFC 1123 label"
        if len(name) > 63 or not regex.match(name):
            return [("metadata.name", "FieldValueInvalid",
                     f"Invalid value: \"{name}\": a {rule} must consist of lower case alphanumeric "
                     f"characters or '-' ({what})")]
    elif len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        return [("metadata.name", "FieldValueInvalid",
                 f"Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower "
                 "case alphanumeric characters, '-' or '.', and must start and end with an "
                 "alphanumeric character")]
    return []


def _required(field):
    return (field, "FieldValueRequired", "Required value")


def _bad(field, value, why):
    shown = f'"{value}"' if isinstance(value, str) else json.dumps(value)
    return (field, "FieldValueInvalid", f"Invalid value: {shown}: {why}")


def _validate_ports(errs, ports, path, need_names, need_target=False):
    names = set()
    for n, port in enumerate(ports):
        where = f"{path}[{n}]"
        if not isinstance(port, dict):
            errs.append(_bad(where, port, "must be an object"))
            continue
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            errs.append(_bad(f"{where}.port", number, "must be between 1 and 65535, inclusive"))
        if port.get("protocol", "TCP") not in ("TCP", "UDP", "SCTP"):
            errs.append(("%s.protocol" % where, "FieldValueNotSupported",
                         f"Unsupported value: \"{port.get('protocol')}\": supported values: "
                         "\"SCTP\", \"TCP\", \"UDP\""))
        name = port.get("name", "")
        if need_names and not name:
            errs.append(_required(f"{where}.name"))
        if name and name in names:
            errs.append((f"{where}.name", "FieldValueDuplicate", f"Duplicate value: \"{name}\""))
        names.add(name)


def _validate_service(spec, errs):
    kind = spec.get("type", "ClusterIP")
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        errs.append(("spec.type", "FieldValueNotSupported",
                     f"Unsupported value: \"{kind}\": supported values: \"ClusterIP\", "
                     "\"ExternalName\", \"LoadBalancer\", \"NodePort\""))
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if kind == "ExternalName":
        target = spec.get("externalName", "")
        if not target:
            errs.append(_required("spec.externalName"))
        elif not _DNS1123_SUBDOMAIN.match(target.rstrip(".")):
            errs.append(_bad("spec.externalName", target, "a lowercase RFC 1123 subdomain"))
    elif not ports and not headless:
        errs.append(_required("spec.ports"))
    _validate_ports(errs, ports, "spec.ports", need_names=len(ports) > 1)
    for n, ip in enumerate(spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])):
        if ip != "None" and ip_family(ip) is None:
            errs.append(_bad(f"spec.clusterIPs[{n}]", ip, "must be a valid IP address, (e.g. 10.9.8.7 "
                             "or 2001:db8::ffff)"))


def _validate_endpointslice(obj, errs):
    family = obj.get("addressType")
    if not family:
        errs.append(_required("addressType"))
    elif family not in ("IPv4", "IPv6", "FQDN"):
        errs.append(("addressType", "FieldValueNotSupported",
                     f"Unsupported value: \"{family}\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""))
    endpoints = obj.get("endpoints") or []
    if len(endpoints) > 1000:
        errs.append(("endpoints", "FieldValueTooMany", f"Too many: {len(endpoints)}: must have at most 1000 items"))
    for n, ep in enumerate(endpoints):
        addrs = ep.get("addresses") if isinstance(ep, dict) else None
        if not addrs:
            errs.append(_required(f"endpoints[{n}].addresses"))
            continue
        if len(addrs) > 100:
            errs.append((f"endpoints[{n}].addresses", "FieldValueTooMany",
                         f"Too many: {len(addrs)}: must have at most 100 items"))
        for m, addr in enumerate(addrs):
            # As kube-apiserver 1.37 words them: a non-IP at its index, an IP of the other
            # family at the list (test_realk8s_fidelity.py compares).
            if family in ("IPv4", "IPv6") and ip_family(addr) is None:
                errs.append(_bad(f"endpoints[{n}].addresses[{m}]", addr, "must be a valid IP "
                                 "address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
            elif family in ("IPv4", "IPv6") and ip_family(addr) != family:
                errs.append(_bad(f"endpoints[{n}].addresses", addr, f"must be an {family} address"))
        host = ep.get("hostname")
        if host is not None and not _DNS1123_LABEL.match(host):
            errs.append(_bad(f"endpoints[{n}].hostname", host, "a lowercase RFC 1123 label"))
    ports = obj.get("ports") or []
    if len(ports) > 100:
        errs.append(("ports", "FieldValueTooMany", f"Too many: {len(ports)}: must have at most 100 items"))


def validate(rtype, obj):
    """Raises 422 Invalid listing every problem, like the registry's validation."""
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    errs = []
    if not name:
        errs.append(("metadata.name", "FieldValueRequired", "Required value: name or generateName is required"))
    else:
        errs.extend(_name_errors(rtype, name))
    if rtype.namespaced and not meta.get("namespace"):
        errs.append(_required("metadata.namespace"))
    workloads.validate_labels(errs, meta.get("labels"), "metadata.labels")
    workloads.validate_annotations(errs, meta.get("annotations"), "metadata.annotations")
    workloads.validate(rtype.plural, obj, errs)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if rtype is resources.SERVICES:
        _validate_service(spec, errs)
    elif rtype is resources.ENDPOINTSLICES:
        _validate_endpointslice(obj, errs)
    elif rtype is resources.PODS:
        containers = spec.get("containers") or []
        if not containers:
            errs.append(_required("spec.containers"))
        for n, c in enumerate(containers):
            if not c.get("name"):
                errs.append(_required(f"spec.containers[{n}].name"))
            if not c.get("image"):
                errs.append(_required(f"spec.containers[{n}].image"))
    elif rtype is resources.SERVICEIMPORTS:
        kind = spec.get("type")
        if kind not in ("ClusterSetIP", "Headless"):
            errs.append(("spec.type", "FieldValueNotSupported",
                         f"Unsupported value: \"{kind}\": supported values: \"ClusterSetIP\", \"Headless\""))
        if not isinstance(spec.get("ports"), list):
            errs.append(_required("spec.ports"))
        else:
            _validate_ports(errs, spec["ports"], "spec.ports", need_names=False)
        if len(spec.get("ips") or []) > 2:
            errs.append(("spec.ips", "FieldValueTooMany", "Too many: must have at most 2 items"))
    elif rtype is resources.CLUSTERPROPERTIES:
        if not spec.get("value"):
            errs.append(_required("spec.value"))
    if errs:
        raise invalid(rtype.kind, rtype.group, name, errs)


# -- server-set metadata --

def _fields_v1(value):
    """The FieldsV1 set of the fields a manager wrote (list keys approximated by name/port)."""
    if isinstance(value, dict):
        return {f"f:{k}": _fields_v1(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        out = {}
        for item in value:
            if "port" in item:
                key = {"port": item["port"], "protocol": item.get("protocol", "TCP")}
            elif "name" in item:
                key = {"name": item["name"]}
            else:
                return {}
            out["k:" + json.dumps(key, separators=(",", ":"), sort_keys=True)] = dict(
                {".": {}}, **_fields_v1(item))
        return out
    return {}


def managed_fields(rtype, obj, manager, stamp):
    meta = obj["metadata"]
    owned = {}
    meta_part = {k: meta[k] for k in ("labels", "annotations", "ownerReferences") if k in meta}
    if meta_part:
        owned["f:metadata"] = _fields_v1(meta_part)
    for k, v in obj.items():
        if k not in ("metadata", "status", "kind", "apiVersion"):
            owned[f"f:{k}"] = _fields_v1(v)
    return [{"manager": manager, "operation": "Update", "apiVersion": rtype.api_version,
             "time": stamp, "fieldsType": "FieldsV1", "fieldsV1": owned}]


def _generate_name(prefix):
    return prefix + "".join(random.choice(_SUFFIX_ALPHABET) for _ in range(5))


def check_type_meta(rtype, obj):
    """400 unless the body's kind and apiVersion, where given, are those of rtype."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind and kind != rtype.kind:
        raise ApiError(400, "BadRequest", f"the kind in the data ({kind}) does not match the "
                       f"expected kind ({rtype.kind})")
    if api_version and api_version != rtype.api_version:
        raise ApiError(400, "BadRequest", f"the API version in the data ({api_version}) does not "
                       f"match the expected API version ({rtype.api_version})")


def check_types(rtype, body):
    """400 when a field of a workload kind has a value of the wrong JSON type (the decoder's
    error, whatever fieldValidation says)."""
    if rtype.plural in resources.WORKLOADS:
        message = workloads.decode_error(rtype.kind, rtype.version, body, rtype.plural)
        if message:
            raise ApiError(400, "BadRequest", message)


def prepare_create(rtype, body, namespace, manager=None, server_side=True, check=True):
    """The object the store keeps for a create (POST, or the control API's apply).

    server_side=True applies what the REST create does: status reset, managedFields.
    check=False skips validation (the control API may store objects the server would refuse)."""
    if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
        raise ApiError(400, "BadRequest", "the body of the request was not a valid object")
    check_type_meta(rtype, body)
    if check:
        check_types(rtype, body)
    obj = copy.deepcopy(body)
    meta = obj.setdefault("metadata", {})
    if rtype.namespaced:
        if namespace and meta.get("namespace") and meta["namespace"] != namespace:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match "
                           "the namespace sent on the request")
        if namespace:
            meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = _generate_name(meta["generateName"])
    stamp = now_rfc3339()
    for server_field in ("resourceVersion", "selfLink", "deletionTimestamp"):
        meta.pop(server_field, None)
    if server_side or not meta.get("uid"):
        meta["uid"] = str(uuid.uuid4())
    if server_side or not meta.get("creationTimestamp"):
        meta["creationTimestamp"] = stamp
    if rtype in (resources.ENDPOINTSLICES, resources.SERVICEIMPORTS, resources.CLUSTERPROPERTIES,
                 resources.DEPLOYMENTS, resources.PODDISRUPTIONBUDGETS):
        meta["generation"] = 1
    if server_side:
        if rtype.plural in STATUS_SUBRESOURCE and rtype.plural not in STATUS_ON_CREATE:
            obj.pop("status", None)
        meta.pop("managedFields", None)
    if server_side and check and rtype is resources.SERVICES:
        _check_cluster_ips_create(obj)
    apply_defaults(rtype, obj)
    if check:
        validate(rtype, obj)
    if server_side and manager:
        meta["managedFields"] = managed_fields(rtype, obj, manager, stamp)
    if rtype is resources.SERVICES:
        ALLOCATOR.mark(obj["spec"].get("clusterIPs") or [])
    return normalize(rtype, obj)


def _check_cluster_ips_create(obj):
    """A client's create naming clusterIPs but no clusterIP: refused before defaulting (the
    real server's validation; found by tests/integration/realk8s/test_realk8s_fidelity.py). The
    control API, which stores what a controller wrote, keeps defaulting clusterIP from it."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    ips = spec.get("clusterIPs")
    if ips and not spec.get("clusterIP") and spec.get("type") != "ExternalName":
        quoted = ",".join(json.dumps(ip) for ip in ips)
        raise invalid("Service", "", obj["metadata"].get("name", ""),
                      [("spec.clusterIPs", "FieldValueInvalid",
                        f"Invalid value: [{quoted}]: must be empty when `clusterIP` is not specified")])


def prepare_update(rtype, body, current, manager=None, server_side=True, check=True):
    """The object the store keeps for a replace of current (a Record) by body."""
    if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
        raise ApiError(400, "BadRequest", "the body of the request was not a valid object")
    check_type_meta(rtype, body)
    if check:
        check_types(rtype, body)
    old = current.to_dict()
    old_meta = old["metadata"]
    obj = copy.deepcopy(body)
    meta = obj.setdefault("metadata", {})
    name = old_meta["name"]
    want_rv = meta.get("resourceVersion")
    if want_rv and want_rv != old_meta["resourceVersion"]:
        raise conflict(rtype, name)
    if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
        raise ApiError(409, "Conflict", f"Precondition failed: UID in precondition: {meta['uid']}, "
                       f"UID in object meta: {old_meta.get('uid')}",
                       {"name": name, "kind": rtype.plural})
    for kept in ("uid", "creationTimestamp", "namespace", "name"):
        if kept in old_meta:
            meta[kept] = old_meta[kept]
    meta.pop("resourceVersion", None)
    if rtype is resources.SERVICES:
        spec, old_spec = obj.setdefault("spec", {}), old.get("spec", {})
        for allocated in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not spec.get(allocated) and old_spec.get(allocated) and spec.get("type") != "ExternalName":
                spec[allocated] = old_spec[allocated]
        if (old_spec.get("clusterIP") and spec.get("clusterIP") != old_spec.get("clusterIP")
                and spec.get("type") != "ExternalName" and old_spec.get("type") != "ExternalName"):
            raise invalid(rtype.kind, rtype.group, name,
                          [("spec.clusterIPs[0]", "FieldValueInvalid",
                            f"Invalid value: []string{{\"{spec.get('clusterIP')}\"}}: may not change once set")])
    if server_side and rtype.plural in STATUS_SUBRESOURCE:
        # The main resource ignores status: only the status subresource writes it.
        if "status" in old:
            obj["status"] = old["status"]
        else:
            obj.pop("status", None)
    if "generation" in old_meta:
        changed = any(obj.get(k) != old.get(k) for k in set(obj) | set(old)
                      if k not in ("metadata", "status", "kind", "apiVersion"))
        meta["generation"] = old_meta["generation"] + (1 if changed else 0)
    apply_defaults(rtype, obj)
    if check:
        validate(rtype, obj)
        errs = []
        workloads.validate_update(rtype.plural, obj, old, errs)
        if errs:
            raise invalid(rtype.kind, rtype.group, name, errs)
    if server_side and manager:
        meta["managedFields"] = managed_fields(rtype, obj, manager, now_rfc3339())
    elif "managedFields" not in meta and "managedFields" in old_meta:
        meta["managedFields"] = old_meta["managedFields"]
    if rtype is resources.SERVICES:
        ALLOCATOR.mark(obj["spec"].get("clusterIPs") or [])
    return normalize(rtype, obj)


_META_FIELDS = frozenset(META_ORDER)
_SERVICE_PORT = frozenset(("name", "protocol", "appProtocol", "port", "targetPort", "nodePort"))
_KNOWN = {
    # (type plural, path) -> field names a strict decoder accepts; paths not listed are not checked.
    ("services", "spec"): frozenset((
        "ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity",
        "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy",
        "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies",
        "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass",
        "internalTrafficPolicy", "trafficDistribution")),
    ("services", "spec.ports[]"): _SERVICE_PORT,
    ("services", "status"): frozenset(("loadBalancer", "conditions")),
    ("endpointslices", "endpoints[]"): frozenset((
        "addresses", "conditions", "hostname", "targetRef", "deprecatedTopology", "nodeName", "zone",
        "hints")),
    ("endpointslices", "endpoints[].conditions"): frozenset(("ready", "serving", "terminating")),
    ("endpointslices", "ports[]"): frozenset(("name", "protocol", "port", "appProtocol")),
    ("namespaces", "spec"): frozenset(("finalizers",)),
    ("serviceimports", "spec"): frozenset((
        "ports", "ips", "type", "sessionAffinity", "sessionAffinityConfig", "ipFamilies",
        "internalTrafficPolicy", "trafficDistribution")),
    ("serviceimports", "spec.ports[]"): frozenset(("name", "protocol", "appProtocol", "port")),
    ("clusterproperties", "spec"): frozenset(("value",)),
}


def unknown_fields(rtype, obj):
    """Field paths a strict decoder (fieldValidation=Strict) would call unknown."""
    if rtype.plural in resources.WORKLOADS:
        return workloads.unknown_fields(rtype.plural, obj)
    found = []

    def check(value, path, allowed):
        if isinstance(value, dict):
            found.extend(f"{path}.{k}".lstrip(".") for k in value if k not in allowed)

    check(obj, "", {"apiVersion", "kind", "metadata", *rtype.body_keys})
    check(obj.get("metadata"), "metadata", _META_FIELDS)
    for (plural, path), allowed in _KNOWN.items():
        if plural != rtype.plural:
            continue
        values = [obj]
        for part in path.split("."):
            name, is_list = part.rstrip("[]"), part.endswith("[]")
            values = [v.get(name) for v in values if isinstance(v, dict)]
            if is_list:
                values = [item for v in values if isinstance(v, list) for item in v]
        for n, value in enumerate(values):
            shown = path.replace("[]", "") if not path.endswith("[]") else path[:-2] + f"[{n}]"
            check(value, shown, allowed)
    return found


def same_content(new, old):
    """Whether an update changes nothing but server-managed bookkeeping."""
    def strip(obj):
        meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")}
        return dict(obj, metadata=meta)
    return strip(new) == strip(old)


def prepare_load(rtype, body):
    """An object from a manifest file, stored as it is apart from missing server fields."""
    return prepare_create(rtype, body, None, server_side=False)


def conflict(rtype, name):
    return ApiError(409, "Conflict", f"Operation cannot be fulfilled on {rtype.group_resource} "
                    f"\"{name}\": the object has been modified; please apply your changes to the "
                    "latest version and try again",
                    {"name": name, "group": rtype.group, "kind": rtype.plural} if rtype.group
                    else {"name": name, "kind": rtype.plural})


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (also used for strategic merge patches: lists are replaced)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def json_patch(target, ops):
    """RFC 6902 JSON patch (add, remove, replace, test)."""
    doc = copy.deepcopy(target)
    for op in ops:
        path = [p.replace("~1", "/").replace("~0", "~") for p in op.get("path", "").split("/")[1:]]
        if not path:
            raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
        parent = doc
        for part in path[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent.setdefault(part, {})
        last = path[-1]
        kind = op.get("op")
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if kind == "add":
                parent.insert(index, op.get("value"))
            elif kind == "remove":
                parent.pop(index)
            elif kind == "replace":
                parent[index] = op.get("value")
            elif kind == "test" and parent[index] != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request: test operation failed")
        else:
            if kind in ("add", "replace"):
                parent[last] = op.get("value")
            elif kind == "remove":
                parent.pop(last, None)
            elif kind == "test" and parent.get(last) != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request: test operation failed")
    return doc
