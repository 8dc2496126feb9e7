#!/usr/bin/env python3
"""Pairs the probe wake-ups of a bench/guest/wake-sched-trace.sh console log with the switches that ran
them, per scheduler, from the kernel's sched_waking (the waker's side: try_to_wake_up begins),
sched_wakeup (the task is activated on its CPU) and sched_switch events.

    python3 bench/wake-trace.py CONSOLE_LOG

Classes: where the task ran, the waker's CPU or another, and whether that CPU was idle (switched
from the idle task) or busy. Per class: waking to running (us) and waking to wakeup (a remote
wake-up onto an idle CPU is activated there, after the interrupt that wakes it). Then, per
wake-up, the task's time on CPU until it slept again, and waking to sleep. Last, every interrupt
sent to the other CPU (ipi_send_cpu) until its handler began there (reschedule_entry or
call_function_single_entry), by the kernel function that sent it and whether the target was idle;
and the waker's own time from the interrupt it sent in wakeup_preempt to its sched_wakeup (it holds
the target's run-queue lock all along: the woken task's activation on a remote CPU, as sched_ext
does it).
"""

import collections
import re
import sys

LINE = re.compile(r"^TR (\S+)\s+(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
IDLE_EXIT = "4294967295"
FIELD = re.compile(r"(\w+)=(\S+)")


def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p))]


def line(name, vs):
    vs.sort()
    return (f"n={len(vs):5} p50={pct(vs, .5):6.0f} p90={pct(vs, .9):6.0f} p99={pct(vs, .99):6.0f} "
            f"over 2 ms: {sum(v > 2000 for v in vs)}")


def main(path):
    events = collections.defaultdict(list)
    with open(path, errors="replace") as f:
        for text in f:
            m = LINE.match(text.strip())
            if m:
                events[m.group(1)].append(m.groups()[3:])
    for sched, evs in events.items():
        waking, wakeup, started, on_cpu, first = {}, {}, {}, {}, {}
        lat, w2u = collections.defaultdict(list), collections.defaultdict(list)
        run, total = [], []
        idle, ipis, ipi_lat = {}, collections.defaultdict(list), collections.defaultdict(list)
        preempt_ipi, held = {}, []
        for cpu, ts, ev, rest in evs:
            cpu, ts, kv = int(cpu), float(ts), dict(FIELD.findall(rest))
            if ev == "cpu_idle":
                idle[int(kv["cpu_id"])] = kv["state"] != IDLE_EXIT
                continue
            if ev == "ipi_send_cpu":
                if "wakeup_preempt" in kv["callsite"]:
                    preempt_ipi[cpu] = ts
                if int(kv["cpu"]) != cpu:
                    ipis[int(kv["cpu"])].append((ts, kv["callsite"].split("+")[0], idle.get(int(kv["cpu"]), False)))
                continue
            if ev in ("reschedule_entry", "call_function_single_entry"):
                for t0, site, was_idle in ipis.pop(cpu, []):
                    ipi_lat[f"{site} -> {ev}, {'idle' if was_idle else 'busy'}"].append((ts - t0) * 1e6)
                continue
            if ev not in ("sched_waking", "sched_wakeup", "sched_switch"):
                continue
            if ev == "sched_waking":
                if "fdl-probe" in rest:
                    pid = int(kv["pid"])
                    waking[pid], on_cpu[pid], first[pid] = (ts, cpu), 0.0, True
                continue
            if ev == "sched_wakeup" and cpu in preempt_ipi:
                held.append((ts - preempt_ipi.pop(cpu)) * 1e6)
            if ev == "sched_wakeup":
                if int(kv["pid"]) in waking:
                    wakeup[int(kv["pid"])] = ts
                continue
            prev, nxt = int(kv.get("prev_pid", -1)), int(kv.get("next_pid", -1))
            if prev in started:
                on_cpu[prev] += ts - started.pop(prev)
                if not kv.get("prev_state", "").startswith("R") and prev in waking:
                    total.append((ts - waking.pop(prev)[0]) * 1e6)
                    run.append(on_cpu[prev] * 1e6)
            if nxt in waking:
                t0, waker_cpu = waking[nxt]
                if first.pop(nxt, False):
                    key = ("waker's CPU" if waker_cpu == cpu else "other CPU") + \
                        (", was idle" if kv.get("prev_pid") == "0" else ", was busy")
                    lat[key].append((ts - t0) * 1e6)
                    if nxt in wakeup:
                        w2u[key].append((wakeup.pop(nxt) - t0) * 1e6)
                started[nxt] = ts
        every = sorted(v for vs in lat.values() for v in vs)
        if not every:
            continue
        print(f"{sched}: {len(every)} wake-ups, waking to running {line('', every)}")
        for key in sorted(lat):
            print(f"  ran on {key:22} ({100 * len(lat[key]) / len(every):4.1f} %) waking to running {line('', lat[key])}")
            print(f"  {'':29}        waking to wakeup  {line('', w2u[key])}")
        print(f"  on CPU per wake-up   {line('', run)}")
        print(f"  waking to sleep      {line('', total)}")
        if ipi_lat:
            print("  interrupts to the other CPU, sent to handled (us):")
            for key in sorted(ipi_lat, key=lambda k: -len(ipi_lat[k])):
                if len(ipi_lat[key]) >= 20:
                    print(f"    {key:58} {line('', ipi_lat[key])}")
        if held:
            print(f"  waker, interrupt sent in wakeup_preempt to its sched_wakeup {line('', held)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
