# Scenario: CPU limits (cpu.max) hold under scx_fdl. The kernel does not throttle sched_ext tasks;
# scx_fdl enforces the limits it gets through ops.cgroup_init and ops.cgroup_set_bandwidth:
#   1. a limit present at start-up: two hogs limited to 0.2 CPU beside two fair hogs use 0.2 CPU
#      (+-15 %, over 4 s), and the cgroup's cpu.stat-style counters count (scx_fdl get);
#   2. cpu.max changed while it runs: 0.5 CPU at once; lifted ("max"): the hogs get their share;
#   3. a Kubernetes-shaped tree, pods three levels down: a pod limited to 0.4 CPU, one of its two
#      containers to 0.1 (written while scx_fdl runs): the container gets 0.1, the pod 0.4;
#   4. pattern rules of the configuration apply to cgroups created after start (a first-level
#      `web-*` gets its deadline, a new container scope its burst buffer), and a path with a systemd
#      escape and a long name is configured exactly;
#   5. a limit on a cgroup deeper than scx_fdl tracks is reported as not enforced;
#   and nothing stalls, scx_fdl stays attached and exits cleanly.
. ./lib.sh

mkcg limited 100
mkcg other 100
echo "20000 100000" > "$CG/limited/cpu.max"
K=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice
for c in kubepods.slice kubepods.slice/kubepods-burstable.slice "$K" "$K/cri-containerd-aaa.scope" \
    "$K/cri-containerd-bbb.scope"; do
    mkcg "$c" 100
done
echo "40000 100000" > "$CG/$K/cpu.max"
LONG='app\x2dweb\x2dfrontend\x2dwith\x2da\x2dvery\x2dlong\x2dunit\x2dname\x2dthat\x2dgoes\x2don\x2dand\x2don\x2dand\x2don.service'
mkcg system.slice 100
mkcg "system.slice/$LONG" 100
cat > /tmp/fdl.toml <<TOML
[cgroup."kubepods.slice/*/kubepods-*-pod*.slice/cri-containerd-*.scope"]
burst_buffer = "100ms"

[cgroup."web-*"]
deadline_rr = "5ms"

[cgroup.'system.slice/$LONG']
burst_buffer = "50ms"
TOML

start_scx --config /tmp/fdl.toml || exit 1
grep -q "cpu.max: enforced" "$SCX_LOG" && pass "scx_fdl says it enforces cpu.max" ||
    fail "scx_fdl says it enforces cpu.max"
sleep 2

# 1. The limit present at start-up.
hogs limited 2
hogs other 2
sleep 1
measure 4 limited other
lim=$(cpus "$(used limited)" 4)
oth=$(cpus "$(used other)" 4)
check "a limit set before start: 2 hogs under cpu.max 20000 100000 use $lim CPU of 0.2 (+-15 %)" \
    "$lim >= 0.17 && $lim <= 0.23"
check "the fair cgroup beside it gets the rest: $oth CPU (>= 1.4)" "$oth >= 1.4"
scx_fdl get limited --json > /tmp/limited.json
sed 's/^/    /' /tmp/limited.json | grep -A10 '"cpu_max"'
periods=$(json_field /tmp/limited.json nr_periods)
throttled=$(json_field /tmp/limited.json nr_throttled)
tusec=$(json_field /tmp/limited.json throttled_usec)
check "nr_periods counts the periods it ran in ($periods, >= 40 in about 5 s)" "${periods:-0} >= 40"
# (The period in progress may count as throttled before it counts as a period.)
check "nr_throttled: throttled in (nearly) every one ($throttled of $periods)" \
    "${throttled:-0} >= 0.8 * ${periods:-1} && ${throttled:-0} <= ${periods:-0} + 1"
check "throttled_usec: most of the time ($tusec us, >= 2.5 s of about 5)" "${tusec:-0} >= 2500000"

# 2. Changed at run time, then lifted.
echo "50000 100000" > "$CG/limited/cpu.max"
sleep 1
measure 3 limited
lim=$(cpus "$(used limited)" 3)
check "cpu.max changed to 50000 100000 while running: $lim CPU of 0.5 (+-15 %)" \
    "$lim >= 0.425 && $lim <= 0.575"
echo "max 100000" > "$CG/limited/cpu.max"
sleep 1
measure 3 limited
lim=$(cpus "$(used limited)" 3)
check "cpu.max lifted: $lim CPU, its fair share of 1 (>= 0.85)" "$lim >= 0.85"
[ -z "$(scx_fdl get limited --json | grep '"cpu_max"')" ] && pass "a lifted limit leaves the report" ||
    fail "a lifted limit leaves the report"
kill_all

# 3. Kubernetes-shaped: the container's limit written while scx_fdl runs.
echo "10000 100000" > "$CG/$K/cri-containerd-aaa.scope/cpu.max"
hogs "$K/cri-containerd-aaa.scope" 2
hogs "$K/cri-containerd-bbb.scope" 2
hogs other 2
sleep 1
measure 4 "$K/cri-containerd-aaa.scope" "$K/cri-containerd-bbb.scope"
a=$(cpus "$(used "$K/cri-containerd-aaa.scope")" 4)
b=$(cpus "$(used "$K/cri-containerd-bbb.scope")" 4)
pod=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a + b }')
check "a container limited to 0.1 CPU inside a pod of 0.4: $a CPU (+-15 %)" "$a >= 0.085 && $a <= 0.115"
check "the pod's limit binds both containers: $pod CPU of 0.4 (+-15 %)" "$pod >= 0.34 && $pod <= 0.46"
scx_fdl list > /tmp/list.json
grep -q "cri-containerd-aaa.scope" /tmp/list.json && grep -q "kubepods-burstable-pod1b2c3d4e" /tmp/list.json &&
    pass "scx_fdl list shows the limited pod and container, three levels down" ||
    fail "scx_fdl list shows the limited pod and container, three levels down"

# 4. Pattern rules, for cgroups created after start; an escaped, long name.
mkcg web-1 100
mkcg "$K/cri-containerd-ccc.scope" 100
echo "10000 100000" > "$CG/$K/cri-containerd-ccc.scope/cpu.max"
echo "10000 100000" > "$CG/system.slice/$LONG/cpu.max"
sleep 2.5	# patterns are matched again every second
rr=$(scx_json_field web-1 deadline_rr_ns)
[ "$rr" = 5000000 ] && pass "a pattern rule (web-*) applies to a cgroup created after start: deadline_rr 5ms" ||
    fail "a pattern rule (web-*) applies to a cgroup created after start: deadline_rr_ns $rr, want 5000000"
buf=$(scx_json_field "$K/cri-containerd-ccc.scope" buffer_us)
[ "$buf" = 100000 ] && pass "a pattern rule three levels down applies to a new container: burst_buffer 100ms" ||
    fail "a pattern rule three levels down applies to a new container: buffer_us $buf, want 100000"
buf=$(scx_json_field "system.slice/$LONG" buffer_us)
[ "$buf" = 50000 ] && pass "a systemd-escaped long name is configured exactly: burst_buffer 50ms" ||
    fail "a systemd-escaped long name is configured exactly: buffer_us $buf, want 50000"
grep -E "web-1|cri-containerd-ccc|app.x2dweb" "$SCX_LOG" | sed 's/^/    /'

# 5. A limit scx_fdl cannot hold is reported, not lifted silently: 18 levels down (it tracks 16).
d=deep
mkcg "$d" 100
i=1
while [ $i -le 17 ]; do d="$d/l$i"; mkcg "$d" 100; i=$((i + 1)); done
echo "10000 100000" > "$CG/$d/cpu.max"
sleep 3	# the limits are walked every 2 s
grep -q "cpu.max NOT enforced for /sys/fs/cgroup/$d (cpu.max 10000 100000" "$SCX_LOG" &&
    pass "a limit 18 levels down, which scx_fdl does not track, is reported as not enforced" ||
    fail "a limit 18 levels down, which scx_fdl does not track, is reported as not enforced"

finish_scx
exit $FAILED
