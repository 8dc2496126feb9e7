//! Runtime control of a running scx_fdl over a UNIX socket only root can use.
//!
//! One JSON request per line, one JSON response per line. The socket thread only moves requests
//! to the scheduler's loop, which validates and applies them exactly like a configuration file.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// Where the control socket lives unless --socket says otherwise.
pub const DEFAULT_SOCKET: &str = "/run/scx_fdl.sock";

/// How long either side waits for the other before giving up on a request.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

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
}

/// A cgroup's parameters and what it got.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CgroupReport {
    pub path: String,
    /// The cgroup exists (a configured one may not, yet).
    pub present: bool,
    pub deadline_rr_ns: u64,
    pub deadline_wakeup_ns: u64,
    pub guaranteed_shares: u32,
    /// The guarantee in CPUs (nested guarantees resolved).
    pub guarantee_cpus: f64,
    pub cpu_weight: u32,
    /// The weight scheduling uses: cpu.weight, or the guarantee loop's boost.
    pub effective_weight: u32,
    /// Cumulative, over the cgroup's subtree, since scx_fdl started.
    pub usage_ns: u64,
    pub wait_ns: u64,
    /// Deadline containers: starts past the deadline, and the worst lateness.
    pub nr_misses: u64,
    pub max_lateness_ns: u64,
    /// Picks from its deadline queue, late or not (the misses' denominator).
    #[serde(default)]
    pub nr_picks: u64,
    /// Guaranteed cgroups: averaged use (CPUs) and its ratio to the guarantee.
    pub usage_cpus_avg: f64,
    pub attainment: f64,
    /// Run-queue latency histogram over the subtree: counts per bucket (stats::lat_bucket_bound_us).
    #[serde(default)]
    pub runq_latency: Vec<u64>,
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
pub type Pending = (Request, Sender<Response>);

/// Listens on `path` and hands every request to the returned receiver. The socket is created
/// mode 0600 and peers other than root are refused as well.
pub fn serve(path: &Path) -> Result<Receiver<Pending>> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            bail!("{}: another scx_fdl is already serving this control socket", path.display());
        }
        std::fs::remove_file(path).with_context(|| format!("removing the stale socket {}", path.display()))?;
    }
    // SAFETY: umask only changes this process's file creation mask; restored at once.
    let old_mask = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(path);
    unsafe { libc::umask(old_mask) };
    let listener = bound.with_context(|| format!("creating the control socket {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;

    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new().name("fdl-control".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            if let Err(e) = answer(stream, &tx) {
                log::warn!("control socket: {e:#}");
            }
        }
    })?;
    Ok(rx)
}

fn peer_uid(stream: &UnixStream) -> Result<u32> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED fills a ucred of the size given.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        bail!("reading the peer's credentials: {}", std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

fn answer(mut stream: UnixStream, tx: &Sender<Pending>) -> Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let response = if peer_uid(&stream)? != 0 {
        Response::error(&anyhow::anyhow!("permission denied: only root may control scx_fdl"))
    } else {
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line)?;
        match serde_json::from_str::<Request>(&line) {
            Err(e) => Response::error(&anyhow::anyhow!("bad request: {e}")),
            Ok(req) => {
                let (reply_tx, reply_rx) = mpsc::channel();
                tx.send((req, reply_tx)).context("the scheduler loop is gone")?;
                reply_rx
                    .recv_timeout(IO_TIMEOUT)
                    .unwrap_or_else(|_| Response::error(&anyhow::anyhow!("the scheduler did not answer in time")))
            }
        }
    };
    writeln!(stream, "{}", serde_json::to_string(&response)?)?;
    Ok(())
}

/// Sends one request to the scx_fdl serving `path` and returns its answer; an answer that is an
/// error becomes this function's error.
pub fn request(path: &Path, req: &Request) -> Result<Response> {
    let mut stream = UnixStream::connect(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            anyhow::anyhow!("no scx_fdl is serving {}: is it running? ({e})", path.display())
        }
        std::io::ErrorKind::PermissionDenied => {
            anyhow::anyhow!("{}: permission denied: only root may control scx_fdl", path.display())
        }
        _ => anyhow::anyhow!("connecting to {}: {e}", path.display()),
    })?;
    stream.set_read_timeout(Some(IO_TIMEOUT * 2))?;
    writeln!(stream, "{}", serde_json::to_string(req)?)?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line).context("reading scx_fdl's answer")?;
    let resp: Response = serde_json::from_str(&line).context("scx_fdl's answer is not a response")?;
    if !resp.ok {
        bail!("{}", resp.error.unwrap_or_else(|| "failed, without a reason".into()));
    }
    Ok(resp)
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_as_json_lines() {
        let req = Request::Set { cgroup: "web".into(), assign: vec!["deadline_rr=200us".into()] };
        let text = serde_json::to_string(&req).unwrap();
        assert_eq!(text, r#"{"cmd":"set","cgroup":"web","assign":["deadline_rr=200us"]}"#);
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), req);
        assert!(serde_json::from_str::<Request>(r#"{"cmd":"reboot"}"#).is_err());
    }

    #[test]
    fn the_socket_answers_and_refuses_a_second_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let rx = serve(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(serve(&path).unwrap_err().to_string().contains("already serving"));

        let server = std::thread::spawn(move || {
            for _ in 0..2 {
                let (req, reply) = rx.recv().unwrap();
                let resp = match req {
                    Request::Get { cgroup } => Response {
                        ok: true,
                        cgroups: vec![CgroupReport { path: cgroup, ..Default::default() }],
                        ..Default::default()
                    },
                    _ => Response::error(&anyhow::anyhow!("cgroup x: no")),
                };
                reply.send(resp).unwrap();
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
}
