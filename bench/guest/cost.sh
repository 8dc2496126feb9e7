# Guest side of bench/cost.sh (busybox sh): for each scheduler in turn on this boot, hackbench as
# the load and `scx_fdl cost` over it (the kernel's BPF statistics on for the interval only).
# Prints one line per scheduler: FDL-COST {json} (or FDL-COST-FAIL <why>).
# Args: SECS LOOPS MODE SCHEDULER... (scx_fdl, scx_fdl+flat: with --flat-queues, or a peer's binary
# name in /usr/bin); LOOPS: hackbench's for the throughput runs; MODE: processes (hackbench's
# default) or threads (hackbench -T: one address space, so no switch changes the page tables).
. ./lib.sh
secs=$1
hb_loops=$2
mode=$3
case $mode in
    processes) hb_mode= ;;
    threads) hb_mode=-T ;;
    *) echo "FDL-COST-FAIL mode $mode: want processes or threads"; exit 1 ;;
esac
shift 3
say "cost over $secs s per scheduler, $(nproc) CPUs, hackbench as $mode: $*"
# scx_utils (the peers) finds tracefs through the mount table at start and refuses without it
# (scx_lavd: "No debugfs mount found"); the VM's init does not mount it (as bench.sh).
[ -e /sys/kernel/tracing/available_tracers ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

# Throughput first, with the BPF statistics still off (they time every program run): a fixed
# hackbench run under EEVDF and under each scheduler, the time it took (issue 13: >= 95 % of
# EEVDF's throughput at 8 vCPUs). Prints FDL-HACKBENCH {json} per scheduler.
hb_time() {
    hackbench $hb_mode -g 4 -f 10 -s 1000 -l "$hb_loops" 2>&1 | sed -n 's/^Time: *\([0-9.]*\).*/\1/p'
}
attach() {
    case $1 in
        scx_fdl) start_scx > /dev/null || return 1; pid=$SCX_PID; say "$1: $(grep -o 'queue domains: [0-9]*' "$SCX_LOG")" ;;
        scx_fdl+flat) start_scx --flat-queues > /dev/null || return 1; pid=$SCX_PID; say "$1: $(grep -o 'queue domains: [0-9]*' "$SCX_LOG")" ;;
        *)
            "$1" > /tmp/peer.log 2>&1 &
            pid=$!
            i=0
            # Until enabled, not until named: at 8 vCPUs a peer is named well before it is enabled.
            while [ "$(scx_state)" != enabled ] && [ $i -lt 1800 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
            ;;
    esac
    [ "$(scx_state)" = enabled ]
}
detach() {
    kill -TERM $pid 2>/dev/null
    i=0
    while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -TERM $pid 2>/dev/null
    wait $pid 2>/dev/null
    i=0
    while [ "$(scx_state)" != disabled ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
hb_runs() {
    for r in 1 2 3; do
        t=$(hb_time)
        echo "FDL-HACKBENCH {\"scheduler\": \"$1\", \"cpus\": $(nproc), \"loops\": $hb_loops, \"secs\": ${t:-null}}"
    done
}
hb_runs eevdf
for s in "$@"; do
    if attach "$s"; then
        hb_runs "$s"
    else
        echo "FDL-COST-FAIL $s did not attach for the hackbench runs: $(tail -2 /tmp/peer.log 2>/dev/null | tr '\n' ' ')"
    fi
    detach
done

# Switched on once, before any load: switching the statistics on patches kernel text (a static
# key), which under TCG can hit the emulator's cross-modifying-code fault (an int3 Oops) when it
# happens while other CPUs run BPF programs. `scx_fdl cost` then finds them on already.
sysctl -w kernel.bpf_stats_enabled=1 > /dev/null
for s in "$@"; do
    if ! attach "$s"; then
        echo "FDL-COST-FAIL $s did not attach: $(tail -2 /tmp/peer.log 2>/dev/null | tr '\n' ' ')"
        detach
        continue
    fi
    # Four hackbench groups (40 tasks): every callback runs thousands of times a second.
    hackbench $hb_mode -g 4 -f 10 -s 1000 -l 100000000 > /dev/null 2>&1 &
    hb=$!
    sleep 2
    if out=$(scx_fdl cost --secs "$secs" --json 2> /tmp/cost.err); then
        echo "FDL-COST {\"scheduler\": \"$s\", \"cpus\": $(nproc), \"result\": $(echo "$out" | tr -d '\n')}"
    else
        echo "FDL-COST-FAIL $s: $(cat /tmp/cost.err | tr '\n' ' ')"
    fi
    kill -9 $hb 2>/dev/null
    killall -9 hackbench 2>/dev/null
    wait $hb 2>/dev/null
    detach
done
exit 0
