#!/usr/bin/env python3
# run alone: floods at hundreds of queries a second against deadlines of seconds
"""The resolver's pools shared by tenants (issue 40, item 1), each attack of the issue's
"Why" reproduced in the shipped deployment, with the issue's numbers as the bar.

A tenant is a pod's namespace (pods are watched: `pods: verified`, or autopath's
client-address table), else a client's whole address. Every pool of the resolver (the
kept names' asks and flights, the forwarder's waiting clients and pending names, the cold
waiters' queries, the TCP duplicates and upstream sockets) is divided max-min among the
tenants using it: one tenant alone may fill it, a tenant asking for the first time still
gets its part at once, and due kept names go in turns by tenant, a first resolution
before a retry. A target no upstream answers gets a short negative entry, so that its
lookups answer at once (SERVFAIL, EDE 22) until its retry. Each pool's fullness is a
series (mod_k8s_share_*), and its refusals a line every 10 s at most.

The upstream is a stub: names of dead.example never answered (a domain whose servers
never answer), every other name answered at once (A 192.0.2.<n>).
"""

import contextlib
import os
import random
import resource
import threading
import time
import urllib.request

import knotd
import promtext
import shipped
import stubdns
import testing
from udpflood import Flood
from faults import (external_name_service, log_lines, log_mark, namespace, pod, wait_for,
                    wait_log)

tests = testing.Tests()

ATTACKER = "127.0.0.21"                  # a pod of namespace "attacker"
NOISY = [f"127.0.0.{51 + i}" for i in range(4)]   # four pods of namespace "noisy"
OTHERS = [(f"team{k}", f"127.0.0.{31 + k}") for k in range(10)]  # a pod per namespace
DEADLINE = 5                             # the shipped forward-timeout (seconds)


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return promtext.parse(r.read().decode())


def share(port, family, pool):
    """A pool's series (0 if the family is not served)."""
    families = metrics(port)
    return promtext.value(families, family, pool=pool) if family in families else 0.0


def dead_domain_upstream(up):
    """The stub never answers a name of dead.example."""
    answer = up.answer
    up.answer = lambda query, ttl, tcp: None if b"\x04dead\x07example" in query.lower() \
        else answer(query, ttl, tcp)


@contextlib.contextmanager
def deployment(extra_options=(), nofile=None):
    """The shipped deployment with a stub upstream (dead.example dead) and pods watched;
    knotd's descriptor limit `nofile` if given."""
    http_port = knotd.free_port()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with stubdns.StubDNS() as up:
        dead_domain_upstream(up)
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), hard))
        try:
            cm = shipped.deployment([up.address], metrics_port=http_port,
                                    extra_options=["pods: verified", *extra_options])
            c = cm.__enter__()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        try:
            c.up, c.http_port = up, http_port
            yield c
        finally:
            cm.__exit__(None, None, None)


def server_of(c):
    return (knotd.Knotd.address, c.port)


def add_pod(c, ns, name, ip):
    c.sim.apply(namespace(ns))
    c.sim.apply(pod(ns, name, ip))


def first_lookup(c, name, source, timeout=DEADLINE + 2):
    """A client's first query of a name: its answer and how long it took."""
    start = time.monotonic()
    answer = c.query(name, "A", edns=True, timeout=timeout, extra=("-b", source))
    return answer, time.monotonic() - start


def target_of(name):
    return f"192.0.2.{stubdns._number(name)}"


def others_externalnames(c, suffix):
    """One ExternalName per other namespace (team<k>/ext -> t<k>.<suffix>), and its pod."""
    names = []
    for ns, ip in OTHERS:
        add_pod(c, ns, "client", ip)
        c.sim.apply(external_name_service(ns, "ext", f"{ns}.{suffix}"))
        names.append((f"ext.{ns}.svc.cluster.local.", f"{ns}.{suffix}.", ip))
    for name, _, _ in names:
        c.expect_answer(name, "TXT", "NOERROR", timeout=20)
    return names


def expect_answered(c, lookups, what):
    """Each (name, target, source)'s first lookup answers the CNAME and the target's
    address, within the deadline."""
    results = []
    for name, target, source in lookups:
        answer, took = first_lookup(c, name, source)
        got = {(rr.owner, rr.type, rr.rdata) for rr in answer.answer}
        ok = answer.rcode == "NOERROR" and (target, "A", target_of(target)) in got
        results.append((ok, f"{name} from {source}: {answer.rcode} in {took:.1f} s"))
    failed = [text for ok, text in results if not ok]
    print(f"{what}: " + "; ".join(text for _, text in results))
    testing.expect_equal(failed, [], f"{what}: {len(results) - len(failed)} of "
                         f"{len(results)} answered")
    return results


@tests.case
def three_hundred_externalnames_to_a_dead_domain_leave_every_other_namespace_its_first_lookups():
    with deployment() as c:
        mark = log_mark(c.server)
        add_pod(c, "attacker", "flood", ATTACKER)
        for i in range(300):
            c.sim.apply(external_name_service("attacker", f"s{i}", f"t{i}.dead.example"))
        others = others_externalnames(c, "example.org")
        c.expect_answer("s299.attacker.svc.cluster.local.", "TXT", "NOERROR", timeout=20)

        # One pod, 50 queries a second over the 300 services (each target waits its
        # whole deadline before its negative entry).
        name = lambda i: f"s{i % 300}.attacker.svc.cluster.local."
        with Flood(server_of(c), [ATTACKER], 50, name) as flood:
            time.sleep(DEADLINE + 1)  # The flood's flights and slots are all taken.
            flights = share(c.http_port, "mod_k8s_share_used", "kept_flights")
            expect_answered(c, others, "the other namespaces' first ExternalName lookups")
        testing.expect(flights >= 32, f"the flood held only {flights:.0f} flights")
        testing.expect(flood.sent >= 50 * (DEADLINE + 1), f"the flood sent {flood.sent}")

        # After the flood: a dead target answers at once, SERVFAIL with EDE 22, until its
        # retry (logged, counted); a new target resolves on its first query.
        answer, took = first_lookup(c, "s0.attacker.svc.cluster.local.", ATTACKER)
        testing.expect(answer.rcode == "SERVFAIL" and answer.ede_code == 22 and took < 1,
                       f"a dead target: {answer.summary()} in {took:.2f} s")
        c.sim.apply(external_name_service("team0", "fresh", "fresh.example.org"))
        c.expect_answer("fresh.team0.svc.cluster.local.", "TXT", "NOERROR", timeout=20)
        answer, took = first_lookup(c, "fresh.team0.svc.cluster.local.", OTHERS[0][1])
        testing.expect(answer.rcode == "NOERROR" and took < 1,
                       f"a new target after the flood: {answer.summary()} in {took:.2f} s "
                       f"(the issue: about 21 s)")
        # Pushed once a second: the flights of the first deadline at least.
        wait_for(lambda: promtext.value(metrics(c.http_port),
                                        "mod_k8s_forward_kept_timeouts_total") >= 32,
                 "the dead targets' timeouts counted", timeout=5)
        # Hundreds of dead targets: a line every 10 s, saying how many failed besides.
        wait_log(c.server, "more failed since the last line", mark, timeout=12)
        lines = log_lines(c.server, "upstream resolution of", mark)
        testing.expect(0 < len(lines) <= 3, f"{len(lines)} lines about the dead targets")


@tests.case
def four_pods_of_one_namespace_at_40_qps_leave_other_clients_their_first_lookups():
    # Autopath walks a pod's unique outside names (nothing created): each waits in the
    # cold waiter until its deadline. The four pods are one tenant: their namespace.
    with deployment(extra_options=["autopath: on"]) as c:
        for k, ip in enumerate(NOISY):
            add_pod(c, "noisy", f"p{k}", ip)
        others = others_externalnames(c, "example.org")
        tag = random.randrange(1 << 30)
        name = lambda i: f"u{tag}-{i}.dead.example.noisy.svc.cluster.local."
        with Flood(server_of(c), NOISY, 40, name):
            time.sleep(DEADLINE / 2)
            waiting = share(c.http_port, "mod_k8s_share_used", "cold_waiting")
            expect_answered(c, others, "other clients' first ExternalName lookups")
            tenants = share(c.http_port, "mod_k8s_share_tenants", "cold_waiting")
        testing.expect(waiting >= 64, f"the four pods held only {waiting:.0f} cold slots")
        print(f"the four pods held {waiting:.0f} cold slots as {tenants:.0f} tenant(s)")
        testing.expect(tenants <= 2, f"{tenants:.0f} tenants: the four pods are one namespace")
        testing.expect(share(c.http_port, "mod_k8s_share_refused_total", "cold_waiting") > 0,
                       "the namespace's excess was refused")
        testing.expect(log_lines(c.server, "cold_waiting full"),
                       "no line about the cold waiter's pool")


@tests.case
def four_addresses_at_300_qps_leave_other_names_no_forwarder_busy():
    # Addresses that are no pods: four tenants. Names no upstream answers, each pending
    # its whole deadline: 1,200 a second would take the 1,024 pending names ten times.
    with deployment(nofile=65536) as c:
        flooders = [f"127.0.0.{61 + i}" for i in range(4)]
        tag = random.randrange(1 << 30)
        with Flood(server_of(c), flooders, 300,
                   lambda i: f"f{tag}-{i}.dead.example.") as flood:
            time.sleep(DEADLINE / 2)
            pending = share(c.http_port, "mod_k8s_share_used", "forward_pending")
            print(f"the floods held {pending:.0f} pending names")
            names = [f"other{tag}-{i}.example.net." for i in range(10)]
            answers = [first_lookup(c, n, "127.0.0.71")[0] for n in names]
        testing.expect_equal([(a.rcode, a.ede) for a in answers], [("NOERROR", [])] * 10,
                             "the other names (not forwarder busy)")
        testing.expect(pending >= 1024, f"the floods held only {pending:.0f} pending names")
        testing.expect(flood.rcodes.get("SERVFAIL", 0) > 0, "the floods' excess refused")


@tests.case
def four_udp_addresses_do_not_exhaust_knotds_descriptors_at_a_limit_of_1024():
    with deployment(nofile=1024) as c:
        pid = c.server.pid
        flooders = [f"127.0.0.{61 + i}" for i in range(4)]
        tag = random.randrange(1 << 30)
        peak = [0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                try:
                    peak[0] = max(peak[0], len(os.listdir(f"/proc/{pid}/fd")))
                except OSError:
                    pass
                time.sleep(0.01)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        mark = log_mark(c.server)
        with Flood(server_of(c), flooders, 300, lambda i: f"f{tag}-{i}.dead.example."):
            time.sleep(DEADLINE / 2)
            names = [f"other{tag}-{i}.example.net." for i in range(10)]
            answers = [first_lookup(c, n, "127.0.0.71")[0] for n in names]
            tcp = c.query("kubernetes.default.svc.cluster.local.", "A", tcp=True, timeout=5)
        done.set()
        sampler.join()
        print(f"knotd held {peak[0]} descriptors at most of 1024")
        testing.expect_equal([a.rcode for a in answers], ["NOERROR"] * 10, "the other names")
        testing.expect(peak[0] < 1024 // 2, f"knotd held {peak[0]} descriptors of 1024")
        testing.expect_equal(tcp.rcode, "NOERROR", "a TCP query meanwhile")
        testing.expect_equal(log_lines(c.server, "Too many open files", mark), [],
                             "knotd ran out of descriptors")
        testing.expect(share(c.http_port, "mod_k8s_share_refused_total", "upstream_sockets") > 0,
                       "the floods' sockets past their part were refused")

tests.main()
