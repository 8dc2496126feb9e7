"""bench/run.sh: measure each scheduler in turn on one boot and one workload, report the comparison."""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

from . import plan, report, runner, scenario
from .runner import ALL_SCHEDULERS, CACHE, ROOT, fmt_secs, log

SCENARIO_DIR = os.path.join(ROOT, "bench", "scenarios")
# Boots of one run that may be lost to the emulator's int3 fault before the run gives up.
MAX_RESTARTS = 3


def scenario_path(arg):
    if os.sep in arg or arg.endswith(".toml"):
        return arg
    path = os.path.join(SCENARIO_DIR, arg + ".toml")
    if not os.path.exists(path):
        have = sorted(f[:-5] for f in os.listdir(SCENARIO_DIR) if f.endswith(".toml"))
        raise scenario.ScenarioError(f"no scenario {arg!r} in bench/scenarios/ (have: {', '.join(have)}; "
                                     "or give the path of a .toml file)")
    return path


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/run.sh",
        description="Run a benchmark scenario under EEVDF, scx_fdl and the published sched_ext schedulers "
                    "(each in turn, same boot, same workload) and report the comparison.",
        epilog=f"Scenarios: {', '.join(sorted(f[:-5] for f in os.listdir(SCENARIO_DIR) if f.endswith('.toml')))}")
    ap.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                    help="a name from bench/scenarios/ or the path of a scenario file")
    ap.add_argument("--schedulers", default=",".join(ALL_SCHEDULERS),
                    help="comma-separated, in the order run (default: %(default)s); scx_fdl+NAME: scx_fdl "
                         "with the options of --fdl-variant NAME and/or the binary of --fdl-build NAME, in the "
                         "same boot")
    ap.add_argument("--fdl-variant", action="append", default=[], metavar="NAME=OPTIONS",
                    help="scx_fdl+NAME in --schedulers runs scx_fdl with these options added, e.g. "
                         "nofp='--fair-preempt-us 0' (repeatable)")
    ap.add_argument("--fdl-build", action="append", default=[], metavar="NAME=PATH",
                    help="scx_fdl+NAME in --schedulers runs the scx_fdl binary at PATH (another build, e.g. an "
                         "older commit's) instead of this tree's, so two builds meet the same workload in one "
                         "boot; with --fdl-variant NAME also its options (repeatable)")
    ap.add_argument("--fdl-options", default="", metavar="OPTIONS",
                    help="options added to every scx_fdl run (scx_fdl and each scx_fdl+NAME), e.g. "
                         "'--fair-protection floor'")
    ap.add_argument("--repeat", type=int, help="measurements per scheduler and variant (default: the scenario's)")
    ap.add_argument("--duration", type=int, metavar="SECS", help="measured seconds per measurement "
                    "(default: the scenario's)")
    ap.add_argument("--runner", choices=["auto", "vm", "host"], default="auto",
                    help="vm: QEMU with the rig's kernel; host: this machine's kernel (needs sched_ext and root); "
                         "auto: host if it has sched_ext, else vm")
    ap.add_argument("--probe", default="fdl-probe", metavar="PATH",
                    help="the latency workload: fdl-probe (default) or the path of a schbench binary")
    ap.add_argument("--out", metavar="DIR", help="results directory (default .cache/bench/results/SCENARIO-TIME)")
    ap.add_argument("--stall-watch", action="store_true",
                    help="run the stall watch (cyclictest at real-time priority on every CPU, 10 ms timer) beside "
                         "each measurement and report its worst wake-up; off by default: its 100 preemptions per "
                         "CPU and second are part of the workload then, and cost scx_fdl more than EEVDF "
                         "(docs/benchmarks.md, 2026-12-05)")
    ap.add_argument("--check", action="store_true", help="only check the scenario files")
    ap.add_argument("--report-only", metavar="DIR", help="rebuild the report of an earlier run from DIR/raw.jsonl")
    a = ap.parse_args(argv)
    if not a.scenarios and not a.report_only:
        ap.error("name at least one scenario (or --report-only DIR)")
    a.schedulers = [s.strip() for s in a.schedulers.split(",") if s.strip()]
    if a.fdl_options and not runner.guest_words(a.fdl_options):
        ap.error(f"--fdl-options {a.fdl_options!r}: words of letters, digits and _=.,:/+- "
                 "(the guest splits them on spaces; no quotes or shell characters)")
    a.fdl_options = a.fdl_options.strip()
    a.fdl_variants = runner.parse_fdl_variants(a.fdl_variant, ap.error)
    a.fdl_builds = {}
    for v in a.fdl_build:
        name, eq, path = v.partition("=")
        if not eq or not re.fullmatch(r"[a-z0-9_-]+", name) or not path:
            ap.error(f"--fdl-build {v!r}: want NAME=PATH, NAME of a-z, 0-9, _ and -")
        if name in a.fdl_builds:
            ap.error(f"--fdl-build: {name} defined twice")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            ap.error(f"--fdl-build {v!r}: {path} is not an executable file")
        a.fdl_builds[name] = os.path.abspath(path)
    for s in a.schedulers:
        base, variant = runner.split_scheduler(s)
        if base not in ALL_SCHEDULERS:
            ap.error(f"--schedulers: unknown scheduler {s!r} (known: {', '.join(ALL_SCHEDULERS)}, scx_fdl+NAME)")
        if "+" in s and (base != "scx_fdl" or (variant not in a.fdl_variants and variant not in a.fdl_builds)):
            defined = sorted(set(a.fdl_variants) | set(a.fdl_builds))
            ap.error(f"--schedulers: {s!r}: a variant is scx_fdl+NAME with --fdl-variant NAME=OPTIONS or "
                     f"--fdl-build NAME=PATH (defined: {', '.join(defined) or 'none'})")
    if len(set(a.schedulers)) != len(a.schedulers):
        ap.error("--schedulers: a scheduler named twice")
    if a.repeat is not None and a.repeat < 1:
        ap.error("--repeat wants 1 or more")
    if a.duration is not None and a.duration < 1:
        ap.error("--duration wants 1 or more seconds")
    return a


def machine(runner_kind, sc, info):
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:
            return ""
    cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1")
    m = {"host_cpu": cpu, "host_cpus": os.cpu_count(), "host_kernel": platform.release(),
         "host_mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
         "runner": runner_kind, "guest_kernel": info.get("kernel"), "guest_cpus": info.get("cpus")}
    if runner_kind == "vm":
        m["qemu"] = sh("qemu-system-x86_64 --version | head -1")
        m["runner_desc"] = (f"QEMU TCG VM, {sc.vcpus} vCPUs, kernel {info.get('kernel', '?')}, on {cpu} "
                            f"({os.cpu_count()} host CPUs)")
    else:
        m["runner_desc"] = f"host, kernel {platform.release()}, {cpu} ({os.cpu_count()} CPUs)"
    return m


def finish(sc, scheds, statuses, records, sched_events, meta, out_dir):
    agg = report.aggregate(sc, scheds, statuses, records)
    meta["sched_events"] = sched_events
    txt = report.text(agg, meta)
    with open(os.path.join(out_dir, "report.txt"), "w") as f:
        f.write(txt)
    report.write_json(agg, meta, os.path.join(out_dir, "results.json"))
    report.write_csv(agg, os.path.join(out_dir, "results.csv"))
    pngs = report.plots(agg, out_dir)
    print(txt)
    log(f"results in {out_dir}: report.txt results.json results.csv raw.jsonl console.log "
        + (" ".join(os.path.basename(p) for p in pngs) if isinstance(pngs, list) else f"({pngs})"))


def stage_build(name, path, staging):
    """A copy of another build's binary named scx_fdl-NAME: the guest installs binaries by their
    names, and this tree's scx_fdl has the name scx_fdl."""
    dst = os.path.join(staging, f"scx_fdl-{name}")
    shutil.copy2(path, dst)
    return dst


def run_one(a, sc, runner_kind):
    staging = tempfile.mkdtemp(prefix="fdl-builds-")
    try:
        return run_scenario(a, sc, runner_kind, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def run_scenario(a, sc, runner_kind, staging):
    repeat = a.repeat or sc.repeat
    duration = a.duration or sc.duration_s
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = a.out if a.out and len(a.scenarios) == 1 else os.path.join(
        a.out or os.path.join(CACHE, "bench", "results"), f"{sc.name}-{stamp}")
    out_dir = os.path.abspath(out_dir)  # vm/run.sh runs from the repository root
    os.makedirs(out_dir, exist_ok=True)

    statuses, bins, cmds, binaries = {}, [], {}, {}
    for s in a.schedulers:
        b, st = runner.resolve_scheduler(s, a.fdl_builds)
        statuses[s] = st
        if st != "ok":
            log(f"{s}: {st}: its row will say so")
        elif b:
            binaries[s] = binary_id(b)
            # fdl_params = "set": the guest sets them with `scx_fdl set` once scx_fdl is enabled.
            base, variant = runner.split_scheduler(s)
            with_config = base == "scx_fdl" and sc.fdl_params == "config" and sc.fdl_config()
            # Another build runs under a name of its own (binaries are installed by name); the guest
            # runs its set and dump with the same binary (fdl_cli in the plan).
            prog = base
            if variant in a.fdl_builds:
                b = stage_build(variant, b, staging)
                prog = os.path.basename(b)
            if b not in bins:
                bins.append(b)
            cmds[s] = prog + (" --config fdl.toml" if with_config else "") + \
                (" " + a.fdl_options if base == "scx_fdl" and a.fdl_options else "") + \
                (" " + a.fdl_variants[variant] if variant in a.fdl_variants else "")
    run_scheds = [s for s in a.schedulers if statuses[s] == "ok"]
    probe = "fdl-probe"
    if a.probe != "fdl-probe":
        if not os.access(a.probe, os.X_OK):
            sys.exit(f"bench: --probe {a.probe}: not an executable (want the path of a schbench binary)")
        if os.path.basename(a.probe) != "schbench":
            sys.exit(f"bench: --probe {a.probe}: the binary must be named schbench (it is called by that name)")
        bins.append(os.path.abspath(a.probe))
        probe = "schbench"
        jittered = [w.name for w in sc.workloads if w.kind == "probe" and w.jitter_us]
        if jittered:
            sys.exit(f"bench: --probe schbench: workload(s) {', '.join(jittered)} set jitter, which only "
                     "fdl-probe has (schbench sleeps a fixed time)")

    steps = repeat * len(run_scheds) * len(sc.variants)
    step_s = sc.settle_s + sc.warmup_s + duration + 3
    log(f"scenario {sc.name}: {len(run_scheds)} scheduler(s) x {len(sc.variants)} variant(s) x {repeat} repeat(s) "
        f"of {duration} s = {steps} measurements, about {fmt_secs(steps * step_s)} plus boot and scheduler "
        f"loading; results -> {out_dir}")

    records, sched_events, rigs = [], [], []
    raw = open(os.path.join(out_dir, "raw.jsonl"), "a")

    def on_record(kind, obj):
        if kind == "FDL-BENCH-RIG":
            obj = {"boot": boot, **obj}
        raw.write(json.dumps({"kind": kind, **obj}) + "\n")
        raw.flush()
        {"FDL-BENCH": records, "FDL-BENCH-RIG": rigs}.get(kind, sched_events).append(obj)
        if kind == "FDL-BENCH" and obj.get("error"):
            log(f"{obj['sched']} {obj['variant']} repeat {obj['repeat']}: {obj['error'][:200]}")

    t0 = time.monotonic()
    restarts, boot = [], 1
    rc, info = 0, {"complete": True}
    while steps:
        done = measured_pairs(records, sched_events, sc.variants)
        # Results of a scheduler and repeat cut short by a lost guest are measured again whole.
        records[:] = [r for r in records if (r["sched"], r["repeat"]) in done]
        sched_events[:] = [e for e in sched_events if (e["sched"], e["repeat"]) in done]
        plan_text = plan.write(sc, run_scheds, cmds, probe, duration, repeat, skip=done, stall_watch=a.stall_watch)
        with open(os.path.join(out_dir, "plan.sh" if boot == 1 else f"plan-{boot}.sh"), "w") as f:
            f.write(plan_text)
        left = steps - len(done) * len(sc.variants)
        # Generous: TCG is slow and some schedulers take a minute to load under it.
        timeout = 420 + int(left * step_s * 2) + repeat * len(run_scheds) * min(sc.start_timeout_s, 150)
        console = "console.log" if boot == 1 else f"console-{boot}.log"
        rc, info = runner.run(sc, plan_text, sc.fdl_config(), bins, runner_kind, out_dir, on_record,
                              runner.Progress(left, step_s), timeout, console)
        if info.get("complete") or info.get("interrupted") or runner_kind != "vm":
            break
        crash = runner.kernel_crash(info["console_log"])
        if rc == 125 and runner.emulator_fault(info["console_log"]) and len(restarts) < MAX_RESTARTS:
            restarts.append(f"boot {boot} lost to the emulator's int3 text-patching fault ({crash}); "
                            f"{console} kept; the rest ran on boot {boot + 1}")
            log(f"the guest kernel hit the TCG int3 text-patching fault: booting again to measure what is left "
                f"({len(restarts)}/{MAX_RESTARTS})")
            boot += 1
            continue
        if crash:
            info["crash"] = crash
        break
    raw.close()
    elapsed = time.monotonic() - t0
    meta = dict(machine(runner_kind, sc, info), scenario_file=sc.path, schedulers=a.schedulers, repeat=repeat,
                duration_s=duration, probe=probe, statuses=statuses, started=stamp, elapsed_s=round(elapsed),
                complete=bool(info.get("complete")), exit_status=rc, garbled_lines=info.get("garbled", 0),
                boots=boot, restarts=restarts, rig=rigs, crash=info.get("crash"), binaries=binaries,
                fdl_variants=a.fdl_variants, fdl_builds=a.fdl_builds, fdl_options=a.fdl_options, stall_watch=a.stall_watch,
                command="bench/run.sh " + " ".join(sys.argv[1:]))
    if not info.get("complete"):
        log(f"the run did not finish (exit {rc}{'; guest kernel: ' + info['crash'] if info.get('crash') else ''}): "
            f"the report holds what was gathered; console: {info.get('console_log')}")
    finish(sc, a.schedulers, statuses, records, sched_events, meta, out_dir)
    log(f"scenario {sc.name} took {fmt_secs(elapsed)}")
    return 0 if info.get("complete") else 1


def binary_id(path):
    """Which build of a scheduler ran: its path, modification time and the start of its sha256 (a
    binary can be rebuilt between two runs, or two cells of a matrix)."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    st = os.stat(path)
    return {"path": path, "sha256": h.hexdigest()[:16],
            "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(st.st_mtime)) + " UTC",
            "version": binary_version(path)}


def binary_version(path):
    """What `PATH --version` says (scx_fdl: the commit it was built from, `-dirty` with changes not
    committed), or None: which source a binary was built from, which its sha256 cannot say."""
    import subprocess
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    line = out.stdout.strip().splitlines()[:1]
    return line[0] if out.returncode == 0 and line else None


def measured_pairs(records, sched_events, variants):
    """(scheduler, repeat) pairs measured to the end: every variant recorded and, for a sched_ext
    scheduler, stopped cleanly afterwards."""
    stopped = {(e["sched"], e["repeat"]) for e in sched_events}
    pairs = {(r["sched"], r["repeat"]) for r in records}
    return {p for p in pairs
            if all(any((r["sched"], r["repeat"], r["variant"]) == (*p, v) for r in records) for v in variants)
            and (p[0] == "eevdf" or p in stopped)}


def report_only(a):
    d = a.report_only
    with open(os.path.join(d, "results.json")) as f:
        old = json.load(f)
    meta = old["meta"]
    sc = scenario.load(meta["scenario_file"])
    records, events, rigs = report.read_raw(d)
    meta["rig"] = rigs
    finish(sc, meta["schedulers"], meta.get("statuses", {}), records, events, meta, d)
    return 0


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.report_only:
        return report_only(a)
    # Every scenario is checked before anything runs: a typo should not cost an hour.
    try:
        scs = [scenario.load(scenario_path(s)) for s in a.scenarios]
    except scenario.ScenarioError as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 2
    if a.check:
        for sc in scs:
            print(f"{sc.path}: ok ({len(sc.cgroups)} cgroups, {len(sc.workloads)} workloads, "
                  f"variants {', '.join(sc.variants)})")
        return 0
    kind = a.runner
    if kind == "auto":
        kind = "host" if runner.host_has_sched_ext() and os.geteuid() == 0 else "vm"
    if kind == "host" and not runner.host_has_sched_ext():
        print("bench: error: --runner host: this kernel has no sched_ext (/sys/kernel/sched_ext missing); "
              "use --runner vm", file=sys.stderr)
        return 2
    if kind == "host" and os.geteuid() != 0:
        print("bench: error: --runner host needs root (it loads schedulers and makes cgroups)", file=sys.stderr)
        return 2
    rc = 0
    for sc in scs:
        rc |= run_one(a, sc, kind)
    return rc


if __name__ == "__main__":
    sys.exit(main())
