# Shared helpers for the VM rig scripts (sourced, not run).
FDL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FDL_CACHE=${FDL_CACHE:-$FDL_ROOT/.cache}

log() { printf '[vm] %s\n' "$*" >&2; }
die() { printf '[vm] error: %s\n' "$*" >&2; exit 1; }

# A directory for `apt-get download`, open to nobody else: mktemp -d makes it 0700. As root, apt
# downloads as its sandbox user _apt, so the directory is given to _apt (still 0700; root passes
# anyway) instead of being opened to every user of the machine.
apt_download_dir() {
    local dir
    dir=$(mktemp -d) || return 1
    if [[ $(id -u) == 0 ]] && id -u _apt >/dev/null 2>&1; then
        chown _apt "$dir" || { rm -rf "$dir"; return 1; }
    fi
    echo "$dir"
}
