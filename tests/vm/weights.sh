# Scenario: cpu.weight honoured at every level of the cgroup tree, and cpu.idle.
# Args: [fdl|eevdf] [check|report]
#   fdl (default) runs under scx_fdl, eevdf under the kernel's default scheduler.
#   check (default) fails on shares outside the tolerances; report only prints them (the demo).
. ./lib.sh

sched=${1:-fdl}
mode=${2:-check}
secs=8
warm=2
ncpu=$(nproc)

# expect NAME GOT WANT TOLERANCE(relative): check, or just print in report mode.
expect() {
    line=$(awk -v g="$2" -v w="$3" 'BEGIN { printf "got %.3f, want %.3f", g, w }')
    if [ "$mode" = report ]; then
        say "$1: $line"
    else
        check "$1: $line (within $(awk -v t="$4" 'BEGIN { printf "%d", t * 100 }') %)" \
            "$2 >= $3 * (1 - $4) && $2 <= $3 * (1 + $4)"
    fi
}

# siblings PHASE WHAT WANT: after a warm-up, measure W200 and W100 and expect W200:W100 = WANT.
siblings() {
    sleep $warm
    measure $secs W200 W100
    a=$(used W200) b=$(used W100)
    say "usage_usec: W200=$a W100=$b"
    echo "FDL-SHARES $sched $1 W200=$a W100=$b"
    expect "$2" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')" "$3" 0.10
}

# Idle before the scheduler starts (ops.cgroup_init's sched_idle), for section 5.
mkcg I 100
echo 1 > $CG/I/cpu.idle
start_sched "$sched" || exit 1

say "1. siblings: W200 (cpu.weight 200) and W100 (100), $ncpu hogs each, $secs s"
mkcg W200 200
mkcg W100 100
hogs W200 "$ncpu"
hogs W100 "$ncpu"
siblings siblings "W200:W100 ratio" 2.0

say "2. weight change while running: W100 -> 400, so W200:W100 should become 0.5"
echo 400 > $CG/W100/cpu.weight
siblings reweighted "W200:W100 ratio after cpu.weight change" 0.5
kill_all
rmdir $CG/W200 $CG/W100

say "3. nested: A (100) holding A1 (300) and A2 (100), beside B (100); $ncpu hogs each, $secs s"
mkcg A 100
mkcg A/A1 300
mkcg A/A2 100
mkcg B 100
hogs A/A1 "$ncpu"
hogs A/A2 "$ncpu"
hogs B "$ncpu"
sleep $warm
measure $secs A/A1 A/A2 B
a1=$(used A/A1) a2=$(used A/A2) b=$(used B)
total=$((a1 + a2 + b))
say "usage_usec: A1=$a1 A2=$a2 B=$b"
echo "FDL-SHARES $sched nested A1=$a1 A2=$a2 B=$b"
expect "A1 share" "$(awk -v x="$a1" -v t="$total" 'BEGIN { print x / t }')" 0.375 0.10
expect "A2 share" "$(awk -v x="$a2" -v t="$total" 'BEGIN { print x / t }')" 0.125 0.10
expect "B share" "$(awk -v x="$b" -v t="$total" 'BEGIN { print x / t }')" 0.5 0.10
kill_all
rmdir $CG/A/A1 $CG/A/A2 $CG/A $CG/B

say "4. deep: L (cpu.weight 25) with its hogs 20 levels below it, beside H (100); $ncpu hogs each"
# scx_fdl tracks 16 levels; deeper cgroups are scheduled as their nearest tracked ancestor. Before,
# they counted at the root, and the hogs escaped L's weight (issue 14, defect 2).
deep=L
mkcg L 25
i=1
while [ $i -le 20 ]; do deep=$deep/d$i; mkcg "$deep" 100; i=$((i + 1)); done
mkcg H 100
hogs "$deep" "$ncpu"
hogs H "$ncpu"
sleep $warm
measure $secs L H
l=$(used L) h=$(used H)
say "usage_usec: L=$l H=$h"
echo "FDL-SHARES $sched deep L=$l H=$h"
expect "L's share with its work 20 levels down" "$(awk -v x="$l" -v y="$h" 'BEGIN { print x / (x + y) }')" 0.2 0.15
kill_all
while [ "$deep" != L ]; do rmdir "$CG/$deep"; deep=$(dirname "$deep"); done
rmdir $CG/L $CG/H

say "5. cpu.idle: I (cpu.idle 1 since before the start) beside B (100); $ncpu hogs each, 4 s"
# An idle cgroup weighs the least: EEVDF's idle weight is 0.3 of cpu.weight 100's (a share of
# 0.003), scx_fdl's cpu.weight 1 (0.0099). Before ops.cgroup_set_idle, scx_fdl gave I half.
mkcg B 100
hogs I "$ncpu"
hogs B "$ncpu"
# idle_share PHASE: after a warm-up, I's share of I and B in s.
idle_share() {
    sleep $warm
    measure 4 I B
    i=$(used I) b=$(used B)
    echo "FDL-SHARES $sched $1 I=$i B=$b"
    s=$(awk -v x="$i" -v y="$b" 'BEGIN { printf "%.4f", x / (x + y) }')
}
idle_share idle
if [ "$mode" = report ]; then say "idle cgroup's share: $s"; else
    check "an idle cgroup (cpu.idle 1 before the start) gets at most 3 % beside cpu.weight 100: $s" "$s <= 0.03"; fi
if [ "$sched" = fdl ]; then
    scx_fdl list > /tmp/list.txt
    grep -E "^cgroup|/I |^idle:" /tmp/list.txt | sed 's/^/    /'
    grep -qE "^/sys/fs/cgroup/I +- +- +- +idle +1 " /tmp/list.txt &&
        pass "scx_fdl list shows I as idle, at effective weight 1" ||
        fail "scx_fdl list shows I as idle, at effective weight 1"
fi
echo 0 > $CG/I/cpu.idle
idle_share unidle
expect "I's share at cpu.idle 0" "$s" 0.5 0.15
echo 1 > $CG/I/cpu.idle
idle_share reidle
if [ "$mode" = report ]; then say "idle again: $s"; else
    check "idle again (cpu.idle 1 written while it runs): at most 3 %: $s" "$s <= 0.03"; fi
kill_all
rmdir $CG/I $CG/B

if [ "$sched" = fdl ]; then
    stop_scx
    [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 after the scenario (got $SCX_RC)"
fi
exit $FAILED
