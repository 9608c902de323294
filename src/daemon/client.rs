//! The CLI side: route a command to the workspace's daemon (starting it on demand), print
//! what it answers exactly as the in-process path prints a bundle, and fall back to
//! answering in-process whenever the daemon cannot be used.
//!
//! A single command that writes (`--apply`) goes to the daemon like a read: the daemon runs
//! the same operation code, so the journal, the workspace lock (a file lock every process
//! takes) and crash recovery are the ones an in-process apply uses, and its warm session
//! checks the change. What reads stdin (`check --patch -`, `apply --patch -`, `edit --text -`)
//! and the commands that describe this process (`status`, `reload`) run in-process, and so
//! does a batch's writing line (`super::batch` answers it in order between the others).

use super::{transport, DaemonError, FromDaemon, Paths, ToDaemon};
use crate::bundle::Bundle;
use crate::cli::Cli;
use crate::commands::Op;
use crate::commands::Request;
use crate::error::{ErrorCode, LanserError};
use crate::exit::ExitStatus;
use crate::orchestrator::Options;
use crate::workspace::Workspace;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a daemon started on demand may take to listen.
const START_WAIT: Duration = Duration::from_secs(10);
/// How long `stop` (or a replaced daemon) may take to answer and exit.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Whether `op` may be answered by the daemon. A write goes there too: the daemon applies it
/// inside the same safety envelope (jail, guard, workspace lock, journal, transaction) that
/// this process would, on its warm session, so the check before the write costs what a
/// warm check costs instead of a cold server start (httpx, debug build: 1.1 s against 2–3 s).
/// A write or check that reads this process's stdin stays here.
pub fn routable(op: &Op) -> bool {
    // What reads this process's stdin is answered here, and so is what is serverless or
    // describes this process (`Operation::answered_locally`).
    !op.reads_stdin() && !op.answered_locally()
}

/// Whether a `lanser batch` line running `op` may be answered by the daemon: all but the
/// writes [`routable`] keeps here. `locate`, `status` and `reload` go too: inside a batch they
/// are answered on the session that answers the batch's other lines, as in-process.
pub fn routable_line(op: &Op) -> bool {
    // A batch's writing line is answered in the batch's process, after every earlier line and
    // before any later one is sent (super::batch keeps that order).
    !op.writes_files() && !op.reads_stdin()
}

/// Answer `request` through the daemon; `None` means "answer in-process" (opted out, not
/// routable, or the daemon could not be used — said on stderr in the last case).
pub fn answer(
    cli: &Cli,
    opts: &Options,
    request: &Request,
) -> Option<crate::error::Result<ExitStatus>> {
    if super::disabled(&cli.global) || !routable(&request.op) {
        return None;
    }
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd).ok()?;
    // The recovery rule holds whoever answers: a journal left by a killed apply is rolled
    // back before anything reads the files.
    crate::edits::apply::recover_and_report(&ws.root).ok()?;
    install_on_first_need(&ws, opts);
    let writes = request.op.writes_files();
    if let Some(shared) = shared_base(&ws, opts, &cli.global, request) {
        let (base, opts, global) = shared;
        match run_remote(&base, &opts, &global, request) {
            Ok(reply) => return Some(print_reply(reply, cli.global.json, &ws)),
            Err(e) => eprintln!(
                "lanser: the shared daemon of {} is unavailable ({}); answering here",
                base.root.display(),
                crate::error::chain(&e)
            ),
        }
    }
    match run_remote(&ws, opts, &cli.global, request) {
        Ok(reply) => Some(print_reply(reply, cli.global.json, &ws)),
        // A write the daemon still holds must not be run a second time here: it may yet
        // write, and this process would race it.
        Err(e) if writes && Paths::for_root(&ws.root).live_pid().is_some() => {
            Some(Err(unanswered_write(opts.timeout.as_secs_f64(), &e)))
        }
        Err(e) => {
            eprintln!(
                "lanser: daemon unavailable ({}); answering in-process",
                crate::error::chain(&e)
            );
            None
        }
    }
}

/// With `LANSER_SHARE_BASE=1` ([`super::shared`]): the shared copy of `ws`'s content, and the
/// options and global options moved into it, for a read `ws` has no daemon of its own for.
fn shared_base(
    ws: &Workspace,
    opts: &Options,
    global: &crate::cli::Global,
    request: &Request,
) -> Option<(Workspace, Options, crate::cli::Global)> {
    let shareable = super::shared::enabled()
        && !request.op.writes_files()
        && global.trace_file.is_none()
        && Paths::for_root(&ws.root).live_pid().is_none();
    if !shareable {
        return None;
    }
    // The working directory moves into the shared copy when it is inside the workspace; a
    // relative path out of the workspace would then name another file, so it is not shared.
    // One outside stays where it is (in either copy, what it names is outside).
    let cwd = match opts.cwd.starts_with(&ws.root) {
        true if super::shared::names_outside(&request.op.args().into(), &opts.cwd, &ws.root) => {
            return None
        }
        true => None,
        false => Some(opts.cwd.clone()),
    };
    let base = super::shared::base_of(&ws.root)?;
    let cwd = match cwd {
        Some(outside) => outside,
        None => super::shared::moved(&opts.cwd, &ws.root, &base)?,
    };
    let mut global = global.clone();
    if global.workspace.is_some() {
        global.workspace = Some(base.clone());
    }
    global.prev_bundle = global.prev_bundle.map(|p| opts.cwd.join(p));
    let opts = Options {
        workspace: Some(base.clone()),
        cwd,
        ..opts.clone()
    };
    Some((Workspace::new(base), opts, global))
}

/// Install the configured server here, when it is missing, so that the install's progress
/// line reaches this terminal rather than the daemon's log. Failures are left to whoever
/// answers (the daemon, or this process if it cannot), which report them properly.
pub(super) fn install_on_first_need(ws: &Workspace, opts: &Options) {
    if !opts.install {
        return;
    }
    let Ok(config) = crate::config::Config::load(&ws.root) else {
        return;
    };
    if let Ok(def) = config.select(opts.server.as_deref()) {
        let _ = crate::servers::install_if_missing(&ws.root, opts.server_cmd.as_deref(), def);
    }
}

/// The error for a write the daemon has not answered within its bound while it still runs:
/// it may yet write, so the write is never run a second time in the asking process.
pub(crate) fn unanswered_write(timeout_secs: f64, e: &DaemonError) -> LanserError {
    let timeout = Duration::from_secs_f64(timeout_secs.clamp(0.0, 86_400.0));
    LanserError::new(
        ErrorCode::LsTimeout,
        format!(
            "the daemon has not answered this write within {} s and is still running; it may \
             still write (see `lanser daemon status`); this process wrote nothing ({})",
            answer_wait(timeout, true).as_secs(),
            crate::error::chain(e)
        ),
    )
}

/// How long the CLI waits for the daemon's answer. A read gives up after its bound (a cold
/// start pays for the server and the project load, bounded by --timeout) and is answered
/// in-process. A write gets a longer bound (a Django check took 337 s): the daemon never drops
/// a write midway, so a CLI that gave up and wrote in-process would race the daemon's own
/// write. A write not answered within its bound while the daemon lives is an error
/// ([`answer`]), never run again here.
pub(crate) fn answer_wait(timeout: Duration, writes: bool) -> Duration {
    match writes {
        true => timeout * 10 + Duration::from_secs(600),
        false => timeout * 3 + Duration::from_secs(30),
    }
}

fn run_remote(
    ws: &Workspace,
    opts: &Options,
    global: &crate::cli::Global,
    request: &Request,
) -> Result<FromDaemon, DaemonError> {
    let paths = Paths::for_root(&ws.root);
    let msg = ToDaemon::Ask {
        build: super::build_id(),
        env: super::env_fingerprint(),
        cwd: opts.cwd.clone(),
        global: Box::new(global.clone()),
        request: request.clone(),
        as_line: false,
    };
    let wait = answer_wait(opts.timeout, request.op.writes_files());
    for _ in 0..2 {
        ensure_started(&ws.root, &paths, None)?;
        match exchange(&paths, &msg, wait)? {
            FromDaemon::Mismatch { .. } => wait_gone(&paths),
            reply => return Ok(reply),
        }
    }
    Err(DaemonError::Protocol(
        "the daemon kept reporting another build".into(),
    ))
}

fn print_reply(reply: FromDaemon, json: bool, ws: &Workspace) -> crate::error::Result<ExitStatus> {
    match reply {
        FromDaemon::Bundle { jcs } => {
            let bundle: Bundle = serde_json::from_str(&jcs).map_err(|e| {
                crate::error::LanserError::internal("the daemon sent an unreadable bundle")
                    .with_source(e)
            })?;
            let text = if json {
                format!("{jcs}\n")
            } else {
                crate::commands::render::render(&bundle, ws)
            };
            crate::output::show(&bundle, &text)
        }
        FromDaemon::Failed { exit, line } => {
            eprintln!("{line}");
            Ok(ExitStatus::Relayed(exit))
        }
        other => Err(crate::error::LanserError::internal(format!(
            "unexpected daemon answer {other:?}"
        ))),
    }
}

/// Send one message and read the one answer.
pub fn exchange(paths: &Paths, msg: &ToDaemon, wait: Duration) -> Result<FromDaemon, DaemonError> {
    exchange_held(paths, msg, wait, None)
}

/// A connection another thread may shut down while [`exchange_held`] waits on it.
pub type Held = transport::Held;

/// [`exchange`], with the connection in `held` while it waits, so that another thread can
/// shut it down when the caller gives up: the daemon then drops the request (and cancels it
/// at the server) if it only reads.
pub fn exchange_held(
    paths: &Paths,
    msg: &ToDaemon,
    wait: Duration,
    held: Option<&Held>,
) -> Result<FromDaemon, DaemonError> {
    transport::check(paths)?;
    let mut line = serde_json::to_string(msg).map_err(|e| DaemonError::Protocol(e.to_string()))?;
    line.push('\n');
    let answer = transport::exchange(paths, line.as_bytes(), wait, held)
        .map_err(|e| DaemonError::io(&paths.sock, e))?;
    serde_json::from_str(&answer).map_err(|e| {
        DaemonError::Protocol(format!(
            "{e} in {:?}",
            answer.chars().take(80).collect::<String>()
        ))
    })
}

/// Make sure a daemon listens for `root`; start one if not. Returns its pid.
pub fn ensure_started(root: &Path, paths: &Paths, idle: Option<u64>) -> Result<u32, DaemonError> {
    paths.ensure_dir()?;
    // A daemon answered, so its pid needs no liveness check (which costs a process start
    // on Windows, on every call).
    if transport::probe(paths) {
        return Ok(paths.recorded_pid().unwrap_or(0));
    }
    let exe = std::env::current_exe().map_err(|e| DaemonError::io(Path::new("lanser"), e))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&paths.log)
        .map_err(|e| DaemonError::io(&paths.log, e))?;
    let log2 = log
        .try_clone()
        .map_err(|e| DaemonError::io(&paths.log, e))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["daemon", "serve", "--workspace"])
        .arg(root)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log2));
    if let Some(secs) = idle {
        cmd.args(["--idle-timeout", &secs.to_string()]);
    }
    // Out of reach of a Ctrl-C aimed at the CLI.
    transport::detach(&mut cmd);
    cmd.spawn().map_err(|e| DaemonError::io(&paths.log, e))?;
    let started = Instant::now();
    while started.elapsed() < START_WAIT {
        if transport::probe(paths) {
            return Ok(paths.recorded_pid().unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(DaemonError::StartTimeout(START_WAIT, paths.log.clone()))
}

/// Stop the daemon, waiting until its process is gone; the pid it had, if one ran. A daemon
/// that does not exit within the grace period (hung) is killed; a socket left by a killed
/// daemon is removed.
pub fn stop(paths: &Paths) -> Result<Option<u32>, DaemonError> {
    let pid = paths.live_pid();
    let asked = exchange(paths, &ToDaemon::Stop, STOP_WAIT).is_ok();
    if asked {
        wait_gone(paths);
    }
    if let Some(p) = pid.filter(|p| crate::safety::pid_alive(*p) && is_daemon(*p)) {
        crate::safety::kill(p);
        wait_gone(paths);
    }
    if paths.live_pid().is_none() {
        transport::remove(paths);
        let _ = std::fs::remove_file(&paths.pid);
    }
    Ok(pid)
}

/// Whether `pid` runs `lanser daemon serve` (a recycled pid is never killed).
fn is_daemon(pid: u32) -> bool {
    crate::safety::command_line(pid)
        .is_some_and(|args| args.windows(2).any(|w| w[0] == "daemon" && w[1] == "serve"))
}

/// The daemon's status, or `{"running": false}`.
pub fn status(paths: &Paths) -> Result<serde_json::Value, DaemonError> {
    match exchange(paths, &ToDaemon::Status, STOP_WAIT) {
        Ok(FromDaemon::Status { info }) => Ok(info),
        Ok(other) => Err(DaemonError::Protocol(format!("{other:?}"))),
        Err(_) => Ok(serde_json::json!({
            "running": false,
            "socket": transport::address(paths),
        })),
    }
}

/// Wait (bounded) until the daemon's pid file is gone or names a dead process.
pub(super) fn wait_gone(paths: &Paths) {
    let started = Instant::now();
    while paths.live_pid().is_some() && started.elapsed() < STOP_WAIT {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_waited_for_and_a_read_is_bounded() {
        let t = Duration::from_secs(60);
        assert_eq!(answer_wait(t, false), Duration::from_secs(210));
        // A Django check (337 s) can outlast a read's bound; a write's holds it.
        assert_eq!(answer_wait(t, true), Duration::from_secs(1200));
    }
}
