#!/usr/bin/env bash
# The bandwidth-with-burst benchmark (seed 003; issue 12): a bursty job under cpu.max 20000 100000,
# without burst, with cpu.max.burst = the quota, and (scx_fdl only) with the seed's buffer of
# 10 x the quota, under EEVDF and under scx_fdl in the same boot. Prints the FDL-BURST lines
# (nr_throttled / nr_periods, throttled_usec, bursts, the job's lateness) and writes them, with
# the setup, to OUT/report.txt and the console to OUT/console.log.
#
# Usage: bench/burst.sh [OUT]   (default OUT: .cache/bench/burst-DATE)
# Environment: BURST_SECS (measured seconds per case, default 12), BURST_SHAPES ("SPIN_US:SLEEP_US
# ...", default "35000:200000 60000:400000"), FDL_SCHED_BIN (the scx_fdl binary).
# Needs ./setup.sh (kernel, QEMU) and a release build (scx_fdl, fdl-probe).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC2086
exec "$root/bench/guest-run.sh" burst FDL-BURST 1200 "${1:-$root/.cache/bench/burst-$(date +%Y%m%d-%H%M%S)}" \
    "${BURST_SECS:-12}" ${BURST_SHAPES:-35000:200000 60000:400000}
