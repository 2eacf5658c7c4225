#!/usr/bin/env python3
"""Tests of the API simulator: each case checks one behaviour of the real API server
(tests/apisim/README.md) or one control knob.

Run: python3 tests/apisim/test_apisim.py [name-substring ...]
Prints "ok - NAME" / "not ok - NAME" per case and "N passed, N failed"; exit status 1 on failure.
"""

import gzip
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))

from simctl import SAMPLE, Simulator, SimulatorError, StreamCut, case_collector, check, run_cases  # noqa: E402

CASES = []
SIM = None          # the shared simulator with the sample cluster

case = case_collector(CASES)


def status_of(resp):
    body = resp.json()
    check(body.get("kind") == "Status", f"not a Status: {body}")
    return body


def service(name, namespace="shop", labels=None, port=80, **spec):
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": name}},
            "spec": dict({"selector": {"app": name}, "ports": [{"name": "http", "port": port}]}, **spec)}


def rv_of(obj):
    return int(obj["metadata"]["resourceVersion"])


def list_all(path, **kw):
    resp = SIM.get(path, **kw)
    check(resp.status == 200, f"GET {path}: {resp.status} {resp.body[:200]}")
    return resp.json()


def watch(path, **kw):
    stream = SIM.stream(path, timeout=kw.pop("timeout", 10), **kw)
    check(stream.status == 200, f"watch {path}: {stream.status}")
    return stream


def with_config(**values):
    """Context manager: set simulator config, restore the previous values after."""
    class _Ctx:
        def __enter__(self):
            old = SIM.state()["config"]
            self.old = {k: old[k] for k in values}
            SIM.set_config(**values)

        def __exit__(self, *exc):
            SIM.set_config(**self.old)
    return _Ctx()


# ---------------------------------------------------------------- discovery

@case
def version_reports_kubernetes_1_32():
    body = list_all("/version")
    check(body["major"] == "1" and body["minor"] == "32", body)


@case
def legacy_discovery_lists_every_served_resource():
    core = {r["name"] for r in list_all("/api/v1")["resources"]}
    check({"services", "endpoints", "pods", "namespaces", "nodes", "serviceaccounts", "configmaps"}
          <= core, core)
    groups = [g["name"] for g in list_all("/apis")["groups"]]
    check(groups == ["apps", "policy", "rbac.authorization.k8s.io", "discovery.k8s.io",
                     "multicluster.x-k8s.io", "about.k8s.io"], groups)
    check([r["name"] for r in list_all("/apis/discovery.k8s.io/v1")["resources"]] == ["endpointslices"])
    si = list_all("/apis/multicluster.x-k8s.io/v1alpha1")["resources"][0]
    check(si["kind"] == "ServiceImport" and si["namespaced"], si)
    cp = list_all("/apis/about.k8s.io/v1alpha1")["resources"][0]
    check(cp["kind"] == "ClusterProperty" and not cp["namespaced"], cp)


@case
def aggregated_discovery_is_served_when_asked_first():
    accept = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json")
    resp = SIM.get("/apis", headers={"Accept": accept})
    check(resp.headers["content-type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    body = resp.json()
    check(body["kind"] == "APIGroupDiscoveryList", body)
    names = [i["metadata"]["name"] for i in body["items"]]
    check(names == ["apps", "policy", "rbac.authorization.k8s.io", "discovery.k8s.io",
                    "multicluster.x-k8s.io", "about.k8s.io"], names)


@case
def unknown_path_is_404_text_plain():
    resp = SIM.get("/apis/example.com/v1/widgets")
    check(resp.status == 404 and resp.body == b"404 page not found\n", resp)
    check(resp.headers["content-type"].startswith("text/plain"), resp.headers)


# ---------------------------------------------------------------- authentication

@case
def request_without_token_is_401_status():
    resp = SIM.get("/api/v1/services", token=None)
    check(resp.status == 401, resp)
    body = status_of(resp)
    check(body["reason"] == "Unauthorized" and body["code"] == 401 and body["message"] == "Unauthorized", body)


@case
def bad_token_is_401():
    check(SIM.get("/api/v1/services", token="not-the-token").status == 401)


@case
def client_certificate_authenticates_without_token():
    resp = SIM.get("/api/v1/namespaces", token=None, cert=True)
    check(resp.status == 200, resp)


@case
def rotated_token_is_swapped_through_data_symlink_and_old_token_refused():
    old = SIM.token
    old_target = os.readlink(SIM.path("..data"))
    check(os.readlink(SIM.token_path) == "..data/token")
    SIM.rotate_token()
    new = SIM.token
    check(new != old and os.readlink(SIM.path("..data")) != old_target)
    check(not os.path.exists(SIM.path(old_target)), "old ..data target left behind")
    check(SIM.get("/api/v1/services", token=old).status == 401)
    check(SIM.get("/api/v1/services", token=new).status == 200)
    with open(SIM.kubeconfig) as f:
        check(f"token: {new}" in f.read(), "kubeconfig not rewritten with the new token")


@case
def rotation_with_keep_old_accepts_both_tokens():
    old = SIM.token
    SIM.rotate_token(keep_old=True)
    check(SIM.get("/api/v1/services", token=old).status == 200)
    check(SIM.get("/api/v1/services").status == 200)
    SIM.rotate_token()
    check(SIM.get("/api/v1/services", token=old).status == 401)


@case
def expired_token_is_401_until_the_next_rotation():
    SIM.expire_token()
    try:
        check(SIM.get("/api/v1/services").status == 401)
        check(SIM.get("/api/v1/services", token=None, cert=True).status == 200, "client cert unaffected")
    finally:
        SIM.rotate_token()
    check(SIM.get("/api/v1/services").status == 200)


@case
def kubeconfig_files_name_the_server_and_credentials():
    for path, needle in ((SIM.kubeconfig, "token: "), (SIM.kubeconfig_tokenfile, "tokenFile: "),
                         (SIM.kubeconfig_cert, "client-certificate: "),
                         (SIM.kubeconfig_data, "client-certificate-data: ")):
        with open(path) as f:
            text = f.read()
        check(f"server: https://127.0.0.1:{SIM.port}" in text and needle in text, path)
    with open(SIM.path("namespace")) as f:
        check(f.read() == "kube-system")


@case
def server_certificate_matches_localhost_names():
    for host in ("127.0.0.1", "localhost"):
        ctx = ssl.create_default_context(cafile=SIM.ca_path)
        with socket.create_connection(("127.0.0.1", SIM.port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname=host) as tls:
                check(tls.version() is not None)


@case
def log_has_one_line_per_request_and_never_a_token():
    SIM.get("/api/v1/namespaces?limit=1")
    # The server logs after it has answered: give a loaded machine a moment.
    deadline = time.monotonic() + 5
    while True:
        with open(SIM.log_path) as f:
            text = f.read()
        if "GET /api/v1/namespaces?limit=1 200" in text or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    check("GET /api/v1/namespaces?limit=1 200" in text, "request line missing from the log")
    check(SIM.token not in text, "token in the log")


# ---------------------------------------------------------------- LIST

@case
def list_carries_kind_api_version_and_the_global_resource_version():
    before = SIM.resource_version()
    body = list_all("/api/v1/services")
    check(body["kind"] == "ServiceList" and body["apiVersion"] == "v1", body.keys())
    check(body["metadata"]["resourceVersion"] == str(before), (body["metadata"], before))
    check(isinstance(body["metadata"]["resourceVersion"], str))
    check("continue" not in body["metadata"] and "remainingItemCount" not in body["metadata"])


@case
def builtin_items_have_no_kind_and_crd_items_do():
    svc = list_all("/api/v1/services")["items"][0]
    check("kind" not in svc and "apiVersion" not in svc and list(svc)[0] == "metadata", list(svc))
    si = list_all("/apis/multicluster.x-k8s.io/v1alpha1/serviceimports")["items"][0]
    check(si["kind"] == "ServiceImport" and si["apiVersion"] == "multicluster.x-k8s.io/v1alpha1", si)


@case
def every_write_takes_the_next_global_resource_version():
    start = SIM.resource_version()
    a = SIM.apply(service("rv-a"))["results"][0]
    b = SIM.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rv-ns"}})["results"][0]
    check(int(a["resourceVersion"]) == start + 1 and int(b["resourceVersion"]) == start + 2, (a, b))
    obj = SIM.get_object("services", "shop", "rv-a")
    check(rv_of(obj) == start + 1)
    SIM.delete("services", "shop", "rv-a")
    SIM.delete("namespaces", None, "rv-ns")


@case
def namespaced_list_returns_only_that_namespace():
    items = list_all("/api/v1/namespaces/db/services")["items"]
    check(items and all(i["metadata"]["namespace"] == "db" for i in items), items)
    check(list_all("/api/v1/namespaces/nothing-here/services")["items"] == [])


@case
def list_is_sorted_by_namespace_and_name():
    items = list_all("/api/v1/pods")["items"]
    keys = [i["metadata"]["namespace"] + "/" + i["metadata"]["name"] for i in items]
    check(keys == sorted(keys), keys)


@case
def paging_keeps_one_resource_version_and_ends_without_continue():
    total = list_all("/api/v1/pods")["items"]
    seen, token, rvs, remaining = [], "", set(), []
    while True:
        path = "/api/v1/pods?limit=4" + (f"&continue={urllib.parse.quote(token)}" if token else "")
        body = list_all(path)
        seen += body["items"]
        rvs.add(body["metadata"]["resourceVersion"])
        token = body["metadata"].get("continue")
        if not token:
            check("remainingItemCount" not in body["metadata"])
            break
        remaining.append(body["metadata"]["remainingItemCount"])
    check(len(rvs) == 1, rvs)
    check([p["metadata"]["name"] for p in seen] == [p["metadata"]["name"] for p in total])
    check(remaining[0] == len(total) - 4 and remaining == sorted(remaining, reverse=True), remaining)


@case
def later_pages_show_the_snapshot_of_the_first_page():
    first = list_all("/api/v1/namespaces/shop/services?limit=2")
    SIM.apply(service("zz-after-first-page"))
    SIM.delete("services", "shop", "voip")
    try:
        token = urllib.parse.quote(first["metadata"]["continue"])
        rest = list_all(f"/api/v1/namespaces/shop/services?limit=100&continue={token}")
        names = [s["metadata"]["name"] for s in rest["items"]]
        check("zz-after-first-page" not in names and "voip" in names, names)
        check(rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"])
    finally:
        SIM.delete("services", "shop", "zz-after-first-page")
        SIM.apply(json.load(open(os.path.join(SAMPLE, "60-ports-named-unnamed-udp.json"))))


@case
def continue_with_a_resource_version_is_400():
    first = list_all("/api/v1/pods?limit=2")
    token = urllib.parse.quote(first["metadata"]["continue"])
    resp = SIM.get(f"/api/v1/pods?limit=2&continue={token}&resourceVersion=5")
    check(resp.status == 400 and status_of(resp)["reason"] == "BadRequest", resp)


@case
def expired_continue_token_is_410_with_a_fresh_token():
    first = list_all("/api/v1/pods?limit=3")
    SIM.apply(service("compact-me"))
    SIM.compact()
    token = urllib.parse.quote(first["metadata"]["continue"])
    resp = SIM.get(f"/api/v1/pods?limit=3&continue={token}")
    SIM.delete("services", "shop", "compact-me")
    check(resp.status == 410, resp)
    body = status_of(resp)
    check(body["reason"] == "Expired" and body["metadata"].get("continue"), body)
    fresh = list_all(f"/api/v1/pods?limit=3&continue={urllib.parse.quote(body['metadata']['continue'])}")

    def key(pod):
        return pod["metadata"]["namespace"] + "/" + pod["metadata"]["name"]
    check(fresh["items"] and key(fresh["items"][0]) > key(first["items"][-1]),
          "the fresh token continues after the last key already returned")


@case
def list_at_resource_version_0_ignores_limit():
    body = list_all("/api/v1/pods?limit=2&resourceVersion=0")
    check(len(body["items"]) > 2 and "continue" not in body["metadata"])


@case
def request_log_says_which_lists_the_watch_cache_serves():
    rv = SIM.resource_version()
    since = SIM.counters()["last_seq"]
    queries = ["limit=2&resourceVersion=0", f"resourceVersion={rv}", "", "limit=2",
               f"limit=2&resourceVersion={rv}"]
    for query in queries:
        list_all("/api/v1/pods?" + query)
    served = {r["query"]: r["served_from"] for r in SIM.requests(since)}
    check(served == dict(zip(queries, ["cache", "cache", "cache", "etcd", "etcd"])), served)


@case
def list_at_resource_version_0_is_paged_without_a_watch_cache():
    SIM.set_config(watch_cache=False)
    try:
        since = SIM.counters()["last_seq"]
        body = list_all("/api/v1/pods?limit=2&resourceVersion=0")
        check(len(body["items"]) == 2 and body["metadata"].get("continue"), body["metadata"])
        check(SIM.requests(since)[-1]["served_from"] == "etcd")
    finally:
        SIM.set_config(watch_cache=True)


@case
def list_with_limit_at_a_compacted_resource_version_is_410():
    old = SIM.resource_version()
    SIM.apply(service("old-rv"))
    SIM.compact()
    SIM.delete("services", "shop", "old-rv")
    resp = SIM.get(f"/api/v1/services?limit=5&resourceVersion={old}")
    check(resp.status == 410 and status_of(resp)["reason"] == "Expired", resp)
    resp = SIM.get(f"/api/v1/services?resourceVersion={old}&resourceVersionMatch=Exact")
    check(resp.status == 410, resp)
    check(SIM.get(f"/api/v1/services?resourceVersion={old}").status == 200, "NotOlderThan must serve")


@case
def list_at_an_exact_past_resource_version_shows_that_state():
    before = SIM.resource_version()
    SIM.apply(service("exact-past"))
    try:
        then = list_all(f"/api/v1/namespaces/shop/services?resourceVersion={before}&resourceVersionMatch=Exact")
        now = list_all("/api/v1/namespaces/shop/services")
        check("exact-past" not in [s["metadata"]["name"] for s in then["items"]])
        check("exact-past" in [s["metadata"]["name"] for s in now["items"]])
        check(then["metadata"]["resourceVersion"] == str(before))
    finally:
        SIM.delete("services", "shop", "exact-past")


@case
def too_new_resource_version_is_504_resource_version_too_large():
    with with_config(too_large_wait=0.3):
        future = SIM.resource_version() + 1000
        resp = SIM.get(f"/api/v1/services?resourceVersion={future}")
        check(resp.status == 504 and resp.headers.get("retry-after") == "1", resp)
        body = status_of(resp)
        check(body["reason"] == "Timeout" and
              body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge", body)


@case
def resource_version_match_rules_give_422():
    for query in ("resourceVersionMatch=Exact", "resourceVersionMatch=Exact&resourceVersion=0",
                  "resourceVersionMatch=Sometimes&resourceVersion=5", "sendInitialEvents=true"):
        resp = SIM.get(f"/api/v1/services?{query}")
        check(resp.status == 422 and status_of(resp)["reason"] == "Invalid", (query, resp))


@case
def empty_list_items_are_an_empty_array_or_null_when_configured():
    check(list_all("/api/v1/namespaces/empty/pods")["items"] == [])
    with with_config(empty_items_null=True):
        raw = SIM.get("/api/v1/namespaces/empty/pods").body
        check(b'"items":null' in raw, raw)


@case
def curl_user_agent_gets_pretty_bodies_and_others_compact():
    pretty = SIM.get("/api/v1/namespaces/kube-system/services", headers={"User-Agent": "curl/7.88.1"})
    check(pretty.body.startswith(b'{\n  "kind": "ServiceList"'), pretty.body[:60])
    json.loads(pretty.body)
    err = SIM.get("/api/v1/nope/x", headers={"User-Agent": "Mozilla/5.0"}, token=None)
    check(err.body.count(b"\n") > 3, err.body)
    compact = SIM.get("/api/v1/namespaces/kube-system/services")
    check(compact.body.count(b"\n") == 1, compact.body[:80])


@case
def large_list_is_chunked_and_gzipped_when_accepted():
    small = SIM.stream("/api/v1/namespaces/default/services", headers={"Accept-Encoding": "gzip"})
    check("content-length" in small.headers and "content-encoding" not in small.headers, small.headers)
    small.close()
    with with_config(gzip_threshold=1024):
        stream = SIM.stream("/api/v1/pods", headers={"Accept-Encoding": "gzip"})
        check(stream.headers.get("content-encoding") == "gzip" and stream.chunked, stream.headers)
        body = json.loads(gzip.decompress(stream.body()))
        check(body["kind"] == "PodList")
        stream.close()
        plain = SIM.stream("/api/v1/pods")
        check("content-encoding" not in plain.headers)
        plain.close()


# ---------------------------------------------------------------- selectors

@case
def label_selector_forms_select_like_the_real_server():
    def names(sel):
        q = urllib.parse.quote(sel)
        return sorted(s["metadata"]["name"] for s in list_all(f"/api/v1/services?labelSelector={q}")["items"])
    check(names("k8s-app") == ["kube-dns"])
    check("kube-dns" not in names("!k8s-app") and "web" in names("!k8s-app"))
    check(names("app=web") == ["web"] and names("app==web") == ["web"])
    check("web" not in names("app!=web") and "kubernetes" in names("app!=web"), "!= matches missing keys")
    check(names("app in (web,cache)") == ["cache", "web"])
    check("web" not in names("app notin (web,cache)") and "kube-dns" in names("app notin (web,cache)"))
    check(names("app=web,app=cache") == [])


@case
def malformed_label_selector_is_400():
    resp = SIM.get("/api/v1/services?labelSelector=" + urllib.parse.quote("app in web"))
    check(resp.status == 400 and status_of(resp)["reason"] == "BadRequest", resp)


@case
def field_selectors_for_name_namespace_and_pod_fields():
    def names(path, sel):
        q = urllib.parse.quote(sel)
        return sorted(i["metadata"]["name"] for i in list_all(f"{path}?fieldSelector={q}")["items"])
    check(names("/api/v1/services", "metadata.name=web") == ["web"])
    check(names("/api/v1/services", "metadata.namespace=db") == ["cassandra-peers", "postgres"])
    check(names("/api/v1/namespaces/db/pods", "spec.nodeName=node-c") == ["postgres-2"])
    SIM.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "done", "namespace": "shop"},
               "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "node-a"},
               "status": {"phase": "Succeeded"}})
    try:
        sel = "status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown"
        check("done" not in names("/api/v1/pods", sel) and "web-7d9f8b6c5d-k8x2m" in names("/api/v1/pods", sel))
        check(names("/api/v1/pods", "status.phase=Succeeded") == ["done"])
    finally:
        SIM.delete("pods", "shop", "done")
    check(names("/apis/about.k8s.io/v1alpha1/clusterproperties", "metadata.name=cluster.clusterset.k8s.io")
          == ["cluster.clusterset.k8s.io"])


@case
def unsupported_field_selector_is_400():
    resp = SIM.get("/api/v1/services?fieldSelector=spec.selector%3Dx")
    check(resp.status == 400, resp)
    check(status_of(resp)["message"] == "field label not supported: spec.selector", resp.body)
    check(SIM.get("/api/v1/pods?fieldSelector=garbage").status == 400)


# ---------------------------------------------------------------- WATCH

@case
def watch_headers_are_flushed_before_any_event():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}", timeout=5)
    check(stream.headers["content-type"] == "application/json" and stream.chunked, stream.headers)
    stream.close()


@case
def watch_from_0_starts_with_synthetic_added_events_of_their_own_versions():
    expected = list_all("/api/v1/namespaces/shop/services")["items"]
    stream = watch("/api/v1/namespaces/shop/services?watch=true&resourceVersion=0")
    events = stream.events(len(expected))
    check([e["type"] for e in events] == ["ADDED"] * len(expected), [e["type"] for e in events])
    check([rv_of(e["object"]) for e in events] == [rv_of(s) for s in expected])
    check(all(e["object"]["kind"] == "Service" and e["object"]["apiVersion"] == "v1" for e in events))
    SIM.apply(service("live-after-initial"))
    live = stream.next_event()
    check(live["type"] == "ADDED" and live["object"]["metadata"]["name"] == "live-after-initial", live)
    stream.close()
    SIM.delete("services", "shop", "live-after-initial")


@case
def watch_resumes_from_a_resource_version_without_repeats():
    rv = SIM.resource_version()
    SIM.apply(service("resume-a"))
    SIM.apply(service("resume-a", port=81))
    SIM.delete("services", "shop", "resume-a")
    stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
    events = stream.events(3)
    stream.close()
    check([e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"], events)
    check([rv_of(e["object"]) for e in events] == [rv + 1, rv + 2, rv + 3])
    check(events[1]["object"]["spec"]["ports"][0]["port"] == 81)


@case
def deleted_event_carries_the_last_state_with_the_deletion_version():
    SIM.apply(service("to-delete", labels={"app": "to-delete", "last": "state"}))
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
    deleted_rv = SIM.delete("services", "shop", "to-delete")
    event = stream.next_event()
    stream.close()
    check(event["type"] == "DELETED" and rv_of(event["object"]) == deleted_rv, event)
    check(event["object"]["metadata"]["labels"]["last"] == "state" and event["object"]["spec"]["ports"])


@case
def watch_from_a_too_old_version_is_200_then_error_410_then_end():
    old = SIM.resource_version()
    SIM.apply(service("bump"))
    SIM.compact()
    SIM.delete("services", "shop", "bump")
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={old - 1}")
    event = stream.next_event()
    check(stream.next_event() is None and stream.ended, "stream must end after the ERROR")
    check(event["type"] == "ERROR", event)
    status = event["object"]
    check(status["code"] == 410 and status["reason"] == "Expired", status)
    floor = int(SIM.state()["floors"]["services"])
    check(status["message"] == f"too old resource version: {old - 1} ({floor})", status["message"])


@case
def compaction_and_history_bound_make_old_versions_expire():
    with with_config(history=3):
        rv = SIM.resource_version()
        for n in range(5):
            SIM.apply(service("ring", port=100 + n))
        stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
        check(stream.next_event()["type"] == "ERROR")
        stream.close()
        recent = SIM.resource_version() - 2
        stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={recent}")
        check([e["type"] for e in stream.events(2)] == ["MODIFIED", "MODIFIED"])
        stream.close()
    SIM.delete("services", "shop", "ring")


@case
def bookmarks_come_periodically_with_the_current_version_and_a_zero_valued_object():
    with with_config(bookmark_interval=0.3):
        rv = SIM.resource_version()
        SIM.apply(service("bookmark-bump"))     # moves the global RV, not the slices
        stream = watch(f"/apis/discovery.k8s.io/v1/endpointslices?watch=1&resourceVersion={rv}"
                       "&allowWatchBookmarks=true")
        first, second = stream.events(2)
        stream.close()
    SIM.delete("services", "shop", "bookmark-bump")
    check(first["type"] == second["type"] == "BOOKMARK", (first, second))
    obj = first["object"]
    check(obj["kind"] == "EndpointSlice" and obj["apiVersion"] == "discovery.k8s.io/v1")
    check(obj["metadata"] == {"resourceVersion": str(rv + 1), "creationTimestamp": None}, obj["metadata"])
    check(obj["addressType"] == "" and obj["endpoints"] is None and obj["ports"] is None, obj)


@case
def no_bookmarks_without_allow_watch_bookmarks():
    with with_config(bookmark_interval=0.2):
        rv = SIM.resource_version()
        stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}&timeoutSeconds=1")
        check(stream.next_event() is None and stream.ended)


@case
def timeout_seconds_ends_the_stream_cleanly_after_a_final_bookmark():
    rv = SIM.resource_version()
    started = time.monotonic()
    stream = watch(f"/api/v1/pods?watch=1&resourceVersion={rv}&timeoutSeconds=3&allowWatchBookmarks=1")
    events = [stream.next_event(), stream.next_event()]
    took = time.monotonic() - started
    check(events[0]["type"] == "BOOKMARK" and events[1] is None and stream.ended, events)
    check(2.5 < took < 4.5, took)
    check(events[0]["object"]["spec"] == {"containers": None} and events[0]["object"]["status"] == {})


@case
def crd_bookmark_is_an_unstructured_object_with_only_the_version():
    rv = SIM.resource_version()
    stream = watch(f"/apis/multicluster.x-k8s.io/v1alpha1/serviceimports?watch=1&resourceVersion={rv}"
                   "&allowWatchBookmarks=true&timeoutSeconds=3")
    event = stream.next_event()
    stream.close()
    check(event["object"] == {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
                              "metadata": {"resourceVersion": str(rv)}}, event)


@case
def label_changes_turn_into_added_and_deleted_for_a_selector():
    SIM.apply(service("mover", labels={"app": "mover", "tier": "blue"}))
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}&labelSelector=tier%3Dgreen")
    SIM.apply(service("mover", labels={"app": "mover", "tier": "green"}))
    SIM.apply(service("mover", labels={"app": "mover", "tier": "green", "x": "y"}))
    SIM.apply(service("mover", labels={"app": "mover", "tier": "blue"}))
    events = stream.events(3)
    stream.close()
    SIM.delete("services", "shop", "mover")
    check([e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"], [e["type"] for e in events])
    check(events[2]["object"]["metadata"]["labels"]["tier"] == "green", "DELETED carries the old content")
    check(rv_of(events[2]["object"]) == rv + 3, "DELETED carries the event's version")


@case
def watch_with_field_selector_sees_only_its_object():
    rv = SIM.resource_version()
    stream = watch(f"/apis/about.k8s.io/v1alpha1/clusterproperties?watch=1&resourceVersion={rv}"
                   "&fieldSelector=metadata.name%3Dcluster.clusterset.k8s.io")
    SIM.apply({"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
               "metadata": {"name": "other.example.com"}, "spec": {"value": "x"}})
    SIM.apply({"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
               "metadata": {"name": "cluster.clusterset.k8s.io"}, "spec": {"value": "cluster-z"}})
    event = stream.next_event()
    stream.close()
    check(event["type"] == "MODIFIED" and event["object"]["spec"]["value"] == "cluster-z", event)
    check(event["object"]["kind"] == "ClusterProperty")
    SIM.apply({"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
               "metadata": {"name": "cluster.clusterset.k8s.io"}, "spec": {"value": "cluster-a"}})
    SIM.delete("clusterproperties", None, "other.example.com")


@case
def nodes_are_cluster_scoped_and_a_label_change_keeps_their_status():
    nodes = list_all("/api/v1/nodes")["items"]
    check([n["metadata"]["name"] for n in nodes] == ["node-a", "node-b", "node-c"], nodes)
    check("namespace" not in nodes[0]["metadata"] and "kind" not in nodes[0], nodes[0])
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/nodes?watch=1&resourceVersion={rv}&fieldSelector=metadata.name%3Dnode-b")
    label = {"metadata": {"labels": {"topology.kubernetes.io/zone": "elsewhere"}}}
    merge = {"Content-Type": "application/merge-patch+json"}
    check(SIM.request("PATCH", "/api/v1/nodes/node-a", label, headers=merge).status == 200)
    patched = SIM.request("PATCH", "/api/v1/nodes/node-b", label, headers=merge)
    event = stream.next_event()
    stream.close()
    check(patched.status == 200, patched.body)
    check(event["type"] == "MODIFIED" and event["object"]["metadata"]["name"] == "node-b", event)
    check(event["object"]["metadata"]["labels"]["topology.kubernetes.io/zone"] == "elsewhere", event)
    check(event["object"]["status"]["nodeInfo"]["kubeletVersion"] == "v1.32.4", event)
    undo = {"metadata": {"labels": {"topology.kubernetes.io/zone": "testcontinent-testreg-otherzone"}}}
    SIM.request("PATCH", "/api/v1/nodes/node-b", undo, headers=merge)
    undo["metadata"]["labels"]["topology.kubernetes.io/zone"] = "testcontinent-testreg-testzone"
    SIM.request("PATCH", "/api/v1/nodes/node-a", undo, headers=merge)


@case
def events_are_batched_into_chunks_and_sometimes_split_across_them():
    with with_config(split_probability=0.0):
        rv = SIM.resource_version()
        stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
        SIM.apply({"apiVersion": "v1", "kind": "List",
                   "items": [service(f"batch-{n}") for n in range(5)]})
        chunk = stream.read_chunk()
        stream.close()
        check(chunk.count(b"\n") == 5 and chunk.endswith(b"\n"), chunk.count(b"\n"))
    with with_config(split_probability=1.0):
        stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
        events = stream.events(5)
        stream.close()
        check(len(events) == 5 and len(stream.chunks) >= 2)
        check(not stream.chunks[0].endswith(b"\n"), "split chunk ends inside a line")
    for n in range(5):
        SIM.delete("services", "shop", f"batch-{n}")


@case
def watch_query_booleans_parse_like_the_real_server():
    for value, is_watch in (("", True), ("1", True), ("yes", True), ("0", False), ("false", False),
                            ("FALSE", False)):
        stream = SIM.stream(f"/api/v1/namespaces/kube-system/services?watch={value}&timeoutSeconds=1")
        body = stream.body()
        stream.close()
        check((b'"type":"ADDED"' in body) == is_watch, (value, body[:80]))
        check((b'"kind":"ServiceList"' in body) == (not is_watch), value)


@case
def send_initial_events_ends_with_the_initial_events_end_bookmark():
    stream = watch("/api/v1/namespaces/kube-system/pods?watch=1&sendInitialEvents=true"
                   "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=")
    events = stream.events(3)
    stream.close()
    check([e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"], events)
    meta = events[2]["object"]["metadata"]
    check(meta["annotations"] == {"k8s.io/initial-events-end": "true"} and meta["resourceVersion"], meta)


@case
def send_initial_events_false_starts_from_now_without_initial_events():
    stream = watch("/api/v1/namespaces/shop/services?watch=1&sendInitialEvents=false"
                   "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=")
    SIM.wait_for_watches("services")
    SIM.apply(service("after-start"))
    event = stream.next_event()
    stream.close()
    SIM.delete("services", "shop", "after-start")
    check(event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "after-start", event)


@case
def watch_of_one_named_object():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/namespaces/shop/services/web?watch=1&resourceVersion={rv}")
    SIM.apply(service("not-web"))
    web = SIM.get_object("services", "shop", "web")
    web["metadata"]["labels"]["touched"] = "yes"
    SIM.apply(web)
    event = stream.next_event()
    stream.close()
    check(event["object"]["metadata"]["name"] == "web", event)
    del web["metadata"]["labels"]["touched"]
    SIM.apply(web)
    SIM.delete("services", "shop", "not-web")


# ---------------------------------------------------------------- writes through the REST verbs

@case
def create_replace_delete_through_the_rest_verbs():
    path = "/api/v1/namespaces/shop/services"
    created = SIM.request("POST", path, service("rest"))
    check(created.status == 201, created)
    obj = created.json()
    check(obj["kind"] == "Service" and obj["spec"]["clusterIP"].startswith("10.96."), obj)
    check(obj["metadata"]["uid"] and obj["metadata"]["creationTimestamp"] and obj["metadata"]["managedFields"])
    dup = SIM.request("POST", path, service("rest"))
    check(dup.status == 409 and status_of(dup)["reason"] == "AlreadyExists", dup)
    obj["spec"]["ports"][0]["port"] = 8081
    replaced = SIM.request("PUT", f"{path}/rest", obj)
    check(replaced.status == 200 and replaced.json()["spec"]["ports"][0]["port"] == 8081, replaced)
    stale = SIM.request("PUT", f"{path}/rest", obj)
    check(stale.status == 409 and status_of(stale)["reason"] == "Conflict", stale)
    patched = SIM.request("PATCH", f"{path}/rest", {"metadata": {"labels": {"patched": "yes"}}},
                          headers={"Content-Type": "application/merge-patch+json"})
    check(patched.status == 200 and patched.json()["metadata"]["labels"]["patched"] == "yes", patched)
    deleted = SIM.request("DELETE", f"{path}/rest")
    check(deleted.status == 200 and deleted.json()["metadata"]["name"] == "rest", deleted)
    gone = SIM.request("DELETE", f"{path}/rest")
    check(gone.status == 404 and status_of(gone)["message"] == 'services "rest" not found', gone.body)
    missing = SIM.request("PUT", f"{path}/rest", service("rest"))
    check(missing.status == 404, missing)


@case
def invalid_objects_are_422_with_causes():
    bad = service("Bad_Name")
    bad["spec"]["ports"] = []
    resp = SIM.request("POST", "/api/v1/namespaces/shop/services", bad)
    check(resp.status == 422, resp)
    body = status_of(resp)
    fields = [c["field"] for c in body["details"]["causes"]]
    check(body["reason"] == "Invalid" and fields == ["metadata.name", "spec.ports"], body)
    slice_ = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": {"name": "s", "namespace": "shop"}, "addressType": "IPv4",
              "endpoints": [{"addresses": ["fd00::1"]}]}
    resp = SIM.request("POST", "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices", slice_)
    check(resp.status == 422, resp)
    resp = SIM.request("POST", "/api/v1/namespaces/nowhere/services", service("x", "nowhere"))
    check(resp.status == 404 and status_of(resp)["message"] == 'namespaces "nowhere" not found', resp)
    resp = SIM.request("POST", "/api/v1/namespaces/shop/services", b"{not json")
    check(resp.status == 400, resp)
    # clusterIPs without clusterIP: refused by the real server's validation, not defaulted
    # (tests/integration/realk8s/test_realk8s_fidelity.py compares the two).
    resp = SIM.request("POST", "/api/v1/namespaces/shop/services",
                       service("ips", clusterIPs=["10.96.9.9"]))
    body = status_of(resp)
    check(resp.status == 422 and body["details"]["causes"][0]["field"] == "spec.clusterIPs" and
          "must be empty when `clusterIP` is not specified" in body["message"], body)


@case
def strict_field_validation_rejects_unknown_fields():
    bad = service("strict")
    bad["spec"]["selectr"] = {"a": "b"}
    resp = SIM.request("POST", "/api/v1/namespaces/shop/services?fieldValidation=Strict", bad)
    check(resp.status == 400 and 'unknown field "spec.selectr"' in status_of(resp)["message"], resp.body)
    resp = SIM.request("POST", "/api/v1/namespaces/shop/services?fieldValidation=Warn", bad)
    check(resp.status == 201 and 'spec.selectr' in resp.headers.get("warning", ""), resp.headers)
    SIM.delete("services", "shop", "strict")


# ---------------------------------------------------------------- protobuf request bodies

PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf",
            "Accept": "application/vnd.kubernetes.protobuf,application/json"}


def pb_varint(n):
    out = b""
    while n > 0x7F:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def pb(number, value):
    """One field: an int is a varint, str or bytes a length-delimited value (a message)."""
    if isinstance(value, int):
        return pb_varint(number << 3) + pb_varint(value)
    data = value.encode() if isinstance(value, str) else value
    return pb_varint(number << 3 | 2) + pb_varint(len(data)) + data


def pb_map(number, mapping):
    return b"".join(pb(number, pb(1, k) + pb(2, v)) for k, v in mapping.items())


def k8s_protobuf(kind, raw, api_version="v1"):
    """A body as client-go writes it: magic, then runtime.Unknown{typeMeta, raw, "", ""}."""
    return b"k8s\x00" + pb(1, pb(1, api_version) + pb(2, kind)) + pb(2, raw) + pb(3, "") + pb(4, "")


def pb_namespace(name, labels=None, meta_extra=b""):
    """A Namespace as gogo-protobuf writes it: zero scalars and empty messages included."""
    meta = pb(1, name) + pb(2, "") + pb(3, "") + pb(7, 0) + pb(8, b"") + meta_extra
    return pb(1, meta + pb_map(11, labels or {})) + pb(2, b"") + pb(3, pb(1, ""))


def post_protobuf(path, body, headers=PROTOBUF):
    return SIM.request("POST", path, body, headers=headers)


@case
def protobuf_namespace_is_created_and_replaced_like_json():
    resp = post_protobuf("/api/v1/namespaces", k8s_protobuf("Namespace",
                                                            pb_namespace("pb-ns", {"team": "dns"})))
    check(resp.status == 201 and resp.headers["content-type"] == "application/json", resp)
    obj = resp.json()
    check(obj["metadata"]["labels"] == {"team": "dns", "kubernetes.io/metadata.name": "pb-ns"}, obj)
    check(not {"generateName", "namespace", "generation"} & set(obj["metadata"]), obj["metadata"])
    check(obj["spec"] == {"finalizers": ["kubernetes"]}, obj["spec"])
    check(obj["status"] == {"phase": "Active"}, obj["status"])
    body = k8s_protobuf("Namespace", pb_namespace("pb-ns", {"team": "web"}))
    resp = SIM.request("PUT", "/api/v1/namespaces/pb-ns", body, headers=PROTOBUF)
    check(resp.status == 200 and resp.json()["metadata"]["labels"]["team"] == "web", resp.body)
    check(SIM.request("DELETE", "/api/v1/namespaces/pb-ns").status == 200)


@case
def protobuf_service_is_stored_as_the_same_json_would_be():
    ports = [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "web"},
             {"name": "dns", "protocol": "UDP", "appProtocol": "dns", "port": 53,
              "targetPort": 5353}]
    spec = {"ports": ports, "selector": {"app": "pb"}, "type": "ClusterIP",
            "sessionAffinity": "ClientIP", "publishNotReadyAddresses": True,
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 600}},
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}
    http = pb(1, "http") + pb(2, "TCP") + pb(3, 80) + pb(4, pb(1, 1) + pb(2, 0) + pb(3, "web"))
    dns = (pb(1, "dns") + pb(2, "UDP") + pb(3, 53) + pb(4, pb(1, 0) + pb(2, 5353) + pb(3, ""))
           + pb(5, 0) + pb(6, "dns"))
    raw_spec = (pb(1, http + pb(5, 0)) + pb(1, dns) + pb_map(2, {"app": "pb"}) + pb(3, "")
                + pb(4, "ClusterIP") + pb(7, "ClientIP") + pb(10, "") + pb(12, 0) + pb(13, 1)
                + pb(14, pb(1, pb(1, 600))) + pb(17, "SingleStack") + pb(19, "IPv4"))
    meta = pb(1, "pb-svc") + pb(3, "shop") + pb(8, b"") + pb_map(11, {"app": "pb"})
    raw = pb(1, meta) + pb(2, raw_spec) + pb(3, pb(1, b""))
    resp = post_protobuf("/api/v1/namespaces/shop/services", k8s_protobuf("Service", raw))
    check(resp.status == 201, resp.body)
    same = SIM.request("POST", "/api/v1/namespaces/shop/services",
                       service("json-svc", labels={"app": "pb"}, **spec))
    check(same.status == 201, same.body)
    got, want = resp.json()["spec"], same.json()["spec"]
    check(got["clusterIP"].startswith("10.96.") and got["ports"] == ports, got)
    for ip_field in ("clusterIP", "clusterIPs"):
        got.pop(ip_field), want.pop(ip_field)
    check(got == want, (got, want))
    SIM.delete("services", "shop", "pb-svc")
    SIM.delete("services", "shop", "json-svc")


@case
def protobuf_bodies_the_decoder_refuses_are_400_with_its_error():
    raw = pb_namespace("pb-bad")
    cut = k8s_protobuf("Namespace", raw)[:-10]
    garbage = b"k8s\x00\x00garbage"
    unrecognized = "the object provided is unrecognized (must be of type Namespace): "
    cases = [
        (cut, unrecognized + f"unexpected EOF ({cut[:30].hex()} ...)"),
        (k8s_protobuf("Namespace", raw[:-3]),
         'Namespace in version "v1" cannot be handled as a Namespace: unexpected EOF'),
        (k8s_protobuf("Namespace", pb(1, pb(1, 5))),
         'Namespace in version "v1" cannot be handled as a Namespace: '
         'proto: wrong wireType = 0 for field Name'),
        (garbage, unrecognized + f"proto: Unknown: illegal tag 0 (wire type 0) ({garbage.hex()})"),
        (b"k8s\x00", unrecognized + "empty body (6b387300)"),
        (raw, unrecognized + "provided data does not appear to be a protobuf message, expected "
         f"prefix [107 56 115 0] ({raw.hex()})"),
    ]
    for body, message in cases:
        resp = post_protobuf("/api/v1/namespaces", body)
        check(resp.status == 400, (body, resp))
        status = status_of(resp)
        check(status["reason"] == "BadRequest" and status["message"] == message,
              (status["message"], message))
    check(SIM.get("/api/v1/namespaces/pb-bad").status == 404, "a refused body created something")


@case
def protobuf_unknown_fields_are_skipped_as_the_real_decoder_does():
    # The generated Unmarshal skips unknown field numbers, and the apiserver has no strict
    # protobuf decoding, so even fieldValidation=Strict accepts them.
    unknown = pb(99, "surprise") + pb(98, 7)
    raw = pb_namespace("pb-unknown", {"kept": "yes"}, meta_extra=unknown) + pb(50, 1)
    resp = post_protobuf("/api/v1/namespaces?fieldValidation=Strict",
                         k8s_protobuf("Namespace", raw) + pb(9, "envelope field"))
    check(resp.status == 201, resp.body)
    check(resp.json()["metadata"]["labels"]["kept"] == "yes", resp.body)
    check(b"surprise" not in SIM.get("/api/v1/namespaces/pb-unknown").body)
    SIM.delete("namespaces", "", "pb-unknown")


@case
def protobuf_envelope_kind_must_be_the_resource_kind_or_empty():
    resp = post_protobuf("/api/v1/namespaces", k8s_protobuf("Widget", pb_namespace("pb-widget")))
    check(resp.status == 400 and status_of(resp)["message"] ==
          "the kind in the data (Widget) does not match the expected kind (Namespace)", resp.body)
    resp = post_protobuf("/api/v1/namespaces", k8s_protobuf("Namespace", pb_namespace("pb-v2"),
                                                            api_version="v2"))
    check(resp.status == 400 and "API version in the data (v2)" in status_of(resp)["message"],
          resp.body)
    # Kind and version the envelope leaves out are the URL's (copyKindDefaults).
    bare = b"k8s\x00" + pb(2, pb_namespace("pb-bare"))
    resp = post_protobuf("/api/v1/namespaces", bare)
    check(resp.status == 201 and resp.json()["metadata"]["name"] == "pb-bare", resp.body)
    SIM.delete("namespaces", "", "pb-bare")


@case
def unreadable_content_types_are_415_naming_what_is_accepted():
    ns = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "yaml"}})
    resp = post_protobuf("/api/v1/namespaces", ns.encode(), {"Content-Type": "application/yaml"})
    check(resp.status == 415 and resp.headers["content-type"] == "application/json", resp)
    status = status_of(resp)
    check(status["reason"] == "UnsupportedMediaType" and status["message"] ==
          "the body of the request was in an unknown format - accepted media types include: "
          "application/json, application/vnd.kubernetes.protobuf", status)
    resp = post_protobuf("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices",
                         k8s_protobuf("EndpointSlice", b"", "discovery.k8s.io/v1"))
    check(resp.status == 415 and status_of(resp)["message"].endswith("include: application/json"),
          resp.body)
    resp = post_protobuf("/api/v1/namespaces", ns.encode(),
                         {"Content-Type": "application/json; charset=utf-8"})
    check(resp.status == 201, resp.body)
    SIM.delete("namespaces", "", "yaml")


@case
def empty_endpoint_slice_stores_endpoints_as_null():
    slice_ = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": {"name": "empty", "namespace": "shop"}, "addressType": "IPv4", "endpoints": []}
    resp = SIM.request("POST", "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices", slice_)
    check(resp.status == 201, resp)
    raw = SIM.get("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices/empty").body
    check(b'"endpoints":null' in raw and b'"ports":null' in raw, raw)
    check(SIM.request("DELETE", "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices/empty").json()
          ["kind"] == "Status", "slices answer DELETE with a Status")


@case
def deleting_a_service_collects_its_endpoint_slices():
    SIM.apply(service("owner"))
    owner = SIM.get_object("services", "shop", "owner")
    SIM.apply({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": "owner-abcde", "namespace": "shop",
                            "labels": {"kubernetes.io/service-name": "owner"},
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "owner",
                                                 "uid": owner["metadata"]["uid"], "controller": True}]},
               "addressType": "IPv4", "endpoints": [{"addresses": ["10.9.9.9"]}]})
    rv = SIM.resource_version()
    stream = watch(f"/apis/discovery.k8s.io/v1/endpointslices?watch=1&resourceVersion={rv}")
    SIM.request("DELETE", "/api/v1/namespaces/shop/services/owner")
    event = stream.next_event()
    stream.close()
    check(event["type"] == "DELETED" and event["object"]["metadata"]["name"] == "owner-abcde", event)


@case
def deleting_a_namespace_deletes_its_objects_then_itself():
    SIM.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}},
               service("inside", "doomed")])
    rv = SIM.resource_version()
    ns_stream = watch(f"/api/v1/namespaces?watch=1&resourceVersion={rv}")
    svc_stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}")
    resp = SIM.request("DELETE", "/api/v1/namespaces/doomed")
    check(resp.status == 200 and resp.json()["status"]["phase"] == "Terminating", resp)
    ns_events = ns_stream.events(2)
    svc_event = svc_stream.next_event()
    ns_stream.close()
    svc_stream.close()
    check([e["type"] for e in ns_events] == ["MODIFIED", "DELETED"], ns_events)
    check(svc_event["type"] == "DELETED" and svc_event["object"]["metadata"]["name"] == "inside")
    check(rv_of(ns_events[0]["object"]) < rv_of(svc_event["object"]) < rv_of(ns_events[1]["object"]))


# ---------------------------------------------------------------- the kinds of packaging/kubernetes

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def deployment(name="dep", **spec):
    labels = {"app": name}
    body = {"replicas": 2, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "c", "image": "example/app:1.0",
                                                  "ports": [{"containerPort": 53, "protocol": "UDP"}],
                                                  "volumeMounts": [{"name": "config", "mountPath": "/etc/x"}],
                                                  "readinessProbe": {"exec": {"command": ["true"]}}}],
                                  "volumes": [{"name": "config", "configMap": {"name": "cm"}}]}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop"}, "spec": body}


def cluster_role(name="system:reader", rules=None):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": rules if rules is not None else [
                {"apiGroups": [""], "resources": ["services"], "verbs": ["list", "watch"]}]}


def cluster_role_binding(name="system:reader", role="system:reader", subjects=None):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subjects if subjects is not None else [
                {"kind": "ServiceAccount", "name": "reader", "namespace": "shop"}]}


def create(path, obj, strict=True):
    return SIM.request("POST", path + ("?fieldValidation=Strict" if strict else ""), obj)


@case
def workload_kinds_are_created_defaulted_and_deleted():
    made = [
        ("/api/v1/namespaces/shop/serviceaccounts", "/api/v1/namespaces/shop/serviceaccounts/reader",
         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader"}}),
        ("/api/v1/namespaces/shop/configmaps", "/api/v1/namespaces/shop/configmaps/cm",
         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
          "data": {"knot.conf": "server:\n", "cluster.local.zone": "@ SOA ...\n"}}),
        ("/apis/apps/v1/namespaces/shop/deployments", "/apis/apps/v1/namespaces/shop/deployments/dep",
         deployment()),
        ("/apis/policy/v1/namespaces/shop/poddisruptionbudgets",
         "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/pdb",
         {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
          "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "dep"}}}}),
        (RBAC + "/clusterroles", RBAC + "/clusterroles/system:reader", cluster_role()),
        (RBAC + "/clusterrolebindings", RBAC + "/clusterrolebindings/system:reader", cluster_role_binding()),
    ]
    try:
        for collection, item, obj in made:
            resp = create(collection, obj)
            check(resp.status == 201, (obj["kind"], resp))
            check(SIM.get(item).status == 200, item)
        dep = SIM.get("/apis/apps/v1/namespaces/shop/deployments/dep").json()
        check(dep["metadata"]["generation"] == 1, dep["metadata"])
        check(dep["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {
            "maxUnavailable": "25%", "maxSurge": "25%"}}, dep["spec"])
        container = dep["spec"]["template"]["spec"]["containers"][0]
        check(container["imagePullPolicy"] == "IfNotPresent"
              and container["readinessProbe"]["periodSeconds"] == 10, container)
        check(dep["spec"]["template"]["spec"]["volumes"][0]["configMap"]["defaultMode"] == 420)
        names = [i["metadata"]["name"] for i in list_all(RBAC + "/clusterroles")["items"]]
        check(names == ["system:reader"], names)
        check(list_all("/apis/apps/v1/deployments")["items"][0]["metadata"]["name"] == "dep")
    finally:
        for _, item, _ in made:
            SIM.request("DELETE", item)
    check(SIM.get("/apis/apps/v1/namespaces/shop/deployments/dep").status == 404)


def refused(path, obj, status, *texts):
    resp = create(path, obj)
    message = status_of(resp).get("message", "") if resp.status >= 400 else ""
    check(resp.status == status and all(t in message for t in texts),
          f"{obj['kind']}: expected {status} with {texts}, got {resp.status}: {message or resp.body[:300]}")


@case
def workload_validation_refuses_what_the_registries_refuse():
    deps = "/apis/apps/v1/namespaces/shop/deployments"
    mismatch = deployment(selector={"matchLabels": {"app": "other"}})
    refused(deps, mismatch, 422, "spec.template.metadata.labels", "`selector` does not match template `labels`")
    no_mount = deployment()
    no_mount["spec"]["template"]["spec"]["volumes"] = []
    refused(deps, no_mount, 422, 'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "config"')
    no_command = deployment()
    no_command["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = {"exec": {}}
    refused(deps, no_command, 422, "spec.template.spec.containers[0].readinessProbe.exec.command: Required value")
    never = deployment()
    never["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    refused(deps, never, 422, 'spec.template.spec.restartPolicy: Unsupported value: "Never"')
    refused(deps, deployment(strategy={"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}), 422,
            "may not be 0 when `maxSurge` is 0")
    root = deployment()
    root["spec"]["template"]["spec"]["securityContext"] = {"runAsUser": -1}
    refused(deps, root, 422, "spec.template.spec.securityContext.runAsUser")
    refused("/apis/policy/v1/namespaces/shop/poddisruptionbudgets",
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "both"},
             "spec": {"minAvailable": 1, "maxUnavailable": "150%", "selector": {}}}, 422,
            "minAvailable and maxUnavailable cannot be both set", "must not be greater than 100%")
    refused("/api/v1/namespaces/shop/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keys"},
             "data": {"zones/cluster.local.zone": ""}}, 422, "a valid config key")
    refused("/api/v1/namespaces/shop/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "Not_Valid"}}, 422,
            "a lowercase RFC 1123 subdomain")
    refused(RBAC + "/clusterroles", cluster_role(rules=[{"apiGroups": [""], "resources": ["pods"]}]),
            422, "rules[0].verbs: Required value")
    refused(RBAC + "/clusterroles", cluster_role(rules=[{"resources": ["pods"], "verbs": ["get"]}]),
            422, "rules[0].apiGroups: Required value")
    refused(RBAC + "/clusterroles", cluster_role(name="a/b"), 422, "may not contain '/'")
    wrong_ref = cluster_role_binding()
    wrong_ref["roleRef"]["kind"] = "Role"
    refused(RBAC + "/clusterrolebindings", wrong_ref, 422, 'roleRef.kind: Unsupported value: "Role"')
    refused(RBAC + "/clusterrolebindings", cluster_role_binding(subjects=[
        {"kind": "ServiceAccount", "name": "reader"}]), 422, "subjects[0].namespace: Required value")
    refused("/api/v1/namespaces/shop/services", service("badlabel", labels={"a b": "x"}), 422,
            "metadata.labels")


@case
def workload_fields_are_decoded_strictly_and_typed():
    deps = "/apis/apps/v1/namespaces/shop/deployments"
    typo = deployment()
    typo["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    refused(deps, typo, 400, 'strict decoding error: unknown field '
            '"spec.template.spec.containers[0].imagePullPolicyy"')
    # A YAML plain scalar holding ": " is a mapping: the command list then holds an object.
    mapping = deployment()
    mapping["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["exec"]["command"] = [
        "/bin/sh", "-c", {"kdig ... | grep -q 'status": "NOERROR'"}]
    refused(deps, mapping, 400, "cannot unmarshal object into Go struct field", "exec.command[2]")
    refused(deps, deployment(replicas="2"), 400, "cannot unmarshal string", "spec.replicas", "int32")
    quantity = deployment()
    quantity["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"memory": "170 MB"}}
    refused(deps, quantity, 400, "quantities must match the regular expression")
    refused(RBAC + "/clusterroles", dict(cluster_role(), rule=[]), 400, 'unknown field "rule"')


@case
def cluster_role_binding_role_ref_cannot_change():
    check(create(RBAC + "/clusterrolebindings", cluster_role_binding("bound")).status == 201)
    try:
        changed = cluster_role_binding("bound", role="system:other")
        resp = SIM.request("PUT", RBAC + "/clusterrolebindings/bound", changed)
        check(resp.status == 422 and "cannot change roleRef" in status_of(resp)["message"], resp)
    finally:
        SIM.request("DELETE", RBAC + "/clusterrolebindings/bound")


@case
def simctl_command_line_lists_applies_and_deletes():
    simctl = [sys.executable, os.path.join(os.path.dirname(HERE), "lib", "simctl.py"), SIM.workdir]

    def run(*args, stdin=None):
        result = subprocess.run(simctl + list(args), input=stdin, capture_output=True, text=True,
                                timeout=30, check=False)
        return result.returncode, result.stdout, result.stderr
    code, out, _ = run("get", "services")
    rows = [line.split() for line in out.splitlines()]
    check(code == 0 and rows[0][:3] == ["NAMESPACE", "NAME", "TYPE"], out)
    check(["kube-system", "kube-dns", "ClusterIP", "10.96.0.10"] in [r[:4] for r in rows], out)
    obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hello", "namespace": "default"},
           "spec": {"ports": [{"port": 80}]}}
    code, out, _ = run("apply", "-", stdin=json.dumps(obj))
    check(code == 0 and out.strip() == "service/default/hello created", out)
    check(SIM.get_object("services", "default", "hello")["spec"]["clusterIP"].startswith("10.96."))
    code, out, _ = run("get", "svc", "default")
    check(code == 0 and "hello" in out and "NAMESPACE" not in out, out)
    code, out, _ = run("delete", "service", "default", "hello")
    check(code == 0 and out.strip() == "service/default/hello deleted", out)
    code, _, err = run("delete", "service", "default", "hello")
    check(code == 1 and "not found" in err, err)


# ---------------------------------------------------------------- faults

@case
def fault_429_apf_is_text_plain_with_retry_after():
    SIM.too_many_requests(count=2, body="apf", retry_after=3, match="/api/v1/services")
    for _ in range(2):
        resp = SIM.get("/api/v1/services")
        check(resp.status == 429 and resp.headers["retry-after"] == "3", resp)
        check(resp.body == b"Too many requests, please try again later.\n", resp.body)
        check(resp.headers["content-type"].startswith("text/plain"))
    check(SIM.get("/api/v1/services").status == 200, "only the next N requests")


@case
def fault_429_status_is_json_with_retry_after_seconds():
    SIM.too_many_requests(count=1, body="status", retry_after=2, verbs=["watch"])
    check(SIM.get("/api/v1/services").status == 200, "a LIST does not match verbs=[watch]")
    resp = SIM.get("/api/v1/services?watch=1")
    body = status_of(resp)
    check(resp.status == 429 and resp.headers["retry-after"] == "2", resp)
    check(body["reason"] == "TooManyRequests" and body["details"]["retryAfterSeconds"] == 2, body)


@case
def fault_outage_refuses_connections_drops_streams_then_recovers():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}")
    SIM.outage(1.0)
    try:
        stream.next_event()
        raise AssertionError("stream survived the outage")
    except (StreamCut, OSError, ssl.SSLError):
        pass
    refused = False
    try:
        socket.create_connection(("127.0.0.1", SIM.port), timeout=2).close()
    except ConnectionRefusedError:
        refused = True
    check(refused, "connection accepted during the outage")
    time.sleep(1.3)
    check(SIM.get("/api/v1/services").status == 200, "not back after the outage")
    check(SIM.resource_version() == rv, "an outage loses nothing")


@case
def fault_hang_keeps_the_socket_open_without_writing():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}", timeout=1)
    SIM.hang(True, "services")
    try:
        SIM.apply(service("while-hung"))
        try:
            stream.next_event()
            raise AssertionError("event written while hung")
        except socket.timeout:
            pass
    finally:
        SIM.hang(False, "services")
    stream.sock.settimeout(5)
    event = stream.next_event()
    stream.close()
    check(event["object"]["metadata"]["name"] == "while-hung", "queued event after the hang")
    SIM.delete("services", "shop", "while-hung")


def _cut(mode):
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
    SIM.wait_for_watches("services")
    with with_config(split_probability=0.0):
        check(SIM.cut_streams(mode, "services") >= 1)
        SIM.apply(service(f"cut-{mode}"))
        try:
            event = stream.next_event()
            outcome = ("clean-end", event)
        except StreamCut:
            outcome = ("cut", None)
        except (ConnectionResetError, ssl.SSLError, OSError) as err:
            outcome = ("reset", err)
    partial = stream.pending
    stream.close()
    SIM.delete("services", "shop", f"cut-{mode}")
    return outcome, partial, stream


@case
def fault_cut_mid_line_then_terminating_chunk():
    (kind, event), partial, stream = _cut("chunk-end")
    check(kind == "clean-end" and event is None and stream.ended, kind)
    check(partial.startswith(b'{"type":"ADDED"') and b"\n" not in partial, partial)


@case
def fault_cut_mid_line_without_terminating_chunk():
    (kind, _), partial, stream = _cut("close")
    check(kind == "cut" and not stream.ended and partial.startswith(b'{"type":"ADDED"'), (kind, partial))


@case
def fault_cut_inside_a_chunk():
    (kind, _), partial, stream = _cut("mid-chunk")
    check(kind == "cut" and not stream.ended and partial == b"", (kind, partial))


@case
def fault_cut_with_tcp_reset():
    (kind, _), _, stream = _cut("rst")
    check(kind in ("cut", "reset") and not stream.ended, kind)


@case
def fault_clean_cut_ends_streams_now():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}")
    SIM.wait_for_watches("services")
    SIM.cut_streams("clean", "services")
    check(stream.next_event() is None and stream.ended)


@case
def slow_consumer_watch_is_closed_when_its_queue_overflows():
    with with_config(watch_queue_limit=3):
        rv = SIM.resource_version()
        stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
        SIM.wait_for_watches("services")
        SIM.hang(True, "services")     # the stream stops draining, as if the client did not read
        try:
            SIM.apply([service(f"flood-{n}") for n in range(5)])
        finally:
            SIM.hang(False, "services")
        check(stream.next_event() is None and stream.ended, "the overflowing watch ends cleanly")
    for n in range(5):
        SIM.delete("services", "shop", f"flood-{n}")


@case
def fault_slow_list_throttles_the_body():
    size = len(SIM.get("/api/v1/pods").body)
    SIM.slow_list(size // 2, "pods")
    try:
        started = time.monotonic()
        resp = SIM.get("/api/v1/pods")
        took = time.monotonic() - started
    finally:
        SIM.slow_list(0, "pods")
    check(resp.status == 200 and json.loads(resp.body)["kind"] == "PodList")
    check(took > 1.5, f"took {took:.2f} s")


@case
def fault_slow_list_of_a_small_body_is_not_gzipped():
    # A client accepting gzip would otherwise get the small body compressed, and fast.
    SIM.slow_list(100000, "services")
    try:
        stream = SIM.stream("/api/v1/services", headers={"Accept-Encoding": "gzip"})
        check(stream.chunked and "content-encoding" not in stream.headers, stream.headers)
        check(json.loads(stream.body())["kind"] == "ServiceList")
        stream.close()
    finally:
        SIM.slow_list(0, "services")


@case
def fault_big_object_makes_a_watch_line_over_2_mib():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
    info = SIM.big_object("services", "shop", "syslog", 2 * 1024 * 1024 + 4096)
    event = stream.next_event()
    stream.close()
    check(info["bytes"] > 2 * 1024 * 1024)
    check(len(event["object"]["metadata"]["annotations"]["apisim.k8s.io/padding"]) == 2 * 1024 * 1024 + 4096)
    check(max(len(c) for c in stream.chunks) <= 32 * 1024, "big lines go out in 16-32 KiB chunks")
    SIM.apply(json.load(open(os.path.join(SAMPLE, "60-ports-named-unnamed-udp.json"))))


@case
def fault_big_object_of_empty_objects_is_served_in_watch_and_list():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/namespaces/shop/services?watch=1&resourceVersion={rv}")
    info = SIM.big_object("services", "shop", "syslog", 3 * 1024 * 1024, shape="empty-objects")
    event = stream.next_event()
    stream.close()
    fields = event["object"]["metadata"]["managedFields"]
    check(len(fields) == 1024 * 1024 and all(f == {} for f in fields), len(fields))
    check(3 * 1024 * 1024 < info["bytes"] < 3 * 1024 * 1024 + 4096, info)
    items = SIM.get("/api/v1/namespaces/shop/services?fieldSelector=metadata.name%3Dsyslog").json()["items"]
    check(len(items[0]["metadata"]["managedFields"]) == 1024 * 1024)
    try:
        SIM.big_object("services", "shop", "syslog", 10, shape="round")
        check(False, "an unknown shape is refused")
    except SimulatorError as e:
        check("400" in str(e), e)
    SIM.apply(json.load(open(os.path.join(SAMPLE, "60-ports-named-unnamed-udp.json"))))


@case
def fault_absent_resource_is_404_text_and_leaves_discovery():
    SIM.set_absent("serviceimports")
    try:
        resp = SIM.get("/apis/multicluster.x-k8s.io/v1alpha1/serviceimports")
        check(resp.status == 404 and resp.body == b"404 page not found\n", resp)
        groups = [g["name"] for g in list_all("/apis")["groups"]]
        check("multicluster.x-k8s.io" not in groups, groups)
    finally:
        SIM.set_absent("serviceimports", False)
    check(len(list_all("/apis/multicluster.x-k8s.io/v1alpha1/serviceimports")["items"]) == 2)


@case
def fault_forbid_is_403_status():
    SIM.forbid("endpointslices")
    try:
        resp = SIM.get("/apis/discovery.k8s.io/v1/endpointslices")
        body = status_of(resp)
        check(resp.status == 403 and body["reason"] == "Forbidden", resp)
        check("cannot list resource \"endpointslices\" in API group \"discovery.k8s.io\"" in body["message"])
    finally:
        SIM.forbid("endpointslices", False)


@case
def restart_loses_history_keeps_counting_and_says_initializing():
    SIM.apply(service("pre-restart"))
    old = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={old}")
    SIM.restart(initializing_seconds=1.0)
    try:
        stream.next_event()
        raise AssertionError("stream survived the restart")
    except (StreamCut, OSError, ssl.SSLError):
        pass
    resp = SIM.get("/api/v1/services")
    check(resp.status == 429 and status_of(resp)["message"] == "storage is (re)initializing", resp)
    check(int(resp.headers["retry-after"]) >= 1)
    time.sleep(1.1)
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={old - 1}")
    check(stream.next_event()["object"]["code"] == 410, "pre-restart versions are too old")
    stream.close()
    rv = SIM.delete("services", "shop", "pre-restart")
    check(rv == old + 1, "the RV counter continues")


@case
def injected_events_reach_open_watches_unchanged():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}")
    ghost = {"kind": "Service", "apiVersion": "v1",
             "metadata": {"name": "ghost", "namespace": "shop", "resourceVersion": str(rv)}}
    check(SIM.inject_event("services", "DELETED", ghost)["delivered"] >= 1)
    event = stream.next_event()
    stream.close()
    check(event == {"type": "DELETED", "object": ghost}, event)


@case
def injected_events_may_be_of_any_type_and_shape():
    rv = SIM.resource_version()
    stream = watch(f"/api/v1/services?watch=1&resourceVersion={rv}")
    check(SIM.inject_event("services", "RENAMED", "not an object")["delivered"] >= 1)
    event = stream.next_event()
    stream.close()
    check(event == {"type": "RENAMED", "object": "not an object"}, event)


@case
def counters_and_request_log_show_what_the_client_did():
    since = SIM.counters()["last_seq"]
    SIM.get("/api/v1/pods?limit=1")
    # The simulator logs a request after it has answered it: wait for the line.
    deadline = time.monotonic() + 5
    while not (log := SIM.requests(since)) and time.monotonic() < deadline:
        time.sleep(0.05)
    check(log, "no request logged within 5 s")
    check(log[-1]["verb"] == "list" and log[-1]["resource"] == "pods" and log[-1]["query"] == "limit=1", log)
    check(SIM.counters()["verbs"].get("list pods", 0) >= 1)


# ---------------------------------------------------------------- separate simulators

@case
def required_client_certificate_refuses_handshakes_without_one():
    with tempfile.TemporaryDirectory() as work:
        with Simulator(work, args=["--require-client-cert"]) as sim:
            check(sim.get("/api/v1/namespaces", token=None, cert=True).status == 200)
            try:
                sim.get("/api/v1/namespaces")
                raise AssertionError("handshake without a client certificate succeeded")
            except (ssl.SSLError, ConnectionResetError, OSError):
                pass


@case
def serviceimports_can_be_served_at_v1beta1_only():
    imp = {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
           "metadata": {"name": "web", "namespace": "default"},
           "spec": {"type": "ClusterSetIP", "ips": ["10.42.0.1"],
                    "ports": [{"name": "http", "protocol": "TCP", "port": 80}]}}
    with tempfile.TemporaryDirectory() as work:
        with Simulator(work, args=["--serviceimport-version", "v1beta1"]) as sim:
            sim.apply(imp)
            items = sim.get("/apis/multicluster.x-k8s.io/v1beta1/serviceimports").json()["items"]
            check([i["metadata"]["name"] for i in items] == ["web"], str(items))
            check(items[0]["apiVersion"] == "multicluster.x-k8s.io/v1beta1", str(items[0]))
            check(sim.get("/apis/multicluster.x-k8s.io/v1alpha1/serviceimports").status == 404)
            versions = [v["version"] for g in sim.get("/apis").json()["groups"]
                        if g["name"] == "multicluster.x-k8s.io" for v in g["versions"]]
            check(versions == ["v1beta1"], str(versions))


@case
def simulator_start_fails_clearly_on_a_bad_manifest():
    with tempfile.TemporaryDirectory() as work:
        bad = os.path.join(work, "bad.json")
        with open(bad, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}, f)
        try:
            Simulator(os.path.join(work, "sim"), manifests=[bad]).start()
            raise AssertionError("started with an unsupported manifest")
        except SimulatorError as err:
            check("not served" in str(err), str(err))


@case
def generated_objects_list_page_watch_and_change_like_stored_ones():
    spec = "services=50,endpoints=10,pods=120,namespaces=5,headless-every=5"
    with tempfile.TemporaryDirectory() as work:
        with Simulator(work, generate=spec) as sim:
            slices = sim.get("/apis/discovery.k8s.io/v1/endpointslices?labelSelector="
                             "apisim.k8s.io%2Fgenerated").json()["items"]
            check(len(slices) == 50 and sum(len(s["endpoints"]) for s in slices) == 500, len(slices))
            check(sim.get("/api/v1/namespaces/default/services/kubernetes").status == 200,
                  "the bootstrap objects are there too")
            pods = sim.get("/api/v1/pods").json()["items"]
            check(len(pods) == 120)
            keys = [p["metadata"]["namespace"] + "/" + p["metadata"]["name"] for p in pods]
            check(keys == sorted(keys))
            headless = sim.get("/api/v1/namespaces/gen-0000/services/svc-000005").json()
            check(headless["spec"]["clusterIP"] == "None")
            first = sim.get("/api/v1/namespaces/gen-0001/services?limit=4").json()
            check(first["metadata"]["remainingItemCount"] == 6, first["metadata"])
            svc = sim.get_object("services", "gen-0000", "svc-000001")
            rv = sim.resource_version()
            stream = sim.stream(f"/api/v1/namespaces/gen-0000/services?watch=1&resourceVersion={rv}")
            svc["metadata"]["labels"]["changed"] = "yes"
            sim.apply(svc)
            sim.delete("services", "gen-0000", "svc-000002")
            events = stream.events(2)
            stream.close()
            check([e["type"] for e in events] == ["MODIFIED", "DELETED"], events)
            check(events[1]["object"]["metadata"]["name"] == "svc-000002")
            names = [s["metadata"]["name"] for s in
                     sim.get("/api/v1/namespaces/gen-0000/services").json()["items"]]
            check("svc-000002" not in names and len(names) == 9, names)
            gc = [s["metadata"]["name"] for s in
                  sim.get("/apis/discovery.k8s.io/v1/namespaces/gen-0000/endpointslices").json()["items"]]
            check(not any(n.startswith("svc-000002-") for n in gc), "slice of the deleted service kept")
            again = sim.get_object("services", "gen-0000", "svc-000001")
            check(again["metadata"]["labels"]["changed"] == "yes")


def main(argv):
    global SIM
    work = tempfile.mkdtemp(prefix="apisim-test-")
    SIM = Simulator(os.path.join(work, "shared"), manifests=[SAMPLE])
    try:
        SIM.start()
        return run_cases(CASES, argv, SIM)
    finally:
        SIM.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
