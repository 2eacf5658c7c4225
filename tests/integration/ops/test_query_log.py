#!/usr/bin/env python3
"""The query log (issue 41, item 7): CoreDNS's log plugin as mod-k8s's query-log.

knotd runs the shipped deployment with query-log values written as CoreDNS's log lines:
each answer, a cluster name's (knotd's END hook) and a forwarded one's (a late answer
from the forwarder's thread) alike, is one line of knotd's log in CoreDNS's format, if
its class (success, denial, error) is one of the first rule whose names hold it; past
query-log-rate lines a second, lines are counted, not written.
"""

import re
import time

import shipped
import stubdns
import testing

tests = testing.Tests()

# {remote}:{port} - {>id} "{type} {class} {name} {proto} {size} {>do} {>bufsize}" {rcode}
# {>rflags} {rsize} {duration}
COMMON = re.compile(r'(\d+\.\d+\.\d+\.\d+):(\d+) - (\d+) "(\S+) IN (\S+) (udp|tcp) (\d+) '
                    r'(true|false) (\d+)" (\S+) (\S+) (\d+) (\d+(?:\.\d+)?)s$')


def lines(c, name):
    return [m for m in (COMMON.search(l) for l in c.log_text().splitlines()) if m and m.group(5) == name]


@tests.case
def each_answer_is_one_line_of_coredns_common_format_cluster_and_forwarded_names_alike():
    with stubdns.StubDNS() as up, \
            shipped.deployment([up.address], ["query-log: \".\""]) as c:
        c.query("kubernetes.default.svc.cluster.local.")
        c.query("www.example.com.", tcp=True)
        c.query("nx.default.svc.cluster.local.", bufsize=1232)

        def check():
            for name, proto, rcode in [("kubernetes.default.svc.cluster.local.", "udp", "NOERROR"),
                                       ("www.example.com.", "tcp", "NOERROR"),
                                       ("nx.default.svc.cluster.local.", "udp", "NXDOMAIN")]:
                got = lines(c, name)
                testing.expect(len(got) == 1, f"{name}: {len(got)} lines:\n{c.log_tail()}")
                m = got[0]
                testing.expect(m.group(1) == "127.0.0.1" and m.group(6) == proto and
                               m.group(10) == rcode and m.group(4) == "A",
                               f"{name}: {m.group(0)}")
            nx = lines(c, "nx.default.svc.cluster.local.")[0]
            testing.expect(nx.group(9) == "1232" and "aa" in nx.group(11).split(","),
                           f"bufsize and flags: {nx.group(0)}")
            fwd = lines(c, "www.example.com.")[0]
            testing.expect(fwd.group(9) == "65535" and "ra" in fwd.group(11).split(","),
                           f"over TCP: {fwd.group(0)}")
        testing.eventually(check, timeout=5)


@tests.case
def classes_and_names_choose_the_answers_written_as_coredns_first_rule():
    options = ['query-log: "cluster.local {name}/{rcode} { class denial }"',
               'query-log: ". {name}+{rcode} { class error ; class success }"']
    with stubdns.StubDNS() as up, shipped.deployment([up.address], options) as c:
        up.rcodes["bad.example.com."] = 2
        for name in ("kubernetes.default.svc.cluster.local.", "nx.default.svc.cluster.local.",
                     "www.example.com.", "bad.example.com."):
            c.query(name)

        def check():
            text = c.log_text()
            testing.expect("nx.default.svc.cluster.local./NXDOMAIN" in text, text[-2000:])
            testing.expect("www.example.com.+NOERROR" in text, text[-2000:])
            testing.expect("bad.example.com.+SERVFAIL" in text, text[-2000:])
        testing.eventually(check, timeout=5)
        # A success in cluster.local: its rule writes denials only, and no other rule is tried.
        text = c.log_text()
        testing.expect("kubernetes.default.svc.cluster.local./NOERROR" not in text and
                       "kubernetes.default.svc.cluster.local.+NOERROR" not in text,
                       "a success of cluster.local written")


@tests.case
def past_the_rate_lines_are_left_out_and_counted():
    with stubdns.StubDNS() as up, \
            shipped.deployment([up.address], ['query-log: ". {name}"', "query-log-rate: 5"]) as c:
        for i in range(40):
            c.query(f"r{i}.default.svc.cluster.local.")
        time.sleep(1.2)
        c.query("after.default.svc.cluster.local.")  # a line in the next second tells
        written = [l for l in c.log_text().splitlines()
                   if re.search(r"r\d+\.default\.svc\.cluster\.local\.$", l)]
        # 5 in the first second at most (the readiness probes' answers among them), and
        # 5 more if the queries spanned two.
        testing.expect(1 <= len(written) <= 10, f"{len(written)} lines written")
        testing.eventually(lambda: testing.expect(
            re.search(r"query log, \d+ lines left out", c.log_text()), c.log_tail()), timeout=5)


@tests.case
def a_query_log_value_coredns_refuses_is_refused_by_the_check():
    import knotd
    for value, reason in [('query-log: ". { class warning }"', "no class"),
                          ('query-log: ". { klass error }"', "unknown property"),
                          ('query-log: ". \\"{name}"', "not closed")]:
        text = shipped.config("/nonexistent", ["192.0.2.1"], [value])
        result = knotd.check_config(config=text)
        testing.expect(result.returncode != 0 and reason in result.stdout,
                       f"{value}: {result.returncode}\n{result.stdout}")


tests.main()
