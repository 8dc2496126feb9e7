//! `scx_fdl list/get` tables, printed from the control socket's reports, and the screen of
//! `scx_fdl --monitor` and `--stats`, printed from scx_stats' (stats_server.rs).

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::config::format_duration;
use crate::control::CgroupReport;
use crate::stats::{quantile_bound_us, SchedulerStats};

fn duration_or_dash(ns: u64) -> String {
    if ns == 0 { "-".into() } else { format_duration(ns) }
}

/// A measured time, rounded for reading: "850us", "8.33ms", "14.8s".
fn measured(ns: u64) -> String {
    match ns {
        0 => "-".into(),
        n if n >= 1_000_000_000 => format!("{:.1}s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.2}ms", n as f64 / 1e6),
        n => format!("{}us", n / 1000),
    }
}

/// The 99th percentile of run-queue latency as its bucket's bound ("<=64us"), from bucket counts.
fn p99(buckets: &[u64]) -> String {
    match quantile_bound_us(buckets, 0.99) {
        None if buckets.iter().sum::<u64>() == 0 => "-".into(),
        None => "long".into(),
        Some(us) => format!("<={}", measured(us * 1000)),
    }
}

/// One table row per cgroup. With `previous` (reports from `elapsed` ago), CPU and waiting are
/// shown as rates over that interval (in CPUs), and the run-queue latency p99 and the wake-ups
/// missed are those of the interval; otherwise totals since scx_fdl started. Misses are shown as
/// wake-ups that started past their deadline over wake-ups started (issue 10's measure), not the
/// resumptions of work preempted mid-burst that `nr_misses` also holds (in `get --json`).
pub fn table(reports: &[CgroupReport], previous: Option<(&[CgroupReport], Duration)>) -> String {
    let before: HashMap<&str, &CgroupReport> =
        previous.map(|(p, _)| p.iter().map(|r| (r.path.as_str(), r)).collect()).unwrap_or_default();
    let (cpu_head, wait_head) = if previous.is_some() { ("cpu", "waiting") } else { ("cpu-total", "waited-total") };
    let mut out = format!(
        "{:<28} {:>8} {:>8} {:>7} {:>6} {:>6} {:>10} {:>12} {:>13} {:>9} {:>6} {:>9} {:>6} {:>13} {:>10} {:>14}\n",
        "cgroup", "dl_rr", "dl_wake", "shares", "weight", "eff-w", cpu_head, wait_head, "wake-missed", "worst-late", "attain",
        "rq-p99", "limit", "throttled", "thr-time", "bursts"
    );
    for r in reports {
        let wake = |starts: u64, misses: u64| {
            if r.deadline_rr_ns == 0 && starts == 0 { "-".into() } else { format!("{misses}/{starts}") }
        };
        let (cpu, wait, lat, missed) = match (previous, before.get(r.path.as_str())) {
            (Some((_, elapsed)), Some(b)) => {
                let secs = elapsed.as_secs_f64().max(1e-3);
                let lat: Vec<u64> =
                    r.runq_latency.iter().enumerate().map(|(i, n)| n.saturating_sub(*b.runq_latency.get(i).unwrap_or(&0))).collect();
                (
                    format!("{:.2}", r.usage_ns.saturating_sub(b.usage_ns) as f64 / 1e9 / secs),
                    format!("{:.2}", r.wait_ns.saturating_sub(b.wait_ns) as f64 / 1e9 / secs),
                    p99(&lat),
                    wake(r.nr_wake_starts.saturating_sub(b.nr_wake_starts), r.nr_wake_misses.saturating_sub(b.nr_wake_misses)),
                )
            }
            (Some(_), None) => ("-".into(), "-".into(), "-".into(), "-".into()),
            (None, _) => (
                format!("{:.2}s", r.usage_ns as f64 / 1e9),
                format!("{:.2}s", r.wait_ns as f64 / 1e9),
                p99(&r.runq_latency),
                wake(r.nr_wake_starts, r.nr_wake_misses),
            ),
        };
        let name = match (r.present, r.runtime_only) {
            (true, false) => r.path.clone(),
            (true, true) => format!("{} (set)", r.path),
            (false, false) => format!("{} (absent)", r.path),
            (false, true) => format!("{} (absent, set)", r.path),
        };
        out += &format!(
            "{:<28} {:>8} {:>8} {:>7} {:>6} {:>6} {:>10} {:>12} {:>13} {:>9} {:>6} {:>9} {:>6} {:>13} {:>10} {:>14}\n",
            name,
            duration_or_dash(r.deadline_rr_ns),
            duration_or_dash(r.deadline_wakeup_ns),
            if r.guaranteed_shares > 0 { r.guaranteed_shares.to_string() } else { "-".into() },
            if r.idle { "idle".to_string() } else { r.cpu_weight.to_string() },
            r.effective_weight,
            cpu,
            wait,
            missed,
            measured(r.max_lateness_ns),
            if r.guaranteed_shares > 0 { format!("{:.2}", r.attainment) } else { "-".into() },
            lat,
            if r.limit_cpus > 0.0 { format!("{:.2}", r.limit_cpus) } else { "-".into() },
            // Its own limit's periods: throttled / all (cpu.stat nr_throttled / nr_periods).
            r.cpu_max.as_ref().map_or("-".into(), |m| format!("{}/{}", m.nr_throttled, m.nr_periods)),
            // cpu.stat throttled_usec, and nr_bursts / burst_usec.
            r.cpu_max.as_ref().map_or("-".into(), |m| measured(m.throttled_usec * 1000)),
            r.cpu_max.as_ref().map_or("-".into(), |m| format!("{}/{}", m.nr_bursts, measured(m.burst_usec * 1000))),
        );
    }
    if reports.iter().any(|r| r.idle) {
        out += "idle: cpu.idle is 1: the cgroup weighs the least (eff-w 1) unless a guarantee boosts it\n";
    }
    if reports.iter().any(|r| r.runtime_only) {
        out += "(set): parameters changed by `scx_fdl set`, runtime only: a restart or a SIGHUP reload returns to the configuration file\n";
    }
    // A CPU limit is a hard ceiling: say where one caps a guarantee.
    for r in reports.iter().filter(|r| r.guaranteed_shares > 0 && r.limit_cpus > 0.0 && r.guarantee_cpus > r.limit_cpus + 1e-6) {
        out += &format!(
            "{}: guarantee {:.2} CPU capped at {:.2} CPU by cpu.max (a CPU limit is a hard ceiling)\n",
            r.path, r.guarantee_cpus, r.limit_cpus
        );
    }
    out
}

/// The scheduler-wide line of --monitor: dispatches per second by path, runnable tasks, kicks
/// and migrations per second over the last `elapsed`.
pub fn scheduler_line(now: &SchedulerStats, before: &SchedulerStats, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
    let paths: Vec<String> = now
        .dispatched
        .iter()
        .map(|(p, n)| format!("{p} {:.0}", rate(*n, before.dispatched.get(p).copied().unwrap_or(0))))
        .collect();
    format!(
        "dispatched/s: {}; runnable {}; preempt-kicks/s {:.0}; preempts-deferred/s {:.0}; fair-preempts/s {:.0}; sibling-preempts/s {:.0}; interactive-wakeups/s {:.0}; idle-kicks/s {:.0}; migrations/s {:.0}",
        paths.join(", "),
        now.runnable_tasks,
        rate(now.preempt_kicks, before.preempt_kicks),
        rate(now.preempts_deferred, before.preempts_deferred),
        rate(now.fair_preempts, before.fair_preempts),
        rate(now.sibling_preempts, before.sibling_preempts),
        rate(now.interactive_wakeups, before.interactive_wakeups),
        rate(now.idle_kicks, before.idle_kicks),
        rate(now.migrations, before.migrations)
    )
}

/// The queue domains' line of --monitor (None with a single domain): each domain's load (its
/// utilisation over the interval times its CPUs), the tasks its CPUs took per second from their
/// own domain, from another because their own had none (steal) and from another by the queue's
/// order, its PELT load (what the balancer evens out) and the tasks moved in per second; then the
/// balancer's moves per second and the largest deviation of a domain's load from their average,
/// as a part of that average (reference §5's imbalance).
pub fn domains_line(now: &SchedulerStats, before: &SchedulerStats, elapsed: Duration) -> Option<String> {
    if now.domain_busy_secs.len() < 2 {
        return None;
    }
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = |m: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>, d: &str| {
        m.get(d).copied().unwrap_or(0).saturating_sub(b.get(d).copied().unwrap_or(0)) as f64 / secs
    };
    // Busy over all accounted time, times the CPUs: ticks an emulated CPU loses count in neither.
    let delta = |m: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>, d: &str| {
        let now = m.get(d).copied().unwrap_or(0.0);
        (now - b.get(d).copied().unwrap_or(now)).max(0.0)
    };
    let loads: Vec<(&String, f64)> = now
        .domain_busy_secs
        .keys()
        .map(|d| {
            let all = delta(&now.domain_cpu_secs, &before.domain_cpu_secs, d);
            let busy = delta(&now.domain_busy_secs, &before.domain_busy_secs, d);
            let cpus = now.domain_cpus.get(d).copied().unwrap_or(0) as f64;
            (d, if all > 0.0 { busy / all * cpus } else { 0.0 })
        })
        .collect();
    let mean = loads.iter().map(|(_, l)| l).sum::<f64>() / loads.len() as f64;
    let imbalance = if mean > 0.0 { loads.iter().map(|(_, l)| (l - mean).abs()).fold(0.0, f64::max) / mean } else { 0.0 };
    let parts: Vec<String> = loads
        .iter()
        .map(|(d, l)| {
            format!(
                "{d} {l:.2} of {} CPUs, took/s {:.0} own {:.0} steal {:.0} order, load {:.0}, moved in/s {:.1}",
                now.domain_cpus.get(*d).copied().unwrap_or(0),
                rate(&now.domain_took_own, &before.domain_took_own, d),
                rate(&now.domain_took_steal, &before.domain_took_steal, d),
                rate(&now.domain_took_order, &before.domain_took_order, d),
                now.domain_load.get(*d).copied().unwrap_or(0.0),
                rate(&now.domain_moved_in, &before.domain_moved_in, d)
            )
        })
        .collect();
    let moves = now.balancer_moves.saturating_sub(before.balancer_moves) as f64 / secs;
    Some(format!("domains: {}; balancer moves/s {moves:.1}; imbalance {:.1} %", parts.join("; "), imbalance * 100.0))
}

/// Prints `--monitor`'s screen at each read of the statistics (stats_server::monitor): the
/// scheduler-wide rates and the cgroup table, rates over the time since the previous read.
pub struct Printer {
    every: Duration,
    tty: bool,
    previous: Option<(Vec<CgroupReport>, SchedulerStats, Instant)>,
}

impl Printer {
    pub fn new(every: Duration) -> Self {
        Self { every, tty: std::io::stdout().is_terminal(), previous: None }
    }

    pub fn print(&mut self, sched: &SchedulerStats, reports: Vec<CgroupReport>) -> Result<()> {
        let now = Instant::now();
        let text = table(&reports, self.previous.as_ref().map(|(p, _, t)| (p.as_slice(), now - *t)));
        let mut out = std::io::stdout().lock();
        if self.tty {
            write!(out, "\x1b[H\x1b[2J")?;
        }
        writeln!(
            out,
            "scx_fdl: {} cgroups; cpu and waiting in CPUs over the last {:.1} s",
            reports.len(),
            self.every.as_secs_f64()
        )?;
        if let Some((_, before, t)) = &self.previous {
            writeln!(out, "{}", scheduler_line(sched, before, now - *t))?;
            if let Some(line) = domains_line(sched, before, now - *t) {
                writeln!(out, "{line}")?;
            }
        }
        write!(out, "{text}")?;
        if !self.tty {
            writeln!(out)?;
        }
        out.flush()?;
        self.previous = Some((reports, sched.clone(), now));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_come_from_the_interval() {
        let old = CgroupReport { path: "/sys/fs/cgroup/web".into(), present: true, usage_ns: 1_000_000_000, ..Default::default() };
        let new = CgroupReport { usage_ns: 2_500_000_000, wait_ns: 500_000_000, deadline_rr_ns: 200_000, ..old.clone() };
        let t = table(&[new.clone()], Some((&[old], Duration::from_secs(1))));
        let row = t.lines().nth(1).unwrap();
        assert!(row.contains("200us") && row.contains(" 1.50 ") && row.contains(" 0.50 "), "{row}");
        let t = table(&[new], None);
        assert!(t.lines().nth(1).unwrap().contains("2.50s"), "{t}");
        assert_eq!((measured(850_000), measured(8_331_071), measured(14_768_290_323)), ("850us".into(), "8.33ms".into(), "14.8s".into()));
    }

    #[test]
    fn the_p99_column_is_that_of_the_interval() {
        let mut lat = vec![0u64; crate::stats::LAT_BUCKETS];
        lat[12] = 100; // long waits before the interval: below 4096 us
        let old = CgroupReport { path: "/sys/fs/cgroup/web".into(), present: true, runq_latency: lat.clone(), ..Default::default() };
        lat[3] += 1000; // in the interval: below 8 us
        let new = CgroupReport { runq_latency: lat, ..old.clone() };
        let t = table(&[new.clone()], Some((&[old], Duration::from_secs(1))));
        assert!(t.lines().nth(1).unwrap().contains(" <=8us "), "{t}");
        assert!(table(&[new], None).lines().nth(1).unwrap().contains(" <=4.10ms "), "{t}");
    }

    #[test]
    fn misses_are_the_wake_ups_of_the_interval() {
        let old = CgroupReport {
            path: "/sys/fs/cgroup/lat".into(),
            present: true,
            deadline_rr_ns: 4_000_000,
            nr_picks: 900,
            nr_misses: 40,
            nr_wake_starts: 500,
            nr_wake_misses: 7,
            ..Default::default()
        };
        // In the interval: 300 starts, 20 of them late, of which 100 wake-ups, 2 late.
        let new = CgroupReport { nr_picks: 1200, nr_misses: 60, nr_wake_starts: 600, nr_wake_misses: 9, ..old.clone() };
        let t = table(&[new.clone()], Some((&[old], Duration::from_secs(1))));
        assert!(t.lines().next().unwrap().contains(" wake-missed "), "{t}");
        assert!(t.lines().nth(1).unwrap().contains(" 2/100 "), "{t}");
        assert!(table(&[new], None).lines().nth(1).unwrap().contains(" 9/600 "), "{t}");
        // A cgroup without a deadline has no misses to show.
        let fair = CgroupReport { path: "/sys/fs/cgroup/web".into(), present: true, ..Default::default() };
        let row = table(&[fair], None).lines().nth(1).unwrap().to_string();
        assert_eq!(row.split_whitespace().nth(8), Some("-"), "{row}");
    }

    #[test]
    fn limits_show_the_tightest_and_the_own_throttling() {
        let cpu_max = crate::limits::CpuMaxReport { quota_us: 20_000, period_us: 100_000, nr_periods: 50, nr_throttled: 12, ..Default::default() };
        let limited = CgroupReport { path: "/sys/fs/cgroup/pod".into(), present: true, limit_cpus: 0.2, cpu_max: Some(cpu_max), ..Default::default() };
        let child = CgroupReport { path: "/sys/fs/cgroup/pod/c".into(), present: true, limit_cpus: 0.2, ..Default::default() };
        let t = table(&[limited, child], None);
        assert!(t.lines().nth(1).unwrap().ends_with(" 0.20         12/50          -            0/-"), "{t}");
        assert!(t.lines().nth(2).unwrap().ends_with(" 0.20             -          -              -"), "{t}");
    }

    #[test]
    fn runtime_only_parameters_are_marked() {
        let set = CgroupReport { path: "/sys/fs/cgroup/g".into(), present: true, runtime_only: true, ..Default::default() };
        let file = CgroupReport { path: "/sys/fs/cgroup/lat".into(), present: true, ..Default::default() };
        let t = table(&[set, file.clone()], None);
        assert!(t.lines().nth(1).unwrap().starts_with("/sys/fs/cgroup/g (set) "), "{t}");
        assert!(t.lines().nth(2).unwrap().starts_with("/sys/fs/cgroup/lat "), "{t}");
        assert!(t.contains("(set): parameters changed by `scx_fdl set`, runtime only"), "{t}");
        assert!(!table(&[file], None).contains("runtime only"));
    }

    #[test]
    fn the_domains_line_shows_load_migrations_and_imbalance() {
        let m = |a: u64, b: u64| -> BTreeMap<String, u64> { [("llc0".to_string(), a), ("llc1".to_string(), b)].into() };
        let f = |a: f64, b: f64| -> BTreeMap<String, f64> { [("llc0".to_string(), a), ("llc1".to_string(), b)].into() };
        let before = SchedulerStats {
            domain_busy_secs: f(10.0, 10.0),
            domain_cpu_secs: f(20.0, 20.0),
            domain_cpus: m(2, 2),
            domain_took_own: m(0, 0),
            ..Default::default()
        };
        // Over 2 s, llc0's CPUs were busy 2 s of the 2 s accounted (ticks lost: 4 s of CPU
        // time passed), llc1's 1 of 2.
        let now = SchedulerStats {
            domain_busy_secs: f(12.0, 11.0),
            domain_cpu_secs: f(22.0, 22.0),
            domain_cpus: m(2, 2),
            domain_took_own: m(200, 100),
            domain_took_steal: m(0, 20),
            domain_took_order: m(2, 0),
            domain_load: f(400.0, 210.4),
            domain_moved_in: m(0, 3),
            balancer_moves: 4,
            ..Default::default()
        };
        let line = domains_line(&now, &before, Duration::from_secs(2)).unwrap();
        // Loads 2.0 and 1.0 CPUs: average 1.5, each 0.5 (33.3 %) from it.
        assert_eq!(
            line,
            "domains: llc0 2.00 of 2 CPUs, took/s 100 own 0 steal 1 order, load 400, moved in/s 0.0; llc1 1.00 of 2 CPUs, took/s 50 own 10 steal 0 order, load 210, moved in/s 1.5; balancer moves/s 2.0; imbalance 33.3 %"
        );
        let one = SchedulerStats { domain_busy_secs: [("llc0".to_string(), 1.0)].into(), ..Default::default() };
        assert_eq!(domains_line(&one, &one, Duration::from_secs(1)), None);
    }

    #[test]
    fn the_scheduler_line_shows_rates() {
        let before = SchedulerStats { dispatched: [("fair".to_string(), 100)].into(), migrations: 5, preempts_deferred: 2, ..Default::default() };
        let now = SchedulerStats { dispatched: [("fair".to_string(), 300)].into(), migrations: 25, runnable_tasks: 3, preempts_deferred: 8, ..Default::default() };
        let line = scheduler_line(&now, &before, Duration::from_secs(2));
        assert_eq!(line, "dispatched/s: fair 100; runnable 3; preempt-kicks/s 0; preempts-deferred/s 3; fair-preempts/s 0; sibling-preempts/s 0; interactive-wakeups/s 0; idle-kicks/s 0; migrations/s 10");
    }
}
