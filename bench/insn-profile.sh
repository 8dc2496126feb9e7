#!/usr/bin/env bash
# Where a scheduler's callbacks spend their instructions: the probes of bench/guest/spin-sched-trace.sh
# under one scheduler in a VM whose QEMU counts the guest instructions executed per translated block
# (bench/insn-profile/insn_profile.c, a TCG plugin), then bench/insn-profile.py: per callback, runs
# and instructions per run (the program's own code, and the subprograms and timer callbacks
# beside it), and the kernel functions that executed most. Counts, unlike TCG's timings (which
# vary 25 % between boots), do not depend on the host's speed.
#
# Usage: bench/insn-profile.sh [--out DIR] [--lines] [--cpus N] [--numa N] [--llcs N] [KEY=VALUE...] [-- SCX_FDL_OPTION...]
#   KEY=VALUE as spin-sched-trace.sh's (spin, sleep, jitter, shares, sched=scx_fdl|scx_flash|a build
#   given with FDL_EXTRA_BINS); default the matrix's wake shape without guarantees.
#   --out DIR  where the console log, the block counts and the report go (default
#              .cache/bench/insn-profile-TIME)
#   --lines    also count per source line of the BPF code (inlined functions at their own lines):
#              the guest prints the JIT code's line records (bench/insn-profile/jit_lines.c), the
#              plugin each instruction's address; the report's second table
#   --cpus N, --numa N, --llcs N   the VM's vCPUs, NUMA nodes and LLCs (vm/run.sh's; default 2,
#              1 and 1): whether the cost per task grows with the CPU count (at one topology:
#              --cpus 2 --llcs 2 against --cpus 8 --llcs 2; load tracking runs only with two
#              domains or more)
# Example: bench/insn-profile.sh sched=scx_flash   (FDL_EXTRA_BINS=.cache/peers/scx_flash-*/bin/scx_flash)
set -euo pipefail
cd "$(dirname "$0")/.."
out=.cache/bench/insn-profile-$(date +%Y%m%d-%H%M%S)
args=()
vm_args=()
lines=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) out=$2; shift 2 ;;
        --lines) lines=1; shift ;;
        --cpus|--numa|--llcs) vm_args+=("$1" "$2"); shift 2 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        *=*) args+=("$1"); shift ;;
        *) echo "insn-profile: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out" .cache/insn-profile
plugin=.cache/insn-profile/insn_profile.so
if [[ ! -e $plugin || bench/insn-profile/insn_profile.c -nt $plugin ]]; then
    cc -O2 -shared -fPIC -fvisibility=hidden -Wall -Werror -o "$plugin" bench/insn-profile/insn_profile.c
fi
plugin_args="out=$(realpath "$out")/blocks.txt"
report_args=()
extra=${FDL_EXTRA_BINS:-}
if [[ $lines = 1 ]]; then
    jl=.cache/insn-profile/jit_lines
    if [[ ! -e $jl || bench/insn-profile/jit_lines.c -nt $jl ]]; then
        cc -O2 -Wall -Werror -o "$jl" bench/insn-profile/jit_lines.c
    fi
    plugin_args+=",offsets=1"
    report_args=(--lines)
    extra="$extra $(realpath "$jl")"
fi
rm -f "$out/blocks.txt"
rc=0
# The plugin slows the whole guest, its boot included: vm/run.sh's boot watch waits longer.
FDL_EXTRA_BINS=$extra FDL_QEMU_ARGS="-plugin $(realpath "$plugin"),$plugin_args" \
    FDL_BOOT_TIMEOUT=${FDL_BOOT_TIMEOUT:-600} vm/run.sh "${vm_args[@]}" --log "$out/console.log" bench/guest/spin-sched-trace.sh \
    spin=50 sleep=10000 jitter=2500 shares=0 "${args[@]}" profile=1 "$@" || rc=$?
if [[ $rc != 0 ]]; then
    # The guest prints everything the report needs before the scheduler stops; the emulator's
    # occasional fault at that stop (an int3 oops patching static keys) leaves the counts good.
    if grep -q '^BPFPROG ' "$out/console.log" && [[ -s $out/blocks.txt ]]; then
        echo "insn-profile: the VM ended with $rc after the measurement (see $out/console.log); reporting" >&2
    else
        exit "$rc"
    fi
fi
python3 bench/insn-profile.py "${report_args[@]}" "$out/console.log" "$out/blocks.txt" | tee "$out/report.txt"
