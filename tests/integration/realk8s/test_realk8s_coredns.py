#!/usr/bin/env python3
"""Differential conformance: mod-k8s and CoreDNS's kubernetes plugin, same real API, same questions.

A random valid world is generated from a seed (namespaces; ClusterIP, NodePort
and LoadBalancer services, single and dual stack, with and without a selector;
headless services, with and without hostname/subdomain pods, ready, not ready
and terminating, published not ready or not; pods whose named targetPort maps
to different container ports, so that one service has several EndpointSlices
of different ports; ExternalName services; pods that no service selects),
applied with kubectl to the real control plane. Once the real EndpointSlice
controller has written every slice (and marked the deleted pods terminating),
every name of it is asked of knotd+mod-k8s and of CoreDNS (tests/realk8s/build,
the version of tests/realk8s/versions.env), both watching the same
kube-apiserver: A, AAAA, SRV and CNAME of services, SRV per port, endpoint
names, PTR of every cluster and pod address, pod names (in their namespace and
in another), and names that do not exist (service, port, hostname, namespace).
CoreDNS runs without cache. Two pairs answer: `pods verified` in both (every
question) and `pods insecure` in both (the pod names). The rcode and the
ANSWER section as a set (TTLs aside) must be the same, except for the
differences listed in KNOWN, each with the spec clause that makes mod-k8s
right (doc/mod-k8s.rst, "Differences from CoreDNS").

Two worlds run: the fixed seed 1 and a fresh one (MODK8S_DIFF_SEEDS="1 7" to
choose). The seeds are printed: a failure is replayed with the same seed.

Skips (exit 77) where the control plane or CoreDNS is not built.
"""

import ipaddress
import os
import random
import re
import subprocess
import time

import cluster
import dig
import realk8s
import testing
from realk8s import namespace, pod, service

realk8s.skip_unless_available(("etcd", "k8s", "coredns"))

tests = testing.Tests()
Z = "cluster.local."
TTL = 5

# (predicate on (qname, qtype, ours, theirs), why mod-k8s is right): the differences
# that are explained, each by a clause of /work/shared/specs (and doc/mod-k8s.rst,
# "Differences from CoreDNS"). ours and theirs are (rcode, sorted answer records).
def _without_srv_weights(key):
    rcode, rrs = key
    return rcode, tuple(sorted((owner, rtype, " ".join(rdata.split()[:1] + rdata.split()[2:])
                                if rtype == "SRV" else rdata) for owner, rtype, rdata in rrs))


def srv_weights_only(qname, qtype, ours, theirs):
    """The same records but for the SRV weights."""
    return _without_srv_weights(ours) == _without_srv_weights(theirs)


def srv_at_a_name_without_port_labels(qname, qtype, ours, theirs):
    """CoreDNS answers SRV at an endpoint's name itself, every port of it; mod-k8s has SRV
    records only where the specification puts them and at the service's name (NOERROR, no
    data here)."""
    endpoint_name = qname.count(".") == Z.count(".") + 4  # <ep>.<svc>.<ns>.svc.<zone>
    return (qtype == "SRV" and endpoint_name and not qname.startswith("_")
            and ours == ("NOERROR", ()) and theirs[0] == "NOERROR" and theirs[1]
            and all(owner == qname and rtype == "SRV" for owner, rtype, _ in theirs[1]))


def externalname_cname_for_every_type(qname, qtype, ours, theirs):
    """An ExternalName service's name is a CNAME: mod-k8s answers it for every type, CoreDNS
    answers some types (SRV) with no data."""
    return (qtype != "CNAME" and ours[0] == "NOERROR" and len(ours[1]) == 1
            and ours[1][0][:2] == (qname, "CNAME") and theirs == ("NOERROR", ()))


KNOWN = [
    (srv_weights_only, "SRV weights: the Kubernetes DNS specification 2.3.2 and 2.4.2, \"the "
     "priority and weight are numbers as described in RFC2782 and whose values are not "
     "prescribed by this specification\""),
    (srv_at_a_name_without_port_labels, "SRV at an endpoint's own name: the specification "
     "2.3.2 and 2.4.2 define SRV records at _<port>._<proto>.<service>.<ns>.svc.<zone> only; "
     "CoreDNS's records at <endpoint>.<service>.<ns>.svc.<zone> are its own extension"),
    (externalname_cname_for_every_type, "an ExternalName service's name is a CNAME "
     "(specification 2.5); RFC 1034 3.6.2: a name with a CNAME has no other data, and a query "
     "of any type there is answered with the CNAME"),
]


def seeds():
    if os.environ.get("MODK8S_DIFF_SEEDS"):
        return [int(s) for s in os.environ["MODK8S_DIFF_SEEDS"].split()]
    return [1, random.SystemRandom().randrange(2, 1 << 31)]


def dashed(ip):
    return ip.replace(".", "-").replace(":", "-")


class World:
    """The objects of one seed, and the questions to ask about them."""

    def __init__(self, seed, index):
        self.seed = seed
        self.rng = random.Random(seed)
        self.index = index
        self.objects = []
        self.questions = set()
        self.pod_questions = set()  # the names whose answer depends on the pods mode
        self.selectors = []         # (namespace, service, pod count) to wait for
        self.terminating = []       # (namespace, pod, service) deleted once in their slices
        self.namespaces = []
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

    def ask_pod(self, ns, ip):
        """The pod name of ip in ns: verified answers only for a live pod of ns."""
        for qtype in ("A", "AAAA"):
            self.pod_questions.add((f"{dashed(ip)}.{ns}.pod.{Z}", qtype))

    def generate(self):
        rng = self.rng
        self.namespaces = [f"w{self.index}-ns{n}" for n in range(rng.randint(3, 4))]
        for ns in self.namespaces:
            self.objects.append(namespace(ns, {"world": str(self.index)}))
            self.ask(f"{ns}.svc.{Z}", "A")
            for s in range(rng.randint(4, 8)):
                self.service(ns, f"svc{s}")
            # Pods no service selects: pod names and PTR only when a service has them.
            for i in range(rng.randint(0, 2)):
                ips = self.pod_ips(rng.random() < 0.3)
                self.objects.append(pod(f"lone-{i}", ns, {"app": "lone"}, ips=ips,
                                        ready=rng.random() < 0.75))
                for ip in ips:
                    self.ask_ptr(ip)
                    self.ask_pod(ns, ip)
            self.ask(f"nope.{ns}.svc.{Z}", "A", "AAAA", "SRV")
            self.ask(f"_nope._tcp.nope.{ns}.svc.{Z}", "SRV")
        missing = f"w{self.index}-absent"
        self.ask(f"svc0.{missing}.svc.{Z}", "A", "SRV")
        self.ask(f"{missing}.svc.{Z}", "A")
        self.pod_questions.add((f"10-{200 + self.index}-0-1.{missing}.pod.{Z}", "A"))
        # An address no pod has, in a namespace that exists.
        self.ask_pod(self.namespaces[0], f"10.{200 + self.index}.99.99")
        self.ask_ptr(f"10.{200 + self.index}.99.99")
        return self

    def service(self, ns, name):
        rng = self.rng
        kind = rng.choice(["clusterip", "clusterip", "dual", "nodeport", "loadbalancer",
                           "selectorless", "headless", "headless", "headless-dual",
                           "headless-noports", "external"])
        fqdn = f"{name}.{ns}.svc.{Z}"
        if kind == "external":
            self.objects.append(service(name, ns, [], svc_type="ExternalName",
                                        external_name=f"target{rng.randint(0, 9)}.example.org"))
            self.ask(fqdn, "A", "AAAA", "CNAME", "SRV")
            self.ask(f"_p0._tcp.{fqdn}", "SRV")
            return
        ports = []
        if kind != "headless-noports":
            for p in range(rng.randint(1, 3)):
                proto = rng.choice(["TCP", "TCP", "UDP"])
                ports.append({"name": f"p{p}", "port": 1000 + 10 * p, "protocol": proto,
                              "targetPort": f"t{p}" if rng.random() < 0.5 else 8000 + p})
        headless = kind.startswith("headless")
        dual = kind in ("dual", "headless-dual") or (kind == "nodeport" and rng.random() < 0.5)
        svc_type = {"nodeport": "NodePort", "loadbalancer": "LoadBalancer"}.get(kind, "ClusterIP")
        selector = None if kind == "selectorless" else {"app": f"{ns}-{name}"}
        svc = service(name, ns, ports, selector=selector,
                      cluster_ip="None" if headless else None,
                      policy="RequireDualStack" if dual else None,
                      families=["IPv4", "IPv6"] if dual else None,
                      publish_not_ready=headless and rng.random() < 0.2, svc_type=svc_type)
        self.objects.append(svc)
        self.ask(fqdn, "A", "AAAA", "SRV")
        for port in ports:
            self.ask(f"_{port['name']}._{port['protocol'].lower()}.{fqdn}", "SRV")
            # The same name under the other protocol: no such port.
            other = "udp" if port["protocol"] == "TCP" else "tcp"
            self.ask(f"_{port['name']}._{other}.{fqdn}", "SRV")
        self.ask(f"_nope._tcp.{fqdn}", "SRV")
        self.ask(f"nohost.{fqdn}", "A")
        if selector is None:
            self.selectors.append((ns, name, None))
            return
        pods = rng.randint(0, 4)
        subdomain = headless and rng.random() < 0.6
        for i in range(pods):
            ips = self.pod_ips(dual)
            # Named target ports resolve per pod: two port sets make two slices.
            offset = rng.choice([0, 100])
            container_ports = [{"name": f"t{p}", "containerPort": 9000 + p + offset,
                                "protocol": port["protocol"]} for p, port in enumerate(ports)]
            hostname = f"h{i}" if subdomain and rng.random() < 0.8 else None
            terminating = rng.random() < 0.15
            pod_name = f"{name}-{i}"
            self.objects.append(pod(pod_name, ns, {"app": f"{ns}-{name}"}, ips=ips,
                                    ready=rng.random() < 0.75, ports=container_ports,
                                    hostname=hostname, subdomain=name if hostname else None,
                                    linger=terminating))
            if terminating:
                self.terminating.append((ns, pod_name, name))
            for ip in ips:
                self.ask_ptr(ip)
                self.ask_pod(ns, ip)
                # The same address in another namespace: verified says no.
                self.ask_pod(self.namespaces[0] if ns != self.namespaces[0] else
                             f"w{self.index}-ns1", ip)
                self.ask(f"{dashed(ip)}.{fqdn}", "A", "AAAA")
            if hostname:
                self.ask(f"{hostname}.{fqdn}", "A", "AAAA")
        self.selectors.append((ns, name, pods))

    def apply(self, plane):
        plane.apply(self.objects)
        for ns, name, pods in self.selectors:
            if pods is None:
                continue
            plane.wait_for_slices(ns, name, lambda items, n=pods: n == len({
                a for s in items if s["addressType"] == "IPv4"
                for e in s.get("endpoints") or [] for a in e["addresses"]}), timeout=90)
        for ns, pod_name, _ in self.terminating:
            plane.kubectl("delete", "pod", "-n", ns, pod_name, "--wait=false")
        for ns, pod_name, name in self.terminating:
            plane.wait_for_slices(ns, name, lambda items, p=pod_name: any(
                (e.get("targetRef") or {}).get("name") == p
                and e["conditions"].get("terminating")
                for s in items for e in s.get("endpoints") or []), timeout=60)

    def cluster_ips(self, plane):
        """Asks the PTR of every service's cluster IPs (allocated by the server)."""
        out = plane.kubectl("get", "services", "-A", "-o",
                            "jsonpath={range .items[*]}{.spec.clusterIPs}{\"\\n\"}{end}").stdout
        for line in out.splitlines():
            for ip in line.strip("[]").replace('"', "").split(","):
                if ip and ip != "None":
                    self.ask_ptr(ip)


_QUESTION = re.compile(r";; QUESTION SECTION:\n;; (\S+)\s+IN\s+(\S+)")


def ask_all(server, questions, batch=150):
    """{(qname, qtype): Answer} for every question, several questions per kdig run
    (kdig asks them one after the other); a question left unanswered is asked alone.
    A truncated answer is asked again over TCP, as a stub resolver does: over UDP
    without EDNS, knotd sends TC with an empty answer section where CoreDNS sends
    the records that fit (RFC 2181 9 allows both), and a client uses neither."""
    questions = sorted(questions)
    answers = {}
    for start in range(0, len(questions), batch):
        chunk = questions[start:start + batch]
        command = [dig.kdig_path(), f"@{server.address}", "-p", str(server.port),
                   "+retry=1", "+timeout=2", "+ignore", "+noedns"]
        for qname, qtype in chunk:
            command += [qname, qtype]
        text = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True, timeout=600).stdout
        for part in re.split(r"(?m)^(?=;; ->>HEADER<<-)", text)[1:]:
            match = _QUESTION.search(part)
            if match:
                key = (match.group(1).lower(), match.group(2))
                answers[key] = dig.Answer(command, part)
    result = {}
    for qname, qtype in questions:
        answer = answers.get((qname.lower(), qtype)) or dig.query(server, qname, qtype)
        if "tc" in answer.flags:
            answer = dig.query(server, qname, qtype, tcp=True)
        result[qname, qtype] = answer
    return result


def answer_key(answer):
    rrs = sorted((rr.owner, rr.type, rr.rdata) for rr in answer.answer)
    return answer.rcode, tuple(rrs)


def compare(questions, ours, theirs):
    """The unexplained differences, as text, and the count of explained ones."""
    a_all, b_all = ask_all(ours, questions), ask_all(theirs, questions)
    differences, explained = [], 0
    for qname, qtype in sorted(questions):
        a = answer_key(a_all[qname, qtype])
        b = answer_key(b_all[qname, qtype])
        if a == b:
            continue
        if any(match(qname, qtype, a, b) for match, _ in KNOWN):
            explained += 1
            continue
        differences.append(f"{qname} {qtype}\n    mod-k8s: {a[0]} {list(a[1])}\n"
                           f"    CoreDNS: {b[0]} {list(b[1])}")
    return differences, explained


SEEDS = seeds()
print(f"# differential seeds: {' '.join(map(str, SEEDS))} (MODK8S_DIFF_SEEDS to replay)")

for index, seed in enumerate(SEEDS):
    def differential(cl, seed=seed, index=index):
        started = time.monotonic()
        world = World(seed, index + 1).generate()
        world.apply(cl.plane)
        world.cluster_ips(cl.plane)
        applied = time.monotonic()
        verified = cl.knotd(module={"ttl": TTL, "pods": "verified"}, zones=cl.zones)
        with verified, realk8s.CoreDNS(cl.plane, ttl=TTL, pods="verified") as coredns_verified, \
                realk8s.CoreDNS(cl.plane, ttl=TTL, pods="insecure") as coredns_insecure:
            cluster.wait_ready(verified, cl.ready_zones, timeout=60)
            # Every server has seen the last change once each answers for the last
            # object: the terminating pods were the last, asked for until they agree.
            time.sleep(2)
            all_questions = world.questions | world.pod_questions
            differences, explained = compare(all_questions, verified, coredns_verified)
            more, more_explained = compare(world.pod_questions, cl.server, coredns_insecure)
        differences += [f"(pods insecure) {d}" for d in more]
        explained += more_explained
        print(f"# seed {seed}: {len(all_questions)} + {len(world.pod_questions)} questions, "
              f"{explained} explained and {len(differences)} unexplained differences "
              f"(apply {applied - started:.0f} s, ask {time.monotonic() - applied:.0f} s)")
        testing.expect(not differences, f"seed {seed}: {len(differences)} unexplained "
                       "differences\n" + "\n".join(differences[:60]))
    tests.add(f"mod-k8s answers as CoreDNS does (seed {seed})", differential)


tests.main(fixture=lambda: realk8s.RealCluster(world=(), module={"ttl": TTL}))
