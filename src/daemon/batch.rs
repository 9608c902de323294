//! `lanser batch` through the workspace's daemon: the client side of [`ToDaemon::Line`].
//!
//! Request lines are read as they arrive (a harness may write one line and wait for its
//! bundle) and each is sent to the daemon on its own connection, up to `--jobs` in flight; the
//! bundles are written in input order, one JCS line each, flushed as they are written. The
//! daemon parses a line as the in-process batch does, under the batch's global options, and
//! answers with the bundle the in-process batch would write, so the output, the exit status
//! and the summary line on stderr do not depend on who answered.
//!
//! Some lines are answered here, in input order, by an orchestrator made when first needed:
//! the ones the daemon does not take (writes: `--apply`; see [`client::routable_line`]), which also
//! wait for every earlier line and hold back the later ones, since those must see what they
//! wrote; a line the daemon declined; and every line once the daemon was lost (a failed
//! connection or read). No line is lost or answered twice: each has exactly one slot, written
//! once.

use super::client::{self, ensure_started, exchange};
use super::{DaemonError, FromDaemon, Paths, ToDaemon};
use crate::bundle::Bundle;
use crate::cli::{Cli, Command};
use crate::commands::batch::{line_error, LineParser, Output, Source};
use crate::commands::Execute;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Options, Orchestrator};
use crate::workspace::Workspace;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Everything a line's message needs besides the line.
struct Remote {
    root: PathBuf,
    paths: Paths,
    build: String,
    env: String,
    cwd: PathBuf,
    argv: Vec<String>,
    /// How long one answer may take (it may queue behind the others in flight).
    wait: Duration,
}

/// What the daemon did with a line.
#[derive(Debug)]
enum Reply {
    Bundle(String),
    /// Answered with something else (a failure before any bundle, or a line it does not
    /// take): this process answers the line.
    Declined,
    /// The daemon could not be used: this process answers this line and all later ones.
    Lost(DaemonError),
}

enum Pending {
    Remote(JoinHandle<Reply>),
    /// Answered in this process when it reaches the front of the window.
    Local,
}

struct Slot {
    line: usize,
    text: String,
    pending: Pending,
    /// A line answered here that writes: nothing after it is read before it is answered.
    holds: bool,
}

/// `lanser batch` through the daemon; `None` when the in-process batch answers instead
/// (opted out, traced, or no daemon could be reached — said once on stderr in that case).
pub async fn run(cli: &Cli) -> Option<Result<u8>> {
    let Command::Batch {
        input, out, jobs, ..
    } = &cli.command
    else {
        return None;
    };
    // A traced batch records its own frames, so it runs in this process.
    if super::disabled(&cli.global) || cli.global.trace_file.is_some() {
        return None;
    }
    // What the in-process batch would fail on before reading a line, it reports itself.
    let opts = cli.global.options().ok()?;
    let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd).ok()?;
    let config = crate::config::Config::load(&ws.root).ok()?;
    config.select(opts.server.as_deref()).ok()?;
    let argv = std::env::args_os()
        .map(|a| a.into_string().ok())
        .collect::<Option<Vec<_>>>()?;
    match crate::edits::apply::recover(&ws.root) {
        Ok(Some(n)) => eprintln!("lanser: rolled back an interrupted apply ({n} paths restored)"),
        Ok(None) => {}
        Err(_) => return None,
    }
    client::install_on_first_need(&ws, &opts);
    let paths = Paths::for_root(&ws.root);
    if let Err(e) = ensure_started(&ws.root, &paths, None) {
        eprintln!("lanser: daemon unavailable ({e}); answering in-process");
        return None;
    }
    let remote = Remote {
        root: ws.root.clone(),
        paths,
        build: super::build_id(),
        env: super::env_fingerprint(),
        cwd: opts.cwd.clone(),
        argv,
        wait: (opts.timeout * 3 + Duration::from_secs(30)) * (*jobs).clamp(1, 8) as u32,
    };
    // The source first: a missing --in must leave --out untouched, as in-process.
    let source = match Source::open(input) {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    let output = match Output::open(out) {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    let mut batch = Batch {
        remote: Arc::new(remote),
        lost: false,
        opts,
        orch: None,
        parser: LineParser::default(),
        output,
        exit: 0,
        answered: false,
    };
    let outcome = batch.drive(source, *jobs).await;
    if let Some(orch) = batch.orch.take() {
        orch.close().await;
    }
    if outcome.is_ok() {
        batch.output.report();
    }
    Some(outcome.map(|()| batch.exit))
}

struct Batch {
    remote: Arc<Remote>,
    /// The daemon was lost: every line not yet sent is answered here.
    lost: bool,
    opts: Options,
    /// This process's orchestrator, made for the first line answered here.
    orch: Option<Orchestrator>,
    parser: LineParser,
    output: Output,
    /// The first failing line's exit code.
    exit: u8,
    /// The daemon has answered a line: until then one line is in flight, so that replacing a
    /// daemon of another build (its first answer) happens once, not under several lines.
    answered: bool,
}

/// What the window waits for next.
enum Event {
    Read(Option<String>),
    Answered(Reply),
}

impl Batch {
    async fn drive(&mut self, mut source: Source, jobs: usize) -> Result<()> {
        let jobs = jobs.max(1);
        let mut window: VecDeque<Slot> = VecDeque::new();
        let (mut line_no, mut eof) = (0usize, false);
        loop {
            if let Some(Slot {
                pending: Pending::Local,
                ..
            }) = window.front()
            {
                let slot = window.pop_front().expect("a front slot");
                self.answer_here(slot.line, &slot.text).await?;
                continue;
            }
            let limit = if self.answered { jobs } else { 1 };
            let read = !eof && window.len() < limit && !window.back().is_some_and(|s| s.holds);
            if window.is_empty() && !read {
                return Ok(());
            }
            // The front is sent to the daemon (a local front was answered above).
            let front = window.front_mut().map(|s| &mut s.pending);
            let event = tokio::select! {
                // Fill the window first; a line not yet written does not hold up answers.
                biased;
                next = source.next(), if read => Event::Read(next?),
                reply = wait_for(front) => Event::Answered(reply),
            };
            match event {
                Event::Read(None) => eof = true,
                Event::Read(Some(text)) => {
                    line_no += 1;
                    if !text.trim().is_empty() {
                        window.push_back(self.dispatch(line_no, text));
                    }
                }
                Event::Answered(reply) => {
                    let slot = window.pop_front().expect("answered the front slot");
                    match reply {
                        Reply::Bundle(jcs) => {
                            self.answered = true;
                            let bundle: Bundle = serde_json::from_str(&jcs).map_err(|e| {
                                LanserError::internal(format!("daemon bundle: {e}"))
                            })?;
                            self.emit(slot.line, &jcs, &bundle)?;
                        }
                        Reply::Declined => {
                            self.answered = true;
                            self.answer_here(slot.line, &slot.text).await?
                        }
                        Reply::Lost(e) => {
                            if !self.lost {
                                self.lost = true;
                                eprintln!(
                                    "lanser: daemon lost ({e}); answering the rest in-process"
                                );
                            }
                            self.answer_here(slot.line, &slot.text).await?;
                        }
                    }
                }
            }
        }
    }

    /// Send line `line` to the daemon, or leave it to this process.
    fn dispatch(&mut self, line: usize, text: String) -> Slot {
        // A line that is not a request is answered by the daemon too (its error bundle).
        let (here, holds) = match self.parser.parse(&text) {
            Ok(r) if !client::routable_line(&r.op) => (true, r.op.changes_server_view()),
            _ => (false, false),
        };
        if here || self.lost {
            return Slot {
                line,
                text,
                pending: Pending::Local,
                holds,
            };
        }
        let remote = self.remote.clone();
        let msg = ToDaemon::Line {
            build: remote.build.clone(),
            env: remote.env.clone(),
            cwd: remote.cwd.clone(),
            argv: remote.argv.clone(),
            line_no: line,
            line: text.clone(),
        };
        let handle = tokio::task::spawn_blocking(move || ask(&remote, &msg));
        Slot {
            line,
            text,
            pending: Pending::Remote(handle),
            holds: false,
        }
    }

    /// Answer line `line` in this process, exactly as the in-process batch does.
    async fn answer_here(&mut self, line: usize, text: &str) -> Result<()> {
        if self.orch.is_none() {
            self.orch = Some(Orchestrator::new(self.opts.clone())?);
        }
        let orch = self.orch.as_mut().expect("made above");
        let bundle = match self.parser.parse(text) {
            Ok(request) => orch.execute(&request).await,
            Err((cmd, why)) => line_error(orch, line, cmd, &why).await,
        };
        self.emit(line, &bundle.to_jcs(), &bundle)
    }

    fn emit(&mut self, line: usize, jcs: &str, bundle: &Bundle) -> Result<()> {
        if self.exit == 0 {
            self.exit = bundle.meta.exit_code;
        }
        self.output.write(line, jcs, bundle)
    }
}

/// The daemon's answer to the front slot (pending forever when there is none).
async fn wait_for(front: Option<&mut Pending>) -> Reply {
    match front {
        Some(Pending::Remote(handle)) => match handle.await {
            Ok(reply) => reply,
            Err(e) => Reply::Lost(DaemonError::Protocol(format!("batch client task: {e}"))),
        },
        _ => std::future::pending().await,
    }
}

/// One line's exchange. A daemon of another build is replaced once, as for a command line;
/// a daemon that is gone is not restarted (the batch goes on in-process).
/// One request line answered by the workspace's daemon at `root` (started when needed), as
/// `lanser batch` with the command line `argv` (whose global options apply) would write it:
/// `Ok(Some(jcs))`, or `Ok(None)` when the daemon declined the line (this process answers
/// it). Another client of the same daemon (`lanser mcp`) uses this.
pub fn answer_line(
    root: &std::path::Path,
    cwd: &std::path::Path,
    argv: Vec<String>,
    line: String,
    wait: Duration,
    held: Option<&client::Held>,
) -> std::result::Result<Option<String>, DaemonError> {
    let paths = Paths::for_root(root);
    ensure_started(root, &paths, None)?;
    let remote = Remote {
        root: root.to_path_buf(),
        paths,
        build: super::build_id(),
        env: super::env_fingerprint(),
        cwd: cwd.to_path_buf(),
        argv,
        wait,
    };
    let msg = ToDaemon::Line {
        build: remote.build.clone(),
        env: remote.env.clone(),
        cwd: remote.cwd.clone(),
        argv: remote.argv.clone(),
        line_no: 1,
        line,
    };
    let mut reply = client::exchange_held(&remote.paths, &msg, remote.wait, held);
    if let Ok(FromDaemon::Mismatch { .. }) = reply {
        client::wait_gone(&remote.paths);
        reply = ensure_started(&remote.root, &remote.paths, None)
            .and_then(|_| client::exchange_held(&remote.paths, &msg, remote.wait, held));
    }
    match reply? {
        FromDaemon::Bundle { jcs } => Ok(Some(jcs)),
        _ => Ok(None),
    }
}

fn ask(remote: &Remote, msg: &ToDaemon) -> Reply {
    let mut reply = exchange(&remote.paths, msg, remote.wait);
    if let Ok(FromDaemon::Mismatch { .. }) = reply {
        client::wait_gone(&remote.paths);
        reply = ensure_started(&remote.root, &remote.paths, None)
            .and_then(|_| exchange(&remote.paths, msg, remote.wait));
    }
    match reply {
        Ok(FromDaemon::Bundle { jcs }) => Reply::Bundle(jcs),
        Ok(_) => Reply::Declined,
        Err(e) => Reply::Lost(e),
    }
}
