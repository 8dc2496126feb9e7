//! CPU limits (`cpu.max`): what the BPF side enforces, and what to do where it cannot.
//!
//! The kernel does not throttle sched_ext tasks: under a sched_ext scheduler a cgroup's `cpu.max`
//! binds only if the scheduler enforces it. scx_fdl does (bpf/policy/bandwidth.h), with the limits
//! the kernel passes through `ops.cgroup_init` and `ops.cgroup_set_bandwidth` — since 6.17. On an
//! older kernel it cannot, and rather than remove every limit silently it refuses to start while a
//! cgroup has one, and stops (the kernel's scheduler, which enforces it, takes over) when one
//! appears while it runs — unless `--allow-unenforced-cpu-max` accepts running without
//! enforcement; then each limited cgroup is logged and counted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use walkdir::WalkDir;

/// Does the running kernel pass cgroups' CPU limits to sched_ext schedulers
/// (`ops.cgroup_set_bandwidth`, with the limits in `ops.cgroup_init`'s arguments)?
pub fn kernel_enforces() -> bool {
    matches!(scx_utils::compat::struct_has_field("sched_ext_ops", "cgroup_set_bandwidth"), Ok(true))
}

/// A cgroup's limit as the BPF side holds it, and its throttling statistics: cpu.stat's names and
/// meanings (reference §4), which the kernel itself leaves at 0 for sched_ext tasks.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuMaxReport {
    pub quota_us: u64,
    pub period_us: u64,
    /// cpu.max.burst.
    pub burst_us: u64,
    /// The configuration's burst_buffer (the larger of the two applies).
    #[serde(default)]
    pub buffer_us: u64,
    /// Periods while the cgroup was active: each period in which it ran or was throttled, and the
    /// first idle one after (when the kernel's period timer stops).
    pub nr_periods: u64,
    /// Periods in which a task of it had to wait for the refill.
    pub nr_throttled: u64,
    /// Time throttled, summed over run queues as the kernel sums it: each held task stands for
    /// the run queue it would wait on, at most one per CPU (fdl_bw_throttled_time).
    pub throttled_usec: u64,
    /// Periods that used more than one quota, from quota carried over (burst).
    pub nr_bursts: u64,
    pub burst_usec: u64,
    /// Throttled now.
    pub throttled: bool,
}

impl CpuMaxReport {
    /// The report of a cgroup's record; None without a limit.
    pub fn of(bw: &crate::bpf_intf::fdl_bw) -> Option<Self> {
        (bw.quota_ns > 0).then(|| CpuMaxReport {
            quota_us: bw.quota_ns / 1000,
            period_us: bw.period_ns / 1000,
            burst_us: bw.burst_ns / 1000,
            buffer_us: bw.buffer_ns / 1000,
            nr_periods: bw.nr_periods,
            nr_throttled: bw.nr_throttled,
            throttled_usec: bw.throttled_ns / 1000,
            nr_bursts: bw.nr_bursts,
            burst_usec: bw.burst_time_ns / 1000,
            throttled: bw.throttled_at != 0,
        })
    }

    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }
}

/// The tightest of the limits held in these records, in CPUs (quota / period); 0: none has one.
pub fn tightest_cpus<'a>(bws: impl IntoIterator<Item = &'a crate::bpf_intf::fdl_bw>) -> f64 {
    bws.into_iter()
        .filter(|bw| bw.quota_ns > 0 && bw.period_ns > 0)
        .map(|bw| bw.quota_ns as f64 / bw.period_ns as f64)
        .fold(0.0, |tight: f64, l| if tight == 0.0 { l } else { tight.min(l) })
}

/// How often the watcher walks the cgroup tree for limits.
pub const WATCH_PERIOD: Duration = Duration::from_secs(2);

/// A cgroup's `cpu.max`: `quota` microseconds per `period` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub quota_us: u64,
    pub period_us: u64,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cpu.max {} {} ({:.2} CPUs)", self.quota_us, self.period_us, self.cpus())
    }
}

impl Limit {
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }
}

/// Parses the text of a `cpu.max` file: `max PERIOD` (no limit, None) or `QUOTA PERIOD`.
pub fn parse(text: &str) -> Option<Limit> {
    let mut words = text.split_whitespace();
    let quota = words.next()?;
    let period_us = words.next().and_then(|p| p.parse().ok()).unwrap_or(100_000);
    if quota == "max" {
        return None;
    }
    Some(Limit { quota_us: quota.parse().ok()?, period_us })
}

/// Every cgroup below `root` with a CPU limit. A cgroup that goes away during the walk, or whose
/// cpu controller is not enabled (no `cpu.max`), is skipped. The walk does not follow symlinks.
///
/// walkdir rather than a hand-written recursion: it bounds open descriptors and reports
/// unreadable directories as errors to skip, which a tree that changes under the walk needs.
pub fn limited(root: &Path) -> BTreeMap<PathBuf, Limit> {
    WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path().join("cpu.max")).ok()?;
            Some((e.into_path(), parse(&text)?))
        })
        .collect()
}

/// One line per limited cgroup, for messages.
pub fn describe(limits: &BTreeMap<PathBuf, Limit>) -> String {
    limits.iter().map(|(p, l)| format!("{} ({l})", p.display())).collect::<Vec<_>>().join(", ")
}

/// The refusal to run: what is limited, why it matters, and what to do.
pub fn refusal(limits: &BTreeMap<PathBuf, Limit>) -> String {
    format!(
        "{} cgroup(s) have a CPU limit, which scx_fdl cannot enforce on this kernel (it has no \
         ops.cgroup_set_bandwidth, which came with Linux 6.17): {}. The kernel does not throttle \
         sched_ext tasks, so under scx_fdl these limits would be lifted. Remove the limits \
         (echo max > .../cpu.max), or start with --allow-unenforced-cpu-max to run without them",
        limits.len(),
        describe(limits)
    )
}

/// Walks the tree every `period` on a thread of its own (a large tree must not hold up the
/// scheduler's loop) and sends the limited set whenever it changed, starting with the first walk.
///
/// With `only_while`, it walks only while that count is above zero (looked at every `period`,
/// so a limit escaping the BPF side is reported as soon as before). Where the BPF side enforces
/// cpu.max, a limit escapes it only on a cgroup it does not track (stats::CGROUPS_UNTRACKED);
/// on a node whose cgroups are all tracked the walk (every cgroup's cpu.max read every 2 s: 2.4
/// ms of a vCPU in one trace, a deadline container's worker waiting behind it) finds nothing.
pub fn watch(root: PathBuf, period: Duration, only_while: Option<&'static AtomicU64>) -> Receiver<BTreeMap<PathBuf, Limit>> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("cpu-max-watch".into())
        .spawn(move || {
            let mut last = None;
            loop {
                if only_while.is_none_or(|n| n.load(Ordering::Relaxed) > 0) {
                    let now = limited(&root);
                    if last.as_ref() != Some(&now) {
                        if tx.send(now.clone()).is_err() {
                            return;
                        }
                        last = Some(now);
                    }
                }
                std::thread::sleep(period);
            }
        })
        .expect("spawning the cpu.max watcher");
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn parses_the_kernel_formats() {
        assert_eq!(parse("max 100000\n"), None);
        assert_eq!(parse("20000 100000\n"), Some(Limit { quota_us: 20000, period_us: 100000 }));
        assert_eq!(parse("50000 50000"), Some(Limit { quota_us: 50000, period_us: 50000 }));
        assert_eq!(parse(""), None);
        assert_eq!(parse("garbage 100000"), None);
        assert!((parse("30000 100000").unwrap().cpus() - 0.3).abs() < 1e-9);
    }

    #[test]
    fn a_gated_watcher_walks_only_while_its_count_is_above_zero() {
        static GATE: AtomicU64 = AtomicU64::new(0);
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("pod")).unwrap();
        fs::write(root.path().join("pod/cpu.max"), "20000 100000\n").unwrap();
        let rx = watch(root.path().to_path_buf(), Duration::from_millis(20), Some(&GATE));
        assert!(rx.recv_timeout(Duration::from_millis(500)).is_err(), "walked while nothing was untracked");
        GATE.store(1, Ordering::Relaxed);
        let found = rx.recv_timeout(Duration::from_secs(5)).expect("no walk once a cgroup was untracked");
        assert_eq!(found[&root.path().join("pod")].quota_us, 20000);
    }

    #[test]
    fn finds_limits_at_any_depth_and_only_those() {
        let root = tempfile::tempdir().unwrap();
        let pod = root.path().join("kubepods.slice/kubepods-burstable.slice/pod1.slice");
        fs::create_dir_all(pod.join("cri-containerd-1.scope")).unwrap();
        fs::create_dir_all(root.path().join("free")).unwrap();
        fs::create_dir_all(root.path().join("nocpu")).unwrap();
        fs::write(root.path().join("kubepods.slice/cpu.max"), "max 100000\n").unwrap();
        fs::write(pod.join("cpu.max"), "200000 100000\n").unwrap();
        fs::write(pod.join("cri-containerd-1.scope/cpu.max"), "50000 100000\n").unwrap();
        fs::write(root.path().join("free/cpu.max"), "max 100000\n").unwrap();
        let found = limited(root.path());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[&pod], Limit { quota_us: 200000, period_us: 100000 });
        assert_eq!(found[&pod.join("cri-containerd-1.scope")].quota_us, 50000);
        let msg = refusal(&found);
        assert!(msg.contains("2 cgroup(s)") && msg.contains("pod1.slice (cpu.max 200000 100000 (2.00 CPUs))"), "{msg}");
        assert!(msg.contains("--allow-unenforced-cpu-max"), "{msg}");
    }

    #[test]
    fn the_watcher_reports_changes() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("a")).unwrap();
        fs::write(root.path().join("a/cpu.max"), "max 100000\n").unwrap();
        let rx = watch(root.path().to_path_buf(), Duration::from_millis(20), None);
        assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap().is_empty());
        fs::write(root.path().join("a/cpu.max"), "10000 100000\n").unwrap();
        let now = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(now.len(), 1);
    }
}
