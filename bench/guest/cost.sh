# Guest side of bench/cost.sh (busybox sh): for each scheduler in turn on this boot, hackbench as
# the load and `scx_fdl cost` over it (the kernel's BPF statistics on for the interval only).
# Prints one line per scheduler: FDL-COST {json} (or FDL-COST-FAIL <why>).
# Args: SECS SCHEDULER... (scx_fdl, or a peer's binary name in /usr/bin)
. ./lib.sh
secs=$1
shift
say "cost over $secs s per scheduler, $(nproc) CPUs: $*"
# Switched on once, before any load: switching the statistics on patches kernel text (a static
# key), which under TCG can hit the emulator's cross-modifying-code fault (an int3 Oops) when it
# happens while other CPUs run BPF programs. `scx_fdl cost` then finds them on already.
sysctl -w kernel.bpf_stats_enabled=1 > /dev/null
for s in "$@"; do
    case $s in
        scx_fdl) start_scx > /dev/null || { echo "FDL-COST-FAIL $s did not attach"; continue; }; pid=$SCX_PID ;;
        *)
            "$s" > /tmp/peer.log 2>&1 &
            pid=$!
            i=0
            while ! scx_ops | grep -q . && [ $i -lt 1800 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
            ;;
    esac
    if [ "$(scx_state)" != enabled ]; then
        echo "FDL-COST-FAIL $s did not attach: $(tail -2 /tmp/peer.log 2>/dev/null | tr '\n' ' ')"
        kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null
        continue
    fi
    # Four hackbench groups (40 tasks): every callback runs thousands of times a second.
    hackbench -g 4 -f 10 -s 1000 -l 100000000 > /dev/null 2>&1 &
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
    kill -TERM $pid 2>/dev/null
    i=0
    while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -TERM $pid 2>/dev/null
    wait $pid 2>/dev/null
    i=0
    while [ "$(scx_state)" != disabled ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
done
exit 0
