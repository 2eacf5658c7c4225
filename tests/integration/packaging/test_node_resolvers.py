"""The node's resolvers as the clouds give them (issue 39, item 1): the deployment's init
container (`knot-conf.sh render`, packaging/kubernetes/deployment.yaml) turns the resolv.conf
the kubelet hands a `dnsPolicy: Default` pod into knot.conf's `forward:` line.

A pod reaches the node's resolver wherever CoreDNS's `forward . /etc/resolv.conf` does:
link-local addresses included (GCE's metadata server 169.254.169.254, the AWS VPC resolver
169.254.169.253, Azure's 168.63.129.16). Left out, each with its reason logged: loopback
(the pod's own), IPv6 link-local (it needs the node's interface), the NodeLocal DNSCache
address (a loop), anything that is not an address. systemd-resolved's stub (127.0.0.53)
is replaced by the node's real resolvers from resolved's own file. Nothing is sent
anywhere: only the rendered file is read.
"""

import os
import subprocess
import tempfile

import yaml

import shipped
import testing

tests = testing.Tests()

KUBERNETES = os.path.dirname(shipped.CONFIG)


def deployment_pod():
    with open(os.path.join(KUBERNETES, "deployment.yaml"), encoding="utf-8") as f:
        return yaml.safe_load(f)["spec"]["template"]["spec"]


def render(resolv_conf, resolved_conf=None, env=None):
    """Runs the init container's command on `resolv_conf` (and systemd-resolved's file
    `resolved_conf`, absent if None) with the environment the Deployment gives it;
    (exit status, the forward line or None, stderr)."""
    init = next(c for c in deployment_pod()["initContainers"] if c["name"] == "upstream")
    testing.expect_equal(init["command"], ["/bin/sh", "/etc/knot/knot-conf.sh", "render"],
                         "the init container's command")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "resolv.conf"), "w") as f:
            f.write(resolv_conf)
        resolved = os.path.join(tmp, "resolved.conf")
        if resolved_conf is not None:
            with open(resolved, "w") as f:
                f.write(resolved_conf)
        run_env = dict(os.environ, KNOT_CONFIG_DIR=KUBERNETES, KNOT_RUN_DIR=tmp,
                       KNOT_RESOLV_CONF=os.path.join(tmp, "resolv.conf"), KNOT_RESOLVED_CONF=resolved)
        run_env.update({e["name"]: e["value"] for e in init.get("env", [])})
        run_env.update(env or {})
        result = subprocess.run(["/bin/sh", os.path.join(KUBERNETES, "knot-conf.sh"), "render"],
                                capture_output=True, text=True, env=run_env)
        out = os.path.join(tmp, "knot.conf")
        line = None
        if result.returncode == 0 and os.path.exists(out):
            line = next((l.strip() for l in open(out) if "# @upstream" in l), None)
        return result.returncode, line, result.stderr


def expect_forward(resolv_conf, upstreams, resolved_conf=None, env=None):
    status, line, err = render(resolv_conf, resolved_conf, env)
    testing.expect(status == 0, f"exit {status}: {err}")
    testing.expect_equal(line, "forward: [ %s ]  # @upstream" % ", ".join(upstreams), "forward line")
    return err


# -- the clouds' node resolvers, as their nodes' resolv.conf has them


@tests.case
def gke_nodes_metadata_server_resolver_is_kept():
    expect_forward("search c.my-project.internal google.internal\n"
                   "nameserver 169.254.169.254\noptions ndots:1\n", ["169.254.169.254"])


@tests.case
def eks_nodes_vpc_resolver_is_kept_whether_link_local_or_the_vpc_base_plus_two():
    expect_forward("search ec2.internal\nnameserver 169.254.169.253\n", ["169.254.169.253"])
    expect_forward("search us-west-2.compute.internal\nnameserver 10.0.0.2\n", ["10.0.0.2"])
    # The VPC resolver's IPv6 address on Nitro instances.
    expect_forward("nameserver fd00:ec2::253\nnameserver 169.254.169.253\n",
                   ["fd00:ec2::253", "169.254.169.253"])


@tests.case
def aks_nodes_azure_resolver_is_kept():
    expect_forward("search abc.bx.internal.cloudapp.net\nnameserver 168.63.129.16\n",
                   ["168.63.129.16"])


@tests.case
def any_ipv4_link_local_resolver_is_kept():
    expect_forward("nameserver 169.254.53.1\nnameserver 169.254.0.2\n", ["169.254.53.1", "169.254.0.2"])


@tests.case
def systemd_resolveds_stub_is_replaced_by_the_nodes_resolvers_from_resolveds_file():
    err = expect_forward(
        "# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\n"
        "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n",
        ["192.168.1.1", "2001:db8::1"],
        resolved_conf="# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n"
                      "nameserver 192.168.1.1\nnameserver 2001:db8::1\nnameserver fe80::1%enp1s0\n"
                      "search lan\n")
    testing.expect("systemd-resolved's stub 127.0.0.53" in err, err)
    testing.expect("leaving out fe80::1%enp1s0 (IPv6 link-local" in err, err)


@tests.case
def systemd_resolveds_stub_without_resolveds_file_fails_and_says_which_file_to_give():
    status, line, err = render("nameserver 127.0.0.53\n")
    testing.expect(status != 0 and line is None, f"exit {status}")
    testing.expect("leaving out 127.0.0.53 (loopback" in err, err)
    testing.expect("no usable nameserver" in err and "--resolv-conf" in err, err)


@tests.case
def the_kubelets_resolved_file_itself_is_used_as_it_is():
    # kubeadm points the kubelet at /run/systemd/resolve/resolv.conf when resolved runs.
    expect_forward("nameserver 10.128.0.2\nnameserver 10.128.0.3\nsearch example.internal\n",
                   ["10.128.0.2", "10.128.0.3"], resolved_conf="nameserver 192.0.2.99\n")


# -- what stays out, and why


@tests.case
def loopback_ipv6_link_local_and_junk_are_left_out_each_with_its_reason():
    err = expect_forward(
        "search example.internal\nnameserver 127.0.0.1\nnameserver 10.0.0.10\n"
        "nameserver fe80::1%eth0\nnameserver 169.254.169.254\nnameserver 2001:db8::53\n"
        "nameserver ::1\nnameserver ::ffff:127.0.0.1\nnameserver 10.0.0.1/s/x/\n"
        "options edns0 trust-ad\n",
        ["10.0.0.10", "169.254.169.254", "2001:db8::53"])
    for left_out, reason in (("127.0.0.1", "loopback"), ("::1", "loopback"),
                             ("::ffff:127.0.0.1", "loopback"), ("fe80::1%eth0", "IPv6 link-local"),
                             ("10.0.0.1/s/x/", "not an IP address")):
        testing.expect(f"leaving out {left_out} ({reason}" in err, f"{left_out}: {err}")


@tests.case
def the_node_local_cache_address_is_left_out_as_a_loop():
    pod = deployment_pod()
    renderers = [c for c in pod["initContainers"] + pod["containers"]
                 if "/etc/knot/knot-conf.sh" in c.get("command", [])]
    testing.expect_equal(len(renderers), 2, "containers running knot-conf.sh")
    for c in renderers:
        env = {e["name"]: e["value"] for e in c.get("env", [])}
        testing.expect_equal(env.get("NODE_LOCAL_DNS"), "169.254.20.10", c["name"] + "'s NODE_LOCAL_DNS")
    err = expect_forward("nameserver 169.254.20.10\nnameserver 169.254.169.254\n", ["169.254.169.254"])
    testing.expect("leaving out 169.254.20.10 (a NodeLocal DNSCache address" in err, err)
    # Another listen address, as a cluster that moved its node-local cache sets it.
    expect_forward("nameserver 169.254.25.10\nnameserver 169.254.20.10\n", ["169.254.20.10"],
                   env={"NODE_LOCAL_DNS": "169.254.25.10,10.96.0.10"})


@tests.case
def only_the_node_local_cache_or_loopback_fails_with_no_usable_nameserver():
    for conf in ("nameserver 127.0.0.53\n", "nameserver 169.254.20.10\n", "search x\n"):
        status, _, err = render(conf)
        testing.expect(status != 0 and "no usable nameserver" in err, f"{conf!r}: exit {status}: {err}")


@tests.case
def the_reloader_renders_as_the_init_container_does():
    pod = deployment_pod()
    init = next(c for c in pod["initContainers"] if c["name"] == "upstream")
    reloader = next(c for c in pod["containers"] if c["name"] == "reloader")
    testing.expect_equal(reloader.get("env"), init.get("env"), "the reloader's environment")
    mounts = lambda c: sorted((m["name"], m["mountPath"]) for m in c["volumeMounts"]
                              if m["name"] in ("config", "systemd-resolve"))
    testing.expect_equal(mounts(reloader), mounts(init), "the reloader's mounts")
    volume = next(v for v in pod["volumes"] if v["name"] == "systemd-resolve")
    testing.expect_equal(volume["hostPath"], {"path": "/run/systemd/resolve", "type": "DirectoryOrCreate"},
                         "resolved's directory")
    testing.expect(all(m.get("readOnly") for c in (init, reloader) for m in c["volumeMounts"]
                       if m["name"] == "systemd-resolve"), "resolved's directory is mounted read-only")


if __name__ == "__main__":
    tests.main()
