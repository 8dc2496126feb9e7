//! The guaranteed_shares control loop: bandwidth guarantees enforced through effective weights.
//!
//! As in the FDL design, every period a cgroup with a guarantee has its CPU use and its waiting
//! measured and averaged (EMA, weight 10/1024 per 10 ms). If it uses less than its guarantee and
//! it is waiting for CPU (wait > 100/1024 of its use), its effective weight rises, up to ten times
//! the weight its guarantee stands for; otherwise the boost decays back to its cpu.weight. The
//! BPF side uses the effective weight for the cgroup's share and its deadline bandwidth.

use std::time::Duration;

use crate::config::SHARES_PER_CPU;

/// How often the loop runs.
pub const PERIOD: Duration = Duration::from_millis(10);

/// EMA weight of one period's measurement, out of 1024 (10/1024 per 10 ms: about a second).
const EMA_WEIGHT: f64 = 10.0 / 1024.0;
/// A cgroup is short of CPU when its waiting exceeds this fraction of its use.
const WAIT_RATIO: f64 = 100.0 / 1024.0;
/// A boost rises by this fraction per period while the cgroup is short...
const RISE: f64 = 1.0 / 16.0;
/// ...and decays by this fraction of its excess over cpu.weight per period otherwise.
const DECAY: f64 = 1.0 / 32.0;
/// Ceiling of a boost, as a multiple of the weight the guarantee stands for.
const MAX_BOOST: f64 = 10.0;
/// cpu.weight's upper bound: boosts stay within the range the kernel allows cgroups.
const WEIGHT_MAX: f64 = 10_000.0;
/// cpu.weight standing for guaranteed_shares 1024, as 1024 CFS shares stand for cpu.weight 100.
const WEIGHT_PER_SHARES: f64 = 100.0 / SHARES_PER_CPU as f64;

/// One guaranteed cgroup's loop state.
#[derive(Debug, Clone, Default)]
pub struct Controller {
    /// Averaged CPU use and waiting, in CPUs.
    pub usage_cpus: f64,
    pub wait_cpus: f64,
    /// Effective weight applied; 0: no boost (the cgroup runs at its cpu.weight).
    pub boost: u32,
    last: Option<(u64, u64)>,
}

impl Controller {
    /// Feeds one period's cumulative counters (ns of CPU used and waited by the cgroup's subtree),
    /// `elapsed` after the previous call. Returns the new effective weight when it changed
    /// (0: back to cpu.weight).
    pub fn step(
        &mut self,
        usage_ns: u64,
        wait_ns: u64,
        elapsed: Duration,
        guarantee_cpus: f64,
        guaranteed_shares: u32,
        cpu_weight: u32,
    ) -> Option<u32> {
        let Some((last_usage, last_wait)) = self.last.replace((usage_ns, wait_ns)) else {
            return None;
        };
        let secs = elapsed.as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        // Counters restart when a cgroup is re-created: treat a backwards step as no use.
        let usage = usage_ns.saturating_sub(last_usage) as f64 / 1e9 / secs;
        let wait = wait_ns.saturating_sub(last_wait) as f64 / 1e9 / secs;
        let alpha = (EMA_WEIGHT * secs / PERIOD.as_secs_f64()).min(1.0);
        self.usage_cpus += alpha * (usage - self.usage_cpus);
        self.wait_cpus += alpha * (wait - self.wait_cpus);

        let base = cpu_weight.max(1) as f64;
        let ceiling = (MAX_BOOST * guaranteed_shares as f64 * WEIGHT_PER_SHARES).clamp(base, WEIGHT_MAX);
        let current = if self.boost > 0 { self.boost as f64 } else { base };
        let short = self.usage_cpus < guarantee_cpus && self.wait_cpus > self.usage_cpus * WAIT_RATIO;
        let next = if short {
            (current * (1.0 + RISE)).max(current + 1.0).min(ceiling)
        } else {
            // At least one per period, or rounding would stall it just above cpu.weight.
            (current - ((current - base) * DECAY).max(1.0)).max(base)
        };
        // Within one of cpu.weight the boost is over.
        let boost = if next < base + 1.0 { 0 } else { next.round() as u32 };
        (boost != self.boost).then(|| {
            self.boost = boost;
            boost
        })
    }

    /// Averaged use over the guarantee (1.0: exactly met).
    pub fn attainment(&self, guarantee_cpus: f64) -> f64 {
        if guarantee_cpus > 0.0 {
            self.usage_cpus / guarantee_cpus
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a controller against a toy machine: `cpus` CPUs, the cgroup wanting `demand` CPUs
    /// and competing with other weight `others`; returns the use averaged over the last second.
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
            usage += (got * 1e7) as u64;
            wait += ((demand - got) * 1e7) as u64;
            c.step(usage, wait, PERIOD, guarantee, shares, 100);
            if i >= steps - 100 {
                tail += got / 100.0;
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
    fn the_boost_is_capped_at_ten_times_the_guarantee() {
        // Guarantee 2 CPUs on a 1-CPU machine: unreachable, so the boost sits at its ceiling.
        let (c, _) = simulate(1.0, 2.0, 100_000.0, 2048, 10.0);
        assert_eq!(c.boost, 2000);
    }

    #[test]
    fn a_boost_decays_when_the_need_goes() {
        let mut c = Controller { boost: 1000, ..Default::default() };
        let mut t = 0;
        for _ in 0..2000 {
            c.step(t, 0, PERIOD, 1.0, 1024, 100);
            t += 1_000_000; // 0.1 CPU used, never waiting
        }
        assert_eq!(c.boost, 0);
    }

    #[test]
    fn the_first_sample_and_restarted_counters_change_nothing() {
        let mut c = Controller::default();
        assert_eq!(c.step(5_000_000_000, 0, PERIOD, 1.0, 1024, 100), None);
        assert_eq!(c.step(0, 0, PERIOD, 1.0, 1024, 100), None);
        assert_eq!(c.usage_cpus, 0.0);
    }
}
