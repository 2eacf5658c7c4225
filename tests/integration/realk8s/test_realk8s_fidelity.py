#!/usr/bin/env python3
"""Fidelity of the API simulator: the module's own requests, asked of it and of the real server.

The same objects are created (POST, as a client does) on the simulator (tests/apisim)
and on a real kube-apiserver with etcd (tests/lib/realk8s.py). knotd with mod-k8s,
every watched resource on, synchronizes from the simulator, whose request log then
holds the LISTs and WATCHes the module makes; each is sent again to both servers and
the answers compared as the module reads them: the status, the list's kind and
version, its resourceVersion and continue token, the items of the test's namespaces
in the fields the module decodes (tests/lib/realk8s.py's readings below, those of
module/kinds/kind_*.c), a watch's events after a change, and the error answers the
module acts on (410 of a compacted version, for a LIST and a WATCH; 401; 403; 404 of
a resource the server does not serve). A difference is a defect of the simulator
(or a case where the module would be tested against something the real server never
says): fix it there, or list it in KNOWN with the reason.

The fault cases that only the simulator can inject stay honest because the ordinary
answers around them are the real server's.

Skips (exit 77) where the control plane is not built (tests/realk8s/build; no Go).
"""

import http.client
import json
import os
import re
import socket
import ssl
import time
import urllib.parse

import cluster
import knotd
import realk8s
import simctl
import testing

realk8s.skip_unless_available()

tests = testing.Tests()
NAMESPACES = ("fid", "fid2", "fid3")
MCS = "multicluster.x-k8s.io/v1alpha1"
MANAGED = {"endpointslice.kubernetes.io/managed-by": "fidelity.modk8s.test"}


def slice_labels(service):
    return dict(MANAGED, **{"kubernetes.io/service-name": service})


# Objects with no selector and slices of another manager: no controller touches them, so
# both servers hold exactly what was written (and what their defaulting made of it).
WORLD = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fid", "labels": {"team": "fid"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fid2"}},
    {"apiVersion": "v1", "kind": "Service",
     "metadata": {"name": "web", "namespace": "fid", "labels": {"app": "web"}},
     "spec": {"clusterIP": "10.96.5.10", "clusterIPs": ["10.96.5.10", "fd00:10:96::5:10"], "ipFamilyPolicy": "RequireDualStack",
              "ipFamilies": ["IPv4", "IPv6"],
              "ports": [{"name": "http", "port": 80, "targetPort": 8080},
                        {"name": "dns", "port": 53, "protocol": "UDP"}]}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext", "namespace": "fid"},
     "spec": {"type": "ExternalName", "externalName": "www.example.com"}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hl", "namespace": "fid2"},
     "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
              "ports": [{"name": "pg", "port": 5432}]}},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
     "metadata": {"name": "web-1", "namespace": "fid", "labels": slice_labels("web")},
     "addressType": "IPv4",
     "endpoints": [{"addresses": ["10.244.9.1"], "conditions": {"ready": True}},
                   {"addresses": ["10.244.9.2"], "conditions": {"ready": False, "terminating": True}}],
     "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
     "metadata": {"name": "web-6", "namespace": "fid", "labels": slice_labels("web")},
     "addressType": "IPv6",
     "endpoints": [{"addresses": ["fd00:10:244::9:1"]}],
     "ports": [{"name": "http", "port": 8080}]},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
     "metadata": {"name": "hl-1", "namespace": "fid2", "labels": slice_labels("hl")},
     "addressType": "IPv4",
     "endpoints": [{"addresses": ["10.244.9.10"], "hostname": "pg-0", "conditions": {"ready": True},
                    "targetRef": {"kind": "Pod", "name": "pg-0", "namespace": "fid2"}}],
     "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]},
    {"apiVersion": MCS, "kind": "ServiceImport", "metadata": {"name": "web", "namespace": "fid"},
     "spec": {"type": "ClusterSetIP", "ips": ["10.42.5.10"],
              "ports": [{"name": "http", "protocol": "TCP", "port": 80}]}},
    {"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
     "metadata": {"name": "cluster.clusterset.k8s.io"}, "spec": {"value": "cluster-fid"}},
]

RESOURCES = {"Namespace": ("/api/v1", "namespaces", False),
             "Service": ("/api/v1", "services", True),
             "EndpointSlice": ("/apis/discovery.k8s.io/v1", "endpointslices", True),
             "ServiceImport": (f"/apis/{MCS}", "serviceimports", True),
             "ClusterProperty": ("/apis/about.k8s.io/v1alpha1", "clusterproperties", False),
             "Pod": ("/api/v1", "pods", True)}


CLUSTER_PROPERTY = "/apis/about.k8s.io/v1alpha1/clusterproperties/cluster.clusterset.k8s.io"


def collection(obj):
    base, resource, namespaced = RESOURCES[obj["kind"]]
    if namespaced:
        return f"{base}/namespaces/{obj['metadata']['namespace']}/{resource}"
    return f"{base}/{resource}"


class Api:
    """One server's HTTPS API, as the module's client sees it."""

    def __init__(self, name, port, context, token=None):
        self.name = name
        self.port = port
        self.context = context
        self.token = token

    def headers(self, token=None):
        out = {"Accept": "application/json", "User-Agent": "mod-k8s-fidelity"}
        token = token or self.token
        if token:
            out["Authorization"] = f"Bearer {token}"
        return out

    def call(self, method, path, body=None, token=None, context=None,
             content_type="application/json"):
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30,
                                           context=context or self.context)
        headers = self.headers(token)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            return response.status, response.getheader("Content-Type", ""), raw
        finally:
            conn.close()

    def get(self, path, **kw):
        status, ctype, raw = self.call("GET", path, **kw)
        try:
            return status, ctype, json.loads(raw)
        except ValueError:
            return status, ctype, raw.decode(errors="replace")

    def watch(self, path, seconds, until=None):
        """The events of a watch (path with its query) for up to seconds, or until until(event):
        (HTTP status, events), or (status, [the refusal]) when it is not 200."""
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=seconds)
        sock = self.context.wrap_socket(raw, server_hostname="127.0.0.1")
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{k}: {v}" for k, v in self.headers().items()]
        try:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            stream = simctl.Stream(sock, seconds)
            if stream.status != 200:
                return stream.status, [json.loads(stream.body())]
            events, deadline = [], time.monotonic() + seconds
            while time.monotonic() < deadline:
                sock.settimeout(max(0.1, deadline - time.monotonic()))
                try:
                    event = stream.next_event()
                except (socket.timeout, TimeoutError):
                    break
                if event is None:
                    break
                events.append(event)
                if until and until(event):
                    break
            return stream.status, events
        finally:
            sock.close()


# ---------------------------------------------------------------- what the module reads

def _ports(ports):
    return sorted((p.get("name"), p.get("protocol", "TCP"), p.get("port")) for p in ports or [])


def reading(obj):
    """An object as its module/kinds/kind_*.c reads it (the fields it decodes, defaults applied)."""
    meta = obj.get("metadata", {})
    out = {"name": meta.get("name"), "namespace": meta.get("namespace"),
           "labels": meta.get("labels") or {}, "deleting": "deletionTimestamp" in meta}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    kind = obj.get("kind")
    if kind == "Service" or "clusterIP" in spec or "externalName" in spec:
        out.update(type=spec.get("type"), clusterIP=spec.get("clusterIP"),
                   clusterIPs=spec.get("clusterIPs"), externalName=spec.get("externalName"),
                   publishNotReadyAddresses=spec.get("publishNotReadyAddresses"),
                   ipFamilies=spec.get("ipFamilies"), ports=_ports(spec.get("ports")),
                   ingress=(status.get("loadBalancer") or {}).get("ingress"))
    elif "addressType" in obj:
        out.update(addressType=obj["addressType"], ports=_ports(obj.get("ports")),
                   endpoints=[(e.get("addresses"), (e.get("conditions") or {}).get("ready", True),
                               e.get("hostname"), (e.get("targetRef") or {}).get("kind"),
                               (e.get("targetRef") or {}).get("name"))
                              for e in obj.get("endpoints") or []])
    elif kind == "Pod" or "containers" in spec:
        out.update(hostNetwork=spec.get("hostNetwork", False), phase=status.get("phase"),
                   podIP=status.get("podIP"), podIPs=status.get("podIPs"))
    elif "value" in spec:
        out.update(value=spec["value"])
    elif "ips" in spec or spec.get("type") in ("ClusterSetIP", "Headless"):
        out.update(type=spec.get("type"), ips=spec.get("ips"), ports=_ports(spec.get("ports")),
                   clusters=status.get("clusters"))
    return out


def ours(item):
    meta = item.get("metadata", {})
    return meta.get("namespace") in NAMESPACES or meta.get("name") in NAMESPACES or \
        meta.get("name") == "cluster.clusterset.k8s.io"


def list_shape(status, ctype, body):
    """A LIST answer as the module reads it."""
    if not isinstance(body, dict):
        return {"status": status, "json": False, "content-type": ctype.split(";")[0]}
    if body.get("kind") == "Status":
        return status_shape(status, body)
    meta = body.get("metadata", {})
    items = body.get("items")
    return {"status": status, "kind": body.get("kind"), "apiVersion": body.get("apiVersion"),
            "rv-digits": str(meta.get("resourceVersion", "")).isdigit(),
            "continue": bool(meta.get("continue")),
            "items-null": items is None,
            "items": sorted((json.dumps(reading(i), sort_keys=True) for i in items or [] if ours(i)))}


def status_shape(status, body):
    if not isinstance(body, dict):
        return {"status": status, "json": False}
    return {"status": status, "kind": body.get("kind"), "code": body.get("code"),
            "reason": body.get("reason")}


def differences(a, b):
    keys = sorted(set(a) | set(b))
    return {k: (a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)}


# ---------------------------------------------------------------- the fixture

class Fidelity:
    def __enter__(self):
        self.plane = self.sim = self.server = None
        try:
            self.plane = realk8s.ControlPlane(standin=False).__enter__()
            self.sim = simctl.Simulator(os.path.join(self.plane.workdir, "apisim")).__enter__()
            self.real = Api("real", self.plane.port, self.plane.ssl_context())
            self.simapi = Api("apisim", self.sim.port, self.sim.tls_context(cert=True))
            for api in (self.real, self.simapi):
                for obj in WORLD:
                    status, ctype, raw = api.call("POST", collection(obj), obj)
                    if status not in (200, 201):
                        raise AssertionError(f"{api.name}: POST {obj['kind']} "
                                             f"{obj['metadata']['name']}: {status} {raw[:300]!r}")
            since = self.sim.counters()["last_seq"]
            module = {"kubeconfig": self.sim.path("kubeconfig-cert"), "pods": "verified",
                      "endpoint-pod-names": True, "node-name": realk8s.NODE}
            zones = ("cluster.local.", "clusterset.local.")
            self.server = knotd.Knotd(module=module, zones=zones).__enter__()
            cluster.wait_ready(self.server, zones, timeout=60)
            self.requests = [r for r in self.sim.requests(since) if r["verb"] in ("list", "watch")]
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        for part in (self.server, self.sim, self.plane):
            if part is not None:
                try:
                    part.__exit__(None, None, None)
                except Exception as e:      # the others are stopped all the same
                    print(f"# stopping {part}: {e!r}")
        return False

    def is_running(self):
        return self.plane.alive() and self.sim.alive() and self.server.is_running()

    def log_text(self):
        return self.server.log_text() if self.server else ""

    def apis(self):
        return (self.simapi, self.real)


def module_requests(fx, verb):
    """The distinct (path, parsed query) of the module's requests of a verb."""
    seen, out = set(), []
    for r in fx.requests:
        if r["verb"] != verb:
            continue
        query = urllib.parse.parse_qs(r["query"] or "", keep_blank_values=True)
        key = (r["path"], tuple(sorted((k, v[0]) for k, v in query.items())))
        if key not in seen:
            seen.add(key)
            out.append((r["path"], {k: v[0] for k, v in query.items()}))
    return out


def current_rv(api, path):
    status, _, body = api.get(path + "?limit=1")
    testing.expect_equal(status, 200, f"{api.name} GET {path}")
    return body["metadata"]["resourceVersion"]


def query_string(query):
    return urllib.parse.urlencode(query, safe=",=()!")


@tests.case
def the_module_lists_and_watches_every_resource(fx):
    def collections(verb):
        return {(path, query.get("labelSelector")) for path, query in module_requests(fx, verb)}
    # Full lists: LISTs, or watch-lists' initial events (the module's default).
    watch_lists = {(path, query.get("labelSelector")) for path, query in module_requests(fx, "watch")
                   if query.get("sendInitialEvents") == "true"}
    lists, watches = collections("list") | watch_lists, collections("watch")
    print(f"# the module's LISTs and watch-lists: {sorted(lists, key=str)}")
    # namespaces, services, endpointslices (two selectors), pods, serviceimports, clusterproperties
    testing.expect(len(lists) >= 7, f"LISTs: {sorted(lists, key=str)}")
    testing.expect(watches >= lists, f"not watched: {sorted(lists - watches, key=str)}")


@tests.case
def the_module_lists_get_the_same_answers(fx):
    """Each LIST the module made, with its own query (a resourceVersion other than 0 is
    each server's own current one)."""
    found = []
    for path, query in module_requests(fx, "list"):
        shapes = []
        for api in fx.apis():
            q = dict(query)
            if q.get("resourceVersion") not in (None, "", "0"):
                q["resourceVersion"] = current_rv(api, path)
            shapes.append(list_shape(*api.get(f"{path}?{query_string(q)}")))
        diff = differences(*shapes)
        if diff:
            found.append(f"LIST {path}?{query_string(query)}: (apisim, real) {diff}")
    testing.expect(not found, "\n".join(found))


@tests.case
def pages_are_the_same(fx):
    """A LIST at the latest version ("" : a consistent read) in pages of one item, as the
    module pages when the server pages: the same items, one per page, continue tokens
    that work, the last page without one."""
    found = []
    for path in ("/api/v1/services", "/apis/discovery.k8s.io/v1/endpointslices",
                 "/api/v1/namespaces"):
        pages = []
        for api in fx.apis():
            names, query, count = [], {"limit": "1"}, 0
            while True:
                status, _, body = api.get(f"{path}?{query_string(query)}")
                testing.expect_equal(status, 200, f"{api.name} {path} page {count}")
                names += [json.dumps(reading(i), sort_keys=True) for i in body["items"] if ours(i)]
                testing.expect(len(body["items"]) <= 1, f"{api.name} {path}: a page of "
                               f"{len(body['items'])} items")
                token = body["metadata"].get("continue")
                count += 1
                if not token:
                    break
                testing.expect("remainingItemCount" in body["metadata"],
                               f"{api.name} {path}: no remainingItemCount before the last page")
                query = {"limit": "1", "continue": token}
            pages.append(sorted(names))
        if pages[0] != pages[1]:
            found.append(f"{path}: apisim {pages[0]}\n real {pages[1]}")
    testing.expect(not found, "\n".join(found))


@tests.case
def a_list_at_zero_with_a_limit_is_answered_the_same(fx):
    """resourceVersion=0&limit=1, the module's first LIST: whether the server pages it
    decides whether the module pages its relists (module/api/reflector.c list_paged)."""
    shapes = []
    for api in fx.apis():
        status, _, body = api.get("/api/v1/services?resourceVersion=0&limit=1")
        shapes.append({"status": status, "continue": bool(body["metadata"].get("continue")),
                       "paged": len(body["items"]) <= 1})
    testing.expect_equal(shapes[0], shapes[1], "(apisim, real)")


@tests.case
def the_module_watches_get_the_same_events(fx):
    """Each WATCH the module made, from each server's current version: a change in the
    test's namespaces arrives as the same events."""
    found = []
    imported = {"multicluster.kubernetes.io/service-name": "web2",
                "multicluster.kubernetes.io/source-cluster": "cluster-b"}
    # One change to every watched collection (both EndpointSlice selectors).
    new = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fid3"}},
           {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web2", "namespace": "fid", "labels": {"app": "web"}},
            "spec": {"clusterIP": "10.96.5.11", "ports": [{"name": "http", "port": 80}]}},
           {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web2-1", "namespace": "fid", "labels": slice_labels("web2")},
            "addressType": "IPv4", "endpoints": [{"addresses": ["10.244.9.20"]}],
            "ports": [{"name": "http", "port": 80}]},
           {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web2-b", "namespace": "fid", "labels": dict(MANAGED, **imported)},
            "addressType": "IPv4", "endpoints": [{"addresses": ["10.245.9.20"]}],
            "ports": [{"name": "http", "port": 80}]},
           {"apiVersion": MCS, "kind": "ServiceImport", "metadata": {"name": "web2", "namespace": "fid"},
            "spec": {"type": "Headless", "ports": [{"name": "http", "protocol": "TCP", "port": 80}]}},
           dict(realk8s.pod("p1", "fid", {"app": "p"}), metadata={"name": "p1", "namespace": "fid"})]
    watched = {}
    for api in fx.apis():
        rvs = {path: current_rv(api, path) for path, _ in module_requests(fx, "watch")}
        for obj in new:
            status, _, raw = api.call("POST", collection(obj), obj)
            testing.expect(status == 201, f"{api.name}: {status} {raw[:200]!r}")
        # The module watches the one ClusterProperty by name: it changes.
        status, _, raw = api.call("PATCH", CLUSTER_PROPERTY, {"metadata": {"labels": {"fid": "1"}}},
                                  content_type="application/merge-patch+json")
        testing.expect(status == 200, f"{api.name}: PATCH {status} {raw[:200]!r}")
        for path, query in module_requests(fx, "watch"):
            q = dict(query, resourceVersion=rvs[path], timeoutSeconds="5")
            status, events = api.watch(f"{path}?{query_string(q)}", 8,
                                       until=lambda e: e.get("type") in ("ADDED", "MODIFIED")
                                       and ours(e["object"]))
            shape = [(e.get("type"), e.get("object", {}).get("kind"),
                      json.dumps(reading(e.get("object", {})), sort_keys=True))
                     for e in events if e.get("type") != "BOOKMARK" and ours(e.get("object", {}))]
            if not shape:
                found.append(f"{api.name}: WATCH {path}?{query_string(q)}: no event of the change")
            watched.setdefault(f"{path}?{query_string(query)}", []).append((status, shape))
        for obj in reversed(new):
            api.call("DELETE", f"{collection(obj)}/{obj['metadata']['name']}")
    for path, (ours_sim, ours_real) in watched.items():
        if ours_sim != ours_real:
            found.append(f"WATCH {path}: apisim {ours_sim}\n real {ours_real}")
    testing.expect(not found, "\n".join(found))


@tests.case
def a_watch_and_an_exact_list_past_a_compaction_get_410_alike(fx):
    found = []
    shapes = {}
    for api in fx.apis():
        old = current_rv(api, "/api/v1/services")
        obj = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "gone", "namespace": "fid"},
               "spec": {"clusterIP": "10.96.5.12", "ports": [{"port": 80}]}}
        api.call("POST", collection(obj), obj)
        api.call("DELETE", f"{collection(obj)}/gone")
        if api is fx.real:
            # The watch cache keeps its window of events past an etcd compaction: a
            # version is too old for it only once the server restarted past it.
            fx.plane.compact_etcd()
            fx.plane.restart_apiserver()
            fx.real.context = fx.plane.ssl_context()
        else:
            fx.sim.compact()
        status, events = api.watch(f"/api/v1/services?watch=1&resourceVersion={old}"
                                   "&allowWatchBookmarks=true&timeoutSeconds=5", 8,
                                   until=lambda e: e.get("type") == "ERROR")
        errors = [status_shape(e["object"].get("code"), e["object"])
                  for e in events if e.get("type") == "ERROR"]
        other = [e.get("type") for e in events if e.get("type") not in ("ERROR", "BOOKMARK")]
        status2, _, body = api.get(f"/api/v1/services?resourceVersion={old}&limit=500")
        shapes[api.name] = {"watch-status": status, "watch-errors": errors[:1],
                            "watch-other-events": other,
                            "list": status_shape(status2, body)}
    diff = differences(shapes["apisim"], shapes["real"])
    if diff:
        found.append(f"(apisim, real) {diff}")
    print(f"# real: {shapes['real']}")
    testing.expect(not found, "\n".join(found))


@tests.case
def invalid_creates_are_refused_alike(fx):
    """A Service naming clusterIPs but no clusterIP (the simulator once defaulted clusterIP
    from it), EndpointSlice addresses of the other family and not IPs (the simulator once
    named the wrong field of the first)."""
    bad = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ips", "namespace": "fid"},
            "spec": {"clusterIPs": ["10.96.5.20"], "ports": [{"port": 80}]}},
           {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "mixed", "namespace": "fid"}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["fd00::1"]}, {"addresses": ["10.0.0.1", "nope"]}]}]
    found = []
    for obj in bad:
        shapes = []
        for api in fx.apis():
            status, _, raw = api.call("POST", collection(obj), obj)
            body = json.loads(raw)
            shape = status_shape(status, body)
            shape["fields"] = sorted(c.get("field") for c in
                                     (body.get("details") or {}).get("causes") or [])
            shapes.append(shape)
        diff = differences(*shapes)
        if diff:
            found.append(f"POST {obj['kind']} {obj['metadata']['name']}: (apisim, real) {diff}")
    testing.expect(not found, "\n".join(found))


@tests.case
def refusals_are_alike(fx):
    """401 for a token the server does not know, 403 for one without the right, 404 for a
    resource (a CRD's version) it does not serve."""
    fx.plane.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "nobody", "namespace": "default"}})
    nobody = fx.plane.token("nobody", "default")
    plain_real = ssl.create_default_context(cafile=os.path.join(fx.plane.pki, "ca.crt"))
    plain_sim = fx.sim.tls_context()
    shapes = {}
    for api, plain in ((fx.simapi, plain_sim), (fx.real, plain_real)):
        out = {}
        status, _, body = api.get("/api/v1/services?resourceVersion=0&limit=500",
                                  token="not-a-token", context=plain)
        out["401"] = status_shape(status, body)
        if api is fx.real:
            status, _, body = api.get("/api/v1/services?limit=500", token=nobody, context=plain)
        else:
            fx.sim.forbid("services")
            try:
                status, _, body = api.get("/api/v1/services?limit=500")
            finally:
                fx.sim.forbid("services", on=False)
        out["403"] = status_shape(status, body)
        if isinstance(body, dict):
            out["403-details"] = {k: (body.get("details") or {}).get(k) for k in ("kind", "group")}
        status, ctype, body = api.get("/apis/multicluster.x-k8s.io/v1beta1/serviceimports?limit=500")
        out["404"] = status_shape(status, body)
        out["404-type"] = ctype.split(";")[0]
        shapes[api.name] = out
    diff = differences(shapes["apisim"], shapes["real"])
    testing.expect(not diff, f"(apisim, real) {diff}")


tests.main(fixture=Fidelity)
