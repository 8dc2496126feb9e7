#!/usr/bin/env bash
# The benchmark matrix: bench/matrix.sh [--quick] [--schedulers LIST] [--out DIR] (--help for all).
# Generates one scenario per cell of bench/matrix/issue10.toml, runs each with bench/run.sh (one VM
# boot per cell) and writes matrix.md, one table with a PASS/FAIL/n.a. verdict per cell.
root=$(cd "$(dirname "$0")/.." && pwd)
py=${FDL_CACHE:-$root/.cache}/bench/venv/bin/python
[[ -x $py ]] || py=python3
PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} exec "$py" -m bench.harness.matrix "$@"
