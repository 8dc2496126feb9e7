//! `scx_fdl cost`: what each callback of the sched_ext scheduler attached now costs. It reads every
//! loaded struct_ops program's run statistics (bpf_prog_info: run_cnt, run_time_ns, and the
//! instructions the verifier processed) twice, SECS apart, with the kernel's statistics switched
//! on in between (BPF_ENABLE_STATS: on while the returned descriptor is open, off again when it
//! closes, whatever else the machine does), and prints the average nanoseconds per run. It works
//! for any scheduler (scx_fdl or a peer), so that `bench/cost.sh` measures them all alike.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use anyhow::{bail, Result};
use libbpf_rs::query::{ProgInfoIter, ProgInfoQueryOptions};
use libbpf_rs::ProgramType;
use serde::Serialize;

/// One callback's figures over the measured interval.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Callback {
    /// The program's name (the scheduler's `<sched>_<op>`).
    pub name: String,
    /// Runs during the interval, and their average cost.
    pub runs: u64,
    pub avg_ns: u64,
    /// Share of the interval's CPU time (all CPUs) spent in it.
    pub cpu_fraction: f64,
    /// Instructions the verifier processed when it was loaded (what veristat reports).
    pub verified_insns: u32,
}

/// Cumulative counters of one program: (run_cnt, run_time_ns, verified_insns).
type Counters = BTreeMap<(u32, String), (u64, u64, u32)>;

/// A program's full function name from its BTF: bpf_prog_info's name is cut at 15 characters
/// (`bpfland_select_` for bpfland_select_cpu), which would mix callbacks up between schedulers.
fn btf_func_name(p: &libbpf_rs::query::ProgramInfo) -> Option<String> {
    use libbpf_rs::libbpf_sys as sys;
    let func = p.func_info.first()?;
    if p.btf_id == 0 {
        return None;
    }
    // SAFETY: libbpf returns an owned BTF object (or NULL) that is freed below; the name pointer
    // lives as long as the object and is copied before it is freed.
    unsafe {
        let btf = sys::btf__load_from_kernel_by_id(p.btf_id);
        if btf.is_null() {
            return None;
        }
        let t = sys::btf__type_by_id(btf, func.type_id);
        let name = if t.is_null() {
            None
        } else {
            let c = sys::btf__name_by_offset(btf, (*t).name_off);
            (!c.is_null()).then(|| std::ffi::CStr::from_ptr(c).to_string_lossy().into_owned())
        };
        sys::btf__free(btf);
        name.filter(|n| !n.is_empty())
    }
}

fn struct_ops_counters() -> Counters {
    ProgInfoIter::with_query_opts(ProgInfoQueryOptions::default().include_func_info(true))
        .filter(|p| p.ty == ProgramType::StructOps)
        .map(|p| {
            let name = btf_func_name(&p).unwrap_or_else(|| p.name.to_string_lossy().into_owned());
            ((p.id, name), (p.run_cnt, p.run_time_ns, p.verified_insns))
        })
        .collect()
}

/// The difference between two readings: callbacks that ran, most expensive first (total time).
pub fn difference(before: &Counters, after: &Counters, secs: f64, nr_cpus: usize) -> Vec<Callback> {
    let mut out: Vec<(u64, Callback)> = after
        .iter()
        .filter_map(|(key, &(cnt, ns, insns))| {
            let (cnt0, ns0, _) = before.get(key).copied().unwrap_or((0, 0, insns));
            let runs = cnt.saturating_sub(cnt0);
            let time = ns.saturating_sub(ns0);
            (runs > 0).then(|| {
                let cpu = secs * nr_cpus.max(1) as f64 * 1e9;
                (time, Callback {
                    name: key.1.clone(),
                    runs,
                    avg_ns: time / runs,
                    cpu_fraction: if cpu > 0.0 { time as f64 / cpu } else { 0.0 },
                    verified_insns: insns,
                })
            })
        })
        .collect();
    out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    out.into_iter().map(|(_, c)| c).collect()
}

/// Measures the attached scheduler's callbacks over `interval`.
pub fn measure(interval: Duration) -> Result<(String, Vec<Callback>)> {
    let ops = std::fs::read_to_string("/sys/kernel/sched_ext/root/ops").unwrap_or_default().trim().to_string();
    if ops.is_empty() {
        bail!("no sched_ext scheduler is attached (/sys/kernel/sched_ext/root/ops is empty)");
    }
    // SAFETY: a plain syscall wrapper; a descriptor >= 0 is ours to own and close.
    let fd = unsafe { libbpf_rs::libbpf_sys::bpf_enable_stats(libbpf_rs::libbpf_sys::BPF_STATS_RUN_TIME) };
    if fd < 0 {
        bail!("BPF_ENABLE_STATS failed ({}): run as root", std::io::Error::from_raw_os_error(-fd));
    }
    // SAFETY: fd was just returned by the kernel and nothing else owns it.
    let _stats_on = unsafe { OwnedFd::from_raw_fd(fd) };
    let before = struct_ops_counters();
    std::thread::sleep(interval);
    let after = struct_ops_counters();
    // The share of the machine's CPU time: its online CPUs (possible ones never run anything).
    let nr_cpus = crate::topology::online_cpus()?.len();
    Ok((ops, difference(&before, &after, interval.as_secs_f64(), nr_cpus)))
}

/// The table `scx_fdl cost` prints.
pub fn table(ops: &str, callbacks: &[Callback], secs: f64) -> String {
    let mut s = format!("{ops}: struct_ops callbacks over {secs:.1} s (kernel.bpf_stats_enabled during the interval)\n");
    s += &format!("{:<28} {:>10} {:>9} {:>8} {:>12}\n", "callback", "runs", "avg ns", "cpu %", "verified");
    for c in callbacks {
        s += &format!(
            "{:<28} {:>10} {:>9} {:>8.3} {:>12}\n",
            c.name,
            c.runs,
            c.avg_ns,
            c.cpu_fraction * 100.0,
            c.verified_insns
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_difference_is_per_run_and_sorted_by_total_time() {
        let before: Counters = [((1, "a_enqueue".into()), (100, 1_000, 50)), ((2, "a_dispatch".into()), (10, 500, 900))].into();
        let after: Counters = [
            ((1, "a_enqueue".into()), (300, 5_000, 50)),
            ((2, "a_dispatch".into()), (20, 20_500, 900)),
            ((3, "a_tick".into()), (0, 0, 10)),
        ]
        .into();
        let d = difference(&before, &after, 1.0, 2);
        assert_eq!(d.len(), 2, "a callback that did not run is left out: {d:?}");
        assert_eq!(d[0].name, "a_dispatch");
        assert_eq!((d[0].runs, d[0].avg_ns, d[0].verified_insns), (10, 2_000, 900));
        assert_eq!((d[1].runs, d[1].avg_ns), (200, 20));
        assert!((d[0].cpu_fraction - 20_000.0 / 2e9).abs() < 1e-12);
    }

    #[test]
    fn a_program_loaded_during_the_interval_counts_from_zero() {
        let after: Counters = [((7, "b_running".into()), (4, 400, 1))].into();
        let d = difference(&Counters::new(), &after, 2.0, 1);
        assert_eq!((d[0].runs, d[0].avg_ns), (4, 100));
    }
}
