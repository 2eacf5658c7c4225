"""POST, PUT, PATCH and DELETE, and what controllers do after a delete (garbage collection,
namespace finalization)."""

import json

from . import encoding, objects, protobuf, resources
from .encoding import ApiError
from .store import DELETED, make_key, with_type_meta

MAX_BODY = 3 * 1024 * 1024     # the API server's MaxRequestBodyBytes


class WritesMixin:
    """The write verbs of ApiHandler."""

    def read_object(self, rtype, body):
        """The body of a POST or PUT as a JSON dict, read by its Content-Type as the real
        server's content negotiation does: JSON (also when no type is given), protobuf for
        the kinds protobuf.py reads, 415 UnsupportedMediaType for anything else."""
        media = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if media == protobuf.MEDIA_TYPE and protobuf.readable(rtype):
            check_size(body)
            return protobuf.read_object(rtype, body)
        if media not in ("", "application/json"):
            accepted = "application/json"
            if protobuf.readable(rtype):
                accepted += ", " + protobuf.MEDIA_TYPE
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an "
                           f"unknown format - accepted media types include: {accepted}")
        if not body:
            raise encoding.bad_request("the body of the request was in an unknown format - "
                                       "accepted media types include: application/json")
        check_size(body)
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
        if not rtype.namespaced:
            return
        ns = self.ctx.store.get(resources.NAMESPACES, namespace)
        if ns is None:
            raise encoding.not_found(resources.NAMESPACES, namespace)
        if (ns.to_dict().get("status") or {}).get("phase") == "Terminating":
            raise ApiError(403, "Forbidden", f"{rtype.plural} \"{namespace}\" is forbidden: unable to "
                           f"create new content in namespace {namespace} because it is being terminated")

    def send_object(self, code, rec_or_json):
        text = rec_or_json if isinstance(rec_or_json, str) else rec_or_json.event_json()
        if self.pretty():
            text = encoding.pretty_fragment(text, 0)
        self.send_bytes(code, (text + "\n").encode(), "application/json", self.warnings)

    def handle_create(self, rtype, namespace, body):
        obj = self.read_object(rtype, body)
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
        obj = self.read_object(rtype, body)
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
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown "
                           "format - accepted media types include: application/json-patch+json, "
                           "application/merge-patch+json, application/strategic-merge-patch+json")
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


def check_size(body):
    if len(body) > MAX_BODY:
        raise ApiError(413, "RequestEntityTooLarge", "the server has received too large of a "
                       f"request body (limit is {MAX_BODY})")


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
