//! Checks made before loading anything, so that the common reasons a scheduler cannot start are
//! reported as one clear sentence instead of a libbpf error.

use std::path::Path;

use anyhow::{bail, Result};

/// Where the kernel publishes sched_ext's state.
pub const SCHED_EXT_SYSFS: &str = "/sys/kernel/sched_ext";

/// Fails with what to do when this kernel cannot run scx_fdl now: no sched_ext, not root, or
/// another sched_ext scheduler already loaded.
pub fn check(sysfs: &Path, euid: u32, kernel_release: &str) -> Result<()> {
    if !sysfs.join("state").exists() {
        bail!(
            "this kernel ({kernel_release}) has no sched_ext: scx_fdl needs Linux >= 6.12 built \
             with CONFIG_SCHED_CLASS_EXT=y (and CONFIG_EXT_GROUP_SCHED=y for cgroup weights). \
             On a machine without one, run it in the VM rig: ./demo.sh or vm/run.sh"
        );
    }
    if euid != 0 {
        bail!("scx_fdl must run as root: it loads a BPF scheduler into the kernel");
    }
    if read_trimmed(&sysfs.join("state")) == "enabled" {
        let ops = read_trimmed(&sysfs.join("root/ops"));
        let ops = if ops.is_empty() { "unknown".to_string() } else { ops };
        bail!(
            "another sched_ext scheduler is already loaded ({ops}); stop it first, then start \
             scx_fdl"
        );
    }
    Ok(())
}

/// Fails when the kernel's sched_ext cannot schedule cgroups (built without
/// CONFIG_EXT_GROUP_SCHED): cgroup weights, deadlines, guarantees and CPU limits would all be
/// silently ignored, and scheduling cgroups is what scx_fdl is for. Read from the kernel's BTF:
/// with it, struct task_group carries sched_ext's group state (`scx`, or `scx_weight` before 6.14).
pub fn check_group_sched(kernel_release: &str) -> Result<()> {
    let has = |field| scx_utils::compat::struct_has_field("task_group", field);
    let found = has("scx").and_then(|a| Ok(a || has("scx_weight")?));
    match found {
        Ok(true) => Ok(()),
        Ok(false) => bail!(group_sched_refusal(kernel_release)),
        Err(e) => bail!("cannot read this kernel's BTF to check for CONFIG_EXT_GROUP_SCHED: {e:#}"),
    }
}

fn group_sched_refusal(kernel_release: &str) -> String {
    format!(
        "this kernel ({kernel_release}) has sched_ext without CONFIG_EXT_GROUP_SCHED: it never tells a \
         BPF scheduler about cgroups, so cpu.weight, deadlines, guarantees and cpu.max would all be \
         ignored. scx_fdl schedules cgroups; run it on a kernel built with CONFIG_EXT_GROUP_SCHED=y \
         (Debian's trixie-backports 7.x has it)"
    )
}

fn read_trimmed(path: &Path) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The running kernel's release, for messages.
pub fn kernel_release() -> String {
    read_trimmed(Path::new("/proc/sys/kernel/osrelease"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn sysfs(state: Option<&str>, ops: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(state) = state {
            fs::write(dir.path().join("state"), format!("{state}\n")).unwrap();
        }
        if let Some(ops) = ops {
            fs::create_dir_all(dir.path().join("root")).unwrap();
            fs::write(dir.path().join("root/ops"), format!("{ops}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn no_sched_ext_names_the_kernel_and_the_vm() {
        let dir = sysfs(None, None);
        let err = check(dir.path(), 0, "6.1.0-9-amd64").unwrap_err().to_string();
        assert!(err.contains("6.1.0-9-amd64"), "{err}");
        assert!(err.contains("CONFIG_SCHED_CLASS_EXT"), "{err}");
        assert!(err.contains("VM"), "{err}");
    }

    #[test]
    fn not_root_is_refused() {
        let dir = sysfs(Some("disabled"), None);
        let err = check(dir.path(), 1000, "7.3").unwrap_err().to_string();
        assert!(err.contains("must run as root"), "{err}");
    }

    #[test]
    fn another_scheduler_is_named() {
        let dir = sysfs(Some("enabled"), Some("bpfland_1.0.5_x86_64"));
        let err = check(dir.path(), 0, "7.3").unwrap_err().to_string();
        assert!(err.contains("already loaded (bpfland_1.0.5_x86_64)"), "{err}");
    }

    #[test]
    fn no_group_sched_says_what_would_be_ignored() {
        let msg = group_sched_refusal("6.12.0-1-amd64");
        assert!(msg.contains("6.12.0-1-amd64") && msg.contains("CONFIG_EXT_GROUP_SCHED=y"), "{msg}");
        assert!(msg.contains("cpu.weight, deadlines, guarantees and cpu.max"), "{msg}");
    }

    #[test]
    fn ready_kernel_passes() {
        let dir = sysfs(Some("disabled"), None);
        check(dir.path(), 0, "7.3").unwrap();
    }
}
