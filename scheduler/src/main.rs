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
mod daemon;
mod guarantee;
mod guarantee_loop;
mod limits;
mod load_balance;
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

use std::collections::{BTreeMap, BTreeSet};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use log::{info, warn};

use control::Request;
use daemon::{LimitWatch, Scheduler, CGROUP_ROOT, RELOAD};
use options::{Command, Opts, EXIT_EJECTED, EXIT_START_FAILED, EXIT_UNENFORCED_LIMIT};

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
            rx: limits::watch(PathBuf::from(CGROUP_ROOT), limits::WATCH_PERIOD, Some(&stats::CGROUPS_UNTRACKED)),
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
            rx: limits::watch(PathBuf::from(CGROUP_ROOT), limits::WATCH_PERIOD, None),
            known: limited,
            allow: opts.allow_unenforced_cpu_max,
            refused: None,
        }
    };

    // cpu.idle is honoured through ops.cgroup_set_idle (and ops.cgroup_init's sched_idle). A kernel
    // without it gets the callback left out by scx_ops_load! (with scx_utils' own warning), and an
    // idle cgroup then competes at its cpu.weight: say what that means.
    if matches!(scx_utils::compat::struct_has_field("sched_ext_ops", "cgroup_set_idle"), Ok(true)) {
        info!("cpu.idle: honoured (ops.cgroup_set_idle): a cgroup with cpu.idle 1 weighs the least, cpu.weight 1");
    } else {
        warn!(
            "cpu.idle NOT honoured: this kernel has no ops.cgroup_set_idle, so a cgroup with cpu.idle 1 \
             competes at its cpu.weight"
        );
    }

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
    let control = control::serve(&opts.socket, requests_tx)?;
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
    let code = loop {
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
        config = std::mem::take(&mut sched.cfg.config);
        file_config = std::mem::take(&mut sched.cfg.file_config);
        exits = std::mem::take(&mut sched.exits);
        drop(sched);

        if let Some(why) = limit_watch.refused() {
            log::error!("stopping, so that the kernel's scheduler enforces the limit: {why}");
            break ExitCode::from(EXIT_UNENFORCED_LIMIT);
        }
        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            info!("the kernel asked for a restart (CPU hotplug): reloading");
            *exits.entry("restart".to_string()).or_default() += 1;
            continue;
        }
        break match uei.report() {
            Ok(()) => ExitCode::SUCCESS,
            Err(why) => {
                log::error!("scx_fdl was ejected by the kernel: {why}");
                ExitCode::from(EXIT_EJECTED)
            }
        };
    };
    // Requests still waiting for the loop are answered that nothing was applied (their channel is
    // gone), and the connections already accepted get their answers before the process ends.
    drop(requests);
    control.drain(CONTROL_DRAIN);
    Ok(code)
}

/// How long an exiting scx_fdl waits for its control connections to be answered.
const CONTROL_DRAIN: Duration = Duration::from_secs(2);

/// Attempts to load again when a CPU hotplug event races with loading (see run()).
const HOTPLUG_RETRIES: u32 = 5;

/// The kernel's CPU hotplug sequence number (sched_ext refuses an attach when it changed since the
/// program was opened); None if it cannot be read.
fn hotplug_seq() -> Option<u64> {
    std::fs::read_to_string("/sys/kernel/sched_ext/hotplug_seq").ok()?.trim().parse().ok()
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
        Command::Dump { new_window, window_for } => {
            let req = match (*new_window, window_for) {
                (false, _) => Request::Dump,
                (true, d) => {
                    let window_ns = d.map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64);
                    // The window's end is now + window_ns on the BPF side's clock: a longer one
                    // wrapped, and began a window that had already ended.
                    if window_ns > MAX_WINDOW_NS {
                        bail!("--window-for: at most 1 year (or leave it out: until the next window)");
                    }
                    Request::Window { window_ns }
                }
            };
            let resp = control::request(socket, &req)?;
            // What --new-window began (its number, its length): on stderr, so that stdout stays
            // the dump's JSON for the scripts that read it.
            if let Some(m) = &resp.message {
                eprintln!("{m}");
            }
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

/// The longest lateness window `dump --window-for` takes (a year).
const MAX_WINDOW_NS: u64 = 365 * 24 * 3600 * 1_000_000_000;

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
        _ if opts.help_stats => stats_server::describe(&mut std::io::stdout()).map(|()| ExitCode::SUCCESS),
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
