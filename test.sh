#!/usr/bin/env bash
# Set everything up (./setup.sh), then run every test: the Rust unit tests, the native tests of
# the policy arithmetic, the benchmark harness's self-test, and the VM integration tests (each
# boots the sched_ext kernel in QEMU).
set -uo pipefail
root=$(cd "$(dirname "$0")" && pwd)
cd "$root"
# Each suite's heading says how long the run has taken so far (minutes:seconds), so that a slow
# run shows where its time went.
t0=$(date +%s)
since() { local s=$(($(date +%s) - t0)); printf '%d:%02d' $((s / 60)) $((s % 60)); }
./setup.sh --with-tests || { echo "test: setup failed"; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
echo "== Rust unit tests (cargo test) (at $(since))"
BPF_CLANG=clang-19 cargo test --release --locked 2>&1 | tee -a "$out" || status=1
echo "== native tests of scheduler/bpf/fdl_math.h (at $(since))"
tests/native/run.sh 2>&1 | tee -a "$out" || status=1
echo "== VM rig self-test (scripts parse, private download directory) (at $(since))"
vm/selftest.sh 2>&1 | tee -a "$out" || status=1
echo "== benchmark harness self-test (statistics, scenario errors, a tiny scenario in the VM) (at $(since))"
bench/selftest.sh 2>&1 | tee -a "$out" || status=1
echo "== VM integration tests (at $(since))"
tests/run-vm-tests.sh 2>&1 | tee -a "$out" || status=1

# One closing line over all suites.
p=$(sed -n 's/.* \([0-9][0-9]*\) passed[;,].*/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
f=$(sed -n 's/.* passed[;,] \([0-9][0-9]*\) failed.*/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
[[ $f == 0 && $status == 0 ]] || status=1
echo "scx_fdl: $p passed, $f failed (in $(since))"
exit $status
