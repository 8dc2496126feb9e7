# Guest script (`vm/run.sh bench/guest/wake-sched-trace.sh [SCX_FDL_OPTION...]`; a configuration file
# travels with FDL_GUEST_FILES=FILE and is then /scenario/NAME): the matrix's quiet `wake` shape, 6 s
# under EEVDF then 6 s under scx_fdl, with the kernel's sched_waking / sched_wakeup / sched_switch events recorded
# for each, printed as TR lines; bench/wake-trace.py pairs each probe wake-up with the switch that ran
# it, by where it ran (the waker's CPU or another, idle or busy before).
. ./lib.sh
pids=
secs=6
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T
echo 30000 > $T/buffer_size_kb
for c in cfs loose fdl; do mkcg $c 100; done
runp() {
    echo > $T/trace
    echo 1 > $T/events/sched/sched_waking/enable
    echo 1 > $T/events/sched/sched_wakeup/enable
    echo 1 > $T/events/sched/sched_switch/enable
    # What happens between the waker and an idle target: the IPI, its handler, the idle exit.
    for e in ipi/ipi_send_cpu ipi/ipi_send_cpumask irq_vectors/call_function_single_entry \
             irq_vectors/reschedule_entry irq_vectors/local_timer_entry power/cpu_idle; do
        [ -e $T/events/$e/enable ] && echo 1 > $T/events/$e/enable
    done
    echo 1 > $T/tracing_on
    for c in cfs loose fdl; do
        sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 10000 --spin-us 50 -r $secs -w 1 --json" \
            > "/tmp/p-$1-$c.json" 2> "/tmp/p-$1-$c.err" &
        pids="$pids $!"
    done
    wait $pids
    pids=
    echo 0 > $T/tracing_on
    for c in cfs loose fdl; do
        echo "FDL-LATENCY $1 $c p50=$(json_field "/tmp/p-$1-$c.json" p50) p90=$(json_field "/tmp/p-$1-$c.json" p90) p99=$(json_field "/tmp/p-$1-$c.json" p99) samples=$(json_field "/tmp/p-$1-$c.json" samples)"
    done
    grep -E "sched_waking|sched_wakeup|sched_switch|ipi_send|_entry|cpu_idle" $T/trace | sed "s/^/TR $1 /"
}
runp eevdf
start_sched fdl "$@" || exit 1
sleep 1
runp fdl
stop_scx
exit $FAILED
