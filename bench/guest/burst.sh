# Guest side of bench/burst.sh: the bandwidth-with-burst experiment of seed 003, under EEVDF (the
# kernel enforces cpu.max and counts in cpu.stat) and under scx_fdl (it enforces and counts; the
# kernel's cpu.stat stays 0 for sched_ext tasks), in the same boot.
#
# A bursty job (fdl-probe: one worker woken every SLEEP, spinning SPIN of CPU time) runs alone in
# cgroup `job` under cpu.max 20000 100000 (0.2 CPU), for each job shape and each burst setting:
# none, cpu.max.burst = the quota, and (scx_fdl only: the kernel refuses a burst above the quota)
# the seed's buffer of 10 x the quota (burst_buffer = "200ms", set with `scx_fdl set` at run time).
# Each case prints one FDL-BURST line: the counters' change over the measured SECS, and the probe's
# lateness (end of spin - wake - spin) p50/p99. Last, two busy loops under the same limit show
# throttled_usec summed over run queues (the kernel's meaning) under both.
. ./lib.sh

# Arguments: SECS SHAPE... (SHAPE = SPIN_US:SLEEP_US).
SECS=${1:-12}
[ $# -gt 0 ] && shift
SHAPES=${*:-"35000:200000 60000:400000"}
mkcg job 100
echo "20000 100000" > "$CG/job/cpu.max"
mkcg hogs2 100
echo "20000 100000" > "$CG/hogs2/cpu.max"

# counters SCHED [CGROUP]: "nr_periods nr_throttled throttled_usec nr_bursts burst_usec" of
# CGROUP (default job).
counters() {
    if [ "$1" = eevdf ]; then
        awk '$1 ~ /^(nr_periods|nr_throttled|throttled_usec|nr_bursts|burst_usec)$/ { v[$1] = $2 }
             END { print v["nr_periods"], v["nr_throttled"], v["throttled_usec"], v["nr_bursts"], v["burst_usec"] }' \
            "$CG/${2:-job}/cpu.stat"
    else
        scx_fdl get "${2:-job}" --json > /tmp/job.json
        echo "$(json_field /tmp/job.json nr_periods) $(json_field /tmp/job.json nr_throttled)" \
            "$(json_field /tmp/job.json throttled_usec) $(json_field /tmp/job.json nr_bursts)" \
            "$(json_field /tmp/job.json burst_usec)"
    fi
}

# run SCHED LABEL SPIN_US SLEEP_US
run() {
    sh -c "echo \$\$ > $CG/job/cgroup.procs; exec fdl-probe -m 1 -t 1 --spin-us $3 --sleep-us $4 \
        -w 3 -r $SECS --json" > /tmp/probe.json 2> /tmp/probe.err &
    probe=$!
    sleep 3
    set -- "$@" $(counters "$1")
    wait $probe
    set -- "$@" $(counters "$1")
    awk -v s="$1" -v l="$2" -v spin="$3" -v sleep="$4" -v secs="$SECS" \
        -v p0="$5" -v t0="$6" -v u0="$7" -v b0="$8" -v bu0="$9" \
        -v p1="${10}" -v t1="${11}" -v u1="${12}" -v b1="${13}" -v bu1="${14}" \
        -v p50="$(json_field /tmp/probe.json p50)" -v p99="$(json_field /tmp/probe.json p99)" \
        'BEGIN { p = p1 - p0; t = t1 - t0
                 printf "FDL-BURST sched=%s burst=%s job=%dms/%dms secs=%d nr_periods=%d nr_throttled=%d ratio=%.3f throttled_usec=%d nr_bursts=%d burst_usec=%d late_p50_us=%s late_p99_us=%s\n",
                        s, l, spin / 1000, sleep / 1000, secs, p, t, (p > 0 ? t / p : 0), u1 - u0, b1 - b0, bu1 - bu0, p50, p99 }'
    [ -s /tmp/probe.err ] && sed 's/^/    probe: /' /tmp/probe.err
}

# two_hogs SCHED: two busy loops under cpu.max 20000 100000 in cgroup hogs2 (no burst). The kernel
# sums throttled_usec over the cgroup's per-CPU run queues (two here): the line shows whether
# scx_fdl's throttled_usec means the same.
two_hogs() {
    hogs hogs2 2
    sleep 2
    set -- "$1" $(counters "$1" hogs2)
    sleep "$SECS"
    set -- "$@" $(counters "$1" hogs2)
    kill_all
    awk -v s="$1" -v secs="$SECS" -v p0="$2" -v t0="$3" -v u0="$4" -v p1="$7" -v t1="$8" -v u1="$9" \
        'BEGIN { p = p1 - p0; t = t1 - t0
                 printf "FDL-BURST sched=%s burst=none job=2-hogs secs=%d nr_periods=%d nr_throttled=%d ratio=%.3f throttled_usec=%d per_throttled_period_us=%d\n",
                        s, secs, p, t, (p > 0 ? t / p : 0), u1 - u0, (t > 0 ? (u1 - u0) / t : 0) }'
}

# cases SCHED: every shape with every burst setting the scheduler can have.
cases() {
    for shape in $SHAPES; do
        spin=${shape%%:*}
        sleep=${shape##*:}
        echo 0 > "$CG/job/cpu.max.burst"
        [ "$1" = fdl ] && scx_fdl set job burst_buffer=none > /dev/null 2>&1
        run "$1" none "$spin" "$sleep"
        echo 20000 > "$CG/job/cpu.max.burst"
        run "$1" cpu.max.burst=quota "$spin" "$sleep"
        if [ "$1" = fdl ]; then
            echo 0 > "$CG/job/cpu.max.burst"
            scx_fdl set job burst_buffer=200ms || fail "scx_fdl set job burst_buffer=200ms"
            run "$1" burst_buffer=10xquota "$spin" "$sleep"
            scx_fdl set job burst_buffer=none > /dev/null
        fi
    done
    two_hogs "$1"
}

say "EEVDF (the kernel enforces cpu.max)"
cases eevdf
start_sched fdl || exit 1
say "scx_fdl"
cases fdl
check_attached
stop_scx
exit $FAILED
