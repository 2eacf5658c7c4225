"""DNS programming latency: from an API write to a DNS client seeing the new answer.

At a fixed rate (100 changes per second) the writer replaces the EndpointSlice
of one of 200 ClusterIP services with its endpoints plus one new address
(unique per change), annotated with endpoints.kubernetes.io/last-change-
trigger-time = the write's wall-clock time (with microseconds, so that the
module's own histogram has millisecond resolution). Just before sending the
write it tells a poller process the new address and the time; the poller
queries the address's PTR name over UDP every 0.5 ms until it gets NOERROR
with an answer, and records the delay. The write goes through the
simulator's control API (one HTTP request, which the simulator turns into a
watch event), so the figure includes the simulator's share, as a real
cluster's would include the API server's.
"""

import datetime
import ipaddress
import multiprocessing
import select
import socket
import struct
import time

from common import BenchError, percentile, progress
import servers

RATE = 100           # changes per second
DURATION = 10        # seconds
SERVICES = 200       # services whose slices take turns
POLL_INTERVAL = 0.0005
SEEN_TIMEOUT = 5.0   # a change not visible after this long counts as lost


def _query(qid, qname, qtype=12):
    wire = b"".join(bytes([len(label)]) + label.encode() for label in qname.rstrip(".").split("."))
    return struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 0) + wire + b"\0" + struct.pack("!HH", qtype, 1)


def _answers(sock, deadline):
    """The DNS answers `sock` receives until `deadline` (or until none waits): (arrival
    time, ID, flags, answer count) each."""
    while True:
        readable, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            return
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            return
        seen = time.monotonic()
        qid, flags, _, ancount = struct.unpack("!HHHH", data[:8])
        yield seen, qid, flags, ancount


def _poller(port, conn):
    """Child process: polls the PTR names it is given until each answers; sends back latencies."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    pending = {}          # qid -> (qname, t_write, packet)
    seen_at, lost = {}, 0
    done = False
    next_id = 1
    while not done or pending:
        while conn.poll():
            message = conn.recv()
            if message is None:
                done = True
                drain_deadline = time.monotonic() + SEEN_TIMEOUT
                break
            qname, t_write = message
            pending[next_id] = (qname, t_write, _query(next_id, qname))
            next_id = next_id % 65535 + 1
        now = time.monotonic()
        for qid, (qname, t_write, packet) in list(pending.items()):
            if now - t_write > SEEN_TIMEOUT or (done and now > drain_deadline):
                del pending[qid]
                lost += 1
                continue
            try:
                sock.send(packet)
            except BlockingIOError:
                pass
        for seen, qid, flags, ancount in _answers(sock, time.monotonic() + POLL_INTERVAL):
            if qid in pending and flags & 0xF == 0 and ancount > 0:
                seen_at[pending.pop(qid)[0]] = seen
        if not pending and not done:
            conn.poll(0.005)
    conn.send((seen_at, lost))
    conn.close()


def _slices(sim):
    """EndpointSlices of the first ClusterIP services (one LIST page, in key order)."""
    response = sim.get("/apis/discovery.k8s.io/v1/endpointslices?limit=300", timeout=60)
    items = [s for s in response.json()["items"]
             if "service.kubernetes.io/headless" not in (s["metadata"].get("labels") or {})
             and s.get("endpoints")]
    if len(items) < SERVICES:
        raise BenchError(f"only {len(items)} ClusterIP EndpointSlices for the latency test")
    for s in items:
        s["apiVersion"], s["kind"] = "discovery.k8s.io/v1", "EndpointSlice"
    return items[:SERVICES]


def _histogram(server):
    counters = servers.stats(server)
    return {k: v for k, v in counters.items() if k.startswith("programming-latency[")}


def _bucket_bound_ms(name):
    # "programming-latency[le-4ms]" -> 4; the last bucket "gt-N ms" is unbounded.
    label = name[name.index("[") + 1:-1]
    return float("inf") if label.startswith("gt-") else float(label[3:-2])


def _histogram_percentile(before, after, fraction):
    diff = sorted(((_bucket_bound_ms(k), after[k] - before.get(k, 0)) for k in after),
                  key=lambda item: item[0])
    total = sum(n for _, n in diff)
    if total == 0:
        return None, 0
    rank, seen = fraction * total, 0
    for bound, n in diff:
        seen += n
        if seen >= rank:
            break
    # JSON has no infinity: the unbounded last bucket is reported as null.
    return (None if bound == float("inf") else bound), total


def _ms(seconds):
    return None if seconds is None else round(seconds * 1000, 2)


def _rfc3339(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def run(sim, server, rate=RATE, duration=DURATION):
    """Applies rate changes/s for duration seconds; returns client-side and module-side figures."""
    slices = _slices(sim)
    before = _histogram(server)
    parent, child = multiprocessing.Pipe()
    poller = multiprocessing.Process(target=_poller, args=(server.port, child), daemon=True)
    poller.start()
    count = rate * duration
    behind = 0
    writes = {}           # qname -> (write sent, write answered)
    try:
        start = time.monotonic() + 0.2
        for i in range(count):
            slot = start + i / rate
            wait = slot - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            else:
                behind += 1
            # Round robin: a slice changes again only after 2 s, when its last change is visible.
            obj = dict(slices[i % len(slices)])
            address = str(ipaddress.IPv4Address("10.250.0.0") + i + 1)
            meta = dict(obj["metadata"])
            meta["annotations"] = dict(meta.get("annotations") or {})
            meta["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] = \
                _rfc3339(time.time())
            obj["metadata"] = meta
            obj["endpoints"] = obj["endpoints"] + [{"addresses": [address],
                                                    "conditions": {"ready": True}}]
            qname = ipaddress.ip_address(address).reverse_pointer + "."
            written = time.monotonic()
            parent.send((qname, written))
            # Stored as given, without the simulator's (slow) checks.
            sim.apply(obj, validate=False)
            writes[qname] = (written, time.monotonic())
        elapsed = time.monotonic() - start
        parent.send(None)
        if not parent.poll(SEEN_TIMEOUT + 30):
            raise BenchError("the latency poller did not report")
        seen_at, lost = parent.recv()
    finally:
        poller.join(timeout=5)
        if poller.is_alive():
            poller.kill()
    time.sleep(1.5)  # The module updates its counters once a second.
    after = _histogram(server)
    latencies = sorted(seen_at[q] - writes[q][0] for q in seen_at)
    write_times = sorted(answered - sent for sent, answered in writes.values())
    after_write = sorted(seen_at[q] - writes[q][1] for q in seen_at)
    module_p50, module_count = _histogram_percentile(before, after, 0.50)
    module_p99, _ = _histogram_percentile(before, after, 0.99)
    out = {
        "changes": count,
        "achieved_rate": round(count / elapsed, 1),
        "late_writes": behind,
        "seen": len(latencies),
        "lost": lost,
        "p50_ms": _ms(percentile(latencies, 0.50)),
        "p90_ms": _ms(percentile(latencies, 0.90)),
        "p99_ms": _ms(percentile(latencies, 0.99)),
        "max_ms": _ms(latencies[-1] if latencies else None),
        "write_p50_ms": _ms(percentile(write_times, 0.50)),
        "write_p99_ms": _ms(percentile(write_times, 0.99)),
        "after_write_p50_ms": _ms(percentile(after_write, 0.50)),
        "after_write_p99_ms": _ms(percentile(after_write, 0.99)),
        "module_events": module_count,
        "module_p50_le_ms": module_p50,
        "module_p99_le_ms": module_p99,
    }
    progress(f"programming latency: p50 {out['p50_ms']} ms, p99 {out['p99_ms']} ms "
             f"({out['seen']}/{count} seen)")
    return out
