#!/usr/bin/env bash
# The nested-deadline benchmark (issue 12: deadlines at any depth): a deadline pod three levels
# down a Kubernetes-shaped tree, beside a plain pod and a hackbench pod, under EEVDF, scx_fdl
# without parameters and scx_fdl with the pod's deadlines, in the same boot (bench/guest/nested.sh
# has the setup). Prints the FDL-NESTED lines and writes them, with the setup, to OUT/report.txt
# and the console to OUT/console.log.
#
# Usage: bench/nested.sh [OUT]   (default OUT: .cache/bench/nested-DATE)
# Environment: NESTED_SECS (seconds per scheduler, default 20), NESTED_SHAPE ("SPIN_US SLEEP_US",
# default "1000 20000").
# Needs ./setup.sh (kernel, QEMU) and a release build (scx_fdl, fdl-probe).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC2086
exec "$root/bench/guest-run.sh" nested FDL-NESTED 900 "${1:-$root/.cache/bench/nested-$(date +%Y%m%d-%H%M%S)}" \
    "${NESTED_SECS:-20}" ${NESTED_SHAPE:-1000 20000}
