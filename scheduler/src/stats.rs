//! The statistics layer: what the BPF side counted, read once and handed to every output.
//!
//! The BPF side counts cheaply: frequent scheduler-wide events per CPU (`cpu_stats`), rare ones
//! in bss, and per cgroup a record with CPU time, waiting and a log2 histogram of run-queue
//! latency. This module reads them ([`read_scheduler`], [`CgroupTree`]); the control socket turns
//! them into reports for `list`, `get`, `dump` and `--monitor`, and [`Publisher`] hands them to
//! the `metrics` facade, so that a new backend (today: Prometheus, [`serve_prometheus`]) is only
//! a recorder to install and never touches the collection.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use libbpf_rs::{MapCore, MapFlags};
use metrics::{describe_counter, describe_gauge, Label, Unit};
use serde::{Deserialize, Serialize};

use crate::bpf_intf;
use crate::bpf_skel::BpfSkel;
use crate::control::CgroupReport;

/// Buckets of the run-queue latency histogram (intf.h: FDL_LAT_BUCKETS).
pub const LAT_BUCKETS: usize = bpf_intf::fdl_consts_FDL_LAT_BUCKETS as usize;

/// The dispatch paths, in the order of enum fdl_dispatch_path: the `type` label of
/// `scx_fdl_dispatched_tasks_total`.
pub const DISPATCH_PATHS: [&str; bpf_intf::fdl_dispatch_path_FDL_NR_DISPATCH as usize] =
    ["idle", "prev", "deadline", "fair"];

/// At most this many cgroups are exported as metrics (and listed by `dump`); the rest are counted
/// in `scx_fdl_cgroups_dropped`. Their time still shows in their ancestors' figures.
pub const MAX_EXPORTED_CGROUPS: usize = 1024;

/// How often the metrics are published.
pub const PUBLISH_PERIOD: Duration = Duration::from_secs(1);

/// A series not published for this long (its cgroup went away) leaves the Prometheus output.
const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// The kernel's sched_ext event counters.
const KERNEL_EVENTS: &str = "/sys/kernel/sched_ext/root/events";

/// Upper bound of run-queue latency bucket `i` in microseconds (None: the last, unbounded one).
/// Bucket 0 holds waits under 1 us, bucket i waits in [2^(i-1), 2^i) us (fdl_lat_bucket()).
pub fn lat_bucket_bound_us(i: usize) -> Option<u64> {
    (i + 1 < LAT_BUCKETS).then(|| 1u64 << i)
}

/// The latency below which a fraction `q` of the waits in `buckets` fell, as the upper bound of
/// the bucket that reaches it, in microseconds (None: no waits, or only in the unbounded bucket).
pub fn quantile_bound_us(buckets: &[u64], q: f64) -> Option<u64> {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return None;
    }
    let want = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (i, n) in buckets.iter().enumerate() {
        seen += n;
        if seen >= want {
            return lat_bucket_bound_us(i);
        }
    }
    None
}

/// Scheduler-wide figures: per-CPU counters summed, rare counters, the kernel's events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SchedulerStats {
    /// Tasks dispatched, by path (DISPATCH_PATHS).
    pub dispatched: BTreeMap<String, u64>,
    pub deadline_enqueued: u64,
    pub fair_enqueued: u64,
    /// Tasks runnable now (running or waiting).
    pub runnable_tasks: i64,
    pub idle_kicks: u64,
    pub preempt_kicks: u64,
    pub starvation_clamps: u64,
    pub migrations: u64,
    /// The fair container's deadline misses, worst lateness, and picks from its queue.
    pub fair_misses: u64,
    pub fair_max_lateness_ns: u64,
    pub fair_picks: u64,
    /// Misses that moved virtual deadline time back (each also halved the deadline spread).
    pub lag_steps: u64,
    /// CPUs preempted by a deadline timer inside a tick, and slices ended at a tick.
    pub timer_kicks: u64,
    /// Deadline timers set to end a slice cut short for a competing deadline or a CPU limit.
    #[serde(default)]
    pub slice_timers: u64,
    /// Deadline timers set where a CPU's work, earlier than a waiting deadline now, comes after it
    /// within a slice.
    #[serde(default)]
    pub crossing_timers: u64,
    pub tick_preempts: u64,
    /// Dispatches that found nothing to run, and of those the ones that left work queued.
    #[serde(default)]
    pub dispatch_empty: u64,
    #[serde(default)]
    pub dispatch_empty_queued: u64,
    /// Cgroups that did not fit in the BPF side's map.
    pub cgroups_untracked: u64,
    /// The guarantees' scale now: below 1 while the active guarantees ask more than fair work's
    /// protected bandwidth leaves (BPF: fdl_budget_scale).
    #[serde(default = "one")]
    pub guarantee_scale: f64,
    /// Cgroups reported, and those left out by MAX_EXPORTED_CGROUPS.
    pub cgroups_exported: usize,
    pub cgroups_dropped: usize,
    /// /sys/kernel/sched_ext/root/events, names without the SCX_EV_ prefix, lower case.
    pub kernel_events: BTreeMap<String, u64>,
    /// Times the BPF scheduler exited while this process ran, by reason.
    pub exits: BTreeMap<String, u64>,
}

fn one() -> f64 {
    1.0
}

/// The BPF side's guarantee scale (fixed point, 0: none) as a factor.
pub fn guarantee_scale(raw: u64) -> f64 {
    if raw == 0 {
        1.0
    } else {
        raw as f64 / (1u64 << 20) as f64
    }
}

/// Reads the scheduler-wide counters (the cgroup counts and exits are the caller's to fill).
pub fn read_scheduler(skel: &BpfSkel) -> SchedulerStats {
    let mut sum = [0u64; std::mem::size_of::<bpf_intf::fdl_cpu_stats>() / 8];
    let per_cpu = skel.maps.cpu_stats.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY).ok().flatten();
    for value in per_cpu.unwrap_or_default() {
        // SAFETY: the map's value type is fdl_cpu_stats, all u64.
        let cpu: bpf_intf::fdl_cpu_stats = unsafe { std::ptr::read_unaligned(value.as_ptr() as *const _) };
        let words: [u64; std::mem::size_of::<bpf_intf::fdl_cpu_stats>() / 8] = unsafe { std::mem::transmute(cpu) };
        for (s, w) in sum.iter_mut().zip(words) {
            *s += w;
        }
    }
    // SAFETY: the array has the size and alignment of fdl_cpu_stats, all u64.
    let s: bpf_intf::fdl_cpu_stats = unsafe { std::mem::transmute(sum) };
    let fdl = &skel.maps.bss_data.as_ref().unwrap().fdl;
    let c = &fdl.counters;
    SchedulerStats {
        dispatched: DISPATCH_PATHS.iter().zip(s.nr_dispatched).map(|(p, n)| (p.to_string(), n)).collect(),
        deadline_enqueued: s.nr_deadline_enqueued,
        fair_enqueued: s.nr_fair_enqueued,
        runnable_tasks: s.nr_became_runnable.wrapping_sub(s.nr_stopped_runnable) as i64,
        idle_kicks: s.nr_idle_kicks,
        preempt_kicks: s.nr_preempt_kicks,
        starvation_clamps: s.nr_starvation_clamps,
        migrations: s.nr_migrations,
        fair_misses: fdl.fair.nr_misses,
        fair_max_lateness_ns: fdl.fair.max_lateness_ns,
        fair_picks: fdl.fair.nr_picks,
        lag_steps: c.nr_lag_steps,
        timer_kicks: s.nr_timer_kicks,
        slice_timers: s.nr_slice_timers,
        crossing_timers: s.nr_crossing_timers,
        tick_preempts: s.nr_tick_preempts,
        dispatch_empty: s.nr_dispatch_empty,
        dispatch_empty_queued: s.nr_dispatch_empty_queued,
        cgroups_untracked: c.nr_cgroups_untracked,
        guarantee_scale: guarantee_scale(fdl.budget_scale),
        kernel_events: read_kernel_events(Path::new(KERNEL_EVENTS)),
        ..Default::default()
    }
}

/// Parses the kernel's `NAME VALUE` lines (empty if the file is missing: kernels before 6.15).
fn read_kernel_events(path: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.split_once(char::is_whitespace)?;
            let name = name.strip_prefix("SCX_EV_").unwrap_or(name).to_ascii_lowercase();
            Some((name, value.trim().parse().ok()?))
        })
        .collect()
}

/// One cgroup's figures: its own BPF record, and sums over its subtree (as cpu.stat counts).
#[derive(Debug, Clone)]
pub struct CgroupNode {
    pub path: PathBuf,
    /// The cgroup's id: its directory's inode number.
    pub cgid: u64,
    pub level: usize,
    pub own: Option<bpf_intf::fdl_cgroup>,
    pub usage_ns: u64,
    pub wait_ns: u64,
    pub runq_lat: [u64; LAT_BUCKETS],
}

/// Every cgroup under the cgroup root with its figures, read in one walk.
#[derive(Debug, Default)]
pub struct CgroupTree {
    nodes: Vec<CgroupNode>,
    index: HashMap<PathBuf, usize>,
}

impl CgroupTree {
    /// Walks the cgroup directories under `root`; `record` reads a cgroup id's BPF record.
    pub fn walk(root: &Path, record: impl Fn(u64) -> Option<bpf_intf::fdl_cgroup>) -> Self {
        let mut tree = CgroupTree::default();
        // Depth first, parents before children; children's sums are added to parents after.
        let mut stack: Vec<(PathBuf, usize, Option<usize>)> = vec![(root.to_path_buf(), 0, None)];
        let mut parents = Vec::new();
        while let Some((dir, level, parent)) = stack.pop() {
            let Ok(meta) = std::fs::metadata(&dir) else { continue };
            let own = record(meta.ino());
            let (usage_ns, wait_ns, runq_lat) = own.map_or((0, 0, [0; LAT_BUCKETS]), |c| (c.usage_ns, c.wait_ns, c.runq_lat));
            let i = tree.nodes.len();
            tree.nodes.push(CgroupNode { path: dir.clone(), cgid: meta.ino(), level, own, usage_ns, wait_ns, runq_lat });
            parents.push(parent);
            tree.index.insert(dir.clone(), i);
            if let Ok(children) = std::fs::read_dir(&dir) {
                for c in children.flatten().filter(|c| c.file_type().is_ok_and(|t| t.is_dir())) {
                    stack.push((c.path(), level + 1, Some(i)));
                }
            }
        }
        for i in (1..tree.nodes.len()).rev() {
            let Some(p) = parents[i] else { continue };
            let (usage, wait, lat) = (tree.nodes[i].usage_ns, tree.nodes[i].wait_ns, tree.nodes[i].runq_lat);
            let parent = &mut tree.nodes[p];
            parent.usage_ns += usage;
            parent.wait_ns += wait;
            parent.runq_lat.iter_mut().zip(lat).for_each(|(a, b)| *a += b);
        }
        tree
    }

    /// Cgroups with a CPU limit of their own.
    pub fn limited(&self) -> impl Iterator<Item = &Path> {
        self.nodes.iter().filter(|n| n.own.is_some_and(|c| c.bw.quota_ns > 0)).map(|n| n.path.as_path())
    }

    /// The tightest CPU limit on path, its own or an ancestor's, in CPUs (0: none).
    pub fn limit_cpus(&self, path: &Path) -> f64 {
        let own: Vec<bpf_intf::fdl_cgroup> = path.ancestors().filter_map(|p| self.get(p)?.own).collect();
        crate::limits::tightest_cpus(own.iter().map(|c| &c.bw))
    }

    pub fn get(&self, path: &Path) -> Option<&CgroupNode> {
        self.index.get(path).map(|&i| &self.nodes[i])
    }

    /// The cgroups to export: configured ones first, then by depth, then by path, at most `max`;
    /// and how many were left out.
    pub fn exported(&self, configured: &HashSet<&Path>, max: usize) -> (Vec<&CgroupNode>, usize) {
        let mut all: Vec<&CgroupNode> = self.nodes.iter().collect();
        all.sort_by(|a, b| {
            (!configured.contains(a.path.as_path()), a.level, &a.path).cmp(&(
                !configured.contains(b.path.as_path()),
                b.level,
                &b.path,
            ))
        });
        let dropped = all.len().saturating_sub(max);
        all.truncate(max);
        (all, dropped)
    }
}

/// The cgroup label: the path below the cgroup root, as /proc/PID/cgroup writes it ("/" is the
/// root).
pub fn cgroup_label(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) => format!("/{}", rel.display()),
        Err(_) => path.display().to_string(),
    }
}

/// Starts the Prometheus endpoint (`/metrics` on `addr`) and makes it the metrics recorder.
/// A busy port or an address this machine does not have is an error here, before anything is
/// attached.
pub fn serve_prometheus(addr: SocketAddr) -> Result<()> {
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(addr)
        .idle_timeout(metrics_util::MetricKindMask::ALL, Some(IDLE_TIMEOUT))
        .install()
        .map_err(|e| {
            anyhow!("cannot serve Prometheus metrics on {addr}: {e}; is another program using it? choose another with --prometheus-addr")
        })?;
    describe();
    Ok(())
}

/// HELP texts of every metric, for the exporters that show them.
fn describe() {
    use Unit::{Count, Microseconds, Seconds};
    let counters: &[(&'static str, Unit, &'static str)] = &[
        ("scx_fdl_dispatched_tasks_total", Count, "Tasks dispatched, by path (type): idle CPU, previous task kept, deadline queue, fair queue"),
        ("scx_fdl_enqueued_tasks_total", Count, "Tasks queued, by queue: deadline or fair"),
        ("scx_fdl_idle_kicks_total", Count, "Idle CPUs woken to pick up queued work"),
        ("scx_fdl_preempt_kicks_total", Count, "CPUs preempted so that an earlier deadline runs"),
        ("scx_fdl_migrations_total", Count, "Tasks that started running on another CPU than last time"),
        ("scx_fdl_starvation_clamps_total", Count, "Enqueues whose virtual time the starvation bound pulled in"),
        ("scx_fdl_fair_deadline_misses_total", Count, "Times the fair container ran past its deadline"),
        ("scx_fdl_cgroups_untracked_total", Count, "Cgroups that did not fit in the BPF cgroup map"),
        ("scx_fdl_kernel_events_total", Count, "The kernel's sched_ext event counters (/sys/kernel/sched_ext/root/events)"),
        ("scx_fdl_scheduler_exits_total", Count, "Exits of the BPF scheduler while this process ran, by reason"),
        ("scx_fdl_cgroup_cpu_usage_microseconds_total", Microseconds, "CPU time used under scx_fdl by the cgroup's subtree"),
        ("scx_fdl_cgroup_wait_microseconds_total", Microseconds, "Time the cgroup subtree's tasks spent runnable but waiting"),
        ("scx_fdl_cgroup_runq_latency_microseconds_bucket", Count, "Run-queue latencies (queued to running) up to le microseconds, cumulative"),
        ("scx_fdl_cgroup_runq_latency_microseconds_sum", Microseconds, "Sum of the run-queue latencies"),
        ("scx_fdl_cgroup_runq_latency_microseconds_count", Count, "Run-queue latencies measured"),
        ("scx_fdl_cgroup_deadline_misses_total", Count, "Deadline containers: tasks that started past their deadline"),
        ("scx_fdl_cgroup_lateness_microseconds_bucket", Count, "Deadline containers: misses late by less than le microseconds, cumulative"),
        ("scx_fdl_cgroup_lateness_microseconds_sum", Microseconds, "Deadline containers: the misses' lateness summed"),
        ("scx_fdl_cgroup_lateness_microseconds_count", Count, "Deadline containers: misses counted by lateness"),
        ("scx_fdl_cgroup_nr_periods_total", Count, "Cgroups with cpu.max: periods in which the cgroup ran or was throttled (cpu.stat nr_periods)"),
        ("scx_fdl_cgroup_nr_throttled_total", Count, "Cgroups with cpu.max: periods in which it was throttled (cpu.stat nr_throttled)"),
        ("scx_fdl_cgroup_throttled_microseconds_total", Microseconds, "Cgroups with cpu.max: time throttled, wall clock (cpu.stat throttled_usec)"),
        ("scx_fdl_cgroup_nr_bursts_total", Count, "Cgroups with cpu.max: periods that used quota carried over (cpu.stat nr_bursts)"),
        ("scx_fdl_cgroup_burst_microseconds_total", Microseconds, "Cgroups with cpu.max: CPU time used beyond the quota from carried-over quota (cpu.stat burst_usec)"),
    ];
    for &(name, unit, help) in counters {
        describe_counter!(name, unit, help);
    }
    let gauges: &[(&'static str, Unit, &'static str)] = &[
        ("scx_fdl_runnable_tasks", Count, "Tasks runnable now (running or waiting)"),
        ("scx_fdl_fair_max_lateness_seconds", Seconds, "Worst lateness of the fair container"),
        ("scx_fdl_cgroups_exported", Count, "Cgroups exported"),
        ("scx_fdl_cgroups_dropped", Count, "Cgroups not exported: beyond the cap of 1024"),
        ("scx_fdl_guarantee_scale", Count, "Guarantees are earned at this part of what they were granted: below 1 while they ask more than fair work's protected share leaves"),
        ("scx_fdl_cgroups_unenforced_cpu_max", Count, "Cgroups with a CPU limit (cpu.max) that scx_fdl does not enforce: too deep or beyond its cgroup map, or a kernel before 6.17 with --allow-unenforced-cpu-max"),
        ("scx_fdl_cgroup_max_lateness_seconds", Seconds, "Deadline containers: worst lateness"),
        ("scx_fdl_cgroup_cpu_weight", Count, "cpu.weight"),
        ("scx_fdl_cgroup_effective_weight", Count, "Weight in use: cpu.weight or the guarantee loop's boost"),
        ("scx_fdl_cgroup_deadline_rr_seconds", Seconds, "Configured deadline_rr"),
        ("scx_fdl_cgroup_deadline_wakeup_seconds", Seconds, "Configured deadline_wakeup"),
        ("scx_fdl_cgroup_guaranteed_shares", Count, "Configured guaranteed_shares (1024 = one CPU where the parent has no guarantee)"),
        ("scx_fdl_cgroup_guarantee_cpus", Count, "The guarantee in CPUs"),
        ("scx_fdl_cgroup_guarantee_granted_cpus", Count, "The guarantee as granted, in CPUs: scaled down when the guarantees ask more than the machine"),
        ("scx_fdl_cgroup_guarantee_usage_cpus", Count, "Guaranteed cgroups: CPU use averaged by the control loop (about 1 s)"),
        ("scx_fdl_cgroup_guarantee_attainment_ratio", Count, "Guaranteed cgroups: averaged use over the guarantee"),
        ("scx_fdl_cgroup_guarantee_budget_seconds", Seconds, "Deadline containers with a guarantee: CPU time left within it (negative: beyond it, served as fair work)"),
        ("scx_fdl_cgroup_cpu_max_cpus", Count, "Cgroups with cpu.max: the limit in CPUs (quota / period)"),
        ("scx_fdl_cgroup_throttled", Count, "Cgroups with cpu.max: 1 while throttled"),
    ];
    for &(name, unit, help) in gauges {
        describe_gauge!(name, unit, help);
    }
}

/// Publishes the figures through the `metrics` facade, to whatever recorder is installed.
///
/// Counters are published as increments, so that they stay monotonic. The BPF side's counts
/// restart from zero when the scheduler is loaded again (a new epoch, `new_epoch`) or a cgroup is
/// re-created under the same path (a new cgroup id): then all of the raw value is new. Otherwise a
/// raw value never counts as a restart when it goes down: a subtree's sum dips while a removed
/// descendant's counts move into its parent (`fdl_cgroup_exit`), and counting the dip as a reset
/// made every counter of its ancestors jump by their whole value. The dip adds nothing, and what
/// comes back is not counted twice. Series not published again (their cgroup is gone, or beyond
/// the cap) leave the output after IDLE_TIMEOUT; their bookkeeping here goes a little later, so a
/// series that comes back before it left the output (a cgroup back within the cap) continues
/// from where it was instead of counting its whole value again.
#[derive(Debug, Default)]
pub struct Publisher {
    /// Of every counter series, by series key: the epoch and cgroup id it was counted under, the
    /// highest raw value counted, and when it was last published.
    last: HashMap<String, Counted>,
    epoch: u64,
    /// How long that bookkeeping outlives its last publication (None: twice IDLE_TIMEOUT).
    keep: Option<Duration>,
}

#[derive(Debug, Clone, Copy)]
struct Counted {
    ident: (u64, u64),
    high: u64,
    at: Instant,
}

impl Publisher {
    /// The scheduler was loaded again: its counts start from zero.
    pub fn new_epoch(&mut self) {
        self.epoch += 1;
    }

    /// Publishes a counter series whose raw value is `raw`, counted under `ident`: (epoch, cgroup
    /// id) for what restarts with the scheduler or the cgroup, (0, 0) for what this process keeps.
    fn counter(&mut self, name: &'static str, labels: Vec<Label>, ident: (u64, u64), raw: u64) {
        let key = series_key(name, &labels);
        let (delta, high) = match self.last.get(&key) {
            Some(c) if c.ident == ident => (raw.saturating_sub(c.high), c.high.max(raw)),
            _ => (raw, raw),
        };
        self.last.insert(key, Counted { ident, high, at: Instant::now() });
        metrics::counter!(name, labels).increment(delta);
    }

    fn gauge(name: &'static str, labels: Vec<Label>, value: f64) {
        metrics::gauge!(name, labels).set(value);
    }

    /// Publishes one round: the scheduler-wide figures and the given cgroups (already capped).
    pub fn publish(&mut self, s: &SchedulerStats, cgroups: &[(String, CgroupReport)]) {
        let none = Vec::new;
        let ep = (self.epoch, 0);
        for (path, n) in &s.dispatched {
            self.counter("scx_fdl_dispatched_tasks_total", vec![Label::new("type", path.clone())], ep, *n);
        }
        self.counter("scx_fdl_enqueued_tasks_total", vec![Label::new("queue", "deadline")], ep, s.deadline_enqueued);
        self.counter("scx_fdl_enqueued_tasks_total", vec![Label::new("queue", "fair")], ep, s.fair_enqueued);
        self.counter("scx_fdl_idle_kicks_total", none(), ep, s.idle_kicks);
        self.counter("scx_fdl_preempt_kicks_total", none(), ep, s.preempt_kicks);
        self.counter("scx_fdl_migrations_total", none(), ep, s.migrations);
        self.counter("scx_fdl_starvation_clamps_total", none(), ep, s.starvation_clamps);
        self.counter("scx_fdl_fair_deadline_misses_total", none(), ep, s.fair_misses);
        self.counter("scx_fdl_cgroups_untracked_total", none(), ep, s.cgroups_untracked);
        for (event, n) in &s.kernel_events {
            self.counter("scx_fdl_kernel_events_total", vec![Label::new("event", event.clone())], ep, *n);
        }
        for (reason, n) in &s.exits {
            self.counter("scx_fdl_scheduler_exits_total", vec![Label::new("reason", reason.clone())], (0, 0), *n);
        }
        Self::gauge("scx_fdl_runnable_tasks", none(), s.runnable_tasks as f64);
        Self::gauge("scx_fdl_fair_max_lateness_seconds", none(), s.fair_max_lateness_ns as f64 / 1e9);
        Self::gauge("scx_fdl_cgroups_exported", none(), s.cgroups_exported as f64);
        Self::gauge("scx_fdl_cgroups_dropped", none(), s.cgroups_dropped as f64);
        Self::gauge("scx_fdl_guarantee_scale", none(), s.guarantee_scale);

        for (label, r) in cgroups {
            self.publish_cgroup(label, r);
        }
        // Forget what has not been published for longer than it stays in the output.
        let keep = self.keep.unwrap_or(IDLE_TIMEOUT * 2);
        self.last.retain(|_, c| c.at.elapsed() < keep);
    }

    /// A cgroup's histogram over the log2 microsecond buckets (lat_bucket_bound_us), published as
    /// its [_bucket, _sum, _count] series; its sum in nanoseconds.
    fn histogram(&mut self, names: [&'static str; 3], label: &str, id: (u64, u64), buckets: &[u64], sum_ns: u64) {
        let cg = || vec![Label::new("cgroup", label.to_string())];
        let mut cumulative = 0;
        for (i, n) in buckets.iter().enumerate() {
            cumulative += n;
            let le = lat_bucket_bound_us(i).map_or("+Inf".to_string(), |b| b.to_string());
            let mut labels = cg();
            labels.push(Label::new("le", le));
            self.counter(names[0], labels, id, cumulative);
        }
        self.counter(names[1], cg(), id, sum_ns / 1000);
        self.counter(names[2], cg(), id, cumulative);
    }

    fn publish_cgroup(&mut self, label: &str, r: &CgroupReport) {
        let cg = || vec![Label::new("cgroup", label.to_string())];
        let id = (self.epoch, r.cgid);
        self.counter("scx_fdl_cgroup_cpu_usage_microseconds_total", cg(), id, r.usage_ns / 1000);
        self.counter("scx_fdl_cgroup_wait_microseconds_total", cg(), id, r.wait_ns / 1000);
        // Every measured wait is in wait_ns and in exactly one bucket.
        let runq = ["scx_fdl_cgroup_runq_latency_microseconds_bucket", "scx_fdl_cgroup_runq_latency_microseconds_sum", "scx_fdl_cgroup_runq_latency_microseconds_count"];
        self.histogram(runq, label, id, &r.runq_latency, r.wait_ns);
        Self::gauge("scx_fdl_cgroup_cpu_weight", cg(), r.cpu_weight as f64);
        Self::gauge("scx_fdl_cgroup_effective_weight", cg(), r.effective_weight as f64);
        if r.deadline_rr_ns > 0 {
            self.counter("scx_fdl_cgroup_deadline_misses_total", cg(), id, r.nr_misses);
            let late = ["scx_fdl_cgroup_lateness_microseconds_bucket", "scx_fdl_cgroup_lateness_microseconds_sum", "scx_fdl_cgroup_lateness_microseconds_count"];
            self.histogram(late, label, id, &r.lateness, r.lateness_sum_ns);
            Self::gauge("scx_fdl_cgroup_max_lateness_seconds", cg(), r.max_lateness_ns as f64 / 1e9);
            Self::gauge("scx_fdl_cgroup_deadline_rr_seconds", cg(), r.deadline_rr_ns as f64 / 1e9);
            Self::gauge(
                "scx_fdl_cgroup_deadline_wakeup_seconds",
                cg(),
                (if r.deadline_wakeup_ns > 0 { r.deadline_wakeup_ns } else { r.deadline_rr_ns }) as f64 / 1e9,
            );
        }
        if let Some(m) = &r.cpu_max {
            self.counter("scx_fdl_cgroup_nr_periods_total", cg(), id, m.nr_periods);
            self.counter("scx_fdl_cgroup_nr_throttled_total", cg(), id, m.nr_throttled);
            self.counter("scx_fdl_cgroup_throttled_microseconds_total", cg(), id, m.throttled_usec);
            self.counter("scx_fdl_cgroup_nr_bursts_total", cg(), id, m.nr_bursts);
            self.counter("scx_fdl_cgroup_burst_microseconds_total", cg(), id, m.burst_usec);
            Self::gauge("scx_fdl_cgroup_cpu_max_cpus", cg(), m.cpus());
            Self::gauge("scx_fdl_cgroup_throttled", cg(), if m.throttled { 1.0 } else { 0.0 });
        }
        if r.guaranteed_shares > 0 {
            Self::gauge("scx_fdl_cgroup_guaranteed_shares", cg(), r.guaranteed_shares as f64);
            Self::gauge("scx_fdl_cgroup_guarantee_cpus", cg(), r.guarantee_cpus);
            Self::gauge("scx_fdl_cgroup_guarantee_granted_cpus", cg(), r.guarantee_granted_cpus);
            Self::gauge("scx_fdl_cgroup_guarantee_usage_cpus", cg(), r.usage_cpus_avg);
            Self::gauge("scx_fdl_cgroup_guarantee_attainment_ratio", cg(), r.attainment);
            if r.deadline_rr_ns > 0 {
                Self::gauge("scx_fdl_cgroup_guarantee_budget_seconds", cg(), r.guarantee_budget_ns as f64 / 1e9);
            }
        }
    }
}

fn series_key(name: &str, labels: &[Label]) -> String {
    let mut key = name.to_string();
    for l in labels {
        key += &format!("\x1f{}={}", l.key(), l.value());
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_exporter_prometheus::PrometheusBuilder;

    /// The BPF side's bucketing (fdl_math.h), compiled natively: bucket of each wait in ns.
    fn c_buckets(waits: &[u64]) -> Vec<usize> {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.c");
        let list = waits.iter().map(|w| format!("{w}ULL")).collect::<Vec<_>>().join(",");
        std::fs::write(
            &src,
            format!(
                "#include <stdio.h>\n#include \"fdl_math.h\"\nint main(void) {{ unsigned long long w[] = {{{list}}};\n\
                 for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++) printf(\"%u\\n\", fdl_lat_bucket(w[i]));\n\
                 return 0; }}\n"
            ),
        )
        .unwrap();
        let bin = dir.path().join("t");
        let bpf_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/bpf");
        let ok = std::process::Command::new("cc")
            .args(["-std=gnu11", "-Wall", "-Werror", "-I", bpf_dir])
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .status()
            .expect("cc (the native C compiler) must be installed");
        assert!(ok.success());
        let out = std::process::Command::new(&bin).output().unwrap();
        String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect()
    }

    #[test]
    fn bpf_buckets_match_the_exported_bounds() {
        // Each bucket's bound, just below and at it: a wait below bound(i) us is in bucket <= i,
        // a wait of bound(i) us is past it.
        let mut waits = vec![0, 999, 1000, 1999, 2000];
        for i in 0..LAT_BUCKETS - 1 {
            let b = lat_bucket_bound_us(i).unwrap() * 1000;
            waits.extend([b - 1, b]);
        }
        waits.push(u64::MAX);
        let got = c_buckets(&waits);
        for (w, b) in waits.iter().zip(&got) {
            assert!(*b < LAT_BUCKETS, "wait {w} ns: bucket {b}");
            if let Some(bound) = lat_bucket_bound_us(*b) {
                assert!(*w < bound * 1000, "wait {w} ns in bucket {b} (below {bound} us)");
            }
            if *b > 0 {
                assert!(*w >= lat_bucket_bound_us(b - 1).unwrap() * 1000, "wait {w} ns in bucket {b}: too high");
            }
        }
        assert_eq!(&got[..5], &[0, 0, 1, 1, 2]);
        assert_eq!(*got.last().unwrap(), LAT_BUCKETS - 1);
        assert_eq!(lat_bucket_bound_us(LAT_BUCKETS - 2), Some(1 << 22));
        assert_eq!(lat_bucket_bound_us(LAT_BUCKETS - 1), None);
    }

    #[test]
    fn quantiles_are_bucket_bounds() {
        let mut b = [0u64; LAT_BUCKETS];
        assert_eq!(quantile_bound_us(&b, 0.99), None);
        b[3] = 98; // below 8 us
        b[10] = 2; // below 1024 us
        assert_eq!(quantile_bound_us(&b, 0.5), Some(8));
        assert_eq!(quantile_bound_us(&b, 0.98), Some(8));
        assert_eq!(quantile_bound_us(&b, 0.99), Some(1024));
        b[LAT_BUCKETS - 1] = 1000;
        assert_eq!(quantile_bound_us(&b, 0.99), None);
    }

    #[test]
    fn kernel_events_are_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("events");
        std::fs::write(&f, "SCX_EV_SELECT_CPU_FALLBACK 3\nSCX_EV_DISPATCH_KEEP_LAST 12\nbogus\n").unwrap();
        let ev = read_kernel_events(&f);
        assert_eq!(ev.get("select_cpu_fallback"), Some(&3));
        assert_eq!(ev.get("dispatch_keep_last"), Some(&12));
        assert_eq!(ev.len(), 2);
        assert!(read_kernel_events(&dir.path().join("none")).is_empty());
    }

    fn record(usage_ns: u64, bucket: usize) -> bpf_intf::fdl_cgroup {
        // SAFETY: fdl_cgroup is plain old data; all zeroes is a valid value.
        let mut c: bpf_intf::fdl_cgroup = unsafe { std::mem::zeroed() };
        c.usage_ns = usage_ns;
        c.runq_lat[bucket] = 1;
        c.cpu_weight = 100;
        c
    }

    #[test]
    fn subtrees_are_summed_and_the_cap_keeps_configured_and_shallow_cgroups() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["a/a1/deep", "b", "c"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let ino = |p: &str| std::fs::metadata(root.join(p)).unwrap().ino();
        let records: HashMap<u64, bpf_intf::fdl_cgroup> = [
            (ino("a"), record(1, 0)),
            (ino("a/a1"), record(10, 1)),
            (ino("a/a1/deep"), record(100, 1)),
            (ino("b"), record(1000, 2)),
        ]
        .into();
        let tree = CgroupTree::walk(root, |id| records.get(&id).copied());
        let a = tree.get(&root.join("a")).unwrap();
        assert_eq!((a.usage_ns, a.runq_lat[0], a.runq_lat[1]), (111, 1, 2));
        assert_eq!(tree.get(root).unwrap().usage_ns, 1111);
        assert!(tree.get(&root.join("c")).unwrap().own.is_none());

        let deep = root.join("a/a1/deep");
        let configured: HashSet<&Path> = [deep.as_path()].into();
        let (kept, dropped) = tree.exported(&configured, 4);
        let labels: Vec<String> = kept.iter().map(|n| cgroup_label(root, &n.path)).collect();
        assert_eq!(labels, ["/a/a1/deep", "/", "/a", "/b"]);
        assert_eq!(dropped, 2);
    }

    fn report(usage_ns: u64) -> CgroupReport {
        let mut runq_latency = vec![0; LAT_BUCKETS];
        runq_latency[2] = 5;
        CgroupReport { usage_ns, wait_ns: 7_000, cpu_weight: 100, effective_weight: 100, runq_latency, ..Default::default() }
    }

    /// Every sample line is `name{labels} value` with a number for value.
    fn parses_as_prometheus_text(text: &str) -> bool {
        text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).all(|l| {
            let Some((series, value)) = l.rsplit_once(' ') else { return false };
            let name = series.split('{').next().unwrap();
            value.parse::<f64>().is_ok()
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                && (!series.contains('{') || series.ends_with('}'))
        })
    }

    #[test]
    fn a_removed_cgroup_leaves_the_output_and_counters_survive_restarts() {
        let recorder = PrometheusBuilder::new()
            .idle_timeout(metrics_util::MetricKindMask::ALL, Some(Duration::from_millis(300)))
            .build_recorder();
        let handle = recorder.handle();
        let mut publisher = Publisher { keep: Some(Duration::from_millis(300)), ..Default::default() };
        let sched = SchedulerStats {
            dispatched: DISPATCH_PATHS.iter().map(|p| (p.to_string(), 10)).collect(),
            ..Default::default()
        };
        let (busy, gone) = (report(2_000_000), report(3_000_000));
        metrics::with_local_recorder(&recorder, || {
            publisher.publish(&sched, &[("/busy".into(), busy.clone()), ("/gone".into(), gone.clone())]);
        });
        let text = handle.render();
        assert!(parses_as_prometheus_text(&text), "{text}");
        assert!(text.contains(r#"scx_fdl_dispatched_tasks_total{type="deadline"} 10"#), "{text}");
        assert!(text.contains(r#"scx_fdl_cgroup_cpu_usage_microseconds_total{cgroup="/gone"} 3000"#), "{text}");
        assert!(text.contains(r#"scx_fdl_cgroup_runq_latency_microseconds_bucket{cgroup="/busy",le="2"} 0"#), "{text}");
        assert!(text.contains(r#"scx_fdl_cgroup_runq_latency_microseconds_bucket{cgroup="/busy",le="4"} 5"#), "{text}");
        assert!(text.contains(r#"scx_fdl_cgroup_runq_latency_microseconds_bucket{cgroup="/busy",le="+Inf"} 5"#), "{text}");
        assert!(text.contains(r#"scx_fdl_cgroup_runq_latency_microseconds_count{cgroup="/busy"} 5"#), "{text}");

        // /gone is removed; the scheduler restarted, its counts begin again from 4.
        std::thread::sleep(Duration::from_millis(400));
        publisher.new_epoch();
        let restarted = SchedulerStats {
            dispatched: DISPATCH_PATHS.iter().map(|p| (p.to_string(), 4)).collect(),
            ..Default::default()
        };
        let busier = report(5_000_000);
        metrics::with_local_recorder(&recorder, || publisher.publish(&restarted, &[("/busy".into(), busier)]));
        let text = handle.render();
        assert!(!text.contains("/gone"), "{text}");
        // The restarted scheduler's 5 ms of /busy are all new: 2 + 5.
        assert!(text.contains(r#"scx_fdl_cgroup_cpu_usage_microseconds_total{cgroup="/busy"} 7000"#), "{text}");
        assert!(text.contains(r#"scx_fdl_dispatched_tasks_total{type="deadline"} 14"#), "{text}");
        assert!(publisher.last.keys().all(|k| !k.contains("/gone")));
    }

    /// Issue 14, defect 1: a cgroup's subtree sum that dips (a child was removed; its counts reach
    /// the parent a moment later) was read as a restart, and the whole value counted again.
    #[test]
    fn a_dip_in_a_subtree_sum_is_not_a_restart() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let mut publisher = Publisher::default();
        publisher.new_epoch();
        let sched = SchedulerStats::default();
        let usage = |text: &str| {
            text.lines()
                .find(|l| l.starts_with(r#"scx_fdl_cgroup_cpu_usage_microseconds_total{cgroup="/parent"}"#))
                .and_then(|l| l.rsplit_once(' '))
                .map(|(_, v)| v.parse::<u64>().unwrap())
        };
        let mut publish = |usage_ns: u64, cgid: u64| {
            let r = CgroupReport { cgid, ..report(usage_ns) };
            metrics::with_local_recorder(&recorder, || publisher.publish(&sched, &[("/parent".into(), r)]));
            usage(&handle.render()).unwrap()
        };
        assert_eq!(publish(5_000_000, 7), 5000);
        // A child with 2 ms went away; its counts are not in the parent's yet.
        assert_eq!(publish(3_000_000, 7), 5000, "a dip adds nothing");
        // They arrived, and 1 ms more was used: only that 1 ms is new.
        assert_eq!(publish(6_000_000, 7), 6000);
        // The cgroup was removed and created again under the same path: its count starts anew.
        assert_eq!(publish(1_000_000, 8), 7000);
        // Left out of a round (beyond the export cap), then back: it continues, not counted again.
        metrics::with_local_recorder(&recorder, || publisher.publish(&sched, &[]));
        let r = CgroupReport { cgid: 8, ..report(1_500_000) };
        metrics::with_local_recorder(&recorder, || publisher.publish(&sched, &[("/parent".into(), r)]));
        assert_eq!(usage(&handle.render()), Some(7500));
    }

    #[test]
    fn a_busy_port_is_a_clear_error() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = serve_prometheus(addr).unwrap_err().to_string();
        assert!(e.contains(&format!("cannot serve Prometheus metrics on {addr}")), "{e}");
        assert!(e.contains("in use"), "{e}");
    }
}
