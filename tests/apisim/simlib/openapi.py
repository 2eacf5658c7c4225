"""OpenAPI documents, as far as clients read them.

kubectl create/replace/apply fetch /openapi/v3 and the document of the object's group version
to learn whether the server validates fields itself (a PATCH operation of the kind with a
fieldValidation query parameter).  Seeing it, kubectl sends fieldValidation=Strict and leaves
unknown-field checks to the server (apiserver.py).  Schemas are kept to the top-level shape.

A file holding a List makes kubectl validate on its side with the OpenAPI v2 document, which it
asks for in protobuf (gnostic openapi_v2.Document).  /openapi/v2 is served without definitions:
kubectl skips client-side checks of kinds it finds no schema for, and the server still checks."""

import functools
import hashlib
import json

from . import resources

_SCHEMA_PREFIX = {
    "": "io.k8s.api.core",
    "apps": "io.k8s.api.apps",
    "policy": "io.k8s.api.policy",
    "rbac.authorization.k8s.io": "io.k8s.api.rbac",
    "discovery.k8s.io": "io.k8s.api.discovery",
    "multicluster.x-k8s.io": "io.x-k8s.multicluster",
    "about.k8s.io": "io.k8s.about",
}


def _schema_name(rtype):
    """The schema's name in the OpenAPI documents, e.g. io.k8s.api.core.v1.Service."""
    return f"{_SCHEMA_PREFIX[rtype.group]}.{rtype.version}.{rtype.kind}"


def _gv_path(rtype):
    """The key of a group version in the /openapi/v3 index ("api/v1", "apis/GROUP/VERSION")."""
    return rtype.prefix.lstrip("/")


def _query(name, kind="string", description=""):
    return {"name": name, "in": "query", "description": description,
            "schema": {"type": kind, "uniqueItems": True}}


_WRITE_PARAMS = [
    _query("dryRun", description="When present, indicates that modifications should not be persisted."),
    _query("fieldManager", description="fieldManager is a name associated with the actor or entity "
           "that is making these changes."),
    _query("fieldValidation", description="fieldValidation instructs the server on how to handle "
           "objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid "
           "values are: Ignore, Warn, Strict."),
]
_LIST_PARAMS = [_query(n) for n in ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector",
                                    "limit", "resourceVersion", "resourceVersionMatch",
                                    "sendInitialEvents", "timeoutSeconds", "watch")]


def _operation(rtype, action, op_id, params, body=False):
    ref = {"$ref": f"#/components/schemas/{_schema_name(rtype)}"}
    op = {"tags": [rtype.group or "core_v1"], "operationId": op_id, "parameters": params,
          "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}},
          "x-kubernetes-action": action,
          "x-kubernetes-group-version-kind": {"group": rtype.group, "kind": rtype.kind,
                                              "version": rtype.version}}
    if body:
        op["requestBody"] = {"content": {"application/json": {"schema": ref}}, "required": True}
    return op


def _paths(rtype):
    base = rtype.prefix + ("/namespaces/{namespace}" if rtype.namespaced else "") + "/" + rtype.plural
    name = "".join(p.capitalize() for p in (rtype.group.split(".")[0] or "core", rtype.version))
    scope = "Namespaced" if rtype.namespaced else ""
    path_params = [{"name": "namespace", "in": "path", "required": True,
                    "schema": {"type": "string", "uniqueItems": True}}] if rtype.namespaced else []
    item_params = [{"name": "name", "in": "path", "required": True,
                    "schema": {"type": "string", "uniqueItems": True}}] + path_params
    return {
        base: {
            "get": _operation(rtype, "list", f"list{name}{scope}{rtype.kind}", _LIST_PARAMS),
            "post": _operation(rtype, "post", f"create{name}{scope}{rtype.kind}", _WRITE_PARAMS, True),
            "parameters": path_params,
        },
        base + "/{name}": {
            "get": _operation(rtype, "get", f"read{name}{scope}{rtype.kind}", []),
            "put": _operation(rtype, "put", f"replace{name}{scope}{rtype.kind}", _WRITE_PARAMS, True),
            "patch": _operation(rtype, "patch", f"patch{name}{scope}{rtype.kind}",
                                _WRITE_PARAMS + [_query("force", "boolean")], True),
            "delete": _operation(rtype, "delete", f"delete{name}{scope}{rtype.kind}",
                                 [_query("dryRun"), _query("gracePeriodSeconds", "integer"),
                                  _query("propagationPolicy")]),
            "parameters": item_params,
        },
    }


def _schema(rtype):
    props = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
             "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
                          "default": {}}}
    for key in rtype.body_keys:
        props[key] = {"type": "string"} if key == "addressType" else (
            {"type": "array", "items": {"type": "object"}}
            if key in ("endpoints", "ports", "subsets", "secrets", "imagePullSecrets", "rules", "subjects")
            else {"type": "boolean"} if key in ("immutable", "automountServiceAccountToken")
            else {"type": "object"})
    return {"type": "object", "properties": props,
            "x-kubernetes-group-version-kind": [{"group": rtype.group, "kind": rtype.kind,
                                                 "version": rtype.version}]}


@functools.lru_cache(maxsize=None)
def _gv_document(gv_path):
    served = [r for r in resources.ALL if _gv_path(r) == gv_path]
    if not served:
        return None
    paths, schemas = {}, {"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
        "type": "object", "properties": {k: {"type": "string"} for k in (
            "name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp")}}}
    for rtype in served:
        paths.update(_paths(rtype))
        schemas[_schema_name(rtype)] = _schema(rtype)
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.4"},
            "paths": paths, "components": {"schemas": schemas}}


def etag(rest):
    doc = _gv_document(rest) if rest else index({})
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:128].upper()


def index(absent):
    """The /openapi/v3 discovery document: group versions and where their documents live."""
    out = {}
    for rtype in resources.ALL:
        key = _gv_path(rtype)
        if rtype.plural in absent or key in out:
            continue
        out[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={etag(key)}"}
    return {"paths": out}


def document(rest, absent):
    """The document for the path after /openapi/ (v3 or v3/GVPATH), or None (404)."""
    if rest == "v3":
        return index(absent)
    if rest.startswith("v3/"):
        gv_path = rest[3:]
        served = [r for r in resources.ALL if _gv_path(r) == gv_path and r.plural not in absent]
        return _gv_document(gv_path) if served else None
    return None


# Clients ask for either form; the server answers with the dotted one ('@' is no MIME token char).
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
V2_PROTOBUF_ACCEPT = ("com.github.proto-openapi.spec.v2@v1.0+protobuf",
                      "com.github.proto-openapi.spec.v2.v1.0+protobuf")


def _pb_field(number, payload):
    """A length-delimited protobuf field (wire type 2)."""
    def varint(n):
        out = bytearray()
        while True:
            byte, n = n & 0x7F, n >> 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def v2_document(protobuf):
    """The /openapi/v2 document: swagger 2.0, info, empty paths and definitions."""
    if protobuf:
        # Document: swagger = 1, info = 2 (Info: title = 1, version = 2), paths = 8, definitions = 9.
        info = _pb_field(1, "Kubernetes") + _pb_field(2, "v1.32.4")
        return _pb_field(1, "2.0") + _pb_field(2, info) + _pb_field(8, b"") + _pb_field(9, b"")
    return json.dumps({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.4"},
                       "paths": {}, "definitions": {}}, separators=(",", ":")).encode()
