#!/usr/bin/env bash
# The benchmark harness checks itself (exit 0 = pass); a test of the instrument, not a benchmark:
#   1. statistics on known samples (harness: medians, spread, ratios, schbench parsing; fdl-probe:
#      its percentiles), scenario errors that name file, line and field, the report's rows;
#   2. a bad scenario file is refused by bench/run.sh before anything runs, with a precise error,
#      also for the matrix's keys; issue 10's verdict rules on synthetic results; the matrix spec;
#   3. the tiny scenario end to end in the VM under EEVDF and scx_fdl (about 2 minutes; parameters by
#      scx_fdl set, the cgroup created after start), and the report, JSON, CSV and plots it must
#      produce, with scx_fdl's own figures and the boot's rig check.
# Usage: bench/selftest.sh [--no-vm]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${FDL_CACHE:-$root/.cache}/bench/venv/bin/python
[[ -x $py ]] || py=python3
failed=0 npass=0 nfail=0
ok() { echo "bench-selftest: PASS $*"; npass=$((npass + 1)); }
bad() { echo "bench-selftest: FAIL $*"; failed=1; nfail=$((nfail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if PYTHONPATH=$root "$py" -m unittest -q bench.harness.test_harness; then ok "harness unit tests"
else bad "harness unit tests"; fi
if BPF_CLANG=${BPF_CLANG:-clang-19} cargo test -q --release --locked -p fdl-probe > "$tmp/cargo.log" 2>&1; then
    ok "fdl-probe percentiles of known samples (cargo test -p fdl-probe)"
else
    bad "cargo test -p fdl-probe:"; tail -20 "$tmp/cargo.log"
fi

cat > "$tmp/bad.toml" <<'TOML'
[cgroup.fdl]
deadline_wakeup = "500us"

[[workload]]
kind = "probe"
cgroup = "fdl"
TOML
out=$(bench/run.sh "$tmp/bad.toml" 2>&1)
rc=$?
want="$tmp/bad.toml:2: [cgroup.fdl] deadline_wakeup: set but deadline_rr is not"
if [[ $rc == 2 && $out == *"$want"* ]]; then ok "bad scenario refused: $out"
else bad "bad scenario: want exit 2 and '$want', got exit $rc: $out"; fi

# The matrix's scenario keys are refused as precisely as the others, before anything runs.
printf 'fdl_params = "sett"\n' | cat - "$tmp/bad.toml" > "$tmp/bad-params.toml"
out=$(bench/run.sh "$tmp/bad-params.toml" 2>&1)
rc=$?
want="$tmp/bad-params.toml:1: fdl_params: 'sett': want \"config\" (scx_fdl --config) or \"set\""
if [[ $rc == 2 && $out == *"$want"* ]]; then ok "bad fdl_params refused: $out"
else bad "bad fdl_params: want exit 2 and '$want', got exit $rc: $out"; fi

# issue 10's verdict rules on synthetic results, and the matrix spec (pure Python, no VM).
if PYTHONPATH=$root "$py" -m unittest -q bench.harness.test_harness.Verdict bench.harness.test_harness.Matrix \
        > "$tmp/verdict.log" 2>&1; then
    ok "matrix verdicts on synthetic results and the issue10 spec"
else
    bad "matrix verdicts:"; tail -20 "$tmp/verdict.log"
fi
if out=$(bench/matrix.sh --check 2>&1); then ok "bench/matrix.sh --check: ${out##*$'\n'}"
else bad "bench/matrix.sh --check: $out"; fi

# bench/insn-profile.sh's instruments: the QEMU plugin builds against the API it declares, and the
# report attributes synthetic block counts to the right symbols (a program's own code per run, a
# subprogram without runs, a kernel function; a block before every symbol is left out).
if cc -O2 -shared -fPIC -fvisibility=hidden -Wall -Werror -o "$tmp/insn_profile.so" \
        bench/insn-profile/insn_profile.c 2> "$tmp/cc.log"; then
    ok "insn-profile plugin builds"
else
    bad "insn-profile plugin:"; cat "$tmp/cc.log"
fi
# (kallsyms read while the programs are loaded lists them too: the BPFSYM lines win.)
printf 'ffffffff81000000 T schedule\nffffffff81000100 T scx_bpf_now\nffffffffc0000000 t bpf_prog_aaaa_fdl_running\t[bpf]\n' |
    gzip -c | base64 | sed 's/^/KSYMS /' > "$tmp/prof.log"
cat >> "$tmp/prof.log" <<'LOG'
BPFSYM ffffffffc0000000 t bpf_prog_aaaa_fdl_running	[bpf]
BPFSYM ffffffffc0000400 t bpf_prog_bbbb_fdl_scan_queues	[bpf]
BPFPROG [{"id":7,"tag":"aaaa","name":"fdl_running","run_cnt":10}]
LOG
printf 'ffffffffc0000010 5 40\nffffffffc0000020 3 20\nffffffffc0000410 7 2\nffffffff81000104 9 100\nffffffff80000000 1 5\n' > "$tmp/prof.blocks"
out=$(python3 bench/insn-profile.py "$tmp/prof.log" "$tmp/prof.blocks" 2>&1)
if grep -Eq '^bpf_prog_aaaa_fdl_running +10 +260 +26 +6.0$' <<< "$out" &&
        grep -Eq '^bpf_prog_bbbb_fdl_scan_queues +0 +14 +- +-$' <<< "$out" &&
        grep -Eq '^all BPF code: 27 instructions and 6 blocks per task started \(10 started\)$' <<< "$out" &&
        grep -Eq '^scx_bpf_now +900$' <<< "$out" && ! grep -q '^schedule' <<< "$out"; then
    ok "insn-profile report on synthetic counts (fdl_running 260 instructions and 60 blocks in 10 runs: 26 and 6.0 per run; all BPF code 27 and 6 per task started)"
else
    bad "insn-profile report: $out"
fi
# --lines: instructions at the JIT line record at or before them in the same program (two lines
# of fdl_running; an instruction of scan_queues before its first record is unattributed), the
# guest tool builds.
if cc -O2 -Wall -Werror -o "$tmp/jit_lines" bench/insn-profile/jit_lines.c 2> "$tmp/cc.log"; then
    ok "insn-profile's jit_lines builds"
else
    bad "jit_lines:"; cat "$tmp/cc.log"
fi
printf 'ffffffffc0000010 main.bpf.c 53\nffffffffc0000020 env.h 216\nffffffffc0000420 sched.h 645\n' |
    gzip -c | base64 | sed 's/^/JITLINES /' >> "$tmp/prof.log"
printf 'ffffffffc0000010 3 40 0,4,16\nffffffffc0000410 2 2 0,16\nffffffff81000104 9 100 0\n' > "$tmp/prof.blocks"
out=$(python3 bench/insn-profile.py --lines "$tmp/prof.log" "$tmp/prof.blocks" 2>&1)
if grep -Eq '^main.bpf.c:53 +80 +8.0 ' <<< "$out" && grep -Eq '^env.h:216 +40 +4.0 ' <<< "$out" &&
        grep -Eq '^sched.h:645 +2 +0.2 ' <<< "$out" && grep -Eq '^\?:0 +2 ' <<< "$out"; then
    ok "insn-profile --lines on synthetic counts (main.bpf.c:53 80, env.h:216 40 instructions)"
else
    bad "insn-profile --lines: $out"
fi
# --base: a longer run less a shorter one of the same scheduler, per task started in between (10
# -> 30 runs of fdl_running): scx_bpf_now 100 -> 500 executions of 9 instructions is 180 and 20.0
# per start; the program's own 40 -> 120 blocks of 5 is 20 and 4.0; a kernel function only the
# base ran (boot work that varies) shows below zero.
sed 's/"run_cnt":10/"run_cnt":30/' "$tmp/prof.log" > "$tmp/prof2.log"
printf 'ffffffffc0000010 5 40\nffffffff81000104 9 100\nffffffff81000000 2 50\n' > "$tmp/prof.blocks"
printf 'ffffffffc0000010 5 120\nffffffff81000104 9 500\n' > "$tmp/prof2.blocks"
out=$(python3 bench/insn-profile.py "$tmp/prof2.log" "$tmp/prof2.blocks" --base "$tmp/prof.log" "$tmp/prof.blocks" 2>&1)
if grep -q '^Steady state: 20 tasks started between the base run (10) and this one (30)$' <<< "$out" &&
        grep -Eq '^scx_bpf_now +180.0 +20.0$' <<< "$out" && grep -Eq '^bpf:fdl_running +20.0 +4.0$' <<< "$out" &&
        grep -Eq '^schedule +-5.0 +-2.5$' <<< "$out" &&
        grep -q '^per task started, all kernel code: 195 instructions, 22 blocks; of them BPF code: 20 instructions, 4 blocks$' <<< "$out"; then
    ok "insn-profile --base on synthetic counts (scx_bpf_now 180 instructions per task started, fdl_running's own 20)"
else
    bad "insn-profile --base: $out"
fi

# bench/split-trace.py on a synthetic log of two traced runs in one boot: one log per run, each
# with the boot's lines before the first run (the rig check's), its own THREADS, FDL-LATENCY and TR.
{
    echo "RIG samples=4000 over_1ms=3 max_us=1500 periods=0"
    printf 'THREADS cfs 10 11 12\nTHREADS loose 20 21 22\nFDL-LATENCY scx_fdl cfs p50=1\nTR a\n'
    printf 'THREADS cfs 30 31 32\nTHREADS loose 40 41 42\nFDL-LATENCY scx_flash cfs p50=2\nTR b\nTR c\n'
} > "$tmp/multi.log"
out=$(python3 bench/split-trace.py "$tmp/multi.log" 2>&1)
if [[ $(cat "$tmp/multi.run1-scx_fdl.log" 2>/dev/null) == "$(printf 'RIG samples=4000 over_1ms=3 max_us=1500 periods=0\nTHREADS cfs 10 11 12\nTHREADS loose 20 21 22\nFDL-LATENCY scx_fdl cfs p50=1\nTR a')" &&
        $(grep -c . "$tmp/multi.run2-scx_flash.log" 2>/dev/null) == 6 &&
        $(grep -c '^TR ' "$tmp/multi.run2-scx_flash.log") == 2 ]]; then
    ok "split-trace cuts a two-run log into its runs, the rig check's line in each"
else
    bad "split-trace: $out"
fi

# bench/run-ratios.py on a synthetic raw.jsonl: p99 over EEVDF's of the same repeat and load, over
# cfs's in the same measurement, and the mean of the latter per scheduler and load.
mkdir -p "$tmp/rr"
"$py" - "$tmp/rr/raw.jsonl" <<'PY'
import json, sys
def run(sched, rep, cfs, loose):
    return {"kind": "FDL-BENCH", "sched": sched, "variant": "quiet", "repeat": rep,
            "probes": {"cfs": {"p99": cfs}, "loose": {"p99": loose}}}
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"kind": "FDL-BENCH-RIG", "over_1ms": 3}) + "\n")
    for r in (run("eevdf", 1, 1000, 2000), run("scx_fdl", 1, 1000, 1000),
              run("eevdf", 2, 2000, 2000), run("scx_fdl", 2, 1000, 3000)):
        f.write(json.dumps(r) + "\n")
PY
out=$(python3 bench/run-ratios.py --probes cfs,loose "$tmp/rr" 2>&1)
if grep -Eq '^  quiet +r1 +scx_fdl +1000/1000 +1.00/0.50 +loose 1.00$' <<< "$out" &&
        grep -Eq '^  quiet +r2 +scx_fdl +1000/3000 +0.50/1.50 +loose 3.00$' <<< "$out" &&
        grep -Eq '^  mean loose / cfs, quiet +scx_fdl +2.00 \(1.00, 3.00\)$' <<< "$out"; then
    ok "run-ratios on a synthetic run (loose over cfs 1.00 and 3.00 in the same measurement, mean 2.00)"
else
    bad "run-ratios: $out"
fi

# bench/cpu-split.py on a synthetic raw.jsonl: CPUs per cgroup, idle and the scheduler's process
# over the window, wake-ups per second per probe; of a measurement made twice, the last.
mkdir -p "$tmp/cs"
"$py" - "$tmp/cs/raw.jsonl" <<'PY'
import json, sys
def run(sched, antagonist_s, idle_s, samples):
    return {"kind": "FDL-BENCH", "sched": sched, "variant": "antagonist", "repeat": 1, "window_s": 20,
            "cpu_usec": {"antagonist": antagonist_s * 1e6, "fdl": 6e6},
            "machine_usec": {"idle": idle_s * 1e6, "sched": 0.2e6},
            "probes": {"fdl": {"p99": 1000, "samples": samples, "runtime_secs": 20}}}
with open(sys.argv[1], "w") as f:
    for r in (run("eevdf", 17, 1, 6000), run("scx_fdl", 10, 9, 1), run("scx_fdl", 14, 2, 6800)):
        f.write(json.dumps(r) + "\n")
PY
out=$(python3 bench/cpu-split.py "$tmp/cs" 2>&1)
if grep -Eq '^  antagonist r1 eevdf +CPUs: antagonist 0.85 fdl 0.30; idle 0.050, scheduler 0.010; wake-ups/s: fdl 300$' <<< "$out" &&
        grep -Eq '^  antagonist r1 scx_fdl +CPUs: antagonist 0.70 fdl 0.30; idle 0.100, scheduler 0.010; wake-ups/s: fdl 340$' <<< "$out" &&
        [ "$(grep -c scx_fdl <<< "$out")" = 1 ]; then
    ok "cpu-split on a synthetic run (CPUs, idle, the scheduler's process, wake-ups/s; the last of a pair measured again)"
else
    bad "cpu-split: $out"
fi

# scx_fdl's figures around a window (bench/guest/bench.sh fdl_dump, fdl_stats_json) with the guest's
# busybox awk, on two synthetic dumps: misses and the window's worst lateness from the buckets (the
# worst since start did not grow), none for a cgroup without buckets or misses; the wake-ups' starts
# and misses, -1 for a cgroup whose dumps have none; the start of a worst lateness that grew in the
# window (d3's, its name from the threads listed during the run), none where it did not.
mkdir -p "$tmp/bb" "$tmp/fd"
ln -s "$(command -v busybox)" "$tmp/bb/awk"
"$py" - "$tmp/fd" <<'PY'
import json, sys
def dump(misses, hist):
    return {"scheduler": {}, "cgroups": [
        {"path": "/sys/fs/cgroup/fdl", "nr_misses": misses, "nr_picks": 100 + misses, "max_lateness_ns": 87000000,
         "lateness": hist, "nr_wake_starts": 50 + misses // 2, "nr_wake_misses": misses // 2},
        {"path": "/sys/fs/cgroup/loose", "nr_misses": 0, "nr_picks": 5, "max_lateness_ns": 0, "lateness": []},
        {"path": "/sys/fs/cgroup/d3", "nr_misses": misses, "nr_picks": 100, "max_lateness_ns": 1500000 * misses,
         "lateness": hist, "nr_wake_starts": 50, "nr_wake_misses": 0, "max_late_pid": 70 + misses,
         "max_late_comm": "", "max_late_woke": misses > 1, "max_late_wait_ns": 1600000 * misses}]}
h = [0] * 24
h[17] = 1                      # the 87 ms miss, before the window
after = list(h)
after[10] += 2                 # [512, 1024) us
after[12] += 3                 # [2048, 4096) us: the window's worst is at most 4096 us
for name, d in (("before", dump(1, h)), ("after", dump(6, after))):
    open(f"{sys.argv[1]}/{name}.json", "w").write(json.dumps(d, indent=2))
# The thread had exited by the dump after (its name is empty there): bench.sh's own list names it.
open(f"{sys.argv[1]}/threads", "w").write("75 probe-m0\n76 probe-w0.1\n")
PY
out=$(cd "$tmp/fd" && PATH="$tmp/bb:$PATH" CG=/sys/fs/cgroup OUT="$tmp/fd" BENCH_CGROUPS="loose fdl d3" FDL_CLI=scx_fdl bash -c '
    log_tail() { :; }
    eval "$(sed -n "/^# fdl_dump FILE/,/^# prepare_params SCHED/p" "$0")"
    scx_fdl() { cat "$OUT/$which.json"; }
    which=before fdl_dump "$OUT/dump.before" && which=after fdl_dump "$OUT/dump.after" && fdl_stats_json
' "$root/bench/guest/bench.sh" 2>&1)
want='{"fdl": {"misses": 5, "picks": 5, "max_lateness_us": 87000, "max_lateness_before_us": 87000, "max_lateness_window_us": 4096, "window_exact": false, "wake_starts": 3, "wake_misses": 3, "worst_start": null}, "loose": {"misses": 0, "picks": 0, "max_lateness_us": 0, "max_lateness_before_us": 0, "max_lateness_window_us": 0, "window_exact": true, "wake_starts": -1, "wake_misses": -1, "worst_start": null}, "d3": {"misses": 5, "picks": 0, "max_lateness_us": 9000, "max_lateness_before_us": 1500, "max_lateness_window_us": 9000, "window_exact": true, "wake_starts": 0, "wake_misses": 0, "worst_start": {"tid": 76, "comm": "probe-w0.1", "woke": true, "wait_us": 9600}}}'
if [[ $out == "$want" ]]; then ok "scx_fdl's window figures with busybox awk: fdl worst late in window 4096 us (87000 since start), d3's worst start named"
else bad "scx_fdl's window figures with busybox awk: want $want, got $out"; fi

# The same with an scx_fdl that kept the measurement's window (dump --new-window began window 3
# with the before-dump; the after-dump is of the same window): the window's worst as scx_fdl
# counted it, exact, and its start; 0 where no start was late in it (d3, whose worst since the
# start grew before the window began); the buckets are not looked at.
"$py" - "$tmp/fd" <<'PY'
import json, sys
for name in ("before", "after"):
    d = json.load(open(f"{sys.argv[1]}/{name}.json"))
    d["scheduler"]["late_window"] = 3
    for c in d["cgroups"]:
        c["window_max_lateness_ns"] = 0
    if name == "after":
        f = d["cgroups"][0]
        f.update(window_max_lateness_ns=2500000, window_late_pid=76, window_late_comm="", window_late_woke=True,
                 window_late_wait_ns=3000000)
    open(f"{sys.argv[1]}/{name}.json", "w").write(json.dumps(d, indent=2))
PY
out=$(cd "$tmp/fd" && PATH="$tmp/bb:$PATH" CG=/sys/fs/cgroup OUT="$tmp/fd" BENCH_CGROUPS="loose fdl d3" FDL_CLI=scx_fdl bash -c '
    log_tail() { :; }
    say() { :; }
    eval "$(sed -n "/^# fdl_dump FILE/,/^# prepare_params SCHED/p" "$0")"
    scx_fdl() { echo "$*" >> "$OUT/cli.args"; cat "$OUT/$which.json"; }
    which=before fdl_dump "$OUT/dump.before" 19.5 && which=after fdl_dump "$OUT/dump.after" && fdl_stats_json
' "$root/bench/guest/bench.sh" 2>&1)
want='{"fdl": {"misses": 5, "picks": 5, "max_lateness_us": 87000, "max_lateness_before_us": 87000, "max_lateness_window_us": 2500, "window_exact": true, "wake_starts": 3, "wake_misses": 3, "worst_start": {"tid": 76, "comm": "probe-w0.1", "woke": true, "wait_us": 3000}}, "loose": {"misses": 0, "picks": 0, "max_lateness_us": 0, "max_lateness_before_us": 0, "max_lateness_window_us": 0, "window_exact": true, "wake_starts": -1, "wake_misses": -1, "worst_start": null}, "d3": {"misses": 5, "picks": 0, "max_lateness_us": 9000, "max_lateness_before_us": 1500, "max_lateness_window_us": 0, "window_exact": true, "wake_starts": 0, "wake_misses": 0, "worst_start": null}}'
args=$(tr '\n' ';' < "$tmp/fd/cli.args")
if [[ $out == "$want" && $args == "dump --new-window --window-for 19500ms;dump;" ]]; then
    ok "scx_fdl's own measurement window with busybox awk: fdl's worst 2500 us in it (87000 since start), its start named; d3 none in it"
else bad "scx_fdl's own measurement window with busybox awk: want $want, got $out (scx_fdl called with: $args)"; fi

if [[ ${1:-} != --no-vm ]]; then
    start=$(date +%s)
    timeout -k 10 400 bench/run.sh tiny --schedulers eevdf,scx_fdl --out "$tmp/tiny" > "$tmp/run.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    if [[ $rc == 0 ]]; then ok "tiny scenario ran in the VM in $secs s"
    else bad "tiny scenario exited $rc after $secs s:"; tail -30 "$tmp/run.log"; fi
    for f in report.txt results.json results.csv raw.jsonl tiny-antagonist.png tiny-quiet.png; do
        [[ -s $tmp/tiny/$f ]] && ok "produced $f" || bad "no $f in the results"
    done
    # Every scheduler measured in every variant, with real numbers.
    if PYTHONPATH=$root "$py" - "$tmp/tiny/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]["variants"]
for v in ("antagonist", "quiet"):
    for s in ("eevdf", "scx_fdl"):
        row = r[v][s]
        assert row["status"] == "ok" and row["measurements"] == 1, (v, s, row["status"], row["errors"])
        p99 = row["latency"]["fdl"]["p99"]["median"]
        assert p99 and p99 > 0, (v, s, p99)
        # fdl-probe's wake-ups alone, counted against the cgroup's 500 us wake-up deadline (--wake-late-after-us).
        w = row["wake"]["fdl"]
        assert w and w["p99"]["median"] > 0 and w["late_after_us"] == 500 and 0 <= w["late"] <= w["samples"], (v, s, w)
        if v == "antagonist":
            t = row["throughput"]["antagonist-hackbench"]["median"]
            assert t and t > 0, (v, s, "hackbench throughput", t)
    # scx_fdl's own figures (scx_fdl dump around the window) for its deadline cgroup.
    f = r[v]["scx_fdl"]["fdl_stats"].get("fdl")
    assert f and f["n"] == 1 and f["picks"] >= f["misses"] >= 0, (v, "scx_fdl fdl_stats", f)
    # Its worst lateness within the window is known, no more than since start, and exact: scx_fdl
    # kept the probes' measurement window (bench.sh's dump --new-window at their warm-up's end).
    assert 0 <= f["max_lateness_window_us"] <= max(f["max_lateness_us"], 0), (v, "scx_fdl window lateness", f)
    assert f["window_exact"] is True, (v, "scx_fdl's own measurement window", f)
    assert f["misses"] > 0 or f["max_lateness_window_us"] == 0, (v, "lateness without misses", f)
    # Where its worst lateness grew in the window, the start is named; a start is never later than its wait.
    ws = f.get("worst_start")
    assert ws is None or (ws["tid"] > 0 and ws["wait_us"] >= f["worst_start_late_us"] > 0), (v, "worst start", f)
print("results.json: both schedulers, both variants, p99, the probe's wake-ups, hackbench throughput and scx_fdl's figures present")
PY
    then ok "results.json complete"; else bad "results.json incomplete (see above)"; cat "$tmp/tiny/report.txt"; fi
    # The boot's rig check (cyclictest on every vCPU before the steps), in the JSON and the report.
    if PYTHONPATH=$root "$py" - "$tmp/tiny/results.json" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))["meta"]
rig = meta["rig"]
assert rig and not rig[0].get("error"), rig
r = rig[0]
# A measurement of the host, whatever the host did: a noisy boot (the clean-clone CI of 2026-12-02
# drew one with about 40 % of its wake-ups late and half the periods missed) is reported, not failed.
# A boot lost to the emulator's text-patching fault before its rig check is booted again (the stop's
# CI on 81451d9 drew one): the check is then boot 2's, and the restart is recorded.
assert 1 <= r["boot"] <= meta["boots"] and len(meta["restarts"]) == meta["boots"] - 1, (r, meta["boots"], meta["restarts"])
assert r["cpus"] == 2 and r["expected"] == 4000, r
assert 0 < r["samples"] <= r["expected"] + 2 * r["cpus"], r
assert 0 <= r["over_1ms"] <= r["samples"] and r["max_us"] > 0, r
PY
    then
        grep -q '^Rig check, boot [0-9]*: an idle CPU woken for a timer' "$tmp/tiny/report.txt" \
            && ok "rig check in the results and the report: $(grep -m1 '^Rig check' "$tmp/tiny/report.txt" | cut -d: -f3-)" \
            || bad "no rig check line in report.txt"
    else bad "rig check missing or wrong in results.json"; fi
fi
echo "bench-selftest: $npass passed, $nfail failed"
exit $failed
