# Scenario: nice levels within one cgroup share CPU by the kernel's weights.
# nice 0 (weight 1024) against nice 5 (weight 335): 3.06 : 1. One hog per vCPU at each level, so
# that the hogs outnumber the CPUs and the weights decide.
# Args: [fdl|eevdf]
. ./lib.sh

sched=${1:-fdl}
secs=8
ncpu=$(nproc)
start_sched "$sched" || exit 1

mkcg N 100
hogs N "$ncpu" 0
nice0=$PIDS
PIDS=""
hogs N "$ncpu" 5
nice5=$PIDS
PIDS="$nice0 $nice5"
sleep 2

sum_ns() { t=0; for p in "$@"; do t=$((t + $(task_ns "$p"))); done; echo $t; }
b0=$(sum_ns $nice0) b5=$(sum_ns $nice5)
sleep $secs
u0=$(($(sum_ns $nice0) - b0)) u5=$(($(sum_ns $nice5) - b5))
say "CPU time over $secs s: nice 0 = $((u0 / 1000000)) ms, nice 5 = $((u5 / 1000000)) ms"
for p in $nice5; do
    n=$(awk '{print $19}' "/proc/$p/stat")
    [ "$n" = 5 ] || fail "hog $p runs at nice 5 (it is at $n)"
done
ratio=$(awk -v a="$u0" -v b="$u5" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 999) }')
echo "FDL-SHARES $sched nice0=$u0 nice5=$u5"
check "nice 0 : nice 5 = $ratio, want 3.06 within 15 %" "$ratio >= 2.6 && $ratio <= 3.52"

sed "s/^/[events] /" /sys/kernel/sched_ext/root/events 2>/dev/null
kill_all
rmdir $CG/N
if [ "$sched" = fdl ]; then
    stop_scx
    [ "$SCX_RC" = 0 ] || fail "scx_fdl exited 0 after the scenario (got $SCX_RC)"
fi
exit $FAILED
