"""A one-node Kubernetes cluster with knotd + mod-k8s as its DNS, on this machine.

    import realcluster
    realcluster.skip_unless_available()      # 1..0 # SKIP and exit 77 when not built
    with realcluster.Cluster() as c:         # up(), and down() at the end
        c.kubectl("get", "nodes")
        c.run_pod(...)

tests/realcluster/cluster up|down|status is the same from a shell: the processes outlive
the command (their PIDs in the work directory), and `down` stops them.

Everything runs in a private network namespace (the "node", NETNS unless named
otherwise: Cluster(name) runs beside another), entered with
`nsenter --net` (`ip netns exec` remounts /sys, and runc then finds no cgroup mount):
no address, route or rule of the machine's own network is touched, and nothing listens
outside it. In it, from the binaries of tests/realk8s/build and tests/realcluster/build
(versions: tests/realk8s/versions.env), the images of tests/realcluster/images and the
project's image (packaging/build-deb, packaging/build-image):

  lo             NODE_IP/32 (no dummy interfaces in these kernels), ip_forward on
  etcd           127.0.0.1:2379
  kube-apiserver :6443, advertised at NODE_IP (the kubernetes Service's endpoint),
                 the certificates of realk8s.make_pki, authorization Node,RBAC
  kube-controller-manager, kube-scheduler   every default controller; the admin's
                 certificate (their own authorization is not what is tested)
  containerd     Debian's (1.6 on Debian 12), its own root, state, socket and CNI
                 configuration; restrict_oom_score_adj (no CAP_SYS_RESOURCE here)
  the CNI bridge BRIDGE with POD_CIDR (bridge, host-local, portmap: Debian's plugins)
  kubelet        cgroup v1 (failCgroupV1: false), cgroupfs driver, cgroupRoot
                 /NETNS, clusterDNS DNS_IP, its root and logs in the work directory
  kube-proxy     iptables mode (these kernels have no IPVS)
  mod-k8s        packaging/kubernetes applied as a user applies it: service.yaml
                 (kube-dns at DNS_IP) and `kubectl apply -k` of an overlay that names
                 the image packaging/build-image made (imported into containerd)

The kubelet's resolvConf (the upstream of dnsPolicy: Default pods, knot-dns's among them)
names NODE_IP, where nothing answers on port 53: names outside the cluster are refused,
never sent off the machine. The kubelet sets kernel tunables that are not per namespace
(vm.overcommit_memory, kernel.panic, ...): up() saves them first, down() puts them back.
Clusters side by side share them: a cluster brought up while another is up takes the
values that one saved (the machine's own, not the kubelet's), and down() leaves them
alone while another cluster is up (the last one down restores them).
POD_CIDR, CLUSTER_CIDR, SERVICE_CIDR and DNS_IP are the defaults of Cluster()'s
parameters (clusters joined by a link need ranges of their own).

Other shapes (issue 39), by Cluster()'s parameters:
  nodes=N        N nodes, each a network namespace of its own (NETNS, NETNS-2, ...) with
                 its containerd, kubelet, kube-proxy and CNI bridge; the control plane on
                 the first. They are joined by a bridge in NETNS-lan (each node's eth0,
                 NODE_IP's network /24 and fd00:250::/64), and each routes the others' pod
                 ranges to them (the routes a host-gw CNI makes). Node i is 10.250.0.i,
                 its pods the i-th /24 of the cluster's range (10.244.0.0/24, 10.244.1.0/24..)
  families=      "ipv4" (default), "ipv6" or "dual" (IPv4 first): the API server's Service
                 ranges, the pods' ranges (fd00:10:244:i::/64 on node i), the nodes'
                 addresses (fd00:250::i), kube-proxy in both families, the kube-dns Service
                 (RequireDualStack when dual: clusterIPs 10.96.0.10 and fd00:10:96::a)
  node_resolver= the nameserver of the kubelets' resolvConf (the knot-dns pods' upstream):
                 an address put on every node's lo (e.g. a link-local 169.254.53.1), where
                 the caller serves (start_on()); default the node's own address, a dead end
  node_local=    "nodelocaldns" made on every node as a bridge without ports: these kernels
                 have no dummy interfaces, and the node-local DNS caches (upstream's
                 node-cache, packaging/kubernetes/node-local) use the device they find
Every wait is bounded; down() removes what up() made: the processes (by PID), the pods'
containers and network namespaces, NETNS with the bridge and the rules, the cgroups, the
mounts under the work directory, the kubelet's links in /var/log/containers.
"""

import glob
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import realk8s

NETNS = "mk8s-node"
NODE = "node-1"
NODE_IP = "10.250.0.1"
POD_CIDR = "10.244.0.0/24"
CLUSTER_CIDR = "10.244.0.0/16"
SERVICE_CIDR = "10.96.0.0/16"
DNS_IP = "10.96.0.10"
# The IPv6 family's (families "ipv6" and "dual"): node i is NODE_NET6 + i.
NODE_NET6 = "fd00:250::"
POD_CIDR6 = "fd00:10:244::/64"
CLUSTER_CIDR6 = "fd00:10:244::/56"
SERVICE_CIDR6 = "fd00:10:96::/112"
DNS_IP6 = "fd00:10:96::a"
FAMILIES = {"ipv4": (4,), "ipv6": (6,), "dual": (4, 6)}
BRIDGE = "mk8s0"
CNI_BIN = "/usr/lib/cni"
APISERVER_PORT = 6443

SRCDIR = realk8s.SRCDIR
PACKAGING = os.path.join(SRCDIR, "packaging")
# How long a step may take on a loaded 2-core machine.
START_TIMEOUT = 180

# The kubelet's kernel tunables (pkg/kubelet/cm: setupKernelTunables), not per namespace.
SYSCTLS = ("vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
           "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes")


class Unavailable(Exception):
    """The cluster cannot run here (not root, a binary, an image or a package missing)."""


class ClusterError(Exception):
    """A component did not start or a wait ran out."""


class AlreadyUp(ClusterError):
    """A cluster of this name is up: up() touched nothing (and down() must not run)."""


def log(text):
    print(f"realcluster: {text}", file=sys.stderr, flush=True)


def default_workdir(name=NETNS):
    if name == NETNS and os.environ.get("REALCLUSTER_DIR"):
        return os.environ["REALCLUSTER_DIR"]
    return f"/tmp/mod-k8s-realcluster-{name}"


def binaries():
    """{name: path} of every binary the cluster runs; raises Unavailable saying why not."""
    v = realk8s.versions()
    found = realk8s.binaries(("etcd", "k8s"))
    bindir = os.path.join(realk8s.cache_dir(), "bin")
    missing = []
    for name in ("kubelet", "kube-proxy", "kube-scheduler"):
        path = os.path.join(bindir, f"kubernetes-node-{v['K8S_VERSION']}", name)
        if os.access(path, os.X_OK):
            found[name] = path
        else:
            missing.append(f"kubernetes-node-{v['K8S_VERSION']}/{name}")
    if missing:
        raise Unavailable(f"not built: run tests/realcluster/build (no {', '.join(missing)} "
                          f"in {bindir})")
    return found


def images(names=("pause", "glibc-dns-testing")):
    """{name: image archive} of tests/realcluster/images; raises Unavailable if missing."""
    v = realk8s.versions()
    versions = {"pause": v["PAUSE_VERSION"], "glibc-dns-testing": v["GLIBC_DNS_TESTING_VERSION"],
                "agnhost": v["AGNHOST_VERSION"], "coredns": v["COREDNS_VERSION"],
                "knot-resolver": v["KNOT_RESOLVER_VERSION"]}
    found = {}
    for name in names:
        path = os.path.join(realk8s.cache_dir(), "images", f"{name}-{versions[name]}.tar")
        if not os.path.isfile(path):
            raise Unavailable(f"no image {path}: run tests/realcluster/build (or "
                              f"tests/realcluster/images {name})")
        found[name] = path
    return found


def project_image():
    """(archive, tag) of packaging/build-image's output (build/packaging, else what
    packaging/ci --release RELEASE left in build/packaging/RELEASE), or (None, None)."""
    top = os.path.join(SRCDIR, "build", "packaging")
    release = ""
    with open("/etc/os-release", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VERSION_CODENAME="):
                release = line.split("=", 1)[1].strip().strip('"')
    # This tree's build first, then packaging/ci's of this machine's release, then any.
    archives = (sorted(glob.glob(os.path.join(top, "mod-k8s_*.oci.tar")))
                or sorted(glob.glob(os.path.join(top, release or "-", "mod-k8s_*.oci.tar")))
                or sorted(glob.glob(os.path.join(top, "*", "mod-k8s_*.oci.tar"))))
    if not archives:
        return None, None
    archive = archives[-1]
    return archive, os.path.basename(archive)[len("mod-k8s_"):-len(".oci.tar")]


def e2e_binary():
    """The path of tests/realk8s/build e2e's e2e.test: keyed by K8S_VERSION and by the
    source of tests/realcluster/e2e (the first 12 hex digits of its files' SHA-256)."""
    import hashlib
    digest = hashlib.sha256()
    e2e = os.path.join(SRCDIR, "tests", "realcluster", "e2e")
    for name in sorted(glob.glob(os.path.join(e2e, "*.go"))):
        with open(name, "rb") as f:
            digest.update(f.read())
    return os.path.join(realk8s.cache_dir(), "bin", f"e2e-network-"
                        f"{realk8s.versions()['K8S_VERSION']}-{digest.hexdigest()[:12]}",
                        "e2e.test")


class Tap:
    """The developer scripts' TAP lines: check() prints `ok N - name` or `not ok N - name`
    and the detail's last lines; n, passed and failed for their closing line."""

    def __init__(self, detail_lines=40):
        self.n = self.passed = self.failed = 0
        self.detail_lines = detail_lines

    def check(self, name, ok, detail=""):
        self.n += 1
        if ok:
            self.passed += 1
            print(f"ok {self.n} - {name}", flush=True)
        else:
            self.failed += 1
            print(f"not ok {self.n} - {name}", flush=True)
            lines = str(detail).rstrip().splitlines()
            for line in lines[-self.detail_lines:] if self.detail_lines else lines:
                print(f"#   {line}", flush=True)
        return ok


def goresolve_image(outdir, tag="mk8s.test/goresolve:1"):
    """The image archive of tests/realcluster/goresolve (Go's resolver and a query load),
    built into outdir (go build, CGO_ENABLED=0; mkimage.py); its name is tag."""
    here = os.path.join(SRCDIR, "tests", "realcluster")
    os.makedirs(outdir, exist_ok=True)
    root = os.path.join(outdir, "goresolve-root")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "etc"))
    go = shutil.which("go") or "/usr/local/go/bin/go"
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod", GOPROXY="off",
               GOCACHE=os.environ.get("GOCACHE", os.path.join(realk8s.cache_dir(), "gocache")))
    subprocess.run([go, "build", "-trimpath", "-o", os.path.join(root, "goresolve"), "."],
                   cwd=os.path.join(here, "goresolve"), env=env, check=True)
    layer = os.path.join(outdir, "goresolve-layer.tar")
    subprocess.run(["tar", "-C", root, "--owner=0", "--group=0", "-cf", layer, "."], check=True)
    archive = os.path.join(outdir, "goresolve.tar")
    subprocess.run([sys.executable, os.path.join(here, "mkimage.py"), archive, tag, layer,
                    "--entrypoint", "/goresolve", "--cmd", "sleep"], check=True,
                   stdout=subprocess.DEVNULL)
    return archive


def check_available():
    """Raises Unavailable with the reason the cluster cannot run here."""
    if os.geteuid() != 0:
        raise Unavailable("needs root (network namespaces, containerd, the kubelet)")
    for tool in ("containerd", "ctr", "runc", "iptables", "nsenter", "ip", "conntrack"):
        if shutil.which(tool) is None:
            raise Unavailable(f"no {tool} (scripts/deps cluster)")
    for plugin in ("bridge", "host-local", "portmap", "loopback"):
        if not os.access(os.path.join(CNI_BIN, plugin), os.X_OK):
            raise Unavailable(f"no CNI plugin {CNI_BIN}/{plugin} (scripts/deps cluster)")
    binaries()
    images(("pause", "glibc-dns-testing", "agnhost"))
    if project_image()[0] is None:
        raise Unavailable("no mod-k8s image in build/packaging: run packaging/build-deb and "
                          "packaging/build-image (or packaging/ci)")


def skip_unless_available():
    """Prints `1..0 # SKIP reason` and exits 77 when the cluster cannot run here."""
    try:
        check_available()
    except (Unavailable, realk8s.Unavailable) as e:
        print(f"1..0 # SKIP {e}")
        sys.exit(77)


def innode(argv, name=NETNS):
    """argv run in the node's network namespace (nsenter execs it: the PID is its own)."""
    return ["nsenter", f"--net=/run/netns/{name}", *argv]


def run(argv, check=True, timeout=120, input=None):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input)
    if check and result.returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed ({result.returncode}):\n"
                           f"{result.stderr}{result.stdout}")
    return result


def wait(what, ready, timeout=START_TIMEOUT, interval=0.5, alive=None):
    """Waits until ready() is true; raises ClusterError after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ready():
                return
        except (OSError, subprocess.SubprocessError, ClusterError):
            pass
        if alive is not None and not alive():
            raise ClusterError(f"{what}: the process exited")
        if time.monotonic() > deadline:
            raise ClusterError(f"{what}: not after {timeout} s")
        time.sleep(interval)


def cgroup_hierarchies(types=("cgroup",)):
    """The cgroup hierarchies' mount points: v1 (this machine's hybrid layout), and with
    types=("cgroup", "cgroup2") the v2 one too (runc makes its cgroups there as well)."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            fstype = fields[fields.index("-") + 1]
            if fstype in types:
                found.append(fields[4])
    return found


def _nth_subnet(cidr, i):
    """The i-th network of cidr's size after cidr (0: cidr itself)."""
    net = ipaddress.ip_network(cidr)
    return str(ipaddress.ip_network((int(net.network_address) + i * net.num_addresses,
                                     net.prefixlen), strict=True).compressed)


def _split(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def _family(address):
    return ipaddress.ip_network(address, strict=False).version


class Node:
    """One node of a cluster: its network namespace, addresses, pod ranges, work directory."""

    def __init__(self, cluster, index):
        self.index = index
        self.name = f"node-{index}"
        # The first node's names are the one-node cluster's (and those of its processes).
        self.suffix = "" if index == 1 else f"-{index}"
        self.netns = cluster.name + self.suffix
        self.cgroup = self.netns
        self.workdir = cluster.workdir if index == 1 else os.path.join(cluster.workdir, self.name)
        # Addresses and pod ranges, in the cluster's family order (the first is primary).
        self.ips = []
        self.pod_cidrs = []
        for family in cluster.families:
            if family == 4:
                base = ipaddress.ip_address(NODE_IP)
                self.ips.append(str(base + index - 1))
            else:
                self.ips.append(str(ipaddress.ip_address(NODE_NET6) + index))
            first = next(c for c in cluster.pod_cidrs if _family(c) == family)
            self.pod_cidrs.append(_nth_subnet(first, index - 1))

    @property
    def ip(self):
        return self.ips[0]

    def ip_of(self, family):
        return next((ip for ip in self.ips if _family(ip) == family), None)


class Cluster:
    """The nodes; up() and down(), or a context manager doing both."""

    def __init__(self, name=NETNS, workdir=None, dns="mod-k8s", pod_cidr=None,
                 cluster_cidr=None, service_cidr=None, dns_ip=None, before_dns=None,
                 nodes=1, families="ipv4", node_resolver=None, node_local=False,
                 images=()):
        # The first node's network namespace, cgroup root and work directory (the others'
        # add -2, -3...): clusters of other names run beside it (the smoke test's beside a
        # developer's `cluster up`).
        self.name = name
        self.families = FAMILIES[families]
        self.family_name = families
        v4 = 4 in self.families
        v6 = 6 in self.families

        def default(v4value, v6value):
            return ",".join(([v4value] if v4 else []) + ([v6value] if v6 else []))
        # The address ranges, comma-separated, the primary family first: clusters joined by
        # a link (tests/realcluster/twoclusters) need their own. pod_cidr is the first
        # node's range (the others' follow it); dns_ip (kube-dns) is in service_cidr.
        self.pod_cidrs = _split(pod_cidr or default(POD_CIDR, POD_CIDR6))
        self.cluster_cidr = cluster_cidr or default(CLUSTER_CIDR, CLUSTER_CIDR6)
        self.service_cidr = service_cidr or default(SERVICE_CIDR, SERVICE_CIDR6)
        self.dns_ips = _split(dns_ip or default(DNS_IP, DNS_IP6))
        self.pod_cidr = self.pod_cidrs[0]
        self.dns_ip = self.dns_ips[0]
        # Called with the cluster before the cluster DNS is deployed (CRDs it should
        # find when it starts, a node resolver to serve).
        self.before_dns = before_dns
        # The cluster DNS: "mod-k8s" (packaging/kubernetes) or "coredns" (the baseline,
        # tests/realcluster/coredns.yaml: kubeadm's add-on).
        self.dns = dns
        self.node_resolver = node_resolver
        self.node_local = node_local
        # More image archives imported into every node's containerd (their own names).
        self.extra_images = list(images)
        self.workdir = workdir or default_workdir(name)
        self.pki = os.path.join(self.workdir, "pki")
        self.admin_kubeconfig = os.path.join(self.workdir, "admin.kubeconfig")
        self.state_path = os.path.join(self.workdir, "state.json")
        self.nodes = [Node(self, i) for i in range(1, nodes + 1)]
        self.lan = f"{name}-lan" if nodes > 1 else None
        self.bin = {}

    def __enter__(self):
        try:
            self.up()
        except AlreadyUp:
            raise
        except BaseException:
            self.logs_to_stderr()
            self.down()
            raise
        return self

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            self.logs_to_stderr()
        self.down()
        return False

    # -- state kept between `up` and `down` (separate commands)

    def state(self):
        try:
            with open(self.state_path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def save_state(self, **changes):
        state = self.state()
        state.update(changes)
        with open(self.state_path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(state, f, indent=1)
        os.replace(self.state_path + ".tmp", self.state_path)

    def pidfile(self, name):
        return os.path.join(self.workdir, f"{name}.pid")

    def pid(self, name):
        try:
            with open(self.pidfile(name), encoding="utf-8") as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        # A PID is ours while its command line is the one started (not a reused PID).
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except OSError:
            return None
        want = self.state().get("argv0", {}).get(name)
        # nsenter until it has exec'd the command.
        return pid if want and cmdline and cmdline[0].decode(errors="replace") in (
            want, "nsenter") else None

    def start(self, name, argv, node=None):
        """Starts argv in a node's namespace (the first's by default), detached, its log
        and PID in the work directory; down() stops it."""
        netns = (node or self.nodes[0]).netns
        with open(os.path.join(self.workdir, f"{name}.log"), "a", encoding="utf-8") as out:
            process = subprocess.Popen(innode(argv, netns), stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        with open(self.pidfile(name), "w", encoding="utf-8") as f:
            f.write(f"{process.pid}\n")
        argv0 = self.state().get("argv0", {})
        argv0[name] = argv[0]
        self.save_state(argv0=argv0)
        # Reaped by nobody once this command exits: the process is the node's now.
        self._popen = getattr(self, "_popen", {})
        self._popen[name] = process
        return lambda: process.poll() is None

    def stop(self, name, timeout=20, sig=signal.SIGTERM):
        pid = self.pid(name)
        if pid is None:
            return
        os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while self.pid(name) is not None and time.monotonic() < deadline:
            self._reap(name)
            time.sleep(0.2)
        if self.pid(name) is not None:
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        self._reap(name)
        os.unlink(self.pidfile(name))

    def _reap(self, name):
        process = getattr(self, "_popen", {}).get(name)
        if process is not None:
            process.poll()

    def log_tail(self, name, lines=25):
        try:
            with open(os.path.join(self.workdir, f"{name}.log"), encoding="utf-8",
                      errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def logs_to_stderr(self):
        for name in ("containerd", "etcd", "kube-apiserver", "kube-controller-manager",
                     "kube-scheduler", "kubelet", "kube-proxy"):
            for node in self.nodes:
                if name in NODE_PROCESSES or node.index == 1:
                    tail = self.log_tail(name + node.suffix, 15)
                    if tail:
                        print(f"--- {name + node.suffix} (last lines)\n{tail}", file=sys.stderr)

    # -- talking to it

    def kubectl(self, *args, input=None, check=True, timeout=120):
        argv = innode([self.bin.get("kubectl") or binaries()["kubectl"],
                       "--kubeconfig", self.admin_kubeconfig, *args], self.name)
        return run(argv, check=check, timeout=timeout, input=input)

    def ctr(self, *args, check=True, timeout=300, node=None):
        node = node or self.nodes[0]
        return run(["ctr", "--address", os.path.join(node.workdir, "containerd", "containerd.sock"),
                    "-n", "k8s.io", *args], check=check, timeout=timeout)

    def innode(self, *argv, check=True, timeout=60, node=None):
        return run(innode(list(argv), (node or self.nodes[0]).netns), check=check,
                   timeout=timeout)

    def kubernetes_ip(self):
        """The kubernetes Service's address: the first of the primary Service range."""
        return str(ipaddress.ip_network(_split(self.service_cidr)[0])[1])

    def node(self, name):
        """The Node named name (node-1, node-2...)."""
        return next(n for n in self.nodes if n.name == name)

    def import_image(self, archive):
        """An image archive imported into every node's containerd."""
        for node in self.nodes:
            self.ctr("images", "import", archive, node=node)

    # -- up

    def up(self):
        check_available()
        self.bin = binaries()
        for netns in [n.netns for n in self.nodes] + ([self.lan] if self.lan else []):
            if os.path.exists(f"/run/netns/{netns}"):
                raise AlreadyUp(f"/run/netns/{netns} exists: a cluster is up "
                                f"(tests/realcluster/cluster down)")
        started = time.monotonic()
        os.makedirs(self.workdir, exist_ok=True)
        self.save_state(started=time.time(), workdir=self.workdir,
                        had_container_logs=os.path.isdir("/var/log/containers"),
                        nodes=len(self.nodes), families=self.family_name)
        self._save_sysctls()
        self._netns()
        self._cgroups()
        first = self.nodes[0]
        realk8s.make_pki(self.pki, str(ipaddress.ip_network(_split(self.service_cidr)[0])[1]),
                         extra_ips=first.ips)
        self._kubeconfigs()
        steps = [("containerd and images", self._containerd), ("etcd", self._etcd),
                 ("kube-apiserver", self._apiserver),
                 ("kube-controller-manager and kube-scheduler", self._controllers),
                 ("kubelet (node Ready)", self._kubelet), ("kube-proxy", self._kube_proxy),
                 (f"{self.dns} behind kube-dns", self._dns)]
        for what, step in steps:
            t = time.monotonic()
            step()
            log(f"{what}: up after {time.monotonic() - t:.0f} s")
        self.up_seconds = time.monotonic() - started
        log(f"cluster up after {self.up_seconds:.0f} s ({len(self.nodes)} node(s), "
            f"{self.family_name})")

    def _save_sysctls(self):
        if "sysctls" in self.state():
            return
        # Another cluster's kubelet may have changed them already: its saved values are
        # the machine's.
        for other in self._others_up():
            if set(other.get("sysctls", {})) == set(SYSCTLS):
                self.save_state(sysctls=other["sysctls"])
                return
        saved = {}
        for name in SYSCTLS:
            with open(f"/proc/sys/{name}", encoding="utf-8") as f:
                saved[name] = f.read().strip()
        self.save_state(sysctls=saved)

    def _others_up(self):
        """The saved states of the other clusters that are up (their namespace exists)."""
        paths = set(glob.glob(os.path.join(default_workdir("*"), "state.json")))
        if os.environ.get("REALCLUSTER_DIR"):
            paths.add(os.path.join(os.environ["REALCLUSTER_DIR"], "state.json"))
        others = []
        for path in sorted(paths):
            if os.path.realpath(path) == os.path.realpath(self.state_path):
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    state = json.load(f)
            except (OSError, ValueError):
                continue
            netns = state.get("netns")
            if netns and netns != self.name and os.path.exists(f"/run/netns/{netns}"):
                others.append(state)
        return others

    def _netns(self):
        made = []
        for node in self.nodes:
            run(["ip", "netns", "add", node.netns])
            made.append(node.netns)
            # "netns" is the first node's (other clusters' _others_up() read it).
            self.save_state(netns=self.name, netns_all=made)
        if self.lan:
            run(["ip", "netns", "add", self.lan])
            made.append(self.lan)
            self.save_state(netns_all=made)
            run(["ip", "-n", self.lan, "link", "add", "lan0", "type", "bridge"])
            run(["ip", "-n", self.lan, "link", "set", "lan0", "up"])
        for node in self.nodes:
            on = node
            self.innode("ip", "link", "set", "lo", "up", node=on)
            if self.lan:
                # The node's link to the others: eth0 here, its peer a port of lan0.
                peer = f"n{node.index}"
                run(["ip", "-n", self.lan, "link", "add", peer, "type", "veth", "peer", "name",
                     "eth0", "netns", node.netns])
                run(["ip", "-n", self.lan, "link", "set", peer, "master", "lan0", "up"])
                self.innode("ip", "link", "set", "eth0", "up", node=on)
                for ip in node.ips:
                    length = 24 if _family(ip) == 4 else 64
                    self.innode("ip", "addr", "add", f"{ip}/{length}", "dev", "eth0",
                                *(["nodad"] if _family(ip) == 6 else []), node=on)
            else:
                for ip in node.ips:
                    length = 32 if _family(ip) == 4 else 128
                    self.innode("ip", "addr", "add", f"{ip}/{length}", "dev", "lo",
                                *(["nodad"] if _family(ip) == 6 else []), node=on)
            if self.node_resolver:
                length = 32 if _family(self.node_resolver) == 4 else 128
                self.innode("ip", "addr", "add", f"{self.node_resolver}/{length}", "dev", "lo",
                            node=on)
            # The node has no default route (nothing leaves it): Service addresses asked
            # from the node itself need a route for kube-proxy's DNAT to apply to (then
            # rerouted).
            for cidr in _split(self.service_cidr):
                src = node.ip_of(_family(cidr))
                self.innode("ip", "route", "add", cidr, "dev", "lo", "src", src, node=on)
            # The other nodes' pods, through them (a host-gw CNI's routes).
            for other in self.nodes:
                if other is not node:
                    for cidr in other.pod_cidrs:
                        self.innode("ip", "route", "add", cidr, "via",
                                    other.ip_of(_family(cidr)), "dev", "eth0", node=on)
            # Per namespace (nsenter --net: /proc/sys/net is the namespace's).
            self.innode("sysctl", "-qw", "net.ipv4.ip_forward=1", node=on)
            # A pod's answer from a Service's pod on the same bridge goes through the
            # rules (conntrack undoes the DNAT): on by default with br_netfilter.
            self.innode("sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1", node=on)
            if 6 in self.families:
                self.innode("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1", node=on)
                self.innode("sysctl", "-qw", "net.bridge.bridge-nf-call-ip6tables=1", node=on)
            if self.node_local:
                # No dummy interfaces in these kernels: a bridge without ports holds the
                # node-local cache's addresses as a dummy device would.
                self.innode("ip", "link", "add", "nodelocaldns", "type", "bridge", node=on)
                self.innode("ip", "link", "set", "nodelocaldns", "up", node=on)

    def _cgroups(self):
        made = []
        v1 = cgroup_hierarchies()
        for node in self.nodes:
            for hierarchy in cgroup_hierarchies(("cgroup", "cgroup2")):
                path = os.path.join(hierarchy, node.cgroup)
                if not os.path.isdir(path):
                    # The kubelet wants its cgroupRoot in every v1 hierarchy; runc makes the
                    # pods' cgroups under the same name in the v2 one (hugetlb only here).
                    if hierarchy in v1:
                        os.mkdir(path)
                    made.append(path)
        self.save_state(cgroups=sorted(set(self.state().get("cgroups", []) + made)))

    def _kubeconfigs(self):
        user = {"client-certificate": os.path.join(self.pki, "admin.crt"),
                "client-key": os.path.join(self.pki, "admin.key")}
        with open(self.admin_kubeconfig, "w", encoding="utf-8") as f:
            f.write(realk8s.kubeconfig_text(f"https://127.0.0.1:{APISERVER_PORT}",
                                            os.path.join(self.pki, "ca.crt"), user))
        # The other nodes reach the API server at the first node's address.
        first = self.nodes[0].ip
        host = f"[{first}]" if _family(first) == 6 else first
        with open(os.path.join(self.workdir, "node.kubeconfig"), "w", encoding="utf-8") as f:
            f.write(realk8s.kubeconfig_text(f"https://{host}:{APISERVER_PORT}",
                                            os.path.join(self.pki, "ca.crt"), user))

    def node_kubeconfig(self, node):
        return self.admin_kubeconfig if node.index == 1 else os.path.join(self.workdir,
                                                                           "node.kubeconfig")

    def _containerd(self):
        for node in self.nodes:
            self._containerd_on(node)

    def _containerd_on(self, node):
        d = os.path.join(node.workdir, "containerd")
        cni = os.path.join(node.workdir, "cni")
        os.makedirs(os.path.join(cni, "net.d"), exist_ok=True)
        os.makedirs(d, exist_ok=True)
        v = realk8s.versions()
        with open(os.path.join(d, "config.toml"), "w", encoding="utf-8") as f:
            f.write(f"""\
version = 2
root = "{d}/root"
state = "{d}/state"
[grpc]
  address = "{d}/containerd.sock"
[ttrpc]
  address = "{d}/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:{v['PAUSE_VERSION']}"
  # No CAP_SYS_RESOURCE on these machines: never lower an oom_score_adj below containerd's.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{d}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN}"
    conf_dir = "{cni}/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "{d}/opt"
""")
        routes = [{"dst": "0.0.0.0/0" if _family(c) == 4 else "::/0"} for c in node.pod_cidrs]
        with open(os.path.join(cni, "net.d", "10-mk8s.conflist"), "w", encoding="utf-8") as f:
            json.dump({"cniVersion": "1.0.0", "name": "mk8s", "plugins": [
                {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False,
                 # A pod asking the Service whose endpoint it is itself (knot-dns's own probes).
                 "hairpinMode": True,
                 "ipam": {"type": "host-local", "dataDir": os.path.join(cni, "ipam"),
                          "ranges": [[{"subnet": c}] for c in node.pod_cidrs],
                          "routes": routes}},
                {"type": "portmap", "capabilities": {"portMappings": True}}]}, f, indent=1)
        name = "containerd" + node.suffix
        alive = self.start(name, ["containerd", "--config", os.path.join(d, "config.toml")],
                           node=node)
        wait(name, lambda: self.ctr("version", check=False, node=node).returncode == 0,
             alive=alive)
        archive, tag = project_image()
        for _, path in images(("pause", "glibc-dns-testing", "agnhost")).items():
            self.ctr("images", "import", path, node=node)
        # CoreDNS (the baseline), where made.
        try:
            self.ctr("images", "import", images(("coredns",))["coredns"], node=node)
        except Unavailable:
            if self.dns == "coredns":
                raise
        # The OCI archive names its image by tag only (umoci): base-name gives the repository
        # the kubelet asks for (image: mod-k8s:TAG is docker.io/library/mod-k8s:TAG).
        self.ctr("images", "import", "--base-name", "docker.io/library/mod-k8s", archive,
                 node=node)
        for path in self.extra_images:
            self.ctr("images", "import", path, node=node)
        self.image_tag = tag

    def _etcd(self):
        url = "http://127.0.0.1:2379"
        alive = self.start("etcd", [
            self.bin["etcd"], "--name", "node", "--data-dir", os.path.join(self.workdir, "etcd"),
            "--listen-client-urls", url, "--advertise-client-urls", url,
            "--listen-peer-urls", "http://127.0.0.1:2380",
            "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
            "--initial-cluster", "node=http://127.0.0.1:2380", "--unsafe-no-fsync",
            "--log-level", "warn"])
        wait("etcd", self._etcd_health, alive=alive)

    def _etcd_health(self):
        out = self.innode("python3", "-c",
                          "import urllib.request;print(urllib.request.urlopen("
                          "'http://127.0.0.1:2379/health',timeout=2).read().decode())",
                          check=False).stdout
        return '"health":"true"' in out.replace(" ", "")

    def _apiserver(self):
        p = self.pki
        alive = self.start("kube-apiserver", [
            self.bin["kube-apiserver"], "--etcd-servers", "http://127.0.0.1:2379",
            # "::" takes IPv4 too (a dual-stack socket).
            "--bind-address", "::" if 6 in self.families else "0.0.0.0",
            "--advertise-address", self.nodes[0].ip,
            "--secure-port", str(APISERVER_PORT),
            "--tls-cert-file", f"{p}/apiserver.crt", "--tls-private-key-file", f"{p}/apiserver.key",
            "--client-ca-file", f"{p}/ca.crt",
            "--kubelet-client-certificate", f"{p}/admin.crt",
            "--kubelet-client-key", f"{p}/admin.key",
            # The kubelet by its address: its name would be looked up in the machine's
            # resolv.conf (unreachable from the node's namespace, which has no way out).
            "--kubelet-preferred-address-types", "InternalIP",
            "--service-account-issuer", realk8s.ISSUER,
            "--service-account-key-file", f"{p}/sa.pub",
            "--service-account-signing-key-file", f"{p}/sa.key",
            "--api-audiences", realk8s.ISSUER,
            "--authorization-mode", "Node,RBAC", "--allow-privileged=true",
            "--service-cluster-ip-range", self.service_cidr, "--profiling=false"])
        wait("kube-apiserver", lambda: self.kubectl("get", "--raw", "/readyz", check=False,
                                                    timeout=10).returncode == 0, alive=alive)

    def _controllers(self):
        p = self.pki
        kcm = os.path.join(self.workdir, "kcm.kubeconfig")
        user = {"client-certificate": f"{p}/kcm.crt", "client-key": f"{p}/kcm.key"}
        with open(kcm, "w", encoding="utf-8") as f:
            f.write(realk8s.kubeconfig_text(f"https://127.0.0.1:{APISERVER_PORT}",
                                            f"{p}/ca.crt", user))
        alive = self.start("kube-controller-manager", [
            self.bin["kube-controller-manager"], "--kubeconfig", kcm,
            "--leader-elect=false", "--secure-port", "0",
            "--use-service-account-credentials=false",
            # kube-root-ca.crt in every namespace: the pods' projected ServiceAccount volume.
            "--root-ca-file", f"{p}/ca.crt",
            "--service-account-private-key-file", f"{p}/sa.key", "--profiling=false"])
        wait("kube-controller-manager", lambda: self.kubectl(
            "get", "-n", "default", "serviceaccount/default", "configmap/kube-root-ca.crt",
            check=False, timeout=10).returncode == 0, alive=alive)
        alive = self.start("kube-scheduler", [
            self.bin["kube-scheduler"], "--kubeconfig", self.admin_kubeconfig,
            "--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "10259"])
        wait("kube-scheduler", lambda: self.innode(
            "python3", "-c", "import ssl,urllib.request;urllib.request.urlopen("
            "'https://127.0.0.1:10259/healthz',timeout=2,context=ssl._create_unverified_context())",
            check=False).returncode == 0, alive=alive)

    def _kubelet(self):
        alive = {node.name: self.start_kubelet(node) for node in self.nodes}
        for node in self.nodes:
            wait(f"kubelet: {node.name} Ready", lambda: self.kubectl(
                "get", "node", node.name, "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
                check=False, timeout=10).stdout == "True", alive=alive[node.name])

    def start_kubelet(self, node):
        """Starts the kubelet of node (again, after kill_node(): its config is kept)."""
        d = os.path.join(node.workdir, "kubelet")
        os.makedirs(d, exist_ok=True)
        resolv = os.path.join(node.workdir, "node-resolv.conf")
        with open(resolv, "w", encoding="utf-8") as f:
            # A dead end by default: nothing answers on the node's port 53.
            f.write(f"nameserver {self.node_resolver or node.ip}\n")
        config = os.path.join(node.workdir, "kubelet.yaml")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({
                "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                # These machines have cgroup v1 only (doc/realcluster.md).
                "failCgroupV1": False, "cgroupDriver": "cgroupfs", "cgroupRoot": f"/{node.cgroup}",
                "containerRuntimeEndpoint":
                    f"unix://{node.workdir}/containerd/containerd.sock",
                # The primary family's kube-dns address (a dual-stack cluster's pods ask it;
                # a pod asks the other's with its own dnsConfig).
                "clusterDNS": [self.dns_ip], "clusterDomain": "cluster.local",
                "resolvConf": resolv,
                "podLogsDir": os.path.join(node.workdir, "pod-logs"),
                # The API server reaches it at the node's address, in the primary family.
                "address": "::" if 6 in self.families else "0.0.0.0",
                # In the nodes' private namespaces only: anyone who can reach it is the test.
                "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False},
                                   "x509": {"clientCAFile": os.path.join(self.pki, "ca.crt")}},
                "authorization": {"mode": "AlwaysAllow"},
                "readOnlyPort": 0, "healthzBindAddress": "127.0.0.1", "healthzPort": 10248,
                # The kubelet sets kernel tunables; up() saved them, down() restores them.
                "protectKernelDefaults": False,
                "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%",
                                 "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
                "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
                "failSwapOn": False, "serializeImagePulls": False,
                "staticPodPath": "", "maxPods": 110,
            }, f, indent=1)
        return self.start("kubelet" + node.suffix, [
            self.bin["kubelet"], "--config", config, "--kubeconfig", self.node_kubeconfig(node),
            "--root-dir", d, "--hostname-override", node.name, "--node-ip", ",".join(node.ips),
            "--v=1"], node=node)

    def _kube_proxy(self):
        for node in self.nodes:
            self.start_kube_proxy(node)

    def start_kube_proxy(self, node):
        config = os.path.join(node.workdir, "kube-proxy.yaml")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({
                "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
                "kind": "KubeProxyConfiguration", "mode": "iptables",
                "clientConnection": {"kubeconfig": self.node_kubeconfig(node)},
                "hostnameOverride": node.name, "clusterCIDR": self.cluster_cidr,
                "healthzBindAddress": "127.0.0.1:10256",
                "metricsBindAddress": "127.0.0.1:10249",
                # nf_conntrack_max is not writable in a network namespace: leave them all.
                "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s",
                              "tcpCloseWaitTimeout": "0s"},
            }, f, indent=1)
        alive = self.start("kube-proxy" + node.suffix,
                           [self.bin["kube-proxy"], "--config", config, "--v=1"], node=node)
        # The kubernetes Service's rule in place, in every family.
        save = {4: "iptables-save", 6: "ip6tables-save"}
        wait(f"kube-proxy on {node.name}", lambda: all("KUBE-SERVICES" in self.innode(
            save[family], "-t", "nat", check=False, node=node).stdout
            for family in self.families) and "KUBE-SVC" in self.innode(
            save[self.families[0]], "-t", "nat", check=False, node=node).stdout, alive=alive)

    def kill_node(self, node):
        """The node taken down at once, as a machine that dies: its kubelet, kube-proxy and
        containerd SIGKILLed, then containerd's shims and every process of its pods, and
        its link down. Not brought back (down() removes what it left)."""
        # Their pinned network namespaces, while containerd can still say which they are.
        self.save_state(left_netns=self.state().get("left_netns", []) + self._pod_netns(node))
        for name in ("kubelet", "kube-proxy", "containerd"):
            self.stop(name + node.suffix, timeout=0, sig=signal.SIGKILL)
        sock = os.path.join(node.workdir, "containerd", "containerd.sock").encode()
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read().split(b"\0")
            except (OSError, ValueError):
                continue
            # The shims of this node's containerd (-address names its socket).
            if cmdline and b"containerd-shim" in cmdline[0] and sock in cmdline:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        self.kill_node_processes(node)
        if self.lan:
            self.innode("ip", "link", "set", "eth0", "down", node=node)

    def kill_runtime(self, node):
        """The issue's literal "node taken down": node's kubelet and containerd SIGKILLed,
        nothing else (its kube-proxy, containerd's shims and its pods' processes stay, its
        link up). restart_runtime() brings them back."""
        for name in ("kubelet", "containerd"):
            self.stop(name + node.suffix, timeout=0, sig=signal.SIGKILL)

    def restart_runtime(self, node):
        """node's containerd (which finds its shims again) and kubelet started again."""
        name = "containerd" + node.suffix
        alive = self.start(name, ["containerd", "--config", os.path.join(
            node.workdir, "containerd", "config.toml")], node=node)
        wait(name, lambda: self.ctr("version", check=False, node=node).returncode == 0,
             alive=alive)
        self.start_kubelet(node)

    def _dns(self):
        if self.before_dns is not None:
            self.before_dns(self)
        self.kubectl("apply", "-f", "-", input=self.kube_dns_service())
        if self.dns == "coredns":
            with open(os.path.join(SRCDIR, "tests", "realcluster", "coredns.yaml"),
                      encoding="utf-8") as f:
                manifests = f.read().replace("image: IMAGE", "image: registry.k8s.io/coredns/"
                                             f"coredns:{realk8s.versions()['COREDNS_VERSION']}")
            self.kubectl("apply", "-f", "-", input=manifests)
            deployment = "coredns"
        else:
            self._mod_k8s()
            deployment = "knot-dns"
        result = self.kubectl("-n", "kube-system", "rollout", "status", f"deployment/{deployment}",
                              f"--timeout={START_TIMEOUT}s", check=False,
                              timeout=START_TIMEOUT + 30)
        if result.returncode != 0:
            pods = self.kubectl("-n", "kube-system", "describe", "pods", check=False).stdout
            raise ClusterError(f"{deployment} not rolled out:\n{result.stderr}\n{pods[-4000:]}")
        kubernetes_ip = str(ipaddress.ip_network(_split(self.service_cidr)[0])[1])
        for dns_ip in self.dns_ips:
            wait(f"kube-dns answers at {dns_ip}", lambda: kubernetes_ip in self.innode(
                "kdig", f"@{dns_ip}", "+short", "+timeout=1", "+retry=0",
                "kubernetes.default.svc.cluster.local",
                "A" if _family(kubernetes_ip) == 4 else "AAAA", check=False).stdout)

    def coredns_beside(self, name="coredns-baseline", replicas=1, node_names=None):
        """CoreDNS (tests/realcluster/coredns.yaml, `replicas` of it, on node_names only if
        given) behind a Service of its own, name, in every family of the cluster, beside the
        cluster DNS: the baseline asked in the same cluster and run. Returns the Service's
        addresses, the primary first."""
        with open(os.path.join(SRCDIR, "tests", "realcluster", "coredns.yaml"),
                  encoding="utf-8") as f:
            manifests = f.read().replace("image: IMAGE", "image: registry.k8s.io/coredns/"
                                         f"coredns:{realk8s.versions()['COREDNS_VERSION']}")
        # Not behind kube-dns: its own label, Deployment and Service.
        manifests = manifests.replace("k8s-app: kube-dns", f"k8s-app: {name}").replace(
            "name: coredns\n  namespace: kube-system\n  labels:",
            f"name: {name}\n  namespace: kube-system\n  labels:").replace(
            'values: ["kube-dns"]', f'values: ["{name}"]').replace(
            "replicas: 2", f"replicas: {replicas}")
        if node_names:
            # Placed as the test needs it (beside the cluster DNS's replicas), spread by the
            # manifest's own anti-affinity.
            manifests = manifests.replace(
                "      affinity:\n",
                "      affinity:\n        nodeAffinity: {requiredDuringSchedulingIgnoredDuring"
                "Execution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname,"
                f" operator: In, values: [{', '.join(node_names)}]}}]}}]}}}}\n", 1)
        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": name, "namespace": "kube-system"},
                   "spec": {"selector": {"k8s-app": name},
                            "ipFamilyPolicy": "PreferDualStack",
                            "ports": [{"name": "dns", "port": 53, "protocol": "UDP"},
                                      {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]}}
        self.kubectl("apply", "-f", "-", input=manifests + "\n---\n" + json.dumps(service))
        self.kubectl("-n", "kube-system", "rollout", "status", f"deployment/{name}",
                     f"--timeout={START_TIMEOUT}s", timeout=START_TIMEOUT + 30)
        ips = json.loads(self.kubectl("get", "service", "-n", "kube-system", name, "-o",
                                      "jsonpath={.spec.clusterIPs}").stdout)
        for ip in ips:
            wait(f"{name} answers at {ip}", lambda: self.kubernetes_ip() in self.innode(
                "kdig", f"@{ip}", "+short", "+timeout=1", "+retry=0",
                "kubernetes.default.svc.cluster.local",
                "A" if _family(self.kubernetes_ip()) == 4 else "AAAA", check=False).stdout)
        return ips

    def deploy_node_local(self):
        """packaging/kubernetes/node-local applied as a user applies it, with the kresd image
        of tests/realcluster/images knot-resolver (imported here), Ready on every node."""
        self.import_image(images(("knot-resolver",))["knot-resolver"])
        overlay = os.path.join(self.workdir, "node-local-overlay")
        os.makedirs(overlay, exist_ok=True)
        base = os.path.relpath(os.path.join(PACKAGING, "kubernetes", "node-local"), overlay)
        with open(os.path.join(overlay, "kustomization.yaml"), "w", encoding="utf-8") as f:
            f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                    f"resources:\n  - {base}\n"
                    "images:\n  - name: knot-resolver\n    newName: knot-resolver\n"
                    f"    newTag: {realk8s.versions()['KNOT_RESOLVER_VERSION']}\n")
        self.kubectl("apply", "-k", overlay)
        r = self.kubectl("-n", "kube-system", "rollout", "status",
                         "daemonset/knot-dns-node-cache", f"--timeout={START_TIMEOUT}s",
                         check=False, timeout=START_TIMEOUT + 30)
        if r.returncode != 0:
            raise ClusterError("the node-local tier not Ready:\n" + self.kubectl(
                "-n", "kube-system", "describe", "pods", "-l", "k8s-app=knot-dns-node-cache",
                check=False).stdout[-4000:])

    def kube_dns_service(self):
        """packaging/kubernetes/service.yaml as a user of this cluster's ranges edits it:
        its clusterIP, and in a dual-stack cluster both families' (RequireDualStack)."""
        with open(os.path.join(PACKAGING, "kubernetes", "service.yaml"), encoding="utf-8") as f:
            service = f.read()
        ips = f"clusterIP: {self.dns_ip}\n"
        if len(self.dns_ips) > 1:
            ips += (f"  clusterIPs: [{', '.join(self.dns_ips)}]\n"
                    "  ipFamilyPolicy: RequireDualStack\n")
        return service.replace(f"clusterIP: {DNS_IP}\n", ips)

    def _mod_k8s(self):
        overlay = os.path.join(self.workdir, "overlay")
        os.makedirs(overlay, exist_ok=True)
        # A user's overlay: packaging/kubernetes with the image they built and imported.
        base = os.path.relpath(os.path.join(PACKAGING, "kubernetes"), overlay)
        text = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                f"resources:\n  - {base}\n"
                "images:\n  - name: mod-k8s\n    newName: mod-k8s\n"
                f"    newTag: {self.image_tag}\n")
        if self.dns_ips != [DNS_IP]:
            # The zone's name server is the kube-dns Service: its address(es) as the user
            # sets them (zones/cluster.local.zone says so).
            with open(os.path.join(PACKAGING, "kubernetes", "zones", "cluster.local.zone"),
                      encoding="utf-8") as f:
                zone = f.read()
            records = "".join(f"ns.dns\t{'A' if _family(ip) == 4 else 'AAAA'}\t{ip}\n"
                              for ip in self.dns_ips)
            zone = zone.replace(f"ns.dns\tA\t{DNS_IP}\n", records)
            with open(os.path.join(overlay, "cluster.local.zone"), "w", encoding="utf-8") as f:
                f.write(zone)
            text += ("configMapGenerator:\n  - name: knot-dns\n    namespace: kube-system\n"
                     "    behavior: merge\n    files:\n      - cluster.local.zone\n")
        with open(os.path.join(overlay, "kustomization.yaml"), "w", encoding="utf-8") as f:
            f.write(text)
        self.kubectl("apply", "-k", overlay)

    # -- status

    def status(self):
        lines = []
        for name in ("containerd", "etcd", "kube-apiserver", "kube-controller-manager",
                     "kube-scheduler", "kubelet", "kube-proxy"):
            pid = self.pid(name)
            lines.append(f"{name}: " + (f"running (PID {pid})" if pid else "not running"))
        if self.pid("kube-apiserver"):
            lines.append(self.kubectl("get", "nodes,pods", "-A", "-o", "wide",
                                      check=False, timeout=20).stdout.rstrip())
        return "\n".join(lines)

    # -- down

    def down(self):
        """Removes what up() made, as far as it got; safe to call again."""
        state = self.state()
        if not state:
            return
        if state.get("nodes", 1) != len(self.nodes) or state.get("families", "ipv4") != \
                self.family_name:
            # `cluster down` of a shape it was not told: the one up() saved.
            self.__init__(self.name, workdir=self.workdir, dns=self.dns,
                          nodes=state.get("nodes", 1), families=state.get("families", "ipv4"))
        if not self.bin:
            try:
                self.bin = binaries()
            except (Unavailable, realk8s.Unavailable):
                pass
        # No controller makes new pods while the kubelets stop the running ones.
        for name in ("kube-scheduler", "kube-controller-manager"):
            self.stop(name)
        kubelets = [n for n in self.nodes if self.pid("kubelet" + n.suffix)]
        if kubelets and self.pid("kube-apiserver") and "kubectl" in self.bin:
            self.kubectl("delete", "pods", "--all", "--all-namespaces", "--grace-period=0",
                         "--force", "--wait=false", check=False, timeout=60)
            try:
                wait("the kubelets stopping the pods",
                     lambda: not any(self._tasks(n) for n in kubelets), timeout=60)
            except ClusterError as e:
                log(f"{e}: their containers are killed")
        for node in self.nodes:
            for name in ("kubelet", "kube-proxy"):
                self.stop(name + node.suffix)
        # Whatever else was started (a test's servers), but the control plane and containerd.
        keep = {"etcd", "kube-apiserver"} | {"containerd" + n.suffix for n in self.nodes}
        for name in state.get("argv0", {}):
            if name not in keep:
                self.stop(name)
        pod_netns = []
        for node in self.nodes:
            pod_netns += self._pod_netns(node)
            if self.pid("containerd" + node.suffix):
                for task in self._tasks(node):
                    self.ctr("tasks", "kill", "-s", "KILL", task, check=False, node=node)
                time.sleep(1)
                for task in self._tasks(node):
                    self.ctr("tasks", "delete", "-f", task, check=False, node=node)
                for container in self.ctr("containers", "ls", "-q", check=False,
                                          node=node).stdout.split():
                    self.ctr("containers", "delete", container, check=False, node=node)
        for node in self.nodes:
            self.stop("containerd" + node.suffix)
        # A node taken down (kill_node) left its pods' processes: none may outlive down().
        for node in self.nodes:
            self.kill_node_processes(node)
        for name in ("kube-apiserver", "etcd"):
            self.stop(name)
        self._unmount()
        # The network namespaces containerd pinned for pods the kubelet did not stop.
        for path in pod_netns + state.get("left_netns", []):
            subprocess.run(["umount", path], capture_output=True)
            try:
                os.unlink(path)
            except OSError:
                pass
        for netns in state.get("netns_all") or ([state["netns"]] if state.get("netns") else []):
            if os.path.exists(f"/run/netns/{netns}"):
                # Takes the bridges, the veths, the addresses and the rules with it.
                run(["ip", "netns", "del", netns], check=False)
        self._remove_cgroups(state.get("cgroups", []))
        others = [other["netns"] for other in self._others_up()]
        if others:
            # Not under another cluster's running kubelet: the last one down restores them.
            log(f"kernel tunables left as they are: {', '.join(others)} still up")
        else:
            for name, value in state.get("sysctls", {}).items():
                with open(f"/proc/sys/{name}", "w", encoding="utf-8") as f:
                    f.write(value)
        for link in glob.glob("/var/log/containers/*.log"):
            try:
                if os.readlink(link).startswith(self.workdir):
                    os.unlink(link)
            except OSError:
                pass
        if not state.get("had_container_logs", True):
            try:
                os.rmdir("/var/log/containers")     # the kubelet made it; empty now
            except OSError:
                pass
        if os.path.isdir("/run/containerd") and not any(
                files for _, _, files in os.walk("/run/containerd")):
            shutil.rmtree("/run/containerd", ignore_errors=True)
        if os.environ.get("MODK8S_KEEP_TMP"):
            os.unlink(self.state_path)
            log(f"down; logs kept in {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)
            log("down")

    def kill_node_processes(self, node):
        """SIGKILLs every process left in node's cgroups (its pods')."""
        pids = set()
        for hierarchy in cgroup_hierarchies():
            for d, _, files in os.walk(os.path.join(hierarchy, node.cgroup)):
                if "cgroup.procs" in files:
                    try:
                        with open(os.path.join(d, "cgroup.procs"), encoding="utf-8") as f:
                            pids.update(int(p) for p in f.read().split())
                    except OSError:
                        pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def _pod_netns(self, node):
        """The pinned network namespaces (/run/netns/cni-...) of node's containerd's pods."""
        if not self.pid("containerd" + node.suffix):
            return []
        paths = []
        for container in self.ctr("containers", "ls", "-q", check=False,
                                  node=node).stdout.split():
            try:
                info = json.loads(self.ctr("containers", "info", container, check=False,
                                           node=node).stdout)
            except ValueError:
                continue
            for ns in info.get("Spec", {}).get("linux", {}).get("namespaces", []):
                path = ns.get("path", "")
                if ns.get("type") == "network" and "/netns/cni-" in path and os.path.exists(path):
                    paths.append(path)
        return sorted(set(paths))

    def _tasks(self, node=None):
        node = node or self.nodes[0]
        if not self.pid("containerd" + node.suffix):
            return []
        lines = self.ctr("tasks", "ls", check=False, timeout=30, node=node).stdout.splitlines()[1:]
        return [line.split()[0] for line in lines if line.split()]

    def _unmount(self):
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            points = [line.split()[4] for line in f]
        mine = [p for p in points if p == self.workdir or p.startswith(self.workdir + "/")]
        for point in sorted(set(mine), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], capture_output=True)

    def _remove_cgroups(self, made):
        # Deepest first; a cgroup whose last process has just exited may take a moment.
        deadline = time.monotonic() + 20
        for node in self.nodes:
            for hierarchy in cgroup_hierarchies(("cgroup", "cgroup2")):
                root = os.path.join(hierarchy, node.cgroup)
                while os.path.isdir(root):
                    dirs = sorted((d for d, _, _ in os.walk(root)), key=len, reverse=True)
                    for d in dirs:
                        if d != root or root in made:
                            try:
                                os.rmdir(d)
                            except OSError:
                                pass
                    if not os.path.isdir(root) or root not in made or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                if os.path.isdir(root) and root in made:
                    log(f"cgroup {root} not removed (processes left in it?)")


# The processes every node runs (the others run on the first node only).
NODE_PROCESSES = ("containerd", "kubelet", "kube-proxy")
