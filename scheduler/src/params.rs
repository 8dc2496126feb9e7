//! The configuration in force: its rules matched against the cgroups that exist, and what was
//! written to the BPF side for each (deadlines, guarantee budget, burst buffer, subtree sums),
//! released when a cgroup leaves the configuration or goes.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use log::{info, warn};

use crate::config::{self, Params};
use crate::guarantee::{self, Controller};
use crate::{bpf_intf, limits, stats, Scheduler};

/// A configured cgroup's parameters as written to the BPF side, under the cgroup id they went to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Applied {
    pub cgid: u64,
    pub params: Params,
    /// The budget rate written with its deadlines: its granted guarantee (budget_rate()).
    pub rate: u64,
}

impl Scheduler<'_> {
    /// Undoes what was written for a cgroup that left the configuration or was re-created.
    pub(crate) fn release(&mut self, path: &Path, old: Applied) {
        if old.params.burst_buffer_ns > 0 {
            // The cgroup may be gone already; then there is nothing to undo.
            let _ = self.set_buffer(old.cgid, 0);
        }
        if old.params.deadline_rr_ns > 0 {
            // The cgroup may be gone already; then there is nothing to undo.
            let _ = self.set_deadlines(old.cgid, 0, 0, 0);
        }
        if let Some(ctl) = self.controllers.remove(path) {
            // The cgroup may be gone already; then there is nothing to undo.
            let _ = self.set_summed(old.cgid, false);
            if ctl.boost > 0 {
                let _ = self.set_boost(old.cgid, 0);
            }
        }
        self.limit_cache.remove(path);
    }

    /// Makes `config` the configuration in force. It has been validated as a whole.
    pub(crate) fn apply_config(&mut self, config: Vec<config::Entry>) {
        self.expanded = config::expand(&config);
        self.release_unlisted("no longer configured: fair, at its cpu.weight");
        self.guarantees = config::guarantees_cpus(&config, &self.cgroup_root);
        let (granted, factor) = guarantee::grant(&self.guarantees, &self.cgroup_root, self.nr_cpus, self.fair_floor);
        if factor < 1.0 {
            warn!(
                "the guarantees ask {:.2} CPUs; {:.2} CPUs can be guaranteed ({} CPUs less fair work's floor \
                 of {:.0} %): every guarantee is granted {:.0} % of what it asks (see scx_fdl list)",
                guarantee::machine_sum(&self.guarantees, &self.cgroup_root),
                self.nr_cpus * (1.0 - self.fair_floor),
                self.nr_cpus,
                self.fair_floor * 100.0,
                factor * 100.0
            );
        }
        self.granted = granted;
        self.rules_generation += 1;
        self.walker.rules(self.rules_generation, config.clone());
        self.config = config;
        self.sync_params();
    }

    /// Releases what was written for cgroups that no entry in force names any longer.
    pub(crate) fn release_unlisted(&mut self, why: &str) {
        let keep: BTreeSet<&PathBuf> = self.expanded.iter().map(|e| &e.path).collect();
        let gone: Vec<(PathBuf, Applied)> =
            self.applied.iter().filter(|(p, _)| !keep.contains(p)).map(|(p, a)| (p.clone(), *a)).collect();
        for (path, old) in gone {
            self.release(&path, old);
            self.applied.remove(&path);
            info!("{}: {why}", path.display());
        }
    }

    /// Writes the parameters of every configured cgroup that exists under its current cgroup id,
    /// and drops those of cgroups that went away (a re-created cgroup gets a new id). Pattern rules
    /// are matched again: a cgroup created since picks its parameters up here.
    pub(crate) fn sync_params(&mut self) {
        // The walker's newest walk for the rules in force, if one came since (never waits for one).
        if let Some(walk) = self.walker.latest(self.rules_generation) {
            if self.config.iter().any(|e| config::is_pattern(&e.path)) {
                self.expanded = walk.expanded;
                self.release_unlisted("removed or no longer matched: its parameters released");
            }
        }
        for entry in self.expanded.clone() {
            let cgid = std::fs::metadata(&entry.path).ok().map(|m| m.ino());
            let old = self.applied.get(&entry.path).copied();
            if let Some(old) = old.filter(|o| Some(o.cgid) != cgid) {
                self.release(&entry.path, old);
                self.applied.remove(&entry.path);
                info!("{}: removed, its parameters released", entry.path.display());
            }
            let Some(cgid) = cgid else { continue };
            if entry.params.guaranteed_shares > 0 {
                self.limit_cache.insert(entry.path.clone(), self.limit_cpus(&entry.path));
            }
            let rate = self.budget_rate(&entry.path, entry.params);
            if old == Some(Applied { cgid, params: entry.params, rate }) {
                continue;
            }
            if let Err(e) = self.write_params(&entry.path, cgid, entry.params) {
                warn!("{}: {e:#}", entry.path.display());
                continue;
            }
            self.applied.insert(entry.path.clone(), Applied { cgid, params: entry.params, rate });
            let p = entry.params;
            info!(
                "{}: deadline_rr {}, deadline_wakeup {}, guaranteed_shares {}, burst_buffer {}{}",
                entry.path.display(),
                config::format_duration(p.deadline_rr_ns),
                config::format_duration(p.deadline_wakeup_ns),
                p.guaranteed_shares,
                config::format_duration(p.burst_buffer_ns),
                if p.burst_buffer_ns > 0 && self.read_cgroup(cgid).is_some_and(|c| c.bw.quota_ns == 0) {
                    " (it has no cpu.max: the buffer applies once it has one)"
                } else {
                    ""
                }
            );
        }
    }

    /// The budget rate of a deadline container's guarantee, as the BPF side takes it (CPUs in
    /// fixed point, 1 << FDL_SHARE_SHIFT per CPU): its granted guarantee, where it has deadlines and
    /// a guarantee; 0 otherwise. Within it, its work runs ahead of all other work (README, "How it
    /// schedules").
    pub(crate) fn budget_rate(&self, path: &Path, p: Params) -> u64 {
        if p.deadline_rr_ns == 0 || p.guaranteed_shares == 0 {
            return 0;
        }
        let granted = self.granted.get(path).copied().unwrap_or(0.0);
        (granted * (1u64 << 20) as f64).round() as u64
    }

    pub(crate) fn write_params(&mut self, path: &Path, cgid: u64, p: Params) -> Result<()> {
        let rate = self.budget_rate(path, p);
        let wanted = (p.deadline_rr_ns, p.deadline_wakeup_ns, rate);
        let was = self
            .applied
            .get(path)
            .filter(|a| a.cgid == cgid)
            .map(|a| (a.params.deadline_rr_ns, a.params.deadline_wakeup_ns, a.rate));
        if wanted != was.unwrap_or((0, 0, 0)) {
            self.set_deadlines(cgid, p.deadline_rr_ns, p.deadline_wakeup_ns, rate).context("writing its deadlines")?;
        }
        let was_buffer = self.applied.get(path).filter(|a| a.cgid == cgid).map_or(0, |a| a.params.burst_buffer_ns);
        if p.burst_buffer_ns != was_buffer {
            self.set_buffer(cgid, p.burst_buffer_ns).context("writing its burst buffer")?;
        }
        if p.guaranteed_shares > 0 {
            if !self.controllers.contains_key(path) {
                self.set_summed(cgid, true).context("summing its subtree's use")?;
                self.controllers.insert(path.to_path_buf(), Controller::default());
            }
        } else if let Some(ctl) = self.controllers.remove(path) {
            self.set_summed(cgid, false)?;
            if ctl.boost > 0 {
                self.set_boost(cgid, 0)?;
            }
        }
        Ok(())
    }

    /// Reports the limits the BPF side does not hold: a cgroup it does not track (deeper than
    /// FDL_MAX_DEPTH, or beyond its cgroup map) is scheduled as its nearest tracked ancestor, and
    /// its own limit would be lifted silently. Counted in scx_fdl_cgroups_unenforced_cpu_max.
    pub(crate) fn check_enforced(&self, limited: &BTreeMap<PathBuf, limits::Limit>, warned: &mut BTreeSet<PathBuf>) {
        use std::os::unix::fs::MetadataExt;
        let unenforced: BTreeMap<PathBuf, limits::Limit> = limited
            .iter()
            .filter(|(p, _)| {
                std::fs::metadata(p).is_ok_and(|m| self.read_cgroup(m.ino()).is_none_or(|c| c.bw.quota_ns == 0))
            })
            .map(|(p, l)| (p.clone(), *l))
            .collect();
        stats::UNENFORCED_CPU_MAX.store(unenforced.len() as u64, Ordering::Relaxed);
        let new: BTreeMap<PathBuf, limits::Limit> =
            unenforced.iter().filter(|(p, _)| !warned.contains(*p)).map(|(p, l)| (p.clone(), *l)).collect();
        if !new.is_empty() {
            warn!(
                "cpu.max NOT enforced for {}: scx_fdl does not track these cgroups (deeper than {} levels, or \
                 beyond {} cgroups), so their tasks are scheduled as their nearest tracked ancestor and \
                 only that ancestor's limit binds them",
                limits::describe(&new),
                bpf_intf::fdl_consts_FDL_MAX_DEPTH,
                bpf_intf::fdl_consts_FDL_MAX_CGROUPS
            );
        }
        *warned = unenforced.into_keys().collect();
    }
}
