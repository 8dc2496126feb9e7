#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: where the CPUs' time went (per command,
from the context switches), how long each CPU was idle while some task was runnable and not running
(woken, or preempted still runnable), by who was waiting (the probes' cgroups, or other: the
antagonist), and the context switches, preemptions and reschedule interrupts. Compare a scheduler's
figures with EEVDF's in a trace of the same shape: the part both share is the wake-up itself (an
idle CPU needs an interrupt before it runs what it was given). --show N prints the longest such
stretches with the events around them.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh antagonist=1 [sched=eevdf]
    python3 bench/idle-trace.py LOG [--show 10] [--min-us 500]
"""
import argparse
import collections

from sched_trace import read_log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--show", type=int, default=0, help="print the N longest stretches with their events")
    ap.add_argument("--min-us", type=float, default=0.0, help="show only stretches at least this long")
    a = ap.parse_args()
    events, threads = read_log(a.log)
    if not events:
        raise SystemExit("idle-trace: no TR lines in the log")
    cgroup_of = {p: c for c, pids in threads.items() for p in pids}
    cpus = sorted({e[1] for e in events})
    running = {c: None for c in cpus}  # pid running per CPU (0: idle; None: not seen yet)
    waiting = {}  # pid -> (since, "woken" or "preempted", the CPU it was woken to or left)
    idle_since, idle_total = {}, collections.Counter()
    open_ = {}  # cpu -> (start ts, event index, kind): idle while something waits
    beside = collections.Counter()  # (cpu, kind) -> seconds; kind: "own" (every waiter was woken
    # to this CPU: the wake-up in flight) or the cgroup of the longest waiter elsewhere
    stretches = []
    t0, t1 = events[0][0], events[-1][0]

    def who(pid):
        return cgroup_of.get(pid, "other")

    def kind(c):
        if not waiting:
            return None
        if all(w[2] == c and w[1] == "woken" for w in waiting.values()):
            return "own"
        pid = min((w[0], p) for p, w in waiting.items() if not (w[2] == c and w[1] == "woken"))[1]
        return who(pid)

    for idx, (ts, cpu, name, f, _) in enumerate(events):
        if name == "sched_wakeup":
            pid = int(f["pid"])
            if pid not in waiting and pid not in running.values():
                waiting[pid] = (ts, "woken", int(f["target_cpu"]))
        elif name == "sched_switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            if running[cpu] == 0 and cpu in idle_since:
                idle_total[cpu] += ts - idle_since.pop(cpu)
            if prev and f["prev_state"] in ("R", "R+"):
                waiting[prev] = (ts, "preempted", cpu)
            waiting.pop(nxt, None)
            running[cpu] = nxt
            if nxt == 0:
                idle_since[cpu] = ts
        else:
            continue
        for c in cpus:
            k = kind(c) if running[c] == 0 else None
            if c in open_ and open_[c][2] != k:
                s, si, sk = open_.pop(c)
                beside[(c, sk)] += ts - s
                stretches.append((ts - s, c, sk, si, idx))
            if k and c not in open_:
                open_[c] = (ts, idx, k)
    secs = t1 - t0
    use, last = collections.Counter(), {}
    switches, preempted, resched = 0, 0, 0
    for ts, cpu, name, f, _ in events:
        if name == "reschedule_entry":
            resched += 1
        if name != "sched_switch":
            continue
        switches += 1
        preempted += f["prev_pid"] != "0" and f["prev_state"] in ("R", "R+")
        if cpu in last:  # by the name it leaves with (a shell that execs hackbench is hackbench)
            use[f["prev_comm"].split("/")[0]] += ts - last[cpu]
        last[cpu] = ts
    print(f"trace {secs:.2f} s, CPUs {cpus}: {switches / secs:.0f} context switches/s ({preempted / secs:.0f} of a "
          f"task still runnable), {resched / secs:.0f} reschedule interrupts/s")
    print("CPUs used per command: " + ", ".join(f"{k} {v / secs:.3f}" for k, v in use.most_common(6)))
    print("CPU time (s) a CPU idled while a task was runnable and not running,")
    print("by the longest waiter: 'own' = every waiter was woken to this CPU (its wake-up interrupt in flight)")
    kinds = sorted({k for _, k in beside})
    for c in cpus:
        parts = ", ".join(f"{k} {beside[(c, k)]:.3f}" for k in kinds)
        print(f"cpu {c}: idle {idle_total[c]:.3f} s ({idle_total[c] / secs:.3f} CPU); beside work: {parts}")
    hist = collections.defaultdict(collections.Counter)
    for d, c, k, *_ in stretches:
        us = d * 1e6
        b = "a<100us" if us < 100 else "b<300us" if us < 300 else "c<1ms" if us < 1000 else "d<3ms" if us < 3000 else "e>=3ms"
        hist[k][b] += d
    for k in kinds:
        print(f"  {k:10s} by stretch length (s): " + ", ".join(f"{b[1:]} {v:.3f}" for b, v in sorted(hist[k].items())))
    shown = [s for s in sorted(stretches, reverse=True) if s[2] != "own" and s[0] * 1e6 >= a.min_us][:a.show]
    for d, c, k, si, ei in shown:
        print(f"\n--- cpu {c} idle {d * 1e6:.0f} us beside waiting work ({k})")
        for e in events[max(0, si - 6):ei + 2]:
            f = e[3]
            pid = int(f["next_pid"]) if e[2] == "sched_switch" else int(f.get("pid", -1))
            print(f"  {e[4][:170]}  [{who(pid)}]")

if __name__ == "__main__":
    main()
