#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: how long each probe thread waited from
its wake-up (sched_waking) to running (sched_switch to it), per cgroup and role (main, worker,
message thread); then the workers' wake-ups by where they ran (the waker's CPU or another) and
whether that CPU was busy when they were woken, and, on the waker's CPU, by what left it for the
worker (the message thread going to sleep, or preempted; or another task), with how many of each
class waited over --behind-ms (what makes a probe's tail). With --show N, the
first N waits longer than --over-ms with every context switch meanwhile. The workers' waits over
2 ms during which a CPU idled for over 0.5 ms (summed over the CPUs) are counted: work left
waiting beside an idle CPU. The workers' waits over --behind-ms are classed by what held the CPUs
longest meanwhile: another probe's cgroup (an order the policy chose: under scx_fdl a tighter
deadline, or fair work's earlier one), the worker's own cgroup, other tasks, or idle CPUs. Last,
how often each probe's threads were preempted, by what took their CPU. A
debugging build's bpf_printk lines (bpf_trace_printk) are in the log too.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh [KEY=VALUE...]
    python3 bench/start-trace.py LOG [--over-ms 2.8] [--show 5]

Where the waits differ between two schedulers on the same workload (the same guest script with
sched=eevdf), the classes say whether it is a policy choice (who runs first) or the cost of each
switch (the same order, every step slower).
"""
import argparse
import collections

from sched_trace import read_log, roles, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--over-ms", type=float, default=2.8)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--behind-ms", type=float, default=1.5)
    ap.add_argument("--show-idle", type=int, default=0,
                    help="show the first N workers' waits over 2 ms with a CPU idle over 0.5 ms of it")
    a = ap.parse_args()
    events, threads = read_log(a.log)
    name = roles(threads)
    msgs = {pids[-1] for pids in threads.values() if len(pids) > 2}
    waking, current, since = {}, {}, {}
    held = {}  # waiting thread -> Counter: CPU time during its wait by what ran ("idle", a cgroup...)
    cgroup = {p: c for c, pids in threads.items() for p in pids}

    def what(pid, waiter):
        if pid == 0:
            return "idle"
        if pid not in cgroup:
            return "other tasks"
        return "its own cgroup" if cgroup[pid] == cgroup[waiter] else cgroup[pid]

    def credit(c, ts):
        """What CPU c ran since its last switch, to every thread waiting meanwhile."""
        if c not in since:
            return
        for p, (t0, _, _) in waking.items():
            d = ts - max(since[c], t0)
            if d > 0 and current.get(c) != p:
                held[p][what(current.get(c, 0), p)] += d

    waits = collections.defaultdict(list)
    classes = collections.defaultdict(list)
    behind = collections.defaultdict(collections.Counter)
    nr_workers = collections.Counter()
    taken = collections.defaultdict(collections.Counter)  # preempted cgroup -> what took its CPU
    recent = collections.deque(maxlen=64)
    shown = shown_idle = worker_waits = idle_waits = 0
    for ts, cpu, ev, f, _ in events:
        if ev == "sched_waking":
            p = int(f["pid"])
            if p in name:
                waking[p] = (ts, cpu, dict(current))
                held[p] = collections.Counter()
        elif ev == "sched_switch":
            nxt, prev = int(f["next_pid"]), int(f["prev_pid"])
            credit(cpu, ts)
            current[cpu], since[cpu] = nxt, ts
            recent.append((ts, cpu, prev, f["prev_state"], nxt))
            if prev in cgroup and f["prev_state"] in ("R", "R+"):
                taken[cgroup[prev]][cgroup.get(nxt, "idle" if nxt == 0 else "other tasks")] += 1
            if nxt not in waking:
                continue
            for c in since:
                if c != cpu:
                    credit(c, ts)
                    since[c] = ts
            t0, wcpu, cur = waking.pop(nxt)
            h = held.pop(nxt)
            ms = (ts - t0) * 1e3
            waits[name[nxt]].append(ms)
            if name[nxt].endswith("-worker"):
                worker_waits += 1
                idle_waits += ms > 2 and h["idle"] > 0.5e-3
                nr_workers[cgroup[nxt]] += 1
                if ms > a.behind_ms:
                    behind[cgroup[nxt]][max(h, key=h.get) if h else "nothing"] += 1
                where = "waker's CPU" if cpu == wcpu else "other CPU"
                state = "busy" if cur.get(cpu, 0) else "idle"
                left = ""
                if cpu == wcpu:
                    who = "message thread" if prev in msgs else "other task"
                    how = "slept" if f["prev_state"] not in ("R", "R+") else "preempted"
                    left = f", {who} {how}"
                classes[f"{where} ({state} at the wake-up){left}"].append(ms)
            idle_wait = name[nxt].endswith("-worker") and ms > 2 and h["idle"] > 0.5e-3
            if (ms > a.over_ms and shown < a.show) or (idle_wait and shown_idle < a.show_idle):
                if ms > a.over_ms and shown < a.show:
                    shown += 1
                else:
                    shown_idle += 1
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
        over = sum(ms > a.behind_ms for ms in classes[k])
        print(f"  {k:55s} {summary(classes[k])} over {a.behind_ms} ms: {over}")
    print(f"workers' waits over {a.behind_ms} ms, per cgroup, by what held the CPUs longest meanwhile:")
    for c in sorted(behind):
        held_by = ", ".join(f"{k} {n}" for k, n in behind[c].most_common())
        print(f"  {c:8s} {sum(behind[c].values())} of {nr_workers[c]}: {held_by}")
    print("probe threads preempted (off their CPU still runnable), per cgroup, by what took the CPU:")
    for c in sorted(taken):
        by = ", ".join(f"{k} {n}" for k, n in taken[c].most_common())
        print(f"  {c:8s} {sum(taken[c].values())}: {by}")


if __name__ == "__main__":
    main()
