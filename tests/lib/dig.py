"""Query a DNS server with kdig and parse its text output.

    answer = dig.query(server, "kubernetes.default.svc.cluster.local.", "A", tcp=True)
    answer.rcode        # "NOERROR"
    answer.flags        # frozenset({"qr", "aa", "rd"})
    answer.ede          # [14] (EDE codes; empty without EDNS or EDE)
    answer.answer       # frozenset of RR(owner, ttl, type, rdata), normalised
    answer.authority, answer.additional

`server` is anything with `.address` and `.port` (a running Knotd), or an
(address, port) tuple. Every query uses `+ignore` so a truncated UDP answer is
reported as received (TC set) instead of being retried over TCP.
"""

import collections
import ipaddress
import re
import shutil
import subprocess

class RR(collections.namedtuple("RR", "owner ttl type rdata")):
    """One resource record: lowercase owner with a final dot, int TTL, type mnemonic, rdata."""

    __slots__ = ()

    def __str__(self):
        return f"{self.owner} {self.ttl} {self.type} {self.rdata}"


class QueryError(Exception):
    """kdig got no answer (timeout, refused connection) or printed something unparsable."""


def kdig_path():
    """Absolute path of kdig; raises QueryError naming the Debian package when missing."""
    path = shutil.which("kdig")
    if path is None:
        raise QueryError("kdig not found; install the Debian package 'knot-dnsutils'")
    return path


def normalise_name(name):
    """Lowercase, fully qualified."""
    name = name.strip().lower()
    return name if name.endswith(".") else name + "."


def normalise_rdata(rtype, rdata):
    """Canonical text of rdata so that hand-written and kdig-printed values compare equal.

    Addresses are compared as addresses (fd00:0::1 == fd00::1), other rdata with
    whitespace collapsed and, except TXT, case folded (names are case-insensitive).
    """
    rtype = rtype.upper()
    rdata = rdata.strip()
    if rtype in ("A", "AAAA"):
        try:
            return str(ipaddress.ip_address(rdata))
        except ValueError:
            return rdata
    if rtype == "TXT":
        return rdata
    return " ".join(rdata.split()).lower()


def make_rr(owner, ttl, rtype, rdata):
    """An RR with every field normalised; ttl may be None when it does not matter."""
    rtype = rtype.upper()
    return RR(normalise_name(owner), None if ttl is None else int(ttl), rtype,
              normalise_rdata(rtype, rdata))


class Answer:
    """A parsed kdig response."""

    def __init__(self, command, text):
        self.command = command
        self.text = text
        self.rcode = None
        self.flags = frozenset()
        self.edns = None
        self.ede = []
        self.answer = frozenset()
        self.authority = frozenset()
        self.additional = frozenset()
        self._parse(text)

    @property
    def ede_code(self):
        """The first EDE code, or None."""
        return self.ede[0] if self.ede else None

    def section(self, name):
        """The RR set of "answer", "authority" or "additional"."""
        return getattr(self, name)

    def summary(self):
        """One line: rcode, flags, EDE."""
        ede = f" ede={','.join(map(str, self.ede))}" if self.ede else ""
        return f"{self.rcode} flags={' '.join(sorted(self.flags))}{ede}"

    _HEADER = re.compile(r";; ->>HEADER<<- opcode: \S+; status: (\S+);")
    _FLAGS = re.compile(r";; Flags: ([^;]*);")
    _EDNS = re.compile(r";; Version: (\d+); flags: ([^;]*); UDP size: (\d+) B")
    _EDE = re.compile(r";; EDE: (\d+)")
    _SECTION = re.compile(r";; (ANSWER|AUTHORITY|ADDITIONAL) SECTION:")

    def _parse(self, text):
        sections = {"ANSWER": set(), "AUTHORITY": set(), "ADDITIONAL": set()}
        current = None
        for line in text.splitlines():
            if not line.strip():
                current = None
                continue
            match = self._HEADER.match(line)
            if match:
                self.rcode = match.group(1)
                continue
            match = self._FLAGS.match(line)
            if match:
                self.flags = frozenset(match.group(1).split())
                continue
            match = self._EDNS.match(line)
            if match:
                self.edns = {"version": int(match.group(1)),
                             "flags": frozenset(match.group(2).split()),
                             "udp_size": int(match.group(3))}
                continue
            match = self._EDE.match(line)
            if match:
                self.ede.append(int(match.group(1)))
                continue
            match = self._SECTION.match(line)
            if match:
                current = match.group(1)
                continue
            if current and not line.startswith(";"):
                fields = line.split(None, 4)
                if len(fields) < 4:
                    raise QueryError(f"cannot parse record line {line!r}")
                owner, ttl, _cls, rtype = fields[:4]
                rdata = fields[4] if len(fields) > 4 else ""
                sections[current].add(make_rr(owner, ttl, rtype, rdata))
        if self.rcode is None:
            raise QueryError(f"no response from {self.command[1]}:\n{text.strip()}")
        self.answer = frozenset(sections["ANSWER"])
        self.authority = frozenset(sections["AUTHORITY"])
        self.additional = frozenset(sections["ADDITIONAL"])


def _address_port(server):
    if isinstance(server, tuple):
        return server
    return server.address, server.port


def kdig_command(server, qname, qtype="A", *, tcp=False, dnssec=False, edns=False,
                 bufsize=None, nsid=False, timeout=2, extra=()):
    """The kdig argument list for a query; see query()."""
    address, port = _address_port(server)
    command = [kdig_path(), f"@{address}", "-p", str(port), qname, qtype,
               "+retry=0", f"+timeout={timeout}", "+ignore"]
    if tcp:
        command.append("+tcp")
    if edns:
        command.append("+edns")
    elif not (dnssec or bufsize is not None or nsid or extra):
        # kdig 3.3 on sends EDNS unless told not to (3.2: only when told to); options in
        # extra (+ednsopt, +cookie) say for themselves.
        command.append("+noedns")
    if dnssec:
        command.append("+dnssec")
    if bufsize is not None:
        command.append(f"+bufsize={bufsize}")
    if nsid:
        command.append("+nsid")
    command.extend(extra)
    return command


def query(server, qname, qtype="A", *, tcp=False, dnssec=False, edns=False, bufsize=None,
          nsid=False, timeout=2, extra=()):
    """Sends one query and returns the parsed Answer.

    tcp: query over TCP (default UDP). edns: send an OPT record (needed to see
    EDE). dnssec: set DO (implies EDNS). bufsize: EDNS UDP payload size
    (implies EDNS). nsid: ask for NSID. timeout: seconds. extra: more kdig options.
    Raises QueryError when no response arrives.
    """
    command = kdig_command(server, qname, qtype, tcp=tcp, dnssec=dnssec, edns=edns,
                           bufsize=bufsize, nsid=nsid, timeout=timeout, extra=extra)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, timeout=timeout + 10)
    return Answer(command, result.stdout)


class Server:
    """What every server the tests run offers (knotd, kresd, unbound): kdig queries
    against its `address` and `port`, and its log at `log_path`."""

    def query(self, qname, qtype="A", **options):
        """query() against this server."""
        return query(self, qname, qtype, **options)

    def log_text(self):
        """Everything the server has logged so far ("" before it started)."""
        path = getattr(self, "log_path", None)
        if path is None:
            return ""
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def log_tail(self, lines=30):
        """The last `lines` lines of the server's log."""
        return "\n".join(self.log_text().splitlines()[-lines:])
