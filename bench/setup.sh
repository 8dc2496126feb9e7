#!/usr/bin/env bash
# Prepare the benchmark harness: a Python venv with matplotlib (plots) and the published sched_ext
# schedulers of bench/peers.txt, built from crates.io at their pinned versions. Idempotent: what is
# built is kept under .cache/ and skipped next time; a failed build is recorded (and retried next
# time) so that the report can say "build failed: <reason>" in that scheduler's row.
#
# Usage: bench/setup.sh [--python-only | --peers-only] [--only NAME,...] [--jobs N]
#   --only  build only these peers of bench/peers.txt (e.g. --only scx_flash); an unknown name is
#           an error
#   --jobs  cargo build jobs for the peers (default 1: the builds run beside latency measurements)
# Environment: FDL_CACHE (default .cache), BPF_CLANG (default clang-19).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FDL_CACHE:-$root/.cache}
log() { printf '[bench-setup] %s\n' "$*" >&2; }
die() { printf '[bench-setup] error: %s\n' "$*" >&2; exit 1; }

do_python=1 do_peers=1 jobs=1 only=
while [[ $# -gt 0 ]]; do
    case $1 in
        --python-only) do_peers=0; shift ;;
        --peers-only) do_python=0; shift ;;
        --jobs) jobs=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

if [[ $do_python == 1 ]]; then
    venv=$cache/bench/venv
    if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
        log "creating $venv with matplotlib (from PyPI)"
        python3 -m venv "$venv" || die "python3 -m venv failed: apt-get install python3-venv"
        "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/bench/requirements.txt" ||
            die "pip install -r bench/requirements.txt failed (is PyPI reachable?)"
    fi
    log "python: $("$venv/bin/python" -c 'import matplotlib; print("matplotlib", matplotlib.__version__)')"
fi

# Every name given to --only must be a peer of bench/peers.txt, before anything is built.
known=$(awk '$1 !~ /^#/ && NF { print $1 }' "$root/bench/peers.txt")
for name in ${only//,/ }; do
    grep -qx "$name" <<< "$known" || die "--only: $name is not in bench/peers.txt (peers: $(echo $known))"
done

if [[ $do_peers == 1 ]]; then
    command -v cargo >/dev/null || die "cargo missing: run ./setup.sh first"
    export BPF_CLANG=${BPF_CLANG:-clang-19}
    command -v "$BPF_CLANG" >/dev/null || die "$BPF_CLANG missing: the peers' BPF code needs clang >= 18"
    # One target directory for all peers: they share scx_utils, libbpf-sys and most other crates.
    export CARGO_TARGET_DIR=$cache/peers/target
    while read -r name version; do
        [[ -z $name || $name == \#* ]] && continue
        [[ -n $only && ",$only," != *",$name,"* ]] && continue
        dir=$cache/peers/$name-$version
        if [[ -x $dir/bin/$name ]]; then
            log "$name $version: built"
            continue
        fi
        mkdir -p "$dir"
        rm -f "$dir/FAILED"
        log "$name $version: building (nice 19, $jobs job(s); log $dir/build.log)"
        if nice -n 19 cargo install -j "$jobs" --locked --root "$dir" "$name@$version" > "$dir/build.log" 2>&1; then
            log "$name $version: built"
        else
            # The first error line is the reason; the whole log stays beside it.
            reason=$(grep -m1 -E '^error' "$dir/build.log" || tail -1 "$dir/build.log")
            echo "${reason:-cargo install failed}" > "$dir/FAILED"
            log "$name $version: build failed: $(cat "$dir/FAILED") (log $dir/build.log)"
        fi
    done < "$root/bench/peers.txt"
fi
