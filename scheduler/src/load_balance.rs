//! The load balancer (issue 13; reference §5, after scx_rusty): once a period it reads every
//! queue domain's PELT load and the tasks each domain ran in the period (the BPF side's
//! fdl_read_loads), and asks the BPF side to move a few of them (fdl_set_moves).
//!
//! Two passes, as scx_rusty: first across NUMA nodes, when a node's load is more than 17 % of the
//! average away from it; then across the LLCs of each node, at 5 %. Between the most and the
//! least loaded of a level, the task whose load is closest to half the smaller of the two
//! imbalances moves, and only if the total imbalance drops; then again, up to FDL_LB_MAX_MOVES.
//! After each level's pass on load, one on deadline pressure (below, balance_deadline_level): the
//! load of the work that runs by its container's deadline, spread over the groups at the same
//! threshold, by exchanges that leave the load balanced.
//! Loads are in sched_ext weights (100: one nice-0 task always runnable). A task whose weight is
//! more than one CPU could serve (an infeasible weight: reference §5) counts at the clamped
//! weight, so that it does not make its domain look heavier than a CPU can make it.
//!
//! The BPF side does the rest: a task asked to move is queued in its new domain at its next
//! enqueue, and its wake-up looks for an idle CPU there first. An idle CPU still takes work from
//! any domain (env.h's env_dom_take): the balancer is for where work waits, not for whether it runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use log::{debug, warn};

use crate::bpf_intf;
use crate::maps::Bpf;

/// Across NUMA nodes, a node's imbalance above this part of the average load triggers a move.
pub const NODE_THRESHOLD: f64 = 0.17;
/// Across the LLCs of one node, likewise.
pub const DOM_THRESHOLD: f64 = 0.05;

/// A task a domain ran in the period, with its PELT load, and the `deadline_rr` of the container
/// whose deadline it ran by (0: it ran as fair work).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub pid: i32,
    pub weight: u32,
    pub load: f64,
    pub deadline_rr_ns: u64,
}

impl Candidate {
    fn by_deadline(&self) -> bool {
        self.deadline_rr_ns > 0
    }
}

/// A queue domain as the balancer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct DomLoad {
    pub node: usize,
    pub load: f64,
    /// Its deadline pressure: the load of its candidates that ran by a deadline, as moves leave
    /// it (a moved task is no candidate any more, but its load is where it went).
    pub deadline_load: f64,
    pub candidates: Vec<Candidate>,
}

impl DomLoad {
    pub fn new(node: usize, load: f64, candidates: Vec<Candidate>) -> Self {
        let deadline_load = candidates.iter().filter(|c| c.by_deadline()).map(|c| c.load).sum();
        Self { node, load, deadline_load, candidates }
    }

    /// Candidate i leaves for domain `to`: the loads follow it.
    fn send(doms: &mut [DomLoad], from: usize, i: usize, to: usize) -> Candidate {
        let c = doms[from].candidates.remove(i);
        doms[from].load -= c.load;
        doms[to].load += c.load;
        if c.by_deadline() {
            doms[from].deadline_load -= c.load;
            doms[to].deadline_load += c.load;
        }
        c
    }
}

/// One move: task `pid` (of load `load`) from domain `from` to domain `to`; `deadline`: for
/// deadline pressure (balance_deadline_level), else for load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Move {
    pub pid: i32,
    pub from: usize,
    pub to: usize,
    pub load: f64,
    pub deadline: bool,
}

/// The infeasible-weights clamp (Chandra et al., OSDI 2000; reference §5). Tasks of weights w_i
/// and duty cycles d_i (runnable part, 0..1) on `cpus` CPUs: no task can use more than one CPU,
/// so while the largest weight exceeds its share, w_max >= L / P with L = sum w_i d_i, the
/// largest weights are clamped to
///
///     lambda = (L - sum of the clamped w_i d_i) / (P - sum of the clamped d_i)
///
/// until lambda >= the next weight. Returns lambda, or None when every weight is feasible.
pub fn infeasible_lambda(tasks: &[(f64, f64)], cpus: f64) -> Option<f64> {
    let mut sorted: Vec<(f64, f64)> = tasks.iter().copied().filter(|&(w, d)| w > 0.0 && d > 0.0).collect();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = sorted.iter().map(|(w, d)| w * d).sum();
    let (mut clamped_load, mut clamped_duty, mut lambda) = (0.0, 0.0, None);
    for (i, &(w, d)) in sorted.iter().enumerate() {
        let left = cpus - clamped_duty;
        if left <= 0.0 {
            break;
        }
        let share = (total - clamped_load) / left;
        if w <= share {
            break;
        }
        clamped_load += w * d;
        clamped_duty += d;
        let l = (total - clamped_load) / (cpus - clamped_duty).max(f64::MIN_POSITIVE);
        // Clamped down to lambda, but only while the next weight is above it.
        let next = sorted.get(i + 1).map_or(0.0, |n| n.0);
        lambda = Some(l.max(next));
        if l >= next {
            break;
        }
    }
    lambda
}

/// Applies the clamp to the candidates and to their domains' loads: a candidate of infeasible
/// weight counts at lambda x its duty cycle (its load / its weight). Only the candidates are
/// known by weight, so a domain's other tasks stay as measured.
pub fn clamp_infeasible(doms: &mut [DomLoad], cpus: usize) {
    let tasks: Vec<(f64, f64)> = doms
        .iter()
        .flat_map(|d| d.candidates.iter())
        .map(|c| (c.weight as f64, if c.weight > 0 { (c.load / c.weight as f64).min(1.0) } else { 0.0 }))
        .collect();
    let Some(lambda) = infeasible_lambda(&tasks, cpus as f64) else { return };
    for d in doms.iter_mut() {
        for c in d.candidates.iter_mut() {
            let w = c.weight as f64;
            if w > lambda && w > 0.0 {
                let clamped = c.load * lambda / w;
                d.load = (d.load - (c.load - clamped)).max(0.0);
                if c.by_deadline() {
                    d.deadline_load = (d.deadline_load - (c.load - clamped)).max(0.0);
                }
                c.load = clamped;
            }
        }
    }
}

/// The most and the least loaded of a level's groups (by `values`, one per group), when both are
/// beyond `threshold` of the average from it: what both passes balance.
struct Imbalance {
    push: usize,
    pull: usize,
    push_v: f64,
    pull_v: f64,
    avg: f64,
}

impl Imbalance {
    fn of(values: &[f64], threshold: f64) -> Option<Self> {
        let avg = values.iter().sum::<f64>() / values.len() as f64;
        if avg <= 0.0 {
            return None;
        }
        let (push, &push_v) = values.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
        let (pull, &pull_v) = values.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
        (push_v - avg > threshold * avg && avg - pull_v > threshold * avg).then_some(Self { push, pull, push_v, pull_v, avg })
    }

    /// The two groups' distance from the average, together.
    fn before(&self) -> f64 {
        (self.push_v - self.avg) + (self.avg - self.pull_v)
    }

    /// ... once x moved from the first to the second.
    fn after(&self, x: f64) -> f64 {
        (self.push_v - x - self.avg).abs() + (self.pull_v + x - self.avg).abs()
    }

    /// Half the smaller of the two imbalances: the load a move aims at.
    fn target(&self) -> f64 {
        (self.push_v - self.avg).min(self.avg - self.pull_v) / 2.0
    }
}

/// One level's pass: groups (nodes, or one node's domains) of domain indices; moves from the
/// most to the least loaded group while one is beyond `threshold` of the average and a move
/// lowers the total imbalance. Domain loads are updated as moves are planned.
fn balance_level(doms: &mut [DomLoad], groups: &[Vec<usize>], threshold: f64, moves: &mut Vec<Move>, max: usize) {
    if groups.len() < 2 {
        return;
    }
    while moves.len() < max {
        let loads: Vec<f64> = groups.iter().map(|g| group_load(doms, g)).collect();
        let Some(im) = Imbalance::of(&loads, threshold) else { return };
        let target = im.target();
        // The candidate of the push group closest to the target, from any of its domains.
        let best = group_candidates(doms, &groups[im.push])
            .filter(|(_, _, c)| c.load > 0.0)
            .min_by(|a, b| (a.2.load - target).abs().total_cmp(&(b.2.load - target).abs()));
        let Some((from, i, c)) = best else { return };
        let x = c.load;
        if im.after(x) >= im.before() {
            return;
        }
        // Into the least loaded domain of the pull group.
        let to = *groups[im.pull].iter().min_by(|&&a, &&b| doms[a].load.total_cmp(&doms[b].load)).unwrap();
        let c = DomLoad::send(doms, from, i, to);
        moves.push(Move { pid: c.pid, from, to, load: x, deadline: false });
    }
}

/// A group's load (DomLoad::load).
fn group_load(doms: &[DomLoad], g: &[usize]) -> f64 {
    g.iter().map(|&d| doms[d].load).sum()
}

/// A group's deadline pressure (DomLoad::deadline_load).
fn deadline_load(doms: &[DomLoad], g: &[usize]) -> f64 {
    g.iter().map(|&d| doms[d].deadline_load).sum()
}

/// The candidates of a group's domains: (domain, index among its candidates, candidate).
fn group_candidates<'a>(doms: &'a [DomLoad], g: &'a [usize]) -> impl Iterator<Item = (usize, usize, Candidate)> + 'a {
    g.iter().flat_map(move |&d| doms[d].candidates.iter().enumerate().map(move |(i, c)| (d, i, *c)))
}

/// The pass on deadline pressure of one level, after its pass on load. Deadline work competes by
/// its deadline within its domain first: crowded into one domain while another runs only fair
/// work, it waits for its neighbours' deadlines (or is taken across domains by CPUs that are not
/// its cache's) where the other domain's fair work could have waited instead. So, between the
/// groups with the most and the least deadline load, while they are more than `threshold` of
/// the average apart: the deadline task closest to half the smaller imbalance (of the group's
/// domains, from the one with the most deadline load) moves to the other group, in exchange for
/// the fair task there that keeps the two groups' loads closest, or none if none does better
/// (of equal ones, from the domain with the least deadline load, which the deadline task joins).
/// An exchange is made only if it lowers the deadline imbalance and leaves the load imbalance of
/// the two groups within `threshold` of the average load, or no worse than it was: the load
/// pass's balance stands. Each task moves once a period: a moved one is no candidate any more.
fn balance_deadline_level(doms: &mut [DomLoad], groups: &[Vec<usize>], threshold: f64, moves: &mut Vec<Move>, max: usize) {
    if groups.len() < 2 {
        return;
    }
    while moves.len() < max {
        let dls: Vec<f64> = groups.iter().map(|g| deadline_load(doms, g)).collect();
        let Some(im) = Imbalance::of(&dls, threshold) else { return };
        let (push, pull, target) = (im.push, im.pull, im.target());
        let best = group_candidates(doms, &groups[push])
            .filter(|(_, _, c)| c.by_deadline() && c.load > 0.0)
            .min_by(|a, b| {
                (a.2.load - target)
                    .abs()
                    .total_cmp(&(b.2.load - target).abs())
                    .then(doms[b.0].deadline_load.total_cmp(&doms[a.0].deadline_load))
            });
        let Some((from, i, dc)) = best else { return };
        let x = dc.load;
        if im.after(x) >= im.before() {
            return;
        }
        // The two groups' loads after each exchange: (fair task's domain and index, or the move
        // alone into the domain with the least deadline load; deviation from the average load).
        let loads: Vec<f64> = groups.iter().map(|g| group_load(doms, g)).collect();
        let avg_load = loads.iter().sum::<f64>() / groups.len() as f64;
        let dev = |a: f64, b: f64| (a - avg_load).abs() + (b - avg_load).abs();
        let (pl, ql) = (loads[push], loads[pull]);
        let allowed = dev(pl, ql).max(2.0 * threshold * avg_load);
        let least = *groups[pull]
            .iter()
            .min_by(|&&a, &&b| doms[a].deadline_load.total_cmp(&doms[b].deadline_load))
            .unwrap();
        let fair = group_candidates(doms, &groups[pull])
            .filter(|(_, _, c)| !c.by_deadline() && c.load > 0.0)
            .map(|(d, j, c)| (d, Some(j), dev(pl - x + c.load, ql + x - c.load)));
        let Some((to, back, after)) = std::iter::once((least, None, dev(pl - x, ql + x)))
            .chain(fair)
            .min_by(|a, b| a.2.total_cmp(&b.2).then(doms[a.0].deadline_load.total_cmp(&doms[b.0].deadline_load)))
        else {
            return;
        };
        if after > allowed || (back.is_some() && moves.len() + 2 > max) {
            return;
        }
        let c = DomLoad::send(doms, from, i, to);
        moves.push(Move { pid: c.pid, from, to, load: x, deadline: true });
        if let Some(j) = back {
            // j still indexes domain to's candidates: only domain from's lost one.
            let f = DomLoad::send(doms, to, j, from);
            moves.push(Move { pid: f.pid, from: to, to: from, load: f.load, deadline: true });
        }
    }
}

/// The period's moves: across nodes first, then across the domains of each node; at each level
/// by load, then by deadline pressure.
pub fn plan(doms: &mut [DomLoad], max: usize) -> Vec<Move> {
    let mut moves = Vec::new();
    let mut nodes: Vec<usize> = doms.iter().map(|d| d.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let by_node: Vec<Vec<usize>> =
        nodes.iter().map(|&n| (0..doms.len()).filter(|&d| doms[d].node == n).collect()).collect();
    balance_level(doms, &by_node, NODE_THRESHOLD, &mut moves, max);
    balance_deadline_level(doms, &by_node, NODE_THRESHOLD, &mut moves, max);
    for node in &by_node {
        let groups: Vec<Vec<usize>> = node.iter().map(|&d| vec![d]).collect();
        balance_level(doms, &groups, DOM_THRESHOLD, &mut moves, max);
        balance_deadline_level(doms, &groups, DOM_THRESHOLD, &mut moves, max);
    }
    moves
}

/// Balancer periods run and moves asked, for the statistics (read with the BPF side's counters).
pub static PERIODS: AtomicU64 = AtomicU64::new(0);
pub static MOVES: AtomicU64 = AtomicU64::new(0);
pub static DEADLINE_MOVES: AtomicU64 = AtomicU64::new(0);

/// The balancer's state between periods.
pub struct Balancer {
    pub every: Duration,
    last: Instant,
    nodes: Vec<usize>,
    nr_cpus: usize,
}

impl Balancer {
    /// Whether there is a balancer (and load tracking on the BPF side): several domains, and a
    /// period.
    pub fn wanted(every_ms: u64, nr_doms: usize) -> bool {
        nr_doms > 1 && every_ms > 0
    }

    /// A balancer for `nodes` (each domain's NUMA node); None unless wanted.
    pub fn new(every: Duration, nodes: Vec<usize>, nr_cpus: usize) -> Option<Self> {
        Self::wanted(every.as_millis() as u64, nodes.len()).then(|| Self {
            every,
            last: Instant::now(),
            nodes,
            nr_cpus,
        })
    }

    pub fn due(&self) -> bool {
        self.last.elapsed() >= self.every
    }

    /// The domains as the balancer sees them, from the BPF side's figures (fdl_read_loads gives
    /// the candidates of the current period only: a domain that ran nothing since has none).
    pub fn view(&self, loads: &bpf_intf::fdl_loads_args) -> Vec<DomLoad> {
        (0..(loads.nr_doms as usize).min(self.nodes.len()))
            .map(|d| {
                let l = &loads.doms[d];
                let n = (l.nr_active as usize).min(l.active.len());
                DomLoad::new(
                    self.nodes[d],
                    l.pelt.load_avg as f64,
                    l.active[..n]
                        .iter()
                        .filter(|c| c.pid > 0)
                        .map(|c| Candidate {
                            pid: c.pid,
                            weight: c.weight,
                            load: c.load_avg as f64,
                            deadline_rr_ns: c.deadline_rr_ns,
                        })
                        .collect(),
                )
            })
            .collect()
    }

    /// One period: read, plan, ask.
    pub fn run(&mut self, bpf: &Bpf) {
        self.last = Instant::now();
        let loads = match bpf.read_loads() {
            Ok(l) => l,
            Err(e) => {
                warn!("load balancer: {e:#}");
                return;
            }
        };
        let mut doms = self.view(&loads);
        clamp_infeasible(&mut doms, self.nr_cpus);
        let moves = plan(&mut doms, bpf_intf::fdl_lb_consts_FDL_LB_MAX_MOVES as usize);
        for m in &moves {
            debug!(
                "load balancer: pid {} ({:.0}) from domain {} to {}{}",
                m.pid,
                m.load,
                m.from,
                m.to,
                if m.deadline { ", for deadline pressure" } else { "" }
            );
        }
        // Every period, moves or none: the generation also starts the next period's candidates.
        match bpf.set_moves(&moves) {
            Ok(()) => {
                PERIODS.fetch_add(1, Ordering::Relaxed);
                MOVES.fetch_add(moves.len() as u64, Ordering::Relaxed);
                DEADLINE_MOVES.fetch_add(moves.iter().filter(|m| m.deadline).count() as u64, Ordering::Relaxed);
            }
            Err(e) => warn!("load balancer: {e:#}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom(node: usize, load: f64, cands: &[(i32, f64)]) -> DomLoad {
        DomLoad::new(
            node,
            load,
            cands.iter().map(|&(pid, load)| Candidate { pid, weight: 100, load, deadline_rr_ns: 0 }).collect(),
        )
    }

    #[test]
    fn balanced_domains_move_nothing() {
        let mut d = vec![dom(0, 200.0, &[(1, 100.0), (2, 100.0)]), dom(0, 204.0, &[(3, 100.0)])];
        assert!(plan(&mut d, 16).is_empty(), "2 % apart is within the 5 % threshold");
    }

    #[test]
    fn four_hogs_on_one_llc_spread_to_two_each() {
        let hogs: Vec<(i32, f64)> = (1..=4).map(|p| (p, 100.0)).collect();
        let mut d = vec![dom(0, 400.0, &hogs), dom(0, 0.0, &[])];
        let m = plan(&mut d, 16);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m.iter().all(|m| m.from == 0 && m.to == 1));
        assert_eq!((d[0].load, d[1].load), (200.0, 200.0));
    }

    #[test]
    fn a_move_that_does_not_lower_the_imbalance_is_not_made() {
        // 300 against 100: moving the only task (300) would make it 0 against 400.
        let mut d = vec![dom(0, 300.0, &[(1, 300.0)]), dom(0, 100.0, &[(2, 100.0)])];
        assert!(plan(&mut d, 16).is_empty());
    }

    #[test]
    fn the_task_closest_to_half_the_imbalance_moves() {
        // 600 against 200: imbalances 200 and 200, target 100: the 90 task, not the 400 or 30.
        let mut d = vec![dom(0, 600.0, &[(1, 400.0), (2, 90.0), (3, 30.0)]), dom(0, 200.0, &[])];
        let m = plan(&mut d, 1);
        assert_eq!(m[0].pid, 2, "{m:?}");
    }

    #[test]
    fn nodes_first_at_17_percent_then_llcs_at_5() {
        // Node 0 (domains 0, 1) holds 800, node 1 (2, 3) 0: node pass moves half across, into
        // node 1's least loaded domain each time, then each node's LLCs are evened out.
        let hogs: Vec<(i32, f64)> = (1..=8).map(|p| (p, 100.0)).collect();
        let mut d = vec![dom(0, 800.0, &hogs), dom(0, 0.0, &[]), dom(1, 0.0, &[]), dom(1, 0.0, &[])];
        let m = plan(&mut d, 16);
        let loads: Vec<f64> = d.iter().map(|d| d.load).collect();
        assert_eq!(loads, vec![200.0, 200.0, 200.0, 200.0], "{m:?}");
        // The node pass moved four tasks across nodes before any move within a node.
        assert!(m[..4].iter().all(|m| m.to >= 2), "{m:?}");
    }

    #[test]
    fn a_node_imbalance_below_17_percent_is_left() {
        // Nodes 500 and 400: 11 % from the average of 450; within node 0, 300 and 200 are not.
        let mut d = vec![
            dom(0, 300.0, &[(1, 100.0), (2, 100.0), (3, 100.0)]),
            dom(0, 200.0, &[(4, 100.0), (5, 100.0)]),
            dom(1, 200.0, &[(6, 100.0), (7, 100.0)]),
            dom(1, 200.0, &[(8, 100.0), (9, 100.0)]),
        ];
        let m = plan(&mut d, 16);
        assert!(m.iter().all(|m| d[m.from].node == d[m.to].node), "no move across nodes: {m:?}");
        assert!(m.is_empty(), "300 / 200: moving a 100 task only swaps the imbalance: {m:?}");
    }

    #[test]
    fn at_most_the_moves_asked() {
        let hogs: Vec<(i32, f64)> = (1..=40).map(|p| (p, 10.0)).collect();
        let mut d = vec![dom(0, 400.0, &hogs), dom(0, 0.0, &[])];
        assert_eq!(plan(&mut d, 16).len(), 16);
    }

    /// Domains of tasks (pid, load, deadline_rr in ms: 0 for fair work).
    fn dom_dl(node: usize, cands: &[(i32, f64, u64)]) -> DomLoad {
        DomLoad::new(
            node,
            cands.iter().map(|c| c.1).sum(),
            cands
                .iter()
                .map(|&(pid, load, rr_ms)| Candidate { pid, weight: 100, load, deadline_rr_ns: rr_ms * 1_000_000 })
                .collect(),
        )
    }

    fn deadline_loads(d: &[DomLoad]) -> Vec<f64> {
        (0..d.len()).map(|i| deadline_load(d, &[i])).collect()
    }

    #[test]
    fn deadline_work_crowded_in_one_llc_is_exchanged_for_fair_work() {
        // Loads even (400 and 400), but all the deadline work in domain 0: two exchanges of a
        // deadline hog for a fair one leave two of each in each domain, the loads still even.
        let mut d = vec![
            dom_dl(0, &[(1, 100.0, 4), (2, 100.0, 4), (3, 100.0, 4), (4, 100.0, 4)]),
            dom_dl(0, &[(5, 100.0, 0), (6, 100.0, 0), (7, 100.0, 0), (8, 100.0, 0)]),
        ];
        let m = plan(&mut d, 16);
        assert_eq!(m.len(), 4, "{m:?}");
        assert_eq!(deadline_loads(&d), vec![200.0, 200.0], "{m:?}");
        assert_eq!((d[0].load, d[1].load), (400.0, 400.0));
        // The deadline hogs went 0 -> 1, the fair ones 1 -> 0.
        assert!(m.iter().all(|m| (m.pid <= 4) == (m.from == 0 && m.to == 1)), "{m:?}");
    }

    #[test]
    fn deadline_pressure_never_unbalances_the_load() {
        // Domain 0: two deadline tasks of 100; domain 1: one fair task of 200. Moving a deadline
        // task alone (100 / 300) or for the fair one (300 / 100) unbalances the load: nothing.
        let mut d = vec![dom_dl(0, &[(1, 100.0, 4), (2, 100.0, 4)]), dom_dl(0, &[(3, 200.0, 0)])];
        assert!(plan(&mut d, 16).is_empty());
        // Where a move alone keeps the load within the threshold, it is made: one of two light
        // deadline tasks (10 each) beside a loaded domain 1 (420 against 410).
        let mut d = vec![dom_dl(0, &[(1, 400.0, 0), (2, 10.0, 4), (3, 10.0, 4)]), dom_dl(0, &[(4, 410.0, 0)])];
        let m = plan(&mut d, 16);
        assert_eq!(m, vec![Move { pid: 2, from: 0, to: 1, load: 10.0, deadline: true }]);
    }

    #[test]
    fn deadline_pressure_within_the_threshold_is_left() {
        // 205 against 195 of deadline load: 2.5 % from the average of 200 at the LLC level.
        let mut d = vec![
            dom_dl(0, &[(1, 105.0, 4), (2, 100.0, 20), (3, 195.0, 0)]),
            dom_dl(0, &[(4, 195.0, 4), (5, 205.0, 0)]),
        ];
        assert!(plan(&mut d, 16).is_empty());
    }

    #[test]
    fn deadline_pressure_across_nodes_then_within() {
        // Node 0 (domains 0, 1) runs the four deadline hogs, node 1 (2, 3) four fair hogs: even
        // loads everywhere, so only the deadline passes move: two exchanges across the nodes,
        // one from each of node 0's domains into each of node 1's, one deadline hog per domain.
        let mut d = vec![
            dom_dl(0, &[(1, 100.0, 4), (2, 100.0, 4)]),
            dom_dl(0, &[(3, 100.0, 4), (4, 100.0, 4)]),
            dom_dl(1, &[(5, 100.0, 0), (6, 100.0, 0)]),
            dom_dl(1, &[(7, 100.0, 0), (8, 100.0, 0)]),
        ];
        let m = plan(&mut d, 16);
        assert_eq!(deadline_loads(&d), vec![100.0, 100.0, 100.0, 100.0], "{m:?}");
        assert_eq!(d.iter().map(|d| d.load).collect::<Vec<_>>(), vec![200.0; 4], "{m:?}");
        assert_eq!(m.len(), 4, "{m:?}");
    }

    #[test]
    fn an_exchange_needs_two_moves_left() {
        let mut d = vec![
            dom_dl(0, &[(1, 100.0, 4), (2, 100.0, 4), (3, 100.0, 4), (4, 100.0, 4)]),
            dom_dl(0, &[(5, 100.0, 0), (6, 100.0, 0), (7, 100.0, 0), (8, 100.0, 0)]),
        ];
        assert_eq!(plan(&mut d, 3).len(), 2, "one exchange of two moves; the second would need 4");
    }

    #[test]
    fn infeasible_weights_are_clamped() {
        // Two CPUs: one task of weight 10000 and two of 100, all always runnable. The big one can
        // use one CPU at most: lambda = (L - 10000) / (2 - 1) = 200, and 200 >= 100 ends it.
        let tasks = [(10000.0, 1.0), (100.0, 1.0), (100.0, 1.0)];
        assert_eq!(infeasible_lambda(&tasks, 2.0), Some(200.0));
        // Feasible: three equal weights on two CPUs.
        assert_eq!(infeasible_lambda(&[(100.0, 1.0); 3], 2.0), None);
        // Two heavy on three CPUs beside one light: both clamped; lambda down to the light's.
        let l = infeasible_lambda(&[(5000.0, 1.0), (5000.0, 1.0), (100.0, 1.0)], 3.0).unwrap();
        assert_eq!(l, 100.0);
    }

    #[test]
    fn a_clamped_candidate_lightens_its_domain() {
        let mut d = vec![
            DomLoad::new(0, 10100.0, vec![
                Candidate { pid: 1, weight: 10000, load: 10000.0, deadline_rr_ns: 0 },
                Candidate { pid: 2, weight: 100, load: 100.0, deadline_rr_ns: 0 },
            ]),
            DomLoad::new(0, 100.0, vec![Candidate { pid: 3, weight: 100, load: 100.0, deadline_rr_ns: 0 }]),
        ];
        clamp_infeasible(&mut d, 2);
        assert_eq!(d[0].candidates[0].load, 200.0);
        assert_eq!(d[0].load, 300.0);
        assert_eq!(d[1].load, 100.0);
    }
}
