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

#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
pub struct CgroupMetrics {
    #[stat(desc = "1 if the cgroup exists, 0 if only configured")]
    pub present: u64,
    #[stat(desc = "1 if `scx_fdl set` changed its parameters from the configuration file's (until a restart or SIGHUP reload)")]
    pub runtime_only: u64,
    #[stat(desc = "Its deadline_rr (ns; 0: none)")]
    pub deadline_rr_ns: u64,
    #[stat(desc = "Its deadline_wakeup (ns; 0: none)")]
    pub deadline_wakeup_ns: u64,
    #[stat(desc = "Its guaranteed_shares (1024: one CPU; 0: none)")]
    pub guaranteed_shares: u64,
    #[stat(desc = "Its guarantee in CPUs, as asked (nested guarantees resolved)")]
    pub guarantee_cpus: f64,
    #[stat(desc = "The guarantee as granted now, in CPUs")]
    pub guarantee_granted_cpus: f64,
    #[stat(desc = "Its cpu.weight")]
    pub cpu_weight: u64,
    #[stat(desc = "The weight scheduling uses: cpu.weight, or the guarantee loop's boost")]
    pub effective_weight: u64,
    #[stat(desc = "CPU time used by its subtree under scx_fdl (ns, cumulative)")]
    pub usage_ns: u64,
    #[stat(desc = "Time its subtree's tasks waited runnable (ns, cumulative)")]
    pub wait_ns: u64,
    #[stat(desc = "Deadline misses (cumulative)")]
    pub nr_misses: u64,
    #[stat(desc = "Starts of its work after a wait (cumulative; the misses' denominator)")]
    pub nr_picks: u64,
    #[stat(desc = "Worst lateness of a miss (ns)")]
    pub max_lateness_ns: u64,
    #[stat(desc = "Guaranteed cgroups: averaged use over the granted guarantee (1: met)")]
    pub attainment: f64,
    #[stat(desc = "The tightest cpu.max on it, its own or an ancestor's, in CPUs (0: none)")]
    pub limit_cpus: f64,
    #[stat(desc = "Its own cpu.max: periods (cumulative)")]
    pub nr_periods: u64,
    #[stat(desc = "Its own cpu.max: periods in which it was throttled (cumulative)")]
    pub nr_throttled: u64,
    #[stat(desc = "Its own cpu.max: time throttled, summed over the CPUs its held tasks would run on, as the kernel sums its per-CPU run queues (us, cumulative)")]
    pub throttled_usec: u64,
    #[stat(desc = "Its own cpu.max: periods that used more than the quota, from quota carried over (cumulative)")]
    pub nr_bursts: u64,
    #[stat(desc = "Its own cpu.max: CPU time used beyond the quota in those periods (us, cumulative)")]
    pub burst_usec: u64,
    #[stat(desc = "Its own cpu.max: quota per period (us; 0: no limit of its own)")]
    pub quota_us: u64,
    #[stat(desc = "Its own cpu.max: period (us)")]
    pub period_us: u64,
    #[stat(desc = "Run-queue latency counts per log2 bucket: bucket i holds waits in [2^(i-1), 2^i) us (cumulative)")]
    pub runq_latency: Vec<u64>,
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
            cpu_weight: r.cpu_weight as u64,
            effective_weight: r.effective_weight as u64,
            usage_ns: r.usage_ns,
            wait_ns: r.wait_ns,
            nr_misses: r.nr_misses,
            nr_picks: r.nr_picks,
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
            cpu_weight: self.cpu_weight as u32,
            effective_weight: self.effective_weight as u32,
            usage_ns: self.usage_ns,
            wait_ns: self.wait_ns,
            nr_misses: self.nr_misses,
            nr_picks: self.nr_picks,
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
    pub fn answer(&self, mut figures: impl FnMut() -> Metrics) {
        let (answers, asked) = self.0.channels();
        while asked.try_recv().is_ok() {
            let _ = answers.send(figures());
        }
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
            max_lateness_ns: 1_500_000,
            attainment: 0.5,
            limit_cpus: 0.2,
            cpu_max: Some(CpuMaxReport {
                quota_us: 20_000,
                period_us: 100_000,
                nr_periods: 50,
                nr_throttled: 12,
                throttled_usec: 900_000,
                nr_bursts: 3,
                burst_usec: 7_000,
                ..Default::default()
            }),
            runq_latency: lat,
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
