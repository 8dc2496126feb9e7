# Scenario: a synchronous wake-up from a waker that keeps its CPU. A pipe wakes its reader with
# WF_SYNC, the hint that the waker is about to give up its CPU. fdl-probe --pipe-wake: a writer
# pinned to CPU 0 sleeps 10 ms, writes, and then spins 10 ms; the reader, moved to CPU 0 and let
# free again before each read (so that it last ran there, and may run on any CPU), records how long
# after the write it ran. Under EEVDF first, then scx_fdl, in one boot.
# The defect this guards: the kernel's default idle pick (scx_bpf_select_cpu_dfl) answers a
# WF_SYNC wake-up with the waker's own CPU, busy, as "idle" whenever some CPU is idle and the
# waker's local queue is empty; scx_fdl put the reader on that CPU's local queue, where it waited
# out the writer's spin while CPU 1 idled, and recorded the busy CPU as idle and taken by the
# reader. EEVDF puts it on the idle CPU.
# Checks (scx_fdl), with margins for the emulator's wake-up floor (a halted vCPU woken: EEVDF's p50
# here 1.5 ms, p90 3.3 ms):
#   - at most a tenth of the reads ran on the writer's CPU (behind the writer: every one);
#   - the reader's p50 at most 2 x EEVDF's + 1 ms, and never held below 3 ms (behind the writer it
#     waits out the writer's slice, 3 ms, and the tick: p50 5.0 ms against EEVDF's 1.5 ms; off
#     it, at the emulator's floor for waking a halted vCPU, 1.3-2.6 ms on 2026-12-04. EEVDF's own
#     p50 is mostly that floor too, but not always: in the CI of 14f886e (2026-12-05) it read
#     251 us, the bound 1.5 ms, and scx_fdl's reader, on the idle CPU for 279 of 280 reads, 2.2 ms);
#   - its p90 at most 2 x EEVDF's p90 + 1 ms;
#   - a deadline container bound to CPU 1 beside busy loops bound there (below): under 5 % of its
#     wake-ups late;
#   - scx_fdl stayed attached, dmesg clean, clean exit.
. ./lib.sh

secs=${FDL_PROBE_SECS:-6}

# probe TAG: prints FDL-LATENCY TAG.
probe() {
    fdl-probe --pipe-wake --sleep-us 10000 --spin-us 10000 -r "$secs" -w 1 --json \
        > "/tmp/p-$1.json" 2> "/tmp/p-$1.err" || fail "fdl-probe $1 exited $? ($(cat /tmp/p-$1.err))"
    echo "FDL-LATENCY $1 p50=$(json_field /tmp/p-$1.json p50) p90=$(json_field /tmp/p-$1.json p90) p99=$(json_field /tmp/p-$1.json p99) samples=$(json_field /tmp/p-$1.json samples)"
}

probe eevdf
start_sched fdl || exit 1
probe fdl

p() { json_field "/tmp/p-$1.json" "$2"; }
# How many reads ran on the writer's CPU, behind it (the probe's stderr).
behind() { sed -n "s/.*pipe-wake: \([0-9]*\) of.*/\1/p" "/tmp/p-$1.err"; }
say "reads on the writer's CPU: EEVDF $(behind eevdf), scx_fdl $(behind fdl) of about $(p fdl samples)"
check "the reader of a pipe whose writer keeps its CPU runs on the idle one: $(behind fdl) of $(p fdl samples) reads behind the writer (<= 10 %; EEVDF $(behind eevdf))" \
    "$(behind fdl) <= $(p fdl samples) * 0.1"
p50_bound=$(awk -v e="$(p eevdf p50)" 'BEGIN { b = 2 * e + 1000; if (b < 3000) b = 3000; printf "%d", b }')
check "its p50 ($(p fdl p50) us) is at most the larger of 2 x EEVDF's ($(p eevdf p50) us) + 1 ms and 3 ms ($p50_bound us)" \
    "$(p fdl p50) <= $p50_bound"
check "its p90 ($(p fdl p90) us) is at most 2 x EEVDF's ($(p eevdf p90) us) + 1 ms" \
    "$(p fdl p90) <= $(p eevdf p90) * 2 + 1000"
check "the reader got its samples ($(p fdl samples), >= 80 % of EEVDF's $(p eevdf samples))" \
    "$(p fdl samples) >= $(p eevdf samples) * 0.8"

# Then a deadline container bound to one CPU (bench/scenarios/pinned.toml's shape; a pod given
# CPU 1 by the kubelet's static CPU manager): a probe in cgroup `pinned` (4 ms, 2 ms at wake-up,
# guaranteed 0.29 CPU, set at run time), every thread bound to CPU 1, beside two busy loops bound
# there, CPU 0 idle but for the tests' shell. Fair work's deadline is the whole machine's, behind
# vdt while a CPU idles, and within its protected share it stood ahead of every wake-up of the
# container: they waited out the loops' slices, 21 % of its starts late by scx_fdl's own count
# (2026-12-07, bench/run.sh pinned; 0.03 % since). Checked: under 5 %.
mkcg pinned 100
mkcg loops 100
for i in 1 2; do
    taskset -c 1 sh -c "echo \$\$ > $CG/loops/cgroup.procs; while :; do :; done" &
    PIDS="$PIDS $!"
done
scx_fdl set pinned deadline_rr=4ms deadline_wakeup=2ms guaranteed_shares=300 > /dev/null ||
    fail "scx_fdl set pinned deadline_rr=4ms deadline_wakeup=2ms guaranteed_shares=300"
taskset -c 1 sh -c "echo \$\$ > $CG/pinned/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 10000 --sleep-jitter-us 2500 --spin-us 1000 -r $secs -w 1 --json" \
    > /tmp/p-pinned.json 2> /tmp/p-pinned.err || fail "fdl-probe pinned exited $? ($(cat /tmp/p-pinned.err))"
starts=$(scx_json_field pinned nr_wake_starts)
missed=$(scx_json_field pinned nr_wake_misses)
say "the container bound to CPU 1: p99 $(p pinned p99) us, $missed of $starts wake-ups late"
check "a container bound to CPU 1 beside busy loops bound there: $missed of $starts wake-ups late (under 5 %)" \
    "${starts:-0} > 300 && ${missed:-0} * 20 < ${starts:-0}"
finish_scx
# The p50 and p90 comparisons are timings: a host that turned noisy during them withholds a
# failure's verdict (lib.sh's rig_gate after), as in ui-build.
rig_gate after
exit $FAILED
