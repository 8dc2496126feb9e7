# Scenario: a guarantee whose work lives in short-lived child cgroups (issue 14, defects 3 and 4).
# Cgroup g (guaranteed_shares 1024 = one CPU) runs two busy loops, each moved every 300 ms into a new
# child cgroup of g while the child it leaves is removed, beside h1..h6 with one busy loop each: 8
# loops on 2 vCPUs, as in the guarantee scenario. The guarantee loop must count the children's use
# as g's although each lives 300 ms: the BPF side counts all use below g in g's record as it happens
# (fdl_sum_charge), and a removed child's counts stay in its parent's. Counted too low, g looks short
# of its guarantee and its boost climbs to the ceiling; counted late, g looks idle in most periods
# and its boost decays.
# Checks (scx_fdl): g gets at least 0.9 of its guaranteed CPU (as in the guarantee scenario) and at
# most 1.4. Runs measured 1.04-1.09 with the BPF-side sums; 0.79-0.91 when the loop read a listing
# of g's subtree refreshed once a second (children younger than it were counted only once removed,
# 300 ms of use at once); without the guarantee 0.26, under EEVDF 0.48; with the fold at removal
# taken out, the boost climbed to 1478 and g took 2.07 of 2 CPUs. And the loop's averaged use of g
# (the mean of one sample a second) is within 15 % of what cgroupfs measured over the same seconds
# (cpu.stat's usage_usec keeps removed children's time; 4-5 % apart with the BPF-side sums, 8 % in
# the CI run with the listing that failed).
# Args: [fdl|eevdf] [check|report]
. ./lib.sh

sched=${1:-fdl}
mode=${2:-check}
secs=8

start_guaranteed_g "$sched" || exit 1
overcommit_hogs 0
echo +cpu > "$CG/g/cgroup.subtree_control"
# churn K: one busy loop of g that lives in a new child cgroup g/K-N every 300 ms: the child is
# created, the loop moved into it, and the previous child removed. The loop itself stays runnable
# (a loop restarted in each child was away for its fork and exec while 8 hogs held both vCPUs, so g's
# CPU measured the churning shell's wake-up delay: 0.63 in one CI run).
churn() {
    sh -c 'while :; do :; done' &
    hog=$!
    n=0
    prev=
    while [ ! -e /tmp/churn.stop ]; do
        d="$CG/g/$1-$n"
        mkdir "$d"
        echo "$hog" > "$d/cgroup.procs"
        [ -n "$prev" ] && rmdir "$prev"
        prev=$d
        sleep 0.3
        n=$((n + 1))
    done
    kill "$hog"
    wait "$hog" 2>/dev/null
    rmdir "$prev" 2>/dev/null || { sleep 0.05; rmdir "$prev"; }
    echo "$n" > "/tmp/churn-$1.count"
}
rm -f /tmp/churn.stop
churn a &
ca=$!
churn b &
cb=$!
sleep 4
# The loop's average moves in steps as removed children fold in: sample it once a second across the
# measurement and take the mean (a single sample read 0.52 of cgroupfs's 0.968 CPU in one CI run),
# against cgroupfs's figure over the sampler's own span: beside 8 busy loops on 2 vCPUs each
# `scx_fdl get` takes seconds under the emulator (the sampler's 8 samples spanned 43-44 s, and
# against the 8 s of the measurement the check read 0.98 against 1.21 in one CI run, 0.99 against
# 1.11 in a run that passed).
if [ "$sched" = fdl ]; then
    (read_usage g; echo "$_RT $_RU" > /tmp/avg.window
     i=0; while [ $i -lt $secs ]; do sleep 1; scx_json_field g usage_cpus_avg; i=$((i + 1)); done > /tmp/avg.samples
     read_usage g; echo "$_RT $_RU" >> /tmp/avg.window) &
    sampler=$!
fi
measure $secs g
g=$(cpus "$(used g)" $secs)
if [ "$sched" = fdl ]; then
    wait $sampler
    avg=$(awk '{ s += $1; n++ } END { printf "%.3f", n ? s / n : 0 }' /tmp/avg.samples)
    # cgroupfs over the sampler's span: CPUs used, and the span in s.
    set -- $(tr '\n' ' ' < /tmp/avg.window)
    span=$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%.2f", (b - a) / 100 }')
    gspan=$(cpus $(($4 - $2)) "$span")
    weight=$(scx_json_field g effective_weight)
fi
touch /tmp/churn.stop
wait $ca $cb
echo "FDL-CHURN $sched g=$g CPUs over $secs s; scx_fdl's averaged use of g ${avg:--} CPUs (cgroupfs ${gspan:--} over the samples' ${span:--} s), effective weight ${weight:--}; children created $(cat /tmp/churn-a.count) + $(cat /tmp/churn-b.count); left: $(ls -d "$CG"/g/*/ 2>/dev/null | wc -l)"
[ "$sched" = fdl ] && scx_fdl get g
kill_all
if [ "$sched" = fdl ]; then
    check_attached
    check_no_strays
    check_dmesg_clean
    stop_scx
    [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 (got $SCX_RC)"
fi
if [ "$mode" = check ] && [ "$sched" = fdl ]; then
    check "g got $g CPUs through short-lived children, guaranteed 1 (at least 0.9)" "$g >= 0.9"
    check "g took $g CPUs, not much above its guarantee of 1 (at most 1.4): h1..h6 keep the rest" "$g <= 1.4"
    check "the guarantee loop's use of g ($avg CPUs, the mean of its samples) within 15 % of cgroupfs's over the same $span s ($gspan)" \
        "$avg >= $gspan * 0.85 && $avg <= $gspan * 1.15"
fi
exit $FAILED
