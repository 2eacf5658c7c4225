"""A simulated federation for the tests of federated service discovery
(shared/specs/federated-service-discovery.md): test_federation_dns.py (the
Federated-DNS role), test_federation_forward.py (the K8S-DNS role's programming
endpoint) and test_federation_roles.py (both roles together).

    from federation import Federation, NAME, ordered, source_opt
    tests.main(fixture=Federation)

Three member clusters, each an API simulator, and one knotd whose mod-k8s watches
all three (federation-member) and serves the federation zone `federation.` and the
external zone `federation.example.com.` (federation-external
myfed.svc.federation.example.com.). The design's example service myservice/myns is
`web` in namespace `shop`:

    member  zone / region                clusterIP   load-balancer ingress
    baz     europe-west1-b / europe-west1  10.0.3.30   108.120.45.12
    bar     us-east1-c / us-east1          10.0.2.20   104.32.64.130
    foo     us-east1-b / us-east1          10.0.1.10   104.32.64.128, 2001:db8::128

(configuration order baz, bar, foo: a preference by topology shows against it).
Each member's K8S-DNS queries come from 127.0.0.1 (`source=127.0.0.1/32`): a client of
another address (kdig -b 127.0.0.2) cannot speak for a member.

Also: make_pki() and https_request(), the certificates and the client of the K8S-DNS
role's programming endpoint (the design's stubzone server).
"""

import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile

import dig
import knotd
import public
import simctl
import testing
from cluster import stats
from faults import namespace

MEMBERS = {
    "baz": {"zone": "europe-west1-b", "region": "europe-west1", "ip": "10.0.3.30",
            "ingress": ["108.120.45.12"]},
    "bar": {"zone": "us-east1-c", "region": "us-east1", "ip": "10.0.2.20",
            "ingress": ["104.32.64.130"]},
    "foo": {"zone": "us-east1-b", "region": "us-east1", "ip": "10.0.1.10",
            "ingress": ["104.32.64.128", "2001:db8::128"]},
}
ORDER = ["baz", "bar", "foo"]
ZONES = ("federation.", "federation.example.com.")
NAME = "web.shop.myfed.svc.federation."
EXTERNAL = "web.shop.myfed.svc.federation.example.com."
# The source-cluster EDNS(0) option, from the public header.
OPTION = public.get("MOD_K8S_EDNS_SOURCE_CLUSTER")
# Where the members' K8S-DNS queries come from (federation-member source=), and another client.
MEMBER_SOURCE = "127.0.0.1/32"
OUTSIDER = "127.0.0.2"


def lb_service(ns, name, cluster_ip, ingress):
    """A LoadBalancer Service whose load balancer has the given ingress IPs."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"type": "LoadBalancer", "clusterIP": cluster_ip, "clusterIPs": [cluster_ip],
                     "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 80}]},
            "status": {"loadBalancer": {"ingress": [{"ip": ip} for ip in ingress]}}}


def ready_slice(ns, service, addresses, ready=True):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"{service}-abcde", "namespace": ns,
                         "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [a], "conditions": {"ready": ready}} for a in addresses],
            "ports": [{"name": "http", "protocol": "TCP", "port": 80}]}


def shard(member, ns="shop", name="web"):
    """The member's Service of the table above and its ready endpoint."""
    spec = MEMBERS[member]
    return [lb_service(ns, name, spec["ip"], spec["ingress"]),
            ready_slice(ns, name, [spec["ip"].replace("10.0.", "10.244.")])]


def source_opt(cluster):
    """kdig's option sending the source-cluster option with the cluster's name."""
    return f"+ednsopt={OPTION}:{cluster.encode().hex()}"


def ordered(answer, rtype="A"):
    """The answer's addresses of a type in the order of the response (Answer keeps a set)."""
    out, inside = [], False
    for line in answer.text.splitlines():
        if line.startswith(";; ANSWER SECTION:"):
            inside = True
            continue
        if inside and (not line.strip() or line.startswith(";;")):
            break
        fields = line.split()
        if inside and len(fields) >= 5 and fields[3] == rtype:
            out.append(fields[4])
    return out


def wait_members(server, count, timeout=30):
    """Waits until `count` members of a Federated-DNS knotd have synchronized."""
    def check():
        ready = sum(v for k, v in stats(server, "federation.").items()
                    if k.startswith("member-ready["))
        testing.expect(ready == count, f"{ready} of {count} members synchronized")
    testing.eventually(check, timeout, 0.1)


class Federation:
    """Three member simulators and a Federated-DNS knotd; a context manager.

    extra: {member: [objects]} applied to that member before the Federated-DNS starts
    (besides each member's `shard()`)."""

    def __init__(self, extra=None):
        self.workdir = tempfile.mkdtemp(prefix="mod-k8s-federation-")
        self.sims = {m: simctl.Simulator(os.path.join(self.workdir, m)) for m in ORDER}
        self.extra = dict(extra or {})
        self.server = None

    def module(self, **extra):
        members = []
        for m in ORDER:
            spec = MEMBERS[m]
            members.append(f"{m} kubeconfig={self.sims[m].path('kubeconfig')} "
                           f"zone={spec['zone']} region={spec['region']} source={MEMBER_SOURCE}")
        options = {"federation-name": "myfed", "federation-member": members,
                   "federation-external": "myfed.svc.federation.example.com."}
        options.update(extra)
        return options

    def knotd(self, **extra):
        return knotd.Knotd(module=self.module(**extra), zones=ZONES)

    def start_members(self):
        for m in ORDER:
            sim = self.sims[m].start()
            sim.apply([namespace("shop")] + shard(m) + list(self.extra.get(m, ())))

    def __enter__(self):
        try:
            self.start_members()
            self.server = self.knotd().__enter__()
            wait_members(self.server, len(ORDER))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if self.server is not None:
                self.server.__exit__(kind, value, traceback)
        finally:
            for sim in self.sims.values():
                sim.stop()
            if not os.environ.get("MODK8S_KEEP_TMP"):
                shutil.rmtree(self.workdir, ignore_errors=True)
        return False

    def query(self, qname, qtype="A", source=None, server=None, client=None, tcp=False):
        """kdig to the Federated-DNS; client: the address to query from (default 127.0.0.1)."""
        extra = [source_opt(source)] if source else []
        if client:
            extra += ["-b", client]
        return dig.query(server or self.server, qname, qtype, edns=True, extra=extra, tcp=tcp)

    def eventually(self, check, timeout=10):
        return testing.eventually(check, timeout)

    def log_text(self):
        return self.server.log_text() if self.server else ""

    def is_running(self):
        return self.server is not None and self.server.is_running()


# -- the programming endpoint's certificates and client

def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def pki_in(stack):
    """make_pki() in a new temporary directory that the ExitStack `stack` removes."""
    directory = tempfile.mkdtemp(prefix="mod-k8s-pki-")
    stack.callback(shutil.rmtree, directory, ignore_errors=True)
    make_pki(directory)
    return directory


def make_pki(directory):
    """A CA with a server and a client certificate (and one for servers only), and
    another CA with its own client."""
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
                 "-subj", f"/CN={ca}", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    for name, ca, ext in (("server", "ca", "subjectAltName=IP:127.0.0.1"),
                          ("client", "ca", "extendedKeyUsage=clientAuth"),
                          ("intruder", "other-ca", "extendedKeyUsage=clientAuth"),
                          ("server-only", "ca", "extendedKeyUsage=serverAuth")):
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
                 cwd=directory)
        with open(os.path.join(directory, f"{name}.ext"), "w", encoding="ascii") as f:
            f.write(ext + "\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
                 "-extfile", f"{name}.ext", cwd=directory)


def api_options(pki, port):
    """The mod-k8s options of a programming endpoint on 127.0.0.1@port with make_pki()'s files."""
    return {"federation-api-listen": f"127.0.0.1@{port}",
            "federation-api-cert": os.path.join(pki, "server.pem"),
            "federation-api-key": os.path.join(pki, "server.key"),
            "federation-api-client-ca": os.path.join(pki, "ca.pem")}


def https_request(pki, port, method, path, body=None, cert="client"):
    """One HTTPS request to the programming endpoint on 127.0.0.1@port, with make_pki()'s
    certificate `cert` (None: none); (status, parsed JSON or text)."""
    context = ssl.create_default_context(cafile=os.path.join(pki, "ca.pem"))
    context.check_hostname = False
    if cert is not None:
        context.load_cert_chain(os.path.join(pki, f"{cert}.pem"), os.path.join(pki, f"{cert}.key"))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read().decode()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text
    finally:
        conn.close()
