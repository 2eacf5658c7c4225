#!/usr/bin/env python3
"""DNSSEC: mod-onlinesign after mod-k8s, validated by a resolver (doc/mod-k8s.rst, "DNSSEC").

knotd signs mod-k8s's answers as they are made (`module: [ mod-k8s/default,
mod-onlinesign/k8s ]`, a key generated at start), and denies with "black lies":
an NSEC at the query name itself, so NXDOMAIN becomes NOERROR without records
for queries with the DO bit. unbound (Debian's), with the zones' DNSKEYs as trust
anchors, must validate (AD) services, SRV, PTR and ExternalName chains, and the
denials. SRV answers to DO queries have no additional records (knotd 3.2.6's
mod-onlinesign crashes signing them), and knotd survives them. The NSEC type bitmap must list every type mod-k8s may answer
(`nsec-bitmap`), or an aggressive-NSEC resolver (unbound's default) denies a
PTR after any other query of that name: the second fixture shows it.

Without unbound installed (scripts/deps compose) the resolver's tests skip.
"""

import os
import shutil
import socket
import subprocess
import tempfile

import testing
from cluster import Cluster
from faults import external_name_service
from unbound import Unbound, zone_keys

tests = testing.Tests()

ZONES = ("cluster.local.", "in-addr.arpa.", "ip6.arpa.")
BITMAP = "[ A, AAAA, SRV, PTR, TXT ]"
SIGNED = """
mod-onlinesign:
  - id: k8s
    nsec-bitmap: {bitmap}
"""
# knotd 3.2.6 dies (SIGSEGV in mod-onlinesign's sign_section, find_glue_for) when it signs
# an additional record that is not glue of a zone node: mod-k8s adds none to DO answers
# of a zone that mod-onlinesign signs after it (the SRV targets' addresses).
SRV_NAMES = {"_https._tcp.kubernetes.default.svc.cluster.local.":
             {"0 100 443 kubernetes.default.svc.cluster.local."},
             "_pg._tcp.postgres.db.svc.cluster.local.":
             {"0 50 5432 postgres-0.postgres.db.svc.cluster.local.",
              "0 50 5432 postgres-1.postgres.db.svc.cluster.local."}}
FOLLOWS = ("mod-onlinesign follows mod-k8s: SRV targets' addresses are not added to DNSSEC "
           "answers (onlinesign signs only zone glue)")
EXTERNAL = external_name_service("default", "alias", "kubernetes.default.svc.cluster.local")


class Signed(Cluster):
    """The signed cluster zones, and unbound validating them (None without unbound)."""

    def __init__(self, bitmap=BITMAP, signed=True, resolver_address="127.0.0.1", resolver_port=None):
        module = "[ mod-k8s/default, mod-onlinesign/k8s ]" if signed else "mod-k8s/default"
        super().__init__(zones={zone: module for zone in ZONES},
                         extra=SIGNED.format(bitmap=bitmap))
        self.signed = signed
        self.resolver = None
        self.resolver_address = resolver_address
        self.resolver_port = resolver_port

    def __enter__(self):
        super().__enter__()
        try:
            self.sim.apply(EXTERNAL)
            self.expect_answer("alias.default.svc.cluster.local.", "CNAME", "NOERROR")
            if Unbound.available():
                anchors = [key for zone in ZONES for key in zone_keys(self.server, zone)] \
                    if self.signed else []
                self.resolver = Unbound(stubs={zone: self.server for zone in ZONES},
                                        anchors=anchors, address=self.resolver_address,
                                        port=self.resolver_port).__enter__()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if self.resolver is not None:
                self.resolver.__exit__(kind, value, traceback)
        finally:
            super().__exit__(kind, value, traceback)
        return False

    def is_running(self):
        return super().is_running() and (self.resolver is None or self.resolver.process is not None)

    def log_text(self):
        return super().log_text() + (self.resolver.log_text() if self.resolver else "")

    def validated(self, qname, qtype):
        """The resolver's answer, which must carry AD."""
        if self.resolver is None:
            raise testing.Skip("unbound is not installed (Debian package unbound)")
        answer = self.resolver.query(qname, qtype, dnssec=True)
        testing.expect("ad" in answer.flags, f"{qname} {qtype}: no AD: {answer.summary()}\n"
                       + answer.text)
        return answer


def records(answer, rtype):
    return {rr.rdata for rr in answer.answer if rr.type == rtype}


def covered(answer, section="answer"):
    """Types that have an RRSIG in the section."""
    return {rr.rdata.split()[0].upper() for rr in answer.section(section) if rr.type == "RRSIG"}


# --- knotd itself


@tests.case
def positive_answers_are_signed(cluster):
    for qname, qtype in (("kubernetes.default.svc.cluster.local.", "A"),
                         ("web.shop.svc.cluster.local.", "AAAA"),
                         ("34.12.96.10.in-addr.arpa.", "PTR")):
        answer = cluster.query(qname, qtype, dnssec=True)
        testing.expect_equal((answer.rcode, covered(answer)), ("NOERROR", {qtype}),
                             f"{qname} {qtype}")


@tests.case
def missing_names_are_black_lies_with_do_and_nxdomain_without(cluster):
    qname = "nonexistent.default.svc.cluster.local."
    answer = cluster.query(qname, "A", dnssec=True)
    nsec = [rr for rr in answer.authority if rr.type == "NSEC"]
    testing.expect_equal((answer.rcode, [rr.owner for rr in nsec]), ("NOERROR", [qname]),
                         "with DO: NODATA and an NSEC at the name")
    testing.expect(nsec[0].rdata.startswith("\\000." + qname), f"NSEC {nsec[0]}")
    testing.expect_equal(covered(answer, "authority"), {"SOA", "NSEC"}, "signed denial")
    testing.expect_equal(cluster.query(qname, "A").rcode, "NXDOMAIN", "without DO")


# --- a validating resolver


@tests.case
def resolver_validates_services(cluster):
    answer = cluster.validated("kubernetes.default.svc.cluster.local.", "A")
    testing.expect_equal(records(answer, "A"), {"10.96.0.1"}, "ClusterIP")
    answer = cluster.validated("web.shop.svc.cluster.local.", "AAAA")
    testing.expect_equal(records(answer, "AAAA"), {"fd00:10:96::1234"}, "dual stack")
    answer = cluster.validated("postgres.db.svc.cluster.local.", "A")
    testing.expect_equal(records(answer, "A"), {"10.244.0.20", "10.244.1.20"}, "headless")


@tests.case
def resolver_validates_ptr(cluster):
    answer = cluster.validated("34.12.96.10.in-addr.arpa.", "PTR")
    testing.expect_equal(records(answer, "PTR"), {"web.shop.svc.cluster.local."}, "IPv4")
    answer = cluster.validated(
        "4.3.2.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.", "PTR")
    testing.expect_equal(records(answer, "PTR"), {"web.shop.svc.cluster.local."}, "IPv6")


@tests.case
def resolver_validates_externalname_chains(cluster):
    answer = cluster.validated("alias.default.svc.cluster.local.", "A")
    testing.expect_equal((records(answer, "CNAME"), records(answer, "A")),
                         ({"kubernetes.default.svc.cluster.local."}, {"10.96.0.1"}), "chain")


@tests.case
def srv_with_do_has_no_additional_records_and_knotd_survives(cluster):
    for qname, srv in SRV_NAMES.items():
        answer = cluster.query(qname, "SRV", dnssec=True)
        testing.expect_equal((answer.rcode, records(answer, "SRV"), covered(answer)),
                             ("NOERROR", srv, {"SRV"}), f"signed SRV {qname}")
        testing.expect_equal({rr.type for rr in answer.additional} - {"OPT"}, set(),
                             f"additional records of {qname} with DO")
        testing.expect(cluster.is_running(), f"knotd died answering {qname} SRV with DO")


@tests.case
def srv_without_do_keeps_its_additional_records(cluster):
    answer = cluster.query("_https._tcp.kubernetes.default.svc.cluster.local.", "SRV")
    testing.expect_equal({(rr.owner, rr.type, rr.rdata) for rr in answer.additional},
                         {("kubernetes.default.svc.cluster.local.", "A", "10.96.0.1")},
                         "ClusterIP target")
    answer = cluster.query("_pg._tcp.postgres.db.svc.cluster.local.", "SRV")
    testing.expect_equal({(rr.owner, rr.rdata) for rr in answer.additional if rr.type == "A"},
                         {("postgres-0.postgres.db.svc.cluster.local.", "10.244.0.20"),
                          ("postgres-1.postgres.db.svc.cluster.local.", "10.244.1.20")},
                         "headless targets")


@tests.case
def onlinesign_after_mod_k8s_is_logged_once_per_zone_with_srv(cluster):
    lines = [line for line in cluster.server.log_text().splitlines() if FOLLOWS in line]
    testing.expect_equal([line.split("] ")[0].split("[")[-1] for line in lines], ["cluster.local."],
                         "zones logged (the reverse zones answer no SRV)")


@tests.case
def resolver_validates_srv(cluster):
    for qname, srv in SRV_NAMES.items():
        answer = cluster.validated(qname, "SRV")
        testing.expect_equal(records(answer, "SRV"), srv, qname)
    answer = cluster.validated("kubernetes.default.svc.cluster.local.", "A")
    testing.expect_equal(records(answer, "A"), {"10.96.0.1"}, "the target, asked for itself")
    testing.expect(cluster.is_running(), "knotd died")


@tests.case
def resolver_validates_denial_of_missing_names_as_nodata(cluster):
    for qname, qtype in (("nonexistent.default.svc.cluster.local.", "A"),
                         ("kubernetes.default.shop.svc.cluster.local.", "AAAA"),
                         ("99.99.96.10.in-addr.arpa.", "PTR"),
                         ("kubernetes.default.svc.cluster.local.", "TXT")):
        answer = cluster.validated(qname, qtype)
        testing.expect_equal((answer.rcode, answer.answer), ("NOERROR", frozenset()),
                             f"{qname} {qtype}")


@tests.case
def ptr_and_address_answer_after_a_nodata_at_the_same_name(cluster):
    # The NSEC of the TXT denial lists PTR (nsec-bitmap), so the resolver's
    # aggressive NSEC use does not deny the PTR from its cache.
    cluster.validated("1.0.96.10.in-addr.arpa.", "TXT")
    answer = cluster.validated("1.0.96.10.in-addr.arpa.", "PTR")
    testing.expect_equal(records(answer, "PTR"), {"kubernetes.default.svc.cluster.local."}, "PTR")
    cluster.validated("kube-dns.kube-system.svc.cluster.local.", "TXT")
    answer = cluster.validated("kube-dns.kube-system.svc.cluster.local.", "A")
    testing.expect_equal(records(answer, "A"), {"10.96.0.10"}, "A")


# --- why nsec-bitmap: mod-onlinesign's default bitmap (A and AAAA only)
tests.fixture(lambda: Signed(bitmap="[ A, AAAA ]"), "mod-onlinesign's default NSEC bitmap")


@tests.case
def default_bitmap_lets_a_resolver_deny_a_ptr_after_another_type(cluster):
    cluster.validated("1.0.96.10.in-addr.arpa.", "TXT")
    answer = cluster.validated("1.0.96.10.in-addr.arpa.", "PTR")
    testing.expect_equal((answer.rcode, records(answer, "PTR")), ("NOERROR", set()),
                         "PTR denied from the resolver's cache (what nsec-bitmap prevents)")


# --- what black lies do to pods' search lists: glibc and musl stub resolvers in a mount
# namespace whose /etc/resolv.conf names unbound (port 53) with a pod's search list.
STUB = "127.53.0.1"
RESOLV_CONF = f"""nameserver {STUB}
search shop.svc.cluster.local svc.cluster.local cluster.local
options ndots:5 attempts:1 timeout:2
"""
GETADDRINFO_C = r"""
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	int ret = getaddrinfo(argv[1], NULL, &hints, &res);
	if (ret != 0) {
		printf("%s\n", gai_strerror(ret));
		return 2;
	}
	char text[INET_ADDRSTRLEN];
	printf("%s\n", inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr,
	                         text, sizeof(text)));
	return 0;
}
"""


def port_53_free():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((STUB, 53))
        return True
    except OSError:
        return False


class SearchLists(Signed):
    """unbound on port 53 of STUB (validating the signed zones, or plain ones), a resolv.conf
    with a pod's search list, and the stub resolvers: one getaddrinfo program, built for glibc
    and (static) for musl."""

    def __init__(self, signed):
        if os.geteuid() != 0:
            raise testing.Skip("needs root: a mount namespace with its own /etc/resolv.conf")
        if not Unbound.available():
            raise testing.Skip("unbound is not installed (Debian package unbound)")
        if not port_53_free():
            raise testing.Skip(f"port 53 of {STUB} is taken")
        super().__init__(signed=signed, resolver_address=STUB, resolver_port=53)
        self.tmp = tempfile.mkdtemp(prefix="mod-k8s-stubs-")
        self.resolv_conf = os.path.join(self.tmp, "resolv.conf")
        with open(self.resolv_conf, "w", encoding="utf-8") as f:
            f.write(RESOLV_CONF)
        source = os.path.join(self.tmp, "getaddrinfo.c")
        with open(source, "w", encoding="utf-8") as f:
            f.write(GETADDRINFO_C)
        # glibc's getaddrinfo without AI_ADDRCONFIG, which getent sets: a host whose only
        # IPv4 address is on lo (a CI root with loopback only) would get no IPv4 answer.
        self.glibc_prog = os.path.join(self.tmp, "getaddrinfo-glibc")
        subprocess.run(["cc", "-o", self.glibc_prog, source], check=True)
        self.musl = None
        if shutil.which("musl-gcc"):
            self.musl = os.path.join(self.tmp, "getaddrinfo-musl")
            subprocess.run(["musl-gcc", "-static", "-o", self.musl, source], check=True)

    def __exit__(self, kind, value, traceback):
        try:
            return super().__exit__(kind, value, traceback)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def lookup(self, program, name):
        """(exit status, first output line) of program NAME with the pod's resolv.conf."""
        script = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
        result = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                                 self.resolv_conf] + program + [name], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=30, check=False)
        first = (result.stdout.splitlines() or [""])[0].split()
        return result.returncode, (first[0] if first else "")

    def glibc(self, name):
        return self.lookup([self.glibc_prog], name)

    def musl_lookup(self, name):
        if self.musl is None:
            raise testing.Skip("musl-gcc is not installed (Debian package musl-tools)")
        return self.lookup([self.musl], name)


# Names a pod in namespace shop finds through its search list: the first candidate
# (kubernetes.default.shop.svc.cluster.local) does not exist; the second does.
SEARCHED = {"kubernetes.default": "10.96.0.1", "cache.shop": "10.244.", "web": "10.96.12.34"}

tests.fixture(lambda: SearchLists(signed=False), "search lists, unsigned zones")


@tests.case
def unsigned_zones_glibc_and_musl_search_past_nxdomain(cluster):
    for name, address in SEARCHED.items():
        for lookup in (cluster.glibc, cluster.musl_lookup):
            status, first = lookup(name)
            testing.expect(status == 0 and first.startswith(address),
                           f"{lookup.__name__} {name}: {status} {first}")


tests.fixture(lambda: SearchLists(signed=True), "search lists, black lies")


@tests.case
def black_lies_glibc_searches_past_nodata(cluster):
    for name, address in SEARCHED.items():
        status, first = cluster.glibc(name)
        testing.expect(status == 0 and first.startswith(address), f"glibc {name}: {status} {first}")


@tests.case
def black_lies_musl_stops_at_the_first_nodata(cluster):
    # musl's getaddrinfo ends the search at a NOERROR answer without addresses.
    status, first = cluster.musl_lookup("web")
    testing.expect(status == 0 and first == "10.96.12.34", f"web (first candidate): {first}")
    for name in ("kubernetes.default", "cache.shop"):
        status, _ = cluster.musl_lookup(name)
        testing.expect_equal(status, 2, f"musl {name} (found by its second candidate)")


if __name__ == "__main__":
    tests.main(fixture=Signed)
