# Guest script (`vm/run.sh bench/guest/spin-sched-trace.sh [SCX_FDL_OPTION...]`): the matrix's quiet
# spin3-sleep20 shape within the guarantee (cgroups cfs; loose, deadline_rr 20 ms; fdl, 4 ms / 2 ms;
# both guaranteed_shares 900; one message thread and two workers each, 3 ms spins every 20 ms, each
# sleep drawn within 5 ms either side as in tests/vm/deadline.sh since 2026-11-27), 12 s
# under scx_fdl with the kernel's sched_waking / sched_wakeup / sched_switch, reschedule-interrupt and
# idle events (and a debugging build's bpf_printk lines) recorded, printed as TR lines, the probes'
# threads as THREADS lines (main, workers, message thread) and scx_fdl's counters as DUMP lines. bench/spin-trace.py finds the workers'
# wake-ups that spent longer than a threshold off a CPU before their spin ended, and what both CPUs
# did meanwhile. Leading KEY=VALUE arguments change the shape or the scheduler: spin=US sleep=US
# jitter=US (the sleep's draw either side) workers=N (per probe; 2) shares=N (loose's and fdl's guaranteed_shares; 0: none)
# sched=eevdf (the same workload under the kernel's default scheduler, for comparison), the peer
# scx_flash (FDL_EXTRA_BINS=.cache/peers/scx_flash-*/bin/scx_flash) or another build of scx_fdl
# given to the guest under another name (FDL_EXTRA_BINS), e.g. the matrix's wake shape without
# guarantees: `spin=50 sleep=10000 jitter=2500 shares=0`. cost=1: no trace; instead `scx_fdl cost`
# (ns per run of each callback of the scheduler attached) over the run, printed as COST lines.
# sched may list several, run one after another in the same boot (sched=scx_fdl,scx_flash,eevdf):
# with cost=1 as COST lines; traced, each run's lines (THREADS, FDL-LATENCY, DUMP, TR) one run
# after the other, which bench/split-trace.py cuts into one log per run for the readers.
# profile=1 (bench/insn-profile.sh, one scheduler, QEMU counting the instructions executed): no
# trace; the kernel's BPF statistics on while the scheduler is attached, its programs' run counts
# (BPFPROG lines: bpftool's JSON), addresses (BPFSYM lines: kallsyms) and the kernel's text
# symbols (KSYMS lines: gzip, base64) printed before it stops. antagonist=1: the matrix's antagonist
# beside the probes (hackbench -g 2 -f 10 -s 20000 -l 10, again and again, in cgroup antagonist).
# overcommit=1: instead, CPU-bound work that never sleeps, twice the CPUs, in cgroup antagonist,
# like the matrix's overcommit load (busy loops there; here stress-ng --cpu 2x CPUs --cpu-method
# int64, as in the traces of 2026-12-05 in docs/benchmarks.md).
# deadlines=rfc: the matrix's RFC deadlines (fdl 1 ms / 500 us, loose 5 ms / 2.5 ms). ipi=1: the
# IPIs sent (ipi_send_cpu, with the caller) and wake-ups of a polling idle CPU without one, too;
# ipi=2: also the function-call and timer interrupts taken (bench/remote-wake.py). rig=1: first the
# benchmarks' rig check (cyclictest at real-time priority on every CPU, 2 ms timer, 4 s: how late
# the host wakes an idle vCPU), its summary printed as RIG lines. stall=1: lib.sh's stall watch
# (cyclictest at real-time priority on every CPU, 10 ms timer) beside the probes, with the local
# timer interrupts recorded too, for bench/stall-trace.py; its summary as an FDL-STALL line.
# breaktrace=USEC: the same watch with cyclictest's -b USEC: the first wake-up later than USEC
# stops the trace there, and only its last 8000 lines are printed (FDL-BREAK says whether it
# stopped): what the CPUs did up to a stall, in a run long enough to meet one. secs=N: the
# probes' run (12 s). pin=1: the fdl probe's threads bound to CPU 1 (taskset), as the matrix's
# .cpus-fdl1 cells, and only CPU 1's events recorded (tracing_cpumask; the probe's own timers and
# wake-ups are there), so that a buffer holds a whole run. latestop=USEC (scx_fdl only): every
# half second scx_fdl's worst lateness is read (scx_fdl dump); once it passes USEC the trace
# stops, so that the buffer ends at the rare late start it looks for (FDL-LATESTOP says when).
. ./lib.sh
secs=12 spin=3000 sleep=20000 jitter=5000 workers=2 shares=900 sched=scx_fdl cost=0 profile=0 antagonist=0 overcommit=0 ipi=0 rig=0
stall=0 breaktrace=0 pin=0 latestop=0
deadlines=rr4-20
while [ $# -gt 0 ]; do
    case $1 in
        spin=*|sleep=*|jitter=*|workers=*|shares=*|sched=*|cost=*|profile=*|antagonist=*|overcommit=*|deadlines=*|ipi=*|rig=*|stall=*|breaktrace=*|secs=*|pin=*|latestop=*) eval "${1%%=*}=\${1#*=}"; shift ;;
        *) break ;;
    esac
done
scheds=$(echo "$sched" | tr ',' ' ')
case $profile$sched in 1*,*|1eevdf) echo "FDL-CHECK FAIL profile=1 needs one sched_ext scheduler (sched=$sched)"; exit 1 ;; esac
for s in $scheds; do
    [ "$s" = eevdf ] || command -v "$s" > /dev/null || { echo "FDL-CHECK FAIL sched=$s: no such binary in the guest (FDL_EXTRA_BINS)"; exit 1; }
done
# rig_line: lib.sh's rig_measure (samples, over 1 ms, worst in us, periods) as one RIG line; in a
# function, so that its set -- leaves the script's arguments (scx_fdl's options) alone.
rig_line() {
    local r
    r=$(rig_measure 4) || { echo "RIG none: no cyclictest, or it failed"; return; }
    set -- $r
    echo "RIG samples=$1 over_1ms=$2 max_us=$3 periods=$4"
}
[ "$rig" = 1 ] && rig_line
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs none $T
# breaktrace: the last moments only, in a buffer small enough to print in the emulator (about 0.2 s
# of events per CPU beside hackbench).
if [ "$breaktrace" != 0 ]; then echo 8000 > $T/buffer_size_kb; else echo 60000 > $T/buffer_size_kb; fi
[ "$pin" = 1 ] && echo 2 > $T/tracing_cpumask
for c in cfs loose fdl antagonist; do mkcg $c 100; done
g=; [ "$shares" -gt 0 ] && g="guaranteed_shares = $shares"
case $deadlines in
    rr4-20) loose='deadline_rr = "20ms"' fdl='deadline_rr = "4ms"
deadline_wakeup = "2ms"' ;;
    rfc) loose='deadline_rr = "5ms"
deadline_wakeup = "2500us"' fdl='deadline_rr = "1ms"
deadline_wakeup = "500us"' ;;
    *) echo "FDL-CHECK FAIL deadlines=$deadlines: rr4-20 or rfc"; exit 1 ;;
esac
cat > /tmp/fdl.toml <<EOT
[cgroup.loose]
$loose
$g
[cgroup.fdl]
$fdl
$g
EOT

# start NAME [SCX_FDL_OPTION...]: attach scheduler NAME (eevdf: nothing to attach).
start() {
    s=$1
    shift
    case $s in
        eevdf) return 0 ;;
        scx_fdl) start_sched fdl --config /tmp/fdl.toml "$@" || return 1 ;;
        scx_flash) scx_flash > /tmp/sched.log 2>&1 & ;;
        *) "$s" --config /tmp/fdl.toml "$@" > /tmp/sched.log 2>&1 & ;;
    esac
    [ "$s" = scx_fdl ] || SCX_PID=$!
    i=0
    while [ "$(scx_state)" != enabled ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(scx_state)" = enabled ] || { echo "FDL-CHECK FAIL $s did not attach: $(tail -3 /tmp/sched.log)"; return 1; }
}

# stop NAME: detach it and wait until sched_ext is disabled again.
stop() {
    [ "$1" = eevdf ] && return 0
    kill -INT "$SCX_PID"
    wait "$SCX_PID"
    i=0
    while [ "$(scx_state)" != disabled ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}

for s in $scheds; do
    [ "$profile" = 1 ] && { sysctl -q -w kernel.bpf_stats_enabled=1; sysctl -q -w net.core.bpf_jit_kallsyms=1; }
    start "$s" "$@" || exit 1
    sleep 2
    echo > $T/trace
    events="sched/sched_waking sched/sched_wakeup sched/sched_switch irq_vectors/reschedule_entry power/cpu_idle"
    [ "$ipi" -ge 1 ] && events="$events ipi/ipi_send_cpu sched/sched_wake_idle_without_ipi"
    [ "$ipi" -ge 2 ] && events="$events irq_vectors/call_function_single_entry irq_vectors/local_timer_entry"
    [ "$stall$breaktrace" != 00 ] && [ "$ipi" -lt 2 ] && events="$events irq_vectors/local_timer_entry"
    for e in $events; do
        [ -e $T/events/$e/enable ] && echo 1 > $T/events/$e/enable
    done
    [ "$cost$profile" = 00 ] && echo 1 > $T/tracing_on
    pids= hb=
    if [ "$antagonist" = 1 ]; then
        sh -c "echo \$\$ > $CG/antagonist/cgroup.procs; while :; do hackbench -g 2 -f 10 -s 20000 -l 10 > /dev/null 2>&1; done" &
        hb=$!
    elif [ "$overcommit" = 1 ]; then
        sh -c "echo \$\$ > $CG/antagonist/cgroup.procs; exec stress-ng --cpu $((2 * $(nproc))) --cpu-method int64 -t 100000 > /dev/null 2>&1" &
        hb=$!
    fi
    for c in cfs loose fdl; do
        bind=
        [ "$pin" = 1 ] && [ $c = fdl ] && bind="taskset -c 1"
        sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec $bind fdl-probe -m 1 -t $workers --sleep-us $sleep --sleep-jitter-us $jitter --spin-us $spin -r $secs -w 1 --json" \
            > "/tmp/p-$c.json" 2> "/tmp/p-$c.err" &
        pids="$pids $!"
    done
    lw=
    if [ "$latestop" != 0 ] && [ "$s" = scx_fdl ]; then
        (sleep 3; while [ "$(cat $T/tracing_on)" = 1 ]; do
            worst=$(scx_fdl dump 2>/dev/null | grep -o '"max_lateness_ns": *[0-9]*' | grep -o '[0-9]*$' | sort -n | tail -1)
            if [ "${worst:-0}" -gt $((latestop * 1000)) ]; then
                echo 0 > $T/tracing_on
                echo "FDL-LATESTOP worst lateness ${worst} ns at $(cut -d' ' -f1 /proc/uptime) s"
            fi
            sleep 0.5
        done) &
        lw=$!
    fi
    if [ "$breaktrace" != 0 ]; then
        stall_watch_start -b "$breaktrace" --tracemark
    elif [ "$stall" = 1 ]; then
        stall_watch_start
    fi
    sleep 3
    for c in cfs loose fdl; do echo "THREADS $c $(tr '\n' ' ' < $CG/$c/cgroup.threads)"; done
    [ "$cost" != 0 ] && [ "$s" != eevdf ] && scx_fdl cost --secs $((secs - 4)) 2>&1 | sed "s/^/COST $s /"
    wait $pids
    [ -n "$lw" ] && kill $lw 2>/dev/null
    broke=0
    [ "$breaktrace" != 0 ] && [ "$(cat $T/tracing_on)" = 0 ] && broke=1
    [ "$stall$breaktrace" != 00 ] && stall_watch_stop "$s"
    if [ "$breaktrace" != 0 ]; then
        echo "FDL-BREAK $s stopped=$broke threshold_us=$breaktrace: $(grep '^# Break' /tmp/stall.txt | tr '\n' ' ')"
    fi
    if [ -n "$hb" ]; then
        kill $hb
        while [ -s $CG/antagonist/cgroup.procs ]; do kill -9 $(cat $CG/antagonist/cgroup.procs) 2>/dev/null; sleep 0.2; done
    fi
    echo 0 > $T/tracing_on
    for c in cfs loose fdl; do
        echo "FDL-LATENCY $s $c p50=$(json_field "/tmp/p-$c.json" p50) p90=$(json_field "/tmp/p-$c.json" p90) p99=$(json_field "/tmp/p-$c.json" p99) samples=$(json_field "/tmp/p-$c.json" samples)"
    done
    case $s in eevdf|scx_flash) ;; *) scx_fdl dump 2>/dev/null | tr ',{' '\n\n' | grep -E '^ *"[a-z_]+": *[0-9]+ *$' | head -160 | sed "s/^/DUMP $s /" ;; esac
    if [ "$profile" = 1 ]; then
        # All before the scheduler stops: the emulator sometimes faults patching the kernel's
        # static keys as sched_ext switches off (an int3 oops, as the VM tests' retries know),
        # and the counts, written when QEMU exits, are still good. The run counts last: the
        # scheduler runs on while the rest is printed (seconds of gzip under TCG), and
        # instructions counted after them, with no runs to divide by, inflated every callback's
        # figure per run (enqueue 683 -> 934 in the wake shape on one build).
        # bench/insn-profile.sh --lines: the programs' JIT code by source line.
        command -v jit_lines > /dev/null && jit_lines | gzip -c | base64 | sed 's/^/JITLINES /'
        grep ' [tT] ' /proc/kallsyms | grep -v '\[bpf\]$' | gzip -c | base64 | sed 's/^/KSYMS /'
        grep '\[bpf\]$' /proc/kallsyms | sed 's/^/BPFSYM /'
        bpftool prog show --json | sed 's/^/BPFPROG /'
    fi
    if [ "$breaktrace" != 0 ]; then
        [ "$broke" = 1 ] && grep -E "sched_waking|sched_wakeup|sched_switch|reschedule_entry|cpu_idle|bpf_trace_printk|local_timer_entry|tracing_mark_write" $T/trace | tail -8000 | sed "s/^/TR /"
    elif [ "$cost$profile" = 00 ]; then
        grep -E "sched_waking|sched_wakeup|sched_switch|reschedule_entry|cpu_idle|bpf_trace_printk|ipi_send_cpu|sched_wake_idle_without_ipi|call_function_single_entry|local_timer_entry" $T/trace | sed "s/^/TR /"
    fi
    stop "$s"
done
exit $FAILED
