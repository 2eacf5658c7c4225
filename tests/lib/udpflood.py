"""A flood of UDP queries at a fixed rate from chosen source addresses, its answers counted.

    with Flood(server, ["127.0.0.2"], 800, lambda i: f"f{i}.example.com.") as flood:
        ...                          # 800 names a second, each new
    flood.sent, flood.rcodes         # queries sent per source, {rcode: answers}
"""

import select
import socket
import threading
import time

import wire


class Flood(threading.Thread):
    """`rate` queries a second from each of `sources` over UDP, name(i) the i-th of them
    all (source k's n-th is n * len(sources) + k); the answers read, counted by RCODE."""

    def __init__(self, server, sources, rate, name):
        super().__init__(daemon=True)
        self.server, self.rate, self.qname = server, rate, name
        self.socks = []
        for source in sources:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((source, 0))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            self.socks.append(s)
        self.stopping = threading.Event()
        self.sent = 0
        self.rcodes = {}

    def run(self):
        start = time.monotonic()
        while not self.stopping.is_set():
            due = int((time.monotonic() - start) * self.rate)
            while self.sent < due:
                for k, s in enumerate(self.socks):
                    i = self.sent * len(self.socks) + k
                    try:
                        s.sendto(wire.query(self.qname(i), ident=i & 0xFFFF), self.server)
                    except OSError:
                        pass
                self.sent += 1
            # poll(), not select(): the flood's descriptors may be past 1,024.
            p = select.poll()
            for s in self.socks:
                p.register(s, select.POLLIN)
            for fd, _ in p.poll(10):
                s = next(s for s in self.socks if s.fileno() == fd)
                rcode = wire.parse(s.recv(65535)).rcode
                self.rcodes[rcode] = self.rcodes.get(rcode, 0) + 1

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.join()
        for s in self.socks:
            s.close()
        return False
