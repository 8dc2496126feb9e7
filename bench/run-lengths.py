#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: how long the probes' threads ran each
time they got a CPU (from the switch to them to the switch away, on one CPU), by role. A message
thread's run is its waking of its workers (each wake-up's select_cpu, enqueue and runnable run on
its CPU, on its time) and its going to sleep; a worker's, its spin and its sleep. A worker woken
while no other CPU is idle waits for its waker's run to end, so where the workers' own runs are
level between two schedulers and the message threads' are not, the difference is the cost of the
wake-up path the waker pays.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh spin=50 sleep=10000 jitter=2500 [sched=...]
    python3 bench/run-lengths.py LOG [LOG...]
"""
import argparse
import collections

from sched_trace import read_log, role, summary


def run_lengths(path):
    """{role: [ms per run]} of the probes' threads in one log (role: msg, worker, main)."""
    events, threads = read_log(path)
    role_of = {p: role(i, len(pids)) for pids in threads.values() for i, p in enumerate(pids)}
    since = {}  # pid -> (time it got a CPU, that CPU)
    runs = collections.defaultdict(list)
    for ts, cpu, ev, f, _ in events:
        if ev != "sched_switch":
            continue
        prev, nxt = int(f.get("prev_pid", -1)), int(f.get("next_pid", -1))
        if prev in since and since[prev][1] == cpu and prev in role_of:
            runs[role_of[prev]].append((ts - since.pop(prev)[0]) * 1000)
        since[nxt] = (ts, cpu)
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="+")
    for path in ap.parse_args().logs:
        runs = run_lengths(path)
        print(path)
        for role in ("msg", "worker"):
            if runs[role]:
                print(f"  {role:7s}{summary(runs[role])}")


if __name__ == "__main__":
    main()
