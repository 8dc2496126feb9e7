//! scx_fdl: the loader and control plane.
//!
//! Parse options, check the kernel can take a scheduler, open the BPF program, set its tunables,
//! load and attach it, then wait until the user stops it or the kernel ejects it. Detaching
//! returns every task to the kernel's default scheduler. When the kernel asks for a restart (CPU
//! hotplug), start over.

mod bpf_skel {
    include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
}
#[allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code)]
mod bpf_intf {
    include!(concat!(env!("OUT_DIR"), "/bpf_intf.rs"));
}
mod config;
mod control;
mod cost;
mod guarantee;
mod limits;
mod monitor;
mod options;
mod preflight;
mod prometheus;
mod signals;
mod stats;
mod stats_server;
mod topology;
mod walker;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use libbpf_rs::libbpf_sys::bpf_object_open_opts;
use libbpf_rs::{Link, MapCore, MapFlags, OpenObject, ProgramInput};
use log::{error, info, warn};
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_read, UserExitInfo};

use bpf_skel::{BpfSkel, BpfSkelBuilder};
use config::Params;
use control::{CgroupReport, Pending, Request, Response};
use guarantee::Controller;
use options::{Command, Opts, EXIT_EJECTED, EXIT_START_FAILED, EXIT_UNENFORCED_LIMIT};
use stats::{CgroupTree, SchedulerStats};

/// Where cgroup v2 is mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Set by SIGHUP: reload the configuration file.
static RELOAD: LazyLock<Arc<AtomicBool>> = LazyLock::new(Default::default);

/// A configured cgroup's parameters as written to the BPF side, under the cgroup id they went to.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Applied {
    cgid: u64,
    params: Params,
    /// The budget rate written with its deadlines: its granted guarantee (budget_rate()).
    rate: u64,
}

/// Runs one of the BPF side's syscall programs (BPF_PROG_RUN) on `args`, which it reads and writes.
/// `T` must be one of the bindgen structs of intf.h: plain old data, shared with the BPF side.
fn run_syscall<T>(prog: &libbpf_rs::ProgramMut<'_>, args: &mut T) -> Result<()> {
    // SAFETY: T is plain old data (see above), borrowed mutably for the call only.
    let bytes = unsafe { std::slice::from_raw_parts_mut(args as *mut T as *mut u8, std::mem::size_of::<T>()) };
    prog.test_run(ProgramInput { context_in: Some(bytes), ..Default::default() })?;
    Ok(())
}

/// How long the loop waits at most when no guarantee needs its period (guarantee::PERIOD, 50 ms):
/// signals (SIGTERM, SIGHUP) and an ejection by the kernel are noticed within this.
const IDLE_POLL: Duration = Duration::from_millis(100);

/// A loaded and attached scx_fdl. Dropping it detaches the scheduler.
struct Scheduler<'obj> {
    skel: BpfSkel<'obj>,
    struct_ops: Option<Link>,
    cgroup_root: PathBuf,
    /// The configuration's rules (paths and patterns), and the entries they give the cgroups that
    /// exist (config::expand), brought up to date every second by the walker.
    config: Vec<config::Entry>,
    expanded: Vec<config::Entry>,
    /// The cgroupfs walk of the pattern rules, on a thread of its own, and the
    /// generation of the rules it walks for (one more at each configuration change).
    walker: walker::Walker,
    rules_generation: u64,
    /// Guarantees in CPUs, from the configuration, and as granted (guarantee::grant).
    guarantees: HashMap<PathBuf, f64>,
    granted: HashMap<PathBuf, f64>,
    /// CPUs, and fair work's floor as a fraction of them (--fair-floor-permille).
    nr_cpus: f64,
    fair_floor: f64,
    /// Configured cgroups that exist, with what was written for them.
    applied: HashMap<PathBuf, Applied>,
    /// The guaranteed cgroups' control loops (their cgroups are summed: set_summed).
    controllers: HashMap<PathBuf, Controller>,
    /// The tightest CPU limit on each guaranteed cgroup's path (limit_cpus, 0: none), read once
    /// every second: the guarantee loop runs every 50 ms and must not stat and look up every
    /// ancestor each time (under emulation those syscalls cost 4 % of the machine).
    limit_cache: HashMap<PathBuf, f64>,
    /// Exits of the BPF scheduler so far (restarts), by reason; carried over restarts.
    exits: BTreeMap<String, u64>,
    /// Times this process loaded the BPF scheduler, this load included.
    loads: u64,
}

impl<'obj> Scheduler<'obj> {
    fn init(
        opts: &Opts,
        config: Vec<config::Entry>,
        exits: BTreeMap<String, u64>,
        open_object: &'obj mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        let mut builder = BpfSkelBuilder::default();
        builder.obj_builder.debug(opts.verbose);
        let mut skel = scx_ops_open!(builder, open_object, fdl_ops, None::<bpf_object_open_opts>)?;

        let nr_cpus = libbpf_rs::num_possible_cpus().context("counting possible CPUs")?;
        match topology::Machine::read() {
            Ok(m) => info!("{}", m.summary()),
            Err(e) => warn!("{e:#}"),
        }
        let tun = &mut skel.maps.rodata_data.as_mut().unwrap().tun;
        tun.slice_ns = opts.slice_us * 1000;
        tun.min_slice_ns = opts.min_slice_us * 1000;
        tun.wakeup_lag_ns = opts.wakeup_lag_us * 1000;
        tun.starvation_ns = opts.starvation_ms * 1_000_000;
        tun.nr_cpus = nr_cpus as u32;
        tun.stall_pid = opts.test_stall_pid.unwrap_or(0);
        tun.fair_deadline_ns = opts.fair_deadline_us * 1000;
        tun.fair_floor_permille = opts.fair_floor_permille;
        tun.guarantee_window_ns = opts.guarantee_window_ms * 1_000_000;
        // Always written: scx_ops_open! has copied SCX_TIMEOUT_MS into it unchecked.
        skel.struct_ops.fdl_ops_mut().timeout_ms = opts.watchdog_timeout()?;
        // 0: the kernel's default (32 KiB). The dump is printed when the kernel ejects scx_fdl.
        skel.struct_ops.fdl_ops_mut().exit_dump_len = opts.exit_dump_len;
        if let Some(pid) = opts.test_stall_pid {
            warn!("TESTING: task {pid} will never be dispatched; the watchdog must eject scx_fdl");
        }

        let load_start = Instant::now();
        let mut skel = scx_ops_load!(skel, fdl_ops, uei)?;
        log_verified_insns(&skel, load_start.elapsed());
        let struct_ops = scx_ops_attach!(skel, fdl_ops)?;
        info!(
            "scx_fdl attached: {nr_cpus} CPUs, slice {} us, wake-up lag {} us, starvation bound {} ms",
            opts.slice_us, opts.wakeup_lag_us, opts.starvation_ms
        );
        let mut sched = Self {
            skel,
            struct_ops: Some(struct_ops),
            cgroup_root: PathBuf::from(CGROUP_ROOT),
            config: Vec::new(),
            expanded: Vec::new(),
            walker: walker::Walker::spawn(Duration::from_secs(1)).context("starting the cgroup walker thread")?,
            rules_generation: 0,
            guarantees: HashMap::new(),
            granted: HashMap::new(),
            nr_cpus: nr_cpus as f64,
            fair_floor: opts.fair_floor_permille as f64 / 1000.0,
            applied: HashMap::new(),
            controllers: HashMap::new(),
            limit_cache: HashMap::new(),
            exits,
            loads: 0,
        };
        sched.apply_config(config);
        Ok(sched)
    }

    /// Sets a cgroup's effective weight (0: back to its cpu.weight) through the BPF side.
    fn set_boost(&self, cgid: u64, weight: u32) -> Result<()> {
        let mut args = bpf_intf::fdl_boost_args { cgid, weight, ret: 0 };
        run_syscall(&self.skel.progs.fdl_set_boost, &mut args).context("running fdl_set_boost")?;
        if args.ret != 0 {
            bail!("cgroup {cgid} is not tracked by the BPF side ({})", args.ret);
        }
        Ok(())
    }

    /// Writes a cgroup's deadlines through the BPF side (both 0: fair again). The container starts
    /// a new bucket; a nested cgroup becomes a container (with a queue of its own).
    fn set_deadlines(&self, cgid: u64, rr_ns: u64, wakeup_ns: u64, budget_rate: u64) -> Result<()> {
        let mut args = bpf_intf::fdl_params_args {
            cgid,
            deadline_rr_ns: rr_ns,
            deadline_wakeup_ns: wakeup_ns,
            budget_rate,
            ret: 0,
            __pad: 0,
        };
        run_syscall(&self.skel.progs.fdl_set_params, &mut args).context("running fdl_set_params")?;
        match args.ret {
            0 => Ok(()),
            r if r == -libc::ENOENT => bail!("cgroup {cgid} is not tracked by the BPF side"),
            r if r == -libc::EINVAL => bail!("the root cgroup cannot have deadlines"),
            r if r == -libc::EEXIST => bail!(
                "it is inside a cgroup that has deadlines: a deadline cgroup's whole subtree is one \
                 deadline container"
            ),
            r if r == -libc::ENOSPC => bail!(
                "it has no queue of its own: at most {} cgroups get one (every first-level cgroup, \
                 and nested ones with deadlines), and the others were first",
                bpf_intf::fdl_consts_FDL_MAX_CONTAINERS
            ),
            r => bail!("fdl_set_params failed ({r})"),
        }
    }

    /// Has the BPF side sum a guaranteed cgroup's subtree use in its record (fdl_set_summed), or
    /// no longer: the guarantee loop then reads one record per guaranteed cgroup.
    fn set_summed(&self, cgid: u64, on: bool) -> Result<()> {
        let mut args = bpf_intf::fdl_summed_args { cgid, on: on as u32, ret: 0 };
        run_syscall(&self.skel.progs.fdl_set_summed, &mut args).context("running fdl_set_summed")?;
        if args.ret != 0 {
            bail!("cgroup {cgid} is not tracked by the BPF side ({})", args.ret);
        }
        Ok(())
    }

    /// Writes a cgroup's burst buffer (configuration: burst_buffer; 0: none).
    fn set_buffer(&self, cgid: u64, buffer_ns: u64) -> Result<()> {
        let mut args = bpf_intf::fdl_buffer_args { cgid, buffer_ns, ret: 0, __pad: 0 };
        run_syscall(&self.skel.progs.fdl_set_buffer, &mut args).context("running fdl_set_buffer")?;
        match args.ret {
            0 => Ok(()),
            r if r == -libc::ENOENT => bail!("cgroup {cgid} is not tracked by the BPF side"),
            r => bail!("fdl_set_buffer failed ({r})"),
        }
    }

    /// Undoes what was written for a cgroup that left the configuration or was re-created.
    fn release(&mut self, path: &Path, old: Applied) {
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
    fn apply_config(&mut self, config: Vec<config::Entry>) {
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
    fn release_unlisted(&mut self, why: &str) {
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
    fn sync_params(&mut self) {
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
    fn budget_rate(&self, path: &Path, p: Params) -> u64 {
        if p.deadline_rr_ns == 0 || p.guaranteed_shares == 0 {
            return 0;
        }
        let granted = self.granted.get(path).copied().unwrap_or(0.0);
        (granted * (1u64 << 20) as f64).round() as u64
    }

    fn write_params(&mut self, path: &Path, cgid: u64, p: Params) -> Result<()> {
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

    fn read_cgroup(&self, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
        let value = self.skel.maps.cgroups.lookup(&cgid.to_ne_bytes(), MapFlags::ANY).ok()??;
        // SAFETY: the map's value type is fdl_cgroup.
        Some(unsafe { std::ptr::read_unaligned(value.as_ptr() as *const bpf_intf::fdl_cgroup) })
    }

    /// CPU time used and waited by a guaranteed cgroup's subtree (record `own`) since it was
    /// summed: its own sums (fdl_sum_charge counts all use below it as it happens) and those of the
    /// guaranteed cgroups below it, which the BPF side keeps apart. One map read per guaranteed
    /// cgroup, however large the subtree.
    fn subtree_use(&self, path: &Path, own: Option<&bpf_intf::fdl_cgroup>) -> (u64, u64) {
        let Some(own) = own else { return (0, 0) };
        self.applied
            .iter()
            .filter(|(p, a)| p.starts_with(path) && *p != path && a.params.guaranteed_shares > 0)
            .filter_map(|(_, a)| self.read_cgroup(a.cgid))
            .fold((own.sub_usage_ns, own.sub_wait_ns), |(u, w), c| (u + c.sub_usage_ns, w + c.sub_wait_ns))
    }

    /// Reports the limits the BPF side does not hold: a cgroup it does not track (deeper than
    /// FDL_MAX_DEPTH, or beyond its cgroup map) is scheduled as its nearest tracked ancestor, and
    /// its own limit would be lifted silently. Counted in scx_fdl_cgroups_unenforced_cpu_max.
    fn check_enforced(&self, limited: &BTreeMap<PathBuf, limits::Limit>, warned: &mut BTreeSet<PathBuf>) {
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

    /// The BPF side's scale of the guarantees now (stats::guarantee_scale).
    fn guarantee_scale(&self) -> f64 {
        stats::guarantee_scale(self.skel.maps.bss_data.as_ref().map_or(0, |b| b.fdl.budget_scale))
    }

    /// The tightest CPU limit (cpu.max) on path, its own or an ancestor's, in CPUs; 0: none.
    fn limit_cpus(&self, path: &Path) -> f64 {
        use std::os::unix::fs::MetadataExt;
        let own: Vec<bpf_intf::fdl_cgroup> = path
            .ancestors()
            .take_while(|p| p.starts_with(&self.cgroup_root))
            .filter_map(|p| self.read_cgroup(std::fs::metadata(p).ok()?.ino()))
            .collect();
        limits::tightest_cpus(own.iter().map(|c| &c.bw))
    }

    /// A cgroup's guarantee as it stands now: granted, scaled as the BPF side scales the
    /// guarantees (guarantee_scale), and at most the tightest CPU limit on it (limit_cpus, 0: none).
    fn guarantee_now(&self, granted: f64, limit_cpus: f64) -> f64 {
        let g = granted * self.guarantee_scale();
        if limit_cpus > 0.0 { g.min(limit_cpus) } else { g }
    }

    /// One period of the guaranteed_shares control loop.
    fn control_guarantees(&mut self, elapsed: Duration) {
        let paths: Vec<PathBuf> = self.controllers.keys().cloned().collect();
        // Read once per period, not once per cgroup: every lookup is a syscall.
        let root_wsum = self.read_cgroup(1).map(|root| root.wsum);
        for path in paths {
            let (Some(applied), Some(&guarantee)) = (self.applied.get(&path).copied(), self.granted.get(&path)) else {
                continue;
            };
            // A CPU limit is a hard ceiling: the loop does not chase a guarantee above it; nor
            // what the BPF side scales the guarantees down to, to leave fair work its share.
            let limit = self.limit_cache.get(&path).copied().unwrap_or(0.0);
            let guarantee = self.guarantee_now(guarantee, limit);
            let own = self.read_cgroup(applied.cgid);
            let (usage, wait) = self.subtree_use(&path, own.as_ref());
            let cpu_weight = own.map_or(100, |c| c.cpu_weight);
            // A first-level cgroup's weight is computed from the others' (guarantee::weight_for).
            let target = (own.is_some_and(|c| c.level == 1))
                .then(|| root_wsum.map(|w| (w - own.map_or(0, |c| c.contrib)) as f64))
                .flatten()
                .and_then(|w_other| guarantee::weight_for(guarantee, w_other, self.nr_cpus, cpu_weight));
            let ctl = self.controllers.get_mut(&path).unwrap();
            ctl.follow(applied.cgid);
            if let Some(weight) =
                ctl.step(usage, wait, elapsed, guarantee, applied.params.guaranteed_shares, cpu_weight, target)
            {
                if let Err(e) = self.set_boost(applied.cgid, weight) {
                    warn!("{}: {e:#}", path.display());
                }
            }
        }
    }

    /// Every cgroup with its figures, read now.
    fn cgroup_tree(&self) -> CgroupTree {
        CgroupTree::walk(&self.cgroup_root, |cgid| self.read_cgroup(cgid))
    }

    /// A cgroup's parameters and figures, from a tree read by cgroup_tree().
    fn report(&self, path: &Path, tree: &CgroupTree) -> CgroupReport {
        let params = self.expanded.iter().find(|e| e.path == path).map(|e| e.params).unwrap_or_default();
        let node = tree.get(path);
        let mut r = CgroupReport {
            path: path.display().to_string(),
            present: node.is_some(),
            deadline_rr_ns: params.deadline_rr_ns,
            deadline_wakeup_ns: params.deadline_wakeup_ns,
            guaranteed_shares: params.guaranteed_shares,
            guarantee_cpus: self.guarantees.get(path).copied().unwrap_or(0.0),
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
        r.guarantee_granted_cpus = self.guarantee_now(self.granted.get(path).copied().unwrap_or(0.0), r.limit_cpus);
        if let Some(ctl) = self.controllers.get(path) {
            r.usage_cpus_avg = ctl.usage_cpus;
            r.attainment = ctl.attainment(r.guarantee_granted_cpus);
        }
        r
    }

    /// Configured cgroups, first-level cgroups and cgroups with a CPU limit, in path order.
    fn listed_paths(&self, tree: &CgroupTree) -> BTreeSet<PathBuf> {
        let mut paths: BTreeSet<PathBuf> = self.expanded.iter().map(|e| e.path.clone()).collect();
        paths.extend(tree.limited().map(Path::to_path_buf));
        if let Ok(dir) = std::fs::read_dir(&self.cgroup_root) {
            paths.extend(dir.flatten().map(|d| d.path()).filter(|p| p.join("cgroup.procs").exists()));
        }
        paths
    }

    fn handle(&mut self, req: Request) -> Result<Response> {
        let list = matches!(req, Request::List);
        let (paths, message) = match req {
            Request::Set { cgroup, assign } => {
                // The BPF side has exited: its maps are about to go, so a write would be lost.
                if uei_exited!(&self.skel, uei) {
                    bail!("scx_fdl is being ejected by the kernel (its log gives the reason): nothing was applied");
                }
                let new = config::apply_set(&self.config, &self.cgroup_root, &cgroup, &assign)?;
                let path = config::resolve_path(&self.cgroup_root, &cgroup)?;
                self.apply_config(new);
                let message = format!("{}: set {}", path.display(), assign.join(" "));
                info!("control: {message}");
                (vec![path], Some(message))
            }
            Request::Get { cgroup } => {
                let path = config::resolve_path(&self.cgroup_root, &cgroup)?;
                if !path.exists() && !self.expanded.iter().any(|e| e.path == path) {
                    bail!("cgroup {}: no such cgroup", path.display());
                }
                (vec![path], None)
            }
            Request::List => (self.listed_paths(&self.cgroup_tree()).into_iter().collect(), None),
            Request::Dump => {
                let (scheduler, cgroups) = self.snapshot();
                let cgroups = cgroups.into_iter().map(|(_, r)| r).collect();
                return Ok(Response { ok: true, cgroups, scheduler: Some(scheduler), ..Default::default() });
            }
        };
        let tree = self.cgroup_tree();
        let cgroups = paths.iter().map(|p| self.report(p, &tree)).collect();
        let scheduler = list.then(|| self.scheduler_stats());
        Ok(Response { ok: true, message, cgroups, scheduler, ..Default::default() })
    }

    /// Scheduler-wide figures, with the exits so far.
    fn scheduler_stats(&self) -> SchedulerStats {
        SchedulerStats {
            exits: self.exits.clone(),
            loads: self.loads,
            cgroups_unenforced_cpu_max: stats::UNENFORCED_CPU_MAX.load(Ordering::Relaxed),
            ..stats::read_scheduler(&self.skel)
        }
    }

    /// Everything at once, for `dump` and the metrics: scheduler-wide figures, and the reports of
    /// the cgroups exported (configured first, then by depth; at most MAX_EXPORTED_CGROUPS), each
    /// with its label.
    fn snapshot(&self) -> (SchedulerStats, Vec<(String, CgroupReport)>) {
        let tree = self.cgroup_tree();
        let configured: HashSet<&Path> = self.expanded.iter().map(|e| e.path.as_path()).collect();
        let (nodes, dropped) = tree.exported(&configured, stats::MAX_EXPORTED_CGROUPS);
        let cgroups: Vec<(String, CgroupReport)> = nodes
            .iter()
            .map(|n| (stats::cgroup_label(&self.cgroup_root, &n.path), self.report(&n.path, &tree)))
            .collect();
        let scheduler = SchedulerStats { cgroups_exported: cgroups.len(), cgroups_dropped: dropped, ..self.scheduler_stats() };
        (scheduler, cgroups)
    }

    /// The scx_stats figures: scheduler-wide, and the cgroups `list` shows.
    fn metrics(&self) -> stats_server::Metrics {
        let tree = self.cgroup_tree();
        let reports: Vec<CgroupReport> = self.listed_paths(&tree).iter().map(|p| self.report(p, &tree)).collect();
        stats_server::Metrics::of(&self.scheduler_stats(), &reports)
    }

    /// SIGHUP: the file again, all or nothing. Runtime `set` changes are replaced by the file.
    fn reload(&mut self, file: Option<&Path>) {
        let Some(file) = file else {
            warn!("SIGHUP: no --config file to reload; nothing changed");
            return;
        };
        match config::load(file, &self.cgroup_root) {
            Ok(new) => {
                info!("SIGHUP: reloaded {} ({} cgroups)", file.display(), new.len());
                self.apply_config(new);
            }
            Err(e) => error!("SIGHUP: {e:#}; the configuration in force is unchanged"),
        }
    }

    /// Runs until shutdown is requested or the kernel ejects the scheduler, then detaches and
    /// returns why it exited.
    fn run(
        &mut self,
        opts: &Opts,
        shutdown: &AtomicBool,
        requests: &Receiver<Pending>,
        stats: &stats_server::Server,
        limits: &mut LimitWatch,
    ) -> UserExitInfo {
        let start = Instant::now();
        let (mut last_control, mut last_sync, mut last_stats) = (start, start, start);
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            // The guarantee loop's period while there is a guarantee to keep; otherwise only the
            // requests, signals and the once-a-second jobs: no wake-up every 50 ms for nothing.
            let wait = if self.controllers.is_empty() {
                IDLE_POLL
            } else {
                guarantee::PERIOD.saturating_sub(last_control.elapsed())
            };
            match requests.recv_timeout(wait) {
                Ok(pending) => pending.answer(|req| self.handle(req).unwrap_or_else(|e| Response::error(&e))),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
            // scx_stats readers (--stats, --monitor) wait for the figures of the moment.
            stats.answer(|| self.metrics());
            if RELOAD.swap(false, Ordering::Relaxed) {
                self.reload(opts.config.as_deref());
            }
            if !limits.poll() {
                break;
            }
            if let LimitWatch::Enforced { rx, warned } = limits {
                while let Ok(now) = rx.try_recv() {
                    self.check_enforced(&now, warned);
                }
            }
            if self.controllers.is_empty() {
                last_control = Instant::now();
            } else if last_control.elapsed() >= guarantee::PERIOD {
                self.control_guarantees(last_control.elapsed());
                last_control = Instant::now();
            }
            if last_sync.elapsed() >= Duration::from_secs(1) {
                self.sync_params();
                last_sync = Instant::now();
            }
            if opts.stats_interval().is_some_and(|every| last_stats.elapsed() >= every) {
                self.log_counters();
                last_stats = Instant::now();
            }
        }
        self.log_counters();
        self.struct_ops.take(); // detach: the kernel records the exit reason synchronously
        uei_read!(&self.skel, uei)
    }

    fn log_counters(&self) {
        let s = stats::read_scheduler(&self.skel);
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
        for path in self.applied.keys() {
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
        for key in self.skel.maps.cgroups.keys() {
            let cgid = u64::from_ne_bytes(key.as_slice().try_into().unwrap());
            let Some(cg) = self.read_cgroup(cgid) else { continue };
            log::debug!(
                "cgroup {cgid}: parent {} weight {} wsum {} active {} contrib {} usage {} ms",
                cg.parent_cgid, cg.weight, cg.wsum, cg.nr_active, cg.contrib, cg.usage_ns / 1_000_000
            );
        }
    }
}

fn run(opts: &Opts) -> Result<ExitCode> {
    opts.validate()?;
    let mut config = match &opts.config {
        Some(path) => config::load(path, Path::new(CGROUP_ROOT))?,
        None => Vec::new(),
    };
    preflight::check(
        Path::new(preflight::SCHED_EXT_SYSFS),
        unsafe { libc::geteuid() },
        &preflight::kernel_release(),
    )?;
    // cpu.max is enforced through ops.cgroup_set_bandwidth (kernel >= 6.17). Without it, limits
    // would be silently removed: refuse while a cgroup has one, unless explicitly accepted.
    let enforced = limits::kernel_enforces();
    let mut limit_watch = if enforced {
        info!("cpu.max: enforced (ops.cgroup_set_bandwidth)");
        LimitWatch::Enforced {
            rx: limits::watch(PathBuf::from(CGROUP_ROOT), limits::WATCH_PERIOD),
            warned: BTreeSet::new(),
        }
    } else {
        let limited = limits::limited(Path::new(CGROUP_ROOT));
        if !limited.is_empty() {
            if !opts.allow_unenforced_cpu_max {
                bail!(limits::refusal(&limited));
            }
            warn!("not enforced (--allow-unenforced-cpu-max): {}", limits::describe(&limited));
        }
        LimitWatch::Unenforced {
            rx: limits::watch(PathBuf::from(CGROUP_ROOT), limits::WATCH_PERIOD),
            known: limited,
            allow: opts.allow_unenforced_cpu_max,
            refused: None,
        }
    };

    let shutdown = Arc::new(AtomicBool::new(false));
    signals::install(&shutdown, &RELOAD)?;
    if let Some(dir) = opts.socket.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Control requests and Prometheus scrapes reach the loop through one channel.
    let (requests_tx, requests) = mpsc::channel();
    if opts.enable_prometheus {
        prometheus::serve(opts.prometheus_addr, requests_tx.clone(), Path::new(CGROUP_ROOT))?;
        info!("serving Prometheus metrics on http://{}/metrics", opts.prometheus_addr);
    }
    control::serve(&opts.socket, requests_tx)?;
    let _socket = RemoveOnDrop(opts.socket.clone());
    let stats_server = stats_server::Server::launch().context("starting the scx_stats server")?;
    if let Some(every) = opts.stats {
        let stop = shutdown.clone();
        std::thread::Builder::new()
            .name("fdl-stats".into())
            .spawn(move || {
                if let Err(e) = stats_server::monitor(Duration::from_secs_f64(every), || stop.load(Ordering::Relaxed)) {
                    warn!("--stats: {e:#}");
                }
            })
            .context("starting the --stats thread")?;
    }

    let mut exits = BTreeMap::new();
    let mut loads = 0;
    let mut hotplug_retries = 0;
    loop {
        let mut open_object = MaybeUninit::uninit();
        // The kernel refuses an attach if a CPU came or went since the program was opened (its
        // hotplug sequence number changed): loading takes seconds, so a CPU brought back online
        // just after the restart it caused can land inside it. Then try again, a few times.
        let seq = hotplug_seq();
        let mut sched = match Scheduler::init(opts, config.clone(), exits.clone(), &mut open_object) {
            Ok(sched) => sched,
            Err(e) if hotplug_retries < HOTPLUG_RETRIES && hotplug_seq() != seq => {
                hotplug_retries += 1;
                warn!("a CPU came or went while scx_fdl was loading ({e:#}): loading again ({hotplug_retries} of {HOTPLUG_RETRIES})");
                continue;
            }
            Err(e) => return Err(e),
        };
        hotplug_retries = 0;
        loads += 1;
        sched.loads = loads;
        let uei = sched.run(opts, &shutdown, &requests, &stats_server, &mut limit_watch);
        config = std::mem::take(&mut sched.config);
        exits = std::mem::take(&mut sched.exits);
        drop(sched);

        if let Some(why) = limit_watch.refused() {
            log::error!("stopping, so that the kernel's scheduler enforces the limit: {why}");
            return Ok(ExitCode::from(EXIT_UNENFORCED_LIMIT));
        }
        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            info!("the kernel asked for a restart (CPU hotplug): reloading");
            *exits.entry("restart".to_string()).or_default() += 1;
            continue;
        }
        return Ok(match uei.report() {
            Ok(()) => ExitCode::SUCCESS,
            Err(why) => {
                log::error!("scx_fdl was ejected by the kernel: {why}");
                ExitCode::from(EXIT_EJECTED)
            }
        });
    }
}

/// Attempts to load again when a CPU hotplug event races with loading (see run()).
const HOTPLUG_RETRIES: u32 = 5;

/// The kernel's CPU hotplug sequence number (sched_ext refuses an attach when it changed since the
/// program was opened); None if it cannot be read.
fn hotplug_seq() -> Option<u64> {
    std::fs::read_to_string("/sys/kernel/sched_ext/hotplug_seq").ok()?.trim().parse().ok()
}

/// Logs how many instructions the kernel's verifier processed for the programs (the
/// `verified_insns` of their bpf_prog_info), and how long loading took: the policy's verification
/// cost, which grows with its branches and loops and shows first under emulation.
fn log_verified_insns(skel: &BpfSkel, took: Duration) {
    use libbpf_rs::skel::Skel;
    use std::os::fd::{AsFd, AsRawFd};
    let mut counts = Vec::new();
    for prog in skel.object().progs() {
        let mut info = libbpf_rs::libbpf_sys::bpf_prog_info::default();
        let mut len = std::mem::size_of_val(&info) as u32;
        // SAFETY: a valid program fd and an info buffer of the length given.
        let ret = unsafe {
            libbpf_rs::libbpf_sys::bpf_prog_get_info_by_fd(prog.as_fd().as_raw_fd(), &mut info, &mut len)
        };
        if ret == 0 {
            counts.push(format!("{} {}", prog.name().to_string_lossy(), info.verified_insns));
        }
    }
    info!("loaded in {:.1} s; instructions verified: {}", took.as_secs_f64(), counts.join(", "));
}

/// CPU limits: enforced by the BPF side, or, on a kernel without ops.cgroup_set_bandwidth, the
/// cgroups with a limit as the watcher last saw them (limits::watch) and what to do about a new one.
enum LimitWatch {
    /// Enforced by the BPF side: the watcher's news are checked against its records, so that a
    /// limit it does not hold (a cgroup deeper than it tracks, or beyond its map) is reported.
    Enforced {
        rx: Receiver<BTreeMap<PathBuf, limits::Limit>>,
        /// Cgroups already reported as not enforced.
        warned: BTreeSet<PathBuf>,
    },
    Unenforced {
        rx: Receiver<BTreeMap<PathBuf, limits::Limit>>,
        known: BTreeMap<PathBuf, limits::Limit>,
        allow: bool,
        /// Set when a new limit made scx_fdl stop: the message.
        refused: Option<String>,
    },
}

impl LimitWatch {
    /// Set when a new, unenforceable limit made scx_fdl stop: the message.
    fn refused(&mut self) -> Option<String> {
        match self {
            LimitWatch::Enforced { .. } => None,
            LimitWatch::Unenforced { refused, .. } => refused.take(),
        }
    }

    /// Takes the watcher's news. Returns false when scx_fdl must stop: a cgroup got a limit that
    /// this kernel does not let scx_fdl enforce, and running without enforcement was not accepted.
    fn poll(&mut self) -> bool {
        let LimitWatch::Unenforced { rx, known, allow, refused } = self else {
            return true;
        };
        let allow = *allow;
        while let Ok(now) = rx.try_recv() {
            let new: BTreeMap<PathBuf, limits::Limit> =
                now.iter().filter(|(p, l)| known.get(*p) != Some(l)).map(|(p, l)| (p.clone(), *l)).collect();
            stats::UNENFORCED_CPU_MAX.store(if allow { now.len() as u64 } else { 0 }, Ordering::Relaxed);
            *known = now;
            if new.is_empty() {
                continue;
            }
            if !allow {
                *refused = Some(limits::refusal(&new));
                return false;
            }
            warn!("not enforced (--allow-unenforced-cpu-max): {}", limits::describe(&new));
        }
        true
    }
}

/// Removes the control socket when the scheduler stops.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The subcommands: one request to the running scheduler, its answer printed (`check` needs none).
fn client(cmd: &Command, socket: &Path) -> Result<()> {
    let (req, json) = match cmd {
        Command::Check { config } => {
            print!("{}", config::check(config, Path::new(CGROUP_ROOT))?);
            return Ok(());
        }
        Command::Set { cgroup, assignments } => {
            (Request::Set { cgroup: cgroup.clone(), assign: assignments.clone() }, false)
        }
        Command::Get { cgroup, json } => (Request::Get { cgroup: cgroup.clone() }, *json),
        Command::List { json } => (Request::List, *json),
        Command::Topology { json } => {
            let m = topology::Machine::read()?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&m)?);
            } else {
                print!("{}", m.table());
            }
            return Ok(());
        }
        Command::Cost { secs, json } => {
            let (ops, callbacks) = cost::measure(Duration::from_secs(*secs))?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "ops": ops, "secs": secs, "callbacks": callbacks }))?);
            } else {
                print!("{}", cost::table(&ops, &callbacks, *secs as f64));
            }
            return Ok(());
        }
        Command::Dump => {
            let resp = control::request(socket, &Request::Dump)?;
            let dump = serde_json::json!({ "scheduler": resp.scheduler, "cgroups": resp.cgroups });
            println!("{}", serde_json::to_string_pretty(&dump)?);
            return Ok(());
        }
    };
    let resp = control::request(socket, &req)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&resp.cgroups)?);
    } else {
        if let Some(m) = &resp.message {
            println!("{m}");
        }
        print!("{}", monitor::table(&resp.cgroups, None));
    }
    Ok(())
}

fn main() -> ExitCode {
    let opts = Opts::parse();
    let level = if opts.verbose { log::LevelFilter::Debug } else { log::LevelFilter::Info };
    simplelog::TermLogger::init(
        level,
        simplelog::ConfigBuilder::new().set_time_level(log::LevelFilter::Off).build(),
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Never,
    )
    .expect("logger initialised twice");

    let result = match (&opts.command, opts.monitor_interval()) {
        (Some(cmd), _) => client(cmd, &opts.socket).map(|()| ExitCode::SUCCESS),
        _ if opts.help_stats => stats_server::server_data()
            .describe_meta(&mut std::io::stdout(), None)
            .map(|()| ExitCode::SUCCESS),
        (None, Some(every)) => stats_server::monitor(every, || false).map(|()| ExitCode::SUCCESS),
        (None, None) => run(&opts),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scx_fdl: error: {e:#}");
            ExitCode::from(EXIT_START_FAILED)
        }
    }
}
