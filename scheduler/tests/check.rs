//! `scx_fdl check CONFIG` as an operator runs it: no scheduler, no socket, no sched_ext needed.

use std::process::{Command, Output};

fn check(file: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scx_fdl")).arg("check").arg(file).output().unwrap()
}

#[test]
fn a_valid_file_exits_0_and_a_cgroup_not_created_yet_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fdl.toml");
    std::fs::write(&file, "[cgroup.scx-fdl-check-test-absent]\ndeadline_rr = \"2ms\"\n").unwrap();
    let out = check(&file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        stdout,
        format!(
            "{}: valid, 1 cgroup\n/sys/fs/cgroup/scx-fdl-check-test-absent: deadline_rr 2ms (not present yet: \
             applied when it is created)\n",
            file.display()
        )
    );
}

#[test]
fn an_invalid_file_exits_1_with_file_line_and_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fdl.toml");
    std::fs::write(&file, "# web tier\n[cgroup.web]\ndeadline_wakeup = \"100us\"\n").unwrap();
    let out = check(&file);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "scx_fdl: error: {}:2: cgroup /sys/fs/cgroup/web: deadline_wakeup set but deadline_rr is 0\n",
            file.display()
        )
    );
}

#[test]
fn every_parameter_is_listed() {
    // burst_buffer alone was listed as nothing: "/sys/fs/cgroup/x: ", as if it were ignored.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fdl.toml");
    std::fs::write(&file, "[cgroup.scx-fdl-check-test-absent]\nburst_buffer = \"100ms\"\n").unwrap();
    let out = check(&file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("/sys/fs/cgroup/scx-fdl-check-test-absent: burst_buffer 100ms (not present yet"),
        "{stdout}"
    );
}
