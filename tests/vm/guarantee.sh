# Scenario (FDL test b): guaranteed bandwidth. Cgroup g (2 busy loops, guaranteed_shares 1024 =
# one CPU) among six other cgroups with a busy loop each: 8 loops on 2 vCPUs, four times
# overcommitted. By weight alone g would get 1/7 of the machine, 0.29 CPU; the guarantee must
# lift it to at least 0.9 CPU, within a second of its demand starting, and its boost must be
# released within a second of the demand stopping.
# Args: [fdl|eevdf] [check|report]
. ./lib.sh

sched=${1:-fdl}
mode=${2:-check}
secs=8

# The scheduler starts before the load: enabling it patches kernel text, which under TCG is
# safest while the vCPUs idle (see tests/run-vm-tests.sh).
start_guaranteed_g "$sched" || exit 1
overcommit_hogs 0
sleep 2
# g's demand starts now: its CPU rate over quarter-second windows (longer under the emulator),
# until one reaches 0.9 CPU (the guarantee within 10 %), for at most 3 s.
hogs g 2
read t0 rest < /proc/uptime
u0=$(usage_usec g)
reached=""
while [ -z "$reached" ]; do
    sleep 0.25
    read t rest < /proc/uptime
    u=$(usage_usec g)
    rate=$(awk -v du=$((u - u0)) -v t="$t" -v tp="${tp:-$t0}" 'BEGIN { printf "%.2f", du / 1e6 / (t - tp > 0 ? t - tp : 0.01) }')
    since=$(awk -v t="$t" -v t0="$t0" 'BEGIN { printf "%.2f", t - t0 }')
    RAMP="$RAMP $since:$rate"
    # Met in this window: judged at its start (the windows take 0.45-0.6 s under the emulator, not
    # the 0.25 s asked, so their ends are that coarse; a window ending at 1.05 s at 1.04 CPUs was
    # met within the second).
    start=$(awk -v tp="${tp:-$t0}" -v t0="$t0" 'BEGIN { printf "%.2f", tp - t0 }')
    awk -v r="$rate" 'BEGIN { exit !(r >= 0.9) }' && reached=$start
    awk -v s="$since" 'BEGIN { exit !(s >= 3) }' && reached=never
    u0=$u
    tp=$t
done
say "g's CPU rate after its demand started (s:CPUs):$RAMP"
[ "$sched" = fdl ] && [ "$mode" = check ] &&
    check "g's guarantee is met (a window at >= 0.9 CPU, starting within 1 s of its demand): from $reached s" \
        "\"$reached\" != \"never\" && $reached <= 1.0"
sleep 2
measure $secs g h1 h2 h3 h4 h5 h6
g=$(cpus "$(used g)" $secs)
others=""
for c in h1 h2 h3 h4 h5 h6; do others="$others $c=$(cpus "$(used "$c")" $secs)"; done
echo "FDL-GUARANTEE $sched g=$g$others (CPUs over $secs s)"
[ "$sched" = fdl ] && scx_fdl get g
if [ "$mode" = check ]; then
    check "g got $g CPUs, guaranteed 1 (at least 0.9)" "$g >= 0.9"
    for c in h1 h2 h3 h4 h5 h6; do
        u=$(cpus "$(used "$c")" $secs)
        check "$c still progresses: $u CPUs (at least 0.05)" "$u >= 0.05"
    done
fi
if [ "$sched" = fdl ]; then
    check_attached
    check_no_strays
    # g's demand stops: its boost is released within a second (back to cpu.weight 100), so that
    # it does not come back to more than its guarantee.
    boosted=$(scx_json_field g effective_weight)
    for p in $PIDS; do
        grep -qx "$p" "$CG/g/cgroup.procs" && kill -9 "$p"
    done
    sleep 1
    released=$(scx_json_field g effective_weight)
    check "g's boost (weight $boosted) is released within 1 s of its demand stopping: weight $released" \
        "$boosted > 100 && $released == 100"
fi
kill_all
[ "$sched" = fdl ] && { stop_scx; [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 (got $SCX_RC)"; }
exit $FAILED
