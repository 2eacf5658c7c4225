"""Clients that hold an endpoint's connections without ever finishing a request (a
slowloris), for the tests of the endpoints' caps and deadlines (test_metrics_slowloris.py,
test_federation_forward.py).

    with SlowAttack(port, ["127.0.0.2"] * 8, first=b"GET / HTTP/1.1\r\nX: ", interval=1.5):
        ...  # 8 connections from 127.0.0.2, each reopened as soon as the server closes it

Loopback addresses other than 127.0.0.1 are bound as the sources (Linux routes 127/8 to lo).
"""

import socket
import threading
import time


class SlowClient:
    """A TCP connection to 127.0.0.1:`port` from `source` that sends `first`, then `more`
    (one byte) every `interval` seconds: a request, or a TLS handshake, that never ends."""

    def __init__(self, port, source, first, interval, more=b"a"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                             source_address=(source, 0))
        self.sock.setblocking(False)
        self.interval = interval
        self.more = more
        self.sock.send(first)
        self.next = time.monotonic() + interval

    def alive(self):
        """Sends the next byte when it is due; False once the server closed the connection."""
        try:
            if self.sock.recv(4096) == b"":
                return False
        except BlockingIOError:
            pass
        except OSError:
            return False
        if time.monotonic() >= self.next:
            self.next += self.interval
            try:
                self.sock.send(self.more)
            except OSError:
                return False
        return True

    def close(self):
        self.sock.close()


class SlowAttack:
    """One SlowClient per entry of `sources` (an address may come several times), each
    reopened as soon as the server closes it, in a thread of its own: as many connections
    as the endpoint takes. `opened` counts the connections opened."""

    def __init__(self, port, sources, first, interval, more=b"a"):
        self.port = port
        self.sources = list(sources)
        self.first = first
        self.interval = interval
        self.more = more
        self.clients = [None] * len(self.sources)
        self.opened = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, i):
        try:
            self.clients[i] = SlowClient(self.port, self.sources[i], self.first,
                                         self.interval, self.more)
            self.opened += 1
        except OSError:
            self.clients[i] = None

    def _run(self):
        while not self.stop.is_set():
            for i, client in enumerate(self.clients):
                if client is None or not client.alive():
                    if client is not None:
                        client.close()
                    self._open(i)
            time.sleep(0.05)
        for client in self.clients:
            if client is not None:
                client.close()

    def open_now(self):
        return sum(1 for client in self.clients if client is not None)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        return False
