#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: where the probe's figure for each
worker wake-up goes (fdl-probe counts the wake-up delay plus the time lost to preemption while
spinning). Per cgroup: the wait from sched_waking to the first run, the time off a CPU after
being preempted (switched out still runnable) until the worker sleeps, and their sum (close to
the probe's own figure); how many wake-ups were preempted; how long a worker had run before its
first preemption; who took its CPU (the next task at that switch); how long it stayed off
after a preemption that came late in its burst (past --late-ms of running) or earlier; and what
the CPUs ran while preempted workers waited (beside CPU-bound work of another cgroup: whether the
worker waited for that work, which its scheduler served first).

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh [KEY=VALUE...]
    python3 bench/preempt-trace.py LOG [--late-ms 2.5]

Compared between schedulers on the same workload (sched=eevdf in a second boot), it says whether
a tail comes from waiting to start or from being preempted, and whether preemptions are many and
short (EEVDF's base slice) or few and long (a competitor's whole burst).
"""
import argparse
import collections

from sched_trace import read_log, roles, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--late-ms", type=float, default=2.5,
                    help="a preemption after this much running counts as late in the burst")
    args = ap.parse_args()
    late_s = args.late_ms / 1e3
    events, threads = read_log(args.log)
    role = roles(threads)
    workers = {pid: cg for cg, pids in threads.items() for pid in pids[1:-1]}

    # Per worker wake-up in progress: woken, first run, on-CPU since, CPU time so far, off since,
    # CPU time at the last preemption, preempted time so far.
    live = {}
    wait, off, total = (collections.defaultdict(list) for _ in range(3))
    ran_first, off_late, off_early = (collections.defaultdict(list) for _ in range(3))
    takers = collections.Counter()
    # What each CPU runs since when (pid, what it is), and the CPU time given to each while a
    # preempted worker of a cgroup waited: {(cgroup, what ran): seconds}.
    member = {pid: cg for cg, pids in threads.items() for pid in pids}
    on_cpu, gave = {}, collections.Counter()
    for t, cpu, name, f, _line in events:
        if name == "sched_waking":
            pid = int(f.get("pid", 0))
            if pid in workers and pid not in live:
                live[pid] = dict(woken=t, run=None, on=None, ran=0.0, off=None, ran_at_off=0.0,
                                 lost=0.0, preempted=False)
        elif name == "sched_switch":
            prev, nxt = int(f.get("prev_pid", 0)), int(f.get("next_pid", 0))
            if cpu in on_cpu:
                pid, what, since = on_cpu[cpu]
                for wpid, w in live.items():
                    if w["off"] is not None and wpid != pid:
                        gave[(workers[wpid], what)] += t - max(since, w["off"])
            ncomm = f.get("next_comm", "?")
            on_cpu[cpu] = (nxt, member.get(nxt) or ("idle" if nxt == 0 else "other: " + ncomm.split("/")[0]), t)
            if prev in live and live[prev]["on"] is not None:
                w = live[prev]
                w["ran"] += t - w["on"]
                w["on"] = None
                cg = workers[prev]
                if f.get("prev_state", "") in ("R", "R+"):
                    if not w["preempted"]:
                        ran_first[cg].append(w["ran"] * 1e3)
                        takers[(cg, role.get(nxt, "other: " + f.get("next_comm", "?")))] += 1
                    w["preempted"] = True
                    w["off"], w["ran_at_off"] = t, w["ran"]
                else:  # the burst ended: it sleeps
                    waited = w["run"] - w["woken"]
                    wait[cg].append(waited * 1e3)
                    off[cg].append(w["lost"] * 1e3)
                    total[cg].append((waited + w["lost"]) * 1e3)
                    del live[prev]
            if nxt in live:
                w = live[nxt]
                if w["run"] is None:
                    w["run"] = t
                elif w["off"] is not None:
                    # The other CPUs' runs still open: their part of the wait ends here.
                    for c, (pid, what, since) in on_cpu.items():
                        if c != cpu and pid != nxt:
                            gave[(workers[nxt], what)] += t - max(since, w["off"])
                    gone = t - w["off"]
                    w["lost"] += gone
                    (off_late if w["ran_at_off"] > late_s else off_early)[workers[nxt]].append(gone * 1e3)
                    w["off"] = None
                w["on"] = t
    for cg in sorted(wait):
        n = sum(1 for x in off[cg] if x > 0)
        print(f"{cg}: {len(wait[cg])} wake-ups, {n} preempted")
        print(f"  wait to first run      {summary(wait[cg])}")
        print(f"  off after preemptions  {summary(off[cg])}")
        print(f"  sum                    {summary(total[cg])}")
        if ran_first[cg]:
            print(f"  ran before the first preemption {summary(ran_first[cg])}")
        if off_late[cg]:
            print(f"  off after one past {args.late_ms} ms of running {summary(off_late[cg])}")
        if off_early[cg]:
            print(f"  off after an earlier one  {summary(off_early[cg])}")
    print("who took a worker's CPU at its first preemption (its cgroup, the next task: count):")
    for (cg, taker), n in takers.most_common(12):
        print(f"  {cg:8s} {taker:24s} {n}")
    print("what the CPUs ran while a cgroup's preempted workers waited (ms of CPU, summed over the workers waiting):")
    for cg in sorted({c for c, _ in gave}):
        top = sorted(((what, v) for (c, what), v in gave.items() if c == cg), key=lambda x: -x[1])[:6]
        print(f"  {cg:8s} " + ", ".join(f"{what} {v * 1e3:.0f}" for what, v in top))


if __name__ == "__main__":
    main()
