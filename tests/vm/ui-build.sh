# Scenario (issue 11): a UI-like probe beside a build, bench/scenarios/desktop-mix.toml's shape.
# The probe (fdl-probe: a message thread wakes two workers every 16 ms, each spins 1 ms) runs in
# cgroup `desktop`, four CPU-bound stress-ng workers in cgroup `build` (make -j4 on 2 CPUs), both
# at cpu.weight 100 and without parameters. Under scx_fdl with its default --fair-preempt-us, then
# with --fair-preempt-us 0 (no fair wake-up preemption: a woken worker waits for a hog's slice and
# the tick after it), in one boot.
# Checks, with margins for the emulator:
#   - the probe preempted the build's CPU-bound work (fair_preempts > 0), at most as often as its
#     threads woke (hogs never preempt one another);
#   - the probe's p90 with fair wake-up preemption is below its p90 without;
#   - the build kept at least 90 % of its CPU time;
#   - scx_fdl stayed attached, dmesg clean, clean exits.
. ./lib.sh

secs=${FDL_PROBE_SECS:-8}
mkcg build 100
mkcg desktop 100

# probe TAG: the probe for $secs s; prints FDL-LATENCY TAG.
probe() {
    sh -c "echo \$\$ > $CG/desktop/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 16000 --spin-us 1000 -r $secs -w 2 --json" \
        > "/tmp/p-$1.json" 2> "/tmp/p-$1.err" || fail "fdl-probe $1 exited $? ($(cat /tmp/p-$1.err))"
    echo "FDL-LATENCY $1 p50=$(json_field /tmp/p-$1.json p50) p90=$(json_field /tmp/p-$1.json p90) p99=$(json_field /tmp/p-$1.json p99) samples=$(json_field /tmp/p-$1.json samples)"
}

# fair_preempts: scx_fdl's count of fair wake-up preemptions so far.
fair_preempts() { scx_fdl dump > /tmp/dump.json && json_field /tmp/dump.json fair_preempts; }

# run TAG: the probe beside the build; sets BUILD_CPUS, PREEMPTS (fair_preempts over the probe).
run() {
    local u0 f0
    f0=$(fair_preempts)
    u0=$(usage_usec build)
    probe "$1"
    BUILD_CPUS=$(cpus $(($(usage_usec build) - u0)) $((secs + 2)))
    PREEMPTS=$(($(fair_preempts) - ${f0:-0}))
    say "$1: build $BUILD_CPUS CPUs, $PREEMPTS fair preemptions"
}

sh -c "echo \$\$ > $CG/build/cgroup.procs; exec stress-ng --cpu 4 --cpu-load 100 --timeout 0" > /dev/null 2>&1 &
PIDS="$PIDS $!"
sleep 1
start_sched fdl || exit 1
run on
on_cpus=$BUILD_CPUS on_preempts=$PREEMPTS
stop_scx
start_sched fdl --fair-preempt-us 0 || exit 1
run off
off_cpus=$BUILD_CPUS off_preempts=$PREEMPTS

# The probe wakes its workers (samples: their wake-ups over the run) and its message thread, half
# as often, over the warm-up too (2 s of the 10): at most 1.5 x 10/8 x samples wake-ups in all.
wakes=$(json_field /tmp/p-on.json samples)
check "the probe preempted the build ($on_preempts times, at most its wake-ups: 2 x $wakes)" \
    "$on_preempts > 0 && $on_preempts <= ${wakes:-0} * 2"
check "--fair-preempt-us 0: none ($off_preempts)" "$off_preempts == 0"
p90() { json_field "/tmp/p-$1.json" p90; }
check "with fair wake-up preemption the probe's p90 ($(p90 on) us) is below its p90 without ($(p90 off) us)" \
    "$(p90 on) < $(p90 off)"
check "the build kept its CPU time ($on_cpus CPUs, without preemption $off_cpus)" "$on_cpus >= $off_cpus * 0.9"
pkill stress-ng
finish_scx
exit $FAILED
