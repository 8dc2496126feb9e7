//! The guaranteed_shares control loop: bandwidth guarantees enforced through effective weights.
//!
//! Guarantees are first made feasible ([`grant`]): where the machine's guarantees ask more than
//! the machine can give after fair work's floor, each is scaled down in proportion. As in the FDL
//! design, every period a cgroup with a guarantee has its CPU use and its waiting measured and
//! averaged (EMA, weight 10/1024 per 10 ms: about a second; the loop runs every 50 ms and applies
//! the RFC's per-10-ms steps five at a time). If it uses less than its granted guarantee and it is
//! waiting for CPU (wait > 100/1024 of its use), a first-level cgroup gets at once the weight that
//! gives it its guarantee against the others' weight ([`weight_for`]), corrected by a feedback
//! factor while it still falls short (nested cgroups climb step by step, up to ten times the weight
//! their guarantee stands for); otherwise the boost decays back to its cpu.weight, within half a
//! second once the cgroup uses no CPU at all (its demand went away). The BPF side uses
//! the effective weight for the cgroup's share and its deadline bandwidth.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;


/// How often the loop runs. The RFC ran it every 10 ms; every run costs a wake-up and a few map
/// lookups, which under emulation took 4 % of a 2-CPU machine at 10 ms (two guaranteed cgroups).
/// The computed weight (weight_for) converges in a step or two, so 50 ms still meets a guarantee
/// within a second.
pub const PERIOD: Duration = Duration::from_millis(50);

/// The step the rates below are given per (the RFC's period): a run `elapsed` after the last
/// applies elapsed / STEP of them.
const STEP: Duration = Duration::from_millis(10);

/// EMA weight of one step's measurement, out of 1024 (10/1024 per 10 ms: about a second).
const EMA_WEIGHT: f64 = 10.0 / 1024.0;
/// A cgroup is short of CPU when its waiting exceeds this fraction of its use.
const WAIT_RATIO: f64 = 100.0 / 1024.0;
/// A boost rises by this fraction per step while the cgroup is short...
const RISE: f64 = 1.0 / 16.0;
/// ...and decays by this fraction of its excess over cpu.weight per step otherwise...
const DECAY: f64 = 1.0 / 32.0;
/// ...or by this one once it used no CPU in a period: its demand went away, and its boost is
/// released within half a second (weight 945 is back at cpu.weight 100 after 50 steps; at DECAY it
/// still stood 4 % of the way up after a second), while a pause of one 50 ms period keeps half.
const DECAY_IDLE: f64 = 1.0 / 8.0;
/// Use in a period below this (CPUs) is no use: the cgroup's demand stopped.
const IDLE_CPUS: f64 = 0.001;
/// Ceiling of a boost, as a multiple of the weight the guarantee stands for.
const MAX_BOOST: f64 = 10.0;
/// cpu.weight's upper bound: boosts stay within the range the kernel allows cgroups.
const WEIGHT_MAX: f64 = 10_000.0;
/// cpu.weight standing for a guarantee of one CPU, as 1024 CFS shares stand for cpu.weight 100.
const WEIGHT_PER_CPU: f64 = 100.0;
/// The feedback factor on the computed weight: its change per step while the cgroup is still
/// short at that weight, and its bounds.
const CORR_STEP: f64 = 1.0 / 64.0;
const CORR_MAX: f64 = 4.0;

/// Guarantees as granted: where the guarantees of the machine (in CPUs, `asked`: those whose parent
/// has none, at any depth; the others are parts of their parent's) ask more than `nr_cpus` minus
/// fair work's floor, every guarantee is scaled by the same factor, so the machine's sum to what it
/// can give and the others keep their part of their parent's. Returns the granted guarantees and
/// the factor (1.0: all feasible).
pub fn grant(asked: &HashMap<PathBuf, f64>, cgroup_root: &Path, nr_cpus: f64, fair_floor: f64) -> (HashMap<PathBuf, f64>, f64) {
    let capacity = nr_cpus * (1.0 - fair_floor.clamp(0.0, 1.0));
    let first_level = machine_sum(asked, cgroup_root);
    let factor = if first_level > capacity && first_level > 0.0 { capacity / first_level } else { 1.0 };
    (asked.iter().map(|(p, g)| (p.clone(), g * factor)).collect(), factor)
}

/// What the guarantees of the machine ask together: those of cgroups whose parent has none.
pub fn machine_sum(asked: &HashMap<PathBuf, f64>, cgroup_root: &Path) -> f64 {
    asked
        .iter()
        .filter(|(p, _)| p.parent().is_none_or(|parent| parent == cgroup_root || !asked.contains_key(parent)))
        .map(|(_, g)| g)
        .sum()
}

/// The weight a first-level cgroup needs for `guarantee_cpus` of `nr_cpus` when the other active
/// first-level cgroups weigh `w_other` together: its share w / (w + W_other) of the machine must
/// be g / C, so
///
///     w = g * W_other / (C - g)
///
/// within [cpu_weight, 10000]. None when the guarantee is the whole machine or more.
pub fn weight_for(guarantee_cpus: f64, w_other: f64, nr_cpus: f64, cpu_weight: u32) -> Option<f64> {
    if guarantee_cpus <= 0.0 || guarantee_cpus >= nr_cpus {
        return None;
    }
    let w = guarantee_cpus * w_other.max(0.0) / (nr_cpus - guarantee_cpus);
    Some(w.clamp(cpu_weight.max(1) as f64, WEIGHT_MAX))
}

/// One guaranteed cgroup's loop state.
#[derive(Debug, Clone)]
pub struct Controller {
    /// Averaged CPU use and waiting, in CPUs.
    pub usage_cpus: f64,
    pub wait_cpus: f64,
    /// Effective weight applied; 0: no boost (the cgroup runs at its cpu.weight).
    pub boost: u32,
    /// Feedback factor on the computed weight (1.0: the computation was right).
    pub corr: f64,
    /// The highest cumulative counters fed so far, and the cgroup id they belong to.
    last: Option<(u64, u64)>,
    cgid: u64,
}

impl Default for Controller {
    fn default() -> Self {
        Self { usage_cpus: 0.0, wait_cpus: 0.0, boost: 0, corr: 1.0, last: None, cgid: 0 }
    }
}

impl Controller {
    /// The cgroup the counters come from: a new one (re-created under the same path) starts its
    /// counts from zero, so the next step only takes them as a starting point.
    pub fn follow(&mut self, cgid: u64) {
        if self.cgid != cgid {
            self.cgid = cgid;
            self.last = None;
        }
    }

    /// Feeds one period's cumulative counters (ns of CPU used and waited by the cgroup's subtree),
    /// `elapsed` after the previous call. `guarantee_cpus`: the guarantee to meet now (scaled, at
    /// most its limit: guarantee_now); `granted_cpus`: the guarantee as granted, in CPUs, whose
    /// weight the boost may rise to ten times. `target`: the weight [`weight_for`] computes for a
    /// first-level cgroup (None for nested ones: they climb). Returns the new effective weight when
    /// it changed (0: back to cpu.weight).
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        usage_ns: u64,
        wait_ns: u64,
        elapsed: Duration,
        guarantee_cpus: f64,
        granted_cpus: f64,
        cpu_weight: u32,
        target: Option<f64>,
    ) -> Option<u32> {
        let Some((last_usage, last_wait)) = self.last else {
            self.last = Some((usage_ns, wait_ns));
            return None;
        };
        // A sum that went down: a descendant was removed and its counts are on their way into its
        // parent's (fdl_cgroup_exit). Keep the high-water marks, so that what comes back is not
        // taken for new use (it was: a jump of the child's whole lifetime decayed needed boosts).
        self.last = Some((usage_ns.max(last_usage), wait_ns.max(last_wait)));
        let secs = elapsed.as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        let usage = usage_ns.saturating_sub(last_usage) as f64 / 1e9 / secs;
        let wait = wait_ns.saturating_sub(last_wait) as f64 / 1e9 / secs;
        // Steps of the RFC's 10 ms period this run stands for (5 at the 50 ms period).
        let n = secs / STEP.as_secs_f64();
        let alpha = (1.0 - (1.0 - EMA_WEIGHT).powf(n)).min(1.0);
        self.usage_cpus += alpha * (usage - self.usage_cpus);
        self.wait_cpus += alpha * (wait - self.wait_cpus);

        let base = cpu_weight.max(1) as f64;
        // In CPUs, not guaranteed_shares: below a guaranteed parent the shares only split the
        // parent's guarantee among siblings (config::guarantees_cpus), so 100 shares there could
        // stand for half a CPU, and a ceiling of 10 x 100 shares' weight (98) sat below cpu.weight:
        // such a cgroup was never boosted.
        let ceiling = (MAX_BOOST * granted_cpus * WEIGHT_PER_CPU).clamp(base, WEIGHT_MAX);
        let current = if self.boost > 0 { self.boost as f64 } else { base };
        // Short: it waited for CPU in this period (the averages would notice a demand that stopped
        // only a second later) and its averaged use is below the guarantee (5 % hysteresis, so a
        // guarantee just met keeps its weight).
        let waiting = wait > usage * WAIT_RATIO && wait > 0.0;
        let short = waiting && self.usage_cpus < guarantee_cpus * 1.05;
        let next = if let (true, Some(target)) = (short, target) {
            // At the computed weight and still off the guarantee in this period: the computation
            // is off by a factor (the others' demand, rounding, the emulator): correct it slowly.
            if current >= target * self.corr * 0.99 {
                if usage < guarantee_cpus * 0.9 {
                    self.corr = (self.corr * (1.0 + CORR_STEP).powf(n)).min(CORR_MAX);
                } else if usage > guarantee_cpus * 1.1 {
                    self.corr = (self.corr * (1.0 - CORR_STEP).powf(n)).max(1.0 / CORR_MAX);
                }
            }
            (target * self.corr).clamp(base, WEIGHT_MAX)
        } else if short {
            (current * (1.0 + RISE).powf(n)).max(current + n).min(ceiling)
        } else {
            // At least one per step, or rounding would stall it just above cpu.weight.
            let decay = if usage < IDLE_CPUS { DECAY_IDLE } else { DECAY };
            (current - ((current - base) * (1.0 - (1.0 - decay).powf(n))).max(n)).max(base)
        };
        // Within one of cpu.weight the boost is over.
        let boost = if next < base + 1.0 { 0 } else { next.round() as u32 };
        (boost != self.boost).then(|| {
            self.boost = boost;
            boost
        })
    }

}

/// Averaged use over the guarantee (1.0: exactly met; 0 without a guarantee).
pub fn attainment(usage_cpus: f64, guarantee_cpus: f64) -> f64 {
    if guarantee_cpus > 0.0 {
        usage_cpus / guarantee_cpus
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a controller against a toy machine: `cpus` CPUs, the cgroup wanting `demand` CPUs
    /// and competing with other weight `others`; returns the use averaged over the last second.
    /// CPU time (ns) of `cpus` CPUs over one period.
    fn per_period(cpus: f64) -> u64 {
        (cpus * PERIOD.as_nanos() as f64) as u64
    }

    /// Periods in a second.
    fn per_second() -> usize {
        (1.0 / PERIOD.as_secs_f64()).round() as usize
    }

    fn simulate(cpus: f64, demand: f64, others: f64, shares: u32, secs: f64) -> (Controller, f64) {
        let mut c = Controller::default();
        let (mut usage, mut wait) = (0u64, 0u64);
        let guarantee = shares as f64 / 1024.0;
        let steps = (secs / PERIOD.as_secs_f64()) as usize;
        let mut tail = 0.0;
        for i in 0..steps {
            let weight = if c.boost > 0 { c.boost as f64 } else { 100.0 };
            let fair = if others > 0.0 { cpus * weight / (weight + others) } else { cpus };
            let got = fair.min(demand);
            usage += per_period(got);
            wait += per_period(demand - got);
            c.step(usage, wait, PERIOD, guarantee, guarantee, 100, None);
            if i >= steps - per_second() {
                tail += got / per_second() as f64;
            }
        }
        (c, tail)
    }

    #[test]
    fn an_overcommitted_guarantee_is_met() {
        // 2 CPUs, the cgroup wants 2 against six others of weight 100: fair share 0.29 CPU.
        let (c, got) = simulate(2.0, 2.0, 600.0, 1024, 20.0);
        assert!(got >= 0.9, "got {got} CPUs");
        assert!(c.boost > 100 && c.boost <= 1000, "boost {}", c.boost);
    }

    #[test]
    fn no_boost_without_need() {
        // Idle or satisfied: the weight stays at cpu.weight.
        let (c, _) = simulate(2.0, 0.5, 100.0, 1024, 5.0);
        assert_eq!(c.boost, 0);
        let (c, _) = simulate(2.0, 0.0, 600.0, 1024, 5.0);
        assert_eq!(c.boost, 0);
    }

    #[test]
    fn a_nested_guarantee_climbs_to_ten_times_its_cpus() {
        // Below a guaranteed parent, guaranteed_shares 100 beside a sibling's 300 splits the
        // parent's 2 CPUs: 0.5 CPU. Short of it, the boost climbs to 10 x 0.5 CPU's weight (500),
        // not to 10 x 100 shares' (98, below cpu.weight 100: no boost at all).
        let mut c = Controller::default();
        let (mut usage, mut wait) = (0u64, 0u64);
        for _ in 0..(10 * per_second()) {
            usage += per_period(0.2);
            wait += per_period(0.8);
            c.step(usage, wait, PERIOD, 0.5, 0.5, 100, None);
        }
        assert_eq!(c.boost, 500);
    }

    #[test]
    fn the_boost_is_capped_at_ten_times_the_guarantee() {
        // Guarantee 2 CPUs on a 1-CPU machine: unreachable, so the boost sits at its ceiling.
        let (c, _) = simulate(1.0, 2.0, 100_000.0, 2048, 10.0);
        assert_eq!(c.boost, 2000);
    }

    #[test]
    fn a_boost_decays_when_the_need_goes() {
        let mut c = Controller { boost: 1000, ..Default::default() };
        let mut t = 0;
        for _ in 0..20 * per_second() {
            c.step(t, 0, PERIOD, 1.0, 1.0, 100, None);
            t += per_period(0.1); // never waiting
        }
        assert_eq!(c.boost, 0);
    }

    /// A pod's guarantee three levels down whose parent has none is the machine's (0.5 CPU), and its
    /// children's are parts of it (config::guarantees_cpus gives these for 512 shares, 3:1 below).
    #[test]
    fn a_nested_guarantee_without_a_guaranteed_parent_is_the_machines() {
        let root = Path::new("/sys/fs/cgroup");
        let pod = root.join("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice");
        let asked: HashMap<PathBuf, f64> = [(pod.clone(), 0.5), (pod.join("a"), 0.375), (pod.join("b"), 0.125)].into();
        let (granted, factor) = grant(&asked, root, 2.0, 0.05);
        assert_eq!((granted[&pod], factor), (0.5, 1.0));
        let (_, factor) = grant(&asked, root, 0.25, 0.0);
        assert_eq!(factor, 0.5, "a nested guarantee without a guaranteed parent counts as the machine's");
    }

    /// Issue 11: a boost is released within a second of the demand stopping (here half a second),
    /// and a pause of one period does not throw it away.
    #[test]
    fn a_boost_is_released_within_a_second_of_the_demand_stopping() {
        let mut c = Controller { boost: 945, ..Default::default() };
        c.step(5_000_000_000, 0, PERIOD, 1.0, 1.0, 100, None); // the first sample
        c.step(5_000_000_000, 0, PERIOD, 1.0, 1.0, 100, None); // one period without use
        assert!(c.boost > 400, "a 50 ms pause kept {}", c.boost);
        let mut periods = 1;
        while c.boost > 0 {
            c.step(5_000_000_000, 0, PERIOD, 1.0, 1.0, 100, None);
            periods += 1;
            assert!(periods <= 20, "still boosted ({}) after {periods} periods of no use", c.boost);
        }
        assert!(periods as f64 * PERIOD.as_secs_f64() <= 0.6, "released after {periods} periods");
    }

    #[test]
    fn the_first_sample_and_restarted_counters_change_nothing() {
        let mut c = Controller::default();
        c.follow(7);
        assert_eq!(c.step(5_000_000_000, 0, PERIOD, 1.0, 1.0, 100, None), None);
        c.follow(8); // re-created under the same path: its counts start from zero
        assert_eq!(c.step(0, 0, PERIOD, 1.0, 1.0, 100, None), None);
        assert_eq!(c.step(0, 0, PERIOD, 1.0, 1.0, 100, None), None);
        assert_eq!(c.usage_cpus, 0.0);
    }

    /// Issue 14, defect 1 in the loop: a subtree sum dips while a removed child's counts move into
    /// its parent; what comes back is not new use (before, the child's whole lifetime came back as
    /// one period's use).
    #[test]
    fn a_dip_in_the_subtree_sum_is_not_new_use() {
        let mut c = Controller::default();
        c.follow(7);
        c.step(5_000_000_000, 0, PERIOD, 1.0, 1.0, 100, None);
        c.step(1_000_000_000, 0, PERIOD, 1.0, 1.0, 100, None); // the child's 4 s left the sum
        c.step(5_005_000_000, 0, PERIOD, 1.0, 1.0, 100, None); // ... and came back, with 5 ms more
        assert!(c.usage_cpus < 0.02, "use averaged {} CPUs", c.usage_cpus);
    }

    /// The toy machine again, with the computed weight: 2 CPUs, the cgroup wanting 2 against
    /// `others` of weight; returns (seconds until its use was within 10 % of the guarantee, use
    /// over the last second).
    fn converge(guarantee: f64, others: f64, secs: f64) -> (Option<f64>, f64, Controller) {
        let mut c = Controller::default();
        let (mut usage, mut wait) = (0u64, 0u64);
        let steps = (secs / PERIOD.as_secs_f64()) as usize;
        let (mut met, mut tail) = (None, 0.0);
        for i in 0..steps {
            let weight = if c.boost > 0 { c.boost as f64 } else { 100.0 };
            let got = (2.0 * weight / (weight + others)).min(2.0);
            usage += per_period(got);
            wait += per_period(2.0 - got);
            c.step(usage, wait, PERIOD, guarantee, 1.0, 100, weight_for(guarantee, others, 2.0, 100));
            if met.is_none() && (got - guarantee).abs() <= 0.1 * guarantee {
                met = Some(i as f64 * PERIOD.as_secs_f64());
            }
            if i >= steps - per_second() {
                tail += got / per_second() as f64;
            }
        }
        (met, tail, c)
    }

    #[test]
    fn the_computed_weight_meets_a_guarantee_within_a_second() {
        // 1 CPU of 2 against six hogs' cgroups (weight 600): w = 1 * 600 / (2 - 1) = 600.
        assert_eq!(weight_for(1.0, 600.0, 2.0, 100), Some(600.0));
        let (met, got, c) = converge(1.0, 600.0, 3.0);
        assert!(met.is_some_and(|t| t <= 1.0), "met after {met:?} s");
        assert!((got - 1.0).abs() <= 0.1, "got {got} CPUs");
        assert!((c.corr - 1.0).abs() < 0.01, "no correction needed, corr {}", c.corr);
    }

    #[test]
    fn no_weight_for_a_guarantee_of_the_whole_machine() {
        assert_eq!(weight_for(2.0, 600.0, 2.0, 100), None);
        assert_eq!(weight_for(0.0, 600.0, 2.0, 100), None);
        assert_eq!(weight_for(0.01, 100.0, 2.0, 100), Some(100.0), "never below cpu.weight");
        assert_eq!(weight_for(1.9, 1e6, 2.0, 100), Some(WEIGHT_MAX), "never above 10000");
    }

    #[test]
    fn a_boost_is_released_within_a_second_when_the_demand_stops() {
        let (_, _, mut c) = converge(1.0, 600.0, 2.0);
        assert!(c.boost >= 500, "boost {}", c.boost);
        let mut t = 3_000_000_000u64;
        let mut released = None;
        c.last = Some((t, 0));
        for i in 0..2 * per_second() {
            t += per_period(0.01); // never waiting
            c.step(t, 0, PERIOD, 1.0, 1.0, 100, weight_for(1.0, 600.0, 2.0, 100));
            if c.boost < 150 && released.is_none() {
                released = Some(i as f64 * PERIOD.as_secs_f64());
            }
        }
        assert!(released.is_some_and(|s| s <= 1.0), "released after {released:?} s");
    }

    #[test]
    fn infeasible_guarantees_are_scaled_to_the_machine_and_nested_ones_follow() {
        let root = Path::new("/sys/fs/cgroup");
        let asked: HashMap<PathBuf, f64> = [
            (root.join("a"), 7000.0 / 1024.0),
            (root.join("b"), 7000.0 / 1024.0),
            (root.join("a/x"), 7000.0 / 1024.0 / 2.0),
        ]
        .into_iter()
        .collect();
        let (granted, factor) = grant(&asked, root, 2.0, 0.05);
        assert!((granted[&root.join("a")] - 0.95).abs() < 1e-9, "{granted:?}");
        assert!((granted[&root.join("b")] - 0.95).abs() < 1e-9);
        assert!((granted[&root.join("a/x")] - 0.475).abs() < 1e-9, "nested keeps its half");
        assert!(factor < 0.15, "factor {factor}");
        // Feasible ones are granted as asked.
        let asked: HashMap<PathBuf, f64> = [(root.join("a"), 0.5), (root.join("b"), 0.8)].into_iter().collect();
        let (granted, factor) = grant(&asked, root, 2.0, 0.05);
        assert_eq!(factor, 1.0);
        assert_eq!(granted, asked);
    }

    #[test]
    fn a_computed_weight_that_is_off_is_corrected_without_oscillating() {
        // The others hold weight 600 but want only 0.6 CPU: the cgroup gets its guarantee from what
        // they leave, so it keeps its cpu.weight, and the weight does not swing meanwhile.
        let mut c = Controller::default();
        let (mut usage, mut wait) = (0u64, 0u64);
        let mut weights = Vec::new();
        for _ in 0..3 * per_second() {
            let weight = if c.boost > 0 { c.boost as f64 } else { 100.0 };
            let others_want = 0.6;
            let by_weight = 2.0 * weight / (weight + 600.0);
            let got = by_weight.max(2.0 - others_want).min(2.0);
            usage += per_period(got);
            wait += per_period(2.0 - got);
            c.step(usage, wait, PERIOD, 1.0, 1.0, 100, weight_for(1.0, 600.0, 2.0, 100));
            weights.push(c.boost);
        }
        let tail = &weights[2 * per_second()..];
        let (lo, hi) = (tail.iter().min().unwrap(), tail.iter().max().unwrap());
        assert!(*hi as f64 <= *lo as f64 * 1.2 + 1.0, "weight swings {lo}..{hi}");
        assert_eq!(c.boost, 0, "no boost where the guarantee is met without one");
    }
}
