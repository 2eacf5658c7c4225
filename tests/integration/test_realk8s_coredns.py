#!/usr/bin/env python3
"""Differential conformance: mod-k8s and CoreDNS's kubernetes plugin, same real API, same questions.

A random valid world is generated from a seed (namespaces; ClusterIP services,
single and dual stack; headless services, with and without hostname/subdomain
pods, ready and not ready, pods whose named targetPort maps to different
container ports so that one service has several EndpointSlices of different
ports; ExternalName), applied with kubectl to the real control
plane, and once the real EndpointSlice controller has written every slice,
every name of it (services, SRV per port, endpoint names, PTR of every cluster
and pod address, pod names, names that do not exist) is asked of knotd+mod-k8s
and of CoreDNS (tests/realk8s/build, the version of tests/realk8s/versions.env).
The rcode and the ANSWER section (TTLs aside) must be the same, except for the
differences listed in KNOWN with the spec clause that makes mod-k8s right.

Two worlds run: the fixed seed 1 and a fresh one (MODK8S_DIFF_SEEDS="1 7" to
choose). The seeds are printed: a failure is replayed with the same seed.

Skips (exit 77) where the control plane or CoreDNS is not built.
"""

import ipaddress
import os
import random
import time

import dig
import realk8s
import testing
from realk8s import namespace, pod, service

realk8s.skip_unless_available(("etcd", "k8s", "coredns"))

tests = testing.Tests()
Z = "cluster.local."
CS = "clusterset.local."

# (predicate on (qname, qtype, ours, theirs), why mod-k8s is right): differences that are
# explained. Empty until a run shows one: each must cite its spec clause.
KNOWN = []


def seeds():
    if os.environ.get("MODK8S_DIFF_SEEDS"):
        return [int(s) for s in os.environ["MODK8S_DIFF_SEEDS"].split()]
    return [1, random.SystemRandom().randrange(2, 1 << 31)]


class World:
    """The objects of one seed, and the questions to ask about them."""

    def __init__(self, seed, index):
        self.seed = seed
        self.rng = random.Random(seed)
        self.index = index
        self.objects = []
        self.questions = set()
        self.selectors = []         # (namespace, service, pod count) to wait for
        self.next_ip = 0

    def pod_ips(self, dual):
        self.next_ip += 1
        n = self.next_ip
        v4 = f"10.{200 + self.index}.{n // 250}.{n % 250 + 1}"
        return [v4, f"fd00:10:{200 + self.index:x}::{n:x}"] if dual else [v4]

    def ask(self, qname, *qtypes):
        for qtype in qtypes:
            self.questions.add((qname.lower(), qtype))

    def ask_ptr(self, address):
        self.ask(ipaddress.ip_address(address).reverse_pointer + ".", "PTR")

    def generate(self):
        rng = self.rng
        for n in range(rng.randint(2, 3)):
            ns = f"w{self.index}-ns{n}"
            self.objects.append(namespace(ns, {"world": str(self.index)}))
            self.ask(f"{ns}.svc.{Z}", "A")
            for s in range(rng.randint(2, 5)):
                self.service(ns, f"svc{s}")
            self.ask(f"nope.{ns}.svc.{Z}", "A", "SRV")
        return self

    def service(self, ns, name):
        rng = self.rng
        kind = rng.choice(["clusterip", "clusterip", "dual", "headless", "headless",
                           "headless-dual", "external"])
        fqdn = f"{name}.{ns}.svc.{Z}"
        if kind == "external":
            self.objects.append(service(name, ns, [], svc_type="ExternalName",
                                        external_name=f"target{rng.randint(0, 9)}.example.org"))
            self.ask(fqdn, "A", "AAAA", "CNAME", "SRV")
            return
        ports = []
        for p in range(rng.randint(1, 3)):
            proto = rng.choice(["TCP", "TCP", "UDP"])
            ports.append({"name": f"p{p}", "port": 1000 + 10 * p, "protocol": proto,
                          "targetPort": f"t{p}" if rng.random() < 0.5 else 8000 + p})
        headless = kind.startswith("headless")
        dual = kind in ("dual", "headless-dual")
        svc = service(name, ns, ports, selector={"app": f"{ns}-{name}"},
                      cluster_ip="None" if headless else None,
                      policy="RequireDualStack" if dual else None,
                      families=["IPv4", "IPv6"] if dual else None,
                      publish_not_ready=headless and rng.random() < 0.2)
        self.objects.append(svc)
        self.ask(fqdn, "A", "AAAA", "SRV")
        for port in ports:
            self.ask(f"_{port['name']}._{port['protocol'].lower()}.{fqdn}", "SRV")
        self.ask(f"_nope._tcp.{fqdn}", "SRV")
        pods = rng.randint(0, 4)
        subdomain = headless and rng.random() < 0.6
        for i in range(pods):
            ips = self.pod_ips(dual)
            # Named target ports resolve per pod: two port sets make two slices.
            offset = rng.choice([0, 100])
            container_ports = [{"name": f"t{p}", "containerPort": 9000 + p + offset,
                                "protocol": port["protocol"]} for p, port in enumerate(ports)]
            hostname = f"h{i}" if subdomain and rng.random() < 0.8 else None
            self.objects.append(pod(f"{name}-{i}", ns, {"app": f"{ns}-{name}"}, ips=ips,
                                    ready=rng.random() < 0.75, ports=container_ports,
                                    hostname=hostname, subdomain=name if hostname else None))
            for ip in ips:
                self.ask_ptr(ip)
                dashed = ip.replace(".", "-").replace(":", "-")
                self.ask(f"{dashed}.{ns}.pod.{Z}", "A", "AAAA")
                self.ask(f"{dashed}.{fqdn}", "A", "AAAA")
            if hostname:
                self.ask(f"{hostname}.{fqdn}", "A", "AAAA")
        self.selectors.append((ns, name, pods))

    def wait_for_slices(self, plane):
        for ns, name, pods in self.selectors:
            plane.wait_for_slices(ns, name, lambda items, n=pods: n == len({
                a for s in items if s["addressType"] == "IPv4"
                for e in s.get("endpoints") or [] for a in e["addresses"]}), timeout=60)

    def cluster_ips(self, plane):
        """Asks the PTR of every service's cluster IPs (allocated by the server)."""
        out = plane.kubectl("get", "services", "-A", "-o",
                            "jsonpath={range .items[*]}{.spec.clusterIPs}{\"\\n\"}{end}").stdout
        for line in out.splitlines():
            for ip in line.strip("[]").replace('"', "").split(","):
                if ip and ip != "None":
                    self.ask_ptr(ip)


def answer_key(answer):
    rrs = sorted((rr.owner, rr.type, rr.rdata) for rr in answer.answer)
    return answer.rcode, tuple(rrs)


def compare(world, ours, theirs):
    differences = []
    for qname, qtype in sorted(world.questions):
        a = answer_key(dig.query(ours, qname, qtype))
        b = answer_key(dig.query(theirs, qname, qtype))
        if a == b:
            continue
        if any(match(qname, qtype, a, b) for match, _ in KNOWN):
            continue
        differences.append(f"{qname} {qtype}\n    mod-k8s: {a[0]} {list(a[1])}\n"
                           f"    CoreDNS: {b[0]} {list(b[1])}")
    return differences


SEEDS = seeds()
print(f"# differential seeds: {' '.join(map(str, SEEDS))} (MODK8S_DIFF_SEEDS to replay)")

for index, seed in enumerate(SEEDS):
    def differential(cl, seed=seed, index=index):
        world = World(seed, index + 1).generate()
        cl.plane.apply(world.objects)
        world.wait_for_slices(cl.plane)
        world.cluster_ips(cl.plane)
        with realk8s.CoreDNS(cl.plane) as coredns:
            # Both have seen the last change once each answers for the last object.
            time.sleep(2)
            differences = compare(world, cl.server, coredns)
        print(f"# seed {seed}: {len(world.questions)} questions, {len(differences)} differences")
        testing.expect(not differences, f"seed {seed}: {len(differences)} unexplained "
                       "differences\n" + "\n".join(differences[:60]))
    tests.add(f"mod-k8s answers as CoreDNS does (seed {seed})", differential)


tests.main(fixture=lambda: realk8s.RealCluster(world=(), module={"ttl": 5}))
