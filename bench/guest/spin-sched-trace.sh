# Guest script (`vm/run.sh bench/guest/spin-sched-trace.sh [SCX_FDL_OPTION...]`): the matrix's quiet
# spin3-sleep20 shape within the guarantee (cgroups cfs; loose, deadline_rr 20 ms; fdl, 4 ms / 2 ms;
# both guaranteed_shares 900; one message thread and two workers each, 3 ms spins every 20 ms, each
# sleep drawn within 5 ms either side as in tests/vm/deadline.sh since 2026-11-27), 12 s
# under scx_fdl with the kernel's sched_waking / sched_wakeup / sched_switch, reschedule-interrupt and
# idle events recorded, printed as TR lines, the probes' threads as THREADS lines (main, workers,
# message thread) and scx_fdl's counters as DUMP lines. bench/spin-trace.py finds the workers'
# wake-ups that spent longer than a threshold off a CPU before their spin ended, and what both CPUs
# did meanwhile.
. ./lib.sh
secs=12
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs none $T
echo 60000 > $T/buffer_size_kb
for c in cfs loose fdl; do mkcg $c 100; done
cat > /tmp/fdl.toml <<'EOT'
[cgroup.loose]
deadline_rr = "20ms"
guaranteed_shares = 900
[cgroup.fdl]
deadline_rr = "4ms"
deadline_wakeup = "2ms"
guaranteed_shares = 900
EOT
start_sched fdl --config /tmp/fdl.toml "$@" || exit 1
sleep 2
echo > $T/trace
for e in sched/sched_waking sched/sched_wakeup sched/sched_switch irq_vectors/reschedule_entry power/cpu_idle; do
    [ -e $T/events/$e/enable ] && echo 1 > $T/events/$e/enable
done
echo 1 > $T/tracing_on
pids=
for c in cfs loose fdl; do
    sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 20000 --sleep-jitter-us 5000 --spin-us 3000 -r $secs -w 1 --json" \
        > "/tmp/p-$c.json" 2> "/tmp/p-$c.err" &
    pids="$pids $!"
done
sleep 3
for c in cfs loose fdl; do echo "THREADS $c $(tr '\n' ' ' < $CG/$c/cgroup.threads)"; done
wait $pids
echo 0 > $T/tracing_on
for c in cfs loose fdl; do
    echo "FDL-LATENCY $c p50=$(json_field "/tmp/p-$c.json" p50) p90=$(json_field "/tmp/p-$c.json" p90) p99=$(json_field "/tmp/p-$c.json" p99) samples=$(json_field "/tmp/p-$c.json" samples)"
done
scx_fdl dump 2>/dev/null | grep -E '"nr_|dispatch' | sed 's/^/DUMP /'
grep -E "sched_waking|sched_wakeup|sched_switch|reschedule_entry|cpu_idle" $T/trace | sed "s/^/TR /"
stop_scx
exit $FAILED
