"""The two servers compared: knotd with mod-k8s, and the same knotd serving zone files.

Both come from tests/lib/knotd.py with the same knot.conf apart from the
zones' contents and `module:` lines: same binary, same server section
(udp-workers 2, tcp-workers 1, background-workers 1), same log level. The
mod-k8s section is present in both; the zone-file server attaches no zone to
it, so no watcher runs there. Under callgrind both run with udp-workers 1.
"""

import os
import time

from common import BenchError, progress
import cluster as cluster_lib
import knotd as knotd_lib


class Server(knotd_lib.Knotd):
    """A Knotd whose knotd may run under a wrapper (valgrind) and with other worker counts."""

    def __init__(self, wrapper=(), udp_workers=2, zone_texts=None, server_lines=(), **options):
        self.wrapper = list(wrapper)
        self.udp_workers = udp_workers
        self.server_lines = list(server_lines)  # more of knot.conf's server: section
        self.zone_texts = dict(zone_texts or {})
        options.setdefault("log_level", "info")
        super().__init__(**options)

    def write_files(self):
        """The harness's files, then the full zone files of a zone-file server over its SOA+NS ones."""
        super().write_files()
        for zone, text in self.zone_texts.items():
            with open(os.path.join(self.dir, "zones", f"{zone}zone"), "w", encoding="utf-8") as f:
                f.write(text)

    def config_text(self):
        text = super().config_text()
        more = "".join(f"    {line}\n" for line in self.server_lines)
        return text.replace("    udp-workers: 2\n", f"    udp-workers: {self.udp_workers}\n{more}", 1)

    def command(self, program, *args):
        argv, env = super().command(program, *args)
        if program == "knotd" and self.wrapper:
            at = next(i for i, arg in enumerate(argv) if os.path.basename(arg) == "knotd")
            argv[at:at] = self.wrapper
        return argv, env


def module_server(sim, module_options=None, zones=None, cls=Server, **options):
    """knotd with mod-k8s on every zone, watching the simulator (not started); cls: a Server
    subclass (bench/lib/xdp.py's adds listeners)."""
    module = {"kubeconfig": sim.kubeconfig}
    module.update(module_options or {})
    return cls(module=module, zones=zones or ("cluster.local.", "in-addr.arpa."), **options)


def zone_server(zone_texts, **options):
    """The same knotd serving the given zone file texts, without the module (not started)."""
    return Server(zones={zone: None for zone in zone_texts}, zone_texts=zone_texts, **options)


def stats(server, zone="cluster.local."):
    return cluster_lib.stats(server, zone)


def wait_for(server, predicate, timeout, what, poll=0.05):
    """Polls predicate() until it is true; returns when it was (monotonic).

    Raises BenchError naming `what` if knotd exits first or after timeout seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        if not server.is_running():
            raise BenchError(f"knotd exited while waiting for {what}:\n" + server.log_tail(20))
        time.sleep(poll)
    raise BenchError(f"timed out after {timeout} s waiting for {what}:\n" + server.log_tail(20))


def wait_ready(server, timeout=300):
    """Waits until mod-k8s reports the cluster zone synchronized; returns when it did (monotonic)."""
    return wait_for(server, lambda: stats(server).get("ready[cluster]") == 1, timeout,
                    "mod-k8s to synchronize")


def stop(server):
    """Stops a server, reporting (not raising) a problem on the way out."""
    try:
        server.stop()
    except knotd_lib.KnotdError as e:
        progress(f"knotd did not stop cleanly: {e}")
