#!/usr/bin/env bash
# The one-boot benchmarks' common runner (bench/burst.sh, bench/nested.sh): boots the VM with guest
# script bench/guest/NAME.sh and its arguments, keeps the console as OUT/console.log, and writes
# OUT/report.txt: a header (script, date, scx_fdl commit, VM setup) and the guest's TAG lines.
# Exits with the guest's verdict.
#
# Usage: bench/guest-run.sh NAME TAG TIMEOUT_SECS OUT [GUEST_ARG...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1 tag=$2 timeout=$3 out=$4
shift 4
mkdir -p "$out"
rc=0
"$root/vm/run.sh" --timeout "$timeout" --log "$out/console.log" "$root/bench/guest/$name.sh" "$@" || rc=$?
{
    echo "# bench/$name.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), scx_fdl $(git -C "$root" rev-parse --short HEAD)"
    grep -m1 '^\[vm\] booting' "$out/console.log" 2>/dev/null || true
    grep -a "$tag" "$out/console.log" | sed "s/^.*$tag /$tag /"
} > "$out/report.txt"
cat "$out/report.txt"
echo "console: $out/console.log"
exit $rc
