# Scenario: scx_fdl attaches, survives stress-ng and hackbench, and detaches cleanly.
# Args: [stall]  -- "stall" runs the deliberately broken variant (one task never dispatched,
#                   short watchdog): this scenario must then FAIL, proving the checks can fail.
. ./lib.sh

secs=20
extra=""
if [ "${1:-}" = stall ]; then
    sh -c 'while :; do :; done' &
    victim=$!
    PIDS="$victim"
    extra="--test-stall-pid $victim --watchdog-timeout-ms 3000"
    say "broken variant: task $victim will never be dispatched"
fi

# The normal variant also prints the statistics from the scheduler's own process (--stats, scx_stats).
[ -z "$extra" ] && extra="--stats 2"
# shellcheck disable=SC2086
start_scx $extra || exit 1
state=$(scx_state)
ops=$(scx_ops)
case $ops in scx_fdl*) pass "root/ops names scx_fdl ($ops), state $state" ;;
    *) fail "root/ops names scx_fdl (got '$ops', state $state)" ;; esac

# The verifier's work per program, as veristat reports it (the kernel's prog info: verified_insns),
# printed by scx_fdl at load. The kernel refuses a program above 1M instructions. Each program
# must stay within 160k, and all of them within 375k: a change that multiplies the
# verifier's paths shows here long before it fails to load, and each instruction verified costs
# a start about 12 us in this VM (bench/guest/load-trace.sh; until 2026-11-27 a branch per bit in
# fdl_ilog2 had the programs at 1.59M in all, fdl_dispatch 569k, and loading took 20-60 s in
# this VM; then about 344k, fdl_dispatch 67k, 3 s; 560k on 2026-12-06, 37k of them in each of
# four programs for fdl_cgroup_propagate's walk checked turn by turn; 412k since, 5-7 s; 342k
# on 2026-12-07, fdl_dispatch 139k, a CPU limit's refresh verified once per program, not once per
# level of its walks; with the scan's container verified once too, 275k and 4.0-4.2 s, but the
# call cost the dispatcher about 105 instructions more per dispatch: not kept); 322k later that
# day, fdl_dispatch 123k, a container's budget read once where its order and its slice both need it,
# and the bound on all of them back at 350k; 345k that evening, fdl_dispatch 136k, with the fixes
# of a review: the cross-CPU clock clamps, a bucket moved by an atomic add only where it changes,
# the budget's least stretch, the halvings caught up (340k once a wake-up's refresh and clamp
# became one move); the bound 375k).
insns=$(sed -n 's/.*instructions verified: //p' "$SCX_LOG" | head -1)
echo "$insns" | tr ',' '\n' | sed 's/^ */    verified: /'
largest=$(echo "$insns" | tr ',' '\n' | awk '{ if ($2 + 0 > m) { m = $2 + 0; n = $1 } } END { print n, m + 0 }')
total=$(echo "$insns" | tr ',' '\n' | awk '{ s += $2 } END { print s + 0 }')
check "every program verified within 160k instructions (the kernel's limit is 1M): largest ${largest:-none}" \
    "${largest##* } > 0 && ${largest##* } < 160000"
check "all programs verified within 375k instructions: ${total}" "${total} > 0 && ${total} < 375000"

ncpu=$(nproc)
if [ -z "${1:-}" ] && [ "$ncpu" -ge 2 ]; then
    # Queued wake-ups (SCX_OPS_ALLOW_QUEUED_WAKEUP): a wake-up onto the other, idle CPU is handed
    # to it through its wake list and a function-call interrupt (/proc/interrupts, CAL). Without
    # the flag sched_ext activates the task from the waker's CPU and sends a reschedule interrupt
    # instead: a few CAL from TLB shoot-downs, not one per remote wake-up.
    cal() { awk '$1 == "CAL:" { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s }' /proc/interrupts; }
    c0=$(cal)
    fdl-probe -m 1 -t 2 --sleep-us 10000 --spin-us 50 -r 3 -w 1 --json > /tmp/wake.json 2>/dev/null
    c1=$(cal)
    n=$(json_field /tmp/wake.json samples)
    check "remote wake-ups go through the target's wake list: $((c1 - c0)) function-call interrupts for $n probe wake-ups in 3 s" "$((c1 - c0)) >= $((n / 20 + 10))"
fi
say "stress-ng cpu/switch/yield/fork and hackbench for $secs s on $ncpu vCPUs"
stress-ng --cpu "$ncpu" --switch "$ncpu" --yield "$ncpu" --fork "$ncpu" \
    --timeout "${secs}s" --metrics-brief > /tmp/stress.log 2>&1 &
stress=$!
end=$(($(date +%s) + secs))
loops=0
while [ "$(date +%s)" -lt $end ]; do
    hackbench -g 2 -f 4 -l 50 -s 100 > /dev/null 2>&1 || { fail "hackbench run failed"; break; }
    loops=$((loops + 1))
done
wait $stress
stress_rc=$?
say "hackbench completed $loops runs; stress-ng exited $stress_rc"
tail -8 /tmp/stress.log
[ $stress_rc = 0 ] && pass "stress-ng completed" || fail "stress-ng completed (exit $stress_rc)"

if kill -0 "$SCX_PID" 2>/dev/null && [ "$(scx_state)" = enabled ]; then
    pass "scx_fdl stayed attached through the load"
else
    fail "scx_fdl stayed attached through the load (state=$(scx_state), process $(kill -0 "$SCX_PID" 2>/dev/null && echo alive || echo gone))"
fi

problems=$(dmesg_problems)
if [ -z "$problems" ]; then
    pass "dmesg shows no stall, BUG, WARNING or Oops"
else
    fail "dmesg shows no stall, BUG, WARNING or Oops; found:"
    echo "$problems" | head -20
fi

check_clean_exit
[ "$(scx_state)" = disabled ] && pass "state back to disabled" || fail "state back to disabled (got $(scx_state))"
grep -q 'EXIT: ' "$SCX_LOG" && pass "exit reason printed: $(grep 'EXIT: ' "$SCX_LOG" | head -1)" ||
    fail "exit reason printed"
if [ "${1:-}" != stall ]; then
    # Every 2 s the table of --monitor, with the scheduler-wide rates from the second print on.
    n=$(grep -c '^dispatched/s: ' "$SCX_LOG")
    check "--stats 2 printed the statistics from the scheduler's process ($n times in about ${secs} s)" "$n >= 3"
fi
if [ "${1:-}" = stall ]; then
    # The exit dump carries scx_fdl's own state (ops.dump, dump_cpu, dump_task): the queues, and
    # the victim task's record among the runnable tasks.
    grep -E '^ *scx_fdl: (now|queue|cpu.max|cgroup)' "$SCX_LOG" | head -8 | sed 's/^/    /'
    grep -q 'scx_fdl: now .* vdt' "$SCX_LOG" && grep -q 'scx_fdl: cpu.max: ' "$SCX_LOG" &&
        grep -q 'scx_fdl: cgroup .* queued since' "$SCX_LOG" &&
        pass "the exit dump shows scx_fdl's state and its tasks" ||
        fail "the exit dump shows scx_fdl's state and its tasks"
fi

kill_all
exit $FAILED
