#!/usr/bin/env bash
# Build and run the native unit tests: the policy arithmetic (scheduler/bpf/fdl_math.h) and the
# policy itself (scheduler/bpf/policy/, against the fake kernel of tests/native/fake_env.h).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for t in "$root"/tests/native/*_test.c; do
    cc -std=gnu11 -O2 -Wall -Wextra -Werror -DFDL_NATIVE -I "$root/scheduler/bpf" \
        -I "$root/tests/native" "$t" -o "$out/t"
    "$out/t"
done
