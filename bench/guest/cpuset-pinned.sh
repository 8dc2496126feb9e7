# Guest script (`vm/run.sh bench/guest/cpuset-pinned.sh`): the kubelet's static CPU manager's way of
# binding a pod, cgroup v2's cpuset.cpus, rather than taskset (bench/scenarios/pinned.toml): cgroups
# `fdl` (4 ms, 2 ms at wake-up, guaranteed 0.29 CPU, by --config) and `antagonist` confined to CPU 1,
# `cfs` on both. Two busy loops in antagonist, a probe in cfs and one in fdl (a message thread waking
# two workers that spin 1 ms every 10 +- 2.5 ms) for 12 s. Prints each thread's allowed CPUs and
# scx_fdl's count of the container's wake-ups that started late; checks under 5 % (16 % before
# 42e89a8: FDL_SCHED_BIN=OLD vm/run.sh bench/guest/cpuset-pinned.sh).
. ./lib.sh
echo +cpuset > $CG/cgroup.subtree_control || fail "cpuset controller"
mkcg antagonist 100
mkcg cfs 100
mkcg fdl 100
echo 1 > $CG/fdl/cpuset.cpus || fail "fdl cpuset.cpus"
echo 1 > $CG/antagonist/cpuset.cpus || fail "antagonist cpuset.cpus"
say "cpuset.cpus.effective: fdl $(cat $CG/fdl/cpuset.cpus.effective), antagonist $(cat $CG/antagonist/cpuset.cpus.effective), cfs $(cat $CG/cfs/cpuset.cpus.effective)"
cat > /tmp/fdl.toml <<'T'
[cgroup.fdl]
deadline_rr = "4ms"
deadline_wakeup = "2ms"
guaranteed_shares = 300
T
start_scx --config /tmp/fdl.toml || exit 1
for i in 1 2; do sh -c "echo \$\$ > $CG/antagonist/cgroup.procs; while :; do :; done" & PIDS="$PIDS $!"; done
sh -c "echo \$\$ > $CG/cfs/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 10000 --sleep-jitter-us 2500 --spin-us 1000 -r 12 -w 2 --json" > /tmp/pc.json 2>&1 &
sh -c "echo \$\$ > $CG/fdl/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 10000 --sleep-jitter-us 2500 --spin-us 1000 -r 12 -w 2 --json" > /tmp/pf.json 2>&1 &
P1=$!
sleep 5
for t in /proc/$P1/task/*; do say "thread $(cat $t/comm): $(grep Cpus_allowed_list $t/status | tr -d '\t')"; done
for p in $PIDS; do say "loop $p: $(grep Cpus_allowed_list /proc/$p/status | tr -d '\t')"; done
wait $P1
echo "PROBE-FDL $(cat /tmp/pf.json)"
starts=$(scx_json_field fdl nr_wake_starts); missed=$(scx_json_field fdl nr_wake_misses)
say "fdl under cpuset.cpus=1: $missed of $starts wake-ups late; loops' CPU: $(usage_usec antagonist) us"
check "a container confined by cpuset.cpus beside busy loops confined there: $missed of $starts late (under 5 %)" "${starts:-0} > 300 && ${missed:-0} * 20 < ${starts:-0}"
finish_scx
exit $FAILED
