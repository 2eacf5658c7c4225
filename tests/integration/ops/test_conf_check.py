#!/usr/bin/env python3
"""`knotc conf-check` rejects bad mod-k8s settings with a clear message, without the network.

Issue 3: "`knotc conf-check` rejects a bad value with a clear message, without
touching the network." Each case checks the generated configuration with one
bad option and looks for the reason in knotc's output.
"""

import os
import tempfile

import knotd
import testing

tests = testing.Tests()


def rejected(options, reason):
    def check():
        result = knotd.check_config(module=options)
        testing.expect(result.returncode != 0, f"{options} accepted:\n{result.stdout}")
        testing.expect(reason in result.stdout, f"no '{reason}' in:\n{result.stdout}")
    return check


def accepted(options):
    def check():
        result = knotd.check_config(module=options)
        testing.expect(result.returncode == 0 and "Configuration is valid" in result.stdout,
                       f"{options} rejected:\n{result.stdout}")
    return check


tests.add("a missing kubeconfig is named with its path",
          rejected({"kubeconfig": "/nonexistent/kubeconfig"},
                   "invalid kubeconfig (kubeconfig /nonexistent/kubeconfig: cannot open"))
tests.add("a label selector with other characters is refused",
          rejected({"labels": "app=web;rm"}, "invalid label selector in labels"))
tests.add("a namespace label selector with other characters is refused",
          rejected({"namespace-labels": "a b'c"}, "invalid label selector in namespace-labels"))
tests.add("namespaces and namespace-labels exclude each other",
          rejected({"namespaces": ["a"], "namespace-labels": "team=x"},
                   "namespaces and namespace-labels are mutually exclusive"))
tests.add("a cluster id must be one or two DNS labels",
          rejected({"cluster-id": "Bad_Id"}, "cluster-id must be one or two lowercase DNS labels"))
tests.add("a cluster id of three labels is refused",
          rejected({"cluster-id": "a.b.c"}, "cluster-id must be one or two lowercase DNS labels"))
# The same rule as the watcher's for ids read from the API: a label neither starts nor ends with '-'.
tests.add("a cluster id whose label starts with a hyphen is refused",
          rejected({"cluster-id": "-east"}, "cluster-id must be one or two lowercase DNS labels"))
tests.add("a cluster id whose label ends with a hyphen is refused",
          rejected({"cluster-id": "east.prod-"}, "cluster-id must be one or two lowercase DNS labels"))
tests.add("more than 29 autopath host search domains are refused",
          rejected({"autopath": True, "autopath-host-search": [f"d{i}.example" for i in range(30)]},
                   "autopath-host-search holds at most 29 domains"))
tests.add("autopath with 29 host search domains is accepted",
          accepted({"autopath": True, "autopath-host-search": [f"d{i}.example" for i in range(29)]}))
tests.add("an unknown pods mode is refused", rejected({"pods": "sometimes"}, "'pods'"))
tests.add("a ttl above 3600 is refused", rejected({"ttl": 9999}, "out of range"))
tests.add("an upstream that is no IP address is refused",
          rejected({"upstream": "not-an-address"}, "upstream must be an IPv4 or IPv6 address"))
tests.add("a stall timeout below 5 s is refused", rejected({"watch-stall-timeout": 1}, "out of range"))
tests.add("a snapshot max age above 365 days is refused",
          rejected({"snapshot-max-age": "366d"}, "out of range"))
tests.add("snapshot off and a snapshot max age in hours are accepted",
          accepted({"snapshot": False, "snapshot-max-age": "12h"}))
tests.add("a federation must be NAME=DOMAIN",
          rejected({"federations": ["example.com"]}, "invalid federation 'example.com' (not NAME=DOMAIN)"))
tests.add("a federation name must be a lowercase DNS label",
          rejected({"federations": ["My_Fed=example.com"]},
                   "invalid federation 'My_Fed=example.com' (the name is no lowercase DNS label)"))
tests.add("a federation domain must be a DNS name",
          rejected({"federations": ["fed=exa mple.com"]},
                   "invalid federation 'fed=exa mple.com' (the domain is no lowercase DNS name)"))
tests.add("a federation name is given once",
          rejected({"federations": ["fed=example.com", "fed=example.org"]},
                   "federation 'fed' given twice"))
tests.add("federation-zone needs federation-region",
          rejected({"federation-zone": "us-central1-b"},
                   "federation-zone and federation-region must be set together"))
tests.add("federation-zone and federation-region are DNS names",
          rejected({"federation-zone": "zone_b", "federation-region": "us-central1"},
                   "federation-zone and federation-region must be DNS names"))
tests.add("federation-nameservers must be NAME=IP",
          rejected({"federation-nameservers": ["myfed"]},
                   "invalid federation-nameservers 'myfed' (not NAME=IP[@port][,IP[@port]...])"))
tests.add("federation-nameservers are IP addresses",
          rejected({"federation-nameservers": ["myfed=ns.example.com"]},
                   "invalid federation-nameservers 'myfed=ns.example.com' "
                   "(nameserver 1 is no IP address (optionally with @port))"))
tests.add("federation-nameservers hold at most 8 addresses",
          rejected({"federation-nameservers": ["f=" + ",".join(f"10.0.0.{i}" for i in range(9))]},
                   "more than 8 nameservers"))
tests.add("federation-nameservers name a federation once",
          rejected({"federation-nameservers": ["f=10.0.0.1", "f=10.0.0.2"]},
                   "federation-nameservers for 'f' given twice"))
tests.add("federation-cluster-name is one DNS label",
          rejected({"federation-cluster-name": "east.prod"},
                   "federation-cluster-name must be a lowercase DNS label"))
tests.add("federation-api-listen needs a port",
          rejected({"federation-api-listen": "127.0.0.1"},
                   "federation-api-listen must be an IPv4 or IPv6 address with @port"))
tests.add("the programming endpoint's options go together",
          rejected({"federation-api-listen": "127.0.0.1@8443"},
                   "federation-api-listen, federation-api-cert, federation-api-key and "
                   "federation-api-client-ca go together"))
tests.add("the K8S-DNS role's options are accepted",
          accepted({"federation-nameservers": ["myfed=10.0.0.1,::1@5353"],
                    "federation-cluster-name": "east",
                    "federation-api-listen": "0.0.0.0@8443", "federation-api-cert": "/c.pem",
                    "federation-api-key": "/k.pem", "federation-api-client-ca": "/ca.pem"}))
tests.add("node-name is a node's name",
          rejected({"node-name": "Node_A"}, "node-name must be a node's name (a lowercase DNS name)"))
tests.add("federations with a static topology are accepted",
          accepted({"federations": ["myfederation=example.com", "second=second.example.com."],
                    "federation-zone": "us-central1-b", "federation-region": "us-central1",
                    "node-name": "gke-pool-1-abcd.c.project.internal"}))
tests.add("an upstream with a port is accepted", accepted({"upstream": "10.0.0.1@5353"}))
tests.add("an IPv6 upstream is accepted", accepted({"upstream": "::1"}))
tests.add("a two-label cluster id is accepted", accepted({"cluster-id": "east.prod"}))
tests.add("a set-based label selector is accepted", accepted({"labels": "app in (web,db),!canary"}))


# The Federated-DNS role (doc/mod-k8s.rst, The Federated-DNS role).
def kubeconfig_file():
    """A kubeconfig that reads as valid (its server is never asked)."""
    path = os.path.join(tempfile.mkdtemp(prefix="mod-k8s-conf-"), "kubeconfig")
    with open(path, "w", encoding="utf-8") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
                "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                "users: [{name: u, user: {token: abc}}]\n")
    return path


KUBECONFIG = kubeconfig_file()
tests.add("federation members are accepted",
          accepted({"federation-name": "myfed",
                    "federation-member": [f"foo kubeconfig={KUBECONFIG} zone=us-east1-b region=us-east1 "
                                          "source=10.1.0.0/16,fd00:1::/48",
                                          f"bar kubeconfig={KUBECONFIG} context=x"],
                    "federation-external": "myfed.svc.federation.example.com."}))
tests.add("a federation member needs federation-name",
          rejected({"federation-member": [f"foo kubeconfig={KUBECONFIG}"]},
                   "federation-member needs federation-name"))
tests.add("federation-name needs a member",
          rejected({"federation-name": "myfed"}, "federation-name needs at least one federation-member"))
tests.add("federation-name is one lowercase label",
          rejected({"federation-name": "My.Fed"}, "federation-name must be a lowercase DNS label"))
tests.add("a federation member needs a kubeconfig",
          rejected({"federation-name": "myfed", "federation-member": ["foo zone=a"]},
                   "invalid federation-member 'foo zone=a' (no kubeconfig=PATH)"))
tests.add("a federation member's unknown key is named",
          rejected({"federation-name": "myfed", "federation-member": [f"foo kubeconfig={KUBECONFIG} colour=x"]},
                   "unknown key 'colour'"))
tests.add("a federation member's source prefix without host bits",
          rejected({"federation-name": "myfed",
                    "federation-member": [f"foo kubeconfig={KUBECONFIG} source=10.1.0.1/16"]},
                   "source '10.1.0.1/16' is no ADDRESS[/LENGTH] without host bits"))
tests.add("a federation member's kubeconfig is read",
          rejected({"federation-name": "myfed", "federation-member": ["foo kubeconfig=/nonexistent/kc"]},
                   "invalid kubeconfig of federation-member 'foo'"))
tests.add("a federation member given twice is refused",
          rejected({"federation-name": "myfed", "federation-member": [f"foo kubeconfig={KUBECONFIG}",
                                                                      f"foo kubeconfig={KUBECONFIG} zone=a"]},
                   "federation-member 'foo' given twice"))
tests.add("more than 32 federation members are refused",
          rejected({"federation-name": "myfed",
                    "federation-member": [f"m{i} kubeconfig={KUBECONFIG}" for i in range(33)]},
                   "federation-member holds at most 32 member clusters"))

tests.main()
