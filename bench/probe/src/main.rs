//! fdl-probe: a wake-up latency probe with the timing model of the schbench used in the FDL
//! experiment. Message threads wake worker threads; a worker sleeps until woken, spins a fixed
//! amount of CPU time, and records `(end of spin - wake time) - spin time`: its wake-up delay
//! plus any time it lost to preemption while spinning. With --wake, the wake-up delay alone (wake
//! time to the worker running again, before it spins) is printed apart ("wake" in the JSON).

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
    /// Also report the workers' wake-up delays alone (from the wake-up call to the worker running
    /// again, before it spins): "wake" at the end of the JSON line, a second table otherwise; and
    /// how late each message thread ran after its sleep's end ("timer": the timer's wake-up, which
    /// the workers' figures start after). Off by default, so that the line stays what scripts
    /// reading its first "p99" expect.
    #[arg(long, conflicts_with_all = ["gaps", "pipe_wake"])]
    wake: bool,
    /// With --wake, also count the wake-up delays above this many microseconds (a wake-up
    /// deadline, such as the cgroup's deadline_wakeup): "late" in the JSON's "wake". A scheduler
    /// without deadlines (EEVDF) is judged by the same count.
    #[arg(long, requires = "wake")]
    wake_late_after_us: Option<u64>,
    /// Print the summary as one line of JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Instead of the wake-up model: one thread spins for the run time, reading the clock, and
    /// reports the stretches it was off its CPU (a gap of more than 100 us between two reads):
    /// how long throttling or preemption kept it waiting, as the spinning task sees it.
    #[arg(long)]
    gaps: bool,
    /// Instead of the wake-up model: a synchronous wake-up from a waker that keeps running. A
    /// writer thread on the first CPU it may use sleeps --sleep-us, writes to a pipe and then
    /// spins --spin-us without sleeping; a reader, which before each read last ran on the
    /// writer's CPU and may run on any, blocks in read(2) and records how long after the write it
    /// ran (and prints how many reads ran on the writer's CPU). A pipe wakes its reader with
    /// WF_SYNC, the hint that the waker is about to give up its CPU; this waker does not, so a
    /// reader placed behind it waits out its spin while another CPU may idle.
    #[arg(long, conflicts_with = "gaps")]
    pipe_wake: bool,
}

impl Opts {
    /// The measurement window, ns since start: samples from warm-up's end until the run's.
    fn window_ns(&self) -> (u64, u64) {
        let warm_ns = self.warmup_secs * 1_000_000_000;
        (warm_ns, warm_ns + self.runtime_secs * 1_000_000_000)
    }
}

/// --gaps: spin for the run time; print the longest gap, the number of gaps and their total.
fn gaps(opts: &Opts) {
    let start = Instant::now();
    let (warm_ns, end_ns) = opts.window_ns();
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

/// This thread's allowed CPUs (sched_getaffinity), in order; exits 1 if the kernel refuses.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        eprintln!("fdl-probe: sched_getaffinity: {}", std::io::Error::last_os_error());
        std::process::exit(1);
    }
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// Restrict this thread to `cpus` (sched_setaffinity); exits 1 if the kernel refuses.
fn set_cpus(cpus: &[usize]) {
    // SAFETY: as above; CPU_SET only writes within the set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        eprintln!("fdl-probe: sched_setaffinity: {}", std::io::Error::last_os_error());
        std::process::exit(1);
    }
}

/// A thread named `name` (probe-m<i>, probe-w<i>.<j>, probe-reader; the kernel keeps 15 bytes), so
/// that scx_fdl's worst lateness, which names its thread, says which of the probe's started late.
fn spawn_named<T: Send + 'static>(name: String, f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::Builder::new().name(name).spawn(f).expect("fdl-probe: spawn a thread")
}

/// --pipe-wake: the writer's and reader's loops; returns the reader's samples (us after the write)
/// and prints to stderr how many of them ran on the writer's CPU, behind the writer.
fn pipe_wake(opts: &Opts) -> Vec<u64> {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("fdl-probe: --pipe-wake needs at least two CPUs to run on (has {})", cpus.len());
        std::process::exit(2);
    }
    let mut fds = [0i32; 2];
    // SAFETY: a valid two-int array for pipe(2).
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        eprintln!("fdl-probe: pipe: {}", std::io::Error::last_os_error());
        std::process::exit(1);
    }
    let (rfd, wfd) = (fds[0], fds[1]);
    let start = Instant::now();
    let (warm_ns, end_ns) = opts.window_ns();
    let (writer_cpu, all) = (cpus[0], cpus.clone());
    let reader = spawn_named("probe-reader".into(), move || {
        let (mut out, mut behind) = (Vec::new(), 0usize);
        let mut buf = [0u8; 8];
        loop {
            // Before each wake-up it last ran on the writer's CPU (moved there, then let free):
            // where it wakes is the scheduler's choice, and every wake-up asks the same.
            set_cpus(&[writer_cpu]);
            set_cpus(&all);
            // SAFETY: reading at most 8 bytes into an 8-byte buffer.
            let n = unsafe { libc::read(rfd, buf.as_mut_ptr().cast(), 8) };
            let now = now_ns(start);
            // SAFETY: no arguments; the CPU this thread runs on.
            let cpu = unsafe { libc::sched_getcpu() };
            if n != 8 {
                break; // the writer closed the pipe
            }
            let sent = u64::from_ne_bytes(buf);
            if sent >= warm_ns {
                out.push((now - sent) / 1000);
                behind += (cpu == writer_cpu as i32) as usize;
            }
        }
        (out, behind)
    });
    set_cpus(&[writer_cpu]);
    let spin_ns = opts.spin_us * 1000;
    while now_ns(start) < end_ns {
        thread::sleep(Duration::from_micros(opts.sleep_us));
        let t = now_ns(start).to_ne_bytes();
        // SAFETY: writing 8 bytes from an 8-byte buffer; a pipe write this small is atomic.
        if unsafe { libc::write(wfd, t.as_ptr().cast(), 8) } != 8 {
            eprintln!("fdl-probe: write: {}", std::io::Error::last_os_error());
            std::process::exit(1);
        }
        spin_cpu(spin_ns);
    }
    // SAFETY: closing our own descriptor; the reader then reads end of file.
    unsafe { libc::close(wfd) };
    let (out, behind) = reader.join().unwrap();
    eprintln!("fdl-probe: pipe-wake: {behind} of {} reads ran on the writer's CPU {writer_cpu}", out.len());
    out
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

/// The samples, in microseconds: the workers' `spin`, the delay until the end of the spin, less
/// the spin (the headline, schbench's), and `wake`, the wake-up delay alone, until the worker ran
/// again; the message threads' `timer`, how long after its sleep's end each ran again (its
/// timer's wake-up: a delay the workers' figures do not hold, since they start at its wake-up call).
#[derive(Default)]
struct Samples {
    spin: Vec<u64>,
    wake: Vec<u64>,
    timer: Vec<u64>,
}

fn worker_loop(woken_at: &AtomicU64, start: Instant, spin_ns: u64, warm_ns: u64, stop: &AtomicBool,
               samples: &Mutex<Samples>) {
    let mut mine = Samples::default();
    while !stop.load(Ordering::Relaxed) {
        thread::park();
        let woken = woken_at.load(Ordering::Acquire);
        if woken == 0 {
            continue; // spurious
        }
        let running = now_ns(start);
        spin_cpu(spin_ns);
        let end = now_ns(start);
        if woken >= warm_ns {
            mine.spin.push((end - woken).saturating_sub(spin_ns) / 1000);
            mine.wake.push(running.saturating_sub(woken) / 1000);
        }
        woken_at.store(0, Ordering::Release);
    }
    let mut all = samples.lock().unwrap();
    all.spin.extend(mine.spin);
    all.wake.extend(mine.wake);
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
    if opts.pipe_wake {
        let mut samples = pipe_wake(&opts);
        report(&mut samples, None, &opts);
        return;
    }
    let start = Instant::now();
    let (warm_ns, end_ns) = opts.window_ns();
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Samples::default()));

    let mut handles = Vec::new();
    let mut groups = Vec::new();
    for i in 0..opts.message_threads {
        let mut group = Vec::new();
        for j in 0..opts.workers {
            let woken_at = Arc::new(AtomicU64::new(0));
            let (w, st, sm) = (woken_at.clone(), stop.clone(), samples.clone());
            let spin_ns = opts.spin_us * 1000;
            let h = spawn_named(format!("probe-w{i}.{j}"), move || worker_loop(&w, start, spin_ns, warm_ns, &st, &sm));
            group.push(Worker { thread: h.thread().clone(), woken_at });
            handles.push(h);
        }
        groups.push(group);
    }

    let mut messengers = Vec::new();
    for (i, group) in groups.into_iter().enumerate() {
        let (o, st, sm) = (opts.clone(), stop.clone(), samples.clone());
        messengers.push(spawn_named(format!("probe-m{i}"), move || {
            // fastrand: a small, maintained generator, seeded from the system per thread.
            let mut rng = fastrand::Rng::new();
            let mut timer = Vec::new();
            while now_ns(start) < end_ns {
                let sleep_us = match o.sleep_jitter_us {
                    0 => o.sleep_us,
                    j => rng.u64(o.sleep_us - j..=o.sleep_us + j).max(1),
                };
                let due = now_ns(start) + sleep_us * 1000;
                thread::sleep(Duration::from_micros(sleep_us));
                if due >= warm_ns {
                    timer.push(now_ns(start).saturating_sub(due) / 1000);
                }
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
            sm.lock().unwrap().timer.extend(timer);
        }));
    }
    for m in messengers {
        m.join().unwrap();
    }
    for h in handles {
        h.join().unwrap();
    }

    let mut samples = samples.lock().unwrap();
    let Samples { spin, wake, timer } = &mut *samples;
    report(spin, if opts.wake { Some((wake, timer)) } else { None }, &opts);
}

/// Print the samples' summary as --json asks (with the wake-up delays' and the message threads'
/// timer wake-ups apart, where given), or exit 1 without any.
fn report(samples: &mut [u64], wake: Option<(&mut Vec<u64>, &mut Vec<u64>)>, opts: &Opts) {
    let (wake, timer) = match wake {
        Some((w, t)) => (stats::summarize(w, opts.wake_late_after_us), stats::summarize(t, None)),
        None => (None, None),
    };
    match stats::summarize(samples, opts.late_after_us) {
        Some(s) if opts.json => {
            println!("{}", stats::json_with_wake(&s, wake.as_ref(), timer.as_ref(), opts.runtime_secs))
        }
        Some(s) => {
            print!("{}", s.table(opts.runtime_secs));
            if let Some(w) = wake {
                print!("Wake-up delay alone (until the worker ran again):\n{}", w.table(opts.runtime_secs));
            }
            if let Some(t) = timer {
                print!("Message threads' timer wake-ups (how late past the sleep's end):\n{}",
                       t.table(opts.runtime_secs));
            }
        }
        None => {
            eprintln!("fdl-probe: no samples were recorded (runtime too short for --sleep-us?)");
            std::process::exit(1);
        }
    }
}
