"""A test file run again, alone, in a network and mount namespace of its own (as root):
its knotd can then listen on port 53 of 127.0.0.1 (or any address it adds to lo), and
glibc's and musl's resolvers are pointed at it by resolver files bind-mounted over /etc,
as a pod's are, with nothing of the machine's touched.

    netns.run("ip", "link", "set", "lo", "up")         # in the fixture
    path = netns.bind(workdir, "/etc/resolv.conf", "nameserver 127.0.0.1\\n")
    ...
    netns.main(tests, Fixture, "MODK8S_MY_FILE_NETNS")  # instead of tests.main()
"""

import os
import shutil
import subprocess
import sys

import testing


def why_not(tools=("unshare", "ip", "mount", "getent")):
    """Why this machine cannot run such a file ("" if it can)."""
    if os.geteuid() != 0:
        return "needs root (a network namespace, bind-mounted resolver files)"
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} not found"
    probe = subprocess.run(["unshare", "-n", "-m", "true"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
    if probe.returncode != 0:
        return "unshare -n -m is not permitted here"
    return ""


def enter(mark, tools=("unshare", "ip", "mount", "getent")):
    """Runs the calling file again in its own namespaces (the environment variable \\a mark
    tells it is there); returns "" there, or why it cannot."""
    if os.environ.get(mark):
        return ""
    reason = why_not(tools)
    if reason:
        return reason
    script = os.path.abspath(sys.argv[0])
    os.execvpe("unshare", ["unshare", "-n", "-m", "--propagation", "private",
                           sys.executable, script] + sys.argv[1:],
               dict(os.environ, **{mark: "1"}))
    return "exec failed"


def main(tests, make, mark, reason="", tools=("unshare", "ip", "mount", "getent")):
    """tests.main() in the file's own namespaces (enter()), with the fixture make(); or every
    test skipped, with why the file cannot run there (\\a reason first, if not empty)."""
    reason = reason or enter(mark, tools)

    def fixture():
        if reason:
            raise testing.Skip(reason)
        return make()
    tests.main(fixture=fixture)


def run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def bind(directory, target, text):
    """Writes \\a text to a file of \\a directory and bind-mounts it over \\a target;
    returns the file's path (rewritten in place, the mount follows)."""
    path = os.path.join(directory, os.path.basename(target))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    run("mount", "--bind", path, target)
    return path


def resolver_files(directory, resolv_conf):
    """A pod's resolver files over /etc: \\a resolv_conf, a localhost-only hosts file (a
    bare minbase root has none: glibc then goes without it), files then DNS; returns the
    resolv.conf's path (rewrite it in place to change the search list)."""
    resolv = bind(directory, "/etc/resolv.conf", resolv_conf)
    if os.path.exists("/etc/hosts"):
        bind(directory, "/etc/hosts", "127.0.0.1 localhost\n")
    bind(directory, "/etc/nsswitch.conf", "hosts: files dns\n")
    return resolv
