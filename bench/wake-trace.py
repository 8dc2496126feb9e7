#!/usr/bin/env python3
"""Pairs the probe wake-ups of a bench/guest/wake-sched-trace.sh console log with the switches that ran
them, per scheduler: wake-up to running (us), by where the task ran.

    python3 bench/wake-trace.py CONSOLE_LOG

Classes: `same` when the wake-up was done on the CPU the task was woken onto (target_cpu), `other`
when another CPU did it (the target is then woken by an interrupt if it was idle); `idle`/`busy`
what the target CPU switched from; `/moved` when the task ran elsewhere than its target.
"""

import collections
import re
import sys

LINE = re.compile(r"^TR (\S+)\s+(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (sched_wakeup|sched_switch): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p))]


def main(path):
    events = collections.defaultdict(list)
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                events[m.group(1)].append(m.groups()[3:])
    for sched, evs in events.items():
        pending, lat = {}, collections.defaultdict(list)
        for cpu, ts, ev, rest in evs:
            cpu, ts, kv = int(cpu), float(ts), dict(FIELD.findall(rest))
            if ev == "sched_wakeup":
                if "fdl-probe" in rest:
                    pending[int(kv["pid"])] = (ts, cpu, int(kv["target_cpu"]))
            elif int(kv.get("next_pid", -1)) in pending:
                t0, waker_cpu, target = pending.pop(int(kv["next_pid"]))
                key = ("same" if waker_cpu == target else "other") + ("/idle" if kv.get("prev_pid") == "0" else "/busy")
                key += "" if cpu == target else "/moved"
                lat[key].append((ts - t0) * 1e6)
        every = sorted(v for vs in lat.values() for v in vs)
        if not every:
            continue
        print(f"{sched}: {len(every)} wake-ups, p50 {pct(every, .5):.0f} p90 {pct(every, .9):.0f} "
              f"p99 {pct(every, .99):.0f} us, {sum(v > 2000 for v in every)} over 2 ms")
        for key, vs in sorted(lat.items()):
            vs.sort()
            print(f"  {key:18} n={len(vs):5} p50={pct(vs, .5):6.0f} p90={pct(vs, .9):6.0f} "
                  f"p99={pct(vs, .99):6.0f} max={vs[-1]:6.0f} over 2 ms: {sum(v > 2000 for v in vs)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
