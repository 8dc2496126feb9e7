# Scenario (FDL test c): overcommitted deadlines. Three deadline containers (deadline_rr 1 ms,
# deadline_wakeup 500 us) with two busy loops each, beside a fair cgroup with two: 8 loops on 2
# vCPUs, and deadlines that cannot all be met. Nobody may starve: every container and every task
# gets CPU, fair work keeps progressing, the misses are counted, and scx_fdl stays attached.
. ./lib.sh

secs=10

cat > /tmp/fdl.toml <<'TOML'
[cgroup.d1]
deadline_rr = "1ms"
deadline_wakeup = "500us"

[cgroup.d2]
deadline_rr = "1ms"
deadline_wakeup = "500us"

[cgroup.d3]
deadline_rr = "1ms"
deadline_wakeup = "500us"
TOML

start_sched fdl --config /tmp/fdl.toml || exit 1
for c in d1 d2 d3 fair; do mkcg "$c" 100; hogs "$c" 2; done
sleep 2
task_before=""
for p in $PIDS; do task_before="$task_before $p=$(task_ns "$p")"; done
measure $secs d1 d2 d3 fair
line=""
for c in d1 d2 d3 fair; do line="$line $c=$(cpus "$(used "$c")" $secs)"; done
echo "FDL-OVERCOMMIT$line (CPUs over $secs s)"
scx_fdl list
for c in d1 d2 d3; do
    u=$(cpus "$(used "$c")" $secs)
    check "deadline container $c progresses: $u CPUs (at least 0.1)" "$u >= 0.1"
done
u=$(cpus "$(used fair)" $secs)
check "fair work progresses beside the deadline containers: $u CPUs (at least 0.1)" "$u >= 0.1"
slowest=""
for kv in $task_before; do
    p=${kv%%=*}
    ran=$((($(task_ns "$p") - ${kv#*=}) / 1000000))
    [ -z "$slowest" ] || [ "$ran" -lt "$slowest" ] && slowest=$ran
done
check "every one of the 8 tasks ran: the least-served got $slowest ms in $secs s (at least 100)" "$slowest >= 100"
misses=0
for c in d1 d2 d3; do misses=$((misses + $(scx_json_field "$c" nr_misses))); done
check "the overcommit shows as deadline misses ($misses)" "$misses > 0"
check_attached
check_dmesg_clean
kill_all
stop_scx
[ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 (got $SCX_RC)"
exit $FAILED
