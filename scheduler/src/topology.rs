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
    /// Distances to every online node, in node order (sysfs nodeN/distance; 10: itself).
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

/// The CPUs online now (sysfs), for when the topology cannot be read: the machine's capacity is
/// counted in them, not in the possible CPUs.
pub fn online_cpus() -> Result<Vec<usize>> {
    let path = "/sys/devices/system/cpu/online";
    let list = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    scx_utils::read_cpulist(list.trim()).with_context(|| format!("parsing {path}: {:?}", list.trim()))
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

/// The queue domains the BPF side splits every queue into (tun.nr_doms, cpu_dom, dom_order,
/// dom_node): one per last-level cache, numbered node by node.
#[derive(Debug, Clone, PartialEq)]
pub struct Domains {
    /// Each possible CPU's domain (a CPU the topology does not list, offline: domain 0).
    pub cpu_dom: Vec<usize>,
    /// For each domain, every domain in the order its CPUs look for work: itself, the others of
    /// its node, then the other nodes' by NUMA distance (ties: by number).
    pub order: Vec<Vec<usize>>,
    /// Each domain's NUMA node.
    pub node: Vec<usize>,
    /// What each domain stands for, for the log: "llc 3 [6-7]" or "node 1 [4-7]".
    pub names: Vec<String>,
    /// Its label in the statistics: "llc3", "node1", "machine".
    pub labels: Vec<String>,
}

impl Domains {
    /// One domain for the machine (--flat-queues): every queue one DSQ.
    pub fn flat(possible: usize) -> Self {
        Self {
            cpu_dom: vec![0; possible],
            order: vec![vec![0]],
            node: vec![0],
            names: vec!["machine".into()],
            labels: vec!["machine".into()],
        }
    }

    /// The lowest CPU of domain `d` (where a task the balancer moves there is queued).
    pub fn first_cpu(&self, d: usize) -> usize {
        self.cpu_dom.iter().position(|&x| x == d).unwrap_or(0)
    }

    /// One line for the log.
    pub fn summary(&self) -> String {
        if self.order.len() == 1 {
            return "queue domains: 1 (every CPU takes from the same queues)".into();
        }
        format!("queue domains: {} ({}), an idle CPU looks in its own first", self.order.len(), self.names.join(", "))
    }
}

impl Machine {
    /// A queue domain per LLC; with more LLCs than the BPF side has room for (`max`), a domain
    /// per NUMA node instead; with more nodes than that too, an error.
    pub fn domains(&self, max: usize) -> Result<Domains> {
        let mut nodes = self.nodes.clone();
        nodes.sort_by_key(|n| n.id);
        // (node id, CPUs, name, label) of each domain.
        let mut doms: Vec<(usize, Vec<usize>, String, String)> = Vec::new();
        if self.nr_llcs() <= max {
            for n in &nodes {
                let mut llcs = n.llcs.clone();
                llcs.sort_by_key(|l| l.id);
                for l in llcs {
                    doms.push((n.id, l.cpus.clone(), format!("llc {} [{}]", l.id, ranges(&l.cpus)), format!("llc{}", l.id)));
                }
            }
        } else if nodes.len() <= max {
            for n in &nodes {
                let cpus: Vec<usize> = n.llcs.iter().flat_map(|l| l.cpus.iter().copied()).collect();
                doms.push((n.id, cpus.clone(), format!("node {} [{}]", n.id, ranges(&cpus)), format!("node{}", n.id)));
            }
        } else {
            anyhow::bail!(
                "{} LLCs and {} NUMA nodes: more than the {max} queue domains scx_fdl has room for \
                 (run with --flat-queues)",
                self.nr_llcs(),
                nodes.len()
            );
        }
        if doms.is_empty() {
            return Ok(Domains::flat(self.possible));
        }
        let mut cpu_dom = vec![0; self.possible];
        for (d, (_, cpus, _, _)) in doms.iter().enumerate() {
            for &c in cpus {
                if c < cpu_dom.len() {
                    cpu_dom[c] = d;
                }
            }
        }
        let distance = |a: usize, b: usize| -> usize {
            if a == b {
                return 0;
            }
            // A node's distances come one per online node in order (sysfs nodeN/distance), not
            // by node id: ids may have gaps.
            let pos = nodes.iter().position(|n| n.id == b);
            nodes.iter().find(|n| n.id == a).and_then(|n| n.distance.get(pos?).copied()).unwrap_or(usize::MAX)
        };
        let order = (0..doms.len())
            .map(|d| {
                let mut o: Vec<usize> = (0..doms.len()).collect();
                o.sort_by_key(|&e| (e != d, distance(doms[d].0, doms[e].0), e));
                o
            })
            .collect();
        Ok(Domains {
            cpu_dom,
            order,
            node: doms.iter().map(|d| d.0).collect(),
            names: doms.iter().map(|d| d.2.clone()).collect(),
            labels: doms.into_iter().map(|d| d.3).collect(),
        })
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

    fn two_nodes() -> Machine {
        Machine {
            nodes: vec![
                Node { id: 1, llcs: vec![Llc { id: 7, cpus: vec![6, 7] }, Llc { id: 2, cpus: vec![4, 5] }], distance: vec![20, 10] },
                Node { id: 0, llcs: vec![Llc { id: 0, cpus: vec![0, 1] }, Llc { id: 1, cpus: vec![2, 3] }], distance: vec![10, 20] },
            ],
            online: (0..8).collect(),
            possible: 10,
            smt: false,
        }
    }

    #[test]
    fn a_domain_per_llc_nearest_first() {
        let d = two_nodes().domains(64).unwrap();
        // Numbered node by node, LLC by LLC, whatever order the topology listed them in.
        assert_eq!(d.names, ["llc 0 [0-1]", "llc 1 [2-3]", "llc 2 [4-5]", "llc 7 [6-7]"]);
        assert_eq!(d.node, [0, 0, 1, 1]);
        assert_eq!(d.labels, ["llc0", "llc1", "llc2", "llc7"]);
        // CPUs 8 and 9 are possible but not online: domain 0.
        assert_eq!(d.cpu_dom, [0, 0, 1, 1, 2, 2, 3, 3, 0, 0]);
        // Own domain, then the node's other, then the far node's.
        assert_eq!(d.order, [[0, 1, 2, 3], [1, 0, 2, 3], [2, 3, 0, 1], [3, 2, 0, 1]]);
        assert!(d.summary().starts_with("queue domains: 4 (llc 0 [0-1], "), "{}", d.summary());
    }

    #[test]
    fn distances_are_by_position_among_the_nodes() {
        // Nodes 0, 2 and 5 (gaps in the ids): node 0 is nearer node 5 (15) than node 2 (30).
        let node = |id: usize, cpu: usize, distance: Vec<usize>| Node { id, llcs: vec![Llc { id, cpus: vec![cpu] }], distance };
        let m = Machine {
            nodes: vec![node(0, 0, vec![10, 30, 15]), node(2, 1, vec![30, 10, 20]), node(5, 2, vec![15, 20, 10])],
            online: vec![0, 1, 2],
            possible: 3,
            smt: false,
        };
        assert_eq!(m.domains(64).unwrap().order, [[0, 2, 1], [1, 2, 0], [2, 0, 1]]);
    }

    #[test]
    fn too_many_llcs_give_a_domain_per_node_then_an_error() {
        let m = two_nodes();
        let d = m.domains(3).unwrap();
        assert_eq!(d.names, ["node 0 [0-3]", "node 1 [4-7]"]);
        assert_eq!(d.labels, ["node0", "node1"]);
        assert_eq!(d.cpu_dom, [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]);
        assert_eq!(d.order, [[0, 1], [1, 0]]);
        let e = m.domains(1).unwrap_err().to_string();
        assert!(e.contains("4 LLCs and 2 NUMA nodes") && e.contains("--flat-queues"), "{e}");
        let f = Domains::flat(4);
        assert_eq!((f.cpu_dom, f.order), (vec![0; 4], vec![vec![0]]));
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
