# Guest script (run with: vm/run.sh bench/guest/floor-charge.sh [SCX_FDL_OPTION...]): is a
# guarantee met as cpu.stat counts CPU time? tests/vm/fair-protection.sh's floor run (g1 4 ms and
# g2 20 ms, each guaranteed 0.879 CPU, two busy loops each, beside fair cgroup f with two) with
# each cgroup sampled 17 times, half a second apart (a round of samples takes seconds under
# TCG: about 6 s on the 2-vCPU VM): cpu.stat's usage_usec, scx_fdl's own count
# (`scx_fdl get --json` usage_ns) and the guarantee's budget. Prints, per cgroup, both counts in
# CPUs from the first sample to the last and the budgets (ms); the samples themselves as "S" lines.
# (Sampling runs `scx_fdl get` three times a second in the root cgroup: fair work beside f.)
. ./lib.sh
two_guarantees_cell
start_sched fdl --config /tmp/fdl.toml --fair-protection floor "$@" || exit 1
for c in g1 g2 f; do hogs "$c" 2; done
sleep 2
for i in $(seq 0 16); do
    line="S t=$(cut -d' ' -f1 /proc/uptime)"
    for c in g1 g2 f; do
        j=$(scx_fdl get "$c" --json)
        u=$(echo "$j" | sed -n 's/^ *"usage_ns": \([0-9]*\).*/\1/p')
        b=$(echo "$j" | sed -n 's/^ *"guarantee_budget_ns": \(-\{0,1\}[0-9]*\).*/\1/p')
        line="$line $c acct=$(usage_usec "$c") scx=$u budget=${b:-0}"
    done
    echo "$line" | tee -a /tmp/samples.txt
    sleep 0.5
done
# Fields per cgroup k (0..2): name at 3+4k, acct= 4+4k, scx= 5+4k, budget= 6+4k; t= is field 2.
awk '
    function v(s) { sub(/^[a-z]*=/, "", s); return s + 0 }
    NR == 1 { t0 = v($2); for (k = 0; k < 3; k++) { a0[k] = v($(4 + 4 * k)); s0[k] = v($(5 + 4 * k)) } }
    { for (k = 0; k < 3; k++) { name[k] = $(3 + 4 * k); b[k] = b[k] sprintf(" %.1f", v($(6 + 4 * k)) / 1e6) }
      t1 = v($2); for (k = 0; k < 3; k++) { a1[k] = v($(4 + 4 * k)); s1[k] = v($(5 + 4 * k)) } }
    END { for (k = 0; k < 3; k++)
        printf "FDL-CHARGE %s cpu.stat %.3f scx_fdl %.3f CPUs over %.1f s; budgets, ms:%s\n", name[k],
            (a1[k] - a0[k]) / 1e6 / (t1 - t0), (s1[k] - s0[k]) / 1e9 / (t1 - t0), t1 - t0, b[k] }
' /tmp/samples.txt
check_attached
kill_all
stop_scx
exit $FAILED
