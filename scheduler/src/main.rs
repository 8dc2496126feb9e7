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
mod guarantee_loop;
mod limits;
mod maps;
mod monitor;
mod options;
mod params;
mod preflight;
mod prometheus;
mod reports;
mod signals;
mod stats;
mod stats_server;
mod topology;
mod walker;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use libbpf_rs::libbpf_sys::bpf_object_open_opts;
use libbpf_rs::{Link, OpenObject};
use log::{error, info, warn};
use scx_utils::{compat, scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_read, UserExitInfo};

use bpf_skel::{BpfSkel, BpfSkelBuilder};
use control::{Pending, Request, Response};
use guarantee::Controller;
use params::Applied;
use options::{Command, Opts, EXIT_EJECTED, EXIT_START_FAILED, EXIT_UNENFORCED_LIMIT};

/// Where cgroup v2 is mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Set by SIGHUP: reload the configuration file.
static RELOAD: LazyLock<Arc<AtomicBool>> = LazyLock::new(Default::default);

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
    /// The configuration as the file (--config) gives it, at start or the last SIGHUP: where the
    /// configuration in force differs, `scx_fdl set` changed it, and only until a restart or a
    /// reload (CgroupReport::runtime_only). Carried over restarts.
    file_config: Vec<config::Entry>,
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
            "scx_fdl attached: {nr_cpus} CPUs, slice {} us, wake-up lag {} us, starvation bound {} ms",
            opts.slice_us, opts.wakeup_lag_us, opts.starvation_ms
        );
        let mut sched = Self {
            skel,
            struct_ops: Some(struct_ops),
            cgroup_root: PathBuf::from(CGROUP_ROOT),
            config: Vec::new(),
            expanded: Vec::new(),
            file_config,
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

    /// SIGHUP: the file again, all or nothing. Runtime `set` changes are replaced by the file.
    fn reload(&mut self, file: Option<&Path>) {
        let Some(file) = file else {
            warn!("SIGHUP: no --config file to reload; nothing changed");
            return;
        };
        match config::load(file, &self.cgroup_root) {
            Ok(new) => {
                info!("SIGHUP: reloaded {} ({} cgroups)", file.display(), new.len());
                self.file_config = new.clone();
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
    preflight::check_group_sched(&preflight::kernel_release())?;
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
    let mut file_config = config.clone();
    let mut loads = 0;
    let mut hotplug_retries = 0;
    loop {
        let mut open_object = MaybeUninit::uninit();
        // The kernel refuses an attach if a CPU came or went since the program was opened (its
        // hotplug sequence number changed): loading takes seconds, so a CPU brought back online
        // just after the restart it caused can land inside it. Then try again, a few times.
        let seq = hotplug_seq();
        let mut sched = match Scheduler::init(opts, config.clone(), file_config.clone(), exits.clone(), &mut open_object) {
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
        file_config = std::mem::take(&mut sched.file_config);
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
