#!/usr/bin/env bash
# Build and run the native unit tests of the policy arithmetic (scheduler/bpf/fdl_math.h).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for t in "$root"/tests/native/*_test.c; do
    cc -std=gnu11 -O2 -Wall -Wextra -Werror -I "$root/scheduler/bpf" "$t" -o "$out/t"
    "$out/t"
done
