"""The HTTPS API: authentication, faults, discovery and the resource verbs.

Request order follows the real server's filter chain: authentication (401), priority and
fairness (429), authorization (403), then the handler (404 for unknown paths)."""

import http.server
import itertools
import json
import random
import time
import urllib.parse
import uuid

from . import discovery, encoding, objects, openapi, resources, selectors, tables
from .encoding import ApiError
from .httpio import BodyWriter, StreamClosed, StreamWriter, close_connection
from .store import ADDED, BOOKMARK, DELETED, ERROR, Record, Watcher, make_key, with_type_meta

PRETTY_AGENTS = ("curl", "Wget", "Mozilla/5.0")
MAX_BODY = 3 * 1024 * 1024
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz")
TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"
FLOW_SCHEMA_UID = "7c5f0c67-0c3e-4a4b-9a7e-3f3b2f4d9e01"
PRIORITY_LEVEL_UID = "b1a4f5f0-6c2e-4f53-8a9c-2d9c8e7f6a02"


class Context:
    """What every request handler shares."""

    def __init__(self, store, state, creds, log, seed=0):
        self.store = store
        self.state = state
        self.creds = creds
        self.log = log
        self.seed = seed
        self.stream_ids = itertools.count(1)
        self.port = 0
        self.address = "127.0.0.1"

    @property
    def address_for_clients(self):
        """host:port as /api's serverAddressByClientCIDRs reports it."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}"


class Target:
    """What a URL path names."""

    def __init__(self, kind, rtype=None, namespace="", name="", watch_prefix=False, extra=None):
        self.kind = kind            # version, health, api, apis, group, gv, openapi, resource, notfound
        self.rtype = rtype
        self.namespace = namespace
        self.name = name
        self.watch_prefix = watch_prefix
        self.extra = extra


def parse_path(path):
    """Maps a URL path to a Target (resource paths of every served group version)."""
    parts = [p for p in path.split("/") if p]
    if path in ("/version", "/version/"):
        return Target("version")
    if path in PUBLIC_PATHS:
        return Target("health")
    if parts[:1] == ["openapi"]:
        return Target("openapi", extra="/".join(parts[1:]))
    if parts == ["api"]:
        return Target("api")
    if parts == ["apis"]:
        return Target("apis")
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) == 2:
        return Target("group", extra=parts[1])
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return Target("notfound")
    if not rest:
        return Target("gv", extra=(group, version))
    watch_prefix = False
    if rest[0] == "watch":
        watch_prefix, rest = True, rest[1:]
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
        if not namespace:
            return Target("notfound")
    elif len(rest) == 2 and rest[0] == "namespaces" and not group:
        rest = ["namespaces", rest[1]]
    if len(rest) not in (1, 2):
        return Target("notfound")
    rtype = resources.BY_PLURAL.get(rest[0])
    if rtype is None or rtype.group != group or rtype.version != version:
        return Target("notfound")
    if namespace and not rtype.namespaced:
        return Target("notfound")
    name = rest[1] if len(rest) == 2 else ""
    return Target("resource", rtype, namespace, name, watch_prefix)


def qbool(query, name):
    """None when absent; otherwise anything but "0"/"false" is true (Convert_Slice_string_To_bool)."""
    if name not in query:
        return None
    return query[name].lower() not in ("0", "false")


def qint(query, name):
    if not query.get(name):
        return None
    try:
        return int(query[name])
    except ValueError:
        raise encoding.bad_request(f"invalid value for {name}: strconv.ParseInt: parsing "
                                   f"\"{query[name]}\": invalid syntax") from None


def negotiate(accept):
    """The representation the Accept header asks for: "json", "table" or None (406)."""
    if not accept:
        return "json"
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0]
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if media not in ("application/json", "*/*", "application/*"):
            continue
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" \
                and params.get("v") in ("v1", "v1beta1"):
            return "table"
        if "as" in params:
            continue
        return "json"
    return None


def forbidden_message(user, verb, rtype, namespace):
    scope = f"in the namespace \"{namespace}\"" if namespace else "at the cluster scope"
    return (f"{rtype.group_resource} is forbidden: User \"{user}\" cannot {verb} resource "
            f"\"{rtype.plural}\" in API group \"{rtype.group}\" {scope}")


class ApiHandler(http.server.BaseHTTPRequestHandler):
    """One connection of the HTTPS API (HTTP/1.1 keep-alive)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 120
    ctx = None  # set on a subclass by the listener

    # -- plumbing --

    def log_message(self, fmt, *args):
        pass

    def log_request(self, code="-", size="-"):
        pass

    def send_response(self, code, message=None):
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())
        self.status_code = code

    def send_common_headers(self, content_type, extra=()):
        self.send_header("Audit-Id", self.audit_id)
        self.send_header("Cache-Control", "no-cache, private")
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("X-Kubernetes-Pf-Flowschema-Uid", FLOW_SCHEMA_UID)
        self.send_header("X-Kubernetes-Pf-Prioritylevel-Uid", PRIORITY_LEVEL_UID)
        for name, value in extra:
            self.send_header(name, value)

    def pretty(self):
        if qbool(self.query, "pretty"):
            return True
        agent = self.headers.get("User-Agent", "")
        return self.ctx.state.get("pretty_user_agents") and agent.startswith(PRETTY_AGENTS)

    def send_json(self, code, obj, content_type="application/json", headers=()):
        text = encoding.pretty(obj) + "\n" if self.pretty() else encoding.compact(obj) + "\n"
        self.send_bytes(code, text.encode(), content_type, headers)

    def send_bytes(self, code, data, content_type, headers=()):
        writer = BodyWriter(self, code, content_type, self.gzip_ok(),
                            self.ctx.state.get("gzip_threshold"), headers=headers)
        writer.write(data)
        writer.close()

    def send_error_status(self, err):
        headers = [("Retry-After", str(err.retry_after))] if err.retry_after else []
        self.send_json(err.code, err.body(), headers=headers)

    def send_not_found_text(self):
        self.send_bytes(404, b"404 page not found\n", "text/plain; charset=utf-8",
                        [("X-Content-Type-Options", "nosniff")])

    def gzip_ok(self):
        return "gzip" in self.headers.get("Accept-Encoding", "")

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = \
        lambda self: self.dispatch()

    # -- the request --

    def dispatch(self):
        self.status_code = None
        self.audit_id = str(uuid.uuid4())
        self.verb, self.resource = "", ""
        self.logged = False
        self.warnings = []
        url = urllib.parse.urlsplit(self.path)
        self.url_path = url.path
        self.raw_query = url.query
        self.query = {}
        for key, value in urllib.parse.parse_qsl(url.query, keep_blank_values=True):
            self.query.setdefault(key, value)
        try:
            body = self.read_body()
            self.route(body)
        except ApiError as err:
            if self.status_code is None:
                self.send_error_status(err)
        except StreamClosed:
            self.close_connection = True
        except (OSError, ValueError):
            self.close_connection = True
        finally:
            self.finish_log()

    def finish_log(self):
        if self.logged:
            return
        self.logged = True
        code = self.status_code or 0
        shown = self.url_path + ("?" + self.raw_query if self.raw_query else "")
        self.ctx.log(f"{self.command} {shown} {code}")
        self.ctx.state.count(self.command, self.url_path, self.raw_query, self.verb, self.resource, code)

    def user(self):
        """The authenticated user name, or None (client certificate first, then bearer token)."""
        cert = self.connection.getpeercert()
        if cert:
            for rdn in cert.get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        return value
        auth = self.headers.get("Authorization", "")
        if auth[:7].lower() == "bearer " and self.ctx.creds.token_valid(auth[7:].strip()):
            return self.ctx.creds.user
        return None

    def route(self, body):
        ctx = self.ctx
        target = parse_path(self.url_path)
        method = self.command
        if target.kind == "resource":
            self.resource = target.rtype.plural
            self.verb = self.request_verb(method, target)
        else:
            self.verb = {"openapi": "openapi", "health": "health", "version": "version",
                         "notfound": "other"}.get(target.kind, "discovery")
        user = self.user()
        if user is None:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        rule = ctx.state.take_too_many(self.verb, self.url_path) if target.kind != "health" else None
        if rule:
            self.send_too_many(rule)
            return
        if target.kind == "resource" and target.rtype.plural in ctx.state.absent:
            self.send_not_found_text()
            return
        if target.kind == "resource" and target.rtype.plural in ctx.state.forbid:
            raise ApiError(403, "Forbidden",
                           forbidden_message(user, self.verb, target.rtype, target.namespace),
                           {"kind": target.rtype.plural, **({"group": target.rtype.group}
                                                            if target.rtype.group else {})})
        if target.kind == "resource":
            left = ctx.state.initializing()
            if left > 0:
                raise ApiError(429, "TooManyRequests", "storage is (re)initializing",
                               retry_after=max(1, min(30, int(left) + 1)))
            self.handle_resource(method, target, body)
        elif target.kind == "health":
            self.send_bytes(200, b"ok", "text/plain; charset=utf-8", [("X-Content-Type-Options", "nosniff")])
        elif target.kind == "version":
            self.send_json(200, discovery.VERSION)
        elif target.kind == "openapi":
            self.handle_openapi(target.extra)
        elif target.kind in ("api", "apis", "group", "gv"):
            self.handle_discovery(target)
        else:
            self.send_not_found_text()

    def request_verb(self, method, target):
        if method in ("GET", "HEAD"):
            if target.watch_prefix or qbool(self.query, "watch"):
                return "watch"
            return "get" if target.name else "list"
        if method == "DELETE":
            return "delete" if target.name else "deletecollection"
        return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())

    def send_too_many(self, rule):
        retry = str(rule["retry_after"])
        if rule["body"] == "status":
            self.send_error_status(ApiError(429, "TooManyRequests", rule.get("message")
                                            or "storage is (re)initializing",
                                            retry_after=rule["retry_after"]))
        else:
            self.send_bytes(429, b"Too many requests, please try again later.\n",
                            "text/plain; charset=utf-8",
                            [("Retry-After", retry), ("X-Content-Type-Options", "nosniff")])

    # -- discovery and OpenAPI --

    def handle_discovery(self, target):
        absent = self.ctx.state.absent
        if target.kind in ("api", "apis"):
            version = discovery.aggregated_version(self.headers.get("Accept"))
            if version:
                content_type = discovery.AGGREGATED_V2 if version == "v2" else discovery.AGGREGATED_V2BETA1
                self.send_json(200, discovery.aggregated(target.kind == "api", absent, version),
                               content_type=content_type)
            elif target.kind == "api":
                self.send_json(200, discovery.api_versions(f"{self.ctx.address_for_clients}"))
            else:
                self.send_json(200, discovery.api_group_list(absent))
            return
        doc = (discovery.api_group(target.extra, absent) if target.kind == "group"
               else discovery.resource_list(*target.extra, absent))
        if doc is None:
            self.send_not_found_text()
        else:
            self.send_json(200, doc)

    def handle_openapi(self, rest):
        if rest == "v2":
            accept = self.headers.get("Accept", "")
            protobuf = any(form in accept for form in openapi.V2_PROTOBUF_ACCEPT)
            self.send_bytes(200, openapi.v2_document(protobuf),
                            openapi.V2_PROTOBUF if protobuf else "application/json")
            return
        doc = openapi.document(rest, self.ctx.state.absent)
        if doc is None:
            self.send_not_found_text()
        else:
            content_type = "application/json"
            self.send_bytes(200, encoding.compact(doc).encode(), content_type,
                            [("Etag", '"' + openapi.etag(rest[3:] if rest.startswith("v3/") else "") + '"')])

    # -- resources --

    def handle_resource(self, method, target, body):
        rtype = target.rtype
        verb = self.verb
        if verb in ("get", "list", "watch"):
            fmt = negotiate(self.headers.get("Accept"))
            if fmt is None:
                raise ApiError(406, "NotAcceptable", "only the following media types are accepted: "
                               "application/json, application/json;as=Table;v=v1;g=meta.k8s.io")
            if verb == "watch":
                self.handle_watch(rtype, target.namespace, target.name, fmt)
            elif verb == "list":
                self.handle_list(rtype, target.namespace, fmt)
            else:
                self.handle_get(rtype, target.namespace, target.name, fmt)
        elif verb == "create":
            self.handle_create(rtype, target.namespace, body)
        elif verb == "update":
            self.handle_update(rtype, target.namespace, target.name, body)
        elif verb == "patch":
            self.handle_patch(rtype, target.namespace, target.name, body)
        elif verb == "delete":
            self.handle_delete(rtype, target.namespace, target.name, body)
        elif verb == "deletecollection":
            self.handle_delete_collection(rtype, target.namespace)
        else:
            raise ApiError(405, "MethodNotAllowed", f"the server does not allow this method on the "
                           f"requested resource")

    def selectors(self, rtype):
        try:
            lsel = selectors.LabelSelector(self.query.get("labelSelector", ""))
            fsel = selectors.FieldSelector(self.query.get("fieldSelector", ""), rtype.field_names())
        except selectors.SelectorError as err:
            raise encoding.bad_request(str(err)) from None
        return lsel, fsel

    @staticmethod
    def list_options_invalid(field, message):
        return encoding.invalid("ListOptions", "meta.k8s.io", "",
                                [(field, "FieldValueForbidden", f"Forbidden: {message}")])

    def parse_rv(self, text):
        try:
            value = int(text)
            if value < 0:
                raise ValueError
            return value
        except ValueError:
            raise encoding.bad_request(f"invalid resource version: {text}") from None

    def wait_not_older(self, rv):
        """LIST/GET "not older than rv": waits briefly for a future RV, then 504 like the cacher."""
        store = self.ctx.store
        if store.wait_for_rv(rv, self.ctx.state.get("too_large_wait")):
            return
        raise ApiError(504, "Timeout", f"Timeout: Too large resource version: {rv}, current: "
                       f"{store.current_rv()}",
                       {"causes": [{"reason": "ResourceVersionTooLarge",
                                    "message": "Too large resource version"}]},
                       retry_after=1)

    def handle_list(self, rtype, namespace, fmt):
        q = self.query
        store = self.ctx.store
        rv_text = q.get("resourceVersion", "")
        match = q.get("resourceVersionMatch", "")
        cont = q.get("continue", "")
        limit = qint(q, "limit") or 0
        if match:
            if match not in ("NotOlderThan", "Exact"):
                raise encoding.invalid("ListOptions", "meta.k8s.io", "", [
                    ("resourceVersionMatch", "FieldValueNotSupported",
                     f"Unsupported value: \"{match}\": supported values: \"Exact\", \"NotOlderThan\", \"\"")])
            if not rv_text:
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch is "
                                                "forbidden when resourceVersion is not provided")
            if cont:
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch is "
                                                "forbidden when continue is provided")
            if match == "Exact" and rv_text == "0":
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch "
                                                "\"exact\" is forbidden for resourceVersion \"0\"")
        if qbool(q, "sendInitialEvents") is not None:
            raise self.list_options_invalid("sendInitialEvents", "sendInitialEvents is forbidden for list")
        lsel, fsel = self.selectors(rtype)
        start = ""
        if cont:
            if rv_text not in ("", "0"):
                raise encoding.bad_request("specifying resource version is not allowed when using continue")
            token_rv, start = encoding.decode_continue(cont)
            if token_rv == -1:
                snap = store.snapshot(rtype)
            elif token_rv < store.floor(rtype):
                retry = encoding.encode_continue(-1, start[:-1] if start.endswith("\x00") else start)
                raise encoding.expired(
                    "The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter, or use the continue "
                    "token in this response to retrieve the remainder of the results. Continuing "
                    "with the provided token results in an inconsistent list - objects that were "
                    "created, modified, or deleted between the time the first chunk was returned "
                    "and now may show up in the list.", continue_token=retry)
            else:
                snap = store.snapshot(rtype, token_rv)
        elif rv_text == "0":
            snap = store.snapshot(rtype)
            limit = 0   # the watch cache ignores limit for RV "0"
        elif rv_text:
            rv = self.parse_rv(rv_text)
            if rv > store.current_rv():
                self.wait_not_older(rv)
            exact = match == "Exact" or (limit and match != "NotOlderThan")
            snap = store.snapshot(rtype, rv) if exact else store.snapshot(rtype)
        else:
            snap = store.snapshot(rtype)
        prefix = namespace + "/" if namespace else ""
        if fsel.single_name() is not None and prefix:
            start = max(start, prefix + fsel.single_name())
        selected = (r for r in snap.iter_from(start, prefix) if
                    (lsel.empty or lsel.matches(r.labels())) and (fsel.empty or fsel.matches(r.field)))
        meta = {"resourceVersion": str(snap.rv)}
        if limit > 0:
            page = list(itertools.islice(selected, limit))
            if page and next(selected, None) is not None:
                meta["continue"] = encoding.encode_continue(snap.rv, page[-1].key)
                if lsel.empty and fsel.empty:
                    remaining = snap.count_after(page[-1].key)
                    if prefix:
                        remaining -= snap.count_after(prefix + "\U0010ffff")
                    meta["remainingItemCount"] = remaining
            items = iter(page)
        else:
            items = selected
        rate = self.ctx.state.list_rate(rtype.plural)
        if fmt == "table":
            self.write_table(rtype, items, meta, rate)
        else:
            self.write_list(rtype, items, meta, rate)

    def write_list(self, rtype, items, meta, rate):
        writer = BodyWriter(self, 200, "application/json", self.gzip_ok(),
                            self.ctx.state.get("gzip_threshold"), rate)
        empty = "null" if self.ctx.state.get("empty_items_null") else "[]"
        if self.pretty():
            writer.write('{\n  "kind": "%s",\n  "apiVersion": "%s",\n  "metadata": %s,\n  "items": '
                         % (rtype.list_kind, rtype.api_version, encoding.pretty_fragment(
                             encoding.compact(meta), 1)))
            first = True
            for rec in items:
                writer.write(("[\n    " if first else ",\n    ") + encoding.pretty_fragment(rec.item_json(), 2))
                first = False
            writer.write(empty + "\n}\n" if first else "\n  ]\n}\n")
        else:
            writer.write('{"kind":"%s","apiVersion":"%s","metadata":%s,"items":'
                         % (rtype.list_kind, rtype.api_version, encoding.compact(meta)))
            first = True
            batch = []
            for rec in items:
                batch.append(rec.item_json())
                if len(batch) >= 64:
                    writer.write(("[" if first else ",") + ",".join(batch))
                    first = False
                    batch = []
            if batch:
                writer.write(("[" if first else ",") + ",".join(batch))
                first = False
            writer.write(empty + "}\n" if first else "]}\n")
        writer.close()

    def write_table(self, rtype, items, meta, rate):
        include = self.query.get("includeObject", "Metadata")
        rows = [tables.row(rtype, rec.to_dict(), include) for rec in items]
        obj = tables.table(rtype, rows, meta)
        text = encoding.pretty(obj) if self.pretty() else encoding.compact(obj)
        writer = BodyWriter(self, 200, TABLE_TYPE, self.gzip_ok(),
                            self.ctx.state.get("gzip_threshold"), rate)
        writer.write(text + "\n")
        writer.close()

    def handle_get(self, rtype, namespace, name, fmt):
        store = self.ctx.store
        rv_text = self.query.get("resourceVersion", "")
        if rv_text and rv_text != "0":
            rv = self.parse_rv(rv_text)
            if rv > store.current_rv():
                self.wait_not_older(rv)
        rec = store.get(rtype, make_key(namespace, name))
        if rec is None:
            raise encoding.not_found(rtype, name)
        if fmt == "table":
            obj = tables.table(rtype, [tables.row(rtype, rec.to_dict(), self.query.get(
                "includeObject", "Metadata"))], {"resourceVersion": str(rec.rv)})
            self.send_json(200, obj, content_type=TABLE_TYPE)
            return
        text = rec.event_json()
        if self.pretty():
            text = encoding.pretty_fragment(text, 0)
        self.send_bytes(200, (text + "\n").encode(), "application/json")

    # -- WATCH --

    def handle_watch(self, rtype, namespace, name, fmt):
        ctx = self.ctx
        q = self.query
        store, state = ctx.store, ctx.state
        rv_text = q.get("resourceVersion", "")
        match = q.get("resourceVersionMatch", "")
        bookmarks = bool(qbool(q, "allowWatchBookmarks"))
        initial_param = qbool(q, "sendInitialEvents")
        timeout = qint(q, "timeoutSeconds")
        if initial_param is None and match:
            raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch is "
                                            "forbidden for watch unless sendInitialEvents is provided")
        if initial_param is not None:
            if match != "NotOlderThan":
                raise self.list_options_invalid("resourceVersionMatch", "sendInitialEvents requires "
                                                "setting resourceVersionMatch to NotOlderThan")
            if initial_param and not bookmarks:
                raise self.list_options_invalid("allowWatchBookmarks", "sendInitialEvents requires "
                                                "setting allowWatchBookmarks to true")
        lsel, fsel = self.selectors(rtype)
        if name:
            # GET .../services/NAME?watch=1: a watch of one object.
            fsel = selectors.FieldSelector(
                ",".join(filter(None, [fsel.text, "metadata.name=" + name.replace("\\", "\\\\")
                                       .replace(",", "\\,").replace("=", "\\=")])),
                rtype.field_names())
        if initial_param is None:
            initial = rv_text in ("", "0")
        else:
            initial = initial_param
        rv = self.parse_rv(rv_text) if rv_text not in ("", "0") else 0
        if rv_text == "0" and initial_param is False:
            rv = store.current_rv()
        watcher = Watcher(rtype, namespace, lsel, fsel, state.get("watch_queue_limit"))
        if timeout is None or timeout <= 0:
            timeout = 1800 * (1 + random.random())   # --min-request-timeout x [1, 2)
        content_type = TABLE_TYPE if fmt == "table" else "application/json"
        rng = random.Random(ctx.seed * 1000003 + next(ctx.stream_ids))
        stream = StreamWriter(self, rng, state.get("split_probability"))
        try:
            snap = store.open_watch(watcher, rv, initial)
        except ApiError as err:
            # Past authn/authz and a parsed RV, errors come as an ERROR event in a 200 stream.
            self.begin_stream(content_type)
            stream.send(self.event_line(ERROR, encoding.compact(err.body())))
            stream.end()
            return
        with state.lock:
            state.watches_opened[rtype.plural] += 1
        try:
            self.begin_stream(content_type)
            self.run_watch(watcher, snap, stream, fmt, bookmarks, timeout,
                           send_initial_end=bool(initial_param))
        finally:
            store.close_watch(watcher)

    def begin_stream(self, content_type):
        self.send_response(200)
        self.send_common_headers(content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()       # flushed at once, before any event exists
        self.finish_log()

    @staticmethod
    def event_line(kind, object_json):
        return ('{"type":"%s","object":%s}\n' % (kind, object_json)).encode()

    def encode_event(self, watcher, fmt, kind, payload):
        rtype = watcher.rtype
        if kind == BOOKMARK:
            return self.event_line(BOOKMARK, self.bookmark_json(rtype, payload))
        if kind in (ERROR, "RAW"):
            return payload if kind == "RAW" else self.event_line(ERROR, payload)
        if isinstance(payload, str):
            obj_json = payload
        else:
            obj_json = payload.object_json(kind)
        if fmt == "table":
            obj = json.loads(obj_json)
            obj_json = encoding.compact(tables.table(rtype, [tables.row(
                rtype, obj, self.query.get("includeObject", "Metadata"))],
                {"resourceVersion": obj["metadata"].get("resourceVersion", "")}))
        return self.event_line(kind, obj_json)

    def bookmark_json(self, rtype, rv, initial_end=False):
        meta = {"resourceVersion": str(rv)}
        if rtype.builtin and self.ctx.state.get("bookmark_creation_timestamp_null"):
            meta["creationTimestamp"] = None
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        if rtype.builtin:
            obj = {"kind": rtype.kind, "apiVersion": rtype.api_version, "metadata": meta}
            obj.update(rtype.bookmark_body)
        else:
            obj = {"apiVersion": rtype.api_version, "kind": rtype.kind, "metadata": meta}
        return encoding.compact(obj)

    def stream_blocked(self, watcher):
        """Waits while a hang fault holds this stream; True when the stream must end."""
        state = self.ctx.state
        while state.hung(watcher.rtype.plural):
            if watcher.closed:
                return True
            time.sleep(0.1)
        return watcher.closed

    def write_batch(self, watcher, stream, lines):
        if watcher.cut and watcher.cut != "clean":
            stream.cut(lines[0], watcher.cut)
        stream.send(b"".join(lines))

    def run_watch(self, watcher, snap, stream, fmt, bookmarks, timeout, send_initial_end):
        state, store = self.ctx.state, self.ctx.store
        started = time.monotonic()
        deadline = started + timeout
        final_bookmark = deadline - 2 if bookmarks and timeout > 2 else None
        next_bookmark = started + state.get("bookmark_interval")
        if snap is not None:
            lines, size = [], 0
            for rec in snap.iter_from("", watcher.namespace + "/" if watcher.namespace else ""):
                if not watcher.selects(rec):
                    continue
                lines.append(self.encode_event(watcher, fmt, ADDED, rec.event_json()))
                size += len(lines[-1])
                if size >= 64 * 1024:
                    if self.stream_blocked(watcher):
                        return self.end_watch(watcher, stream)
                    self.write_batch(watcher, stream, lines)
                    lines, size = [], 0
            if send_initial_end:
                lines.append(self.event_line(BOOKMARK, self.bookmark_json(watcher.rtype, snap.rv, True)))
            if lines:
                if self.stream_blocked(watcher):
                    return self.end_watch(watcher, stream)
                self.write_batch(watcher, stream, lines)
        while True:
            if self.stream_blocked(watcher) or watcher.cut == "clean" or watcher.overflow:
                return self.end_watch(watcher, stream)
            now = time.monotonic()
            if now >= deadline:
                return self.end_watch(watcher, stream)
            if bookmarks and now >= next_bookmark:
                store.bookmark(watcher)
                next_bookmark = now + state.get("bookmark_interval")
            if final_bookmark is not None and now >= final_bookmark:
                store.bookmark(watcher)
                final_bookmark = None
            watcher.wake.clear()
            items = []
            with store.lock:     # a multi-object write is queued as a whole before we drain
                while watcher.queue:
                    items.append(watcher.queue.popleft())
            if items:
                lines = [self.encode_event(watcher, fmt, kind, payload) for kind, payload in items]
                self.write_batch(watcher, stream, lines)
                continue
            wake_at = min(deadline, next_bookmark if bookmarks else deadline,
                          final_bookmark or deadline, now + 1.0)
            watcher.wake.wait(max(0.0, wake_at - now))

    def end_watch(self, watcher, stream):
        if watcher.closed and watcher.close_mode == "drop":
            close_connection(self.connection)
            raise StreamClosed("dropped")
        stream.end()

    # -- writes --

    def read_object(self, body):
        if not body:
            raise encoding.bad_request("the body of the request was in an unknown format - "
                                       "accepted media types include: application/json")
        if len(body) > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge", "the server has received too large of a "
                           f"request body (limit is {MAX_BODY})")
        try:
            obj = json.loads(body)
        except ValueError as err:
            raise encoding.bad_request(f"couldn't get version/kind; json parse error: {err}") from None
        if not isinstance(obj, dict):
            raise encoding.bad_request("couldn't get version/kind; json parse error: not an object")
        return obj

    def check_fields(self, rtype, obj):
        """fieldValidation: Strict rejects unknown fields (400), Warn reports them in a Warning header."""
        mode = self.query.get("fieldValidation", "")
        if mode not in ("Strict", "Warn"):
            return []
        unknown = objects.unknown_fields(rtype, obj)
        if unknown and mode == "Strict":
            raise encoding.bad_request(f"{rtype.kind} in version \"{rtype.version}\" cannot be handled as "
                                       f"a {rtype.kind}: strict decoding error: " +
                                       ", ".join(f"unknown field \"{f}\"" for f in unknown))
        return [("Warning", f'299 - "unknown field \\"{f}\\""') for f in unknown]

    def manager(self):
        if self.query.get("fieldManager"):
            return self.query["fieldManager"]
        agent = self.headers.get("User-Agent", "unknown")
        return agent.split("/")[0] or "unknown"

    def dry_run(self):
        return self.query.get("dryRun") == "All"

    def require_namespace(self, rtype, namespace):
        from . import resources as res
        if not rtype.namespaced:
            return
        ns = self.ctx.store.get(res.NAMESPACES, namespace)
        if ns is None:
            raise encoding.not_found(res.NAMESPACES, namespace)
        if (ns.to_dict().get("status") or {}).get("phase") == "Terminating":
            raise ApiError(403, "Forbidden", f"{rtype.plural} \"{namespace}\" is forbidden: unable to "
                           f"create new content in namespace {namespace} because it is being terminated")

    def send_object(self, code, rec_or_json):
        text = rec_or_json if isinstance(rec_or_json, str) else rec_or_json.event_json()
        if self.pretty():
            text = encoding.pretty_fragment(text, 0)
        self.send_bytes(code, (text + "\n").encode(), "application/json", self.warnings)

    def handle_create(self, rtype, namespace, body):
        obj = self.read_object(body)
        self.warnings = self.check_fields(rtype, obj)
        if rtype.namespaced and not namespace:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                           "requested resource")
        obj = objects.prepare_create(rtype, obj, namespace, self.manager())
        name = obj["metadata"]["name"]
        self.require_namespace(rtype, namespace)
        key = make_key(namespace, name)
        if self.dry_run():
            if self.ctx.store.get(rtype, key) is not None:
                raise already_exists(rtype, name)
            self.send_object(201, object_json(rtype, obj))
            return

        def create(cur):
            if cur is not None:
                raise already_exists(rtype, name)
            return obj
        ev = self.ctx.store.mutate(rtype, key, create)
        self.send_object(201, ev.new)

    def handle_update(self, rtype, namespace, name, body):
        obj = self.read_object(body)
        self.warnings = self.check_fields(rtype, obj)
        meta = obj.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise encoding.bad_request(f"the name of the object ({meta['name']}) does not match the "
                                       f"name on the URL ({name})")
        if rtype.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise encoding.bad_request("the namespace of the provided object does not match the "
                                       "namespace sent on the request")
        self.replace(rtype, namespace, name, lambda cur: obj)

    def replace(self, rtype, namespace, name, new_body):
        """PUT and PATCH: new_body(current record) is the requested object."""
        store = self.ctx.store
        key = make_key(namespace, name)
        manager = self.manager()
        if self.dry_run():
            cur = store.get(rtype, key)
            if cur is None:
                raise encoding.not_found(rtype, name)
            new = objects.prepare_update(rtype, new_body(cur), cur, manager)
            new["metadata"]["resourceVersion"] = str(cur.rv)
            self.send_object(200, object_json(rtype, new))
            return

        def update(cur):
            if cur is None:
                raise encoding.not_found(rtype, name)
            new = objects.prepare_update(rtype, new_body(cur), cur, manager)
            # A write that changes nothing is not written (etcd3 GuaranteedUpdate).
            return cur if objects.same_content(new, cur.to_dict()) else new
        ev = store.mutate(rtype, key, update)
        self.send_object(200, ev.new if ev else store.get(rtype, key))

    def handle_patch(self, rtype, namespace, name, body):
        kind = self.headers.get("Content-Type", "").split(";")[0].strip()
        try:
            patch = json.loads(body or b"null")
        except ValueError as err:
            raise encoding.bad_request(f"error decoding patch: {err}") from None
        if kind in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            if not isinstance(patch, dict):
                raise encoding.bad_request("error decoding patch: not an object")

            def apply(cur):
                return objects.merge_patch(json.loads(cur.event_json()), patch)
        elif kind == "application/json-patch+json":
            if not isinstance(patch, list):
                raise encoding.bad_request("error decoding patch: not a list of operations")

            def apply(cur):
                try:
                    return objects.json_patch(json.loads(cur.event_json()), patch)
                except (KeyError, IndexError, ValueError, TypeError) as err:
                    raise ApiError(422, "Invalid", f"the server rejected our request due to an error "
                                   f"in our request: {err}") from None
        else:
            raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown "
                           f"format - accepted media types include: application/json-patch+json, "
                           f"application/merge-patch+json, application/strategic-merge-patch+json")
        self.replace(rtype, namespace, name, apply)

    def delete_options(self, body):
        if not body:
            return {}
        try:
            opts = json.loads(body)
        except ValueError as err:
            raise encoding.bad_request(f"couldn't get version/kind; json parse error: {err}") from None
        return opts if isinstance(opts, dict) else {}

    def handle_delete(self, rtype, namespace, name, body):
        opts = self.delete_options(body)
        pre = opts.get("preconditions") or {}
        store = self.ctx.store
        key = make_key(namespace, name)
        cur = store.get(rtype, key)
        if cur is None:
            raise encoding.not_found(rtype, name)
        check_preconditions(rtype, name, cur, pre)
        if self.dry_run() or "All" in (opts.get("dryRun") or []):
            self.send_delete_result(rtype, cur.with_rv(cur.rv))
            return
        if rtype is resources.NAMESPACES:
            rec = delete_namespace(store, name, pre)
            self.send_object(200, rec)
            return
        ev = delete_object(store, rtype, namespace, name, pre)
        self.send_delete_result(rtype, ev.object_record(DELETED))

    def send_delete_result(self, rtype, rec):
        if rtype.delete_returns_object:
            self.send_object(200, rec)
            return
        details = {"name": rec.name, "kind": rtype.plural, "uid": rec.uid()}
        if rtype.group:
            details["group"] = rtype.group
        self.send_json(200, encoding.status_success(details))

    def handle_delete_collection(self, rtype, namespace):
        lsel, fsel = self.selectors(rtype)
        store = self.ctx.store
        snap = store.snapshot(rtype)
        prefix = namespace + "/" if namespace else ""
        doomed = [r for r in snap.iter_from("", prefix)
                  if lsel.matches(r.labels()) and fsel.matches(r.field)]
        for rec in doomed:
            if rtype is resources.NAMESPACES:
                delete_namespace(store, rec.name, {})
            else:
                try:
                    delete_object(store, rtype, rec.namespace, rec.name, {})
                except ApiError:
                    pass
        self.send_json(200, encoding.status_success({"kind": rtype.plural}))


def object_json(rtype, obj):
    """An object dict that is not stored (dry run) as a response body."""
    if not obj["metadata"].get("resourceVersion"):
        obj = dict(obj, metadata={k: v for k, v in obj["metadata"].items() if k != "resourceVersion"})
    return with_type_meta(rtype, encoding.compact(obj, sort_keys=not rtype.builtin))


def already_exists(rtype, name):
    details = {"name": name, "kind": rtype.plural}
    if rtype.group:
        details["group"] = rtype.group
    return ApiError(409, "AlreadyExists", f"{rtype.group_resource} \"{name}\" already exists", details)


def check_preconditions(rtype, name, cur, pre):
    if pre.get("uid") and pre["uid"] != cur.uid():
        raise ApiError(409, "Conflict", f"Operation cannot be fulfilled on {rtype.group_resource} "
                       f"\"{name}\": Precondition failed: UID in precondition: {pre['uid']}, UID in "
                       f"object meta: {cur.uid()}", {"name": name, "kind": rtype.plural})
    if pre.get("resourceVersion") and pre["resourceVersion"] != str(cur.rv):
        raise ApiError(409, "Conflict", f"Operation cannot be fulfilled on {rtype.group_resource} "
                       f"\"{name}\": Precondition failed: ResourceVersion in precondition: "
                       f"{pre['resourceVersion']}, ResourceVersion in object meta: {cur.rv}",
                       {"name": name, "kind": rtype.plural})


def delete_object(store, rtype, namespace, name, pre):
    """Deletes one object, then what the garbage collector and the endpoints controller remove
    with it (EndpointSlices owned by it, the Endpoints of a deleted Service)."""
    def delete(cur):
        if cur is None:
            raise encoding.not_found(rtype, name)
        check_preconditions(rtype, name, cur, pre)
        return None
    ev = store.mutate(rtype, make_key(namespace, name), delete)
    collect_garbage(store, ev.prev)
    if rtype is resources.SERVICES:
        try:
            store.mutate(resources.ENDPOINTS, make_key(namespace, name),
                         lambda cur: None if cur is not None else _no_change())
        except _NoChange:
            pass
    return ev


class _NoChange(Exception):
    pass


def _no_change():
    raise _NoChange()


def collect_garbage(store, owner):
    """Deletes what the owner's uid owns among EndpointSlices and Endpoints in its namespace."""
    uid = owner.uid()
    if not uid or not owner.namespace:
        return
    for rtype in (resources.ENDPOINTSLICES, resources.ENDPOINTS):
        snap = store.snapshot(rtype)
        for rec in list(snap.iter_from("", owner.namespace + "/")):
            if uid in rec.owner_uids():
                try:
                    store.mutate(rtype, rec.key, lambda cur: None if cur is not None else _no_change())
                except _NoChange:
                    pass


def delete_namespace(store, name, pre):
    """Namespace deletion as the namespace controller finishes it: Terminating (MODIFIED), every
    object in it DELETED, then the namespace DELETED.  Returns the Terminating namespace."""
    def terminate(cur):
        if cur is None:
            raise encoding.not_found(resources.NAMESPACES, name)
        check_preconditions(resources.NAMESPACES, name, cur, pre)
        obj = cur.to_dict()
        obj = dict(obj, metadata=dict(obj["metadata"], deletionTimestamp=objects.now_rfc3339()),
                   status={"phase": "Terminating"})
        return obj
    ev = store.mutate(resources.NAMESPACES, name, terminate)
    terminating = ev.new
    for rtype in resources.ALL:
        if not rtype.namespaced:
            continue
        snap = store.snapshot(rtype)
        for rec in list(snap.iter_from("", name + "/")):
            try:
                store.mutate(rtype, rec.key, lambda cur: None if cur is not None else _no_change())
            except _NoChange:
                pass
    store.mutate(resources.NAMESPACES, name, lambda cur: None)
    return terminating
