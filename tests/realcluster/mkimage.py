#!/usr/bin/env python3
"""Layer tarballs into an image archive that `ctr -n k8s.io images import` takes
(docker-archive layout: manifest.json with RepoTags, the config JSON, each layer an
uncompressed tar), with no registry and no container engine.

    mkimage.py OUT.tar NAME:TAG LAYER.tar... [--entrypoint a,b] [--cmd a,b] [--workdir DIR]

A layer is a root filesystem tarball (mmdebstrap ... out.tar, or tar -C dir -cf) or
files added over the layers before it. tests/realcluster/images uses it.
"""
import argparse
import hashlib
import io
import json
import os
import tarfile
import time


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("name")
    ap.add_argument("layers", nargs="+")
    ap.add_argument("--entrypoint", default="")
    ap.add_argument("--cmd", default="")
    ap.add_argument("--workdir", default="/")
    a = ap.parse_args()

    # Uncompressed layers: each one's diff_id is its digest.
    digests = [sha256_file(layer) for layer in a.layers]
    cfg = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "Entrypoint": a.entrypoint.split(",") if a.entrypoint else None,
            "Cmd": a.cmd.split(",") if a.cmd else None,
            "WorkingDir": a.workdir,
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + d for d in digests]},
        "history": [{"created_by": "mkimage.py " + os.path.basename(p)} for p in a.layers],
    }
    cfg_bytes = json.dumps(cfg, sort_keys=True).encode()
    cfg_digest = hashlib.sha256(cfg_bytes).hexdigest()
    manifest = [{"Config": cfg_digest + ".json", "RepoTags": [a.name],
                 "Layers": [d + "/layer.tar" for d in digests]}]

    def add_bytes(t, name, data):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mtime = int(time.time())
        t.addfile(info, io.BytesIO(data))

    tmp = a.out + ".tmp"
    with tarfile.open(tmp, "w") as t:
        add_bytes(t, cfg_digest + ".json", cfg_bytes)
        for layer, digest in zip(a.layers, digests):
            t.add(layer, arcname=digest + "/layer.tar")
        add_bytes(t, "manifest.json", json.dumps(manifest).encode())
    os.rename(tmp, a.out)
    print(f"{a.out}: {a.name} ({len(digests)} layers, config sha256:{cfg_digest[:12]})")


if __name__ == "__main__":
    main()
