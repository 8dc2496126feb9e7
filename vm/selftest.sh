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

echo "vm selftest: $pass passed, $fail failed"
[[ $fail == 0 ]]
