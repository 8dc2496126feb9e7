# Scenario (FDL test b): guaranteed bandwidth. Cgroup g (2 busy loops, guaranteed_shares 1024 =
# one CPU) among six other cgroups with a busy loop each: 8 loops on 2 vCPUs, four times
# overcommitted. By weight alone g would get 1/7 of the machine, 0.29 CPU; the guarantee must
# lift it to at least 0.9 CPU.
# Args: [fdl|eevdf] [check|report]
. ./lib.sh

sched=${1:-fdl}
mode=${2:-check}
secs=8

# The scheduler starts before the load: enabling it patches kernel text, which under TCG is
# safest while the vCPUs idle (see tests/run-vm-tests.sh).
start_guaranteed_g "$sched" || exit 1
overcommit_hogs
sleep 4
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
fi
kill_all
[ "$sched" = fdl ] && { stop_scx; [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 (got $SCX_RC)"; }
exit $FAILED
