#!/usr/bin/env bash
# Fetch a Debian kernel with CONFIG_SCHED_CLASS_EXT=y for the VM, without installing it.
#
# The version is resolved from the package index of $FDL_KERNEL_SUITE (default trixie-backports):
# linux-image-amd64 -> linux-image-<release> -> linux-binary-<release> (vmlinuz) + linux-base-<release>
# (config). The suite is added to apt pinned at priority 50, so nothing on the host is ever upgraded
# from it. The result is cached under .cache/kernel/<release>/; .cache/kernel/current names it.
#
# Usage: vm/kernel.sh [--refresh]     prints the directory holding vmlinuz and config
set -euo pipefail
source "$(dirname "$0")/lib.sh"

suite=${FDL_KERNEL_SUITE:-trixie-backports}
cache="$FDL_CACHE/kernel"
refresh=0
[[ ${1:-} == --refresh ]] && refresh=1

if [[ $refresh == 0 && -f $cache/current ]]; then
    dir="$cache/$(cat "$cache/current")"
    if [[ -f $dir/vmlinuz && -f $dir/config ]]; then
        echo "$dir"
        exit 0
    fi
fi

src=/etc/apt/sources.list.d/scx-fdl-$suite.sources
pin=/etc/apt/preferences.d/scx-fdl-$suite
if [[ ! -f $src || ! -f $pin ]]; then
    [[ $(id -u) == 0 ]] || die "adding apt suite $suite needs root (or run setup.sh as root once)"
    log "adding apt suite $suite, pinned at priority 50 (never used for host upgrades)"
    printf 'Package: *\nPin: release n=%s\nPin-Priority: 50\n' "$suite" > "$pin"
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$suite" > "$src"
    apt-get update -qq -o Dir::Etc::sourcelist="$src" -o Dir::Etc::sourceparts=- \
        -o APT::Get::List-Cleanup=0 >&2 || die "apt-get update for $suite failed"
fi

# The meta package's version in the suite, then the release it depends on.
meta_ver=$(apt-cache madison linux-image-amd64 | awk -v s="$suite" '$0 ~ s"/main" {print $3; exit}')
[[ -n $meta_ver ]] || die "no linux-image-amd64 in $suite: is the suite in the apt index? (apt-get update)"
release=$(apt-cache show "linux-image-amd64=$meta_ver" | sed -n 's/^Depends:.*linux-image-\([^ ,]*\) (.*/\1/p' | head -1)
[[ -n $release ]] || die "cannot resolve the kernel release behind linux-image-amd64=$meta_ver"
kver=$(apt-cache show "linux-image-$release" | awk '/^Version:/ {print $2; exit}')
log "kernel: $release ($kver) from $suite"

dir="$cache/$release"
if [[ $refresh == 1 || ! -f $dir/vmlinuz || ! -f $dir/config ]]; then
    tmp=$(apt_download_dir) || die "cannot make a private download directory"
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download -qq "linux-binary-$release=$kver" "linux-base-$release=$kver" >&2) ||
        die "apt-get download of linux-binary-$release / linux-base-$release failed"
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
    mkdir -p "$dir"
    # Newer packages keep both under /usr/lib/modules/<release>/, older ones under /boot.
    for f in vmlinuz config; do
        for cand in "$tmp/root/usr/lib/modules/$release/$f" "$tmp/root/boot/$f-$release"; do
            [[ -f $cand ]] && { cp "$cand" "$dir/$f"; break; }
        done
        [[ -f $dir/$f ]] || die "no $f in linux-binary-$release / linux-base-$release"
    done
    echo "$release" > "$dir/release"
fi

grep -qx 'CONFIG_SCHED_CLASS_EXT=y' "$dir/config" ||
    die "$release from $suite lacks CONFIG_SCHED_CLASS_EXT=y; choose another suite with FDL_KERNEL_SUITE"
grep -qx 'CONFIG_EXT_GROUP_SCHED=y' "$dir/config" ||
    log "warning: $release lacks CONFIG_EXT_GROUP_SCHED=y: cgroup weights will not reach the scheduler"
echo "$release" > "$cache/current"
echo "$dir"
