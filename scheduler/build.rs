// Builds the BPF hot path (bpf/main.bpf.c) into a libbpf-rs skeleton and turns the shared
// interface header (bpf/intf.h) into Rust with bindgen.
use std::process::Command;

/// The commit scx_fdl is built from, as `g<sha>` with `-dirty` when tracked files under
/// scheduler/ differ from it; None outside a git checkout (a crate tarball, a .deb build).
fn git_version() -> Option<String> {
    let git = |args: &[&str]| Command::new("git").args(args).output().ok().filter(|o| o.status.success());
    let sha = String::from_utf8(git(&["rev-parse", "--short=12", "HEAD"])?.stdout).ok()?;
    let dirty = git(&["diff", "--quiet", "HEAD", "--", "."]).is_none();
    // A new commit, a change staged or not: the version is worked out again.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]).and_then(|o| String::from_utf8(o.stdout).ok()) {
        println!("cargo:rerun-if-changed={}/HEAD", dir.trim());
        println!("cargo:rerun-if-changed={}/index", dir.trim());
    }
    println!("cargo:rerun-if-changed=src");
    Some(format!("g{}{}", sha.trim(), if dirty { "-dirty" } else { "" }))
}

fn main() {
    // `scx_fdl --version` (options::version): which commit a binary was built from, so that a
    // benchmark records what it ran.
    println!("cargo:rustc-env=FDL_GIT_VERSION={}", git_version().unwrap_or_default());
    // The BPF builder tracks only the files it names itself (main.bpf.c and a few includes), not
    // bpf/policy/: a change there must rebuild too. A directory makes cargo scan all of it.
    println!("cargo:rerun-if-changed=bpf");
    scx_cargo::BpfBuilder::new()
        .expect("BPF builder: is clang >= 18 installed? set BPF_CLANG=clang-19")
        .enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf")
        .build()
        .expect("building the BPF program failed");
}
