"""LIST and GET: resourceVersion semantics, paging, selectors, Table output."""

import itertools

from . import encoding, tables
from .encoding import ApiError
from .httpio import BodyWriter
from .query import qint, qbool
from .store import make_key

TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


class ReadsMixin:
    """The read verbs of ApiHandler."""

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

    def check_list_options(self):
        """ListOptions validation (422 Invalid), as apimachinery's ValidateListOptions."""
        q = self.query
        match = q.get("resourceVersionMatch", "")
        rv_text = q.get("resourceVersion", "")
        if match:
            if match not in ("NotOlderThan", "Exact"):
                raise encoding.invalid("ListOptions", "meta.k8s.io", "", [
                    ("resourceVersionMatch", "FieldValueNotSupported",
                     f"Unsupported value: \"{match}\": supported values: \"Exact\", \"NotOlderThan\", \"\"")])
            if not rv_text:
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch is "
                                                "forbidden when resourceVersion is not provided")
            if q.get("continue"):
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch is "
                                                "forbidden when continue is provided")
            if match == "Exact" and rv_text == "0":
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch "
                                                "\"exact\" is forbidden for resourceVersion \"0\"")
        if qbool(q, "sendInitialEvents") is not None:
            raise self.list_options_invalid("sendInitialEvents", "sendInitialEvents is forbidden for list")

    def list_served_from(self):
        """"cache" or "etcd": where a 1.32 API server serves this LIST (cacher.go's
        shouldDelegateList with ConsistentListFromCache, on by default since 1.31): continued,
        limited at an RV other than "0", or Exact ones go to etcd, the rest to the watch
        cache; everything goes to etcd with config watch_cache false (--watch-cache=false)."""
        q = self.query
        rv_text = q.get("resourceVersion", "")
        if (not self.ctx.state.get("watch_cache") or q.get("continue")
                or ((qint(q, "limit") or 0) > 0 and rv_text != "0")
                or q.get("resourceVersionMatch", "") not in ("", "NotOlderThan")):
            return "etcd"
        return "cache"

    def list_snapshot(self, rtype):
        """(snapshot, start key, limit) by the resourceVersion rules of a LIST (reference §1.3)."""
        q = self.query
        store = self.ctx.store
        rv_text = q.get("resourceVersion", "")
        match = q.get("resourceVersionMatch", "")
        cont = q.get("continue", "")
        limit = qint(q, "limit") or 0
        self.served_from = self.list_served_from()
        if cont:
            if rv_text not in ("", "0"):
                raise encoding.bad_request("specifying resource version is not allowed when using continue")
            token_rv, start = encoding.decode_continue(cont)
            if token_rv == -1:
                return store.snapshot(rtype), start, limit
            if token_rv < store.floor(rtype):
                last = start[:-1] if start.endswith("\x00") else start
                raise encoding.expired(encoding.CONTINUE_EXPIRED,
                                       continue_token=encoding.encode_continue(-1, last))
            return store.snapshot(rtype, token_rv), start, limit
        if rv_text == "0":
            # The watch cache ignores limit for RV "0"; without a cache etcd pages it.
            return store.snapshot(rtype), "", (0 if self.served_from == "cache" else limit)
        if rv_text:
            rv = self.parse_rv(rv_text)
            if rv > store.current_rv():
                self.wait_not_older(rv)
            exact = match == "Exact" or (limit and match != "NotOlderThan")
            return (store.snapshot(rtype, rv) if exact else store.snapshot(rtype)), "", limit
        return store.snapshot(rtype), "", limit

    def handle_list(self, rtype, namespace, fmt):
        self.check_list_options()
        lsel, fsel = self.selectors(rtype)
        snap, start, limit = self.list_snapshot(rtype)
        prefix = namespace + "/" if namespace else ""
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
