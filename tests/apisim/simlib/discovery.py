"""/version and discovery: the legacy documents and the aggregated (apidiscovery.k8s.io) form."""

from . import resources

VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac10a2c335", "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:03:19Z", "goVersion": "go1.23.6", "compiler": "gc",
    "platform": "linux/amd64",
}

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"


def _served(absent):
    return [r for r in resources.ALL if r.plural not in absent]


def aggregated_version(accept):
    """"v2"/"v2beta1" when the Accept header asks for aggregated discovery first, else None."""
    for part in (accept or "").split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        media = part.split(";")[0].strip()
        if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
            if params.get("v") in ("v2", "v2beta1"):
                return params["v"]
            continue
        if media in ("application/json", "*/*", "application/*") and "as" not in params:
            return None
    return None


def api_versions(server_address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group_entry(group, version):
    gv = {"groupVersion": f"{group}/{version}", "version": version}
    return {"name": group, "versions": [gv], "preferredVersion": gv}


def api_group_list(absent):
    groups = []
    for group, version in resources.group_versions():
        if any(r.group == group for r in _served(absent)):
            groups.append(_group_entry(group, version))
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group, absent):
    """The APIGroup document of /apis/GROUP, or None when no resource of it is served."""
    for g, version in resources.group_versions():
        if g == group and any(r.group == group for r in _served(absent)):
            return dict({"kind": "APIGroup", "apiVersion": "v1"}, **_group_entry(g, version))
    return None


def _resource_entry(r):
    entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
             "kind": r.kind, "verbs": resources.verbs(r)}
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    entry["storageVersionHash"] = r.storage_version_hash
    return entry


def resource_list(group, version, absent):
    """The APIResourceList of a group version, or None when it is not served."""
    served = [r for r in _served(absent) if r.group == group and r.version == version]
    if not served:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": [_resource_entry(r) for r in served]}


def _aggregated_resource(r):
    entry = {"resource": r.plural,
             "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
             "scope": "Namespaced" if r.namespaced else "Cluster",
             "singularResource": r.singular, "verbs": resources.verbs(r)}
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    return entry


def aggregated(core, absent, version):
    """APIGroupDiscoveryList for /api (core=True) or /apis."""
    items = []
    if core:
        served = [r for r in _served(absent) if not r.group]
        items.append({"metadata": {"creationTimestamp": None},
                      "versions": [{"version": "v1", "resources": [_aggregated_resource(r) for r in served],
                                    "freshness": "Current"}]})
    else:
        for group, gversion in resources.group_versions():
            served = [r for r in _served(absent) if r.group == group]
            if served:
                items.append({"metadata": {"name": group, "creationTimestamp": None},
                              "versions": [{"version": gversion,
                                            "resources": [_aggregated_resource(r) for r in served],
                                            "freshness": "Current"}]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}
