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
                "agnhost": v["AGNHOST_VERSION"], "coredns": v["COREDNS_VERSION"]}
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


class Cluster:
    """The node; up() and down(), or a context manager doing both."""

    def __init__(self, name=NETNS, workdir=None, dns="mod-k8s", pod_cidr=POD_CIDR,
                 cluster_cidr=CLUSTER_CIDR, service_cidr=SERVICE_CIDR, dns_ip=DNS_IP,
                 before_dns=None):
        # The node's network namespace, cgroup root and work directory: clusters of other
        # names run beside it (the smoke test's beside a developer's `cluster up`).
        self.name = name
        # The address ranges: clusters joined by a link (tests/realcluster/twoclusters)
        # need their own. dns_ip (kube-dns, the kubelet's clusterDNS) is in service_cidr.
        self.pod_cidr = pod_cidr
        self.cluster_cidr = cluster_cidr
        self.service_cidr = service_cidr
        self.dns_ip = dns_ip
        # Called with the cluster before the cluster DNS is deployed (CRDs it should
        # find when it starts).
        self.before_dns = before_dns
        # The cluster DNS: "mod-k8s" (packaging/kubernetes) or "coredns" (the baseline,
        # tests/realcluster/coredns.yaml: kubeadm's add-on).
        self.dns = dns
        self.workdir = workdir or default_workdir(name)
        self.pki = os.path.join(self.workdir, "pki")
        self.admin_kubeconfig = os.path.join(self.workdir, "admin.kubeconfig")
        self.state_path = os.path.join(self.workdir, "state.json")
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

    def start(self, name, argv):
        """Starts argv in the node namespace, detached, its log and PID in the work directory."""
        with open(os.path.join(self.workdir, f"{name}.log"), "a", encoding="utf-8") as out:
            process = subprocess.Popen(innode(argv, self.name), stdin=subprocess.DEVNULL,
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

    def stop(self, name, timeout=20):
        pid = self.pid(name)
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
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
            tail = self.log_tail(name, 15)
            if tail:
                print(f"--- {name} (last lines)\n{tail}", file=sys.stderr)

    # -- talking to it

    def kubectl(self, *args, input=None, check=True, timeout=120):
        argv = innode([self.bin.get("kubectl") or binaries()["kubectl"],
                       "--kubeconfig", self.admin_kubeconfig, *args], self.name)
        return run(argv, check=check, timeout=timeout, input=input)

    def ctr(self, *args, check=True, timeout=300):
        return run(["ctr", "--address", os.path.join(self.workdir, "containerd", "containerd.sock"),
                    "-n", "k8s.io", *args], check=check, timeout=timeout)

    def innode(self, *argv, check=True, timeout=60):
        return run(innode(list(argv), self.name), check=check, timeout=timeout)

    # -- up

    def up(self):
        check_available()
        self.bin = binaries()
        if os.path.exists(f"/run/netns/{self.name}"):
            raise AlreadyUp(f"/run/netns/{self.name} exists: a cluster is up "
                               f"(tests/realcluster/cluster down)")
        started = time.monotonic()
        os.makedirs(self.workdir, exist_ok=True)
        self.save_state(started=time.time(), workdir=self.workdir,
                        had_container_logs=os.path.isdir("/var/log/containers"))
        self._save_sysctls()
        self._netns()
        self._cgroups()
        realk8s.make_pki(self.pki, str(ipaddress.ip_network(self.service_cidr)[1]))
        self._kubeconfigs()
        steps = (("containerd and images", self._containerd), ("etcd", self._etcd),
                 ("kube-apiserver", self._apiserver),
                 ("kube-controller-manager and kube-scheduler", self._controllers),
                 ("kubelet (node Ready)", self._kubelet), ("kube-proxy", self._kube_proxy),
                 (f"{self.dns} behind kube-dns", self._dns))
        for what, step in steps:
            t = time.monotonic()
            step()
            log(f"{what}: up after {time.monotonic() - t:.0f} s")
        self.up_seconds = time.monotonic() - started
        log(f"cluster up after {self.up_seconds:.0f} s")

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
        run(["ip", "netns", "add", self.name])
        self.save_state(netns=self.name)
        self.innode("ip", "link", "set", "lo", "up")
        self.innode("ip", "addr", "add", f"{NODE_IP}/32", "dev", "lo")
        # The node has no default route (nothing leaves it): Service addresses asked from
        # the node itself need a route for kube-proxy's DNAT to apply to (then rerouted).
        self.innode("ip", "route", "add", self.service_cidr, "dev", "lo", "src", NODE_IP)
        # Per namespace (nsenter --net: /proc/sys/net is the namespace's).
        self.innode("sysctl", "-qw", "net.ipv4.ip_forward=1")
        # A pod's answer from a Service's pod on the same bridge goes through the rules
        # (conntrack undoes the DNAT): on by default with br_netfilter, said here anyway.
        self.innode("sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1")

    def _cgroups(self):
        made = []
        v1 = cgroup_hierarchies()
        for hierarchy in cgroup_hierarchies(("cgroup", "cgroup2")):
            path = os.path.join(hierarchy, self.name)
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

    def _containerd(self):
        d = os.path.join(self.workdir, "containerd")
        cni = os.path.join(self.workdir, "cni")
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
        with open(os.path.join(cni, "net.d", "10-mk8s.conflist"), "w", encoding="utf-8") as f:
            json.dump({"cniVersion": "1.0.0", "name": "mk8s", "plugins": [
                {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False,
                 # A pod asking the Service whose endpoint it is itself (knot-dns's own probes).
                 "hairpinMode": True,
                 "ipam": {"type": "host-local", "dataDir": os.path.join(cni, "ipam"),
                          "ranges": [[{"subnet": self.pod_cidr}]], "routes": [{"dst": "0.0.0.0/0"}]}},
                {"type": "portmap", "capabilities": {"portMappings": True}}]}, f, indent=1)
        alive = self.start("containerd", ["containerd", "--config", os.path.join(d, "config.toml")])
        wait("containerd", lambda: self.ctr("version", check=False).returncode == 0, alive=alive)
        archive, tag = project_image()
        for name, path in images(("pause", "glibc-dns-testing", "agnhost")).items():
            self.ctr("images", "import", path)
        # CoreDNS (the baseline), where made.
        try:
            self.ctr("images", "import", images(("coredns",))["coredns"])
        except Unavailable:
            if self.dns == "coredns":
                raise
        # The OCI archive names its image by tag only (umoci): base-name gives the repository
        # the kubelet asks for (image: mod-k8s:TAG is docker.io/library/mod-k8s:TAG).
        self.ctr("images", "import", "--base-name", "docker.io/library/mod-k8s", archive)
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
            "--bind-address", "0.0.0.0", "--advertise-address", NODE_IP,
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
        d = os.path.join(self.workdir, "kubelet")
        os.makedirs(d, exist_ok=True)
        resolv = os.path.join(self.workdir, "node-resolv.conf")
        with open(resolv, "w", encoding="utf-8") as f:
            # Dead end on purpose: nothing answers on the node's port 53.
            f.write(f"nameserver {NODE_IP}\n")
        config = os.path.join(self.workdir, "kubelet.yaml")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({
                "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                # These machines have cgroup v1 only (doc/realcluster.md).
                "failCgroupV1": False, "cgroupDriver": "cgroupfs", "cgroupRoot": f"/{self.name}",
                "containerRuntimeEndpoint":
                    f"unix://{self.workdir}/containerd/containerd.sock",
                "clusterDNS": [self.dns_ip], "clusterDomain": "cluster.local",
                "resolvConf": resolv,
                "podLogsDir": os.path.join(self.workdir, "pod-logs"),
                # In the node's private namespace only: anyone who can reach it is the test.
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
        alive = self.start("kubelet", [
            self.bin["kubelet"], "--config", config, "--kubeconfig", self.admin_kubeconfig,
            "--root-dir", d, "--hostname-override", NODE, "--node-ip", NODE_IP, "--v=1"])
        wait("kubelet: node Ready", lambda: self.kubectl(
            "get", "node", NODE, "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
            check=False, timeout=10).stdout == "True", alive=alive)

    def _kube_proxy(self):
        config = os.path.join(self.workdir, "kube-proxy.yaml")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({
                "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
                "kind": "KubeProxyConfiguration", "mode": "iptables",
                "clientConnection": {"kubeconfig": self.admin_kubeconfig},
                "hostnameOverride": NODE, "clusterCIDR": self.cluster_cidr,
                "healthzBindAddress": "127.0.0.1:10256",
                "metricsBindAddress": "127.0.0.1:10249",
                # nf_conntrack_max is not writable in a network namespace: leave them all.
                "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s",
                              "tcpCloseWaitTimeout": "0s"},
            }, f, indent=1)
        alive = self.start("kube-proxy", [self.bin["kube-proxy"], "--config", config, "--v=1"])
        # The kubernetes Service's rule in place: its ClusterIP answers.
        wait("kube-proxy", lambda: "KUBE-SVC" in self.innode(
            "iptables-save", "-t", "nat", check=False).stdout, alive=alive)

    def _dns(self):
        if self.before_dns is not None:
            self.before_dns(self)
        with open(os.path.join(PACKAGING, "kubernetes", "service.yaml"), encoding="utf-8") as f:
            # As a user whose kube-dns address is another edits it.
            service = f.read().replace(f"clusterIP: {DNS_IP}\n", f"clusterIP: {self.dns_ip}\n")
        self.kubectl("apply", "-f", "-", input=service)
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
        kubernetes_ip = str(ipaddress.ip_network(self.service_cidr)[1])
        wait("kube-dns answers", lambda: kubernetes_ip in self.innode(
            "kdig", f"@{self.dns_ip}", "+short", "+timeout=1", "+retry=0",
            "kubernetes.default.svc.cluster.local", "A", check=False).stdout)

    def _mod_k8s(self):
        overlay = os.path.join(self.workdir, "overlay")
        os.makedirs(overlay, exist_ok=True)
        # A user's overlay: packaging/kubernetes with the image they built and imported.
        base = os.path.relpath(os.path.join(PACKAGING, "kubernetes"), overlay)
        with open(os.path.join(overlay, "kustomization.yaml"), "w", encoding="utf-8") as f:
            f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                    f"resources:\n  - {base}\n"
                    "images:\n  - name: mod-k8s\n    newName: mod-k8s\n"
                    f"    newTag: {self.image_tag}\n")
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
        if not self.bin:
            try:
                self.bin = binaries()
            except (Unavailable, realk8s.Unavailable):
                pass
        # No controller makes new pods while the kubelet stops the running ones.
        for name in ("kube-scheduler", "kube-controller-manager"):
            self.stop(name)
        if self.pid("kubelet") and self.pid("kube-apiserver") and "kubectl" in self.bin:
            self.kubectl("delete", "pods", "--all", "--all-namespaces", "--grace-period=0",
                         "--force", "--wait=false", check=False, timeout=60)
            try:
                wait("the kubelet stopping the pods", lambda: not self._tasks(), timeout=60)
            except ClusterError as e:
                log(f"{e}: their containers are killed")
        for name in ("kubelet", "kube-proxy"):
            self.stop(name)
        pod_netns = self._pod_netns()
        if self.pid("containerd"):
            for task in self._tasks():
                self.ctr("tasks", "kill", "-s", "KILL", task, check=False)
            time.sleep(1)
            for task in self._tasks():
                self.ctr("tasks", "delete", "-f", task, check=False)
            for container in self.ctr("containers", "ls", "-q", check=False).stdout.split():
                self.ctr("containers", "delete", container, check=False)
        for name in ("containerd", "kube-apiserver", "etcd"):
            self.stop(name)
        self._unmount()
        # The network namespaces containerd pinned for pods the kubelet did not stop.
        for path in pod_netns:
            subprocess.run(["umount", path], capture_output=True)
            try:
                os.unlink(path)
            except OSError:
                pass
        if state.get("netns") and os.path.exists(f"/run/netns/{state['netns']}"):
            # Takes the bridge, the veths' node ends, the addresses and the rules with it.
            run(["ip", "netns", "del", state["netns"]], check=False)
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

    def _pod_netns(self):
        """The pinned network namespaces (/run/netns/cni-...) of this containerd's pods."""
        if not self.pid("containerd"):
            return []
        paths = []
        for container in self.ctr("containers", "ls", "-q", check=False).stdout.split():
            try:
                info = json.loads(self.ctr("containers", "info", container, check=False).stdout)
            except ValueError:
                continue
            for ns in info.get("Spec", {}).get("linux", {}).get("namespaces", []):
                path = ns.get("path", "")
                if ns.get("type") == "network" and "/netns/cni-" in path and os.path.exists(path):
                    paths.append(path)
        return sorted(set(paths))

    def _tasks(self):
        if not self.pid("containerd"):
            return []
        lines = self.ctr("tasks", "ls", check=False, timeout=30).stdout.splitlines()[1:]
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
        for hierarchy in cgroup_hierarchies(("cgroup", "cgroup2")):
            root = os.path.join(hierarchy, self.name)
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
