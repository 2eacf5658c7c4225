"""JSON manifests: one object, a List (kind List or XList with items) or a JSON array per file."""

import json
import os

from . import objects, resources


class ManifestError(ValueError):
    pass


def expand(doc, where="body"):
    """The objects in a parsed manifest document, in order."""
    if isinstance(doc, list):
        out = []
        for item in doc:
            out.extend(expand(item, where))
        return out
    if not isinstance(doc, dict):
        raise ManifestError(f"{where}: expected a JSON object, a List or an array")
    if isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
        return expand(doc["items"], where)
    return [doc]


def type_of(obj, where="body"):
    """The served ResourceType of an object, checked against its apiVersion."""
    kind = obj.get("kind")
    if not kind:
        raise ManifestError(f"{where}: an object without kind (items of built-in lists carry none: "
                            "add kind and apiVersion)")
    rtype = resources.BY_KIND.get(kind)
    if rtype is None:
        raise ManifestError(f"{where}: kind {kind!r} is not served by the simulator")
    if obj.get("apiVersion", rtype.api_version) != rtype.api_version:
        raise ManifestError(f"{where}: {kind} must have apiVersion {rtype.api_version}, "
                            f"not {obj.get('apiVersion')}")
    return rtype


def files_of(paths):
    out = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                out.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".json"))
        else:
            out.append(path)
    return out


def read(paths):
    """[(ResourceType, object)] from files and directories (*.json, recursively, sorted);
    namespaces first so that the rest may live in them."""
    found = []
    for path in files_of(paths):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as err:
            raise ManifestError(f"{path}: {err}") from None
        for obj in expand(doc, path):
            found.append((type_of(obj, path), obj))
    found.sort(key=lambda pair: pair[0] is not resources.NAMESPACES)
    return found


def load(store, paths):
    """Stores every manifest object as already existing at start; returns how many."""
    count = 0
    for rtype, obj in read(paths):
        try:
            store.load(rtype, objects.prepare_load(rtype, obj))
        except objects.ApiError as err:
            name = (obj.get("metadata") or {}).get("name")
            raise ManifestError(f"{rtype.kind} {name}: {err.message}") from None
        count += 1
    return count
