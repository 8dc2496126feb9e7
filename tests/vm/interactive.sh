# Scenario (issue 11): a cgroup of one interactive task beside a cgroup of 40 hackbench tasks. The
# interactive probe (fdl-probe: a message thread wakes one worker every 10 ms, which spins 300 us)
# is measured alone, then beside `hackbench -g 2 -f 10` (2 groups of 10 senders and 10 receivers),
# first under EEVDF, then under scx_fdl, in one boot. Both cgroups at cpu.weight 100, no
# parameters: the fair tier alone decides. Arg SHAPE: `pods` (default), both as pods of one parent,
# kubepods.slice/inter and kubepods.slice/batch, where they share their parent's queue and the
# order between them is the hierarchical one; `flat`, both first-level cgroups.
# Checks (scx_fdl), with margins for the emulator (its wake-up floor and 4 ms tick):
#   - beside hackbench, the probe's p99 is at most 2 x its p99 alone + 1 ms: forty tasks do not
#     out-wait one (the defect this guards: every task carried its own wake-up credit, or the
#     cgroup clock ran ahead with the many-task cgroup, and the probe waited tens of ms). It was
#     1.5 x + 1 ms until the clean-clone CI of 4dd2e74 failed it on the host of 2026-11-25 (5608
#     us beside against 2923 alone): there the probe alone sits on the emulator's idle wake-up
#     floor (p99 2.9-4.9 ms, EEVDF's too) and beside hackbench scx_fdl's p99 was 3.7-5.6 ms in four
#     boots with queued wake-ups (0.83-1.92 x alone), 2.7 and 3.4 ms in two with
#     --no-queued-wakeups (0.69-0.73 x), EEVDF's 0.85-1.9 ms;
#   - its p90 at most 2 x EEVDF's p90 beside hackbench + 1 ms;
#   - hackbench kept running (its cgroup used at least 1 CPU over the window);
#   - scx_fdl stayed attached, dmesg clean, clean exit.
. ./lib.sh

secs=${FDL_PROBE_SECS:-10}
case ${1:-pods} in
    pods) INTER=kubepods.slice/inter BATCH=kubepods.slice/batch; mkcg kubepods.slice 100 ;;
    flat) INTER=inter BATCH=batch ;;
    *) fail "shape ${1}: pods or flat"; exit 1 ;;
esac
mkcg $INTER 100
mkcg $BATCH 100

# probe TAG: the interactive probe for $secs s; prints FDL-LATENCY TAG.
probe() {
    sh -c "echo \$\$ > $CG/$INTER/cgroup.procs; exec fdl-probe -m 1 -t 1 --sleep-us 10000 --spin-us 300 -r $secs -w 2 --json" \
        > "/tmp/p-$1.json" 2> "/tmp/p-$1.err" || fail "fdl-probe $1 exited $? ($(cat /tmp/p-$1.err))"
    echo "FDL-LATENCY $1 p50=$(json_field /tmp/p-$1.json p50) p90=$(json_field /tmp/p-$1.json p90) p99=$(json_field /tmp/p-$1.json p99) samples=$(json_field /tmp/p-$1.json samples)"
}

# run SCHED: alone, then beside hackbench; sets BATCH_CPUS (hackbench's CPUs over the second).
run() {
    local hb u0
    probe "$1-alone"
    sh -c "echo \$\$ > $CG/$BATCH/cgroup.procs; exec hackbench -g 2 -f 10 -s 20000 -l 100000000" > /dev/null 2>&1 &
    hb=$!
    sleep 2
    u0=$(usage_usec $BATCH)
    probe "$1-hackbench"
    BATCH_CPUS=$(cpus $(($(usage_usec $BATCH) - u0)) $((secs + 2)))
    kill "$hb" 2>/dev/null
    pkill hackbench
    sleep 1
}

run eevdf
start_sched fdl || exit 1
run fdl
say "hackbench under scx_fdl: $BATCH_CPUS CPUs"
scx_fdl list | sed 's/^/    /'

p99() { json_field "/tmp/p-$1.json" p99; }
alone=$(p99 fdl-alone) beside=$(p99 fdl-hackbench)
check "beside 40 hackbench tasks the probe's p99 ($beside us) is at most 2 x its p99 alone ($alone us) + 1 ms" \
    "${beside:-999999} <= ${alone:-0} * 2 + 1000"
# Against EEVDF the p90: EEVDF's p99 beside hackbench moved between 0.5 and 2.4 ms in single runs,
# scx_fdl's between 2.0 and 3.5 ms (it does not match EEVDF's tail here: README, limits), and a
# p99 rule against it failed the clean-clone CI twice. Each task with its own credit: p99 6.1 ms
# (alone 2.2), p90 3.8 ms against EEVDF's 0.5: both rules left fail on that.
p90() { json_field "/tmp/p-$1.json" p90; }
check "beside hackbench the probe's p90 ($(p90 fdl-hackbench) us) is at most 2 x EEVDF's ($(p90 eevdf-hackbench) us) + 1 ms" \
    "$(p90 fdl-hackbench) <= $(p90 eevdf-hackbench) * 2 + 1000"
check "the probe got its samples beside hackbench ($(json_field /tmp/p-fdl-hackbench.json samples), >= 80 % of alone's $(json_field /tmp/p-fdl-alone.json samples))" \
    "$(json_field /tmp/p-fdl-hackbench.json samples) >= $(json_field /tmp/p-fdl-alone.json samples) * 0.8"
check "hackbench kept running ($BATCH_CPUS CPUs >= 1)" "$BATCH_CPUS >= 1"
finish_scx
exit $FAILED
