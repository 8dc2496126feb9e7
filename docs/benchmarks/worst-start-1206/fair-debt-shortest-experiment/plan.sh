# Plan for scenario cell-spin1 (/tmp/cell-spin1.toml), written by bench/run.sh.
BENCH_SCHEDS='eevdf scx_fdl scx_fdl+debt'
BENCH_VARIANTS=overcommit
BENCH_CGROUPS='antagonist cfs loose fdl'
BENCH_REPEAT=3
BENCH_DURATION=20
BENCH_WARMUP=3
BENCH_SETTLE=2
BENCH_START_TIMEOUT=180
BENCH_PROBE=fdl-probe
BENCH_FDL_PARAMS=config
BENCH_LATE_CGROUPS=''
BENCH_RESCAN_WAIT=2
BENCH_SKIP=''
BENCH_STALL_WATCH=0

sched_cmd() {
    case $1 in
        scx_fdl) echo 'scx_fdl --config fdl.toml' ;;
        scx_fdl+debt) echo 'scx_fdl --config fdl.toml --fair-debt-shortest' ;;
    esac
}

fdl_cli() {
    case $1 in
        scx_fdl) echo scx_fdl ;;
        scx_fdl+debt) echo scx_fdl ;;
        *) echo scx_fdl ;;
    esac
}

set_weights() {
    if is_fdl "$1"; then
        bench_weight antagonist 100
        bench_weight cfs 100
        bench_weight loose 100
        bench_weight fdl 100
    else
        bench_weight antagonist 100
        bench_weight cfs 100
        bench_weight loose 100
        bench_weight fdl 100
    fi
}

fdl_set_params() {
    :
}

load_overcommit() {
    :
    bench_hogs antagonist 4
}
probes_overcommit() {
    :
    bench_probe cfs cfs -m 1 -t 2 --sleep-us 5000 --sleep-jitter-us 1250 --spin-us 1000 --wake
    bench_probe loose loose -m 1 -t 2 --sleep-us 5000 --sleep-jitter-us 1250 --spin-us 1000 --wake --wake-late-after-us 2500
    bench_probe fdl fdl -m 1 -t 2 --sleep-us 5000 --sleep-jitter-us 1250 --spin-us 1000 --wake --wake-late-after-us 500
}

