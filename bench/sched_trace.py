"""The console log of bench/guest/spin-sched-trace.sh, read once for the trace readers
(bench/spin-trace.py, bench/idle-trace.py): the kernel's trace events (TR lines) and the probes'
threads (THREADS lines)."""
import re

EVENT = re.compile(r"\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)")


def fields(rest):
    """An event's key=value fields."""
    return dict(re.findall(r"(\w+)=(\S+)", rest))


def read_log(path):
    """(events, threads): events as (time s, cpu, name, fields, the event's line), in the log's
    order; threads as {probe cgroup: [pid...]}, each probe's threads in creation order (main, the
    workers, the message thread)."""
    events, threads = [], {}
    for line in open(path, errors="replace"):
        if line.startswith("THREADS "):
            name, *pids = line.split()[1:]
            threads[name] = [int(p) for p in pids]
        elif line.startswith("TR ") and (m := EVENT.search(line)):
            events.append((float(m.group(2)), int(m.group(1)), m.group(3), fields(m.group(4)),
                           line[3:].rstrip()))
    return events, threads


def role(i, n):
    """The role of a probe's i-th thread of n in creation order (THREADS lines): main, its workers
    (as many as spin-sched-trace.sh's workers=), the message thread last."""
    return "main" if i == 0 else "msg" if i == n - 1 and n > 2 else "worker"


def roles(threads):
    """{pid: "cgroup-role"} for the probes' threads, threads as read_log returns them."""
    return {p: f"{c}-{role(i, len(pids))}" for c, pids in threads.items() for i, p in enumerate(pids)}


def pct(v, p):
    """The p-quantile (0..1) of v, a sorted list."""
    return v[min(len(v) - 1, int(len(v) * p))]


def summary(v):
    """Count, p50, p90, p99 and max of v (values in ms)."""
    v = sorted(v)
    return (f"n={len(v):5d} p50={pct(v, .5):.3f} p90={pct(v, .9):.3f} p99={pct(v, .99):.3f} "
            f"max={v[-1]:.3f} ms")
