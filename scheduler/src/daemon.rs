//! The daemon: loads and attaches the BPF program, then runs the scheduler's loop (control
//! requests, statistics, SIGHUP reloads, the guarantee loop's period, the once-a-second jobs)
//! until it is stopped or the kernel ejects the program, and detaches. It owns the loaded program
//! (maps::Bpf) and the configuration in force (params::InForce); the guarantee loop, the reports
//! and the configuration borrow them. main.rs restarts it when the kernel asks.

use std::collections::{BTreeMap, BTreeSet};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use libbpf_rs::libbpf_sys::bpf_object_open_opts;
use libbpf_rs::{Link, OpenObject};
use log::{error, info, warn};
use scx_utils::{compat, scx_ops_attach, scx_ops_load, scx_ops_open, uei_read, UserExitInfo};

use crate::bpf_skel::{BpfSkel, BpfSkelBuilder};
use crate::control::Pending;
use crate::maps::Bpf;
use crate::options::{FairProtection, Opts};
use crate::params::InForce;
use crate::reports::{self, Job, Records, Reports, View};
use crate::{config, guarantee, limits, load_balance, stats, stats_server, topology};

/// Where cgroup v2 is mounted.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Set by SIGHUP: reload the configuration file.
pub static RELOAD: LazyLock<Arc<AtomicBool>> = LazyLock::new(Default::default);

/// How long the loop waits at most when no guarantee needs its period (guarantee::PERIOD, 50 ms):
/// signals (SIGTERM, SIGHUP) and an ejection by the kernel are noticed within this.
const IDLE_POLL: Duration = Duration::from_millis(100);

/// A loaded and attached scx_fdl. Dropping it detaches the scheduler.
pub struct Scheduler<'obj> {
    bpf: Bpf<'obj>,
    struct_ops: Option<Link>,
    /// The configuration in force and what was written for it.
    pub cfg: InForce,
    /// Exits of the BPF scheduler so far (restarts), by reason; carried over restarts.
    pub exits: BTreeMap<String, u64>,
    /// Times this process loaded the BPF scheduler, this load included.
    pub loads: u64,
    /// The cgroups' records, read by the reports thread, which makes every report.
    records: Arc<dyn Records>,
    reports: Reports,
    /// The load balancer (None: one queue domain, or --balance-interval-ms 0).
    balancer: Option<load_balance::Balancer>,
}

impl<'obj> Scheduler<'obj> {
    /// Opens, configures, loads and attaches the BPF program, then applies `config` (the
    /// configuration in force; `file_config`: the file's, see InForce::file_config).
    pub fn init(
        opts: &Opts,
        config: Vec<config::Entry>,
        file_config: Vec<config::Entry>,
        exits: BTreeMap<String, u64>,
        open_object: &'obj mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        let builder = BpfSkelBuilder::default();
        // libbpf's messages go to the log, as the published schedulers route them: warnings always
        // (a program the verifier refuses is logged with the verifier's whole log), and its
        // debug output with -v. (ObjectBuilder::debug(false) would silence libbpf altogether.)
        scx_utils::init_libbpf_logging(Some(if opts.verbose {
            libbpf_rs::PrintLevel::Debug
        } else {
            libbpf_rs::PrintLevel::Warn
        }));
        let mut skel = scx_ops_open!(builder, open_object, fdl_ops, None::<bpf_object_open_opts>)?;

        // Possible CPUs size the tables (CPU ids); online ones are the capacity every share,
        // bandwidth and slice is counted in (a hotplug restarts scx_fdl, which counts again).
        let nr_cpu_ids = libbpf_rs::num_possible_cpus().context("counting possible CPUs")?;
        let max_doms = crate::bpf_intf::fdl_consts_FDL_MAX_DOMS as usize;
        let (doms, online) = match topology::Machine::read() {
            Ok(m) => {
                info!("{}", m.summary());
                let doms = if opts.flat_queues { topology::Domains::flat(nr_cpu_ids) } else { m.domains(max_doms)? };
                (doms, m.online)
            }
            Err(e) => {
                warn!("{e:#}: one queue domain for the machine, as with --flat-queues");
                (topology::Domains::flat(nr_cpu_ids), topology::online_cpus()?)
            }
        };
        let tun_cpus = crate::bpf_intf::fdl_consts_FDL_MAX_CPUS as usize;
        if online.is_empty() || nr_cpu_ids > tun_cpus || online.iter().any(|&c| c >= nr_cpu_ids) {
            bail!("{} online CPUs ({}) of {nr_cpu_ids} possible: scx_fdl's tables hold CPU ids below {tun_cpus}",
                  online.len(), topology::ranges(&online));
        }
        let nr_cpus = online.len();
        info!("{}{}", doms.summary(), if opts.flat_queues { " (--flat-queues)" } else { "" });
        for map in [&mut skel.maps.cgroups, &mut skel.maps.cgroup_refs] {
            map.set_max_entries(opts.max_cgroups).context("sizing the cgroups' maps (--max-cgroups)")?;
        }
        let tun = &mut skel.maps.rodata_data.as_mut().unwrap().tun;
        tun.max_cgroups = opts.max_cgroups;
        tun.nr_doms = doms.order.len() as u32;
        for (cpu, &d) in doms.cpu_dom.iter().enumerate().take(tun.cpu_dom.len()) {
            tun.cpu_dom[cpu] = d as u8;
        }
        for (d, order) in doms.order.iter().enumerate() {
            for (k, &e) in order.iter().enumerate() {
                tun.dom_order[d][k] = e as u8;
            }
            tun.dom_node[d] = doms.node[d] as i32;
            tun.dom_cpu[d] = doms.first_cpu(d) as u16;
        }
        // Load tracking costs every wake-up and switch a little: only where the balancer uses it.
        tun.load_tracking = load_balance::Balancer::wanted(opts.balance_interval_ms, doms.node.len()) as u32;
        tun.slice_ns = opts.slice_us * 1000;
        tun.min_slice_ns = opts.min_slice_us * 1000;
        tun.slice_floor_ns = opts.slice_floor_us * 1000;
        tun.wakeup_lag_ns = opts.wakeup_lag_us * 1000;
        tun.starvation_ns = opts.starvation_ms * 1_000_000;
        tun.nr_cpus = nr_cpus as u32;
        tun.nr_cpu_ids = nr_cpu_ids as u32;
        for (i, &cpu) in online.iter().enumerate() {
            tun.online_cpu[i] = cpu as u16;
        }
        tun.stall_pid = opts.test_stall_pid.unwrap_or(0);
        tun.fair_deadline_ns = opts.fair_deadline_us * 1000;
        tun.fair_preempt_ns = opts.fair_preempt_us * 1000;
        tun.sibling_preempt_ns = opts.sibling_preempt_us * 1000;
        tun.lazy_preempt_ns = opts.lazy_preempt_us * 1000;
        tun.interactive_ns = opts.interactive_us * 1000;
        tun.interactive_window_ns = opts.interactive_window_ms * 1_000_000;
        tun.interactive_max_rate = opts.interactive_max_rate;
        tun.fair_floor_permille = opts.fair_floor_permille;
        tun.fair_protect = match opts.fair_protection {
            FairProtection::Weighted => crate::bpf_intf::fdl_fair_protect_FDL_FAIR_PROTECT_WEIGHTED,
            FairProtection::Floor => {
                info!(
                    "--fair-protection floor: guarantees are never scaled; fair work keeps what they leave, at least {} per mille",
                    opts.fair_floor_permille
                );
                crate::bpf_intf::fdl_fair_protect_FDL_FAIR_PROTECT_FLOOR
            }
        } as u32;
        tun.guarantee_window_ns = opts.guarantee_window_ms * 1_000_000;
        // Always written: scx_ops_open! has copied SCX_TIMEOUT_MS into it unchecked.
        skel.struct_ops.fdl_ops_mut().timeout_ms = opts.watchdog_timeout()?;
        // 0: the kernel's default (32 KiB). The dump is printed when the kernel ejects scx_fdl.
        skel.struct_ops.fdl_ops_mut().exit_dump_len = opts.exit_dump_len;
        // Queued wake-ups: a task woken onto another CPU is activated by that CPU (the wake list
        // and its interrupt), not by the waker under the target's run-queue lock. scx_fdl does not
        // depend on select_cpu preceding enqueue (the kernel skips select_cpu for a task still
        // leaving its CPU): enqueue picks an idle CPU or a victim itself.
        let queued = *compat::SCX_OPS_ALLOW_QUEUED_WAKEUP;
        if opts.no_queued_wakeups {
            info!("queued wake-ups off (--no-queued-wakeups)");
        } else if queued == 0 {
            info!("queued wake-ups: not in this kernel (SCX_OPS_ALLOW_QUEUED_WAKEUP, 6.15): off");
        } else {
            skel.struct_ops.fdl_ops_mut().flags |= queued;
        }
        if let Some(pid) = opts.test_stall_pid {
            warn!("TESTING: task {pid} will never be dispatched; the watchdog must eject scx_fdl");
        }

        let load_start = Instant::now();
        let mut skel = scx_ops_load!(skel, fdl_ops, uei)?;
        log_verified_insns(&skel, load_start.elapsed());
        let struct_ops = scx_ops_attach!(skel, fdl_ops)?;
        info!(
            "scx_fdl attached: {nr_cpus} CPUs online of {nr_cpu_ids} possible, slice {} us, wake-up lag {} us, starvation bound {} ms",
            opts.slice_us, opts.wakeup_lag_us, opts.starvation_ms
        );
        let cfg = InForce::new(
            PathBuf::from(CGROUP_ROOT),
            nr_cpus as f64,
            opts.fair_floor_permille as f64 / 1000.0,
            file_config,
        )?;
        let balancer = load_balance::Balancer::new(
            Duration::from_millis(opts.balance_interval_ms),
            doms.node.clone(),
            nr_cpus,
        );
        match &balancer {
            Some(b) => info!("load balancer: every {} ms across {} domains", b.every.as_millis(), doms.node.len()),
            None if doms.node.len() > 1 => info!("load balancer: off (--balance-interval-ms 0)"),
            None => info!("load balancer: not needed with one queue domain"),
        }
        let bpf = Bpf { skel, doms, refs: Default::default() };
        let records: Arc<dyn Records> = Arc::new(bpf.records()?);
        let reports = Reports::spawn()?;
        let mut sched =
            Self { bpf, struct_ops: Some(struct_ops), cfg, exits, loads: 0, records, reports, balancer };
        sched.cfg.apply_config(&sched.bpf, config);
        Ok(sched)
    }

    /// What the reports need of the loop's state, now (the reports thread walks the cgroups).
    fn view(&self) -> View {
        View::of(&self.bpf, &self.records, &self.cfg, &self.exits, self.loads)
    }

    /// SIGHUP: the file again, all or nothing. Runtime `set` changes are replaced by the file.
    fn reload(&mut self, file: Option<&Path>) {
        let Some(file) = file else {
            warn!("SIGHUP: no --config file to reload; nothing changed");
            return;
        };
        let new = match config::load(file, &self.cfg.cgroup_root) {
            Ok(new) => new,
            Err(e) => return error!("SIGHUP: {e:#}; the configuration in force is unchanged"),
        };
        // All or nothing, as `set`: a cgroup whose parameters the file changes and the BPF side
        // refuses (no queue left for a pattern's hundredth pod, ...) undoes the whole reload.
        // Applied in part, the reload said "reloaded" while some of the file's cgroups stayed fair.
        match self.cfg.apply_config_whole(&self.bpf, new.clone()) {
            Ok(()) => {
                info!("SIGHUP: reloaded {} ({} cgroups)", file.display(), new.len());
                self.cfg.file_config = new;
            }
            Err(refused) if self.bpf.going() => {
                error!("SIGHUP: {}; scx_fdl is being ejected: nothing was applied", refused.join("; "))
            }
            Err(refused) => error!("SIGHUP: {}; the configuration in force is unchanged", refused.join("; ")),
        }
    }

    /// Runs until shutdown is requested or the kernel ejects the scheduler, then detaches and
    /// returns why it exited.
    pub fn run(
        &mut self,
        opts: &Opts,
        shutdown: &AtomicBool,
        requests: &Receiver<Pending>,
        stats: &stats_server::Server,
        limits: &mut LimitWatch,
    ) -> UserExitInfo {
        let start = Instant::now();
        let (mut last_control, mut last_sync, mut last_stats) = (start, start, start);
        while !shutdown.load(Ordering::Relaxed) && !self.bpf.exited() {
            // The guarantee loop's period while there is a guarantee to keep; otherwise only the
            // requests, signals and the once-a-second jobs: no wake-up every 50 ms for nothing.
            let wait = if self.cfg.controllers.is_empty() {
                IDLE_POLL
            } else {
                guarantee::PERIOD.saturating_sub(last_control.elapsed())
            };
            match requests.recv_timeout(wait) {
                Ok(pending) => {
                    if let Some((request, message, reply)) = reports::take(&self.bpf, &mut self.cfg, pending) {
                        self.reports.send(Job::Answer { view: self.view(), request, message, reply });
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
            // scx_stats readers (--stats, --monitor) wait for the figures of the moment.
            for to in stats.waiting() {
                self.reports.send(Job::Metrics { view: self.view(), to });
            }
            if RELOAD.swap(false, Ordering::Relaxed) {
                self.reload(opts.config.as_deref());
            }
            if !limits.poll() {
                break;
            }
            if let LimitWatch::Enforced { rx, warned } = limits {
                stats::CGROUPS_UNTRACKED.store(self.bpf.cgroups_untracked(), Ordering::Relaxed);
                while let Ok(now) = rx.try_recv() {
                    self.cfg.check_enforced(&self.bpf, &now, warned);
                }
            }
            if self.cfg.controllers.is_empty() {
                last_control = Instant::now();
            } else if last_control.elapsed() >= guarantee::PERIOD {
                self.cfg.control_guarantees(&self.bpf, last_control.elapsed());
                last_control = Instant::now();
            }
            if let Some(b) = self.balancer.as_mut().filter(|b| b.due()) {
                b.run(&self.bpf);
            }
            if last_sync.elapsed() >= Duration::from_secs(1) {
                self.cfg.sync_params(&self.bpf);
                last_sync = Instant::now();
            }
            if opts.stats_interval().is_some_and(|every| last_stats.elapsed() >= every) {
                self.reports.send(Job::Log { view: self.view() });
                last_stats = Instant::now();
            }
        }
        self.reports.send(Job::Log { view: self.view() });
        self.struct_ops.take(); // detach: the kernel records the exit reason synchronously
        uei_read!(&self.bpf.skel, uei)
    }
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
pub enum LimitWatch {
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
    pub fn refused(&mut self) -> Option<String> {
        match self {
            LimitWatch::Enforced { .. } => None,
            LimitWatch::Unenforced { refused, .. } => refused.take(),
        }
    }

    /// Takes the watcher's news. Returns false when scx_fdl must stop: a cgroup got a limit that
    /// this kernel does not let scx_fdl enforce, and running without enforcement was not accepted.
    pub fn poll(&mut self) -> bool {
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

