"""A steady UDP query load that records whether each query was answered (lost queries).

    load = UdpLoad(lambda: port)      # where each query goes (None: nowhere, a loss)
    load.start(); ...; load.finish()
    load.results                      # [(port, sent, answered)], sent on time.monotonic()
"""

import itertools
import socket
import struct
import threading
import time

QNAME = "kubernetes.default.svc.cluster.local"


class UdpLoad(threading.Thread):
    """A query every 5 ms, each waiting 1 s for its answer, in a thread."""

    def __init__(self, next_port, qname=QNAME, address="127.0.0.1"):
        super().__init__(daemon=True)
        self.next_port = next_port
        self.address = address
        self.qname = b"".join(bytes([len(label)]) + label.encode()
                              for label in qname.split(".")) + b"\0"
        self.results = []
        self.stopping = threading.Event()

    def run(self):
        for ident in itertools.cycle(range(1, 0x10000)):
            if self.stopping.is_set():
                return
            port = self.next_port()
            query = struct.pack("!HHHHHH", ident, 0, 1, 0, 0, 0) + self.qname + struct.pack("!HH", 1, 1)
            sent = time.monotonic()
            answered = False
            if port is not None:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                    s.settimeout(1)
                    try:
                        s.sendto(query, (self.address, port))
                        while not answered:
                            answered = s.recv(4096)[:2] == query[:2]
                    except OSError:
                        pass
            self.results.append((port, sent, answered))
            time.sleep(0.005)

    def finish(self):
        """Stops the load and waits for the last query."""
        self.stopping.set()
        self.join(timeout=5)

    def lost(self, before=None):
        """The ports of the unanswered queries (sent before `before`, when given)."""
        return [port for port, sent, answered in self.results
                if not answered and (before is None or sent < before)]
