# Scenario (FDL test d): runtime control. `scx_fdl set` changes a cgroup's behaviour while the
# scheduler runs; bad input and non-root callers change nothing; SIGHUP reloads the file all or
# nothing, and a file still being written is read whole; --monitor shows the figures; twenty
# clients at once are answered; killed with SIGKILL, scx_fdl leaves the kernel on its default
# scheduler and a restart attaches again; ejected by the kernel (sysrq-S), it refuses the requests
# it can no longer apply and exits 3. The load is the bandwidth scenario's (see lib.sh).
. ./lib.sh

secs=10

cat > /tmp/fdl.toml <<'TOML'
[cgroup.lat]
deadline_rr = "5ms"
TOML
mkcg lat 100
start_sched fdl --config /tmp/fdl.toml || exit 1
overcommit_hogs

say "1. g without parameters: its fair share"
sleep 2
measure $secs g
fair_g=$(cpus "$(used g)" $secs)
check "without a guarantee g gets its fair share: $fair_g CPUs (below 0.6)" "$fair_g < 0.6"

say "2. scx_fdl set g guaranteed_shares=1024"
scx_fdl set g guaranteed_shares=1024 && pass "set accepted" || fail "set accepted (exit $?)"
check "get shows guaranteed_shares 1024" "$(scx_json_field g guaranteed_shares) == 1024"
# A set is runtime only (the file is not rewritten), and list says so.
scx_fdl list > /tmp/list.txt
grep -q '^/sys/fs/cgroup/g (set) ' /tmp/list.txt && grep -q '^(set): .*runtime only' /tmp/list.txt &&
    ! grep -q '^/sys/fs/cgroup/lat (set)' /tmp/list.txt &&
    pass "list marks g's set as runtime only, not lat's file parameters" ||
    { fail "list marks g's set as runtime only, not lat's file parameters"; cat /tmp/list.txt; }
# 10 s windows: the control loop's correction factor moves with single 10 ms periods' use, about
# 16 % a second under the emulator, and a 6 s window once caught it low (0.872 CPUs, weight 532).
sleep 3
measure $secs g
after=$(cpus "$(used g)" $secs)
echo "FDL-CONTROL g before=$fair_g after=$after (CPUs over $secs s)"
# At least 0.8: this checks the run-time path (from its fair share, 0.29, to its guarantee); the
# loop's accuracy (+-10 %) is the guarantee test's, from a longer run. Here, measured 3 s after the
# set, single runs gave 0.872-1.095 CPUs: the loop's correction wanders under the emulator.
check "after set, g gets its guarantee: $after CPUs (at least 0.8)" "$after >= 0.8"
weight=$(scx_json_field g effective_weight)
check "the control loop raised g's effective weight to $weight (above cpu.weight 100)" "$weight > 100"

# dump --new-window: the dump on stdout (JSON, as without it), on stderr the window it began.
scx_fdl dump --new-window --window-for 2s > /tmp/win.json 2> /tmp/win.err || fail "dump --new-window (exit $?)"
win=$(json_field /tmp/win.json late_window | head -1)
[ -n "$win" ] && [ "$win" -ge 1 ] && grep -qx "lateness window $win begun, for 2s" /tmp/win.err &&
    pass "dump --new-window says the window it began: $(cat /tmp/win.err)" ||
    { fail "dump --new-window says the window it began (window ${win:-none} in the dump)"; cat /tmp/win.err; }

say "3. bad input changes nothing"
# try WANT ARGS...: the command must fail and say WANT.
try() {
    want=$1
    shift
    out=$("$@" 2>&1) && { fail "refused: $* (it succeeded)"; return; }
    echo "$out" | grep -q "$want" && pass "refused: $* -> $out" || fail "refused: $* (said: $out; wanted $want)"
}
try "deadline_wakeup set but deadline_rr is 0" scx_fdl set g deadline_wakeup=1ms
try "write a number with a unit" scx_fdl set lat deadline_rr=5
try "unknown parameter \`latency\`" scx_fdl set lat latency=1ms
try "guaranteed_shares is 0" scx_fdl set lat guaranteed_shares=0
try "out of range" scx_fdl set lat guaranteed_shares=-5
try "not a cgroup path" scx_fdl set ../etc deadline_rr=1ms
try "no such cgroup" scx_fdl get nosuch
try "required arguments were not provided" scx_fdl dump --window-for 2s
# A cgroup whose parent does not enable the cpu controller is scheduled as its parent: parameters
# for it would do nothing, so they are refused, by set and at start-up (issue 14).
mkcg nocpu 100
mkdir -p "$CG/nocpu/child"
try "the cpu controller is not enabled for it" scx_fdl set nocpu/child deadline_rr=5ms
printf '[cgroup."nocpu/child"]\ndeadline_rr = "5ms"\n' > /tmp/nocpu.toml
try "/tmp/nocpu.toml:1: cgroup /sys/fs/cgroup/nocpu/child: the cpu controller is not enabled for it" \
    scx_fdl --config /tmp/nocpu.toml
try "the cpu controller is not enabled for it" scx_fdl check /tmp/nocpu.toml
mkdir -p /etc
echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >> /etc/passwd
try "only root may control scx_fdl" su -s /bin/sh -c 'scx_fdl list' nobody
check "lat keeps deadline_rr 5ms" "$(scx_json_field lat deadline_rr_ns) == 5000000"
check "g keeps guaranteed_shares 1024" "$(scx_json_field g guaranteed_shares) == 1024"
# A deadline that orders nothing is said, not silently taken: without a guarantee, a deadline_rr
# looser than fair work's (5 ms) waits as fair work (fdl_entity_orders). Not an error: its misses
# are still counted. Said by set's answer and in the log; not said where a guarantee orders it.
mkcg loose 100
note="deadline_rr 20ms is looser than fair work's deadline (5ms, --fair-deadline-us) and it has no guaranteed_shares"
out=$(scx_fdl set loose deadline_rr=20ms 2>&1) || fail "scx_fdl set loose deadline_rr=20ms: $out"
echo "$out" | grep -q "^note: $note" && pass "set's answer says a 20 ms deadline without a guarantee orders nothing" ||
    fail "set's answer says a 20 ms deadline without a guarantee orders nothing (said: $out)"
grep -q "/sys/fs/cgroup/loose: $note" "$SCX_LOG" && pass "the log says it too" ||
    { fail "the log says it too"; grep loose "$SCX_LOG" | tail -3; }
out=$(scx_fdl set loose guaranteed_shares=100 2>&1) || fail "scx_fdl set loose guaranteed_shares=100: $out"
echo "$out" | grep -q "note:" && fail "with a guarantee, no note (said: $out)" || pass "with a guarantee, no note"
out=$(scx_fdl set loose deadline_rr=4ms guaranteed_shares=none 2>&1) || fail "scx_fdl set loose deadline_rr=4ms: $out"
echo "$out" | grep -q "note:" && fail "with 4 ms, no note (said: $out)" || pass "with 4 ms, no note"
scx_fdl set loose deadline_rr=none > /dev/null || fail "scx_fdl set loose deadline_rr=none"

say "4. --monitor (scx_stats)"
scx_fdl --monitor --interval-secs 1 > /tmp/monitor.txt 2>&1 &
mon=$!
sleep 6   # 3 s gave one refresh on the slower host of 2026-11-25 (the client starts slowly under TCG)
kill $mon
sed 's/^/    /' /tmp/monitor.txt | tail -12
rows=$(grep -c '^/sys/fs/cgroup/g ' /tmp/monitor.txt)
check "--monitor refreshed g's row at least twice ($rows)" "$rows >= 2"
grep '^/sys/fs/cgroup/g ' /tmp/monitor.txt | tail -1 | grep -q ' 1024 ' && pass "--monitor shows g's guarantee" ||
    fail "--monitor shows g's guarantee"
# The figures come from scx_stats' server, as for the published sched_ext schedulers.
[ -S /var/run/scx/root/stats ] && pass "scx_stats serves on /var/run/scx/root/stats" ||
    fail "scx_stats serves on /var/run/scx/root/stats"
scx_fdl --help-stats > /tmp/help-stats.txt 2>&1
grep -q 'runq_latency' /tmp/help-stats.txt && grep -q 'preempt_kicks' /tmp/help-stats.txt &&
    pass "--help-stats describes the statistics" || { fail "--help-stats describes the statistics"; head -5 /tmp/help-stats.txt; }

say "5. SIGHUP with a broken file changes nothing"
printf '[cgroup.lat]\ndeadline_rr = "5ms"\ndeadline_wakeup = "9ms"\n' > /tmp/fdl.toml
kill -HUP "$SCX_PID"
sleep 1
grep -q 'SIGHUP: /tmp/fdl.toml:1: cgroup /sys/fs/cgroup/lat: deadline_wakeup (9ms) is longer than deadline_rr (5ms); the configuration in force is unchanged' "$SCX_LOG" &&
    pass "the reload error names file, line and cgroup" || { fail "the reload error names file, line and cgroup"; grep SIGHUP "$SCX_LOG"; }
check "lat keeps deadline_rr 5ms" "$(scx_json_field lat deadline_rr_ns) == 5000000"
check "g keeps guaranteed_shares 1024" "$(scx_json_field g guaranteed_shares) == 1024"

say "6. SIGHUP with a good file replaces the configuration"
printf '[cgroup.lat]\ndeadline_rr = "2ms"\n' > /tmp/fdl.toml
kill -HUP "$SCX_PID"
sleep 1
check "lat now has deadline_rr 2ms" "$(scx_json_field lat deadline_rr_ns) == 2000000"
check "g's runtime guarantee is gone with the file's reload" "$(scx_json_field g guaranteed_shares) == 0"
check "g is back at its cpu.weight" "$(scx_json_field g effective_weight) == 100"
scx_fdl list | grep -q '(set)' && fail "after the reload nothing is marked runtime only" ||
    pass "after the reload nothing is marked runtime only"

say "6b. SIGHUP while the file is being written: it is read whole, not its valid first half"
printf '[cgroup.lat]\ndeadline_rr = "3ms"\n' > /tmp/fdl.toml
( sleep 0.1; printf '[cgroup.g]\nguaranteed_shares = 1024\n' >> /tmp/fdl.toml ) &
writer=$!
kill -HUP "$SCX_PID"
wait $writer
sleep 1.5
check "lat has the new deadline_rr 3ms" "$(scx_json_field lat deadline_rr_ns) == 3000000"
check "g has the guarantee from the file's second half (a torn read gives 0)" \
    "$(scx_json_field g guaranteed_shares) == 1024"
grep -q 'SIGHUP: reloaded /tmp/fdl.toml (2 cgroups)' "$SCX_LOG" && pass "the reload read both cgroups" ||
    { fail "the reload read both cgroups"; grep SIGHUP "$SCX_LOG"; }

say "7. a removed cgroup's CPU time stays in its parent's counters (issue 14, defect 1)"
# q has no tasks of its own (cgroup v2: its child gets the cpu controller), so its subtree's usage
# is q/child's alone and stands still once the child's loop ends.
mkcg q 100
mkcg q/child 100
sh -c "echo \$\$ > $CG/q/child/cgroup.procs; while :; do :; done" &
busy=$!
sleep 2
kill -9 $busy
wait $busy 2>/dev/null
sleep 1
child=$(scx_json_field q/child usage_ns)
before=$(scx_json_field q usage_ns)
rmdir "$CG/q/child"
sleep 1
after=$(scx_json_field q usage_ns)
echo "FDL-CONTROL removed child=$child q before=$before after=$after (usage_ns)"
check "the child used CPU ($child ns)" "$child > 50000000"
# Before, the child's count left q's subtree sum with it: q went down to 0.
check "q's usage stayed when its child went ($before -> $after ns)" "$after >= $before && $after >= $child"
rmdir "$CG/q"

say "8. twenty clients at once are all answered"
i=1
cpids=""
while [ $i -le 20 ]; do
    scx_fdl list > /tmp/client$i.txt 2>&1 &
    cpids="$cpids $!"
    i=$((i + 1))
done
ok=0
for c in $cpids; do wait $c && ok=$((ok + 1)); done
answered=$(grep -l '^/sys/fs/cgroup/g ' /tmp/client*.txt | wc -l)
check "20 concurrent list requests: $ok exited 0, $answered answered with the table" "$ok == 20 && $answered == 20"

say "9. killed (SIGKILL), the kernel's scheduler takes over; a restart attaches again"
kill -KILL "$SCX_PID"
wait "$SCX_PID" 2>/dev/null
i=0
while [ "$(scx_state)" != disabled ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "after SIGKILL the kernel's default scheduler runs again (state $(scx_state))" "\"$(scx_state)\" == \"disabled\""
measure 2 g h1
check "the load progresses under the kernel's scheduler (g $(used g) us, h1 $(used h1) us in 2 s)" \
    "$(used g) > 100000 && $(used h1) > 100000"
# Without the load: verifying the program with seven busy loops beside it takes a minute here.
kill_all
start_sched fdl --config /tmp/fdl.toml || exit 1
check "restarted, scx_fdl attaches again with its configuration (g guaranteed_shares $(scx_json_field g guaranteed_shares))" \
    "$(scx_json_field g guaranteed_shares) == 1024"

check_attached
check_no_strays
check_dmesg_clean

say "10. ejected by the kernel (sysrq-S) while set requests arrive: each is applied or refused with its reason"
# Issue 14, defect 6: a set that reaches the loop as the BPF side goes is refused (its maps are
# about to go), one the loop never takes is answered "stopped before it applied", one after the
# exit finds no server; none is answered ok without effect, none waits.
(
    i=0
    while [ $i -lt 30 ]; do
        timeout 20 scx_fdl set lat deadline_rr=$((i % 5 + 2))ms > /tmp/eject$i.txt 2>&1
        echo "rc=$?" >> /tmp/eject$i.txt
        i=$((i + 1))
        sleep 0.05
    done
) &
setter=$!
sleep 0.5
echo S > /proc/sysrq-trigger
wait "$SCX_PID"
SCX_RC=$?
wait $setter
i=0
while [ "$(scx_state)" != disabled ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "after sysrq-S the kernel's default scheduler runs (state $(scx_state))" "\"$(scx_state)\" == \"disabled\""
check "scx_fdl exited 3 (ejected by the kernel; got $SCX_RC)" "$SCX_RC == 3"
grep -q "ejected by the kernel" "$SCX_LOG" && pass "its log says it was ejected, and why: $(grep -m1 'ejected by the kernel' "$SCX_LOG")" ||
    { fail "its log says it was ejected"; sed 's/^/    /' "$SCX_LOG"; }
applied=$(grep -l '^rc=0' /tmp/eject*.txt | wc -l)
refused=$(grep -lE 'being ejected by the kernel|stopped before it applied|scx_fdl is stopping|no scx_fdl is serving' /tmp/eject*.txt | wc -l)
waited=$(grep -l '^rc=124' /tmp/eject*.txt | wc -l)
say "set during the ejection: $applied applied, $refused refused with a reason, $waited timed out"
grep -h -v '^rc=' /tmp/eject*.txt | sort | uniq -c | sed 's/^/    /'
check "every set was applied before or refused with its reason ($applied + $refused of 30), none waited ($waited)" \
    "$applied + $refused == 30 && $waited == 0"
check "some were applied before the ejection ($applied) and some refused after it ($refused)" "$applied > 0 && $refused > 0"
[ -e /run/scx_fdl.sock ] && fail "the control socket is removed at exit" || pass "the control socket is removed at exit"
exit $FAILED
