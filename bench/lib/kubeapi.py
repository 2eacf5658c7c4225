"""Persistent HTTPS connections to kube-apiserver, one per thread, as the admin of the
real control plane (tests/lib/realk8s.py): what bench/coredns and bench/latency write
their worlds and changes with."""

import http.client
import json
import threading
import time

from common import BenchError


class Api:
    """Requests to kube-apiserver over one kept-alive connection per calling thread."""

    def __init__(self, plane):
        self.plane = plane
        self.context = plane.ssl_context()
        self.local = threading.local()

    def call(self, method, path, body=None, content_type="application/json"):
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection(
                    "127.0.0.1", self.plane.port, context=self.context, timeout=120)
            try:
                conn.request(method, path, body=json.dumps(body).encode() if body else None,
                             headers={"Content-Type": content_type, "Accept": "application/json"})
                response = conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                continue
            if response.status == 429 or response.status >= 500:
                time.sleep(0.5)
                continue
            if response.status >= 300:
                raise BenchError(f"{method} {path}: HTTP {response.status} {raw[:300]!r}")
            return json.loads(raw)
        raise BenchError(f"{method} {path}: refused three times")
