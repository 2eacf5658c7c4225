#!/usr/bin/env python3
"""scripts/demo's --stop and --uninstall (issue 25 item 7): stopping the demo says that
k8s.so stays installed in knotd's module directory, where every knotd of the machine loads
it, and --uninstall removes it. Run on a copy of the script in a scratch tree, with a
knotd.pc whose module directory is a scratch directory: no demo of the developer's is
stopped and the machine's module directory is not touched.
"""

import os
import shutil
import subprocess
import tempfile

import testing
from cluster import SRCDIR

tests = testing.Tests()


def scratch():
    """(tree, module directory, environment) of a scratch copy of the demo."""
    top = tempfile.mkdtemp(prefix="mod-k8s-demo-")
    os.makedirs(os.path.join(top, "scripts"))
    shutil.copy(os.path.join(SRCDIR, "scripts", "demo"), os.path.join(top, "scripts"))
    shutil.copytree(os.path.join(SRCDIR, "tests", "lib"), os.path.join(top, "tests", "lib"))
    modules = os.path.join(top, "modules")
    os.makedirs(modules)
    pc = os.path.join(top, "pkgconfig")
    os.makedirs(pc)
    with open(os.path.join(pc, "knotd.pc"), "w", encoding="utf-8") as f:
        f.write(f"module_instdir={modules}\nName: knotd\nDescription: x\nVersion: 3.2\n")
    return top, modules, dict(os.environ, PKG_CONFIG_PATH=pc, PKG_CONFIG_LIBDIR=pc)


def demo(top, env, *args):
    return subprocess.run([os.path.join(top, "scripts", "demo"), *args], env=env, text=True,
                          capture_output=True, timeout=60)


@tests.case
def stop_says_that_k8s_so_stays_installed():
    top, modules, env = scratch()
    try:
        module = os.path.join(modules, "k8s.so")
        open(module, "w").close()
        result = demo(top, env, "--stop")
        testing.expect_equal(result.returncode, 0, f"--stop ({result.stderr})")
        testing.expect(f"{module} stays installed" in result.stdout and "--uninstall" in result.stdout,
                       f"--stop says nothing of k8s.so: {result.stdout!r}")
        testing.expect(os.path.exists(module), "--stop left k8s.so")
        result = demo(top, env, "--uninstall")
        testing.expect_equal(result.returncode, 0, f"--uninstall ({result.stderr})")
        testing.expect(not os.path.exists(module), f"--uninstall removed k8s.so: {result.stdout!r}")
        result = demo(top, env, "--stop")
        testing.expect_equal(result.stdout, "demo: stopped\n", "--stop with nothing installed")
    finally:
        shutil.rmtree(top, ignore_errors=True)


tests.main()
