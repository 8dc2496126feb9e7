# Scenario: CPU hotplug under load (issue 13). The kernel ejects a sched_ext scheduler when a CPU
# goes offline or online (it asks for a restart); scx_fdl must then load again by itself and keep
# scheduling: a CPU taken offline under hackbench and brought back two seconds later, twice, leaves
# scx_fdl attached, its configuration applied again, every hog progressing, and a clean exit.
. ./lib.sh

last=$(($(nproc) - 1))
[ "$last" -ge 1 ] || { fail "hotplug needs at least 2 vCPUs (got $(nproc))"; exit 1; }
# The load's cgroups weigh 25 each, so that scx_fdl's reload (verification, in the root cgroup
# with the weight of one nice-0 task, 100) gets two thirds of a CPU beside them under the kernel's
# scheduler, not one third: at weight 100 the reloads took 125-164 s on the host of 2026-11-25,
# at 25 they took 76 s (begun with one CPU online) and 59 s.
mkcg fdl 25
mkcg fair 25
cat > /tmp/hotplug.toml <<TOML
[cgroup.fdl]
deadline_rr = "4ms"
guaranteed_shares = 512
TOML
start_scx --config /tmp/hotplug.toml || exit 1
hogs fdl 1
hogs fair 2
sh -c "echo \$\$ > $CG/fair/cgroup.procs; exec hackbench -g 2 -f 4 -s 100 -l 100000000" > /dev/null 2>&1 &
PIDS="$PIDS $!"
cpu=/sys/devices/system/cpu/cpu$last/online
for round in 1 2; do
    sleep 2
    echo 0 > "$cpu" || fail "cpu$last offline (round $round)"
    say "round $round: cpu$last offline ($(cat /sys/devices/system/cpu/online) online), state $(scx_state)"
    sleep 2
    echo 1 > "$cpu" || fail "cpu$last online (round $round)"
    say "round $round: cpu$last back ($(cat /sys/devices/system/cpu/online) online), state $(scx_state)"
done
# The restart after the last change: give it time to load again. Verification is the slow part
# under emulation: on the host of 2026-11-25 a load took 33-39 s on 2 idle vCPUs; with the load's
# cgroups at weight 100 the reload that began with one CPU online took 125-164 s, then the kernel
# asked again because the CPU had come back meanwhile, and the load at 2 CPUs took 77-140 s:
# scx_fdl was back 195-300 s after round 2. Up to 360 s here (the case's VM gets 600).
i=0
while { [ "$(scx_state)" != enabled ] || ! scx_ops | grep -q '^scx_fdl'; } && [ $i -lt 3600 ]; do
    sleep 0.1
    i=$((i + 1))
done
sleep 3
kill -0 "$SCX_PID" 2>/dev/null && [ "$(scx_state)" = enabled ] && scx_ops | grep -q '^scx_fdl' &&
    pass "scx_fdl attached again after the CPU changes (state $(scx_state), ops $(scx_ops))" ||
    fail "scx_fdl attached again after the CPU changes (state $(scx_state), ops '$(scx_ops)', process $(kill -0 "$SCX_PID" 2>/dev/null && echo alive || echo gone))"
restarts=$(grep -c 'asked for a restart' "$SCX_LOG")
check "the restarts were logged ($restarts)" "$restarts >= 1"
scx_fdl get fdl > /tmp/get.txt 2>&1
grep -q '4ms' /tmp/get.txt && pass "the configuration holds after the restart (fdl: deadline_rr 4ms)" ||
    { fail "the configuration holds after the restart"; cat /tmp/get.txt; }
measure 3 fdl fair
check "every cgroup progresses after the changes: fdl $(used fdl) us, fair $(used fair) us in 3 s" \
    "$(used fdl) > 100000 && $(used fair) > 100000"
finish_scx
exit $FAILED
