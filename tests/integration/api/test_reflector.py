#!/usr/bin/env python3
"""Reflectors against the API simulator (module/api/reflector.c; k8s_api.md 1.10, 5 and 6).

Each case starts the simulator (tests/apisim) with the sample cluster and
tests/integration/reflector_drive, which runs reflectors in a curl multi loop as the
watcher thread does and prints every sink call and log line. The cases replay the sink
calls into the set of objects a sink would hold and compare it with the simulator's, and
read the simulator's request log to see what the client asked and when.

Set REFLECTOR_DRIVE_WRAPPER (e.g. "valgrind --leak-check=full --error-exitcode=9") to run
the driver under a checker; the driver must exit with status 0 at the end of every case.
"""

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

SRCDIR = os.environ.get("MODK8S_SRCDIR",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BUILDDIR = os.environ.get("MODK8S_BUILDDIR", SRCDIR)
DRIVE = os.path.join(BUILDDIR, "tests", "integration", "reflector_drive")
SAMPLE = os.path.join(SRCDIR, "tests", "manifests", "sample")
WRAPPER = shlex.split(os.environ.get("REFLECTOR_DRIVE_WRAPPER", ""))
# Checkers slow the driver down a lot; waits grow with them.
SLOW = 4 if WRAPPER else 1

sys.path.insert(0, os.path.join(SRCDIR, "tests", "lib"))
from simctl import Simulator  # noqa: E402
import testing  # noqa: E402

SERVICES = "kind=services,path=/api/v1/services"
# The test's own LISTs: the reflector never sends a resourceVersionMatch.
OWN_READ = "resourceVersion=0&resourceVersionMatch=NotOlderThan"
IMPORTS_V1A1 = "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports"


def service(name, ip, namespace="default", port=80):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip],
                     "ports": [{"name": "http", "protocol": "TCP", "port": port}]}}


class Driver:
    """One reflector_drive process; its output lines are collected as they come."""

    def __init__(self, kubeconfig, *specs):
        self.proc = subprocess.Popen([*WRAPPER, DRIVE, kubeconfig, *specs], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []
        self.eof = False
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait(self, predicate, timeout=20, what="a condition"):
        """Waits until predicate(lines) is true; returns its value."""
        deadline = time.monotonic() + timeout * SLOW
        with self.cond:
            while True:
                value = predicate(self.lines)
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    tail = "\n".join(self.lines[-40:])
                    raise AssertionError(f"timed out waiting for {what}; driver output ends:\n{tail}")
                self.cond.wait(left)

    def wait_line(self, pattern, start=0, timeout=20):
        """Index of the first line at or after start matching the regular expression."""
        regex = re.compile(pattern)

        def find(lines):
            for i in range(start, len(lines)):
                if regex.search(lines[i]):
                    return i + 1
            return None
        return self.wait(find, timeout, repr(pattern)) - 1

    def count(self, pattern):
        regex = re.compile(pattern)
        with self.cond:
            return sum(1 for line in self.lines if regex.search(line))

    def mark(self):
        with self.cond:
            return len(self.lines)

    def stats(self):
        """The reflectors' counters, one dict per source."""
        start = self.mark()
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        end = self.wait_line(r"^stats end$", start)
        out = []
        with self.cond:
            for line in self.lines[start:end]:
                if line.startswith("stats "):
                    fields = line.split()[2:]
                    out.append({k: int(v) for k, v in (f.split("=") for f in fields)})
        return out

    def model(self, source=0):
        """What a sink holds after the calls so far: {"ns/name": digest}."""
        objs, generation = {}, 0
        with self.cond:
            lines = list(self.lines)
        for line in lines:
            parts = line.split()
            if len(parts) < 2 or parts[0] not in ("list_begin", "list_end", "upsert", "remove",
                                                  "too_large") or int(parts[1]) != source:
                continue
            if parts[0] == "list_begin":
                generation += 1
            elif parts[0] == "upsert":
                objs[parts[2]] = (parts[3], generation)
            elif parts[0] == "remove" or parts[-1] == "deleted":
                objs.pop(parts[2], None)
            elif parts[0] == "too_large" and parts[2] in objs:
                # Unreadable, not gone: the version held survives the relist.
                objs[parts[2]] = (objs[parts[2]][0], generation)
            else:
                objs = {k: v for k, v in objs.items() if v[1] == generation}
        return {k: v[0] for k, v in objs.items()}

    def synced(self, source=0, start=0, timeout=20):
        """Waits for a list_end of source after line start; returns its index."""
        return self.wait_line(rf"^list_end {source}$", start, timeout)

    def stop(self):
        """Ends the driver by "quit" and returns its exit status (killed by PID if it hangs)."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30 * SLOW)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode


class ReflectorCase(unittest.TestCase):
    """A simulator with the sample cluster per case; drivers are stopped and must exit 0."""

    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="test_reflector.")
        self.sim = Simulator(self.workdir, manifests=[SAMPLE]).start()
        self.drivers = []

    def tearDown(self):
        statuses = [d.stop() for d in self.drivers]
        self.sim.stop()
        subprocess.run(["rm", "-rf", self.workdir], check=False)
        self.assertEqual(statuses, [0] * len(statuses), "a driver did not exit cleanly")

    def drive(self, *specs, kubeconfig=None):
        driver = Driver(kubeconfig or self.sim.kubeconfig, *specs)
        self.drivers.append(driver)
        return driver

    def sim_keys(self, path):
        """ns/name of every object the simulator serves at path."""
        resp = self.sim.get(path + "?" + OWN_READ)
        self.assertEqual(resp.status, 200, resp.body[:200])
        items = resp.json()["items"] or []
        return {f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in items}

    def requests(self, verb, resource, since=0):
        """The client's requests (not the test's own reads) of verb on resource."""
        return [r for r in self.sim.requests(since) if r["verb"] == verb and r["resource"] == resource
                and r["query"] != OWN_READ]

    def wait_requests(self, verb, resource, since, count, timeout=10):
        """The client's requests since `since`, once there are `count` of them (the simulator
        records a request when it has answered it)."""
        deadline = time.monotonic() + timeout * SLOW
        while True:
            found = self.requests(verb, resource, since)
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def wait_model(self, driver, path, source=0, timeout=20):
        """Waits until the sink's objects are the simulator's."""
        want = self.sim_keys(path)
        driver.wait(lambda _: set(driver.model(source)) == want, timeout,
                    f"the sink to hold {sorted(want)}")

    def expire_during_outage(self, driver, ip):
        """The server down while shop/web is deleted, a service added (ClusterIP `ip`) and
        the history compacted: the watch's resumption gets 410. Returns that log line's index."""
        time.sleep(1.2)
        self.sim.outage(2)
        self.sim.delete("services", "shop", "web")
        self.sim.apply(service("after-outage", ip))
        self.sim.compact()
        return driver.wait_line(r"watch services failed, relisting in \d+\.\d s \(HTTP 410 "
                                r"Expired\)", timeout=30)


def query(request):
    return dict(urllib.parse.parse_qsl(request["query"], keep_blank_values=True))


class ListAndWatch(ReflectorCase):

    def test_first_list_is_at_version_0_from_the_watch_cache_then_the_watch_starts_at_its_version(self):
        d = self.drive(SERVICES + ",limit=3")
        end = d.synced()
        begin = d.wait_line(r"^list_begin 0$")
        self.assertLess(begin, end)
        want = self.sim_keys("/api/v1/services")
        self.assertEqual(set(d.model()), want)
        upserts = [line for line in d.lines[begin:end] if line.startswith("upsert 0 ")]
        self.assertEqual(len(upserts), len(want))

        # client-go's first LIST: resourceVersion=0 with the pager's limit, which the watch
        # cache ignores: one answer, and etcd never sees it.
        lists = self.requests("list", "services")
        self.assertEqual([(query(r), r["served_from"]) for r in lists],
                         [({"resourceVersion": "0", "limit": "3"}, "cache")])

        rv = self.sim.resource_version()
        d.wait_line(rf"list services completed, {len(want)} objects, resource version {rv}")
        self.sim.wait_for_watches("services")
        watch = query(self.requests("watch", "services")[0])
        self.assertEqual(watch["resourceVersion"], str(rv))
        self.assertEqual(watch["allowWatchBookmarks"], "true")
        self.assertTrue(300 <= int(watch["timeoutSeconds"]) < 600, watch["timeoutSeconds"])
        self.assertEqual(d.stats()[0]["synced"], 1)

    def test_first_list_comes_in_pages_without_a_watch_cache_and_relists_keep_paging(self):
        self.sim.set_config(watch_cache=False)
        d = self.drive(SERVICES + ",limit=3")
        d.synced()
        want = self.sim_keys("/api/v1/services")
        lists = self.requests("list", "services")
        self.assertEqual(len(lists), -(-len(want) // 3))
        self.assertEqual(query(lists[0]), {"resourceVersion": "0", "limit": "3"})
        for page in lists[1:]:    # the token holds the version, as client-go's pager sends it
            self.assertEqual(sorted(query(page)), ["continue", "limit"])
        self.sim.wait_for_watches("services")
        rv = query(self.requests("watch", "services")[0])["resourceVersion"]
        # A relist after a very short watch is at the last version, in pages still: the
        # server paged "0", so it has no cache an unlimited list could be served from.
        since = self.sim.requests()[-1]["seq"]
        self.sim.cut_streams("clean", "services")
        d.wait_line(r"watch services failed, relisting in")
        relist = self.wait_requests("list", "services", since, 1)
        self.assertEqual(query(relist[0]), {"resourceVersion": rv, "limit": "3"})

    def test_watch_events_are_applied_in_order(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        start = d.mark()
        self.sim.apply(service("new", "10.96.7.1"))
        self.sim.apply(service("new", "10.96.7.1", port=8080))
        self.sim.delete("services", "default", "new")
        end = d.wait_line(r"^remove 0 default/new$", start)
        calls = [line for line in d.lines[start:end + 1] if line.split()[0] in ("upsert", "remove")]
        self.assertEqual([c.split()[:3] for c in calls], [["upsert", "0", "default/new"]] * 2
                         + [["remove", "0", "default/new"]])
        self.assertNotEqual(calls[0].split()[3], calls[1].split()[3], "a new port, a new digest")
        stats = d.stats()[0]
        self.assertEqual((stats["events"], stats["relists"], stats["connected"]), (3, 0, 1))
        self.assertEqual(set(d.model()), self.sim_keys("/api/v1/services"))

    def test_bookmarks_move_the_resume_point(self):
        self.sim.set_bookmark_interval(0.5)
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        # A change elsewhere moves the collection's version: only a bookmark tells the watch.
        self.sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}})
        rv = self.sim.resource_version()
        # Three bookmarks after the change: at least one was sent after it, however late
        # a loaded machine delivers them (a fixed sleep was flaky in CI).
        seen = d.stats()[0]["bookmarks"]
        deadline = time.monotonic() + 30
        while d.stats()[0]["bookmarks"] < seen + 3:
            self.assertLess(time.monotonic(), deadline, "no bookmarks arrive")
            time.sleep(0.2)
        since = self.sim.requests()[-1]["seq"]
        self.sim.cut_streams("clean", "services")
        # The old watch may still count as open for a moment: wait for the new request.
        rewatch = self.wait_requests("watch", "services", since, 1)
        self.assertEqual(query(rewatch[0])["resourceVersion"], str(rv))
        self.assertEqual(self.requests("list", "services", since), [])

    def test_cut_stream_resumes_from_the_last_version_without_relist(self):
        d = self.drive(SERVICES)
        d.synced()
        for n, mode in enumerate(("chunk-end", "close", "mid-chunk", "rst")):
            with self.subTest(mode=mode):
                self.sim.wait_for_watches("services")
                time.sleep(1.2)    # past the "very short watch" second
                self.assertEqual(self.sim.cut_streams(mode, "services"), 1)
                start = d.mark()
                self.sim.apply(service(f"cut-{n}", f"10.96.8.{n + 1}"))
                d.wait_line(rf"^upsert 0 default/cut-{n} ", start)
                d.wait_line(r"watch services interrupted, resuming from resource version \d+ "
                            r"\(.*incomplete event discarded\)", start)
        stats = d.stats()[0]
        self.assertEqual(stats["relists"], 0)
        self.assertEqual(stats["watch_restarts"], 4)
        self.assertEqual(stats["network"], 4)
        self.assertEqual(len(self.requests("list", "services")), 1)
        self.assertEqual(set(d.model()), self.sim_keys("/api/v1/services"))

    def test_very_short_watch_relists_after_backoff(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        self.sim.cut_streams("clean", "services")
        line = d.wait_line(r"watch services failed, relisting in (\d+\.\d) s \(watch ended at once")
        delay = float(re.search(r"in (\d+\.\d) s", d.lines[line]).group(1))
        self.assertTrue(0.8 <= delay < 1.7, delay)
        d.synced(start=line)
        self.assertEqual(d.stats()[0]["relists"], 1)

    def test_repeated_very_short_watches_keep_growing_the_backoff(self):
        # Each relist completes, but the watch after it fails at once again: the completed
        # list must not start the delay small again, or a broken watch path relists in a loop.
        d = self.drive(SERVICES)
        d.synced()
        delays = []
        start = d.mark()
        for _ in range(3):
            since = self.sim.requests()[-1]["seq"]
            self.sim.wait_for_watches("services")
            self.sim.cut_streams("clean", "services")
            line = d.wait_line(r"watch services failed, relisting in (\d+\.\d) s \(watch ended at "
                               r"once", start, timeout=30)
            delays.append(float(re.search(r"in (\d+\.\d) s", d.lines[line]).group(1)))
            start = line + 1
            self.wait_requests("list", "services", since, 1, timeout=30)
        self.assertTrue(0.8 <= delays[0] < 1.7 and 1.6 <= delays[1] < 3.3 and 3.2 <= delays[2] < 6.5,
                        delays)


class Errors(ReflectorCase):

    def test_expired_version_relists_and_drops_what_was_deleted_meanwhile(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        line = self.expire_during_outage(d, "10.96.9.1")
        d.synced(start=line, timeout=30)
        self.wait_model(d, "/api/v1/services")
        self.assertNotIn("shop/web", d.model())
        self.assertEqual(d.count(r"^remove 0 shop/web$"), 0, "removed by list_end, not an event")
        stats = d.stats()[0]
        self.assertEqual((stats["relists"], stats["gone"]), (1, 1))
        self.assertGreaterEqual(stats["network"], 1)
        # client-go relists at the last version it saw ("not older than", served by the
        # watch cache), without a limit, which would make it an exact read from etcd.
        relist = self.requests("list", "services")[-1]
        last_watch = [r for r in self.requests("watch", "services") if r["seq"] < relist["seq"]][-1]
        self.assertEqual(query(relist), {"resourceVersion": query(last_watch)["resourceVersion"]})
        self.assertEqual(relist["served_from"], "cache")

    def test_list_at_an_expired_version_is_retried_at_once_as_a_paged_consistent_read(self):
        self.sim.set_config(watch_cache=False)    # relists are paged, so exact: they can expire
        d = self.drive(SERVICES + ",limit=3")
        d.synced()
        self.sim.wait_for_watches("services")
        rv = query(self.requests("watch", "services")[0])["resourceVersion"]
        time.sleep(1.2)
        since = self.sim.requests()[-1]["seq"]
        self.sim.outage(2)
        self.sim.apply(service("after-outage", "10.96.9.2"))
        self.sim.compact()
        line = d.wait_line(rf"list services at resource version {rv} restarted as a consistent "
                           r"read \(HTTP 410 Expired\)", timeout=30)
        d.synced(start=line, timeout=30)
        self.wait_model(d, "/api/v1/services")
        lists = [r for r in self.requests("list", "services", since) if "continue" not in query(r)]
        self.assertEqual([(query(r), r["code"]) for r in lists],
                         [({"resourceVersion": rv, "limit": "3"}, 410), ({"limit": "3"}, 200)])
        self.assertEqual(d.count(r"relisting in .*\(HTTP 410 Expired\)"), 1,
                         "the consistent read came at once, not after a backoff")
        stats = d.stats()[0]
        self.assertEqual((stats["relists"], stats["gone"]), (2, 2))

    def test_outage_backs_off_then_recovers_without_relist(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        time.sleep(1.2)
        start = d.mark()
        # The outage lasts until the watch was refused twice, then ends (an outage of 0 s):
        # a fixed 4 s once ended before a loaded CI machine's driver retried a second time.
        self.sim.outage(60)
        failed = re.compile(r"watch services failed, retrying in (\d+\.\d) s")
        d.wait(lambda lines: sum(1 for line in lines[start:] if failed.search(line)) >= 2,
               timeout=30, what="two refused watches")
        self.sim.outage(0)
        self.sim.wait_for_watches("services", timeout=30)
        delays = [float(m.group(1)) for m in map(failed.search, d.lines[start:]) if m]
        self.assertGreaterEqual(len(delays), 2, "refused at least twice during the outage")
        self.assertTrue(0.8 <= delays[0] < 1.7, delays)
        self.assertTrue(1.6 <= delays[1] < 3.3, delays)
        self.sim.apply(service("after-outage", "10.96.9.2"))
        d.wait_line(r"^upsert 0 default/after-outage ", start)
        stats = d.stats()[0]
        self.assertEqual(stats["relists"], 0)
        self.assertGreaterEqual(stats["network"], 2)
        self.assertEqual(len(self.requests("list", "services")), 1)

    def assert_retry_after_honoured(self, body):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        time.sleep(1.2)
        self.sim.too_many_requests(1, body=body, retry_after=3, match="/api/v1/services",
                                   verbs=["watch"])
        since = self.sim.requests()[-1]["seq"]
        self.sim.cut_streams("clean", "services")
        line = d.wait_line(r"watch services failed, retrying in (\d+\.\d) s \(HTTP 429")
        delay = float(re.search(r"in (\d+\.\d) s", d.lines[line]).group(1))
        self.assertTrue(3.0 <= delay <= 3.3, f"Retry-After 3 plus up to a tenth: {delay}")
        self.sim.wait_for_watches("services", timeout=20)
        watches = self.requests("watch", "services", since)
        self.assertEqual([w["code"] for w in watches[:2]], [429, 200])
        self.assertGreaterEqual(watches[1]["time"] - watches[0]["time"], 2.9)
        self.assertEqual(query(watches[1])["resourceVersion"], query(watches[0])["resourceVersion"])
        stats = d.stats()[0]
        self.assertEqual((stats["throttled"], stats["relists"]), (1, 0))

    def test_too_many_requests_with_retry_after_header_waits_at_least_that(self):
        self.assert_retry_after_honoured("apf")

    def test_too_many_requests_with_retry_after_seconds_status_waits_at_least_that(self):
        self.assert_retry_after_honoured("status")

    def test_retry_after_1_is_waited_as_given_however_often(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        time.sleep(1.2)
        self.sim.too_many_requests(4, retry_after=1, match="/api/v1/services", verbs=["watch"])
        start = d.mark()
        self.sim.cut_streams("clean", "services")
        pattern = re.compile(r"retrying in (\d+\.\d) s \(HTTP 429")
        d.wait(lambda lines: sum(1 for x in lines[start:] if pattern.search(x)) >= 4, 30,
               "four 429 answers")
        self.sim.wait_for_watches("services", timeout=30)
        delays = [float(m.group(1)) for m in (pattern.search(line) for line in d.lines[start:]) if m]
        self.assertEqual(len(delays), 4, delays)
        # Not max(backoff, Retry-After): the backoff would be 3.2 to 6.4 s by the third.
        self.assertTrue(all(1.0 <= x <= 1.1 for x in delays), delays)

    def test_a_completed_list_starts_the_backoff_small_again(self):
        self.sim.forbid("services")
        d = self.drive(SERVICES)
        for _ in range(3):  # 0.8 to 1.6 s, 1.6 to 3.2 s, ...
            d.wait_line(r"list services failed, retrying in \d+\.\d s \(HTTP 403", d.mark())
        self.sim.forbid("services", on=False)
        d.synced(timeout=30)
        self.sim.wait_for_watches("services")
        time.sleep(1.2)  # Not a very short watch.
        self.sim.forbid("services")
        start = d.mark()
        self.sim.cut_streams("clean", "services")
        line = d.wait_line(r"watch services failed, relisting in \d+\.\d s \(HTTP 403", start)
        delay = float(re.search(r"in (\d+\.\d) s", d.lines[line]).group(1))
        self.assertTrue(0.8 <= delay < 1.7, f"the first fault after the list waited {delay} s")
        self.sim.forbid("services", on=False)

    def test_unauthorized_rereads_the_token_file_and_retries_at_once(self):
        d = self.drive(SERVICES, kubeconfig=self.sim.kubeconfig_tokenfile)
        d.synced()
        self.sim.wait_for_watches("services")
        time.sleep(1.2)
        self.sim.rotate_token()
        since = self.sim.requests()[-1]["seq"]
        self.sim.cut_streams("clean", "services")
        d.wait_line(r"watch services unauthorized, retrying with the re-read token \(HTTP 401")
        self.sim.wait_for_watches("services")
        watches = self.wait_requests("watch", "services", since, 2)
        self.assertEqual([w["code"] for w in watches[:2]], [401, 200])
        self.assertLess(watches[1]["time"] - watches[0]["time"], 0.5 * SLOW)
        self.sim.apply(service("with-new-token", "10.96.9.3"))
        d.wait_line(r"^upsert 0 default/with-new-token ")
        stats = d.stats()[0]
        self.assertEqual((stats["unauthorized"], stats["relists"]), (1, 0))
        self.assertEqual(d.count(re.escape(self.sim.token)), 0, "the token is never logged")

    def test_unauthorized_after_another_reflector_read_the_new_token_retries_at_once(self):
        # Both watches reconnect with the old token; the first 401 reads the new file, so
        # for the second the file looks unchanged: the client's token generation tells.
        d = self.drive(SERVICES, "kind=namespaces,path=/api/v1/namespaces",
                       kubeconfig=self.sim.kubeconfig_tokenfile)
        d.synced(source=0)
        d.synced(source=1)
        self.sim.wait_for_watches("services")
        self.sim.wait_for_watches("namespaces")
        time.sleep(1.2)
        self.sim.rotate_token()
        since = self.sim.requests()[-1]["seq"]
        self.sim.cut_streams("clean")
        self.sim.wait_for_watches("services", timeout=20)
        self.sim.wait_for_watches("namespaces", timeout=20)
        refused = 0
        for resource in ("services", "namespaces"):
            watches = self.wait_requests("watch", resource, since, 1)
            codes = [w["code"] for w in watches]
            if codes[:1] == [401]:
                refused += 1
                watches = self.wait_requests("watch", resource, since, 2)
                self.assertEqual([w["code"] for w in watches[:2]], [401, 200], resource)
                self.assertLess(watches[1]["time"] - watches[0]["time"], 0.5 * SLOW, resource)
        self.assertGreaterEqual(refused, 1, "a watch was refused the old token")
        self.assertEqual(d.count(r"failed, retrying in .* \(HTTP 401"), 0, "no backoff after a 401")

    def test_unauthorized_with_an_unchanged_token_backs_off(self):
        d = self.drive(SERVICES, kubeconfig=self.sim.kubeconfig_tokenfile)
        d.synced()
        self.sim.wait_for_watches("services")
        time.sleep(1.2)
        self.sim.expire_token()
        self.sim.cut_streams("clean", "services")
        d.wait_line(r"watch services failed, retrying in \d+\.\d s \(HTTP 401 Unauthorized\)")
        self.sim.rotate_token()
        self.sim.wait_for_watches("services", timeout=20)
        self.assertEqual(d.stats()[0]["relists"], 0)

    def test_forbidden_retries_forever_without_a_busy_loop(self):
        self.sim.forbid("services")
        d = self.drive(SERVICES)
        d.wait_line(r"list services failed, retrying in \d+\.\d s \(HTTP 403 Forbidden\)")
        time.sleep(4)
        attempts = len(self.requests("list", "services"))
        self.assertTrue(2 <= attempts <= 4, f"{attempts} LISTs in about 4 s")
        self.assertEqual(d.stats()[0]["synced"], 0)
        self.sim.forbid("services", on=False)
        d.synced(timeout=30)
        self.wait_model(d, "/api/v1/services")

    def test_api_server_restart_waits_for_its_cache_then_relists(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        time.sleep(1.2)
        # Changes the client does not see before the restart drops its stream and the history.
        self.sim.hang(True, "services")
        self.sim.delete("services", "shop", "cache")
        self.sim.apply(service("during-restart", "10.96.9.4"))
        start = d.mark()
        self.sim.restart(initializing_seconds=2)
        self.sim.hang(False, "services")
        line = d.wait_line(r"watch services failed, retrying in \d+\.\d s \(HTTP 429 "
                           r"TooManyRequests\)", start)
        line = d.wait_line(r"watch services failed, relisting in \d+\.\d s \(HTTP 410 Expired\)",
                           line, timeout=40)
        d.synced(start=line, timeout=40)
        self.wait_model(d, "/api/v1/services")
        self.assertNotIn("shop/cache", d.model())
        self.assertIn("default/during-restart", d.model())
        stats = d.stats()[0]
        self.assertEqual((stats["relists"], stats["gone"]), (1, 1))
        self.assertGreaterEqual(stats["throttled"], 1)


class OptionalAndPaths(ReflectorCase):

    def test_second_path_is_tried_on_404(self):
        d = self.drive("kind=serviceimports,path=/apis/multicluster.x-k8s.io/v9/serviceimports,"
                       f"path={IMPORTS_V1A1}")
        d.synced()
        self.wait_model(d, IMPORTS_V1A1)
        stats = d.stats()[0]
        self.assertEqual((stats["absent"], stats["not-found"], stats["synced"]), (0, 0, 1))

    def test_absent_optional_resource_is_synced_empty_then_listed_when_installed(self):
        d = self.drive(SERVICES, f"kind=serviceimports,path={IMPORTS_V1A1},optional,absent=4")
        d.synced(source=0)
        d.synced(source=1)
        self.wait_model(d, IMPORTS_V1A1, source=1)
        start = d.mark()
        self.sim.set_absent("serviceimports")
        # The open watch ends; the relist finds the resource gone: empty, one log line.
        d.wait_line(r"^list_end 1$", start)
        self.assertEqual(d.model(1), {})
        d.wait_line(r"serviceimports not served by the API server, treated as empty, "
                    r"checking again every 4 s \(HTTP 404, 404 page not found\)", start)
        stats = d.stats()[1]
        self.assertEqual((stats["synced"], stats["absent"]), (1, 1))
        self.assertEqual(d.stats()[0]["synced"], 1, "other reflectors carry on")

        self.sim.set_absent("serviceimports", absent=False)
        since = self.sim.requests()[-1]["seq"]
        d.wait_line(r"list serviceimports completed", start, timeout=20)
        self.wait_model(d, IMPORTS_V1A1, source=1)
        lists = self.requests("list", "serviceimports", since)
        self.assertEqual(len(lists), 1, "one retry after 4 s, no busy loop")
        self.assertEqual(d.count(r"serviceimports not served"), 1)
        self.assertEqual(d.stats()[1]["absent"], 0)


class Limits(ReflectorCase):

    def test_oversize_object_is_skipped_in_watch_and_list(self):
        d = self.drive(SERVICES + ",max=65536")
        d.synced()
        self.sim.wait_for_watches("services")
        start = d.mark()
        self.sim.big_object("services", "shop", "web", size=200 * 1024)
        self.sim.apply(service("small", "10.96.9.5"))
        d.wait_line(r"^upsert 0 default/small ", start)
        d.wait_line(r"watch services object shop/web skipped \(larger than 65536 bytes\)", start)
        # Named to the sink, which keeps the version it holds.
        d.wait_line(r"^too_large 0 shop/web$", start)
        self.assertEqual(d.count(r"^upsert 0 shop/web "), 1, "only from the list")
        self.assertEqual(d.stats()[0]["too-large"], 1)
        self.assertEqual(d.stats()[0]["decode"], 0)

        fresh = self.drive(SERVICES + ",max=65536")
        fresh.synced()
        fresh.wait_line(r"list services object shop/web skipped \(larger than 65536 bytes\)")
        fresh.wait_line(r"^too_large 0 shop/web$")
        self.assertNotIn("shop/web", fresh.model())
        self.assertEqual(set(fresh.model()), self.sim_keys("/api/v1/services") - {"shop/web"})

    def test_hung_watch_is_cut_by_the_stall_timer(self):
        d = self.drive(SERVICES + ",stall=2")
        d.synced()
        self.sim.wait_for_watches("services")
        start = d.mark()
        self.sim.hang(True, "services")
        d.wait_line(r"watch services interrupted, resuming from resource version \d+ \(Operation "
                    r"too slow", start, timeout=15)
        self.assertEqual(d.stats()[0]["timeout"], 1)
        self.sim.hang(False, "services")
        self.sim.apply(service("after-hang", "10.96.9.6"))
        d.wait_line(r"^upsert 0 default/after-hang ")
        self.assertEqual(d.stats()[0]["relists"], 0)

    def test_malformed_events_are_skipped_and_logged_at_most_every_10_s(self):
        d = self.drive(SERVICES)
        d.synced()
        self.sim.wait_for_watches("services")
        start = d.mark()
        for n in range(5):
            self.sim.inject_event("services", "MODIFIED", {"kind": "Service", "metadata": {
                "namespace": "default", "resourceVersion": "1"}, "spec": {"ports": n}})
        self.sim.apply(service("after-garbage", "10.96.9.7"))
        d.wait_line(r"^upsert 0 default/after-garbage ", start)
        self.assertEqual(d.stats()[0]["decode"], 5)
        skipped = [line for line in d.lines[start:] if "event skipped" in line]
        self.assertEqual(len(skipped), 1, skipped)
        self.assertEqual(d.stats()[0]["relists"], 0)

    def test_expired_continue_token_restarts_the_list_without_paging(self):
        self.sim.set_config(watch_cache=False)    # else the list at "0" is not paged
        self.sim.slow_list(500, "services")    # page 1 takes seconds: time to expire its token
        d = self.drive(SERVICES + ",limit=4")
        d.wait_line(r"^list_begin 0$")
        self.sim.apply(service("during-list", "10.96.9.8"))
        self.sim.compact()
        self.sim.slow_list(0, "services")
        d.wait_line(r"list services restarted without paging \(HTTP 410 Expired\)", timeout=30)
        d.synced(timeout=30)
        self.wait_model(d, "/api/v1/services")
        lists = self.requests("list", "services")
        # client-go's pager falls back to one list at the version first asked for.
        self.assertEqual(query(lists[-1]), {"resourceVersion": "0"})
        self.assertEqual(d.count(r"^list_begin 0$"), 2)


class WatchList(ReflectorCase):
    """Full lists as watch-lists (client-go's watchList(): sendInitialEvents), LISTs where
    the server refuses or ignores them."""

    WATCH_LIST = {"watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
                  "resourceVersionMatch": "NotOlderThan"}

    def watch_list_query(self, request):
        q = query(request)
        self.assertTrue(300 <= int(q.pop("timeoutSeconds")) < 600)
        return q

    def test_first_sync_is_a_watch_list_whose_bookmark_ends_the_list_and_the_stream_goes_on(self):
        d = self.drive(SERVICES + ",watchlist")
        end = d.synced()
        begin = d.wait_line(r"^list_begin 0$")
        self.assertLess(begin, end)
        want = self.sim_keys("/api/v1/services")
        self.assertEqual(set(d.model()), want)
        rv = self.sim.resource_version()
        d.wait_line(rf"list services completed, {len(want)} objects, resource version {rv} "
                    r"\(watch-list\)")
        # One request: no LIST, and the watch is the watch-list's stream itself.
        self.assertEqual(self.requests("list", "services"), [])
        watches = self.requests("watch", "services")
        self.assertEqual([self.watch_list_query(r) for r in watches], [self.WATCH_LIST])
        self.sim.apply(service("after-sync", "10.96.9.10"))
        d.wait_line(r"^upsert 0 default/after-sync ", end)
        self.assertEqual(len(self.requests("watch", "services")), 1)
        self.assertEqual(d.count(r"^list_begin 0$"), 1)
        stats = d.stats()[0]
        self.assertEqual((stats["synced"], stats["relists"], stats["watch_restarts"],
                          stats["watch_lists_refused"]), (1, 0, 0, 0))

    def test_expired_watch_relists_by_watch_list_at_its_last_version(self):
        d = self.drive(SERVICES + ",watchlist")
        d.synced()
        self.sim.wait_for_watches("services")
        self.sim.apply(service("moves-the-version", "10.96.9.11"))
        d.wait_line(r"^upsert 0 default/moves-the-version ")
        line = self.expire_during_outage(d, "10.96.9.12")
        d.synced(start=line, timeout=30)
        self.wait_model(d, "/api/v1/services")
        self.assertNotIn("shop/web", d.model())
        self.assertEqual(d.count(r"^remove 0 shop/web$"), 0, "removed at the list's end")
        watches = self.requests("watch", "services")
        self.assertEqual(self.requests("list", "services"), [])
        # client-go's relist: a watch-list not older than the last version seen.
        resumed = [q for q in map(query, watches) if "sendInitialEvents" not in q]
        relist = self.watch_list_query(watches[-1])
        self.assertEqual(relist, dict(self.WATCH_LIST,
                                      resourceVersion=resumed[-1]["resourceVersion"]))
        self.assertEqual(d.stats()[0]["relists"], 1)

    def test_a_server_that_refuses_watch_lists_is_listed_from_then_on(self):
        self.sim.set_config(watch_list="refused")
        d = self.drive(SERVICES + ",watchlist")
        d.wait_line(r"services: the API server refuses watch-lists, listing instead \(HTTP 422 "
                    r"Invalid\)")
        d.synced()
        self.wait_model(d, "/api/v1/services")
        self.assertEqual([r["code"] for r in self.requests("watch", "services")][:1], [422])
        self.assertEqual([query(r) for r in self.requests("list", "services")],
                         [{"resourceVersion": "0", "limit": "500"}])
        self.assertEqual(d.stats()[0]["watch_lists_refused"], 1)
        # At once, not after a backoff; and a relist is a LIST too.
        self.assertEqual(d.count(r"failed"), 0)
        self.assertEqual(d.stats()[0]["watch_restarts"], 0)
        time.sleep(1.2)
        self.sim.outage(1)
        self.sim.apply(service("after-outage", "10.96.9.13"))
        self.sim.compact()
        d.wait_line(r"watch services failed, relisting", timeout=30)
        d.wait(lambda _: len(self.requests("list", "services")) == 2, 30, "the relist")
        self.assertEqual(len([r for r in self.requests("watch", "services")
                              if "sendInitialEvents" in query(r)]), 1)

    def test_a_server_that_ignores_watch_lists_is_listed_at_its_first_bookmark(self):
        self.sim.set_config(watch_list="ignored", bookmark_interval=1)
        d = self.drive(SERVICES + ",watchlist")
        d.wait_line(r"services: the API server does not end a watch-list's initial events, "
                    r"listing instead", timeout=20)
        d.synced()
        self.wait_model(d, "/api/v1/services")
        self.assertEqual(len(self.requests("list", "services")), 1)
        self.assertEqual(d.stats()[0]["watch_lists_refused"], 1)

    def test_a_watch_list_cut_before_its_end_is_made_again(self):
        self.sim.hang(True, "services")
        d = self.drive(SERVICES + ",watchlist,stall=2")
        d.wait_line(r"^list_begin 0$")
        d.wait_line(r"watch-list services failed, relisting in \d+\.\d s \(Operation too slow",
                    timeout=15)
        self.assertEqual(d.count(r"^list_end 0$"), 0)
        self.sim.hang(False, "services")
        d.synced(timeout=30)
        self.wait_model(d, "/api/v1/services")
        self.assertEqual(d.count(r"^list_begin 0$"), 2)
        self.assertEqual(d.stats()[0]["timeout"], 1)


if __name__ == "__main__":
    testing.unittest_main()
