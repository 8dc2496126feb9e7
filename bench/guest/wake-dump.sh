# Guest script (run with `vm/run.sh bench/guest/wake-dump.sh [SCX_FDL_OPTION...]`): the matrix's quiet `wake` shape
# without the harness, to see where its tail comes from. Three fdl-probe (a message thread wakes 2
# workers that spin 50 us every 10 ms) in first-level cgroups cfs, loose and fdl, all without
# parameters, 15 s under EEVDF, then 15 s under scx_fdl (with the options given), with
# `scx_fdl dump` before and after the scx_fdl run printed as one line each (DUMP0, DUMP1: subtract
# them for the run's counters and each cgroup's run-queue histogram, fdl_lat_bucket's log2 us).
# FDL-LATENCY lines: p50/p90/p99 (us) and the cgroup's usage_usec so far (cumulative).
. ./lib.sh
pids=
secs=${FDL_PROBE_SECS:-15}
for c in cfs loose fdl; do mkcg $c 100; done
runp() { # TAG
    for c in cfs loose fdl; do
        sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 10000 --spin-us 50 -r $secs -w 2 --json" \
            > "/tmp/p-$1-$c.json" 2> "/tmp/p-$1-$c.err" &
        pids="$pids $!"
    done
    # shellcheck disable=SC2086
    wait $pids
    pids=
    for c in cfs loose fdl; do
        echo "FDL-LATENCY $1 $c p50=$(json_field "/tmp/p-$1-$c.json" p50) p90=$(json_field "/tmp/p-$1-$c.json" p90)" \
            "p99=$(json_field "/tmp/p-$1-$c.json" p99) samples=$(json_field "/tmp/p-$1-$c.json" samples) cpu=$(usage_usec $c)"
    done
}
runp eevdf
start_sched fdl "$@" || exit 1
sleep 1
scx_fdl dump > /tmp/d0.json
runp fdl
scx_fdl dump > /tmp/d1.json
echo "DUMP0 $(tr -d '\n' < /tmp/d0.json)"
echo "DUMP1 $(tr -d '\n' < /tmp/d1.json)"
stop_scx
exit $FAILED
