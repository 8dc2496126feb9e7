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
i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    echo > $T/trace
    echo 1 > $T/tracing_on
    scx_fdl "$@" > /tmp/load$i.log 2>&1 &
    pid=$!
    w=0
    # Bounded: 60 s of guest time.
    while ! grep -q "scx_fdl attached" /tmp/load$i.log && kill -0 $pid 2>/dev/null && [ $w -lt 600 ]; do
        sleep 0.1
        w=$((w + 1))
    done
    echo 0 > $T/tracing_on
    kill -TERM $pid 2>/dev/null
    wait $pid
    if grep -q "scx_fdl attached" /tmp/load$i.log; then pass "start $i attached"; else fail "start $i attached"; fi
    echo "LOAD-TRACE-BEGIN $i"
    grep "loaded in" /tmp/load$i.log
    grep -v '^#' $T/trace | grep -E 'scx_fdl-[0-9]+ '
    echo "LOAD-TRACE-END $i"
done
exit $FAILED
