#!/usr/bin/env python3
"""The Debian package on a bare Debian 13 or 12, as a Knot user installs it.

Issue 11: "A test installs the .deb into a bare bookworm root, starts the stock knotd
with knot.conf.example adapted to the simulator, and gets answers with kdig." The root
is `mmdebstrap --variant=minbase --include=git,ca-certificates RELEASE`, RELEASE the one
whose Knot the package depends on (issue 27: trixie for 3.4, bookworm for 3.2); in it,
`apt install ./knot-module-k8s_*.deb` (the README's install) pulls Debian's knot. knotd
runs as the knot user with NET_BIND_SERVICE, as Debian's knot.service starts it, with
the packaged example as /etc/knot/knot.conf and the packaged zone files; the only
adaptation is what a pod has and a host does not: the API server's address in the
environment and a service account directory (the simulator's). The simulator and kdig
run on the host, in the same private network namespace. Restarted with the API server
down, knotd answers from the snapshot it keeps in Debian's /var/lib/knot (root:knot
0770), in a directory of its own (0700, its key 0600).

Runs when MODK8S_DEB names the .deb (packaging/test-deb sets it), as root, with
mmdebstrap and a reachable Debian mirror; skips otherwise, saying why.
"""

import os

import rootfs
import simctl
import testing

DEB = os.environ.get("MODK8S_DEB", "")
# The Knot release the package is built for (knot-module-k8s's Depends), and its next.
KNOT = {release: knot for knot, release in rootfs.RELEASES.items()}
EXAMPLES = "/usr/share/doc/knot-module-k8s/examples"

tests = testing.Tests()


class Installed(rootfs.Knotd):
    """A bare root of the package's release with it installed, the simulator and the stock knotd."""

    prefix = "mod-k8s-deb-"

    def check(self):
        if not DEB:
            raise testing.Skip("MODK8S_DEB is not set (packaging/test-deb builds the root with the .deb)")
        if not os.path.isfile(DEB):
            raise testing.Skip(f"MODK8S_DEB={DEB} is not a file (packaging/build-deb makes it)")
        rootfs.need_root("mmdebstrap")

    def _start(self):
        self.root = os.path.join(self.workdir, "root")
        name = os.path.basename(DEB)
        self.release = rootfs.release_of_deb(DEB)
        self.knot = KNOT[self.release]
        rootfs.make_root(self.root, [
            "--include=git,ca-certificates",
            f"--customize-hook=copy-in '{os.path.abspath(DEB)}' /root/",
            # The README's install, as a user types it, in the directory holding the .deb.
            f"--customize-hook=chroot \"$1\" sh -c 'cd /root && DEBIAN_FRONTEND=noninteractive "
            f"apt install -y ./{name} && rm {name}'",
        ], self.release)
        conf = os.path.join(self.root, "etc", "knot")
        with open(os.path.join(self.root, EXAMPLES.lstrip("/"), "knot.conf.example")) as f:
            example = f.read()
        with open(os.path.join(conf, "knot.conf"), "w") as f:
            f.write(example)
        zones = os.path.join(self.root, EXAMPLES.lstrip("/"), "zones")
        for zone in sorted(os.listdir(zones)):
            with open(os.path.join(zones, zone)) as src, open(os.path.join(conf, zone), "w") as dst:
                dst.write(src.read())
        # knot.service's RuntimeDirectory=knot.
        os.makedirs(os.path.join(self.root, "run", "knot"), exist_ok=True)
        self.knot_uid, knot_gid = rootfs.user_ids(self.root, "knot")
        os.chown(os.path.join(self.root, "run", "knot"), self.knot_uid, knot_gid)

        rootfs.private_network()
        self.sim = simctl.Simulator(os.path.join(self.workdir, "apisim"), manifests=[simctl.SAMPLE])
        self.sim.start()
        rootfs.service_account(self.sim, os.path.join(self.root, rootfs.SERVICEACCOUNT.lstrip("/")))
        self.log_path = os.path.join(self.workdir, "knotd.log")
        self.start_knotd()

    def start_knotd(self):
        """knotd as knot.service starts it: User=knot, AmbientCapabilities=CAP_NET_BIND_SERVICE."""
        self.proc = rootfs.start(self.root, [
            "setpriv", "--reuid=knot", "--regid=knot", "--init-groups",
            "--inh-caps=+net_bind_service", "--ambient-caps=+net_bind_service",
            "knotd", "-c", "/etc/knot/knot.conf"], self.log_path, env=rootfs.in_cluster_env(self.sim))
        rootfs.wait_answer(self.address, self.port, "kubernetes.default.svc.cluster.local.",
                           proc=self.proc, log_path=self.log_path)

    def run(self, *args):
        return rootfs.run(self.root, list(args))


@tests.case
def k8s_so_is_in_the_module_directory_of_debians_knotd(root):
    listed = root.run("dpkg", "-L", "knot-module-k8s").stdout.split()
    testing.expect(f"/usr/lib/x86_64-linux-gnu/knot/modules-{root.knot}/k8s.so" in listed
                   or any(p.endswith(f"/knot/modules-{root.knot}/k8s.so") for p in listed),
                   f"k8s.so is not in knotd's module directory: {listed}")


@tests.case
def the_package_ships_the_public_header(root):
    listed = root.run("dpkg", "-L", "knot-module-k8s").stdout.split()
    testing.expect("/usr/include/mod-k8s/mod-k8s.h" in listed,
                   f"mod-k8s.h is not in the package: {listed}")


@tests.case
def the_package_depends_on_the_knot_release_it_was_built_for(root):
    major, minor = root.knot.split(".")
    depends = root.run("dpkg-query", "-W", "-f=${Depends}", "knot-module-k8s").stdout
    testing.expect(f"knot (>= {root.knot})" in depends and f"knot (<< {major}.{int(minor) + 1}~)" in depends,
                   f"Depends does not pin knot {root.knot}: {depends}")
    version = root.run("dpkg-query", "-W", "-f=${Version}", "knot").stdout
    testing.expect(version.startswith(root.knot + "."), f"apt installed knot {version}, not {root.knot}")
    codename = root.run("sh", "-c", ". /etc/os-release && echo $VERSION_CODENAME").stdout.strip()
    testing.expect_equal(codename, root.release, "the root's Debian release")


@tests.case
def the_doc_page_example_copyright_and_changelog_are_installed(root):
    doc = os.path.join(root.root, "usr/share/doc/knot-module-k8s")
    for name in ("mod-k8s.rst.gz", "examples/knot.conf.example", "copyright", "changelog.Debian.gz"):
        testing.expect(os.path.exists(os.path.join(doc, name)), f"{name} is not in {doc}")


@tests.case
def knotc_conf_check_accepts_the_example_with_no_module_section(root):
    result = root.run("knotc", "-c", "/etc/knot/knot.conf", "conf-check")
    testing.expect(result.returncode == 0 and "Configuration is valid" in result.stdout,
                   f"knotc conf-check failed:\n{result.stdout}")


@tests.case
def knotd_runs_as_the_knot_user_with_only_net_bind_service(root):
    # in-root, unshare, chroot and setpriv each exec the next: the process started is knotd.
    status = rootfs.proc_status(root.proc.pid)
    testing.expect_equal(status["Name"], "knotd", "process")
    testing.expect_equal(int(status["Uid"].split()[0]), root.knot_uid, "uid")
    testing.expect_equal(int(status["CapEff"], 16), 1 << rootfs.CAP_NET_BIND_SERVICE, "effective capabilities")


tests.table("""
# The sample cluster, answered by the packaged module on port 53.
kubernetes.default.svc.cluster.local.        A    NOERROR aa 10.96.0.1
kube-dns.kube-system.svc.cluster.local.      A    NOERROR aa 10.96.0.10
web.shop.svc.cluster.local.                  AAAA NOERROR aa fd00:10:96::1234
_pg._tcp.postgres.db.svc.cluster.local.      SRV  NOERROR aa 0 50 5432 postgres-0.postgres.db.svc.cluster.local. | 0 50 5432 postgres-1.postgres.db.svc.cluster.local.
external.shop.svc.cluster.local.             CNAME NOERROR aa www.example.com.
34.12.96.10.in-addr.arpa.                    PTR  NOERROR aa web.shop.svc.cluster.local.
nope.default.svc.cluster.local.              A    NXDOMAIN aa
kubernetes.default.svc.cluster.local.        A    NOERROR aa tcp 10.96.0.1
cluster.local.                               SOA  NOERROR aa ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5
""")


@tests.case
def knotd_restarted_answers_from_its_snapshot_kept_in_debians_storage(root):
    # Debian's /var/lib/knot is root:knot 0770 (knot's postinst): shared with the knot group,
    # so knotd keeps its snapshots in a directory of its own there, 0700, keyed with a 0600
    # key (issue 40, item 6).
    storage = os.path.join(root.root, "var", "lib", "knot")
    testing.eventually(lambda: testing.expect(
        "wrote snapshot" in root.log_text(), "no snapshot written yet"), timeout=30, interval=0.5)
    st = os.stat(storage)
    print(f"# /var/lib/knot: uid {st.st_uid}, mode {st.st_mode & 0o7777:o}")
    modes = {name: (st.st_uid, st.st_mode & 0o7777) for name, st in
             (("mod-k8s", os.lstat(os.path.join(storage, "mod-k8s"))),
              ("snapshot.key", os.lstat(os.path.join(storage, "mod-k8s", "snapshot.key"))))}
    testing.expect_equal(modes, {"mod-k8s": (root.knot_uid, 0o700),
                                 "snapshot.key": (root.knot_uid, 0o600)}, "owners and modes")
    rootfs.stop(root.proc)
    root.sim.outage(3600)
    try:
        mark = len(root.log_text())
        root.start_knotd()
        log = root.log_text()[mark:]
        testing.expect("answering from the snapshot" in log and "no snapshot" not in log,
                       f"the restarted knotd's log:\n{log}")
    finally:
        root.sim.outage(0)


tests.main(fixture=Installed)
