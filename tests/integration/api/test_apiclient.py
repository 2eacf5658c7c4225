#!/usr/bin/env python3
"""The API client's transport against a real TLS server (module/api/apiclient.c, k8s_api.md 1.11, 3.2).

A small HTTPS echo server (standard library) answers every GET with the request line and
headers as JSON; tests/integration/api_get makes one request through the API client with a
kubeconfig written by each case, so TLS verification, tls-server-name, client certificates and
the headers a real API server sees are checked end to end. Certificates come from the openssl
command line tool.
"""

import base64
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import testing  # noqa: E402

BUILDDIR = os.environ.get("MODK8S_BUILDDIR",
                          os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
API_GET = os.path.join(BUILDDIR, "tests", "integration", "api_get")
TOKEN = "t0ken-for-tests"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    """A CA, a server certificate for 127.0.0.1, one for kubernetes.default.svc only, a client one."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=test-ca", "-days", "2",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    leaves = {
        "ip": ("subjectAltName=IP:127.0.0.1", "serverAuth"),
        "name": ("subjectAltName=DNS:kubernetes.default.svc", "serverAuth"),
        "client": ("subjectAltName=DNS:knot", "clientAuth"),
    }
    for name, (san, usage) in leaves.items():
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(f"{san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage={usage}\n")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".crt", "-days", "2",
                "-extfile", name + ".ext", cwd=d)


class Echo(http.server.BaseHTTPRequestHandler):
    """Answers with what it was asked: path and headers (names lowercased)."""

    def do_GET(self):
        body = json.dumps({"path": self.path,
                           "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def start_server(d, cert, client_ca=False):
    """An HTTPS echo server on a free loopback port; returns (server, port)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, cert + ".crt"), os.path.join(d, cert + ".key"))
    if client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(os.path.join(d, "ca.crt"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def b64(d, name):
    with open(os.path.join(d, name), "rb") as f:
        return base64.b64encode(f.read()).decode()


@unittest.skipIf(shutil.which("openssl") is None, "openssl command not found")
class ApiClientTls(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="test_apiclient.")
        make_certs(cls.dir)
        cls.servers = []
        for key, cert, client_ca in (("ip", "ip", False), ("name", "name", False),
                                     ("mtls", "ip", True)):
            server, port = start_server(cls.dir, cert, client_ca)
            cls.servers.append(server)
            setattr(cls, key + "_port", port)

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers:
            server.shutdown()
            server.server_close()
        shutil.rmtree(cls.dir)

    def get(self, port, cluster, user="    token: " + TOKEN + "\n", path="/api/v1/services?limit=2"):
        """Writes a kubeconfig for 127.0.0.1:port and runs one GET; returns (exit code, output)."""
        config = os.path.join(self.dir, "config")
        with open(config, "w") as f:
            f.write("current-context: t\n"
                    "clusters:\n- name: c\n  cluster:\n"
                    f"    server: https://127.0.0.1:{port}\n{cluster}"
                    f"users:\n- name: u\n  user:\n{user or '    {}'}\n"
                    "contexts:\n- {name: t, context: {cluster: c, user: u}}\n")
        run = subprocess.run([API_GET, config, "-", path], capture_output=True, text=True,
                             timeout=30)
        return run.returncode, run.stdout

    def echo(self, out):
        """The echoed request of a successful GET."""
        return json.loads(out[:out.rindex("\nstatus ")])

    def test_ca_file_verifies_the_server(self):
        code, out = self.get(self.ip_port, "    certificate-authority: ca.crt\n")
        self.assertEqual(code, 0, out)
        self.assertEqual(self.echo(out)["path"], "/api/v1/services?limit=2")

    def test_request_headers_are_what_the_api_server_expects(self):
        code, out = self.get(self.ip_port, "    certificate-authority: ca.crt\n")
        headers = self.echo(out)["headers"]
        self.assertEqual(headers["authorization"], "Bearer " + TOKEN)
        self.assertEqual(headers["accept"], "application/json")
        self.assertTrue(headers["user-agent"].startswith("mod-k8s/"), headers["user-agent"])
        self.assertIn("gzip", headers["accept-encoding"])
        self.assertEqual(headers["host"], f"127.0.0.1:{self.ip_port}")

    def test_ca_data_verifies_the_server(self):
        code, out = self.get(self.ip_port,
                             f"    certificate-authority-data: {b64(self.dir, 'ca.crt')}\n")
        self.assertEqual(code, 0, out)

    def test_unknown_ca_fails_verification(self):
        code, out = self.get(self.ip_port, "")
        self.assertEqual(code, 2, out)
        self.assertIn("transfer failed", out)

    def test_certificate_for_another_name_fails_verification(self):
        code, out = self.get(self.name_port, "    certificate-authority: ca.crt\n")
        self.assertEqual(code, 2, out)

    def test_tls_server_name_verifies_that_name_and_keeps_the_host_header(self):
        code, out = self.get(self.name_port, "    certificate-authority: ca.crt\n"
                                             "    tls-server-name: kubernetes.default.svc\n")
        self.assertEqual(code, 0, out)
        self.assertEqual(self.echo(out)["headers"]["host"], f"127.0.0.1:{self.name_port}")

    def test_tls_server_name_that_does_not_match_fails(self):
        code, out = self.get(self.ip_port, "    certificate-authority: ca.crt\n"
                                           "    tls-server-name: kubernetes.default.svc\n")
        self.assertEqual(code, 2, out)

    def test_insecure_skip_tls_verify_accepts_any_certificate(self):
        code, out = self.get(self.name_port, "    insecure-skip-tls-verify: true\n")
        self.assertEqual(code, 0, out)

    def test_client_certificate_files_are_presented(self):
        code, out = self.get(self.mtls_port, "    certificate-authority: ca.crt\n",
                             "    client-certificate: client.crt\n"
                             "    client-key: client.key\n")
        self.assertEqual(code, 0, out)

    def test_client_certificate_data_is_presented(self):
        code, out = self.get(self.mtls_port, "    certificate-authority: ca.crt\n",
                             f"    client-certificate-data: {b64(self.dir, 'client.crt')}\n"
                             f"    client-key-data: {b64(self.dir, 'client.key')}\n")
        self.assertEqual(code, 0, out)

    def test_server_requiring_a_client_certificate_refuses_none(self):
        code, out = self.get(self.mtls_port, "    certificate-authority: ca.crt\n")
        self.assertEqual(code, 2, out)

    def test_token_file_is_sent_as_bearer(self):
        with open(os.path.join(self.dir, "token"), "w") as f:
            f.write("from-file\n")
        code, out = self.get(self.ip_port, "    certificate-authority: ca.crt\n",
                             "    tokenFile: token\n")
        self.assertEqual(code, 0, out)
        self.assertEqual(self.echo(out)["headers"]["authorization"], "Bearer from-file")

    def test_no_user_sends_no_authorization(self):
        code, out = self.get(self.ip_port, "    certificate-authority: ca.crt\n", user=None)
        self.assertEqual(code, 0, out)
        self.assertNotIn("authorization", self.echo(out)["headers"])


if __name__ == "__main__":
    testing.unittest_main()
