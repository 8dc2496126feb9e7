# Scenario: cpu.max under churn never stalls a task. Four limited cgroups with short periods
# (cpu.max 3000 10000: 0.3 CPU, a boundary every 10 ms) hold two hogs each beside a fair hog, a
# limited cgroup runs
# hackbench (many wake-ups, tasks throttled while queued and while running), and for 20 s a loop
# rewrites limits (raised, lowered, lifted, set again), moves a hog between limited cgroups, and
# creates and removes limited cgroups with a task inside. Then: scx_fdl is still attached, the
# kernel saw no stall, every hog ran, and the limits in force at the end hold within the margin.
. ./lib.sh

start_scx || exit 1
sleep 1
k=1	# (not n: lib.sh's hogs uses n)
while [ $k -le 4 ]; do
    mkcg "s$k" 100
    echo "3000 10000" > "$CG/s$k/cpu.max"
    hogs "s$k" 2
    k=$((k + 1))
done
mkcg free 100
hogs free 1
HOGS=$PIDS
mkcg hb 100
echo "20000 100000" > "$CG/hb/cpu.max"
sh -c "echo \$\$ > $CG/hb/cgroup.procs; exec hackbench -g 2 -f 4 -l 100000 -s 100" > /dev/null 2>&1 &
PIDS="$PIDS $!"

end=$(($(date +%s) + 20))
i=0
while [ "$(date +%s)" -lt $end ]; do
    i=$((i + 1))
    case $((i % 4)) in
        0) echo "8000 10000" > "$CG/s1/cpu.max" ;;
        1) echo "max 10000" > "$CG/s1/cpu.max" ;;
        2) echo "1000 10000" > "$CG/s1/cpu.max" ;;
        3) echo "3000 10000" > "$CG/s1/cpu.max" ;;
    esac
    # A hog moves between two limited cgroups while it may be throttled.
    set -- $PIDS
    echo "$1" > "$CG/s$((2 + i % 2))/cgroup.procs" 2>/dev/null
    # A short-lived limited cgroup with a task inside.
    mkcg "tmp$i" 100
    echo "2000 10000" > "$CG/tmp$i/cpu.max"
    sh -c "echo \$\$ > $CG/tmp$i/cgroup.procs; i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done" &
    t=$!
    sleep 0.2
    kill -9 $t 2>/dev/null
    wait $t 2>/dev/null
    rmdir "$CG/tmp$i" 2>/dev/null
done
say "$i rounds of churn"
echo "3000 10000" > "$CG/s1/cpu.max"
sleep 1
measure 4 s2 s3 s4
for c in s2 s3 s4; do
    u=$(cpus "$(used "$c")" 4)
    check "$c holds its 0.3 CPU limit after the churn: $u CPU (+-20 %)" "$u >= 0.24 && $u <= 0.36"
done
least=""
for p in $HOGS; do
    v=$(task_ns "$p" 2>/dev/null) || continue
    if [ -z "$least" ] || [ "$v" -lt "$least" ]; then least=$v; fi
done
check "every hog ran: the least-served got $((least / 1000000)) ms (at least 100)" \
    "${least:-0} >= 100000000"
scx_fdl list > /dev/null && pass "scx_fdl answers its socket" || fail "scx_fdl answers its socket"
finish_scx
exit $FAILED
