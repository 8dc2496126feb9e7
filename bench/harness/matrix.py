"""bench/matrix.sh: the benchmark matrix of a spec file (bench/matrix/issue10.toml). Each cell of the
spec becomes one scenario file (one VM boot, its loads as variants), run by bench/run.sh; the
cells' results become one report with a verdict per cell (verdict.py)."""

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib

from . import report, scenario, verdict
from .runner import (ALL_SCHEDULERS, CACHE, ROOT, fmt_secs, guest_words, log, parse_fdl_variants, resolve_scheduler,
                     split_scheduler)
from .scenario import ScenarioError, _duration, _int, _Reader, _unknown, duration_ns

DEFAULT_SPEC = os.path.join(ROOT, "bench", "matrix", "issue10.toml")
TOP_KEYS = {"description", "vcpus", "numa", "duration", "quick_duration", "warmup", "settle", "repeat", "loads",
            "antagonist", "overcommit", "message_threads", "workers", "defaults", "shape", "deadlines", "cell"}
AXES = ("shape", "deadlines", "shares", "path")
# Per cell, the number of tasks (the spec's message_threads and workers unless a cell says
# otherwise): how many wake at once and who wakes whom.
TASK_KEYS = ("message_threads", "workers")
# A cell's `cpus` binds probes to CPUs: { fdl = "1" } runs every thread of the fdl probe under
# taskset -c 1 (a pod given CPUs by the kubelet's static CPU manager, or a service that pins its
# workers); the others run on every CPU. Its name then ends in .cpus-fdl1 (a comma as _).
CELL_KEYS = set(AXES) | set(TASK_KEYS) | {"name", "why", "quick", "loads", "cpus"}
# quiet: the probes alone; antagonist: beside hackbench (wake-ups and short runs, in cgroup
# "antagonist"); overcommit: beside CPU-bound work that never sleeps, more of it than CPUs (busy
# loops, in cgroup "antagonist"): a woken probe finds every CPU busy with work that must be preempted.
LOADS = ("quiet", "antagonist", "overcommit")
DEFAULT_LOADS = ("quiet", "antagonist")
# The cgroup of the work beside the probes, for both loads that have some.
BESIDE_LOADS = ("antagonist", "overcommit")
# How parameters reach scx_fdl: (fdl_params, cgroups_after_start) of the generated scenario.
PATHS = {"config": ("config", False), "set": ("set", False), "after-start": ("config", True)}
DEADLINE_CGROUPS = ("loose", "fdl")
PROBE_CGROUPS = ("cfs",) + DEADLINE_CGROUPS
# For the estimate: a boot, each scheduler's time to load under TCG (as measured: scx_fdl 36-60 s on
# 2026-11-23, scx_lavd 39 s, the others 1-5 s) and the guest's own work around each measurement.
BOOT_S, STEP_EXTRA_S = 40, 5
LOAD_S = {"eevdf": 0, "scx_fdl": 45, "scx_lavd": 40}
# --confirm: a load is measured again where its verdict is FAIL, or where a probe's p99 over EEVDF's
# lies within this fraction of the bound a rule holds it to (0.5 for a deadline cgroup within its
# guarantee, 1.2 for every other probe): one 20 s run puts such a ratio on either side of its
# bound (7 of 48 verdicts differed between two runs of one policy, 2026-12-05 and 2026-12-06).
CONFIRM_BAND = 0.15
CONFIRM_SUFFIX = ".confirm"


class Cell:
    def __init__(self, name, why, quick, shape, deadlines, shares, path, loads, message_threads, workers, cpus=None):
        self.name, self.why, self.quick = name, why, quick
        self.shape, self.deadlines, self.shares, self.path, self.loads = shape, deadlines, shares, path, loads
        self.message_threads, self.workers = message_threads, workers
        self.cpus = cpus or {}      # probe cgroup -> taskset list


class Spec:
    def __init__(self, path):
        self.path = path
        self.cells = []


def load_spec(path):
    """The spec, checked completely: every error names the file, line and key."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        doc = tomllib.loads(text)
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
    r = _Reader(path, text)
    _unknown(r, "", doc, TOP_KEYS)
    sp = Spec(path)
    sp.description = str(doc.get("description", ""))
    sp.vcpus = _int(r, "vcpus", doc.get("vcpus", 2), 1, 1024, key="vcpus")
    # NUMA nodes of every cell's VM (the scenario's numa: vm/run.sh --numa, two LLCs per node).
    sp.numa = _int(r, "numa", doc.get("numa", 1), 1, 64, key="numa")
    for key, default in (("duration", "20s"), ("quick_duration", "8s"), ("warmup", "3s"), ("settle", "2s")):
        _duration(r, key, doc.get(key, default), 0 if key in ("warmup", "settle") else 1_000_000_000,
                  3600_000_000_000, key=key)
        setattr(sp, key, doc.get(key, default))
    sp.repeat = _int(r, "repeat", doc.get("repeat", 1), 1, 100, key="repeat")
    sp.message_threads = _int(r, "message_threads", doc.get("message_threads", 1), 1, 1024, key="message_threads")
    sp.workers = _int(r, "workers", doc.get("workers", 2), 1, 1024, key="workers")
    sp.antagonist = doc.get("antagonist", "-g 2 -f 10 -s 20000 -l 10")
    if not isinstance(sp.antagonist, str) or not scenario.ARGS_RE.match(sp.antagonist):
        r.error("antagonist", f"{sp.antagonist!r}: hackbench's arguments (letters, digits, spaces, . _ = , : + -)",
                key="antagonist")
    sp.overcommit = _int(r, "overcommit", doc.get("overcommit", 2 * sp.vcpus), 1, 4096, key="overcommit")
    sp.loads = _loads(r, doc.get("loads", list(DEFAULT_LOADS)), None, "loads")

    sp.shapes = {}
    for name, s in _tables(r, doc, "shape").items():
        t = f"shape.{name}"
        _unknown(r, f"[{t}] ", s, {"spin", "sleep", "jitter"}, t)
        for k in ("spin", "sleep"):
            if k not in s:
                r.error(f"[{t}] {k}", "missing: a shape needs spin and sleep", t)
            _duration(r, f"[{t}] {k}", s[k], 1_000, 10_000_000_000, t, k)
        jitter = s.get("jitter", "0us")
        if _duration(r, f"[{t}] jitter", jitter, 0, 10_000_000_000, t, "jitter") > \
                duration_ns(s.get("sleep", "0us")):
            r.error(f"[{t}] jitter", f"{jitter} is longer than sleep {s['sleep']}", t, "jitter")
        sp.shapes[name] = (s["spin"], s["sleep"], jitter)
    sp.deadline_sets = {}
    for name, d in _tables(r, doc, "deadlines").items():
        t = f"deadlines.{name}"
        _unknown(r, f"[{t}] ", d, set(DEADLINE_CGROUPS), t)
        for cg in DEADLINE_CGROUPS:
            p = d.get(cg)
            if not isinstance(p, dict) or "deadline_rr" not in p:
                r.error(f"[{t}] {cg}", '{ deadline_rr = "...", deadline_wakeup = "..." } (wake-up optional)', t, cg)
            _unknown(r, f"[{t}] {cg}.", p, {"deadline_rr", "deadline_wakeup"}, t)
        sp.deadline_sets[name] = {cg: dict(d[cg]) for cg in DEADLINE_CGROUPS}

    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        r.error("defaults", "want a table [defaults]", key="defaults")
    _unknown(r, "[defaults] ", defaults, set(AXES), "defaults")
    for k in AXES:
        if k not in defaults:
            r.error(f"[defaults] {k}", f"missing: [defaults] gives every axis ({', '.join(AXES)})", "defaults")
    cells = doc.get("cell")
    if not isinstance(cells, list) or not cells:
        r.error("cell", "missing: the spec needs [[cell]] tables", key="cell")
    names = set()
    for i, c in enumerate(cells):
        where = f"[[cell]] #{i + 1} "
        _unknown(r, where, c, CELL_KEYS, "cell", i)
        v = {k: c.get(k, defaults[k]) for k in AXES}
        if v["shape"] not in sp.shapes:
            r.error(where + "shape", f"{v['shape']!r}: not one of [shape.*] ({', '.join(sp.shapes)})", "cell",
                    "shape", i)
        if v["deadlines"] not in sp.deadline_sets:
            r.error(where + "deadlines", f"{v['deadlines']!r}: not one of [deadlines.*] "
                    f"({', '.join(sp.deadline_sets)})", "cell", "deadlines", i)
        # 0: deadlines without a guarantee (their bandwidth is their share of the machine).
        _int(r, where + "shares", v["shares"], 0, 1 << 20, "cell", "shares", i)
        if v["path"] not in PATHS:
            r.error(where + "path", f"{v['path']!r}: want one of {', '.join(PATHS)}", "cell", "path", i)
        why = c.get("why")
        if not isinstance(why, str) or not why.strip():
            r.error(where + "why", "missing: say why the cell is in the matrix", "cell", "why", i)
        quick = c.get("quick", False)
        if not isinstance(quick, bool):
            r.error(where + "quick", f"{quick!r}: want true or false", "cell", "quick", i)
        # A cell's own count of message threads (".mN" in its name) or workers per message thread (".tN").
        tasks = {k: _int(r, where + k, c.get(k, getattr(sp, k)), 1, 1024, "cell", k, i) for k in TASK_KEYS}
        default_name = f"{v['shape']}.{v['deadlines']}.shares{v['shares']}.{v['path']}"
        if tasks["message_threads"] != sp.message_threads:
            default_name += f".m{tasks['message_threads']}"
        if tasks["workers"] != sp.workers:
            default_name += f".t{tasks['workers']}"
        cpus = c.get("cpus", {})
        if not isinstance(cpus, dict) or ("cpus" in c and not cpus):
            r.error(where + "cpus", f"{cpus!r}: want a table of probes and CPU lists, e.g. {{ fdl = \"1\" }}",
                    "cell", "cpus", i)
        for cg, lst in cpus.items():
            if cg not in PROBE_CGROUPS:
                r.error(where + f"cpus.{cg}", f"not a probe (known: {', '.join(PROBE_CGROUPS)})", "cell", "cpus", i)
            scenario._cpu_list(r, where + f"cpus.{cg}", lst, sp.vcpus, "cell", "cpus", i)
        if cpus:
            default_name += ".cpus-" + "-".join(f"{cg}{cpus[cg].replace(',', '_')}" for cg in PROBE_CGROUPS
                                                 if cg in cpus)
        name = c.get("name", default_name)
        if not isinstance(name, str) or not scenario.NAME_RE.match(name):
            r.error(where + "name", f"{name!r}: letters, digits, _ . -", "cell", "name", i)
        if name in names:
            r.error(where + "name", f"{name!r}: another cell has these axes (give it a distinct name)", "cell",
                    "name" if "name" in c else "shape", i)
        names.add(name)
        loads = _loads(r, c["loads"], i, where + "loads") if "loads" in c else sp.loads
        sp.cells.append(Cell(name, why, quick, v["shape"], v["deadlines"], v["shares"], v["path"], loads,
                             tasks["message_threads"], tasks["workers"], cpus))
    for i, sc in enumerate(generate(sp, False)):
        # A generated scenario that does not pass the scenario checks is the spec's fault.
        try:
            scenario.parse(f"{path} [[cell]] #{i + 1}", tomllib.loads(sc[1]), sc[1])
        except ScenarioError as e:
            raise ScenarioError(f"{path}: cell {sp.cells[i].name}: {e}") from None
    return sp


def _tables(r, doc, key):
    t = doc.get(key)
    if not isinstance(t, dict) or not t or not all(isinstance(v, dict) for v in t.values()):
        r.error(key, f"missing: want tables [{key}.NAME]", key=key)
    for name in t:
        if not scenario.NAME_RE.match(name):
            r.error(f"[{key}.{name}]", "a name is letters, digits, _ . -", f"{key}.{name}")
    return t


def _loads(r, loads, index, where):
    if not isinstance(loads, list) or not loads or not all(x in LOADS for x in loads) or len(set(loads)) != len(loads):
        r.error(where, f"{loads!r}: want a list of distinct loads from {', '.join(LOADS)}",
                "cell" if index is not None else None, "loads", index)
    return loads


def scenario_text(sp, cell, quick, repeat=None):
    """The scenario file of one cell (repeat: the spec's unless given)."""
    spin, sleep, jitter = sp.shapes[cell.shape]
    dls = sp.deadline_sets[cell.deadlines]
    fdl_params, late = PATHS[cell.path]
    out = [f"# Generated by bench/matrix.sh from {os.path.relpath(sp.path, ROOT)}: cell {cell.name}.",
           f"# Why: {cell.why}",
           f'description = "matrix cell {cell.name}: shape {cell.shape}, deadlines {cell.deadlines}, '
           f'shares {cell.shares}, parameters by {cell.path}, {cell.message_threads} message thread(s) x '
           f'{cell.workers} worker(s) per probe'
           + "".join(f", {cg} bound to CPUs {cell.cpus[cg]}" for cg in PROBE_CGROUPS if cg in cell.cpus) + '"',
           f"vcpus = {sp.vcpus}", f"numa = {sp.numa}",
           f'duration = "{sp.quick_duration if quick else sp.duration}"',
           f'warmup = "{sp.warmup}"', f'settle = "{sp.settle}"', f"repeat = {repeat or sp.repeat}",
           "variants = [" + ", ".join(f'"{v}"' for v in cell.loads) + "]",
           f'fdl_params = "{fdl_params}"', f"cgroups_after_start = {'true' if late else 'false'}", ""]
    cgroups = (["antagonist"] if any(x in cell.loads for x in BESIDE_LOADS) else []) + list(PROBE_CGROUPS)
    for cg in cgroups:
        out.append(f"[cgroup.{cg}]")
        out.append("cpu_weight = 100")
        if cg in DEADLINE_CGROUPS:
            for k in ("deadline_rr", "deadline_wakeup"):
                if k in dls[cg]:
                    out.append(f'{k} = "{dls[cg][k]}"')
            if cell.shares > 0:
                out.append(f"guaranteed_shares = {cell.shares}")
            out.append("weight_without_fdl = 100   # no stand-in boost under EEVDF and the peers")
        out.append("")
    if "antagonist" in cell.loads:
        out += ["[[workload]]", 'kind = "hackbench"', 'cgroup = "antagonist"', f'args = "{sp.antagonist}"',
                'variants = ["antagonist"]', ""]
    if "overcommit" in cell.loads:
        out += ["[[workload]]", 'kind = "hogs"', 'cgroup = "antagonist"', f"count = {sp.overcommit}",
                'variants = ["overcommit"]', ""]
    for cg in PROBE_CGROUPS:
        out += ["[[workload]]", 'kind = "probe"', f'cgroup = "{cg}"', f"message_threads = {cell.message_threads}",
                f"workers = {cell.workers}", f'sleep = "{sleep}"', f'jitter = "{jitter}"', f'spin = "{spin}"']
        out += ([f'cpus = "{cell.cpus[cg]}"'] if cg in cell.cpus else []) + [""]
    return "\n".join(out)


def generate(sp, quick):
    """[(cell, scenario text)] of the cells to run."""
    return [(c, scenario_text(sp, c, quick)) for c in sp.cells if c.quick or not quick]


def estimate_s(sp, cells, scheds, quick):
    d = scenario.duration_ns(sp.quick_duration if quick else sp.duration) / 1e9
    step = d + scenario.duration_ns(sp.warmup) / 1e9 + scenario.duration_ns(sp.settle) / 1e9 + STEP_EXTRA_S
    return sum(BOOT_S + sum(LOAD_S.get(split_scheduler(s)[0], 5) + len(c.loads) * step * sp.repeat for s in scheds) for c in cells)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/matrix.sh",
        description="Run the benchmark matrix of a spec (one VM boot per cell, each cell's loads as variants) "
                    "and write one report with a PASS/FAIL/n.a. verdict per cell.")
    ap.add_argument("--spec", default=DEFAULT_SPEC, help="the matrix spec (default: bench/matrix/issue10.toml)")
    ap.add_argument("--quick", action="store_true", help="only the cells marked quick, with quick_duration")
    ap.add_argument("--schedulers", default="eevdf,scx_fdl",
                    help=f"comma-separated, in the order run; eevdf and scx_fdl are needed for the verdicts "
                         f"(default: %(default)s; all: {','.join(ALL_SCHEDULERS)})")
    ap.add_argument("--fdl-options", default="", metavar="OPTIONS",
                    help="options added to scx_fdl in every cell (bench/run.sh --fdl-options), e.g. "
                         "'--fair-protection floor'; the verdicts are then theirs")
    ap.add_argument("--fdl-variant", action="append", default=[], metavar="NAME=OPTIONS",
                    help="also scx_fdl with these options, as scheduler scx_fdl+NAME beside plain scx_fdl in the "
                         "same boot of every cell (bench/run.sh --fdl-variant), with verdicts of its own "
                         "(repeatable)")
    ap.add_argument("--cells", help="comma-separated cell names: only these (see --check for the names)")
    ap.add_argument("--out", metavar="DIR", help="results directory (default .cache/bench/results/matrix-TIME); "
                    "cells already complete in it are not run again")
    ap.add_argument("--lock", metavar="FILE", help="hold flock(1) on FILE around each VM boot, so that other VM "
                    "users of this host wait their turn between cells")
    ap.add_argument("--stall-watch", action="store_true",
                    help="the stall watch beside every measurement (bench/run.sh --stall-watch; off by default: "
                         "it changes the workload)")
    ap.add_argument("--confirm", type=int, default=0, metavar="N",
                    help="after a cell, measure again, N repeats in a second boot, each load whose verdict is "
                         f"FAIL or whose p99 over EEVDF's is within {CONFIRM_BAND:.0%}% of a rule's bound; "
                         "that load is then judged on the medians over all its repeats (default 0: never)")
    ap.add_argument("--check", action="store_true", help="only check the spec and list the cells")
    ap.add_argument("--report-only", metavar="DIR", help="rebuild the report of an earlier run in DIR")
    a = ap.parse_args(argv)
    if not 0 <= a.confirm <= 10:
        ap.error(f"--confirm {a.confirm}: 0 (never) to 10 repeats")
    a.fdl_options = a.fdl_options.strip()
    if a.fdl_options and not guest_words(a.fdl_options):
        ap.error(f"--fdl-options {a.fdl_options!r}: words of letters, digits and _=.,:/+- (no quotes)")
    a.schedulers = [s.strip() for s in a.schedulers.split(",") if s.strip()]
    a.fdl_variants = parse_fdl_variants(a.fdl_variant, ap.error)
    for s in a.schedulers:
        base, variant = split_scheduler(s)
        if base not in ALL_SCHEDULERS or (variant and (base != "scx_fdl" or variant not in a.fdl_variants)):
            ap.error(f"--schedulers: unknown scheduler {s!r} (known: {', '.join(ALL_SCHEDULERS)}; "
                     f"scx_fdl+NAME with --fdl-variant NAME=OPTIONS)")
    if len(set(a.schedulers)) != len(a.schedulers):
        ap.error("--schedulers: a scheduler named twice")
    # Each variant not named in --schedulers runs right after the scx_fdl runs named before it.
    for name in a.fdl_variants:
        label = f"scx_fdl+{name}"
        if label not in a.schedulers:
            fdl = [i for i, s in enumerate(a.schedulers) if split_scheduler(s)[0] == "scx_fdl"]
            a.schedulers.insert(fdl[-1] + 1 if fdl else len(a.schedulers), label)
    return a


def fdl_schedulers(scheds):
    """The runs of scx_fdl among scheds, plain and with --fdl-variant options: each has verdicts."""
    return [s for s in scheds if split_scheduler(s)[0] == "scx_fdl"]


def judge(row, scheds):
    """{scheduler: verdict} of one report row (cell, load, scenario, per-scheduler rows, reason) for
    plain scx_fdl (n.a. where it did not run) and each --fdl-variant run among scheds; computed
    once per row, for both the report and matrix.json."""
    cell, v, sc, per, reason = row
    return {s: verdict.cell(sc, v, per, fdl=s) if per and sc else {"verdict": "n.a.", "why": reason}
            for s in dict.fromkeys(["scx_fdl"] + fdl_schedulers(scheds))}


def snapshot_scx_fdl(out_dir):
    """A copy of scx_fdl for every cell of the run (kept on a resumed run): on a host where target/ is
    rebuilt while the matrix runs, the cells would otherwise measure different builds. Returns its
    path, or None when there is no binary to copy (bench/run.sh then says why in scx_fdl's rows)."""
    snap = os.path.join(out_dir, "bin", "scx_fdl")
    if not os.path.exists(snap):
        src, status = resolve_scheduler("scx_fdl")
        if status != "ok":
            return None
        os.makedirs(os.path.dirname(snap), exist_ok=True)
        shutil.copy2(src, snap)
    return snap


def run_cell(a, cell, text, out_dir, env, suffix=""):
    """Run one cell's scenario with bench/run.sh; returns (cell dir, exit status). suffix: the
    confirmation's (CONFIRM_SUFFIX), a scenario and a directory of its own beside the cell's."""
    sdir = os.path.join(out_dir, "scenarios")
    cdir = os.path.join(out_dir, "cells", cell.name + suffix)
    os.makedirs(sdir, exist_ok=True)
    spath = os.path.join(sdir, f"{cell.name}{suffix}.toml")
    with open(spath, "w") as f:
        f.write(text)
    done = _results(cdir)
    if done and done["meta"].get("complete") and done["meta"].get("schedulers") == a.schedulers and \
            done["meta"].get("fdl_options", "") == a.fdl_options and \
            (done["meta"].get("fdl_variants") or {}) == a.fdl_variants and \
            bool(done["meta"].get("stall_watch")) == a.stall_watch and \
            sorted(done["results"]["variants"]) == sorted(cell.loads):
        log(f"cell {cell.name}{suffix}: complete in {cdir}, not run again")
        return cdir, 0
    cmd = [os.path.join(ROOT, "bench", "run.sh"), spath, "--schedulers", ",".join(a.schedulers), "--out", cdir,
           "--runner", "vm"]
    if a.fdl_options:
        cmd += ["--fdl-options", a.fdl_options]
    for name, opts in a.fdl_variants.items():
        cmd += ["--fdl-variant", f"{name}={opts}"]
    if a.stall_watch:
        cmd += ["--stall-watch"]
    if a.lock:
        cmd = ["flock", a.lock] + cmd
    # A fresh directory: run.sh appends to raw.jsonl. A cell measured again sets aside the
    # confirmation of its earlier run too: it confirmed other measurements.
    stamp = time.strftime('%H%M%S')
    for d in (cdir, cdir + CONFIRM_SUFFIX) if not suffix else (cdir,):
        if os.path.isdir(d):
            os.rename(d, f"{d}.old-{stamp}")
    return cdir, subprocess.call(cmd, cwd=ROOT, env=env)


def _results(cdir):
    try:
        with open(os.path.join(cdir, "results.json")) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return None


def merged(sc, cdir, res):
    """The cell's results with its confirmation's (cdir + CONFIRM_SUFFIX, complete) merged in:
    (results in results.json's form, {load: (repeats first, repeats in the confirmation)}). Each
    boot's records are its own; the confirmation's repeats are numbered after the cell's, and every
    figure is aggregated again over both (report.aggregate: medians, summed counts). Without a
    complete confirmation, or without either run's raw records: res as it is, {}."""
    conf = _results(cdir + CONFIRM_SUFFIX)
    if not res or not conf or not conf["meta"].get("complete") or not same_run(res["meta"], conf["meta"]):
        return res, {}
    try:
        first, _, _ = report.read_raw(cdir)
        again, _, _ = report.read_raw(cdir + CONFIRM_SUFFIX)
    except (OSError, ValueError):
        return res, {}
    top = max((r.get("repeat") or 0 for r in first), default=0)
    again = [dict(r, repeat=(r.get("repeat") or 0) + top) for r in again]
    # Per load, the repeats that EEVDF and scx_fdl both measured, in each boot: a load whose second
    # boot has none (either failed) keeps its first run's results.
    good = {v: (good_repeats(first, v), good_repeats(again, v))
            for v in set(conf["results"]["variants"]) & set(res["results"]["variants"])}
    good = {v: g for v, g in good.items() if g[1]}
    if not good:
        return res, {}
    recs = [r for r in first if r.get("variant") not in good or r.get("repeat") in good[r["variant"]][0]] + \
           [r for r in again if r.get("variant") in good and r.get("repeat") in good[r["variant"]][1]]
    agg = report.aggregate(sc, res["meta"]["schedulers"], res["meta"].get("statuses", {}), recs)
    out = dict(res, results=dict(res["results"], variants=dict(res["results"]["variants"])))
    for v in good:
        out["results"]["variants"][v] = agg["variants"][v]
    return out, {v: (len(g[0]), len(g[1])) for v, g in good.items()}


def good_repeats(recs, v):
    """The repeats of load v with a measurement, not an error, under both EEVDF and scx_fdl."""
    ok = {s: {r.get("repeat") for r in recs if r.get("variant") == v and r.get("sched") == s and not r.get("error")}
          for s in ("eevdf", "scx_fdl")}
    return ok["eevdf"] & ok["scx_fdl"]


def same_run(first, again):
    """Does a confirmation (its results' meta) belong to the cell's run: the same schedulers, scx_fdl
    options, stall watch and scx_fdl build, measured after it? A run into the directory of an
    earlier one (--out DIR) sets the old confirmation aside (run_cell); this also keeps one copied
    in by hand from being pooled with measurements it did not confirm."""
    sha = [((m.get("binaries") or {}).get("scx_fdl") or {}).get("sha256") for m in (first, again)]
    return (first.get("schedulers") == again.get("schedulers") and
            first.get("fdl_options", "") == again.get("fdl_options", "") and
            (first.get("fdl_variants") or {}) == (again.get("fdl_variants") or {}) and
            bool(first.get("stall_watch")) == bool(again.get("stall_watch")) and sha[0] == sha[1] and
            str(first.get("started", "")) <= str(again.get("started", "")))


def confirm_why(sc, v, per, fdl="scx_fdl"):
    """Why load v of a cell (its per-scheduler rows) is to be measured again (--confirm), or None:
    its verdict is FAIL, or a probe's p99 over EEVDF's is within CONFIRM_BAND of its rule's bound."""
    vd = verdict.cell(sc, v, per, fdl=fdl)
    if vd["verdict"] == "FAIL":
        # The worst lateness is the largest over the repeats (report.fdl_stats): more repeats
        # can only raise it, so a FAIL by that rule alone is not measured again.
        failed = [n for n, ok, _ in vd["rules"] if not ok]
        if all(n.startswith("worst lateness") for n in failed):
            return None
        return "FAIL"
    if vd["verdict"] != "PASS":
        return None
    ratios = (per.get(fdl) or {}).get("p99_ratio_to_eevdf", {})
    for w in (w for w in sc.workloads_in(v) if w.kind == "probe"):
        r = ratios.get(w.name)
        deadline = sc.cgroups[w.cgroup].deadline_rr is not None
        bound = verdict.WITHIN_EEVDF_RATIO if deadline and vd["class"] == "within" else verdict.ABOVE_EEVDF_RATIO
        if r is not None and bound / (1 + CONFIRM_BAND) <= r <= bound * (1 + CONFIRM_BAND):
            return f"{w.name} at {r:.2f}x EEVDF, near {bound}"
    return None


def collect(cells, out_dir, confirmed=None):
    """[(cell, variant, scenario, per-scheduler rows or None, reason)] from the cells' results, a
    cell's confirmation merged in (merged); confirmed, if given, gets {cell: {load: (repeats in
    the first boot, in the second)}} for the loads measured again."""
    rows = []
    for cell in cells:
        spath = os.path.join(out_dir, "scenarios", f"{cell.name}.toml")
        cdir = os.path.join(out_dir, "cells", cell.name)
        res = _results(cdir)
        try:
            sc = scenario.load(spath)
        except ScenarioError as e:
            sc, res = None, None
            why = str(e)
        if sc is not None:
            res, counts = merged(sc, cdir, res)
            if counts and confirmed is not None:
                confirmed[cell.name] = counts
        for v in cell.loads:
            if res is None:
                rows.append((cell, v, sc, None, why if sc is None else "not run (no results.json)"))
            else:
                per = res["results"]["variants"].get(v)
                rows.append((cell, v, sc, per, None if per else f"variant {v} not in the cell's results"))
    return rows


def _ms(us):
    return "-" if us is None else f"{us / 1000:.1f}"


def rig_brief(rigs):
    """A cell's boots' rig checks in a few words (report.rig_lines has the whole line): the share of
    timer wake-ups of an idle CPU over 1 ms late, per boot; "noisy" past report.RIG_LATE_FRACTION."""
    parts = []
    for r in rigs or []:
        frac = report.rig_late_fraction(r)
        if frac is None:
            continue
        parts.append(f"{100 * frac:.1f} %" + (" (noisy)" if frac > report.RIG_LATE_FRACTION else ""))
    return f"rig check: {', '.join(parts)} of idle wake-ups over 1 ms late" if parts else ""


def stalled_cells(rows):
    """"cell / load: schedulers" for every row (collect's) where a scheduler's stall watch saw a
    stall beyond EEVDF's in the same cell (report.stalled_beyond_eevdf)."""
    out = []
    for cell, v, sc, per, reason in rows:
        beyond = report.stalled_beyond_eevdf(per or {})
        if beyond:
            out.append(f"{cell.name} / {v}: {', '.join(beyond)}")
    return out


def stall_summary(rows, scheds):
    """One line: per scheduler, the median and the worst of its measurements' worst stall-watch
    wake-ups over the rows (each row's per-variant figure, report.stall_worst); "" if none had any.
    Quiet and beside hackbench apart: hackbench's forks and exits make their own (report.STALL_LIMIT_US)."""
    parts = []
    for load in LOADS:
        per_s = []
        for s in scheds:
            v = sorted(per[s]["stall_us"] for cell, var, sc, per, reason in rows
                       if var == load and per and per.get(s, {}).get("stall_us") is not None)
            if v:
                per_s.append(f"{s} {v[len(v) // 2] / 1000:.1f} / {v[-1] / 1000:.1f}")
        if per_s:
            parts.append(f"{load}: {', '.join(per_s)} ms")
    return ("Stall watch (a real-time thread's worst timer wake-up per measurement; median / worst over "
            "the cells): " + "; ".join(parts) + ".") if parts else ""


def wake_columns(per, scheds, probe, deadline):
    """The probe's wake-ups alone under each scheduler, as two report cells "a / b / c": their p99 in
    ms (median over repeats; until the worker ran, before its spin), and, for a cgroup with a
    deadline, the percentage later than its wake-up deadline (fdl-probe --wake-late-after-us). The
    same count under every scheduler: EEVDF has no deadline to miss, but its wake-ups take as long
    or not, on the same machine. "-" where a scheduler's run has no such figure (an older
    fdl-probe)."""
    ws = [((per.get(s) or {}).get("wake") or {}).get(probe) for s in scheds]
    p99 = " / ".join(_ms(w["p99"].get("median")) if w else "-" for w in ws)
    if not deadline:
        return [p99, "-"]
    late = " / ".join(f"{100 * w['late'] / w['samples']:.1f}" if w and w.get("late") is not None and w["samples"]
                      else "-" for w in ws)
    return [p99, late]


def markdown(sp, rows, judged, scheds, meta):
    """The combined report: a row per (cell, load, cgroup), p50/p99 per scheduler and ratios to
    EEVDF, scx_fdl's misses/starts (of wake-ups) and worst lateness, a verdict per cell (judged: each
    row's judge()); then why each cell failed."""
    hdr = ["cell", "load", "class", "cgroup", "deadline_rr"]
    # scx_fdl with --fdl-variant options: a verdict of its own beside scx_fdl's, same boot.
    extra = [s for s in fdl_schedulers(scheds) if s != "scx_fdl"]
    for s in scheds:
        hdr += [f"{s} p50/p99 (ms)"] + ([] if s == "eevdf" else [f"{s} p99/EEVDF"])
    hdr += [f"probe's wake-up alone, p99 (ms) ({' / '.join(scheds)})",
            f"probe's wake-ups later than the wake-up deadline, % ({' / '.join(scheds)})",
            "scx_fdl misses/starts (of wake-ups)", "scx_fdl worst late (ms)",
            "verdict" + (f" ({' / '.join(['scx_fdl'] + extra)})" if extra else "")]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    notes, counts = [], {"PASS": 0, "FAIL": 0, "n.a.": 0}
    extra_counts = {s: {"PASS": 0, "FAIL": 0, "n.a.": 0} for s in extra}
    for (cell, v, sc, per, reason), j in zip(rows, judged):
        vd, vds = j["scx_fdl"], {s: j[s] for s in extra}
        counts[vd["verdict"]] += 1
        for s, x in vds.items():
            extra_counts[s][x["verdict"]] += 1
        if per is None or sc is None:
            lines.append("| " + " | ".join([cell.name, v, "-", "-", "-"] + ["-"] * (len(hdr) - 6)
                                           + [" / ".join(["n.a."] * (1 + len(extra)))]) + " |")
            notes.append(f"- **{cell.name} / {v}**: n.a.: {reason}")
            continue
        conf = (meta.get("confirmed") or {}).get(cell.name, {}).get(v)
        load = f"{v} ({conf[0]}+{conf[1]})" if conf else v
        first = True
        for w in (w for w in sc.workloads_in(v) if w.kind == "probe"):
            cg = sc.cgroups[w.cgroup]
            r = [cell.name if first else "", load if first else "", (vd["class"] or "-") if first else "", w.name,
                 cg.deadline_rr or "-"]
            for s in scheds:
                row = per.get(s)
                if not row or row["status"] != "ok":
                    r += ["n/a"] + ([] if s == "eevdf" else ["-"])
                    continue
                lat = row["latency"].get(w.name, {})
                r.append(f"{_ms(lat.get('p50', {}).get('median'))} / {_ms(lat.get('p99', {}).get('median'))}")
                if s != "eevdf":
                    x = row["p99_ratio_to_eevdf"].get(w.name)
                    r.append("-" if x is None else f"{x:.2f}")
            r += wake_columns(per, scheds, w.name, cg.deadline_rr)
            st = (per.get("scx_fdl") or {}).get("fdl_stats", {}).get(w.cgroup)
            wake = "" if not st or st.get("wake_starts") is None else f" ({st['wake_misses']}/{st['wake_starts']})"
            r += [f"{st['misses']}/{st['picks']}{wake}" if st and cg.deadline_rr else "-",
                  _ms(st.get("max_lateness_window_us", st["max_lateness_us"])) if st and cg.deadline_rr else "-",
                  " / ".join(f"**{x['verdict']}**" for x in [vd] + list(vds.values())) if first else ""]
            lines.append("| " + " | ".join(r) + " |")
            first = False
        failed = [f"{n} ({d})" for n, ok, d in vd["rules"] if not ok]
        use = ", ".join(f"{c} {u:.2f}/{g:.2f}" for c, (u, g) in vd.get("use", {}).items())
        rig = rig_brief((meta.get("rig") or {}).get(cell.name))
        if rig:
            use += f"; {rig}"
        stall = report.stall_line(per)
        if stall:
            use += f"; {stall}"
        if conf:
            use += f"; measured again: medians over {conf[0]} + {conf[1]} repeats in two boots"
            rig = rig_brief((meta.get("rig_again") or {}).get(cell.name))
            if rig:
                use += f" (the second boot's {rig})"
        if vd["verdict"] == "n.a.":
            notes.append(f"- **{cell.name} / {v}**: n.a.: {vd['why']}")
        elif failed:
            notes.append(f"- **{cell.name} / {v}** ({vd['class']}; CPU used/guaranteed: {use}; "
                         f"{vd['fair_detail']}): FAIL: " + "; ".join(failed))
        else:
            notes.append(f"- **{cell.name} / {v}** ({vd['class']}; CPU used/guaranteed: {use}; "
                         f"{vd['fair_detail']}): PASS, {len(vd['rules'])} rules held")
        for s, x in vds.items():
            bad = [f"{n} ({d})" for n, ok, d in x["rules"] if not ok]
            notes.append(f"  - {s}: " + (f"n.a.: {x['why']}" if x["verdict"] == "n.a." else
                                         "FAIL: " + "; ".join(bad) if bad else
                                         f"PASS, {len(x['rules'])} rules held"))
    head = [f"Matrix {os.path.relpath(sp.path, ROOT)}: {meta['ncells']} cells "
            f"({'quick subset, ' if meta['quick'] else ''}{meta['duration']} per measurement, "
            f"{sp.repeat} repeat(s)), schedulers {', '.join(scheds)}; "
            + (f"run took {fmt_secs(meta['elapsed_s'])}." if meta.get("finished", True) else "the run did not finish."),
            f"Verdicts (scx_fdl{' ' + meta['fdl_options'] if meta.get('fdl_options') else ''} against EEVDF, "
            f"issue 10's rules): {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['n.a.']} n.a."
            + "".join(f"; {s} ({(meta.get('fdl_variants') or {}).get(split_scheduler(s)[1], '?')}), same boots: "
                      f"{c['PASS']} PASS, {c['FAIL']} FAIL, {c['n.a.']} n.a." for s, c in extra_counts.items()),
            "p50/p99: wake-up latency of the probe (median over repeats). Under EEVDF and the peers every cgroup "
            "has cpu.weight 100 (no stand-in for guaranteed_shares). scx_fdl's worst lateness is the worst within the "
            "measurement windows (the probes' own, from their warm-up's end, their start and exit left out): exact "
            "where scx_fdl kept the window (dump --new-window) or its worst since it started grew in it, else an "
            "upper bound within 2x from its lateness histogram. The probe's wake-up alone: from its message thread's wake-up call to "
            "the worker running, before its spin (p50/p99 add what the spin lost to preemption). "
            "The probe's wake-ups later than the wake-up deadline: fdl-probe's "
            "own count, under every scheduler alike, of its workers' wake-ups (its message thread's wake-up call "
            "to the worker running again) later than the cgroup's deadline_wakeup (deadline_rr where none is "
            "shorter), over all repeats. Not scx_fdl's own wake-up misses: scx_fdl judges a start against its "
            "container's deadline, never earlier than that and later where the container's bucket ran ahead, "
            "and counts the message thread's starts too; the probe's count is the stricter, and EEVDF is "
            "measured by it as well.", ""]
    if meta.get("confirm") or meta.get("confirmed"):
        n = sum(len(x) for x in (meta.get("confirmed") or {}).values())
        lost = [c for c in meta.get("incomplete_cells", []) if c.endswith(CONFIRM_SUFFIX)]
        head.insert(2, f"--confirm: {n} load(s) measured again in a second boot of their cell, where the first "
                       f"run's verdict was FAIL (other than by the worst lateness alone) or a probe's p99 over EEVDF's "
                       f"was within {CONFIRM_BAND:.0%} of its bound (0.5x, 1.2x); such a load's row (marked "
                       f"\"LOAD (first+again)\", the repeats in each boot) and verdict are each scheduler's "
                       f"medians over both boots' repeats (misses summed, worst lateness the largest)."
                       + (f" Confirmations that did not complete (judged on the first run): {', '.join(lost)}."
                          if lost else ""))
    summary = stall_summary(rows, scheds)
    if summary:
        head.insert(2, summary)
    stalled = stalled_cells(rows)
    if stalled:
        head.insert(2, f"CPU stalls of {report.STALL_LIMIT_US // 1000} ms or more and twice EEVDF's in the same "
                       f"cell (the stall watch's real-time threads woke that late): {'; '.join(stalled)}.")
    builds = {}
    for cell, v, sc, per, reason in rows:
        b = meta.get("binaries", {}).get(cell.name, {}).get("scx_fdl")
        if b:
            version = f", {b['version']}" if b.get("version") else ""
            builds.setdefault(f"{b['sha256']} ({b['mtime']}{version})", []).append(cell.name)
    if len(builds) > 1:
        head.insert(2, "**The scx_fdl binary changed during the run** (sha256 prefix, built): " + "; ".join(
            f"{b}: {', '.join(dict.fromkeys(c))}" for b, c in builds.items()) + ".")
    elif builds:
        head.insert(2, f"scx_fdl binary: sha256 {next(iter(builds))}.")
    cells = "\n".join(f"- `{c.name}`: {c.why}" for c in sp.cells if c.name in meta["cells"])
    counts = dict(counts, **({"variants": extra_counts} if extra_counts else {}))
    return "\n".join(head + lines + ["", "Cells:", cells, "", "Verdicts:"] + notes) + "\n", counts


def write_report(sp, cells, scheds, out_dir, meta):
    meta["confirmed"] = {}
    rows = collect(cells, out_dir, meta["confirmed"])
    # Which build of each scheduler every cell ran (from the cells' own results), and the rig
    # checks of its boots (a confirmation's after the cell's).
    meta["binaries"], meta["rig"], meta["rig_again"] = {}, {}, {}
    for c in cells:
        res = _results(os.path.join(out_dir, "cells", c.name))
        if res and res["meta"].get("binaries"):
            meta["binaries"][c.name] = res["meta"]["binaries"]
        if res and res["meta"].get("rig"):
            meta["rig"][c.name] = res["meta"]["rig"]
        again = _results(os.path.join(out_dir, "cells", c.name + CONFIRM_SUFFIX)) if c.name in meta["confirmed"] else None
        if again and again["meta"].get("rig"):
            meta["rig_again"][c.name] = again["meta"]["rig"]
    judged = [judge(row, scheds) for row in rows]
    md, counts = markdown(sp, rows, judged, scheds, meta)
    with open(os.path.join(out_dir, "matrix.md"), "w") as f:
        f.write(md)
    verdicts = []
    for (cell, v, _, _, _), j in zip(rows, judged):
        vd = j["scx_fdl"]
        entry = {"cell": cell.name, "load": v, **{k: vd.get(k) for k in ("verdict", "class", "rules", "why")}}
        extra = {s: x for s, x in j.items() if s != "scx_fdl"}
        if extra:
            entry["variants"] = {s: {k: x.get(k) for k in ("verdict", "rules", "why")} for s, x in extra.items()}
        verdicts.append(entry)
    with open(os.path.join(out_dir, "matrix.json"), "w") as f:
        json.dump({"meta": meta, "counts": counts, "verdicts": verdicts}, f, indent=1)
    return md


def confirm_cell(a, sp, cell, out_dir, env):
    """--confirm: measure again, in a boot of their own, the loads of a cell that confirm_why names
    (judged on the cell's first run alone). Returns bench/run.sh's exit status (0: nothing to do)."""
    spath = os.path.join(out_dir, "scenarios", f"{cell.name}.toml")
    res = _results(os.path.join(out_dir, "cells", cell.name))
    if not res:
        return 0
    sc = scenario.load(spath)
    why = {}
    for v in cell.loads:
        per = res["results"]["variants"].get(v)
        # The first run of scx_fdl (plain, then each variant) whose verdict one run cannot settle.
        for s in fdl_schedulers(res["meta"]["schedulers"]) if per else []:
            w = confirm_why(sc, v, per, fdl=s)
            if w:
                why[v] = w if s == "scx_fdl" else f"{s}: {w}"
                break
    if not why:
        return 0
    log(f"cell {cell.name}: measuring again ({a.confirm} repeat(s)): "
        + "; ".join(f"{v}: {w}" for v, w in why.items()))
    again = copy.copy(cell)
    again.loads = [v for v in cell.loads if v in why]
    _, rc = run_cell(a, again, scenario_text(sp, again, a.quick, repeat=a.confirm), out_dir, env,
                     suffix=CONFIRM_SUFFIX)
    if rc:
        log(f"cell {cell.name}{CONFIRM_SUFFIX}: bench/run.sh exited {rc}; the cell is judged on its first run")
    return rc


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        sp = load_spec(a.spec)
    except ScenarioError as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 2
    if a.report_only:
        with open(os.path.join(a.report_only, "matrix.json")) as f:
            meta = json.load(f)["meta"]
        cells = [c for c in sp.cells if c.name in meta["cells"]]
        print(write_report(sp, cells, meta["schedulers"], a.report_only, meta))
        return 0
    cells = generate(sp, a.quick)
    if a.cells:
        want = [n.strip() for n in a.cells.split(",") if n.strip()]
        have = {c.name for c, _ in cells}
        for n in want:
            if n not in have:
                print(f"bench: error: --cells: no cell {n!r}{' in the quick subset' if a.quick else ''} "
                      f"(have: {', '.join(sorted(have))})", file=sys.stderr)
                return 2
        cells = [(c, t) for c, t in cells if c.name in want]
    est = estimate_s(sp, [c for c, _ in cells], a.schedulers, a.quick)
    if a.check:
        for c, _ in cells:
            print(f"{c.name}: {c.why}{' (quick)' if c.quick else ''}")
        print(f"{len(cells)} cells, about {fmt_secs(est)} with {', '.join(a.schedulers)}"
              + (f", plus a boot of {a.confirm} repeat(s) for each cell with a load to confirm" if a.confirm else ""))
        return 0
    if "eevdf" not in a.schedulers or "scx_fdl" not in a.schedulers:
        log("without both eevdf and scx_fdl every verdict is n.a.")
    out_dir = os.path.abspath(a.out or os.path.join(CACHE, "bench", "results",
                                                    f"matrix-{time.strftime('%Y%m%d-%H%M%S')}"))
    os.makedirs(out_dir, exist_ok=True)
    log(f"matrix {a.spec}: {len(cells)} cells x {', '.join(a.schedulers)}, about {fmt_secs(est)}; "
        f"results -> {out_dir}")
    t0 = time.monotonic()
    failed = []
    # A run of some cells into the directory of an earlier run (--cells ... --out DIR) adds to
    # its report: the cells measured before stay in it.
    earlier = []
    try:
        with open(os.path.join(out_dir, "matrix.json")) as f:
            earlier = json.load(f)["meta"]["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    names = {c.name for c, _ in cells} | set(earlier)
    reported = [c for c in sp.cells if c.name in names]
    meta = {"spec": os.path.relpath(sp.path, ROOT), "quick": a.quick, "schedulers": a.schedulers,
            "cells": [c.name for c in reported], "ncells": len(reported),
            "duration": sp.quick_duration if a.quick else sp.duration, "elapsed_s": 0,
            "incomplete_cells": [], "finished": False, "fdl_options": a.fdl_options,
            "fdl_variants": a.fdl_variants, "confirm": a.confirm, "command": "bench/matrix.sh " + " ".join(sys.argv[1:] if argv is None else argv)}
    # Written now too, so that --report-only can report a run that was cut short.
    with open(os.path.join(out_dir, "matrix.json"), "w") as f:
        json.dump({"meta": meta}, f, indent=1)
    env = dict(os.environ)
    snap = snapshot_scx_fdl(out_dir) if "scx_fdl" in a.schedulers else None
    if snap:
        env["FDL_SCHED_BIN"] = snap
        log(f"every cell runs the scx_fdl copied to {snap}")
    for i, (cell, text) in enumerate(cells, 1):
        log(f"cell {i}/{len(cells)}: {cell.name} ({cell.why}) | {fmt_secs(time.monotonic() - t0)} elapsed")
        try:
            _, rc = run_cell(a, cell, text, out_dir, env)
            if rc:
                failed.append(cell.name)
                log(f"cell {cell.name}: bench/run.sh exited {rc}; its report says what was measured")
            elif a.confirm and confirm_cell(a, sp, cell, out_dir, env):
                failed.append(cell.name + CONFIRM_SUFFIX)
        except KeyboardInterrupt:
            log("interrupted: the report holds the cells measured so far")
            failed.append(cell.name)
            break
    meta.update(elapsed_s=round(time.monotonic() - t0), incomplete_cells=failed, finished=True)
    print(write_report(sp, reported, a.schedulers, out_dir, meta))
    log(f"matrix report: {out_dir}/matrix.md (and matrix.json; each cell's own report in cells/NAME/)")
    log(f"matrix took {fmt_secs(meta['elapsed_s'])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
