# Guest side of bench/nested.sh: a deadline pod on a Kubernetes-shaped tree, under EEVDF and under
# scx_fdl (without parameters, then with the pod's deadlines), in the same boot.
#
# Tree (every cpu.weight 100): kubepods.slice/kubepods-burstable.slice/ with three pods, each with
# one container scope: `rt` (the probe; under `fdl-dl` deadline_rr 4ms, deadline_wakeup 2ms, from
# `scx_fdl set`), `plain` (the same probe, no parameters) and `hack` (hackbench -g 2 -f 10: 40
# tasks); beside kubepods.slice, a first-level cgroup `other` with two busy loops.
# The probe: fdl-probe, a message thread waking 2 workers that spin SPIN_US and sleep SLEEP_US.
# One FDL-NESTED line per scheduler: the probes' wake-to-end-of-spin lateness p50/p99 (us) in
# both pods, and the CPU of `other` and of kubepods.slice over the run.
. ./lib.sh

SECS=${1:-20} SPIN=${2:-1000} SLEEP=${3:-20000}
B=kubepods.slice/kubepods-burstable.slice
for c in kubepods.slice "$B" other; do mkcg "$c" 100; done
for p in rt plain hack; do
    mkcg "$B/kubepods-burstable-pod$p.slice" 100
    mkcg "$B/kubepods-burstable-pod$p.slice/cri-containerd-$p.scope" 100
done
scope() { echo "$B/kubepods-burstable-pod$1.slice/cri-containerd-$1.scope"; }

# run LABEL
run() {
    sh -c "echo \$\$ > $CG/$(scope hack)/cgroup.procs; exec hackbench -g 2 -f 10 -s 20000 -l 100000000" \
        > /dev/null 2>&1 &
    PIDS="$PIDS $!"
    hogs other 2
    sleep 2
    for p in rt plain; do
        sh -c "echo \$\$ > $CG/$(scope $p)/cgroup.procs; exec fdl-probe -m 1 -t 2 --spin-us $SPIN --sleep-us $SLEEP -w 3 -r $SECS --json" \
            > "/tmp/probe-$p.json" 2> "/tmp/probe-$p.err" &
        eval "probe_$p=\$!"
    done
    measure $((SECS - 2)) other kubepods.slice
    # shellcheck disable=SC2154
    wait "$probe_rt"; wait "$probe_plain"
    kill_all
    echo "FDL-NESTED sched=$1 probe=${SPIN}us/${SLEEP}us secs=$SECS" \
        "rt_p50=$(json_field /tmp/probe-rt.json p50) rt_p99=$(json_field /tmp/probe-rt.json p99)" \
        "plain_p50=$(json_field /tmp/probe-plain.json p50) plain_p99=$(json_field /tmp/probe-plain.json p99)" \
        "other_cpus=$(cpus "$(used other)" $((SECS - 2))) kubepods_cpus=$(cpus "$(used kubepods.slice)" $((SECS - 2)))"
    cat /tmp/probe-*.err 2>/dev/null | sed 's/^/    probe: /'
}

say "EEVDF"
run eevdf
start_scx || exit 1
say "scx_fdl, no parameters"
run fdl-fair
scx_fdl set "$B/kubepods-burstable-podrt.slice" deadline_rr=4ms deadline_wakeup=2ms ||
    fail "scx_fdl set the rt pod's deadlines"
say "scx_fdl, the rt pod with deadlines"
run fdl-dl
scx_fdl get "$B/kubepods-burstable-podrt.slice" | sed 's/^/    /'
check_attached
stop_scx
exit $FAILED
