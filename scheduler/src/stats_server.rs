//! scx_stats: the statistics server and client every published sched_ext scheduler uses.
//!
//! The scheduler serves [`Metrics`] on scx_stats' socket (/var/run/scx/root/stats), answering
//! each request on its loop with the figures of the moment: scheduler-wide counters (cumulative)
//! and one record per listed cgroup (those `scx_fdl list` shows: configured, first-level, limited).
//! `--stats SECS` prints them from inside the scheduler's process, `scx_fdl --monitor [SECS]` from
//! another one (the scheduler is not started), and `--help-stats` describes every field. Rates are
//! the client's to compute from two reads, as `--monitor` does ([`crate::monitor`]).
//!
//! The control socket (`scx_fdl list/get/set/dump`) stays for commands and full reports; the
//! Prometheus endpoint renders the same figures at scrape time (prometheus.rs).

use std::collections::BTreeMap;

use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

use crate::control::CgroupReport;
use crate::limits::CpuMaxReport;
use crate::stats::SchedulerStats;

#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "Scheduler-wide figures (SchedulerStats, below), cumulative since the BPF program was loaded")]
    pub scheduler: SchedulerStats,
    #[stat(desc = "The cgroups `scx_fdl list` shows (configured, first-level, or with a CPU limit), by path")]
    pub cgroups: BTreeMap<String, CgroupMetrics>,
}

/// One listed cgroup's figures. The one definition of each per-cgroup metric's meaning: `desc`,
/// which --help-stats prints and Prometheus takes as its help (prometheus.rs, Help::Cgroup). A
/// description names no unit: the field's name carries it (`_ns`, `_usec`, `_us`, `_cpus`), and
/// Prometheus exports the same figure in seconds.
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
pub struct CgroupMetrics {
    #[stat(desc = "1 if the cgroup exists, 0 if only configured")]
    pub present: u64,
    #[stat(desc = "1 if `scx_fdl set` changed its parameters from the configuration file's (until a restart or SIGHUP reload)")]
    pub runtime_only: u64,
    #[stat(desc = "Its deadline_rr (0: none)")]
    pub deadline_rr_ns: u64,
    #[stat(desc = "Its deadline_wakeup as set (0: not set, its deadline_rr applies at a wake-up; Prometheus gives that deadline_rr)")]
    pub deadline_wakeup_ns: u64,
    #[stat(desc = "Its guaranteed_shares (1024: one CPU where the parent has no guarantee; 0: none)")]
    pub guaranteed_shares: u64,
    #[stat(desc = "Its guarantee in CPUs, as asked (nested guarantees resolved)")]
    pub guarantee_cpus: f64,
    #[stat(desc = "The guarantee as granted now, in CPUs: scaled down when the guarantees ask more than the machine, at most its CPU limit")]
    pub guarantee_granted_cpus: f64,
    #[stat(desc = "Guaranteed cgroups: CPU use averaged by the guarantee loop (about 1 s), in CPUs")]
    #[serde(default)]
    pub guarantee_usage_cpus: f64,
    #[stat(desc = "Guaranteed cgroups: averaged use over the granted guarantee (1: met)")]
    pub attainment: f64,
    #[stat(desc = "Deadline containers with a guarantee: CPU time left within it (negative: beyond it, served as fair work)")]
    #[serde(default)]
    pub guarantee_budget_ns: i64,
    #[stat(desc = "Its cpu.weight")]
    pub cpu_weight: u64,
    #[stat(desc = "The weight scheduling uses: cpu.weight, or the guarantee loop's boost, or 1 while cpu.idle is 1")]
    pub effective_weight: u64,
    #[stat(desc = "1 if its cpu.idle is 1: it weighs the least unless a guarantee boosts it")]
    #[serde(default)]
    pub idle: u64,
    #[stat(desc = "CPU time used by its subtree under scx_fdl (cumulative)")]
    pub usage_ns: u64,
    #[stat(desc = "Time its subtree's tasks waited runnable (cumulative)")]
    pub wait_ns: u64,
    #[stat(desc = "Run-queue latency (queued to running) of its subtree's tasks: counts per log2 bucket, bucket i holds waits in [2^(i-1), 2^i) us (cumulative)")]
    pub runq_latency: Vec<u64>,
    #[stat(desc = "Deadline containers: starts of its work after its deadline (cumulative)")]
    pub nr_misses: u64,
    #[stat(desc = "Deadline containers: starts of its work after a wait, late or not (cumulative; the misses' denominator)")]
    pub nr_picks: u64,
    #[stat(desc = "Deadline containers: of those starts, the first of a task after it became runnable (a wake-up's, not a resumption) (cumulative)")]
    #[serde(default)]
    pub nr_wake_starts: u64,
    #[stat(desc = "Deadline containers: wake-ups' starts after its deadline (cumulative; issue 10's misses per wake-up)")]
    #[serde(default)]
    pub nr_wake_misses: u64,
    #[stat(desc = "Deadline containers: how late the misses started, counts per log2 bucket as runq_latency's (cumulative)")]
    #[serde(default)]
    pub lateness: Vec<u64>,
    #[stat(desc = "Deadline containers: the misses' lateness summed (cumulative)")]
    #[serde(default)]
    pub lateness_sum_ns: u64,
    #[stat(desc = "Deadline containers: worst lateness of a miss")]
    pub max_lateness_ns: u64,
    #[stat(desc = "The tightest cpu.max on it, its own or an ancestor's, in CPUs (0: none)")]
    pub limit_cpus: f64,
    #[stat(desc = "Its own cpu.max: quota per period (0: no limit of its own)")]
    pub quota_us: u64,
    #[stat(desc = "Its own cpu.max: period")]
    pub period_us: u64,
    #[stat(desc = "Its own cpu.max: periods in which it ran or was throttled (cpu.stat nr_periods, cumulative)")]
    pub nr_periods: u64,
    #[stat(desc = "Its own cpu.max: periods in which it was throttled (cpu.stat nr_throttled, cumulative)")]
    pub nr_throttled: u64,
    #[stat(desc = "Its own cpu.max: time throttled, summed over the run queues its held tasks wait on, at most one per CPU, as the kernel sums it (cpu.stat throttled_usec, cumulative)")]
    pub throttled_usec: u64,
    #[stat(desc = "Its own cpu.max: periods that used quota carried over (cpu.stat nr_bursts, cumulative)")]
    pub nr_bursts: u64,
    #[stat(desc = "Its own cpu.max: CPU time used beyond the quota from quota carried over (cpu.stat burst_usec, cumulative)")]
    pub burst_usec: u64,
    #[stat(desc = "Its own cpu.max: 1 while it is throttled")]
    #[serde(default)]
    pub throttled: u64,
}

/// A metric's meaning, as its struct (SchedulerStats, CgroupMetrics) defines it (None: no such
/// described field).
pub fn desc<T: Meta>(field: &str) -> Option<String> {
    T::meta().fields.get(field)?.attrs.desc.clone()
}

impl Metrics {
    /// The figures of the moment: scheduler-wide, and each listed cgroup's report.
    pub fn of(s: &SchedulerStats, reports: &[CgroupReport]) -> Self {
        Metrics {
            scheduler: s.clone(),
            cgroups: reports.iter().map(|r| (r.path.clone(), CgroupMetrics::of(r))).collect(),
        }
    }

    /// Back to the shapes `--monitor`'s table prints (crate::monitor).
    pub fn reports(&self) -> (SchedulerStats, Vec<CgroupReport>) {
        (self.scheduler.clone(), self.cgroups.iter().map(|(path, c)| c.report(path)).collect())
    }
}

impl CgroupMetrics {
    fn of(r: &CgroupReport) -> Self {
        let own = r.cpu_max.clone().unwrap_or_default();
        CgroupMetrics {
            present: r.present as u64,
            runtime_only: r.runtime_only as u64,
            deadline_rr_ns: r.deadline_rr_ns,
            deadline_wakeup_ns: r.deadline_wakeup_ns,
            guaranteed_shares: r.guaranteed_shares as u64,
            guarantee_cpus: r.guarantee_cpus,
            guarantee_granted_cpus: r.guarantee_granted_cpus,
            guarantee_usage_cpus: r.usage_cpus_avg,
            guarantee_budget_ns: r.guarantee_budget_ns,
            cpu_weight: r.cpu_weight as u64,
            effective_weight: r.effective_weight as u64,
            idle: r.idle as u64,
            usage_ns: r.usage_ns,
            wait_ns: r.wait_ns,
            nr_misses: r.nr_misses,
            nr_picks: r.nr_picks,
            nr_wake_starts: r.nr_wake_starts,
            nr_wake_misses: r.nr_wake_misses,
            lateness: r.lateness.clone(),
            lateness_sum_ns: r.lateness_sum_ns,
            max_lateness_ns: r.max_lateness_ns,
            attainment: r.attainment,
            limit_cpus: r.limit_cpus,
            nr_periods: own.nr_periods,
            nr_throttled: own.nr_throttled,
            throttled_usec: own.throttled_usec,
            nr_bursts: own.nr_bursts,
            burst_usec: own.burst_usec,
            quota_us: own.quota_us,
            period_us: own.period_us,
            throttled: own.throttled as u64,
            runq_latency: r.runq_latency.clone(),
        }
    }

    fn report(&self, path: &str) -> CgroupReport {
        CgroupReport {
            path: path.to_string(),
            present: self.present != 0,
            runtime_only: self.runtime_only != 0,
            deadline_rr_ns: self.deadline_rr_ns,
            deadline_wakeup_ns: self.deadline_wakeup_ns,
            guaranteed_shares: self.guaranteed_shares as u32,
            guarantee_cpus: self.guarantee_cpus,
            guarantee_granted_cpus: self.guarantee_granted_cpus,
            usage_cpus_avg: self.guarantee_usage_cpus,
            guarantee_budget_ns: self.guarantee_budget_ns,
            cpu_weight: self.cpu_weight as u32,
            effective_weight: self.effective_weight as u32,
            idle: self.idle != 0,
            usage_ns: self.usage_ns,
            wait_ns: self.wait_ns,
            nr_misses: self.nr_misses,
            nr_picks: self.nr_picks,
            nr_wake_starts: self.nr_wake_starts,
            nr_wake_misses: self.nr_wake_misses,
            lateness: self.lateness.clone(),
            lateness_sum_ns: self.lateness_sum_ns,
            max_lateness_ns: self.max_lateness_ns,
            attainment: self.attainment,
            limit_cpus: self.limit_cpus,
            cpu_max: (self.quota_us > 0 || self.nr_periods > 0 || self.nr_throttled > 0).then(|| CpuMaxReport {
                quota_us: self.quota_us,
                period_us: self.period_us,
                nr_periods: self.nr_periods,
                nr_throttled: self.nr_throttled,
                throttled_usec: self.throttled_usec,
                nr_bursts: self.nr_bursts,
                burst_usec: self.burst_usec,
                throttled: self.throttled != 0,
                ..Default::default()
            }),
            runq_latency: self.runq_latency.clone(),
            ..Default::default()
        }
    }
}

/// The server's description of the statistics and how to read them: one request ("top") answered
/// with the figures of the moment, asked of the scheduler's loop through the server's channels.
pub fn server_data() -> StatsServerData<(), Metrics> {
    let open: Box<dyn StatsOpener<(), Metrics>> = Box::new(|_| {
        let read: Box<dyn StatsReader<(), Metrics>> = Box::new(|_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            res_ch.recv()?.to_json()
        });
        Ok(read)
    });
    StatsServerData::new()
        .add_meta(SchedulerStats::meta())
        .add_meta(CgroupMetrics::meta())
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
}

/// `--help-stats`: every statistic described, the scheduler-wide ones (SchedulerStats, a field of
/// Metrics: scx_stats' description walks only maps and arrays of structs) included.
pub fn describe(w: &mut impl std::io::Write) -> Result<()> {
    server_data().describe_meta(w, Some(&["Metrics", "SchedulerStats"]))
}

/// Where a waiting reader's figures go.
pub type Answer = Box<dyn FnOnce(Metrics) + Send>;

/// The running server, as the scheduler's loop holds it.
pub struct Server(StatsServer<(), Metrics>);

impl Server {
    /// Starts the server (its socket: scx_stats' default path). The scheduler refuses to start
    /// if it cannot: an operator's `--monitor` would otherwise wait for a server that is not there.
    pub fn launch() -> Result<Server> {
        Ok(Server(StatsServer::new(server_data()).launch()?))
    }

    /// Answers every request waiting (a reader waits for the figures of the moment), never
    /// waiting for one.
    /// The readers waiting for figures now: each is answered by calling its Answer with them
    /// (from any thread: reports::Job::Metrics).
    pub fn waiting(&self) -> Vec<Answer> {
        let (answers, asked) = self.0.channels();
        let mut waiting: Vec<Answer> = Vec::new();
        while asked.try_recv().is_ok() {
            let answers = answers.clone();
            waiting.push(Box::new(move |m| {
                let _ = answers.send(m);
            }));
        }
        waiting
    }
}

/// Prints the statistics every `every` (`--stats` in the scheduler's process, `--monitor`
/// without it) until `stop` says so, with the table of `scx_fdl --monitor`.
pub fn monitor(every: std::time::Duration, mut stop: impl FnMut() -> bool) -> Result<()> {
    let mut printer = crate::monitor::Printer::new(every);
    scx_utils::monitor_stats::<Metrics>(&[], every, &mut stop, |m| {
        let (s, reports) = m.reports();
        printer.print(&s, reports)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What --monitor prints comes through scx_stats unchanged: a report and the scheduler's
    /// figures survive Metrics and its JSON.
    #[test]
    fn reports_survive_the_stats_server() {
        let mut lat = vec![0u64; crate::stats::LAT_BUCKETS];
        lat[7] = 12;
        let r = CgroupReport {
            path: "/sys/fs/cgroup/fdl".into(),
            present: true,
            deadline_rr_ns: 4_000_000,
            guaranteed_shares: 300,
            guarantee_cpus: 0.29,
            cpu_weight: 100,
            effective_weight: 157,
            usage_ns: 5_000_000_000,
            wait_ns: 7,
            nr_misses: 3,
            nr_picks: 900,
            nr_wake_starts: 600,
            nr_wake_misses: 1,
            lateness: lat.iter().map(|n| n / 4).collect(),
            lateness_sum_ns: 4_000_000,
            max_lateness_ns: 1_500_000,
            usage_cpus_avg: 0.25,
            attainment: 0.5,
            guarantee_budget_ns: -3_000_000,
            limit_cpus: 0.2,
            cpu_max: Some(CpuMaxReport {
                quota_us: 20_000,
                period_us: 100_000,
                nr_periods: 50,
                nr_throttled: 12,
                throttled_usec: 900_000,
                nr_bursts: 3,
                burst_usec: 7_000,
                throttled: true,
                ..Default::default()
            }),
            runq_latency: lat.clone(),
            ..Default::default()
        };
        let s = SchedulerStats {
            dispatched: [("idle".to_string(), 5), ("fair".to_string(), 9)].into(),
            preempt_kicks: 4,
            runnable_tasks: -0,
            guarantee_scale: 1.0,
            ..Default::default()
        };
        let json = Metrics::of(&s, std::slice::from_ref(&r)).to_json().unwrap();
        let back: Metrics = serde_json::from_value(json).unwrap();
        let (s2, reports) = back.reports();
        assert_eq!(s2, s, "the scheduler-wide figures survive whole");
        let r2 = &reports[0];
        // Every figure a report has reaches the client, but the cgroup id (the path names it) and
        // the limit's burst settings (in `scx_fdl get`).
        let mut expected = CgroupReport { cgid: 0, ..r.clone() };
        expected.cpu_max.as_mut().unwrap().burst_us = 0;
        assert_eq!(serde_json::to_value(r2).unwrap(), serde_json::to_value(&expected).unwrap());
        assert_eq!(crate::monitor::table(&[r.clone()], None), crate::monitor::table(&[r2.clone()], None));
        // The five cpu.stat counters of its own limit reach --monitor, with the kernel's names.
        let m = r2.cpu_max.as_ref().unwrap();
        assert_eq!((m.nr_periods, m.nr_throttled, m.throttled_usec, m.nr_bursts, m.burst_usec), (50, 12, 900_000, 3, 7_000));
        let table = crate::monitor::table(&[r2.clone()], None);
        assert!(table.contains("12/50") && table.contains("900.00ms") && table.contains("3/7.00ms"), "{table}");
        // A limit below the guarantee is said to cap it.
        assert!(table.contains("/sys/fs/cgroup/fdl: guarantee 0.29 CPU capped at 0.20 CPU by cpu.max"), "{table}");
    }

    /// --help-stats describes every field: the meta data verifies, and names the cgroups' fields.
    #[test]
    fn every_statistic_is_described() {
        let mut out = Vec::new();
        describe(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for field in ["dispatched", "preempt_kicks", "cgroups", "runq_latency", "nr_throttled", "lag_steps"] {
            assert!(text.contains(field), "{field} not described:\n{text}");
        }
    }
}
