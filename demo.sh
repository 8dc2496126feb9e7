#!/usr/bin/env bash
# The main demo: set everything up, boot the sched_ext kernel in QEMU, run the cgroup-weights
# scenario under the kernel's default scheduler (EEVDF) and under scx_fdl, and print the CPU
# shares side by side with what cpu.weight asks for.
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
cd "$root"
./setup.sh

logs=$root/.cache/logs/demo
mkdir -p "$logs"
for sched in eevdf fdl; do
    echo "demo: weights scenario under $sched (about a minute under emulation)"
    vm/run.sh --timeout 300 --log "$logs/$sched.log" weights "$sched" report > /dev/null ||
        { echo "demo: the $sched run failed; console in $logs/$sched.log" >&2; exit 1; }
done

# FDL-SHARES <sched> <phase> name=usec ... -> the measured share of one cgroup.
share() { # sched phase cgroup
    awk -v ph="$2" -v cg="$3" '$1 == "FDL-SHARES" && $3 == ph {
        t = 0; for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2]; t += kv[2] }
        printf "%.3f", v[cg] / t }' "$logs/$1.log"
}
ratio() { # sched phase a b
    awk -v ph="$2" -v a="$3" -v b="$4" '$1 == "FDL-SHARES" && $3 == ph {
        for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%.3f", v[a] / v[b] }' "$logs/$1.log"
}

echo
echo "CPU time shares, 2 vCPUs, one busy loop per vCPU in each cgroup (from cpu.stat usage_usec)"
printf '%-44s %8s %8s %8s\n' "" EEVDF scx_fdl wanted
printf '%-44s %8s %8s %8s\n' "siblings W200 (200) : W100 (100)" \
    "$(ratio eevdf siblings W200 W100)" "$(ratio fdl siblings W200 W100)" 2.000
printf '%-44s %8s %8s %8s\n' "after W100 -> 400, W200 : W100" \
    "$(ratio eevdf reweighted W200 W100)" "$(ratio fdl reweighted W200 W100)" 0.500
for cg in A1:0.375 A2:0.125 B:0.500; do
    printf '%-44s %8s %8s %8s\n' "nested A(100){A1(300),A2(100)}, B(100): ${cg%%:*}" \
        "$(share eevdf nested "${cg%%:*}")" "$(share fdl nested "${cg%%:*}")" "${cg#*:}"
done
echo
echo "Consoles: $logs/eevdf.log, $logs/fdl.log"
