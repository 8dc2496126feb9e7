#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: how long each probe thread waited from
its wake-up (sched_waking) to running (sched_switch to it), per cgroup and role (main, worker,
message thread); then the workers' wake-ups by where they ran (the waker's CPU or another) and
whether that CPU was busy when they were woken, and, on the waker's CPU, by what left it for the
worker (the message thread going to sleep, or preempted; or another task). With --show N, the
first N waits longer than --over-ms with every context switch meanwhile. The workers' waits over
2 ms during which a CPU idled for over 0.5 ms (summed over the CPUs) are counted: work left
waiting beside an idle CPU. A scheduler's bpf_printk lines (bpf_trace_printk) are in the log too,
for a debugging build.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh [KEY=VALUE...]
    python3 bench/start-trace.py LOG [--over-ms 2.8] [--show 5]

Where the waits differ between two schedulers on the same workload (the same guest script with
sched=eevdf), the classes say whether it is a policy choice (who runs first) or the cost of each
switch (the same order, every step slower).
"""
import argparse
import collections

from sched_trace import read_log, summary

ROLES = ("main", "worker", "worker", "msg")  # a probe's threads in creation order


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--over-ms", type=float, default=2.8)
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args()
    events, threads = read_log(a.log)
    name = {p: f"{c}-{ROLES[min(i, 3)]}" for c, pids in threads.items() for i, p in enumerate(pids)}
    msgs = {pids[3] for pids in threads.values() if len(pids) > 3}
    waking, current = {}, {}
    idle_since, idle_beside = {}, {}  # CPU -> since when idle; thread -> idle CPU time during its wait
    waits = collections.defaultdict(list)
    classes = collections.defaultdict(list)
    recent = collections.deque(maxlen=64)
    shown = worker_waits = idle_waits = 0
    for ts, cpu, ev, f, _ in events:
        if ev == "sched_waking":
            p = int(f["pid"])
            if p in name:
                waking[p] = (ts, cpu, dict(current))
                idle_beside[p] = 0.0
        elif ev == "sched_switch":
            nxt, prev = int(f["next_pid"]), int(f["prev_pid"])
            if prev == 0 and cpu in idle_since:
                since = idle_since.pop(cpu)
                for p, (t0, _, _) in waking.items():
                    idle_beside[p] += max(0.0, ts - max(since, t0))
            if nxt == 0:
                idle_since[cpu] = ts
            current[cpu] = nxt
            recent.append((ts, cpu, prev, f["prev_state"], nxt))
            if nxt not in waking:
                continue
            t0, wcpu, cur = waking.pop(nxt)
            ms = (ts - t0) * 1e3
            waits[name[nxt]].append(ms)
            beside = idle_beside.pop(nxt) + sum(max(0.0, ts - max(s, t0)) for s in idle_since.values())
            if name[nxt].endswith("-worker"):
                worker_waits += 1
                idle_waits += ms > 2 and beside > 0.5e-3
                where = "waker's CPU" if cpu == wcpu else "other CPU"
                state = "busy" if cur.get(cpu, 0) else "idle"
                left = ""
                if cpu == wcpu:
                    who = "message thread" if prev in msgs else "other task"
                    how = "slept" if f["prev_state"] not in ("R", "R+") else "preempted"
                    left = f", {who} {how}"
                classes[f"{where} ({state} at the wake-up){left}"].append(ms)
            if ms > a.over_ms and shown < a.show:
                shown += 1
                print(f"{name[nxt]} {nxt} waited {ms:.2f} ms until {ts:.6f}")
                for t, c, pp, st, nn in recent:
                    if t >= t0 - 0.002:
                        print(f"   {t:.6f} cpu{c}: {name.get(pp, pp)} ({st}) -> {name.get(nn, nn)}")
    print("waking to running, per cgroup and role:")
    for k in sorted(waits):
        print(f"  {k:14s} {summary(waits[k])}")
    print(f"workers' waits over 2 ms with a CPU idle over 0.5 ms of it: {idle_waits} of {worker_waits}")
    print("workers, by where they ran:")
    for k in sorted(classes, key=lambda k: -len(classes[k])):
        print(f"  {k:55s} {summary(classes[k])}")


if __name__ == "__main__":
    main()
