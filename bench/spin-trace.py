#!/usr/bin/env python3
"""Reads the console log of bench/guest/spin-sched-trace.sh: for each probe worker wake-up, the time
it spent off a CPU between its wake-up and the end of its spin (waiting to start, and preempted
after), and counts per cgroup those longer than --over-ms. With --show N, prints the first N such
wake-ups of --cgroup with every context switch on either CPU meanwhile.

    vm/run.sh --log LOG bench/guest/spin-sched-trace.sh
    python3 bench/spin-trace.py LOG [--over-ms 2.5] [--show 5 --cgroup fdl]
"""
import argparse
import collections

from sched_trace import read_log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--over-ms", type=float, default=2.5)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--cgroup", default="fdl")
    a = ap.parse_args()
    events, threads = read_log(a.log)
    # The probe's threads in creation order: main, the two workers, the message thread.
    cgroup_of = {p: c for c, pids in threads.items() for p in pids}
    workers = {p for pids in threads.values() for p in pids[1:-1]}
    open_, done = {}, []
    idle_since, idle = {}, collections.defaultdict(list)  # per CPU: [(from, to)] idle intervals
    for ts, cpu, name, f, _ in events:
        if name == "sched_waking" and int(f["pid"]) in workers:
            open_[int(f["pid"])] = {"wake": ts, "off": 0.0, "left": ts, "target": None, "ran_on": None}
        elif name == "sched_wakeup" and int(f["pid"]) in open_:
            open_[int(f["pid"])]["target"] = int(f["target_cpu"])
        elif name == "sched_switch":
            nxt, prev = int(f["next_pid"]), int(f["prev_pid"])
            if nxt == 0:
                idle_since[cpu] = ts
            elif prev == 0 and cpu in idle_since:
                idle[cpu].append((idle_since.pop(cpu), ts))
            if nxt in open_:
                if open_[nxt]["ran_on"] is None:
                    open_[nxt].update(ran_on=cpu, start=ts)
                open_[nxt]["off"] += ts - open_[nxt]["left"]
            if prev in open_:
                open_[prev]["left"] = ts
                if f["prev_state"] not in ("R", "R+"):
                    w = open_.pop(prev)
                    w.update(pid=prev, end=ts)
                    done.append(w)
    total, over = collections.Counter(), collections.Counter()
    for w in done:
        total[cgroup_of[w["pid"]]] += 1
        over[cgroup_of[w["pid"]]] += w["off"] * 1e3 > a.over_ms
    def idle_beside(w):
        """The longest time another CPU spent idle while w waited to start."""
        lo, hi, best = w["wake"], w.get("start", w["end"]), 0.0
        for cpu, spans in idle.items():
            if cpu == w["ran_on"]:
                continue
            for f, t in spans:
                best = max(best, min(t, hi) - max(f, lo))
        return best

    beside = collections.Counter()
    for w in done:
        w["beside"] = idle_beside(w)
        if w["off"] * 1e3 > a.over_ms and w["beside"] * 1e3 > 1.0:
            beside[cgroup_of[w["pid"]]] += 1
    def pct(offs, q):
        """The q-th percentile (nearest rank) of the times off a CPU, in ms."""
        if not offs:
            return float("nan")
        offs = sorted(offs)
        return offs[min(len(offs) - 1, int(q / 100 * len(offs)))] * 1e3

    for c in threads:
        offs = [w["off"] for w in done if cgroup_of[w["pid"]] == c]
        print(f"{c}: {over[c]} of {total[c]} wake-ups off a CPU longer than {a.over_ms} ms, "
              f"{beside[c]} of them with another CPU idle over 1 ms before it started; "
              f"off a CPU p50 {pct(offs, 50):.2f} ms, p99 {pct(offs, 99):.2f} ms")
    shown = 0
    for w in done:
        if shown >= a.show or cgroup_of[w["pid"]] != a.cgroup or w["off"] * 1e3 <= a.over_ms:
            continue
        shown += 1
        print(f"\n{a.cgroup} worker {w['pid']} woke at {w['wake']:.6f}, off a CPU {w['off'] * 1e3:.2f} ms, "
              f"spin ended +{(w['end'] - w['wake']) * 1e3:.2f} ms; woken onto CPU {w['target']}, "
              f"started on CPU {w['ran_on']}, another CPU idle {w['beside'] * 1e3:.2f} ms meanwhile")
        for ts, cpu, name, f, _ in events:
            if w["wake"] - 0.0005 <= ts <= w["end"] and name == "sched_switch":
                prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
                print(f"  {ts:.6f} cpu{cpu}: {prev} ({cgroup_of.get(prev, f['prev_comm'])}, {f['prev_state']}) -> "
                      f"{nxt} ({cgroup_of.get(nxt, f['next_comm'])})")


if __name__ == "__main__":
    main()
