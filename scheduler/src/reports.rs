//! What scx_fdl reports: the control socket's answers (list, get, set, dump), the scx_stats
//! figures, and the counters it logs.
//!
//! Reports walk the cgroup tree and read every cgroup's BPF record: with 10 000 cgroups that takes
//! far longer than the guarantee loop's period (issue 14, defect 3). So the loop only copies what a
//! report needs of its state (a View: the configured cgroups' parameters and guarantees, the
//! scheduler-wide counters) and hands it, with the request, to the reports thread, which walks and
//! answers. A `set` is applied on the loop, before its answer is handed on.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{bail, Context, Result};
use log::info;

use crate::control::{CgroupReport, Pending, Reply, Request, Response};
use crate::guarantee_loop::guarantee_now;
use crate::maps::Bpf;
use crate::params::InForce;
pub use crate::stats::Records;
use crate::stats::{self, CgroupTree, SchedulerStats};
use crate::{config, guarantee, limits, stats_server};

/// What the reports need of the loop's state, copied out of it: cheap (the configured cgroups
/// only, and the scheduler-wide counters read now), so that the cgroup walk runs elsewhere.
#[derive(Clone)]
pub struct View {
    pub cgroup_root: PathBuf,
    /// The configuration's entries for the cgroups that exist (InForce::expanded), in order.
    pub expanded: Vec<config::Entry>,
    /// Configured cgroups whose parameters `scx_fdl set` changed (InForce::runtime_only).
    pub runtime_only: HashSet<PathBuf>,
    /// Guarantees in CPUs as asked and as granted, and the guarantee loop's averaged use.
    pub guarantees: HashMap<PathBuf, f64>,
    pub granted: HashMap<PathBuf, f64>,
    pub usage_cpus: HashMap<PathBuf, f64>,
    /// Configured cgroups written to the BPF side (the counters' log names them).
    pub applied: Vec<PathBuf>,
    /// The BPF side's scale of the guarantees, and the scheduler-wide figures, read now.
    pub guarantee_scale: f64,
    pub scheduler: SchedulerStats,
    pub records: Arc<dyn Records>,
}

impl View {
    /// What the reports need, read now from the loop's state.
    pub fn of(bpf: &Bpf, records: &Arc<dyn Records>, cfg: &InForce, exits: &BTreeMap<String, u64>, loads: u64) -> View {
        let mut applied: Vec<PathBuf> = cfg.applied.keys().cloned().collect();
        applied.sort();
        View {
            cgroup_root: cfg.cgroup_root.clone(),
            expanded: cfg.expanded.clone(),
            // Only a path the configuration in force or the file names can differ between them.
            runtime_only: cfg.config.iter().chain(&cfg.file_config).map(|e| e.path.clone()).filter(|p| cfg.runtime_only(p)).collect(),
            guarantees: cfg.guarantees.clone(),
            granted: cfg.granted.clone(),
            usage_cpus: cfg.controllers.iter().map(|(p, c)| (p.clone(), c.usage_cpus)).collect(),
            applied,
            guarantee_scale: bpf.guarantee_scale(),
            scheduler: SchedulerStats {
                exits: exits.clone(),
                loads,
                cgroups_unenforced_cpu_max: stats::UNENFORCED_CPU_MAX.load(Ordering::Relaxed),
                ..bpf.scheduler_counts()
            },
            records: records.clone(),
        }
    }
}

/// A report to make on the reports thread.
pub enum Job {
    /// The answer to a control request (list, get, dump, or the cgroup a `set` changed).
    Answer { view: View, request: Request, message: Option<String>, reply: Reply },
    /// The scx_stats figures (--monitor, --stats), to `to`.
    Metrics { view: View, to: stats_server::Answer },
    /// The counters, to the log.
    Log { view: View },
}

/// The reports thread: it makes every report the loop hands it, in order. Dropped, it makes the
/// reports already handed over and ends (so a `set`'s answer is never lost).
pub struct Reports {
    tx: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Reports {
    pub fn spawn() -> Result<Reports> {
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("fdl-reports".into())
            .spawn(move || {
                for job in rx {
                    job.run();
                }
            })
            .context("starting the reports thread")?;
        Ok(Reports { tx: Some(tx), thread: Some(thread) })
    }

    pub fn send(&self, job: Job) {
        if let Some(tx) = &self.tx {
            // The thread ends only when this sender is dropped.
            let _ = tx.send(job);
        }
    }
}

impl Drop for Reports {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Job {
    fn run(self) {
        match self {
            Job::Answer { view, request, message, reply } => {
                // A bug in a report must not pass for a request that was not applied (the client
                // would read "stopped before it applied" of a set that was), nor end the thread.
                let applied = message.is_some();
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| view.answer(request, message)));
                reply.send(match answer {
                    Ok(answer) => answer.unwrap_or_else(|e| Response::error(&e)),
                    Err(_) => Response::error(&anyhow::anyhow!(
                        "making the report failed (a bug: scx_fdl's log has it){}",
                        if applied { "; the set was applied" } else { "" }
                    )),
                })
            }
            Job::Metrics { view, to } => to(view.metrics()),
            Job::Log { view } => view.log_counters(),
        }
    }
}

/// Takes a control request on the loop: a `set` is applied there (it changes the configuration in
/// force; a refused one is answered at once). What is left to answer, with the set's message, goes
/// to the reports thread (Job::Answer, with a View taken after the set).
pub fn take(bpf: &Bpf, cfg: &mut InForce, pending: Pending) -> Option<(Request, Option<String>, Reply)> {
    let (request, reply) = pending.take()?;
    match request {
        Request::Set { cgroup, assign } => match apply_set(bpf, cfg, &cgroup, &assign) {
            Ok(message) => Some((Request::Set { cgroup, assign }, Some(message), reply)),
            Err(e) => {
                reply.send(Response::error(&e));
                None
            }
        },
        // Begun on the loop, before the View of the answer is taken: its figures are of it.
        Request::Window { window_ns } => match bpf.new_window(window_ns) {
            Ok(window) => Some((Request::Window { window_ns }, Some(window_message(window, window_ns)), reply)),
            Err(e) => {
                reply.send(Response::error(&e));
                None
            }
        },
        other => Some((other, None, reply)),
    }
}

/// What `dump --new-window` says it began.
fn window_message(window: u64, window_ns: u64) -> String {
    match window_ns {
        0 => format!("lateness window {window} begun, until the next one"),
        ns => format!("lateness window {window} begun, for {}", humantime::format_duration(std::time::Duration::from_nanos(ns))),
    }
}

/// `set`: changes the configuration in force (validated like the file); what was done.
fn apply_set(bpf: &Bpf, cfg: &mut InForce, cgroup: &str, assign: &[String]) -> Result<String> {
    // The BPF side has exited: its maps are about to go, so a write would be lost.
    if bpf.exited() {
        bail!("scx_fdl is being ejected by the kernel (its log gives the reason): nothing was applied");
    }
    let new = config::apply_set(&cfg.config, &cfg.cgroup_root, cgroup, assign)?;
    let path = config::resolve_path(&cfg.cgroup_root, cgroup)?;
    // A cgroup whose parameters this set changed and the BPF side refused (it does not track the
    // cgroup, no queue is left, ...): the whole set is undone, and says why.
    if let Err(refused) = cfg.apply_config_whole(bpf, new) {
        if bpf.going() {
            bail!("scx_fdl is being ejected by the kernel (its log gives the reason): nothing was applied");
        }
        bail!("{}; nothing was changed", refused.join("; "));
    }
    let mut message = format!(
        "{}: set {} (runtime only: a restart or a SIGHUP reload returns to the configuration file)",
        path.display(),
        assign.join(" ")
    );
    let entry = cfg.config.iter().find(|e| e.path == path);
    if let Some(note) = entry.and_then(|e| config::fair_order_note(&e.params, bpf.fair_deadline_ns(), false)) {
        message += &format!("\nnote: {note}");
    }
    info!("control: {message}");
    Ok(message)
}

impl View {
    /// The answer to a request: what it reads, or for a `set` (applied on the loop already, with
    /// its message) its cgroup or pattern as it stands now.
    pub fn answer(&self, request: Request, message: Option<String>) -> Result<Response> {
        let paths: Vec<PathBuf> = match request {
            Request::Set { cgroup, .. } => vec![config::resolve_path(&self.cgroup_root, &cgroup)?],
            Request::Get { cgroup } => {
                let path = config::resolve_path(&self.cgroup_root, &cgroup)?;
                if !path.exists() && !self.expanded.iter().any(|e| e.path == path) {
                    bail!("cgroup {}: no such cgroup", path.display());
                }
                vec![path]
            }
            Request::List => return Ok(self.list()),
            Request::Dump | Request::Window { .. } => {
                let (scheduler, cgroups) = self.snapshot();
                let cgroups = cgroups.into_iter().map(|(_, r)| r).collect();
                return Ok(Response { ok: true, message, cgroups, scheduler: Some(scheduler), ..Default::default() });
            }
        };
        let tree = self.cgroup_tree();
        let cgroups = paths.iter().map(|p| self.report(p, &tree)).collect();
        Ok(Response { ok: true, message, cgroups, ..Default::default() })
    }

    fn list(&self) -> Response {
        let tree = self.cgroup_tree();
        let cgroups = self.listed_paths(&tree).iter().map(|p| self.report(p, &tree)).collect();
        Response { ok: true, cgroups, scheduler: Some(self.scheduler.clone()), ..Default::default() }
    }

    /// Every cgroup with its figures, read now.
    pub fn cgroup_tree(&self) -> CgroupTree {
        CgroupTree::walk(&self.cgroup_root, |cgid| self.records.read(cgid))
    }

    /// A cgroup's parameters and figures, from a tree read by cgroup_tree().
    pub fn report(&self, path: &Path, tree: &CgroupTree) -> CgroupReport {
        let params = self.expanded.iter().find(|e| e.path == path).map(|e| e.params).unwrap_or_default();
        let node = tree.get(path);
        let mut r = CgroupReport {
            path: path.display().to_string(),
            present: node.is_some(),
            deadline_rr_ns: params.deadline_rr_ns,
            deadline_wakeup_ns: params.deadline_wakeup_ns,
            guaranteed_shares: params.guaranteed_shares,
            guarantee_cpus: self.guarantees.get(path).copied().unwrap_or(0.0),
            runtime_only: self.runtime_only.contains(path),
            ..Default::default()
        };
        if let Some(node) = node {
            r.cgid = node.cgid;
            r.tracked = node.own.is_some();
            if let Some(cg) = node.own {
                r.cpu_weight = cg.cpu_weight;
                r.effective_weight = cg.weight;
                r.idle = cg.idle != 0;
                r.nr_misses = cg.ent.nr_misses;
                (r.max_lateness_ns, r.max_late_pid, r.max_late_comm, r.max_late_wait_ns, r.max_late_woke) =
                    late_start(&cg.ent.max_late);
                // Figures of an older window: none of its starts was late in this one.
                if cg.ent.win_gen == self.scheduler.late_window {
                    (r.window_max_lateness_ns, r.window_late_pid, r.window_late_comm, r.window_late_wait_ns,
                     r.window_late_woke) = late_start(&cg.ent.win_late);
                }
                r.lateness = cg.ent.late_hist.to_vec();
                r.lateness_sum_ns = cg.ent.late_sum_ns;
                r.nr_picks = cg.ent.nr_picks;
                r.nr_wake_starts = cg.ent.nr_wake_starts;
                r.nr_wake_misses = cg.ent.nr_wake_misses;
                if cg.ent.budget_rate > 0 {
                    r.guarantee_budget_ns = cg.ent.budget_ns;
                }
                r.cpu_max = limits::CpuMaxReport::of(&cg.bw);
            }
            r.limit_cpus = tree.limit_cpus(path);
            (r.usage_ns, r.wait_ns) = (node.usage_ns, node.wait_ns);
            r.runq_latency = node.runq_lat.to_vec();
        }
        r.guarantee_granted_cpus =
            guarantee_now(self.granted.get(path).copied().unwrap_or(0.0), self.guarantee_scale, r.limit_cpus);
        if let Some(&usage) = self.usage_cpus.get(path) {
            r.usage_cpus_avg = usage;
            r.attainment = guarantee::attainment(usage, r.guarantee_granted_cpus);
        }
        r
    }

    /// Configured cgroups, first-level cgroups and cgroups with a CPU limit, in path order.
    pub fn listed_paths(&self, tree: &CgroupTree) -> BTreeSet<PathBuf> {
        let mut paths: BTreeSet<PathBuf> = self.expanded.iter().map(|e| e.path.clone()).collect();
        paths.extend(tree.limited().map(Path::to_path_buf));
        if let Ok(dir) = std::fs::read_dir(&self.cgroup_root) {
            paths.extend(dir.flatten().map(|d| d.path()).filter(|p| p.join("cgroup.procs").exists()));
        }
        paths
    }

    /// Everything at once, for `dump` and the metrics: scheduler-wide figures, and the reports of
    /// the cgroups exported (configured first, then by depth; at most MAX_EXPORTED_CGROUPS), each
    /// with its label.
    pub fn snapshot(&self) -> (SchedulerStats, Vec<(String, CgroupReport)>) {
        let tree = self.cgroup_tree();
        let configured: HashSet<&Path> = self.expanded.iter().map(|e| e.path.as_path()).collect();
        let (nodes, dropped) = tree.exported(&configured, stats::MAX_EXPORTED_CGROUPS);
        let cgroups: Vec<(String, CgroupReport)> = nodes
            .iter()
            .map(|n| (stats::cgroup_label(&self.cgroup_root, &n.path), self.report(&n.path, &tree)))
            .collect();
        let scheduler = SchedulerStats { cgroups_exported: cgroups.len(), cgroups_dropped: dropped, ..self.scheduler.clone() };
        (scheduler, cgroups)
    }

    /// The scx_stats figures: scheduler-wide, and the cgroups `list` shows.
    pub fn metrics(&self) -> stats_server::Metrics {
        let tree = self.cgroup_tree();
        let reports: Vec<CgroupReport> = self.listed_paths(&tree).iter().map(|p| self.report(p, &tree)).collect();
        stats_server::Metrics::of(&self.scheduler, &reports)
    }

    pub fn log_counters(&self) {
        let s = &self.scheduler;
        let dispatched: Vec<String> = s.dispatched.iter().map(|(p, n)| format!("{p} {n}")).collect();
        info!(
            "dispatched: {}; queued deadline {} fair {}; runnable {} idle-kicks {} idle-rechecks {} local-waits {} wake-queued {} preempt-kicks {} preempts-deferred {} loans-returned {} fair-preempts {} sibling-preempts {} interactive-wakeups {} migrations {}",
            dispatched.join(", "),
            s.deadline_enqueued,
            s.fair_enqueued,
            s.runnable_tasks,
            s.idle_kicks,
            s.idle_rechecks,
            s.local_waits,
            s.wake_queued,
            s.preempt_kicks,
            s.preempts_deferred,
            s.loans_returned,
            s.fair_preempts,
            s.sibling_preempts,
            s.interactive_wakeups,
            s.migrations
        );
        info!(
            "starvation-clamps {} untracked-cgroups {} fair-misses {} of {} picks, fair-max-lateness {} us; lag-steps {} timer-kicks {} (slice timers {}, crossings {}, lapsed {}) tick-preempts {}",
            s.starvation_clamps,
            s.cgroups_untracked,
            s.fair_misses,
            s.fair_picks,
            s.fair_max_lateness_ns / 1000,
            s.lag_steps,
            s.timer_kicks,
            s.slice_timers,
            s.crossing_timers,
            s.timer_lapsed,
            s.tick_preempts
        );
        let tree = self.cgroup_tree();
        for path in &self.applied {
            let r = self.report(path, &tree);
            info!(
                "{}: used {} ms, waited {} ms, deadline misses {} of {} starts ({} of {} wake-ups), worst lateness {} us{}, weight {} (cpu.weight {}){}",
                r.path,
                r.usage_ns / 1_000_000,
                r.wait_ns / 1_000_000,
                r.nr_misses,
                r.nr_picks,
                r.nr_wake_misses,
                r.nr_wake_starts,
                r.max_lateness_ns / 1000,
                worst_late_start(&r),
                r.effective_weight,
                r.cpu_weight,
                if r.guaranteed_shares > 0 {
                    format!(
                        ", {:.2} of {:.2} guaranteed CPUs (asked {:.2})",
                        r.usage_cpus_avg, r.guarantee_granted_cpus, r.guarantee_cpus
                    )
                } else {
                    String::new()
                }
            );
        }
        if !log::log_enabled!(log::Level::Debug) {
            return;
        }
        for cgid in self.records.ids() {
            let Some(cg) = self.records.read(cgid) else { continue };
            // The root's weight sum is kept in the BPF side's state, not in its record.
            let wsum = if cg.parent_cgref == 0 { "(state)".to_string() } else { cg.wsum.to_string() };
            log::debug!(
                "cgroup {cgid}: parent {} weight {} wsum {wsum} active {} contrib {} usage {} ms",
                cg.parent_cgref, cg.weight, cg.nr_active, cg.contrib, cg.usage_ns / 1_000_000
            );
        }
    }
}

/// The name of thread `tid` (/proc/TID/comm, which also names threads that do not lead their
/// process), or "" for none (0) or a thread gone since.
fn thread_comm(tid: u32) -> String {
    if tid == 0 {
        return String::new();
    }
    std::fs::read_to_string(format!("/proc/{tid}/comm")).map(|s| s.trim_end().to_string()).unwrap_or_default()
}

/// A late start's record as the report's fields: lateness, task, its name (thread_comm), its
/// wait, whether it was a wake-up's.
fn late_start(s: &crate::bpf_intf::fdl_late_start) -> (u64, u32, String, u64, bool) {
    (s.late_ns, s.pid, thread_comm(s.pid), s.wait_ns, s.woke != 0)
}

/// The log line's account of the worst lateness's start: which task, how long it had waited and
/// whether it woke then; "" before any miss.
fn worst_late_start(r: &CgroupReport) -> String {
    if r.max_late_pid == 0 || r.max_lateness_ns == 0 {
        return String::new();
    }
    let name = if r.max_late_comm.is_empty() { "exited".to_string() } else { r.max_late_comm.clone() };
    format!(
        " (tid {} {name}, {} after waiting {} us)",
        r.max_late_pid,
        if r.max_late_woke { "a wake-up" } else { "a resumption" },
        r.max_late_wait_ns / 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Params;
    use std::os::unix::fs::MetadataExt;
    use std::time::{Duration, Instant};

    /// Fake records (the policy seam): a usage per cgroup id.
    struct Fake(HashMap<u64, u64>);

    impl Records for Fake {
        fn read(&self, cgid: u64) -> Option<crate::bpf_intf::fdl_cgroup> {
            let usage_ns = *self.0.get(&cgid)?;
            // SAFETY: fdl_cgroup is plain old data; all zeroes is a valid value.
            let mut c: crate::bpf_intf::fdl_cgroup = unsafe { std::mem::zeroed() };
            c.usage_ns = usage_ns;
            c.cpu_weight = 100;
            Some(c)
        }
        fn ids(&self) -> Vec<u64> {
            self.0.keys().copied().collect()
        }
    }

    /// `n` cgroup-like directories (with cgroup.procs) under g0..g99, each used 1 ms; and a view
    /// of it with g0 configured.
    fn tree(n: usize) -> (tempfile::TempDir, View) {
        let dir = tempfile::tempdir().unwrap();
        let mut usage = HashMap::new();
        for i in 0..n {
            let d = dir.path().join(format!("g{}/c{i}", i % 100));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cgroup.procs"), "").unwrap();
            usage.insert(std::fs::metadata(&d).unwrap().ino(), 1_000_000);
        }
        for g in 0..n.min(100) {
            std::fs::write(dir.path().join(format!("g{g}/cgroup.procs")), "").unwrap();
        }
        let g0 = dir.path().join("g0");
        let view = View {
            cgroup_root: dir.path().to_path_buf(),
            expanded: vec![config::Entry { path: g0.clone(), params: Params { guaranteed_shares: 512, ..Default::default() } }],
            runtime_only: [g0.clone()].into(),
            guarantees: [(g0.clone(), 0.5)].into(),
            granted: [(g0.clone(), 0.5)].into(),
            usage_cpus: [(g0, 0.25)].into(),
            applied: Vec::new(),
            guarantee_scale: 1.0,
            scheduler: SchedulerStats { preempt_kicks: 7, ..Default::default() },
            records: Arc::new(Fake(usage)),
        };
        (dir, view)
    }

    /// A request as the control server hands it to the loop, and the client's answer when it
    /// comes.
    fn ask(request: Request) -> (Pending, std::thread::JoinHandle<Response>) {
        let (tx, rx) = mpsc::channel();
        let client = std::thread::spawn(move || crate::control::wait_for_answer(request, &tx, Duration::from_secs(60)));
        (rx.recv().unwrap(), client)
    }

    #[test]
    fn a_get_reports_the_subtree_and_the_configuration() {
        let (dir, view) = tree(300);
        let r = view.answer(Request::Get { cgroup: "g0".into() }, None).unwrap();
        let g0 = &r.cgroups[0];
        assert_eq!(g0.usage_ns, 3_000_000, "g0's three children, 1 ms each");
        assert_eq!((g0.guaranteed_shares, g0.runtime_only, g0.attainment), (512, true, 0.5));
        let list = view.answer(Request::List, None).unwrap();
        assert_eq!(list.cgroups.len(), 100, "the first-level cgroups");
        assert_eq!(list.scheduler.unwrap().preempt_kicks, 7);
        let e = view.answer(Request::Get { cgroup: "nosuch".into() }, None).unwrap_err().to_string();
        assert!(e.contains("no such cgroup"), "{e}");
        // A set was applied on the loop: its answer reports its cgroup, or its pattern, as it is.
        for cgroup in ["g1", "g*/c*", "later"] {
            let set = Request::Set { cgroup: cgroup.into(), assign: vec!["deadline_rr=4ms".into()] };
            let r = view.answer(set, Some("done".into())).unwrap();
            assert_eq!((r.cgroups.len(), r.message.as_deref()), (1, Some("done")), "{cgroup}");
        }
        drop(dir);
    }

    /// Issue 14, defect 3: `list`, `dump` and the scx_stats figures walked every cgroup on the
    /// loop that runs the guarantee loop every 50 ms. Now the loop hands the request over and goes
    /// on; the reports thread walks and answers.
    #[test]
    fn the_loop_hands_a_list_of_ten_thousand_cgroups_over_without_walking() {
        let (dir, view) = tree(10_000);
        let t = Instant::now();
        let walked = view.answer(Request::Dump, None).unwrap();
        let walk = t.elapsed();
        assert_eq!(walked.cgroups.len(), stats::MAX_EXPORTED_CGROUPS);

        let reports = Reports::spawn().unwrap();
        let mut handed = Duration::ZERO;
        let mut clients = Vec::new();
        for request in [Request::List, Request::Dump] {
            let (pending, client) = ask(request);
            let t = Instant::now();
            let (request, reply) = pending.take().unwrap();
            reports.send(Job::Answer { view: view.clone(), request, message: None, reply });
            handed += t.elapsed();
            clients.push(client);
        }
        assert!(handed * 10 < walk, "handing two requests over took {handed:?}, one walk {walk:?}");
        let answers: Vec<Response> = clients.into_iter().map(|c| c.join().unwrap()).collect();
        assert!(answers.iter().all(|a| a.ok), "{:?}", answers.iter().map(|a| &a.error).collect::<Vec<_>>());
        assert_eq!(answers[0].cgroups.len(), 100);
        assert_eq!(answers[1].cgroups.len(), stats::MAX_EXPORTED_CGROUPS);
        drop(dir);
    }

    /// A report that panics is answered with an error that says whether the set was applied, and
    /// the thread goes on answering.
    #[test]
    fn a_report_that_fails_says_the_set_was_applied() {
        struct Broken;
        impl Records for Broken {
            fn read(&self, _: u64) -> Option<crate::bpf_intf::fdl_cgroup> {
                panic!("a broken record")
            }
            fn ids(&self) -> Vec<u64> {
                Vec::new()
            }
        }
        let (dir, good) = tree(10);
        let broken = View { records: Arc::new(Broken), ..good.clone() };
        let reports = Reports::spawn().unwrap();
        let (pending, client) = ask(Request::Get { cgroup: "g0".into() });
        let (request, reply) = pending.take().unwrap();
        reports.send(Job::Answer { view: broken, request, message: Some("set".into()), reply });
        let answer = client.join().unwrap();
        let e = answer.error.unwrap_or_default();
        assert!(!answer.ok && e.contains("the set was applied"), "{e}");
        let (pending, client) = ask(Request::List);
        let (request, reply) = pending.take().unwrap();
        reports.send(Job::Answer { view: good, request, message: None, reply });
        assert!(client.join().unwrap().ok, "the thread answers after a failed report");
        drop(dir);
    }

    /// The worst lateness names its start: the thread (by name while it exists), its wait, and
    /// whether it woke then; nothing before a miss.
    #[test]
    fn the_worst_lateness_names_its_start() {
        assert!(!thread_comm(std::process::id()).is_empty(), "this test's own process has a name");
        assert_eq!(thread_comm(0), "");
        let mut r = CgroupReport { max_lateness_ns: 9_000_000, max_late_pid: 7, max_late_wait_ns: 97_225_000,
                                   max_late_woke: true, max_late_comm: "fdl-probe".into(), ..Default::default() };
        assert_eq!(worst_late_start(&r), " (tid 7 fdl-probe, a wake-up after waiting 97225 us)");
        r.max_late_comm.clear();
        r.max_late_woke = false;
        assert_eq!(worst_late_start(&r), " (tid 7 exited, a resumption after waiting 97225 us)");
        r.max_lateness_ns = 0;
        assert_eq!(worst_late_start(&r), "");
    }

    /// Reports handed over before the thread is dropped are still answered: a `set` applied on
    /// the loop is never told it was not.
    #[test]
    fn dropping_the_reports_thread_answers_what_it_was_handed() {
        let (dir, view) = tree(50);
        let reports = Reports::spawn().unwrap();
        let (pending, client) = ask(Request::Get { cgroup: "g0".into() });
        let (request, reply) = pending.take().unwrap();
        reports.send(Job::Answer { view, request, message: Some("set".into()), reply });
        drop(reports);
        let answer = client.join().unwrap();
        assert!(answer.ok && answer.message.as_deref() == Some("set"), "{answer:?}");
        drop(dir);
    }
}
