//! The BPF side's maps and programs, typed: every read of a cgroup's record and every write the
//! control plane makes (effective weight, deadlines, subtree sums, burst buffer) goes through
//! [`Bpf`], so that the byte conversions of intf.h's structs live in one place. The daemon owns the
//! loaded program; the configuration (params.rs), the guarantee loop and the reports borrow it.

use std::path::Path;

use anyhow::{bail, Context, Result};
use libbpf_rs::{MapCore, MapFlags, MapHandle, ProgramInput};
use scx_utils::uei_exited;

use crate::bpf_skel::BpfSkel;
use crate::stats::{self, SchedulerStats};
use crate::{bpf_intf, limits, load_balance, topology};

/// Why a cgroup has no record of its own (its tasks are scheduled as its nearest tracked ancestor).
const UNTRACKED: &str = "deeper than 16 levels, or created when --max-cgroups were tracked already";

/// Runs one of the BPF side's syscall programs (BPF_PROG_RUN) on `args`, which it reads and writes.
/// `T` must be one of the bindgen structs of intf.h: plain old data, shared with the BPF side.
fn run_syscall<T>(prog: &libbpf_rs::ProgramMut<'_>, args: &mut T) -> Result<()> {
    // SAFETY: T is plain old data (see above), borrowed mutably for the call only.
    let bytes = unsafe { std::slice::from_raw_parts_mut(args as *mut T as *mut u8, std::mem::size_of::<T>()) };
    prog.test_run(ProgramInput { context_in: Some(bytes), ..Default::default() })?;
    Ok(())
}

/// Every queue domain's load, brought to now (fdl_read_loads).
fn read_loads(skel: &BpfSkel) -> Result<Box<bpf_intf::fdl_loads_args>> {
    // SAFETY: plain old data, for which all zero is a valid value.
    let mut args: Box<bpf_intf::fdl_loads_args> = Box::new(unsafe { std::mem::zeroed() });
    run_syscall(&skel.progs.fdl_read_loads, args.as_mut()).context("running fdl_read_loads")?;
    Ok(args)
}

/// The loaded BPF program: its maps and syscall programs, typed.
pub struct Bpf<'obj> {
    pub skel: BpfSkel<'obj>,
    /// The queue domains the BPF side was loaded with (tun.cpu_dom): its counters by domain.
    pub doms: topology::Domains,
    /// The guaranteed cgroups' references as last found in `cgroup_refs` (read_cgroup_cached):
    /// the control loop reads their records 20 times a second, and the lookup by id was half of
    /// its system calls (a record read with a stale reference fails its check and looks again).
    /// Only the cgroups of the loop's last period are kept (keep_refs).
    pub refs: std::cell::RefCell<std::collections::HashMap<u64, u64>>,
}

impl Bpf<'_> {
    /// Every queue domain's load, brought to now.
    pub fn read_loads(&self) -> Result<Box<bpf_intf::fdl_loads_args>> {
        read_loads(&self.skel)
    }

    /// The balancer's moves for the period (none: a new period all the same).
    pub fn set_moves(&self, moves: &[load_balance::Move]) -> Result<()> {
        // SAFETY: plain old data, for which all zero is a valid value.
        let mut args: bpf_intf::fdl_moves_args = unsafe { std::mem::zeroed() };
        if moves.len() > args.moves.len() {
            bail!("{} moves asked, at most {} at once", moves.len(), args.moves.len());
        }
        for (slot, m) in args.moves.iter_mut().zip(moves) {
            slot.pid = m.pid;
            slot.dom = m.to as u32;
        }
        args.nr_moves = moves.len() as u32;
        run_syscall(&self.skel.progs.fdl_set_moves, &mut args).context("running fdl_set_moves")?;
        match args.ret {
            0 => Ok(()),
            r => bail!("the BPF side refused the moves ({r}): a domain out of range"),
        }
    }

    /// Begins a new measurement window of the cgroups' worst lateness (fdl_new_window), lasting
    /// window_ns (0: until the next one): the window's number.
    pub fn new_window(&self, window_ns: u64) -> Result<u64> {
        let mut args = bpf_intf::fdl_window_args { window_ns, window: 0 };
        run_syscall(&self.skel.progs.fdl_new_window, &mut args).context("running fdl_new_window")?;
        Ok(args.window)
    }

    /// Sets a cgroup's effective weight (0: back to its cpu.weight) through the BPF side.
    pub fn set_boost(&self, cgid: u64, weight: u32) -> Result<()> {
        let mut args = bpf_intf::fdl_boost_args { cgid, weight, ret: 0 };
        run_syscall(&self.skel.progs.fdl_set_boost, &mut args).context("running fdl_set_boost")?;
        if args.ret != 0 {
            bail!("cgroup {cgid} is not tracked by the BPF side ({}): {UNTRACKED}", args.ret);
        }
        Ok(())
    }

    /// Writes a cgroup's deadlines through the BPF side (both 0: fair again). The container starts
    /// a new bucket; a nested cgroup becomes a container (with a queue of its own).
    pub fn set_deadlines(&self, cgid: u64, rr_ns: u64, wakeup_ns: u64, budget_rate: u64) -> Result<()> {
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
            r if r == -libc::ENOENT => bail!("cgroup {cgid} is not tracked by the BPF side: {UNTRACKED}"),
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
    pub fn set_summed(&self, cgid: u64, on: bool) -> Result<()> {
        let mut args = bpf_intf::fdl_summed_args { cgid, on: on as u32, ret: 0 };
        run_syscall(&self.skel.progs.fdl_set_summed, &mut args).context("running fdl_set_summed")?;
        if args.ret != 0 {
            bail!("cgroup {cgid} is not tracked by the BPF side ({}): {UNTRACKED}", args.ret);
        }
        Ok(())
    }

    /// Writes a cgroup's burst buffer (configuration: burst_buffer; 0: none).
    pub fn set_buffer(&self, cgid: u64, buffer_ns: u64) -> Result<()> {
        let mut args = bpf_intf::fdl_buffer_args { cgid, buffer_ns, ret: 0, __pad: 0 };
        run_syscall(&self.skel.progs.fdl_set_buffer, &mut args).context("running fdl_set_buffer")?;
        match args.ret {
            0 => Ok(()),
            r if r == -libc::ENOENT => bail!("cgroup {cgid} is not tracked by the BPF side: {UNTRACKED}"),
            r => bail!("fdl_set_buffer failed ({r})"),
        }
    }

    /// A cgroup's record (None: not tracked by the BPF side).
    pub fn read_cgroup(&self, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
        read_record(&self.skel.maps.cgroup_refs, &self.skel.maps.cgroups, cgid)
    }

    /// read_cgroup through the cache of references (`refs`): one system call while the
    /// reference holds, for the records read again and again.
    pub fn read_cgroup_cached(&self, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
        let cached = self.refs.borrow().get(&cgid).copied();
        if let Some(record) = cached.and_then(|cgref| read_slot(&self.skel.maps.cgroups, cgid, cgref)) {
            return Some(record);
        }
        let record = read_record(&self.skel.maps.cgroup_refs, &self.skel.maps.cgroups, cgid);
        let mut refs = self.refs.borrow_mut();
        match record {
            Some(r) => refs.insert(cgid, r.cgref),
            None => refs.remove(&cgid),
        };
        record
    }

    /// Forget the cached references of all cgroups but these (the ones read this period): a
    /// cgroup that went, or lost its guarantee, is not kept for good.
    pub fn keep_refs(&self, keep: &std::collections::HashSet<u64>) {
        self.refs.borrow_mut().retain(|cgid, _| keep.contains(cgid));
    }

    /// The cgroups' records through a handle of their own (a duplicate of the map's descriptor),
    /// which the reports thread reads while the loop keeps the program.
    pub fn records(&self) -> Result<CgroupRecords> {
        Ok(CgroupRecords {
            refs: MapHandle::try_from(&self.skel.maps.cgroup_refs).context("duplicating the cgroup_refs map's handle")?,
            records: MapHandle::try_from(&self.skel.maps.cgroups).context("duplicating the cgroups map's handle")?,
        })
    }

    /// The scheduler-wide counters (the caller fills in what the process keeps: exits, loads).
    pub fn scheduler_counts(&self) -> SchedulerStats {
        read_scheduler(&self.skel, &self.doms)
    }

    /// The root cgroup's weight sum: the weights runnable at the first level (the BPF side keeps
    /// it in its state, not in the root's record). None before the BPF side is loaded.
    pub fn root_wsum(&self) -> Option<i64> {
        self.skel.maps.bss_data.as_ref().map(|b| b.fdl.root_wsum)
    }

    /// The BPF side's scale of the guarantees now (stats::guarantee_scale).
    pub fn guarantee_scale(&self) -> f64 {
        stats::guarantee_scale(self.skel.maps.bss_data.as_ref().map_or(0, |b| b.fdl.budget_scale))
    }

    /// The tightest CPU limit (cpu.max) on path, its own or an ancestor's up to `root`, in CPUs;
    /// 0: none.
    pub fn limit_cpus(&self, root: &Path, path: &Path) -> f64 {
        use std::os::unix::fs::MetadataExt;
        let own: Vec<bpf_intf::fdl_cgroup> = path
            .ancestors()
            .take_while(|p| p.starts_with(root))
            .filter_map(|p| self.read_cgroup(std::fs::metadata(p).ok()?.ino()))
            .collect();
        limits::tightest_cpus(own.iter().map(|c| &c.bw))
    }

    /// Cgroups the BPF side could not track since it attached (its counter: removed ones included).
    pub fn cgroups_untracked(&self) -> u64 {
        self.skel.maps.bss_data.as_ref().map_or(0, |b| b.fdl.counters.nr_cgroups_untracked)
    }

    /// The cgroups the BPF side tracks at most (--max-cgroups, as loaded).
    pub fn max_cgroups(&self) -> u32 {
        self.skel.maps.rodata_data.as_ref().map_or(0, |r| r.tun.max_cgroups)
    }

    /// Fair work's deadline_rr (--fair-deadline-us, as loaded), in ns.
    pub fn fair_deadline_ns(&self) -> u64 {
        self.skel.maps.rodata_data.as_ref().map_or(0, |r| r.tun.fair_deadline_ns)
    }

    /// Has the BPF side exited (ejected by the kernel, or unregistered)?
    pub fn exited(&self) -> bool {
        uei_exited!(&self.skel, uei)
    }

    /// Is the kernel taking the BPF side down? Exited, or sched_ext's state no longer `enabled`:
    /// while it disables a scheduler the kernel runs ops.cgroup_exit for every cgroup before the
    /// exit is recorded (exited() is still false), so a cgroup then looks untracked.
    pub fn going(&self) -> bool {
        self.exited() || std::fs::read_to_string("/sys/kernel/sched_ext/state").is_ok_and(|s| s.trim() != "enabled")
    }
}

/// A cgroup's record (None: not tracked by the BPF side): its reference by kernel id in
/// `cgroup_refs`, then the record in that reference's slot of `cgroups`, if the slot still holds
/// that reference (the cgroup may go between the two reads, and its slot to another).
fn read_record(refs: &impl MapCore, records: &impl MapCore, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
    let cgref = u64::from_ne_bytes(refs.lookup(&cgid.to_ne_bytes(), MapFlags::ANY).ok()??.as_slice().try_into().ok()?);
    read_slot(records, cgid, cgref)
}

/// The record in reference cgref's slot of `cgroups`, if that slot holds cgroup cgid under that
/// reference (a reference is never reused for another cgroup in the same slot: it carries a
/// generation, FDL_CGREF_SLOT_MASK).
fn read_slot(records: &impl MapCore, cgid: u64, cgref: u64) -> Option<bpf_intf::fdl_cgroup> {
    let slot = (cgref & bpf_intf::fdl_consts_FDL_CGREF_SLOT_MASK as u64) as u32;
    let value = records.lookup(&slot.to_ne_bytes(), MapFlags::ANY).ok()??;
    if value.len() < std::mem::size_of::<bpf_intf::fdl_cgroup>() {
        return None;
    }
    // SAFETY: the map's value type is fdl_cgroup, and the value is that long.
    let record: bpf_intf::fdl_cgroup = unsafe { std::ptr::read_unaligned(value.as_ptr() as *const _) };
    (record.cgref == cgref && record.cgid == cgid).then_some(record)
}

/// The cgroups' maps, read from any thread: the records the reports walk (stats::Records).
pub struct CgroupRecords {
    refs: MapHandle,
    records: MapHandle,
}

impl stats::Records for CgroupRecords {
    fn read(&self, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
        read_record(&self.refs, &self.records, cgid)
    }

    fn ids(&self) -> Vec<u64> {
        self.refs.keys().filter_map(|k| Some(u64::from_ne_bytes(k.as_slice().try_into().ok()?))).collect()
    }
}

/// Reads the scheduler-wide counters (the cgroup counts and exits are the caller's to fill).
fn read_scheduler(skel: &BpfSkel, doms: &topology::Domains) -> SchedulerStats {
    let mut sum = [0u64; std::mem::size_of::<bpf_intf::fdl_cpu_stats>() / 8];
    let per_cpu = skel.maps.cpu_stats.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY).ok().flatten();
    let mut took: Vec<[u64; bpf_intf::fdl_dom_take_FDL_NR_DOM_TAKE as usize]> = Vec::new();
    for value in per_cpu.unwrap_or_default() {
        // SAFETY: the map's value type is fdl_cpu_stats, all u64.
        let cpu: bpf_intf::fdl_cpu_stats = unsafe { std::ptr::read_unaligned(value.as_ptr() as *const _) };
        took.push(cpu.nr_dom_take);
        let words: [u64; std::mem::size_of::<bpf_intf::fdl_cpu_stats>() / 8] = unsafe { std::mem::transmute(cpu) };
        for (s, w) in sum.iter_mut().zip(words) {
            *s += w;
        }
    }
    // SAFETY: the array has the size and alignment of fdl_cpu_stats, all u64.
    let s: bpf_intf::fdl_cpu_stats = unsafe { std::mem::transmute(sum) };
    let fdl = &skel.maps.bss_data.as_ref().unwrap().fdl;
    let c = &fdl.counters;
    let take = |how: u32| -> std::collections::BTreeMap<String, u64> {
        if doms.labels.len() < 2 {
            return Default::default();
        }
        let per_cpu: Vec<u64> = took.iter().map(|t| t[how as usize]).collect();
        stats::by_domain(&per_cpu, &doms.cpu_dom, &doms.labels)
    };
    let (busy, all, online) = stats::domain_times(&doms.cpu_dom, &doms.labels);
    // Tracked only where the balancer runs (several domains): otherwise none to show.
    let tracked = skel.maps.rodata_data.as_ref().is_some_and(|r| r.tun.load_tracking != 0);
    let loads = if tracked { read_loads(skel).ok() } else { None };
    let per_dom = |f: &dyn Fn(&bpf_intf::fdl_dom_load) -> f64| -> std::collections::BTreeMap<String, f64> {
        let Some(l) = &loads else { return Default::default() };
        doms.labels.iter().zip(l.doms.iter()).map(|(label, d)| (label.clone(), f(d))).collect()
    };
    let scale = (1u64 << bpf_intf::fdl_lb_consts_FDL_PELT_SHIFT) as f64;
    SchedulerStats {
        dispatched: stats::DISPATCH_PATHS.iter().zip(s.nr_dispatched).map(|(p, n)| (p.to_string(), n)).collect(),
        deadline_enqueued: s.nr_deadline_enqueued,
        fair_enqueued: s.nr_fair_enqueued,
        runnable_tasks: s.nr_became_runnable.wrapping_sub(s.nr_stopped_runnable) as i64,
        idle_kicks: s.nr_idle_kicks,
        preempt_kicks: s.nr_preempt_kicks,
        fair_preempts: s.nr_fair_preempts,
        sibling_preempts: s.nr_sibling_preempts,
        preempts_deferred: s.nr_preempts_deferred,
        interactive_wakeups: s.nr_interactive_wakeups,
        starvation_clamps: s.nr_starvation_clamps,
        migrations: s.nr_migrations,
        fair_misses: fdl.fair.nr_misses,
        fair_max_lateness_ns: fdl.fair.max_late.late_ns,
        fair_picks: fdl.fair.nr_picks,
        late_window: fdl.late_window,
        lag_steps: c.nr_lag_steps,
        timer_kicks: s.nr_timer_kicks,
        timer_lapsed: s.nr_timer_lapsed,
        slice_timers: s.nr_slice_timers,
        crossing_timers: s.nr_crossing_timers,
        tick_preempts: s.nr_tick_preempts,
        dispatch_empty: s.nr_dispatch_empty,
        dispatch_empty_queued: s.nr_dispatch_empty_queued,
        dispatch_inflight: s.nr_dispatch_inflight,
        prev_kept_untaken: s.nr_prev_kept_untaken,
        skip_takes: s.nr_skip_takes,
        fair_first: s.nr_fair_first,
        scan_strays: s.nr_scan_strays,
        idle_rechecks: s.nr_idle_rechecks,
        local_waits: s.nr_local_waits,
        wake_queued: s.nr_wake_queued,
        loans_returned: s.nr_loans_returned,
        cgroups_untracked: c.nr_cgroups_untracked,
        guarantee_scale: stats::guarantee_scale(fdl.budget_scale),
        fair_protected_cpus: stats::fixed_cpus(fdl.fair.budget_rate),
        kernel_events: stats::kernel_events(),
        domain_busy_secs: busy,
        domain_cpu_secs: all,
        domain_cpus: online,
        // Counted only with several domains (with one, every take is from it).
        domain_took_own: take(bpf_intf::fdl_dom_take_FDL_DOM_OWN),
        domain_took_steal: take(bpf_intf::fdl_dom_take_FDL_DOM_STEAL),
        domain_took_order: take(bpf_intf::fdl_dom_take_FDL_DOM_ORDER),
        domain_load: per_dom(&|d| d.pelt.load_avg as f64),
        domain_runnable: per_dom(&|d| d.pelt.runnable_avg as f64 / scale),
        domain_util: per_dom(&|d| d.pelt.util_avg as f64 / scale),
        domain_moved_in: per_dom(&|d| d.nr_moved_in as f64).into_iter().map(|(k, v)| (k, v as u64)).collect(),
        balancer_periods: load_balance::PERIODS.load(std::sync::atomic::Ordering::Relaxed),
        balancer_moves: load_balance::MOVES.load(std::sync::atomic::Ordering::Relaxed),
        balancer_deadline_moves: load_balance::DEADLINE_MOVES.load(std::sync::atomic::Ordering::Relaxed),
        ..Default::default()
    }
}
