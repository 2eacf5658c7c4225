"""The HTTPS API: a request's way through authentication, faults, discovery and the resource
verbs (reads.py, watches.py, writes.py).

Request order follows the real server's filter chain: authentication (401), priority and
fairness (429), authorization (403), then the handler (404 for unknown paths)."""

import http.server
import itertools
import urllib.parse
import uuid

from . import discovery, encoding, openapi, resources, selectors
from .encoding import ApiError
from .httpio import BodyWriter, StreamClosed
from .query import negotiate, qbool
from .reads import ReadsMixin
from .watches import WatchesMixin
from .writes import WritesMixin

PRETTY_AGENTS = ("curl", "Wget", "Mozilla/5.0")
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz")
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


def forbidden_message(user, verb, rtype, namespace):
    scope = f"in the namespace \"{namespace}\"" if namespace else "at the cluster scope"
    return (f"{rtype.group_resource} is forbidden: User \"{user}\" cannot {verb} resource "
            f"\"{rtype.plural}\" in API group \"{rtype.group}\" {scope}")


class ApiHandler(ReadsMixin, WatchesMixin, WritesMixin, http.server.BaseHTTPRequestHandler):
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

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = lambda self: self.dispatch()

    # -- the request --

    def dispatch(self):
        self.status_code = None
        self.audit_id = str(uuid.uuid4())
        self.verb, self.resource = "", ""
        self.served_from = None     # a LIST's "cache" or "etcd", for the request log
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
        self.ctx.state.count(self.command, self.url_path, self.raw_query, self.verb, self.resource, code,
                             self.served_from)

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
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                           "requested resource")

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
