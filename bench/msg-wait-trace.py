#!/usr/bin/env python3
"""Reads console logs of bench/guest/spin-sched-trace.sh: how often the probes' message threads
waited over 2 ms from their wake-up, or from being preempted, to running again (per thread and
cause), and who preempted whom (task roles: main, worker, msg; "o" for other tasks). A message
thread's wait delays the wake-up of both its workers, so these waits show in the workers' p99.

    python3 bench/msg-wait-trace.py LOG [LOG...]

Used on 2026-12-01 (docs/benchmarks.md, "brief wakers") to compare scx_fdl with EEVDF in the
quiet spin3 shape beside guarantees of 0.29 CPU (spin-sched-trace.sh shares=300 [sched=eevdf]).
"""
import collections
import sys

from sched_trace import read_log, roles

OVER_S = 2e-3


def role(name, pid):
    return name.get(pid, "o").split("-")[-1]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        events, threads = read_log(path)
        name = roles(threads)
        waking, preempted_at = {}, {}
        waits, switches = collections.Counter(), collections.Counter()
        for ts, _cpu, ev, fl, _raw in events:
            if ev == "sched_waking":
                waking[int(fl["pid"])] = ts
            elif ev == "sched_switch":
                prev, nxt = int(fl["prev_pid"]), int(fl["next_pid"])
                if fl["prev_state"].startswith("R") and prev:
                    preempted_at[prev] = ts
                    switches[(role(name, prev), role(name, nxt))] += 1
                t0, kind = waking.pop(nxt, None), "woken"
                if t0 is None:
                    t0, kind = preempted_at.pop(nxt, None), "preempted"
                else:
                    preempted_at.pop(nxt, None)
                if name.get(nxt, "").endswith("-msg") and t0 is not None and ts - t0 > OVER_S:
                    waits[(name[nxt], kind)] += 1
        print(f"{path}: message threads' waits over {OVER_S * 1e3:.0f} ms: {sum(waits.values())}")
        for (thread, kind), n in sorted(waits.items()):
            print(f"  {thread:10s} {kind:9s} {n}")
        print("  preempted (victim -> next), most often:")
        for (victim, nxt), n in switches.most_common(6):
            print(f"    {victim} -> {nxt}: {n}")


if __name__ == "__main__":
    main()
