#!/usr/bin/env python3
"""Cuts the console log of a bench/guest/spin-sched-trace.sh run with several schedulers in one
boot (sched=scx_fdl,scx_flash,...) into one log per run, for the readers that take one
(bench/start-trace.py, bench/run-lengths.py, bench/remote-wake.py, ...): LOG.runI-SCHED.log
beside it, I counting from 1. A run begins at its THREADS lines (printed while its probes run;
its FDL-LATENCY, DUMP and TR lines follow them); what the log has before the first run (the
boot, the rig check's RIG line) is copied into every run's log.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh sched=scx_fdl,scx_flash,scx_fdl,scx_flash
    python3 bench/split-trace.py LOG
"""
import argparse
import os


def split(lines):
    """(head, runs): the lines before the first run, and each run's lines."""
    head, runs = [], []
    for line in lines:
        # A run's first THREADS line; its other cgroups' THREADS lines follow it at once.
        if line.startswith("THREADS ") and (not runs or any(not l.startswith("THREADS ") for l in runs[-1])):
            runs.append([])
        (runs[-1] if runs else head).append(line)
    return head, runs


def sched_of(run):
    """The scheduler a run measured, from its FDL-LATENCY lines ("unknown" without them)."""
    for line in run:
        if line.startswith("FDL-LATENCY "):
            return line.split()[1]
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    a = ap.parse_args()
    with open(a.log, errors="replace") as f:
        head, runs = split(f)
    base = os.path.splitext(a.log)[0]
    for i, run in enumerate(runs, 1):
        out = f"{base}.run{i}-{sched_of(run)}.log"
        with open(out, "w") as f:
            f.writelines(head + run)
        print(f"{out}: {len(run)} lines")


if __name__ == "__main__":
    main()
