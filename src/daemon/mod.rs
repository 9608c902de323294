//! The warm per-workspace daemon (issue 8): one long-lived [`Orchestrator`] and Pyright
//! session per workspace root, served over a Unix socket (a named pipe on Windows), so that
//! a `lanser def` costs a round trip instead of a server start.
//!
//! - `client`: what every CLI invocation does — find (or start) the workspace's daemon, send
//!   the command line, print the bundle it answers. Any failure falls back to answering
//!   in-process, so the daemon is an accelerator, never a new way to fail.
//! - `batch`: `lanser batch` through the daemon — one connection per batch (a stream): each
//!   request line is sent as it is read (up to `--jobs` in flight) and the bundles written in
//!   input order; lines the daemon does not answer (writes) and every line after the daemon
//!   is lost are answered in-process.
//! - `server`: the daemon process (`lanser daemon serve`, started on demand); its `refresh`
//!   pulls the base view's diagnostics in the background after every change.
//! - `fresh`: bringing the server's view in line with disk before every answer.
//! - `shared`: equal copies of a workspace sharing one daemon (`LANSER_SHARE_BASE=1`).
//! - `transport`: the platform's way in — a Unix socket, or a Windows named pipe.
//!
//! Layout: `$LANSER_HOME/daemon/<hash of root>/` (mode 0700) holds `sock` (0600; on Windows
//! a file naming the daemon's pipe), `pid`, `start.lock` and `log`. The daemon answers
//! exactly what `--no-daemon` prints: it runs the same
//! [`crate::orchestrator::Orchestrator::execute`] on the same request, which the client parsed
//! and sends as a value ([`ToDaemon::Ask`]): a request is parsed once, where it entered.
//!
//! [`Orchestrator`]: crate::orchestrator::Orchestrator

pub mod batch;
pub mod client;
pub mod fresh;
pub mod server;
pub mod shared;
pub mod transport;

pub use crate::cli::Action;
use crate::cli::Global;
use crate::commands::Request;
use crate::error::{ErrorCode, LanserError};
use crate::exit::ExitStatus;
use crate::orchestrator::Options;
use crate::workspace::Workspace;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default idle shutdown.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(15 * 60);
/// Environment override of the idle shutdown, in seconds, for daemons started on demand.
pub const IDLE_ENV: &str = "LANSER_DAEMON_IDLE";
/// `off` (or `0`) in a starting daemon's environment: no memo (every request reaches the
/// server; for measuring).
pub const MEMO_ENV: &str = "LANSER_DAEMON_MEMO";
/// Set to anything but empty or `0` to answer in-process.
pub const NO_DAEMON_ENV: &str = "LANSER_NO_DAEMON";

/// Why the daemon could not be used (the CLI then answers in-process).
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("daemon I/O at {path}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("daemon socket path {0} is too long for a Unix socket")]
    PathTooLong(PathBuf),
    #[error("refusing {path}: {why} (remove it to let lanser make a private one)")]
    Insecure { path: PathBuf, why: String },
    #[error("daemon did not come up within {0:?} (see {1})")]
    StartTimeout(Duration, PathBuf),
    #[error("daemon sent an unreadable answer: {0}")]
    Protocol(String),
}

impl DaemonError {
    fn io(path: &Path, source: std::io::Error) -> DaemonError {
        DaemonError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where a workspace's daemon lives.
#[derive(Debug, Clone)]
pub struct Paths {
    pub dir: PathBuf,
    pub sock: PathBuf,
    pub pid: PathBuf,
    pub lock: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    pub fn for_root(root: &Path) -> Paths {
        let dir = crate::safety::state_dir(root, "daemon");
        Paths {
            sock: dir.join("sock"),
            pid: dir.join("pid"),
            lock: dir.join("start.lock"),
            log: dir.join("log"),
            dir,
        }
    }

    /// Create the state directory, private, and check what is in it
    /// ([`transport::prepare`]).
    pub fn ensure_dir(&self) -> Result<(), DaemonError> {
        transport::prepare(self)
    }

    /// The pid the pid file names (written by the daemon once it listens).
    pub fn recorded_pid(&self) -> Option<u32> {
        std::fs::read_to_string(&self.pid).ok()?.trim().parse().ok()
    }

    /// The daemon's pid, when its pid file names a live process.
    pub fn live_pid(&self) -> Option<u32> {
        let pid = self.recorded_pid()?;
        crate::safety::pid_alive(pid).then_some(pid)
    }
}

/// Identifies this build: the package version and the executable's size and mtime, so a
/// rebuilt or upgraded CLI replaces a daemon started by another build.
pub fn build_id() -> String {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    let stamp = match meta {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            format!("{}:{mtime}", m.len())
        }
        Err(_) => String::new(),
    };
    let hash = crate::digest::sha256_hex(stamp.as_bytes());
    format!("{}+{}", env!("CARGO_PKG_VERSION"), &hash[..12])
}

/// The environment a bundle depends on beyond the command line: a daemon started under
/// another one (another venv, server command or config home) is replaced.
pub fn env_fingerprint() -> String {
    let mut text = String::new();
    for key in [
        "PATH",
        "HOME",
        "LANSER_SERVER_CMD",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "LANSER_HOME",
        "PYTHONPATH",
    ] {
        let v = std::env::var_os(key).unwrap_or_default();
        text.push_str(&format!("{key}={}\n", v.to_string_lossy()));
    }
    crate::digest::sha256_hex(text.as_bytes())[..16].to_string()
}

/// Whether the user asked to answer in-process.
pub fn disabled(global: &Global) -> bool {
    global.no_daemon
        || std::env::var(NO_DAEMON_ENV).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Client → daemon: the first message of a connection (the only one, except after
/// [`ToDaemon::Batch`]). A request crosses as the value the client parsed, never as words: it
/// is parsed once, where it entered lanser.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ToDaemon {
    /// Answer `request` under the options `global`, run in `cwd`: as `lanser` answers it on
    /// its command line, or (`as_line`) as `lanser batch` answers it as one of its lines.
    Ask {
        build: String,
        env: String,
        cwd: PathBuf,
        global: Box<Global>,
        request: Request,
        as_line: bool,
    },
    /// Open a batch stream under the options `global` (`input`: the batch's input file, read
    /// ahead by the daemon; none for stdin): answered [`FromDaemon::Ready`], then each
    /// [`StreamLine`] the client writes (parsed there, once) is answered, in order, with one
    /// message — as [`ToDaemon::Ask`] answers a line, without a connection per line.
    Batch {
        build: String,
        env: String,
        cwd: PathBuf,
        global: Box<Global>,
        input: Option<PathBuf>,
    },
    Status,
    Stop,
}

/// The options a request runs under in the daemon: `global`'s, run in `cwd` (a relative
/// `--prev-bundle` is the client's).
pub fn options_in(cwd: &Path, global: &Global) -> crate::error::Result<Options> {
    let mut global = global.clone();
    global.prev_bundle = global.prev_bundle.map(|p| cwd.join(p));
    let mut opts = global.options()?;
    opts.cwd = cwd.to_path_buf();
    Ok(opts)
}

/// One request line of a batch stream (after [`ToDaemon::Batch`]), as the client parsed it:
/// the request, or why the line asks for none (answered with the batch's error bundle).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamLine {
    /// 1-based, as in the input.
    pub line_no: usize,
    pub parsed: std::result::Result<Request, crate::batch::BadLine>,
}

/// Daemon → client: one message per connection, or one per line of a batch stream after its
/// [`FromDaemon::Ready`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FromDaemon {
    /// The bundle, as one line of JCS.
    Bundle {
        jcs: String,
    },
    /// A failure before any bundle (what the in-process CLI prints as `lanser: …`).
    Failed {
        exit: u8,
        line: String,
    },
    /// Another build or environment: the daemon is exiting; start a new one.
    Mismatch {
        build: String,
    },
    Status {
        info: serde_json::Value,
    },
    Stopping,
    /// A batch stream is open: send its lines.
    Ready,
}

/// `lanser daemon start|stop|status` (and the hidden `serve`).
pub async fn command(
    action: &Action,
    global: &Global,
    opts: &Options,
) -> crate::error::Result<ExitStatus> {
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
    let paths = Paths::for_root(&ws.root);
    let result = match action {
        Action::Serve { idle_timeout } => {
            let idle = idle_timeout
                .map(Duration::from_secs)
                .unwrap_or_else(idle_from_env);
            return match server::serve(ws, paths, idle).await {
                Ok(()) => Ok(ExitStatus::Success),
                Err(e) => Err(LanserError::keeping_chain(ErrorCode::Internal, e)),
            };
        }
        Action::Start { idle_timeout } => client::ensure_started(&ws.root, &paths, *idle_timeout)
            .map(|pid| {
                format!(
                    "lanser daemon running for {} (pid {pid}, socket {})\n",
                    ws.root.display(),
                    transport::address(&paths)
                )
            }),
        Action::Stop => client::stop(&paths).map(|stopped| match stopped {
            Some(pid) => format!("stopped lanser daemon {pid} for {}\n", ws.root.display()),
            None => format!("no lanser daemon running for {}\n", ws.root.display()),
        }),
        Action::Status => client::status(&paths).map(|info| {
            if global.json {
                format!("{}\n", serde_jcs::to_string(&info).unwrap_or_default())
            } else {
                render_status(&info)
            }
        }),
    };
    match result {
        Ok(text) => crate::output::emit(&text),
        Err(e) => Err(LanserError::keeping_chain(ErrorCode::Internal, e)),
    }
}

/// The idle timeout for a daemon started on demand.
pub fn idle_from_env() -> Duration {
    std::env::var(IDLE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_IDLE)
}

fn render_status(info: &serde_json::Value) -> String {
    let Some(map) = info.as_object() else {
        return format!("{info}\n");
    };
    let mut out = String::new();
    for (k, v) in map {
        let shown = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string).unwrap_or(i.to_string()))
                    .collect();
                format!("{} [{}]", items.len(), items.join(", "))
            }
            other => other.to_string(),
        };
        out.push_str(&format!("{k}: {shown}\n"));
    }
    out
}

/// VmRSS of a process in KiB, from `/proc/<pid>/status`.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
