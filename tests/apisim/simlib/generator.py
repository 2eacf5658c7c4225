"""Synthetic objects for scale tests, produced on demand from their index.

Nothing is built at start: each generated set knows its count, and produces an object's key,
labels, fields and JSON (from string templates) when a LIST or WATCH reaches it.  A write to a
generated object stores an override in the store; the set itself never changes.

Layout for --generate services=S,endpoints=E,pods=P,namespaces=N,headless-every=H:
  namespaces gen-0000 .. gen-(N-1)
  service s (svc-000000 ..) lives in namespace s // ceil(S/N); ClusterIP 10.100.0.0 + s;
    every H-th service (s % H == 0) is headless; ports http 80->8080/TCP and dns 53/UDP
  one EndpointSlice per service, E endpoints, endpoint j has address 10.128.0.0 + s*E + j
  q = ceil(P/S) pods per service: pod p is svc-SSSSSS-JJJ with s = p // q, j = p % q and the
    IP of endpoint j of service s; endpoints j < q point at their pod (targetRef, and
    hostname on headless services), the others are addresses without a pod
  legacy-endpoints=1 also generates a core/v1 Endpoints object per service
Names are zero-padded so that index order is key order (the store lists in key order).
"""

import ipaddress
import re

from . import resources

TIMESTAMP = "2026-01-10T09:00:00Z"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"   # what generateName suffixes use

DEFAULTS = {"services": 0, "endpoints": 100, "pods": 0, "namespaces": 0, "headless-every": 0,
            "nodes": 100, "legacy-endpoints": 0}


def parse_spec(text):
    """Parses "services=10000,endpoints=100,..." into a dict of ints (defaults filled in)."""
    spec = dict(DEFAULTS)
    for part in filter(None, (text or "").split(",")):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in DEFAULTS:
            raise ValueError(f"unknown generator setting '{part}' (known: {', '.join(DEFAULTS)})")
        spec[name] = int(value)
    if spec["services"] and not spec["namespaces"]:
        spec["namespaces"] = max(1, spec["services"] // 10)
    if spec["pods"] and not spec["services"]:
        raise ValueError("pods are generated per service: set services too")
    if spec["endpoints"] > 1000:
        raise ValueError("an EndpointSlice holds at most 1000 endpoints")
    return spec


def _uid(kind_code, index):
    return "%08x-0000-4000-8000-%012x" % (kind_code, index)


def _suffix(index):
    out = []
    for _ in range(5):
        index, r = divmod(index * 7 + 3, len(_SUFFIX_ALPHABET))
        out.append(_SUFFIX_ALPHABET[r])
    return "".join(out)


class Layout:
    """The arithmetic shared by every generated set (who lives where, which IP)."""

    def __init__(self, spec):
        self.spec = spec
        self.services = spec["services"]
        self.namespaces = spec["namespaces"]
        self.endpoints = spec["endpoints"]
        self.pods = spec["pods"]
        self.headless_every = spec["headless-every"]
        self.nodes = max(1, spec["nodes"])
        self.per_ns = -(-self.services // self.namespaces) if self.namespaces else 0
        self.pods_per_svc = -(-self.pods // self.services) if self.services and self.pods else 0
        self.ns_width = max(4, len(str(max(0, self.namespaces - 1))))
        self.pod_width = max(3, len(str(max(0, self.pods_per_svc - 1))))
        self.svc_base = int(ipaddress.IPv4Address("10.100.0.0"))
        self.ep_base = int(ipaddress.IPv4Address("10.128.0.0"))

    def ns_name(self, n):
        return "gen-%0*d" % (self.ns_width, n)

    def svc_ns(self, s):
        return self.ns_name(s // self.per_ns)

    @staticmethod
    def svc_name(s):
        return "svc-%06d" % s

    def headless(self, s):
        return bool(self.headless_every) and s % self.headless_every == 0

    def cluster_ip(self, s):
        return str(ipaddress.IPv4Address(self.svc_base + s))

    def endpoint_ip(self, s, j):
        n = self.ep_base + s * self.endpoints + j
        return "%d.%d.%d.%d" % (n >> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255)

    def pod_name(self, s, j):
        return "svc-%06d-%0*d" % (s, self.pod_width, j)

    def has_pod(self, s, j):
        return j < self.pods_per_svc and s * self.pods_per_svc + j < self.pods

    def node(self, s, j):
        return "node-%03d" % ((s * 31 + j) % self.nodes)


class GeneratedSet:
    """Index-addressable objects of one type in key order (see the store)."""

    kind_code = 0

    def __init__(self, rtype, layout, count, first_rv):
        self.rtype = rtype
        self.layout = layout
        self.count = count
        self.first_rv = first_rv

    def key(self, i):
        ns = self.namespace(i)
        return f"{ns}/{self.name(i)}" if ns else self.name(i)

    def rv(self, i):
        return self.first_rv + i

    def uid(self, i):
        return _uid(self.kind_code, i)

    def owner_uids(self, i):
        return []

    def field(self, i, label):
        if label in ("metadata.name", "name"):
            return self.name(i)
        if label == "metadata.namespace":
            return self.namespace(i)
        return self.fields(i).get(label, "")

    def fields(self, i):
        return {}

    def index_of(self, key):
        """The index whose key this is, or None if the key is not a generated one."""
        i = self.parse_key(key)
        if i is None or not 0 <= i < self.count or self.key(i) != key:
            return None
        return i


class Namespaces(GeneratedSet):
    kind_code = 0x6e500000
    _re = re.compile(r"^gen-([0-9]+)$")

    def namespace(self, i):
        return ""

    def name(self, i):
        return self.layout.ns_name(i)

    def parse_key(self, key):
        m = self._re.match(key)
        return int(m.group(1)) if m else None

    def labels(self, i):
        return {"kubernetes.io/metadata.name": self.name(i), "apisim.k8s.io/generated": "true"}

    def fields(self, i):
        return {"status.phase": "Active"}

    def item_json(self, i):
        name = self.name(i)
        return ('{"metadata":{"name":"%s","uid":"%s","resourceVersion":"%d","creationTimestamp":"%s",'
                '"labels":{"apisim.k8s.io/generated":"true","kubernetes.io/metadata.name":"%s"}},'
                '"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}'
                % (name, self.uid(i), self.rv(i), TIMESTAMP, name))


class _PerService(GeneratedSet):
    """Sets with one object per service (services, slices, legacy Endpoints)."""

    _re = re.compile(r"^gen-[0-9]+/svc-([0-9]{6})")

    def namespace(self, i):
        return self.layout.svc_ns(i)

    def parse_key(self, key):
        m = self._re.match(key)
        return int(m.group(1)) if m else None

    def service_uid(self, s):
        return _uid(Services.kind_code, s)


class Services(_PerService):
    kind_code = 0x5e700000

    def name(self, i):
        return self.layout.svc_name(i)

    def labels(self, i):
        return {"app": self.name(i), "apisim.k8s.io/generated": "true"}

    def fields(self, i):
        lay = self.layout
        return {"spec.clusterIP": "None" if lay.headless(i) else lay.cluster_ip(i),
                "spec.type": "ClusterIP"}

    def item_json(self, i):
        lay = self.layout
        name, ns = self.name(i), self.namespace(i)
        ip = "None" if lay.headless(i) else lay.cluster_ip(i)
        return ('{"metadata":{"name":"%s","namespace":"%s","uid":"%s","resourceVersion":"%d",'
                '"creationTimestamp":"%s","labels":{"apisim.k8s.io/generated":"true","app":"%s"}},'
                '"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080},'
                '{"name":"dns","protocol":"UDP","port":53,"targetPort":53}],"selector":{"app":"%s"},'
                '"clusterIP":"%s","clusterIPs":["%s"],"type":"ClusterIP","sessionAffinity":"None",'
                '"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},'
                '"status":{"loadBalancer":{}}}'
                % (name, ns, self.uid(i), self.rv(i), TIMESTAMP, name, name, ip, ip))


class EndpointSlices(_PerService):
    kind_code = 0xe5100000

    def name(self, i):
        return "svc-%06d-%s" % (i, _suffix(i))

    def labels(self, i):
        svc = self.layout.svc_name(i)
        out = {"app": svc, "apisim.k8s.io/generated": "true",
               "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
               "kubernetes.io/service-name": svc}
        if self.layout.headless(i):
            out["service.kubernetes.io/headless"] = ""
        return out

    def owner_uids(self, i):
        return [self.service_uid(i)]

    def _endpoints(self, s):
        lay = self.layout
        ns = lay.svc_ns(s)
        headless = lay.headless(s)
        parts = []
        for j in range(lay.endpoints):
            ip = lay.endpoint_ip(s, j)
            if lay.has_pod(s, j):
                pod = lay.pod_name(s, j)
                host = '"hostname":"%s",' % pod if headless else ""
                parts.append('{"addresses":["%s"],"conditions":{"ready":true,"serving":true,'
                             '"terminating":false},%s"targetRef":{"kind":"Pod","namespace":"%s",'
                             '"name":"%s","uid":"%s"},"nodeName":"%s","zone":"zone-%s"}'
                             % (ip, host, ns, pod, _uid(Pods.kind_code, s * lay.pods_per_svc + j),
                                lay.node(s, j), "abc"[j % 3]))
            else:
                parts.append('{"addresses":["%s"],"conditions":{"ready":true,"serving":true,'
                             '"terminating":false},"nodeName":"%s","zone":"zone-%s"}'
                             % (ip, lay.node(s, j), "abc"[j % 3]))
        return "[" + ",".join(parts) + "]" if parts else "null"

    def item_json(self, i):
        lay = self.layout
        svc, ns = lay.svc_name(i), self.namespace(i)
        headless = ',"service.kubernetes.io/headless":""' if lay.headless(i) else ""
        return ('{"metadata":{"name":"%s","generateName":"%s-","namespace":"%s","uid":"%s",'
                '"resourceVersion":"%d","generation":1,"creationTimestamp":"%s",'
                '"labels":{"apisim.k8s.io/generated":"true","app":"%s",'
                '"endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io",'
                '"kubernetes.io/service-name":"%s"%s},'
                '"annotations":{"endpoints.kubernetes.io/last-change-trigger-time":"%s"},'
                '"ownerReferences":[{"apiVersion":"v1","kind":"Service","name":"%s","uid":"%s",'
                '"controller":true,"blockOwnerDeletion":true}]},'
                '"addressType":"IPv4","endpoints":%s,'
                '"ports":[{"name":"http","protocol":"TCP","port":8080},'
                '{"name":"dns","protocol":"UDP","port":53}]}'
                % (self.name(i), svc, ns, self.uid(i), self.rv(i), TIMESTAMP, svc, svc, headless,
                   TIMESTAMP, svc, self.service_uid(i), self._endpoints(i)))


class LegacyEndpoints(_PerService):
    kind_code = 0xe9000000

    def name(self, i):
        return self.layout.svc_name(i)

    def labels(self, i):
        out = {"app": self.name(i), "apisim.k8s.io/generated": "true"}
        if self.layout.headless(i):
            out["service.kubernetes.io/headless"] = ""
        return out

    def item_json(self, i):
        lay = self.layout
        name, ns = self.name(i), self.namespace(i)
        headless = lay.headless(i)
        addrs = []
        for j in range(lay.endpoints):
            if lay.has_pod(i, j):
                pod = lay.pod_name(i, j)
                host = '"hostname":"%s",' % pod if headless else ""
                addrs.append('{"ip":"%s",%s"nodeName":"%s","targetRef":{"kind":"Pod","namespace":"%s",'
                             '"name":"%s","uid":"%s"}}'
                             % (lay.endpoint_ip(i, j), host, lay.node(i, j), ns, pod,
                                _uid(Pods.kind_code, i * lay.pods_per_svc + j)))
            else:
                addrs.append('{"ip":"%s","nodeName":"%s"}' % (lay.endpoint_ip(i, j), lay.node(i, j)))
        subsets = ('[{"addresses":[%s],"ports":[{"name":"http","port":8080,"protocol":"TCP"},'
                   '{"name":"dns","port":53,"protocol":"UDP"}]}]' % ",".join(addrs)) if addrs else None
        labels = '"apisim.k8s.io/generated":"true","app":"%s"%s' % (
            name, ',"service.kubernetes.io/headless":""' if headless else "")
        return ('{"metadata":{"name":"%s","namespace":"%s","uid":"%s","resourceVersion":"%d",'
                '"creationTimestamp":"%s","labels":{%s},"annotations":'
                '{"endpoints.kubernetes.io/last-change-trigger-time":"%s"}}%s}'
                % (name, ns, self.uid(i), self.rv(i), TIMESTAMP, labels, TIMESTAMP,
                   ',"subsets":' + subsets if subsets else ""))


class Pods(GeneratedSet):
    kind_code = 0x90d00000
    _re = re.compile(r"^gen-[0-9]+/svc-([0-9]{6})-([0-9]+)$")

    def _sj(self, i):
        return divmod(i, self.layout.pods_per_svc)

    def namespace(self, i):
        return self.layout.svc_ns(i // self.layout.pods_per_svc)

    def name(self, i):
        s, j = self._sj(i)
        return self.layout.pod_name(s, j)

    def parse_key(self, key):
        m = self._re.match(key)
        if not m:
            return None
        return int(m.group(1)) * self.layout.pods_per_svc + int(m.group(2))

    def labels(self, i):
        s, _ = self._sj(i)
        return {"app": self.layout.svc_name(s), "apisim.k8s.io/generated": "true"}

    def fields(self, i):
        s, j = self._sj(i)
        return {"spec.nodeName": self.layout.node(s, j), "spec.restartPolicy": "Always",
                "spec.schedulerName": "default-scheduler", "spec.serviceAccountName": "default",
                "spec.hostNetwork": "false", "status.phase": "Running",
                "status.podIP": self.layout.endpoint_ip(s, j), "status.nominatedNodeName": ""}

    def item_json(self, i):
        lay = self.layout
        s, j = self._sj(i)
        name, ns, svc = lay.pod_name(s, j), self.namespace(i), lay.svc_name(s)
        ip, node = lay.endpoint_ip(s, j), lay.node(s, j)
        host = ('"hostname":"%s","subdomain":"%s",' % (name, svc)) if lay.headless(s) else ""
        return ('{"metadata":{"name":"%s","namespace":"%s","uid":"%s","resourceVersion":"%d",'
                '"creationTimestamp":"%s","labels":{"apisim.k8s.io/generated":"true","app":"%s"}},'
                '"spec":{"containers":[{"name":"app","image":"registry.example/app:1.0",'
                '"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"resources":{},'
                '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",'
                '"imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always",'
                '"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",'
                '"serviceAccountName":"default","serviceAccount":"default","nodeName":"%s",'
                '"securityContext":{},%s"schedulerName":"default-scheduler","priority":0,'
                '"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},'
                '"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True",'
                '"lastProbeTime":null,"lastTransitionTime":"%s"},{"type":"Ready","status":"True",'
                '"lastProbeTime":null,"lastTransitionTime":"%s"},{"type":"ContainersReady",'
                '"status":"True","lastProbeTime":null,"lastTransitionTime":"%s"},'
                '{"type":"PodScheduled","status":"True","lastProbeTime":null,'
                '"lastTransitionTime":"%s"}],"hostIP":"192.168.%d.%d","hostIPs":[{"ip":"192.168.%d.%d"}],'
                '"podIP":"%s","podIPs":[{"ip":"%s"}],"startTime":"%s","containerStatuses":'
                '[{"name":"app","state":{"running":{"startedAt":"%s"}},"lastState":{},"ready":true,'
                '"restartCount":0,"image":"registry.example/app:1.0","imageID":"","started":true}],'
                '"qosClass":"BestEffort"}}'
                % (name, ns, self.uid(i), self.rv(i), TIMESTAMP, svc, node, host,
                   TIMESTAMP, TIMESTAMP, TIMESTAMP, TIMESTAMP,
                   int(node[5:]) // 250, int(node[5:]) % 250 + 1,
                   int(node[5:]) // 250, int(node[5:]) % 250 + 1,
                   ip, ip, TIMESTAMP, TIMESTAMP))


def build(spec, store):
    """Registers the generated sets described by spec with the store (nothing is materialized)."""
    lay = Layout(spec)
    sets = []
    if lay.namespaces:
        sets.append(Namespaces(resources.NAMESPACES, lay, lay.namespaces, 0))
    if lay.services:
        sets.append(Services(resources.SERVICES, lay, lay.services, 0))
        sets.append(EndpointSlices(resources.ENDPOINTSLICES, lay, lay.services, 0))
        if spec["legacy-endpoints"]:
            sets.append(LegacyEndpoints(resources.ENDPOINTS, lay, lay.services, 0))
    if lay.pods:
        sets.append(Pods(resources.PODS, lay, lay.pods, 0))
    for gen in sets:
        gen.first_rv = store.reserve(gen.count)
        store.add_generated(gen)
    return sets
