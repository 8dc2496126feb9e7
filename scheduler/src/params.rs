//! The configuration in force: its rules matched against the cgroups that exist, and what was
//! written to the BPF side for each (deadlines, guarantee budget, burst buffer, subtree sums),
//! released when a cgroup leaves the configuration or goes.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use std::collections::HashMap;

use anyhow::{Context, Result};
use log::{info, warn};

use crate::config::{self, Params};
use crate::guarantee::{self, Controller};
use crate::maps::Bpf;
use crate::{bpf_intf, limits, stats, walker};

/// A configured cgroup's parameters as written to the BPF side, under the cgroup id they went to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Applied {
    pub cgid: u64,
    pub params: Params,
    /// The budget rate written with its deadlines: its granted guarantee (budget_rate()).
    pub rate: u64,
}

/// The configuration in force and what was written to the BPF side for it.
pub struct InForce {
    /// Where cgroup v2 is mounted.
    pub cgroup_root: PathBuf,
    /// The configuration's rules (paths and patterns), and the entries they give the cgroups that
    /// exist (config::expand), brought up to date every second by the walker.
    pub config: Vec<config::Entry>,
    pub expanded: Vec<config::Entry>,
    /// The configuration as the file (--config) gives it, at start or the last SIGHUP: where the
    /// configuration in force differs, `scx_fdl set` changed it, and only until a restart or a
    /// reload (CgroupReport::runtime_only). Carried over restarts.
    pub file_config: Vec<config::Entry>,
    /// The cgroupfs walk of the pattern rules, on a thread of its own, and the generation of the
    /// rules it walks for (one more at each configuration change).
    walker: walker::Walker,
    rules_generation: u64,
    /// Guarantees in CPUs, from the configuration, and as granted (guarantee::grant).
    pub guarantees: HashMap<PathBuf, f64>,
    pub granted: HashMap<PathBuf, f64>,
    /// CPUs, and fair work's floor as a fraction of them (--fair-floor-permille).
    pub nr_cpus: f64,
    fair_floor: f64,
    /// Configured cgroups that exist, with what was written for them.
    pub applied: HashMap<PathBuf, Applied>,
    /// Configured cgroups whose parameters the BPF side refused (not tracked, no queue left...),
    /// with the reason: tried again at every sync, logged when the reason is new.
    pub refused: HashMap<PathBuf, String>,
    /// The guaranteed cgroups' control loops (their cgroups are summed: set_summed).
    pub controllers: HashMap<PathBuf, Controller>,
    /// The tightest CPU limit on each guaranteed cgroup's path (limit_cpus, 0: none), read once
    /// every second: the guarantee loop runs every 50 ms and must not stat and look up every
    /// ancestor each time (under emulation those syscalls cost 4 % of the machine).
    pub limit_cache: HashMap<PathBuf, f64>,
}

impl InForce {
    /// Nothing configured yet (apply_config gives it its configuration).
    pub fn new(cgroup_root: PathBuf, nr_cpus: f64, fair_floor: f64, file_config: Vec<config::Entry>) -> Result<Self> {
        Ok(InForce {
            cgroup_root,
            config: Vec::new(),
            expanded: Vec::new(),
            file_config,
            walker: walker::Walker::spawn(std::time::Duration::from_secs(1)).context("starting the cgroup walker thread")?,
            rules_generation: 0,
            guarantees: HashMap::new(),
            granted: HashMap::new(),
            nr_cpus,
            fair_floor,
            applied: HashMap::new(),
            refused: HashMap::new(),
            controllers: HashMap::new(),
            limit_cache: HashMap::new(),
        })
    }

    /// Were the cgroup's parameters changed by `scx_fdl set` since the file was read: does the
    /// configuration in force name it otherwise than the file does?
    pub fn runtime_only(&self, path: &Path) -> bool {
        let named = |c: &[config::Entry]| c.iter().find(|e| e.path == path).map(|e| e.params);
        named(&self.config) != named(&self.file_config)
    }

    /// Undoes what was written for a cgroup that left the configuration or was re-created.
    fn release(&mut self, bpf: &Bpf, path: &Path, old: Applied) {
        if old.params.burst_buffer_ns > 0 {
            // The cgroup may be gone already; then there is nothing to undo.
            let _ = bpf.set_buffer(old.cgid, 0);
        }
        if old.params.deadline_rr_ns > 0 {
            // The cgroup may be gone already; then there is nothing to undo.
            let _ = bpf.set_deadlines(old.cgid, 0, 0, 0);
        }
        if let Some(ctl) = self.controllers.remove(path) {
            // The cgroup may be gone already; then there is nothing to undo.
            let _ = bpf.set_summed(old.cgid, false);
            if ctl.boost > 0 {
                let _ = bpf.set_boost(old.cgid, 0);
            }
        }
        self.limit_cache.remove(path);
    }

    /// Makes `config` the configuration in force. It has been validated as a whole.
    pub fn apply_config(&mut self, bpf: &Bpf, config: Vec<config::Entry>) {
        self.expanded = config::expand(&config);
        self.release_unlisted(bpf, "no longer configured: fair, at its cpu.weight");
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
        self.sync_params(bpf);
    }

    /// `apply_config`, all or nothing (`set`, a SIGHUP reload): where the BPF side refuses a cgroup
    /// whose parameters this changes (not tracked, no queue left, ...), the configuration in force
    /// before is back, and the refusals are returned as "path: why". It is applied again; while
    /// the kernel ejects scx_fdl (`Bpf::going`) only restored, since its maps are going and the
    /// restart that follows (CPU hotplug) applies what is in force.
    pub fn apply_config_whole(&mut self, bpf: &Bpf, config: Vec<config::Entry>) -> Result<(), Vec<String>> {
        let (old, before) = (self.config.clone(), self.expanded.clone());
        self.apply_config(bpf, config);
        let refused = self.refused_changes(&before);
        if refused.is_empty() {
            return Ok(());
        }
        if bpf.going() {
            self.config = old;
            self.expanded = before;
        } else {
            self.apply_config(bpf, old);
        }
        Err(refused)
    }

    /// The cgroups whose parameters in force differ from `before` (the entries in force before a
    /// change) and that the BPF side refused, as "path: why".
    fn refused_changes(&self, before: &[config::Entry]) -> Vec<String> {
        let params = |c: &[config::Entry], p: &Path| c.iter().find(|e| e.path == p).map(|e| e.params);
        self.refused
            .iter()
            .filter(|(p, _)| params(before, p) != params(&self.expanded, p))
            .map(|(p, why)| format!("{}: {why}", p.display()))
            .collect()
    }

    /// Releases what was written for cgroups that no entry in force names any longer.
    fn release_unlisted(&mut self, bpf: &Bpf, why: &str) {
        let keep: BTreeSet<&PathBuf> = self.expanded.iter().map(|e| &e.path).collect();
        let gone: Vec<(PathBuf, Applied)> =
            self.applied.iter().filter(|(p, _)| !keep.contains(p)).map(|(p, a)| (p.clone(), *a)).collect();
        self.refused.retain(|p, _| keep.contains(p));
        for (path, old) in gone {
            self.release(bpf, &path, old);
            self.applied.remove(&path);
            info!("{}: {why}", path.display());
        }
    }

    /// Writes the parameters of every configured cgroup that exists under its current cgroup id,
    /// and drops those of cgroups that went away (a re-created cgroup gets a new id). Pattern rules
    /// are matched again: a cgroup created since picks its parameters up here.
    /// A cgroup whose parameters the BPF side refused is in `refused`, fair at its cpu.weight (what
    /// was written for it before is undone) until a sync writes its parameters whole.
    pub fn sync_params(&mut self, bpf: &Bpf) {
        // The walker's newest walk for the rules in force, if one came since (never waits for one).
        if let Some(walk) = self.walker.latest(self.rules_generation) {
            if self.config.iter().any(|e| config::is_pattern(&e.path)) {
                self.expanded = walk.expanded;
                self.release_unlisted(bpf, "removed or no longer matched: its parameters released");
            }
        }
        for entry in self.expanded.clone() {
            let cgid = std::fs::metadata(&entry.path).ok().map(|m| m.ino());
            let old = self.applied.get(&entry.path).copied();
            if let Some(old) = old.filter(|o| Some(o.cgid) != cgid) {
                self.release(bpf, &entry.path, old);
                self.applied.remove(&entry.path);
                info!("{}: removed, its parameters released", entry.path.display());
            }
            let Some(cgid) = cgid else { continue };
            if entry.params.guaranteed_shares > 0 {
                self.limit_cache.insert(entry.path.clone(), bpf.limit_cpus(&self.cgroup_root, &entry.path));
            }
            let rate = self.budget_rate(&entry.path, entry.params);
            if old == Some(Applied { cgid, params: entry.params, rate }) {
                continue;
            }
            if let Err(e) = self.write_params(bpf, &entry.path, cgid, entry.params) {
                // What of it was written (a later write refused after an earlier one went
                // through), and what was applied before, are undone: the cgroup is fair at its
                // cpu.weight until a sync writes its parameters whole.
                if let Some(old) = self.applied.remove(&entry.path) {
                    self.release(bpf, &entry.path, old);
                }
                self.release(bpf, &entry.path, Applied { cgid, params: entry.params, rate });
                let why = format!("{e:#}");
                if self.refused.get(&entry.path) != Some(&why) {
                    warn!("{}: {why}", entry.path.display());
                }
                self.refused.insert(entry.path.clone(), why);
                continue;
            }
            self.refused.remove(&entry.path);
            self.applied.insert(entry.path.clone(), Applied { cgid, params: entry.params, rate });
            let p = entry.params;
            info!(
                "{}: deadline_rr {}, deadline_wakeup {}, guaranteed_shares {}, burst_buffer {}{}",
                entry.path.display(),
                config::format_duration(p.deadline_rr_ns),
                config::format_duration(p.deadline_wakeup_ns),
                p.guaranteed_shares,
                config::format_duration(p.burst_buffer_ns),
                if p.burst_buffer_ns > 0 && bpf.read_cgroup(cgid).is_some_and(|c| c.bw.quota_ns == 0) {
                    " (it has no cpu.max: the buffer applies once it has one)"
                } else {
                    ""
                }
            );
            if let Some(note) = config::fair_order_note(&p, bpf.fair_deadline_ns(), false) {
                warn!("{}: {note}", entry.path.display());
            }
        }
    }

    /// The budget rate of a deadline container's guarantee, as the BPF side takes it (CPUs in
    /// fixed point, 1 << FDL_SHARE_SHIFT per CPU): its granted guarantee, where it has deadlines and
    /// a guarantee; 0 otherwise. Within it, its work runs ahead of all other waiting work (README,
    /// "How it schedules"; fair work it preempted gets that CPU back first: fdl_loan_due).
    fn budget_rate(&self, path: &Path, p: Params) -> u64 {
        if p.deadline_rr_ns == 0 || p.guaranteed_shares == 0 {
            return 0;
        }
        let granted = self.granted.get(path).copied().unwrap_or(0.0);
        (granted * (1u64 << 20) as f64).round() as u64
    }

    fn write_params(&mut self, bpf: &Bpf, path: &Path, cgid: u64, p: Params) -> Result<()> {
        let rate = self.budget_rate(path, p);
        let wanted = (p.deadline_rr_ns, p.deadline_wakeup_ns, rate);
        let was = self
            .applied
            .get(path)
            .filter(|a| a.cgid == cgid)
            .map(|a| (a.params.deadline_rr_ns, a.params.deadline_wakeup_ns, a.rate));
        if wanted != was.unwrap_or((0, 0, 0)) {
            bpf.set_deadlines(cgid, p.deadline_rr_ns, p.deadline_wakeup_ns, rate).context("writing its deadlines")?;
        }
        let was_buffer = self.applied.get(path).filter(|a| a.cgid == cgid).map_or(0, |a| a.params.burst_buffer_ns);
        if p.burst_buffer_ns != was_buffer {
            bpf.set_buffer(cgid, p.burst_buffer_ns).context("writing its burst buffer")?;
        }
        if p.guaranteed_shares > 0 {
            if !self.controllers.contains_key(path) {
                bpf.set_summed(cgid, true).context("summing its subtree's use")?;
                self.controllers.insert(path.to_path_buf(), Controller::default());
            }
        } else if let Some(ctl) = self.controllers.remove(path) {
            bpf.set_summed(cgid, false)?;
            if ctl.boost > 0 {
                bpf.set_boost(cgid, 0)?;
            }
        }
        Ok(())
    }

    /// Reports the limits the BPF side does not hold: a cgroup it does not track (deeper than
    /// FDL_MAX_DEPTH, or beyond its cgroup map) is scheduled as its nearest tracked ancestor, and
    /// its own limit would be lifted silently. Counted in scx_fdl_cgroups_unenforced_cpu_max.
    pub fn check_enforced(&self, bpf: &Bpf, limited: &BTreeMap<PathBuf, limits::Limit>, warned: &mut BTreeSet<PathBuf>) {
        use std::os::unix::fs::MetadataExt;
        let unenforced: BTreeMap<PathBuf, limits::Limit> = limited
            .iter()
            .filter(|(p, _)| {
                std::fs::metadata(p).is_ok_and(|m| bpf.read_cgroup(m.ino()).is_none_or(|c| c.bw.quota_ns == 0))
            })
            .map(|(p, l)| (p.clone(), *l))
            .collect();
        stats::UNENFORCED_CPU_MAX.store(unenforced.len() as u64, Ordering::Relaxed);
        let new: BTreeMap<PathBuf, limits::Limit> =
            unenforced.iter().filter(|(p, _)| !warned.contains(*p)).map(|(p, l)| (p.clone(), *l)).collect();
        if !new.is_empty() {
            warn!(
                "cpu.max NOT enforced for {}: scx_fdl does not track these cgroups (deeper than {} levels, or \
                 beyond --max-cgroups {}), so their tasks are scheduled as their nearest tracked ancestor and \
                 only that ancestor's limit binds them",
                limits::describe(&new),
                bpf_intf::fdl_consts_FDL_MAX_DEPTH,
                bpf.max_cgroups()
            );
        }
        *warned = unenforced.into_keys().collect();
    }
}
