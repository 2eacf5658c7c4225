"""One-line DNS test cases: a query and the answer it must get.

A case line reads

    QNAME QTYPE RCODE [FLAG ...] [RR | RR ...] [; SECTION: [RR | RR ...]] ...

for example

    kubernetes.default.svc.cluster.local.  A  NOERROR aa ttl=5  10.96.0.1
    nope.default.svc.cluster.local.        A  NXDOMAIN aa
    web.default.svc.cluster.local.         A  NOERROR  10.0.0.1 | 10.0.0.2
    _https._tcp.kubernetes.default.svc.cluster.local. SRV NOERROR 0 100 443 kubernetes.default.svc.cluster.local. ; additional: kubernetes.default.svc.cluster.local. A 10.96.0.1
    foo.cluster.local.                     A  SERVFAIL ede=14
    big.default.svc.cluster.local.         A  NOERROR tc bufsize=512

FLAGs (right after RCODE; each changes the query or adds a check):
    tcp            query over TCP (default UDP)
    edns           send EDNS (implied by dnssec, bufsize= and ede=)
    dnssec         set the DO bit
    bufsize=N      EDNS UDP payload size
    aa / noaa      AA must be set / clear
    tc / notc      TC must be set / clear
    ede=N          the response must carry EDE code N; ede=none: no EDE
    ttl=N          every ANSWER record must have TTL N

RRs are the expected ANSWER section, compared as a set (order does not
matter, nothing missing, nothing extra; no RR means an empty ANSWER). An RR is
either just rdata (owner = QNAME, type = QTYPE) or `OWNER [TTL] TYPE RDATA`.
`; additional:` and `; authority:` give those sections the same way; a
section that is not mentioned is not checked. `#` starts a comment.
"""

import re

import dig

RCODES = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN",
          "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE", "BADVERS", "BADCOOKIE"}
_WORD_FLAGS = {"tcp", "edns", "dnssec", "aa", "noaa", "tc", "notc"}
_VALUE_FLAGS = {"bufsize", "ede", "ttl"}
# (case flag, header flag, must be set)
_FLAG_CHECKS = (("aa", "aa", True), ("noaa", "aa", False), ("tc", "tc", True), ("notc", "tc", False))
_TYPE = re.compile(r"^(A|AAAA|CNAME|DNAME|PTR|SRV|TXT|NS|SOA|MX|NAPTR|HINFO|CAA|DS|DNSKEY|RRSIG|NSEC|NSEC3|TYPE\d+)$",
                   re.IGNORECASE)


class CaseError(ValueError):
    """A case line that does not follow the format."""


def _is_flag(token):
    if token in _WORD_FLAGS:
        return True
    key, sep, _ = token.partition("=")
    return bool(sep) and key in _VALUE_FLAGS


def parse_rr(text, qname, qtype):
    """An expected RR (ttl None unless given) from `OWNER [TTL] TYPE RDATA` or bare rdata."""
    tokens = text.split()
    if not tokens:
        raise CaseError("empty record")
    if len(tokens) >= 3 and (tokens[0].endswith(".") or tokens[0] == "@"):
        if _TYPE.match(tokens[1]):
            return dig.make_rr(tokens[0], None, tokens[1], " ".join(tokens[2:]))
        if tokens[1].isdigit() and len(tokens) >= 4 and _TYPE.match(tokens[2]):
            return dig.make_rr(tokens[0], tokens[1], tokens[2], " ".join(tokens[3:]))
    return dig.make_rr(qname, None, qtype, text)


def _parse_rrs(text, qname, qtype):
    text = text.strip()
    if not text:
        return []
    return [parse_rr(part, qname, qtype) for part in text.split("|")]


def _key(rr):
    return (rr.owner, rr.type, rr.rdata)


def _strip_comment(line):
    if line.lstrip().startswith("#"):
        return ""
    return re.split(r"\s#", line, maxsplit=1)[0].strip()


class Case:
    """One query and its expected response."""

    def __init__(self, line, source=None):
        self.line = " ".join(line.split())
        self.source = source
        head, *sections = self.line.split(";")
        tokens = head.split()
        if len(tokens) < 3:
            raise CaseError(f"need QNAME QTYPE RCODE: {line!r}")
        self.qname = dig.normalise_name(tokens[0])
        self.qtype = tokens[1].upper()
        self.rcode = tokens[2].upper()
        if self.rcode not in RCODES:
            raise CaseError(f"unknown rcode {tokens[2]!r} in {line!r}")
        rest = tokens[3:]
        self.flags = {}
        while rest and _is_flag(rest[0]):
            key, _, value = rest.pop(0).partition("=")
            self.flags[key] = value
        self.answer = _parse_rrs(" ".join(rest), self.qname, self.qtype)
        self.sections = {}
        for section in sections:
            name, sep, rrs = section.partition(":")
            name = name.strip().lower()
            if not sep or name not in ("authority", "additional"):
                raise CaseError(f"expected '; authority:' or '; additional:' in {line!r}")
            self.sections[name] = _parse_rrs(rrs, self.qname, self.qtype)

    @property
    def name(self):
        """The TAP test name: the case line itself."""
        return self.line

    def query_options(self):
        """Keyword arguments for dig.query()."""
        flags = self.flags
        return {
            "tcp": "tcp" in flags,
            "dnssec": "dnssec" in flags,
            "edns": "edns" in flags or "ede" in flags,
            "bufsize": int(flags["bufsize"]) if "bufsize" in flags else None,
        }

    def run(self, server):
        """Queries `server` and raises AssertionError with a readable diff on any mismatch."""
        answer = dig.query(server, self.qname, self.qtype, **self.query_options())
        problems = self.compare(answer)
        if problems:
            command = " ".join(answer.command)
            raise AssertionError("\n".join(
                [problems[0]] + problems[1:] + [f"got: {answer.summary()}", f"$ {command}",
                                                 answer.text.rstrip()]))

    def compare(self, answer):
        """The list of differences between `answer` and this case; empty when it matches."""
        problems = []
        if answer.rcode != self.rcode:
            problems.append(f"rcode: expected {self.rcode}, got {answer.rcode}")
        for flag, header_flag, present in _FLAG_CHECKS:
            if flag in self.flags and (header_flag in answer.flags) != present:
                state = "set" if present else "clear"
                problems.append(f"flag {header_flag.upper()}: expected {state}, got "
                                + ("set" if header_flag in answer.flags else "clear"))
        if "ede" in self.flags:
            expected = [] if self.flags["ede"] == "none" else [int(self.flags["ede"])]
            if answer.ede != expected:
                problems.append(f"EDE: expected {expected or 'none'}, got {answer.ede or 'none'}")
        problems += _compare_section("answer", self.answer, answer.answer)
        for name, expected in self.sections.items():
            problems += _compare_section(name, expected, answer.section(name))
        if "ttl" in self.flags:
            ttl = int(self.flags["ttl"])
            wrong = sorted(str(rr) for rr in answer.answer if rr.ttl != ttl)
            if wrong:
                problems.append(f"answer TTL: expected {ttl} on every record, got " + "; ".join(wrong))
        return problems


def _compare_section(name, expected, got):
    """Differences between an expected RR list and a received RR set, TTLs where given."""
    problems = []
    got_keys = {_key(rr): rr for rr in got}
    expected_keys = {_key(rr): rr for rr in expected}
    missing = [rr for key, rr in expected_keys.items() if key not in got_keys]
    extra = [rr for key, rr in got_keys.items() if key not in expected_keys]
    if missing or extra:
        lines = [f"{name} section differs:"]
        lines += [f"  missing:    {rr.owner} {rr.type} {rr.rdata}" for rr in missing]
        lines += [f"  unexpected: {rr}" for rr in sorted(extra)]
        problems.append("\n".join(lines))
    for key, rr in expected_keys.items():
        if rr.ttl is not None and key in got_keys and got_keys[key].ttl != rr.ttl:
            problems.append(f"{name} TTL of {rr.owner} {rr.type}: expected {rr.ttl}, "
                            f"got {got_keys[key].ttl}")
    return problems


def parse(text, source=None):
    """The cases of a multi-line text: one per non-empty, non-comment line."""
    result = []
    for number, line in enumerate(text.splitlines(), 1):
        line = _strip_comment(line)
        if not line:
            continue
        try:
            result.append(Case(line, source))
        except CaseError as e:
            where = f"{source}:{number}" if source else f"line {number}"
            raise CaseError(f"{where}: {e}") from None
    return result
