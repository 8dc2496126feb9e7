#!/usr/bin/env bash
# Build the guest's initramfs as two concatenated cpio archives (the kernel unpacks both):
#   base.cpio.gz  busybox, the workloads (stress-ng, rt-tests) and their libraries, the kernel
#                 config at /boot/config-<release> (libbpf reads __kconfig symbols from it).
#                 Cached; rebuilt when its inputs change.
#   run.cpio.gz   /init, scx_fdl and any extra binaries, the guest scenarios, the run's settings.
#                 Rebuilt every run (small).
# Usage: vm/initramfs.sh OUT KERNEL_DIR SCENARIO_ENV_FILE BINARY...   (writes OUT)
# Environment: FDL_GUEST_FILES, more files for /scenario (space-separated paths).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

out=$1 kdir=$2 envfile=$3
shift 3
release=$(cat "$kdir/release")
# bpftool: the callbacks' cost (run_time_ns / run_cnt with kernel.bpf_stats_enabled, bench/cost.sh).
workloads=(/usr/bin/stress-ng /usr/bin/hackbench /usr/bin/cyclictest /usr/sbin/bpftool)

# Copy binaries and the shared libraries they load into root $1, at the same paths as here.
add_with_libs() {
    local root=$1 bin lib
    shift
    for bin in "$@"; do
        [[ -x $bin ]] || die "$bin is missing (run ./setup.sh)"
        install -D -m 755 "$bin" "$root/usr/bin/$(basename "$bin")"
        for lib in $(ldd "$bin" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'); do
            [[ -e $root$lib ]] || install -D -m 755 "$(readlink -f "$lib")" "$root$lib"
        done
    done
}

# A root with Debian's merged-/usr layout, so that /lib64/ld-linux-x86-64.so.2 resolves.
new_root() {
    mkdir -p "$1"/{usr/bin,usr/lib,usr/lib64,proc,sys,dev,tmp,run,boot,scenario}
    ln -sfn usr/bin "$1/bin"
    ln -sfn usr/bin "$1/sbin"
    ln -sfn usr/lib "$1/lib"
    ln -sfn usr/lib64 "$1/lib64"
}

pack() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet --owner 0:0 | gzip -1); }

mkdir -p "$FDL_CACHE/initramfs"
base="$FDL_CACHE/initramfs/base.cpio.gz"
stamp="$FDL_CACHE/initramfs/base.stamp"
want=$(sha256sum /bin/busybox "${workloads[@]}" "$kdir/config" "$0" | sha256sum | cut -c1-16)
if [[ ! -f $base || $(cat "$stamp" 2>/dev/null) != "$want" ]]; then
    log "building base initramfs (busybox, stress-ng, rt-tests, libraries, kernel config)"
    tmp=$(mktemp -d)
    new_root "$tmp"
    install -m 755 /bin/busybox "$tmp/usr/bin/busybox"
    for applet in $(/bin/busybox --list); do
        [[ -e $tmp/usr/bin/$applet ]] || ln -s busybox "$tmp/usr/bin/$applet"
    done
    add_with_libs "$tmp" "${workloads[@]}"
    cp "$kdir/config" "$tmp/boot/config-$release"
    pack "$tmp" > "$base"
    rm -rf "$tmp"
    echo "$want" > "$stamp"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
new_root "$tmp"
add_with_libs "$tmp" "$@"
install -m 755 "$FDL_ROOT/vm/guest/init" "$tmp/init"
cp "$FDL_ROOT"/tests/vm/*.sh "$tmp/scenario/"
# shellcheck disable=SC2086
[[ -z ${FDL_GUEST_FILES:-} ]] || cp $FDL_GUEST_FILES "$tmp/scenario/"
cp "$envfile" "$tmp/scenario/run.env"
pack "$tmp" > "$tmp.run.cpio.gz"
cat "$base" "$tmp.run.cpio.gz" > "$out"
rm -f "$tmp.run.cpio.gz"
