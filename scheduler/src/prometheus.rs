//! Prometheus: `/metrics` on --prometheus-addr, collected when it is scraped.
//!
//! A scrape asks the scheduler's loop for a `dump` (the same figures `scx_fdl dump` prints, read
//! at that moment), and renders them in OpenMetrics text through `prometheus-client`: times in
//! seconds, histograms as `_bucket`/`_sum`/`_count`, one `cgroup` label per exported cgroup (at
//! most stats::MAX_EXPORTED_CGROUPS, so the label set stays bounded). Nothing is collected
//! between scrapes, and a cgroup that is gone is gone from the next scrape.
//!
//! Every metric is defined once: the exporter's name, kind and unit in METRICS, and its meaning
//! where its figure is defined (stats::SchedulerStats, stats_server::CgroupMetrics: the
//! descriptions scx_stats prints as well; Help). Rendering a value under a name that is not there is a
//! bug the tests catch.
//!
//! Counters stay monotonic across what would make a raw value fall: the BPF side's counts restart
//! when the scheduler is loaded again (SchedulerStats::loads) or a cgroup is created again under
//! the same path (a new cgroup id), and a subtree's sum dips while a removed descendant's counts
//! move into its parent (`fdl_cgroup_exit`). A dip adds nothing, a restart adds all of the new
//! raw value (Counters).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::control::{self, CgroupReport, Pending, Request};
use crate::stats::{self, lat_bucket_bound_us, SchedulerStats};
use crate::stats_server;

/// How long a scrape waits for the scheduler's loop (it answers within its 50 ms guarantee period,
/// or at once when idle; longer only while the BPF program is being loaded again).
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);

/// Scrapes served at once; more are answered 503 at once.
const MAX_SCRAPES: usize = 4;

/// A counter series not seen for this long is forgotten: if it comes back (a cgroup again within
/// the export cap), Prometheus sees a counter reset, which is what happened.
const FORGET_AFTER: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// How a raw value becomes the exported one: a count as it is, or a time in seconds from
/// nanoseconds or microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    Count,
    Nanoseconds,
    Microseconds,
}

impl Scale {
    fn seconds(self) -> bool {
        self != Scale::Count
    }

    fn per_second(self) -> f64 {
        match self {
            Scale::Count => 1.0,
            Scale::Nanoseconds => 1e9,
            Scale::Microseconds => 1e6,
        }
    }
}

/// One metric family. `name` is the family's name without its unit (`_seconds`, added for
/// times) and without the `_total` of counters; `exposed` gives the sample name.
#[derive(Debug)]
struct Def {
    name: &'static str,
    kind: Kind,
    scale: Scale,
    help: Help,
}

/// A family's help text: the description of the field whose figure it exports, defined there once
/// (a scheduler-wide one in stats::SchedulerStats, a cgroup's in stats_server::CgroupMetrics), or
/// its own where it exports no field as it is (a sum over labels, a ratio of two fields).
#[derive(Debug)]
enum Help {
    Text(&'static str),
    Scheduler(&'static str),
    Cgroup(&'static str),
}

impl Help {
    fn text(&self) -> String {
        match self {
            Help::Text(t) => t.to_string(),
            Help::Scheduler(f) => stats_server::desc::<SchedulerStats>(f).unwrap_or_else(|| panic!("SchedulerStats has no described field {f}")),
            Help::Cgroup(f) => stats_server::desc::<stats_server::CgroupMetrics>(f).unwrap_or_else(|| panic!("CgroupMetrics has no described field {f}")),
        }
    }
}

use Help::{Cgroup, Scheduler, Text};
use Kind::{Counter, Gauge, Histogram};
use Scale::{Count, Microseconds, Nanoseconds};

#[rustfmt::skip]
const METRICS: &[Def] = &[
    Def { name: "scx_fdl_dispatched_tasks", kind: Counter, scale: Count, help: Scheduler("dispatched") },
    Def { name: "scx_fdl_enqueued_tasks", kind: Counter, scale: Count, help: Text("Tasks queued, by queue: deadline or fair") },
    Def { name: "scx_fdl_idle_kicks", kind: Counter, scale: Count, help: Scheduler("idle_kicks") },
    Def { name: "scx_fdl_preempt_kicks", kind: Counter, scale: Count, help: Scheduler("preempt_kicks") },
    Def { name: "scx_fdl_fair_preempts", kind: Counter, scale: Count, help: Scheduler("fair_preempts") },
    Def { name: "scx_fdl_sibling_preempts", kind: Counter, scale: Count, help: Scheduler("sibling_preempts") },
    Def { name: "scx_fdl_preempts_deferred", kind: Counter, scale: Count, help: Scheduler("preempts_deferred") },
    Def { name: "scx_fdl_interactive_wakeups", kind: Counter, scale: Count, help: Scheduler("interactive_wakeups") },
    Def { name: "scx_fdl_migrations", kind: Counter, scale: Count, help: Scheduler("migrations") },
    Def { name: "scx_fdl_domain_busy", kind: Counter, scale: Microseconds, help: Scheduler("domain_busy_secs") },
    Def { name: "scx_fdl_domain_cpu", kind: Counter, scale: Microseconds, help: Scheduler("domain_cpu_secs") },
    Def { name: "scx_fdl_domain_cpus", kind: Gauge, scale: Count, help: Scheduler("domain_cpus") },
    Def { name: "scx_fdl_domain_took_tasks", kind: Counter, scale: Count, help: Text("Tasks a queue domain's CPUs took, with several domains, by where from: own (their own domain's queues), steal (another domain's, their own having none of that queue's work), order (another domain's whose first task was more than a slice ahead in the queue's virtual time)") },
    Def { name: "scx_fdl_domain_load", kind: Gauge, scale: Count, help: Scheduler("domain_load") },
    Def { name: "scx_fdl_domain_runnable", kind: Gauge, scale: Count, help: Scheduler("domain_runnable") },
    Def { name: "scx_fdl_domain_util", kind: Gauge, scale: Count, help: Scheduler("domain_util") },
    Def { name: "scx_fdl_domain_moved_in_tasks", kind: Counter, scale: Count, help: Scheduler("domain_moved_in") },
    Def { name: "scx_fdl_balancer_periods", kind: Counter, scale: Count, help: Scheduler("balancer_periods") },
    Def { name: "scx_fdl_balancer_moves", kind: Counter, scale: Count, help: Scheduler("balancer_moves") },
    Def { name: "scx_fdl_balancer_deadline_moves", kind: Counter, scale: Count, help: Scheduler("balancer_deadline_moves") },
    Def { name: "scx_fdl_starvation_clamps", kind: Counter, scale: Count, help: Scheduler("starvation_clamps") },
    Def { name: "scx_fdl_fair_deadline_misses", kind: Counter, scale: Count, help: Scheduler("fair_misses") },
    Def { name: "scx_fdl_cgroups_untracked", kind: Counter, scale: Count, help: Scheduler("cgroups_untracked") },
    Def { name: "scx_fdl_kernel_events", kind: Counter, scale: Count, help: Scheduler("kernel_events") },
    Def { name: "scx_fdl_scheduler_exits", kind: Counter, scale: Count, help: Scheduler("exits") },
    Def { name: "scx_fdl_scheduler_loads", kind: Counter, scale: Count, help: Scheduler("loads") },
    Def { name: "scx_fdl_runnable_tasks", kind: Gauge, scale: Count, help: Scheduler("runnable_tasks") },
    Def { name: "scx_fdl_fair_max_lateness", kind: Gauge, scale: Nanoseconds, help: Scheduler("fair_max_lateness_ns") },
    Def { name: "scx_fdl_cgroups_exported", kind: Gauge, scale: Count, help: Scheduler("cgroups_exported") },
    Def { name: "scx_fdl_cgroups_dropped", kind: Gauge, scale: Count, help: Scheduler("cgroups_dropped") },
    Def { name: "scx_fdl_guarantee_scale", kind: Gauge, scale: Count, help: Scheduler("guarantee_scale") },
    Def { name: "scx_fdl_fair_protected_cpus", kind: Gauge, scale: Count, help: Scheduler("fair_protected_cpus") },
    Def { name: "scx_fdl_cgroups_unenforced_cpu_max", kind: Gauge, scale: Count, help: Scheduler("cgroups_unenforced_cpu_max") },
    Def { name: "scx_fdl_fair_deadline_starts", kind: Counter, scale: Count, help: Scheduler("fair_picks") },
    Def { name: "scx_fdl_lag_steps", kind: Counter, scale: Count, help: Scheduler("lag_steps") },
    Def { name: "scx_fdl_timer_kicks", kind: Counter, scale: Count, help: Scheduler("timer_kicks") },
    Def { name: "scx_fdl_timer_lapsed", kind: Counter, scale: Count, help: Scheduler("timer_lapsed") },
    Def { name: "scx_fdl_slice_timers", kind: Counter, scale: Count, help: Scheduler("slice_timers") },
    Def { name: "scx_fdl_crossing_timers", kind: Counter, scale: Count, help: Scheduler("crossing_timers") },
    Def { name: "scx_fdl_tick_preempts", kind: Counter, scale: Count, help: Scheduler("tick_preempts") },
    Def { name: "scx_fdl_empty_dispatches", kind: Counter, scale: Count, help: Scheduler("dispatch_empty") },
    Def { name: "scx_fdl_empty_dispatches_with_work_queued", kind: Counter, scale: Count, help: Scheduler("dispatch_empty_queued") },
    Def { name: "scx_fdl_empty_dispatches_in_flight", kind: Counter, scale: Count, help: Scheduler("dispatch_inflight") },
    Def { name: "scx_fdl_prev_kept_untaken", kind: Counter, scale: Count, help: Scheduler("prev_kept_untaken") },
    Def { name: "scx_fdl_skip_takes", kind: Counter, scale: Count, help: Scheduler("skip_takes") },
    Def { name: "scx_fdl_fair_first", kind: Counter, scale: Count, help: Scheduler("fair_first") },
    Def { name: "scx_fdl_scan_strays", kind: Counter, scale: Count, help: Scheduler("scan_strays") },
    Def { name: "scx_fdl_idle_rechecks", kind: Counter, scale: Count, help: Scheduler("idle_rechecks") },
    Def { name: "scx_fdl_local_waits", kind: Counter, scale: Count, help: Scheduler("local_waits") },
    Def { name: "scx_fdl_wake_queued", kind: Counter, scale: Count, help: Scheduler("wake_queued") },
    Def { name: "scx_fdl_loans_returned", kind: Counter, scale: Count, help: Scheduler("loans_returned") },
    Def { name: "scx_fdl_cgroup_cpu_usage", kind: Counter, scale: Nanoseconds, help: Cgroup("usage_ns") },
    Def { name: "scx_fdl_cgroup_wait", kind: Counter, scale: Nanoseconds, help: Cgroup("wait_ns") },
    Def { name: "scx_fdl_cgroup_runq_latency", kind: Histogram, scale: Nanoseconds, help: Cgroup("runq_latency") },
    Def { name: "scx_fdl_cgroup_cpu_weight", kind: Gauge, scale: Count, help: Cgroup("cpu_weight") },
    Def { name: "scx_fdl_cgroup_effective_weight", kind: Gauge, scale: Count, help: Cgroup("effective_weight") },
    Def { name: "scx_fdl_cgroup_idle", kind: Gauge, scale: Count, help: Cgroup("idle") },
    Def { name: "scx_fdl_cgroup_deadline_misses", kind: Counter, scale: Count, help: Cgroup("nr_misses") },
    Def { name: "scx_fdl_cgroup_deadline_starts", kind: Counter, scale: Count, help: Cgroup("nr_picks") },
    Def { name: "scx_fdl_cgroup_deadline_wake_starts", kind: Counter, scale: Count, help: Cgroup("nr_wake_starts") },
    Def { name: "scx_fdl_cgroup_deadline_wake_misses", kind: Counter, scale: Count, help: Cgroup("nr_wake_misses") },
    Def { name: "scx_fdl_cgroup_lateness", kind: Histogram, scale: Nanoseconds, help: Cgroup("lateness") },
    Def { name: "scx_fdl_cgroup_max_lateness", kind: Gauge, scale: Nanoseconds, help: Cgroup("max_lateness_ns") },
    Def { name: "scx_fdl_cgroup_deadline_rr", kind: Gauge, scale: Nanoseconds, help: Cgroup("deadline_rr_ns") },
    Def { name: "scx_fdl_cgroup_deadline_wakeup", kind: Gauge, scale: Nanoseconds, help: Cgroup("deadline_wakeup_ns") },
    Def { name: "scx_fdl_cgroup_guaranteed_shares", kind: Gauge, scale: Count, help: Cgroup("guaranteed_shares") },
    Def { name: "scx_fdl_cgroup_guarantee_cpus", kind: Gauge, scale: Count, help: Cgroup("guarantee_cpus") },
    Def { name: "scx_fdl_cgroup_guarantee_granted_cpus", kind: Gauge, scale: Count, help: Cgroup("guarantee_granted_cpus") },
    Def { name: "scx_fdl_cgroup_guarantee_usage_cpus", kind: Gauge, scale: Count, help: Cgroup("guarantee_usage_cpus") },
    Def { name: "scx_fdl_cgroup_guarantee_attainment_ratio", kind: Gauge, scale: Count, help: Cgroup("attainment") },
    Def { name: "scx_fdl_cgroup_guarantee_budget", kind: Gauge, scale: Nanoseconds, help: Cgroup("guarantee_budget_ns") },
    Def { name: "scx_fdl_cgroup_nr_periods", kind: Counter, scale: Count, help: Cgroup("nr_periods") },
    Def { name: "scx_fdl_cgroup_nr_throttled", kind: Counter, scale: Count, help: Cgroup("nr_throttled") },
    Def { name: "scx_fdl_cgroup_throttled", kind: Counter, scale: Microseconds, help: Cgroup("throttled_usec") },
    Def { name: "scx_fdl_cgroup_nr_bursts", kind: Counter, scale: Count, help: Cgroup("nr_bursts") },
    Def { name: "scx_fdl_cgroup_burst", kind: Counter, scale: Microseconds, help: Cgroup("burst_usec") },
    Def { name: "scx_fdl_cgroup_cpu_max_cpus", kind: Gauge, scale: Count, help: Text("Cgroups with cpu.max: the limit in CPUs (quota / period)") },
    Def { name: "scx_fdl_cgroup_is_throttled", kind: Gauge, scale: Count, help: Cgroup("throttled") },
];

fn def(name: &str) -> &'static Def {
    METRICS.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("metric {name} is not defined in METRICS"))
}

/// The name a family's samples carry (histograms add `_bucket`, `_sum`, `_count` to it).
#[cfg(test)]
fn exposed(d: &Def) -> String {
    let unit = if d.scale.seconds() { "_seconds" } else { "" };
    let total = if d.kind == Counter { "_total" } else { "" };
    format!("{}{unit}{total}", d.name)
}

/// Every sample name the exporter can produce.
#[cfg(test)]
fn exposed_names() -> Vec<String> {
    METRICS
        .iter()
        .flat_map(|d| match d.kind {
            Histogram => ["_bucket", "_sum", "_count"].iter().map(|s| format!("{}{s}", exposed(d))).collect(),
            _ => vec![exposed(d)],
        })
        .collect()
}

type Labels = Vec<(&'static str, String)>;

#[derive(Debug, Clone)]
enum Value {
    Count(u64),
    Seconds(f64),
    Gauge(f64),
    /// Sum in seconds, count, and per bucket its upper bound in seconds (infinity: +Inf) and the
    /// observations in it (not cumulative: the encoder sums them).
    Histogram(f64, u64, Vec<(f64, u64)>),
}

/// Of every counter series: what its raw values were counted under (epoch, cgroup id), the
/// highest raw value seen under that, the value exported, and when it was last seen.
#[derive(Debug, Default)]
pub struct Counters {
    series: HashMap<String, Counted>,
}

#[derive(Debug, Clone, Copy)]
struct Counted {
    ident: (u64, u64),
    high: u64,
    total: u64,
    seen: Instant,
}

impl Counters {
    /// The exported value of a series whose raw value is `raw` now, counted under `ident`.
    fn count(&mut self, key: String, ident: (u64, u64), raw: u64) -> u64 {
        let now = Instant::now();
        let c = self.series.entry(key).or_insert(Counted { ident, high: 0, total: 0, seen: now });
        if c.ident != ident {
            *c = Counted { ident, high: 0, ..*c };
        }
        c.total += raw.saturating_sub(c.high);
        c.high = c.high.max(raw);
        c.seen = now;
        c.total
    }

    fn forget_old(&mut self, after: Duration) {
        self.series.retain(|_, c| c.seen.elapsed() < after);
    }
}

/// One scrape's families, by name, each with its samples in the order they were added.
#[derive(Debug, Default)]
struct Exposition {
    families: BTreeMap<&'static str, Vec<(Labels, Value)>>,
}

fn series_key(name: &str, labels: &Labels) -> String {
    let mut key = name.to_string();
    for (k, v) in labels {
        key += &format!("\x1f{k}={v}");
    }
    key
}

/// Builds one scrape's exposition from a dump, counting through `counters`.
struct Build<'a> {
    out: Exposition,
    counters: &'a mut Counters,
    epoch: u64,
}

impl Build<'_> {
    fn add(&mut self, d: &'static Def, labels: Labels, value: Value) {
        debug_assert!(
            matches!((d.kind, &value), (Counter, Value::Count(_) | Value::Seconds(_)) | (Gauge, Value::Gauge(_)) | (Histogram, Value::Histogram(..))),
            "{}: {value:?} is not a {:?}",
            d.name,
            d.kind
        );
        self.out.families.entry(d.name).or_default().push((labels, value));
    }

    /// A counter series of raw value `raw` (in the family's scale), counted under `ident`.
    fn counter(&mut self, name: &'static str, labels: Labels, ident: (u64, u64), raw: u64) {
        let d = def(name);
        let total = self.counters.count(series_key(name, &labels), ident, raw);
        let value = if d.scale.seconds() { Value::Seconds(total as f64 / d.scale.per_second()) } else { Value::Count(total) };
        self.add(d, labels, value);
    }

    /// A gauge; times in the family's raw unit, exported in seconds.
    fn gauge(&mut self, name: &'static str, labels: Labels, raw: f64) {
        let d = def(name);
        self.add(d, labels, Value::Gauge(raw / d.scale.per_second()));
    }

    /// A histogram over the log2 microsecond buckets (stats::lat_bucket_bound_us), `buckets`
    /// counts per bucket and `sum` in the family's raw unit. Each cumulative count is counted
    /// like a counter series, so that every bucket stays monotonic, and the cumulative counts
    /// stay ordered (each is the sum of highs of an ordered raw sequence).
    fn histogram(&mut self, name: &'static str, labels: Labels, ident: (u64, u64), buckets: &[u64], sum: u64) {
        let d = def(name);
        let (mut raw_cumulative, mut previous, mut per_bucket) = (0, 0, Vec::with_capacity(buckets.len()));
        for (i, n) in buckets.iter().enumerate() {
            raw_cumulative += n;
            let bound = lat_bucket_bound_us(i).map_or(f64::INFINITY, |us| us as f64 / 1e6);
            let key = series_key(&format!("{name}\x1fle={i}"), &labels);
            let cumulative = self.counters.count(key, ident, raw_cumulative);
            per_bucket.push((bound, cumulative.saturating_sub(previous)));
            previous = previous.max(cumulative);
        }
        let sum = self.counters.count(series_key(&format!("{name}\x1fsum"), &labels), ident, sum);
        self.add(d, labels, Value::Histogram(sum as f64 / d.scale.per_second(), previous, per_bucket));
    }

    fn scheduler(&mut self, s: &SchedulerStats) {
        let ep = (self.epoch, 0);
        for (path, n) in &s.dispatched {
            self.counter("scx_fdl_dispatched_tasks", vec![("type", path.clone())], ep, *n);
        }
        self.counter("scx_fdl_enqueued_tasks", vec![("queue", "deadline".into())], ep, s.deadline_enqueued);
        self.counter("scx_fdl_enqueued_tasks", vec![("queue", "fair".into())], ep, s.fair_enqueued);
        self.counter("scx_fdl_idle_kicks", vec![], ep, s.idle_kicks);
        self.counter("scx_fdl_preempt_kicks", vec![], ep, s.preempt_kicks);
        self.counter("scx_fdl_fair_preempts", vec![], ep, s.fair_preempts);
        self.counter("scx_fdl_sibling_preempts", vec![], ep, s.sibling_preempts);
        self.counter("scx_fdl_preempts_deferred", vec![], ep, s.preempts_deferred);
        self.counter("scx_fdl_interactive_wakeups", vec![], ep, s.interactive_wakeups);
        self.counter("scx_fdl_migrations", vec![], ep, s.migrations);
        // /proc/stat's busy time never restarts: one identity for every load.
        for (d, secs) in &s.domain_busy_secs {
            self.counter("scx_fdl_domain_busy", vec![("domain", d.clone())], (0, 0), (secs * 1e6) as u64);
        }
        for (d, secs) in &s.domain_cpu_secs {
            self.counter("scx_fdl_domain_cpu", vec![("domain", d.clone())], (0, 0), (secs * 1e6) as u64);
        }
        for (d, n) in &s.domain_cpus {
            self.gauge("scx_fdl_domain_cpus", vec![("domain", d.clone())], *n as f64);
        }
        for (from, m) in [("own", &s.domain_took_own), ("steal", &s.domain_took_steal), ("order", &s.domain_took_order)] {
            for (d, n) in m {
                self.counter("scx_fdl_domain_took_tasks", vec![("domain", d.clone()), ("from", from.into())], ep, *n);
            }
        }
        for (name, m) in [("scx_fdl_domain_load", &s.domain_load), ("scx_fdl_domain_runnable", &s.domain_runnable), ("scx_fdl_domain_util", &s.domain_util)] {
            for (d, v) in m {
                self.gauge(name, vec![("domain", d.clone())], *v);
            }
        }
        for (d, n) in &s.domain_moved_in {
            self.counter("scx_fdl_domain_moved_in_tasks", vec![("domain", d.clone())], ep, *n);
        }
        // The balancer's totals are the process's, kept over reloads of the BPF side.
        self.counter("scx_fdl_balancer_periods", vec![], (0, 0), s.balancer_periods);
        self.counter("scx_fdl_balancer_moves", vec![], (0, 0), s.balancer_moves);
        self.counter("scx_fdl_balancer_deadline_moves", vec![], (0, 0), s.balancer_deadline_moves);
        self.counter("scx_fdl_starvation_clamps", vec![], ep, s.starvation_clamps);
        self.counter("scx_fdl_fair_deadline_misses", vec![], ep, s.fair_misses);
        self.counter("scx_fdl_cgroups_untracked", vec![], ep, s.cgroups_untracked);
        self.counter("scx_fdl_fair_deadline_starts", vec![], ep, s.fair_picks);
        self.counter("scx_fdl_lag_steps", vec![], ep, s.lag_steps);
        self.counter("scx_fdl_timer_kicks", vec![], ep, s.timer_kicks);
        self.counter("scx_fdl_timer_lapsed", vec![], ep, s.timer_lapsed);
        self.counter("scx_fdl_slice_timers", vec![], ep, s.slice_timers);
        self.counter("scx_fdl_crossing_timers", vec![], ep, s.crossing_timers);
        self.counter("scx_fdl_tick_preempts", vec![], ep, s.tick_preempts);
        self.counter("scx_fdl_empty_dispatches", vec![], ep, s.dispatch_empty);
        self.counter("scx_fdl_empty_dispatches_with_work_queued", vec![], ep, s.dispatch_empty_queued);
        self.counter("scx_fdl_empty_dispatches_in_flight", vec![], ep, s.dispatch_inflight);
        self.counter("scx_fdl_prev_kept_untaken", vec![], ep, s.prev_kept_untaken);
        self.counter("scx_fdl_skip_takes", vec![], ep, s.skip_takes);
        self.counter("scx_fdl_fair_first", vec![], ep, s.fair_first);
        self.counter("scx_fdl_scan_strays", vec![], ep, s.scan_strays);
        self.counter("scx_fdl_idle_rechecks", vec![], ep, s.idle_rechecks);
        self.counter("scx_fdl_local_waits", vec![], ep, s.local_waits);
        self.counter("scx_fdl_wake_queued", vec![], ep, s.wake_queued);
        self.counter("scx_fdl_loans_returned", vec![], ep, s.loans_returned);
        for (event, n) in &s.kernel_events {
            self.counter("scx_fdl_kernel_events", vec![("event", event.clone())], ep, *n);
        }
        // What this process keeps itself: never restarts.
        for (reason, n) in &s.exits {
            self.counter("scx_fdl_scheduler_exits", vec![("reason", reason.clone())], (0, 0), *n);
        }
        self.counter("scx_fdl_scheduler_loads", vec![], (0, 0), s.loads);
        self.gauge("scx_fdl_runnable_tasks", vec![], s.runnable_tasks as f64);
        self.gauge("scx_fdl_fair_max_lateness", vec![], s.fair_max_lateness_ns as f64);
        self.gauge("scx_fdl_cgroups_exported", vec![], s.cgroups_exported as f64);
        self.gauge("scx_fdl_cgroups_dropped", vec![], s.cgroups_dropped as f64);
        self.gauge("scx_fdl_guarantee_scale", vec![], s.guarantee_scale);
        self.gauge("scx_fdl_fair_protected_cpus", vec![], s.fair_protected_cpus);
        self.gauge("scx_fdl_cgroups_unenforced_cpu_max", vec![], s.cgroups_unenforced_cpu_max as f64);
    }

    fn cgroup(&mut self, label: &str, r: &CgroupReport) {
        let cg = || vec![("cgroup", label.to_string())];
        let id = (self.epoch, r.cgid);
        self.counter("scx_fdl_cgroup_cpu_usage", cg(), id, r.usage_ns);
        self.counter("scx_fdl_cgroup_wait", cg(), id, r.wait_ns);
        // Every measured wait is in wait_ns and in exactly one bucket.
        self.histogram("scx_fdl_cgroup_runq_latency", cg(), id, &r.runq_latency, r.wait_ns);
        self.gauge("scx_fdl_cgroup_cpu_weight", cg(), r.cpu_weight as f64);
        self.gauge("scx_fdl_cgroup_effective_weight", cg(), r.effective_weight as f64);
        self.gauge("scx_fdl_cgroup_idle", cg(), r.idle as u8 as f64);
        if r.deadline_rr_ns > 0 {
            self.counter("scx_fdl_cgroup_deadline_misses", cg(), id, r.nr_misses);
            self.counter("scx_fdl_cgroup_deadline_starts", cg(), id, r.nr_picks);
            self.counter("scx_fdl_cgroup_deadline_wake_starts", cg(), id, r.nr_wake_starts);
            self.counter("scx_fdl_cgroup_deadline_wake_misses", cg(), id, r.nr_wake_misses);
            self.histogram("scx_fdl_cgroup_lateness", cg(), id, &r.lateness, r.lateness_sum_ns);
            self.gauge("scx_fdl_cgroup_max_lateness", cg(), r.max_lateness_ns as f64);
            self.gauge("scx_fdl_cgroup_deadline_rr", cg(), r.deadline_rr_ns as f64);
            let wakeup = if r.deadline_wakeup_ns > 0 { r.deadline_wakeup_ns } else { r.deadline_rr_ns };
            self.gauge("scx_fdl_cgroup_deadline_wakeup", cg(), wakeup as f64);
        }
        if let Some(m) = &r.cpu_max {
            self.counter("scx_fdl_cgroup_nr_periods", cg(), id, m.nr_periods);
            self.counter("scx_fdl_cgroup_nr_throttled", cg(), id, m.nr_throttled);
            self.counter("scx_fdl_cgroup_throttled", cg(), id, m.throttled_usec);
            self.counter("scx_fdl_cgroup_nr_bursts", cg(), id, m.nr_bursts);
            self.counter("scx_fdl_cgroup_burst", cg(), id, m.burst_usec);
            self.gauge("scx_fdl_cgroup_cpu_max_cpus", cg(), m.cpus());
            self.gauge("scx_fdl_cgroup_is_throttled", cg(), if m.throttled { 1.0 } else { 0.0 });
        }
        if r.guaranteed_shares > 0 {
            self.gauge("scx_fdl_cgroup_guaranteed_shares", cg(), r.guaranteed_shares as f64);
            self.gauge("scx_fdl_cgroup_guarantee_cpus", cg(), r.guarantee_cpus);
            self.gauge("scx_fdl_cgroup_guarantee_granted_cpus", cg(), r.guarantee_granted_cpus);
            self.gauge("scx_fdl_cgroup_guarantee_usage_cpus", cg(), r.usage_cpus_avg);
            self.gauge("scx_fdl_cgroup_guarantee_attainment_ratio", cg(), r.attainment);
            if r.deadline_rr_ns > 0 {
                self.gauge("scx_fdl_cgroup_guarantee_budget", cg(), r.guarantee_budget_ns as f64);
            }
        }
    }
}

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for (name, samples) in &self.families {
            let d = def(name);
            let unit = d.scale.seconds().then_some(Unit::Seconds);
            let kind = match d.kind {
                Counter => MetricType::Counter,
                Gauge => MetricType::Gauge,
                Histogram => MetricType::Histogram,
            };
            let mut family = encoder.encode_descriptor(d.name, &d.help.text(), unit.as_ref(), kind)?;
            for (labels, value) in samples {
                let mut m = family.encode_family(labels)?;
                match value {
                    Value::Count(n) => m.encode_counter::<NoLabelSet, _, u64>(n, None)?,
                    Value::Seconds(s) => m.encode_counter::<NoLabelSet, _, f64>(s, None)?,
                    Value::Gauge(g) => m.encode_gauge(g)?,
                    Value::Histogram(sum, count, buckets) => m.encode_histogram::<NoLabelSet>(*sum, *count, buckets, None)?,
                }
            }
        }
        Ok(())
    }
}

/// Renders one dump (scheduler-wide figures and the exported cgroups, each with its label) as
/// OpenMetrics text, counting through `counters`.
fn render(counters: &mut Counters, s: &SchedulerStats, cgroups: &[(String, CgroupReport)]) -> Result<String> {
    let mut build = Build { out: Exposition::default(), counters, epoch: s.loads };
    build.scheduler(s);
    for (label, r) in cgroups {
        build.cgroup(label, r);
    }
    build.counters.forget_old(FORGET_AFTER);
    let mut registry = Registry::default();
    registry.register_collector(Box::new(build.out));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).map_err(|e| anyhow!("encoding the metrics: {e}"))?;
    Ok(text)
}

/// What a scrape needs: the way to the scheduler's loop, the cgroup root (for the labels), and the
/// counters' bookkeeping.
struct Scraper {
    loop_tx: Mutex<Sender<Pending>>,
    cgroup_root: PathBuf,
    counters: Mutex<Counters>,
}

impl Scraper {
    fn scrape(&self) -> Result<String> {
        let tx = self.loop_tx.lock().unwrap().clone();
        let response = control::wait_for_answer(Request::Dump, &tx, SCRAPE_TIMEOUT);
        if !response.ok {
            return Err(anyhow!("{}", response.error.unwrap_or_default()));
        }
        let s = response.scheduler.unwrap_or_default();
        let cgroups: Vec<(String, CgroupReport)> = response
            .cgroups
            .into_iter()
            .map(|r| (stats::cgroup_label(&self.cgroup_root, Path::new(&r.path)), r))
            .collect();
        render(&mut self.counters.lock().unwrap(), &s, &cgroups)
    }
}

/// Starts serving `/metrics` on `addr`: every scrape asks the scheduler's loop through
/// `loop_tx`. A busy port or an address this machine does not have is an error here, before
/// anything is attached.
pub fn serve(addr: SocketAddr, loop_tx: Sender<Pending>, cgroup_root: &Path) -> Result<()> {
    let server = tiny_http::Server::http(addr).map_err(|e| {
        anyhow!("cannot serve Prometheus metrics on {addr}: {e}; is another program using it? choose another with --prometheus-addr")
    })?;
    let scraper = Arc::new(Scraper { loop_tx: Mutex::new(loop_tx), cgroup_root: cgroup_root.to_path_buf(), counters: Mutex::default() });
    let busy = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new().name("fdl-prometheus".into()).spawn(move || {
        for request in server.incoming_requests() {
            // A scrape of a thousand cgroups is large; a slow reader holds only its own thread.
            if busy.fetch_add(1, Ordering::AcqRel) >= MAX_SCRAPES {
                busy.fetch_sub(1, Ordering::AcqRel);
                let _ = request.respond(text_response(503, format!("busy: {MAX_SCRAPES} scrapes in progress\n"), PLAIN));
                continue;
            }
            let (scraper, busy) = (scraper.clone(), busy.clone());
            let spawned = std::thread::Builder::new().name("fdl-scrape".into()).spawn(move || {
                answer(&scraper, request);
                busy.fetch_sub(1, Ordering::AcqRel);
            });
            if let Err(e) = spawned {
                log::warn!("prometheus: no thread for a scrape: {e}");
            }
        }
    })?;
    Ok(())
}

const PLAIN: &str = "text/plain; charset=utf-8";
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn text_response(code: u16, body: String, content_type: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let header = tiny_http::Header::from_bytes("Content-Type", content_type).expect("a valid header");
    tiny_http::Response::from_string(body).with_status_code(code).with_header(header)
}

fn answer(scraper: &Scraper, request: tiny_http::Request) {
    let path = request.url().split('?').next().unwrap_or("");
    let response = match (request.method(), path) {
        (tiny_http::Method::Get, "/metrics") => match scraper.scrape() {
            Ok(text) => text_response(200, text, OPENMETRICS),
            Err(e) => text_response(503, format!("scx_fdl cannot answer this scrape now: {e:#}\n"), PLAIN),
        },
        (tiny_http::Method::Get, "/") => text_response(200, "scx_fdl: metrics at /metrics\n".into(), PLAIN),
        _ => text_response(404, "not found: scx_fdl serves GET /metrics\n".into(), PLAIN),
    };
    if let Err(e) = request.respond(response) {
        log::debug!("prometheus: answering a scrape: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{DISPATCH_PATHS, LAT_BUCKETS};

    fn report(usage_ns: u64) -> CgroupReport {
        let mut runq_latency = vec![0; LAT_BUCKETS];
        runq_latency[2] = 5;
        CgroupReport { usage_ns, wait_ns: 7_000, cpu_weight: 100, effective_weight: 100, runq_latency, ..Default::default() }
    }

    /// The value of one sample (exact name and labels) in an exposition.
    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    /// OpenMetrics text: metadata lines, samples `name{labels} value`, and `# EOF` last.
    fn parses_as_openmetrics(text: &str) -> bool {
        text.ends_with("# EOF\n")
            && text.lines().all(|l| {
                if let Some(meta) = l.strip_prefix("# ") {
                    return meta == "EOF" || ["HELP ", "TYPE ", "UNIT "].iter().any(|p| meta.starts_with(p));
                }
                let Some((series, value)) = l.rsplit_once(' ') else { return false };
                let name = series.split('{').next().unwrap();
                (value.parse::<f64>().is_ok() || value == "+Inf")
                    && !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                    && (!series.contains('{') || series.ends_with('}'))
            })
    }

    fn sched(dispatched: u64, loads: u64) -> SchedulerStats {
        SchedulerStats { dispatched: DISPATCH_PATHS.iter().map(|p| (p.to_string(), dispatched)).collect(), loads, ..Default::default() }
    }

    #[test]
    fn domains_are_labelled_and_their_busy_time_survives_a_reload() {
        let mut c = Counters::default();
        let mut s = sched(1, 1);
        s.domain_busy_secs = [("llc0".to_string(), 12.5), ("llc1".to_string(), 3.0)].into();
        s.domain_took_steal = [("llc0".to_string(), 7), ("llc1".to_string(), 2)].into();
        let text = render(&mut c, &s, &[]).unwrap();
        assert!(parses_as_openmetrics(&text), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_domain_busy_seconds_total{domain="llc0"}"#), Some(12.5), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_domain_took_tasks_total{domain="llc1",from="steal"}"#), Some(2.0), "{text}");
        // The BPF side's counts restart with a load; /proc/stat's busy time does not, and is
        // not counted twice.
        let mut s2 = sched(1, 2);
        s2.domain_busy_secs = [("llc0".to_string(), 13.0), ("llc1".to_string(), 3.0)].into();
        s2.domain_took_steal = [("llc0".to_string(), 1), ("llc1".to_string(), 0)].into();
        let text = render(&mut c, &s2, &[]).unwrap();
        assert_eq!(value(&text, r#"scx_fdl_domain_busy_seconds_total{domain="llc0"}"#), Some(13.0), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_domain_took_tasks_total{domain="llc0",from="steal"}"#), Some(8.0), "{text}");
    }

    #[test]
    fn times_in_seconds_real_histograms_and_every_family_typed() {
        let mut c = Counters::default();
        let mut dl = report(2_000_000);
        dl.deadline_rr_ns = 4_000_000;
        dl.lateness = vec![0; LAT_BUCKETS];
        dl.lateness[10] = 3; // below 1024 us
        dl.lateness_sum_ns = 1_500_000;
        dl.nr_misses = 3;
        dl.nr_picks = 300;
        dl.nr_wake_starts = 200;
        dl.nr_wake_misses = 1;
        let text = render(&mut c, &sched(10, 1), &[("/busy".into(), dl)]).unwrap();
        assert!(parses_as_openmetrics(&text), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_dispatched_tasks_total{type="deadline"}"#), Some(10.0), "{text}");
        assert!(text.contains("# TYPE scx_fdl_cgroup_cpu_usage_seconds counter\n"), "{text}");
        assert!(text.contains("# UNIT scx_fdl_cgroup_cpu_usage_seconds seconds\n"), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_cpu_usage_seconds_total{cgroup="/busy"}"#), Some(0.002), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_deadline_rr_seconds{cgroup="/busy"}"#), Some(0.004), "{text}");
        assert!(text.contains("# TYPE scx_fdl_cgroup_runq_latency_seconds histogram\n"), "{text}");
        // Bucket 2 holds waits below 4 us: le 4e-6 has them, le 2e-6 not.
        let bucket = |le: &str| value(&text, &format!(r#"scx_fdl_cgroup_runq_latency_seconds_bucket{{le="{le}",cgroup="/busy"}}"#));
        assert_eq!(bucket("0.000002"), Some(0.0), "{text}");
        assert_eq!(bucket("0.000004"), Some(5.0), "{text}");
        assert_eq!(bucket("+Inf"), Some(5.0), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_runq_latency_seconds_count{cgroup="/busy"}"#), Some(5.0), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_runq_latency_seconds_sum{cgroup="/busy"}"#), Some(0.000007), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_lateness_seconds_sum{cgroup="/busy"}"#), Some(0.0015), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_lateness_seconds_bucket{le="0.001024",cgroup="/busy"}"#), Some(3.0), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_deadline_starts_total{cgroup="/busy"}"#), Some(300.0), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_deadline_wake_starts_total{cgroup="/busy"}"#), Some(200.0), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_cgroup_deadline_wake_misses_total{cgroup="/busy"}"#), Some(1.0), "{text}");
        // Every sample belongs to a defined family, under its exposed name.
        let names = exposed_names();
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let name = l.split(['{', ' ']).next().unwrap();
            assert!(names.iter().any(|n| n == name), "{name} is not an exposed name");
        }
    }

    /// Every family has its help, a scheduler-wide one from the field that defines its figure.
    #[test]
    fn every_family_is_described_once() {
        for d in METRICS {
            assert!(!d.help.text().is_empty(), "{} has no help", d.name);
        }
        assert_eq!(def("scx_fdl_idle_kicks").help.text(), stats_server::desc::<SchedulerStats>("idle_kicks").unwrap());
        assert_eq!(def("scx_fdl_cgroup_throttled").help.text(), stats_server::desc::<stats_server::CgroupMetrics>("throttled_usec").unwrap());
    }

    #[test]
    fn label_values_are_escaped() {
        let mut c = Counters::default();
        let path = r#"/kubepods.slice/pod12\x2d34.slice/a"b"#;
        let text = render(&mut c, &sched(1, 1), &[(path.into(), report(1))]).unwrap();
        assert!(text.contains(r#"cgroup="/kubepods.slice/pod12\\x2d34.slice/a\"b""#), "{text}");
        assert!(parses_as_openmetrics(&text), "{text}");
    }

    #[test]
    fn a_removed_cgroup_leaves_the_next_scrape_and_counters_survive_restarts() {
        let mut c = Counters::default();
        let text = render(&mut c, &sched(10, 1), &[("/busy".into(), report(2_000_000)), ("/gone".into(), report(3_000_000))]).unwrap();
        assert_eq!(value(&text, r#"scx_fdl_cgroup_cpu_usage_seconds_total{cgroup="/gone"}"#), Some(0.003), "{text}");
        // /gone is removed; the scheduler was loaded again, its counts begin again from 4.
        let text = render(&mut c, &sched(4, 2), &[("/busy".into(), report(5_000_000))]).unwrap();
        assert!(!text.contains("/gone"), "{text}");
        // The restarted scheduler's 5 ms of /busy are all new: 2 + 5.
        assert_eq!(value(&text, r#"scx_fdl_cgroup_cpu_usage_seconds_total{cgroup="/busy"}"#), Some(0.007), "{text}");
        assert_eq!(value(&text, r#"scx_fdl_dispatched_tasks_total{type="deadline"}"#), Some(14.0), "{text}");
        assert_eq!(value(&text, "scx_fdl_scheduler_loads_total"), Some(2.0), "{text}");
    }

    /// Issue 14, defect 1: a cgroup's subtree sum that dips (a child was removed; its counts reach
    /// the parent a moment later) was read as a restart, and the whole value counted again.
    #[test]
    fn a_dip_in_a_subtree_sum_is_not_a_restart() {
        let mut c = Counters::default();
        let mut scrape = |usage_ns: u64, cgid: u64, wait_buckets: u64| {
            let mut r = CgroupReport { cgid, ..report(usage_ns) };
            r.runq_latency[2] = wait_buckets;
            let text = render(&mut c, &sched(0, 1), &[("/parent".into(), r)]).unwrap();
            let v = |s: &str| value(&text, s).unwrap();
            (
                v(r#"scx_fdl_cgroup_cpu_usage_seconds_total{cgroup="/parent"}"#),
                v(r#"scx_fdl_cgroup_runq_latency_seconds_bucket{le="+Inf",cgroup="/parent"}"#),
            )
        };
        assert_eq!(scrape(5_000_000, 7, 5), (0.005, 5.0));
        // A child with 2 ms and 2 waits went away; its counts are not in the parent's yet.
        assert_eq!(scrape(3_000_000, 7, 3), (0.005, 5.0), "a dip adds nothing");
        // They arrived, and 1 ms and one wait more: only those are new.
        assert_eq!(scrape(6_000_000, 7, 6), (0.006, 6.0));
        // The cgroup was removed and created again under the same path: its count starts anew.
        assert_eq!(scrape(1_000_000, 8, 1), (0.007, 7.0));
    }

    #[test]
    fn every_name_is_defined_once() {
        let mut names: Vec<&str> = METRICS.iter().map(|d| d.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a metric defined twice");
        for d in METRICS {
            assert!(d.name.starts_with("scx_fdl_") && !d.name.ends_with("_total") && !d.name.ends_with("_seconds"), "{}", d.name);
        }
    }

    /// The Grafana dashboard and the README's queries name only samples the exporter produces: a
    /// renamed metric would leave a panel empty without an error anywhere.
    #[test]
    fn the_dashboard_and_the_readme_query_exposed_samples() {
        // Samples, and histogram families by their own name (README's prose names them).
        let mut names = exposed_names();
        names.extend(METRICS.iter().map(exposed));
        for (file, text) in [
            ("dashboards/scx_fdl.json", include_str!("../../dashboards/scx_fdl.json")),
            ("README.md", include_str!("../../README.md")),
        ] {
            let mut seen = 0;
            for (i, _) in text.match_indices("scx_fdl_") {
                // A sample name: scx_fdl_ and lower-case letters, digits and underscores, not
                // part of a longer word or a path (preceded by a letter, a digit, '_' or '/').
                let name: String = text[i..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect();
                let before = text[..i].chars().next_back();
                // A prefix ("scx_fdl_cgroup_*") names no one sample.
                if name.ends_with('_') || before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '_') {
                    continue;
                }
                assert!(names.contains(&name), "{file} names {name}, which scx_fdl does not export");
                seen += 1;
            }
            assert!(seen > 5, "{file}: only {seen} metric names found");
        }
    }

    #[test]
    fn a_busy_port_is_a_clear_error() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let (tx, _rx) = std::sync::mpsc::channel();
        let e = serve(addr, tx, Path::new("/sys/fs/cgroup")).unwrap_err().to_string();
        assert!(e.contains(&format!("cannot serve Prometheus metrics on {addr}")), "{e}");
        assert!(e.contains("in use"), "{e}");
    }

    /// The whole path: a scrape over HTTP is answered from the loop's dump.
    #[test]
    fn a_scrape_asks_the_loop() {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let (tx, rx) = std::sync::mpsc::channel::<Pending>();
        serve(addr, tx, Path::new("/sys/fs/cgroup")).unwrap();
        std::thread::spawn(move || {
            for pending in rx {
                pending.answer(|req| {
                    assert!(matches!(req, Request::Dump));
                    let r = CgroupReport { path: "/sys/fs/cgroup/web".into(), ..report(1_000_000_000) };
                    control::Response { ok: true, cgroups: vec![r], scheduler: Some(sched(3, 1)), ..Default::default() }
                });
            }
        });
        let get = |path: &str| {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        let out = get("/metrics");
        assert!(out.starts_with("HTTP/1.0 200") || out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(out.contains("application/openmetrics-text"), "{out}");
        assert!(out.contains("scx_fdl_cgroup_cpu_usage_seconds_total{cgroup=\"/web\"} 1"), "{out}");
        assert!(get("/nothing").contains(" 404 "));
    }
}
