//! `lanser batch` through the workspace's daemon: the client side of a batch stream
//! ([`ToDaemon::Batch`]).
//!
//! One connection carries the whole batch: the command line once, then each request line as
//! it is read (a harness may write one line and wait for its bundle), up to `--jobs` in
//! flight; the daemon answers them in order, and the bundles are written in input order, one
//! JCS line each, flushed as they are written. The daemon parses a line as the in-process
//! batch does, under the batch's global options, and answers with the bundle the in-process
//! batch would write, so the output, the exit status and the summary line on stderr do not
//! depend on who answered.
//!
//! Some lines are answered here, in input order, by an orchestrator made when first needed:
//! the ones the daemon does not take (writes: `--apply`; see [`client::routable_line`]), which also
//! wait for every earlier line and hold back the later ones, since those must see what they
//! wrote; a line the daemon declined; and every line once the daemon was lost (a failed
//! connection, write or read). No line is lost or answered twice: each has exactly one slot,
//! written once.

use super::client::{self, ensure_started};
use super::transport::{self, ClientRead, ClientWrite};
use super::{DaemonError, FromDaemon, Paths, StreamLine, ToDaemon};
use crate::batch::{line_error, LineParser, Output, Source};
use crate::bundle::Bundle;
use crate::cli::{Cli, Command};
use crate::commands::Execute;
use crate::error::{LanserError, Result};
use crate::exit::ExitStatus;
use crate::orchestrator::{Options, Orchestrator};
use crate::workspace::Workspace;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// Everything a line's message needs besides the line.
struct Remote {
    root: PathBuf,
    paths: Paths,
    build: String,
    env: String,
    cwd: PathBuf,
    global: Box<crate::cli::Global>,
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
    /// Sent on the stream; its answer comes through here.
    Remote(oneshot::Receiver<Reply>),
    /// Answered in this process when it reaches the front of the window.
    Local,
}

/// A request line, parsed once: the request, or why it asks for none.
type Parsed = std::result::Result<crate::commands::Request, crate::batch::BadLine>;

struct Slot {
    line: usize,
    parsed: Parsed,
    pending: Pending,
    /// A line answered here that writes: nothing after it is read before it is answered.
    holds: bool,
}

/// `lanser batch` through the daemon; `None` when the in-process batch answers instead
/// (opted out, traced, or no daemon could be reached — said once on stderr in that case).
pub async fn run(cli: &Cli) -> Option<Result<ExitStatus>> {
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
    crate::edits::apply::recover_and_report(&ws.root).ok()?;
    client::install_on_first_need(&ws, &opts);
    let paths = Paths::for_root(&ws.root);
    if let Err(e) = ensure_started(&ws.root, &paths, None) {
        eprintln!(
            "lanser: daemon unavailable ({}); answering in-process",
            crate::error::chain(&e)
        );
        return None;
    }
    let remote = Remote {
        root: ws.root.clone(),
        paths,
        build: super::build_id(),
        env: super::env_fingerprint(),
        cwd: opts.cwd.clone(),
        global: Box::new(cli.global.clone()),
        wait: opts.timeout * 3 + Duration::from_secs(30),
    };
    // The daemon reads a batch's input file ahead (its `py://` modules parsed early).
    let ahead = (input != "-").then(|| opts.cwd.join(input));
    let stream = match Stream::open(&remote, ahead).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "lanser: daemon unavailable ({}); answering in-process",
                crate::error::chain(&e)
            );
            return None;
        }
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
        stream: Some(stream),
        opts,
        orch: None,
        parser: LineParser::default(),
        output,
        exit: ExitStatus::Success,
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
    /// The connection to the daemon; `None` once it was lost (every line not yet sent is then
    /// answered here).
    stream: Option<Stream>,
    opts: Options,
    /// This process's orchestrator, made for the first line answered here.
    orch: Option<Orchestrator>,
    parser: LineParser,
    output: Output,
    /// The first failing line's exit status.
    exit: ExitStatus,
}

/// An open batch stream: lines are written here, and a task reads the daemon's answers,
/// handing each to the oldest line still waiting (the daemon answers in order).
struct Stream {
    write: ClientWrite,
    waiting: mpsc::UnboundedSender<oneshot::Sender<Reply>>,
}

impl Stream {
    /// Open a stream for the batch; a daemon of another build is replaced once, as for a
    /// command line.
    async fn open(
        remote: &Remote,
        input: Option<PathBuf>,
    ) -> std::result::Result<Stream, DaemonError> {
        let header = ToDaemon::Batch {
            build: remote.build.clone(),
            env: remote.env.clone(),
            cwd: remote.cwd.clone(),
            global: remote.global.clone(),
            input,
        };
        let mut header = serde_json::to_string(&header).map_err(protocol)?;
        header.push('\n');
        let io = |e| DaemonError::Io {
            path: remote.paths.sock.clone(),
            source: e,
        };
        for attempt in 0..2 {
            transport::check(&remote.paths)?;
            let (read, mut write) = transport::connect(&remote.paths).await.map_err(io)?;
            write.write_all(header.as_bytes()).await.map_err(io)?;
            let mut answers = BufReader::new(read).lines();
            let first = tokio::time::timeout(remote.wait, answers.next_line())
                .await
                .map_err(|_| protocol(format!("no answer within {:?}", remote.wait)))?
                .map_err(io)?
                .ok_or_else(|| protocol("the daemon closed the stream"))?;
            match serde_json::from_str(&first).map_err(protocol)? {
                FromDaemon::Ready => {
                    let (waiting, lines) = mpsc::unbounded_channel();
                    tokio::spawn(read_answers(answers, lines, remote.wait));
                    return Ok(Stream { write, waiting });
                }
                FromDaemon::Mismatch { .. } if attempt == 0 => {
                    client::wait_gone(&remote.paths);
                    ensure_started(&remote.root, &remote.paths, None)?;
                }
                FromDaemon::Failed { line, .. } => return Err(protocol(line)),
                other => return Err(protocol(format!("unexpected answer {other:?}"))),
            }
        }
        Err(protocol("the daemon was replaced twice"))
    }

    /// Send line `line_no`, parsed; its answer arrives on the receiver.
    async fn send(&mut self, line_no: usize, parsed: &Parsed) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        let msg = StreamLine {
            line_no,
            parsed: parsed.clone(),
        };
        let mut text = serde_json::to_string(&msg).unwrap_or_default();
        text.push('\n');
        match self.write.write_all(text.as_bytes()).await {
            // Queued only once sent, so the reader never waits for an answer to a line the
            // daemon did not get.
            Ok(()) => {
                if let Err(back) = self.waiting.send(tx) {
                    let _ = back
                        .0
                        .send(Reply::Lost(protocol("the answer reader ended")));
                }
            }
            Err(e) => {
                let _ = tx.send(Reply::Lost(protocol(format!("sending a line: {e}"))));
            }
        }
        rx
    }
}

fn protocol(e: impl std::fmt::Display) -> DaemonError {
    DaemonError::Protocol(e.to_string())
}

/// Hand each answer of the stream to the line waiting for it, in order; once the stream
/// fails, every line still waiting, and every later one, is told the daemon was lost.
async fn read_answers(
    mut answers: tokio::io::Lines<BufReader<ClientRead>>,
    mut lines: mpsc::UnboundedReceiver<oneshot::Sender<Reply>>,
    wait: Duration,
) {
    let mut lost: Option<String> = None;
    while let Some(line) = lines.recv().await {
        let reply = match &lost {
            Some(why) => Reply::Lost(protocol(why)),
            None => {
                let answer = match tokio::time::timeout(wait, answers.next_line()).await {
                    Ok(Ok(Some(text))) => serde_json::from_str::<FromDaemon>(&text)
                        .map_err(|e| format!("unreadable answer: {e}")),
                    Ok(Ok(None)) => Err("the daemon closed the stream".to_string()),
                    Ok(Err(e)) => Err(format!("reading an answer: {e}")),
                    Err(_) => Err(format!("no answer within {wait:?}")),
                };
                match answer {
                    Ok(FromDaemon::Bundle { jcs }) => Reply::Bundle(jcs),
                    Ok(_) => Reply::Declined,
                    Err(why) => {
                        lost = Some(why.clone());
                        Reply::Lost(protocol(why))
                    }
                }
            }
        };
        let _ = line.send(reply);
    }
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
                self.answer_here(slot.line, &slot.parsed).await?;
                continue;
            }
            let read = !eof && window.len() < jobs && !window.back().is_some_and(|s| s.holds);
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
                        let slot = self.dispatch(line_no, text).await;
                        window.push_back(slot);
                    }
                }
                Event::Answered(reply) => {
                    let slot = window.pop_front().expect("answered the front slot");
                    match reply {
                        Reply::Bundle(jcs) => {
                            let bundle: Bundle = serde_json::from_str(&jcs).map_err(|e| {
                                LanserError::internal("the daemon sent an unreadable bundle")
                                    .with_source(e)
                            })?;
                            self.emit(slot.line, &jcs, &bundle)?;
                        }
                        Reply::Declined => self.answer_here(slot.line, &slot.parsed).await?,
                        Reply::Lost(e) => {
                            if self.stream.take().is_some() {
                                eprintln!(
                                    "lanser: daemon lost ({}); answering the rest in-process",
                                    crate::error::chain(&e)
                                );
                            }
                            self.answer_here(slot.line, &slot.parsed).await?;
                        }
                    }
                }
            }
        }
    }

    /// Send line `line` to the daemon, or leave it to this process.
    async fn dispatch(&mut self, line: usize, text: String) -> Slot {
        // Parsed here, once; a line that is not a request is answered by the daemon too (its
        // error bundle).
        let parsed = self.parser.parse(&text);
        let (here, holds) = match &parsed {
            Ok(r) if !client::routable_line(&r.op) => (true, r.op.changes_server_view()),
            _ => (false, false),
        };
        let pending = match self.stream.as_mut() {
            Some(stream) if !here => Pending::Remote(stream.send(line, &parsed).await),
            _ => Pending::Local,
        };
        Slot {
            line,
            parsed,
            pending,
            holds,
        }
    }

    /// Answer line `line` in this process, exactly as the in-process batch does.
    async fn answer_here(&mut self, line: usize, parsed: &Parsed) -> Result<()> {
        if self.orch.is_none() {
            self.orch = Some(Orchestrator::new(self.opts.clone())?);
        }
        let orch = self.orch.as_mut().expect("made above");
        let bundle = match parsed {
            Ok(request) => orch.execute(request).await,
            Err(crate::batch::BadLine { cmd, why }) => {
                line_error(orch, line, cmd.clone(), why).await
            }
        };
        self.emit(line, &bundle.to_jcs(), &bundle)
    }

    fn emit(&mut self, line: usize, jcs: &str, bundle: &Bundle) -> Result<()> {
        self.exit = self.exit.or(bundle.exit_status());
        self.output.write(line, jcs, bundle)
    }
}

/// The daemon's answer to the front slot (pending forever when there is none).
async fn wait_for(front: Option<&mut Pending>) -> Reply {
    match front {
        Some(Pending::Remote(answer)) => answer
            .await
            .unwrap_or_else(|_| Reply::Lost(protocol("the answer reader ended"))),
        _ => std::future::pending().await,
    }
}

/// One request, parsed by the caller, answered by the workspace's daemon at `root` (started
/// when needed) as `lanser batch` under the options `global` would write it as a line:
/// `Ok(Some(jcs))`, or `Ok(None)` when the daemon declined it (this process answers it).
/// Another client of the same daemon (`lanser mcp`) uses this.
pub fn answer_request(
    root: &std::path::Path,
    cwd: &std::path::Path,
    global: crate::cli::Global,
    request: crate::commands::Request,
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
        global: Box::new(global),
        wait,
    };
    let msg = ToDaemon::Ask {
        build: remote.build.clone(),
        env: remote.env.clone(),
        cwd: remote.cwd.clone(),
        global: remote.global.clone(),
        request,
        as_line: true,
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
