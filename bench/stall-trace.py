#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh stall=1: where the stall watch's
real-time threads (cyclictest, one per CPU, a 10 ms timer) were held up. Two ways a wake-up comes
late: the timer fires late (the thread's sched_waking comes more than a period after its last
one: the CPU took no timer interrupt, or did not handle it, that long) or the woken thread waits
for its CPU (sched_waking to the sched_switch to it: preemption off). For the worst of each, the
events on that CPU meanwhile: whether it switched tasks, took interrupts, or went silent (a stall
of the host, or interrupts off).

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh stall=1 antagonist=1 [KEY=VALUE...]
    python3 bench/stall-trace.py LOG [--show 3] [--period-ms 10]
"""
import argparse
import collections

from sched_trace import read_log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--show", type=int, default=3, help="the worst N of each kind, with their CPU's events")
    ap.add_argument("--period-ms", type=float, default=10.0, help="the stall watch's timer period")
    a = ap.parse_args()
    events, _ = read_log(a.log)
    rt = set()
    last_waking = {}            # pid -> (time, index) of its last sched_waking
    pending = {}                # pid -> (time, cpu, index) of a wake-up not yet run
    late_timer, waited = [], []  # (ms, pid, cpu, from index, to index)
    for i, (ts, cpu, ev, f, _) in enumerate(events):
        # The measuring threads only (real-time: prio below 100), not cyclictest's main thread.
        if ev == "sched_waking" and f.get("comm") == "cyclictest" and int(f.get("prio", 120)) < 100:
            p = int(f["pid"])
            rt.add(p)
            c = int(f.get("target_cpu", cpu))
            if p in last_waking:
                t0, i0 = last_waking[p]
                late_timer.append(((ts - t0) * 1e3 - a.period_ms, p, c, i0, i))
            last_waking[p] = (ts, i)
            pending[p] = (ts, c, i)
        elif ev == "sched_switch" and int(f["next_pid"]) in pending:
            p = int(f["next_pid"])
            t0, c, i0 = pending.pop(p)
            waited.append(((ts - t0) * 1e3, p, cpu, i0, i))
    print(f"stall watch threads seen: {len(rt)}; wake-ups {sum(1 for _ in waited)}")
    for title, rows in (("timer fired late (interval past the period)", late_timer),
                        ("woken, waited for its CPU (waking to running)", waited)):
        v = sorted(r[0] for r in rows)
        if not v:
            print(f"{title}: none")
            continue
        print(f"{title}: n={len(v)} p50={v[len(v) // 2]:.2f} p99={v[min(len(v) - 1, len(v) * 99 // 100)]:.2f} "
              f"max={v[-1]:.2f} ms")
        for ms, p, c, i0, i1 in sorted(rows, reverse=True)[:a.show]:
            span = events[i0:i1 + 1]
            on_cpu = [e for e in span if e[1] == c]
            kinds = collections.Counter(e[2] for e in on_cpu)
            # The longest time no CPU recorded anything: the whole guest frozen (the emulator or
            # its host), where even a CPU running user code took no timer interrupt.
            quiet = max(((b[0] - a_[0]) * 1e3, a_[0]) for a_, b in zip(span, span[1:])) if len(span) > 1 else (0, 0)
            print(f"  {ms:.2f} ms, thread {p} on CPU {c}, {events[i0][0]:.6f}-{events[i1][0]:.6f}: "
                  f"that CPU's events meanwhile: {dict(kinds) or 'none'}; no event on any CPU for "
                  f"{quiet[0]:.2f} ms from {quiet[1]:.6f}")
            shown = on_cpu if len(on_cpu) <= 24 else on_cpu[:12] + [None] + on_cpu[-12:]
            for e in shown:
                print(f"    {e[4] if e else '...'}")


if __name__ == "__main__":
    main()
