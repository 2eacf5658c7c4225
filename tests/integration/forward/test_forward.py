#!/usr/bin/env python3
# run alone: cluster names under external load: no loss, p99 against the idle baseline
"""Forwarding of names outside the cluster zones (issue 24), in the shipped deployment.

knotd runs packaging/kubernetes/knot.conf as written (only the pod's paths, listen
address and resolvers replaced, and the simulator's kubeconfig added): mod-k8s as
the global module forwards names in no zone, the reverse zones forward their
NXDOMAIN, to stub upstreams the test controls (tests/lib/stubdns.py). No knotd
worker waits on the network: a name not cached is handed to the forwarder thread,
which answers the client from knotd's socket when the upstream answers (a late
answer). So cluster names keep their speed whatever the upstreams do: silent,
slow, or looping back to us.
"""

import os
import random
import re
import select
import socket
import statistics
import struct
import threading
import time
import urllib.request

import knotd
import promtext
import shipped
import stubdns
import testing
import wire

tests = testing.Tests()

SHIPPED = shipped.CONFIG
CLUSTER_NAME = "kubernetes.default.svc.cluster.local."


def deployment(*upstreams, extra_options=()):
    """A cluster served by the shipped knot.conf, forwarding to `upstreams` (StubDNS)."""
    return shipped.deployment([u.address for u in upstreams], extra_options)


def asked(stub, name):
    return sum(1 for n, _ in stub.names() if n == name)


def non_probes(stub):
    """What a stub was asked besides health probes (". NS") and loop probes."""
    return [n for n, t in stub.names() if n != "." and not n.endswith(".mod-k8s-loop.")]


def rrs(answer, rtype):
    return sorted(rr.rdata for rr in answer.answer if rr.type == rtype)


def timed_query(c, name, rtype="A", **options):
    start = time.monotonic()
    answer = c.query(name, rtype, **options)
    return answer, time.monotonic() - start


# -- failover


@tests.case
def first_upstream_silent_external_names_answer_through_the_second_on_the_first_query():
    with stubdns.StubDNS(mode="silent") as silent, stubdns.StubDNS() as healthy, \
            deployment(silent, healthy) as c:
        for i in range(5):
            name = f"www{i}.example.com."
            answer, took = timed_query(c, name)
            testing.expect(answer.rcode == "NOERROR" and len(rrs(answer, "A")) == 1,
                           f"{name}: {answer.summary()}")
            # kdig's own start is part of it: well under a second is left for the failover.
            testing.expect(took < 1.0, f"{name} took {took:.3f} s")
        # Marked down at its first silence: from then on it gets health probes only.
        testing.expect_equal(non_probes(silent), ["www0.example.com."], "names the silent one got")
        testing.eventually(lambda: testing.expect(asked(silent, ".") >= 1, "no health probe"),
                           timeout=5)
        stats = c.knotc("stats").stdout
        testing.expect(re.search(r"forward\[failovers\] = [1-9]", stats), stats)
        testing.expect(re.search(rf"upstream-down\[127.0.0.1@{silent.port}\] = 1", stats), stats)


@tests.case
def a_down_upstream_is_used_again_once_its_probe_is_answered():
    with stubdns.StubDNS(mode="silent") as first, stubdns.StubDNS() as second, \
            deployment(first, second) as c:
        testing.expect(c.query("a.example.com.").rcode == "NOERROR", "first name")
        first.mode = "answer"
        testing.eventually(lambda: testing.expect(
            "127.0.0.1@%d answers again" % first.port in c.log_text(), "no recovery line"),
            timeout=5)
        testing.expect(c.query("b.example.com.").rcode == "NOERROR", "second name")
        testing.expect(asked(first, "b.example.com.") == 1 and asked(second, "b.example.com.") == 0,
                       f"b went to {first.names()} / {second.names()}")


@tests.case
def every_upstream_silent_answers_servfail_with_an_extended_error_at_the_deadline():
    with stubdns.StubDNS(mode="silent") as up, \
            deployment(up, extra_options=["forward-timeout: 800"]) as c:
        answer, took = timed_query(c, "gone.example.com.", edns=True)
        testing.expect(answer.rcode == "SERVFAIL", answer.summary())
        testing.expect(answer.ede_code == 22, f"EDE {answer.ede_code}")
        testing.expect(0.7 < took < 1.5, f"took {took:.3f} s")


# -- the cache


@tests.case
def a_cached_name_is_not_asked_again_and_its_ttl_counts_down():
    with stubdns.StubDNS(ttl=300) as up, deployment(up) as c:
        first = c.query("cached.example.com.")
        testing.expect(first.rcode == "NOERROR", first.summary())
        time.sleep(1.1)
        second = c.query("cached.example.com.")
        testing.expect_equal(rrs(second, "A"), rrs(first, "A"), "cached answer")
        testing.expect(asked(up, "cached.example.com.") == 1, f"asked {up.names()}")
        # At most the cache's 30 s, less the second it was kept.
        ttl = next(iter(second.answer)).ttl
        testing.expect(ttl <= 29, f"TTL {ttl}")
        testing.expect("aa" not in second.flags and "ra" in second.flags, second.flags)


@tests.case
def nxdomain_is_cached_with_its_soa():
    with stubdns.StubDNS() as up, deployment(up) as c:
        for _ in range(3):
            answer = c.query("nxname.example.com.")
            testing.expect(answer.rcode == "NXDOMAIN", answer.summary())
            testing.expect(any(rr.type == "SOA" for rr in answer.section("authority")),
                           "no SOA in authority")
        testing.expect(asked(up, "nxname.example.com.") == 1, f"asked {up.names()}")


@tests.case
def a_truncated_upstream_answer_is_asked_again_over_tcp():
    with stubdns.StubDNS() as up, deployment(up) as c:
        answer = c.query("big.example.com.", tcp=True)
        testing.expect(answer.rcode == "NOERROR" and len(rrs(answer, "A")) == 60, answer.summary())
        # Over UDP without EDNS it does not fit: TC, and the client's TCP retry is cached.
        answer = c.query("big.example.com.", "A")
        testing.expect("tc" in answer.flags, answer.summary())


@tests.case
def a_reload_keeps_the_forwarder_and_its_cache():
    with stubdns.StubDNS(ttl=300) as up, deployment(up) as c:
        testing.expect(c.query("kept.example.com.").rcode == "NOERROR", "before the reload")
        c.server.reload()
        answer = c.query("kept.example.com.")
        testing.expect(answer.rcode == "NOERROR", f"after the reload: {answer.summary()}")
        testing.expect(asked(up, "kept.example.com.") == 1, f"asked again: {up.names()}")
        answer = c.query("new.example.com.")
        testing.expect(answer.rcode == "NOERROR", f"a new name after the reload: {answer.summary()}")


# -- where names go


@tests.case
def a_stub_domain_goes_to_its_own_servers():
    with stubdns.StubDNS() as default, stubdns.StubDNS() as corp:
        with deployment(default, extra_options=[
                f'forward-stub: [ "corp.example={corp.address}" ]']) as c:
            testing.expect(c.query("host.corp.example.").rcode == "NOERROR", "stub name")
            testing.expect(c.query("www.example.org.").rcode == "NOERROR", "default name")
            testing.expect_equal(non_probes(corp), ["host.corp.example."], "stub domain asked")
            testing.expect_equal(non_probes(default), ["www.example.org."], "default asked")


@tests.case
def a_stub_domain_inside_the_cluster_zone_goes_to_its_servers_and_the_cluster_names_do_not():
    # AKS's documented coredns-custom example: my.cluster.local:53 { forward . ADDR },
    # a server block more specific than the cluster's (issue 41, item 7).
    with stubdns.StubDNS() as default, stubdns.StubDNS() as inside:
        with deployment(default, extra_options=[
                f'forward-stub: [ "my.cluster.local={inside.address}" ]']) as c:
            answer = c.query("db.my.cluster.local.")
            testing.expect(answer.rcode == "NOERROR" and answer.answer, answer.summary())
            testing.expect(rrs(answer, "A")[0].startswith("192.0.2."), answer.summary())
            answer = c.query("my.cluster.local.", "TXT")
            testing.expect(answer.rcode == "NOERROR", f"the stub domain's apex: {answer.summary()}")
            answer = c.query("kubernetes.default.svc.cluster.local.")
            testing.expect(answer.rcode == "NOERROR" and answer.answer, answer.summary())
            answer = c.query("nx.cluster.local.")
            testing.expect(answer.rcode == "NXDOMAIN", f"a cluster name: {answer.summary()}")
            testing.expect_equal(non_probes(inside), ["db.my.cluster.local.", "my.cluster.local."],
                                 "the stub domain's servers asked")
            testing.expect_equal(non_probes(default), [], "the default servers asked")


@tests.case
def a_reverse_name_outside_the_cluster_goes_upstream_and_a_cluster_one_does_not():
    with stubdns.StubDNS() as up, deployment(up) as c:
        answer = c.query("8.8.8.8.in-addr.arpa.", "PTR")
        testing.expect(answer.rcode == "NOERROR", answer.summary())
        testing.expect(asked(up, "8.8.8.8.in-addr.arpa.") == 1, f"asked {up.names()}")
        answer = c.query("1.0.96.10.in-addr.arpa.", "PTR")
        testing.expect(answer.rcode == "NOERROR" and answer.answer, answer.summary())
        testing.expect(asked(up, "1.0.96.10.in-addr.arpa.") == 0, "cluster address forwarded")
        testing.expect(asked(up, "kubernetes.default.svc.cluster.local.") == 0, "cluster name")


# -- cluster names never wait


WINDOW = 1.0   # seconds: external load on in every other window
SETTLE = 0.2   # the first part of a quiet window is left out: the late answers of the last


def latencies(port, seconds, rate=200, external_rate=0):
    """Queries a cluster name `rate` times a second for `seconds`, while `external_rate`
    distinct external names a second are asked in every other window of WINDOW seconds
    (the load of a shared machine then falls on both kinds of window alike); returns
    (lost, [latencies of each quiet window], [latencies of each loaded window])."""
    sent, got = {}, {}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.connect(("127.0.0.1", port))
    done = threading.Event()
    start = time.monotonic() + 0.1

    def loaded(t):
        return int((t - start) / WINDOW) % 2 == 1

    def receive():
        while not done.is_set() or len(got) < len(sent):
            if not select.select([sock], [], [], 0.2)[0]:
                if done.is_set():
                    return
                continue
            message = sock.recv(65535)
            got.setdefault(struct.unpack_from(">H", message)[0], time.monotonic())

    def external():
        ext = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        ext.connect(("127.0.0.1", port))
        ext.setblocking(False)
        tag = random.randrange(1 << 30)
        i = 0
        while not done.is_set():
            due = start + i / external_rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            if loaded(due):
                ext.send(wire.query(f"n{i}-{tag}.load.example.", "A", ident=i & 0xffff, rd=True))
            i += 1
            try:
                while True:
                    ext.recv(65535)
            except BlockingIOError:
                pass
        ext.close()

    threads = [threading.Thread(target=receive)]
    if external_rate:
        threads.append(threading.Thread(target=external))
    for t in threads:
        t.start()
    count = int(seconds * rate)
    for i in range(count):
        due = start + i / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        sent[i] = time.monotonic()
        sock.send(wire.query(CLUSTER_NAME, "A", ident=i, rd=True))
    time.sleep(1)
    done.set()
    for t in threads:
        t.join()
    sock.close()
    windows = {}
    for i, t in sent.items():
        if i in got and (loaded(t) or (t - start) % WINDOW >= SETTLE):
            windows.setdefault(int((t - start) / WINDOW), []).append(got[i] - t)
    quiet = [sorted(v) for k, v in sorted(windows.items()) if k % 2 == 0]
    busy = [sorted(v) for k, v in sorted(windows.items()) if k % 2 == 1]
    return count - sum(1 for i in sent if i in got), quiet, busy


def p99(lat):
    return lat[int(len(lat) * 0.99) - 1] if lat else float("inf")


def check_cluster_names_unaffected(c, label, **load):
    lost, quiet, busy = latencies(c.port, 10, **load)
    # The median of the windows' p99: a burst of a neighbour's load in one window
    # (this machine is shared) does not decide it.
    base = statistics.median(p99(w) for w in quiet)
    under = statistics.median(p99(w) for w in busy)
    print(f"# {label}: cluster p99 (median of 1 s windows) without external load "
          f"{base * 1000:.2f} ms, with it {under * 1000:.2f} ms; {lost} lost; worst windows "
          f"{max(p99(w) for w in quiet) * 1000:.2f} / {max(p99(w) for w in busy) * 1000:.2f} ms")
    testing.expect(lost == 0, f"{label}: {lost} cluster queries lost")
    # A grace for the scheduling of a shared 2-CPU machine, where the load's own
    # processes (the stub, this sender) compete with knotd: 5 ms, 15 ms under the
    # sanitizers. A worker waiting on the 50 ms upstream (mod-dnsproxy's way) shows
    # up as 50 ms and more, and as lost queries (953 of 1000 with the old config).
    # Under ThreadSanitizer every module access is slowed many times: the latency goal
    # is not what that build checks, only that nothing is lost (and no race reported).
    build = knotd.find_build()
    grace = 0.5 if build.tsan else 0.015 if build.sanitized else 0.005
    testing.expect(under <= 2 * base + grace,
                   f"{label}: p99 {under * 1000:.2f} ms > 2 x {base * 1000:.2f} ms + "
                   f"{grace * 1000:.0f} ms")


@tests.case
def upstream_at_50_ms_with_500_external_names_a_second_cluster_names_lose_nothing():
    with stubdns.StubDNS(delay=0.05) as up, deployment(up) as c:
        check_cluster_names_unaffected(c, "upstream at 50 ms", external_rate=500)
        stats = c.knotc("stats").stdout
        forwarded = int(re.search(r"forward\[forwarded\] = (\d+)", stats).group(1))
        testing.expect(forwarded >= 2000, f"only {forwarded} names forwarded:\n{stats}")


@tests.case
def a_loop_found_at_start_is_logged_and_counted_and_cluster_names_are_unaffected():
    port = knotd.free_port()
    with stubdns.StubDNS(mode="loop", loop_to=("127.0.0.1", port)) as looping, \
            stubdns.StubDNS() as good:
        start = time.monotonic()
        with shipped.deployment([looping.address, good.address], port=port) as c:
            testing.eventually(lambda: testing.expect(
                "loop detected: upstream 127.0.0.1@%d" % looping.port in c.log_text(),
                "no loop line"), timeout=5 - (time.monotonic() - start))
            testing.eventually(lambda: testing.expect(
                re.search(r"forward\[loops\] = 1", c.knotc("stats").stdout), "not counted"),
                timeout=3)
            answer = c.query("www.example.net.")
            testing.expect(answer.rcode == "NOERROR", answer.summary())
            before = len(non_probes(looping))
            check_cluster_names_unaffected(c, "loop", external_rate=100)
            testing.expect(len(non_probes(looping)) == before, "the looping upstream is still used")


@tests.case
def a_loop_that_appears_while_running_is_logged_and_counted_within_seconds_and_that_upstream_is_left():
    port = knotd.free_port()
    with stubdns.StubDNS(loop_to=("127.0.0.1", port)) as turning, stubdns.StubDNS() as good, \
            shipped.deployment([turning.address, good.address], port=port) as c:
        answer = c.query("before.example.net.")
        testing.expect(answer.rcode == "NOERROR", answer.summary())
        testing.expect(asked(turning, "before.example.net.") == 1, "the first upstream not used")
        time.sleep(1)  # Past the start-up probe, which found no loop.
        testing.expect("loop detected" not in c.log_text(), "a loop before there was one")
        # The node's resolver is reconfigured to forward back to knotd.
        turning.mode = "loop"
        start = time.monotonic()
        i = 0

        def found():
            nonlocal i
            i += 1
            try:
                c.query(f"during{i}.example.net.", timeout=1)
            except Exception:  # noqa: BLE001  (a query lost in the loop: only the log counts)
                pass
            testing.expect("loop detected: upstream 127.0.0.1@%d" % turning.port in c.log_text(),
                           "no loop line")
        testing.eventually(found, timeout=5)
        print(f"# loop found {time.monotonic() - start:.2f} s after it appeared")
        testing.eventually(lambda: testing.expect(
            re.search(r"forward\[loops\] = 1", c.knotc("stats").stdout), "not counted"),
            timeout=3)
        before = len(non_probes(turning))
        answer = c.query("after.example.net.")
        testing.expect(answer.rcode == "NOERROR", answer.summary())
        lost, quiet, busy = latencies(c.port, 2, external_rate=100)
        testing.expect(lost == 0, f"{lost} cluster queries lost")
        testing.expect(len(non_probes(turning)) == before, "the looping upstream is still used")


def probe_names(stub):
    return [n for n, t in stub.names() if n.endswith(".mod-k8s-loop.")]


def echoing(port):
    """A stub's answers that send every loop probe it gets back to knotd (at `port`) and
    wait for knotd's answers first, as a loop would, with the name of every other upstream's
    probe it can make of it."""
    def answer(query, ttl, tcp):
        name, _, _ = stubdns._question(query)
        if name.lower().endswith(".mod-k8s-loop."):
            names = {name}
            old = re.fullmatch(r"([0-9a-f]{16})-\d+", name.split(".")[0])
            if old:  # One token for all, and each upstream's index after it.
                names |= {f"{old.group(1)}-{i}.mod-k8s-loop." for i in range(16)}
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(2)
                for n in names:
                    s.sendto(wire.query(n, 13), ("127.0.0.1", port))  # HINFO
                for _ in names:
                    try:
                        s.recv(65535)
                    except OSError:
                        break
        return stubdns.answer_for(query, ttl, tcp)
    return answer


@tests.case
def a_stub_domain_server_that_echoes_its_loop_probe_marks_only_itself_not_the_default_upstream():
    port = knotd.free_port()
    with stubdns.StubDNS() as default, stubdns.StubDNS(answer=echoing(port)) as corp, \
            shipped.deployment([default.address], port=port, extra_options=[
                f'forward-stub: [ "corp.example={corp.address}" ]']) as c:
        testing.eventually(lambda: testing.expect(
            "loop detected: upstream 127.0.0.1@%d" % corp.port in c.log_text(),
            "the echoing server not marked"), timeout=5)
        time.sleep(0.5)  # Its echoes had the time to mark the default upstream too.
        testing.expect("loop detected: upstream 127.0.0.1@%d" % default.port not in c.log_text(),
                       "the default upstream marked by another's echo")
        testing.expect(re.search(r"forward\[loops\] = 1\b", c.knotc("stats").stdout),
                       c.knotc("stats").stdout)
        answer = c.query("www.example.org.")
        testing.expect(answer.rcode == "NOERROR", answer.summary())
        testing.expect_equal(non_probes(default), ["www.example.org."], "default asked")


@tests.case
def a_replayed_loop_probe_name_marks_nothing():
    with stubdns.StubDNS() as default, stubdns.StubDNS() as corp, \
            deployment(default, extra_options=[
                f'forward-stub: [ "corp.example={corp.address}" ]']) as c:
        testing.eventually(lambda: testing.expect(
            probe_names(default) and probe_names(corp), "no loop probes at start"), timeout=5)
        time.sleep(0.5)  # Answered: no longer out.
        seen = probe_names(default) + probe_names(corp)
        testing.expect(len(set(seen)) == len(seen), f"a probe name used twice: {seen}")
        for name in seen:
            answer = c.query(name, "HINFO")
            testing.expect(answer.rcode == "REFUSED", f"{name}: {answer.summary()}")
        time.sleep(0.3)
        testing.expect("loop detected" not in c.log_text(), "a replayed name marked a loop")
        testing.expect(re.search(r"forward\[loops\] = 0\b", c.knotc("stats").stdout) or
                       "forward[loops]" not in c.knotc("stats").stdout, c.knotc("stats").stdout)
        testing.expect(c.query("www.example.org.").rcode == "NOERROR", "default name")
        testing.expect(c.query("host.corp.example.").rcode == "NOERROR", "stub name")
        testing.expect_equal(non_probes(default), ["www.example.org."], "default asked")
        testing.expect_equal(non_probes(corp), ["host.corp.example."], "stub domain asked")


@tests.case
def an_upstream_marked_looping_is_used_again_once_its_loop_probe_comes_back_clean():
    port = knotd.free_port()
    with stubdns.StubDNS(mode="loop", loop_to=("127.0.0.1", port)) as turning, \
            stubdns.StubDNS() as good, \
            shipped.deployment([turning.address, good.address], port=port) as c:
        testing.eventually(lambda: testing.expect(
            "loop detected: upstream 127.0.0.1@%d" % turning.port in c.log_text(),
            "no loop line"), timeout=5)
        testing.expect(c.query("during.example.net.").rcode == "NOERROR", "during the loop")
        testing.expect(asked(turning, "during.example.net.") == 0, "the looping upstream used")
        # The node's resolver is fixed: the next probe (within 5 s) is answered, not echoed.
        turning.mode = "answer"
        start = time.monotonic()
        testing.eventually(lambda: testing.expect(
            "upstream 127.0.0.1@%d no longer sends our queries back" % turning.port
            in c.log_text(), "not used again"), timeout=12)
        print(f"# used again {time.monotonic() - start:.2f} s after the loop ended")
        testing.expect(c.query("after.example.net.").rcode == "NOERROR", "after the loop")
        testing.expect(asked(turning, "after.example.net.") == 1 and
                       asked(good, "after.example.net.") == 0,
                       f"after went to {non_probes(turning)} / {non_probes(good)}")


# -- the forwarder's series on /metrics


@tests.case
def the_forwarders_series_show_the_failover_the_upstreams_and_a_cache_hit():
    http_port = knotd.free_port()
    with stubdns.StubDNS(mode="silent") as silent, stubdns.StubDNS() as healthy, \
            shipped.deployment([silent.address, healthy.address], metrics_port=http_port) as c:
        names = [f"www{i}.metrics.example." for i in range(3)]
        for name in names:
            answer = c.query(name)
            testing.expect(answer.rcode == "NOERROR", f"{name}: {answer.summary()}")
        answer = c.query(names[0])  # From the cache.
        testing.expect(answer.rcode == "NOERROR", f"repeat: {answer.summary()}")
        dead, alive = (f"127.0.0.1:{u.port}" for u in (silent, healthy))

        def shown():
            # The forwarder thread pushes its counters once a second.
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=5) as r:
                families = promtext.parse(r.read().decode())  # Strict: one family each.

            def v(family, **labels):
                testing.expect(family in families, f"{family} on the page")
                return promtext.value(families, family, **labels)
            testing.expect(v("mod_k8s_forward_requests_total") >= 3, "names forwarded")
            testing.expect(v("mod_k8s_forward_failovers_total") >= 1, "a failover")
            testing.expect(v("mod_k8s_forward_responses_total") >= 3, "late answers")
            testing.expect_equal(v("mod_k8s_forward_failures_total"), 0, "SERVFAIL answers")
            testing.expect_equal(v("mod_k8s_forward_loops_total"), 0, "loops")
            testing.expect_equal(v("mod_k8s_forward_dropped_total"), 0, "dropped")
            testing.expect_equal(v("mod_k8s_forward_waiting_clients"), 0, "waiting clients")
            testing.expect(v("mod_k8s_forward_cache_hits_total") >= 1, "the repeat's cache hit")
            testing.expect(v("mod_k8s_forward_cache_misses_total") >= 3, "cache misses")
            testing.expect(v("mod_k8s_forward_cache_entries") >= 3, "cache entries")
            testing.expect(v("mod_k8s_forward_cache_size_bytes") > 0, "cache bytes")
            testing.expect(v("mod_k8s_forward_upstream_requests_total", upstream=dead) >= 1,
                           "the silent one was asked")
            testing.expect(v("mod_k8s_forward_upstream_failures_total", upstream=dead) >= 1,
                           "the silent one's failure")
            testing.expect_equal(v("mod_k8s_forward_upstream_responses_total", upstream=dead), 0,
                                 "the silent one's answers")
            testing.expect_equal(v("mod_k8s_forward_upstream_healthy", upstream=dead), 0,
                                 "the silent one is down")
            testing.expect(v("mod_k8s_forward_upstream_responses_total", upstream=alive) >= 3,
                           "the healthy one's answers")
            testing.expect_equal(v("mod_k8s_forward_upstream_healthy", upstream=alive), 1,
                                 "the healthy one is up")
            # The global instance and the reverse zones share one forwarder: one series each.
            upstreams = [s for s in families["mod_k8s_forward_upstream_healthy"]["samples"]]
            testing.expect_equal(sorted(l["upstream"] for _, l, _ in upstreams),
                                 sorted([dead, alive]), "one series per upstream")
        testing.eventually(shown, timeout=5)


tests.main()
