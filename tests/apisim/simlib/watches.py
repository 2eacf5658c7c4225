"""WATCH: chunked event streams with history replay, bookmarks, timeouts and stream faults."""

import json
import random
import time

from . import encoding, selectors, tables
from .encoding import ApiError
from .httpio import StreamClosed, StreamWriter, close_connection
from .query import qbool, qint
from .reads import TABLE_TYPE
from .store import ADDED, BOOKMARK, ERROR, Watcher


class WatchesMixin:
    """The watch verb of ApiHandler."""

    def check_watch_options(self):
        """Watch-list rules (422 Invalid); returns sendInitialEvents (None when absent)."""
        q = self.query
        match = q.get("resourceVersionMatch", "")
        initial = qbool(q, "sendInitialEvents")
        mode = self.ctx.state.get("watch_list")
        if mode == "ignored":
            return None
        if initial is not None and mode == "refused":
            raise self.list_options_invalid("sendInitialEvents", "sendInitialEvents is forbidden "
                                            "for watch unless the WatchList feature gate is enabled")
        if initial is None:
            if match:
                raise self.list_options_invalid("resourceVersionMatch", "resourceVersionMatch is "
                                                "forbidden for watch unless sendInitialEvents is provided")
            return None
        if match != "NotOlderThan":
            raise self.list_options_invalid("resourceVersionMatch", "sendInitialEvents requires "
                                            "setting resourceVersionMatch to NotOlderThan")
        if initial and not qbool(q, "allowWatchBookmarks"):
            raise self.list_options_invalid("allowWatchBookmarks", "sendInitialEvents requires "
                                            "setting allowWatchBookmarks to true")
        return initial

    def handle_watch(self, rtype, namespace, name, fmt):
        ctx = self.ctx
        store, state = ctx.store, ctx.state
        initial_param = self.check_watch_options()
        bookmarks = bool(qbool(self.query, "allowWatchBookmarks"))
        timeout = qint(self.query, "timeoutSeconds")
        lsel, fsel = self.selectors(rtype)
        if name:
            # GET .../services/NAME?watch=1: a watch of one object.
            escaped = name.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
            fsel = selectors.FieldSelector(",".join(filter(None, [fsel.text, "metadata.name=" + escaped])),
                                           rtype.field_names())
        rv_text = self.query.get("resourceVersion", "")
        # RV unset or "0": "Get State and Start at Most Recent" unless sendInitialEvents says otherwise.
        initial = rv_text in ("", "0") if initial_param is None else initial_param
        rv = store.current_rv() if rv_text in ("", "0") else self.parse_rv(rv_text)
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
        """One event line: payload is an Event, an object's JSON (initial ADDED), the RV of a
        BOOKMARK, or a ready line ("RAW", injected by the control API)."""
        rtype = watcher.rtype
        if kind == BOOKMARK:
            return self.event_line(BOOKMARK, self.bookmark_json(rtype, payload))
        if kind == "RAW":
            return payload
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

    def write_batch(self, watcher, stream, lines, initial=False):
        if watcher.cut and watcher.cut != "clean":
            stream.cut(lines[0], watcher.cut)
        rate = self.ctx.state.list_rate(watcher.rtype.plural) if initial else 0
        if rate:
            # A slow-list fault slows a watch-list's initial events as it slows a LIST.
            stream.send_throttled(b"".join(lines), rate, lambda: watcher.closed)
        else:
            stream.send(b"".join(lines))

    def run_watch(self, watcher, snap, stream, fmt, bookmarks, timeout, send_initial_end):
        state, store = self.ctx.state, self.ctx.store
        started = time.monotonic()
        deadline = started + timeout
        final_bookmark = deadline - 2 if bookmarks and timeout > 2 else None
        last_bookmark = started
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
                    self.write_batch(watcher, stream, lines, initial=True)
                    lines, size = [], 0
            if send_initial_end:
                lines.append(self.event_line(BOOKMARK, self.bookmark_json(watcher.rtype, snap.rv, True)))
            if lines:
                if self.stream_blocked(watcher):
                    return self.end_watch(watcher, stream)
                self.write_batch(watcher, stream, lines, initial=True)
        while True:
            if self.stream_blocked(watcher) or watcher.cut == "clean" or watcher.overflow:
                return self.end_watch(watcher, stream)
            now = time.monotonic()
            if now >= deadline:
                return self.end_watch(watcher, stream)
            next_bookmark = last_bookmark + state.get("bookmark_interval")   # may change at run time
            if bookmarks and now >= next_bookmark:
                store.bookmark(watcher)
                last_bookmark = now
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
