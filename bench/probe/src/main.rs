//! fdl-probe: a wake-up latency probe with the timing model of the schbench used in the FDL
//! experiment. Message threads wake worker threads; a worker sleeps until woken, spins a fixed
//! amount of CPU time, and records `(end of spin - wake time) - spin time`: its wake-up delay
//! plus any time it lost to preemption while spinning.

mod stats;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use clap::Parser;

#[derive(Debug, Parser)]
#[command(version, about)]
struct Opts {
    /// Message threads; each wakes its own workers.
    #[arg(short = 'm', long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1024))]
    message_threads: u32,
    /// Worker threads per message thread.
    #[arg(short = 't', long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    workers: u32,
    /// How long a message thread sleeps between wake-ups of its workers, in microseconds.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    sleep_us: u64,
    /// Vary each of those sleeps uniformly within this many microseconds either side of
    /// --sleep-us (at most --sleep-us; 0: every sleep exactly --sleep-us, as schbench's). Probes
    /// of the same shape in different cgroups otherwise keep one relative phase for a whole run
    /// (their message threads wake at the same period), so a run measures one alignment of their
    /// bursts, drawn at start: two runs of the same workload (EEVDF, then scx_fdl) compared
    /// different alignments. With jitter, every run samples them all.
    #[arg(long, default_value_t = 0)]
    sleep_jitter_us: u64,
    /// CPU time a worker spins after each wake-up, in microseconds.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    spin_us: u64,
    /// Measured run time in seconds (after the warm-up).
    #[arg(short = 'r', long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    runtime_secs: u64,
    /// Warm-up in seconds; samples from it are discarded.
    #[arg(short = 'w', long, default_value_t = 5)]
    warmup_secs: u64,
    /// Also count the samples above this many microseconds (a deadline to judge against): the
    /// count is printed with the percentiles, as "late" in the JSON.
    #[arg(long)]
    late_after_us: Option<u64>,
    /// Print the summary as one line of JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Instead of the wake-up model: one thread spins for the run time, reading the clock, and
    /// reports the stretches it was off its CPU (a gap of more than 100 us between two reads):
    /// how long throttling or preemption kept it waiting, as the spinning task sees it.
    #[arg(long)]
    gaps: bool,
}

/// --gaps: spin for the run time; print the longest gap, the number of gaps and their total.
fn gaps(opts: &Opts) {
    let start = Instant::now();
    let (warm_ns, end_ns) = (opts.warmup_secs * 1_000_000_000, (opts.warmup_secs + opts.runtime_secs) * 1_000_000_000);
    let (mut last, mut max, mut n, mut total) = (now_ns(start), 0u64, 0u64, 0u64);
    while last < end_ns {
        let t = now_ns(start);
        let gap = t - last;
        if t >= warm_ns && gap > 100_000 {
            max = max.max(gap);
            n += 1;
            total += gap;
        }
        last = t;
    }
    let (max_us, total_us) = (max / 1000, total / 1000);
    if opts.json {
        println!("{{\"runtime_s\": {}, \"gaps\": {n}, \"max_gap_us\": {max_us}, \"off_cpu_us\": {total_us}}}", opts.runtime_secs);
    } else {
        println!("{n} gaps over 100 us in {} s: longest {max_us} us, {total_us} us off the CPU in all", opts.runtime_secs);
    }
}

/// One worker as its message thread sees it.
struct Worker {
    thread: Thread,
    /// When it was last woken (ns since start); 0 while it is not woken.
    woken_at: Arc<AtomicU64>,
}

fn now_ns(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Burn `ns` of this thread's CPU time (not wall time: preemption does not shorten the work).
fn spin_cpu(ns: u64) {
    let end = thread_cpu_ns() + ns;
    while thread_cpu_ns() < end {
        std::hint::spin_loop();
    }
}

fn worker_loop(woken_at: &AtomicU64, start: Instant, spin_ns: u64, warm_ns: u64, stop: &AtomicBool,
               samples: &Mutex<Vec<u64>>) {
    let mut mine = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        thread::park();
        let woken = woken_at.load(Ordering::Acquire);
        if woken == 0 {
            continue; // spurious
        }
        spin_cpu(spin_ns);
        let end = now_ns(start);
        if woken >= warm_ns {
            mine.push((end - woken).saturating_sub(spin_ns) / 1000);
        }
        woken_at.store(0, Ordering::Release);
    }
    samples.lock().unwrap().extend(mine);
}

fn main() {
    let opts = Opts::parse();
    if opts.sleep_jitter_us > opts.sleep_us {
        eprintln!("fdl-probe: --sleep-jitter-us ({}) must not exceed --sleep-us ({})",
                  opts.sleep_jitter_us, opts.sleep_us);
        std::process::exit(2);
    }
    let opts = Arc::new(opts);
    if opts.gaps {
        gaps(&opts);
        return;
    }
    let start = Instant::now();
    let warm_ns = opts.warmup_secs * 1_000_000_000;
    let end_ns = warm_ns + opts.runtime_secs * 1_000_000_000;
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Vec::new()));

    let mut handles = Vec::new();
    let mut groups = Vec::new();
    for _ in 0..opts.message_threads {
        let mut group = Vec::new();
        for _ in 0..opts.workers {
            let woken_at = Arc::new(AtomicU64::new(0));
            let (w, st, sm) = (woken_at.clone(), stop.clone(), samples.clone());
            let spin_ns = opts.spin_us * 1000;
            let h = thread::spawn(move || worker_loop(&w, start, spin_ns, warm_ns, &st, &sm));
            group.push(Worker { thread: h.thread().clone(), woken_at });
            handles.push(h);
        }
        groups.push(group);
    }

    let mut messengers = Vec::new();
    for group in groups {
        let (o, st) = (opts.clone(), stop.clone());
        messengers.push(thread::spawn(move || {
            // fastrand: a small, maintained generator, seeded from the system per thread.
            let mut rng = fastrand::Rng::new();
            while now_ns(start) < end_ns {
                let sleep_us = match o.sleep_jitter_us {
                    0 => o.sleep_us,
                    j => rng.u64(o.sleep_us - j..=o.sleep_us + j).max(1),
                };
                thread::sleep(Duration::from_micros(sleep_us));
                for w in &group {
                    // A worker still spinning from the last round is not woken again.
                    if w.woken_at.load(Ordering::Acquire) == 0 {
                        w.woken_at.store(now_ns(start).max(1), Ordering::Release);
                        w.thread.unpark();
                    }
                }
            }
            st.store(true, Ordering::Relaxed);
            for w in &group {
                w.thread.unpark();
            }
        }));
    }
    for m in messengers {
        m.join().unwrap();
    }
    for h in handles {
        h.join().unwrap();
    }

    let mut samples = samples.lock().unwrap();
    match stats::summarize(&mut samples, opts.late_after_us) {
        Some(s) if opts.json => println!("{}", s.json(opts.runtime_secs)),
        Some(s) => print!("{}", s.table(opts.runtime_secs)),
        None => {
            eprintln!("fdl-probe: no samples were recorded (runtime too short for --sleep-us?)");
            std::process::exit(1);
        }
    }
}
