#!/usr/bin/env python3
"""The operations endpoint (option metrics-listen; doc/mod-k8s.rst, Metrics, health and
readiness; issue 25 item 1): /metrics in Prometheus's text format, parsed strictly here, by
`promtool check metrics` and scraped by a real Prometheus server; /health (its
verdict without DNS: test_health.py), which a lameduck file leaves at 200; /ready, which follows
the zones' synchronization and the lameduck file; GET of those three paths only.
"""

import json
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import knotd
import testing
from promtext import parse, value
from cluster import Cluster, ZONES
from faults import endpoint_slice, trigger_time, wait_for

tests = testing.Tests()

HTTP_PORT = knotd.free_port()
DNS_PORT = knotd.free_port()
LAMEDUCK = os.path.join(tempfile.mkdtemp(prefix="mod-k8s-lameduck-"), "lameduck")
BASE = f"http://127.0.0.1:{HTTP_PORT}"


def get(path, method="GET", headers=None, timeout=5):
    """(status, body) of a request to the endpoint."""
    request = urllib.request.Request(BASE + path, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def scrape():
    status, body = get("/metrics")
    testing.expect_equal(status, 200, "GET /metrics")
    return parse(body)


def udp_and_tcp_queries(c):
    c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR")
    c.query("nothing.default.svc.cluster.local.", "A")
    c.query("kubernetes.default.svc.cluster.local.", "A", tcp=True)
    c.query("_https._tcp.kubernetes.default.svc.cluster.local.", "SRV")


@tests.case
def the_metrics_page_is_the_strict_text_format(c):
    families = scrape()
    for family in ("mod_k8s_dns_requests_total", "mod_k8s_dns_responses_total",
                   "mod_k8s_dns_request_duration_seconds", "mod_k8s_ready", "mod_k8s_connected",
                   "mod_k8s_objects", "mod_k8s_resyncs_total", "mod_k8s_api_errors_total",
                   "mod_k8s_last_event_age_seconds", "mod_k8s_snapshot_stale",
                   "mod_k8s_dns_programming_duration_seconds", "mod_k8s_serving"):
        testing.expect(family in families, f"{family} on the page")


@tests.case
def queries_are_counted_by_transport_type_and_rcode(c):
    before = scrape()
    udp_and_tcp_queries(c)
    after = scrape()

    def grew(family, sample=None, **labels):
        return value(after, family, sample, **labels) - value(before, family, sample, **labels)

    testing.expect(grew("mod_k8s_dns_responses_total", proto="udp", type="A", rcode="NOERROR") >= 1,
                   "a UDP A answer counted")
    testing.expect_equal(grew("mod_k8s_dns_responses_total", proto="udp", type="A", rcode="NXDOMAIN"),
                         1, "the UDP NXDOMAIN")
    testing.expect_equal(grew("mod_k8s_dns_responses_total", proto="tcp", type="A", rcode="NOERROR"),
                         1, "the TCP answer")
    testing.expect_equal(grew("mod_k8s_dns_responses_total", proto="udp", type="SRV"), 1, "the SRV query")
    # Requests are the responses summed: each query once.
    testing.expect_equal(value(after, "mod_k8s_dns_requests_total"),
                         value(after, "mod_k8s_dns_responses_total"), "requests == responses")
    testing.expect_equal(grew("mod_k8s_dns_request_duration_seconds",
                              "mod_k8s_dns_request_duration_seconds_count", type="SRV"), 1,
                         "the SRV query's duration observed")


@tests.case
def the_watchers_state_is_one_series_per_watcher_not_per_zone(c):
    families = scrape()
    services = [labels for name, labels, _ in families["mod_k8s_objects"]["samples"]
                if labels.get("kind") == "services"]
    # Four zones load the module and share one watcher: one series, not four.
    testing.expect_equal(len(services), 1, f"mod_k8s_objects{{kind=services}} series ({services})")
    testing.expect(value(families, "mod_k8s_objects", kind="services") > 0, "services held")
    testing.expect_equal(value(families, "mod_k8s_ready", role="cluster"), 1, "ready")
    testing.expect_equal(value(families, "mod_k8s_connected"), 1, "connected")


@tests.case
def the_programming_latency_is_a_histogram_of_the_watchers_buckets(c):
    before = value(scrape(), "mod_k8s_dns_programming_duration_seconds",
                   "mod_k8s_dns_programming_duration_seconds_count")
    c.sim.apply(endpoint_slice("default", "kubernetes", ["10.0.0.77"], name="kubernetes-metrics",
                               trigger=trigger_time()))

    def counted():
        return value(scrape(), "mod_k8s_dns_programming_duration_seconds",
                     "mod_k8s_dns_programming_duration_seconds_count") > before
    wait_for(counted, "the programming latency observed", timeout=10)
    families = scrape()
    testing.expect(value(families, "mod_k8s_dns_programming_duration_seconds",
                         "mod_k8s_dns_programming_duration_seconds_sum") > 0, "_sum grew")


@tests.case
def a_change_is_counted_in_every_phase_of_the_watchers_round(c):
    phases = ("receive", "decode", "store", "records", "publish", "snapshot", "other", "total")
    name = "mod_k8s_watcher_round_seconds"

    def counts():
        families = scrape()
        return {p: value(families, name, name + "_count", phase=p) for p in phases}
    before = counts()
    c.sim.apply(endpoint_slice("default", "kubernetes", ["10.0.0.78"], name="kubernetes-rounds"))
    c.expect_answer("78.0.0.10.in-addr.arpa.", "PTR", "NOERROR")
    wait_for(lambda: counts()["total"] > before["total"], "the round counted", timeout=10)
    after = counts()
    # Every phase is counted in every round that did something, a phase that took no time too.
    for p in phases:
        testing.expect_equal(after[p] - before[p], after["total"] - before["total"], f"{p} rounds")
    families = scrape()
    for p in ("decode", "records", "publish", "total"):
        testing.expect(value(families, name, name + "_sum", phase=p) > 0, f"time spent in {p}")


@tests.case
def promtool_checks_the_page(c):
    promtool = shutil.which("promtool")
    if promtool is None:
        raise testing.Skip("promtool absent (Debian package prometheus, scripts/deps metrics)")
    _, body = get("/metrics")
    result = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                            capture_output=True, timeout=60)
    testing.expect(result.returncode == 0, f"promtool check metrics:\n{result.stdout}{result.stderr}")


@tests.case
def a_prometheus_server_scrapes_the_series(c):
    binary = shutil.which("prometheus")
    if binary is None:
        raise testing.Skip("prometheus absent (Debian package prometheus, scripts/deps metrics)")
    udp_and_tcp_queries(c)
    workdir = tempfile.mkdtemp(prefix="mod-k8s-prometheus-")
    port = knotd.free_port()
    with open(os.path.join(workdir, "prometheus.yml"), "w", encoding="utf-8") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: knot-dns\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{HTTP_PORT}']\n")
    process = subprocess.Popen(
        [binary, f"--config.file={workdir}/prometheus.yml", f"--storage.tsdb.path={workdir}/data",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "log"), "w"))
    try:
        def query(expr):
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    return json.load(response)["data"]["result"]
            except (OSError, ValueError):
                return []

        def scraped():
            return any(r["value"][1] == "1" for r in query('up{job="knot-dns"}'))
        wait_for(scraped, "Prometheus scraped the endpoint", timeout=60, interval=0.5)
        answered = query('sum(mod_k8s_dns_responses_total{rcode="NOERROR"})')
        testing.expect(answered and float(answered[0]["value"][1]) >= 1,
                       f"NOERROR responses through Prometheus's API: {answered}")
        ready = query('mod_k8s_ready{role="cluster"}')
        testing.expect(len(ready) == 1 and ready[0]["value"][1] == "1", f"mod_k8s_ready: {ready}")
        quantile = query("histogram_quantile(0.9, sum by (le) "
                         "(mod_k8s_dns_request_duration_seconds_bucket))")
        testing.expect(len(quantile) == 1 and float(quantile[0]["value"][1]) > 0,
                       f"a quantile of the request duration: {quantile}")
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)


@tests.case
def ready_and_health_answer_ok_when_synchronized(c):
    testing.expect_equal(get("/ready"), (200, "OK\n"), "/ready")
    testing.expect_equal(get("/health"), (200, "OK\n"), "/health")


@tests.case
def a_lameduck_file_makes_ready_fail_while_answers_continue(c):
    with open(LAMEDUCK, "w", encoding="utf-8"):
        pass
    try:
        status, body = get("/ready")
        testing.expect_equal((status, body), (503, "not ready (lameduck)\n"), "/ready in lameduck")
        # As CoreDNS's health through its lameduck: alive, the process answers on.
        testing.expect_equal(get("/health"), (200, "OK\n"), "/health in lameduck")
        c.expect_answer("kubernetes.default.svc.cluster.local.", "A", "NOERROR", timeout=1)
        testing.expect_equal(value(scrape(), "mod_k8s_lameduck"), 1, "mod_k8s_lameduck")
    finally:
        os.unlink(LAMEDUCK)
    testing.expect_equal(get("/ready")[0], 200, "/ready after the file is gone")


@tests.case
def only_get_of_the_three_paths_is_answered(c):
    testing.expect_equal(get("/metrics", method="POST")[0], 405, "POST /metrics")
    testing.expect_equal(get("/ready", method="DELETE")[0], 405, "DELETE /ready")
    testing.expect_equal(get("/")[0], 404, "GET /")
    testing.expect_equal(get("/metrics/../etc/passwd")[0], 404, "GET a path around /metrics")
    # A request line and headers past K8S_HTTPD_MAX_REQUEST are refused, not buffered.
    status, _ = get("/ready", headers={"X-Big": "a" * 20000})
    testing.expect(status in (413, 414, 431), f"an oversized request refused ({status})")
    # A client that never finishes its request is dropped (K8S_HTTPD_TIMEOUT_S).
    with socket.create_connection(("127.0.0.1", HTTP_PORT), timeout=15) as s:
        s.sendall(b"GET /ready HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        testing.expect_equal(s.recv(100), b"", "a trickling client is closed")
        testing.expect(time.monotonic() - started < 12, "within the connection timeout")
    testing.expect_equal(get("/ready")[0], 200, "the endpoint still serves")


@tests.case
def a_reload_keeps_the_endpoint_and_its_counters(c):
    before = value(scrape(), "mod_k8s_dns_requests_total")
    testing.expect(before > 0, "queries counted before the reload")
    stop = threading.Event()
    failures = []

    def poll():
        while not stop.is_set():
            status, _ = get("/ready")
            if status != 200:
                failures.append(status)
            time.sleep(0.02)
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        c.server.reload()
        time.sleep(0.5)
    finally:
        stop.set()
        poller.join(timeout=10)
    testing.expect_equal(failures, [], "/ready during the reload")
    families = scrape()
    testing.expect(value(families, "mod_k8s_dns_requests_total") >= before, "counters kept")
    services = [labels for name, labels, _ in families["mod_k8s_objects"]["samples"]
                if labels.get("kind") == "services"]
    testing.expect_equal(len(services), 1, "still one watcher's series after the reload")


CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"


def machine_keeps_time_by_an_invariant_tsc():
    """What dnsmetrics.c asks of the machine before it reads the TSC."""
    if platform.machine() != "x86_64":
        return False
    try:
        with open(CLOCKSOURCE, encoding="ascii") as f:
            if f.readline() != "tsc\n":
                return False
        with open("/proc/cpuinfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("flags"):
                    return {"constant_tsc", "nonstop_tsc"} <= set(line.split())
    except OSError:
        pass
    return False


@tests.case
def the_answers_clock_is_set_by_knotds_first_load_once_not_by_a_reload(c):
    def said():
        return [line for line in c.server.log_text().splitlines()
                if "the answers' clock is" in line]
    # Every zone's instance and the global one loaded, and a reload before (above).
    lines = said()
    testing.expect_equal(len(lines), 1, f"said once by the first load:\n{lines}")
    clock = "the TSC" if machine_keeps_time_by_an_invariant_tsc() else "CLOCK_MONOTONIC"
    testing.expect(clock in lines[0], f"the clock is {clock}: {lines[0]}")
    c.server.reload()
    testing.expect_equal(said(), lines, "a reload's loads set nothing")


@tests.case
def knotcs_configuration_check_does_not_calibrate_the_clock(c):
    strace = shutil.which("strace")
    if strace is None:
        raise testing.Skip("strace is not installed (Debian package strace)")
    trace = os.path.join(os.path.dirname(LAMEDUCK), "knotc.strace")
    argv, env = c.server.command("knotc", "conf-check")
    if "ASAN_OPTIONS" in env:
        # LeakSanitizer cannot run under ptrace: the traced knotc's leaks go unchecked.
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0")
    result = subprocess.run([strace, "-f", "-qq", "-e", "trace=openat", "-o", trace] + argv,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, timeout=60, check=False)
    if result.returncode != 0 and "ptrace" in result.stdout:
        raise testing.Skip(f"strace cannot trace here: {result.stdout.strip()}")
    testing.expect_equal(result.returncode, 0, f"knotc conf-check:\n{result.stdout}")
    with open(trace, encoding="utf-8", errors="replace") as f:
        opened = f.read()
    os.unlink(trace)
    # The check loads the module (its conf check callback): the proof it was traced.
    testing.expect("k8s" in opened and ".so" in opened, "knotc opened the module")
    testing.expect(CLOCKSOURCE not in opened and "/proc/cpuinfo" not in opened,
                   "knotc read neither the clock source nor the CPU's flags")


@tests.case
def metrics_listen_is_refused_without_a_port(c):
    server = c.knotd(module={"metrics-listen": "127.0.0.1"})
    server.write_files()
    result = server.knotc("conf-check")
    testing.expect(result.returncode != 0 and "metrics-listen" in result.stdout,
                   f"conf-check refuses metrics-listen without @port:\n{result.stdout}")


def fixture():
    return Cluster(module={"metrics-listen": f"127.0.0.1@{HTTP_PORT}", "lameduck-file": LAMEDUCK},
                   zones=ZONES, port=DNS_PORT)


tests.main(fixture=fixture)
