#!/usr/bin/env python3
"""Upstream answers are hostile input (issue 33, item 3; issue 40, item 3): the
forwarder's answers checked.

An upstream (or whoever answers in its place) chooses every byte of its answer: an SOA
of another class whose rdata libknot leaves unchecked, an SOA of another zone, TTLs and
MINIMUMs of years, answers above the cache entry's size. Each case is a stub upstream
answering such a message; the shipped deployment forwards to it. What must hold: knotd
lives (run these under the sanitizer build too: MODK8S_BUILDDIR=$PWD/build-asan), the
client gets the upstream's RCODE, a negative TTL no longer than the cache's cap (30 s),
and an answer larger than an entry whole over TCP and with TC over UDP. An ExternalName
target's CNAME chain that leads into the cluster's zone stops there: the rest is
answered from the table, never from the upstream's records of a cluster name.
"""

import struct

import shipped
import stubdns
from faults import external_name_service
import testing
import wire

tests = testing.Tests()

CAP = 30  # forward-cache-max-ttl in the shipped knot.conf.


def deployment(up):
    return shipped.deployment([up.address])


def rr(owner, rtype, ttl, rdata, rclass=1):
    owner = b"\xc0\x0c" if owner is None else wire.encode_name(owner)
    return owner + struct.pack(">HHIH", rtype, rclass, ttl, len(rdata)) + rdata


def soa_rdata(minimum, serial=1):
    return (wire.encode_name("ns.example.") + wire.encode_name("hostmaster.example.") +
            struct.pack(">IIIII", serial, 3600, 600, 86400, minimum))


def message(query, rcode=0, answers=(), authority=(), tc=False):
    ident, flags = struct.unpack_from(">HH", query)
    _, _, end = stubdns._question(query)
    reply_flags = 0x8000 | (flags & 0x0100) | 0x0080 | rcode | (0x0200 if tc else 0)
    header = struct.pack(">HHHHHH", ident, reply_flags, 1, len(answers), len(authority), 0)
    return header + query[12:end] + b"".join(answers) + b"".join(authority)


def hostile(query, ttl, tcp):
    """The answers of the cases below, by the query name's first label."""
    name, qtype, _ = stubdns._question(query)
    label = name.split(".")[0].lower()
    nx = 3
    if label == "emptych":  # NXDOMAIN, an SOA of class CH with no rdata at all
        return message(query, nx, authority=[rr("example.com.", 6, 60, b"", rclass=3)])
    if label == "shortch":  # ... with a name and half of the numbers
        short = wire.encode_name("ns.example.") + b"\x00\x00\x00\x01"
        return message(query, nx, authority=[rr("example.com.", 6, 60, short, rclass=3)])
    if label == "chthenin":  # the empty CH one first, then a whole IN SOA
        return message(query, nx, authority=[rr("example.com.", 6, 60, b"", rclass=3),
                                             rr("example.com.", 6, 20, soa_rdata(20))])
    if label == "otherowner":  # an IN SOA of a zone the name is not in
        return message(query, nx, authority=[rr("other.org.", 6, 3600, soa_rdata(3600))])
    if label == "hugemin":  # MINIMUM and TTL of 68 years
        return message(query, nx, authority=[rr("example.com.", 6, 0x7fffffff,
                                                soa_rdata(0xffffffff))])
    if label == "many" and qtype == 1:  # 300 A records: 4.8 KB of wire, about 20 KB of entry
        answers = [rr(None, 1, 300, bytes([192, 0, (i >> 8) + 2, i & 0xff])) for i in range(300)]
        if not tcp:
            return message(query, tc=True)
        return message(query, answers=answers)
    if label.startswith("txt") and qtype == 16:  # one TXT of about N bytes (txt3000, txt9000)
        size = int(label[3:])
        strings = b"".join(b"\xfa" + bytes([97 + i % 26]) * 250 for i in range(size // 251))
        if not tcp:
            return message(query, tc=True)
        return message(query, answers=[rr(None, 16, 300, strings)])
    return stubdns.answer_for(query, ttl, tcp)


def negative_ttls(answer):
    """The negative TTLs a client takes from the SOAs of the authority section (RFC 2308);
    the text of an SOA it could not take one from."""
    out = []
    for soa in answer.section("authority"):
        if soa.type == "SOA":
            fields = soa.rdata.split()
            out.append(min(soa.ttl, int(fields[6])) if len(fields) == 7 else f"{soa}")
    return out


def asked(up, name):
    return sum(1 for n, _ in up.names() if n == name)


def expect_nxdomain_and_alive(c, name):
    for _ in range(2):
        answer = c.query(name, edns=True)
        testing.expect(answer.rcode == "NXDOMAIN", f"{name}: {answer.summary()}")
        for ttl in negative_ttls(answer):
            testing.expect(isinstance(ttl, int) and ttl <= CAP, f"{name}: a negative TTL of {ttl}")
    testing.expect(c.is_running(), "knotd died")
    testing.expect(c.query("kubernetes.default.svc.cluster.local.").rcode == "NOERROR",
                   "cluster names after it")
    return answer


@tests.case
def an_nxdomain_with_an_soa_of_class_ch_and_no_rdata_answers_nxdomain_and_knotd_lives():
    with stubdns.StubDNS(answer=hostile) as up, deployment(up) as c:
        answer = expect_nxdomain_and_alive(c, "emptych.example.com.")
        # Not an SOA we can take a negative TTL from: relayed without it, never kept.
        testing.expect_equal(negative_ttls(answer), [], "the CH SOA relayed")
        testing.expect(asked(up, "emptych.example.com.") == 2, f"asked {up.names()}")
        # Rdata of any class that is there at all libknot parses by its type: this message
        # is not DNS, so no upstream answered it.
        answer = c.query("shortch.example.com.", edns=True)
        testing.expect(answer.rcode == "SERVFAIL", f"shortch: {answer.summary()}")
        testing.expect(c.is_running(), "knotd died")


@tests.case
def an_nxdomain_with_a_ch_soa_and_an_in_soa_is_kept_for_the_in_one():
    with stubdns.StubDNS(answer=hostile) as up, deployment(up) as c:
        answer = expect_nxdomain_and_alive(c, "chthenin.example.com.")
        testing.expect(negative_ttls(answer) and all(ttl <= 20 for ttl in negative_ttls(answer)),
                       f"negative TTLs {negative_ttls(answer)}")
        testing.expect(asked(up, "chthenin.example.com.") == 1, f"asked {up.names()}")


@tests.case
def an_nxdomain_with_another_zones_soa_answers_nxdomain_within_the_cap():
    with stubdns.StubDNS(answer=hostile) as up, deployment(up) as c:
        expect_nxdomain_and_alive(c, "otherowner.example.com.")


@tests.case
def an_soa_with_a_minimum_of_years_is_kept_and_served_at_most_the_cap():
    with stubdns.StubDNS(answer=hostile) as up, deployment(up) as c:
        answer = expect_nxdomain_and_alive(c, "hugemin.example.com.")
        testing.expect(negative_ttls(answer), "no SOA")
        testing.expect(asked(up, "hugemin.example.com.") == 1, f"asked {up.names()}")


@tests.case
def an_answer_above_the_cache_entry_size_reaches_the_client_whole_over_tcp_and_with_tc_over_udp():
    with stubdns.StubDNS(answer=hostile) as up, deployment(up) as c:
        for tcp in (True, False):
            answer = c.query("many.example.com.", "A", tcp=tcp, edns=True)
            count = sum(1 for r in answer.answer if r.type == "A")
            if tcp:
                testing.expect(answer.rcode == "NOERROR" and count == 300,
                               f"TCP: {answer.summary()}, {count} A records")
            else:
                testing.expect(answer.rcode == "NOERROR" and "tc" in answer.flags,
                               f"UDP: {answer.summary()}, {count} A records")
        for name, size in (("txt3000.example.com.", 3000), ("txt9000.example.com.", 9000)):
            answer = c.query(name, "TXT", tcp=True)
            txt = [r for r in answer.answer if r.type == "TXT"]
            letters = sum(ch.isalpha() for ch in txt[0].rdata) if len(txt) == 1 else 0
            testing.expect(answer.rcode == "NOERROR" and letters == size // 251 * 250,
                           f"{name} over TCP: {answer.summary()}, {letters} bytes of TXT")
            answer = c.query(name, "TXT", edns=True)
            testing.expect(answer.rcode == "NOERROR" and "tc" in answer.flags,
                           f"{name} over UDP: {answer.summary()}")
        testing.expect(c.is_running(), "knotd died")


CLUSTER_NAME = "kubernetes.default.svc.cluster.local."
EVIL = bytes([6, 6, 6, 6])


def into_cluster(query, ttl, tcp):
    """Chains from outside into cluster.local, with the upstream's own A for its end."""
    name, qtype, _ = stubdns._question(query)
    label = name.split(".")[0].lower()
    if label == "evil":  # a CNAME to the API server's service, and an A for it
        return message(query, answers=[rr(None, 5, 300, wire.encode_name(CLUSTER_NAME)),
                                       rr(CLUSTER_NAME, 1, 300, EVIL)])
    if label == "evilhop":  # two hops, the second in other case, to a name that exists
        hop = "hop.example.org."
        end = "KUBERNETES.Default.SVC.cluster.local."
        return message(query, answers=[rr(None, 5, 300, wire.encode_name(hop)),
                                       rr(hop, 5, 300, wire.encode_name(end)),
                                       rr(end, 1, 300, EVIL)])
    if label == "evilnx":  # to a cluster name that does not exist
        gone = "nosuch.default.svc.cluster.local."
        return message(query, answers=[rr(None, 5, 300, wire.encode_name(gone)),
                                       rr(gone, 1, 300, EVIL)])
    return stubdns.answer_for(query, ttl, tcp)


@tests.case
def a_targets_chain_into_the_cluster_zone_is_answered_from_the_table_not_the_upstream():
    with stubdns.StubDNS(answer=into_cluster) as up, deployment(up) as c:
        cases = {"evil": ("evil.example.com.", "NOERROR"),
                 "evilhop": ("evilhop.example.com.", "NOERROR"),
                 "evilnx": ("evilnx.example.com.", "NXDOMAIN")}
        for svc, (target, _) in cases.items():
            c.sim.apply(external_name_service("default", svc, target))
        for svc, (target, rcode) in cases.items():
            name = f"{svc}.default.svc.cluster.local."
            c.expect_answer(name, "TXT", "NOERROR", timeout=20)
            answer = c.query(name, "A", edns=True, timeout=5)
            got = {(r.owner.lower(), r.type, r.rdata.lower()) for r in answer.answer}
            testing.expect(answer.rcode == rcode and "aa" in answer.flags,
                           f"{name}: {answer.summary()}")
            testing.expect(all(r.rdata != "6.6.6.6" for r in answer.answer),
                           f"{name}: the upstream's record of a cluster name: {got}")
            testing.expect((name, "CNAME", target) in got, f"{name}: its CNAME: {got}")
            if rcode == "NOERROR":
                testing.expect((CLUSTER_NAME, "A", "10.96.0.1") in got,
                               f"{name}: the table's address of {CLUSTER_NAME}: {got}")
        testing.expect(c.is_running(), "knotd died")


tests.main()
