# Scenario (issue 14, defects 1, 2 and 4): cgroup churn. Busy tasks move, 200 times, into a
# new chain of short-lived cgroups below P (cpu.weight 25; 1 to 20 levels deep, deeper than the 16
# scx_fdl tracks), and the chain they left is removed, beside H (cpu.weight 100) with as many busy
# loops. Then 1100 more cgroups exist at once, beyond the export cap (1024), and the churn goes on:
#   - P's counters (scx_fdl get P: usage_ns, wait_ns, summed over its subtree) never go down,
#     sampled every 25 cycles, while thousands of cgroups come and go below it;
#   - P keeps its weight: its tasks, however deep and short-lived their cgroups, get P's share
#     against H (0.2 of the machine), not the half they would get counted at the root;
#   - beyond the cap, cgroups are dropped from the export (counted), P stays reported;
#   - no stall, scx_fdl stays attached and exits 0.
. ./lib.sh

ncpu=$(nproc)
cycles=${1:-200}
start_scx || exit 1
mkcg P 25
mkcg H 100
# The movers start in P/base: P itself cannot hold tasks once it gives its children the cpu
# controller (cgroup v2's no-internal-process rule).
mkcg P/base 100
hogs H "$ncpu"
PIDS_H=$PIDS
hogs P/base "$ncpu"
movers=${PIDS#"$PIDS_H"}

# chain I: a new chain of (I % 20) + 1 levels below P; its deepest path in CHAIN.
chain() {
    CHAIN=P/c$1
    mkcg "$CHAIN" 100
    d=$(($1 % 20))
    while [ "$d" -gt 0 ]; do CHAIN=$CHAIN/n$d; mkcg "$CHAIN" 100; d=$((d - 1)); done
}

# unchain PATH: remove a chain from its deepest cgroup up to P.
unchain() {
    p=$1
    while [ "$p" != P ]; do rmdir "$CG/$p" 2>/dev/null || say "could not remove $p"; p=$(dirname "$p"); done
}

# churn FROM TO EVERY: cycles FROM..TO; P's counters sampled every EVERY cycles into SAMPLES.
churn() {
    i=$1
    while [ "$i" -le "$2" ]; do
        chain "$i"
        for m in $movers; do echo "$m" > "$CG/$CHAIN/cgroup.procs"; done
        [ -n "$prev" ] && unchain "$prev"
        prev=$CHAIN
        if [ $((i % $3)) = 0 ]; then
            SAMPLES="$SAMPLES $(scx_json_field P usage_ns):$(scx_json_field P wait_ns)"
        fi
        i=$((i + 1))
    done
}

# monotonic: every usage and wait sample at least the one before.
monotonic() {
    echo "$SAMPLES" | tr ' ' '\n' | awk -F: 'NF == 2 {
        if ($1 + 0 < u || $2 + 0 < w) { bad++; printf "    went down: %s:%s after %s:%s\n", $1, $2, u, w }
        u = $1 + 0; w = $2 + 0; n++ }
        END { printf "%d samples\n", n; exit bad > 0 || n < 3 }'
}

prev=""
SAMPLES=""
sleep 1
t0=$(date +%s)
before_p=$(usage_usec P)
before_h=$(usage_usec H)
churn 1 "$cycles" 25
t1=$(date +%s)
p=$(($(usage_usec P) - before_p))
h=$(($(usage_usec H) - before_h))
say "$cycles cycles in $((t1 - t0)) s: P used $p us, H $h us"
n=$(monotonic)
[ $? = 0 ] && pass "P's counters never went down through $cycles chains of 1-20 levels ($n)" ||
    { fail "P's counters never went down through $cycles chains of 1-20 levels"; echo "$n"; }
share=$(awk -v x="$p" -v y="$h" 'BEGIN { printf "%.3f", x / (x + y) }')
check "P keeps its weight through the churn: its share $share of 0.2 (0.1-0.3; counted at the root it would be 0.5)" \
    "$share >= 0.1 && $share <= 0.3"

say "beyond the export cap: 1100 more cgroups"
mkcg E 100
i=1
while [ $i -le 1100 ]; do mkdir "$CG/E/e$i"; i=$((i + 1)); done
scx_fdl dump > /tmp/dump.json
dropped=$(sed -n 's/.*"cgroups_dropped": \([0-9]*\).*/\1/p' /tmp/dump.json | head -1)
exported=$(sed -n 's/.*"cgroups_exported": \([0-9]*\).*/\1/p' /tmp/dump.json | head -1)
check "beyond the cap, $exported cgroups exported (1024 at most) and $dropped counted as dropped (at least 1100 in all)" \
    "${exported:-0} <= 1024 && ${exported:-0} + ${dropped:-0} >= 1100"
grep -q '"path": "/sys/fs/cgroup/P"' /tmp/dump.json && pass "P, a first-level cgroup, stays exported beyond the cap" ||
    fail "P, a first-level cgroup, stays exported beyond the cap"
# The exported set is chosen by a fixed order (configured, shallowest, then path): the same cgroups
# at every scrape, not a different 1024 each time.
grep '"path": "/sys/fs/cgroup/E/' /tmp/dump.json | sort > /tmp/exported1.txt
scx_fdl dump | grep '"path": "/sys/fs/cgroup/E/' | sort > /tmp/exported2.txt
cmp -s /tmp/exported1.txt /tmp/exported2.txt && pass "two dumps beyond the cap export the same cgroups ($(wc -l < /tmp/exported1.txt) of E's)" ||
    fail "two dumps beyond the cap export the same cgroups"
SAMPLES=""
churn $((cycles + 1)) $((cycles + cycles / 4)) 10
n=$(monotonic)
[ $? = 0 ] && pass "beyond the cap, P's counters still never go down ($n)" ||
    { fail "beyond the cap, P's counters still never go down"; echo "$n"; }
i=1
while [ $i -le 1100 ]; do rmdir "$CG/E/e$i"; i=$((i + 1)); done

for m in $movers; do echo "$m" > "$CG/P/base/cgroup.procs"; done
unchain "$prev"
finish_scx
exit $FAILED
