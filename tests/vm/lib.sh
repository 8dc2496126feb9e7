# Helpers for the guest scenarios (busybox sh, sourced). Every check prints what it checked and
# the numbers; a scenario's exit status is its verdict.
CG=/sys/fs/cgroup
SCX_LOG=/tmp/scx_fdl.log
SCX_STATE=/sys/kernel/sched_ext/state
FAILED=0
PIDS=""

say() { echo "[guest] $*"; }
pass() { echo "FDL-CHECK PASS $*"; }
fail() { echo "FDL-CHECK FAIL $*"; FAILED=1; }

# check COND_DESCRIPTION EXPR : pass or fail on an awk boolean expression.
check() {
    if awk "BEGIN { exit !($2) }"; then pass "$1"; else fail "$1"; fi
}

scx_state() { cat "$SCX_STATE" 2>/dev/null || echo missing; }
scx_ops() { cat /sys/kernel/sched_ext/root/ops 2>/dev/null; }

# Start scx_fdl with the given options and wait (bounded) until the kernel says it is enabled.
start_scx() {
    scx_fdl "$@" > "$SCX_LOG" 2>&1 &
    SCX_PID=$!
    i=0
    while [ "$(scx_state)" != enabled ] || ! scx_ops | grep -q '^scx_fdl'; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 "$SCX_PID" 2>/dev/null; then
            fail "scx_fdl reached state enabled (state=$(scx_state), ops=$(scx_ops))"
            cat "$SCX_LOG"
            return 1
        fi
        sleep 0.1
    done
    say "scx_fdl enabled after ~$((i / 10)).$((i % 10)) s: ops=$(scx_ops)"
}

# Stop scx_fdl with SIGTERM; sets SCX_RC to its exit status.
stop_scx() {
    kill -TERM "$SCX_PID" 2>/dev/null
    wait "$SCX_PID"
    SCX_RC=$?
    say "scx_fdl exited with $SCX_RC; its log:"
    sed 's/^/    /' "$SCX_LOG"
}

# Start the scheduler under test: "fdl" starts scx_fdl (with any further arguments), "eevdf"
# leaves the kernel's default.
start_sched() {
    sched=$1
    shift
    case $sched in
        fdl) start_scx $FDL_SCX_ARGS "$@" ;;
        eevdf) say "running under the kernel's default scheduler (EEVDF)" ;;
        *) fail "unknown scheduler '$sched' (fdl or eevdf)"; return 1 ;;
    esac
}

# check_clean_exit: stop scx_fdl with SIGTERM; it must exit 0.
check_clean_exit() {
    stop_scx
    [ "$SCX_RC" = 0 ] && pass "SIGTERM: scx_fdl exited 0" || fail "SIGTERM: scx_fdl exited 0 (got $SCX_RC)"
}

# finish_scx: the end of a scenario that ran scx_fdl under load: still attached, dmesg clean, the
# load killed, and a clean exit.
finish_scx() {
    check_attached
    check_no_strays
    check_dmesg_clean
    kill_all
    check_clean_exit
}

# check_attached: scx_fdl is still running and the kernel still has it enabled.
check_attached() {
    kill -0 "$SCX_PID" 2>/dev/null && [ "$(scx_state)" = enabled ] && pass "scx_fdl stayed attached" ||
        fail "scx_fdl stayed attached (state $(scx_state))"
}

# check_no_strays: no full scan found queued work that the policy's counts did not show (an
# inactive container's, or a queue counted empty), at two full scans in a row; the dispatcher
# otherwise never asks the kernel about them (scan_strays in `scx_fdl dump`).
check_no_strays() {
    n=$(scx_fdl dump 2>/dev/null | tr ',{' '\n\n' | sed -n 's/^ *"scan_strays": *\([0-9]*\) *$/\1/p')
    [ "$n" = 0 ] && { pass "no queued work outside the policy's counts (scan_strays 0)"; return; }
    fail "no queued work outside the policy's counts (scan_strays ${n:-unreadable})"
}

# check_dmesg_clean: no stall, BUG, WARNING or Oops in the kernel log.
check_dmesg_clean() {
    problems=$(dmesg_problems)
    [ -z "$problems" ] && pass "dmesg clean" || { fail "dmesg clean:"; echo "$problems" | head; }
}

dmesg_problems() {
    dmesg | grep -E 'runnable task stall|BUG:|Oops|WARNING:|Call Trace'
}

# mkcg PATH WEIGHT: create cgroup PATH (relative to the root) with cpu.weight WEIGHT.
mkcg() {
    mkdir -p "$CG/$1"
    parent=$(dirname "$CG/$1")
    grep -q cpu "$parent/cgroup.subtree_control" || echo +cpu > "$parent/cgroup.subtree_control"
    echo "$2" > "$CG/$1/cpu.weight"
}

# hogs CGROUP N [NICE]: start N busy loops in CGROUP at nice NICE (default 0).
hogs() {
    n=0
    while [ $n -lt "$2" ]; do
        sh -c "echo \$\$ > $CG/$1/cgroup.procs; renice -n ${3:-0} -p \$\$ > /dev/null; while :; do :; done" &
        PIDS="$PIDS $!"
        n=$((n + 1))
    done
}

kill_all() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    PIDS=""
}

usage_usec() { awk '/^usage_usec/ {print $2}' "$CG/$1/cpu.stat"; }

# CPU time of a task in ns (schedstat's first field).
task_ns() { cut -d' ' -f1 "/proc/$1/schedstat"; }

# measure SECS CG...: CPU time (usec) each cgroup used over SECS, as "cg=usec" words in USED.
measure() {
    secs=$1
    shift
    before=""
    for c in "$@"; do before="$before $(usage_usec "$c")"; done
    sleep "$secs"
    USED=""
    set -- "$@"
    i=1
    for c in "$@"; do
        b=$(echo $before | cut -d' ' -f$i)
        USED="$USED $c=$(($(usage_usec "$c") - b))"
        i=$((i + 1))
    done
}

# used CG: the usec of CG from the last measure.
used() { echo "$USED" | tr ' ' '\n' | awk -F= -v c="$1" '$1 == c {print $2}'; }

# json_field FILE KEY: a number from fdl-probe's one-line JSON.
json_field() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1"; }

# cpus USEC SECS: CPU time used over a wall-clock interval, in CPUs.
cpus() { awk -v u="$1" -v s="$2" 'BEGIN { printf "%.3f", u / 1e6 / s }'; }

# overcommit_hogs [G_LOOPS]: the bandwidth scenarios' load on 2 CPUs, four times overcommitted:
# cgroup g with G_LOOPS busy loops (default 2; 0: the caller runs g's load) beside h1..h6 with one
# each, all at cpu.weight 100 (g's fair share: 1/7 of 2 CPUs).
overcommit_hogs() {
    for c in g h1 h2 h3 h4 h5 h6; do mkcg "$c" 100; done
    hogs g "${1:-2}"
    for c in h1 h2 h3 h4 h5 h6; do hogs "$c" 1; done
}

# start_guaranteed_g SCHED: start SCHED (fdl or eevdf); scx_fdl with cgroup g guaranteed one CPU
# (guaranteed_shares 1024) from a configuration file.
start_guaranteed_g() {
    cat > /tmp/fdl.toml <<'TOML'
[cgroup.g]
guaranteed_shares = 1024
TOML
    if [ "$1" = fdl ]; then start_sched fdl --config /tmp/fdl.toml; else start_sched "$1"; fi
}

# scx_json_field CGROUP KEY: a number from `scx_fdl get CGROUP --json`.
scx_json_field() {
    scx_fdl get "$1" --json | sed -n "s/^ *\"$2\": \([0-9.]*\),\{0,1\}$/\1/p"
}
