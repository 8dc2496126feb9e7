#!/usr/bin/env python3
"""Where the CPU went, per measurement of a bench/run.sh result directory: each cgroup's CPUs
over the window, the machine's idle CPUs and the scheduler's own process (/proc/stat and its
/proc/PID/stat, as the harness read them), and each probe's wake-ups per second.

    python3 bench/cpu-split.py DIR [DIR...]

Why the wake-ups: a probe's message thread sleeps a fixed time and then wakes its workers, and a
worker still spinning from the last round is not woken again, so the rounds a probe runs, and the
CPU its workers use, grow when its wake-ups wait less. Beside hackbench, what the antagonist does
not get is the idle CPU, the scheduler's process, and what the probes took: more rounds, and more
CPU per round (the scheduling work charged to the tasks that switch). The harness's verdicts
compare the antagonist's CPU with EEVDF's in the same boot; this says where the difference went.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.harness.report import read_raw  # noqa: E402  (the harness's reader of raw.jsonl)


def rows(d):
    """(scheduler, variant, repeat, {cgroup: CPUs}, idle CPUs, scheduler CPUs, {probe: wake-ups/s})."""
    out = []
    for r in read_raw(d)[0]:
        w = r.get("window_s")
        if not w:
            continue
        cpus = {k: v / 1e6 / w for k, v in (r.get("cpu_usec") or {}).items()}
        machine = r.get("machine_usec") or {}
        rates = {k: p["samples"] / p["runtime_secs"] for k, p in (r.get("probes") or {}).items()
                 if isinstance(p, dict) and p.get("runtime_secs")}
        out.append((r.get("sched"), r.get("variant"), r.get("repeat"), cpus,
                    machine.get("idle", 0) / 1e6 / w, machine.get("sched", 0) / 1e6 / w, rates))
    return out


def main():
    dirs = sys.argv[1:]
    if not dirs or any(a.startswith("-") for a in dirs):
        sys.exit(__doc__)
    for d in dirs:
        print(f"== {os.path.basename(os.path.normpath(d))}")
        for sched, variant, rep, cpus, idle, own, rates in rows(d):
            split = " ".join(f"{k} {v:.2f}" for k, v in cpus.items())
            woken = " ".join(f"{k} {v:.0f}" for k, v in rates.items())
            print(f"  {variant:<10} r{rep} {sched:<14} CPUs: {split}; idle {idle:.3f}, "
                  f"scheduler {own:.3f}; wake-ups/s: {woken}")


if __name__ == "__main__":
    main()
