"""The module's public interface (include/mod-k8s/mod-k8s.h) as Python values.

Tests that speak to the module the way another program would (the source-cluster
EDNS option, the federation API's path, the snapshot's magic, the series names) take
the values from the installed header's source, not from copies of their own.
"""

import functools
import os
import re

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(SRCDIR, "include", "mod-k8s", "mod-k8s.h")


@functools.lru_cache(maxsize=None)
def constants():
    """Every '#define MOD_K8S_NAME value' of the header: name -> int or str."""
    found = {}
    with open(HEADER, encoding="utf-8") as f:
        for m in re.finditer(r'^#define\s+(MOD_K8S_\w+)\s+(\d+|"[^"]*")\s*$', f.read(), re.M):
            value = m.group(2)
            found[m.group(1)] = value.strip('"') if value.startswith('"') else int(value)
    return found


def get(name):
    """One constant of the header, by its name (KeyError for a name it lacks)."""
    return constants()[name]
