"""The results as a table on stdout, as Markdown for BENCHMARKS.md, and the goals they meet."""

import re

from world import MIXES

BEGIN = "<!-- results:begin (written by bench/run) -->"
END = "<!-- results:end -->"

GOAL_QPS_RATIO = 0.95
GOAL_AUTOPATH_RATIO = 0.9
GOAL_IR_RATIO = 1.2
GOAL_BYTES_PER_RECORD = 128
GOAL_RELIST = 1.25
GOAL_PROGRAMMING_P99_MS = 20
GOAL_DURATION_S = 15 * 60


def _mb(value):
    return f"{value / 1e6:.1f} MB" if value is not None else "-"


def _get(d, *keys):
    for key in keys:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _fmt(value, spec=""):
    return "-" if value is None else format(value, spec)


def goals(results):
    """[(goal, measured, met)]; met is None when the part did not run."""
    out = []
    tp = results.get("throughput")
    if tp:
        worst = min(tp.items(), key=lambda item: item[1]["ratio"])
        out.append((f"throughput >= {GOAL_QPS_RATIO} x zone file, every mix",
                    f"lowest {worst[1]['ratio']:.3f} ({_title(worst[0])})",
                    all(e["ratio"] >= GOAL_QPS_RATIO for e in tp.values())))
    if tp and "autopath" in tp and "svc_a" in tp:
        # The same services asked directly (the service A mix), by the same server.
        direct = tp["autopath"]["module"]["qps"] / tp["svc_a"]["module"]["qps"]
        out.append((f"autopath >= {GOAL_AUTOPATH_RATIO} x the QPS of direct hits of the same names",
                    f"{direct:.3f}", direct >= GOAL_AUTOPATH_RATIO))
    cg = results.get("callgrind")
    if cg and "module" in cg and "zone" in cg:
        ratios = {mix: cg["module"][mix]["ir_per_query"] / cg["zone"][mix]["ir_per_query"]
                  for mix in cg["module"]}
        worst = max(ratios.items(), key=lambda item: item[1])
        out.append((f"instructions per query <= {GOAL_IR_RATIO} x zone file, every mix",
                    f"highest {worst[1]:.2f} ({_title(worst[0])})",
                    all(r <= GOAL_IR_RATIO for r in ratios.values())))
    no_pods = results.get("scale_no_pods")
    if no_pods:
        out.append((f"<= {GOAL_BYTES_PER_RECORD} bytes per endpoint record",
                    f"{no_pods['bytes_per_record']} B (pods not watched)",
                    no_pods["bytes_per_record"] <= GOAL_BYTES_PER_RECORD))
    relist = _get(results, "scale", "relist")
    if relist:
        out.append((f"relist peak <= {GOAL_RELIST} x steady RSS",
                    f"{relist['peak_over_steady']:.3f} x", relist["peak_over_steady"] <= GOAL_RELIST))
    pl = _get(results, "scale", "programming_latency")
    if pl:
        out.append((f"programming latency p99 <= {GOAL_PROGRAMMING_P99_MS} ms at 100 changes/s",
                    f"{pl['p99_ms']} ms", pl["p99_ms"] is not None and
                    pl["p99_ms"] <= GOAL_PROGRAMMING_P99_MS and pl["lost"] == 0))
    if set(results.get("parts", ())) == {"throughput", "callgrind", "scale"}:
        out.append(("the whole suite in < 15 minutes", f"{results['duration_s'] / 60:.1f} min",
                    results["duration_s"] < GOAL_DURATION_S))
    return out


def _title(mix):
    return dict(MIXES).get(mix, mix)


def _ratio(a, b, spec=".2f"):
    return format(a / b, spec) if a and b else "-"


def _throughput_rows(results):
    tp, cg, lat = results.get("throughput", {}), results.get("callgrind", {}), \
        results.get("latency", {})
    rows = []
    for mix, title in MIXES:
        t, c, l = tp.get(mix), {k: cg.get(k, {}).get(mix) for k in ("module", "zone")}, \
            lat.get(mix)
        rows.append([
            title,
            _fmt(_get(t, "module", "qps"), ","), _fmt(_get(t, "zone", "qps"), ","),
            _fmt(_get(t, "ratio"), ".3f"),
            _fmt(_get(t, "other_cores"), ".2f"),
            _fmt(_get(c, "module", "ir_per_query"), ","), _fmt(_get(c, "zone", "ir_per_query"), ","),
            _ratio(_get(c, "module", "ir_per_query"), _get(c, "zone", "ir_per_query")),
            _fmt(_get(c, "module", "module_ir_per_query"), ","),
            _fmt(_get(c, "module", "ll_data_misses_per_query"), ".1f") + " / " +
            _fmt(_get(c, "zone", "ll_data_misses_per_query"), ".1f"),
            _fmt(_get(t, "module", "server_cpu_us_per_query"), ".2f") + " / " +
            _fmt(_get(t, "zone", "server_cpu_us_per_query"), ".2f"),
            _fmt(_get(l, "offered_qps"), ","),
            _fmt(_get(l, "module", "p50"), ".0f") + " / " + _fmt(_get(l, "module", "p99"), ".0f"),
            _fmt(_get(l, "zone", "p50"), ".0f") + " / " + _fmt(_get(l, "zone", "p99"), ".0f"),
        ])
    return rows


_TP_HEADER = ["mix", "module QPS", "zone QPS", "ratio", "other CPU", "module Ir/q", "zone Ir/q", "Ir ratio",
              "mod-k8s Ir/q", "LL misses/q mod / zone", "knotd CPU us/q mod / zone", "latency at QPS",
              "module p50 / p99 us", "zone p50 / p99 us"]


def _scale_rows(results):
    s, n = results.get("scale"), results.get("scale_no_pods")
    rows = []
    if s:
        objects = s["objects"]
        rows += [
            ["cluster", f"{objects.get('services', 0):,} services, {s['records']:,} address records,"
                        f" {objects.get('pods', 0):,} pods, {objects.get('namespaces', 0):,} namespaces"],
            ["first sync (knotd start to ready)", f"{s['first_sync_s']} s"],
            ["peak RSS during the first sync", _mb(s["sync_peak_rss"])],
            ["steady RSS (pods: verified)", _mb(s["steady_rss"])],
            ["RSS with an empty cluster", _mb(s["empty_rss"])],
            ["bytes per record, pods watched", f"{s['bytes_per_record']} B"],
        ]
    if n:
        rows += [["steady RSS (pods not watched)", _mb(n["steady_rss"])],
                 ["bytes per endpoint record, pods not watched", f"{n['bytes_per_record']} B"],
                 ["first sync, pods not watched", f"{n['first_sync_s']} s"]]
    if s and n:
        pods = s["objects"].get("pods") or 0
        if pods:
            rows.append(["bytes per pod (difference of the two)",
                         f"{(s['steady_rss'] - n['steady_rss']) / pods:.0f} B"])
    relist = _get(s, "relist")
    if relist:
        rows += [["relist: duration (restart to every watch streaming)", f"{relist['duration_s']} s"],
                 ["relist: peak RSS", f"{_mb(relist['peak_rss'])} "
                                      f"({relist['peak_over_steady']:.3f} x steady)"],
                 ["RSS after the relist", _mb(relist["rss_after"])]]
    return rows


def _latency_rows(results):
    pl = _get(results, "scale", "programming_latency")
    if not pl:
        return []
    return [
        ["changes", f"{pl['changes']} at {pl['achieved_rate']}/s, {pl['seen']} seen, "
                    f"{pl['lost']} lost"],
        ["API write to DNS answer, p50 / p90 / p99 / max",
         f"{pl['p50_ms']} / {pl['p90_ms']} / {pl['p99_ms']} / {pl['max_ms']} ms"],
        ["  of which the simulator's write request, p50 / p99",
         f"{pl['write_p50_ms']} / {pl['write_p99_ms']} ms"],
        ["  after the write request returned, p50 / p99",
         f"{pl['after_write_p50_ms']} / {pl['after_write_p99_ms']} ms"],
        ["module histogram (trigger time to publish), p50 / p99",
         f"<= {_fmt(pl['module_p50_le_ms'], '.0f')} / <= {_fmt(pl['module_p99_le_ms'], '.0f')} ms"
         f" ({pl['module_events']} events)"],
    ]


def _machine_line(results):
    m = dict(results["machine"])
    if (m.get("dnsperf") or "").startswith("Version "):
        m["dnsperf"] = "dnsperf " + m["dnsperf"].split()[-1]  # Runs before the name was added.
    return (f"{m['date']}; {m['cpu']}, {m['cpus']} vCPU, {m['memory_gib']} GiB, "
            f"{m.get('virtualization') or 'bare metal'}; {m['os']}, Linux {m['kernel']}; "
            f"{m['knotd']}; {m['dnsperf']}; {m['valgrind']}; module CFLAGS "
            f"'{m['module_cflags']}'; commit {m['commit']}; load average before "
            f"{m['load_before'][0]}, after {m['load_after'][0]}; suite {results['duration_s'] / 60:.1f} min")


def _text_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def text(results):
    """The table printed at the end of a run."""
    parts = ["", "mod-k8s benchmark: " + _machine_line(results), ""]
    if results.get("throughput") or results.get("callgrind"):
        parts += ["Query mixes: knotd+mod-k8s vs the same knotd serving zone files", "",
                  _text_table(_TP_HEADER, _throughput_rows(results)), ""]
    for title, rows in (("Scale", _scale_rows(results)),
                        ("DNS programming latency", _latency_rows(results))):
        if rows:
            parts += [title, "", _text_table(["", ""], rows), ""]
    parts += ["Goals", ""]
    for goal, measured, met in goals(results):
        parts.append(f"  [{'met ' if met else 'MISS'}] {goal}: {measured}")
    return "\n".join(parts) + "\n"


def _md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(out)


def markdown(results):
    """The results section of BENCHMARKS.md."""
    parts = [f"Run: {_machine_line(results)}.", ""]
    parts += ["### Goals", "", _md_table(["goal", "measured", ""],
                                          [[g, m, "met" if ok else "**missed**"]
                                           for g, m, ok in goals(results)]), ""]
    if results.get("throughput") or results.get("callgrind"):
        cluster = results.get("throughput_cluster", {})
        parts += ["### Query mixes", "",
                  f"Cluster: `{cluster.get('generate')}` plus {cluster.get('dual_stack_services')} "
                  f"dual-stack services; zone files of "
                  + ", ".join(f"{n:,} records ({z})" for z, n in
                              cluster.get("zone_records", {}).items())
                  + f"; mod-k8s options {cluster.get('module_options')}.", "",
                  _md_table(_TP_HEADER, _throughput_rows(results)), ""]
        eq = results.get("equivalence")
        if eq is not None:
            differing = {mix: d for mix, d in eq.items() if d}
            parts += [("Answers compared on 25 names per mix (rcode, answer and additional "
                       "sections, AA flag): " +
                       ("identical." if not differing else
                        "**differences**: " + "; ".join(d[0] for d in differing.values()))), ""]
        tp = results.get("throughput", {})
        if tp:
            cpu = [e["module"]["server_cpu_us_per_query"] for e in tp.values()]
            parts += [f"knotd+mod-k8s used {min(cpu):.2f} to {max(cpu):.2f} us of CPU per "
                      f"query, i.e. {1e3 / max(cpu):.0f}k to {1e3 / min(cpu):.0f}k queries per "
                      "second per core if the load generator were not the limit.", ""]
            parts += ["QPS of every round, module; zone file; their ratios:", ""]
            parts += [f"- {_title(m)}: {e['module']['qps_runs']}; {e['zone']['qps_runs']}; "
                      f"{e['round_ratios']}" for m, e in tp.items()]
            parts.append("")
    for title, rows in (("Scale", _scale_rows(results)),
                        ("DNS programming latency", _latency_rows(results))):
        if rows:
            parts += [f"### {title}", "", _md_table(["", ""], rows), ""]
    return "\n".join(parts)


def update_doc(path, section):
    """Replaces the text between the results markers of BENCHMARKS.md."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path} has no results markers")
    text = pattern.sub(lambda _: BEGIN + "\n" + section.rstrip() + "\n" + END, text)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
