"""Start, steer and query the Kubernetes API simulator (tests/apisim) from tests and benchmarks.

    import sys; sys.path.insert(0, "<repo>/tests/lib")
    from simctl import Simulator

    with Simulator("/tmp/work", manifests=["tests/manifests/sample"]) as sim:
        sim.apply({...})                 # write objects (events reach open watches)
        sim.too_many_requests(2)         # faults
        print(sim.counters())            # what the client did

The process is always killed by its PID on stop(), on leaving the with-block and at exit.

Command line, for a running simulator (scripts/demo's: DIR is build/demo/apisim), without kubectl:
    python3 tests/lib/simctl.py DIR get services [NAMESPACE]       # the server's table, as kubectl prints it
    python3 tests/lib/simctl.py DIR apply FILE|-                   # JSON objects (one, a List or an array)
    python3 tests/lib/simctl.py DIR delete RESOURCE [NAMESPACE] NAME
"""

import argparse
import atexit
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import traceback
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APISIM = os.path.join(REPO, "tests", "apisim", "apisim.py")
SAMPLE = os.path.join(REPO, "tests", "manifests", "sample")


class SimulatorError(RuntimeError):
    """The simulator could not start, died, or a control call failed."""


class Response:
    """A complete HTTP response."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # lower-case names
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"<Response {self.status} {self.body[:80]!r}>"


class StreamCut(Exception):
    """The connection ended before the terminating chunk (or inside a chunk)."""


class Stream:
    """A raw HTTP/1.1 response read chunk by chunk, to see exactly what is on the wire."""

    def __init__(self, sock, timeout):
        self.sock = sock
        self.sock.settimeout(timeout)
        self.buf = b""
        self.chunks = []        # every chunk payload received, in order
        self.ended = False      # the terminating chunk arrived
        self.pending = b""      # bytes of an event line not yet complete
        line = self._line()
        parts = line.split(b" ", 2)
        self.status = int(parts[1])
        self.headers = {}
        while True:
            line = self._line()
            if not line:
                break
            name, _, value = line.partition(b":")
            self.headers[name.decode().strip().lower()] = value.decode().strip()
        self.chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise StreamCut("connection closed")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read_chunk(self):
        """The next chunk's payload; b"" once the terminating chunk arrived.  Raises StreamCut."""
        if self.ended:
            return b""
        if not self.chunked:
            length = int(self.headers.get("content-length", "0"))
            self.ended = True
            return self._exact(length)
        size = int(self._line().split(b";")[0], 16)
        if size == 0:
            self._line()
            self.ended = True
            return b""
        data = self._exact(size)
        self._exact(2)
        self.chunks.append(data)
        return data

    def body(self):
        """Everything up to the end of the body."""
        parts = []
        while True:
            chunk = self.read_chunk()
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)

    def next_event(self):
        """The next watch event as a dict; None at a clean end of the stream.  Raises StreamCut
        (a partial line is kept in self.pending)."""
        while b"\n" not in self.pending:
            chunk = self.read_chunk()
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def events(self, count):
        """The next count events (fewer if the stream ends)."""
        out = []
        while len(out) < count:
            event = self.next_event()
            if event is None:
                break
            out.append(event)
        return out

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Simulator:
    """One simulator process and its work directory."""

    def __init__(self, workdir, manifests=(), generate=None, args=(), start_timeout=60):
        self.workdir = os.path.abspath(workdir)
        self.manifests = [os.path.abspath(m) for m in manifests]
        self.generate = generate
        self.args = list(args)
        self.start_timeout = start_timeout
        self.proc = None
        self.ready = None
        self.log_path = os.path.join(self.workdir, "apisim.log")

    # -- process --

    def command(self):
        cmd = [sys.executable, APISIM, "--dir", self.workdir]
        if self.manifests:
            cmd += ["--manifests", *self.manifests]
        if self.generate:
            cmd += ["--generate", self.generate]
        return cmd + self.args

    @classmethod
    def attach(cls, workdir):
        """The simulator already running in workdir (its ready.json); stop() leaves it running."""
        sim = cls(workdir)
        try:
            with open(os.path.join(sim.workdir, "ready.json")) as f:
                sim.ready = json.load(f)
        except (OSError, ValueError) as err:
            raise SimulatorError(f"no simulator runs in {sim.workdir} ({err})") from None
        return sim

    def start(self):
        """Starts the process and waits for ready.json; raises SimulatorError if it dies first."""
        os.makedirs(self.workdir, exist_ok=True)
        ready_path = os.path.join(self.workdir, "ready.json")
        if os.path.exists(ready_path):
            os.unlink(ready_path)
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL)
        finally:
            log.close()
        atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SimulatorError(f"apisim exited with status {self.proc.returncode}:\n{self.log_tail()}")
            if os.path.exists(ready_path):
                with open(ready_path) as f:
                    self.ready = json.load(f)
                return self
            time.sleep(0.05)
        self.stop()
        raise SimulatorError(f"apisim not ready after {self.start_timeout} s:\n{self.log_tail()}")

    def stop(self):
        """Kills the process by its PID (SIGTERM, then SIGKILL); safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGTERM)
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines=30):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- where things are --

    @property
    def pid(self):
        return self.ready["pid"]

    @property
    def port(self):
        return self.ready["port"]

    @property
    def control_port(self):
        return self.ready["control_port"]

    @property
    def url(self):
        return f"https://127.0.0.1:{self.port}"

    def path(self, name):
        return os.path.join(self.workdir, name)

    kubeconfig = property(lambda self: self.path("kubeconfig"))
    kubeconfig_tokenfile = property(lambda self: self.path("kubeconfig-tokenfile"))
    kubeconfig_cert = property(lambda self: self.path("kubeconfig-cert"))
    kubeconfig_data = property(lambda self: self.path("kubeconfig-data"))
    token_path = property(lambda self: self.path("token"))
    ca_path = property(lambda self: self.path("ca.crt"))
    client_cert = property(lambda self: self.path("client.crt"))
    client_key = property(lambda self: self.path("client.key"))

    @property
    def token(self):
        """The current bearer token (read from the token file each time)."""
        with open(self.token_path) as f:
            return f.read().strip()

    # -- control API --

    def control(self, method, path, body=None, query=None):
        """One control call; returns the decoded JSON or raises SimulatorError."""
        conn = http.client.HTTPConnection("127.0.0.1", self.control_port, timeout=30)
        try:
            target = path + ("?" + urllib.parse.urlencode(query) if query else "")
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, target, body=data, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            payload = json.loads(resp.read() or b"{}")
        finally:
            conn.close()
        if resp.status != 200:
            raise SimulatorError(f"control {method} {path} failed ({resp.status}: {payload.get('error')})")
        return payload

    def post(self, path, body=None, query=None):
        return self.control("POST", path, body if body is not None else {}, query)

    def state(self):
        return self.control("GET", "/state")

    def resource_version(self):
        return int(self.state()["resourceVersion"])

    def counters(self):
        return self.control("GET", "/counters")

    def reset_counters(self):
        return self.post("/counters/reset")

    def requests(self, since=0):
        """API requests logged after sequence number since: method, path, query, verb, resource, code."""
        return self.control("GET", "/requests", query={"since": since})["requests"]

    def apply(self, obj, validate=True):
        """Creates or replaces objects (an object, a List or a list) as a controller would write them."""
        return self.post("/objects/apply", obj, None if validate else {"validate": "0"})

    def delete(self, kind, namespace, name):
        """Deletes an object (kind or resource name); returns the RV after it."""
        return int(self.post("/objects/delete", {"resource": kind, "namespace": namespace or "",
                                                 "name": name})["resourceVersion"])

    def get_object(self, kind, namespace, name):
        parts = [kind, namespace, name] if namespace else [kind, name]
        return self.control("GET", "/objects/" + "/".join(parts))

    def big_object(self, kind, namespace, name, size=5 * 512 * 1024, shape="annotation"):
        """Adds size bytes to an object (a watch line of several MiB): an annotation, or with
        shape="empty-objects" metadata.managedFields of {} elements."""
        return self.post("/objects/big", {"resource": kind, "namespace": namespace or "", "name": name,
                                          "bytes": size, "shape": shape})

    def inject_event(self, kind, event_type, obj):
        """Sends a raw event to open watches of kind without changing any object."""
        return self.post("/events/inject", {"resource": kind, "type": event_type, "object": obj})

    def fault(self, name, **params):
        """Any fault endpoint: /faults/NAME with params as the JSON body."""
        return self.post(f"/faults/{name}", params)

    def outage(self, seconds):
        """Connection refused for seconds; open connections and streams are dropped."""
        return self.fault("outage", seconds=seconds)

    def too_many_requests(self, count=1, body="apf", retry_after=1, match="", verbs=()):
        """The next count matching requests get 429 with Retry-After (body "apf" or "status")."""
        return self.fault("too-many-requests", count=count, body=body, retry_after=retry_after,
                          match=match, verbs=list(verbs))

    def hang(self, on=True, resource="*"):
        """Watch streams of resource stop writing (sockets stay open) until hang(False)."""
        return self.fault("hang", on=on, resource=resource)

    def cut_streams(self, mode="chunk-end", resource="*"):
        """Open watch streams end in the middle of their next event line (or now with "clean")."""
        return self.fault("cut", mode=mode, resource=resource)["armed"]

    def slow_list(self, bytes_per_second, resource="*"):
        """LIST bodies of resource are written at bytes_per_second (0: normal speed)."""
        return self.fault("slow-list", bytes_per_second=bytes_per_second, resource=resource)

    def forbid(self, resource, on=True):
        """Requests for resource get 403 Forbidden."""
        return self.fault("forbid", resource=resource, on=on)

    def clear_faults(self):
        return self.fault("clear")

    def rotate_token(self, keep_old=False):
        """Writes a new token (..data swap); the old one is refused unless keep_old."""
        return self.post("/token/rotate", {"keep_old": keep_old})

    def expire_token(self):
        """Every token gets 401 until the next rotate_token()."""
        return self.post("/token/expire")

    def restart(self, down_seconds=0, initializing_seconds=0):
        """API server restart: history lost (old RVs 410), streams dropped, RV counter continues."""
        return self.post("/restart", {"down_seconds": down_seconds,
                                      "initializing_seconds": initializing_seconds})

    def compact(self):
        """Drops the watch history now: every earlier RV is too old."""
        return self.post("/history/compact")

    def set_absent(self, resource, absent=True):
        """Serves resource as "404 page not found" (CRD not installed), or again."""
        return self.post("/resources/absent", {"resource": resource, "absent": absent})

    def set_config(self, **values):
        return self.post("/config", values)

    def set_bookmark_interval(self, seconds):
        return self.set_config(bookmark_interval=seconds)

    def open_watches(self, resource=None):
        counts = self.counters()["open_watches"]
        return counts.get(resource, 0) if resource else sum(counts.values())

    def wait_for_watches(self, resource, count=1, timeout=10):
        """Waits until at least count watches of resource are open."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.open_watches(resource) >= count:
                return True
            time.sleep(0.05)
        raise SimulatorError(f"no {count} open {resource} watches after {timeout} s")

    # -- the HTTPS API, for tests of the simulator itself --

    def tls_context(self, cert=False, verify=True):
        ctx = ssl.create_default_context(cafile=self.ca_path) if verify else ssl._create_unverified_context()
        if cert:
            ctx.load_cert_chain(self.client_cert, self.client_key)
        return ctx

    def _auth_headers(self, token, headers):
        out = {"Accept": "application/json", "User-Agent": "simctl/1.0"}
        if token is True:
            token = self.token
        if token:
            out["Authorization"] = f"Bearer {token}"
        out.update(headers or {})
        return out

    def request(self, method, path, body=None, headers=None, token=True, cert=False, timeout=30):
        """One API request; token=True sends the current token, a string sends that one."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                           context=self.tls_context(cert))
        try:
            data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
            hdrs = self._auth_headers(token, headers)
            if data is not None:
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def stream(self, path, headers=None, token=True, cert=False, timeout=30):
        """Sends a GET and returns a Stream positioned at the start of the body."""
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        sock = self.tls_context(cert).wrap_socket(raw, server_hostname="127.0.0.1")
        hdrs = self._auth_headers(token, headers)
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{k}: {v}" for k, v in hdrs.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return Stream(sock, timeout)


def check(cond, message="check failed"):
    """A case's assertion: fails the case with message unless cond holds."""
    if not cond:
        raise AssertionError(message)


def case_collector(cases):
    """A decorator that appends each decorated function to the list cases, for run_cases."""
    def case(fn):
        cases.append(fn)
        return fn
    return case


def run_cases(cases, argv, sim):
    """Runs the cases whose names contain an argument of argv (all without one) against the
    started simulator `sim`, reporting each as ok / not ok, and stops early if the simulator
    dies. Returns the exit status: 1 if a case failed, else 0."""
    selected = [c for c in cases if not argv or any(a in c.__name__ for a in argv)]
    passed = failed = 0
    for case in selected:
        try:
            case()
            print(f"ok - {case.__name__}")
            passed += 1
        except Exception as err:  # report every failure and go on
            print(f"not ok - {case.__name__}: {type(err).__name__}: {err}")
            traceback.print_exc(file=sys.stderr)
            failed += 1
        sys.stdout.flush()
        if not sim.alive():
            print(f"not ok - simulator died:\n{sim.log_tail()}")
            failed += 1
            break
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


# -- command line --

def _resource_type(name):
    sys.path.insert(0, os.path.dirname(APISIM))
    from simlib import resources     # noqa: E402  (the simulator's own list of served types)
    rtype = resources.lookup(name)
    if rtype is None:
        raise SimulatorError(f"the simulator serves no resource {name!r}")
    return rtype


def _print_table(table, with_namespace):
    columns = [n for n, c in enumerate(table["columnDefinitions"]) if c["priority"] == 0]
    rows = [[c["name"].upper() for n, c in enumerate(table["columnDefinitions"]) if n in columns]]
    for row in table["rows"]:
        rows.append([str(row["cells"][n]) for n in columns])
        if with_namespace:
            rows[-1].insert(0, row["object"]["metadata"].get("namespace", ""))
    if with_namespace:
        rows[0].insert(0, "NAMESPACE")
    widths = [max(len(r[n]) for r in rows) for n in range(len(rows[0]))]
    for r in rows:
        print("   ".join(cell.ljust(width) for cell, width in zip(r, widths)).rstrip())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="simctl.py", description="Look at and change the objects "
                                     "of a running API simulator (no kubectl needed).")
    parser.add_argument("dir", help="the simulator's --dir (scripts/demo: build/demo/apisim)")
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("get", help="list objects as the server's table")
    get.add_argument("resource")
    get.add_argument("namespace", nargs="?", help="default: all namespaces")
    apply = sub.add_parser("apply", help="create or replace JSON objects (FILE, or - for stdin)")
    apply.add_argument("file")
    delete = sub.add_parser("delete", help="delete an object")
    delete.add_argument("resource")
    delete.add_argument("names", nargs="+", metavar="[NAMESPACE] NAME")
    args = parser.parse_args(argv)
    try:
        sim = Simulator.attach(args.dir)
        if args.command == "get":
            rtype = _resource_type(args.resource)
            namespace = f"/namespaces/{args.namespace}" if args.namespace and rtype.namespaced else ""
            response = sim.get(f"{rtype.prefix}{namespace}/{rtype.plural}?includeObject=Object", headers={
                "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
            if response.status != 200:
                raise SimulatorError(f"GET {rtype.plural}: {response.status} {response.body[:200]!r}")
            _print_table(response.json(), rtype.namespaced and not namespace)
        elif args.command == "apply":
            text = sys.stdin.read() if args.file == "-" else open(args.file).read()
            for result in sim.apply(json.loads(text))["results"]:
                where = f"{result['namespace']}/" if result["namespace"] else ""
                print(f"{result['kind'].lower()}/{where}{result['name']} {result['action']}")
        else:
            if len(args.names) > 2:
                parser.error("delete takes RESOURCE [NAMESPACE] NAME")
            namespace, name = ([""] + args.names)[-2:]
            sim.delete(args.resource, namespace, name)
            print(f"{args.resource}/{namespace + '/' if namespace else ''}{name} deleted")
    except (SimulatorError, OSError, ValueError) as err:
        print(f"simctl: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
