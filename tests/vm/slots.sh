# Scenario: the cgroups' records are slots of one array (--max-cgroups), reused as cgroups go.
# scx_fdl starts with 40 slots; the boot's own cgroups take a few, then 60 more cgroups are made:
#   - every mkdir succeeds (a full table never fails a cgroup's creation) and the cgroups beyond
#     the slots are counted untracked;
#   - an untracked cgroup's tasks are scheduled as its nearest tracked ancestor: P (cpu.weight 25,
#     tracked) keeps its weight against H (100) although its loops run in P/late, made after the
#     slots ran out;
#   - `scx_fdl set` on an untracked cgroup is refused with the reason, and changes nothing (before,
#     it answered success and the deadline silently did not apply); so is a SIGHUP reload of a
#     file that names untracked cgroups, whole;
#   - once the 60 are removed, their slots serve new cgroups (not one made below an untracked
#     cgroup, which stays untracked too): P/late2, made then, is tracked
#     (its own CPU time in `scx_fdl get`), and P keeps its weight with the loops moved there.
#   - no stall, scx_fdl stays attached and exits 0.
. ./lib.sh

ncpu=$(nproc)
untracked() { scx_fdl dump | sed -n 's/.*"cgroups_untracked": \([0-9]*\).*/\1/p' | head -1; }

: > /tmp/slots.toml	# a configuration file, none in it yet (a SIGHUP reload below)
start_scx --max-cgroups 40 --config /tmp/slots.toml || exit 1
mkcg P 25
mkcg H 100
mkcg F 100
# F's children with the cpu controller (only those are the scheduler's cgroups).
echo +cpu > "$CG/F/cgroup.subtree_control"
u0=$(untracked)
made=0
i=1
while [ $i -le 60 ]; do mkdir "$CG/F/f$i" && made=$((made + 1)); i=$((i + 1)); done
mkcg P/late 100
u1=$(untracked)
say "untracked cgroups: $u0 before, $u1 after 61 more"
check "all 60 cgroups made with 40 slots ($made)" "$made == 60"
check "the cgroups beyond the slots are counted untracked ($u0 -> $u1, at least 21 more)" \
    "${u1:-0} - ${u0:-0} >= 21"
scx_fdl get P/late --json > /tmp/late.json 2>&1
grep -q '"tracked": false' /tmp/late.json && pass "scx_fdl get says P/late, made with no slot left, is untracked" ||
    { fail "scx_fdl get says P/late, made with no slot left, is untracked"; cat /tmp/late.json; }

hogs H "$ncpu"
PIDS_H=$PIDS
hogs P/late "$ncpu"
late=${PIDS#"$PIDS_H"}
sleep 1
measure 4 P H
share=$(awk -v x="$(used P)" -v y="$(used H)" 'BEGIN { printf "%.3f", x / (x + y) }')
check "untracked P/late's loops have P's weight: P's share $share of 0.2 (0.1-0.3; at the root 0.5)" \
    "$share >= 0.1 && $share <= 0.3"
scx_fdl list | grep -E '(^| )/?(P|H)(/| |$)' | sed 's/^/    /'
for c in P H P/late; do echo "    $c: $(scx_fdl get $c --json 2>&1 | tr -d '\n' | cut -c1-400)"; done
# The BPF records of the root, P and H (bpftool, in the guest): their weights, sums and activity.
rec() {
    id=$(stat -c %i "$CG/$1")
    echo "    $1 (cgid $id): $(bpftool -j map dump name cgroups 2>/dev/null | sed 's/{"key":/\n{"key":/g' |
        grep "\"cgid\":$id[,}]" | grep -oE '"(cgref|weight|cpu_weight|wsum|nr_active|contrib|has_dsq|cont_slot|cont_cgref|cont_gen|cvtime|level)":-?[0-9]+' | tr '\n' ' ')"
}
rec .
rec P
rec H

if scx_fdl set P/late deadline_rr=4ms > /tmp/set.out 2>&1; then
    fail "scx_fdl set on an untracked cgroup is refused (it succeeded: $(cat /tmp/set.out))"
else
    grep -q "not tracked" /tmp/set.out && pass "scx_fdl set on an untracked cgroup is refused: $(tail -1 /tmp/set.out)" ||
        fail "scx_fdl set on an untracked cgroup is refused with the reason: $(cat /tmp/set.out)"
fi
rr=$(scx_json_field P/late deadline_rr_ns)
check "the refused set changed nothing: P/late's deadline_rr_ns is ${rr:-missing}" "${rr:-1} == 0"

# A reload is all or nothing as a set is: a valid file that names untracked cgroups (a pattern over
# F's children, some of them untracked) is undone whole; H, which it could take, keeps none either.
printf '[cgroup.H]\ndeadline_rr = "4ms"\n[cgroup."F/f*"]\ndeadline_rr = "5ms"\n' > /tmp/slots.toml
kill -HUP "$SCX_PID"
sleep 2
say "$(grep 'SIGHUP' "$SCX_LOG" | tail -1 | cut -c1-240)"
grep -q 'SIGHUP: /sys/fs/cgroup/F/f[0-9]*: .*the configuration in force is unchanged' "$SCX_LOG" &&
    pass "a reload the BPF side cannot take whole is undone, naming the cgroups refused" ||
    { fail "a reload the BPF side cannot take whole is undone, naming the cgroups refused"; grep SIGHUP "$SCX_LOG"; }
check "H got no deadline from the undone reload" "$(scx_json_field H deadline_rr_ns) == 0"
check "nor did F/f1 (tracked)" "$(scx_json_field F/f1 deadline_rr_ns) == 0"
: > /tmp/slots.toml

# Slots free again, a cgroup made below one that is not tracked (f60, made after the slots ran
# out) is not tracked either: tracked, with no parent, it stood at the root, out of its
# ancestors' weights and cpu.max.
i=1
while [ $i -le 59 ]; do rmdir "$CG/F/f$i"; i=$((i + 1)); done
mkcg F/f60/kid 100
scx_fdl get F/f60/kid --json > /tmp/kid.json 2>&1
grep -q '"tracked": false' /tmp/kid.json && pass "a cgroup made below an untracked one, slots free, is untracked" ||
    { fail "a cgroup made below an untracked one, slots free, is untracked"; cat /tmp/kid.json; }
rmdir "$CG/F/f60/kid" "$CG/F/f60"
mkcg P/late2 100
for p in $late; do echo "$p" > "$CG/P/late2/cgroup.procs"; done
sleep 1
a=$(scx_json_field P/late2 usage_ns)
measure 4 P H
b=$(scx_json_field P/late2 usage_ns)
share=$(awk -v x="$(used P)" -v y="$(used H)" 'BEGIN { printf "%.3f", x / (x + y) }')
say "P/late2 usage_ns $a -> $b"
scx_fdl get P/late2 --json | grep -q '"tracked": true' && pass "scx_fdl get says P/late2 is tracked" ||
    fail "scx_fdl get says P/late2 is tracked"
check "P/late2, made after the 60 went, is tracked in a freed slot: its own CPU time grew (${a:-none} -> ${b:-none} ns)" \
    "${b:-0} > ${a:-0} && ${a:-0} > 0"
check "with the loops in P/late2, P keeps its share: $share of 0.2 (0.1-0.3)" "$share >= 0.1 && $share <= 0.3"
finish_scx
exit $FAILED
