# Benchmark runner (busybox sh, run as root on a sched_ext kernel: in the VM or on the host). Runs
# the plan written by the host side (plan.sh, beside this file): for each repeat, each scheduler in
# turn on this one boot, each variant of the scenario's workload. Results go to stdout as one line
# each, so that they survive the serial console:
#   FDL-BENCH-STEP sched=S variant=V repeat=R       a measurement begins (progress)
#   FDL-BENCH {json}                                 one measurement's results, or why it has none
#   FDL-BENCH-SCHED {json}                           a scheduler's start/stop on one repeat
#   FDL-BENCH-RIG {json}                             the boot's rig check, before any step
#   FDL-BENCH-END                                    every step was run
# BENCH_SKIP (plan.sh) lists sched:repeat pairs already measured, which are left out.
# Helpers mkcg, say, scx_state, scx_ops, dmesg_problems come from the VM tests' lib.sh.
. ./lib.sh
. ./plan.sh
BENCH_DIR=$PWD
OUT=/tmp/fdl-bench
SLOG=/tmp/fdl-bench-sched

now() { cut -d' ' -f1 /proc/uptime; }
# A JSON string with what could break the framing removed (quotes, backslashes, line breaks,
# terminal colour codes and other control characters).
jstr() {
    printf '"%s"' "$(printf '%s' "$*" | sed 's/\[[0-9;]*m//g' | tr '\n\t' '| ' | tr -d '"\\\000-\037' | cut -c1-800)"
}
# The end of a scheduler's log, for an error: its last lines, the panic or error among them.
log_tail() { grep -v '^ *$' "$1" | tail -"${2:-4}" | cut -c1-240; }

# The workload primitives the plan's functions call. Each starts its work in the background inside
# cgroup $1; results go to $OUT/<name>.*.
# A cgroup created after the scheduler starts (cgroups_after_start) is absent until then; it gets its
# weight when it is created.
bench_weight() { [ ! -d "$CG/$1" ] || echo "$2" > "$CG/$1/cpu.weight"; }
# is_fdl SCHED: scx_fdl, or a variant of it (scx_fdl+NAME: scx_fdl with more options, --fdl-variant).
is_fdl() { case $1 in scx_fdl|scx_fdl+*) return 0 ;; esac; return 1; }

# bench_fdl_set CGROUP KEY=VALUE...: scx_fdl set (fdl_params = "set"); a refusal is an error of
# every measurement under this start of scx_fdl.
bench_fdl_set() {
    if ! out=$($FDL_CLI set "$@" 2>&1); then
        PARAM_ERR="${PARAM_ERR}scx_fdl set $* failed: $(echo "$out" | grep -v '^ *$' | tail -2 | tr '\n' ' '); "
    else
        say "scx_fdl set $*"
    fi
}
# pin: the words that start a workload on its CPUs (the plan's BENCH_CPUS, a workload's `cpus`:
# taskset -c, which execs the command in its own process, so $! is still the workload's), or none.
pin() { [ -z "${BENCH_CPUS:-}" ] || echo "taskset -c $BENCH_CPUS"; }
bench_probe() {
    cg=$1 name=$2
    shift 2
    if [ "$BENCH_PROBE" = schbench ]; then
        cmd="schbench $* -r $BENCH_DURATION"
    else
        cmd="fdl-probe $* -r $BENCH_DURATION -w $BENCH_WARMUP --json"
    fi
    $(pin) sh -c "echo \$\$ > $CG/$cg/cgroup.procs; exec $cmd" > "$OUT/$name.probe" 2> "$OUT/$name.err" &
    PROBES="$PROBES $name:$!"
}
# hackbench runs again and again so that its throughput can be read while the probes run: each
# completed run appends its "Time:" to <name>.hb.
bench_hackbench() {
    cg=$1 name=$2
    shift 2
    $(pin) sh -c "echo \$\$ > $CG/$cg/cgroup.procs; while :; do hackbench $* 2>&1 | awk '/^Time:/ {print \$2}' >> $OUT/$name.hb; done" \
        > /dev/null 2>&1 &
    BG="$BG $!"
    HACKBENCH="$HACKBENCH $name"
}
bench_stress() {
    cg=$1 name=$2
    shift 2
    $(pin) sh -c "echo \$\$ > $CG/$cg/cgroup.procs; exec stress-ng $* --metrics-brief -t 100000" > "$OUT/$name.stress" 2>&1 &
    STRESS="$STRESS $name:$!"
}
bench_hogs() {
    n=0
    while [ $n -lt "$2" ]; do
        $(pin) sh -c "echo \$\$ > $CG/$1/cgroup.procs; while :; do :; done" &
        BG="$BG $!"
        n=$((n + 1))
    done
}

usage() { awk '/^usage_usec/ {print $2}' "$CG/$1/cpu.stat"; }

# machine_usec [PID]: "IDLE SCHED" in microseconds so far: the CPUs' idle time (/proc/stat idle +
# iowait, in USER_HZ = 100 ticks) and the scheduler process PID's CPU time (its utime + stime; 0
# without PID: EEVDF). Where CPU time goes that no scenario cgroup got: left idle, or spent by the
# scheduler's own process. (Not the root cgroup's usage_usec: it is sampled at ticks, unlike the
# other cgroups' run time, and did not add up with them.)
machine_usec() {
    idle=$(awk '$1 == "cpu" { printf "%.0f\n", ($5 + $6) * 10000; exit }' /proc/stat)
    sched=0
    if [ -n "$1" ] && [ -r "/proc/$1/stat" ]; then
        # Fields after the command (which ends with the last ")"): utime and stime are the 12th and 13th.
        sched=$(sed 's/^.*) //' "/proc/$1/stat" | awk '{ printf "%.0f\n", ($12 + $13) * 10000 }')
    fi
    echo "$idle $sched"
}

# fdl_dump FILE [WINDOW_SECS]: scx_fdl's own figures now (`scx_fdl dump`, pretty JSON), reduced to
# one line per scenario cgroup: "NAME nr_misses nr_picks max_lateness_ns LATENESS WAKE_STARTS
# WAKE_MISSES LATE_TID LATE_COMM LATE_WOKE LATE_WAIT_NS WIN_LATE_NS WIN_TID WIN_COMM WIN_WOKE
# WIN_WAIT_NS", LATENESS its misses by lateness bucket (log2 microseconds, comma-separated; "-" if
# none were reported), WAKE_* its starts and misses of wake-ups (-1 from an scx_fdl without them),
# LATE_* the start of its worst lateness: thread id, name ("-": gone, or an scx_fdl without the
# field), 1 for a wake-up's start, and its wait; WIN_* the same for the worst lateness of the
# measurement window (-1: an scx_fdl without windows). With WINDOW_SECS the dump first begins such
# a window, lasting that long (`scx_fdl dump --new-window --window-for`); FILE.window then holds
# the window's number, empty where this scx_fdl has none (the old dump is taken instead). The
# after-dump's window number is in FILE.window as well. On failure FDL_STATS_ERR says why.
fdl_dump() {
    if [ -n "${2:-}" ]; then
        fd_ms=$(awk -v s="$2" 'BEGIN { printf "%d", s * 1000 }')
        if ! $FDL_CLI dump --new-window --window-for "${fd_ms}ms" > "$1.json" 2> "$1.err"; then
            # An scx_fdl without windows (an older build under test): the dump as before.
            grep -q -e '--new-window' "$1.err" || say "scx_fdl dump --new-window failed: $(log_tail "$1.err" 2)"
            fdl_dump "$1"
            return
        fi
    elif ! $FDL_CLI dump > "$1.json" 2> "$1.err"; then
        FDL_STATS_ERR="${FDL_STATS_ERR}scx_fdl dump failed: $(log_tail "$1.err" 2); "
        return 1
    fi
    grep -o '"late_window": [0-9]*' "$1.json" | head -1 | awk '{ print $2 }' > "$1.window"
    # Only the "cgroups" array (it closes at two spaces' indent); one object per cgroup, its keys at six
    # spaces' indent in any order (serde_json sorts them), an array's members at eight.
    awk -v root="$CG/" '
        function val(line) { sub(/^[^:]*: */, "", line); sub(/,$/, "", line); gsub(/"/, "", line); return line }
        /^  "cgroups": \[/ { in_cg = 1; next }
        in_cg && /^  \]/ { in_cg = 0 }
        !in_cg { next }
        /^    \{/ { name = ""; misses = picks = late = 0; ws = wm = -1; hist = ""; in_late = 0
                  ltid = lwoke = lwait = 0; lcomm = "-"; wlate = -1; wtid = wwoke = wwait = 0; wcomm = "-"; next }
        /^    \}/ { if (name != "") print name, misses + 0, picks + 0, late + 0, (hist == "" ? "-" : hist), ws + 0, wm + 0,
                       ltid + 0, lcomm, lwoke, lwait + 0, wlate + 0, wtid + 0, wcomm, wwoke, wwait + 0; next }
        in_late && /^      \]/ { in_late = 0; next }
        in_late { v = $1; sub(/,$/, "", v); hist = hist (hist == "" ? "" : ",") v; next }
        /^      "lateness": \[$/ { in_late = 1; next }
        /^      "path":/ { name = val($0); if (index(name, root) == 1) name = substr(name, length(root) + 1) }
        /^      "nr_misses":/ { misses = val($0) }
        /^      "nr_picks":/ { picks = val($0) }
        /^      "nr_wake_starts":/ { ws = val($0) }
        /^      "nr_wake_misses":/ { wm = val($0) }
        /^      "max_lateness_ns":/ { late = val($0) }
        /^      "max_late_pid":/ { ltid = val($0) }
        /^      "max_late_comm":/ { lcomm = val($0); gsub(/[^A-Za-z0-9._:-]/, "_", lcomm); if (lcomm == "") lcomm = "-" }
        /^      "max_late_woke":/ { lwoke = val($0) == "true" ? 1 : 0 }
        /^      "max_late_wait_ns":/ { lwait = val($0) }
        /^      "window_max_lateness_ns":/ { wlate = val($0) }
        /^      "window_late_pid":/ { wtid = val($0) }
        /^      "window_late_comm":/ { wcomm = val($0); gsub(/[^A-Za-z0-9._:-]/, "_", wcomm); if (wcomm == "") wcomm = "-" }
        /^      "window_late_woke":/ { wwoke = val($0) == "true" ? 1 : 0 }
        /^      "window_late_wait_ns":/ { wwait = val($0) }
    ' "$1.json" > "$1"
}

# "TID NAME" for every thread in the scenario's cgroups now.
thread_names() {
    for c in $BENCH_CGROUPS; do
        while read -r t; do
            [ -r "/proc/$t/comm" ] && echo "$t $(tr -c 'A-Za-z0-9._:\n-' _ < "/proc/$t/comm")"
        done < "$CG/$c/cgroup.threads"
    done 2>/dev/null
}

# The FDL-BENCH "fdl_stats" object from the dumps before and after the window: per scenario cgroup
# the misses and picks during the window, the worst lateness since scx_fdl started (at the end, and
# before the window), and the worst lateness of the window itself (max_lateness_window_us). Exact
# (window_exact) where scx_fdl kept the measurement's own window (the before-dump began it, from
# the probes' warm-up's end for their duration, and no other began since: WIN_* of the after-dump),
# or where the worst since the start grew during the window; otherwise at most the upper bound of
# the highest lateness bucket that gained misses (a power of two microseconds) and at most the
# worst since the start; 0 when the window had no miss; -1 when this scx_fdl reports no buckets.
# worst_start names the start of the window's worst (thread id and name, a wake-up's or a
# resumption's, its wait; a name scx_fdl no longer found from $OUT/threads) where it is known; else
# null.
fdl_stats_json() {
    if [ ! -s "$OUT/dump.before" ] || [ ! -s "$OUT/dump.after" ]; then
        echo null
        return
    fi
    fs_wb=$(cat "$OUT/dump.before.window" 2>/dev/null) fs_wa=$(cat "$OUT/dump.after.window" 2>/dev/null)
    fs_windowed=0
    [ -n "$fs_wb" ] && [ "$fs_wb" = "$fs_wa" ] && [ "$fs_wb" != 0 ] && fs_windowed=1
    awk -v want=" $BENCH_CGROUPS " -v threads="$OUT/threads" -v windowed=$fs_windowed '
        BEGIN { while ((getline line < threads) > 0) { split(line, tn, " "); tname[tn[1]] = tn[2] } }
        FNR == NR { m[$1] = $2; p[$1] = $3; l[$1] = $4; h[$1] = $5; ws[$1] = $6; wm[$1] = $7; next }
        index(want, " " $1 " ") {
            exact = windowed && $12 != "" && $12 >= 0
            if (exact)
                win = int($12 / 1000)
            else {
                win = $2 > m[$1] ? window($4, l[$1], $5, h[$1]) : 0
                exact = $4 > l[$1] || win == 0
            }
            # Wake-ups: -1 where either dump lacks them (an older scx_fdl, or no such columns).
            wake = ($6 == "" || $6 < 0 || ws[$1] == "" || ws[$1] < 0) ? 0 : 1
            start = "null"
            if (windowed && $12 > 0 && $13 > 0)
                start = started($13, $14, $15, $16)
            else if (!windowed && $4 > l[$1] && $8 > 0)
                start = started($8, $9, $10, $11)
            printf "%s\"%s\": {\"misses\": %d, \"picks\": %d, \"max_lateness_us\": %d, \"max_lateness_before_us\": %d, \"max_lateness_window_us\": %d, \"window_exact\": %s, \"wake_starts\": %d, \"wake_misses\": %d, \"worst_start\": %s}", \
                sep, $1, $2 - m[$1], $3 - p[$1], $4 / 1000, l[$1] / 1000, win, exact ? "true" : "false", \
                wake ? $6 - ws[$1] : -1, wake ? $7 - wm[$1] : -1, start
            sep = ", "
        }
        function started(tid, comm, woke, wait) {
            return sprintf("{\"tid\": %d, \"comm\": \"%s\", \"woke\": %s, \"wait_us\": %d}",
                           tid, comm != "-" ? comm : (tid in tname ? tname[tid] : ""),
                           woke == 1 ? "true" : "false", wait / 1000)
        }
        # bucket 0: under 1 us; bucket i: under 2^i us; the last is unbounded (fdl_lat_bucket()).
        function window(after, before, ha, hb,    na, nb, a, b, i, top, bound) {
            if (after > before) return int(after / 1000)
            if (ha == "-" || hb == "-") return -1
            na = split(ha, a, ","); nb = split(hb, b, ",")
            top = -1
            for (i = 1; i <= na; i++) if (a[i] - (i <= nb ? b[i] : 0) > 0) top = i - 1
            if (top < 0) return 0
            # 2^top by doubling: busybox awk (the guest) has no exponentiation.
            if (top == na - 1) bound = after / 1000
            else for (bound = 1; top > 0; top--) bound *= 2
            return int(bound < after / 1000 ? bound : after / 1000)
        }
        BEGIN { printf "{" } END { printf "}\n" }
    ' "$OUT/dump.before" "$OUT/dump.after"
}

# prepare_params SCHED: once the scheduler is enabled, create the cgroups that were to come later
# (cgroups_after_start) and give scx_fdl its parameters with `scx_fdl set` (fdl_params = "set").
# Problems go to PARAM_ERR.
prepare_params() {
    if [ -n "$BENCH_LATE_CGROUPS" ]; then
        for c in $BENCH_LATE_CGROUPS; do mkcg "$c" 100; done
        set_weights "$1"
    fi
    if is_fdl "$1" && [ "$BENCH_FDL_PARAMS" = set ]; then
        fdl_set_params
    fi
    [ -n "$BENCH_LATE_CGROUPS" ] || return 0
    # scx_fdl looks for configured cgroups every second; every scheduler waits alike.
    sleep "$BENCH_RESCAN_WAIT"
    if is_fdl "$1" && [ "$BENCH_FDL_PARAMS" = config ]; then
        for c in $BENCH_LATE_CGROUPS; do
            grep -q "$CG/$c: deadline_rr" "$SLOG/$1.log" ||
                PARAM_ERR="${PARAM_ERR}scx_fdl did not apply the parameters of cgroup $c within $BENCH_RESCAN_WAIT s of its creation (no '$CG/$c: deadline_rr' line in its log); "
        done
    fi
}

# Kill everything left in the scenario's cgroups (hackbench's children too) and wait until empty.
kill_cgroups() {
    for c in $BENCH_CGROUPS; do echo 1 > "$CG/$c/cgroup.kill"; done
    i=0
    for c in $BENCH_CGROUPS; do
        while [ -n "$(cat "$CG/$c/cgroup.procs")" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    done
    # Reap them (not a bare wait: that would wait for the scheduler too).
    for p in $BG; do wait "$p" 2>/dev/null; done
    BG=""
}

# start_bench_sched NAME: start a scheduler and wait until the kernel names it enabled. On failure
# SCHED_ERR says why.
start_bench_sched() {
    SCHED_ERR=""
    FDL_CLI=$(fdl_cli "$1")
    t0=$(now)
    # shellcheck disable=SC2046
    $(sched_cmd "$1") > "$SLOG/$1.log" 2>&1 &
    SPID=$!
    base=${1%%+*}
    short=${base#scx_}
    while :; do
        if [ "$(scx_state)" = enabled ]; then
            case $(scx_ops) in "$base"*|"$short"*) break ;; esac
        fi
        if ! kill -0 "$SPID" 2>/dev/null; then
            wait "$SPID"
            SCHED_ERR="$1 exited $? before reaching enabled: $(log_tail "$SLOG/$1.log")"
            return 1
        fi
        if awk -v a="$(now)" -v b="$t0" -v t="$BENCH_START_TIMEOUT" 'BEGIN { exit !(a - b > t) }'; then
            SCHED_ERR="$1 did not reach enabled within $BENCH_START_TIMEOUT s (state $(scx_state)): $(log_tail "$SLOG/$1.log")"
            kill -9 "$SPID" 2>/dev/null
            wait "$SPID" 2>/dev/null
            return 1
        fi
        sleep 0.2
    done
    START_S=$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
    say "$1 enabled after $START_S s: ops=$(scx_ops)"
}

# stop_bench_sched NAME: SIGTERM, then confirm the kernel is back on its default scheduler.
stop_bench_sched() {
    kill -TERM "$SPID" 2>/dev/null
    i=0
    while kill -0 "$SPID" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$SPID" 2>/dev/null
    wait "$SPID"
    rc=$?
    i=0
    while [ "$(scx_state)" != disabled ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    STOP_STATE=$(scx_state)
    STOP_RC=$rc
}

# The stall watch's figures of the measurement (measure), or null where there were none.
stall_json() {
    [ -n "$STALL_FIGURES" ] || { echo null; return; }
    # shellcheck disable=SC2086 # its three words
    set -- $STALL_FIGURES
    echo "{\"samples\": $1, \"over_1ms\": $2, \"max_us\": $3}"
}

# The measurement's results as one JSON object.
emit_result() {
    sched=$1 variant=$2 repeat=$3 err=$4
    printf 'FDL-BENCH {"sched": "%s", "variant": "%s", "repeat": %s, "error": %s' "$sched" "$variant" "$repeat" \
        "$([ -n "$err" ] && jstr "$err" || echo null)"
    printf ', "window_s": %s, "ops": %s, "machine_usec": %s' "${WINDOW:-0}" "$(jstr "$OPS")" "${MACHINE:-null}"
    printf ', "fdl_stats": %s, "fdl_stats_error": %s' "$(fdl_stats_json)" \
        "$([ -n "$FDL_STATS_ERR" ] && jstr "$FDL_STATS_ERR" || echo null)"
    printf ', "stall": %s' "$(stall_json)"
    printf ', "probes": {'
    sep=""
    for p in $PROBES; do
        name=${p%%:*}
        f=$OUT/$name.probe
        if [ "$BENCH_PROBE" != schbench ] && grep -q '^{' "$f" 2>/dev/null; then
            printf '%s"%s": %s' "$sep" "$name" "$(head -1 "$f")"
        elif [ "$BENCH_PROBE" = schbench ] && grep -q 'th:' "$f" 2>/dev/null; then
            printf '%s"%s": {"schbench_text": %s}' "$sep" "$name" "$(jstr "$(cat "$f")")"
        else
            printf '%s"%s": {"error": %s}' "$sep" "$name" "$(jstr "$BENCH_PROBE failed: $(cat "$f" "$OUT/$name.err" 2>/dev/null | tail -3)")"
        fi
        sep=", "
    done
    printf '}, "hackbench": {'
    sep=""
    for name in $HACKBENCH; do
        printf '%s"%s": %s' "$sep" "$name" \
            "$(awk '{ n++; s += $1 } END { printf "{\"runs\": %d, \"secs\": %.3f}", n, s }' "$OUT/$name.hb" 2>/dev/null)"
        sep=", "
    done
    printf '}, "stress": {'
    sep=""
    for s in $STRESS; do
        name=${s%%:*}
        # metrics lines: "stress-ng: metrc: [pid] STRESSOR BOGO-OPS REAL USR SYS OPS/S OPS/S"
        printf '%s"%s": %s' "$sep" "$name" "$(awk '$1 == "stress-ng:" && NF == 10 && $5 ~ /^[0-9]+$/ { o += $5; if ($6 > r) r = $6 }
            END { printf "{\"bogo_ops\": %d, \"secs\": %.3f}", o, r }' "$OUT/$name.stress")"
        sep=", "
    done
    printf '}, "cpu_usec": {'
    sep=""
    for c in $BENCH_CGROUPS; do
        # null when nothing was measured (a scheduler that did not start): the line must stay JSON.
        u=$(echo "$USAGE" | tr ' ' '\n' | awk -F= -v c="$c" '$1 == c { print $2 }')
        printf '%s"%s": %s' "$sep" "$c" "${u:-null}"
        sep=", "
    done
    echo '}}'
}

# sleep_until T0 SECS: sleep until SECS after T0 (now's), if that is still ahead.
sleep_until() {
    su_left=$(awk -v t0="$1" -v s="$2" -v n="$(now)" 'BEGIN { d = t0 + s - n; printf "%.2f", (d > 0 ? d : 0) }')
    [ "$su_left" = 0.00 ] || sleep "$su_left"
}

# measure_window T0: the before-dump, at the end of the probes' warm-up (fdl-probe -w; schbench
# has none; without probes, at once), and with it scx_fdl's measurement window of the worst
# lateness, until 0.25 s before the probes' measurement ends (T0: when they started). So the worst
# lateness, the starts and the misses counted are the probes' window's, not their start-up's (a
# new process, new threads) nor their exit's: the probe's main thread, which only ever waits for
# its threads, was the worst start of the 1 ms container beside busy loops in one of six windows
# (8.0 ms, a resumption after 8.6 ms; docs/benchmarks.md, 2026-12-06 17:45). The exit still counts
# in the misses and starts (the after-dump comes after it): a few starts of the thousands.
measure_window() {
    mw_warm=0
    [ -z "$PROBES" ] || [ "$BENCH_PROBE" = schbench ] || mw_warm=$BENCH_WARMUP
    sleep_until "$1" "$mw_warm"
    mw_len=$(awk -v t0="$1" -v w="$mw_warm" -v d="$BENCH_DURATION" -v n="$(now)" -v p="$PROBES" \
        'BEGIN { if (p == "") d += w; l = t0 + w + d - 0.25 - n; printf "%.2f", (l > 0.1 ? l : 0.1) }')
    fdl_dump "$OUT/dump.before" "$mw_len"
}

# measure SCHED VARIANT REPEAT: one run of the variant's workload under the running scheduler.
measure() {
    rm -rf "$OUT"
    mkdir -p "$OUT"
    PROBES="" HACKBENCH="" STRESS="" WINDOW=0 USAGE="" MACHINE=null BG="" FDL_STATS_ERR="" STALL_FIGURES=""
    OPS=$(scx_ops)
    "load_$2"
    sleep "$BENCH_SETTLE"
    t0=$(now)
    before=""
    for c in $BENCH_CGROUPS; do before="$before $c=$(usage "$c")"; done
    mpid=""
    [ "$1" = eevdf ] || mpid=$SPID
    mach_before=$(machine_usec $mpid)
    # With BENCH_STALL_WATCH (bench/run.sh --stall-watch), the CPUs' stalls meanwhile (lib.sh's
    # stall watch: a real-time thread on every CPU, 10 ms timer), for the report. Not by default:
    # its preemptions are then part of the workload.
    [ "$BENCH_STALL_WATCH" = 1 ] && stall_watch_start
    "probes_$2"
    # The names of the cgroups' threads, once they all run (within the warm-up): scx_fdl names the
    # thread of a worst lateness while it exists, and the probe's have exited by the dump after.
    [ -z "$PROBES" ] || ! is_fdl "$1" || { sleep 1; thread_names > "$OUT/threads"; }
    # scx_fdl's figures over the probes' measurement (measure_window): the before-dump begins it.
    ! is_fdl "$1" || measure_window "$t0"
    # Without a latency probe the window is the probe's would-be length (CPU shares only).
    [ -n "$PROBES" ] || sleep_until "$t0" $((BENCH_WARMUP + BENCH_DURATION))
    err=""
    for p in $PROBES; do wait "${p#*:}" || err="${err}probe ${p%%:*} failed; "; done
    [ "$BENCH_STALL_WATCH" = 1 ] && stall_watch_stop "$1/$2/$3"
    WINDOW=$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
    for c in $BENCH_CGROUPS; do
        b=$(echo "$before" | tr ' ' '\n' | awk -F= -v c="$c" '$1 == c { print $2 }')
        USAGE="$USAGE $c=$(($(usage "$c") - b))"
    done
    MACHINE=$(echo "$(machine_usec $mpid) $mach_before" | awk '{ printf "{\"idle\": %d, \"sched\": %d}", $1 - $3, $2 - $4 }')
    ! is_fdl "$1" || fdl_dump "$OUT/dump.after"
    # stress-ng prints its metrics when interrupted, not when killed.
    for s in $STRESS; do kill -INT "${s#*:}" 2>/dev/null; done
    for s in $STRESS; do wait "${s#*:}" 2>/dev/null; done
    if [ "$1" != eevdf ]; then
        if ! kill -0 "$SPID" 2>/dev/null || [ "$(scx_state)" != enabled ]; then
            err="${err}$1 was ejected or exited during the run (state $(scx_state)): $(log_tail "$SLOG/$1.log") $(dmesg | grep -i sched_ext | tail -2)"
        fi
    fi
    kill_cgroups
    emit_result "$1" "$2" "$3" "$err"
}

# The rig check, once per boot before any step: how late a timer wakes an idle CPU of this machine
# (cyclictest at real-time priority on every CPU, a 2 ms timer for RIG_SECS). Not a scheduler's
# figure: on an emulator whose host is itself virtual, halted vCPUs are woken late in some boots
# (milliseconds, under EEVDF too), and every scheduler's tail in that boot with them
# (docs/benchmarks.md, 2026-12-02). The report prints it beside the results.
RIG_SECS=4
rig_check() {
    if ! r=$(rig_measure $RIG_SECS); then
        echo "FDL-BENCH-RIG {\"error\": $(jstr "no cyclictest on this machine, or it failed: $(tail -2 /tmp/rig.txt 2>/dev/null)")}"
        return
    fi
    set -- $r
    echo "FDL-BENCH-RIG {\"cpus\": $(nproc), \"secs\": $RIG_SECS, \"interval_us\": 2000, \"expected\": $4, \"samples\": $1, \"over_1ms\": $2, \"max_us\": $3}"
}

mkdir -p "$SLOG"
# scx_utils (the peers) reads tracefs at start and panics without it; the VM's init does not mount it.
[ -e /sys/kernel/tracing/available_tracers ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
for c in $BENCH_CGROUPS; do mkcg "$c" 100; done
[ "$(scx_state)" = disabled ] || { say "sched_ext is $(scx_state) before the run: stop the scheduler running now"; exit 2; }
rig_check
repeat=1
while [ $repeat -le "$BENCH_REPEAT" ]; do
    for sched in $BENCH_SCHEDS; do
        # Measured on an earlier boot of this run (the host restarts a guest lost to an emulator fault).
        case " $BENCH_SKIP " in *" $sched:$repeat "*) continue ;; esac
        set_weights "$sched"
        SCHED_ERR="" START_S=0 PARAM_ERR=""
        for c in $BENCH_LATE_CGROUPS; do
            rmdir "$CG/$c" || { say "cannot remove cgroup $c before starting $sched (cgroups_after_start)"; exit 2; }
        done
        if [ "$sched" != eevdf ]; then
            start_bench_sched "$sched"
        fi
        if [ -z "$SCHED_ERR" ]; then
            prepare_params "$sched"
        else
            # The next scheduler removes them again.
            for c in $BENCH_LATE_CGROUPS; do mkcg "$c" 100; done
        fi
        for variant in $BENCH_VARIANTS; do
            echo "FDL-BENCH-STEP sched=$sched variant=$variant repeat=$repeat"
            if [ -n "$SCHED_ERR$PARAM_ERR" ]; then
                PROBES="" HACKBENCH="" STRESS="" WINDOW=0 USAGE="" MACHINE=null OPS="" FDL_STATS_ERR="" STALL_FIGURES=""
                rm -f "$OUT/dump.before" "$OUT/dump.after"
                emit_result "$sched" "$variant" "$repeat" "$SCHED_ERR$PARAM_ERR"
            else
                measure "$sched" "$variant" "$repeat"
            fi
        done
        if [ "$sched" != eevdf ]; then
            STOP_RC="" STOP_STATE=disabled
            [ -z "$SCHED_ERR" ] && stop_bench_sched "$sched"
            echo "FDL-BENCH-SCHED {\"sched\": \"$sched\", \"repeat\": $repeat, \"start_s\": $START_S, \"exit\": \"${STOP_RC}\", \"state_after\": \"$STOP_STATE\", \"error\": $([ -n "$SCHED_ERR" ] && jstr "$SCHED_ERR" || echo null)}"
            if [ "$STOP_STATE" != disabled ]; then
                say "sched_ext stayed $STOP_STATE after stopping $sched: the remaining measurements would be wrong"
                exit 3
            fi
        fi
    done
    repeat=$((repeat + 1))
done
for c in $BENCH_CGROUPS; do rmdir "$CG/$c" 2>/dev/null; done
problems=$(dmesg_problems)
[ -z "$problems" ] || { say "kernel warnings during the run:"; echo "$problems" | head -20; }
echo "FDL-BENCH-END"
