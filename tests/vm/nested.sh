# Scenario: deadlines at any depth, where a Kubernetes node has its pods: three levels down
# (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope).
#   - a pattern rule of the configuration gives deadlines (4 ms, wake-up 2 ms) to every burstable
#     pod whose uid starts with "rt"; that pod is created after start;
#   - the same latency probe (a message thread wakes 2 workers, spin 1 ms, sleep 20 ms: 0.1 CPU)
#     runs in that pod and in a pod without parameters, beside a pod running hackbench;
#   - a first-level cgroup `other` with two hogs, cpu.weight 100 like kubepods.slice.
# Checks (margins for the emulator's 4 ms tick and 2 ms wake-up floor):
#   - the pod picks its deadlines up, and its work runs under them (starts counted: nr_picks);
#   - its probe's p99 is at most 0.85 x the same probe's in the pod without parameters, in the
#     same run (both beside the same load on the same host);
#   - `other` keeps its half of the machine (-15 %): the pod's deadline work comes out of its
#     ancestors' share, not the other first-level cgroup's;
#   - a deadline inside the deadline pod is refused with the reason, and changes nothing;
#   - `scx_fdl set` at run time makes the other pod a deadline container too;
#   - attached, dmesg clean, exits 0.
# Its p99 is a timing, judged against the plain pod's in the same run. Until 2026-12-02 it was held
# to deadline_rr + 6 ms, a figure of a quiet host (the deadline pod read 3.8 ms there, EEVDF 5.6),
# which the host of that day failed (22.8 ms in the stop's CI, the plain pod 34.8; 10.2 ms in a
# rerun whose rig check read 6 % late). Held instead to 1.2 x EEVDF's in the same boot, it passed
# once (9.2 ms against 10.6) and failed once (9.8 against 7.1, rig check 3.7 % late): EEVDF gives
# kubepods.slice more than its weight (1.25 CPU against `other`'s 0.75 in bench/nested.sh, where
# scx_fdl gives 1.04 and 0.94), so its pods' tails are not the same test. Against the plain pod,
# which meets the same host and the same share, the deadline pod read 0.60-0.74 x in those runs
# (bench/nested.sh: 0.59 x); EEVDF's figures are the benchmark's. lib.sh's rig gate withholds the
# verdict of a boot whose host wakes idle vCPUs late, before the test and, after a failed check,
# after it.
. ./lib.sh

rig_gate

secs=${FDL_PROBE_SECS:-15}
B=kubepods.slice/kubepods-burstable.slice
RT=$B/kubepods-burstable-podrt5e6f7a8_9b0c_4d1e_8f2a_3b4c5d6e7f80.slice
PLAIN=$B/kubepods-burstable-pod0a1b2c3d_4e5f_4a6b_8c7d_8e9f0a1b2c3d.slice
HACK=$B/kubepods-burstable-pod9f8e7d6c_5b4a_4392_8170_6f5e4d3c2b1a.slice
for c in kubepods.slice "$B" "$PLAIN" "$PLAIN/cri-containerd-p1.scope" "$HACK" \
    "$HACK/cri-containerd-h1.scope" other; do
    mkcg "$c" 100
done
cat > /tmp/nested.toml <<TOML
[cgroup."kubepods.slice/*/kubepods-burstable-podrt*.slice"]
deadline_rr = "4ms"
deadline_wakeup = "2ms"
TOML

start_scx --config /tmp/nested.toml || exit 1
mkcg "$RT" 100
mkcg "$RT/cri-containerd-r1.scope" 100
sleep 2.5	# patterns are matched again every second
rr=$(scx_json_field "$RT" deadline_rr_ns)
[ "$rr" = 4000000 ] && pass "a pod created after start, three levels down, gets its deadlines from a pattern rule" ||
    fail "a pod created after start, three levels down, gets its deadlines from a pattern rule: deadline_rr_ns $rr, want 4000000"

sh -c "echo \$\$ > $CG/$HACK/cri-containerd-h1.scope/cgroup.procs; exec hackbench -g 2 -f 10 -s 20000 -l 100000000" \
    > /dev/null 2>&1 &
PIDS="$PIDS $!"
hogs other 2
sleep 2

say "probes (1 message thread x 2 workers, spin 1000 us, sleep 20000 us) for $secs s in a deadline pod and a plain pod, beside a hackbench pod"
probes=""
for c in "$RT/cri-containerd-r1.scope" "$PLAIN/cri-containerd-p1.scope"; do
    f=/tmp/probe-$(basename "$c").json
    sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 20000 --spin-us 1000 -r $secs -w 3 --json" \
        > "$f" 2> "$f.err" &
    probes="$probes $!"
done
measure 10 other kubepods.slice
for p in $probes; do wait "$p" || fail "fdl-probe exited $? ($(cat /tmp/probe-*.err))"; done
for c in r1 p1; do
    f=/tmp/probe-cri-containerd-$c.scope.json
    echo "FDL-LATENCY fdl nested $c p50=$(json_field "$f" p50) p90=$(json_field "$f" p90) p99=$(json_field "$f" p99) p99.9=$(json_field "$f" p99.9) samples=$(json_field "$f" samples)"
done
rt=$(json_field /tmp/probe-cri-containerd-r1.scope.json p99)
plain=$(json_field /tmp/probe-cri-containerd-p1.scope.json p99)
picks=$(scx_json_field "$RT" nr_picks)
misses=$(scx_json_field "$RT" nr_misses)
echo "FDL-DEADLINE rt-pod misses=$misses picks=$picks worst_late_ns=$(scx_json_field "$RT" max_lateness_ns)"
scx_fdl list | sed 's/^/    /'
oth=$(cpus "$(used other)" 10)
kp=$(cpus "$(used kubepods.slice)" 10)
check "the deadline pod's work starts under its deadlines (nr_picks $picks > 100)" "${picks:-0} > 100"
check "the deadline pod's p99 ($rt us) at most 0.85 x the plain pod's ($plain us), the same probe beside the same hackbench" \
    "${rt:-999999} <= ${plain:-0} * 0.85"
check "the other first-level cgroup keeps its half of the machine: $oth CPU (>= 0.85; kubepods.slice $kp)" "$oth >= 0.85"

out=$(scx_fdl set "$RT/cri-containerd-r1.scope" deadline_rr=1ms 2>&1)
rc=$?
echo "    scx_fdl set (inside the deadline pod): rc $rc: $out"
[ $rc != 0 ] && echo "$out" | grep -q "inside" && echo "$out" | grep -q "has deadlines too" &&
    [ "$(scx_json_field "$RT/cri-containerd-r1.scope" deadline_rr_ns)" != 1000000 ] &&
    pass "a deadline inside the deadline pod is refused with the reason, and changes nothing" ||
    fail "a deadline inside the deadline pod is refused with the reason, and changes nothing"

scx_fdl set "$PLAIN" deadline_rr=10ms || fail "scx_fdl set $PLAIN deadline_rr=10ms"
before=$(scx_json_field "$PLAIN" nr_picks)
sh -c "echo \$\$ > $CG/$PLAIN/cri-containerd-p1.scope/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 20000 --spin-us 1000 -r 3 -w 1 --json" \
    > /dev/null 2>&1 || fail "fdl-probe in the plain pod, now a deadline container"
after=$(scx_json_field "$PLAIN" nr_picks)
check "scx_fdl set at run time makes a nested pod a deadline container: its starts counted ($before -> $after)" \
    "${after:-0} > ${before:-0} + 50"

finish_scx
rig_gate after
exit $FAILED
