#!/usr/bin/env python3
"""CoreDNS's rewrite and template lines served by mod-k8s's global instance (issue 41,
items 3 and 4; doc/mod-k8s.rst, "Rewriting and templates").

knotd with the module as its global instance and its cluster zones, fed by the API
simulator's sample cluster, a stub upstream for the names outside: a rewritten name
answers from the zone it lands in (under the name the rules map it back to), a
template answers before any zone, a rewritten name outside the zones answers from the
forwarder once resolved; a CoreDNS server block's rules (`ZONE:`) apply to its names only,
the root's not to them; a query no rule touches answers as without rules; the
configuration check refuses, with the reason, what mod-k8s would not answer as CoreDNS.
The answers are compared with CoreDNS's own in tests/integration/realk8s/test_realk8s_rewrite.py.
"""

import time

import cluster
import dig
import knotd
import stubdns
import testing

tests = testing.Tests()

REWRITE = [
    r"name exact git.example.com. kubernetes.default.svc.cluster.local.",
    r"stop { name regex (.*)\.corp\.example\. {1}.shop.svc.cluster.local. ; "
    r"answer name (.*)\.shop\.svc\.cluster\.local\. {1}.corp.example. }",
    r"name regex (.*)\.bare\.example\. {1}.shop.svc.cluster.local.",
    r"name exact search.example.com. www.example.org.",
    r"name regex ^raw\.(.*) {1}",
    r"continue ttl suffix .kube-system.svc.cluster.local. 60",
    # The root's rule for .lol names, and CoreDNS server blocks of their own below it: k3s's
    # coredns-custom doma.lol.server, and a block without rules.
    r"name suffix .lol. .svc.cluster.local. answer auto",
    r"doma.lol: continue { name regex (.*)\.doma\.lol kubernetes.default.svc.cluster.local ; answer auto }",
    "quiet.lol:",
]
TEMPLATE = [
    'IN A host.k3d.internal { answer "{{ .Name }} 60 IN A 172.18.0.1" }',
    "ANY AAAA v4only.example { rcode NOERROR }",
    r'IN TXT t.example { match ^(?P<x>[a-z]+)\.t\.example\.$ ; answer "{{ .Name }} 30 IN TXT {{ .Group.x }}" }',
    # A block's template without zones: its block's.
    'doma.lol: IN TXT { answer "{{ .Name }} 30 IN TXT {{ .Zone }}" }',
]


def rrs(answer, rtype=None):
    return sorted((rr.owner.lower(), rr.ttl, rr.type, rr.rdata) for rr in answer.answer
                  if rtype is None or rr.type == rtype)


class World:
    """A cluster whose knotd has the rules, a stub upstream."""

    def __enter__(self):
        self.up = stubdns.StubDNS().__enter__()
        try:
            self.c = cluster.Cluster(module={"rewrite": REWRITE, "template": TEMPLATE,
                                             "forward": [self.up.address]},
                                     template={"global-module": "mod-k8s/default"}).__enter__()
        except BaseException:
            self.up.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.c.__exit__(*exc)
        finally:
            self.up.__exit__(*exc)
        return False

    def is_running(self):
        return self.c.is_running()

    def log_text(self):
        return self.c.log_text()

    def query(self, name, rtype="A"):
        return self.c.query(name, rtype)


tests.fixture(World, "knotd with rewrite and template rules, the simulator, a stub upstream")


@tests.case
def an_outside_name_rewritten_into_the_cluster_zone_answers_under_its_own_name(w):
    a = w.query("git.example.com.")
    testing.expect_equal((a.rcode, rrs(a)), ("NOERROR", [("git.example.com.", 5, "A", "10.96.0.1")]),
                         "git.example.com A")
    testing.expect("aa" in a.flags, f"not authoritative: {a.summary()}")
    testing.expect_equal(w.up.names().count(("git.example.com.", 1)), 0, "asked upstream")


@tests.case
def the_block_form_of_k3s_custom_overrides_maps_its_answers_back(w):
    a = w.query("web.corp.example.")
    testing.expect_equal(rrs(a), [("web.corp.example.", 5, "A", "10.96.12.34")], "web.corp.example")
    a = w.query("nope.corp.example.")
    testing.expect_equal((a.rcode, rrs(a)), ("NXDOMAIN", []), "a rewritten name that is none")
    # The cluster zone's SOA, as its own negative answers have it (its queries left a copy).
    testing.expect_equal(sorted((r.owner, r.type) for r in a.authority),
                         [("cluster.local.", "SOA")], f"authority: {a.text}")


@tests.case
def without_an_answer_option_the_answer_is_owned_by_the_rewritten_name(w):
    a = w.query("web.bare.example.")
    testing.expect_equal(rrs(a), [("web.shop.svc.cluster.local.", 5, "A", "10.96.12.34")],
                         "web.bare.example (CoreDNS answers so)")


@tests.case
def a_rewritten_name_that_is_no_name_is_servfail(w):
    testing.expect_equal(w.query("raw.kubernetes.default.svc.cluster.local.").rcode, "SERVFAIL",
                         "raw.<name>: {1}. is <name>.. (two dots)")


@tests.case
def a_ttl_rule_clamps_a_cluster_names_answer(w):
    a = w.query("kube-dns.kube-system.svc.cluster.local.")
    testing.expect(a.answer and all(rr.ttl == 60 for rr in a.answer), f"not 60 s: {a.text}")
    a = w.query("kubernetes.default.svc.cluster.local.")
    testing.expect(a.answer and all(rr.ttl == 5 for rr in a.answer), f"not 5 s: {a.text}")


@tests.case
def a_template_answers_before_any_zone(w):
    a = w.query("host.k3d.internal.")
    testing.expect_equal((a.rcode, rrs(a)), ("NOERROR", [("host.k3d.internal.", 60, "A", "172.18.0.1")]),
                         "host.k3d.internal A")
    a = w.query("x.v4only.example.", "AAAA")
    testing.expect_equal((a.rcode, rrs(a), sorted(a.authority)), ("NOERROR", [], []), "AAAA blocked")
    a = w.query("foo.t.example.", "TXT")
    testing.expect_equal(rrs(a), [("foo.t.example.", 30, "TXT", '"foo"')], "TXT of the group")
    testing.expect_equal(w.query("1.t.example.", "TXT").rcode, "SERVFAIL",
                         "the zone matched, not the regex, no fallthrough")
    # Another type of the template's zone goes on: forwarded.
    a = w.query("host.k3d.internal.", "AAAA")
    testing.expect_equal(a.rcode, "NOERROR", "host.k3d.internal AAAA")
    testing.expect(("host.k3d.internal.", 28) in w.up.names(), "not forwarded")


@tests.case
def a_name_rewritten_outside_the_zones_answers_once_resolved(w):
    first = w.query("search.example.com.")
    testing.expect(first.rcode in ("SERVFAIL", "NOERROR"), f"first: {first.summary()}")

    def resolved():
        a = w.query("search.example.com.")
        testing.expect(a.rcode == "NOERROR" and len(rrs(a, "A")) == 1, f"{a.summary()} {a.text}")
        testing.expect_equal(rrs(a, "A")[0][0], "search.example.com.", "owner")
    testing.eventually(resolved, timeout=5)
    testing.expect(("www.example.org.", 1) in w.up.names(), f"not asked: {w.up.names()}")


@tests.case
def a_query_no_rule_touches_answers_as_without_rules(w):
    a = w.query("kubernetes.default.svc.cluster.local.")
    testing.expect_equal(rrs(a), [("kubernetes.default.svc.cluster.local.", 5, "A", "10.96.0.1")],
                         "kubernetes.default")
    a = w.query("nope.default.svc.cluster.local.")
    testing.expect(a.rcode == "NXDOMAIN" and any(r.type == "SOA" for r in a.authority),
                   f"NXDOMAIN with the zone's SOA: {a.text}")
    a = w.query("www.example.net.")
    testing.expect_equal(a.rcode, "NOERROR", "forwarded")


@tests.case
def a_server_blocks_rules_apply_to_its_names_and_the_roots_do_not(w):
    # The root's rule: a .lol name outside the blocks is a service's.
    a = w.query("web.shop.lol.")
    testing.expect_equal((a.rcode, rrs(a)), ("NOERROR", [("web.shop.lol.", 5, "A", "10.96.12.34")]),
                         "web.shop.lol (the root's suffix rule)")
    # doma.lol's block: its rule, not the root's (which makes web.shop.doma.svc.cluster.local).
    a = w.query("web.shop.doma.lol.")
    testing.expect_equal((a.rcode, rrs(a)), ("NOERROR", [("web.shop.doma.lol.", 5, "A", "10.96.0.1")]),
                         "web.shop.doma.lol (the block's rule)")
    # A name of the block that its rules do not match: no rule at all, forwarded (the
    # root's rule would make it doma.svc.cluster.local, NXDOMAIN).
    a = w.query("doma.lol.")
    testing.expect_equal((a.rcode, [(o, t, r) for o, _, t, r in rrs(a)]),
                         ("NOERROR", [("doma.lol.", "A", stubdns.answer_address("doma.lol."))]),
                         "doma.lol (no rule of its block matches)")
    testing.expect(("doma.lol.", 1) in w.up.names(), "doma.lol. not forwarded")
    # A block without rules: the root's leave its names alone.
    a = w.query("web.shop.quiet.lol.")
    testing.expect_equal(a.rcode, "NOERROR", f"web.shop.quiet.lol: {a.summary()}")
    testing.expect(("web.shop.quiet.lol.", 1) in w.up.names(), "web.shop.quiet.lol. not forwarded")


@tests.case
def a_server_blocks_template_answers_its_names_only(w):
    # The block's apex, which its rewrite leaves (a name below it is rewritten out of the
    # template's zone first, as CoreDNS's chain does).
    a = w.query("doma.lol.", "TXT")
    testing.expect_equal((a.rcode, rrs(a)), ("NOERROR", [("doma.lol.", 30, "TXT", '"doma.lol."')]),
                         "doma.lol TXT: the block's template, {{ .Zone }} its zone")
    a = w.query("x.doma.lol.", "TXT")
    testing.expect_equal((a.rcode, rrs(a)), ("NOERROR", []), "x.doma.lol TXT: rewritten first")
    # Outside the block: the root's rule, then the cluster zone (no TXT there).
    a = w.query("x.shop.lol.", "TXT")
    testing.expect(not any(rr.type == "TXT" for rr in a.answer), f"x.shop.lol TXT: {a.text}")
    a = w.query("x.quiet.lol.", "TXT")
    testing.expect(not any(rr.type == "TXT" and "lol" in rr.rdata for rr in a.answer),
                   f"x.quiet.lol TXT: {a.text}")


@tests.case
def a_reload_keeps_rewritten_names_answered_from_the_new_zones(w):
    # The zones' new instances replace the old ones in the list the hook reads.
    for _ in range(2):
        result = w.c.knotc("reload")
        testing.expect(result.returncode == 0, f"knotc reload: {result.stdout}")
        testing.eventually(lambda: testing.expect_equal(
            rrs(w.query("git.example.com.")), [("git.example.com.", 5, "A", "10.96.0.1")],
            "git.example.com after a reload"), timeout=10)
    a = w.query("host.k3d.internal.")
    testing.expect_equal(rrs(a), [("host.k3d.internal.", 60, "A", "172.18.0.1")], "template")


def refused(options, reason):
    def check(*_):
        result = knotd.check_config(module=options)
        testing.expect(result.returncode != 0, f"{options} accepted:\n{result.stdout}")
        testing.expect(reason in result.stdout, f"no '{reason}' in:\n{result.stdout}")
    return check


tests.add("conf-check refuses a rewrite edns0 rule with the reason",
          refused({"rewrite": ["edns0 local set 0xffee abcd"]}, "edns0 rules are not supported"))
tests.add("conf-check refuses a regex RE2 and PCRE2 read differently",
          refused({"rewrite": [r"name regex (a)\1 b"]}, "backreferences and octal escapes"))
tests.add("conf-check refuses a lookahead",
          refused({"rewrite": [r"name regex a(?=b) c"]}, "is not RE2"))
tests.add("conf-check refuses a Go template function",
          refused({"template": ['IN A e { answer "{{ parseInt .Name }} 5 A 1.2.3.4" }']},
                  "is not supported"))
tests.add("conf-check refuses a record type templates do not read",
          refused({"template": ['IN A e { answer "{{ .Name }} 5 IN HINFO a b" }']},
                  "are not supported"))
tests.add("conf-check refuses what CoreDNS refuses: more groups in TO than FROM has",
          refused({"rewrite": [r"name regex (a) {1}.{2}"]}, "uses more groups"))
tests.add("conf-check refuses a zone in two server blocks",
          refused({"rewrite": ["a.example,b.example: name exact x. y.", "b.example:"]},
                  "a zone is in one server block only"))
tests.add("conf-check refuses a block prefix that names no zones",
          refused({"template": ["a..example: IN A"]}, "is not a list of zone names"))
tests.add("conf-check accepts the rules of this file",
          lambda *_: testing.expect_equal(
              knotd.check_config(module={"rewrite": REWRITE, "template": TEMPLATE}).returncode, 0,
              "knotc conf-check"))

tests.main()
