#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: how long each wake-up took from
sched_waking (the waker's ttwu) to sched_wakeup (the task activated on its run queue), split by
where the activation ran: on the waker's CPU (select_cpu, ops.runnable and ops.enqueue under the
target's run-queue lock), or on another CPU (a queued wake-up: the target's wake list and its
interrupt). Then the wake-ups sent to another CPU that was idle at that moment: activated late,
the task waits for an idle CPU that has not heard of it. With ipi=1 in the trace, the IPIs sent
and the polling idle CPUs woken without one are counted too; --show N prints the first N late
wake-ups of an idle CPU with every event on both CPUs meanwhile.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh [KEY=VALUE...] [ipi=1]
    python3 bench/remote-wake.py LOG [--late-ms 1] [--show 3]

Under a scheduler with queued wake-ups (scx_fdl's default, SCX_OPS_ALLOW_QUEUED_WAKEUP), a
wake-up of an idle CPU is its wake list; without (--no-queued-wakeups), the waker activates the
task and kicks the CPU.
"""
import argparse
import collections

from sched_trace import read_log, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--late-ms", type=float, default=1.0)
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args()
    events, _ = read_log(a.log)
    current = {}          # cpu -> pid running (0: idle)
    waking = {}           # pid -> (time, waker cpu, CPUs idle then, event index)
    where = collections.defaultdict(list)
    idle_target = []
    counts = collections.Counter()
    shown = 0
    for i, (ts, cpu, ev, f, line) in enumerate(events):
        if ev == "sched_switch":
            current[cpu] = int(f["next_pid"])
        elif ev == "sched_waking":
            # Its target_cpu is the task's CPU before select_task_rq: the CPU it is activated
            # for is sched_wakeup's. Which CPUs were idle is what they were at the waking.
            idle_cpus = {c for c, p in current.items() if p == 0}
            waking[int(f["pid"])] = (ts, cpu, idle_cpus, i)
        elif ev == "sched_wakeup":
            pid = int(f["pid"])
            if pid not in waking:
                continue
            t0, wcpu, idle_cpus, i0 = waking.pop(pid)
            tgt = int(f["target_cpu"])
            idle = tgt != wcpu and tgt in idle_cpus
            ms = (ts - t0) * 1e3
            where["on the waker's CPU" if cpu == wcpu else "on another CPU (its wake list)"].append(ms)
            if not idle:
                continue
            idle_target.append(ms)
            if ms > a.late_ms and shown < a.show:
                shown += 1
                print(f"wake-up of pid {pid} from cpu{wcpu} to idle cpu{tgt}: activated after {ms:.3f} ms")
                for t, c, _, _, l in events[i0:i + 1]:
                    if c in (wcpu, tgt):
                        print(f"   {l}")
        elif ev in ("ipi_send_cpu", "sched_wake_idle_without_ipi"):
            counts[ev] += 1
    print("waking to wakeup (activation), by where it ran:")
    for k in sorted(where):
        print(f"  {k:32s} {summary(where[k])}")
    if idle_target:
        late = sum(ms > a.late_ms for ms in idle_target)
        print(f"wake-ups sent to another CPU that was idle: {summary(idle_target)}; "
              f"activated after more than {a.late_ms} ms: {late}")
    for k, n in sorted(counts.items()):
        print(f"{k}: {n}")


if __name__ == "__main__":
    main()
