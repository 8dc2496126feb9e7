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
mod options;
mod preflight;

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use libbpf_rs::libbpf_sys::bpf_object_open_opts;
use libbpf_rs::{Link, MapCore, MapFlags, OpenObject};
use log::{info, warn};
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_read, UserExitInfo};

use bpf_skel::{BpfSkel, BpfSkelBuilder};
use options::{Opts, EXIT_EJECTED, EXIT_START_FAILED};

/// Where cgroup v2 is mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// A loaded and attached scx_fdl. Dropping it detaches the scheduler.
struct Scheduler<'obj> {
    skel: BpfSkel<'obj>,
    struct_ops: Option<Link>,
    config: Vec<config::Entry>,
    /// Configured cgroups that exist, with the cgroup id their parameters are written under.
    applied: HashMap<PathBuf, u64>,
}

impl<'obj> Scheduler<'obj> {
    fn init(
        opts: &Opts,
        config: Vec<config::Entry>,
        open_object: &'obj mut MaybeUninit<OpenObject>,
    ) -> Result<Self> {
        let mut builder = BpfSkelBuilder::default();
        builder.obj_builder.debug(opts.verbose);
        let mut skel = scx_ops_open!(builder, open_object, fdl_ops, None::<bpf_object_open_opts>)?;

        let nr_cpus = libbpf_rs::num_possible_cpus().context("counting possible CPUs")?;
        let rodata = skel.maps.rodata_data.as_mut().unwrap();
        rodata.slice_ns = opts.slice_us * 1000;
        rodata.wakeup_lag_ns = opts.wakeup_lag_us * 1000;
        rodata.starvation_ns = opts.starvation_ms * 1_000_000;
        rodata.nr_cpus = nr_cpus as u32;
        rodata.stall_pid = opts.test_stall_pid.unwrap_or(0);
        rodata.fair_deadline_ns = opts.fair_deadline_us * 1000;
        if opts.watchdog_timeout_ms > 0 {
            skel.struct_ops.fdl_ops_mut().timeout_ms = opts.watchdog_timeout_ms;
        }
        if let Some(pid) = opts.test_stall_pid {
            warn!("TESTING: task {pid} will never be dispatched; the watchdog must eject scx_fdl");
        }

        let mut skel = scx_ops_load!(skel, fdl_ops, uei)?;
        let struct_ops = scx_ops_attach!(skel, fdl_ops)?;
        info!(
            "scx_fdl attached: {nr_cpus} CPUs, slice {} us, wake-up lag {} us, starvation bound {} ms",
            opts.slice_us, opts.wakeup_lag_us, opts.starvation_ms
        );
        let mut sched = Self { skel, struct_ops: Some(struct_ops), config, applied: HashMap::new() };
        sched.sync_params()?;
        Ok(sched)
    }

    /// Writes the parameters of every configured cgroup that exists under its current cgroup id,
    /// and drops those of cgroups that went away (a re-created cgroup gets a new id).
    fn sync_params(&mut self) -> Result<()> {
        for entry in &self.config {
            let cgid = std::fs::metadata(&entry.path).ok().map(|m| m.ino());
            let old = self.applied.get(&entry.path).copied();
            if cgid == old {
                continue;
            }
            if let Some(old) = old {
                let _ = self.skel.maps.params.delete(&old.to_ne_bytes());
                self.applied.remove(&entry.path);
                info!("{}: removed, its parameters released", entry.path.display());
            }
            if let Some(cgid) = cgid {
                let p = bpf_intf::fdl_params {
                    deadline_rr_ns: entry.params.deadline_rr_ns,
                    deadline_wakeup_ns: entry.params.deadline_wakeup_ns,
                };
                // SAFETY: fdl_params is plain old data shared with the BPF side.
                let bytes = unsafe {
                    std::slice::from_raw_parts(&p as *const _ as *const u8, std::mem::size_of_val(&p))
                };
                self.skel
                    .maps
                    .params
                    .update(&cgid.to_ne_bytes(), bytes, MapFlags::ANY)
                    .with_context(|| format!("writing the parameters of {}", entry.path.display()))?;
                self.applied.insert(entry.path.clone(), cgid);
                info!(
                    "{}: deadline_rr {} us, deadline_wakeup {} us",
                    entry.path.display(),
                    entry.params.deadline_rr_ns / 1000,
                    entry.params.deadline_wakeup_ns / 1000
                );
            }
        }
        Ok(())
    }

    fn read_cgroup(&self, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
        let value = self.skel.maps.cgroups.lookup(&cgid.to_ne_bytes(), MapFlags::ANY).ok()??;
        // SAFETY: the map's value type is fdl_cgroup.
        Some(unsafe { std::ptr::read_unaligned(value.as_ptr() as *const bpf_intf::fdl_cgroup) })
    }

    /// Tells the BPF side how much of the root's weight the deadline containers hold, so that
    /// the fair container's bucket fills at the bandwidth the rest leaves it.
    fn update_dl_wsum(&mut self) {
        let sum: i64 = self.applied.values().filter_map(|&id| self.read_cgroup(id)).map(|c| c.contrib).sum();
        self.skel.maps.bss_data.as_mut().unwrap().dl_wsum = sum;
    }

    /// Runs until shutdown is requested or the kernel ejects the scheduler, then detaches and
    /// returns why it exited.
    fn run(&mut self, shutdown: &AtomicBool, stats_interval: Option<Duration>) -> UserExitInfo {
        let mut last_stats = Instant::now();
        let mut last_sync = Instant::now();
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            std::thread::sleep(Duration::from_millis(100));
            self.update_dl_wsum();
            if last_sync.elapsed() >= Duration::from_secs(1) {
                if let Err(e) = self.sync_params() {
                    warn!("{e:#}");
                }
                last_sync = Instant::now();
            }
            if stats_interval.is_some_and(|every| last_stats.elapsed() >= every) {
                self.log_counters();
                last_stats = Instant::now();
            }
        }
        self.log_counters();
        self.struct_ops.take(); // detach: the kernel records the exit reason synchronously
        uei_read!(&self.skel, uei)
    }

    fn log_counters(&self) {
        let c = &self.skel.maps.bss_data.as_ref().unwrap().counters;
        info!(
            "direct-to-idle {} queued {} idle-kicks {} starvation-clamps {} untracked-cgroups {}",
            c.nr_direct_idle,
            c.nr_fair_enqueued,
            c.nr_idle_kicks,
            c.nr_starvation_clamps,
            c.nr_cgroups_untracked
        );
        info!(
            "deadline-queued {} preempt-kicks {} fair-misses {} fair-max-lateness {} us",
            c.nr_deadline_enqueued,
            c.nr_preempt_kicks,
            c.nr_fair_misses,
            c.fair_max_lateness_ns / 1000
        );
        for (path, &cgid) in &self.applied {
            if let Some(cg) = self.read_cgroup(cgid) {
                info!(
                    "{}: used {} ms, waited {} ms, deadline misses {}, worst lateness {} us",
                    path.display(),
                    cg.usage_ns / 1_000_000,
                    cg.wait_ns / 1_000_000,
                    cg.nr_misses,
                    cg.max_lateness_ns / 1000
                );
            }
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
    let config = match &opts.config {
        Some(path) => config::load(path, Path::new(CGROUP_ROOT))?,
        None => Vec::new(),
    };
    preflight::check(
        Path::new(preflight::SCHED_EXT_SYSFS),
        unsafe { libc::geteuid() },
        &preflight::kernel_release(),
    )?;

    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = shutdown.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("installing the SIGINT/SIGTERM handler")?;

    loop {
        let mut open_object = MaybeUninit::uninit();
        let mut sched = Scheduler::init(opts, config.clone(), &mut open_object)?;
        let uei = sched.run(&shutdown, opts.stats_interval());
        drop(sched);

        if uei.should_restart() && !shutdown.load(Ordering::Relaxed) {
            info!("the kernel asked for a restart (CPU hotplug): reloading");
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

    match run(&opts) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scx_fdl: error: {e:#}");
            ExitCode::from(EXIT_START_FAILED)
        }
    }
}
