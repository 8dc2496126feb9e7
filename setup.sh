#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for scx_fdl: host packages, the sched_ext kernel for the VM
# (downloaded and unpacked, never installed), and a release build. Safe to run again.
#
# Usage: ./setup.sh [--with-tests]
#   --with-tests  build the test binaries with the programs (test.sh), in one build: `cargo test`
#                 wants the programs built with the dev-dependencies' features (proptest turns on
#                 getrandom's std), so after a plain build it would build scx_fdl again
set -euo pipefail
targets=()
case ${1:-} in
    '') ;;
    --with-tests) targets=(--all-targets) ;;
    *) echo "usage: ./setup.sh [--with-tests]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")" && pwd)
cd "$root"

packages=(clang-19 llvm-19 libelf-dev zlib1g-dev pkg-config gcc qemu-system-x86
          busybox-static cpio rt-tests stress-ng python3-venv bpftool)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    [[ $(id -u) == 0 ]] || { echo "setup: need root to install: ${missing[*]}" >&2; exit 1; }
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm \
        "${missing[@]}" > /dev/null
fi

# scx_utils needs Rust >= 1.91.
if ! command -v cargo > /dev/null; then
    echo "setup: cargo not found: install Rust >= 1.91 (rustup) first" >&2
    exit 1
fi
rustv=$(rustc --version | awk '{print $2}')
if [[ $(printf '%s\n1.91.0\n' "$rustv" | sort -V | head -1) != 1.91.0 ]]; then
    echo "setup: Rust $rustv is too old: scx_fdl's crates need >= 1.91 (rustup update)" >&2
    exit 1
fi

vm/kernel.sh > /dev/null
echo "setup: building scx_fdl (release)"
BPF_CLANG=clang-19 cargo build --release --locked "${targets[@]}"
# The benchmark harness's Python venv (plots). The peer schedulers are built on demand by
# bench/setup.sh: they take long, and only benchmarks need them.
bench/setup.sh --python-only
