"""The guest's plan: the scenario turned into shell functions for bench/guest/bench.sh."""

import shlex

from . import scenario


def wake_deadline_us(cg):
    """A deadline cgroup's wake-up deadline in microseconds, as scx_fdl gives it (fdl_dl_wakeup:
    deadline_wakeup where set and shorter than deadline_rr, else deadline_rr); None without one."""
    if cg is None or cg.deadline_rr is None:
        return None
    rr = scenario.duration_ns(cg.deadline_rr)
    wake = scenario.duration_ns(cg.deadline_wakeup) if cg.deadline_wakeup is not None else None
    return (wake if wake and wake < rr else rr) // 1000


def probe_args(w, probe, cg=None):
    """Command-line options of the latency workload: fdl-probe, or schbench's own spelling. cg: the
    workload's cgroup; fdl-probe reports its wake-ups alone and counts those later than the
    cgroup's wake-up deadline, under every scheduler alike."""
    if probe == "schbench":
        if w.jitter_us:
            raise ValueError(f"workload {w.name}: jitter needs fdl-probe (schbench sleeps a fixed time)")
        return f"-m {w.message_threads} -t {w.workers} -s {w.sleep_us} -c {w.spin_us}"
    jitter = f" --sleep-jitter-us {w.jitter_us}" if w.jitter_us else ""
    deadline = wake_deadline_us(cg)
    late = f" --wake-late-after-us {deadline}" if deadline else ""
    return f"-m {w.message_threads} -t {w.workers} --sleep-us {w.sleep_us}{jitter} --spin-us {w.spin_us} --wake{late}"


def affinity(w):
    """The shell words before a workload's start: its allowed CPUs (bench.sh runs it under taskset -c
    $BENCH_CPUS; empty: all CPUs). Set for every workload, so none inherits another's."""
    return f"BENCH_CPUS={shlex.quote(w.cpus)}; "


def write(sc, scheds, sched_cmds, probe, duration_s, repeat, skip=(), stall_watch=False):
    """Text of plan.sh. scheds: the schedulers to run, in order ("eevdf" = no sched_ext scheduler);
    sched_cmds: the command line of each other scheduler; skip: (sched, repeat) pairs measured
    already; stall_watch: the stall watch beside each measurement (bench/run.sh --stall-watch)."""
    q = shlex.quote
    out = [
        f"# Plan for scenario {sc.name} ({sc.path}), written by bench/run.sh.",
        f"BENCH_SCHEDS={q(' '.join(scheds))}",
        f"BENCH_VARIANTS={q(' '.join(sc.variants))}",
        f"BENCH_CGROUPS={q(' '.join(sc.cgroups))}",
        f"BENCH_REPEAT={repeat}",
        f"BENCH_DURATION={duration_s}",
        f"BENCH_WARMUP={sc.warmup_s}",
        f"BENCH_SETTLE={sc.settle_s}",
        f"BENCH_START_TIMEOUT={sc.start_timeout_s}",
        f"BENCH_PROBE={probe}",
        f"BENCH_FDL_PARAMS={sc.fdl_params}",
        # Removed before each scheduler starts and created once it is enabled.
        f"BENCH_LATE_CGROUPS={q(' '.join(c.name for c in sc.fdl_cgroups()) if sc.cgroups_after_start else '')}",
        f"BENCH_RESCAN_WAIT={scenario.RESCAN_WAIT_S}",
        f"BENCH_SKIP={q(' '.join(f'{s}:{r}' for s, r in sorted(skip)))}",
        f"BENCH_STALL_WATCH={int(stall_watch)}",
        "",
        "sched_cmd() {",
        "    case $1 in",
    ]
    for s in scheds:
        if s != "eevdf":
            out.append(f"        {s}) echo {q(sched_cmds[s])} ;;")
    out += ["    esac", "}", ""]

    # The scx_fdl binary whose set and dump talk to the running scx_fdl (another build runs under
    # a name of its own: bench/run.sh --fdl-build).
    out += ["fdl_cli() {", "    case $1 in"]
    for s in scheds:
        if s.split("+")[0] == "scx_fdl":
            out.append(f"        {s}) echo {q(sched_cmds[s].split()[0])} ;;")
    out += ["        *) echo scx_fdl ;;", "    esac", "}", ""]

    # scx_fdl reads the FDL parameters; every other scheduler gets the stand-in weight.
    out += ["set_weights() {", '    if is_fdl "$1"; then']
    out += [f"        bench_weight {c.name} {c.cpu_weight}" for c in sc.cgroups.values()]
    out += ["    else"]
    out += [f"        bench_weight {c.name} {c.weight_without_fdl}" for c in sc.cgroups.values()]
    out += ["    fi", "}", ""]

    # fdl_params = "set": scx_fdl starts without --config and gets them here once enabled.
    out += ["fdl_set_params() {", "    :"]
    if sc.fdl_params == "set":
        out += [f"    bench_fdl_set {q(name)} {' '.join(q(a) for a in kv)}" for name, kv in sc.fdl_set_args()]
    out += ["}", ""]

    for v in sc.variants:
        load = [w for w in sc.workloads_in(v) if w.kind != "probe"]
        probes = [w for w in sc.workloads_in(v) if w.kind == "probe"]
        out.append(f"load_{v}() {{")
        out.append("    :")
        for w in load:
            if w.kind == "hackbench":
                out.append(f"    {affinity(w)}bench_hackbench {w.cgroup} {w.name} {w.args}")
            elif w.kind == "stress-ng":
                out.append(f"    {affinity(w)}bench_stress {w.cgroup} {w.name} {w.args}")
            else:
                out.append(f"    {affinity(w)}bench_hogs {w.cgroup} {w.count}")
        out += ["    BENCH_CPUS=", "}", f"probes_{v}() {{", "    :"]
        for w in probes:
            out.append(f"    {affinity(w)}bench_probe {w.cgroup} {w.name} "
                       f"{probe_args(w, probe, sc.cgroups.get(w.cgroup))}")
        out += ["    BENCH_CPUS=", "}", ""]
    return "\n".join(out) + "\n"
