"""The simulated cluster of the throughput runs, its zone files and its query files.

The cluster is the simulator's generator (ClusterIP and headless services with
10 endpoints each, pods behind some endpoints) plus dual-stack services from a
manifest written here (the generator makes IPv4 only, and the AAAA mix needs
IPv6 cluster IPs). Both servers answer from the same objects: mod-k8s reads
them from the API, and the zone files are written from the same objects read
back from the API with LIST, following the Kubernetes DNS specification as the
module does. check_equivalence() then queries both servers for samples of
every mix and reports any difference, so the comparison is between equal
answers.
"""

import collections
import ipaddress
import json
import os
import random

from common import progress
import dig
import knotd as knotd_lib

# The generated part: 10k services, every 10th headless, 10 endpoints each, 2 pods per service.
GENERATE = "services=10000,endpoints=10,pods=20000,namespaces=100,headless-every=10"
DUAL_NAMESPACES = 10
DUAL_PER_NAMESPACE = 100
ZONES = ("cluster.local.", "in-addr.arpa.")
CLUSTER = "cluster.local."
TTL = 5
QUERIES_PER_MIX = 20000
SEED = 1
# The skewed workload: each query draws a name of the mix with probability 1/rank^s
# (a Zipf law over the mix's names in their shuffled order; over 9,000 names, s = 1.1
# puts about 40 % of 20,000 queries on the 10 most asked names and 66 % on the top 100,
# and asks about 3,300 distinct names).
ZIPF_S = 1.1

# The query mixes, in report order: key, title.
MIXES = (
    ("svc_a", "service A"),
    ("svc_aaaa", "service AAAA"),
    ("srv", "SRV _http._tcp"),
    ("headless_a", "headless A (10 endpoints)"),
    ("ptr", "PTR"),
    ("pod_a", "pod A"),
    ("nxdomain", "NXDOMAIN"),
    ("autopath", "autopath, client address"),
)

# The benchmark client (dnsperf on 127.0.0.1) is a pod of this namespace, so that queries
# <svc>.<ns>.<AUTOPATH_NS>.svc.<zone> take client-address autopath's first step.
AUTOPATH_NS = "dual-0"
CLIENT_IP = "127.0.0.1"


def dual_stack_manifest():
    """Namespaces dual-N with dual-stack ClusterIP services (10.101.x.y and fd00:101::x)."""
    items = []
    for n in range(DUAL_NAMESPACES):
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": f"dual-{n}"}})
    for i in range(DUAL_NAMESPACES * DUAL_PER_NAMESPACE):
        v4 = str(ipaddress.IPv4Address("10.101.0.0") + i + 1)
        v6 = str(ipaddress.IPv6Address("fd00:101::") + i + 1)
        items.append({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": f"dual-{i:04d}", "namespace": f"dual-{i // DUAL_PER_NAMESPACE}"},
            "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                     "clusterIP": v4, "clusterIPs": [v4, v6], "type": "ClusterIP",
                     "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "RequireDualStack"},
        })
    items.append({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "bench-client", "namespace": AUTOPATH_NS},
                  "spec": {"containers": [{"name": "dnsperf", "image": "dnsperf"}]},
                  "status": {"phase": "Running", "podIP": CLIENT_IP,
                             "podIPs": [{"ip": CLIENT_IP}]}})
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}


def write_manifests(directory):
    """Writes the dual-stack manifest into directory; returns the directory."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "dual-stack.json"), "w", encoding="utf-8") as f:
        json.dump(dual_stack_manifest(), f)
    return directory


def list_objects(sim, path):
    """All items of a LIST (one request, no paging)."""
    response = sim.get(path, timeout=120)
    if response.status != 200:
        raise RuntimeError(f"LIST {path} failed: HTTP {response.status}")
    return response.json()["items"]


def dashed(ip):
    """The address as one DNS label, as CoreDNS and mod-k8s name endpoints and pods."""
    text = str(ipaddress.ip_address(ip))
    label = text.replace(".", "-").replace(":", "-")
    return label + "0" if label.endswith("-") else label


def reverse_name(ip):
    return ipaddress.ip_address(ip).reverse_pointer + "."


class Service:
    """What DNS needs of a Service and its EndpointSlices."""

    def __init__(self, obj):
        meta, spec = obj["metadata"], obj["spec"]
        self.ns = meta["namespace"]
        self.name = meta["name"]
        self.headless = spec.get("clusterIP") == "None"
        self.ips = [] if self.headless else list(spec.get("clusterIPs") or [spec["clusterIP"]])
        self.ports = [(p["name"], p.get("protocol", "TCP").lower(), p["port"])
                      for p in spec.get("ports", []) if p.get("name")]
        self.endpoints = []      # (label, ip) of ready endpoints
        self.srv = set()         # headless SRV: (name, proto, port, label), each slice's own ports

    @property
    def fqdn(self):
        return f"{self.name}.{self.ns}.svc.{CLUSTER}"

    def add_slice(self, obj):
        if obj.get("addressType") not in ("IPv4", "IPv6"):
            return
        ports = [(p["name"], p.get("protocol", "TCP").lower(), p["port"])
                 for p in obj.get("ports") or [] if p.get("name") and p.get("port")]
        for ep in obj.get("endpoints") or []:
            if (ep.get("conditions") or {}).get("ready") is False:
                continue
            for ip in ep["addresses"][:1]:
                label = ep.get("hostname") or dashed(ip)
                self.endpoints.append((label, ip))
                self.srv.update((name, proto, port, label) for name, proto, port in ports)

    def records(self):
        """Zone lines of this service's names in the cluster zone."""
        lines = []
        addresses = [ip for _, ip in self.endpoints] if self.headless else self.ips
        for ip in sorted(set(addresses)):
            rtype = "AAAA" if ":" in ip else "A"
            lines.append(f"{self.fqdn} {rtype} {ip}")
        for label, ip in sorted(set(self.endpoints)):
            lines.append(f"{label}.{self.fqdn} {'AAAA' if ':' in ip else 'A'} {ip}")
        if self.headless:
            # A record per target and number of its own slices; an answer's records share 100.
            def weight(count):
                return 1 if count >= 100 else 100 // count
            bare = weight(len(self.srv)) if self.srv else 0
            for name, proto in sorted({(n, p) for n, p, _, _ in self.srv}):
                records = sorted((port, label) for n, p, port, label in self.srv
                                 if (n, p) == (name, proto))
                for port, label in records:
                    target = f"{port} {label}.{self.fqdn}"
                    lines.append(f"_{name}._{proto}.{self.fqdn} SRV 0 {weight(len(records))} {target}")
                    lines.append(f"{self.fqdn} SRV 0 {bare} {target}")
        else:
            for name, proto, port in self.ports:
                lines.append(f"_{name}._{proto}.{self.fqdn} SRV 0 100 {port} {self.fqdn}")
                lines.append(f"{self.fqdn} SRV 0 100 {port} {self.fqdn}")
        return lines

    def ptr_records(self):
        """(address, target) pairs of this service's PTR records."""
        out = [(ip, self.fqdn) for ip in self.ips if ":" not in ip]
        out += [(ip, f"{label}.{self.fqdn}") for label, ip in self.endpoints if ":" not in ip]
        return out


class World:
    """The objects of the simulated cluster, as DNS sees them."""

    def __init__(self, sim):
        self.namespaces = [o["metadata"]["name"] for o in list_objects(sim, "/api/v1/namespaces")]
        self.services = {}
        for obj in list_objects(sim, "/api/v1/services"):
            if obj["spec"].get("type") == "ExternalName":
                continue
            svc = Service(obj)
            self.services[(svc.ns, svc.name)] = svc
        for obj in list_objects(sim, "/apis/discovery.k8s.io/v1/endpointslices"):
            owner = (obj["metadata"].get("labels") or {}).get("kubernetes.io/service-name")
            svc = self.services.get((obj["metadata"]["namespace"], owner))
            if svc is not None:
                svc.add_slice(obj)
        self.pods = []           # (namespace, ip) of live pods
        for obj in list_objects(sim, "/api/v1/pods"):
            status = obj.get("status") or {}
            if status.get("phase") in ("Pending", "Running") and status.get("podIP") \
                    and not obj["metadata"].get("deletionTimestamp"):
                for entry in status.get("podIPs") or [{"ip": status["podIP"]}]:
                    self.pods.append((obj["metadata"]["namespace"], entry["ip"]))

    def zone_records(self):
        """{zone: [zone file lines]} with every name mod-k8s answers in the served zones."""
        cluster, reverse = [], {}
        for svc in self.services.values():
            cluster += svc.records()
            for ip, target in svc.ptr_records():
                reverse.setdefault(ip, set()).add(target)
        for ns, ip in sorted(set(self.pods)):
            cluster.append(f"{dashed(ip)}.{ns}.pod.{CLUSTER} {'AAAA' if ':' in ip else 'A'} {ip}")
        # What client-address autopath answers the client pod: a CNAME to the service.
        for svc in self._autopath_services():
            cluster.append(f"{self._autopath_name(svc)} CNAME {svc.fqdn}")
        ptr = [f"{reverse_name(ip)} PTR {target}"
               for ip, targets in reverse.items() for target in sorted(targets)]
        return {"cluster.local.": cluster, "in-addr.arpa.": ptr}

    def zone_texts(self):
        """{zone: zone file text} for the zone-file server (SOA and NS as the harness writes)."""
        return {zone: knotd_lib.zone_file_text(zone, "\n".join(lines))
                for zone, lines in self.zone_records().items()}

    def queries(self):
        """{mix: [(qname, qtype)]}, each shuffled with a fixed seed."""
        rng = random.Random(SEED)
        generated = [s for s in self.services.values() if not s.name.startswith("dual-")]
        cluster_ip = [s for s in generated if not s.headless]
        headless = [s for s in generated if s.headless and len(s.endpoints) == 10]
        mixes = {
            "svc_a": [(s.fqdn, "A") for s in cluster_ip],
            "svc_aaaa": [(s.fqdn, "AAAA") for s in self.services.values()
                         if any(":" in ip for ip in s.ips)],
            "srv": [(f"_http._tcp.{s.fqdn}", "SRV") for s in cluster_ip],
            "headless_a": [(s.fqdn, "A") for s in headless],
            "ptr": [(reverse_name(ip), "PTR") for s in generated for ip, _ in s.ptr_records()],
            "pod_a": [(f"{dashed(ip)}.{ns}.pod.{CLUSTER}", "A") for ns, ip in self.pods],
            "nxdomain": self._nxdomain_names(cluster_ip, rng),
            "autopath": [(self._autopath_name(s), "A") for s in self._autopath_services()],
        }
        out = {}
        for mix, names in mixes.items():
            if not names:
                raise RuntimeError(f"the simulated cluster has no names for the {mix} mix")
            rng.shuffle(names)
            out[mix] = names[:QUERIES_PER_MIX]
        return out

    def _autopath_services(self):
        """The services of the autopath mix: those of the service A mix (its direct hits)."""
        return [s for s in self.services.values()
                if not s.name.startswith("dual-") and not s.headless]

    @staticmethod
    def _autopath_name(svc):
        """The client pod's first search-list query for "<svc>.<ns>", which does not exist."""
        return f"{svc.name}.{svc.ns}.{AUTOPATH_NS}.svc.{CLUSTER}"

    @staticmethod
    def _nxdomain_names(services, rng):
        """Search-path misses of a pod (ndots:5) and names of services that do not exist."""
        names = []
        for i in range(QUERIES_PER_MIX // 4):
            ns = rng.choice(services).ns
            external = f"api{i}.example.com"
            names += [(f"{external}.{ns}.svc.{CLUSTER}", "A"),
                      (f"{external}.svc.{CLUSTER}", "A"),
                      (f"{external}.{CLUSTER}", "A"),
                      (f"missing-{i}.{ns}.svc.{CLUSTER}", "A")]
        return names


def skewed(names, count=QUERIES_PER_MIX, s=ZIPF_S, seed=SEED):
    """count queries drawn from names, name k (from 1, in the list's order) with
    probability proportional to 1/k^s: names repeat as a cluster's do (a few services
    asked by every pod, a long tail asked now and then). Fixed seed: every server gets
    the same file, and a run the same file as the last one."""
    if not names:
        return []
    weights = [1.0 / (k ** s) for k in range(1, len(names) + 1)]
    return random.Random(seed).choices(names, weights=weights, k=count)


def skew_profile(queries):
    """What a skewed file repeats: distinct names, and the share of the queries that go
    to the 10 and the 100 most asked of them."""
    counts = sorted(collections.Counter(queries).values(), reverse=True)
    total = max(1, len(queries))
    return {"queries": len(queries), "distinct": len(counts),
            "top10_share": round(sum(counts[:10]) / total, 3),
            "top100_share": round(sum(counts[:100]) / total, 3)}


def write_query_files(queries, directory, limit=None):
    """One dnsperf input file per mix ("name TYPE" lines); returns {mix: path}."""
    os.makedirs(directory, exist_ok=True)
    paths = {}
    for mix, names in queries.items():
        path = os.path.join(directory, f"{mix}.txt")
        with open(path, "w", encoding="ascii") as f:
            for qname, qtype in names[:limit]:
                f.write(f"{qname} {qtype}\n")
        paths[mix] = path
    return paths


def check_equivalence(module_server, zone_server, queries, samples=25):
    """Queries both servers for samples of each mix; returns {mix: [differences]}."""
    differences = {}
    for mix, names in queries.items():
        found = []
        for qname, qtype in names[:samples]:
            a = dig.query(module_server, qname, qtype)
            b = dig.query(zone_server, qname, qtype)
            for what in ("rcode", "answer", "additional"):
                if getattr(a, what) != getattr(b, what):
                    found.append(f"{qname} {qtype}: {what} differs: module "
                                 f"{_show(getattr(a, what))} vs zone file {_show(getattr(b, what))}")
            if "aa" not in a.flags or "aa" not in b.flags:
                found.append(f"{qname} {qtype}: AA flag module {'aa' in a.flags}, "
                             f"zone file {'aa' in b.flags}")
        differences[mix] = found
        if found:
            progress(f"answers differ for {mix}: {found[0]}")
    return differences


def _show(value):
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(str(rr) for rr in value)) + "}"
    return str(value)
