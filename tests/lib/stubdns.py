"""A stub upstream DNS server the forwarding tests control (UDP and TCP, loopback).

    with stubdns.StubDNS(delay=0.05) as up:        # answers after 50 ms
        ... forward: [ f"127.0.0.1@{up.port}" ]
        up.mode = "silent"                          # from now on never answers
        up.names()                                  # the names asked so far, in order
        up.rcodes["www."] = 5                       # www. is REFUSED (no records), any type

Modes:
  answer  every name has an A record 192.0.2.<n> (n from the name), AAAA 2001:db8::<n>,
          TTL `ttl`; a name whose first label starts with "nx" is NXDOMAIN (SOA in
          authority); a name whose first label starts with "big" has 60 A records and is
          truncated over UDP (TC), answered whole over TCP.
  silent  nothing is answered (the queries are still recorded).
  servfail  every query is answered SERVFAIL (UDP and TCP).
  loop    every query is relayed to `loop_to` (host, port), its answer relayed back: a
          forwarding loop when `loop_to` is the server that forwards here.
"""

import heapq
import socket
import struct
import threading
import time

import wire


def _name_at(message, offset):
    labels = []
    while True:
        length = message[offset]
        if length == 0:
            return ".".join(labels) + ".", offset + 1
        labels.append(message[offset + 1:offset + 1 + length].decode("ascii", "replace"))
        offset += 1 + length


def _question(message):
    name, offset = _name_at(message, 12)
    qtype, qclass = struct.unpack_from(">HH", message, offset)
    return name, qtype, offset + 4


def servfail_for(query):
    """A SERVFAIL answer to a query message: its question, no records."""
    ident, flags = struct.unpack_from(">HH", query)
    _, _, end = _question(query)
    return struct.pack(">HHHHHH", ident, 0x8000 | (flags & 0x0100) | 0x0080 | 2, 1, 0, 0, 0) + \
        query[12:end]


def _number(name):
    return 1 + sum(name.lower().encode()) % 250


def answer_address(name):
    """The A record's address the stub answers for name (absolute, with its dot)."""
    return f"192.0.2.{_number(name)}"


def _rr(rtype, ttl, rdata):
    # Owner: a pointer to the question's name (offset 12).
    return b"\xc0\x0c" + struct.pack(">HHIH", rtype, 1, ttl, len(rdata)) + rdata


def answer_for(query, ttl, tcp=False, rcodes=None):
    """The stub's answer to a query message (mode "answer"); rcodes: lowercase name ->
    the RCODE it gets instead of records."""
    ident, flags = struct.unpack_from(">HH", query)
    name, qtype, end = _question(query)
    label = name.split(".")[0].lower()
    rcode, answers, authority = 0, [], []
    n = _number(name)
    if rcodes and name.lower() in rcodes:
        rcode = rcodes[name.lower()]
    elif label.startswith("nx"):
        rcode = 3
        soa = (wire.encode_name("example.") + wire.encode_name("hostmaster.example.") +
               struct.pack(">IIIII", 1, 3600, 600, 86400, ttl))
        authority.append(b"\x00" + struct.pack(">HHIH", 6, 1, ttl, len(soa)) + soa)
    elif label.startswith("big") and qtype == 1:
        answers = [_rr(1, ttl, bytes([192, 0, 2, i + 1])) for i in range(60)]
    elif qtype == 1:
        answers.append(_rr(1, ttl, bytes([192, 0, 2, n])))
    elif qtype == 28:
        answers.append(_rr(28, ttl, bytes.fromhex("20010db8" + "00" * 11) + bytes([n])))
    elif qtype == 2 and name == ".":
        answers.append(_rr(2, ttl, wire.encode_name("a.root-servers.net.")))
    reply_flags = 0x8000 | (flags & 0x0100) | 0x0080 | rcode
    if not tcp and len(answers) > 20:
        reply_flags |= 0x0200
        answers = []
    header = struct.pack(">HHHHHH", ident, reply_flags, 1, len(answers), len(authority), 0)
    return header + query[12:end] + b"".join(answers) + b"".join(authority)



def bind_pair(rcvbuf=None, host="127.0.0.1", port=0):
    """A UDP and a TCP socket bound to one port of host (a free one, by default):
    (udp, tcp, port). The UDP port the kernel picks may be taken for TCP, so a few ports
    are tried."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for attempt in range(20):
        udp = socket.socket(family, socket.SOCK_DGRAM)
        if rcvbuf:
            udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        udp.bind((host, port))
        bound = udp.getsockname()[1]
        tcp = socket.socket(family, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind((host, bound))
            return udp, tcp, bound
        except OSError:
            udp.close()
            tcp.close()
            # A port asked for is not tried again; a free one the kernel picks is.
            if attempt == 19 or port:
                raise

class StubDNS:
    """A stub upstream on 127.0.0.1 (or host, port: UDP and TCP on one port); a context
    manager. `python3 stubdns.py HOST [PORT]` serves on HOST (port 53) until killed,
    printing each question asked ("NAME QTYPE"), answering names under example. and
    example.org. (NXDOMAIN for others), never those whose first label starts with
    "silent": a node's resolver in tests/realcluster."""

    def __init__(self, mode="answer", delay=0.0, ttl=30, loop_to=None, answer=None,
                 host="127.0.0.1", port=0, on_query=None):
        self.mode = mode
        # answer(query, ttl, tcp) -> the reply message, or None for none: a test's own answers.
        self.answer = answer or (lambda query, ttl, tcp: answer_for(query, ttl, tcp, self.rcodes))
        self.delay = delay
        self.ttl = ttl
        self.loop_to = loop_to
        self.rcodes = {}
        self._asked = []
        self._transports = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heap = []
        self._cond = threading.Condition()
        self.host = host
        self.on_query = on_query
        self.udp, self.tcp, self.port = bind_pair(rcvbuf=4 << 20, host=host, port=port)
        self.tcp.listen(64)
        self._threads = [threading.Thread(target=f, daemon=True)
                         for f in (self._udp_loop, self._tcp_loop, self._sender)]

    @property
    def address(self):
        return f"{self.host}@{self.port}"

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        for sock in (self.udp, self.tcp):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        return False

    def names(self):
        """(name, qtype) of every query received so far, in order."""
        with self._lock:
            return list(self._asked)

    def transports(self):
        """(name, "udp" or "tcp") of every query received so far, in order."""
        with self._lock:
            return list(self._transports)

    def _record(self, query, tcp=False):
        try:
            name, qtype, _ = _question(query)
        except (IndexError, struct.error):
            return None
        with self._lock:
            self._asked.append((name.lower(), qtype))
            self._transports.append((name.lower(), "tcp" if tcp else "udp"))
        if self.on_query is not None:
            self.on_query(name.lower(), qtype)
        return name

    def _later(self, when, data, address):
        with self._cond:
            heapq.heappush(self._heap, (when, id(data), data, address))
            self._cond.notify()

    def _sender(self):
        while not self._stop.is_set():
            with self._cond:
                while not self._heap and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                when, _, data, address = self._heap[0]
                left = when - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._heap)
            try:
                self.udp.sendto(data, address)
            except OSError:
                pass

    def _relay(self, query, tcp):
        if tcp:
            with socket.create_connection(self.loop_to, timeout=3) as s:
                s.sendall(struct.pack(">H", len(query)) + query)
                length = struct.unpack(">H", s.recv(2))[0]
                return s.recv(length)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(3)
            s.sendto(query, self.loop_to)
            return s.recv(65535)

    def _udp_loop(self):
        while not self._stop.is_set():
            try:
                query, address = self.udp.recvfrom(65535)
            except OSError:
                return
            if self._record(query) is None or self.mode == "silent":
                continue
            if self.mode == "loop":
                threading.Thread(target=self._loop_one, args=(query, address), daemon=True).start()
                continue
            reply = servfail_for(query) if self.mode == "servfail" else \
                self.answer(query, self.ttl, False)
            if reply is not None:
                self._later(time.monotonic() + self.delay, reply, address)

    def _loop_one(self, query, address):
        try:
            self.udp.sendto(self._relay(query, False), address)
        except OSError:
            pass

    def _tcp_loop(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            threading.Thread(target=self._tcp_one, args=(conn,), daemon=True).start()

    def _tcp_one(self, conn):
        with conn:
            try:
                conn.settimeout(5)
                length = struct.unpack(">H", conn.recv(2))[0]
                query = b""
                while len(query) < length:
                    query += conn.recv(length - len(query))
                if self._record(query, tcp=True) is None or self.mode == "silent":
                    time.sleep(5)
                    return
                time.sleep(self.delay)
                reply = self._relay(query, True) if self.mode == "loop" else \
                    servfail_for(query) if self.mode == "servfail" else \
                    self.answer(query, self.ttl, True)
                if reply is None:
                    return
                conn.sendall(struct.pack(">H", len(reply)) + reply)
            except (OSError, struct.error):
                pass


if __name__ == "__main__":
    import sys

    def _print(name, qtype):
        print(f"{name} {qtype}", flush=True)

    def _answer(query, ttl, tcp):
        name = _question(query)[0].lower()
        # A name whose first label starts with "silent" is never answered (an upstream
        # that loses it): tests/realcluster/dualstack's flood.
        if name.startswith("silent"):
            return None
        # As the public DNS: names under example. and example.org. exist, others
        # (kubernetes.default., a search list's last try) are NXDOMAIN.
        if not (name.endswith(".example.") or name.endswith(".example.org.")):
            return answer_for(query, ttl, tcp, {name: 3})
        return answer_for(query, ttl, tcp)
    with StubDNS(host=sys.argv[1], port=int(sys.argv[2]) if len(sys.argv) > 2 else 53,
                 on_query=_print, answer=_answer):
        print(f"serving on {sys.argv[1]}", flush=True)
        threading.Event().wait()
