//! `scx_fdl list/get` tables and `scx_fdl --monitor`, printed from the control socket's reports.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::config::format_duration;
use crate::control::{request, CgroupReport, Request};

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

/// One table row per cgroup. With `previous` (reports from `elapsed` ago), CPU and waiting are
/// shown as rates over that interval (in CPUs); otherwise as totals since scx_fdl started.
pub fn table(reports: &[CgroupReport], previous: Option<(&[CgroupReport], Duration)>) -> String {
    let before: HashMap<&str, &CgroupReport> =
        previous.map(|(p, _)| p.iter().map(|r| (r.path.as_str(), r)).collect()).unwrap_or_default();
    let (cpu_head, wait_head) = if previous.is_some() { ("cpu", "waiting") } else { ("cpu-total", "waited-total") };
    let mut out = format!(
        "{:<28} {:>8} {:>8} {:>7} {:>6} {:>6} {:>10} {:>12} {:>7} {:>9} {:>6}\n",
        "cgroup", "dl_rr", "dl_wake", "shares", "weight", "eff-w", cpu_head, wait_head, "misses", "worst-late", "attain"
    );
    for r in reports {
        let (cpu, wait) = match (previous, before.get(r.path.as_str())) {
            (Some((_, elapsed)), Some(b)) => {
                let secs = elapsed.as_secs_f64().max(1e-3);
                (
                    format!("{:.2}", r.usage_ns.saturating_sub(b.usage_ns) as f64 / 1e9 / secs),
                    format!("{:.2}", r.wait_ns.saturating_sub(b.wait_ns) as f64 / 1e9 / secs),
                )
            }
            (Some(_), None) => ("-".into(), "-".into()),
            (None, _) => (format!("{:.2}s", r.usage_ns as f64 / 1e9), format!("{:.2}s", r.wait_ns as f64 / 1e9)),
        };
        let name = if r.present { r.path.clone() } else { format!("{} (absent)", r.path) };
        out += &format!(
            "{:<28} {:>8} {:>8} {:>7} {:>6} {:>6} {:>10} {:>12} {:>7} {:>9} {:>6}\n",
            name,
            duration_or_dash(r.deadline_rr_ns),
            duration_or_dash(r.deadline_wakeup_ns),
            if r.guaranteed_shares > 0 { r.guaranteed_shares.to_string() } else { "-".into() },
            r.cpu_weight,
            r.effective_weight,
            cpu,
            wait,
            r.nr_misses,
            measured(r.max_lateness_ns),
            if r.guaranteed_shares > 0 { format!("{:.2}", r.attainment) } else { "-".into() },
        );
    }
    out
}

/// Prints a fresh table every `every` until interrupted or the scheduler goes away.
pub fn monitor(socket: &Path, every: Duration) -> Result<()> {
    let tty = std::io::stdout().is_terminal();
    let mut previous: Option<(Vec<CgroupReport>, Instant)> = None;
    loop {
        let now = Instant::now();
        let reports = request(socket, &Request::List)?.cgroups;
        let text = table(&reports, previous.as_ref().map(|(p, t)| (p.as_slice(), now - *t)));
        let mut out = std::io::stdout().lock();
        if tty {
            write!(out, "\x1b[H\x1b[2J")?;
        }
        writeln!(out, "scx_fdl: {} cgroups; cpu and waiting in CPUs over the last {} s", reports.len(), every.as_secs())?;
        write!(out, "{text}")?;
        if !tty {
            writeln!(out)?;
        }
        out.flush()?;
        previous = Some((reports, now));
        std::thread::sleep(every);
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
}
