#!/usr/bin/env python3
"""Warm restart (issue 14, item 1): knotd restarted while the API server is down answers from
the snapshot the module wrote before, flagged stale, and the first LIST replaces it.

The module writes its objects to `<storage>/mod-k8s/<server hash>.snapshot` after its first
synchronization and then at most every 5 s while they change, and once more when it stops.
On start it reads the snapshot before any request to the API: every name answers at once as
before the restart (`snapshot[stale]` is 1, a log line says so). When every resource has been
listed again the live state replaces the snapshot's without a window of SERVFAIL or NXDOMAIN
for the names in both, a name deleted meanwhile goes away, and `snapshot[stale]` is 0.

A snapshot that is truncated, corrupt or keyed with another key (its HMAC-SHA-256 does not
verify with the directory's snapshot.key), of another format version (version 1 held JSON,
version 2 was unkeyed), of other watch settings or older than `snapshot-max-age` is ignored
with a log line saying why and counted in `snapshot[refused]`: the zone answers SERVFAIL with
EDE 14 (Not Ready) until the API is listed, as without a snapshot.

The snapshots' directory (`<storage>/mod-k8s`, issue 40 item 6) is made with mode 0700 and
its key with 0600; a directory others may write in (mode 777, 770, 1777), of another user,
or a symbolic link, and a key others may read or of another user, are refused with a log
line: nothing is read or written there, and the zone is ready once the API is listed. A
directory opened to others while knotd runs is not written to (`snapshot[write-errors]`).
"""

import glob
import hashlib
import hmac
import os
import shutil
import struct
import tempfile
import time

import dig
import public
import testing
from cluster import Cluster
from faults import (Watch, begin_outage, counter, end_outage, expect_addresses, log_lines,
                    service, wait_counter, wait_log)

tests = testing.Tests()

ZONES = ("cluster.local.", "in-addr.arpa.")
NAMES = [
    ("kubernetes.default.svc.cluster.local.", "A"),
    ("web.shop.svc.cluster.local.", "A"),
    ("web.shop.svc.cluster.local.", "AAAA"),
    ("postgres-0.postgres.db.svc.cluster.local.", "A"),
    ("_http._tcp.web.shop.svc.cluster.local.", "SRV"),
    ("1.0.96.10.in-addr.arpa.", "PTR"),
]
PROBE = "kubernetes.default.svc.cluster.local."
VERSION = public.get("MOD_K8S_SNAP_VERSION")
MAC_LEN = 32  # HMAC-SHA-256


class Restartable:
    """A knotd of the cluster whose directory (and so its storage) outlives a stop."""

    def __init__(self, c, module=None):
        self.c = c
        self.dir = tempfile.mkdtemp(prefix="mod-k8s-warm-")
        self.module = dict(module or {})
        self.server = None

    def start(self, module=None):
        options = dict(self.module)
        options.update(module or {})
        self.server = self.c.knotd(module=options, zones=ZONES, workdir=self.dir)
        self.server.start()
        return self.server

    def stop(self):
        if self.server is not None:
            self.server.stop()
            self.server = None

    @property
    def snapshot_dir(self):
        """The module's own directory in the zones' storage."""
        return os.path.join(self.dir, "zones", "mod-k8s")

    @property
    def key_path(self):
        return os.path.join(self.snapshot_dir, "snapshot.key")

    def snapshot_path(self):
        found = glob.glob(os.path.join(self.snapshot_dir, "*.snapshot"))
        testing.expect(len(found) == 1, f"one snapshot file in the storage, found {found}")
        return found[0]

    def key(self):
        with open(self.key_path, "rb") as f:
            return f.read()

    def close(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def answers(server):
    return {(q, t): _answer(server, q, t) for q, t in NAMES}


def _answer(server, qname, qtype):
    a = dig.query(server, qname, qtype)
    return a.rcode, sorted(rr.rdata for rr in a.answer if rr.type == qtype)


def synchronized_with_snapshot(k):
    """Starts k's knotd with the API up, waits for its first snapshot; returns the answers."""
    server = k.start()
    wait_counter(server, "ready[cluster]", lambda v: v == 1, "synchronized")
    wait_counter(server, "snapshot[writes]", lambda v: v >= 1, "a snapshot written")
    return answers(server)


def expect_not_ready(server, why):
    """The snapshot is ignored with a log line holding `why`; the zone is not ready."""
    wait_log(server, "ignoring snapshot")
    line = log_lines(server, "ignoring snapshot")[0]
    testing.expect(why in line, f"the log line says {why!r}: {line}")
    a = dig.query(server, PROBE, "A", edns=True)
    testing.expect(a.rcode == "SERVFAIL" and a.ede_code == 14,
                   f"{PROBE} answers SERVFAIL with EDE 14 before the API is listed, got {a.summary()}")
    testing.expect_equal(counter(server, "snapshot[stale]"), 0, "snapshot[stale]")
    testing.expect_equal(counter(server, "ready[cluster]"), 0, "ready[cluster]")
    wait_counter(server, "snapshot[refused]", lambda v: v == 1, "snapshot[refused] is 1", timeout=5)


def restart_down_with(c, k, change, module=None):
    """Stops k's knotd, changes its snapshot file (change(bytes, key) -> bytes, the key that
    of the snapshots' directory), restarts it with the API down."""
    k.stop()
    path = k.snapshot_path()
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(change(data, k.key()))
    begin_outage(c.sim)
    return k.start(module)


def keyed(body, key):
    """A body with its MAC, as knotd writes it: who reads the key can key a file."""
    return body + hmac.new(key, body, hashlib.sha256).digest()


@tests.case
def restarted_with_the_api_down_it_answers_from_the_snapshot_flagged_stale(c):
    k = Restartable(c)
    try:
        before = synchronized_with_snapshot(k)
        k.stop()
        begin_outage(c.sim)
        started = time.monotonic()
        server = k.start()
        # Started means knotd answers its SOA: the snapshot is read by then or a moment later.
        expect_addresses(server, PROBE, before[(PROBE, "A")][1], timeout=2)
        first = time.monotonic() - started
        # Logged once the PTR index follows: the reverse zones answer a moment after the names.
        wait_log(server, "answering from the snapshot")
        testing.expect_equal(answers(server), before, "answers from the snapshot")
        testing.expect(first < 10, f"first answer {first:.2f} s after the start")
        wait_counter(server, "snapshot[stale]", lambda v: v == 1, "snapshot[stale] is 1", timeout=5)
        testing.expect(counter(server, "snapshot[loaded]") > 0, "snapshot[loaded] counts its objects")
        testing.expect(log_lines(server, "answering from the snapshot"), "a log line says so")
        testing.expect_equal(counter(server, "connected"), 0, "connected while the API is down")
    finally:
        end_outage(c.sim)
        k.close()


@tests.case
def the_stale_flag_clears_when_the_api_is_listed_with_no_window_for_names_in_both(c):
    k = Restartable(c)
    try:
        synchronized_with_snapshot(k)
        k.stop()
        begin_outage(c.sim)
        server = k.start()
        wait_counter(server, "snapshot[stale]", lambda v: v == 1, "snapshot[stale] is 1", timeout=5)
        with Watch(server, NAMES) as watch:
            watch.wait_rounds(1)  # Answered from the snapshot,
            end_outage(c.sim)
            wait_counter(server, "snapshot[stale]", lambda v: v == 0, "snapshot[stale] back to 0",
                         timeout=30)
            wait_log(server, "the snapshot's state is replaced")
            watch.wait_rounds(1)  # then from the live state, the same.
        watch.expect_unchanged(minimum=2)
        testing.expect_equal(counter(server, "ready[cluster]"), 1, "ready[cluster]")
        # The live state is written again.
        wait_counter(server, "snapshot[writes]", lambda v: v >= 1, "a snapshot of the live state")
    finally:
        end_outage(c.sim)
        k.close()


@tests.case
def a_name_deleted_while_down_answers_from_the_snapshot_then_vanishes_after_the_list(c):
    gone = "gone.shop.svc.cluster.local."
    c.sim.apply(service("shop", "gone", "10.96.200.77"))
    k = Restartable(c)
    try:
        synchronized_with_snapshot(k)
        testing.expect_equal(_answer(k.server, gone, "A"), ("NOERROR", ["10.96.200.77"]),
                             "the service answers before")
        k.stop()
        c.sim.delete("services", "shop", "gone")
        begin_outage(c.sim)
        server = k.start()
        expect_addresses(server, gone, ["10.96.200.77"], timeout=2)
        end_outage(c.sim)
        wait_counter(server, "snapshot[stale]", lambda v: v == 0, "snapshot[stale] back to 0",
                     timeout=30)
        expect_addresses(server, gone, [], timeout=5)
        expect_addresses(server, PROBE, ["10.96.0.1"], timeout=1)
    finally:
        end_outage(c.sim)
        k.close()
        try:
            c.sim.delete("services", "shop", "gone")
        except Exception:
            pass


@tests.case
def federation_names_keep_the_topology_of_the_snapshots_nodes(c):
    # The nodes read back from the snapshot feed the topology as the API's would (issue 28).
    federated = "mysvc.myns.myfederation.svc.cluster.local."
    topology = "testcontinent-testreg-testzone.testcontinent-testreg"
    k = Restartable(c, module={"federations": ["myfederation=example.com"]})
    try:
        synchronized_with_snapshot(k)
        k.stop()
        begin_outage(c.sim)
        server = k.start()
        wait_log(server, "answering from the snapshot")
        a = dig.query(server, federated, "A")
        targets = [rr.rdata for rr in a.answer if rr.type == "CNAME"]
        testing.expect_equal(targets, [f"mysvc.myns.myfederation.svc.{topology}.example.com."],
                             f"{federated} with the API down")
        testing.expect(log_lines(server, "federation topology is zone testcontinent-testreg-testzone, "
                                 "region testcontinent-testreg (node node-a)"),
                       "the topology is logged from the snapshot's nodes")
        testing.expect_equal(counter(server, "connected"), 0, "connected while the API is down")
    finally:
        end_outage(c.sim)
        k.close()


@tests.case
def after_a_reload_with_other_settings_the_snapshot_is_of_the_new_settings(c):
    # The old watcher lives on until its zones are unloaded: it must not write its settings back.
    k = Restartable(c)
    labels = {"labels": "app!=nothing-at-all"}
    try:
        synchronized_with_snapshot(k)
        server = k.server
        server.module_options.update(labels)
        with open(server.conf_path, "w", encoding="utf-8") as f:
            f.write(server.config_text())
        server.reload()
        wait_log(server, "the previous watcher is released")
        c.sim.apply(service("shop", "after-reload", "10.96.200.78"))
        expect_addresses(server, "after-reload.shop.svc.cluster.local.", ["10.96.200.78"], timeout=10)
        time.sleep(6)  # One snapshot period: the change is written.
        k.stop()
        begin_outage(c.sim)
        server = k.start(labels)
        expect_addresses(server, "after-reload.shop.svc.cluster.local.", ["10.96.200.78"], timeout=2)
        testing.expect_equal(log_lines(server, "ignoring snapshot"), [], "snapshot ignored")
    finally:
        end_outage(c.sim)
        k.close()
        try:
            c.sim.delete("services", "shop", "after-reload")
        except Exception:
            pass


def bad_snapshot_case(change, why, module=None):
    def case(c):
        k = Restartable(c)
        try:
            synchronized_with_snapshot(k)
            server = restart_down_with(c, k, change, module)
            expect_not_ready(server, why)
            end_outage(c.sim)
            wait_counter(server, "ready[cluster]", lambda v: v == 1, "synchronized after the outage",
                         timeout=30)
        finally:
            end_outage(c.sim)
            k.close()
    return case


def _flip_payload_byte(data, key):
    i = len(data) // 2
    return data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1:]


def _other_version(data, key):
    return data[:8] + struct.pack("<I", 99) + data[12:]


def _version(version):
    # Version 1 held JSON objects, version 2 an FNV-1a checksum: refused by their version,
    # never read as this version's, however keyed.
    return lambda data, key: keyed(data[:8] + struct.pack("<I", version) + data[12:-MAC_LEN], key)


def _old(data, key):
    return keyed(data[:24] + struct.pack("<q", int(time.time()) - 7200) + data[32:-MAC_LEN], key)


def _keyed_elsewhere(data, key):
    # Written whole by another knotd (its own key): every byte its, the MAC too.
    return keyed(data[:-MAC_LEN], os.urandom(32))


tests.add("a truncated snapshot is ignored with a log line",
          bad_snapshot_case(lambda d, key: d[:len(d) // 2], "truncated"))
tests.add("a corrupt snapshot is ignored with a log line",
          bad_snapshot_case(_flip_payload_byte, "key check failed"))
tests.add("a snapshot keyed with another knotds key is ignored with a log line",
          bad_snapshot_case(_keyed_elsewhere, "key check failed: corrupt, or not written with "
                                              "this directory's snapshot.key"))
tests.add("a snapshot of another format version is ignored with a log line",
          bad_snapshot_case(_other_version, f"version 99, expected {VERSION}"))
tests.add("a snapshot of the JSON format (version 1) is ignored with a log line",
          bad_snapshot_case(_version(1), f"version 1, expected {VERSION}"))
tests.add("a snapshot of the unkeyed format (version 2) is ignored with a log line",
          bad_snapshot_case(_version(2), f"version 2, expected {VERSION}"))
tests.add("a snapshot of other watch settings is ignored with a log line",
          bad_snapshot_case(lambda d, key: d, "made with other watch settings",
                            module={"labels": "app!=nothing-at-all"}))
tests.add("a snapshot older than snapshot max age is ignored with a log line",
          bad_snapshot_case(_old, "older than snapshot-max-age", module={"snapshot-max-age": 3600}))
tests.add("a snapshot whose objects do not decode is ignored with a log line",
          bad_snapshot_case(lambda d, key: keyed(d[:-MAC_LEN].replace(b"\x05shop", b"\x05sh_p"),
                                                 key),
                            "does not decode (invalid name)"))


# -- the snapshots' directory and its key (issue 40, item 6)


@tests.case
def the_snapshots_directory_is_private_and_its_key_is_mode_0600(c):
    k = Restartable(c)
    try:
        synchronized_with_snapshot(k)
        modes = {name: os.lstat(path).st_mode & 0o7777 for name, path in
                 (("directory", k.snapshot_dir), ("key", k.key_path),
                  ("snapshot", k.snapshot_path()))}
        testing.expect_equal(modes, {"directory": 0o700, "key": 0o600, "snapshot": 0o600},
                             "modes")
        testing.expect_equal(len(k.key()), 32, "the key's bytes")
        key = k.key()
        # A restart keeps the key: the snapshot is read.
        k.stop()
        begin_outage(c.sim)
        server = k.start()
        wait_log(server, "answering from the snapshot")
        testing.expect_equal(k.key(), key, "the key after a restart")
    finally:
        end_outage(c.sim)
        k.close()


def _restore(k):
    """Gives the storage back to knotd's user with sane modes (whatever a case did to it)."""
    for path in (k.snapshot_dir, k.key_path):
        if os.path.islink(path):
            os.unlink(path)
    if os.path.isdir(k.snapshot_dir + ".real"):
        os.rename(k.snapshot_dir + ".real", k.snapshot_dir)
    if os.path.exists(k.snapshot_dir):
        os.chown(k.snapshot_dir, os.geteuid(), -1)
        os.chmod(k.snapshot_dir, 0o700)


def refused_storage_case(change, why):
    """Stops k's knotd, changes the snapshots' directory or key (change(k)), restarts it
    with the API down: logged, no snapshot read (not ready), nothing written there, and
    ready once the API is listed, as on a cold start."""
    def case(c):
        k = Restartable(c)
        try:
            synchronized_with_snapshot(k)
            k.stop()
            if change(k) is False:
                raise testing.Skip("only root may give a file away")
            before = os.stat(k.snapshot_path(), follow_symlinks=False).st_mtime_ns \
                if os.path.isdir(k.snapshot_dir) and not os.path.islink(k.snapshot_dir) else None
            begin_outage(c.sim)
            server = k.start()
            wait_log(server, "no snapshot for a warm restart")
            line = log_lines(server, "no snapshot for a warm restart")[0]
            testing.expect(why in line, f"the log line says {why!r}: {line}")
            a = dig.query(server, PROBE, "A", edns=True)
            testing.expect(a.rcode == "SERVFAIL" and a.ede_code == 14,
                           f"{PROBE} before the API is listed: {a.summary()}")
            testing.expect_equal(log_lines(server, "answering from the snapshot"), [],
                                 "answered from the snapshot")
            end_outage(c.sim)
            wait_counter(server, "ready[cluster]", lambda v: v == 1,
                         "synchronized after the outage", timeout=30)
            expect_addresses(server, PROBE, ["10.96.0.1"], timeout=5)
            time.sleep(1.5)  # A write would follow the first sync at once.
            testing.expect_equal(counter(server, "snapshot[writes]"), 0, "snapshot[writes]")
            if before is not None:
                testing.expect_equal(os.stat(k.snapshot_path()).st_mtime_ns, before,
                                     "the snapshot untouched")
        finally:
            end_outage(c.sim)
            _restore(k)
            k.close()
    return case


def _chmod_dir(mode):
    return lambda k: os.chmod(k.snapshot_dir, mode)


def _give_away(path):
    def change(k):
        try:
            os.chown(path(k), 65534 if os.geteuid() != 65534 else 65533, -1)
        except PermissionError:
            return False
        return True
    return change


def _dir_as_link(k):
    os.rename(k.snapshot_dir, k.snapshot_dir + ".real")
    os.symlink(k.snapshot_dir + ".real", k.snapshot_dir)


tests.add("a world writable snapshots directory is refused with a log line",
          refused_storage_case(_chmod_dir(0o777), "writable by group or others (mode 777)"))
tests.add("a group writable snapshots directory is refused with a log line",
          refused_storage_case(_chmod_dir(0o770), "writable by group or others (mode 770)"))
tests.add("a sticky world writable snapshots directory is refused with a log line",
          refused_storage_case(_chmod_dir(0o1777), "writable by group or others (mode 1777)"))
tests.add("a snapshots directory of another user is refused with a log line",
          refused_storage_case(_give_away(lambda k: k.snapshot_dir), "owned by uid 6553"))
tests.add("a snapshots directory that is a symbolic link is refused with a log line",
          refused_storage_case(_dir_as_link, "a symbolic link"))
tests.add("a key others may read is refused with a log line",
          refused_storage_case(lambda k: os.chmod(k.key_path, 0o644),
                               "snapshot.key is readable or writable by group or others "
                               "(mode 644)"))
tests.add("a key of another user is refused with a log line",
          refused_storage_case(_give_away(lambda k: k.key_path), "snapshot.key is owned by uid"))


@tests.case
def a_lost_key_is_made_again_and_the_snapshot_of_the_old_one_ignored(c):
    k = Restartable(c)
    try:
        synchronized_with_snapshot(k)
        old = k.key()
        k.stop()
        os.unlink(k.key_path)
        begin_outage(c.sim)
        server = k.start()
        expect_not_ready(server, "key check failed")
        testing.expect(len(k.key()) == 32 and k.key() != old, "a new key")
        testing.expect_equal(os.lstat(k.key_path).st_mode & 0o7777, 0o600, "the new key's mode")
        end_outage(c.sim)
        wait_counter(server, "snapshot[writes]", lambda v: v >= 1, "written with the new key",
                     timeout=30)
        k.stop()
        begin_outage(c.sim)
        server = k.start()
        wait_log(server, "answering from the snapshot")
    finally:
        end_outage(c.sim)
        k.close()


@tests.case
def a_directory_opened_to_others_while_running_is_not_written(c):
    k = Restartable(c)
    try:
        server = k.start()
        wait_counter(server, "snapshot[writes]", lambda v: v >= 1, "a snapshot written")
        written = os.stat(k.snapshot_path()).st_mtime_ns
        os.chmod(k.snapshot_dir, 0o777)
        c.sim.apply(service("shop", "while-open", "10.96.200.79"))
        wait_counter(server, "snapshot[write-errors]", lambda v: v >= 1, "a write refused",
                     timeout=15)
        line = log_lines(server, "cannot write snapshot")[0]
        testing.expect("its directory is writable by group or others (mode 777)" in line, line)
        testing.expect_equal(os.stat(k.snapshot_path()).st_mtime_ns, written, "the snapshot")
        os.chmod(k.snapshot_dir, 0o700)  # Given back: written again.
        writes = counter(server, "snapshot[writes]")
        wait_counter(server, "snapshot[writes]", lambda v: v > writes, "written again",
                     timeout=15)
    finally:
        _restore(k)
        k.close()
        try:
            c.sim.delete("services", "shop", "while-open")
        except Exception:
            pass


@tests.case
def with_snapshot_off_nothing_is_written_or_read(c):
    k = Restartable(c, module={"snapshot": "off"})
    try:
        server = k.start()
        wait_counter(server, "ready[cluster]", lambda v: v == 1, "synchronized")
        time.sleep(1.5)
        testing.expect_equal(counter(server, "snapshot[writes]"), 0, "snapshot[writes]")
        testing.expect_equal(glob.glob(os.path.join(k.dir, "zones", "mod-k8s*")), [],
                             "files in the storage")
    finally:
        k.close()


tests.main(fixture=lambda: Cluster(zones=ZONES))
