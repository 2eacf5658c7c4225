"""The kinds of packaging/kubernetes the API server must accept before mod-k8s runs:
Deployment, ServiceAccount, ConfigMap, PodDisruptionBudget, ClusterRole, ClusterRoleBinding.

Their schemas (the fields of the Go types of Kubernetes 1.32, for strict decoding and type
checks: 400 BadRequest), their defaulting, and the registries' validation (422 Invalid) of
what a deployment manifest writes.  Rarely used volume and pod fields are typed ANY: they
are known (no unknown-field error) but their contents are not checked."""

import re

# -- schemas --
# A field's type: a name below, ("map", T), ("list", T), or a dict of fields (an object).
S, I, B, N, IOS, Q, ANY = "string", "integer", "boolean", "number", "int-or-string", "quantity", "any"


def M(value):
    return ("map", value)


def L(value):
    return ("list", value)


META = {"name": S, "generateName": S, "namespace": S, "selfLink": S, "uid": S,
        "resourceVersion": S, "generation": I, "creationTimestamp": ANY, "deletionTimestamp": ANY,
        "deletionGracePeriodSeconds": I, "labels": M(S), "annotations": M(S),
        "ownerReferences": L({"apiVersion": S, "kind": S, "name": S, "uid": S, "controller": B,
                              "blockOwnerDeletion": B}),
        "finalizers": L(S), "managedFields": L(ANY)}
REQUIREMENT = {"key": S, "operator": S, "values": L(S)}
LABEL_SELECTOR = {"matchLabels": M(S), "matchExpressions": L(REQUIREMENT)}
KEY_REF = {"name": S, "key": S, "optional": B}
EXEC = {"command": L(S)}
HTTP_GET = {"path": S, "port": IOS, "host": S, "scheme": S, "httpHeaders": L({"name": S, "value": S})}
TCP_SOCKET = {"port": IOS, "host": S}
PROBE = {"exec": EXEC, "httpGet": HTTP_GET, "tcpSocket": TCP_SOCKET, "grpc": {"port": I, "service": S},
         "initialDelaySeconds": I, "timeoutSeconds": I, "periodSeconds": I, "successThreshold": I,
         "failureThreshold": I, "terminationGracePeriodSeconds": I}
HANDLER = {"exec": EXEC, "httpGet": HTTP_GET, "tcpSocket": TCP_SOCKET, "sleep": {"seconds": I}}
SECCOMP = {"type": S, "localhostProfile": S}
SE_LINUX = {"user": S, "role": S, "type": S, "level": S}
WINDOWS = {"gmsaCredentialSpecName": S, "gmsaCredentialSpec": S, "runAsUserName": S, "hostProcess": B}
SECURITY_CONTEXT = {"capabilities": {"add": L(S), "drop": L(S)}, "privileged": B,
                    "seLinuxOptions": SE_LINUX, "windowsOptions": WINDOWS, "runAsUser": I,
                    "runAsGroup": I, "runAsNonRoot": B, "readOnlyRootFilesystem": B,
                    "allowPrivilegeEscalation": B, "procMount": S, "seccompProfile": SECCOMP,
                    "appArmorProfile": SECCOMP}
POD_SECURITY_CONTEXT = {"seLinuxOptions": SE_LINUX, "windowsOptions": WINDOWS, "runAsUser": I,
                        "runAsGroup": I, "runAsNonRoot": B, "supplementalGroups": L(I),
                        "supplementalGroupsPolicy": S, "fsGroup": I,
                        "sysctls": L({"name": S, "value": S}), "fsGroupChangePolicy": S,
                        "seccompProfile": SECCOMP, "appArmorProfile": SECCOMP,
                        "seLinuxChangePolicy": S}
RESOURCES = {"limits": M(Q), "requests": M(Q), "claims": L({"name": S, "request": S})}
CONTAINER = {
    "name": S, "image": S, "command": L(S), "args": L(S), "workingDir": S,
    "ports": L({"name": S, "hostPort": I, "containerPort": I, "protocol": S, "hostIP": S}),
    "envFrom": L({"prefix": S, "configMapRef": {"name": S, "optional": B},
                  "secretRef": {"name": S, "optional": B}}),
    "env": L({"name": S, "value": S, "valueFrom": {
        "fieldRef": {"apiVersion": S, "fieldPath": S},
        "resourceFieldRef": {"containerName": S, "resource": S, "divisor": Q},
        "configMapKeyRef": KEY_REF, "secretKeyRef": KEY_REF}}),
    "resources": RESOURCES, "resizePolicy": L({"resourceName": S, "restartPolicy": S}),
    "restartPolicy": S,
    "volumeMounts": L({"name": S, "readOnly": B, "recursiveReadOnly": S, "mountPath": S,
                       "subPath": S, "mountPropagation": S, "subPathExpr": S}),
    "volumeDevices": L({"name": S, "devicePath": S}),
    "livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE,
    "lifecycle": {"postStart": HANDLER, "preStop": HANDLER},
    "terminationMessagePath": S, "terminationMessagePolicy": S, "imagePullPolicy": S,
    "securityContext": SECURITY_CONTEXT, "stdin": B, "stdinOnce": B, "tty": B}
KEY_TO_PATH = L({"key": S, "path": S, "mode": I})
VOLUME_SOURCES = {
    "configMap": {"name": S, "items": KEY_TO_PATH, "defaultMode": I, "optional": B},
    "secret": {"secretName": S, "items": KEY_TO_PATH, "defaultMode": I, "optional": B},
    "emptyDir": {"medium": S, "sizeLimit": Q},
    "hostPath": {"path": S, "type": S},
    "persistentVolumeClaim": {"claimName": S, "readOnly": B},
    "projected": {"sources": L(ANY), "defaultMode": I},
    "downwardAPI": ANY, "csi": ANY, "ephemeral": ANY, "image": {"reference": S, "pullPolicy": S},
    "nfs": ANY, "iscsi": ANY, "rbd": ANY, "cephfs": ANY, "fc": ANY, "flocker": ANY,
    "gitRepo": ANY, "glusterfs": ANY, "awsElasticBlockStore": ANY, "gcePersistentDisk": ANY,
    "azureDisk": ANY, "azureFile": ANY, "cinder": ANY, "flexVolume": ANY, "vsphereVolume": ANY,
    "quobyte": ANY, "photonPersistentDisk": ANY, "portworxVolume": ANY, "scaleIO": ANY,
    "storageos": ANY}
VOLUME = dict({"name": S}, **VOLUME_SOURCES)
NODE_SELECTOR_TERM = {"matchExpressions": L(REQUIREMENT), "matchFields": L(REQUIREMENT)}
POD_AFFINITY_TERM = {"labelSelector": LABEL_SELECTOR, "namespaces": L(S), "topologyKey": S,
                     "namespaceSelector": LABEL_SELECTOR, "matchLabelKeys": L(S),
                     "mismatchLabelKeys": L(S)}
POD_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": L(POD_AFFINITY_TERM),
                "preferredDuringSchedulingIgnoredDuringExecution": L(
                    {"weight": I, "podAffinityTerm": POD_AFFINITY_TERM})}
AFFINITY = {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": L(NODE_SELECTOR_TERM)},
    "preferredDuringSchedulingIgnoredDuringExecution": L({"weight": I,
                                                          "preference": NODE_SELECTOR_TERM})},
    "podAffinity": POD_AFFINITY, "podAntiAffinity": POD_AFFINITY}
POD_SPEC = {
    "volumes": L(VOLUME), "initContainers": L(CONTAINER), "containers": L(CONTAINER),
    "ephemeralContainers": L(ANY), "restartPolicy": S, "terminationGracePeriodSeconds": I,
    "activeDeadlineSeconds": I, "dnsPolicy": S, "nodeSelector": M(S), "serviceAccountName": S,
    "serviceAccount": S, "automountServiceAccountToken": B, "nodeName": S, "hostNetwork": B,
    "hostPID": B, "hostIPC": B, "shareProcessNamespace": B, "securityContext": POD_SECURITY_CONTEXT,
    "imagePullSecrets": L({"name": S}), "hostname": S, "subdomain": S, "affinity": AFFINITY,
    "schedulerName": S,
    "tolerations": L({"key": S, "operator": S, "value": S, "effect": S, "tolerationSeconds": I}),
    "hostAliases": L({"ip": S, "hostnames": L(S)}), "priorityClassName": S, "priority": I,
    "dnsConfig": {"nameservers": L(S), "searches": L(S), "options": L({"name": S, "value": S})},
    "readinessGates": L({"conditionType": S}), "runtimeClassName": S, "enableServiceLinks": B,
    "preemptionPolicy": S, "overhead": M(Q),
    "topologySpreadConstraints": L({"maxSkew": I, "topologyKey": S, "whenUnsatisfiable": S,
                                    "labelSelector": LABEL_SELECTOR, "minDomains": I,
                                    "nodeAffinityPolicy": S, "nodeTaintsPolicy": S,
                                    "matchLabelKeys": L(S)}),
    "setHostnameAsFQDN": B, "os": {"name": S}, "hostUsers": B, "schedulingGates": L({"name": S}),
    "resourceClaims": L(ANY), "resources": RESOURCES}

# Every field of each kind besides apiVersion, kind and metadata.
SCHEMAS = {
    "deployments": {
        "spec": {"replicas": I, "selector": LABEL_SELECTOR,
                 "template": {"metadata": META, "spec": POD_SPEC},
                 "strategy": {"type": S, "rollingUpdate": {"maxUnavailable": IOS, "maxSurge": IOS}},
                 "minReadySeconds": I, "revisionHistoryLimit": I, "paused": B,
                 "progressDeadlineSeconds": I},
        "status": ANY},
    "poddisruptionbudgets": {
        "spec": {"minAvailable": IOS, "selector": LABEL_SELECTOR, "maxUnavailable": IOS,
                 "unhealthyPodEvictionPolicy": S},
        "status": ANY},
    "serviceaccounts": {
        "secrets": L({"kind": S, "namespace": S, "name": S, "uid": S, "apiVersion": S,
                      "resourceVersion": S, "fieldPath": S}),
        "imagePullSecrets": L({"name": S}), "automountServiceAccountToken": B},
    "configmaps": {"immutable": B, "data": M(S), "binaryData": M(S)},
    "clusterroles": {
        "rules": L({"verbs": L(S), "apiGroups": L(S), "resources": L(S), "resourceNames": L(S),
                    "nonResourceURLs": L(S)}),
        "aggregationRule": {"clusterRoleSelectors": L(LABEL_SELECTOR)}},
    "clusterrolebindings": {
        "subjects": L({"kind": S, "apiGroup": S, "name": S, "namespace": S}),
        "roleRef": {"apiGroup": S, "kind": S, "name": S}},
    "roles": {
        "rules": L({"verbs": L(S), "apiGroups": L(S), "resources": L(S), "resourceNames": L(S),
                    "nonResourceURLs": L(S)})},
    "rolebindings": {
        "subjects": L({"kind": S, "apiGroup": S, "name": S, "namespace": S}),
        "roleRef": {"apiGroup": S, "kind": S, "name": S}},
}

_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_GO_TYPES = {S: "string", I: "int32", B: "bool", N: "float64", IOS: "intstr.IntOrString",
             Q: "resource.Quantity"}


def _json_type(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _walk(value, schema, path, unknown, wrong):
    """Collects unknown field paths and (path, value, expected) type mismatches."""
    if value is None or schema == ANY:
        return      # JSON null decodes to the zero value of any Go type
    if isinstance(schema, tuple):
        container, item = schema
        if container == "map":
            if not isinstance(value, dict):
                wrong.append((path, value, "map"))
                return
            for key, member in value.items():
                _walk(member, item, f"{path}.{key}" if item not in (S, Q) else path, unknown, wrong)
        else:
            if not isinstance(value, list):
                wrong.append((path, value, "array"))
                return
            for n, member in enumerate(value):
                _walk(member, item, f"{path}[{n}]", unknown, wrong)
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            wrong.append((path, value, "object"))
            return
        for key, member in value.items():
            where = f"{path}.{key}" if path else key
            if key not in schema:
                unknown.append(where)
            else:
                _walk(member, schema[key], where, unknown, wrong)
        return
    ok = {S: isinstance(value, str),
          I: isinstance(value, int) and not isinstance(value, bool),
          B: isinstance(value, bool),
          N: isinstance(value, (int, float)) and not isinstance(value, bool),
          IOS: isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)),
          Q: (isinstance(value, str) and bool(_QUANTITY.match(value)))
          or (isinstance(value, (int, float)) and not isinstance(value, bool))}[schema]
    if not ok:
        wrong.append((path, value, schema))


def _top(plural):
    return dict({"apiVersion": S, "kind": S, "metadata": META}, **SCHEMAS[plural])


def unknown_fields(plural, obj):
    """Field paths a strict decoder would call unknown, at any depth."""
    unknown = []
    _walk(obj, _top(plural), "", unknown, [])
    return unknown


def decode_error(kind, version, obj, plural):
    """The 400 message of the JSON decoder for the first value of a wrong type, or None."""
    wrong = []
    _walk(obj, _top(plural), "", [], wrong)
    if not wrong:
        return None
    path, value, expected = wrong[0]
    if expected == Q and isinstance(value, str):
        return ("quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    go_type = _GO_TYPES.get(expected, expected)
    return (f"{kind} in version \"{version}\" cannot be handled as a {kind}: json: cannot "
            f"unmarshal {_json_type(value)} into Go struct field {kind}.{path} of type {go_type}")


# -- defaulting (the scheme's SetDefaults_* for the fields a manifest leaves out) --

def _default_probe(probe):
    if isinstance(probe, dict):
        for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                           ("failureThreshold", 3)):
            probe.setdefault(key, value)
        if isinstance(probe.get("httpGet"), dict):
            probe["httpGet"].setdefault("path", "/")
            probe["httpGet"].setdefault("scheme", "HTTP")


def _default_container(c):
    image = c.get("image") or ""
    tag = image.rsplit("/", 1)[-1].partition("@")[0].partition(":")[2]
    c.setdefault("imagePullPolicy", "Always" if tag in ("", "latest") and "@" not in image
                 else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for port in c.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(name))


def _default_pod_spec(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if spec.get("serviceAccountName"):
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if isinstance(c, dict):
            _default_container(c)
    for volume in spec.get("volumes") or ():
        if isinstance(volume, dict):
            for source in ("configMap", "secret"):
                if isinstance(volume.get(source), dict):
                    volume[source].setdefault("defaultMode", 420)


def apply_defaults(plural, obj):
    if plural == "deployments":
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        spec.setdefault("replicas", 1)
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        template = spec.setdefault("template", {})
        if isinstance(template, dict) and isinstance(template.setdefault("spec", {}), dict):
            _default_pod_spec(template["spec"])
        obj.setdefault("status", {})
    elif plural == "poddisruptionbudgets":
        obj.setdefault("status", {"disruptionsAllowed": 0, "currentHealthy": 0,
                                  "desiredHealthy": 0, "expectedPods": 0})


# -- validation --

_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_PERCENT = re.compile(r"^[0-9]+%$")
_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
                "status.podIPs")
_RESOURCE_NAMES = ("cpu", "memory", "ephemeral-storage")
_RBAC_GROUP = "rbac.authorization.k8s.io"


def _shown(value):
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, (int, float)) else repr(value)


def _required(errs, path, detail=""):
    errs.append((path, "FieldValueRequired", "Required value" + (f": {detail}" if detail else "")))


def _invalid(errs, path, value, why):
    errs.append((path, "FieldValueInvalid", f"Invalid value: {_shown(value)}: {why}"))


def _unsupported(errs, path, value, supported):
    errs.append((path, "FieldValueNotSupported", f"Unsupported value: {_shown(value)}: supported "
                 "values: " + ", ".join(f'"{s}"' for s in supported)))


def _forbidden(errs, path, why):
    errs.append((path, "FieldValueForbidden", f"Forbidden: {why}"))


def _label_key_errors(key):
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " \
               "characters, '-' or '.', and must start and end with an alphanumeric character"
    if not name or len(name) > 63 or not _LABEL_NAME.match(name):
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must " \
               "start and end with an alphanumeric character"
    return None


def validate_labels(errs, labels, path):
    """Label keys and values as every object's metadata.labels (and selectors) need them."""
    if not isinstance(labels, dict):
        return
    for key, value in labels.items():
        why = _label_key_errors(key)
        if why:
            _invalid(errs, path, key, why)
        if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
            _invalid(errs, f"{path}", value, "a valid label must be an empty string or consist of "
                     "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                     "alphanumeric character")


def validate_annotations(errs, annotations, path):
    if isinstance(annotations, dict):
        for key in annotations:
            why = _label_key_errors(key.lower())
            if why:
                _invalid(errs, path, key, why)
        if sum(len(k) + len(v or "") for k, v in annotations.items()) > 256 * 1024:
            errs.append((path, "FieldValueTooLong", "Too long: must have at most 262144 bytes"))


def _selector_errors(errs, selector, path):
    if not isinstance(selector, dict):
        return
    validate_labels(errs, selector.get("matchLabels"), f"{path}.matchLabels")
    for n, req in enumerate(selector.get("matchExpressions") or ()):
        where = f"{path}.matchExpressions[{n}]"
        op, values = req.get("operator"), req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                _required(errs, f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                _forbidden(errs, f"{where}.values",
                           "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        else:
            _invalid(errs, f"{where}.operator", op, "not a valid selector operator")
        why = _label_key_errors(req.get("key") or "")
        if why:
            _invalid(errs, f"{where}.key", req.get("key") or "", why)


def _selector_matches(selector, labels):
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or ():
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        if (op == "In" and labels.get(key) not in values) or \
                (op == "NotIn" and key in labels and labels[key] in values) or \
                (op == "Exists" and key not in labels) or (op == "DoesNotExist" and key in labels):
            return False
    return True


_SUFFIXES = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
             "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}


def quantity_value(text):
    """A Quantity's value as a float (None when it is not one of the usual forms)."""
    match = re.match(r"^([+-]?[0-9.]+)([a-zA-Z]*)$", str(text))
    if not match or match.group(2) not in _SUFFIXES:
        return None
    try:
        return float(match.group(1)) * _SUFFIXES[match.group(2)]
    except ValueError:
        return None


def _validate_resources(errs, res, path):
    if not isinstance(res, dict):
        return
    for part in ("limits", "requests"):
        for name, value in (res.get(part) or {}).items():
            if name not in _RESOURCE_NAMES and not name.startswith("hugepages-") and "/" not in name:
                _unsupported(errs, f"{path}.{part}[{name}]", name, _RESOURCE_NAMES)
            amount = quantity_value(value)
            if amount is not None and amount < 0:
                _invalid(errs, f"{path}.{part}[{name}]", value, "must be greater than or equal to 0")
    limits = res.get("limits") or {}
    for name, value in (res.get("requests") or {}).items():
        if name in limits:
            want, cap = quantity_value(value), quantity_value(limits[name])
            if want is not None and cap is not None and want > cap:
                _invalid(errs, f"{path}.requests", value, f"must be less than or equal to {name} limit "
                         f"of {limits[name]}")


def _validate_port_ref(errs, port, path):
    if isinstance(port, int):
        if not 1 <= port <= 65535:
            _invalid(errs, path, port, "must be between 1 and 65535, inclusive")
    elif not (isinstance(port, str) and 0 < len(port) <= 15 and _IANA_SVC_NAME.match(port)
              and "--" not in port and re.search("[a-z]", port)):
        _invalid(errs, path, port, "must contain only alpha-numeric characters (a-z, 0-9), and "
                 "hyphens (-)")


def _validate_handler(errs, handler, path, what):
    kinds = [k for k in ("exec", "httpGet", "tcpSocket", "grpc", "sleep") if handler.get(k) is not None]
    if not kinds:
        _required(errs, path, f"must specify a {what} type")
    elif len(kinds) > 1:
        _forbidden(errs, f"{path}.{kinds[1]}", f"may not specify more than 1 {what} type")
    if isinstance(handler.get("exec"), dict) and not handler["exec"].get("command"):
        _required(errs, f"{path}.exec.command")
    http = handler.get("httpGet")
    if isinstance(http, dict):
        _validate_port_ref(errs, http.get("port"), f"{path}.httpGet.port")
        if http.get("scheme", "HTTP") not in ("HTTP", "HTTPS"):
            _unsupported(errs, f"{path}.httpGet.scheme", http.get("scheme"), ("HTTP", "HTTPS"))
    if isinstance(handler.get("tcpSocket"), dict):
        _validate_port_ref(errs, handler["tcpSocket"].get("port"), f"{path}.tcpSocket.port")


def _validate_probe(errs, probe, path, success_must_be_one):
    if not isinstance(probe, dict):
        return
    _validate_handler(errs, probe, path, "handler")
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                "failureThreshold"):
        value = probe.get(key)
        if isinstance(value, int) and value < 0:
            _invalid(errs, f"{path}.{key}", value, "must be greater than or equal to 0")
    if success_must_be_one and probe.get("successThreshold", 1) != 1:
        _invalid(errs, f"{path}.successThreshold", probe.get("successThreshold"), "must be 1")


def _validate_security_context(errs, sc, path):
    if not isinstance(sc, dict):
        return
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        value = sc.get(key)
        if isinstance(value, int) and not 0 <= value <= 2147483647:
            _invalid(errs, f"{path}.{key}", value, "must be between 0 and 2147483647, inclusive")
    seccomp = sc.get("seccompProfile")
    if isinstance(seccomp, dict):
        kind = seccomp.get("type")
        if kind not in ("RuntimeDefault", "Unconfined", "Localhost"):
            _unsupported(errs, f"{path}.seccompProfile.type", kind, ("Localhost", "RuntimeDefault",
                                                                     "Unconfined"))
        elif kind == "Localhost" and not seccomp.get("localhostProfile"):
            _required(errs, f"{path}.seccompProfile.localhostProfile",
                      "must be set when seccomp type is Localhost")
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged"):
            _invalid(errs, path, sc.get("allowPrivilegeEscalation"), "cannot set "
                     "`allowPrivilegeEscalation` to false and `privileged` to true")
        if "SYS_ADMIN" in ((sc.get("capabilities") or {}).get("add") or ()):
            _invalid(errs, path, False, "cannot set `allowPrivilegeEscalation` to false and "
                     "`capabilities.Add` CAP_SYS_ADMIN")


def _validate_container(errs, c, path, volumes, init):
    name = c.get("name") or ""
    if not name:
        _required(errs, f"{path}.name")
    elif len(name) > 63 or not _DNS1123_LABEL.match(name):
        _invalid(errs, f"{path}.name", name, "a lowercase RFC 1123 label must consist of lower case "
                 "alphanumeric characters or '-', and must start and end with an alphanumeric character")
    if not c.get("image"):
        _required(errs, f"{path}.image")
    policy = c.get("imagePullPolicy")
    if policy not in (None, "Always", "IfNotPresent", "Never"):
        _unsupported(errs, f"{path}.imagePullPolicy", policy, ("Always", "IfNotPresent", "Never"))
    if c.get("restartPolicy") is not None and (not init or c["restartPolicy"] != "Always"):
        _forbidden(errs, f"{path}.restartPolicy", "may not be set for non-init containers") if not init \
            else _unsupported(errs, f"{path}.restartPolicy", c["restartPolicy"], ("Always",))
    port_names = set()
    for n, port in enumerate(c.get("ports") or ()):
        where = f"{path}.ports[{n}]"
        number = port.get("containerPort")
        if number is None:
            _required(errs, f"{where}.containerPort")
        elif not 1 <= number <= 65535:
            _invalid(errs, f"{where}.containerPort", number, "must be between 1 and 65535, inclusive")
        if port.get("protocol", "TCP") not in ("TCP", "UDP", "SCTP"):
            _unsupported(errs, f"{where}.protocol", port.get("protocol"), ("SCTP", "TCP", "UDP"))
        pname = port.get("name")
        if pname:
            _validate_port_ref(errs, pname, f"{where}.name")
            if pname in port_names:
                errs.append((f"{where}.name", "FieldValueDuplicate", f'Duplicate value: "{pname}"'))
            port_names.add(pname)
    for n, env in enumerate(c.get("env") or ()):
        where = f"{path}.env[{n}]"
        ename = env.get("name") or ""
        if not ename:
            _required(errs, f"{where}.name")
        elif not _ENV_NAME.match(ename):
            _invalid(errs, f"{where}.name", ename, "a valid environment variable name must consist "
                     "of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit")
        source = env.get("valueFrom")
        if isinstance(source, dict):
            kinds = [k for k, v in source.items() if v is not None]
            if env.get("value"):
                _invalid(errs, f"{where}.valueFrom", "", "may not be specified when `value` is not empty")
            if len(kinds) != 1:
                _invalid(errs, f"{where}.valueFrom", "", "may not have more than one field specified "
                         "at a time" if kinds else "must specify one of: `fieldRef`, "
                         "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")
            ref = source.get("fieldRef")
            if isinstance(ref, dict):
                fpath = ref.get("fieldPath") or ""
                if not fpath:
                    _required(errs, f"{where}.valueFrom.fieldRef.fieldPath")
                elif fpath not in _FIELD_PATHS and not re.match(
                        r"^metadata\.(labels|annotations)\['[^']+'\]$", fpath):
                    _unsupported(errs, f"{where}.valueFrom.fieldRef.fieldPath", fpath, _FIELD_PATHS)
    _validate_resources(errs, c.get("resources"), f"{path}.resources")
    mount_paths = set()
    for n, mount in enumerate(c.get("volumeMounts") or ()):
        where = f"{path}.volumeMounts[{n}]"
        vname = mount.get("name") or ""
        if not vname:
            _required(errs, f"{where}.name")
        elif vname not in volumes:
            errs.append((f"{where}.name", "FieldValueNotFound", f'Not found: "{vname}"'))
        mpath = mount.get("mountPath") or ""
        if not mpath:
            _required(errs, f"{where}.mountPath")
        elif mpath in mount_paths:
            _invalid(errs, f"{where}.mountPath", mpath, "must be unique")
        mount_paths.add(mpath)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if init and c.get(probe) is not None and c.get("restartPolicy") != "Always":
            _forbidden(errs, f"{path}.{probe}", "may not be set for init containers without "
                       "restartPolicy=Always")
        _validate_probe(errs, c.get(probe), f"{path}.{probe}", probe != "readinessProbe")
    _validate_security_context(errs, c.get("securityContext"), f"{path}.securityContext")


def validate_pod_spec(errs, spec, path):
    if not isinstance(spec, dict):
        _required(errs, path)
        return
    volumes = set()
    for n, volume in enumerate(spec.get("volumes") or ()):
        where = f"{path}.volumes[{n}]"
        vname = volume.get("name") or ""
        if not vname:
            _required(errs, f"{where}.name")
        elif len(vname) > 63 or not _DNS1123_LABEL.match(vname):
            _invalid(errs, f"{where}.name", vname, "a lowercase RFC 1123 label must consist of lower "
                     "case alphanumeric characters or '-', and must start and end with an "
                     "alphanumeric character")
        elif vname in volumes:
            errs.append((f"{where}.name", "FieldValueDuplicate", f'Duplicate value: "{vname}"'))
        volumes.add(vname)
        sources = [k for k in VOLUME_SOURCES if volume.get(k) is not None]
        if not sources:
            _required(errs, where, "must specify a volume type")
        elif len(sources) > 1:
            _forbidden(errs, f"{where}.{sources[1]}", "may not specify more than 1 volume type")
        if isinstance(volume.get("configMap"), dict) and not volume["configMap"].get("name"):
            _required(errs, f"{where}.configMap.name")
        if isinstance(volume.get("secret"), dict) and not volume["secret"].get("secretName"):
            _required(errs, f"{where}.secret.secretName")
    containers = spec.get("containers") or []
    if not containers:
        _required(errs, f"{path}.containers")
    names = set()
    for part, init in (("initContainers", True), ("containers", False)):
        for n, c in enumerate(spec.get(part) or ()):
            if not isinstance(c, dict):
                continue
            _validate_container(errs, c, f"{path}.{part}[{n}]", volumes, init)
            if c.get("name") in names:
                errs.append((f"{path}.{part}[{n}].name", "FieldValueDuplicate",
                             f'Duplicate value: "{c["name"]}"'))
            names.add(c.get("name"))
    policy = spec.get("restartPolicy", "Always")
    if policy not in ("Always", "OnFailure", "Never"):
        _unsupported(errs, f"{path}.restartPolicy", policy, ("Always", "OnFailure", "Never"))
    dns = spec.get("dnsPolicy", "ClusterFirst")
    if dns not in ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"):
        _unsupported(errs, f"{path}.dnsPolicy", dns, ("ClusterFirst", "ClusterFirstWithHostNet",
                                                      "Default", "None"))
    elif dns == "None" and not spec.get("dnsConfig"):
        _required(errs, f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")
    for key in ("serviceAccountName", "priorityClassName", "schedulerName", "runtimeClassName"):
        value = spec.get(key)
        if value and (len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value)):
            _invalid(errs, f"{path}.{key}", value, "a lowercase RFC 1123 subdomain must consist of "
                     "lower case alphanumeric characters, '-' or '.', and must start and end with an "
                     "alphanumeric character")
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        _invalid(errs, f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0")
    validate_labels(errs, spec.get("nodeSelector"), f"{path}.nodeSelector")
    for n, tol in enumerate(spec.get("tolerations") or ()):
        where = f"{path}.tolerations[{n}]"
        op = tol.get("operator", "Equal")
        if op not in ("Equal", "Exists"):
            _unsupported(errs, f"{where}.operator", op, ("Equal", "Exists"))
        elif op == "Exists" and tol.get("value"):
            _invalid(errs, f"{where}.operator", tol["value"], "value must be empty when `operator` "
                     "is 'Exists'")
        if not tol.get("key") and op != "Exists":
            _invalid(errs, f"{where}.operator", op, "operator must be Exists when `key` is empty, "
                     "which means \"match all values and all keys\"")
        if tol.get("effect", "") not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            _unsupported(errs, f"{where}.effect", tol.get("effect"), ("NoExecute", "NoSchedule",
                                                                      "PreferNoSchedule"))
    for kind in ("podAffinity", "podAntiAffinity"):
        part = (spec.get("affinity") or {}).get(kind) or {}
        where = f"{path}.affinity.{kind}"
        terms = [(f"{where}.requiredDuringSchedulingIgnoredDuringExecution[{n}]", t)
                 for n, t in enumerate(part.get("requiredDuringSchedulingIgnoredDuringExecution") or ())]
        for n, weighted in enumerate(part.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
            wpath = f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{n}]"
            weight = weighted.get("weight")
            if not isinstance(weight, int) or not 1 <= weight <= 100:
                _invalid(errs, f"{wpath}.weight", weight, "must be in the range 1-100")
            terms.append((f"{wpath}.podAffinityTerm", weighted.get("podAffinityTerm") or {}))
        for tpath, term in terms:
            if not term.get("topologyKey"):
                _required(errs, f"{tpath}.topologyKey", "can not be empty")
            _selector_errors(errs, term.get("labelSelector"), f"{tpath}.labelSelector")
    _validate_security_context(errs, spec.get("securityContext"), f"{path}.securityContext")


def _int_or_percent(errs, value, path, at_most_100=False):
    if isinstance(value, int):
        if value < 0:
            _invalid(errs, path, value, "must be greater than or equal to 0")
        return value
    if isinstance(value, str):
        if not _PERCENT.match(value):
            _invalid(errs, path, value, "a valid percent string must be a numeric string followed by "
                     "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")
            return None
        percent = int(value[:-1])
        if at_most_100 and percent > 100:
            _invalid(errs, path, value, "must not be greater than 100%")
        return percent
    return None


def _validate_deployment(obj, errs):
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        _invalid(errs, "spec.replicas", replicas, "must be greater than or equal to 0")
    selector = spec.get("selector")
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not isinstance(selector, dict):
        _required(errs, "spec.selector")
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        _invalid(errs, "spec.selector", "{}", "empty selector is invalid for deployment")
    else:
        _selector_errors(errs, selector, "spec.selector")
        if not _selector_matches(selector, labels):
            _invalid(errs, "spec.template.metadata.labels", ",".join(
                f"{k}={v}" for k, v in sorted(labels.items())),
                "`selector` does not match template `labels`")
    validate_labels(errs, labels, "spec.template.metadata.labels")
    pod = template.get("spec")
    validate_pod_spec(errs, pod, "spec.template.spec")
    if isinstance(pod, dict) and pod.get("restartPolicy", "Always") != "Always":
        _unsupported(errs, "spec.template.spec.restartPolicy", pod["restartPolicy"], ("Always",))
    strategy = spec.get("strategy") or {}
    kind = strategy.get("type", "RollingUpdate")
    if kind not in ("Recreate", "RollingUpdate"):
        _unsupported(errs, "spec.strategy.type", kind, ("Recreate", "RollingUpdate"))
    elif kind == "Recreate" and strategy.get("rollingUpdate") is not None:
        _forbidden(errs, "spec.strategy.rollingUpdate",
                   "may not be specified when strategy `type` is 'Recreate'")
    rolling = strategy.get("rollingUpdate")
    if kind == "RollingUpdate" and isinstance(rolling, dict):
        where = "spec.strategy.rollingUpdate"
        unavailable = _int_or_percent(errs, rolling.get("maxUnavailable"), f"{where}.maxUnavailable", True)
        surge = _int_or_percent(errs, rolling.get("maxSurge"), f"{where}.maxSurge")
        if unavailable == 0 and surge == 0:
            _invalid(errs, f"{where}.maxUnavailable", rolling.get("maxUnavailable"),
                     "may not be 0 when `maxSurge` is 0")
    for key in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            _invalid(errs, f"spec.{key}", value, "must be greater than or equal to 0")
    deadline, ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds", 0)
    if isinstance(deadline, int) and isinstance(ready, int) and deadline <= ready:
        _invalid(errs, "spec.progressDeadlineSeconds", deadline,
                 "must be greater than minReadySeconds")


def _validate_pdb(obj, errs):
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        _invalid(errs, "spec", "", "minAvailable and maxUnavailable cannot be both set")
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            _int_or_percent(errs, spec[key], f"spec.{key}", True)
    _selector_errors(errs, spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("IfHealthyBudget", "AlwaysAllow"):
        _unsupported(errs, "spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget"))


def _validate_configmap(obj, errs):
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    total = 0
    for part, values in (("data", data), ("binaryData", binary)):
        for key, value in values.items():
            if len(key) > 253 or not _CONFIG_KEY.match(key) or key in (".", ".."):
                _invalid(errs, f"{part}[{key}]", key, "a valid config key must consist of "
                         "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
                         "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
            if part == "binaryData" and key in data:
                _invalid(errs, f"binaryData[{key}]", key, "duplicate of key present in data")
            total += len(key) + len(value or "")
    if total > 1024 * 1024:
        errs.append(("", "FieldValueTooLong", "Too long: must have at most 1048576 bytes"))


def rbac_name_errors(name):
    """ValidatePathSegmentName: RBAC names may hold ':' (system:...), not '/' or '%'."""
    if name in (".", ".."):
        return f"may not be '{name}'"
    for bad in ("/", "%"):
        if bad in name:
            return f"may not contain '{bad}'"
    return None


def _validate_clusterrole(obj, errs):
    for n, rule in enumerate(obj.get("rules") or ()):
        where = f"rules[{n}]"
        if not rule.get("verbs"):
            _required(errs, f"{where}.verbs", "verbs must contain at least one value")
        if rule.get("nonResourceURLs"):
            if rule.get("resources") or rule.get("apiGroups"):
                _invalid(errs, f"{where}.nonResourceURLs", rule["nonResourceURLs"],
                         "rules with nonResourceURLs cannot apply to resources or apiGroups")
        elif not rule.get("resources"):
            _required(errs, f"{where}.resources", "resource rules must supply at least one resource")
        elif not rule.get("apiGroups"):
            _required(errs, f"{where}.apiGroups", "resource rules must supply at least one api group")


def _validate_role(obj, errs):
    # A Role's rules are a ClusterRole's, without nonResourceURLs.
    for n, rule in enumerate(obj.get("rules") or ()):
        if rule.get("nonResourceURLs"):
            _invalid(errs, f"rules[{n}].nonResourceURLs", rule["nonResourceURLs"],
                     "namespaced rules cannot apply to non-resource URLs")
    _validate_clusterrole(obj, errs)


def _validate_rolebinding(obj, errs):
    _validate_clusterrolebinding(obj, errs, kinds=("Role", "ClusterRole"))


def _validate_clusterrolebinding(obj, errs, kinds=("ClusterRole",)):
    ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
    if ref.get("apiGroup") != _RBAC_GROUP:
        _unsupported(errs, "roleRef.apiGroup", ref.get("apiGroup", ""), (_RBAC_GROUP,))
    if ref.get("kind") not in kinds:
        _unsupported(errs, "roleRef.kind", ref.get("kind", ""), kinds)
    if not ref.get("name"):
        _required(errs, "roleRef.name")
    elif rbac_name_errors(ref["name"]):
        _invalid(errs, "roleRef.name", ref["name"], rbac_name_errors(ref["name"]))
    for n, subject in enumerate(obj.get("subjects") or ()):
        where = f"subjects[{n}]"
        kind, name = subject.get("kind"), subject.get("name") or ""
        if not name:
            _required(errs, f"{where}.name")
        if kind == "ServiceAccount":
            if subject.get("apiGroup"):
                _unsupported(errs, f"{where}.apiGroup", subject["apiGroup"], ("",))
            if name and (len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name)):
                _invalid(errs, f"{where}.name", name, "a lowercase RFC 1123 subdomain must consist "
                         "of lower case alphanumeric characters, '-' or '.', and must start and end "
                         "with an alphanumeric character")
            if not subject.get("namespace"):
                _required(errs, f"{where}.namespace")
        elif kind in ("User", "Group"):
            if subject.get("apiGroup") != _RBAC_GROUP:
                _unsupported(errs, f"{where}.apiGroup", subject.get("apiGroup", ""), (_RBAC_GROUP,))
        else:
            _unsupported(errs, f"{where}.kind", kind or "", ("ServiceAccount", "User", "Group"))


VALIDATORS = {"deployments": _validate_deployment, "poddisruptionbudgets": _validate_pdb,
              "configmaps": _validate_configmap, "clusterroles": _validate_clusterrole,
              "clusterrolebindings": _validate_clusterrolebinding, "roles": _validate_role,
              "rolebindings": _validate_rolebinding}


def validate(plural, obj, errs):
    """Adds the registry's validation errors of a workload object to errs."""
    check = VALIDATORS.get(plural)
    if check:
        check(obj, errs)


def validate_update(plural, new, old, errs):
    """Fields the registries make immutable."""
    if plural in ("clusterrolebindings", "rolebindings") and new.get("roleRef") != old.get("roleRef"):
        _invalid(errs, "roleRef", "", "cannot change roleRef")
    if plural == "deployments":
        new_sel = (new.get("spec") or {}).get("selector")
        old_sel = (old.get("spec") or {}).get("selector")
        if old_sel and new_sel != old_sel:
            _invalid(errs, "spec.selector", "", "field is immutable")
    if plural == "configmaps" and old.get("immutable") and (
            new.get("data") != old.get("data") or new.get("binaryData") != old.get("binaryData")):
        _forbidden(errs, "data", "field is immutable when `immutable` is set")
