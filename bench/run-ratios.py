#!/usr/bin/env python3
"""Per measurement of a bench/run.sh result directory: each probe's p99, its ratio to EEVDF's p99
in the same repeat and load, and each probe's p99 over a reference probe's (default cfs, the
cgroup without parameters) in the same measurement; then the mean of those last ratios per
scheduler and load.

    python3 bench/run-ratios.py DIR [DIR...] [--ref cfs] [--probes cfs,loose,fdl]

The probes of one measurement share its window, so a host that slows the emulator for a while
moves them together: loose / cfs in one run says whether a deadline made a cgroup worse off than
none, where the ratio to EEVDF's p99 (another window) carries that window's luck as well. In the
quiet spin1 cell of 2026-12-03 EEVDF's own p99 was 2.7 ms in one boot and 7.7 ms in another.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.harness.report import read_raw  # noqa: E402  (the harness's reader of raw.jsonl)


def measurements(d):
    return [r for r in read_raw(d)[0] if r.get("probes")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--ref", default="cfs", help="the probe the others are divided by")
    ap.add_argument("--probes", default="cfs,loose,fdl")
    a = ap.parse_args()
    probes = a.probes.split(",")
    for d in a.dirs:
        runs = list(measurements(d))
        eevdf = {(r["variant"], r["repeat"]): r for r in runs if r["sched"] == "eevdf"}
        print("==", os.path.basename(os.path.normpath(d)))
        print("  %-10s %-3s %-20s %-20s %-20s %s" % ("load", "rep", "scheduler", "p99 (us)",
                                                     "/ EEVDF's", "/ " + a.ref + "'s"))
        per = {}
        for r in runs:
            p = {c: r["probes"][c]["p99"] for c in probes if c in r["probes"]}
            e = eevdf.get((r["variant"], r["repeat"]))
            to_e = "/".join("%.2f" % (p[c] / e["probes"][c]["p99"]) for c in p) if e else "-"
            ref = p.get(a.ref)
            to_ref = {c: p[c] / ref for c in p if c != a.ref} if ref else {}
            print("  %-10s r%-2d %-20s %-20s %-20s %s" % (
                r["variant"], r["repeat"], r["sched"], "/".join(str(p[c]) for c in p), to_e,
                " ".join("%s %.2f" % kv for kv in to_ref.items())))
            for c, v in to_ref.items():
                per.setdefault((r["variant"], r["sched"], c), []).append(v)
        for (load, sched, c), v in sorted(per.items()):
            print("  mean %s / %s, %-10s %-20s %.2f (%s)" % (
                c, a.ref, load, sched, statistics.mean(v), ", ".join("%.2f" % x for x in v)))


if __name__ == "__main__":
    main()
