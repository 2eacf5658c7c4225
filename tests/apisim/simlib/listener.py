"""The TLS listener: accept loop, one thread per connection, and outages (listener closed and
every open connection dropped, then the same port served again)."""

import socket
import ssl
import threading
import time


class Listener:
    """Serves handler_class over TLS on (address, port); port 0 picks a free port."""

    def __init__(self, address, port, context, handler_class, log):
        self.address = address
        self.port = port
        self.context = context
        self.handler_class = handler_class
        self.log = log
        self.sock = None
        self.lock = threading.Lock()
        self.connections = set()
        self.down_until = 0.0
        self.stopping = False
        self.thread = None

    def _bind(self):
        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.address, self.port))
        sock.listen(128)
        sock.settimeout(0.25)
        self.port = sock.getsockname()[1]
        return sock

    def bind(self):
        """Binds now (the port is known from here on); start() begins accepting."""
        self.sock = self._bind()

    def start(self):
        if self.sock is None:
            self.sock = self._bind()
        self.thread = threading.Thread(target=self._accept_loop, name="accept", daemon=True)
        self.thread.start()

    def _accept_loop(self):
        while not self.stopping:
            if self.sock is None:
                if time.monotonic() < self.down_until:
                    time.sleep(0.05)
                    continue
                try:
                    self.sock = self._bind()
                    self.log("listener back after outage")
                except OSError as err:
                    self.log(f"listener rebind failed, retrying ({err})")
                    time.sleep(0.2)
                continue
            try:
                conn, addr = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self.sock is not None and time.monotonic() >= self.down_until and not self.stopping:
                    continue
                self._close_listener()
                continue
            if time.monotonic() < self.down_until:
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn, addr), daemon=True).start()

    def _close_listener(self):
        with self.lock:
            sock, self.sock = self.sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def _serve(self, conn, addr):
        try:
            conn.settimeout(10)
            tls = self.context.wrap_socket(conn, server_side=True)
            tls.settimeout(None)
        except (OSError, ssl.SSLError):
            conn.close()
            return
        with self.lock:
            self.connections.add(tls)
        try:
            self.handler_class(tls, addr, self)
        except Exception as err:  # a broken connection must not take the server down
            if not isinstance(err, (OSError, ValueError)):
                self.log(f"connection handler failed ({type(err).__name__}: {err})")
        finally:
            with self.lock:
                self.connections.discard(tls)
            try:
                tls.close()
            except OSError:
                pass

    def drop_connections(self):
        """Ends every open connection at once (FIN, no TLS close_notify)."""
        with self.lock:
            conns = list(self.connections)
        for conn in conns:
            try:
                socket.socket.shutdown(conn, socket.SHUT_RDWR)
            except OSError:
                pass
        return len(conns)

    def outage(self, seconds):
        """Refuses connections for seconds: the listener closes and open connections drop."""
        self.down_until = time.monotonic() + seconds
        with self.lock:
            sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._close_listener()
        return self.drop_connections()

    def stop(self):
        self.stopping = True
        self._close_listener()
        self.drop_connections()
