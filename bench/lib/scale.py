"""Scale: first sync, steady memory and the memory peak of a full relist, at Kubernetes' limits.

The cluster: 10,000 services (every 10th headless) in 1,000 namespaces, one
EndpointSlice of 100 ready endpoints each (1,000,000 endpoint addresses) and
150,000 running pods behind the first 15 endpoints of each service.

- First sync: seconds from starting knotd to the module reporting
  `ready[cluster] = 1` (knotc zone-stats, polled every 50 ms).
- Steady RSS: knotd's VmRSS once synchronized and quiet.
- Bytes per record: (steady RSS - RSS of the same knotd synchronized with an
  empty cluster) / the module's `records` counter (service IPs and endpoint
  addresses it publishes). Everything the module holds is charged to the
  records: the store's slim objects, the record table, the name and PTR
  indexes, allocator overhead, and (with pods: verified) the pod index.
- Relist peak: VmHWM is reset (clear_refs 5) in the steady state, then the API
  server restarts, the resource version moves on and history is compacted, so
  every watch resumes with a too-old resource version, gets 410 Gone and lists
  everything again. The peak is VmHWM once every resource has been listed
  again and every watch streams.
"""

import os
import time

from common import progress, proc_status, reset_peak_rss
import servers
import simctl

GENERATE = "services=10000,endpoints=100,pods=150000,namespaces=1000,headless-every=10"


def _settle(server, seconds=1.5):
    """Waits until RSS stops growing (the watcher has applied everything), then returns it."""
    last = proc_status(server.pid)["VmRSS"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(seconds)
        now = proc_status(server.pid)["VmRSS"]
        if abs(now - last) < 256 * 1024:
            return now
        last = now
    return last


def empty_rss(workdir, module_options):
    """RSS of knotd with mod-k8s synchronized with a cluster holding only the bootstrap objects."""
    sim = simctl.Simulator(os.path.join(workdir, "apisim-empty"))  # only the bootstrap objects
    sim.start()
    server = servers.module_server(sim, module_options)
    try:
        server.start()
        servers.wait_ready(server)
        return _settle(server), servers.stats(server)["records"]
    finally:
        servers.stop(server)
        sim.stop()


def _list_completions(server):
    return server.log_text().count(" completed, ")


def run(workdir, module_options, generate=GENERATE, with_relist=True, with_latency=None):
    """Measures one configuration; with_latency(sim, server) runs after the relist."""
    base_rss, base_records = empty_rss(workdir, module_options)
    sim = simctl.Simulator(os.path.join(workdir, "apisim-scale"), generate=generate)
    sim.start()
    server = servers.module_server(sim, module_options)
    out = {"cluster": generate, "module_options": dict(module_options)}
    try:
        started = time.monotonic()
        server.start()
        ready = servers.wait_ready(server, timeout=600)
        out["first_sync_s"] = round(ready - started, 2)
        out["sync_peak_rss"] = proc_status(server.pid)["VmHWM"]
        progress(f"scale: synchronized in {out['first_sync_s']} s")

        steady = _settle(server)
        counters = servers.stats(server)
        records = counters["records"] - base_records
        out.update({
            "empty_rss": base_rss,
            "steady_rss": steady,
            "records": counters["records"],
            "objects": {k[8:-1]: v for k, v in counters.items() if k.startswith("objects[")},
            "table_bytes": counters.get("table-bytes"),
            "bytes_per_record": round((steady - base_rss) / records, 1),
        })

        if with_relist:
            out["relist"] = relist(sim, server, steady)
        if with_latency is not None:
            out["programming_latency"] = with_latency(sim, server)
        return out
    finally:
        servers.stop(server)
        sim.stop()


def relist(sim, server, steady):
    """Forces a full relist of every resource; returns its duration and memory peak."""
    sources = sum(1 for key in servers.stats(server) if key.startswith("objects["))
    completions = _list_completions(server)
    reset_peak_rss(server.pid)
    started = time.monotonic()
    sim.restart(down_seconds=1)
    # Move the resource version on while the watches are down, then forget the
    # history: every watch resumes from a resource version that is too old.
    sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench-relist"}})
    sim.compact()
    servers.wait_for(server, lambda: _list_completions(server) >= completions + sources, 600,
                     "the relist of every resource")
    servers.wait_for(server, lambda: servers.stats(server).get("connected") == 1, 120,
                     "the watches after the relist")
    duration = time.monotonic() - started
    status = proc_status(server.pid)
    counters = servers.stats(server)
    progress(f"scale: relisted in {duration:.1f} s")
    return {
        "duration_s": round(duration, 2),
        "peak_rss": status["VmHWM"],
        "rss_after": status["VmRSS"],
        "peak_over_steady": round(status["VmHWM"] / steady, 3),
        "resyncs": counters.get("resyncs"),
    }
