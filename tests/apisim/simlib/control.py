"""The control API: plain HTTP on 127.0.0.1, JSON in and out, for tests only.

Every endpoint is listed in tests/apisim/README.md; keep the two in step."""

import http.server
import json
import threading
import time
import urllib.parse

from . import encoding, manifests, objects, resources, writes
from .encoding import ApiError
from .store import make_key

CUT_MODES = ("chunk-end", "close", "mid-chunk", "rst", "clean")


class ControlError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _rtype(name):
    rtype = resources.lookup(name or "")
    if rtype is None:
        raise ControlError(400, f"unknown resource {name!r}")
    return rtype


def _resource_or_all(name):
    return "*" if name in (None, "", "*") else _rtype(name).plural


class Controller:
    """The operations behind the control endpoints."""

    def __init__(self, sim):
        self.sim = sim        # the Simulator (apisim.py): store, state, creds, listener

    # -- objects --

    def apply(self, doc, check):
        store = self.sim.store
        results = []
        with store.lock:      # watchers see the whole batch at once
            for obj in manifests.expand(doc):
                results.append(self._apply_one(store, obj, check))
        return {"results": results, "resourceVersion": str(store.current_rv())}

    @staticmethod
    def _apply_one(store, obj, check):
        rtype = manifests.type_of(obj)
        meta = obj.get("metadata") or {}
        obj = dict(obj, metadata={k: v for k, v in meta.items() if k != "resourceVersion"})
        name, namespace = meta.get("name", ""), meta.get("namespace", "") if rtype.namespaced else ""
        if not name:
            raise ControlError(400, "every object needs metadata.name")
        if rtype.namespaced and not namespace:
            raise ControlError(400, f"{rtype.kind} {name} needs metadata.namespace")

        def upsert(cur):
            if cur is None:
                return objects.prepare_create(rtype, obj, None, server_side=False, check=check)
            new = objects.prepare_update(rtype, obj, cur, server_side=False, check=check)
            return cur if objects.same_content(new, cur.to_dict()) else new
        key = make_key(namespace, name)
        existed = store.get(rtype, key) is not None
        ev = store.mutate(rtype, key, upsert)
        action = "unchanged" if ev is None else ("updated" if existed else "created")
        rec = ev.new if ev else store.get(rtype, key)
        return {"kind": rtype.kind, "namespace": namespace, "name": name,
                "resourceVersion": str(rec.rv), "action": action}

    def delete(self, body):
        rtype = _rtype(body.get("resource") or body.get("kind"))
        namespace = body.get("namespace", "") if rtype.namespaced else ""
        name = body.get("name", "")
        if rtype is resources.NAMESPACES:
            writes.delete_namespace(self.sim.store, name, {})
        else:
            writes.delete_object(self.sim.store, rtype, namespace, name, {})
        return {"resourceVersion": str(self.sim.store.current_rv())}

    def get(self, parts):
        rtype = _rtype(parts[0])
        if rtype.namespaced and len(parts) == 3:
            key = make_key(parts[1], parts[2])
        elif not rtype.namespaced and len(parts) == 2:
            key = parts[1]
        else:
            raise ControlError(400, "use /objects/RESOURCE/NAMESPACE/NAME or /objects/RESOURCE/NAME")
        rec = self.sim.store.get(rtype, key)
        if rec is None:
            raise ControlError(404, f"{rtype.plural} {key} not found")
        return json.loads(rec.event_json())

    def big(self, body):
        """Makes an object of about the given size (default 2.5 MiB): a multi-MiB watch line.

        shape "annotation" (default): one annotation string of that many bytes; "empty-objects":
        metadata.managedFields of that many bytes of {} elements, as cheap to send as costly to
        parse (a client's JSON library builds an object for each)."""
        rtype = _rtype(body.get("resource"))
        namespace = body.get("namespace", "") if rtype.namespaced else ""
        size = int(body.get("bytes", 5 * 512 * 1024))
        shape = body.get("shape", "annotation")
        if shape not in ("annotation", "empty-objects"):
            raise ControlError(400, "shape must be annotation or empty-objects")

        def pad(cur):
            if cur is None:
                raise encoding.not_found(rtype, body.get("name", ""))
            obj = cur.to_dict()
            meta = dict(obj["metadata"])
            if shape == "empty-objects":
                # One shared dict: the encoder writes it n times, the simulator holds it once.
                meta["managedFields"] = [{}] * max(1, (size + 1) // 3)
            else:
                filler = ("apisim-padding-" * (size // 15 + 1))[:size]
                meta["annotations"] = dict(meta.get("annotations") or {}, **{"apisim.k8s.io/padding": filler})
            return objects.normalize(rtype, dict(obj, metadata=meta))
        ev = self.sim.store.mutate(rtype, make_key(namespace, body.get("name", "")), pad)
        return {"resourceVersion": str(ev.rv), "bytes": len(ev.new.event_json())}

    def inject(self, body):
        """Writes one raw event to matching open watches without touching the store."""
        rtype = _rtype(body.get("resource"))
        kind = body.get("type", "MODIFIED")
        obj = body.get("object")
        # Any type string: clients must skip types they do not know (a future or broken server).
        if not isinstance(kind, str) or not kind:
            raise ControlError(400, "type must be a non-empty string")
        line = ('{"type":%s,"object":%s}\n' % (encoding.compact(kind), encoding.compact(obj))).encode()
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        ns = meta.get("namespace", "") if isinstance(meta, dict) else ""
        count = 0
        for w in self.sim.store.watchers(rtype):
            if w.namespace and ns and w.namespace != ns:
                continue
            w.push(("RAW", line))
            count += 1
        return {"delivered": count}

    # -- faults --

    def outage(self, body):
        seconds = float(body.get("seconds", 5))
        for w in self.sim.store.watchers():
            w.close("drop")
        dropped = self.sim.listener.outage(seconds)
        return {"dropped_connections": dropped, "seconds": seconds}

    def restart(self, body):
        down = float(body.get("down_seconds", 0))
        init = float(body.get("initializing_seconds", 0))
        store, state = self.sim.store, self.sim.state
        store.restart()
        if init:
            with state.lock:
                state.initializing_until = time.monotonic() + down + init
        if down:
            dropped = self.sim.listener.outage(down)
        else:
            dropped = self.sim.listener.drop_connections()
        return {"resourceVersion": str(store.current_rv()), "dropped_connections": dropped}

    def too_many(self, body):
        kind = body.get("body", "apf")
        if kind not in ("apf", "status"):
            raise ControlError(400, "body must be 'apf' (text/plain) or 'status' (JSON Status)")
        rule = {"count": int(body.get("count", 1)), "body": kind,
                "retry_after": int(body.get("retry_after", 1)), "match": body.get("match", ""),
                "verbs": list(body.get("verbs") or []), "message": body.get("message", "")}
        with self.sim.state.lock:
            self.sim.state.too_many.append(rule)
        return {"armed": rule}

    def hang(self, body):
        key = _resource_or_all(body.get("resource"))
        with self.sim.state.lock:
            if body.get("on", True):
                self.sim.state.hang[key] = True
            else:
                self.sim.state.hang.pop(key, None)
        return {"hang": dict(self.sim.state.hang)}

    def cut(self, body):
        mode = body.get("mode", "chunk-end")
        if mode not in CUT_MODES:
            raise ControlError(400, f"mode must be one of {', '.join(CUT_MODES)}")
        key = _resource_or_all(body.get("resource"))
        armed = 0
        for w in self.sim.store.watchers():
            if key in ("*", w.rtype.plural):
                w.cut = mode
                w.wake.set()
                armed += 1
        return {"armed": armed}

    def slow_list(self, body):
        key = _resource_or_all(body.get("resource"))
        rate = int(body.get("bytes_per_second", 0))
        with self.sim.state.lock:
            if rate > 0:
                self.sim.state.slow_list[key] = rate
            else:
                self.sim.state.slow_list.pop(key, None)
        return {"slow_list": dict(self.sim.state.slow_list)}

    def forbid(self, body):
        plural = _rtype(body.get("resource")).plural
        with self.sim.state.lock:
            if body.get("on", True):
                self.sim.state.forbid.add(plural)
            else:
                self.sim.state.forbid.discard(plural)
        return {"forbid": sorted(self.sim.state.forbid)}

    def absent(self, body):
        rtype = _rtype(body.get("resource"))
        with self.sim.state.lock:
            if body.get("absent", True):
                self.sim.state.absent.add(rtype.plural)
            else:
                self.sim.state.absent.discard(rtype.plural)
        if body.get("absent", True):
            for w in self.sim.store.watchers(rtype):
                w.close("clean")
        return {"absent": sorted(self.sim.state.absent)}

    def state(self):
        sim = self.sim
        store, st = sim.store, sim.state
        with st.lock:
            faults = {"too_many_requests": [dict(r) for r in st.too_many], "hang": dict(st.hang),
                      "slow_list": dict(st.slow_list), "forbid": sorted(st.forbid),
                      "initializing_seconds": max(0.0, st.initializing_until - time.monotonic())}
            config = dict(st.config, history=store.history_size)
            absent = sorted(st.absent)
        return {"resourceVersion": str(store.current_rv()),
                "floors": {r.plural: str(store.floor(r)) for r in resources.ALL},
                "port": sim.listener.port, "control_port": sim.control_port,
                "token_rotations": sim.creds.rotations, "absent": absent, "faults": faults,
                "config": config, "open_watches": self.open_watches()}

    def open_watches(self):
        out = {}
        for w in self.sim.store.watchers():
            out[w.rtype.plural] = out.get(w.rtype.plural, 0) + 1
        return out


class ControlHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    controller = None

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj):
        self.code = code
        data = (json.dumps(obj, indent=1) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.handle_request("GET")

    def do_POST(self):
        self.handle_request("POST")

    def handle_request(self, method):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        c = self.controller
        try:
            body = json.loads(raw) if raw else {}
            result = self.route(c, method, url.path, query, body)
            self.reply(200, result)
        except ControlError as err:
            self.reply(err.code, {"error": str(err)})
        except ApiError as err:
            self.reply(err.code, {"error": err.message, "status": err.body()})
        except (ValueError, KeyError, TypeError) as err:
            self.reply(400, {"error": f"{type(err).__name__}: {err}"})
        self.controller.sim.log(f"control {method} {self.path} {self.code}")

    @staticmethod
    def route(c, method, path, query, body):
        parts = [p for p in path.split("/") if p]
        sim = c.sim
        if method == "GET":
            if path == "/healthz":
                return {"ok": True}
            if path == "/state":
                return c.state()
            if path == "/counters":
                return sim.state.counters(c.open_watches())
            if path == "/requests":
                return {"requests": sim.state.requests_since(int(query.get("since", 0)))}
            if parts[:1] == ["objects"] and len(parts) >= 3:
                return c.get(parts[1:])
            raise ControlError(404, f"no GET {path}")
        routes = {
            "/objects/apply": lambda: c.apply(body, query.get("validate", "1") not in ("0", "false")),
            "/objects/delete": lambda: c.delete(body),
            "/objects/big": lambda: c.big(body),
            "/events/inject": lambda: c.inject(body),
            "/faults/outage": lambda: c.outage(body),
            "/faults/too-many-requests": lambda: c.too_many(body),
            "/faults/hang": lambda: c.hang(body),
            "/faults/cut": lambda: c.cut(body),
            "/faults/slow-list": lambda: c.slow_list(body),
            "/faults/forbid": lambda: c.forbid(body),
            "/faults/clear": lambda: (sim.state.clear_faults(), c.state()["faults"])[1],
            "/token/rotate": lambda: (sim.creds.rotate(bool(body.get("keep_old", False))),
                                      {"rotations": sim.creds.rotations})[1],
            "/token/expire": lambda: (sim.creds.expire(), {"expired": True})[1],
            "/restart": lambda: c.restart(body),
            "/history/compact": lambda: (sim.store.compact(),
                                         {"resourceVersion": str(sim.store.current_rv())})[1],
            "/resources/absent": lambda: c.absent(body),
            "/config": lambda: (sim.apply_config(body), c.state()["config"])[1],
            "/counters/reset": lambda: (sim.state.reset_counters(), {"reset": True})[1],
        }
        if path not in routes:
            raise ControlError(404, f"no POST {path}")
        return routes[path]()


def serve(sim, port):
    """Starts the control server on 127.0.0.1:port (0 = free port); returns the server."""
    handler = type("BoundControlHandler", (ControlHandler,), {"controller": Controller(sim)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="control", daemon=True).start()
    return server
