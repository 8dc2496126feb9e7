"""The report: results per scenario variant and scheduler (median and spread over repeats), as a
terminal table, JSON, CSV and PNG percentile curves."""

import csv
import json
import os

from . import stats

LAT_KEYS = [stats.pkey(p) for p in stats.PERCENTILES] + ["min", "max"]


def read_raw(d):
    """A run directory's raw.jsonl, as its three kinds of record: (measurements (FDL-BENCH),
    events (every other kind), rig checks (FDL-BENCH-RIG)), each without its "kind".

    raw.jsonl keeps every record as it came, and a scheduler and repeat cut short by a lost boot
    (the emulator's int3 fault) is measured again whole on the next one (main.py's run), so a
    measurement can appear twice: the last of each scheduler, variant and repeat is the one the
    run's report used, and the only one returned."""
    records, events, rigs = [], [], []
    with open(os.path.join(d, "raw.jsonl")) as f:
        for line in f:
            o = json.loads(line)
            {"FDL-BENCH": records, "FDL-BENCH-RIG": rigs}.get(o.pop("kind", None), events).append(o)
    last = {(r.get("sched"), r.get("variant"), r.get("repeat")): i for i, r in enumerate(records)}
    return [r for i, r in enumerate(records) if last[(r.get("sched"), r.get("variant"), r.get("repeat"))] == i], events, rigs


def probe_result(kind_probe, raw):
    """Percentiles (fdl-probe JSON keys) of one probe in one record, or raises ValueError."""
    if raw is None:
        raise ValueError("no result")
    if "error" in raw:
        raise ValueError(raw["error"])
    if "schbench_text" in raw:
        return stats.parse_schbench(raw["schbench_text"])
    return raw


def aggregate(sc, scheds, statuses, records):
    """Everything the report says, from the guest's FDL-BENCH records."""
    probes = [w for w in sc.workloads if w.kind == "probe"]
    antagonists = [w for w in sc.workloads if w.kind in ("hackbench", "stress-ng")]
    out = {"scenario": sc.name, "description": sc.description, "variants": {}}
    for v in sc.variants:
        per = {}
        for s in scheds:
            recs = [r for r in records if r["sched"] == s and r["variant"] == v]
            errors = [f"repeat {r['repeat']}: {r['error']}" for r in recs if r.get("error")]
            good = [r for r in recs if not r.get("error")]
            row = {"status": statuses.get(s, "ok"), "measurements": len(good), "errors": errors,
                   "latency": {}, "wake": {}, "timer": {}, "throughput": {}, "cpus": {},
                   "fdl_stats": fdl_stats(good, errors)}
            for w in (p for p in probes if v in p.variants):
                vals = {k: [] for k in LAT_KEYS + ["samples"]}
                wakes, timers = [], []
                for r in good:
                    try:
                        res = probe_result(w.kind, r["probes"].get(w.name))
                    except ValueError as e:
                        errors.append(f"repeat {r['repeat']}: probe {w.name}: {e}")
                        continue
                    for k in vals:
                        vals[k].append(res.get(k))
                    wakes.append(res.get("wake"))
                    timers.append(res.get("timer"))
                row["latency"][w.name] = {k: stats.summarize(x) for k, x in vals.items()}
                row["wake"][w.name] = wake_delays(wakes)
                row["timer"][w.name] = timer_wakes(timers)
            for w in (a for a in antagonists if v in a.variants):
                key = "hackbench" if w.kind == "hackbench" else "stress"
                tp = [stats.throughput(w.kind, w.args, r[key].get(w.name)) for r in good]
                row["throughput"][w.name] = dict(stats.summarize(tp), unit=stats.THROUGHPUT_UNIT[w.kind],
                                                 kind=w.kind)
            for c in sc.cgroups:
                cpus = [r["cpu_usec"].get(c) / 1e6 / r["window_s"] for r in good
                        if r.get("cpu_usec", {}).get(c) is not None and r.get("window_s")]
                row["cpus"][c] = stats.summarize(cpus)
            row["machine"] = machine_cpus(good)
            row["stall_us"] = stall_worst(good)
            if row["status"] == "ok" and not good:
                row["status"] = errors[0] if errors else "not run (the run ended before it)"
            per[s] = row
        base = per.get("eevdf")
        for s, row in per.items():
            row["p99_ratio_to_eevdf"] = {
                n: stats.ratio(lat["p99"]["median"], base and base["latency"].get(n, {}).get("p99", {}).get("median"))
                for n, lat in row["latency"].items()}
            for n, t in row["throughput"].items():
                t["ratio_to_eevdf"] = stats.ratio(t["median"], base and base["throughput"].get(n, {}).get("median"))
        out["variants"][v] = per
    return out


def wake_delays(wakes):
    """fdl-probe's wake-up delays alone (each repeat's "wake", or None) over the repeats: p99 as
    medians, and the wake-ups later than the cgroup's wake-up deadline summed ("late" of "samples",
    at "late_after_us"); None unless every repeat has them (an older fdl-probe, or schbench)."""
    if not wakes or any(not w or w.get("samples") is None for w in wakes):
        return None
    out = {"p50": stats.summarize([w.get("p50") for w in wakes]),
           "p99": stats.summarize([w.get("p99") for w in wakes]),
           "samples": sum(w["samples"] for w in wakes), "n": len(wakes)}
    if all(w.get("late") is not None for w in wakes) and len({w.get("late_after_us") for w in wakes}) == 1:
        out.update(late=sum(w["late"] for w in wakes), late_after_us=wakes[0]["late_after_us"])
    return out


def timer_wakes(timers):
    """fdl-probe's message threads' timer wake-ups (each repeat's "timer", or None): how late past
    their sleeps' end they ran again, p99 as medians and the worst of all repeats; None unless every
    repeat has them. The workers' figures start at the message thread's wake-up call, after this
    delay: it is the one a scheduler's own count of a message thread's late starts (scx_fdl's) sees
    and the probe's latencies do not, measured here alike under every scheduler."""
    if not timers or any(not t or t.get("samples") is None for t in timers):
        return None
    return {"p99": stats.summarize([t.get("p99") for t in timers]), "max": max(t["max"] for t in timers),
            "samples": sum(t["samples"] for t in timers), "n": len(timers)}


def machine_cpus(good):
    """Where the CPU time went that no scenario cgroup got, in CPUs over the window: "idle" (the
    CPUs idle, /proc/stat) and "sched" (the scheduler's own process). Runs from before these
    figures were recorded have none."""
    out = {}
    for key in ("idle", "sched"):
        out[key] = stats.summarize([r["machine_usec"][key] / 1e6 / r["window_s"] for r in good
                                    if r.get("machine_usec") and r.get("window_s")])
    return out


# A real-time thread's timer wake-up this late while a measurement ran: the guest's CPU did not run
# it for that long (tests/vm/lib.sh's STALL_LIMIT_US, where the deadline tests withhold a verdict for
# it). The RT class runs ahead of sched_ext and of EEVDF, so no scheduler's order delays it; what
# does is the host stalling the vCPU, or a kernel path that long without a preemption point (with
# interrupts or preemption off, where a scheduler's callbacks run too). Beside a hackbench that is
# started again and again, its forks and exits alone did it under EEVDF: 12-52 ms (bench/run.sh
# tiny, 2026-12-05). So the figure is compared with EEVDF's in the same boot (stalled_beyond_eevdf).
STALL_LIMIT_US = 10000


def stall_worst(good):
    """The worst timer wake-up of the stall watch's real-time threads (bench.sh's measure) over a
    scheduler's measurements of a variant, in us; None where none had a stall watch."""
    worst = [r["stall"]["max_us"] for r in good if (r.get("stall") or {}).get("max_us") is not None]
    return max(worst) if worst else None


def stall_line(per):
    """The worst stall per scheduler of one variant (aggregate's rows), flagged past STALL_LIMIT_US;
    "" where no scheduler's measurements had a stall watch."""
    seen = [(s, row["stall_us"]) for s, row in per.items() if row.get("stall_us") is not None]
    if not seen:
        return ""
    stalled = [s for s, us in seen if us >= STALL_LIMIT_US]
    line = ("CPU stalls (a real-time thread's worst timer wake-up while measuring): "
            + ", ".join(f"{s} {us / 1000:.1f} ms" for s, us in seen))
    if stalled:
        line += (f"; {STALL_LIMIT_US // 1000} ms or more under {', '.join(stalled)}: the host, or a kernel path "
                 "that long without preemption, held a CPU then, and those tails are not the scheduler's order alone")
    return line


def stalled_beyond_eevdf(per):
    """The schedulers (not EEVDF) whose worst stall in a variant reached STALL_LIMIT_US and twice
    EEVDF's in the same boot's variant: a stall the host and the workload do not explain as well
    under EEVDF (the scheduler's own time with preemption off, or the host at that moment)."""
    base = (per.get("eevdf") or {}).get("stall_us")
    if base is None:
        return []
    return [s for s, row in per.items() if s != "eevdf" and row.get("stall_us") is not None
            and row["stall_us"] >= max(STALL_LIMIT_US, 2 * base)]


def fdl_stats(good, errors):
    """scx_fdl's own figures per cgroup over the repeats: misses and starts (nr_picks) during the windows
    (summed), the worst lateness at the end of a window (the largest; it counts since scx_fdl started,
    so it covers earlier variants of the same start too), and the worst lateness within the windows
    (max_lateness_window_us, the largest; bench.sh fdl_stats_json: exact where scx_fdl kept the
    measurement's window or its worst since the start grew in it, else an upper bound within a
    factor of two; where a repeat's scx_fdl reported no lateness buckets, its worst since the start;
    window_exact: every repeat's was exact),
    and the wake-ups' starts and misses (wake_starts, wake_misses: a task's first start after it became
    runnable; None unless every repeat's scx_fdl reported them), and worst_start: the start of the
    largest worst lateness within a window (bench.sh: thread id and name, wake-up or resumption, its
    wait), None where no repeat's was known. {} for other schedulers."""
    out = {}
    for r in good:
        if r.get("fdl_stats_error"):
            errors.append(f"repeat {r['repeat']}: {r['fdl_stats_error']}")
        for c, f in (r.get("fdl_stats") or {}).items():
            o = out.setdefault(c, {"misses": 0, "picks": 0, "max_lateness_us": 0, "max_lateness_window_us": 0,
                                   "window_exact": True, "wake_starts": 0, "wake_misses": 0, "n": 0,
                                   "worst_start": None, "worst_start_late_us": -1})
            # Exact where every repeat's was (bench.sh; a result without the field: a bound).
            o["window_exact"] = o["window_exact"] and f.get("window_exact", False)
            # The start named is the window's worst (bench.sh: of scx_fdl's measurement window
            # where it kept one, else of the worst since the start that grew within the window).
            ws = f.get("worst_start")
            late = f.get("max_lateness_window_us", -1)
            late = f["max_lateness_us"] if late < 0 else late
            if ws and late > o["worst_start_late_us"]:
                o["worst_start"], o["worst_start_late_us"] = ws, late
            o["misses"] += f["misses"]
            o["picks"] += f["picks"]
            for k in ("wake_starts", "wake_misses"):
                v = f.get(k, -1)
                o[k] = None if o[k] is None or v < 0 else o[k] + v
            o["max_lateness_us"] = max(o["max_lateness_us"], f["max_lateness_us"])
            window = f.get("max_lateness_window_us", -1)
            o["max_lateness_window_us"] = max(o["max_lateness_window_us"], f["max_lateness_us"] if window < 0 else window)
            o["n"] += 1
    return out


def worst_start_text(ws, late_us):
    """'L us late: tid TID NAME, a wake-up|a resumption after waiting W us' for a worst_start (fdl_stats)
    whose lateness was late_us, '-' for none."""
    if not ws:
        return "-"
    kind = "a wake-up" if ws.get("woke") else "a resumption"
    return f"{late_us} us late: tid {ws['tid']} {ws.get('comm') or '(gone)'}, {kind} after waiting {ws['wait_us']} us"


def _cell(s, fmt="{:.0f}"):
    if not s or s.get("median") is None:
        return "-"
    if s["n"] > 1 and s["min"] != s["max"]:
        return f"{fmt.format(s['median'])} [{fmt.format(s['min'])}-{fmt.format(s['max'])}]"
    return fmt.format(s["median"])


def _ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def _table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def text(agg, meta):
    """The terminal report."""
    out = [f"Scenario {agg['scenario']}: {agg['description']}",
           f"{meta['runner_desc']}; {meta['repeat']} repeat(s) of {meta['duration_s']} s; "
           "values: median [min-max] over repeats; ratios: median / EEVDF's median"]
    if meta.get("fdl_options"):
        out.append(f"every scx_fdl run with {meta['fdl_options']}")
    variants, builds = meta.get("fdl_variants") or {}, meta.get("fdl_builds") or {}
    for n in sorted(set(variants) | set(builds)):
        if f"scx_fdl+{n}" not in meta.get("schedulers", []):
            continue
        binary = (meta.get("binaries") or {}).get(f"scx_fdl+{n}") or {}
        what = (f"the build at {builds[n]} ({binary.get('version') or 'version unknown'}, sha256 "
                f"{binary.get('sha256', '?')})" if n in builds else "scx_fdl")
        out.append(f"scx_fdl+{n}: {what}" + (f" {variants[n]}" if n in variants else ""))
    for v, per in agg["variants"].items():
        out.append(f"\n== {agg['scenario']} / {v} ==")
        rows = []
        for s, row in per.items():
            if row["status"] != "ok":
                rows.append([s, "all", "-", "-", "-", "-", "-", "-", row["status"][:120]])
                continue
            for n, lat in row["latency"].items():
                w = (row.get("wake") or {}).get(n)
                late = (f"{w['late']}/{w['samples']} over {w['late_after_us']}" if w and w.get("late") is not None
                        else "-")
                rows.append([s, n, _cell(lat["p50"]), _cell(lat["p99"]), _cell(lat["p99.9"]),
                             _ratio(row["p99_ratio_to_eevdf"].get(n)), _cell(w["p99"]) if w else "-", late, ""])
        if rows:
            out.append("Wake-up latency (us) per cgroup (wake-up alone: until the worker ran, before its spin; "
                       "late: wake-ups later than the cgroup's wake-up deadline)")
            out.append(_table(["scheduler", "cgroup", "p50", "p99", "p99.9", "p99/EEVDF", "wake-up alone p99",
                               "late wake-ups", "note"], rows))
        trows = [[s, n, _cell(t["p99"]), str(t["max"]), str(t["samples"])] for s, row in per.items()
                 if row["status"] == "ok" for n, t in (row.get("timer") or {}).items() if t]
        if trows:
            out.append("Message threads' timer wake-ups (us past each sleep's end; before the workers' figures, "
                       "which start at its wake-up call): p99, the worst of all repeats")
            out.append(_table(["scheduler", "cgroup", "p99", "worst", "samples"], trows))
        names = sorted({n for row in per.values() for n in row["throughput"]})
        if names:
            rows = []
            for s, row in per.items():
                r = [s]
                for n in names:
                    t = row["throughput"].get(n)
                    r += ["-", "-"] if not t or row["status"] != "ok" else [_cell(t), _ratio(t["ratio_to_eevdf"])]
                rows.append(r)
            hdr = ["scheduler"]
            for n in names:
                unit = next(row["throughput"][n]["unit"] for row in per.values() if n in row["throughput"])
                hdr += [f"{n} ({unit})", "vs EEVDF"]
            out.append("\nAntagonist throughput")
            out.append(_table(hdr, rows))
        cgs = list(next(iter(per.values()))["cpus"]) if per else []
        rows = [[s] + [_cell(row["cpus"].get(c), "{:.2f}") if row["status"] == "ok" else "-" for c in cgs]
                for s, row in per.items()]
        out.append("\nCPUs used per cgroup during the measurement")
        out.append(_table(["scheduler"] + cgs, rows))
        stall = stall_line(per)
        if stall:
            out.append("\n" + stall[0].upper() + stall[1:])
        rows = [[s, c, f["misses"], f["picks"], f"{100 * f['misses'] / f['picks']:.2f}" if f["picks"] else "-",
                 "-" if f.get("wake_starts") is None else f"{f['wake_misses']} / {f['wake_starts']}",
                 f.get("max_lateness_window_us", "-"), f["max_lateness_us"],
                 worst_start_text(f.get("worst_start"), f.get("worst_start_late_us"))]
                for s, row in per.items() for c, f in row.get("fdl_stats", {}).items() if f["picks"] or f["misses"]]
        if rows:
            out.append("\nscx_fdl's own figures (scx_fdl dump): deadline misses and picks in the windows, worst "
                       "lateness in the windows (the probes' measurement, their start and exit left out: exact, or an upper "
                       "bound within 2x) and since it started")
            out.append(_table(["scheduler", "cgroup", "misses", "starts", "miss %", "wake-ups missed / started",
                               "worst late in windows (us)",
                               "worst late since start (us)", "its start (the window's worst)"],
                              rows))
        errs = [(s, e) for s, row in per.items() for e in row["errors"]]
        if errs:
            out.append("\nProblems")
            out += [f"  {s}: {e[:300]}" for s, e in errs]
    events = meta.get("sched_events") or []
    if events:
        out.append("\nSchedulers: time to reach enabled (s), exit status on SIGTERM, per repeat")
        for s in sorted({e["sched"] for e in events}, key=[e["sched"] for e in events].index):
            mine = [e for e in events if e["sched"] == s]
            out.append(f"  {s}: " + ", ".join(
                f"{e['start_s']} s exit {e['exit'] or '-'}" if not e.get("error") else "failed to load" for e in mine))
    out += rig_lines(meta.get("rig"))
    for r in meta.get("restarts") or []:
        out.append(f"Restart: {r}")
    if meta.get("crash"):
        out.append(f"The run ended with a guest kernel crash: {meta['crash']}")
    out.append("\n" + p99_summary(agg))
    return "\n".join(out) + "\n"


# A boot whose rig check finds more of its timer wake-ups than this late is flagged in the report.
RIG_LATE_FRACTION = 0.01


def rig_late_fraction(r):
    """The share of a rig check's timer wake-ups over 1 ms late; None where it has no figures."""
    n = r.get("samples") or 0
    return None if r.get("error") or not n else r.get("over_1ms", 0) / n


def rig_lines(rigs):
    """The report's lines on each boot's rig check (bench.sh's rig_check: cyclictest at real-time
    priority on every CPU before any step): how late this machine woke an idle CPU for a timer.
    Over 1 % of the wake-ups a millisecond late, the boot's tails are the host's as much as a
    scheduler's (docs/benchmarks.md, 2026-12-02): compare schedulers within it only."""
    out = []
    for r in rigs or []:
        if r.get("error"):
            out.append(f"Rig check, boot {r.get('boot', 1)}: none ({r['error']})")
            continue
        n = r.get("samples") or 0
        late = r.get("over_1ms", 0)
        frac = rig_late_fraction(r) or 0.0
        line = (f"Rig check, boot {r.get('boot', 1)}: an idle CPU woken for a timer (cyclictest, real-time, "
                f"{r.get('interval_us', 0) // 1000} ms period on each of {r.get('cpus', 0)} CPUs for "
                f"{r.get('secs', 0)} s): {late} of {n} wake-ups over 1 ms late ({100 * frac:.1f} %), "
                f"worst {r.get('max_us', 0) / 1000:.1f} ms")
        if r.get("expected") and n < 0.9 * r["expected"]:
            line += f"; {r['expected'] - n} of {r['expected']} periods missed"
        if frac > RIG_LATE_FRACTION:
            line += ": a noisy boot, its tails are the host's as much as any scheduler's"
        out.append(line)
    return out


def p99_summary(agg):
    """One table of p99 (median over repeats) for every scheduler, variant and cgroup."""
    cols = [(v, n) for v, per in agg["variants"].items()
            for n in next(iter(per.values()))["latency"]] if agg["variants"] else []
    scheds = list(next(iter(agg["variants"].values())).keys()) if agg["variants"] else []
    rows = []
    for s in scheds:
        r = [s]
        for v, n in cols:
            row = agg["variants"][v][s]
            r.append(_cell(row["latency"].get(n, {}).get("p99")) if row["status"] == "ok" else "n/a")
        rows.append(r)
    return f"p99 wake-up latency (us), {agg['scenario']}\n" + _table(["scheduler"] + [f"{v}:{n}" for v, n in cols], rows)


def write_csv(agg, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "variant", "scheduler", "status", "what", "name", "metric", "median", "min",
                    "max", "n", "ratio_to_eevdf"])
        for v, per in agg["variants"].items():
            for s, row in per.items():
                st = row["status"]
                for n, lat in row["latency"].items():
                    for k, x in lat.items():
                        w.writerow([agg["scenario"], v, s, st, "latency_us", n, k, x["median"], x["min"], x["max"],
                                    x["n"], row["p99_ratio_to_eevdf"].get(n) if k == "p99" else ""])
                for n, x in (row.get("timer") or {}).items():
                    if x:
                        w.writerow([agg["scenario"], v, s, st, "timer_us", n, "p99", x["p99"]["median"],
                                    x["p99"]["min"], x["p99"]["max"], x["n"], ""])
                        w.writerow([agg["scenario"], v, s, st, "timer_us", n, "worst", x["max"], "", "", x["n"], ""])
                for n, x in (row.get("wake") or {}).items():
                    for k in ("p50", "p99"):
                        if x:
                            w.writerow([agg["scenario"], v, s, st, "wake_us", n, k, x[k]["median"], x[k]["min"],
                                        x[k]["max"], x[k]["n"], ""])
                    if x and x.get("late") is not None:
                        # Summed over the n repeats: the wake-ups later than the deadline, of all.
                        w.writerow([agg["scenario"], v, s, st, "wake_late", n, f"over_{x['late_after_us']}_us",
                                    x["late"], "", "", x["n"], ""])
                        w.writerow([agg["scenario"], v, s, st, "wake_late", n, "wake_ups", x["samples"], "", "",
                                    x["n"], ""])
                for n, t in row["throughput"].items():
                    w.writerow([agg["scenario"], v, s, st, "throughput", n, t["unit"], t["median"], t["min"],
                                t["max"], t["n"], t["ratio_to_eevdf"]])
                for c, x in row["cpus"].items():
                    w.writerow([agg["scenario"], v, s, st, "cpus", c, "cpus", x["median"], x["min"], x["max"],
                                x["n"], ""])
                for c, f in row.get("fdl_stats", {}).items():
                    for k in ("misses", "picks", "max_lateness_us", "wake_starts", "wake_misses"):
                        if f.get(k) is not None:
                            w.writerow([agg["scenario"], v, s, st, "fdl_stats", c, k, f[k], "", "", f["n"], ""])
                if not row["latency"] and not row["throughput"]:
                    w.writerow([agg["scenario"], v, s, st, "", "", "", "", "", "", 0, ""])


def write_json(agg, meta, path):
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": agg}, f, indent=1)


def plots(agg, out_dir):
    """PNG per variant: one panel per cgroup, the percentile curve of each scheduler (median over
    repeats, bars from min to max). Returns the files written, or a reason if none."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib missing: run bench/setup.sh (plots skipped)"
    files = []
    keys = [stats.pkey(p) for p in stats.PERCENTILES]
    for v, per in agg["variants"].items():
        names = sorted({n for row in per.values() for n in row["latency"]},
                       key=lambda n: list(next(iter(per.values()))["latency"]).index(n)
                       if n in next(iter(per.values()))["latency"] else 99)
        if not names:
            continue
        fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 4), squeeze=False, sharey=True)
        lowest = None
        for ax, n in zip(axes[0], names):
            for s, row in per.items():
                lat = row["latency"].get(n)
                if row["status"] != "ok" or not lat or lat["p50"]["median"] is None:
                    continue
                y = [lat[k]["median"] for k in keys]
                err = [[lat[k]["median"] - lat[k]["min"] for k in keys], [lat[k]["max"] - lat[k]["median"] for k in keys]]
                ax.errorbar(range(len(keys)), y, yerr=err, marker="o", ms=3, capsize=2, label=s)
                low = min(lat[k]["min"] for k in keys)
                lowest = low if lowest is None else min(lowest, low)
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels([k[1:] for k in keys])
            ax.set_xlabel("percentile")
            ax.set_yscale("log")
            ax.set_title(f"cgroup {n}")
            ax.grid(True, which="both", alpha=0.3)
        if lowest:
            axes[0][0].set_ylim(bottom=lowest / 2)
        axes[0][0].set_ylabel("wake-up latency (us)")
        axes[0][-1].legend(fontsize=8)
        fig.suptitle(f"{agg['scenario']} / {v}")
        fig.tight_layout()
        f = os.path.join(out_dir, f"{agg['scenario']}-{v}.png")
        fig.savefig(f, dpi=100)
        plt.close(fig)
        files.append(f)
    return files
