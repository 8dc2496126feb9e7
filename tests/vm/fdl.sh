# Scenario: the FDL experiment in small. A hackbench antagonist in its own cgroup and three
# identical latency probes (fdl-probe: sleep, be woken, spin, record the delay) in cgroups
#   cfs        no parameters (fair work)
#   fdl-loose  deadline_rr 5 ms, deadline_wakeup 2.5 ms (the RFC's values)
#   fdl        deadline_rr 1 ms, deadline_wakeup 500 us (the RFC's 200 us / 100 us, raised to the
#              emulator's latency floor)
# Fair work as a whole has the default 5 ms deadline, as in the RFC. As in the RFC, both FDL cgroups
# have guaranteed_shares 7000 under scx_fdl; EEVDF has no guarantees, so there cpu.weight 700 (7x
# the others) stands in for them.
# Args: [fdl|eevdf] [antagonist|quiet] [check|report]
. ./lib.sh

sched=${1:-fdl}
load=${2:-antagonist}
mode=${3:-check}
secs=${FDL_PROBE_SECS:-20}

cat > /tmp/fdl.toml <<'TOML'
[cgroup.fdl-loose]
deadline_rr = "5ms"
deadline_wakeup = "2500us"
guaranteed_shares = 7000

[cgroup.fdl]
deadline_rr = "1ms"
deadline_wakeup = "500us"
guaranteed_shares = 7000
TOML

fdl_weight=700
[ "$sched" = fdl ] && fdl_weight=100
for c in antagonist cfs; do mkcg "$c" 100; done
for c in fdl-loose fdl; do mkcg "$c" $fdl_weight; done
if [ "$load" = antagonist ]; then
    sh -c "echo \$\$ > $CG/antagonist/cgroup.procs; exec hackbench -g 2 -f 10 -s 20000 -l 100000000" \
        > /dev/null 2>&1 &
    PIDS="$PIDS $!"
fi
if [ "$sched" = fdl ]; then start_sched fdl --config /tmp/fdl.toml || exit 1; else start_sched "$sched"; fi
sleep 2

say "three probes (1 message thread x 2 workers, sleep 20 ms, spin 3 ms) for $secs s, $load"
for c in cfs fdl-loose fdl; do
    sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 20000 --spin-us 3000 -r $secs -w 3 --json" \
        > "/tmp/probe-$c.json" 2> "/tmp/probe-$c.err" &
    probes="$probes $!"
done
for p in $probes; do wait "$p" || fail "fdl-probe exited $? ($(cat /tmp/probe-*.err))"; done

for c in cfs fdl-loose fdl; do
    f=/tmp/probe-$c.json
    echo "FDL-LATENCY $sched $load $c p50=$(json_field $f p50) p99=$(json_field $f p99) p99.9=$(json_field $f p99.9) samples=$(json_field $f samples)"
done
cfs=$(json_field /tmp/probe-cfs.json p99)
loose=$(json_field /tmp/probe-fdl-loose.json p99)
fdl=$(json_field /tmp/probe-fdl.json p99)

if [ "$sched" = fdl ]; then
    check_attached
    check_dmesg_clean
fi
kill_all
if [ "$sched" = fdl ]; then
    stop_scx
    [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 (got $SCX_RC)"
fi
echo "FDL-RATIO $sched $load cfs/fdl p99 = $(awk -v a="$cfs" -v b="$fdl" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
if [ "$mode" = check ] && [ "$sched" = fdl ]; then
    check "a tighter deadline does no worse: fdl ($fdl us) <= fdl-loose ($loose us) + 10 %" "$fdl <= $loose * 1.1"
fi
exit $FAILED
