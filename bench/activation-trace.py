#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: the probe workers' wake-ups by who
activated them and where they ran, and the two halves of the commonest path.

A wake-up is activated (its sched_wakeup event) either on the waker's CPU ("local": the waker did
it, under the target's run-queue lock or its own) or on another CPU: from that CPU's wake list, in
its interrupt ("remote-irq": a queued wake-up, SCX_OPS_ALLOW_QUEUED_WAKEUP), or otherwise
("remote"). Each class is split by whether the worker then ran on the CPU that activated it.

The commonest path, a worker activated on its waker's CPU that runs there once its message thread
sleeps, is split in two: waking to activated (select_cpu, and the class's enqueue and runnable
callbacks) and activated to running (the message thread's remaining work and sleep, and the
switch: stopping, quiescent, dispatch and running under sched_ext).

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh [KEY=VALUE...]
    python3 bench/activation-trace.py LOG [--others-over MS]

With --others-over MS: of the workers' waits longer than MS, how many had a task other than the
probes' running on a CPU meanwhile, and which (the scheduler's own process, say).
"""
import argparse
import bisect
import collections

from sched_trace import pct, read_log, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--others-over", type=float, metavar="MS")
    a = ap.parse_args()
    events, threads = read_log(a.log)
    # A probe's threads in creation order: main, two workers, the message thread.
    workers = {pid for pids in threads.values() for pid in pids[1:-1]}
    msgs = {pids[-1] for pids in threads.values() if pids}
    probes = {pid for pids in threads.values() for pid in pids}
    running, spans, waits = {}, [], []  # spans: (start, end, comm, pid) of every run of a task
    waking, woken = {}, {}
    classes = collections.defaultdict(list)
    to_wakeup, to_run = [], []
    for t, cpu, name, f, line in events:
        if name == "sched_waking":
            pid = int(f["pid"])
            if pid in workers and pid not in waking:
                waking[pid] = (t, cpu)
        elif name == "sched_wakeup":
            pid = int(f["pid"])
            if pid in waking and pid not in woken:
                irq = "h" in line.split()[2]  # the event's context flags: in a hard interrupt
                woken[pid] = (t, cpu, irq)
        elif name == "sched_switch":
            pid = int(f["next_pid"])
            if cpu in running:
                spans.append((*running[cpu], t))
            running[cpu] = (t, f["next_comm"], pid)
            if pid not in waking or pid not in woken:
                continue
            (wt, wcpu), (ut, ucpu, irq) = waking.pop(pid), woken.pop(pid)
            who = "local" if ucpu == wcpu else ("remote-irq" if irq else "remote")
            where = "ran there" if cpu == ucpu else "ran elsewhere"
            classes[f"{who}, {where}"].append((t - wt) * 1e3)
            waits.append((wt, t))
            if ucpu == wcpu == cpu and int(f["prev_pid"]) in msgs and f["prev_state"] == "S":
                to_wakeup.append((ut - wt) * 1e6)
                to_run.append((t - ut) * 1e6)
    print("workers' waking to running, by who activated them and where they ran:")
    for k in sorted(classes):
        print(f"  {k:28s} {summary(classes[k])}")
    if to_wakeup:
        to_wakeup.sort()
        to_run.sort()
        print(f"activated by the waker, run when it slept (n={len(to_wakeup)}): waking to activated "
              f"p50 {pct(to_wakeup, .5):.0f} p90 {pct(to_wakeup, .9):.0f} us, activated to running "
              f"p50 {pct(to_run, .5):.0f} p90 {pct(to_run, .9):.0f} us")

    if a.others_over is not None:
        others_during(waits, spans, probes, a.others_over)


def others_during(waits, spans, probes, over_ms):
    """Of the waits (start, end) over over_ms, those with a non-probe task's run overlapping."""
    long = [(s, e) for s, e in waits if (e - s) * 1e3 > over_ms]
    spans = sorted((s, e, comm.split("/")[0]) for s, comm, pid, e in spans if pid and pid not in probes)
    starts = [s for s, _, _ in spans]
    by, hit = collections.Counter(), 0
    longest = max((e - s for s, e, _ in spans), default=0)
    for ws, we in long:
        seen = set()
        i = bisect.bisect_left(starts, ws - longest)
        while i < len(spans) and spans[i][0] < we:
            s, e, comm = spans[i]
            if e > ws:
                seen.add(comm)
            i += 1
        hit += bool(seen)
        by.update(seen)
    print(f"waits over {over_ms} ms: {len(long)}, with another task than the probes' running "
          f"meanwhile: {hit} ({', '.join(f'{c} {n}' for c, n in by.most_common(6))})")


if __name__ == "__main__":
    main()
