//! The BPF side's maps and programs, typed: every read of a cgroup's record and every write the
//! control plane makes (effective weight, deadlines, subtree sums, burst buffer) goes through here,
//! so that the byte conversions of intf.h's structs live in one place.

use anyhow::{bail, Context, Result};
use libbpf_rs::{MapCore, MapFlags, ProgramInput};

use crate::{bpf_intf, stats, Scheduler};

/// Runs one of the BPF side's syscall programs (BPF_PROG_RUN) on `args`, which it reads and writes.
/// `T` must be one of the bindgen structs of intf.h: plain old data, shared with the BPF side.
fn run_syscall<T>(prog: &libbpf_rs::ProgramMut<'_>, args: &mut T) -> Result<()> {
    // SAFETY: T is plain old data (see above), borrowed mutably for the call only.
    let bytes = unsafe { std::slice::from_raw_parts_mut(args as *mut T as *mut u8, std::mem::size_of::<T>()) };
    prog.test_run(ProgramInput { context_in: Some(bytes), ..Default::default() })?;
    Ok(())
}

impl Scheduler<'_> {
    /// Sets a cgroup's effective weight (0: back to its cpu.weight) through the BPF side.
    pub(crate) fn set_boost(&self, cgid: u64, weight: u32) -> Result<()> {
        let mut args = bpf_intf::fdl_boost_args { cgid, weight, ret: 0 };
        run_syscall(&self.skel.progs.fdl_set_boost, &mut args).context("running fdl_set_boost")?;
        if args.ret != 0 {
            bail!("cgroup {cgid} is not tracked by the BPF side ({})", args.ret);
        }
        Ok(())
    }

    /// Writes a cgroup's deadlines through the BPF side (both 0: fair again). The container starts
    /// a new bucket; a nested cgroup becomes a container (with a queue of its own).
    pub(crate) fn set_deadlines(&self, cgid: u64, rr_ns: u64, wakeup_ns: u64, budget_rate: u64) -> Result<()> {
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
    pub(crate) fn set_summed(&self, cgid: u64, on: bool) -> Result<()> {
        let mut args = bpf_intf::fdl_summed_args { cgid, on: on as u32, ret: 0 };
        run_syscall(&self.skel.progs.fdl_set_summed, &mut args).context("running fdl_set_summed")?;
        if args.ret != 0 {
            bail!("cgroup {cgid} is not tracked by the BPF side ({})", args.ret);
        }
        Ok(())
    }

    /// Writes a cgroup's burst buffer (configuration: burst_buffer; 0: none).
    pub(crate) fn set_buffer(&self, cgid: u64, buffer_ns: u64) -> Result<()> {
        let mut args = bpf_intf::fdl_buffer_args { cgid, buffer_ns, ret: 0, __pad: 0 };
        run_syscall(&self.skel.progs.fdl_set_buffer, &mut args).context("running fdl_set_buffer")?;
        match args.ret {
            0 => Ok(()),
            r if r == -libc::ENOENT => bail!("cgroup {cgid} is not tracked by the BPF side"),
            r => bail!("fdl_set_buffer failed ({r})"),
        }
    }

    pub(crate) fn read_cgroup(&self, cgid: u64) -> Option<bpf_intf::fdl_cgroup> {
        let value = self.skel.maps.cgroups.lookup(&cgid.to_ne_bytes(), MapFlags::ANY).ok()??;
        // SAFETY: the map's value type is fdl_cgroup.
        Some(unsafe { std::ptr::read_unaligned(value.as_ptr() as *const bpf_intf::fdl_cgroup) })
    }

    /// The BPF side's scale of the guarantees now (stats::guarantee_scale).
    pub(crate) fn guarantee_scale(&self) -> f64 {
        stats::guarantee_scale(self.skel.maps.bss_data.as_ref().map_or(0, |b| b.fdl.budget_scale))
    }
}
