"""The statistics of the report: medians and spread over repeats, ratios, and reading the
percentile tables of the latency workloads (fdl-probe's JSON, schbench's text)."""

import re
import shlex

# The percentiles the latency workloads print (schbench's set), as JSON keys of fdl-probe.
PERCENTILES = (50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9)


def pkey(p):
    return f"p{p:g}"


def median(values):
    """Median of the values (mean of the middle two for an even count); None if empty."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def spread(values):
    """(min, max) of the values, the spread reported beside a median; None if empty."""
    v = [x for x in values if x is not None]
    return (min(v), max(v)) if v else None


def summarize(values):
    """{median, min, max, n} of repeated measurements of one figure."""
    v = [x for x in values if x is not None]
    s = spread(v)
    return {"median": median(v), "min": s[0] if s else None, "max": s[1] if s else None, "n": len(v)}


def ratio(value, baseline):
    if value is None or not baseline:
        return None
    return value / baseline


def nearest_rank(samples, p):
    """The p-th percentile of samples by nearest rank, as fdl-probe computes it (per-mille integer
    arithmetic so that 99.9 % of 1000 samples is exactly the 999th)."""
    if not samples:
        return None
    s = sorted(samples)
    permille = round(p * 10)
    r = min(max(-(-permille * len(s) // 1000), 1), len(s))
    return s[r - 1]


_PCT = re.compile(r"\*?\s*(\d+(?:\.\d+)?)th:\s*(\d+)")
_MINMAX = re.compile(r"min=(\d+),\s*max=(\d+)")
_TOTAL = re.compile(r"\((\d+) total samples\)")


def parse_schbench(text):
    """The first percentile table in schbench's output (the wake-up latencies in newer schbench,
    the only table in the one the FDL experiment used) as fdl-probe's JSON keys. Lines may be
    joined with '|' (the guest's framing)."""
    out = {}
    lines = re.split(r"[|\n]", text)
    started = False
    for line in lines:
        if "percentiles" in line.lower():
            if started:
                break  # the next table (request latencies, RPS) is not the wake-up latency
            started = True
            m = _TOTAL.search(line)
            if m:
                out["samples"] = int(m.group(1))
            continue
        m = _PCT.search(line)
        if m:
            started = True
            out[pkey(float(m.group(1)))] = int(m.group(2))
            continue
        m = _MINMAX.search(line)
        if m and started:
            out["min"], out["max"] = int(m.group(1)), int(m.group(2))
    if pkey(99.0) not in out:
        raise ValueError(f"no percentile table in schbench output: {text[:200]!r}")
    return out


def hackbench_messages_per_run(args):
    """Messages one hackbench run passes: groups x senders x receivers x loops (each of a group's
    -f senders sends -l messages to each of its -f receivers). hackbench's defaults apply."""
    g, f, loops = 10, 20, 100
    words = shlex.split(args)
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w in ("-g", "--groups") and nxt:
            g = int(nxt)
        elif w in ("-f", "--fds") and nxt:
            f = int(nxt)
        elif w in ("-l", "--loops") and nxt:
            loops = int(nxt)
    return g * f * f * loops


def throughput(kind, args, result):
    """Work per second of an antagonist from the guest's record: hackbench messages/s over the runs
    that completed (their own timing), stress-ng bogo ops/s (its own metrics)."""
    if kind == "hackbench":
        if not result or not result.get("runs") or not result.get("secs"):
            return None
        return result["runs"] * hackbench_messages_per_run(args) / result["secs"]
    if kind == "stress-ng":
        if not result or not result.get("secs"):
            return None
        return result["bogo_ops"] / result["secs"]
    return None


THROUGHPUT_UNIT = {"hackbench": "msg/s", "stress-ng": "bogo-ops/s"}
