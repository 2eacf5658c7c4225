"""A strict reader of Prometheus's text exposition format 0.0.4, for the tests that
scrape mod-k8s's /metrics (test_metrics.py, test_forward.py)."""

import re

import testing

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)')


def parse(text):
    """{family: {"type": t, "help": h, "samples": [(name, {label: value}, float)]}}.

    Fails on anything the format does not allow: a sample before its TYPE, a family
    declared twice or interleaved, a malformed label set or value, a histogram whose
    buckets are not cumulative or whose +Inf bucket is not its _count.
    """
    testing.expect(text.endswith("\n"), "the page ends with a newline")
    families, current, done = {}, None, set()
    for number, line in enumerate(text.split("\n")[:-1], 1):
        where = f"line {number}: {line!r}"
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            testing.expect(re.fullmatch(_NAME, name) and name not in families, f"HELP {where}")
            if current is not None:
                done.add(current)
            current = name
            families[name] = {"help": line.split(" ", 3)[3], "type": None, "samples": []}
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            testing.expect(name == current and families[name]["type"] is None
                           and kind in ("counter", "gauge", "histogram"), f"TYPE {where}")
            families[name]["type"] = kind
        else:
            match = _SAMPLE.match(line)
            testing.expect(match is not None and current is not None, f"sample {where}")
            name, labels_text, value = match.groups()
            kind = families[current]["type"]
            allowed = {current} if kind != "histogram" else \
                {current + "_bucket", current + "_sum", current + "_count"}
            testing.expect(name in allowed, f"sample outside its family {where}")
            labels = {}
            rest = labels_text or ""
            while rest:
                label = _LABEL.match(rest)
                testing.expect(label is not None and label[1] not in labels, f"labels {where}")
                labels[label[1]] = label[2]
                rest = rest[label.end():]
            number_value = float(value)  # Raises on a malformed value.
            testing.expect(number_value >= 0 or kind == "gauge", f"negative {where}")
            families[current]["samples"].append((name, labels, number_value))
    for name, family in families.items():
        if family["type"] == "histogram":
            check_histogram(name, family["samples"])
    return families


def check_histogram(name, samples):
    series = {}
    for sample, labels, value in samples:
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        series.setdefault(key, {"buckets": []})
        if sample.endswith("_bucket"):
            series[key]["buckets"].append((labels["le"], value))
        else:
            series[key][sample[len(name):]] = value
    for key, s in series.items():
        bounds = [float(le) for le, _ in s["buckets"]]
        counts = [count for _, count in s["buckets"]]
        testing.expect(bounds == sorted(bounds) and s["buckets"][-1][0] == "+Inf",
                       f"{name}{key}: le ascending, +Inf last")
        testing.expect(counts == sorted(counts), f"{name}{key}: buckets cumulative")
        testing.expect(s.get("_count") == counts[-1] and "_sum" in s,
                       f"{name}{key}: _count is the +Inf bucket, _sum present")


def value(families, family, sample=None, **labels):
    """The sum of a family's samples whose labels include `labels`."""
    total = 0.0
    for name, have, v in families[family]["samples"]:
        if (sample or family) == name and all(have.get(k) == w for k, w in labels.items()):
            total += v
    return total
