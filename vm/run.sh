#!/usr/bin/env bash
# Boot the sched_ext kernel under QEMU (TCG), run one guest scenario, exit with its verdict.
#
# Usage: vm/run.sh [--cpus N] [--max-cpus N] [--numa NODES] [--llcs N] [--mem MB] [--timeout SECS] [--log FILE] SCENARIO [ARGS...]
#   SCENARIO  a script in tests/vm/ (without .sh), or the path of a guest script elsewhere
#             (containing a /, e.g. bench/guest/bench.sh), run inside the guest with ARGS
#   --cpus    vCPUs (default 2)          --mem  guest memory in MiB (default 1024)
#   --max-cpus possible CPUs (default: --cpus): the guest boots --cpus of them (kernel maxcpus=)
#             and leaves the rest offline, as on machines sized for CPU hotplug (without --numa)
#   --numa    NUMA nodes (default 1): the vCPUs and memory split evenly, two sockets per node;
#             QEMU 7.2 gives each socket its own last-level cache, so --cpus 8 --numa 2 is
#             2 nodes x 2 LLCs x 2 CPUs
#   --llcs    last-level caches (sockets; default two per node with --numa, else one), split
#             evenly over the nodes: --cpus 2 --llcs 2 is two domains of one CPU, for comparing a
#             topology's cost at 2 vCPUs with the same topology at 8 (--cpus 8 --llcs 2)
#   --timeout seconds before the VM is killed and the run fails (default 600)
#   --log     where the serial console is saved (default .cache/logs/SCENARIO-<time>.log)
# The guest gets scx_fdl and fdl-probe (the latency probe) from target/release.
# Environment: FDL_SCHED_BIN (another scx_fdl binary), FDL_SCX_ARGS (options for scx_fdl in
# scenarios that start it), FDL_EXTRA_BINS (more binaries for the guest's /usr/bin),
# FDL_GUEST_FILES (more files for the guest's /scenario, beside the scenario scripts),
# FDL_KERNEL_ARGS (more guest kernel command-line parameters, e.g. idle=halt), FDL_QEMU_ARGS (more
# QEMU options, e.g. bench/insn-profile.sh's -plugin), FDL_PIN_VCPUS (1: pin
# each vCPU thread to a host CPU, 0: leave them to the host; default: pin when vCPUs <= host CPUs).
# FDL_BOOT_TIMEOUT: seconds the guest may take to begin its scenario (default 120; a boot takes
# 5-40 s here): a guest that has not begun by then is stopped (an emulator hang at boot, before
# any scheduler ran; the clean-clone CI of 2026-12-06 drew one that printed nothing for 300 s).
# Exit status: the scenario's own (0 = pass); 124 if the VM timed out; 125 if it never reported
# (never began its scenario included).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cpus=2 max_cpus= numa=1 llcs= mem=1024 timeout=600 logfile=
while [[ $# -gt 0 ]]; do
    case $1 in
        --cpus) cpus=$2; shift 2 ;;
        --max-cpus) max_cpus=$2; shift 2 ;;
        --numa) numa=$2; shift 2 ;;
        --llcs) llcs=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --log) logfile=$2; shift 2 ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[[ $# -ge 1 ]] || die "usage: vm/run.sh [options] SCENARIO [ARGS...] (see --help)"
scenario=$1
shift
guest_files=${FDL_GUEST_FILES:-}
if [[ $scenario == */* ]]; then
    # A script from outside tests/vm/ travels to /scenario/ beside them (it may source lib.sh).
    [[ -f $scenario ]] || die "no guest script $scenario"
    guest_files="$(realpath "$scenario") $guest_files"
    scenario=$(basename "$scenario" .sh)
else
    [[ -f $FDL_ROOT/tests/vm/$scenario.sh ]] || die "no scenario tests/vm/$scenario.sh"
fi
for f in $guest_files; do [[ -f $f ]] || die "FDL_GUEST_FILES: no file $f"; done
[[ $cpus =~ ^[0-9]+$ && $cpus -ge 1 ]] || die "--cpus wants a positive number, got '$cpus'"
[[ $numa =~ ^[0-9]+$ && $numa -ge 1 ]] || die "--numa wants a positive number, got '$numa'"
smp=(-smp "$cpus")
if [[ -n $max_cpus ]]; then
    [[ $max_cpus =~ ^[0-9]+$ && $max_cpus -ge $cpus && $numa -eq 1 ]] ||
        die "--max-cpus wants a number of at least --cpus ($cpus), without --numa; got '$max_cpus'"
    # QEMU's hot-pluggable vCPUs (-smp N,maxcpus=M) are not possible CPUs to this kernel
    # ("plus 0 hotplug CPUs"): all M are present and the kernel brings up only N.
    smp=(-smp "$max_cpus")
    kernel_cpus="maxcpus=$cpus"
fi
if [[ -n $llcs || $numa -gt 1 ]]; then
    [[ -z $max_cpus ]] || die "--max-cpus is for one node and one LLC (without --numa, --llcs)"
    [[ -n $llcs ]] || llcs=$((2 * numa))
    [[ $llcs =~ ^[0-9]+$ && $llcs -ge 1 ]] || die "--llcs wants a positive number, got '$llcs'"
    (( llcs % numa == 0 && cpus % llcs == 0 && mem % numa == 0 )) ||
        die "--numa $numa --llcs $llcs: the LLCs must split evenly over the nodes, --cpus ($cpus) over the LLCs and --mem ($mem) over the nodes"
    per=$((cpus / numa))
    # QEMU 7.2 gives each socket its own last-level cache.
    smp=(-smp "$cpus,sockets=$llcs,cores=$((cpus / llcs)),threads=1")
    for ((n = 0; n < numa && numa > 1; n++)); do
        smp+=(-object "memory-backend-ram,id=mem$n,size=$((mem / numa))M"
              -numa "node,nodeid=$n,cpus=$((n * per))-$((n * per + per - 1)),memdev=mem$n")
    done
fi

bin=${FDL_SCHED_BIN:-$FDL_ROOT/target/release/scx_fdl}
probe=$FDL_ROOT/target/release/fdl-probe
for b in "$bin" "$probe"; do
    [[ -x $b ]] || die "$b not built: run ./setup.sh (or cargo build --release)"
done
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run ./setup.sh"

kdir=$(FDL_CACHE=$FDL_CACHE "$FDL_ROOT/vm/kernel.sh")
mkdir -p "$FDL_CACHE/logs"
logfile=${logfile:-$FDL_CACHE/logs/$scenario-$(date +%Y%m%d-%H%M%S)-$$.log}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

{
    printf 'FDL_SCENARIO=%q\n' "$scenario"
    printf 'FDL_ARGS=%q\n' "$*"
    printf 'FDL_SCX_ARGS=%q\n' "${FDL_SCX_ARGS:-}"
} > "$work/run.env"
# shellcheck disable=SC2086
FDL_GUEST_FILES=$guest_files "$FDL_ROOT/vm/initramfs.sh" "$work/initrd.cpio.gz" "$kdir" "$work/run.env" "$bin" "$probe" ${FDL_EXTRA_BINS:-}

# Each vCPU thread on its own host CPU (by default when there are as many host CPUs as vCPUs;
# FDL_PIN_VCPUS=0 never, =1 always, vCPU N on the (N mod count)-th host CPU this process may use).
# Left to the host scheduler, two vCPU threads share one host CPU at times; a vCPU that sends an
# interrupt to the other is then preempted on the host, often while it holds the target's run-queue
# lock (sched_ext activates a woken task on its target from the waker's CPU unless the scheduler
# sets SCX_OPS_ALLOW_QUEUED_WAKEUP, as scx_fdl does since da798d3; EEVDF and the peers run here too), and
# the target waits milliseconds for a lock that real hardware releases in microseconds
# (docs/benchmarks.md, "Where the quiet wake cells' tail came from"). QEMU names its TCG threads
# "CPU N/TCG" (-name debug-threads=on); this VM's QEMU is the one whose command line holds its initrd.
pin_vcpus() {
    local host=() tries=0 pid t n range
    # The host CPUs this process may use (a container's cpuset need not start at 0).
    for range in $(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status | tr , ' '); do
        # shellcheck disable=SC2046
        host+=($(seq "${range%-*}" "${range#*-}"))
    done
    while ((tries++ < 100)); do
        sleep 0.2
        n=0
        for pid in $(pgrep -f "$work/initrd.cpio.gz"); do
            for t in /proc/$pid/task/*; do
                [[ $(cat "$t/comm" 2>/dev/null) =~ ^CPU\ ([0-9]+)/TCG$ ]] || continue
                taskset -p -c "${host[BASH_REMATCH[1] % ${#host[@]}]}" "${t##*/}" > /dev/null && n=$((n + 1))
            done
        done
        ((n >= cpus)) && { log "pinned $n vCPU threads, one host CPU each (of ${#host[@]})"; return; }
    done
    log "could not pin the vCPU threads"
}
# The boot watch (FDL_BOOT_TIMEOUT): stop this VM's QEMU (not the timeout around it) if the guest
# has not begun its scenario in time, and leave a mark for the verdict below.
boot_timeout=${FDL_BOOT_TIMEOUT:-120}
[[ $boot_timeout =~ ^[0-9]+$ && $boot_timeout -ge 1 ]] || die "FDL_BOOT_TIMEOUT wants a positive number, got '$boot_timeout'"
boot_watch() {
    local i=0 qemu="^qemu-system-x86_64 .*$work/initrd.cpio.gz"
    while ((i++ < boot_timeout)); do
        sleep 1
        grep -q '^FDL-GUEST-BEGIN' "$logfile" 2> /dev/null && return
    done
    pgrep -f "$qemu" > /dev/null || return
    # The mark first: once QEMU is gone, the script below may stop this watch at any moment.
    touch "$work/boot-hang"
    pkill -f "$qemu"
}
pin=${FDL_PIN_VCPUS:-auto}
[[ $pin == auto ]] && { ((cpus <= $(nproc))) && pin=1 || pin=0; }
[[ $pin == 1 ]] && pin_vcpus &
log "booting $(cat "$kdir/release") with $cpus vCPUs${max_cpus:+ online of $max_cpus}$([[ $numa -gt 1 ]] && echo " in $numa NUMA nodes")${llcs:+, $llcs LLCs} (TCG): scenario $scenario $*; console -> $logfile"
boot_watch &
watch_pid=$!
set +e
# FDL_QEMU_ARGS is split into words on purpose.
# shellcheck disable=SC2086
timeout -k 10 "$timeout" qemu-system-x86_64 \
    -accel tcg -cpu max "${smp[@]}" -m "${mem}M" \
    -kernel "$kdir/vmlinuz" -initrd "$work/initrd.cpio.gz" \
    -append "console=ttyS0 quiet loglevel=4 panic=-1 ${kernel_cpus:-} ${FDL_KERNEL_ARGS:-}" \
    -name scx-fdl,debug-threads=on \
    -nodefaults -display none -serial stdio -no-reboot ${FDL_QEMU_ARGS:-} < /dev/null |
    stdbuf -oL tr -d '\r' | tee "$logfile"
qemu_rc=${PIPESTATUS[0]}
kill "$watch_pid" 2> /dev/null
wait "$watch_pid" 2> /dev/null
set -e

if [[ -e $work/boot-hang ]]; then
    log "FAIL: the guest did not begin its scenario within $boot_timeout s (FDL_BOOT_TIMEOUT; an emulator hang at boot, qemu exit $qemu_rc); console in $logfile"
    exit 125
fi
if [[ $qemu_rc == 124 || $qemu_rc == 137 ]]; then
    log "FAIL: the VM did not finish within $timeout s (scenario $scenario); console in $logfile"
    exit 124
fi
verdict=$(sed -n 's/^FDL-GUEST-VERDICT rc=\([0-9]*\)$/\1/p' "$logfile" | tail -1)
if [[ -z $verdict ]]; then
    log "FAIL: the guest never reported a verdict (qemu exit $qemu_rc); console in $logfile"
    exit 125
fi
exit "$verdict"
