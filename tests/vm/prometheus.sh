# Scenario (observability): scx_fdl --enable-prometheus serves /metrics, collected at each scrape.
# Bad addresses and a busy port stop it before it attaches; scraped twice under load, the
# documented metrics are there, the output is OpenMetrics text with times in seconds, the busy
# cgroup's counters grow and the idle one's do not, and a removed cgroup is gone from the next
# scrape. `scx_fdl dump` gives the same figures as JSON.
. ./lib.sh

PORT=9000
URL=http://127.0.0.1:$PORT/metrics
ifconfig lo 127.0.0.1 up

say "1. bad input stops scx_fdl before it attaches"
# refused CODE WANT ARGS...: scx_fdl ARGS must exit CODE and say WANT, and leave sched_ext off.
refused() {
    code=$1 want=$2
    shift 2
    out=$(scx_fdl "$@" 2>&1)
    rc=$?
    if [ "$rc" = "$code" ] && echo "$out" | grep -q "$want" && [ "$(scx_state)" = disabled ]; then
        pass "refused (exit $rc): scx_fdl $* -> $(echo "$out" | head -1)"
    else
        fail "refused with exit $code and '$want': scx_fdl $* (exit $rc, state $(scx_state)): $out"
    fi
}
refused 2 "invalid value 'nonsense' for '--prometheus-addr" --enable-prometheus --prometheus-addr nonsense
refused 1 "cannot serve Prometheus metrics on 10.9.9.9:9000" --enable-prometheus --prometheus-addr 10.9.9.9:9000
nc -l -p 9100 > /dev/null 2>&1 &
NC=$!
sleep 0.5
refused 1 "cannot serve Prometheus metrics on 127.0.0.1:9100: .*Address already in use" \
    --enable-prometheus --prometheus-addr 127.0.0.1:9100
kill $NC 2>/dev/null

say "2. two cgroups: busy (a deadline container with a guarantee, 2 busy loops) and idle (asleep)"
cat > /tmp/fdl.toml <<'TOML'
[cgroup.busy]
deadline_rr = "5ms"
guaranteed_shares = 512
TOML
mkcg busy 100
mkcg idle 100
mkcg gone 100
mkcg limited 100
echo "10000 100000" > "$CG/limited/cpu.max"
start_sched fdl --config /tmp/fdl.toml --enable-prometheus || exit 1
sh -c "echo \$\$ > $CG/idle/cgroup.procs; exec sleep 1000" &
PIDS="$PIDS $!"
hogs busy 2
hogs limited 1
sleep 3

scrape() { wget -q -O "$1" "$URL" || fail "scraped $URL"; }
scrape /tmp/m1
rmdir "$CG/gone"
scx_fdl --monitor > /tmp/monitor.txt 2>&1 &
MON=$!
sleep 7
kill $MON
scrape /tmp/m2
scx_fdl dump > /tmp/dump.json

say "an excerpt of the second scrape:"
grep -E '^scx_fdl_(dispatched|runnable|preempt|migrations|cgroups_|kernel_events_total\{event="select_cpu_fallback)' /tmp/m2 | sed 's/^/    /'
grep -E 'cgroup="/busy"' /tmp/m2 | grep -v '_bucket' | sed 's/^/    /'
grep -E 'runq_latency_seconds_bucket\{le="(0.000064|0.001024|0.008192|0.065536|\+Inf)",cgroup="/busy"' /tmp/m2 | sed 's/^/    /'
echo "    ($(wc -l < /tmp/m2) lines)"

say "3. checks"
# value FILE SERIES: the value of one series (exact name and labels) in a scrape.
value() { awk -v s="$2" '$1 == s { print $2 }' "$1"; }

bad=$(awk '
    /^# (HELP|TYPE|UNIT) [a-zA-Z_:][a-zA-Z0-9_:]* / { next }
    /^# EOF$/ { eof = NR; next }
    /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? (-?[0-9.]+([eE][-+]?[0-9]+)?|[-+]Inf|NaN)$/ { next }
    { print NR ": " $0 }
    END { if (eof != NR) print "no # EOF as the last line" }' /tmp/m2)
[ -z "$bad" ] && pass "every line of the scrape is OpenMetrics text, # EOF last ($(wc -l < /tmp/m2) lines)" ||
    fail "OpenMetrics text format: $(echo "$bad" | head -3)"
grep -q '^# UNIT scx_fdl_cgroup_cpu_usage_seconds seconds$' /tmp/m2 && ! grep -q microseconds /tmp/m2 &&
    pass "times are in seconds (UNIT metadata, no microseconds)" || fail "times are in seconds"

for m in scx_fdl_dispatched_tasks_total scx_fdl_enqueued_tasks_total scx_fdl_runnable_tasks \
    scx_fdl_idle_kicks_total scx_fdl_preempt_kicks_total scx_fdl_fair_preempts_total \
    scx_fdl_sibling_preempts_total scx_fdl_interactive_wakeups_total \
    scx_fdl_migrations_total \
    scx_fdl_domain_busy_seconds_total scx_fdl_domain_cpu_seconds_total scx_fdl_domain_cpus \
    scx_fdl_starvation_clamps_total scx_fdl_fair_deadline_misses_total \
    scx_fdl_fair_max_lateness_seconds scx_fdl_cgroups_untracked_total scx_fdl_kernel_events_total \
    scx_fdl_scheduler_loads_total scx_fdl_cgroups_unenforced_cpu_max \
    scx_fdl_fair_deadline_starts_total scx_fdl_lag_steps_total scx_fdl_timer_kicks_total \
    scx_fdl_slice_timers_total scx_fdl_crossing_timers_total scx_fdl_timer_lapsed_total scx_fdl_tick_preempts_total \
    scx_fdl_loans_returned_total \
    scx_fdl_empty_dispatches_total scx_fdl_empty_dispatches_with_work_queued_total scx_fdl_empty_dispatches_in_flight_total scx_fdl_prev_kept_untaken_total scx_fdl_scan_strays_total \
    scx_fdl_cgroups_exported scx_fdl_cgroups_dropped scx_fdl_guarantee_scale scx_fdl_fair_protected_cpus \
    scx_fdl_cgroup_cpu_usage_seconds_total scx_fdl_cgroup_wait_seconds_total \
    scx_fdl_cgroup_runq_latency_seconds_bucket scx_fdl_cgroup_runq_latency_seconds_sum \
    scx_fdl_cgroup_runq_latency_seconds_count scx_fdl_cgroup_cpu_weight \
    scx_fdl_cgroup_effective_weight scx_fdl_cgroup_idle scx_fdl_cgroup_deadline_misses_total scx_fdl_cgroup_deadline_starts_total \
    scx_fdl_cgroup_deadline_wake_starts_total scx_fdl_cgroup_deadline_wake_misses_total \
    scx_fdl_cgroup_max_lateness_seconds scx_fdl_cgroup_deadline_rr_seconds \
    scx_fdl_cgroup_lateness_seconds_bucket scx_fdl_cgroup_lateness_seconds_sum \
    scx_fdl_cgroup_lateness_seconds_count \
    scx_fdl_cgroup_deadline_wakeup_seconds scx_fdl_cgroup_guaranteed_shares \
    scx_fdl_cgroup_guarantee_cpus scx_fdl_cgroup_guarantee_granted_cpus scx_fdl_cgroup_guarantee_usage_cpus \
    scx_fdl_cgroup_guarantee_attainment_ratio scx_fdl_cgroup_guarantee_budget_seconds \
    scx_fdl_cgroup_nr_periods_total scx_fdl_cgroup_nr_throttled_total \
    scx_fdl_cgroup_throttled_seconds_total scx_fdl_cgroup_nr_bursts_total \
    scx_fdl_cgroup_burst_seconds_total scx_fdl_cgroup_cpu_max_cpus scx_fdl_cgroup_is_throttled; do
    grep -q "^$m[{ ]" /tmp/m2 || missing="$missing $m"
done
[ -z "$missing" ] && pass "every documented metric is exported" || fail "documented metrics missing:$missing"
misses=$(value /tmp/m2 'scx_fdl_cgroup_deadline_misses_total{cgroup="/busy"}')
late_n=$(value /tmp/m2 'scx_fdl_cgroup_lateness_seconds_count{cgroup="/busy"}')
late_inf=$(value /tmp/m2 'scx_fdl_cgroup_lateness_seconds_bucket{le="+Inf",cgroup="/busy"}')
check "busy's misses by lateness add up to its misses ($late_n and +Inf bucket $late_inf vs $misses, within 2)" \
    "${late_n:--9} == ${late_inf:--8} && ${late_n:--9} >= ${misses:-0} - 2 && ${late_n:--9} <= ${misses:-0}"
starts=$(value /tmp/m2 'scx_fdl_cgroup_deadline_starts_total{cgroup="/busy"}')
wstarts=$(value /tmp/m2 'scx_fdl_cgroup_deadline_wake_starts_total{cgroup="/busy"}')
wmisses=$(value /tmp/m2 'scx_fdl_cgroup_deadline_wake_misses_total{cgroup="/busy"}')
check "busy's wake-ups are among its starts, their misses among its misses (wake-ups $wstarts of $starts starts, missed $wmisses of $misses)" \
    "${wstarts:-0} > 0 && ${wstarts:-0} <= ${starts:-0} && ${wmisses:--1} >= 0 && ${wmisses:--1} <= ${misses:-0}"
thr=$(value /tmp/m2 'scx_fdl_cgroup_nr_throttled_total{cgroup="/limited"}')
per=$(value /tmp/m2 'scx_fdl_cgroup_nr_periods_total{cgroup="/limited"}')
check "a hog under cpu.max 10000 100000 counts throttled periods ($thr of $per, >= 50 in 10 s)" \
    "${thr:-0} >= 50 && ${thr:-0} <= ${per:-0} + 1"

for t in idle prev deadline fair; do
    grep -q "^scx_fdl_dispatched_tasks_total{type=\"$t\"} " /tmp/m2 || fail "dispatch path $t exported"
done
d1=$(awk '/^scx_fdl_dispatched_tasks_total/ { s += $2 } END { print s + 0 }' /tmp/m1)
d2=$(awk '/^scx_fdl_dispatched_tasks_total/ { s += $2 } END { print s + 0 }' /tmp/m2)
check "dispatches grew between the scrapes: $d1 -> $d2" "$d2 > $d1"
check "the deadline path was used ($(value /tmp/m2 'scx_fdl_dispatched_tasks_total{type="deadline"}'))" \
    "$(value /tmp/m2 'scx_fdl_dispatched_tasks_total{type="deadline"}') > 0"

for m in cpu_usage_seconds_total wait_seconds_total runq_latency_seconds_count; do
    b1=$(value /tmp/m1 "scx_fdl_cgroup_$m{cgroup=\"/busy\"}")
    b2=$(value /tmp/m2 "scx_fdl_cgroup_$m{cgroup=\"/busy\"}")
    i1=$(value /tmp/m1 "scx_fdl_cgroup_$m{cgroup=\"/idle\"}")
    i2=$(value /tmp/m2 "scx_fdl_cgroup_$m{cgroup=\"/idle\"}")
    check "busy's $m grew: $b1 -> $b2" "\"$b1\" != \"\" && $b2 > $b1"
    check "idle's $m did not: $i1 -> $i2" "\"$i1\" != \"\" && $i2 == $i1"
done
used=$(awk -v a="$(value /tmp/m1 'scx_fdl_cgroup_cpu_usage_seconds_total{cgroup="/busy"}')" \
    -v b="$(value /tmp/m2 'scx_fdl_cgroup_cpu_usage_seconds_total{cgroup="/busy"}')" 'BEGIN { printf "%.2f", (b - a) / 7 }')
check "busy's CPU time over the interval is about its 2 busy loops on 2 vCPUs: $used CPUs" "$used > 1.2"
busy=$(awk '/^scx_fdl_domain_busy_seconds_total/ { if (FILENAME == ARGV[1]) a += $2; else b += $2 }
    END { printf "%.2f", (b - a) / 7 }' /tmp/m1 /tmp/m2)
check "the queue domains' busy time over the interval is about the 2 vCPUs: $busy CPUs" "$busy > 1.2 && $busy < 2.3"
inf=$(value /tmp/m2 'scx_fdl_cgroup_runq_latency_seconds_bucket{le="+Inf",cgroup="/busy"}')
count=$(value /tmp/m2 'scx_fdl_cgroup_runq_latency_seconds_count{cgroup="/busy"}')
check "busy's histogram: +Inf bucket ($inf) equals the count ($count)" "$inf == $count && $count > 0"
# Sort busy's buckets by le (+Inf last), whatever order they come in.
buckets=$(sed -n 's/^scx_fdl_cgroup_runq_latency_seconds_bucket{le="\([^"]*\)",cgroup="\/busy"} /\1 /p' /tmp/m2 |
    sed 's/^+Inf /1e99 /' | sort -g)
n=$(echo "$buckets" | wc -l)
drops=$(echo "$buckets" | awk '$2 < prev { bad++ } { prev = $2 } END { print bad + 0 }')
check "busy's $n buckets are cumulative (never fall as le grows)" "$n == 24 && $drops == 0"
check "busy's guaranteed_shares is exported as 512" \
    "$(value /tmp/m2 'scx_fdl_cgroup_guaranteed_shares{cgroup="/busy"}') == 512"
# busy's two loops use both CPUs against a guarantee of half a CPU: beyond it, owing a window
# (--guarantee-window-ms, 100 ms) of it, 50 ms, plus what it ran since the BPF side last clamped
# the budget (charges land at every tick, the clamp when the budget is next earned: measured
# -0.0501 s); well above what two seconds of unclamped debt would be.
budget=$(value /tmp/m2 'scx_fdl_cgroup_guarantee_budget_seconds{cgroup="/busy"}')
check "busy runs beyond its guarantee: budget $budget s, in [-0.06, 0)" "$budget < 0 && $budget >= -0.06"
grep -q 'cgroup="/gone"' /tmp/m1 && pass "the cgroup gone was exported while it existed" ||
    fail "the cgroup gone was exported while it existed"
# Collected at the scrape: the cgroup removed before the second scrape is not in it.
grep -q 'cgroup="/gone"' /tmp/m2 && { fail "the removed cgroup gone left the next scrape"; grep 'cgroup="/gone"' /tmp/m2 | head -5 | sed 's/^/    /'; } ||
    pass "the removed cgroup gone left the next scrape"
if [ -e /sys/kernel/sched_ext/root/events ]; then
    n=$(grep -c '^scx_fdl_kernel_events_total{event=' /tmp/m2)
    check "the kernel's sched_ext events are exported ($n, the file has $(wc -l < /sys/kernel/sched_ext/root/events))" \
        "$n == $(wc -l < /sys/kernel/sched_ext/root/events)"
fi

grep -q '"dispatched"' /tmp/dump.json && grep -q '"path": "/sys/fs/cgroup/busy"' /tmp/dump.json &&
    grep -q '"runq_latency"' /tmp/dump.json && pass "scx_fdl dump: scheduler figures and cgroups as JSON" ||
    { fail "scx_fdl dump: scheduler figures and cgroups as JSON"; head -40 /tmp/dump.json; }
grep -q '^dispatched/s: ' /tmp/monitor.txt && pass "--monitor shows the dispatch paths" ||
    { fail "--monitor shows the dispatch paths"; cat /tmp/monitor.txt; }

# Every cgroup here is tracked (scx_fdl_cgroups_untracked_total 0), so no limit can escape the BPF
# side and the cpu.max watcher has nothing to look for: it reads no cgroup file (its thread's
# rchar; it read /limited/cpu.max and the others' every 2 s before it was gated, limits::watch).
untracked=$(value /tmp/m2 scx_fdl_cgroups_untracked_total)
watch_rchar=
for t in /proc/$SCX_PID/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = cpu-max-watch ] && watch_rchar=$(awk '$1 == "rchar:" { print $2 }' "$t/io")
done
check "with every cgroup tracked (untracked ${untracked:-?}) the cpu.max watcher read nothing (rchar ${watch_rchar:-no thread})" \
    "\"${untracked:-}\" == \"0\" && \"${watch_rchar:-}\" == \"0\""

check_attached
check_no_strays
kill_all
stop_scx
[ "$SCX_RC" = 0 ] && pass "scx_fdl exited 0" || fail "scx_fdl exited 0 (got $SCX_RC)"
wget -q -O /dev/null "$URL" 2>/dev/null && fail "the endpoint is gone after exit" || pass "the endpoint is gone after exit"
check_dmesg_clean
exit $FAILED
