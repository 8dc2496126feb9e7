# Shared helpers for the VM rig scripts (sourced, not run).
FDL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FDL_CACHE=${FDL_CACHE:-$FDL_ROOT/.cache}

log() { printf '[vm] %s\n' "$*" >&2; }
die() { printf '[vm] error: %s\n' "$*" >&2; exit 1; }
