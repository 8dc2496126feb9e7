# Scenario: a machine with NUMA nodes and several last-level caches (vm/run.sh --cpus 8 --numa 2:
# 2 nodes x 2 LLCs x 2 CPUs). scx_fdl reports the topology as set up (`scx_fdl topology` and its
# start-up log) and splits its queues into a domain per LLC; a load started on one node spreads
# over the machine; cgroup weights and a deadline container still hold across the 8 CPUs.
. ./lib.sh

ncpu=$(nproc)
scx_fdl topology > /tmp/topo.txt 2>&1 || fail "scx_fdl topology ran"
sed 's/^/    /' /tmp/topo.txt
nodes=$(grep -c '^node ' /tmp/topo.txt)
llcs=$(grep -c '^  llc ' /tmp/topo.txt)
check "topology: 2 NUMA nodes found ($nodes)" "$nodes == 2"
check "topology: 4 last-level caches found ($llcs)" "$llcs == 4"
grep -q "^$ncpu CPUs online (0-$((ncpu - 1)))" /tmp/topo.txt && pass "topology: $ncpu CPUs online" ||
    fail "topology: $ncpu CPUs online"

mkcg hi 200
mkcg lo 100
mkcg fdl 100
mkcg ant 100
rr_us=20000	# the deadline container's deadline_rr (why 20 ms: below, at the deadline checks)
cat > /tmp/topo.toml <<TOML
[cgroup.fdl]
deadline_rr = "${rr_us}us"
deadline_wakeup = "$((rr_us / 2))us"
guaranteed_shares = 1024
TOML

# The same latency probe in fdl and in lo (no parameters) beside hackbench across the machine:
# its p99 (wake-up to end of spin, minus the spin) in $1's variables fdl_p99 and lo_p99.
probe_round() {
    local hb probes= c
    sh -c "echo \$\$ > $CG/ant/cgroup.procs; exec hackbench -g 4 -f 10 -s 20000 -l 100000000" > /dev/null 2>&1 &
    hb=$!
    for c in fdl lo; do
        sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec fdl-probe -m 1 -t 2 --sleep-us 20000 --spin-us 3000 -r 8 -w 2 --late-after-us $rr_us --json" \
            > "/tmp/probe-$c.json" 2> /dev/null &
        probes="$probes $!"
    done
    for c in $probes; do wait "$c"; done
    kill "$hb" 2> /dev/null; killall hackbench 2> /dev/null; wait "$hb" 2> /dev/null
    fdl_p99=$(json_field /tmp/probe-fdl.json p99)
    lo_p99=$(json_field /tmp/probe-lo.json p99)
    fdl_late=$(json_field /tmp/probe-fdl.json late); fdl_n=$(json_field /tmp/probe-fdl.json samples)
    lo_late=$(json_field /tmp/probe-lo.json late); lo_n=$(json_field /tmp/probe-lo.json samples)
    say "p99 beside hackbench at $ncpu CPUs under $1: fdl $fdl_p99 us, no parameters $lo_p99 us (p50 $(json_field /tmp/probe-fdl.json p50), $(json_field /tmp/probe-lo.json p50); p90 $(json_field /tmp/probe-fdl.json p90), $(json_field /tmp/probe-lo.json p90))"
    say "wake-ups later than $rr_us us under $1: fdl $fdl_late of $fdl_n, no parameters $lo_late of $lo_n"
}

# EEVDF first, in the same boot: 8 emulated CPUs on a 2-core host have a latency floor of tens of
# milliseconds (a vCPU thread waits for the host), so the deadline claim is relative to it.
probe_round EEVDF
eevdf_fdl=$fdl_p99 eevdf_late=$fdl_late eevdf_n=$fdl_n

start_scx --config /tmp/topo.toml || exit 1
grep -q "topology: $ncpu CPUs online of $ncpu possible, 2 node(s), 4 LLC(s)" "$SCX_LOG" &&
    pass "scx_fdl logged the topology at start" || { fail "scx_fdl logged the topology at start"; grep topology "$SCX_LOG"; }

grep -q "queue domains: 4 (llc" "$SCX_LOG" && pass "scx_fdl split its queues into 4 LLC domains" ||
    { fail "scx_fdl split its queues into 4 LLC domains"; grep "queue domains" "$SCX_LOG"; }

# Skew: 16 busy loops of one cgroup start on node 0 (CPUs 0-3), then may run anywhere. Work queued
# in node 0's domains must reach node 1's idle CPUs, and each loop its share of the machine:
# measured from 1 to 5 s after the release, every CPU busy, the nodes within 17 % (the balancing
# threshold of reference §5), the loops' CPU times within 2x of each other (below). Why 16: node 0's
# two LLCs hold 8 loops each, and a domain that only took work when it ran empty stops taking at
# three loops for its two CPUs (it never runs empty again): 5, 5, 3, 3, the first ones' loops at
# 0.4 CPU, the others' at 0.67 (1.67x), for good. The queue's vtime order across domains evens it.
# Run twice: as it is, and with a CPU limit on the loops' cgroup that never binds (16 CPUs; at
# exactly the machine's 8 the emulated CPUs' wall-clock charges reach it and throttle): while
# any cgroup has cpu.max, as on a Kubernetes node, CPUs take work by another path (the hold
# queue's check), which must keep the order across domains too.
cpu_busy() { awk '/^cpu[0-9]/ { printf "%s %d %d\n", $1, $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# Per domain, in the dump (as in --monitor and Prometheus): the count and sum of a map's values.
dom_sum() { tr -d ' \n' < /tmp/dump.json | grep -o "\"$1\":{[^}]*}" | grep -o ':[0-9][0-9.]*' | tr -d : | awk '{ s += $1; n++ } END { printf "%d %d", n, s }'; }
skew_round() {
    n=0
    while [ $n -lt 16 ]; do
        sh -c "echo \$\$ > $CG/lo/cgroup.procs; exec taskset -c 0-3 sh -c 'while :; do :; done'" &
        PIDS="$PIDS $!"
        n=$((n + 1))
    done
    sleep 2
    for p in $PIDS; do echo "$p $(task_ns "$p")"; done > /tmp/hogr
    for p in $PIDS; do taskset -p -c 0-$((ncpu - 1)) "$p" > /dev/null || fail "taskset $p"; done
    scx_fdl --monitor 0.25 > /tmp/monitor.txt 2>&1 &
    mon=$!
    sleep 1
    cpu_busy > /tmp/busy0
    for p in $PIDS; do echo "$p $(task_ns "$p")"; done > /tmp/hog0
    sleep 2
    for p in $PIDS; do echo "$p $(task_ns "$p") $(cut -d' ' -f39 "/proc/$p/stat")"; done > /tmp/hogm
    sleep 2
    cpu_busy > /tmp/busy1
    for p in $PIDS; do echo "$p $(task_ns "$p")"; done > /tmp/hog1
    scx_fdl dump > /tmp/dump.json 2>&1 || fail "scx_fdl dump ran"
    kill "$mon" 2> /dev/null; wait "$mon" 2> /dev/null
    kill_all
    busy=$(awk 'NR == FNR { b[$1] = $2; t[$1] = $3; next } { printf "%s %.3f\n", $1, ($2 - b[$1]) / ($3 - t[$1]) }' /tmp/busy0 /tmp/busy1)
    say "$1: busy after the release: $(echo $busy)"
    least=$(echo "$busy" | awk 'NR == 1 || $2 < m { m = $2 } END { print m }')
    check "$1: every CPU busy after the skew's release (least $least, want >= 0.8)" "$least >= 0.8"
    imb=$(echo "$busy" | awk '{ n = substr($1, 4) + 0; if (n < 4) a += $2; else b += $2 } END { printf "%.3f", (a > b ? a - b : b - a) / ((a + b) / 2) }')
    check "$1: nodes balanced after the skew: imbalance $imb of the average (want < 0.17)" "$imb < 0.17"
    # The loops' CPU times over the 4 s, sorted. The split this guards against (a domain that took
    # work only when it ran empty: 2.15x between loops, for good) stays above 2x. While a CPU
    # compared its running loop only with the nearest domain's waiting head, a node whose
    # domains kept work never served the other node's waiters: 1.07-1.17x in most runs, and
    # 1.52-6.5x in about one of five (one loop at a sixth of the others'); compared with a random
    # other domain's head too (env.h), 1.02-1.06x in three runs of 2026-11-26. The check stays at
    # the defect's 2x until more runs say how rare the rest is.
    awk 'NR == FNR { s[$1] = $2; next } { print ($2 - s[$1]) / 1e6 }' /tmp/hog0 /tmp/hog1 | sort -n > /tmp/hogd
    say "$1: busy loops' CPU time over 4 s (ms), sorted: $(awk '{ printf "%d ", $1 }' /tmp/hogd)"
    ratio=$(awk '{ v[NR] = $1 } END { printf "%.3f", v[NR] / (v[1] > 0 ? v[1] : 1) }' /tmp/hogd)
    check "$1: each busy loop's CPU time within 2x of the others' (most / least $ratio)" "$ratio <= 2.0"
    # When loops drift apart, what each had: pinned (the 2 s on node 0), then 1-3 s and 3-5 s
    # after the release, and its CPU at 3 s (which domain it waited in).
    if awk -v r="$ratio" 'BEGIN { exit !(r > 1.5) }'; then
        say "$1: per loop: pid, ms pinned, ms 1-3 s, ms 3-5 s, CPU at 3 s; starvation clamps $(tr -d ' \n' < /tmp/dump.json | grep -o '"starvation_clamps":[0-9]*' | cut -d: -f2)"
        awk 'FILENAME == "/tmp/hogr" { r[$1] = $2; next } FILENAME == "/tmp/hog0" { a[$1] = $2; next }
             FILENAME == "/tmp/hogm" { m[$1] = $2; c[$1] = $3; next }
             { printf "    %s %d %d %d %s\n", $1, r[$1] / 1e6, (m[$1] - a[$1]) / 1e6, ($2 - m[$1]) / 1e6, c[$1] }' \
            /tmp/hogr /tmp/hog0 /tmp/hogm /tmp/hog1
    fi
}
skew_round "skew"
line=$(grep '^domains: ' /tmp/monitor.txt | tail -1)
say "--monitor: $line"
check "--monitor shows the 4 domains' load and imbalance" "$(echo "$line" | grep -o ' of 2 CPUs, took/s' | wc -l) == 4 && $(echo "$line" | grep -c 'imbalance [0-9.]* %$') == 1"
least_load=$(echo "$line" | grep -o 'llc[0-9]* [0-9.]* of' | awk 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }')
check "--monitor: every domain's load near its 2 busy CPUs (least $least_load, want >= 1.6)" "$least_load >= 1.6"
set -- $(dom_sum domain_took_steal); steal_doms=$1 steals=$2
set -- $(dom_sum domain_busy_secs); busy_doms=$1
check "the dump counts, per domain, work taken from other domains ($steals in $steal_doms domains, busy time of $busy_doms)" \
    "$steal_doms == 4 && $busy_doms == 4 && $steals > 0"
# The load balancer (reference §5): it ran once a second and moved loops out of node 0's domains.
# From 1 s after the release until the dump (about 5-6 s), the domains' PELT loads (16 loops of
# weight 100: about 400 per domain), averaged over --monitor's samples (four a second, about
# twenty: a single PELT sample reflects the last ~50 ms, in which a domain's count of loops moves
# by one as CPUs take loops across domains in the queue's order), are within the node threshold,
# 17 % of their average. Per LLC the threshold is 5 %, finer than one loop (25 % of a domain's
# 4): the check is that no LLC is more than one loop from the average (< 25 %). Measured: nodes
# 0.5-4.9 %; LLCs 2.8-10.6 % with one sample a second (ten runs, 2026-12-04), 2.7-8.5 % with
# four (four runs, 2026-12-04).
dom_vals() { tr -d ' \n' < /tmp/dump.json | grep -o "\"$1\":{[^}]*}" | grep -o ':[0-9][0-9.]*' | tr -d : | tr '\n' ' '; }
num() { tr -d ' \n' < /tmp/dump.json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
grep '^domains: ' /tmp/monitor.txt | tail -n +5 > /tmp/samples.txt	# from 1 s: the 5th of four a second
loads=$(grep -o 'llc[0-9]* [^;]*load [0-9]*' /tmp/samples.txt |
    awk '{ s[$1] += $NF; n[$1]++ } END { for (d in s) printf "%s %.0f\n", d, s[d] / n[d] }' | sort | awk '{ printf "%s ", $2 }')
nsamples=$(wc -l < /tmp/samples.txt)
say "domains' PELT loads after the skew, averaged over --monitor's $nsamples samples from 1 s: $loads; in the dump: $(dom_vals domain_load); balancer periods $(num balancer_periods), moves $(num balancer_moves), moved in: $(dom_vals domain_moved_in)"
set -- $loads
if [ $# -eq 4 ]; then
    node_imb=$(echo "$1 $2 $3 $4" | awk '{ a = $1 + $2; b = $3 + $4; m = (a + b) / 2; printf "%.3f", (a > b ? a - b : b - a) / 2 / (m > 0 ? m : 1) }')
    llc_imb=$(echo "$1 $2 $3 $4" | awk '{ m = ($1 + $2 + $3 + $4) / 4; d = 0; for (i = 1; i <= 4; i++) { x = $i - m; if (x < 0) x = -x; if (x > d) d = x }; printf "%.3f", d / (m > 0 ? m : 1) }')
    check "PELT loads: nodes within 17 % of their average ($node_imb), LLCs within one loop, 25 % ($llc_imb), the loads those of 16 loops ($1 $2 $3 $4)" \
        "$node_imb < 0.17 && $llc_imb < 0.25 && $1 + $2 + $3 + $4 >= 1300"
else
    fail "--monitor showed a PELT load for each of the 4 domains: $loads"
fi
check "the balancer ran ($(num balancer_periods) periods) and moved tasks ($(num balancer_moves) asked, $(dom_vals domain_moved_in | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s }') arrived)" \
    "$(num balancer_periods) >= 4 && $(num balancer_moves) > 0 && $(dom_vals domain_moved_in | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s }') > 0"
echo "1600000 100000" > "$CG/lo/cpu.max"
skew_round "skew under cpu.max"
echo max > "$CG/lo/cpu.max"

# A CPU limit across the domains: cpu.max 1.5 CPUs on 6 busy loops beside a loop per CPU in lo.
# Its tasks wait in several domains; a CPU that finds the limit out of runtime passes them to the
# hold queue, and the refill sends each back to its own domain's queue.
mkcg capped 100
echo "150000 100000" > "$CG/capped/cpu.max"
hogs capped 6
hogs lo "$ncpu"
sleep 2
measure 5 capped lo
capped=$(cpus "$(used capped)" 5); lo_cpus=$(cpus "$(used lo)" 5)
say "cpu.max 1.5 CPUs: capped $capped CPUs, lo $lo_cpus"
check "cpu.max across the domains: capped gets 1.5 CPUs +- 15 % ($capped)" "$capped >= 1.275 && $capped <= 1.725"
check "the rest goes to lo ($lo_cpus CPUs of $ncpu, want >= $ncpu - 2.5)" "$lo_cpus >= $ncpu - 2.5"
kill_all
echo max > "$CG/capped/cpu.max"

# Weights across the machine: a busy loop per CPU in each of hi (200) and lo (100).
hogs hi "$ncpu"
hogs lo "$ncpu"
sleep 2
measure 5 hi lo
r=$(awk -v a="$(used hi)" -v b="$(used lo)" 'BEGIN { printf "%.3f", a / b }')
check "weights at $ncpu CPUs: hi:lo = $r (want 2.0 +- 15 %)" "$r >= 1.7 && $r <= 2.3"
kill_all

# Deadline pressure (load_balance.rs, balance_deadline_level): four busy loops of a 4 ms
# deadline container within its guarantee (4 CPUs of 8) start on node 0, four of lo on node 1,
# then may run anywhere. The loads are even (a loop per CPU), so the balancer's pass on load has
# nothing to do. Two mechanisms may spread the deadline loops: the queue's order (work within its
# guarantee is ahead of fair work in every domain, so a CPU of node 1 ending a fair slice takes a
# deadline loop queued on node 0) and the balancer's pass on deadline pressure, which exchanges
# deadline loops for fair ones across the nodes where the first has not. Which one does it is a
# race: one run moved 6 by the balancer (series 0 4 2 2 3 2 1 1 3 2), a CI run of the same build
# none (mean 1.9), the queue had spread them before a period saw the imbalance, and without the
# pass (its calls removed, one run) 0 moves and 3 3 3 2 3 2 3 2 4 4. So the balancer's moves are
# reported, not checked here: its decision is checked on fixed vectors by the Rust tests of
# load_balance.rs (four fail without the pass). Checked: sampled every half second from 1 to 6 s
# after the release, the deadline loops are spread, on average between 1 and 3 of the 4 on
# node 1 (loops left where they started, on node 0, fail it).
mkcg dlp 100
scx_fdl set dlp deadline_rr=4ms guaranteed_shares=4096 > /dev/null || fail "scx_fdl set dlp"
dlp_moves() { scx_fdl dump 2>/dev/null | tr -d ' \n' | grep -o '"balancer_deadline_moves":[0-9]*' | cut -d: -f2; }
dm0=$(dlp_moves)
DLP=""
for c in dlp lo; do
    cpus=0-3; [ $c = lo ] && cpus=4-7
    n=0
    while [ $n -lt 4 ]; do
        sh -c "echo \$\$ > $CG/$c/cgroup.procs; exec taskset -c $cpus sh -c 'while :; do :; done'" &
        PIDS="$PIDS $!"
        [ $c = dlp ] && DLP="$DLP $!"
        n=$((n + 1))
    done
done
sleep 2
for p in $PIDS; do taskset -p -c 0-$((ncpu - 1)) "$p" > /dev/null || fail "taskset $p"; done
sleep 1
series=""
i=0
while [ $i -lt 10 ]; do
    on1=0
    for p in $DLP; do [ "$(cut -d' ' -f39 "/proc/$p/stat")" -ge 4 ] && on1=$((on1 + 1)); done
    series="$series $on1"
    sleep 0.5
    i=$((i + 1))
done
dm1=$(dlp_moves)
kill_all
mean=$(echo $series | awk '{ for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF }')
say "deadline pressure: the 4 ms container's loops on node 1, every 0.5 s from 1 s after the release:$series (mean $mean); balancer moves for deadline pressure: $((dm1 - dm0))"
check "the deadline loops released on node 0 spread over the nodes (on node 1: mean $mean of 4, want 1-3)" \
    "$mean >= 1 && $mean <= 3"
scx_fdl set dlp deadline_rr=none guaranteed_shares=none > /dev/null || fail "scx_fdl set dlp (removed)"

# The deadline container across the machine, with a deadline above this emulated machine's floor:
# 8 vCPUs on 2 host cores wait for the host, so the probe's p50 is 15 ms under either scheduler
# (host of 2026-11-25), and with deadline_rr = 4 ms every scheduler was late: 93 % of the probe's
# wake-ups later than 4 ms under EEVDF, 89 % under scx_fdl, 426-454 misses per 829-857 starts,
# figures that judged the host and no longer the defect this check was written for (a woken
# deadline task bound to its victim's local queue: 58-59 % of starts missed 4 ms on the host of
# 2026-11-24, where the fixed build missed 28-32 %; docs/benchmarks.md). With 20 ms, one run:
# 232 misses of 822 starts (28 %), and 32 % of the probe's wake-ups later than 20 ms against 70 %
# under EEVDF. Checked: misses under 45 % of starts, late wake-ups under 3/4 of EEVDF's share.
m0=$(scx_json_field fdl nr_misses); s0=$(scx_json_field fdl nr_picks)
probe_round scx_fdl
misses=$(( $(scx_json_field fdl nr_misses) - m0 )); starts=$(( $(scx_json_field fdl nr_picks) - s0 ))
say "fdl: $misses deadline misses of $starts starts, worst lateness $(scx_json_field fdl max_lateness_ns) ns"
check "the deadline container's p99 ($fdl_p99 us) below EEVDF's for the same probe ($eevdf_fdl us)" \
    "$fdl_p99 < $eevdf_fdl"
check "its deadline misses ($misses) under 45 % of its starts ($starts)" "$misses * 100 < $starts * 45"
check "its wake-ups later than its deadline_rr ($fdl_late of $fdl_n) under 3/4 of EEVDF's share ($eevdf_late of $eevdf_n)" \
    "$fdl_late / $fdl_n < 0.75 * $eevdf_late / $eevdf_n"
check "its p99 ($fdl_p99 us) within 1.5x of the same probe's without parameters ($lo_p99 us) + 5 ms" \
    "$fdl_p99 * 2 <= $lo_p99 * 3 + 10000"
finish_scx
exit $FAILED
