# Scenario: --fair-protection. Two deadline containers guaranteed 0.88 CPU each (guaranteed_shares
# 900: 1.76 of 2 CPUs, within the machine less the 5 % floor, so granted as asked), g1 (4 ms) and
# g2 (20 ms), two busy loops each, beside fair cgroup f with two; all at cpu.weight 100. Run twice
# in one boot:
# - weighted (the default, issue 11): fair work keeps its share at the containers' cpu.weight
#   (1/3 of 2 CPUs); the guarantees are scaled into the rest (guarantee_scale below 1);
# - floor: fair work keeps what the guarantees leave (0.24 CPU); they are never scaled, and each
#   container gets its whole guarantee.
# Checked within 10 %. Then, under floor, a guarantee three levels down, given at run time while its
# busy loops run (`scx_fdl set`, as bench/guest/nested-guarantee.sh): pod g (two loops,
# deadline_rr 10 ms, 1 CPU guaranteed) beside its sibling pod o (two) in
# kubepods.slice/kubepods-burstable.slice, and h1..h3 (one each), all at cpu.weight 100. Fair work
# keeps 1 CPU, a quarter of it kubepods'. g gets its CPU, its two loops share it, and the rest is
# shared with no CPU idle beside it (before 2026-11-29: o 0.000, h1..h3 0.02-0.07 each, a CPU idle).
. ./lib.sh

# Its shares are timings too: a vCPU the host stops while a container runs charges that container
# for the stop, and a debt beyond one guarantee window is forgiven (fdl_budget_earn). Until the
# guarantees were counted as the kernel counts CPU time (fdl_charge, 2026-12-04), a switch's cost
# was charged to no one and the containers ran past their grants by it: 0.7-1.6 % in quiet boots
# (fair work 0.204-0.222 CPU under floor), the 4 ms container 9.5 % in a CI run on a noisy host
# (0.962 CPU; fair work 0.188). Since: 0.878-0.880 in two quiet boots and one beside a busy host
# CPU, fair work 0.211-0.221 (the rest of its 0.242 goes to the root's tasks, which "others"
# measures only roughly: the root's cpu.stat is sampled at ticks).
# Not from a boot the host made noisy, before or (after a failed check) during the test.
rig_gate

secs=8

two_guarantees_cell

# run MODE: scx_fdl with --fair-protection MODE; each cgroup's CPUs over $secs s into G1 G2 F,
# the least guarantee scale seen in three dumps into SCALE, fair work's protected bandwidth (dump)
# into FP, g1's granted guarantee into GRANTED.
run() {
    start_sched fdl --config /tmp/fdl.toml --fair-protection "$1" || return 1
    for c in g1 g2 f; do hogs "$c" 2; done
    sleep 3
    SCALE=1
    for i in 1 2 3; do
        s=$(scx_fdl dump | sed -n 's/^ *"guarantee_scale": \([0-9.e-]*\),\{0,1\}$/\1/p' | head -1)
        [ -n "$s" ] || { fail "scx_fdl dump shows guarantee_scale"; s=1; }
        SCALE=$(awk -v a="$SCALE" -v b="$s" 'BEGIN { print (b < a ? b : a) }')
        sleep 0.5
    done
    FP=$(scx_fdl dump | sed -n 's/^ *"fair_protected_cpus": \([0-9.e-]*\),\{0,1\}$/\1/p' | head -1)
    # "." is the root: the whole machine's use, the tasks outside every cgroup (this script, scx_fdl
    # and its dumps: fair work too) as what the three cgroups leave of it.
    measure $secs g1 g2 f .
    G1=$(cpus "$(used g1)" $secs) G2=$(cpus "$(used g2)" $secs) F=$(cpus "$(used f)" $secs)
    O=$(awk -v a="$(cpus "$(used .)" $secs)" -v g1="$G1" -v g2="$G2" -v f="$F" 'BEGIN { o = a - g1 - g2 - f; printf "%.3f", (o > 0 ? o : 0) }')
    GRANTED=$(scx_json_field g1 guarantee_granted_cpus)
    echo "FDL-FAIR-PROTECTION $1: g1=$G1 g2=$G2 f=$F others=$O CPUs over $secs s, least guarantee_scale $SCALE, fair_protected_cpus $FP, g1 granted $GRANTED"
    scx_fdl list
    check_attached
    check_no_strays
    kill_all
    stop_scx
    [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 (got $SCX_RC)"
}

run weighted
check "weighted: the guarantees are scaled while fair work runs (least guarantee_scale $SCALE, below 0.9)" \
    "$SCALE < 0.9"
# The share of the fair cgroups active at the dump: f's 2/3 CPU, more while other fair cgroups
# (the root's own tasks: this script, scx_fdl dump itself) are active too (seen: 1.0 and 1.2).
check "weighted: scx_fdl dump's fair_protected_cpus is at least that share (2/3 CPU): ${FP:-missing}" \
    "${FP:-0} >= 0.65 && ${FP:-0} <= 2"
check "weighted: fair work keeps its share at the containers' cpu.weight (1/3 of 2 CPUs, -10 %): $F CPUs" \
    "$F >= 0.6"

run floor
grep -q -- "--fair-protection floor: guarantees are never scaled" "$SCX_LOG" &&
    pass "floor: the start-up log says what fair work keeps" ||
    fail "floor: the start-up log says what fair work keeps"
check "floor: the guarantees are never scaled (least guarantee_scale $SCALE)" "$SCALE == 1"
check "floor: scx_fdl dump's fair_protected_cpus is what the guarantees leave (2 - 1.758 CPUs): ${FP:-missing}" \
    "${FP:-0} >= 0.23 && ${FP:-0} <= 0.25"
check "floor: g1 is granted its whole guarantee (0.879 CPU): $GRANTED" "$GRANTED >= 0.87 && $GRANTED <= 0.89"
for c in g1 g2; do
    u=$(eval echo "\$$(echo "$c" | tr g G)")
    check "floor: $c gets its whole guarantee beside fair work of the same weight (0.879 CPU, -10 %): $u CPUs" \
        "$u >= 0.79"
done
# All fair work, f's loops and the tasks outside every cgroup: until the VM tests' measure timed its
# windows (2026-12-02) f alone passed at -15 %, flattered by the late reads; timed, f read 0.190
# CPU beside g1 0.896 and g2 0.886 (each 2 % above its grant), the rest of the 2 CPUs the others'.
check "floor: fair work keeps what the guarantees leave (0.24 CPU, -15 %): f $F + others $O CPUs" "$F + $O >= 0.2"
# No more than the grant either: by the scheduler's clock the 4 ms container's switches (its slices
# end at timers) went uncounted, 1.4 % in a quiet boot and 9.5 % on a noisy host (2026-12-04).
check "floor: neither container runs past its grant (0.879 CPU, +3 %): g1 $G1, g2 $G2 CPUs" \
    "$G1 <= 0.905 && $G2 <= 0.905"

B=kubepods.slice/kubepods-burstable.slice
for c in kubepods.slice $B $B/podg $B/podo h1 h2 h3; do mkcg "$c" 100; done
start_sched fdl --fair-protection floor || exit 1
hogs $B/podg 2
hogs $B/podo 2
for c in h1 h2 h3; do hogs "$c" 1; done
sleep 1
scx_fdl set $B/podg deadline_rr=10ms guaranteed_shares=1024 > /dev/null || fail "scx_fdl set the nested pod"
sleep 3
set -- $(cat $CG/$B/podg/cgroup.procs)
[ $# -eq 2 ] || { fail "pod g holds its two busy loops (cgroup.procs: $*)"; set -- $PIDS; }
a0=$(task_ns "$1") b0=$(task_ns "$2")
measure $secs $B/podg $B/podo h1 h2 h3
a=$(( $(task_ns "$1") - a0 )) b=$(( $(task_ns "$2") - b0 ))
G=$(cpus "$(used $B/podg)" $secs) O=$(cpus "$(used $B/podo)" $secs)
H1=$(cpus "$(used h1)" $secs) H2=$(cpus "$(used h2)" $secs) H3=$(cpus "$(used h3)" $secs)
echo "FDL-FAIR-PROTECTION floor nested: g=$G (its loops $((a / 1000000)) and $((b / 1000000)) ms) o=$O h1=$H1 h2=$H2 h3=$H3 CPUs over $secs s"
scx_fdl dump | grep -E '"(skip_takes|fair_first|dispatch_empty_queued)"'
check_attached
check_no_strays
kill_all
stop_scx
[ "$SCX_RC" = 0 ] || fail "floor, nested: scx_fdl exited 0 (got $SCX_RC)"
check "floor, nested: the pod gets its guarantee (1 CPU, -10 %): $G CPUs" "$G >= 0.9"
check "floor, nested: its two loops share it (each at least a third: $a and $b ns)" \
    "$a * 3 >= $a + $b && $b * 3 >= $a + $b"
check "floor, nested: its sibling pod is served (its part of kubepods' quarter of 1 CPU: $O CPUs, want >= 0.08)" \
    "$O >= 0.08"
for h in "h1 $H1" "h2 $H2" "h3 $H3"; do
    set -- $h
    check "floor, nested: $1 is served (a quarter of 1 CPU, -40 %): $2 CPUs" "$2 >= 0.15"
done
check "floor, nested: no CPU idles beside the waiting work ($G + $O + $H1 + $H2 + $H3 CPUs, want >= 1.85)" \
    "$G + $O + $H1 + $H2 + $H3 >= 1.85"
check_dmesg_clean
rig_gate after
exit $FAILED
