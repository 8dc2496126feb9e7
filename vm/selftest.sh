#!/usr/bin/env bash
# Checks of the VM rig that need no VM and no network: every script parses, and the kernel
# download directory is private (it used to be made world-writable). Ends with 'N passed, M failed'.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
pass=0 fail=0
check() { # check NAME CMD...: runs CMD, counts and reports it
    local name=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}

for script in "$FDL_ROOT"/vm/*.sh "$FDL_ROOT"/vm/guest/init; do
    check "bash -n $script" bash -n "$script"
done

dir=$(apt_download_dir)
trap 'rm -rf "$dir"' EXIT
mode=$(stat -c %a "$dir")
check "apt_download_dir is 700 (got $mode)" test "$mode" = 700
if [[ $(id -u) == 0 ]] && id -u _apt >/dev/null 2>&1; then
    owner=$(stat -c %U "$dir")
    check "apt_download_dir belongs to _apt (got $owner)" test "$owner" = _apt
fi
# The download step itself, as kernel.sh runs it, against what the directory allows: nobody but
# its owner and root may create files there.
if [[ $(id -u) == 0 ]] && id -u nobody >/dev/null 2>&1; then
    check "nobody cannot write into apt_download_dir" \
        bash -c '! setpriv --reuid=nobody --regid=nogroup --clear-groups touch "$1/x" 2>/dev/null' _ "$dir"
fi

# The guest scripts' json_field (tests/vm/lib.sh) reads fdl-probe's headline figures, never those of
# the wake-ups alone that `fdl-probe --wake` appends as a nested "wake" with the same keys; with
# the guest's busybox sed where there is one, as in the VM.
eval "$(grep '^json_field()' "$FDL_ROOT/tests/vm/lib.sh")"
probe_json=$(mktemp)
echo '{"unit": "usec", "samples": 100, "p50": 50, "p99": 1427, "max": 2241, "wake": {"unit": "usec", "samples": 100, "p50": 42, "p99": 613, "max": 1421, "late_after_us": 500, "late": 2}}' > "$probe_json"
for sed_bin in sed busybox; do
    [[ $sed_bin == busybox ]] && { command -v busybox > /dev/null || continue; sed() { busybox sed "$@"; }; }
    got="$(json_field "$probe_json" p99) $(json_field "$probe_json" max) [$(json_field "$probe_json" late)]"
    check "json_field ($sed_bin sed) reads the headline beside a nested wake: p99 max [late] = $got" \
        test "$got" = "1427 2241 []"
    unset -f sed
done
rm -f "$probe_json"

echo "vm selftest: $pass passed, $fail failed"
[[ $fail == 0 ]]
