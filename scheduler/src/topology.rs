//! The machine as scx_fdl sees it (scx_utils::Topology): NUMA nodes, their last-level caches and
//! CPUs, the online set. `scx_fdl topology` prints it; the scheduler logs it at every start (a CPU
//! hotplug restarts scx_fdl, so the log shows each change).

use anyhow::{Context, Result};
use serde::Serialize;

/// One last-level cache domain.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Llc {
    pub id: usize,
    pub cpus: Vec<usize>,
}

/// One NUMA node and its last-level caches.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Node {
    pub id: usize,
    pub llcs: Vec<Llc>,
    /// Distances to every node (the kernel's node_distance, 10: itself).
    pub distance: Vec<usize>,
}

/// What was found.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Machine {
    pub nodes: Vec<Node>,
    /// CPUs online now, and the possible CPUs the BPF side's tables are sized for.
    pub online: Vec<usize>,
    pub possible: usize,
    pub smt: bool,
}

impl Machine {
    /// Reads the machine now.
    pub fn read() -> Result<Self> {
        let topo = scx_utils::Topology::new().context("reading the CPU topology (scx_utils)")?;
        let nodes = topo
            .nodes
            .values()
            .map(|n| Node {
                id: n.id,
                llcs: n
                    .llcs
                    .values()
                    .map(|l| Llc { id: l.id, cpus: l.all_cpus.keys().copied().collect() })
                    .collect(),
                distance: n.distance.clone(),
            })
            .collect();
        Ok(Self {
            nodes,
            online: topo.all_cpus.keys().copied().collect(),
            possible: libbpf_rs::num_possible_cpus().context("counting possible CPUs")?,
            smt: topo.smt_enabled,
        })
    }

    /// Number of last-level caches.
    pub fn nr_llcs(&self) -> usize {
        self.nodes.iter().map(|n| n.llcs.len()).sum()
    }

    /// One line for the log.
    pub fn summary(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                let llcs: Vec<String> = n.llcs.iter().map(|l| format!("llc{} [{}]", l.id, ranges(&l.cpus))).collect();
                format!("node{}: {}", n.id, llcs.join(", "))
            })
            .collect();
        format!(
            "topology: {} CPUs online of {} possible, {} node(s), {} LLC(s){}; {}",
            self.online.len(),
            self.possible,
            self.nodes.len(),
            self.nr_llcs(),
            if self.smt { ", SMT" } else { "" },
            nodes.join("; ")
        )
    }

    /// The table `scx_fdl topology` prints.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{} CPUs online ({}) of {} possible; {} NUMA node(s), {} last-level cache(s){}\n",
            self.online.len(),
            ranges(&self.online),
            self.possible,
            self.nodes.len(),
            self.nr_llcs(),
            if self.smt { "; SMT on" } else { "" }
        );
        for n in &self.nodes {
            let dist: Vec<String> = n.distance.iter().map(|d| d.to_string()).collect();
            s += &format!("node {} (distances {})\n", n.id, dist.join(" "));
            for l in &n.llcs {
                s += &format!("  llc {:<3} cpus {}\n", l.id, ranges(&l.cpus));
            }
        }
        s
    }
}

/// CPU ids as ranges: 0-3,6,8-9.
pub fn ranges(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ranges_are_compact() {
        assert_eq!(ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(ranges(&[5]), "5");
        assert_eq!(ranges(&[3, 1, 2, 2]), "1-3");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn the_table_and_summary_name_every_node_and_cache() {
        let m = Machine {
            nodes: vec![
                Node { id: 0, llcs: vec![Llc { id: 0, cpus: vec![0, 1] }, Llc { id: 1, cpus: vec![2, 3] }], distance: vec![10, 20] },
                Node { id: 1, llcs: vec![Llc { id: 2, cpus: vec![4, 5] }, Llc { id: 3, cpus: vec![6, 7] }], distance: vec![20, 10] },
            ],
            online: (0..8).collect(),
            possible: 8,
            smt: false,
        };
        assert_eq!(m.nr_llcs(), 4);
        let t = m.table();
        assert!(t.starts_with("8 CPUs online (0-7) of 8 possible; 2 NUMA node(s), 4 last-level cache(s)\n"), "{t}");
        assert!(t.contains("node 1 (distances 20 10)\n  llc 2   cpus 4-5\n  llc 3   cpus 6-7\n"), "{t}");
        assert_eq!(
            m.summary(),
            "topology: 8 CPUs online of 8 possible, 2 node(s), 4 LLC(s); node0: llc0 [0-1], llc1 [2-3]; node1: llc2 [4-5], llc3 [6-7]"
        );
    }
}
