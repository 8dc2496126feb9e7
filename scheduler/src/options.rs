//! Command-line options and the exit codes they document.

use std::sync::LazyLock;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;

/// scx_fdl could not start (bad option, kernel without sched_ext, not root, another scheduler).
pub const EXIT_START_FAILED: u8 = 1;
/// The kernel ejected scx_fdl (watchdog stall, BPF error); tasks went back to the default scheduler.
pub const EXIT_EJECTED: u8 = 3;
/// A cgroup got a CPU limit that scx_fdl does not enforce; it stopped so that the kernel's
/// scheduler enforces it.
pub const EXIT_UNENFORCED_LIMIT: u8 = 4;

/// The sched_ext watchdog's timeout when ops.timeout_ms is 0.
const KERNEL_WATCHDOG_MS: u64 = 30_000;
/// Longest watchdog timeout accepted (the kernel refuses longer ones).
const WATCHDOG_MAX_MS: u32 = 30_000;
/// The environment variable scx_utils reads into ops.timeout_ms when the program is opened.
pub const TIMEOUT_ENV: &str = "SCX_TIMEOUT_MS";

/// `scx_fdl --version`: the package version, the commit it was built from (`-dirty`: with changes
/// under scheduler/ not committed; none outside a git checkout) and the target, as scx_utils'
/// build id writes them for the published schedulers.
pub fn version() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(|| {
        let git = env!("FDL_GIT_VERSION");
        let semver = match git {
            "" => env!("CARGO_PKG_VERSION").to_string(),
            _ => format!("{}-{git}", env!("CARGO_PKG_VERSION")),
        };
        scx_utils::build_id::full_version(&semver)
    });
    &VERSION
}

const EXIT_CODES: &str = "\
Exit codes:
  0  stopped by SIGINT or SIGTERM; the kernel's default scheduler took over again
  1  could not start (the message says why and what to do); a subcommand failed (`check`: the
     file is invalid)
  2  bad command line
  3  the kernel ejected scx_fdl (e.g. a runnable task stalled); the exit reason is printed
  4  on a kernel without ops.cgroup_set_bandwidth (before 6.17), where scx_fdl cannot enforce
     CPU limits: a cgroup got one (cpu.max) while scx_fdl ran, so it stopped and the kernel's
     scheduler, which enforces it, took over (see --allow-unenforced-cpu-max)

Runs only on a kernel with sched_ext (CONFIG_SCHED_CLASS_EXT=y); elsewhere use the VM rig
(./demo.sh, vm/run.sh).";

/// What fair work keeps beside the guarantees (--fair-protection; enum fdl_fair_protect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FairProtection {
    /// Its share at the deadline containers' unboosted cpu.weight: guarantees are scaled.
    Weighted,
    /// What the granted guarantees leave: guarantees are never scaled.
    Floor,
}

/// scx_fdl: Fair Deadline scheduling for cgroups, as a sched_ext scheduler.
///
/// Without a subcommand it runs the scheduler. Weighted fairness over the whole cgroup v2 tree
/// (cpu.weight at every level, nice within a cgroup), deadline containers (deadline_rr,
/// deadline_wakeup) and bandwidth guarantees (guaranteed_shares) from --config or `scx_fdl set`.
/// The subcommands talk to a running scx_fdl over its control socket (root only); --monitor reads its
/// statistics from scx_stats' socket.
#[derive(Debug, Parser)]
#[command(version = version(), about, long_about, after_help = EXIT_CODES, args_conflicts_with_subcommands = true)]
pub struct Opts {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Do not start the scheduler: read the running scx_fdl's statistics (scx_stats) every SECS
    /// (default: --interval-secs) and print a refreshing summary: dispatches by path, runnable
    /// tasks, kicks and migrations, and per cgroup its parameters, CPU used, time waited, wake-ups
    /// that started past their deadline (of all its wake-ups), worst lateness and run-queue
    /// latency p99. Waits for a scheduler to serve them.
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "0",
          value_parser = parse_secs_or_zero)]
    pub monitor: Option<f64>,

    /// Seconds between --monitor refreshes when --monitor is given without SECS.
    #[arg(long, default_value_t = 1, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub interval_secs: u64,

    /// Run the scheduler and print its statistics (as --monitor does) every SECS.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub stats: Option<f64>,

    /// Describe every statistic scx_fdl serves (scx_stats) and exit.
    #[arg(long)]
    pub help_stats: bool,

    /// The control socket: served by the scheduler, used by the subcommands.
    #[arg(long, global = true, value_name = "PATH", default_value = crate::control::DEFAULT_SOCKET)]
    pub socket: std::path::PathBuf,

    /// Time slice of a task, in microseconds.
    #[arg(long, default_value_t = 3000, value_name = "US",
          value_parser = clap::value_parser!(u64).range(100..=100_000))]
    pub slice_us: u64,

    /// Slices shared by the waiting work, as scx_bpfland does: the slice is --slice-us x CPUs /
    /// (waiting tasks + CPUs), never below this floor, in microseconds, so that the more tasks
    /// wait per CPU the sooner each gets a turn. 0 (the default): always the whole --slice-us
    /// (measured on the 2-vCPU VM at 1000, same boot: the desktop mix's probe p99 2.6 against
    /// 1.9 ms, the build 0.84x against 1.02x EEVDF's throughput; docs/benchmarks.md). Slices
    /// shorter than the kernel's tick end by a timer.
    #[arg(long, default_value_t = 0, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub slice_floor_us: u64,

    /// CPU time of credit, in microseconds, that a task keeps across a sleep; where cgroups share
    /// a queue (pods in their parent's), a cgroup's as a whole, shared by its tasks. A first-level
    /// cgroup (a container) that wakes keeps one such credit, and one more for each further task
    /// woken while it is active, up to one per CPU, from what it earned asleep. Bounds how far a
    /// waking task can jump ahead of tasks that kept running.
    #[arg(long, default_value_t = 3000, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub wakeup_lag_us: u64,

    /// Bound, in milliseconds, on how far ahead of the others a task with a tiny share can be
    /// pushed: it runs again within about this time. Per CPU too: a CPU that has run no fair work
    /// for this long while some waits runs the fair order's choice next, over any deadline
    /// (`fair_first`; a task bound to a CPU that a guarantee holds). Must be below the watchdog
    /// timeout.
    #[arg(long, default_value_t = 1000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub starvation_ms: u64,

    /// sched_ext watchdog timeout in milliseconds: a runnable task that waits this long ejects
    /// the scheduler. 0 keeps the kernel's default (30000). SCX_TIMEOUT_MS in the environment
    /// sets it too, checked the same way; both given must agree.
    #[arg(long, default_value_t = 0, value_name = "MS",
          value_parser = clap::value_parser!(u32).range(0..=WATCHDOG_MAX_MS as i64))]
    pub watchdog_timeout_ms: u32,

    /// FDL configuration (TOML): cgroup paths with deadline parameters. Checked completely before
    /// anything is applied.
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// deadline_rr of the fair container, in microseconds: the fair cgroups together are never
    /// kept waiting much longer than this by deadline work.
    #[arg(long, default_value_t = crate::config::FAIR_DEADLINE_DEFAULT_NS / 1000, value_name = "US",
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub fair_deadline_us: u64,

    /// Fair wake-up preemption of CPU-bound work, in microseconds: a task that wakes as fair work
    /// (no deadlines, or a deadline container served by the fair order) to busy CPUs takes a CPU
    /// at once from work running as fair work, of another cgroup, that has run this
    /// long since it last woke (a build job, not a request handler) and whose cgroup has had more
    /// CPU time for its share than the waker's (cgroup virtual time). 0: never (a fair task then
    /// waits for the running slice to end).
    #[arg(long, default_value_t = 20_000, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub fair_preempt_us: u64,

    /// Wake-up preemption within a cgroup, in microseconds: a task that wakes to busy CPUs ends
    /// at once the slice of work of its own cgroup's queue that has run this long since it last
    /// woke and is behind it in that queue's virtual time (it would run first at the next pick).
    /// 0 (the default): never, the task waits for a slice to end. Measured on the 2-vCPU VM at
    /// 20000: lower medians, but a worse p99 where a message thread wakes workers in an
    /// overcommitted cgroup (docs/benchmarks.md).
    #[arg(long, default_value_t = 0, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub sibling_preempt_us: u64,

    /// Lazy deadline preemption, in microseconds: a task that wakes with an earlier deadline than
    /// a busy CPU's work does not take that CPU at once where the work will sleep by itself within
    /// this long (its usual CPU time between wake-ups, less what it has run since it woke); a
    /// deadline timer half-way to the waker's deadline preempts it if it runs on. Work without a
    /// known burst (a busy loop) and work past it are preempted at once. 0: always at once.
    #[arg(long, default_value_t = 0, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub lazy_preempt_us: u64,

    /// Interactive work ahead of batch work of its queue, as scx_bpfland classifies it: a task
    /// that sleeps at least as often as the tasks around it (--interactive-max-rate) wakes with
    /// this much more CPU time of wake credit, in microseconds at its share, than batch work
    /// (--wakeup-lag-us), so that a request longer than a slice keeps its place ahead of the
    /// CPU-bound work beside it. The credit is charged like any CPU time: batch work waits behind
    /// it at most about the two credits, and the order between cgroups does not change. 0 (the
    /// default): no classification.
    #[arg(long, default_value_t = 0, value_name = "US",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub interactive_us: u64,

    /// Window, in milliseconds, over which the interactive classifier counts a task's voluntary
    /// context switches (wake-ups from sleep); at its end the rate enters the task's average
    /// (3/4 old + 1/4 new) and the average the moving threshold.
    #[arg(long, default_value_t = 1000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub interactive_window_ms: u64,

    /// Cap, in voluntary switches per second, on a task's average in the interactive classifier:
    /// tasks that sleep at least this often rank alike (interactive), so a task is batch only
    /// where it sleeps less often than the moving threshold or not at all.
    #[arg(long, default_value_t = 10, value_name = "RATE",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub interactive_max_rate: u32,

    /// Least bandwidth of fair work (cgroups without deadline_rr), per mille of the machine,
    /// whatever the deadline containers' guarantees ask. With --fair-protection weighted (the
    /// default) fair work also never gets less than its share at the deadline containers'
    /// unboosted cpu.weight.
    #[arg(long, default_value_t = 50, value_name = "PERMILLE",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub fair_floor_permille: u32,

    /// What fair work (cgroups without deadline_rr) keeps whatever the guarantees ask. weighted:
    /// its share at the deadline containers' unboosted cpu.weight, sleeping ones counted (at
    /// least --fair-floor-permille); while it is runnable, guarantees that ask more than that
    /// share leaves are scaled into the rest (`guarantee_scale` in `scx_fdl dump`). floor: only
    /// what the granted guarantees leave (at least --fair-floor-permille): guarantees that fit
    /// the machine are never scaled, as Kubernetes' CPU requests, and fair work gets the rest.
    #[arg(long, value_enum, default_value_t = FairProtection::Weighted, value_name = "MODE")]
    pub fair_protection: FairProtection,

    /// Window of a deadline container's guarantee, in milliseconds: within its guarantee (its
    /// work has used less than guaranteed_shares of CPU time, saved for at most this long) it runs
    /// ahead of all work that is not, earliest deadline first; a container that ran beyond its
    /// guarantee competes behind that work until it is back within (as fair work where its
    /// deadline_rr is looser than fair work's).
    #[arg(long, default_value_t = 100, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub guarantee_window_ms: u64,

    /// Cgroups scx_fdl tracks at once (each a record of its own: weight, queue, limit, use). The
    /// records are one array allocated at start, about 760 bytes a cgroup (8192: about 6 MiB).
    /// A cgroup made while every slot is taken, or deeper than 16 levels, is scheduled as part of
    /// its nearest tracked ancestor for as long as it exists; each is counted
    /// (scx_fdl_cgroups_untracked_total), and one whose cpu.max is then not enforced is logged.
    /// At most 65536.
    #[arg(long, default_value_t = crate::bpf_intf::fdl_consts_FDL_DFL_CGROUPS as u32, value_name = "N",
          value_parser = clap::value_parser!(u32).range(16..=crate::bpf_intf::fdl_consts_FDL_MAX_CGROUPS as i64))]
    pub max_cgroups: u32,

    /// Size in bytes of the debug dump the kernel takes when it ejects scx_fdl (printed with the
    /// exit reason: scx_fdl's queues, CPUs and tasks, and the kernel's); 0: the kernel's default,
    /// 32768.
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub exit_dump_len: u32,

    /// One queue per cgroup for the whole machine, as before queue domains: every CPU takes work
    /// from the same queues (and their locks). By default every queue is split by last-level
    /// cache: work waits in the cache domain of the CPU it was placed on, and a CPU looks in its
    /// own domain first, then in the nearest domain with work (the order between cgroups stays
    /// machine-wide). With one LLC both are the same.
    #[arg(long)]
    pub flat_queues: bool,

    /// Period of the load balancer, in milliseconds; 0: off. With several queue domains, it reads
    /// each domain's PELT load and moves tasks between NUMA nodes when a node is more than 17 %
    /// from the average, then between the LLCs of a node at 5 % (reference §5, as scx_rusty).
    /// With one domain (or --flat-queues) there is nothing to balance and it does not run.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub balance_interval_ms: u64,

    /// Only on a kernel without ops.cgroup_set_bandwidth (before 6.17), where scx_fdl cannot
    /// enforce CPU limits (cpu.max): run anyway, the limited cgroups' tasks unlimited. Each
    /// limited cgroup is logged and counted (scx_fdl_cgroups_unenforced_cpu_max). Without it,
    /// scx_fdl refuses to start there while a cgroup has a limit, and stops (exit code 4) when one
    /// gets a limit while it runs. Where the kernel passes limits, they are always enforced.
    #[arg(long)]
    pub allow_unenforced_cpu_max: bool,

    /// Activate every woken task on the CPU it wakes on, as the kernel's own scheduler does:
    /// never queue a wake-up on the target CPU's wake list (sched_ext's SCX_OPS_ALLOW_QUEUED_WAKEUP
    /// off). By default (kernel >= 6.15) a wake-up onto another CPU is handed to that CPU, which
    /// activates the task itself, so that the waker does not hold the target's run-queue lock.
    #[arg(long)]
    pub no_queued_wakeups: bool,

    /// Shortest slice, in microseconds, that a competing deadline cuts a running task's slice to,
    /// and the shortest delay of a deadline timer.
    #[arg(long, default_value_t = 200, value_name = "US",
          value_parser = clap::value_parser!(u64).range(20..=100_000))]
    pub min_slice_us: u64,

    /// Serve Prometheus metrics (OpenMetrics text, times in seconds) on http://ADDR/metrics,
    /// ADDR from --prometheus-addr: dispatch paths, per-cgroup CPU time, waiting, run-queue
    /// latency histograms, deadline misses and guarantees. Read at each scrape.
    #[arg(long)]
    pub enable_prometheus: bool,

    /// Where --enable-prometheus listens (IP:PORT). The default is reachable only from this
    /// machine; 0.0.0.0:9000 exposes it to the network.
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:9000")]
    pub prometheus_addr: std::net::SocketAddr,

    /// Log the scheduler's event counters every this many seconds (0: only at exit).
    #[arg(long, default_value_t = 0, value_name = "SECS")]
    pub stats_interval_secs: u64,

    /// TESTING ONLY: never dispatch the task with this PID, so that a stall happens and the
    /// watchdog must eject scx_fdl. Used by the test suite to prove stalls are caught.
    #[arg(long, value_name = "PID", value_parser = clap::value_parser!(i32).range(1..))]
    pub test_stall_pid: Option<i32>,

    /// Verbose logging, including libbpf's.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runtime control of a running scx_fdl.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Change a cgroup's FDL parameters now: KEY=VALUE with KEY one of deadline_rr,
    /// deadline_wakeup (durations: 200us, 5ms) and guaranteed_shares (1024 = one CPU);
    /// KEY=none removes it. Validated like the configuration file; nothing changes on error.
    Set {
        /// Cgroup path, relative to /sys/fs/cgroup or absolute.
        cgroup: String,
        /// KEY=VALUE assignments.
        #[arg(required = true, value_name = "KEY=VALUE")]
        assignments: Vec<String>,
    },
    /// Print a cgroup's parameters and figures.
    Get {
        /// Cgroup path, relative to /sys/fs/cgroup or absolute.
        cgroup: String,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print every configured cgroup and every first-level cgroup.
    List {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Check a configuration file without a running scheduler (root not needed), exactly as
    /// --config and SIGHUP would load it: prints each cgroup's parameters and exits 0 if it is
    /// valid, else prints the error with file, line and cgroup and exits 1. Cgroups that do not
    /// exist yet are reported as not present yet, not as errors.
    Check {
        /// The configuration file (TOML).
        #[arg(value_name = "CONFIG")]
        config: std::path::PathBuf,
    },
    /// Print everything once as JSON: scheduler-wide counters (dispatch paths, kicks,
    /// migrations, the kernel's sched_ext events) and every cgroup's figures with its run-queue
    /// latency histogram (at most 1024 cgroups, as exported to Prometheus).
    Dump {
        /// First begin a new measurement window: each cgroup's window_max_lateness_ns (and
        /// window_late_*) counts from here, until the next --new-window or for --window-for
        /// (a benchmark reads the worst lateness of its own measurement, not since the start,
        /// its workload's start-up and exit included). Printed: the figures as it begins, and on
        /// stderr the window's number and length.
        #[arg(long)]
        new_window: bool,
        /// With --new-window: the window ends after this long (e.g. 20s, 500ms); later misses
        /// leave its figures as they were.
        #[arg(long, value_name = "DURATION", requires = "new_window", value_parser = humantime::parse_duration)]
        window_for: Option<std::time::Duration>,
    },
    /// Print the machine as scx_fdl sees it: NUMA nodes, their last-level caches and CPUs, the
    /// online set (no root or running scheduler needed).
    Topology {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Measure what each callback of the sched_ext scheduler attached now costs (scx_fdl or any
    /// other): runs and average nanoseconds per run over SECS, with the kernel's BPF statistics
    /// switched on for the interval only, and the instructions the verifier processed. Needs root,
    /// not a running scx_fdl.
    Cost {
        /// How long to measure, in seconds.
        #[arg(long, default_value_t = 10, value_name = "SECS",
              value_parser = clap::value_parser!(u64).range(1..=3600))]
        secs: u64,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

impl Opts {
    /// Cross-option checks that clap's per-option ranges cannot express, including the
    /// watchdog timeout that SCX_TIMEOUT_MS may set.
    pub fn validate(&self) -> Result<()> {
        if self.min_slice_us > self.slice_us {
            bail!("--min-slice-us {} must not exceed --slice-us {}", self.min_slice_us, self.slice_us);
        }
        if self.slice_floor_us != 0 && !(self.min_slice_us..=self.slice_us).contains(&self.slice_floor_us) {
            bail!(
                "--slice-floor-us {} must be 0 (whole slices) or within --min-slice-us {} and --slice-us {}",
                self.slice_floor_us,
                self.min_slice_us,
                self.slice_us
            );
        }
        self.watchdog_timeout().map(|_| ())
    }

    /// The watchdog timeout to load with (0: the kernel's default), checked.
    pub fn watchdog_timeout(&self) -> Result<u32> {
        self.watchdog_timeout_with(std::env::var(TIMEOUT_ENV).ok().as_deref())
    }

    /// The watchdog timeout from --watchdog-timeout-ms or, when that is not given, from
    /// SCX_TIMEOUT_MS (`env`): scx_utils' scx_ops_open! copies that variable into ops.timeout_ms
    /// unchecked, so it is held to the same range and cross-checks as the option here.
    fn watchdog_timeout_with(&self, env: Option<&str>) -> Result<u32> {
        let (ms, source) = match env {
            None => (self.watchdog_timeout_ms, format!("--watchdog-timeout-ms {}", self.watchdog_timeout_ms)),
            Some(text) => {
                let ms = text.trim().parse::<u32>().ok().filter(|ms| *ms <= WATCHDOG_MAX_MS).ok_or_else(|| {
                    anyhow::anyhow!(
                        "{TIMEOUT_ENV}=\"{text}\" in the environment is not a watchdog timeout: give \
                         milliseconds 0..={WATCHDOG_MAX_MS} (0: the kernel's default), or unset it and use \
                         --watchdog-timeout-ms"
                    )
                })?;
                if self.watchdog_timeout_ms != 0 && self.watchdog_timeout_ms != ms {
                    bail!(
                        "--watchdog-timeout-ms {} and {TIMEOUT_ENV}={ms} in the environment disagree: \
                         unset {TIMEOUT_ENV}",
                        self.watchdog_timeout_ms
                    );
                }
                (ms, format!("{TIMEOUT_ENV}={ms} in the environment"))
            }
        };
        let watchdog_ms = match ms {
            0 => KERNEL_WATCHDOG_MS,
            ms => ms as u64,
        };
        if self.starvation_ms >= watchdog_ms {
            bail!(
                "--starvation-ms {} must be below the watchdog timeout ({watchdog_ms} ms, from {source}), \
                 or a task pushed back that far would trip the watchdog",
                self.starvation_ms
            );
        }
        if ms > 0 && (ms as u64) < 2 * self.slice_us / 1000 {
            bail!("{source} is shorter than two slices ({} us each)", self.slice_us);
        }
        Ok(ms)
    }

    /// --monitor's period, if --monitor was given.
    pub fn monitor_interval(&self) -> Option<Duration> {
        self.monitor.map(|secs| Duration::from_secs_f64(if secs > 0.0 { secs } else { self.interval_secs as f64 }))
    }

    pub fn stats_interval(&self) -> Option<Duration> {
        (self.stats_interval_secs > 0).then(|| Duration::from_secs(self.stats_interval_secs))
    }
}

/// A period in seconds for --stats: above zero, at most an hour.
fn parse_secs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 3600.0 => Ok(v),
        _ => Err(format!("{text:?}: want seconds, above 0 and at most 3600 (e.g. 1 or 0.5)")),
    }
}

/// --monitor's SECS: as parse_secs, or 0 when it was given without a value (--interval-secs).
fn parse_secs_or_zero(text: &str) -> Result<f64, String> {
    if text == "0" { Ok(0.0) } else { parse_secs(text) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Opts, clap::Error> {
        Opts::try_parse_from(std::iter::once("scx_fdl").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_valid() {
        let opts = parse(&[]).unwrap();
        opts.validate().unwrap();
        assert_eq!(opts.slice_us, 3000);
        assert_eq!(opts.stats_interval(), None);
    }

    #[test]
    fn slice_floor_within_the_slices() {
        for ok in [&["--slice-floor-us", "0"][..], &["--slice-floor-us", "3000"], &["--slice-floor-us", "200"]] {
            parse(ok).unwrap().validate().unwrap();
        }
        for bad in [&["--slice-floor-us", "3001"][..], &["--slice-floor-us", "100"], &["--slice-floor-us", "1000", "--slice-us", "800"]] {
            let e = parse(bad).unwrap().validate().unwrap_err().to_string();
            assert!(e.contains("--slice-floor-us"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn every_flag_is_documented() {
        let cmd = Opts::command();
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            assert!(arg.get_help().is_some(), "--{id} has no help text");
        }
    }

    /// The scx_stats conventions: --monitor [SECS], --stats SECS, --help-stats.
    #[test]
    fn stats_options() {
        assert_eq!(parse(&[]).unwrap().monitor_interval(), None);
        assert_eq!(parse(&["--monitor"]).unwrap().monitor_interval(), Some(Duration::from_secs(1)));
        assert_eq!(parse(&["--monitor", "0.5"]).unwrap().monitor_interval(), Some(Duration::from_millis(500)));
        assert_eq!(
            parse(&["--monitor", "--interval-secs", "3"]).unwrap().monitor_interval(),
            Some(Duration::from_secs(3))
        );
        assert_eq!(parse(&["--stats", "2"]).unwrap().stats, Some(2.0));
        for bad in ["0", "x", "7200", "0.0"] {
            let e = parse(&["--stats", bad]).unwrap_err();
            assert!(e.to_string().contains("want seconds"), "{bad}: {e}");
        }
        assert!(parse(&["--monitor", "-3"]).is_err());
        assert!(parse(&["--help-stats"]).unwrap().help_stats);
    }

    #[test]
    fn prometheus_address() {
        let opts = parse(&["--enable-prometheus"]).unwrap();
        assert_eq!(opts.prometheus_addr, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(parse(&["--prometheus-addr", "[::1]:9100"]).unwrap().prometheus_addr.port(), 9100);
        for bad in ["localhost:9000", "127.0.0.1", "127.0.0.1:99999", "nonsense"] {
            let e = parse(&["--enable-prometheus", "--prometheus-addr", bad]).unwrap_err();
            assert!(e.to_string().contains("invalid value"), "{bad}: {e}");
        }
    }

    #[test]
    fn out_of_range_values_are_refused() {
        assert!(parse(&["--slice-us", "50"]).is_err());
        assert!(parse(&["--watchdog-timeout-ms", "40000"]).is_err());
        assert!(parse(&["--test-stall-pid", "0"]).is_err());
    }

    #[test]
    fn starvation_bound_must_stay_below_the_watchdog() {
        let opts = parse(&["--starvation-ms", "5000", "--watchdog-timeout-ms", "4000"]).unwrap();
        let err = opts.validate().unwrap_err().to_string();
        assert!(err.contains("below the watchdog timeout (4000 ms, from --watchdog-timeout-ms 4000)"), "{err}");
        parse(&["--starvation-ms", "3000", "--watchdog-timeout-ms", "4000"]).unwrap().validate().unwrap();
    }

    #[test]
    fn scx_timeout_ms_from_the_environment_is_checked_like_the_option() {
        let opts = parse(&["--starvation-ms", "1000"]).unwrap();
        // Before: accepted unchecked, and a 500 ms watchdog under a 1000 ms starvation bound.
        let e = opts.watchdog_timeout_with(Some("500")).unwrap_err().to_string();
        assert_eq!(
            e,
            "--starvation-ms 1000 must be below the watchdog timeout (500 ms, from SCX_TIMEOUT_MS=500 in \
             the environment), or a task pushed back that far would trip the watchdog"
        );
        for bad in ["40000", "-1", "5s", ""] {
            let e = opts.watchdog_timeout_with(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with(&format!("SCX_TIMEOUT_MS=\"{bad}\" in the environment is not")), "{e}");
        }
        assert_eq!(opts.watchdog_timeout_with(Some("5000")).unwrap(), 5000);
        assert_eq!(opts.watchdog_timeout_with(Some("0")).unwrap(), 0, "0: the kernel's default");
        assert_eq!(opts.watchdog_timeout_with(None).unwrap(), 0);
        let slow = parse(&["--slice-us", "20000", "--starvation-ms", "10"]).unwrap();
        assert!(slow.watchdog_timeout_with(Some("30")).unwrap_err().to_string().contains("two slices"));

        let both = parse(&["--watchdog-timeout-ms", "5000"]).unwrap();
        assert_eq!(both.watchdog_timeout_with(Some("5000")).unwrap(), 5000);
        let e = both.watchdog_timeout_with(Some("8000")).unwrap_err().to_string();
        assert!(e.contains("--watchdog-timeout-ms 5000 and SCX_TIMEOUT_MS=8000 in the environment disagree"), "{e}");
    }

    #[test]
    fn watchdog_shorter_than_two_slices_is_refused() {
        let opts =
            parse(&["--slice-us", "20000", "--watchdog-timeout-ms", "30", "--starvation-ms", "10"]).unwrap();
        assert!(opts.validate().is_err());
    }
}
