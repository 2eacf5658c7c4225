#!/usr/bin/env python3
"""The container image, run as packaging/kubernetes runs it, with no container engine.

Issue 11: "a test that runs the image's rootfs as the knot user (uid 53) with the
ConfigMap's knot.conf and zone files against the simulator: ready (the readiness probe
command passes), answers correct, non-root, only NET_BIND_SERVICE needed." The image
(packaging/build-image, an OCI layout) is unpacked with umoci; its rootfs runs chrooted
with what the Deployment gives the pod, read from packaging/kubernetes/deployment.yaml:
the ConfigMap (knot.conf and the zone files) read-only at /etc/knot, emptyDirs at
/run/knot and /var/lib/knot, the service account volume, the node's resolv.conf
(dnsPolicy: Default), a read-only root, runAsUser/runAsGroup 53, no_new_privs
(allowPrivilegeEscalation: false) and a capability bounding set of NET_BIND_SERVICE
only (drop ALL, add NET_BIND_SERVICE). The init container's script writes
/run/knot/knot.conf, then knotd starts with the image's entrypoint and the Deployment's
args, on port 53 of a private network namespace shared with the simulator and kdig.
knotd stopped and started again with the API server down answers from the snapshot it
keeps in the storage emptyDir (0777), in a directory of its own (0700, its key 0600).
Last, the reloader container's command applies a changed ConfigMap with knotc reload.

Runs when MODK8S_IMAGE names the image (OCI layout path:tag; packaging/test-image sets
it), as root, with umoci; skips otherwise, saying why.
"""

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import yaml

import dig
import rootfs
import simctl
import testing

IMAGE = os.environ.get("MODK8S_IMAGE", "")
KUBERNETES = os.path.join(rootfs.PACKAGING, "kubernetes")
DEPLOYMENT = os.path.join(KUBERNETES, "deployment.yaml")
NODE_RESOLVER = "192.0.2.1"

tests = testing.Tests()


def deployment():
    """What the test needs of deployment.yaml; the probes as a YAML parser reads them
    (quoted scalars, comments), as the API server does."""
    with open(DEPLOYMENT) as f:
        text = f.read()
    pod = yaml.safe_load(text)["spec"]["template"]["spec"]
    container = pod["containers"][0]
    init = pod["initContainers"][0]
    reloader = next(c for c in pod["containers"] if c["name"] == "reloader")

    def mounts(c):
        return [(m["name"], m["mountPath"], bool(m.get("readOnly")))
                for m in c["volumeMounts"]]
    return {
        "init_mounts": mounts(init),
        "mounts": mounts(container),
        "volumes": {v["name"]: "configMap" if "configMap" in v else "emptyDir" for v in pod["volumes"]},
        "user": int(re.search(r"(?m)^ +runAsUser: (\d+)", text).group(1)),
        "group": int(re.search(r"(?m)^ +runAsGroup: (\d+)", text).group(1)),
        "init": init["command"],
        "reloader": reloader["command"],
        "reloader_mounts": mounts(reloader),
        "args": json.loads(re.search(r"(?m)^ +args: (\[.*\])$", text).group(1)),
        "readiness": container["readinessProbe"]["httpGet"],
        "liveness": container["livenessProbe"]["httpGet"],
        "ports": {p["name"]: p["containerPort"] for p in container["ports"]},
        "pre_stop": container["lifecycle"]["preStop"]["exec"]["command"],
        "env": {e["name"]: e["value"] for e in container["env"] if "value" in e},
        "add": re.findall(r"(?m)^ +add: \[(\w+)\]", text),
    }


class Pod(rootfs.Knotd):
    """The image's rootfs run as the Deployment's pod, the simulator as its API server."""

    prefix = "mod-k8s-image-"

    def check(self):
        if not IMAGE:
            raise testing.Skip("MODK8S_IMAGE is not set (packaging/test-image sets it to the built image)")
        layout = IMAGE.rsplit(":", 1)[0]
        if not os.path.isdir(layout):
            raise testing.Skip(f"no OCI layout at {layout} (packaging/build-image makes it)")
        rootfs.need_root("umoci", "setpriv")

    def _start(self):
        self.spec = deployment()
        bundle = os.path.join(self.workdir, "bundle")
        subprocess.run(["umoci", "unpack", "--image", IMAGE, bundle], check=True,
                       stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        self.root = os.path.join(bundle, "rootfs")
        with open(os.path.join(bundle, "config.json")) as f:
            self.process = json.load(f)["process"]

        # The Deployment's volumes: the ConfigMap (knot.conf and the zone files), emptyDirs
        # (writable by anyone, as the kubelet makes them), each a directory here.
        self.volumes = {}
        for name, kind in self.spec["volumes"].items():
            self.volumes[name] = path = os.path.join(self.workdir, "volumes", name)
            os.makedirs(path)
            if kind == "configMap":
                shutil.copy(os.path.join(KUBERNETES, "knot.conf"), path)
                shutil.copy(os.path.join(KUBERNETES, "knot-conf.sh"), path)
                for zone in os.listdir(os.path.join(KUBERNETES, "zones")):
                    shutil.copy(os.path.join(KUBERNETES, "zones", zone), path)
            else:
                os.chmod(path, 0o777)
        # The node's resolv.conf (dnsPolicy: Default).
        resolv = os.path.join(self.workdir, "resolv.conf")
        with open(resolv, "w") as f:
            f.write(f"nameserver {NODE_RESOLVER}\n")

        rootfs.private_network()
        self.sim = simctl.Simulator(os.path.join(self.workdir, "apisim"), manifests=[simctl.SAMPLE])
        self.sim.start()
        account = rootfs.service_account(self.sim, os.path.join(self.workdir, "serviceaccount"))
        # What every container gets besides its volumeMounts.
        self.pod_binds = [(account, rootfs.SERVICEACCOUNT, "ro"), (resolv, "/etc/resolv.conf", "ro")]
        self.init_binds = self.pod_binds + self.mounts(self.spec["init_mounts"])
        self.binds = self.pod_binds + self.mounts(self.spec["mounts"])
        self.env = dict(entry.split("=", 1) for entry in self.process["env"])
        self.env.update(rootfs.in_cluster_env(self.sim), NODE_NAME="node-a")

        self.init = rootfs.run(self.root, self.as_container(self.spec["init"], caps=()),
                               binds=self.init_binds, env=self.env, read_only=True)
        self.log_path = os.path.join(self.workdir, "knotd.log")
        entrypoint = self.process["args"][:1]
        self.proc = rootfs.start(self.root, self.as_container(entrypoint + self.spec["args"]),
                                 self.log_path, binds=self.binds, env=self.env, read_only=True)
        rootfs.wait_answer(self.address, self.port, "kubernetes.default.svc.cluster.local.",
                           proc=self.proc, log_path=self.log_path)

    def mounts(self, volume_mounts):
        """A container's volumeMounts as binds of the volumes' directories."""
        return [(self.volumes[name], path, "ro") if read_only else (self.volumes[name], path)
                for name, path, read_only in volume_mounts]

    def as_container(self, args, caps=("net_bind_service",)):
        """args under the pod's security context: its uid/gid, no_new_privs, and a bounding
        set of the added capabilities only (capabilities: drop ALL, add ...)."""
        bounding = "-all" + "".join(f",+{cap}" for cap in caps)
        return ["setpriv", f"--reuid={self.spec['user']}", f"--regid={self.spec['group']}",
                "--clear-groups", f"--bounding-set={bounding}", "--inh-caps=-all",
                "--no-new-privs", *args]

    def in_container(self, args, caps=("net_bind_service",), timeout=60):
        """Runs args in the container (an exec probe, the init container's command)."""
        return rootfs.run(self.root, self.as_container(args, caps), binds=self.binds, env=self.env,
                          timeout=timeout, read_only=True)



@tests.case
def the_image_runs_knotd_as_uid_53(pod):
    testing.expect_equal(pod.process["user"], {"uid": 53, "gid": 53}, "image user")
    testing.expect_equal(pod.process["args"][0], "/usr/sbin/knotd", "image entrypoint")
    testing.expect_equal((pod.spec["user"], pod.spec["group"]), (53, 53), "pod runAsUser, runAsGroup")


@tests.case
def the_image_holds_the_package_and_debians_knot(pod):
    result = rootfs.run(pod.root, ["dpkg-query", "-W", "-f=${Package} ${Version}\n",
                                   "knot-module-k8s", "knot", "knot-dnsutils"])
    testing.expect(result.returncode == 0, f"dpkg-query failed:\n{result.stdout}")
    installed = dict(line.split() for line in result.stdout.splitlines())
    # The image's Debian release and that release's Knot (trixie: 3.4, bookworm: 3.2).
    release = image_release(pod)
    knot = {r: k for k, r in rootfs.RELEASES.items()}.get(release)
    testing.expect(knot is not None, f"the image is Debian {release}, not a supported release")
    testing.expect(installed["knot"].startswith(f"{knot}."), f"knot is {installed['knot']} on {release}")
    listed = rootfs.run(pod.root, ["dpkg", "-L", "knot-module-k8s"]).stdout.split()
    testing.expect(any(p.endswith(f"/knot/modules-{knot}/k8s.so") for p in listed),
                   f"k8s.so is not in knotd's module directory: {listed}")


def image_release(pod):
    """The VERSION_CODENAME of the image's /etc/os-release."""
    with open(os.path.join(pod.root, "usr/lib/os-release")) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line).get("VERSION_CODENAME")


# The Debian release as the image tag says it (packaging/build-image: VERSION-deb13,
# VERSION-deb12), so both images can sit in one registry and the manifests pick one.
TAG_SUFFIX = {"trixie": "deb13", "bookworm": "deb12"}


def package_upstream_version(pod):
    """knot-module-k8s's upstream version in the image (0.1.0 of 0.1.0-1~deb13)."""
    result = rootfs.run(pod.root, ["dpkg-query", "-W", "-f=${Version}", "knot-module-k8s"])
    testing.expect(result.returncode == 0, f"dpkg-query failed:\n{result.stdout}")
    return result.stdout.strip().rsplit("-", 1)[0]


@tests.case
def the_image_tag_names_its_version_and_debian_release(pod):
    tag = IMAGE.rsplit(":", 1)[1]
    release = image_release(pod)
    testing.expect_equal(tag, f"{package_upstream_version(pod)}-{TAG_SUFFIX.get(release)}",
                         f"the tag of the Debian {release} image")


@tests.case
def the_deployment_defaults_to_the_debian_13_image(pod):
    with open(os.path.join(KUBERNETES, "kustomization.yaml")) as f:
        images = {i["name"]: i for i in yaml.safe_load(f)["images"]}
    testing.expect_equal(images["mod-k8s"]["newTag"], f"{package_upstream_version(pod)}-deb13",
                         "kustomization.yaml's mod-k8s tag")


@tests.case
def the_debian_13_image_has_knot_exporter(pod):
    # Knot 3.4's Prometheus exporter, which Knot 3.2 (Debian 12) does not have.
    if image_release(pod) != "trixie":
        raise testing.Skip("knot-exporter is packaged from Debian 13 (Knot 3.4) on")
    result = rootfs.run(pod.root, ["knot-exporter", "--help"])
    testing.expect(result.returncode == 0 and "usage" in result.stdout.lower(),
                   f"knot-exporter --help failed:\n{result.stdout}")


@tests.case
def the_init_container_writes_the_node_resolver_into_knot_conf(pod):
    testing.expect(pod.init.returncode == 0, f"the init container failed:\n{pod.init.stdout}")
    with open(os.path.join(pod.volumes["run"], "knot.conf")) as f:
        conf = f.read()
    testing.expect(f"forward: [ {NODE_RESOLVER} ]  # @upstream" in conf,
                   "no node resolver in /run/knot/knot.conf:\n" + pod.init.stdout)


def http_probe(pod, probe):
    """The kubelet's httpGet probe: the status of GET path on the pod's named port."""
    port = pod.spec["ports"][probe["port"]]
    try:
        with urllib.request.urlopen(f"http://{pod.address}:{port}{probe['path']}", timeout=3) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return str(e)


@tests.case
def the_readiness_probe_passes(pod):
    def ready():
        status = http_probe(pod, pod.spec["readiness"])
        testing.expect(status == 200, f"readiness probe: {status}")
    testing.eventually(ready, timeout=30, interval=1)


@tests.case
def the_liveness_probe_passes(pod):
    status = http_probe(pod, pod.spec["liveness"])
    testing.expect(status == 200, f"liveness probe: {status}")


@tests.case
def the_prestop_command_turns_the_readiness_probe_to_503(pod):
    # LAMEDUCK_SECONDS=0 here: the period itself is test_lameduck.py's.
    result = pod.in_container(["/usr/bin/env", "LAMEDUCK_SECONDS=0"] + pod.spec["pre_stop"])
    try:
        testing.expect(result.returncode == 0, f"preStop exited {result.returncode}:\n{result.stdout}")
        testing.expect_equal(http_probe(pod, pod.spec["readiness"]), 503, "readiness in lameduck")
        testing.expect_equal(http_probe(pod, pod.spec["liveness"]), 200, "liveness in lameduck")
    finally:
        lameduck = os.path.join(pod.volumes["run"], "lameduck")
        if os.path.exists(lameduck):
            os.unlink(lameduck)


@tests.case
def knotd_is_uid_53_with_net_bind_service_only(pod):
    # in-root, unshare, chroot and setpriv each exec the next: the process started is knotd.
    status = rootfs.proc_status(pod.proc.pid)
    net_bind_service = 1 << rootfs.CAP_NET_BIND_SERVICE
    testing.expect_equal(status["Name"], "knotd", "process")
    testing.expect_equal(status["Uid"].split(), ["53"] * 4, "uids")
    testing.expect_equal(status["Gid"].split(), ["53"] * 4, "gids")
    testing.expect_equal(status["NoNewPrivs"], "1", "no_new_privs")
    testing.expect_equal(int(status["CapBnd"], 16), net_bind_service, "bounding set")
    testing.expect_equal(int(status["CapEff"], 16), net_bind_service, "effective set")
    testing.expect_equal(pod.spec["add"], ["NET_BIND_SERVICE"], "capabilities the Deployment adds")


@tests.case
def knotd_cannot_start_without_net_bind_service(pod):
    # Its file capability asks for NET_BIND_SERVICE: with drop ALL alone, exec is refused.
    result = pod.in_container(["/usr/sbin/knotd", "-c", "/run/knot/knot.conf"], caps=(), timeout=30)
    testing.expect(result.returncode != 0 and "Operation not permitted" in result.stdout,
                   f"knotd started without NET_BIND_SERVICE (status {result.returncode}):\n{result.stdout}")


@tests.case
def the_root_filesystem_is_read_only(pod):
    result = pod.in_container(["/bin/sh", "-c", "touch /var/tmp/x"])
    testing.expect(result.returncode != 0 and "Read-only file system" in result.stdout,
                   f"the root was writable:\n{result.stdout}")


tests.table("""
# The sample cluster, answered on port 53 by the image's knotd with the ConfigMap's config.
kubernetes.default.svc.cluster.local.        A    NOERROR aa 10.96.0.1
kube-dns.kube-system.svc.cluster.local.      A    NOERROR aa 10.96.0.10
web.shop.svc.cluster.local.                  AAAA NOERROR aa fd00:10:96::1234
_pg._tcp.postgres.db.svc.cluster.local.      SRV  NOERROR aa 0 50 5432 postgres-0.postgres.db.svc.cluster.local. | 0 50 5432 postgres-1.postgres.db.svc.cluster.local.
postgres-0.postgres.db.svc.cluster.local.    A    NOERROR aa 10.244.0.20
external.shop.svc.cluster.local.             CNAME NOERROR aa www.example.com.
34.12.96.10.in-addr.arpa.                    PTR  NOERROR aa web.shop.svc.cluster.local.
nope.default.svc.cluster.local.              A    NXDOMAIN aa
kubernetes.default.svc.cluster.local.        A    NOERROR aa tcp 10.96.0.1
clusterset.local.                            SOA  NOERROR aa ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5
""")



@tests.case
def knotd_restarted_in_the_pod_answers_from_its_snapshot_with_the_api_down(pod):
    # The storage emptyDir is 0777, as the kubelet makes it: knotd (uid 53) keeps its
    # snapshots in a directory of its own there, 0700, keyed with a 0600 key (issue 40, item 6).
    storage = pod.volumes["storage"]
    testing.eventually(lambda: testing.expect(
        "wrote snapshot" in pod.log_text(), "no snapshot written yet"), timeout=30, interval=0.5)
    modes = {name: (st.st_uid, st.st_mode & 0o7777) for name, st in
             (("storage", os.stat(storage)), ("mod-k8s", os.lstat(os.path.join(storage, "mod-k8s"))),
              ("snapshot.key", os.lstat(os.path.join(storage, "mod-k8s", "snapshot.key"))))}
    testing.expect_equal(modes, {"storage": (0, 0o777), "mod-k8s": (53, 0o700),
                                 "snapshot.key": (53, 0o600)}, "owners and modes")
    rootfs.stop(pod.proc)
    pod.sim.outage(3600)
    try:
        mark = len(pod.log_text())
        entrypoint = pod.process["args"][:1]
        pod.proc = rootfs.start(pod.root, pod.as_container(entrypoint + pod.spec["args"]),
                                pod.log_path, binds=pod.binds, env=pod.env, read_only=True)
        rootfs.wait_answer(pod.address, pod.port, "kubernetes.default.svc.cluster.local.",
                           proc=pod.proc, log_path=pod.log_path)
        log = pod.log_text()[mark:]
        testing.expect("answering from the snapshot" in log and "no snapshot" not in log,
                       f"the restarted knotd's log:\n{log}")
    finally:
        pod.sim.outage(0)


@tests.case
def the_reloader_applies_a_changed_configmap_with_knotc_reload(pod):
    # Last: it changes the ConfigMap. The kubelet swaps a ConfigMap volume's files at once.
    path = os.path.join(pod.volumes["config"], "knot.conf")
    with open(path) as f:
        conf = f.read()
    testing.expect("    ttl: 5\n" in conf, "the shipped knot.conf sets ttl: 5")
    log_path = os.path.join(pod.workdir, "reloader.log")
    env = dict(pod.env, RELOAD_CHECK_SECONDS="1")
    reloader = rootfs.start(pod.root, pod.as_container(pod.spec["reloader"], caps=()), log_path,
                            binds=pod.pod_binds + pod.mounts(pod.spec["reloader_mounts"]),
                            env=env, read_only=True)
    try:
        time.sleep(2)
        with open(path + ".new", "w") as f:
            f.write(conf.replace("    ttl: 5\n", "    ttl: 7\n"))
        os.rename(path + ".new", path)

        def reloaded():
            answer = dig.query(pod, "kubernetes.default.svc.cluster.local.", "A")
            testing.expect_equal({rr.ttl for rr in answer.answer}, {7}, "the TTL after the change")
        try:
            testing.eventually(reloaded, timeout=30, interval=0.5)
        finally:
            rootfs.stop(reloader)
    finally:
        with open(log_path) as f:
            log = f.read()
        print("# reloader: " + log.replace("\n", "\n# reloader: "))
    testing.expect("reloader: configuration changed, knotd reloaded" in log, f"the reloader's log:\n{log}")


tests.main(fixture=Pod)
