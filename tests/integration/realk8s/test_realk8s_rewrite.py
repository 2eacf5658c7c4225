#!/usr/bin/env python3
"""Differential: CoreDNS's rewrite and template, and their translation served by mod-k8s.

One Corefile's `rewrite` and `template` lines (the forms real Corefiles use: exact,
suffix, prefix, substring and regex names with `answer auto` and `answer name`, the
`stop { ... }` block of k3s's coredns-custom overrides, `continue` chains, `type`,
`ttl` and `rcode` rules; templates with a zone, `match` regexes and their groups,
`answer`, `additional`, `authority`, `rcode`, `fallthrough`, a CNAME, NOERROR for AAAA)
are served by the project's CoreDNS build (tests/realk8s/build) beside its kubernetes
plugin, and the same lines, copied into mod-k8s's `rewrite` and `template` options, by
knotd + mod-k8s (its global instance): both watch one real kube-apiserver and forward
to one stub upstream. Every question is asked of both; the RCODE, the ANSWER section
with its TTLs and the AUTHORITY section must be the same, but for the differences in
KNOWN, each explained in doc/mod-k8s.rst ("Rewriting and templates"). A second case
serves rules of two server blocks (k3s's coredns-custom form) beside the root's.

Skips (exit 77) where the control plane or CoreDNS is not built.
"""

import time

import cluster
import dig
import realk8s
import stubdns
import testing
from realk8s import namespace, pod, service

realk8s.skip_unless_available(("etcd", "k8s", "coredns"))

tests = testing.Tests()
TTL = 5

REWRITE = [
    # A homelab's split horizon: one outside name is a service (exact: answered back).
    r"name exact web.example.com. web.shop.svc.cluster.local.",
    # k3s's coredns-custom and AKS's documented form.
    r"stop { name regex (.*)\.corp\.example\. {1}.shop.svc.cluster.local. ; "
    r"answer name (.*)\.shop\.svc\.cluster\.local\. {1}.corp.example. }",
    r"name suffix .intern. .svc.cluster.local. answer auto",
    r"name prefix api. kubernetes.default.svc. answer auto",
    r"name substring kube svc answer auto",
    r"continue name regex ^legacy-(.*)\.apps\. {1}.apps.",
    r"name suffix .apps. .shop.svc.cluster.local. answer auto",
    # No answer option: CoreDNS answers under the rewritten name.
    r"name regex (.*)\.bare\.example\. {1}.shop.svc.cluster.local.",
    r"name exact search.example.com. www.example.org.",
    r"name regex ^(.*)\.auto\.example\.$ {1}.shop.svc.cluster.local. answer auto",
    r"continue name suffix .two.example. .one.example. answer auto",
    r"name suffix .one.example. .shop.svc.cluster.local. answer auto",
    r"name exact alias.example. host.k3d.internal.",
    r"type HINFO A",
    r"continue ttl suffix .shop.svc.cluster.local. 60-300",
    r"rcode exact nxrc.shop.svc.cluster.local. NXDOMAIN NOERROR",
]

TEMPLATE = [
    'IN A host.k3d.internal { answer "{{ .Name }} 60 IN A 172.18.0.1" }',
    "ANY AAAA v4only.example { rcode NOERROR }",
    r'IN TXT t.example { match ^(?P<x>[a-z]+)\.t\.example\.$ ; '
    r'answer "{{ .Name }} 30 IN TXT {{ .Group.x }} {{ index .Match 1 }} {{ .Type }} {{ .Class }}" ; '
    r'authority "{{ .Zone }} 60 IN SOA ns.{{ .Zone }} hostmaster.{{ .Zone }} (1 60 60 60 60)" }',
    r'IN A ip.example { match "^ip-(?P<a>[0-9]+)-(?P<b>[0-9]+)-(?P<c>[0-9]+)-(?P<d>[0-9]+)\.ip\.example\.$" ; '
    r'answer "{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}" ; '
    r'fallthrough }',
    r'IN PTR 99.in-addr.arpa { match ^(?P<d>[0-9]+)\.(?P<c>[0-9]+)\.(?P<b>[0-9]+)\.99\.in-addr\.arpa\.$ ; '
    r'answer "{{ .Name }} 60 IN PTR ip-99-{{ .Group.b }}-{{ .Group.c }}-{{ .Group.d }}.ip.example." }',
    'IN A cn.example { answer "{{ .Name }} 60 IN CNAME web.shop.svc.cluster.local." }',
    'ANY ANY invalid { rcode NXDOMAIN ; '
    'authority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)" }',
    'IN TXT whoami.example { answer "{{ .Name }} 0 IN TXT {{ .Remote }}" }',
    'IN MX mx.example { answer "{{ .Name }} 60 IN MX 10 mail.{{ .Zone }}" ; '
    'additional "mail.{{ .Zone }} 60 IN A 192.0.2.25" }',
]

QUESTIONS = [(n if n.endswith(".") else n + ".", t) for n, t in [
    ("web.example.com", "A"), ("web.example.com", "AAAA"), ("WEB.Example.com", "A"),
    ("web.corp.example", "A"), ("web.corp.example", "AAAA"), ("nope.corp.example", "A"),
    ("db.corp.example", "A"), ("h0.db.corp.example", "A"),
    ("web.shop.intern", "A"), ("web.shop.intern", "AAAA"), ("db.shop.intern", "A"),
    ("api.cluster.local", "A"),
    ("web.shop.kube.cluster.local", "A"),
    ("legacy-web.apps", "A"), ("web.apps", "A"), ("ext.apps", "CNAME"),
    ("web.bare.example", "A"),
    ("alias.example", "A"),
    ("web.shop.svc.cluster.local", "HINFO"),
    ("web.shop.svc.cluster.local", "A"), ("db.shop.svc.cluster.local", "A"),
    ("nxrc.shop.svc.cluster.local", "A"),
    ("host.k3d.internal", "A"),
    ("x.v4only.example", "AAAA"), ("v4only.example", "AAAA"),
    ("foo.t.example", "TXT"), ("bar.t.example", "TXT"), ("1.t.example", "TXT"),
    ("ip-10-1-2-3.ip.example", "A"),
    ("4.3.2.99.in-addr.arpa", "PTR"),
    ("cn.example", "A"), ("cn.example", "CNAME"),
    ("foo.invalid", "A"), ("foo.invalid", "MX"),
    ("mx.example", "MX"), ("whoami.example", "TXT"),
    ("web.auto.example", "A"), ("db.auto.example", "A"), ("web.two.example", "A"),
    ("ext.two.example", "A"),
    ("kubernetes.default.svc.cluster.local", "A"),
]]

# Asked twice, the second answer compared: a rewritten name outside the zones answers
# from the forwarder's cache, SERVFAIL (EDE 14) while it is resolved the first time.
FORWARDED = [(n + ".", t) for n, t in [
    ("search.example.com", "A"), ("host.k3d.internal", "AAAA"), ("foo.ip.example", "A"),
]]


def owner_case(qname, qtype, ours, theirs):
    """answer auto maps the owner back to the query's name as CoreDNS lowercases it;
    mod-k8s's owner is the question's own bytes, in the client's case."""
    low = lambda k: (k[0], tuple((o.lower(), t, r, d) for o, t, r, d in k[1]), k[2])
    return low(ours) == low(theirs)


def srv_targets_below_the_name(qname, qtype, ours, theirs):
    """answer auto (and a suffix rule's) also maps record values below the rewritten
    name (an SRV target, its address in ADDITIONAL); mod-k8s maps owners only."""
    return qtype == "SRV" and ours[0] == theirs[0]


def zone_file_soa(qname, qtype, ours, theirs):
    """A cluster zone's SOA is its zone file's in knotd (CoreDNS makes its own: another
    serial, another MNAME): the same owner and TTL, other rdata."""
    soa = lambda k: tuple((o, ttl, t) for o, ttl, t, _ in k[2])
    return ours[:2] == theirs[:2] and soa(ours) == soa(theirs) and ours[2] != theirs[2] \
        and all(t == "SOA" for _, _, t, _ in ours[2])


KNOWN = [
    (zone_file_soa, "the cluster zone's SOA is the zone file's"),
    (owner_case, "owner in the question's case"),
    (srv_targets_below_the_name, "SRV targets below the rewritten name are not mapped"),
]


def world(plane):
    objects = [namespace("shop")]
    objects.append(service("web", "shop", [{"name": "http", "port": 80, "protocol": "TCP"}],
                           selector={"app": "web"}))
    objects.append(service("db", "shop", [{"name": "pg", "port": 5432, "protocol": "TCP"}],
                           selector={"app": "db"}, cluster_ip="None"))
    objects.append(service("ext", "shop", [], svc_type="ExternalName",
                           external_name="www.example.org"))
    for i in range(2):
        objects.append(pod(f"web-{i}", "shop", {"app": "web"}, ips=[f"10.210.0.{i + 1}"]))
        objects.append(pod(f"db-{i}", "shop", {"app": "db"}, ips=[f"10.210.1.{i + 1}"],
                           hostname=f"h{i}", subdomain="db"))
    plane.apply(objects)
    for name in ("web", "db"):
        plane.wait_for_slices("shop", name, lambda items: 2 == len({
            a for s in items for e in s.get("endpoints") or [] for a in e["addresses"]}),
            timeout=90)


def corefile_lines(upstream):
    host, port = upstream.split("@")
    lines = []
    for r in REWRITE:
        head, brace, body = r.partition(" { ")
        if not brace:
            lines.append(f"    rewrite {r}")
            continue
        # A block's lines: `;` separates them in the option, a newline in a Corefile.
        lines.append(f"    rewrite {head.strip()} {{")
        lines += [f"        {line.strip()}" for line in body.rstrip().rstrip("}").split(" ; ")]
        lines.append("    }")
    for t in TEMPLATE:
        head, _, body = t.partition(" { ")
        lines.append(f"    template {head.strip()} {{")
        for line in body.rstrip().rstrip("}").split(" ; "):
            if line.strip():
                lines.append(f"        {line.strip()}")
        lines.append("    }")
    lines.append(f"    forward . {host}:{port}")
    return "\n".join(lines) + "\n"


def key(answer):
    def rrs(section):
        return tuple(sorted((rr.owner, rr.ttl, rr.type, rr.rdata) for rr in section))
    return answer.rcode, rrs(answer.answer), rrs(answer.authority)


# The stub upstream's TTL, which no other record of this test has.
UPSTREAM_TTL = 47


def upstream_ttls_count_down(ours, theirs):
    """An upstream's records (a forwarded name, an ExternalName's target) come from
    mod-k8s's cache, their TTLs counted down (CoreDNS here forwards without a cache): equal
    but for those TTLs, at most 2 s lower."""
    def strip(k):
        return k[0], tuple((o, t, r) for o, _, t, r in k[1]), k[2]
    return strip(ours) == strip(theirs) and all(
        a[1] == b[1] or (b[1] == UPSTREAM_TTL and 0 <= b[1] - a[1] <= 2)
        for a, b in zip(ours[1], theirs[1]))


@tests.case
def rewrite_and_template_answer_as_coredns_does(cl):
    with stubdns.StubDNS(ttl=UPSTREAM_TTL) as up:
        knotd = cl.knotd(module={"ttl": TTL, "rewrite": REWRITE, "template": TEMPLATE,
                                 "forward": [up.address],
                                 # As CoreDNS's forward without a cache: no cap on the TTL.
                                 "forward-cache-max-ttl": 3600},
                         zones=cl.zones, template={"global-module": "mod-k8s/default"})
        with knotd, realk8s.CoreDNS(cl.plane, ttl=TTL, extra=corefile_lines(up.address)) as core:
            cluster.wait_ready(knotd, cl.ready_zones, timeout=60)
            differences, explained, same = [], [], 0
            for qname, qtype in FORWARDED:
                dig.query(knotd, qname, qtype)
            time.sleep(0.5)
            for qname, qtype in QUESTIONS + FORWARDED:
                ours = key(dig.query(knotd, qname, qtype))
                theirs = key(dig.query(core, qname, qtype))
                if ours == theirs:
                    same += 1
                    continue
                if upstream_ttls_count_down(ours, theirs):
                    same += 1
                    continue
                why = next((w for match, w in KNOWN if match(qname, qtype, ours, theirs)), None)
                text = f"{qname} {qtype}\n    mod-k8s: {ours}\n    CoreDNS: {theirs}"
                (explained if why else differences).append(text + (f"\n    ({why})" if why else ""))
            print(f"# {same} questions answered alike, {len(explained)} known differences:")
            for text in explained:
                print("# " + text.replace("\n", "\n# "))
            testing.expect(not differences, "answers differ:\n" + "\n".join(differences))


# CoreDNS server blocks: the root's rule for .lol names; k3s's coredns-custom form, a
# block of its own whose rewrite sends its names to the root block (forward to the
# server itself, as k3s's forward . 127.0.0.1); a block without rules that forwards.
BLOCK_ROOT_RULES = [r"name suffix .lol. .shop.svc.cluster.local. answer auto"]
BLOCK_DOMA = [r"continue { name regex (.*)\.doma\.lol {1}.shop.svc.cluster.local ; answer auto }"]
BLOCK_DOMA_TEMPLATE = ['IN TXT { answer "{{ .Name }} 60 IN TXT {{ .Zone }}" }']

BLOCK_QUESTIONS = [(n + ".", t) for n, t in [
    ("web.lol", "A"), ("db.lol", "A"),
    ("web.doma.lol", "A"), ("db.doma.lol", "A"), ("nope.doma.lol", "A"),
    ("doma.lol", "TXT"), ("web.doma.lol", "TXT"),
]]
# The block without rules forwards (asked twice, the second compared, as FORWARDED).
BLOCK_FORWARDED = [(n + ".", t) for n, t in [("web.quiet.lol", "A"), ("quiet.lol", "A")]]


def block_corefile(upstream):
    host, port = upstream.split("@")
    root = "".join(f"    rewrite {r}\n" for r in BLOCK_ROOT_RULES) + f"    forward . {host}:{port}\n"
    doma_rule = BLOCK_DOMA[0].replace("continue { ", "continue {\n        ").replace(" ; ", "\n        ")
    doma_rule = doma_rule.replace(" }", "\n    }")
    blocks = ("doma.lol:{port} {\n    bind 127.0.0.1\n"
              f"    rewrite {doma_rule}\n"
              '    template IN TXT {\n        answer "{{ .Name }} 60 IN TXT {{ .Zone }}"\n    }\n'
              "    forward . 127.0.0.1:{port}\n}\n"
              "quiet.lol:{port} {\n    bind 127.0.0.1\n"
              f"    forward . {host}:{port}\n}}\n")
    return root, blocks


@tests.case
def a_server_blocks_rules_answer_its_names_as_coredns_does(cl):
    with stubdns.StubDNS(ttl=UPSTREAM_TTL) as up:
        rewrite = BLOCK_ROOT_RULES + ["doma.lol: " + r for r in BLOCK_DOMA] + ["quiet.lol:"]
        template = ["doma.lol: " + t for t in BLOCK_DOMA_TEMPLATE]
        knotd = cl.knotd(module={"ttl": TTL, "rewrite": rewrite, "template": template,
                                 "forward": [up.address], "forward-cache-max-ttl": 3600},
                         zones=cl.zones, template={"global-module": "mod-k8s/default"})
        root, blocks = block_corefile(up.address)
        with knotd, realk8s.CoreDNS(cl.plane, ttl=TTL, extra=root, blocks=blocks) as core:
            cluster.wait_ready(knotd, cl.ready_zones, timeout=60)
            for qname, qtype in BLOCK_FORWARDED:
                dig.query(knotd, qname, qtype)
            time.sleep(0.5)
            differences, same = [], 0
            for qname, qtype in BLOCK_QUESTIONS + BLOCK_FORWARDED:
                ours = key(dig.query(knotd, qname, qtype))
                theirs = key(dig.query(core, qname, qtype))
                if ours == theirs or upstream_ttls_count_down(ours, theirs) or \
                        zone_file_soa(qname, qtype, ours, theirs):
                    same += 1
                    continue
                differences.append(f"{qname} {qtype}\n    mod-k8s: {ours}\n    CoreDNS: {theirs}")
            print(f"# {same} of {len(BLOCK_QUESTIONS + BLOCK_FORWARDED)} questions answered alike")
            testing.expect(not differences, "answers differ:\n" + "\n".join(differences))
            # Not vacuous: the block's rule answered its name from the cluster, the root's
            # rule did not touch the quiet block's name (forwarded, the stub's address).
            a = dig.query(knotd, "web.doma.lol.", "A")
            testing.expect(a.rcode == "NOERROR" and a.answer and all(
                rr.owner == "web.doma.lol." and not rr.rdata.startswith("192.0.2.") for rr in a.answer),
                f"web.doma.lol: {a.text}")
            a = dig.query(knotd, "web.quiet.lol.", "A")
            testing.expect([rr.rdata for rr in a.answer] == [stubdns.answer_address("web.quiet.lol.")],
                           f"web.quiet.lol: {a.text}")


tests.main(fixture=lambda: realk8s.RealCluster(world=world, module={"ttl": TTL}))
