# Scenario (issue 11): a UI-like probe beside a build, bench/scenarios/desktop-mix.toml's shape.
# The probe (fdl-probe: a message thread wakes two workers every 16 ms, each spins 1 ms) runs in
# cgroup `desktop`, four CPU-bound stress-ng workers in cgroup `build` (make -j4 on 2 CPUs), both
# at cpu.weight 100 and without parameters. Under scx_fdl with its default --fair-preempt-us, then
# with --fair-preempt-us 0 (no fair wake-up preemption: a woken worker waits for a hog's slice and
# the tick after it), in one boot.
# Then the same probe inside `build`, beside its own cgroup's busy workers (a pod's health check
# beside its batch job): with --sibling-preempt-us 20000 (off by default), then 0 (the probe then
# waits for a worker's slice to end); fair preemption on in both.
# Then a render-like probe inside `build` (its workers spin 8 ms every 40 ms: a frame longer than a
# slice and its wake credit) with --interactive-us 5000 and without (the default, 0): after its
# first slice the rest of a frame waits behind the busy workers unless it is classified
# interactive.
# Checks, with margins for the emulator:
#   - the probe preempted the build's CPU-bound work (fair_preempts > 0), at most as often as its
#     threads woke (hogs never preempt one another);
#   - the probe's p90 with fair wake-up preemption is below its p90 without;
#   - inside `build`, the probe took its siblings' CPUs (sibling_preempts > 0, at most as often
#     as its threads woke) and its p90 is below its p90 without;
#   - the build kept at least 90 % of its CPU time;
#   - with --interactive-us the render probe's threads were queued as interactive
#     (interactive_wakeups > 0: woken with the interactive credit), none without, and its p90 is below its p90 without; the build
#     keeps 90 % of its CPU time;
#   - scx_fdl stayed attached, dmesg clean, clean exits.
. ./lib.sh

secs=${FDL_PROBE_SECS:-8}
mkcg build 100
mkcg desktop 100

# probe TAG [CGROUP]: the probe (its shape: $SHAPE, UI or RENDER) for $secs s in CGROUP (desktop);
# prints FDL-LATENCY TAG.
UI="--sleep-us 16000 --spin-us 1000"
RENDER="--sleep-us 40000 --spin-us 8000"
SHAPE=$UI
probe() {
    sh -c "echo \$\$ > $CG/${2:-desktop}/cgroup.procs; exec fdl-probe -m 1 -t 2 $SHAPE -r $secs -w 2 --json" \
        > "/tmp/p-$1.json" 2> "/tmp/p-$1.err" || fail "fdl-probe $1 exited $? ($(cat /tmp/p-$1.err))"
    echo "FDL-LATENCY $1 p50=$(json_field /tmp/p-$1.json p50) p90=$(json_field /tmp/p-$1.json p90) p99=$(json_field /tmp/p-$1.json p99) samples=$(json_field /tmp/p-$1.json samples)"
}

# counter NAME: scx_fdl's count NAME (fair_preempts, sibling_preempts, interactive_wakeups) so far.
counter() { scx_fdl dump > /tmp/dump.json && json_field /tmp/dump.json "$1"; }

# run TAG [CGROUP]: the probe beside the build (in CGROUP, desktop); sets BUILD_CPUS, PREEMPTS,
# SIBLINGS and INTERACTIVE (fair_preempts, sibling_preempts and interactive_wakeups over the probe).
run() {
    local u0 f0 s0 i0
    f0=$(counter fair_preempts)
    s0=$(counter sibling_preempts)
    i0=$(counter interactive_wakeups)
    u0=$(usage_usec build)
    probe "$1" "${2:-desktop}"
    BUILD_CPUS=$(cpus $(($(usage_usec build) - u0)) $((secs + 2)))
    PREEMPTS=$(($(counter fair_preempts) - ${f0:-0}))
    SIBLINGS=$(($(counter sibling_preempts) - ${s0:-0}))
    INTERACTIVE=$(($(counter interactive_wakeups) - ${i0:-0}))
    say "$1: build $BUILD_CPUS CPUs, $PREEMPTS fair preemptions, $SIBLINGS sibling preemptions, $INTERACTIVE interactive wake-ups"
}

# restart_scx OPTION...: scx_fdl again with other options, the build frozen meanwhile (lib.sh's
# hold). The first start (below) loads scx_fdl beside the build, as an operator would; the
# restarts only change options.
restart_scx() {
    hold build 1
    stop_scx
    start_sched fdl "$@"
    rc=$?
    hold build 0
    return $rc
}

sh -c "echo \$\$ > $CG/build/cgroup.procs; exec stress-ng --cpu 4 --cpu-load 100 --timeout 0" > /dev/null 2>&1 &
PIDS="$PIDS $!"
sleep 1
start_sched fdl --sibling-preempt-us 20000 || exit 1
run on
on_cpus=$BUILD_CPUS on_preempts=$PREEMPTS
run sib-on build
sib_on_cpus=$BUILD_CPUS sib_on=$SIBLINGS
restart_scx --sibling-preempt-us 0 || exit 1
run sib-off build
sib_off_cpus=$BUILD_CPUS sib_off=$SIBLINGS
SHAPE=$RENDER
run render-off build
render_off_cpus=$BUILD_CPUS render_off=$INTERACTIVE
restart_scx --interactive-us 5000 || exit 1
run render-on build
render_on_cpus=$BUILD_CPUS render_on=$INTERACTIVE
SHAPE=$UI
restart_scx --fair-preempt-us 0 --sibling-preempt-us 0 || exit 1
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
swakes=$(json_field /tmp/p-sib-on.json samples)
check "inside the build, the probe took its siblings' CPUs ($sib_on times, at most its wake-ups: 2 x $swakes)" \
    "$sib_on > 0 && $sib_on <= ${swakes:-0} * 2"
check "--sibling-preempt-us 0: none ($sib_off)" "$sib_off == 0"
check "inside the build, the probe's p90 with sibling preemption ($(p90 sib-on) us) is below its p90 without ($(p90 sib-off) us)" \
    "$(p90 sib-on) < $(p90 sib-off)"
check "the build's own CPU time with its probe inside ($sib_on_cpus CPUs, without sibling preemption $sib_off_cpus)" \
    "$sib_on_cpus >= $sib_off_cpus * 0.9"
check "with --interactive-us the render probe's threads woke as interactive ($render_on times)" \
    "$render_on > 0"
check "--interactive-us 0: none ($render_off)" "$render_off == 0"
check "the render probe's p90 with the classifier ($(p90 render-on) us) is below its p90 without ($(p90 render-off) us)" \
    "$(p90 render-on) < $(p90 render-off)"
check "the build's CPU time with the classifier ($render_on_cpus CPUs, without $render_off_cpus)" \
    "$render_on_cpus >= $render_off_cpus * 0.9"
pkill stress-ng
finish_scx
# Its p90 comparisons are timings: a host that turned noisy during them withholds a failure's
# verdict (lib.sh's rig_gate after; a clean-clone CI run of 2026-12-02 failed two of them, 2003
# against 1536 us and 2108 against 1977, on a host whose other timing cases met such noise).
rig_gate after
exit $FAILED
