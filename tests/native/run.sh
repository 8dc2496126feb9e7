#!/usr/bin/env bash
# Build and run the native unit tests: the policy arithmetic (scheduler/bpf/fdl_math.h) and the
# policy itself (scheduler/bpf/policy/, against the fake kernel of tests/native/fake_env.h).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cflags=(-std=gnu11 -O2 -Wall -Wextra -Werror -DFDL_NATIVE -I "$root/scheduler/bpf" -I "$root/tests/native")
# The tracer's build (about 14 s, it includes policy_test.c) runs beside the tests' builds and runs
# (about 11 s each for policy_test): the host's second core, idle otherwise.
cc "${cflags[@]}" "$root/tests/native/cell_trace.c" -o "$out/cell_trace" &
tracer=$!
for t in "$root"/tests/native/*_test.c; do
    cc "${cflags[@]}" "$t" -o "$out/t"
    "$out/t"
done
# The matrix cell tracer (tests/native/cell_trace.c, a tool, not a test): built and run on one
# cell, so that it keeps working as the simulator changes.
wait "$tracer" || { echo "cell_trace: build failed" >&2; exit 1; }
"$out/cell_trace" spin1-sleep5 rfc 0 overcommit --watch cfs --show 1 > "$out/cell_trace.txt"
if ! grep -q '^cfs[45]: woke at' "$out/cell_trace.txt"; then
    echo "cell_trace: no trace of the cgroup without parameters' p99 spin" >&2
    cat "$out/cell_trace.txt" >&2
    exit 1
fi
echo "cell_trace: $(head -1 "$out/cell_trace.txt")"
