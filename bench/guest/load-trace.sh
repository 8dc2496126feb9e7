# Guest script: where scx_fdl's start goes under the emulator. scx_fdl is started N times (first
# argument, default 2), each time with its bpf(2) and openat(2) system calls traced (tracefs
# syscall events, timestamps only: no function tracer, which slows the verifier about 4x), and
# stopped once attached. Host side:
#   vm/run.sh --log LOG bench/guest/load-trace.sh [N [SCX_FDL_OPTION...]]
#   python3 bench/load-trace.py LOG
# prints, per start, the time in each bpf command and in each program's load (the verifier and
# the JIT), named by the order of the "instructions verified" line scx_fdl logs.
. ./lib.sh
n=${1:-2}
[ $# -gt 0 ] && shift
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
[ -d $T/events/syscalls/sys_enter_bpf ] || { fail "no syscall trace events in this kernel"; exit 1; }
echo 0 > $T/tracing_on
echo 16384 > $T/buffer_size_kb
for e in sys_enter_bpf sys_exit_bpf sys_enter_openat; do echo 1 > $T/events/syscalls/$e/enable; done
run=0
# Not i: lib.sh's start_scx counts in it.
while [ $run -lt "$n" ]; do
    run=$((run + 1))
    echo > $T/trace
    echo 1 > $T/tracing_on
    # lib.sh's start: bounded, until the kernel says scx_fdl is enabled (its attach is the trace's end).
    start_scx "$@" && pass "start $run attached"
    echo 0 > $T/tracing_on
    stop_scx > /dev/null
    echo "LOAD-TRACE-BEGIN $run"
    grep "loaded in" "$SCX_LOG"
    grep -v '^#' $T/trace | grep -E 'scx_fdl-[0-9]+ '
    echo "LOAD-TRACE-END $run"
done
exit $FAILED
