# Guest script (run with: vm/run.sh bench/guest/nested-guarantee.sh [SCX_FDL_OPTION...]): a guarantee three levels down.
# kubepods.slice beside three first-level cgroups h1..h3 of one hog each (all cpu.weight 100): kubepods gets 0.5 CPU of 2; inside, pod g (2 hogs) and pod o
# (2 hogs): g's share 0.25 CPU. g gets guaranteed_shares 1024 (1 CPU): (a) with deadline_rr 10ms,
# (b) without deadlines.
. ./lib.sh
B=kubepods.slice/kubepods-burstable.slice
for c in kubepods.slice "$B" "$B/podg.slice" "$B/podo.slice" h1 h2 h3; do mkcg "$c" 100; done
start_scx "$@" || exit 1
hogs "$B/podg.slice" 2
hogs "$B/podo.slice" 2
for c in h1 h2 h3; do hogs "$c" 1; done
sleep 2
measure 5 "$B/podg.slice" "$B/podo.slice" h1
echo "FDL-NG none g=$(cpus "$(used "$B/podg.slice")" 5) o=$(cpus "$(used "$B/podo.slice")" 5) h1=$(cpus "$(used h1)" 5)"
scx_fdl set "$B/podg.slice" deadline_rr=10ms guaranteed_shares=1024 || fail set-a
sleep 3
measure 5 "$B/podg.slice" "$B/podo.slice" h1
echo "FDL-NG deadline+guarantee g=$(cpus "$(used "$B/podg.slice")" 5) o=$(cpus "$(used "$B/podo.slice")" 5) h1=$(cpus "$(used h1)" 5)"
scx_fdl get "$B/podg.slice" | sed 's/^/    /'
scx_fdl set "$B/podg.slice" deadline_rr=none || fail set-b
sleep 4
measure 5 "$B/podg.slice" "$B/podo.slice" h1
echo "FDL-NG guarantee-only g=$(cpus "$(used "$B/podg.slice")" 5) o=$(cpus "$(used "$B/podo.slice")" 5) h1=$(cpus "$(used h1)" 5)"
scx_fdl get "$B/podg.slice" | sed 's/^/    /'
check_attached
kill_all
stop_scx
exit $FAILED
