#!/usr/bin/env python3
"""A group of servers' own settings (issue 41, item 7): forward-options and forward-cache.

The shipped deployment forwards to stub upstreams (tests/lib/stubdns.py) with a group's
settings as CoreDNS's forward and cache plugins have them in a server block: the order
servers are asked in (policy random, round_robin, sequential), max_fails, the transport
(force_tcp, prefer_udp, else the client's), an upstream's error RCODE as the answer, and
the cache (TTLs kept between a minimum and a maximum, every record of an answer with the
same TTL counting down, a SERVFAIL kept 5 s, off). A group without them is the forwarder's
own way (tests/integration/forward/test_forward.py). CoreDNS itself answers the same
settings in tests/integration/packaging/test_migrate_coredns.py.
"""

import re
import struct
import time

import shipped
import stubdns
import testing
import wire

tests = testing.Tests()


def deployment(*upstreams, options=(), server=()):
    """The shipped deployment forwarding to `upstreams`, with more mod-k8s `options` and
    `server` lines."""
    if not server:
        return shipped.deployment([u.address for u in upstreams], list(options))
    return _with_server(upstreams, options, server)


def _with_server(upstreams, options, server):
    import contextlib
    import knotd
    from cluster import Cluster

    @contextlib.contextmanager
    def run():
        if knotd.load_mode() == "file":
            raise testing.Skip("the shipped config relies on auto-loading")
        cluster = Cluster(zones=("cluster.local.",))
        text = shipped.config(cluster.sim.path(cluster.kubeconfig), [u.address for u in upstreams],
                              list(options))
        text = re.sub(r"(?m)^server:$", "server:\n" + "".join(f"    {line}\n" for line in server)
                      .rstrip("\n"), text, count=1)
        cluster.knotd_options["config"] = text
        with cluster:
            yield cluster
    return run()


def first_asked(stubs, name):
    """Which stub (its index) got `name` first, or None."""
    for i, stub in enumerate(stubs):
        if any(n == name for n, _ in stub.names()):
            return i
    return None


def a_records(answer):
    return sorted(rr for rr in answer.answer if rr.type == "A")


def ttls(answer, rtype=None):
    return sorted({rr.ttl for rr in answer.answer | answer.authority
                   if rtype is None or rr.type == rtype})


# -- the order servers are asked in


@tests.case
def round_robin_asks_the_next_server_first_for_each_name_as_coredns_starting_at_the_second():
    with stubdns.StubDNS() as a, stubdns.StubDNS() as b, \
            deployment(a, b, options=['forward-options: ". { policy round_robin }"',
                                      'forward-cache: ". off"']) as c:
        order = []
        for i in range(6):
            name = f"rr{i}.example.com."
            testing.expect(c.query(name).rcode == "NOERROR", name)
            order.append(first_asked([a, b], name))
        testing.expect_equal(order, [1, 0, 1, 0, 1, 0], "the server each name went to")


@tests.case
def random_spreads_names_over_the_servers_and_sequential_keeps_to_the_first():
    with stubdns.StubDNS() as a, stubdns.StubDNS() as b, \
            deployment(a, b, options=['forward-options: ". { policy random }"']) as c:
        for i in range(40):
            c.query(f"rnd{i}.example.com.")
        got = [first_asked([a, b], f"rnd{i}.example.com.") for i in range(40)]
        testing.expect(got.count(0) >= 5 and got.count(1) >= 5, f"not spread: {got}")
    with stubdns.StubDNS() as a, stubdns.StubDNS() as b, \
            deployment(a, b, options=['forward-options: ". { policy sequential }"']) as c:
        for i in range(10):
            c.query(f"seq{i}.example.com.")
        got = [first_asked([a, b], f"seq{i}.example.com.") for i in range(10)]
        testing.expect_equal(got, [0] * 10, "the server each name went to")


# -- failures


@tests.case
def max_fails_keeps_a_silent_server_in_use_for_that_many_failures_then_marks_it_down():
    with stubdns.StubDNS(mode="silent") as a, stubdns.StubDNS() as b, \
            deployment(a, b, options=['forward-options: ". { policy sequential ; max_fails 2 }"']) as c:
        for i in range(5):
            name = f"mf{i}.example.com."
            testing.expect(c.query(name).rcode == "NOERROR", name)
        asked = [n for n, _ in a.names() if n.startswith("mf")]
        # Three failures in a row are more than 2: down after the third name.
        testing.expect_equal(asked, ["mf0.example.com.", "mf1.example.com.", "mf2.example.com."],
                             "names the silent server got")
        testing.eventually(lambda: testing.expect("marked down" in c.log_text(), "no down line"))
    # Without forward-options: down at the first failure.
    with stubdns.StubDNS(mode="silent") as a, stubdns.StubDNS() as b, deployment(a, b) as c:
        for i in range(3):
            c.query(f"mf{i}.example.com.")
        testing.expect_equal([n for n, _ in a.names() if n.startswith("mf")], ["mf0.example.com."],
                             "names the silent server got")


@tests.case
def an_upstreams_servfail_is_the_answer_as_coredns_relays_it_without_forward_options_the_next_is_asked():
    with stubdns.StubDNS(mode="servfail") as a, stubdns.StubDNS() as b, \
            deployment(a, b, options=['forward-options: ". { policy sequential }"',
                                      'forward-cache: ". { servfail 0 }"']) as c:
        answer = c.query("sf.example.com.")
        testing.expect(answer.rcode == "SERVFAIL", answer.summary())
        testing.expect(first_asked([b], "sf.example.com.") is None, "the second server was asked")
    with stubdns.StubDNS(mode="servfail") as a, stubdns.StubDNS() as b, deployment(a, b) as c:
        answer = c.query("sf.example.com.")
        testing.expect(answer.rcode == "NOERROR", answer.summary())


# -- the transport


@tests.case
def the_upstream_is_asked_over_the_clients_transport_unless_force_tcp_or_prefer_udp():
    cases = [("", {"udp": "udp", "tcp": "tcp"}),
             (" { force_tcp }", {"udp": "tcp", "tcp": "tcp"}),
             (" { prefer_udp }", {"udp": "udp", "tcp": "udp"})]
    for block, expect in cases:
        with stubdns.StubDNS() as up, \
                deployment(up, options=[f'forward-options: ".{block}"', 'forward-cache: ". off"']) as c:
            for proto in ("udp", "tcp"):
                name = f"tr-{proto}.example.com."
                testing.expect(c.query(name, tcp=(proto == "tcp")).rcode == "NOERROR", name)
                got = [t for n, t in up.transports() if n == name]
                testing.expect_equal(got[:1], [expect[proto]], f"forward-options .{block}: {name}")
    # The forwarder's own way: UDP first, whatever the client.
    with stubdns.StubDNS() as up, deployment(up) as c:
        c.query("tr.example.com.", tcp=True)
        testing.expect_equal([t for n, t in up.transports() if n == "tr.example.com."], ["udp"],
                             "transports without forward-options")


# -- the cache


def two_ttls(query, ttl, tcp):
    """A CNAME (TTL 300) to a name with an A record (TTL 60)."""
    ident, flags = struct.unpack_from(">HH", query)
    name, qtype, end = stubdns._question(query)
    target = wire.encode_name("target.example.net.")
    cname = b"\xc0\x0c" + struct.pack(">HHIH", 5, 1, 300, len(target)) + target
    a = target + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([192, 0, 2, 99])
    header = struct.pack(">HHHHHH", ident, 0x8180 | (flags & 0x0100), 1, 2, 0, 0)
    return header + query[12:end] + cname + a


@tests.case
def coredns_cache_serves_every_record_with_the_least_ttl_counting_down():
    with stubdns.StubDNS(answer=two_ttls) as up, \
            deployment(up, options=['forward-cache: ". 3600"', "forward-cache-max-ttl: 3600"]) as c:
        first = c.query("two.example.com.")
        testing.expect_equal(ttls(first), [60], f"TTLs of the first answer:\n{first.text}")
        time.sleep(2.1)
        second = c.query("two.example.com.")
        testing.expect(ttls(second) in ([58], [57]), f"TTLs of the cached answer:\n{second.text}")
        testing.expect_equal(len([n for n, _ in up.names() if n == "two.example.com."]), 1,
                             "times the upstream was asked")
    # The forwarder's own cache keeps each record's TTL (up to forward-cache-max-ttl).
    with stubdns.StubDNS(answer=two_ttls) as up, \
            deployment(up, options=["forward-cache-max-ttl: 3600"]) as c:
        testing.expect_equal(ttls(c.query("two.example.com.")), [60, 300], "TTLs, own cache")


@tests.case
def coredns_cache_holds_ttls_between_its_minimum_and_maximum_for_success_and_denial():
    opts = ['forward-cache: ". 60 { success 9984 60 10 ; denial 9984 20 3 }"']
    with stubdns.StubDNS(ttl=300) as up, deployment(up, options=opts) as c:
        testing.expect_equal(ttls(c.query("long.example.com.")), [60], "capped at 60")
        testing.expect_equal(ttls(c.query("nxlong.example.com.")), [20], "denial capped at 20")
    with stubdns.StubDNS(ttl=2) as up, deployment(up, options=opts) as c:
        testing.expect_equal(ttls(c.query("short.example.com.")), [10], "raised to 10")
        testing.expect_equal(ttls(c.query("nxshort.example.com.")), [3], "denial raised to 3")


@tests.case
def a_group_without_cache_relays_answers_as_they_came_and_asks_again():
    with stubdns.StubDNS(ttl=300) as up, deployment(up, options=['forward-cache: ". off"']) as c:
        for _ in range(2):
            testing.expect_equal(ttls(c.query("off.example.com.")), [300], "TTL relayed")
        testing.expect_equal(len([n for n, _ in up.names() if n == "off.example.com."]), 2,
                             "times the upstream was asked")


@tests.case
def a_servfail_is_kept_five_seconds_as_coredns_keeps_it():
    with stubdns.StubDNS(mode="servfail") as up, \
            deployment(up, options=['forward-options: "."', 'forward-cache: ". 30"']) as c:
        testing.expect(c.query("kept.example.com.").rcode == "SERVFAIL", "first")
        up.mode = "answer"
        testing.expect(c.query("kept.example.com.").rcode == "SERVFAIL", "within 5 s")
        time.sleep(5.2)
        answer = c.query("kept.example.com.")
        testing.expect(answer.rcode == "NOERROR", f"after 5 s: {answer.summary()}")


@tests.case
def a_stub_domains_cache_is_its_own():
    with stubdns.StubDNS(ttl=300) as up, stubdns.StubDNS(ttl=300) as stub, \
            deployment(up, options=[f'forward-stub: "corp.example={stub.address}"',
                                    'forward-cache: "corp.example 100"']) as c:
        testing.expect_equal(ttls(c.query("host.corp.example.")), [100], "the stub domain's")
        testing.expect_equal(ttls(c.query("www.example.com.")), [30], "the default servers'")


@tests.case
def forward_options_and_forward_cache_values_coredns_refuses_are_refused_by_the_check():
    import knotd
    for value, reason in [('forward-options: ". { policy least_conn }"', "unknown policy"),
                          ('forward-options: ". { force_tcp ; prefer_udp }"', "together"),
                          ('forward-cache: ". 0"', "more than 0"),
                          ('forward-cache: ". { servfail 6m }"', "5 minutes"),
                          ('forward-cache: ". { prefetch 10 }"', "prefetch"),
                          ('forward-cache: "bad..zone 30"', "no domain name")]:
        text = shipped.config("/nonexistent", ["192.0.2.1"], [value])
        result = knotd.check_config(config=text)
        testing.expect(result.returncode != 0 and reason in result.stdout,
                       f"{value}: {result.returncode}\n{result.stdout}")


# -- the largest UDP answer


def headless_service(count):
    """A headless Service many.shop with `count` ready IPv4 endpoints."""
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "many", "namespace": "shop"},
         "spec": {"clusterIP": "None", "ports": [{"name": "p", "port": 80, "protocol": "TCP"}]}},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "many-1", "namespace": "shop",
                      "labels": {"kubernetes.io/service-name": "many"}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": [f"10.244.9.{i + 1}"], "conditions": {"ready": True}}
                       for i in range(count)],
         "ports": [{"name": "p", "port": 80, "protocol": "TCP"}]}]}


@tests.case
def bufsize_cuts_late_and_zone_answers_over_udp_as_coredns_bufsize():
    with stubdns.StubDNS() as up, deployment(up, options=["bufsize: 512"]) as c:
        answer = c.query("big.example.com.", bufsize=1232)
        testing.expect("tc" in answer.flags, f"a late answer not truncated:\n{answer.text}")
        testing.expect(answer.edns is not None and answer.edns["udp_size"] == 512,
                       f"the payload advertised:\n{answer.text}")
        whole = c.query("big.example.com.", tcp=True)
        testing.expect_equal(len(a_records(whole)), 60, "records over TCP")
        # knotd's own answers: 512 bytes at most (a headless service of 50 addresses).
        c.sim.apply(headless_service(50))
        c.eventually(lambda: testing.expect(
            len(a_records(c.query("many.shop.svc.cluster.local.", tcp=True))) == 50, "synced"))
        cut = c.query("many.shop.svc.cluster.local.", bufsize=4096)
        testing.expect("tc" in cut.flags, f"a zone answer not truncated:\n{cut.text}")
    with stubdns.StubDNS() as up, deployment(up, server=["udp-max-payload: 1220"]) as c:
        answer = c.query("big.example.com.", bufsize=4096)
        testing.expect(answer.edns is not None and answer.edns["udp_size"] == 1220,
                       f"knotd's udp-max-payload advertised:\n{answer.text}")
    with stubdns.StubDNS() as up, deployment(up) as c:
        answer = c.query("big.example.com.", bufsize=1232)
        testing.expect(len(a_records(answer)) == 60, f"whole at 1232:\n{answer.text}")


tests.main()
