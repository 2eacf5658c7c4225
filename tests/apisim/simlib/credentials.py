"""Certificates (openssl), bearer tokens and the files a client reads: a service-account style
directory (token, ca.crt, namespace behind a ..data symlink, swapped atomically like the kubelet
does) and kubeconfig files in every credential form."""

import base64
import datetime
import json
import os
import secrets
import subprocess
import tempfile
import threading
import time

USER = "system:serviceaccount:kube-system:mod-k8s"
NAMESPACE = "kube-system"
CLIENT_CN = "mod-k8s-client"
SERVER_SANS = ("IP:127.0.0.1", "IP:::1", "DNS:localhost", "DNS:kubernetes", "DNS:kubernetes.default",
               "DNS:kubernetes.default.svc", "DNS:kubernetes.default.svc.cluster.local",
               "IP:10.96.0.1")


def write_atomic(path, data, mode=0o644):
    """Writes a file so that readers see the old or the new content, never a part."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data if isinstance(data, bytes) else data.encode())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _openssl(*args, cwd):
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {result.stderr.strip()}")


def _issue(workdir, name, subject, extensions, signed=True):
    """Creates NAME.key and NAME.crt (RSA 2048) signed by the CA, or unsigned: the CA's own
    self-signed ca.key and ca.pem."""
    tmp = tempfile.mkdtemp(dir=workdir, prefix=".certs-")
    try:
        ext_file = os.path.join(tmp, "ext.cnf")
        with open(ext_file, "w") as out:
            out.write("\n".join(extensions) + "\n")
        key, crt = os.path.join(tmp, "key"), os.path.join(tmp, "crt")
        if not signed:
            _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                     "-days", "3650", "-subj", subject, "-extensions", "v3", "-config", ext_file,
                     cwd=tmp)
        else:
            csr = os.path.join(tmp, "csr")
            _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                     "-subj", subject, cwd=tmp)
            _openssl("x509", "-req", "-in", csr, "-CA", os.path.join(workdir, "ca.pem"),
                     "-CAkey", os.path.join(workdir, "ca.key"), "-set_serial",
                     str(secrets.randbits(63)), "-days", "3650", "-out", crt,
                     "-extfile", ext_file, "-extensions", "v3", cwd=tmp)
        with open(key, "rb") as f:
            write_atomic(os.path.join(workdir, name + ".key"), f.read(), 0o600)
        with open(crt, "rb") as f:
            write_atomic(os.path.join(workdir, name + ".crt" if signed else "ca.pem"), f.read())
    finally:
        for entry in os.listdir(tmp):
            os.unlink(os.path.join(tmp, entry))
        os.rmdir(tmp)


def make_certificates(workdir):
    """CA (ca.key, ca.pem; ca.crt is its service-account style symlink), server and client pairs."""
    _issue(workdir, "ca", "/CN=apisim-ca", [
        "[req]", "distinguished_name=dn", "[dn]", "[v3]",
        "basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign",
        "subjectKeyIdentifier=hash"], signed=False)
    _issue(workdir, "server", "/CN=kube-apiserver", [
        "[v3]", "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment", "extendedKeyUsage=serverAuth",
        "subjectAltName=" + ",".join(SERVER_SANS)])
    _issue(workdir, "client", f"/O=apisim:dns/CN={CLIENT_CN}", [
        "[v3]", "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment", "extendedKeyUsage=clientAuth"])


def _b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def new_token(lifetime=3607):
    """A bearer token shaped like a projected service-account JWT (the signature is random)."""
    now = int(time.time())
    header = {"alg": "RS256", "kid": "apisim"}
    claims = {"aud": ["https://kubernetes.default.svc.cluster.local"], "exp": now + lifetime,
              "iat": now, "iss": "https://kubernetes.default.svc.cluster.local",
              "jti": secrets.token_hex(16),
              "kubernetes.io": {"namespace": NAMESPACE, "serviceaccount": {
                  "name": "mod-k8s", "uid": "6f0f1e36-1c1b-4d1e-9a55-2b0e3d4c5f60"}},
              "nbf": now, "sub": USER}
    return ".".join([_b64url(json.dumps(header, separators=(",", ":")).encode()),
                     _b64url(json.dumps(claims, separators=(",", ":")).encode()),
                     _b64url(secrets.token_bytes(256))])


class Credentials:
    """The tokens the server accepts and the files that hand them to clients."""

    def __init__(self, workdir):
        self.workdir = os.path.abspath(workdir)
        self.lock = threading.Lock()
        self.valid = set()
        self.token = None
        self.user = USER
        self.server_url = None
        self.rotations = 0

    def path(self, name):
        return os.path.join(self.workdir, name)

    def setup(self):
        make_certificates(self.workdir)
        self.rotate(keep_old=False)

    def token_valid(self, token):
        with self.lock:
            return token in self.valid

    def rotate(self, keep_old=False):
        """A new token becomes current (files rewritten); the old one stays valid only if keep_old."""
        token = new_token()
        with self.lock:
            if not keep_old:
                self.valid.clear()
            self.valid.add(token)
            self.token = token
            self.rotations += 1
        self._write_secret_dir(token)
        if self.server_url:
            self.write_kubeconfigs()

    def expire(self):
        """Every token is rejected (401) until the next rotation, as after token expiry."""
        with self.lock:
            self.valid.clear()

    def _write_secret_dir(self, token):
        """token, ca.crt, namespace -> ..data/ -> ..TIMESTAMP/, swapped like the kubelet's AtomicWriter."""
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("..%Y_%m_%d_%H_%M_%S.%f")
        stamp += f"{self.rotations:03d}"
        new_dir = self.path(stamp)
        os.mkdir(new_dir)
        with open(self.path("ca.pem"), "rb") as f:
            ca = f.read()
        for name, data, mode in (("token", token.encode(), 0o600), ("ca.crt", ca, 0o644),
                                 ("namespace", NAMESPACE.encode(), 0o644)):
            with open(os.path.join(new_dir, name), "wb") as out:
                out.write(data)
            os.chmod(os.path.join(new_dir, name), mode)
        old = os.readlink(self.path("..data")) if os.path.islink(self.path("..data")) else None
        tmp_link = self.path("..data_tmp")
        if os.path.lexists(tmp_link):
            os.unlink(tmp_link)
        os.symlink(stamp, tmp_link)
        os.replace(tmp_link, self.path("..data"))
        for name in ("token", "ca.crt", "namespace"):
            if not os.path.islink(self.path(name)):
                if os.path.lexists(self.path(name)):
                    os.unlink(self.path(name))
                os.symlink(os.path.join("..data", name), self.path(name))
        if old and old != stamp:
            old_dir = self.path(old)
            for entry in os.listdir(old_dir):
                os.unlink(os.path.join(old_dir, entry))
            os.rmdir(old_dir)

    def write_kubeconfigs(self):
        """kubeconfig (inline token), -tokenfile, -cert (client certificate) and -data (*-data)."""
        with self.lock:
            token = self.token

        def read_b64(name):
            with open(self.path(name), "rb") as f:
                return base64.b64encode(f.read()).decode()
        ca_path = json.dumps(self.path("ca.crt"))
        forms = {
            "kubeconfig": ([f"certificate-authority: {ca_path}"], [f"token: {token}"]),
            "kubeconfig-tokenfile": ([f"certificate-authority: {ca_path}"],
                                     [f"tokenFile: {json.dumps(self.path('token'))}"]),
            "kubeconfig-cert": ([f"certificate-authority: {ca_path}"],
                                [f"client-certificate: {json.dumps(self.path('client.crt'))}",
                                 f"client-key: {json.dumps(self.path('client.key'))}"]),
            "kubeconfig-data": ([f"certificate-authority-data: {read_b64('ca.pem')}"],
                                [f"client-certificate-data: {read_b64('client.crt')}",
                                 f"client-key-data: {read_b64('client.key')}"]),
        }
        for name, (cluster, user) in forms.items():
            text = "\n".join([
                "apiVersion: v1",
                "kind: Config",
                "clusters:",
                "- name: apisim",
                "  cluster:",
                f"    server: {self.server_url}",
                *["    " + line for line in cluster],
                "contexts:",
                "- name: apisim",
                "  context:",
                "    cluster: apisim",
                "    user: mod-k8s",
                "    namespace: default",
                "current-context: apisim",
                "preferences: {}",
                "users:",
                "- name: mod-k8s",
                "  user:",
                *["    " + line for line in user],
            ]) + "\n"
            write_atomic(self.path(name), text, 0o600)
