//! The cgroupfs walks of the once-a-second sync, on a thread of their own (issue 14, defect 3).
//!
//! Matching the configuration's pattern rules against the cgroups that exist (config::expand)
//! walks cgroupfs: on a node with 10 000 cgroups, tens of milliseconds or more. Done on the
//! scheduler's loop, it held up the guarantee loop (50 ms period), the control requests and the
//! signals. The walker thread does it and hands the latest result over; the loop only takes it.
//! (A guaranteed cgroup's subtree is not walked at all: the BPF side sums its use, fdl_sum_charge.)

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread;
use std::time::Duration;

use crate::config;

/// What one walk found, for the rules of generation `generation` (Walker::rules).
#[derive(Debug, Default)]
pub struct Walk {
    pub generation: u64,
    /// The entries the rules give the cgroups that exist (config::expand).
    pub expanded: Vec<config::Entry>,
}

/// One walk for `rules`.
pub fn walk(generation: u64, rules: &[config::Entry]) -> Walk {
    Walk { generation, expanded: config::expand(rules) }
}

/// The walker thread's handle. Dropping it stops the thread (at its next wake-up).
pub struct Walker {
    rules: Sender<(u64, Vec<config::Entry>)>,
    walks: Receiver<Walk>,
}

impl Walker {
    /// Starts the thread; it walks for the latest rules it was given, every `every`, and at once
    /// when given new rules.
    pub fn spawn(every: Duration) -> std::io::Result<Walker> {
        let (rules_tx, rules_rx) = mpsc::channel::<(u64, Vec<config::Entry>)>();
        let (walks_tx, walks_rx) = mpsc::channel();
        thread::Builder::new().name("fdl-walker".into()).spawn(move || {
            let mut current: Option<(u64, Vec<config::Entry>)> = None;
            loop {
                match rules_rx.recv_timeout(every) {
                    Ok(r) => current = Some(r),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                // Only the newest rules matter.
                loop {
                    match rules_rx.try_recv() {
                        Ok(r) => current = Some(r),
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => return,
                    }
                }
                let Some((generation, rules)) = &current else { continue };
                if walks_tx.send(walk(*generation, rules)).is_err() {
                    return;
                }
            }
        })?;
        Ok(Walker { rules: rules_tx, walks: walks_rx })
    }

    /// Walks for these rules from now on (generation: the caller's count of its rule changes).
    pub fn rules(&self, generation: u64, rules: Vec<config::Entry>) {
        // The thread only ends when this handle is dropped: a send cannot fail before.
        let _ = self.rules.send((generation, rules));
    }

    /// The newest walk done since the last call, if any, of `generation` or later: never waits.
    pub fn latest(&self, generation: u64) -> Option<Walk> {
        let mut newest = None;
        while let Ok(w) = self.walks.try_recv() {
            if w.generation >= generation {
                newest = Some(w);
            }
        }
        newest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Entry, Params};
    use std::path::Path;
    use std::time::Instant;

    /// A rule for every cgroup-like directory two levels below `root` (g*/c*).
    fn pattern(root: &Path) -> Entry {
        Entry { path: root.join("g*/c*"), params: Params { guaranteed_shares: 512, ..Default::default() } }
    }

    /// A tree of `n` cgroup-like directories (each with a cgroup.procs) under a fresh temporary
    /// directory, 100 per g*.
    fn tree(n: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            let d = dir.path().join(format!("g{}/c{i}", i % 100));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cgroup.procs"), "").unwrap();
        }
        dir
    }

    #[test]
    fn a_walk_expands_the_patterns_for_its_generation() {
        let dir = tree(50);
        let w = walk(3, &[pattern(dir.path())]);
        assert_eq!(w.generation, 3);
        assert_eq!(w.expanded.len(), 50, "one entry per c* directory");
    }

    /// The defect: the sync walked 10 000 cgroups on the scheduler's loop. Now the loop's side
    /// (rules, latest) never waits for a walk, however large the tree.
    #[test]
    fn the_loop_never_waits_for_a_walk_of_ten_thousand_cgroups() {
        let dir = tree(10_000);
        let t = Instant::now();
        let took = {
            walk(0, &[pattern(dir.path())]);
            t.elapsed()
        };
        let walker = Walker::spawn(Duration::from_secs(3600)).unwrap();
        let t = Instant::now();
        walker.rules(1, vec![pattern(dir.path())]);
        let first = walker.latest(1);
        let handed = t.elapsed();
        assert!(
            handed * 10 < took,
            "handing the rules over and asking for a walk took {handed:?}, a walk itself {took:?}"
        );
        // The walk arrives later, on its own.
        let w = first.or_else(|| {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Some(w) = walker.latest(1) {
                    break Some(w);
                }
                assert!(Instant::now() < deadline, "no walk within 60 s");
                thread::sleep(Duration::from_millis(5));
            }
        });
        assert_eq!(w.unwrap().expanded.len(), 10_000);
    }

    #[test]
    fn a_walk_for_older_rules_is_not_taken() {
        let dir = tree(10);
        let walker = Walker::spawn(Duration::from_secs(3600)).unwrap();
        walker.rules(1, vec![pattern(dir.path())]);
        thread::sleep(Duration::from_millis(200));
        assert!(walker.latest(2).is_none(), "generation 1's walk handed over as generation 2's");
        walker.rules(2, vec![]);
        let deadline = Instant::now() + Duration::from_secs(30);
        let w = loop {
            if let Some(w) = walker.latest(2) {
                break w;
            }
            assert!(Instant::now() < deadline, "no walk within 30 s");
            thread::sleep(Duration::from_millis(5));
        };
        assert!(w.expanded.is_empty());
    }
}
