//! What scx_fdl reports: the control socket's answers (list, get, set, dump), the scx_stats
//! figures, and the counters it logs.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{bail, Result};
use log::info;

use crate::control::{CgroupReport, Request, Response};
use crate::guarantee_loop::guarantee_now;
use crate::maps::Bpf;
use crate::params::InForce;
use crate::stats::{self, CgroupTree, SchedulerStats};
use crate::{config, limits, stats_server};

/// What the reports read: the BPF side, the configuration in force, and what the process keeps
/// itself (exits of the BPF scheduler, loads).
pub struct Reporter<'a, 'obj> {
    pub bpf: &'a Bpf<'obj>,
    pub cfg: &'a InForce,
    pub exits: &'a BTreeMap<String, u64>,
    pub loads: u64,
}

/// Answers a control request. `set` changes the configuration in force (validated like the file).
pub fn handle(bpf: &Bpf, cfg: &mut InForce, exits: &BTreeMap<String, u64>, loads: u64, req: Request) -> Result<Response> {
    let list = matches!(req, Request::List);
    let (paths, message) = match req {
        Request::Set { cgroup, assign } => {
            // The BPF side has exited: its maps are about to go, so a write would be lost.
            if bpf.exited() {
                bail!("scx_fdl is being ejected by the kernel (its log gives the reason): nothing was applied");
            }
            let new = config::apply_set(&cfg.config, &cfg.cgroup_root, &cgroup, &assign)?;
            let path = config::resolve_path(&cfg.cgroup_root, &cgroup)?;
            cfg.apply_config(bpf, new);
            let message = format!(
                "{}: set {} (runtime only: a restart or a SIGHUP reload returns to the configuration file)",
                path.display(),
                assign.join(" ")
            );
            info!("control: {message}");
            (vec![path], Some(message))
        }
        Request::Get { cgroup } => {
            let path = config::resolve_path(&cfg.cgroup_root, &cgroup)?;
            if !path.exists() && !cfg.expanded.iter().any(|e| e.path == path) {
                bail!("cgroup {}: no such cgroup", path.display());
            }
            (vec![path], None)
        }
        Request::List => {
            let r = Reporter { bpf, cfg, exits, loads };
            (r.listed_paths(&r.cgroup_tree()).into_iter().collect(), None)
        }
        Request::Dump => {
            let (scheduler, cgroups) = Reporter { bpf, cfg, exits, loads }.snapshot();
            let cgroups = cgroups.into_iter().map(|(_, r)| r).collect();
            return Ok(Response { ok: true, cgroups, scheduler: Some(scheduler), ..Default::default() });
        }
    };
    let r = Reporter { bpf, cfg, exits, loads };
    let tree = r.cgroup_tree();
    let cgroups = paths.iter().map(|p| r.report(p, &tree)).collect();
    let scheduler = list.then(|| r.scheduler_stats());
    Ok(Response { ok: true, message, cgroups, scheduler, ..Default::default() })
}

impl Reporter<'_, '_> {
    /// Every cgroup with its figures, read now.
    pub fn cgroup_tree(&self) -> CgroupTree {
        self.bpf.cgroup_tree(&self.cfg.cgroup_root)
    }

    /// A cgroup's parameters and figures, from a tree read by cgroup_tree().
    pub fn report(&self, path: &Path, tree: &CgroupTree) -> CgroupReport {
        let cfg = self.cfg;
        let params = cfg.expanded.iter().find(|e| e.path == path).map(|e| e.params).unwrap_or_default();
        let node = tree.get(path);
        let mut r = CgroupReport {
            path: path.display().to_string(),
            present: node.is_some(),
            deadline_rr_ns: params.deadline_rr_ns,
            deadline_wakeup_ns: params.deadline_wakeup_ns,
            guaranteed_shares: params.guaranteed_shares,
            guarantee_cpus: cfg.guarantees.get(path).copied().unwrap_or(0.0),
            runtime_only: cfg.runtime_only(path),
            ..Default::default()
        };
        if let Some(node) = node {
            r.cgid = node.cgid;
            if let Some(cg) = node.own {
                r.cpu_weight = cg.cpu_weight;
                r.effective_weight = cg.weight;
                r.nr_misses = cg.ent.nr_misses;
                r.max_lateness_ns = cg.ent.max_lateness_ns;
                r.lateness = cg.ent.late_hist.to_vec();
                r.lateness_sum_ns = cg.ent.late_sum_ns;
                r.nr_picks = cg.ent.nr_picks;
                if cg.ent.budget_rate > 0 {
                    r.guarantee_budget_ns = cg.ent.budget_ns;
                }
                r.cpu_max = limits::CpuMaxReport::of(&cg.bw);
            }
            r.limit_cpus = tree.limit_cpus(path);
            (r.usage_ns, r.wait_ns) = (node.usage_ns, node.wait_ns);
            r.runq_latency = node.runq_lat.to_vec();
        }
        r.guarantee_granted_cpus =
            guarantee_now(cfg.granted.get(path).copied().unwrap_or(0.0), self.bpf.guarantee_scale(), r.limit_cpus);
        if let Some(ctl) = cfg.controllers.get(path) {
            r.usage_cpus_avg = ctl.usage_cpus;
            r.attainment = ctl.attainment(r.guarantee_granted_cpus);
        }
        r
    }

    /// Configured cgroups, first-level cgroups and cgroups with a CPU limit, in path order.
    pub fn listed_paths(&self, tree: &CgroupTree) -> BTreeSet<PathBuf> {
        let mut paths: BTreeSet<PathBuf> = self.cfg.expanded.iter().map(|e| e.path.clone()).collect();
        paths.extend(tree.limited().map(Path::to_path_buf));
        if let Ok(dir) = std::fs::read_dir(&self.cfg.cgroup_root) {
            paths.extend(dir.flatten().map(|d| d.path()).filter(|p| p.join("cgroup.procs").exists()));
        }
        paths
    }

    /// Scheduler-wide figures, with the exits so far.
    pub fn scheduler_stats(&self) -> SchedulerStats {
        SchedulerStats {
            exits: self.exits.clone(),
            loads: self.loads,
            cgroups_unenforced_cpu_max: stats::UNENFORCED_CPU_MAX.load(Ordering::Relaxed),
            ..self.bpf.scheduler_counts()
        }
    }

    /// Everything at once, for `dump` and the metrics: scheduler-wide figures, and the reports of
    /// the cgroups exported (configured first, then by depth; at most MAX_EXPORTED_CGROUPS), each
    /// with its label.
    pub fn snapshot(&self) -> (SchedulerStats, Vec<(String, CgroupReport)>) {
        let tree = self.cgroup_tree();
        let configured: HashSet<&Path> = self.cfg.expanded.iter().map(|e| e.path.as_path()).collect();
        let (nodes, dropped) = tree.exported(&configured, stats::MAX_EXPORTED_CGROUPS);
        let cgroups: Vec<(String, CgroupReport)> = nodes
            .iter()
            .map(|n| (stats::cgroup_label(&self.cfg.cgroup_root, &n.path), self.report(&n.path, &tree)))
            .collect();
        let scheduler = SchedulerStats { cgroups_exported: cgroups.len(), cgroups_dropped: dropped, ..self.scheduler_stats() };
        (scheduler, cgroups)
    }

    /// The scx_stats figures: scheduler-wide, and the cgroups `list` shows.
    pub fn metrics(&self) -> stats_server::Metrics {
        let tree = self.cgroup_tree();
        let reports: Vec<CgroupReport> = self.listed_paths(&tree).iter().map(|p| self.report(p, &tree)).collect();
        stats_server::Metrics::of(&self.scheduler_stats(), &reports)
    }

    pub fn log_counters(&self) {
        let s = self.bpf.scheduler_counts();
        let dispatched: Vec<String> = s.dispatched.iter().map(|(p, n)| format!("{p} {n}")).collect();
        info!(
            "dispatched: {}; queued deadline {} fair {}; runnable {} idle-kicks {} preempt-kicks {} migrations {}",
            dispatched.join(", "),
            s.deadline_enqueued,
            s.fair_enqueued,
            s.runnable_tasks,
            s.idle_kicks,
            s.preempt_kicks,
            s.migrations
        );
        info!(
            "starvation-clamps {} untracked-cgroups {} fair-misses {} of {} picks, fair-max-lateness {} us; lag-steps {} timer-kicks {} (slice timers {}, crossings {}) tick-preempts {}",
            s.starvation_clamps,
            s.cgroups_untracked,
            s.fair_misses,
            s.fair_picks,
            s.fair_max_lateness_ns / 1000,
            s.lag_steps,
            s.timer_kicks,
            s.slice_timers,
            s.crossing_timers,
            s.tick_preempts
        );
        let tree = self.cgroup_tree();
        for path in self.cfg.applied.keys() {
            let r = self.report(path, &tree);
            info!(
                "{}: used {} ms, waited {} ms, deadline misses {} of {} starts, worst lateness {} us, weight {} (cpu.weight {}){}",
                r.path,
                r.usage_ns / 1_000_000,
                r.wait_ns / 1_000_000,
                r.nr_misses,
                r.nr_picks,
                r.max_lateness_ns / 1000,
                r.effective_weight,
                r.cpu_weight,
                if r.guaranteed_shares > 0 {
                    format!(
                        ", {:.2} of {:.2} guaranteed CPUs (asked {:.2})",
                        r.usage_cpus_avg, r.guarantee_granted_cpus, r.guarantee_cpus
                    )
                } else {
                    String::new()
                }
            );
        }
        for cgid in self.bpf.cgroup_ids() {
            let Some(cg) = self.bpf.read_cgroup(cgid) else { continue };
            log::debug!(
                "cgroup {cgid}: parent {} weight {} wsum {} active {} contrib {} usage {} ms",
                cg.parent_cgid, cg.weight, cg.wsum, cg.nr_active, cg.contrib, cg.usage_ns / 1_000_000
            );
        }
    }
}
