# Scenario: a guarantee inside a guarantee (issue 14, defect 3: the BPF side's subtree sums).
# kubepods.slice (guaranteed_shares 1024 = one CPU) holds pod g (guaranteed_shares 512: as its only
# guaranteed child, the whole of kubepods' guarantee) and pod o (none), two hogs each, beside h1..h3
# with one hog each: 7 hogs on 2 vCPUs. The BPF side counts g's use in g's record only
# (fdl_sum_charge: the nearest summed cgroup), so the loop must add g's sums to kubepods' own; counted
# once, kubepods gets its guarantee. Checks: kubepods gets 0.9-1.4 CPUs (measured 1.04), the loop's
# averaged use of it within 15 % of cgroupfs's (0.975 against 1.037; without g's sums added it
# would see only o's 0.17 and climb), and g gets more than o.
# Args: none
. ./lib.sh

K=kubepods.slice
for c in $K $K/podg $K/podo h1 h2 h3; do mkcg "$c" 100; done
cat > /tmp/ng.toml <<TOML
[cgroup."kubepods.slice"]
guaranteed_shares = 1024
[cgroup."kubepods.slice/podg"]
guaranteed_shares = 512
TOML
start_scx --config /tmp/ng.toml || exit 1
hogs $K/podg 2
hogs $K/podo 2
for c in h1 h2 h3; do hogs "$c" 1; done
sleep 4
(i=0; while [ $i -lt 6 ]; do sleep 1; scx_json_field $K usage_cpus_avg; i=$((i + 1)); done > /tmp/avg.samples) &
sampler=$!
measure 6 $K $K/podg $K/podo
wait $sampler
k=$(cpus "$(used $K)" 6); g=$(cpus "$(used $K/podg)" 6); o=$(cpus "$(used $K/podo)" 6)
avg=$(awk '{ s += $1; n++ } END { printf "%.3f", n ? s / n : 0 }' /tmp/avg.samples)
echo "FDL-NESTED-GUARANTEE kubepods=$k g=$g o=$o; the loop's averaged use of kubepods $avg"
scx_fdl list | sed 's/^/    /'
check_attached
check_no_strays
check_dmesg_clean
kill_all
check_clean_exit
check "kubepods got $k CPUs, guaranteed 1 (0.9-1.4)" "$k >= 0.9 && $k <= 1.4"
check "the loop's use of kubepods ($avg CPUs) within 15 % of cgroupfs's ($k): g's use counted once" \
    "$avg >= $k * 0.85 && $avg <= $k * 1.15"
check "g, guaranteed within kubepods, got more than o ($g against $o CPUs)" "$g > $o"
exit $FAILED
