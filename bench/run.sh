#!/usr/bin/env bash
# Benchmark harness: bench/run.sh SCENARIO... [options]  (bench/run.sh --help for all)
# Runs with the venv of bench/setup.sh (matplotlib for the plots); without it, plain python3 and
# no plots.
root=$(cd "$(dirname "$0")/.." && pwd)
py=${FDL_CACHE:-$root/.cache}/bench/venv/bin/python
[[ -x $py ]] || py=python3
PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} exec "$py" -m bench.harness.main "$@"
