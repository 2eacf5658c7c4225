"""DNS programming latency against the world's size (bench/latency): what one change costs
the module in a world of 10,000, 100,000 and 1,000,000 endpoint addresses, apart from
what it costs the API.

Three processes watch each change, none of them the API server's (the simulator is a
process of its own, kube-apiserver too):

- the writer (this process) notes the monotonic time just before its write request;
- the probe (a child process) watches services and EndpointSlices from the API as the
  module does, over its own TLS connection, and notes when each event's line has
  arrived whole: the API's delivery of the change to a watcher;
- the poller (a child process) asks knotd the change's DNS question every 0.2 ms until
  the answer shows it (an address's PTR, a service's A; NXDOMAIN for a removal).

So the API's share is probe - write, the module's is poller - probe (it includes the
poller's 0.2 ms period and a query's round trip, about 0.3 ms). Every time is the
same CLOCK_MONOTONIC (time.monotonic()) read in three processes.
"""

import ipaddress
import json
import multiprocessing
import select
import socket
import ssl
import time
import urllib.parse
import zlib

from common import BenchError, percentile, progress
import proglat

ENDPOINTS = 100                      # addresses per service's slice, every world
SIZES = (("10k", 100), ("100k", 1000), ("1M", 10000))   # name, services
KINDS = ("new service", "endpoint update", "endpoint removal", "service deletion")
POLL_INTERVAL = 0.0002   # 0.2 ms: a module share of 0.3 to 0.6 ms needs finer than 0.5 ms
SEEN_TIMEOUT = 5.0
SLICES_PATH = "/apis/discovery.k8s.io/v1/endpointslices"
SERVICES_PATH = "/api/v1/services"
SLICE_SELECTOR = "!multicluster.kubernetes.io/service-name"
CLUSTER = "cluster.local."
INITIAL_END = b'"k8s.io/initial-events-end":"true"'


def _ms(seconds):
    return None if seconds is None else round(seconds * 1000, 2)


# -- connections ------------------------------------------------------------------------

class Endpoint:
    """How a child process reaches the API: address, CA, and a token or a client
    certificate (picklable, unlike an SSLContext)."""

    def __init__(self, port, cafile, token=None, cert=None, key=None):
        self.port, self.cafile, self.token, self.cert, self.key = port, cafile, token, cert, key

    def context(self):
        context = ssl.create_default_context(cafile=self.cafile)
        if self.cert:
            context.load_cert_chain(self.cert, self.key)
        return context

    def connect(self, timeout=30):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.context().wrap_socket(raw, server_hostname="127.0.0.1")

    def request_bytes(self, target, headers=()):
        lines = [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                 "Accept: application/json", "User-Agent: mod-k8s-bench-probe"]
        if self.token:
            lines.append(f"Authorization: Bearer {self.token}")
        lines += list(headers)
        return ("\r\n".join(lines) + "\r\n\r\n").encode()


class _ChunkedLines:
    """A watch stream's body: chunked transfer coding, then one event per line."""

    def __init__(self):
        self.raw = bytearray()
        self.body = bytearray()
        self.headers_done = False
        self.status = None
        self.ended = False

    def feed(self, data):
        """Takes received bytes; returns the complete lines they finished."""
        self.raw += data
        if not self.headers_done:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return []
            self.status = int(self.raw[:end].split(b" ", 2)[1])
            del self.raw[:end + 4]
            self.headers_done = True
        while True:
            eol = self.raw.find(b"\r\n")
            if eol < 0:
                break
            size = int(self.raw[:eol].split(b";")[0], 16)
            if len(self.raw) < eol + 2 + size + 2:
                break
            if size == 0:
                self.ended = True
                self.raw.clear()
                break
            self.body += self.raw[eol + 2:eol + 2 + size]
            del self.raw[:eol + 2 + size + 2]
        lines = []
        while True:
            nl = self.body.find(b"\n")
            if nl < 0:
                break
            lines.append(bytes(self.body[:nl]))
            del self.body[:nl + 1]
        return lines


# -- the probe: the API's delivery to a watcher -----------------------------------------

def _watch_target(path, rv, selector=None):
    query = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true",
             "timeoutSeconds": "3600"}
    if selector:
        query["labelSelector"] = selector
    return path + "?" + urllib.parse.urlencode(query)


def _probe(endpoint, rv, conn):
    """Child process: watches services and slices from rv; sends (arrival, resource, type,
    namespace, name, rv) for every event, the time taken as its line completes."""
    streams = {}
    for resource, path, selector in (("services", SERVICES_PATH, None),
                                     ("endpointslices", SLICES_PATH, SLICE_SELECTOR)):
        sock = endpoint.connect()
        sock.sendall(endpoint.request_bytes(_watch_target(path, rv, selector)))
        sock.setblocking(False)
        streams[sock] = (resource, _ChunkedLines())
    conn.send("watching")
    while True:
        if conn.poll():
            break  # the writer is done
        readable, _, _ = select.select(list(streams), [], [], 0.05)
        for sock in readable:
            resource, splitter = streams[sock]
            try:
                data = sock.recv(1 << 20)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            if not data:
                raise BenchError(f"the probe's {resource} watch ended")
            # A TLS record may hold more than one recv returned: drain what is pending.
            while sock.pending():
                data += sock.recv(sock.pending())
            lines = splitter.feed(data)
            arrived = time.monotonic()
            for line in lines:
                event = json.loads(line)
                meta = event["object"].get("metadata", {})
                conn.send((arrived, resource, event["type"], meta.get("namespace", ""),
                           meta.get("name", ""), meta.get("resourceVersion", "")))
    for sock in streams:
        sock.close()


# -- the poller: the first DNS answer that shows a change --------------------------------

def _poller(port, conn):
    """Child process: for each (tag, qname, qtype, present) asks knotd every 0.2 ms until the
    answer has records (present) or is NXDOMAIN (not present); sends (tag, when) back, or
    (tag, None) after SEEN_TIMEOUT."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    pending = {}   # qid -> (tag, present, packet, since)
    next_id = 1
    done = False
    while not done or pending:
        while conn.poll():
            message = conn.recv()
            if message is None:
                done = True
                break
            tag, qname, qtype, present = message
            pending[next_id] = (tag, present, proglat._query(next_id, qname, qtype),
                                time.monotonic())
            next_id = next_id % 65535 + 1
        now = time.monotonic()
        for qid, (tag, present, packet, since) in list(pending.items()):
            if now - since > SEEN_TIMEOUT:
                del pending[qid]
                conn.send((tag, None))
                continue
            try:
                sock.send(packet)
            except BlockingIOError:
                pass
        for seen, qid, flags, ancount in proglat._answers(sock, time.monotonic() + POLL_INTERVAL):
            if qid not in pending:
                continue
            tag, present, _, _ = pending[qid]
            rcode = flags & 0xF
            if (present and rcode == 0 and ancount > 0) or (not present and rcode == 3):
                del pending[qid]
                conn.send((tag, seen))
        if not pending and not done:
            conn.poll(0.005)
    conn.close()


# -- one world ---------------------------------------------------------------------------

def reverse_name(ip):
    return ipaddress.ip_address(ip).reverse_pointer + "."


class Run:
    """The probe and the poller around one knotd and one API; changes go through `api`
    (bench/latency: the simulator's or kube-apiserver's writer)."""

    def __init__(self, api, endpoint, dns_port):
        self.api = api
        self.writes = {}    # tag -> write started
        self.answers = {}   # tag -> first answer that shows it (None: not within 5 s)
        self.events = []    # (arrival, resource, type, ns, name, rv), in arrival order
        self.probe_conn, probe_child = multiprocessing.Pipe()
        self.probe = multiprocessing.Process(target=_probe, daemon=True,
                                             args=(endpoint, api.resource_version(), probe_child))
        self.poll_conn, poll_child = multiprocessing.Pipe()
        self.poller = multiprocessing.Process(target=_poller, args=(dns_port, poll_child),
                                              daemon=True)

    def __enter__(self):
        self.probe.start()
        self.poller.start()
        if not self.probe_conn.poll(30) or self.probe_conn.recv() != "watching":
            raise BenchError("the probe did not start its watches")
        return self

    def __exit__(self, *exc):
        self.probe_conn.send(None)
        self.poll_conn.send(None)
        for process in (self.probe, self.poller):
            process.join(timeout=10)
            if process.is_alive():
                process.kill()

    def _drain(self):
        while self.probe_conn.poll():
            self.events.append(self.probe_conn.recv())
        while self.poll_conn.poll():
            tag, when = self.poll_conn.recv()
            self.answers[tag] = when

    def change(self, tag, write, qname, qtype, present):
        """Writes a change (write() makes the request) and asks the poller to look for it."""
        self._drain()  # the children block when their pipes fill
        self.poll_conn.send((tag, qname, qtype, present))
        self.writes[tag] = time.monotonic()
        write()

    def wait(self, tags, timeout=SEEN_TIMEOUT + 2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._drain()
            if all(t in self.answers for t in tags):
                return
            time.sleep(0.002)
        self._drain()

    def delivered(self, tag, resource, etype, ns, name):
        """When the probe got the first event of this kind for this object after the write."""
        self._drain()
        started = self.writes[tag]
        for arrived, res, typ, ens, ename, _ in self.events:
            if arrived >= started and res == resource and typ == etype and (ens, ename) == (ns, name):
                return arrived
        return None


def shares(run, changes):
    """Per change: total, API and module shares (s); None where a time is missing."""
    out = []
    for tag, resource, etype, ns, name in changes:
        written, seen = run.writes[tag], run.answers.get(tag)
        delivered = run.delivered(tag, resource, etype, ns, name)
        out.append({
            "total": None if seen is None else seen - written,
            "api": None if delivered is None else delivered - written,
            "module": None if seen is None or delivered is None else seen - delivered,
        })
    return out


def summary(rows):
    """p50/p90/p99/max of each share over the changes, in ms, and the counts."""
    out = {"changes": len(rows), "seen": sum(r["total"] is not None for r in rows),
           "delivered": sum(r["api"] is not None for r in rows)}
    for share in ("total", "api", "module"):
        values = sorted(r[share] for r in rows if r[share] is not None)
        for label, fraction in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            out[f"{share}_{label}_ms"] = _ms(percentile(values, fraction))
        out[f"{share}_max_ms"] = _ms(values[-1] if values else None)
    return out


def one_at_a_time(run, count, spacing=0.3):
    """COUNT changes of each kind, one at a time (the next SPACING s after the last one's
    start, once it was seen): a new ClusterIP service, an address added to a world
    service's slice (of ENDPOINTS addresses), the address removed, the new service deleted."""
    api = run.api
    results = {}
    news = [api.new_service(i) for i in range(count)]
    slices = api.slices(count)
    for kind in KINDS:
        changes = []
        for i in range(count):
            started = time.monotonic()
            tag = (kind, i)
            ns, name = news[i]
            fqdn = f"{name}.{ns}.svc.{CLUSTER}"
            target = slices[i]
            meta = target["metadata"]
            address = str(ipaddress.IPv4Address("10.251.0.0") + i + 1)
            if kind == "new service":
                run.change(tag, lambda: api.create_service(ns, name, i), fqdn, 1, True)
                changes.append((tag, "services", "ADDED", ns, name))
            elif kind == "endpoint update":
                run.change(tag, lambda: api.put_slice(target, [address]),
                           reverse_name(address), 12, True)
                changes.append((tag, "endpointslices", "MODIFIED", meta["namespace"], meta["name"]))
            elif kind == "endpoint removal":
                run.change(tag, lambda: api.put_slice(target, []), reverse_name(address), 12, False)
                changes.append((tag, "endpointslices", "MODIFIED", meta["namespace"], meta["name"]))
            else:
                run.change(tag, lambda: api.delete_service(ns, name), fqdn, 1, False)
                changes.append((tag, "services", "DELETED", ns, name))
            run.wait([tag])
            rest = spacing - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)
        results[kind] = summary(shares(run, changes))
        r = results[kind]
        progress(f"  {kind}: p50 {r['total_p50_ms']} ms (API {r['api_p50_ms']}, module "
                 f"{r['module_p50_ms']}), {r['seen']}/{r['changes']} seen")
    return results


def steady(run, rate=proglat.RATE, duration=proglat.DURATION, services=proglat.SERVICES, first=0):
    """RATE endpoint updates a second for DURATION s, the slices of SERVICES world services
    in turn (one slice changes again every SERVICES / RATE s), each its addresses plus a
    new one; FIRST: the number of changes of earlier runs (their addresses and tags)."""
    api = run.api
    targets = api.slices(min(services, api.slice_count()))
    count = int(rate * duration)
    changes, late = [], 0
    start = time.monotonic() + 0.2
    for i in range(count):
        slot = start + i / rate
        wait = slot - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        else:
            late += 1
        target = targets[i % len(targets)]
        address = str(ipaddress.IPv4Address("10.250.0.0") + first + i + 1)
        tag = ("steady", first + i)
        run.change(tag, lambda: api.put_slice(target, [address]), reverse_name(address), 12, True)
        changes.append((tag, "endpointslices", "MODIFIED", target["metadata"]["namespace"],
                        target["metadata"]["name"]))
    elapsed = time.monotonic() - start
    run.wait([c[0] for c in changes])
    out = summary(shares(run, changes))
    out.update({"rate": rate, "achieved_rate": round(count / elapsed, 1), "late_writes": late})
    progress(f"  {rate}/s: p50 {out['total_p50_ms']} / p99 {out['total_p99_ms']} ms (API p99 "
             f"{out['api_p99_ms']}, module p50 {out['module_p50_ms']} / p99 "
             f"{out['module_p99_ms']}), {out['seen']}/{out['changes']} seen")
    return out


# -- the API's own time to serve the first sync's lists ----------------------------------

class _Dechunk:
    """A chunked body's bytes, without keeping them: what feed() returns is the next part of
    the body (a chunk's framing may fall anywhere in what was received)."""

    def __init__(self):
        self.pending = b""   # an incomplete size line
        self.left = -1       # bytes of the current chunk still to come (-1: headers first)
        self.crlf = 0        # the CRLF after a chunk's data still to skip
        self.headers = None

    def feed(self, data):
        out = []
        data = self.pending + data
        self.pending = b""
        i = 0
        if self.left < 0:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                self.pending = data
                return b""
            self.headers = data[:end].lower()
            i, self.left = end + 4, 0
        while i < len(data):
            if self.crlf:
                skip = min(self.crlf, len(data) - i)
                i += skip
                self.crlf -= skip
            elif self.left > 0:
                take = min(self.left, len(data) - i)
                out.append(data[i:i + take])
                i += take
                self.left -= take
                if self.left == 0:
                    self.crlf = 2
            else:
                eol = data.find(b"\r\n", i)
                if eol < 0:
                    self.pending = data[i:]
                    break
                self.left = int(data[i:eol].split(b";")[0], 16)
                i = eol + 2
        return b"".join(out)


def _serve(endpoint, target, watch_list, conn):
    """Child process: one request as the module makes it, read to its end (a LIST) or to
    the initial-events-end bookmark (a watch-list); sends (seconds, bytes)."""
    started = time.monotonic()
    sock = endpoint.connect(timeout=600)
    # As the module asks: LISTs with gzip, watch-lists without (kube-apiserver 1.37 gzips
    # their events as one gzip member each, which libcurl refuses: module/api/reflector.c).
    headers = ["Connection: close"] + ([] if watch_list else ["Accept-Encoding: gzip"])
    sock.sendall(endpoint.request_bytes(target, headers))
    size, tail, body, inflate = 0, b"", _Dechunk(), None
    while True:
        data = sock.recv(1 << 20)
        if not data:
            break
        size += len(data)
        if watch_list:
            part = body.feed(data)
            if inflate is None and body.headers is not None:
                gzipped = b"content-encoding: gzip" in body.headers
                inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzipped else False
            window = tail + (inflate.decompress(part) if inflate else part)
            if INITIAL_END in window:
                break
            tail = window[-len(INITIAL_END):]
    conn.send((time.monotonic() - started, size))
    sock.close()


def api_serving(endpoint, targets, watch_list):
    """Seconds the API takes to serve the first sync's requests at once, each read by a
    process of its own as fast as it comes, nothing decoded (and bytes received)."""
    started = time.monotonic()
    procs = []
    for target in targets:
        parent, child = multiprocessing.Pipe()
        p = multiprocessing.Process(target=_serve, args=(endpoint, target, watch_list, child),
                                    daemon=True)
        p.start()
        procs.append((p, parent))
    size = 0
    for p, parent in procs:
        if not parent.poll(900):
            raise BenchError("an API serving reader did not finish")
        size += parent.recv()[1]
        p.join()
    return round(time.monotonic() - started, 2), size


def first_sync_targets(watch_list, rv="0"):
    """The first sync's requests of the module (bench zones: no pods, no clusterset)."""
    out = []
    for path, selector in (("/api/v1/namespaces", None), (SERVICES_PATH, None),
                           (SLICES_PATH, SLICE_SELECTOR)):
        if watch_list:
            query = {"watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
                     "resourceVersionMatch": "NotOlderThan"}
        else:
            query = {"resourceVersion": rv, "limit": "500"}
        if selector:
            query["labelSelector"] = selector
        out.append(path + "?" + urllib.parse.urlencode(query))
    return out
