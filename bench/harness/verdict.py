"""The "Done when" rules of issue 10, applied to one matrix cell: one scenario variant measured under
EEVDF and scx_fdl on the same boot. Pure functions of the aggregated results (report.aggregate),
so that they can be checked on synthetic numbers.

A cell is "within" when the guarantees of its deadline cgroups fit the machine
(sum(guaranteed_shares) / 1024 <= vCPUs, and those of cgroups bound to some CPUs fit those CPUs)
and every deadline cgroup used less CPU than its guarantee (the larger of its use under EEVDF and
under scx_fdl); otherwise it is "above". Rules:
  within:   each deadline cgroup's p99 <= deadline_rr + 2 ms and <= 0.5 x EEVDF's p99; the tighter
            deadline has the lower p99; every probe has samples;
  above:    no probe's p99 above 1.2 x EEVDF's;
  fair:     where the guarantees leave the cgroups without parameters their EEVDF share (what the
            guarantees entitle the deadline cgroups to beyond their EEVDF use fits in the CPU time
            EEVDF left idle), each such probe's p99 <= 1.2 x EEVDF's and the antagonist's
            throughput >= 90 % of EEVDF's, judged as CPU (>= 90 % of the lesser of its EEVDF CPU
            and its max-min fair entitlement) and as throughput per CPU second (>= 90 %): see
            throughput_rules();
  lateness: scx_fdl's worst lateness in each deadline cgroup within the measurement windows <= 5 x its deadline_rr;
  misses:   in each deadline cgroup whose guarantee fits (all guarantees fit the machine, and its
            use is below its own), fewer than 1 % of its wake-ups miss: scx_fdl's nr_wake_misses <
            1 % of nr_wake_starts (a task's first start after it became runnable, however it got the
            CPU). The issue counts wake-ups; every start after a wait (nr_picks, nr_misses) also
            holds the resumptions of work preempted mid-burst, shown beside it. From an scx_fdl
            without wake-up counts, the rule falls back to all starts.
"""

from .scenario import cpu_set, duration_ns
from .report import worst_start_text

SHARES_PER_CPU = 1024
WAKEUP_FLOOR_US = 2000        # the VM's wake-up floor, allowed on top of deadline_rr
WITHIN_EEVDF_RATIO = 0.5
ABOVE_EEVDF_RATIO = 1.2
FAIR_EEVDF_RATIO = 1.2
THROUGHPUT_RATIO = 0.9
LATENESS_RRS = 5
MISS_FRACTION = 0.01
IDLE_SLACK_CPUS = 0.05        # measurement noise in "fits in EEVDF's idle time"


def _med(x):
    return x.get("median") if x else None


def _p99(row, name):
    return _med(row["latency"].get(name, {}).get("p99"))


def _cpus(row, cg):
    return _med(row["cpus"].get(cg))


def cell(sc, variant, per, fdl="scx_fdl", base="eevdf"):
    """Verdict of one cell: {"verdict": PASS|FAIL|n.a., "class": within|above|None, "rules":
    [(rule, ok, detail)], "why": reason if n.a.}. sc: the scenario; per: agg["variants"][variant]."""
    out = {"verdict": "n.a.", "class": None, "rules": [], "why": None}
    f, e = per.get(fdl), per.get(base)
    for s, row in ((fdl, f), (base, e)):
        if not row or row["status"] != "ok":
            out["why"] = f"{s} not measured: {row['status'] if row else 'not in the run'}"
            return out
    probes = [w for w in sc.workloads_in(variant) if w.kind == "probe"]
    deadline = [c for c in sc.cgroups.values() if c.deadline_rr is not None]
    rr_us = {c.name: duration_ns(c.deadline_rr) / 1000 for c in deadline}
    rules = out["rules"]

    def rule(name, ok, detail):
        rules.append((name, bool(ok), detail))

    # The class: do the guarantees fit, and did every deadline cgroup stay below its guarantee?
    guar = {c.name: (c.guaranteed_shares or 0) / SHARES_PER_CPU for c in deadline}
    use = {}
    for c in deadline:
        u = [x for x in (_cpus(f, c.name), _cpus(e, c.name)) if x is not None]
        if not u:
            out["why"] = f"no CPU use measured for {c.name}"
            return out
        use[c.name] = max(u)
    fits = sum(guar.values()) <= sc.vcpus
    # Deadline cgroups whose probes may run on some CPUs only (a workload's cpus): their guarantees
    # must also fit the CPUs they may use, a guarantee on one CPU being no more than that CPU.
    bound = {}
    for w in probes:
        if w.cpus and w.cgroup in guar:
            bound[w.cgroup] = bound.get(w.cgroup, set()) | cpu_set(w.cpus)
    if bound:
        fits = fits and sum(guar[c] for c in bound) <= len(set().union(*bound.values()))
    below = all(use[c] < guar[c] for c in guar)
    out["class"] = "within" if deadline and fits and below else "above"
    out["use"] = {c: (round(use[c], 3), round(guar[c], 3)) for c in guar}

    p99 = {w.name: (_p99(f, w.name), _p99(e, w.name)) for w in probes}
    for w in probes:
        if None in p99[w.name]:
            rule("probe measured", False, f"{w.name}: no p99 under {fdl if p99[w.name][0] is None else base}")
    if any(not ok for _, ok, _ in rules):
        out["verdict"] = "FAIL"
        return out
    by_cg = {w.cgroup: w.name for w in probes}
    stats = f.get("fdl_stats") or {}

    if out["class"] == "within":
        for c in deadline:
            n = by_cg.get(c.name)
            if n is None:
                continue
            mine, ref = p99[n]
            rule("p99 <= deadline_rr + 2 ms", mine <= rr_us[c.name] + WAKEUP_FLOOR_US,
                 f"{n}: {mine:.0f} us vs {rr_us[c.name] + WAKEUP_FLOOR_US:.0f}")
            rule("p99 <= 0.5 x EEVDF", mine <= WITHIN_EEVDF_RATIO * ref, f"{n}: {mine:.0f} vs EEVDF {ref:.0f} us")
        ordered = sorted((c for c in deadline if c.name in by_cg), key=lambda c: rr_us[c.name])
        for a, b in zip(ordered, ordered[1:]):
            if rr_us[a.name] < rr_us[b.name]:
                pa, pb = p99[by_cg[a.name]][0], p99[by_cg[b.name]][0]
                rule("tighter deadline, lower p99", pa < pb, f"{a.name} {pa:.0f} < {b.name} {pb:.0f} us")
        for w in probes:
            samples = _med(f["latency"][w.name].get("samples"))
            rule("nothing starved", samples and samples > 0, f"{w.name}: {samples} samples")
    else:
        for w in probes:
            mine, ref = p99[w.name]
            rule("p99 <= 1.2 x EEVDF (above)", mine <= ABOVE_EEVDF_RATIO * ref,
                 f"{w.name}: {mine:.0f} vs EEVDF {ref:.0f} us")

    # Cgroups without parameters: held to EEVDF only where the guarantees need nothing of theirs.
    plain = [c for c in sc.cgroups.values() if not c.has_fdl()]
    extra = sum(max(0.0, min(guar[c.name], _cpus(f, c.name) or 0) - (_cpus(e, c.name) or 0)) for c in deadline)
    idle = sc.vcpus - sum(_cpus(e, c) or 0 for c in sc.cgroups)
    out["fair_applies"] = extra <= idle + IDLE_SLACK_CPUS
    out["fair_detail"] = f"guarantees beyond EEVDF use {extra:.2f} CPU, EEVDF idle {idle:.2f} CPU"
    where = [f"{s} {m['idle']:.2f} / {m['sched']:.2f}" for s, row in ((base, e), (fdl, f))
             for m in [{k: _med(v) for k, v in row.get("machine", {}).items()}]
             if None not in (m.get("idle"), m.get("sched"))]
    if where:
        out["fair_detail"] += "; CPUs idle / used by the scheduler's process: " + ", ".join(where)
    if out["fair_applies"]:
        for c in plain:
            n = by_cg.get(c.name)
            # Above, every probe is held to the same 1.2 x already.
            if n is not None and out["class"] == "within":
                mine, ref = p99[n]
                rule("no-parameter p99 <= 1.2 x EEVDF", mine <= FAIR_EEVDF_RATIO * ref,
                     f"{n}: {mine:.0f} vs EEVDF {ref:.0f} us")
        for w in sc.workloads_in(variant):
            if w.name in f["throughput"]:
                throughput_rules(rule, sc, w, f, e, guar)
            elif w.kind == "hogs":
                # Busy loops: their work is their CPU time (a benchmark's own count of work per CPU
                # second moved with the emulator: stress-ng's int64 method read 161-484 bogo-ops/s
                # under EEVDF at 1.1 CPU in four boots of 2026-12-05).
                cpu_rule(rule, sc, w, f, e, guar)

    for c in deadline:
        s = stats.get(c.name)
        if not s:
            rule("worst lateness <= 5 x deadline_rr", False, f"{c.name}: no scx_fdl figures (scx_fdl dump)")
            continue
        # Per cgroup, while its guarantee fits (even if the other one's does not).
        if fits and use[c.name] < guar[c.name]:
            if s.get("wake_starts") is not None:
                ws, wm = s["wake_starts"], s["wake_misses"]
                rule("wake-ups' misses < 1 %", wm < MISS_FRACTION * ws,
                     f"{c.name}: {wm} of {ws} wake-ups (all starts: {s['misses']} of {s['picks']})")
            elif s["picks"] or s["misses"]:
                # Misses without picks: the denominator is missing (an scx_fdl without nr_picks).
                rule("misses < 1 % of starts", s["misses"] < MISS_FRACTION * s["picks"],
                     f"{c.name}: {s['misses']} of {s['picks']}" + ("" if s["picks"] else " (no starts counted)"))
        # Within the measurement windows (report.fdl_stats), not since scx_fdl started.
        late = s.get("max_lateness_window_us", s["max_lateness_us"])
        # Which start it was, where the report has it (report.fdl_stats' worst_start).
        start = s.get("worst_start")
        start = f"; {worst_start_text(start, s.get('worst_start_late_us'))}" if start else ""
        rule("worst lateness <= 5 x deadline_rr", late <= LATENESS_RRS * rr_us[c.name],
             f"{c.name}: {late} us vs {LATENESS_RRS * rr_us[c.name]:.0f}{start}")
    out["verdict"] = "PASS" if all(ok for _, ok, _ in rules) else "FAIL"
    return out


def entitlement(sc, mine, use, guar):
    """The CPUs cgroup `mine`, with unbounded demand, is entitled to when every other cgroup asks
    for what it used (use: CPUs per cgroup) under max-min fairness by cpu.weight, each deadline
    cgroup at least its guarantee (guar: CPUs): the water level L where
    sum(min(use_i, max(L * w_i, g_i))) + L * w_mine = vCPUs. Use beyond a cgroup's fair level and
    its guarantee is not entitled, so a scheduler that over-serves another cgroup gains nothing."""
    others = [(use.get(c.name) or 0.0, c.cpu_weight, guar.get(c.name, 0.0))
              for c in sc.cgroups.values() if c.name != mine]
    w_mine = sc.cgroups[mine].cpu_weight

    def others_take(level):
        return sum(min(u, max(level * w, g)) for u, w, g in others)

    lo, hi = 0.0, sc.vcpus / w_mine
    for _ in range(60):        # what all take is monotonic in the level: bisect
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if others_take(mid) + mid * w_mine <= sc.vcpus else (lo, mid)
    return sc.vcpus - others_take(lo)


def throughput_rules(rule, sc, w, f, e, guar):
    """The antagonist throughput rule of issue 10 ("antagonist throughput >= 90 % of EEVDF's, where
    the guarantees leave it its EEVDF share"), applied as two measurable parts. Throughput follows
    the CPU time a batch workload gets; where EEVDF left the other cgroups short of their fair share
    (latency-bound probes that waited, so ran fewer rounds), matching its throughput would mean
    taking that share back from them. So:
      - CPU: the antagonist gets >= 90 % of the lesser of its CPU under EEVDF and its max-min fair
        entitlement given what the others used under scx_fdl (entitlement());
      - efficiency: its throughput per CPU second >= 90 % of EEVDF's (the cost of the scheduler:
        preemptions, migrations, callbacks).
    Where it got at least its EEVDF CPU the efficiency part is the raw ratio's rule in effect."""
    t, base = f["throughput"][w.name], e["throughput"].get(w.name)
    r = t.get("ratio_to_eevdf")
    mine, ref = _cpus(f, w.cgroup), _cpus(e, w.cgroup)
    if r is None or not mine or not ref or not base or not base.get("median"):
        rule("antagonist throughput >= 90 % of EEVDF", r is not None and r >= THROUGHPUT_RATIO,
             f"{w.name}: {'-' if r is None else f'{r:.2f}'} x EEVDF (no CPU use measured)")
        return
    cpu_rule(rule, sc, w, f, e, guar, f" (throughput {r:.2f} x EEVDF)")
    eff = (t["median"] / mine) / (base["median"] / ref)
    rule("antagonist throughput per CPU >= 90 % of EEVDF", eff >= THROUGHPUT_RATIO,
         f"{w.name}: {eff:.2f} x EEVDF's per CPU second (throughput {r:.2f} x EEVDF)")


def cpu_rule(rule, sc, w, f, e, guar, note=""):
    """The CPU part of the antagonist rule (throughput_rules): workload w's cgroup gets >= 90 % of the
    lesser of its CPU under EEVDF and its max-min fair entitlement given what the others used
    under scx_fdl. Alone for busy loops, whose work is their CPU time."""
    mine, ref = _cpus(f, w.cgroup), _cpus(e, w.cgroup)
    if mine is None or not ref:
        rule("antagonist CPU >= 90 % of min(EEVDF's, fair entitlement)", False,
             f"{w.name}: no CPU use measured for cgroup {w.cgroup}")
        return
    use = {c: _cpus(f, c) for c in sc.cgroups}
    ent = entitlement(sc, w.cgroup, use, guar)
    want = min(ref, ent)
    rule("antagonist CPU >= 90 % of min(EEVDF's, fair entitlement)", mine >= THROUGHPUT_RATIO * want,
         f"{w.name}: {mine:.2f} CPUs vs EEVDF {ref:.2f}, entitled {ent:.2f}{note}")
