"""A real Kubernetes control plane on loopback, for tests of mod-k8s against the real things.

    import realk8s
    realk8s.skip_unless_available()          # prints 1..0 # SKIP and exits 77 if not built
    with realk8s.ControlPlane() as cp:
        cp.kubectl("apply", "-f", path)
        cp.apply([{...}, ...])                # objects (dicts), kubectl apply
        token = cp.token("knot-dns", "kube-system")
        kubeconfig = cp.module_kubeconfig(token=token)

The binaries are those tests/realk8s/build made at the versions of
tests/realk8s/versions.env, in $REALK8S_CACHE/bin (default /var/cache/mod-k8s,
else ~/.cache/mod-k8s). Started here, each on free loopback ports in the
fixture's own directory (certificates, data, logs):

  etcd                     one member, plain HTTP on 127.0.0.1
  kube-apiserver           TLS with certificates made by openssl, client-certificate
                           and ServiceAccount token authentication (bound tokens
                           signed by its own key, issuer ISSUER), --authorization-mode
                           Node,RBAC, dual-stack service ranges SERVICE_CIDRS
  kube-controller-manager  the EndpointSlice (and mirroring), ServiceAccount and
                           namespace controllers, as system:masters (its own
                           authorization is not what is tested)
  the MCS CRDs             ServiceImport, ServiceExport (multicluster.x-k8s.io)
                           and ClusterProperty (about.k8s.io), tests/realk8s/mcs-crds.yaml
  a kubelet stand-in       a thread that plays the kubelet for every pod: phase
                           Running, pod IPs, the Ready condition, and the final
                           delete of a terminating pod, so that the real
                           EndpointSlice controller writes real EndpointSlices

The stand-in reads these pod annotations (kubectl annotate --overwrite changes them):
  kubelet.modk8s.test/ips      the pod IPs, comma-separated (default: the next free
                               10.244.x.y and fd00:10:244::x pair)
  kubelet.modk8s.test/ready    "false": not ready (default ready)
  kubelet.modk8s.test/linger   "true": a deleted pod stays terminating until the
                               annotation goes (default: removed at once, as a
                               kubelet does when the containers have stopped)
Pods need spec.nodeName NODE (created here) for graceful deletion: the API
server deletes a pod bound to no node at once.

Every process is stopped by its PID when the with-block ends, at exit, and by
the kernel (PR_SET_PDEATHSIG) if the test process dies.
"""

import atexit
import base64
import ctypes
import http.client
import ipaddress
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import cluster
import dig
import knotd

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
REALK8S_DIR = os.path.join(SRCDIR, "tests", "realk8s")
VERSIONS_FILE = os.path.join(REALK8S_DIR, "versions.env")
CRDS = os.path.join(REALK8S_DIR, "mcs-crds.yaml")

ISSUER = "https://kubernetes.default.svc.cluster.local"
SERVICE_CIDRS = "10.96.0.0/16,fd00:10:96::/108"
NODE = "node-1"
ANNOTATION = "kubelet.modk8s.test/"
# How long a component may take to start on a loaded 2-core machine.
START_TIMEOUT = 120


class Unavailable(Exception):
    """The control plane cannot run here (no Go toolchain, nothing built)."""


class ControlPlaneError(Exception):
    """A component did not start, died, or an API call failed."""


def versions():
    """{"K8S_VERSION": "v1.37.2", ...} from tests/realk8s/versions.env."""
    out = {}
    with open(VERSIONS_FILE, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                out[key.strip()] = value.strip()
    return out


def cache_dir():
    """Where tests/realk8s/build keeps the binaries and the Go caches."""
    if os.environ.get("REALK8S_CACHE"):
        return os.environ["REALK8S_CACHE"]
    if os.path.isdir("/var/cache/mod-k8s/bin"):
        return "/var/cache/mod-k8s"
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                        "mod-k8s")


def binaries(components=("etcd", "k8s")):
    """{"etcd": path, "kube-apiserver": path, ...}; raises Unavailable saying why not."""
    v = versions()
    bindir = os.path.join(cache_dir(), "bin")
    wanted = {"etcd": [("etcd", f"etcd-{v['ETCD_VERSION']}")],
              "k8s": [(name, f"kubernetes-{v['K8S_VERSION']}")
                      for name in ("kube-apiserver", "kube-controller-manager", "kubectl")],
              "coredns": [("coredns", f"coredns-{v['COREDNS_VERSION']}")]}
    found, missing = {}, []
    for component in components:
        for name, subdir in wanted[component]:
            path = os.path.join(bindir, subdir, name)
            if os.access(path, os.X_OK):
                found[name] = path
            else:
                missing.append(f"{subdir}/{name}")
    if missing:
        go = shutil.which("go") or (os.access("/usr/local/go/bin/go", os.X_OK) and "/usr/local/go/bin/go")
        if not go:
            raise Unavailable("no Go toolchain to build the real control plane with "
                              "(tests/realk8s/build; Go 1.26 from go.dev)")
        raise Unavailable(f"not built: run tests/realk8s/build (no {', '.join(missing)} in {bindir})")
    if shutil.which("openssl") is None:
        raise Unavailable("openssl not found (Debian package 'openssl')")
    return found


def skip_unless_available(components=("etcd", "k8s")):
    """Prints `1..0 # SKIP reason` and exits 77 when the binaries are not here
    (or MODK8S_REALK8S=skip says not to run them)."""
    if os.environ.get("MODK8S_REALK8S") == "skip":
        print("1..0 # SKIP MODK8S_REALK8S=skip")
        sys.exit(77)
    try:
        return binaries(components)
    except Unavailable as e:
        print(f"1..0 # SKIP {e}")
        sys.exit(77)


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


_running = set()


@atexit.register
def _stop_all():
    for process in list(_running):
        process.stop()


class Process:
    """One component: started with its log in the fixture's directory, stopped by PID."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.popen = None

    def start(self):
        with open(self.log_path, "a", encoding="utf-8") as log:
            self.popen = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=subprocess.STDOUT, env=self.env,
                                          preexec_fn=_die_with_parent)
        _running.add(self)

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        _running.discard(self)
        self.popen = None

    def log_tail(self, lines=30):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


def _openssl(*args, cwd):
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ControlPlaneError(f"openssl {' '.join(args)}: {result.stderr}")


def make_pki(directory, service_ip="10.96.0.1", extra_ips=()):
    """A CA, the API server's serving certificate, client certificates, the SA key pair.
    service_ip: the kubernetes Service's address (the first of the Service range), which
    pods connect to; extra_ips: more addresses the server is reached at (a node's, for
    the kubelets of the other nodes)."""
    os.makedirs(directory, exist_ok=True)
    d = directory
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", "2", "-subj", "/CN=mod-k8s-test-ca",
             # Python 3.13's strict verification (Debian 13) wants a CA's key usage.
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    ext = os.path.join(d, "serving.ext")
    with open(ext, "w", encoding="utf-8") as f:
        ips = "".join(f",IP:{ip}" for ip in extra_ips)
        f.write(f"subjectAltName=IP:127.0.0.1,IP:{service_ip}{ips},DNS:localhost,DNS:kubernetes,"
                "DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n")
    client_ext = os.path.join(d, "client.ext")
    with open(client_ext, "w", encoding="utf-8") as f:
        f.write("extendedKeyUsage=clientAuth\n")
    for name, subject, extfile in (("apiserver", "/CN=kube-apiserver", ext),
                                   ("admin", "/O=system:masters/CN=admin", client_ext),
                                   ("kcm", "/O=system:masters/CN=system:kube-controller-manager",
                                    client_ext)):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.csr", "-subj", subject, cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "2", "-extfile", extfile, "-out", f"{name}.crt", cwd=d)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)


def kubeconfig_text(server, ca, user):
    """A kubeconfig (JSON, which kubectl and mod-k8s both read) for one user entry."""
    return json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "real", "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": "user", "user": user}],
        "contexts": [{"name": "real", "context": {"cluster": "real", "user": "user"}}],
        "current-context": "real"}, indent=1)


class ControlPlane:
    """etcd, kube-apiserver, kube-controller-manager and the kubelet stand-in; a context manager."""

    def __init__(self, workdir=None, watch_cache=True, apiserver_args=(), standin=True):
        self.bin = binaries()
        self.workdir = workdir or tempfile.mkdtemp(prefix="mod-k8s-realk8s-")
        self.own_workdir = workdir is None
        self.pki = os.path.join(self.workdir, "pki")
        self.watch_cache = watch_cache
        self.apiserver_args = list(apiserver_args)
        self.etcd_port = knotd.free_port()
        self.etcd_peer_port = knotd.free_port()
        self.port = knotd.free_port()
        self.server = f"https://127.0.0.1:{self.port}"
        self.etcd = self.apiserver = self.kcm = None
        self.kubelet = KubeletStandIn(self) if standin else None
        self.admin_kubeconfig = os.path.join(self.workdir, "admin.kubeconfig")

    # -- life cycle

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind, value, traceback):
        self.stop()
        return False

    def start(self):
        started = time.monotonic()
        make_pki(self.pki)
        self._write_kubeconfigs()
        self._start_etcd()
        self._start_apiserver()
        self._start_kcm()
        self.kubectl("apply", "--server-side", "-f", CRDS)
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s", "-f", CRDS)
        self.wait_for_watch_caches()
        self.apply([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}])
        if self.kubelet:
            self.kubelet.start()
        self.start_seconds = time.monotonic() - started

    def stop(self):
        if self.kubelet:
            self.kubelet.stop()
        for process in (self.kcm, self.apiserver, self.etcd):
            if process is not None:
                process.stop()
        if self.own_workdir and not os.environ.get("MODK8S_KEEP_TMP"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def alive(self):
        return all(p is not None and p.alive() for p in (self.etcd, self.apiserver, self.kcm))

    def _write_kubeconfigs(self):
        ca = os.path.join(self.pki, "ca.crt")
        for name, path in (("admin", self.admin_kubeconfig),
                           ("kcm", os.path.join(self.workdir, "kcm.kubeconfig"))):
            user = {"client-certificate": os.path.join(self.pki, f"{name}.crt"),
                    "client-key": os.path.join(self.pki, f"{name}.key")}
            with open(path, "w", encoding="utf-8") as f:
                f.write(kubeconfig_text(self.server, ca, user))

    def _start_etcd(self):
        data = os.path.join(self.workdir, "etcd")
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        self.etcd_url = f"http://127.0.0.1:{self.etcd_port}"
        self.etcd = Process("etcd", [
            self.bin["etcd"], "--name", "default", "--data-dir", data,
            "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"default={peer}", "--unsafe-no-fsync",
            "--log-level", "warn"], os.path.join(self.workdir, "etcd.log"))
        self.etcd.start()
        self._wait(self.etcd, lambda: self.etcd_call("/v3/maintenance/status", {}) is not None)

    def apiserver_argv(self):
        p = self.pki
        return [self.bin["kube-apiserver"],
                "--etcd-servers", self.etcd_url,
                # The address of the kubernetes Service's endpoint: not loopback, which
                # EndpointSlice validation refuses; nothing connects to it.
                "--bind-address", "127.0.0.1", "--advertise-address", "192.0.2.1",
                "--secure-port", str(self.port),
                "--tls-cert-file", f"{p}/apiserver.crt", "--tls-private-key-file", f"{p}/apiserver.key",
                "--client-ca-file", f"{p}/ca.crt",
                "--service-account-issuer", ISSUER,
                "--service-account-key-file", f"{p}/sa.pub",
                "--service-account-signing-key-file", f"{p}/sa.key",
                "--api-audiences", ISSUER,
                "--authorization-mode", "Node,RBAC",
                "--service-cluster-ip-range", SERVICE_CIDRS,
                "--watch-cache=" + ("true" if self.watch_cache else "false"),
                # Compaction only when a test asks for it (compact_etcd()).
                "--etcd-compaction-interval", "0",
                "--profiling=false", "--enable-priority-and-fairness=false",
                *self.apiserver_args]

    def _start_apiserver(self):
        self.apiserver = Process("kube-apiserver", self.apiserver_argv(),
                                 os.path.join(self.workdir, "kube-apiserver.log"))
        self.apiserver.start()
        self._wait(self.apiserver, lambda: self.api("GET", "/readyz")[0] == 200)

    def second_apiserver(self, watch_cache=True):
        """Another kube-apiserver on the same etcd (for changes made while the first is
        down); returns (Process, admin kubeconfig path). The caller stops it."""
        port = knotd.free_port()
        argv = self.apiserver_argv()
        argv[argv.index("--secure-port") + 1] = str(port)
        argv = [a for a in argv if not a.startswith("--watch-cache=")]
        argv.append("--watch-cache=" + ("true" if watch_cache else "false"))
        process = Process("kube-apiserver-2", argv,
                          os.path.join(self.workdir, "kube-apiserver-2.log"))
        kubeconfig = os.path.join(self.workdir, "admin-2.kubeconfig")
        user = {"client-certificate": os.path.join(self.pki, "admin.crt"),
                "client-key": os.path.join(self.pki, "admin.key")}
        with open(kubeconfig, "w", encoding="utf-8") as f:
            f.write(kubeconfig_text(f"https://127.0.0.1:{port}",
                                    os.path.join(self.pki, "ca.crt"), user))
        process.start()
        self._wait(process, lambda: self.kubectl(
            "get", "--raw", "/readyz", kubeconfig=kubeconfig, ok=False).returncode == 0)
        return process, kubeconfig

    # What the module lists and watches: each has a watch cache in kube-apiserver.
    CACHED = ("/api/v1/namespaces", "/api/v1/services", "/api/v1/pods", "/api/v1/nodes",
              "/apis/discovery.k8s.io/v1/endpointslices",
              "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports",
              "/apis/about.k8s.io/v1alpha1/clusterproperties")

    def wait_for_watch_caches(self, timeout=60):
        """Waits until every resource's watch cache serves: until then (a CRD just
        established, a server just started) a LIST or WATCH it would serve is answered
        429 with Retry-After: 1, which the module retries, but counts as throttled."""
        if not self.watch_cache:
            return
        deadline = time.monotonic() + timeout
        for path in self.CACHED:
            while self.api("GET", path + "?resourceVersion=0&limit=1")[0] != 200:
                if time.monotonic() > deadline:
                    raise ControlPlaneError(f"the watch cache of {path} not ready after "
                                            f"{timeout} s")
                time.sleep(0.1)

    def restart_apiserver(self, down_seconds=0.0):
        """Stops kube-apiserver (SIGTERM), waits, starts it again and waits until ready."""
        self.apiserver.stop()
        time.sleep(down_seconds)
        self._start_apiserver()

    def _start_kcm(self):
        kubeconfig = os.path.join(self.workdir, "kcm.kubeconfig")
        self.kcm = Process("kube-controller-manager", [
            self.bin["kube-controller-manager"], "--kubeconfig", kubeconfig,
            "--controllers", "endpointslice,endpointslicemirroring,serviceaccount,namespace",
            "--leader-elect=false", "--secure-port", "0",
            "--use-service-account-credentials=false",
            "--concurrent-service-endpoint-syncs", "5",
            "--profiling=false"], os.path.join(self.workdir, "kube-controller-manager.log"))
        self.kcm.start()
        # Ready when the ServiceAccount controller made the default namespace's account.
        self._wait(self.kcm, lambda: self.api(
            "GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200)

    def _wait(self, process, ready, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not process.alive():
                raise ControlPlaneError(f"{process.name} exited during start-up:\n"
                                        + process.log_tail())
            try:
                if ready():
                    return
            except (OSError, http.client.HTTPException, ControlPlaneError):
                pass
            time.sleep(0.2)
        raise ControlPlaneError(f"{process.name} not ready after {timeout} s:\n"
                                + process.log_tail())

    # -- talking to it

    def ssl_context(self):
        context = ssl.create_default_context(cafile=os.path.join(self.pki, "ca.crt"))
        context.load_cert_chain(os.path.join(self.pki, "admin.crt"),
                                os.path.join(self.pki, "admin.key"))
        return context

    def api(self, method, path, body=None, content_type="application/json", token=None,
            timeout=30):
        """One request as the admin (or with a bearer token): (status, parsed JSON or text)."""
        if token is None:
            context = self.ssl_context()
        else:
            context = ssl.create_default_context(cafile=os.path.join(self.pki, "ca.crt"))
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=context,
                                           timeout=timeout)
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", errors="replace")

    def kubectl(self, *args, input=None, ok=True, timeout=60, kubeconfig=None):
        """Runs the built kubectl as the admin; returns the CompletedProcess."""
        argv = [self.bin["kubectl"], "--kubeconfig", kubeconfig or self.admin_kubeconfig, *args]
        env = dict(os.environ, HOME=self.workdir, KUBECONFIG="")
        result = subprocess.run(argv, input=input, capture_output=True, text=True,
                                timeout=timeout, env=env)
        if ok and result.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                                    f"{result.stderr}{result.stdout}")
        return result

    def apply(self, objects, *args):
        """kubectl apply -f of objects (dicts), as one List; new namespaces first.

        A pod is refused until its namespace's default ServiceAccount exists (the
        ServiceAccount admission plugin), which the controller makes a moment after
        the namespace: namespaces are applied and waited for first.
        """
        if isinstance(objects, dict):
            objects = [objects]
        namespaces = [o for o in objects if o.get("kind") == "Namespace"]
        rest = [o for o in objects if o.get("kind") != "Namespace"]
        result = None
        for batch in (namespaces, rest):
            if batch:
                text = json.dumps({"apiVersion": "v1", "kind": "List", "items": batch})
                result = self.kubectl("apply", "-f", "-", *args, input=text)
            if batch is namespaces:
                for ns in namespaces:
                    self.wait_for_default_account(ns["metadata"]["name"])
        return result

    def wait_for_default_account(self, namespace, timeout=60):
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/default"
        deadline = time.monotonic() + timeout
        while self.api("GET", path)[0] != 200:
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"no default ServiceAccount in {namespace} after "
                                        f"{timeout} s:\n" + self.kcm.log_tail())
            time.sleep(0.1)

    def token(self, account, namespace, seconds=3600, bound_pod=None):
        """A bound ServiceAccount token from the TokenRequest API (kubectl create token)."""
        args = ["create", "token", account, "-n", namespace, f"--duration={seconds}s"]
        if bound_pod:
            args += ["--bound-object-kind", "Pod", "--bound-object-name", bound_pod]
        return self.kubectl(*args).stdout.strip()

    def module_kubeconfig(self, path, token=None, token_file=None, client=None):
        """A kubeconfig for mod-k8s: a token, a tokenFile, or client certificate name in pki/."""
        if token is not None:
            user = {"token": token}
        elif token_file is not None:
            user = {"tokenFile": token_file}
        else:
            name = client or "admin"
            user = {"client-certificate": os.path.join(self.pki, f"{name}.crt"),
                    "client-key": os.path.join(self.pki, f"{name}.key")}
        with open(path, "w", encoding="utf-8") as f:
            f.write(kubeconfig_text(self.server, os.path.join(self.pki, "ca.crt"), user))
        return path

    def etcd_call(self, path, body):
        """A call to etcd's JSON gateway (/v3/kv/range, /v3/kv/compaction...)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.etcd_port, timeout=30)
        try:
            conn.request("POST", path, body=json.dumps(body).encode(),
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        if response.status != 200:
            raise ControlPlaneError(f"etcd {path}: {response.status} {raw[:200]!r}")
        return json.loads(raw)

    def etcd_revision(self):
        key = base64.b64encode(b"/registry/").decode()
        header = self.etcd_call("/v3/kv/range", {"key": key, "limit": 1})["header"]
        return int(header["revision"])

    def compact_etcd(self):
        """Compacts etcd to its current revision (physically); returns that revision."""
        revision = self.etcd_revision()
        self.etcd_call("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def logs(self):
        return {p.name: p.log_tail(40) for p in (self.etcd, self.apiserver, self.kcm) if p}

    def wait_for_slices(self, namespace, service, check, timeout=30):
        """Waits until check(list of the service's EndpointSlices) is true; returns them."""
        deadline = time.monotonic() + timeout
        selector = urllib.parse.quote(f"kubernetes.io/service-name={service}")
        while True:
            status, body = self.api("GET", f"/apis/discovery.k8s.io/v1/namespaces/{namespace}"
                                    f"/endpointslices?labelSelector={selector}")
            items = body.get("items", []) if status == 200 else []
            if check(items):
                return items
            if time.monotonic() > deadline:
                raise AssertionError(f"EndpointSlices of {namespace}/{service} not as expected "
                                     f"after {timeout} s: {json.dumps(items)[:2000]}")
            time.sleep(0.2)


class KubeletStandIn:
    """Plays the kubelet for every pod (see the top of this file); a thread of the test."""

    INTERVAL = 0.2

    def __init__(self, plane):
        self.plane = plane
        self.thread = None
        self.stopping = threading.Event()
        self.assigned = {}          # pod uid -> [IPs]
        self.next_host = 10
        self.errors = []

    def start(self):
        self.thread = threading.Thread(target=self._run, name="kubelet-standin", daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join(10)

    def _run(self):
        while not self.stopping.is_set():
            try:
                self.sync_once()
            except Exception as e:          # the API server restarting: try again
                self.errors.append(repr(e))
                del self.errors[:-20]
            self.stopping.wait(self.INTERVAL)

    def _addresses(self, pod):
        wanted = pod["metadata"].get("annotations", {}).get(ANNOTATION + "ips")
        if wanted:
            return [str(ipaddress.ip_address(a.strip())) for a in wanted.split(",") if a.strip()]
        uid = pod["metadata"]["uid"]
        if uid not in self.assigned:
            n = self.next_host
            self.next_host += 1
            self.assigned[uid] = [f"10.244.{n // 250}.{n % 250 + 1}", f"fd00:10:244::{n:x}"]
        return self.assigned[uid]

    def sync_once(self):
        status, body = self.plane.api("GET", "/api/v1/pods", timeout=10)
        if status != 200:
            return
        for pod in body.get("items", []):
            meta = pod["metadata"]
            base = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
            annotations = meta.get("annotations", {})
            if meta.get("deletionTimestamp"):
                if annotations.get(ANNOTATION + "linger") != "true":
                    self.plane.api("DELETE", base, {"kind": "DeleteOptions", "apiVersion": "v1",
                                                    "gracePeriodSeconds": 0})
                continue
            desired = self.desired_status(pod)
            current = pod.get("status", {})
            if all(current.get(k) == v for k, v in desired.items() if k != "conditions") and \
                    _conditions(current) == _conditions(desired):
                continue
            self.plane.api("PATCH", base + "/status", {"status": desired},
                           content_type="application/merge-patch+json")

    def desired_status(self, pod):
        ips = self._addresses(pod)
        ready = "False" if pod["metadata"].get("annotations", {}).get(
            ANNOTATION + "ready") == "false" else "True"
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        conditions = [{"type": t, "status": s, "lastTransitionTime": now}
                      for t, s in (("PodReadyToStartContainers", "True"), ("Initialized", "True"),
                                   ("Ready", ready), ("ContainersReady", ready),
                                   ("PodScheduled", "True"))]
        return {"phase": "Running", "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
                "podIP": ips[0], "podIPs": [{"ip": ip} for ip in ips],
                "conditions": conditions}


def _conditions(status):
    return sorted((c.get("type"), c.get("status")) for c in status.get("conditions", []))


# ---------------------------------------------------------------------------
# Object builders for tests

def namespace(name, labels=None):
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels or {}}}


def pod(name, ns, labels, ips=None, ready=True, hostname=None, subdomain=None, ports=None,
        linger=False):
    annotations = {}
    if ips:
        annotations[ANNOTATION + "ips"] = ",".join(ips)
    if not ready:
        annotations[ANNOTATION + "ready"] = "false"
    if linger:
        annotations[ANNOTATION + "linger"] = "true"
    spec = {"nodeName": NODE, "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "c", "image": "registry.invalid/none:1",
                            "ports": ports or []}]}
    if hostname:
        spec["hostname"] = hostname
    if subdomain:
        spec["subdomain"] = subdomain
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "annotations": annotations},
            "spec": spec}


def service(name, ns, ports, selector=None, cluster_ip=None, families=None, policy=None,
            labels=None, publish_not_ready=False, svc_type="ClusterIP", external_name=None):
    spec = {"type": svc_type}
    if svc_type != "ExternalName":
        spec["ports"] = ports
    if selector is not None:
        spec["selector"] = selector
    if cluster_ip is not None:
        spec["clusterIP"] = cluster_ip
    if families is not None:
        spec["ipFamilies"] = families
    if policy is not None:
        spec["ipFamilyPolicy"] = policy
    if publish_not_ready:
        spec["publishNotReadyAddresses"] = True
    if external_name is not None:
        spec["externalName"] = external_name
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": spec}


# ---------------------------------------------------------------------------
# The fixture of the tests: the control plane, a world applied to it, a knotd

class RealCluster(cluster.Cluster):
    """A ControlPlane with `world` applied, and a knotd whose mod-k8s watches it.

    Like cluster.Cluster (query, expect_answer, stats, knotd(...) for another
    server), with `.plane` instead of `.sim`. `world` is a list of objects, or a
    callable given the ControlPlane (it applies what it wants and waits for
    what the controllers must make first). The module reads the API with the
    admin's client certificate unless `kubeconfig` (a callable given the plane,
    returning a path) says otherwise.
    """

    def __init__(self, world=(), module=None, zones=cluster.ZONES, kubeconfig=None,
                 plane_options=None, **knotd_options):
        self.plane = None
        self.world = world
        self.make_kubeconfig = kubeconfig
        self.plane_options = plane_options or {}
        self.module = dict(module or {})
        self.zones = zones
        self.ready_zones = tuple(z for z in zones if not z.endswith("arpa."))
        self.knotd_options = knotd_options
        self.server = None
        self.kubeconfig_path = None

    def __enter__(self):
        try:
            self.plane = ControlPlane(**self.plane_options).__enter__()
            self.workdir = self.plane.workdir
            if callable(self.world):
                self.world(self.plane)
            elif self.world:
                self.plane.apply(self.world)
            if self.make_kubeconfig:
                self.kubeconfig_path = self.make_kubeconfig(self.plane)
            else:
                self.kubeconfig_path = self.plane.module_kubeconfig(
                    os.path.join(self.plane.workdir, "module.kubeconfig"))
            self.server = self.knotd(module=self.module, zones=self.zones,
                                     **self.knotd_options).__enter__()
            cluster.wait_ready(self.server, self.ready_zones, timeout=60)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if self.server is not None:
                self.server.__exit__(kind, value, traceback)
        finally:
            if self.plane is not None:
                self.plane.stop()
        return False

    def module_options(self, module=None):
        options = {"kubeconfig": self.kubeconfig_path}
        options.update(module or {})
        return options

    def is_running(self):
        return self.server is not None and self.server.is_running() and self.plane.alive()

    def log_text(self):
        text = self.server.log_text() if self.server else ""
        if self.plane is not None and not self.plane.alive():
            text += "\n" + "\n".join(f"--- {k}\n{v}" for k, v in self.plane.logs().items())
        return text


# ---------------------------------------------------------------------------
# CoreDNS beside it

COREFILE = """\
.:{port} {{
    bind 127.0.0.1
    errors
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig} real
        pods {pods}
        ttl {ttl}
        multicluster clusterset.local
{kubernetes_extra}    }}
{extra}}}
"""


class CoreDNS(dig.Server):
    """CoreDNS (tests/realk8s/build) with its kubernetes plugin on the same control plane:
    `kubernetes_extra` are lines in its kubernetes block, `extra` lines after it, `blocks`
    more server blocks after the root's (`{port}` in it: the root's port)."""

    address = "127.0.0.1"

    def __init__(self, plane, kubeconfig=None, ttl=5, extra="", pods="insecure",
                 kubernetes_extra="", blocks=""):
        self.binary = binaries(("coredns",))["coredns"]
        self.plane = plane
        self.dir = tempfile.mkdtemp(prefix="coredns-", dir=plane.workdir)
        self.port = knotd.free_port()
        self.log_path = os.path.join(self.dir, "coredns.log")
        self.corefile = os.path.join(self.dir, "Corefile")
        with open(self.corefile, "w", encoding="utf-8") as f:
            f.write(COREFILE.format(port=self.port, ttl=ttl, extra=extra, pods=pods,
                                    kubernetes_extra=kubernetes_extra,
                                    kubeconfig=kubeconfig or plane.admin_kubeconfig)
                    + blocks.replace("{port}", str(self.port)))
        self.process = None

    def __enter__(self):
        self.process = Process("coredns", [self.binary, "-conf", self.corefile],
                               self.log_path)
        self.process.start()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if not self.process.alive():
                raise ControlPlaneError("coredns exited:\n" + self.process.log_tail())
            try:
                if dig.query(self, "kubernetes.default.svc.cluster.local.", "A",
                             timeout=1).rcode == "NOERROR":
                    return self
            except dig.QueryError:
                pass
            if time.monotonic() > deadline:
                raise ControlPlaneError("coredns does not answer:\n" + self.process.log_tail())
            time.sleep(0.2)

    def __exit__(self, kind, value, traceback):
        if self.process:
            self.process.stop()
        return False

    def is_running(self):
        return self.process is not None and self.process.alive()
