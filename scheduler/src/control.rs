//! Runtime control of a running scx_fdl over a UNIX socket only root can use.
//!
//! One JSON request per line, one JSON response per line. Every connection has its own thread (at
//! most MAX_CONNECTIONS at once), so a slow or stalled client delays nobody else. A connection
//! thread only reads, checks and parses; the scheduler's loop validates and applies the request
//! exactly like a configuration file. Only a complete request (ending in a newline, at most
//! MAX_REQUEST_BYTES) is ever handed on, and one whose connection already gave up waiting is
//! dropped unapplied.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::sys::stat::{umask, Mode};
use serde::{Deserialize, Serialize};

/// Where the control socket lives unless --socket says otherwise.
pub const DEFAULT_SOCKET: &str = "/run/scx_fdl.sock";

/// How long either side waits for the other before giving up on a request.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest request line accepted, newline excluded (a `set` is well under 1 KiB).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Connections served at once; one more is told to retry instead of queueing behind them.
const MAX_CONNECTIONS: usize = 32;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "cmd", rename_all = "lowercase")]
pub enum Request {
    /// Change a cgroup's parameters: `key=value`, `key=none` to remove one.
    Set { cgroup: String, assign: Vec<String> },
    /// One cgroup's parameters and figures.
    Get { cgroup: String },
    /// Every configured cgroup and every first-level cgroup.
    List,
    /// Everything: scheduler-wide figures and every cgroup (up to stats::MAX_EXPORTED_CGROUPS).
    Dump,
    /// Begin a new measurement window of the worst lateness, lasting window_ns (0: until the
    /// next one), then everything as `Dump`.
    Window {
        #[serde(default)]
        window_ns: u64,
    },
}

/// A cgroup's parameters and what it got.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CgroupReport {
    pub path: String,
    /// The cgroup's id (its directory's inode number); 0 while it does not exist.
    #[serde(default)]
    pub cgid: u64,
    /// The cgroup exists (a configured one may not, yet).
    pub present: bool,
    /// The BPF side keeps a record of its own for it. False for an existing cgroup deeper than 16
    /// levels or made when --max-cgroups were tracked already: its tasks are scheduled as part of
    /// its nearest tracked ancestor, and its own weight, limit and parameters do not apply.
    #[serde(default)]
    pub tracked: bool,
    pub deadline_rr_ns: u64,
    pub deadline_wakeup_ns: u64,
    pub guaranteed_shares: u32,
    /// The guarantee in CPUs (nested guarantees resolved).
    pub guarantee_cpus: f64,
    /// The guarantee as granted: scaled down with the others when they ask more than the machine
    /// less fair work's floor, and further, while fair work is runnable, when they ask more than
    /// its protected share leaves (SchedulerStats::guarantee_scale); at most the cgroup's CPU limit.
    #[serde(default)]
    pub guarantee_granted_cpus: f64,
    pub cpu_weight: u32,
    /// The weight scheduling uses: cpu.weight, or the guarantee loop's boost, or the least
    /// weight (1) while cpu.idle is 1.
    pub effective_weight: u32,
    /// cpu.idle is 1: the cgroup weighs the least (FDL_IDLE_WEIGHT) unless a guarantee boosts it.
    #[serde(default)]
    pub idle: bool,
    /// Cumulative, over the cgroup's subtree, since scx_fdl started.
    pub usage_ns: u64,
    pub wait_ns: u64,
    /// Deadline containers: starts past the deadline, and the worst lateness.
    pub nr_misses: u64,
    pub max_lateness_ns: u64,
    /// Deadline containers: the start of the worst lateness: its task (the thread's pid; 0: none
    /// yet), the task's name if the thread still exists when reported ("" if not), how long it
    /// had waited, and whether it was a wake-up's start or a resumption.
    #[serde(default)]
    pub max_late_pid: u32,
    #[serde(default)]
    pub max_late_comm: String,
    #[serde(default)]
    pub max_late_wait_ns: u64,
    #[serde(default)]
    pub max_late_woke: bool,
    /// Deadline containers: the worst lateness of the measurement window
    /// (SchedulerStats::late_window; since the start if none was begun) and its start, as above;
    /// 0 where none of its starts was late in the window.
    #[serde(default)]
    pub window_max_lateness_ns: u64,
    #[serde(default)]
    pub window_late_pid: u32,
    #[serde(default)]
    pub window_late_comm: String,
    #[serde(default)]
    pub window_late_wait_ns: u64,
    #[serde(default)]
    pub window_late_woke: bool,
    /// Deadline containers: the misses by lateness, counts per bucket (the buckets of
    /// runq_latency, stats::lat_bucket_bound_us), and their lateness summed. Two reads
    /// differenced give the worst lateness between them.
    #[serde(default)]
    pub lateness: Vec<u64>,
    #[serde(default)]
    pub lateness_sum_ns: u64,
    /// Starts of its work after a wait, however it got the CPU, late or not (the misses'
    /// denominator; named picks for compatibility of the JSON field).
    #[serde(default)]
    pub nr_picks: u64,
    /// Of those starts, the first of a task after it became runnable (its wake-up's, not a
    /// resumption after a preemption or a slice's end), and how many of them were late.
    #[serde(default)]
    pub nr_wake_starts: u64,
    #[serde(default)]
    pub nr_wake_misses: u64,
    /// Guaranteed cgroups: averaged use (CPUs) and its ratio to the guarantee.
    pub usage_cpus_avg: f64,
    pub attainment: f64,
    /// Deadline containers with a guarantee: the budget of CPU time left within it when the BPF
    /// side last brought it up to date (negative: beyond the guarantee, behind all work within
    /// one: by its deadline, or as fair work where its deadline_rr is looser than fair work's, as a
    /// container without a guarantee always is).
    #[serde(default)]
    pub guarantee_budget_ns: i64,
    /// Run-queue latency histogram over the subtree: counts per bucket (stats::lat_bucket_bound_us).
    #[serde(default)]
    pub runq_latency: Vec<u64>,
    /// Its own CPU limit (cpu.max) and throttling statistics, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max: Option<crate::limits::CpuMaxReport>,
    /// The tightest CPU limit on it, its own or an ancestor's, in CPUs (0: none). A hard
    /// ceiling: a guarantee above it is granted only up to it.
    #[serde(default)]
    pub limit_cpus: f64,
    /// Its parameters were changed by `scx_fdl set` and differ from the configuration file's:
    /// they hold until scx_fdl restarts or reloads the file (SIGHUP).
    #[serde(default)]
    pub runtime_only: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Response {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default)]
    pub cgroups: Vec<CgroupReport>,
    /// Scheduler-wide figures (list and dump).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<crate::stats::SchedulerStats>,
}

impl Response {
    pub fn error(e: &anyhow::Error) -> Self {
        Self { ok: false, error: Some(format!("{e:#}")), ..Default::default() }
    }
}

/// A request waiting for the scheduler's loop, with where its answer goes.
pub struct Pending {
    request: Request,
    reply: Sender<Response>,
    /// WAITING until either the scheduler's loop takes the request or its connection gives up.
    state: Arc<AtomicU8>,
}

const WAITING: u8 = 0;
const TAKEN: u8 = 1;
const ABANDONED: u8 = 2;

impl Pending {
    /// Handles the request and sends the answer, unless its connection already gave up waiting
    /// (then the client was told nothing was applied, so nothing is).
    #[cfg(test)]
    pub fn answer(self, handle: impl FnOnce(Request) -> Response) {
        if let Some((request, reply)) = self.take() {
            reply.send(handle(request));
        }
    }

    /// Takes the request to answer later, elsewhere (the reports thread), unless its connection
    /// already gave up waiting. The client waits for the answer sent to the Reply.
    pub fn take(self) -> Option<(Request, Reply)> {
        if self.state.compare_exchange(WAITING, TAKEN, Ordering::AcqRel, Ordering::Acquire).is_err() {
            log::warn!("control: a request reached the loop after its client was told it timed out; not applied");
            return None;
        }
        Some((self.request, Reply(self.reply)))
    }
}

/// Where a taken request's answer goes.
pub struct Reply(Sender<Response>);

impl Reply {
    pub fn send(self, response: Response) {
        let _ = self.0.send(response);
    }
}

/// The control socket being served: what the scheduler drains before it exits.
#[derive(Debug)]
pub struct Server {
    path: PathBuf,
    open: Arc<AtomicUsize>,
}

impl Server {
    /// Stops serving: removes the socket, so that a new client is told no scx_fdl is serving,
    /// and waits (at most `bound`) until every connection already accepted has its answer. Call
    /// it after the loop's receiver is gone: a request still waiting there is then answered that
    /// nothing was applied. Exiting without it, a `set` accepted as scx_fdl was ejected had its
    /// connection closed without an answer (the `control` VM case, once).
    pub fn drain(&self, bound: Duration) {
        let _ = std::fs::remove_file(&self.path);
        let start = Instant::now();
        // A connection queued before the socket went is still accepted (and answered): give the
        // accepting thread a moment to take it.
        std::thread::sleep(Duration::from_millis(50));
        while self.open.load(Ordering::Acquire) > 0 && start.elapsed() < bound {
            std::thread::sleep(Duration::from_millis(10));
        }
        let left = self.open.load(Ordering::Acquire);
        if left > 0 {
            log::warn!("control socket: {left} connection(s) still open after {bound:?}; exiting without their answers");
        }
    }
}

/// Listens on `path` and hands every request to `tx` (the scheduler's loop holds the receiver).
/// The socket is created mode 0600 and peers other than root are refused as well.
pub fn serve(path: &Path, tx: Sender<Pending>) -> Result<Server> {
    serve_for(path, 0, tx)
}

/// serve(), accepting peers whose uid is `owner` (root in production; the tests' own uid).
fn serve_for(path: &Path, owner: u32, tx: Sender<Pending>) -> Result<Server> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            bail!(
                "{}: exists and is {}, not a socket: refusing to remove it; move it away or choose \
                 another --socket",
                path.display(),
                file_kind(&meta.file_type())
            );
        }
        if UnixStream::connect(path).is_ok() {
            bail!("{}: another scx_fdl is already serving this control socket", path.display());
        }
        std::fs::remove_file(path).with_context(|| format!("removing the stale socket {}", path.display()))?;
    }
    // Created 0600 from the start (no window where others could connect); the mask is restored at once.
    let old_mask = umask(Mode::from_bits_truncate(0o177));
    let bound = UnixListener::bind(path);
    umask(old_mask);
    let listener = bound.with_context(|| format!("creating the control socket {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;

    let open = Arc::new(AtomicUsize::new(0));
    let counted = open.clone();
    std::thread::Builder::new().name("fdl-control".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            accept(stream, &tx, &counted, owner);
        }
    })?;
    Ok(Server { path: path.to_path_buf(), open })
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a socket"
    }
}

/// Counts a connection for as long as its thread runs.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves one connection on a thread of its own, or refuses it at once when too many are open.
fn accept(mut stream: UnixStream, tx: &Sender<Pending>, open: &Arc<AtomicUsize>, owner: u32) {
    if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
        open.fetch_sub(1, Ordering::AcqRel);
        let busy = anyhow!("busy: {MAX_CONNECTIONS} control connections are open; nothing was applied, try again");
        let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
        let _ = reply(&mut stream, &Response::error(&busy));
        return;
    }
    let slot = Slot(open.clone());
    let tx = tx.clone();
    let spawned = std::thread::Builder::new().name("fdl-control-conn".into()).spawn(move || {
        let _slot = slot;
        if let Err(e) = converse(stream, &tx, owner) {
            log::warn!("control socket: {e:#}");
        }
    });
    if let Err(e) = spawned {
        log::warn!("control socket: no thread for a connection: {e}");
    }
}

fn peer_uid(stream: &UnixStream) -> Result<u32> {
    let cred = getsockopt(stream, PeerCredentials).context("reading the peer's credentials (SO_PEERCRED)")?;
    Ok(cred.uid())
}

fn reply(stream: &mut UnixStream, response: &Response) -> Result<()> {
    writeln!(stream, "{}", serde_json::to_string(response)?)?;
    Ok(())
}

/// A connection read against one deadline for the whole request, not per read: a client that
/// trickles a byte now and then cannot hold its thread longer than a silent one.
struct Deadline<'a> {
    stream: &'a UnixStream,
    start: Instant,
    timeout: Duration,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let expired = || {
            let why = format!("no complete request within {:?}", self.timeout);
            std::io::Error::new(ErrorKind::TimedOut, why)
        };
        let left = self.timeout.saturating_sub(self.start.elapsed());
        if left.is_zero() {
            return Err(expired());
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        match stream.read(buf) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Err(expired()),
            other => other,
        }
    }
}

/// Reads one request line: everything up to a newline, at most MAX_REQUEST_BYTES before it.
/// A line cut short (the client closed or stalled before its newline) is an error, never a
/// request: a valid prefix must not be applied.
fn read_request(stream: impl Read) -> Result<Request> {
    let mut line = Vec::new();
    let mut limited = BufReader::new(stream.take(MAX_REQUEST_BYTES as u64 + 1));
    match limited.read_until(b'\n', &mut line) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::TimedOut => bail!("{e}: nothing was applied"),
        Err(e) => bail!("reading the request: {e}: nothing was applied"),
    }
    if line.last() != Some(&b'\n') {
        if line.len() > MAX_REQUEST_BYTES {
            bail!("request larger than {MAX_REQUEST_BYTES} bytes: refused, nothing was applied");
        }
        bail!("incomplete request ({} bytes without a closing newline): nothing was applied", line.len());
    }
    parse_request(&line)
}

/// One request line (without or with its newline) as a request, or why it is not one.
pub fn parse_request(line: &[u8]) -> Result<Request> {
    let text = std::str::from_utf8(line).map_err(|e| anyhow!("bad request: not UTF-8: {e}"))?;
    serde_json::from_str(text).map_err(|e| anyhow!("bad request: {e}"))
}

fn converse(mut stream: UnixStream, tx: &Sender<Pending>, owner: u32) -> Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let response = if peer_uid(&stream)? != owner {
        Response::error(&anyhow!("permission denied: only root may control scx_fdl"))
    } else {
        match read_request(Deadline { stream: &stream, start: Instant::now(), timeout: IO_TIMEOUT }) {
            Err(e) => Response::error(&e),
            Ok(request) => wait_for_answer(request, tx, IO_TIMEOUT),
        }
    };
    reply(&mut stream, &response)
}

/// Hands a request to the scheduler's loop and waits for its answer, at most `timeout` unless
/// the loop has taken it already (then the answer says what really happened).
pub fn wait_for_answer(request: Request, tx: &Sender<Pending>, timeout: Duration) -> Response {
    let (reply_tx, reply_rx) = mpsc::channel();
    let state = Arc::new(AtomicU8::new(WAITING));
    if tx.send(Pending { request, reply: reply_tx, state: state.clone() }).is_err() {
        return Response::error(&anyhow!("scx_fdl is stopping: nothing was applied"));
    }
    let stopped = || {
        let why = "scx_fdl stopped before it applied this request (shut down or ejected by the kernel)";
        Response::error(&anyhow!("{why}: nothing was applied"))
    };
    match reply_rx.recv_timeout(timeout) {
        Ok(response) => response,
        Err(RecvTimeoutError::Disconnected) => stopped(),
        Err(RecvTimeoutError::Timeout) => {
            if state.compare_exchange(WAITING, ABANDONED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                Response::error(&anyhow!(
                    "the scheduler did not take this request within {:?}: nothing was applied",
                    timeout
                ))
            } else {
                reply_rx.recv().unwrap_or_else(|_| stopped())
            }
        }
    }
}

/// Sends one request to the scx_fdl serving `path` and returns its answer; an answer that is an
/// error becomes this function's error.
pub fn request(path: &Path, req: &Request) -> Result<Response> {
    let mut stream = UnixStream::connect(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            anyhow!("no scx_fdl is serving {}: is it running? ({e})", path.display())
        }
        std::io::ErrorKind::PermissionDenied => {
            anyhow!("{}: permission denied: only root may control scx_fdl", path.display())
        }
        _ => anyhow!("connecting to {}: {e}", path.display()),
    })?;
    // The server waits IO_TIMEOUT for the request and IO_TIMEOUT for the loop: hear its verdict.
    stream.set_read_timeout(Some(IO_TIMEOUT * 2 + Duration::from_secs(1)))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    // A refused request (too large) may close the socket before all of it is written; its
    // answer is still there to read.
    let sent = writeln!(stream, "{}", serde_json::to_string(req)?);
    let mut line = String::new();
    let read = BufReader::new(&stream).read_line(&mut line);
    if line.is_empty() {
        sent.context("sending the request")?;
        read.context("reading scx_fdl's answer")?;
        bail!("scx_fdl closed the connection without an answer");
    }
    let resp: Response = serde_json::from_str(&line).context("scx_fdl's answer is not a response")?;
    if !resp.ok {
        bail!("{}", resp.error.unwrap_or_else(|| "failed, without a reason".into()));
    }
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::mpsc::Receiver;

    /// serve_for() with a channel of its own: the receiver the scheduler's loop would hold.
    fn served(path: &Path, owner: u32) -> Receiver<Pending> {
        let (tx, rx) = mpsc::channel();
        serve_for(path, owner, tx).unwrap();
        rx
    }

    /// An exiting scx_fdl answers the connection it already accepted before it goes: drain()
    /// returns only once that connection has written its answer, and the socket is gone.
    #[test]
    fn drain_answers_accepted_connections_before_exit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let (tx, rx) = mpsc::channel();
        let server = serve_for(&path, my_uid(), tx).unwrap();
        let client_path = path.clone();
        let client = std::thread::spawn(move || {
            request(&client_path, &Request::Set { cgroup: "g".into(), assign: vec!["deadline_rr=2ms".into()] })
        });
        // The request reaches the loop's channel; the loop never takes it (it is exiting).
        let pending = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        drop(pending);
        drop(rx);
        server.drain(Duration::from_secs(2));
        // Its contract: no connection left without its answer (the client's own thread may still
        // be reading that answer, so its state is not the check).
        assert_eq!(server.open.load(Ordering::Acquire), 0, "drain returned with a connection unanswered");
        let e = client.join().unwrap().unwrap_err().to_string();
        assert!(e.contains("stopped before it applied"), "{e}");
        assert!(!path.exists(), "the socket is removed");
        let gone = request(&path, &Request::Dump).unwrap_err().to_string();
        assert!(gone.contains("no scx_fdl is serving"), "{gone}");
    }

    #[test]
    fn requests_round_trip_as_json_lines() {
        let req = Request::Set { cgroup: "web".into(), assign: vec!["deadline_rr=200us".into()] };
        let text = serde_json::to_string(&req).unwrap();
        assert_eq!(text, r#"{"cmd":"set","cgroup":"web","assign":["deadline_rr=200us"]}"#);
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), req);
        assert!(serde_json::from_str::<Request>(r#"{"cmd":"reboot"}"#).is_err());
        // `dump --new-window [--window-for]`: the window's length in ns, 0 (until the next) if not given.
        let w = Request::Window { window_ns: 20_000_000_000 };
        assert_eq!(serde_json::to_string(&w).unwrap(), r#"{"cmd":"window","window_ns":20000000000}"#);
        assert_eq!(serde_json::from_str::<Request>(r#"{"cmd":"window"}"#).unwrap(), Request::Window { window_ns: 0 });
    }

    #[test]
    fn the_socket_answers_and_refuses_a_second_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let (tx, rx) = mpsc::channel();
        serve(&path, tx).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(serve(&path, mpsc::channel().0).unwrap_err().to_string().contains("already serving"));

        let server = std::thread::spawn(move || {
            for _ in 0..2 {
                rx.recv().unwrap().answer(|req| match req {
                    Request::Get { cgroup } => Response {
                        ok: true,
                        cgroups: vec![CgroupReport { path: cgroup, ..Default::default() }],
                        ..Default::default()
                    },
                    _ => Response::error(&anyhow::anyhow!("cgroup x: no")),
                });
            }
        });
        // Tests run as root in CI and in the VM; as another user the socket refuses us.
        if unsafe { libc::geteuid() } == 0 {
            let resp = request(&path, &Request::Get { cgroup: "web".into() }).unwrap();
            assert_eq!(resp.cgroups[0].path, "web");
            let e = request(&path, &Request::List).unwrap_err();
            assert_eq!(e.to_string(), "cgroup x: no");
            server.join().unwrap();
        }
        let missing = request(&dir.path().join("none.sock"), &Request::List).unwrap_err();
        assert!(missing.to_string().contains("is it running?"), "{missing}");
    }

    fn my_uid() -> u32 {
        // SAFETY: geteuid cannot fail.
        unsafe { libc::geteuid() }
    }

    /// A scheduler loop stand-in: answers every request with the cgroup it names (or "list").
    fn answer_all(rx: Receiver<Pending>) {
        std::thread::spawn(move || {
            for pending in rx {
                pending.answer(|req| {
                    let path = match req {
                        Request::Get { cgroup } | Request::Set { cgroup, .. } => cgroup,
                        _ => "list".into(),
                    };
                    let cgroups = vec![CgroupReport { path, ..Default::default() }];
                    Response { ok: true, cgroups, ..Default::default() }
                });
            }
        });
    }

    #[test]
    fn twenty_clients_are_answered_while_one_stalls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        answer_all(served(&path, my_uid()));
        // Connected first, then silent: before, it held the only server thread for IO_TIMEOUT (5 s).
        let mut stalled = UnixStream::connect(&path).unwrap();
        stalled.write_all(b"{\"cmd\":").unwrap();
        std::thread::sleep(Duration::from_millis(50));

        let start = std::time::Instant::now();
        let clients: Vec<_> = (0..20)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || request(&path, &Request::Get { cgroup: format!("c{i}") }))
            })
            .collect();
        for (i, c) in clients.into_iter().enumerate() {
            let resp = c.join().unwrap().unwrap();
            assert_eq!(resp.cgroups[0].path, format!("c{i}"));
        }
        assert!(start.elapsed() < Duration::from_secs(2), "20 clients took {:?}", start.elapsed());

        // The stalled client is told its request was never complete, and nothing was applied.
        stalled.set_read_timeout(Some(IO_TIMEOUT * 2)).unwrap();
        let mut answer = String::new();
        BufReader::new(&stalled).read_line(&mut answer).unwrap();
        assert!(answer.contains("no complete request within 5s: nothing was applied"), "{answer}");
    }

    #[test]
    fn oversized_and_incomplete_requests_are_refused_unapplied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let rx = served(&path, my_uid());

        let big = Request::Set { cgroup: "web".into(), assign: vec!["x".repeat(MAX_REQUEST_BYTES)] };
        let e = request(&path, &big).unwrap_err().to_string();
        assert_eq!(e, "request larger than 65536 bytes: refused, nothing was applied");

        // A valid request whose newline never came: the client closed early.
        let mut cut = UnixStream::connect(&path).unwrap();
        cut.write_all(b"{\"cmd\":\"list\"}").unwrap();
        cut.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answer = String::new();
        BufReader::new(&cut).read_line(&mut answer).unwrap();
        assert!(answer.contains("incomplete request (14 bytes without a closing newline)"), "{answer}");

        assert!(rx.try_recv().is_err(), "a refused request reached the scheduler loop");
        std::thread::spawn(move || drop(rx.recv()));
        let e = request(&path, &Request::List).unwrap_err().to_string();
        assert!(e.contains("stopped before it applied"), "a request the loop drops: {e}");
    }

    #[test]
    fn a_trickling_client_gets_one_deadline_for_the_whole_request() {
        let (mut client, server) = UnixStream::pair().unwrap();
        let trickle = std::thread::spawn(move || {
            // Each byte well within the per-read time, the whole far beyond the deadline.
            for b in b"{\"cmd\":\"list\"}\n" {
                if client.write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(40));
            }
        });
        let start = Instant::now();
        let reader = Deadline { stream: &server, start, timeout: Duration::from_millis(200) };
        let e = read_request(reader).unwrap_err().to_string();
        assert_eq!(e, "no complete request within 200ms: nothing was applied");
        assert!(start.elapsed() < Duration::from_millis(600), "took {:?}", start.elapsed());
        drop(server);
        trickle.join().unwrap();
    }

    #[test]
    fn a_request_its_connection_gave_up_on_is_not_applied() {
        let (tx, rx) = mpsc::channel();
        let resp = wait_for_answer(Request::List, &tx, Duration::from_millis(50));
        assert!(resp.error.unwrap().contains("did not take this request within 50ms: nothing was applied"));
        let mut applied = false;
        rx.recv().unwrap().answer(|_| {
            applied = true;
            Response::default()
        });
        assert!(!applied, "applied after the client was told it was not");

        // Taken in time: answered.
        let ok = || Response { ok: true, ..Default::default() };
        let loop_ = std::thread::spawn(move || rx.recv().unwrap().answer(|_| ok()));
        assert!(wait_for_answer(Request::List, &tx, Duration::from_secs(5)).ok);
        loop_.join().unwrap();
    }

    #[test]
    fn a_file_at_the_socket_path_is_neither_removed_nor_served() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        std::fs::write(&path, "precious").unwrap();
        let e = serve(&path, mpsc::channel().0).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: exists and is a regular file, not a socket: refusing to remove it; move it away or \
                 choose another --socket",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
        let e = serve(dir.path(), mpsc::channel().0).unwrap_err().to_string();
        assert!(e.contains("exists and is a directory, not a socket"), "{e}");
    }

    #[test]
    fn other_users_and_too_many_connections_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        answer_all(served(&path, my_uid().wrapping_add(1)));
        let e = request(&path, &Request::List).unwrap_err().to_string();
        assert_eq!(e, "permission denied: only root may control scx_fdl");

        let path = dir.path().join("busy.sock");
        answer_all(served(&path, my_uid()));
        let held: Vec<UnixStream> = (0..MAX_CONNECTIONS).map(|_| UnixStream::connect(&path).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(100));
        let e = request(&path, &Request::List).unwrap_err().to_string();
        assert!(e.starts_with("busy: 32 control connections are open"), "{e}");
        drop(held);
        std::thread::sleep(Duration::from_millis(200));
        assert!(request(&path, &Request::List).unwrap().ok, "slots come back when connections close");
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_line_is_a_request_or_a_bad_request(line in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Err(e) = parse_request(&line) {
                prop_assert!(e.to_string().starts_with("bad request: "), "{e}");
            }
        }

        #[test]
        fn request_like_lines_are_a_request_or_a_bad_request(
            line in r#"\{("cmd"|"cgroup"|"assign"|[a-z]{1,3}):("set"|"get"|"list"|"dump"|"[ -~]{0,5}"|\[("[a-z=]{0,4}",?){0,2}\]|[0-9]{1,3})(,("cgroup"|"assign"):("web"|\["deadline_rr=1ms"\]|null)){0,2}\}\n?"#
        ) {
            match parse_request(line.as_bytes()) {
                Ok(req) => prop_assert_eq!(parse_request(serde_json::to_string(&req).unwrap().as_bytes()).unwrap(), req),
                Err(e) => prop_assert!(e.to_string().starts_with("bad request: "), "{e}"),
            }
        }

        #[test]
        fn any_byte_stream_is_one_complete_request_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            match read_request(bytes.as_slice()) {
                Ok(_) => prop_assert!(bytes.contains(&b'\n')),
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(e.starts_with("bad request: ") || e.starts_with("incomplete request ("), "{e}");
                }
            }
        }
    }
}
