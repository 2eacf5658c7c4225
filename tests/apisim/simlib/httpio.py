"""Response bodies on the wire: buffered or chunked (optionally gzip and throttled), and
chunked watch streams that split and batch events like the real server."""

import socket
import struct
import time
import zlib

CHUNK_BATCH = 64 * 1024


class StreamClosed(Exception):
    """The connection was deliberately closed (a fault) or broke; stop handling it."""


class BodyWriter:
    """A non-stream response: sent with Content-Length when it stays under the gzip threshold,
    otherwise chunked (gzip when the client accepts it, as the real server does above 128 KiB)."""

    def __init__(self, handler, code, content_type, gzip_ok, threshold, rate=0, headers=()):
        self.handler = handler
        self.code = code
        self.content_type = content_type
        self.gzip_ok = gzip_ok
        self.threshold = threshold
        self.rate = rate
        self.headers = list(headers)
        self.buf = []
        self.size = 0
        self.streaming = False
        self.pending = []
        self.pending_size = 0
        self.gz = None

    def write(self, text):
        data = text.encode() if isinstance(text, str) else text
        if not self.streaming:
            self.buf.append(data)
            self.size += len(data)
            if self.size > self.threshold or self.rate:
                self._begin_stream()
            return
        self._queue(data)

    def _begin_stream(self):
        h = self.handler
        h.send_response(self.code)
        h.send_common_headers(self.content_type, self.headers)
        # As the real server, decide on what is written so far: a throttled (slow-list) body
        # starts streaming at its first small write and is then not compressed.
        if self.gzip_ok and self.size > self.threshold:
            h.send_header("Content-Encoding", "gzip")
            self.gz = zlib.compressobj(1, zlib.DEFLATED, 31)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        self.streaming = True
        data, self.buf = b"".join(self.buf), None
        self._queue(data)

    def _queue(self, data):
        if self.gz is not None:
            data = self.gz.compress(data)
        if data:
            self.pending.append(data)
            self.pending_size += len(data)
        if self.pending_size >= CHUNK_BATCH:
            self._flush_pending()

    def _flush_pending(self):
        data = b"".join(self.pending)
        self.pending, self.pending_size = [], 0
        if not data:
            return
        if not self.rate:
            self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            return
        piece = max(1, int(self.rate) // 10)
        for start in range(0, len(data), piece):
            part = data[start:start + piece]
            self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            time.sleep(len(part) / self.rate)

    def close(self):
        h = self.handler
        if not self.streaming:
            data = b"".join(self.buf)
            h.send_response(self.code)
            h.send_common_headers(self.content_type, self.headers)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            return
        if self.gz is not None:
            self.pending.append(self.gz.flush())
            self.pending_size += len(self.pending[-1])
        self._flush_pending()
        h.wfile.write(b"0\r\n\r\n")


class StreamWriter:
    """A chunked watch stream.  Each write is one batch of complete event lines; the writer
    sometimes splits a batch across chunks (always above 32 KiB) so that clients must
    reassemble lines, while several queued events naturally share one chunk."""

    def __init__(self, handler, rng, split_probability):
        self.handler = handler
        self.rng = rng
        self.split_probability = split_probability

    def _chunk(self, data):
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def send(self, data):
        if len(data) > 32 * 1024:
            pos = 0
            while pos < len(data):
                size = self.rng.randint(16 * 1024, 32 * 1024)
                self._chunk(data[pos:pos + size])
                pos += size
        elif len(data) > 1 and self.rng.random() < self.split_probability:
            cut = self.rng.randint(1, len(data) - 1)
            self._chunk(data[:cut])
            self._chunk(data[cut:])
        else:
            self._chunk(data)

    def send_throttled(self, data, rate, stop):
        """Writes data at `rate` bytes a second (a slow-list fault on a watch-list's initial
        events), a tenth of a second's worth a chunk; stops early when stop() is true."""
        piece = max(1, int(rate) // 10)
        for start in range(0, len(data), piece):
            if stop():
                return
            part = data[start:start + piece]
            self._chunk(part)
            time.sleep(len(part) / rate)

    def end(self):
        self.handler.wfile.write(b"0\r\n\r\n")

    def cut(self, line, mode):
        """Ends the stream in the middle of an event line (fault injection), then closes.

        chunk-end: half a line, then the terminating chunk (the body ends "cleanly");
        close: half a line as a complete chunk, then FIN without a terminating chunk;
        mid-chunk: a chunk header for the whole line, half of it, then FIN;
        rst: half a line, then a TCP reset."""
        half = line[:max(1, len(line) // 2)]
        if mode == "mid-chunk":
            self.handler.wfile.write(b"%x\r\n%s" % (len(line), half))
        else:
            self._chunk(half)
        if mode == "chunk-end":
            self.end()
        close_connection(self.handler.connection, reset=(mode == "rst"))
        raise StreamClosed(mode)


def close_connection(sock, reset=False):
    """Ends a (TLS) connection abruptly: FIN without TLS close_notify, or, with reset, a zero
    linger so that the close which follows when the handler returns sends RST."""
    try:
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass
