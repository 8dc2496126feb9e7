#!/usr/bin/env bash
# What each sched_ext callback costs, scx_fdl beside the peers (issue 13): for each vCPU count, one
# VM boot in which every scheduler runs in turn under the same hackbench load while `scx_fdl cost`
# reads the average nanoseconds per run of each callback (kernel BPF statistics on for the
# interval only) and the instructions the verifier processed; before that, with the statistics
# off, three fixed hackbench runs under EEVDF and each scheduler give throughput as a ratio to EEVDF's
# (--loops, default 1500). Under TCG every figure is inflated alike: compare
# schedulers and vCPU counts, not absolute nanoseconds.
#
# Usage: bench/cost.sh [--cpus 2,8] [--numa N] [--schedulers scx_fdl,scx_bpfland,...] [--secs 10] [--loops 1500] [--threads] [OUT]
#   --threads: hackbench -T (its tasks threads of one process) instead of processes: no switch
#   changes the page tables, which the emulator answers by dropping its whole software TLB.
#   --schedulers takes scx_fdl-NAME=PATH too: another scx_fdl build beside this tree's.
#   --numa N: NUMA nodes of every VM with more than 2 vCPUs (vm/run.sh --numa: two sockets, each
#   its own LLC, per node); default 1, where QEMU gives the vCPUs one socket and one LLC.
#   OUT defaults to .cache/bench/results/cost-TIME; it gets console-N.log, cost-N.jsonl, report.txt.
#   --report-only OUT: the report again from OUT's console logs.
# The peers come from bench/setup.sh (built once into .cache/peers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FDL_CACHE:-$root/.cache}
cpus_list=2,8 numa=1 scheds=scx_fdl,scx_bpfland,scx_lavd,scx_flash,scx_rusty secs=10 loops=1500 mode=processes out=
while [[ $# -gt 0 ]]; do
    case $1 in
        --cpus) cpus_list=$2; shift 2 ;;
        --numa) numa=$2; shift 2 ;;
        --report-only) cpus_list=; shift ;;
        --schedulers) scheds=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --loops) loops=$2; shift 2 ;;
        --threads) mode=threads; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bench/cost.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) out=$1; shift ;;
    esac
done
out=${out:-$cache/bench/results/cost-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
[[ -n $cpus_list ]] && echo "$mode" > "$out/mode"
extra=()
# scx_fdl-NAME=PATH: another scx_fdl build (an older commit's) beside this tree's, in the same boot;
# the guest runs it by that name with its default options.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
guest_scheds=()
for s in ${scheds//,/ }; do
    if [[ $s == scx_fdl-*=* ]]; then
        name=${s%%=*} path=${s#*=}
        [[ $name =~ ^scx_fdl-[a-z0-9_]+$ && -x $path && -f $path ]] ||
            { echo "bench/cost.sh: $s: want scx_fdl-NAME=PATH of an executable (NAME of a-z, 0-9, _)" >&2; exit 2; }
        cp "$path" "$stage/$name"
        extra+=("$stage/$name")
        guest_scheds+=("$name")
        continue
    fi
    guest_scheds+=("$s")
    [[ $s == scx_fdl || $s == scx_fdl+flat ]] && continue
    bin=$(ls "$cache"/peers/"$s"-*/bin/"$s" 2>/dev/null | head -1 || true)
    [[ -x $bin ]] || { echo "bench/cost.sh: $s is not built: run bench/setup.sh" >&2; exit 1; }
    extra+=("$bin")
done
scheds=$(IFS=,; echo "${guest_scheds[*]}")
for n in ${cpus_list//,/ }; do
    echo "[cost] $n vCPUs: ${scheds//,/ } ($secs s each)"
    for attempt in 1 2 3; do
        FDL_EXTRA_BINS="${extra[*]}" "$root/vm/run.sh" --cpus "$n" --numa "$([[ $n -gt 2 ]] && echo "$numa" || echo 1)" --timeout $((600 + 120 * n)) \
            --log "$out/console-$n.log" "$root/bench/guest/cost.sh" "$secs" "$loops" "$mode" ${scheds//,/ } > /dev/null || true
        # The emulator's text-patching fault (tests/run-vm-tests.sh): boot again.
        grep -q 'Oops: int3' "$out/console-$n.log" || break
        echo "[cost] $n vCPUs: the guest kernel hit an int3 Oops (emulator fault), attempt $attempt; booting again"
    done
done
for log in "$out"/console-*.log; do
    [[ -e $log ]] || continue
    n=${log##*/console-}; n=${n%.log}
    # "FDL-COST {json}" or "FDL-COST-FAIL why": the report reads " {json}" and "-FAIL why".
    grep -a '^FDL-COST' "$log" | sed 's/^FDL-COST//' > "$out/cost-$n.jsonl" || true
    grep -a '^FDL-HACKBENCH' "$log" | sed 's/^FDL-HACKBENCH //' > "$out/hackbench-$n.jsonl" || true
done
python3 - "$out" "$secs" "$(git -C "$root" rev-parse --short HEAD)" <<'PY' | tee "$out/report.txt"
import json, sys, glob, os
out, secs, rev = sys.argv[1], sys.argv[2], sys.argv[3]
mode_file = os.path.join(out, "mode")
hb_args = "-T -g 4" if os.path.exists(mode_file) and open(mode_file).read().strip() == "threads" else "-g 4"
rows, fails = {}, []
for f in sorted(glob.glob(os.path.join(out, "cost-*.jsonl"))):
    for line in open(f):
        if line.startswith("-FAIL"):
            fails.append(line[6:].strip()); continue
        r = json.loads(line)
        for c in r["result"]["callbacks"]:
            op = c["name"].split("_", 1)[-1]
            rows.setdefault(op, {})[(r["scheduler"], r["cpus"])] = c
scheds = sorted({k[0] for v in rows.values() for k in v}, key=lambda s: (s != "scx_fdl", s))
cpus = sorted({k[1] for v in rows.values() for k in v})
hot = ["select_cpu", "enqueue", "dispatch", "runnable", "running", "stopping", "quiescent", "tick", "update_idle"]
print(f"bench/cost.sh, scx_fdl {rev}, {secs} s of hackbench {hb_args} per scheduler; average ns per run (runs)")
for n in cpus:
    print(f"\n{n} vCPUs")
    print(f"{'callback':<12}" + "".join(f"{s:>22}" for s in scheds))
    for op in hot:
        if op not in rows: continue
        cells = []
        for s in scheds:
            c = rows[op].get((s, n))
            cells.append(f"{c['avg_ns']:>9} ({c['runs']:>9})" if c else f"{'-':>21}")
        print(f"{op:<12}" + "".join(f" {x:>21}" for x in cells))
print("\nverified instructions (what the verifier processed), per program")
print(f"{'callback':<12}" + "".join(f"{s:>14}" for s in scheds))
for op in hot:
    if op not in rows: continue
    print(f"{op:<12}" + "".join(f"{next((c['verified_insns'] for (s2, n), c in rows[op].items() if s2 == s), '-'):>14}" for s in scheds))
hb = {}
for f in sorted(glob.glob(os.path.join(out, "hackbench-*.jsonl"))):
    for line in open(f):
        r = json.loads(line)
        if r["secs"] is not None:
            hb.setdefault((r["scheduler"], r["cpus"]), []).append(r["secs"])
        loops = r["loops"]
if hb:
    med = lambda v: sorted(v)[len(v) // 2]
    print(f"\nhackbench {hb_args} -f 10 -s 1000 -l {loops} (statistics off): median seconds of the runs [all],"
          " throughput as a ratio to EEVDF's")
    for n in sorted({k[1] for k in hb}):
        base = med(hb[("eevdf", n)]) if ("eevdf", n) in hb else None
        cells = []
        for s in ["eevdf"] + scheds:
            v = hb.get((s, n))
            if not v:
                continue
            ratio = f" = {base / med(v):.2f}x" if base else ""
            cells.append(f"{s} {med(v):.2f} s [{' '.join(f'{x:.2f}' for x in v)}]{ratio}")
        print(f"{n} vCPUs: " + "; ".join(cells))
for f in fails:
    print("FAILED:", f)
PY
