"""DNS messages on the wire, for tests that need many queries fast or a chosen source address.

    import wire

    replies = wire.burst(("127.0.0.1", port), "kubernetes.default.svc.cluster.local.", "A",
                         count=200, source="127.0.1.9")
    sum(reply.tc for reply in replies)          # truncated answers among those received

kdig starts a process per query; a rate limiter needs hundreds within a second.
Only the header, the EDNS COOKIE option and the answer count are read back.
"""

import collections
import os
import select
import socket
import struct
import time

TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "TXT": 16, "AAAA": 28, "SRV": 33,
         "DNSKEY": 48, "AXFR": 252, "ANY": 255}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED",
          9: "NOTAUTH", 23: "BADCOOKIE"}
OPT_COOKIE = 10


class Reply(collections.namedtuple("Reply", "id rcode tc aa ancount cookie")):
    """What a test reads of a response: id, rcode name (extended rcode included), TC and AA
    flags, the number of answer records and the COOKIE option's bytes (None without)."""

    __slots__ = ()


def encode_name(name):
    """Wire form of a fully qualified name."""
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            data = label.encode("ascii")
            out += bytes([len(data)]) + data
    return out + b"\0"


def query(qname, qtype="A", *, ident=0, edns=False, cookie=None, rd=False):
    """A query message; `cookie` (client cookie, or client and server cookie) implies EDNS."""
    flags = 0x0100 if rd else 0
    arcount = 1 if (edns or cookie is not None) else 0
    message = struct.pack(">HHHHHH", ident, flags, 1, 0, 0, arcount)
    code = TYPES[qtype] if isinstance(qtype, str) else qtype
    message += encode_name(qname) + struct.pack(">HH", code, 1)
    if arcount:
        options = b""
        if cookie is not None:
            options += struct.pack(">HH", OPT_COOKIE, len(cookie)) + cookie
        message += b"\0" + struct.pack(">HHIH", 41, 1232, 0, len(options)) + options
    return message


def _skip_name(message, offset):
    while True:
        length = message[offset]
        if length == 0:
            return offset + 1
        if length >= 0xC0:
            return offset + 2
        offset += 1 + length


def _skip_rr(message, offset):
    offset = _skip_name(message, offset)
    rdlength = struct.unpack_from(">H", message, offset + 8)[0]
    return offset + 10 + rdlength


def parse(message):
    """The Reply of a response message."""
    ident, flags, qdcount, ancount, nscount, arcount = struct.unpack_from(">HHHHHH", message)
    offset = 12
    for _ in range(qdcount):
        offset = _skip_name(message, offset) + 4
    for _ in range(ancount + nscount):
        offset = _skip_rr(message, offset)
    rcode = flags & 0xF
    cookie = None
    for _ in range(arcount):
        start = _skip_name(message, offset)
        rtype, _cls, ttl, rdlength = struct.unpack_from(">HHIH", message, start)
        if rtype == 41:
            rcode |= (ttl >> 24) << 4
            position = start + 10
            while position < start + 10 + rdlength:
                code, length = struct.unpack_from(">HH", message, position)
                if code == OPT_COOKIE:
                    cookie = bytes(message[position + 4:position + 4 + length])
                position += 4 + length
        offset = start + 10 + rdlength
    return Reply(ident, RCODES.get(rcode, str(rcode)), bool(flags & 0x0200), bool(flags & 0x0400),
                 ancount, cookie)


def exchange(server, message, *, source="127.0.0.1", timeout=2):
    """Sends one query over UDP from `source`; returns the Reply (None on timeout)."""
    replies = _send(server, [message], source, timeout)
    return replies[0] if replies else None


def burst(server, qname, qtype="A", *, count=100, source="127.0.0.1", cookie=None, window=25,
          timeout=0.3):
    """Sends `count` queries from `source` over UDP, `window` at a time, each window followed
    by up to `timeout` seconds of waiting for its replies (so a receive buffer never
    overflows); returns the Replies received (a dropped answer is simply missing)."""
    replies = []
    sent = 0
    while sent < count:
        batch = [query(qname, qtype, ident=(sent + i) & 0xFFFF, cookie=cookie)
                 for i in range(min(window, count - sent))]
        replies += _send(server, batch, source, timeout)
        sent += len(batch)
    return replies


def tcp_replies(conn, count, timeout):
    """Yields the Replies that come on the TCP connection conn (length-prefixed), until
    count came, the connection ends or timeout seconds passed."""
    buf = b""
    got = 0
    deadline = time.monotonic() + timeout
    while got < count and time.monotonic() < deadline:
        try:
            data = conn.recv(65536)
        except OSError:
            return
        if not data:
            return
        buf += data
        while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
            length = struct.unpack(">H", buf[:2])[0]
            got += 1
            yield parse(buf[2:2 + length])
            buf = buf[2 + length:]


def _send(server, messages, source, timeout):
    family = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.bind((source, 0))
        sock.connect(server)
        for message in messages:
            sock.send(message)
        replies = []
        deadline = time.monotonic() + timeout
        while len(replies) < len(messages):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                break
            replies.append(parse(sock.recv(65535)))
        return replies


def client_cookie():
    """A random 8-byte client cookie."""
    return os.urandom(8)
