#!/usr/bin/env python3
"""mod-k8s Kubernetes API simulator: an HTTPS server that behaves like kube-apiserver for
LIST/WATCH clients, with a plain-HTTP control API for tests.  See README.md beside this file."""

import argparse
import json
import os
import signal
import ssl
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simlib import apiserver, control, credentials, faults, generator, listener, manifests  # noqa: E402
from simlib import objects, resources, store  # noqa: E402


def log(message):
    """One line on stderr.  Never pass a token here."""
    sys.stderr.write(f"apisim: {message}\n")
    sys.stderr.flush()


class Simulator:
    """Wires the store, the HTTPS listener, the control API and the credential files."""

    def __init__(self, args):
        self.args = args
        self.log = log
        self.state = faults.State()
        self.store = store.Store(resources.ALL, history_size=args.history)
        self.creds = credentials.Credentials(args.dir)
        self.listener = None
        self.control = None
        self.control_port = 0

    def apply_config(self, values):
        if "history" in values:
            self.store.set_history_size(values.pop("history"))
        try:
            self.state.set_config(values)
        except KeyError as err:
            raise control.ControlError(400, f"unknown config key(s): {err.args[0]}") from None

    def bootstrap(self):
        """What every real cluster has: the system namespaces and default/kubernetes, whose
        endpoint is this simulator's own address."""
        ip = self.args.address
        family = "IPv6" if ":" in ip else "IPv4"
        port = self.listener.port
        objs = [(resources.NAMESPACES, {"metadata": {"name": name}})
                for name in ("default", "kube-node-lease", "kube-public", "kube-system")]
        labels = {"component": "apiserver", "provider": "kubernetes"}
        objs.append((resources.SERVICES, {
            "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
            "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
                     "clusterIP": "10.96.0.1", "type": "ClusterIP"}}))
        objs.append((resources.ENDPOINTS, {
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port}]}]}))
        objs.append((resources.ENDPOINTSLICES, {
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "addressType": family, "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "protocol": "TCP", "port": port}]}))
        for rtype, obj in objs:
            self.store.load(rtype, objects.prepare_load(rtype, obj))

    def load(self):
        started = time.monotonic()
        if not self.args.no_bootstrap:
            self.bootstrap()
        if self.args.generate:
            sets = generator.build(generator.parse_spec(",".join(self.args.generate)), self.store)
            log("generated " + ", ".join(f"{g.count} {g.rtype.plural}" for g in sets))
        count = manifests.load(self.store, self.args.manifests) if self.args.manifests else 0
        if count:
            log(f"loaded {count} objects from manifests")
        self.store.seal()
        for name in self.args.absent:
            self.state.absent.add(resources.lookup(name).plural)
        log(f"store ready at resourceVersion {self.store.current_rv()} "
            f"({time.monotonic() - started:.2f} s)")

    def tls_context(self):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.creds.path("server.crt"), self.creds.path("server.key"))
        ctx.load_verify_locations(self.creds.path("ca.pem"))
        ctx.verify_mode = ssl.CERT_REQUIRED if self.args.require_client_cert else ssl.CERT_OPTIONAL
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx

    def start(self):
        os.makedirs(self.args.dir, exist_ok=True)
        ready = self.creds.path("ready.json")
        if os.path.exists(ready):
            os.unlink(ready)
        self.creds.setup()
        self.state.set_config({"bookmark_interval": self.args.bookmark_interval})
        ctx = apiserver.Context(self.store, self.state, self.creds, log, seed=self.args.seed)
        handler = type("BoundApiHandler", (apiserver.ApiHandler,), {"ctx": ctx})
        self.listener = listener.Listener(self.args.address, self.args.port, self.tls_context(),
                                          handler, log)
        self.listener.bind()
        self.load()
        self.listener.start()
        ctx.address, ctx.port = self.args.address, self.listener.port
        self.control = control.serve(self, self.args.control_port)
        self.control_port = self.control.server_address[1]
        host = f"[{self.args.address}]" if ":" in self.args.address else self.args.address
        self.creds.server_url = f"https://{host}:{self.listener.port}"
        self.creds.write_kubeconfigs()
        credentials.write_atomic(ready, json.dumps({"port": self.listener.port,
                                                    "control_port": self.control_port,
                                                    "pid": os.getpid()}) + "\n")
        log(f"serving https://{host}:{self.listener.port} (control http://127.0.0.1:{self.control_port})")

    def stop(self):
        if self.listener:
            self.listener.stop()
        if self.control:
            self.control.shutdown()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dir", required=True, help="work directory for certificates, token, kubeconfigs")
    p.add_argument("--address", default="127.0.0.1", help="listen address (127.0.0.1 or ::1)")
    p.add_argument("--port", type=int, default=0, help="HTTPS port (0: a free port)")
    p.add_argument("--control-port", type=int, default=0, help="control API port (0: a free port)")
    p.add_argument("--manifests", nargs="*", default=[], help="JSON manifest files or directories")
    p.add_argument("--generate", action="append", default=[],
                   help="synthetic objects, e.g. services=10000,endpoints=100,pods=150000,"
                        "namespaces=1000,headless-every=10")
    p.add_argument("--bookmark-interval", type=float, default=60.0, help="seconds between BOOKMARKs")
    p.add_argument("--history", type=int, default=10000, help="events kept per resource for watch resume")
    p.add_argument("--require-client-cert", action="store_true",
                   help="refuse TLS connections without a client certificate signed by the CA")
    p.add_argument("--absent", action="append", default=[],
                   help="a resource served as 404 from the start (e.g. serviceimports)")
    p.add_argument("--seed", type=int, default=1, help="seed for chunk splitting")
    p.add_argument("--no-bootstrap", action="store_true",
                   help="start empty: no system namespaces, no default/kubernetes service")
    args = p.parse_args(argv)
    for name in args.absent:
        if resources.lookup(name) is None:
            p.error(f"unknown resource {name!r}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    sim = Simulator(args)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        sim.start()
    except (manifests.ManifestError, ValueError, RuntimeError, OSError) as err:
        log(f"cannot start ({err})")
        return 1
    stop.wait()
    log("stopping")
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
