//! The guaranteed_shares control loop's period (guarantee.rs holds the controller itself): each
//! guaranteed cgroup's use read from the BPF side's sums, its guarantee as it stands now, and the
//! effective weight written back.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use log::warn;

use crate::maps::Bpf;
use crate::params::InForce;
use crate::{bpf_intf, guarantee};

impl InForce {
    /// Each guaranteed cgroup's record, read once per period, with the CPU time used and waited
    /// by its subtree since it was summed: its own sums (fdl_sum_charge counts all use below it as
    /// it happens) plus those of the guaranteed cgroups below it, which the BPF side keeps apart.
    /// One map read per guaranteed cgroup, however large the subtrees; each cgroup's sums are
    /// added to its guaranteed ancestors found by its path.
    fn guaranteed_use(&self, bpf: &Bpf) -> HashMap<PathBuf, (bpf_intf::fdl_cgroup, u64, u64)> {
        let mut uses: HashMap<PathBuf, (bpf_intf::fdl_cgroup, u64, u64)> = self
            .controllers
            .keys()
            .filter_map(|p| {
                let c = bpf.read_cgroup_cached(self.applied.get(p)?.cgid)?;
                Some((p.clone(), (c, c.sub_usage_ns, c.sub_wait_ns)))
            })
            .collect();
        let own: Vec<(PathBuf, u64, u64)> =
            uses.iter().map(|(p, (c, _, _))| (p.clone(), c.sub_usage_ns, c.sub_wait_ns)).collect();
        for (path, usage, wait) in own {
            for ancestor in path.ancestors().skip(1) {
                if let Some((_, u, w)) = uses.get_mut(ancestor) {
                    *u += usage;
                    *w += wait;
                }
            }
        }
        uses
    }

    /// One period of the guaranteed_shares control loop.
    pub fn control_guarantees(&mut self, bpf: &Bpf, elapsed: Duration) {
        let paths: Vec<PathBuf> = self.controllers.keys().cloned().collect();
        // Read once per period, not once per cgroup.
        let root_wsum = bpf.root_wsum();
        let scale = bpf.guarantee_scale();
        let uses = self.guaranteed_use(bpf);
        // The references cached are the ones this period read (a cgroup that could not be read
        // dropped its own).
        bpf.keep_refs(&uses.values().map(|(c, _, _)| c.cgid).collect());
        for path in paths {
            let (Some(applied), Some(&granted)) = (self.applied.get(&path).copied(), self.granted.get(&path)) else {
                continue;
            };
            // A CPU limit is a hard ceiling: the loop does not chase a guarantee above it; nor
            // what the BPF side scales the guarantees down to, to leave fair work its share.
            let limit = self.limit_cache.get(&path).copied().unwrap_or(0.0);
            let guarantee = guarantee_now(granted, scale, limit);
            let own = uses.get(&path).map(|(c, _, _)| *c);
            let (usage, wait) = uses.get(&path).map_or((0, 0), |(_, u, w)| (*u, *w));
            // Its unboosted weight: the least while cpu.idle is 1 (bpf/policy/cgroup.h's
            // fdl_cgroup_base_weight); the boost climbs from there.
            let cpu_weight =
                own.map_or(100, |c| if c.idle != 0 { bpf_intf::fdl_consts_FDL_IDLE_WEIGHT } else { c.cpu_weight });
            // A first-level cgroup's weight is computed from the others' (guarantee::weight_for).
            let target = (own.is_some_and(|c| c.level == 1))
                .then(|| root_wsum.map(|w| (w - own.map_or(0, |c| c.contrib)) as f64))
                .flatten()
                .and_then(|w_other| guarantee::weight_for(guarantee, w_other, self.nr_cpus, cpu_weight));
            let ctl = self.controllers.get_mut(&path).unwrap();
            ctl.follow(applied.cgid);
            if let Some(weight) =
                ctl.step(usage, wait, elapsed, guarantee, granted, cpu_weight, target)
            {
                if let Err(e) = bpf.set_boost(applied.cgid, weight) {
                    warn!("{}: {e:#}", path.display());
                }
            }
        }
    }
}

/// A cgroup's guarantee as it stands now: granted, scaled as the BPF side scales the guarantees
/// (Bpf::guarantee_scale), and at most the tightest CPU limit on it (limit_cpus, 0: none).
pub fn guarantee_now(granted: f64, scale: f64, limit_cpus: f64) -> f64 {
    let g = granted * scale;
    if limit_cpus > 0.0 { g.min(limit_cpus) } else { g }
}
