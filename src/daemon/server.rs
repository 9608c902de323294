//! The daemon process: listens on the workspace's socket (or pipe), keeps one
//! [`Orchestrator`] (and so one warm server) alive, and answers each connection's request
//! with the bundle the in-process CLI would print. A request arrives as the value its client
//! parsed — `Ask`: the typed request and global options, answered as a command line or as a
//! batch line; `Batch`: a stream of a batch's parsed lines — so nothing is parsed here.
//!
//! Requests are serialized on the orchestrator (a server session answers one at a time); an
//! identical request arriving while another runs waits and is then answered from the memo —
//! bundles keyed by the typed request and what it ran under (the global options, the working
//! directory, `--prev-bundle`'s D) and the index generation, dropped whenever the workspace
//! changes. A server that crashed is restarted with backoff and
//! the request retried once. The daemon exits after its idle
//! timeout, on `stop`, or when a client of another build or environment asks (that client
//! then starts a fresh one).

mod refresh;
mod status;
mod stream;

use super::fresh;
use super::transport::{self, Listener, ServerRead, ServerWrite};
use super::{FromDaemon, Paths, ToDaemon};
use crate::commands::Execute;
use crate::commands::{Op, Request};
use crate::error::{ErrorCode, LanserError};
use crate::orchestrator::{Options, Orchestrator};
use crate::workspace::index::Changes;
use crate::workspace::watch::Watch;
use crate::workspace::Workspace;
use serde_json::json;
use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};

/// How many times a read-only request is answered while the workspace keeps changing under
/// it before it is answered E/CONTENT_MODIFIED.
const TRIES: u32 = 4;
/// How long a starting daemon waits for another one's start lock.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// What a memo entry of the daemon answers (with the index generation it was answered at):
/// the request as it arrived, typed, under what it ran with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Asked {
    scope: Scope,
    request: Request,
    /// Answered as a batch line (an early failure on the warm session) or as a command line.
    as_line: bool,
}

/// What a request runs under besides itself: the options (as their canonical JSON: the
/// typed value, whose numbers are not `Eq`), the directory it ran in and the D_{t-1} it read
/// (`--prev-bundle`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Scope {
    global: String,
    cwd: PathBuf,
    prev_d: Option<u64>,
}

impl Scope {
    fn new(global: &crate::cli::Global, cwd: &std::path::Path, opts: &Options) -> Scope {
        Scope {
            global: serde_jcs::to_string(global).unwrap_or_default(),
            cwd: cwd.to_path_buf(),
            prev_d: opts.prev_d,
        }
    }
}

#[derive(Default)]
struct Engine {
    orch: Option<Orchestrator>,
    /// What the session depends on beyond the workspace: the server choice.
    key: String,
    config: String,
    /// Keeps the workspace's index current (started with the first session).
    watch: Option<Watch>,
    memo: crate::memo::Store<(Asked, u64), String>,
    /// Consecutive server crashes, for the restart backoff.
    crashes: u32,
}

struct Daemon {
    ws: Workspace,
    paths: Paths,
    build: String,
    env: String,
    started: Instant,
    idle: Duration,
    /// Whether bundles are memoized (`LANSER_DAEMON_MEMO=off` turns it off, for measuring).
    memo: bool,
    last: Cell<Instant>,
    active: Cell<usize>,
    requests: Cell<u64>,
    engine: Mutex<Engine>,
    stop: Notify,
    /// The background refresh of the base view ([`refresh`]), woken after each request.
    refresh: refresh::Refresh,
}

tokio::task_local! {
    /// Whether the client of the connection being answered has hung up.
    static GONE: tokio::sync::watch::Receiver<bool>;
}

/// Requests that may be dropped midway when their client hangs up: those that only read (a
/// speculative edit, a write, a reload or a raw request may leave state behind).
fn cancellable(op: &Op) -> bool {
    op.cancellable()
}

/// Run the daemon for `ws` until idle, stopped or replaced.
pub async fn serve(ws: Workspace, paths: Paths, idle: Duration) -> Result<(), super::DaemonError> {
    paths.ensure_dir()?;
    let Some(mut listener) = bind(&paths)? else {
        return Ok(()); // another daemon already serves this workspace
    };
    let daemon = Rc::new(Daemon {
        ws,
        paths,
        build: super::build_id(),
        env: super::env_fingerprint(),
        started: Instant::now(),
        idle,
        memo: std::env::var(super::MEMO_ENV).map_or(true, |v| v != "off" && v != "0"),
        last: Cell::new(Instant::now()),
        active: Cell::new(0),
        requests: Cell::new(0),
        engine: Mutex::new(Engine::default()),
        stop: Notify::new(),
        refresh: refresh::Refresh::from_env(),
    });
    eprintln!(
        "lanser daemon {} serving {} (pid {}, idle timeout {:?})",
        daemon.build,
        daemon.ws.root.display(),
        std::process::id(),
        idle
    );
    // pytest's collection and per-test coverage, measured while the daemon waits for work.
    let ws = daemon.ws.clone();
    std::thread::spawn(move || crate::measure::impact::coverage::prewarm(&ws));
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            tokio::task::spawn_local(refresh::run(daemon.clone()));
            loop {
                tokio::select! {
                    conn = listener.accept() => {
                        if let Ok((read, write)) = conn {
                            let d = daemon.clone();
                            d.active.set(d.active.get() + 1);
                            tokio::task::spawn_local(async move {
                                let _ = d.connection(read, write).await;
                                d.active.set(d.active.get() - 1);
                                d.last.set(Instant::now());
                                d.refresh.wake();
                            });
                        }
                    }
                    _ = daemon.stop.notified() => break,
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {
                        if daemon.active.get() == 0 && daemon.last.get().elapsed() >= daemon.idle {
                            eprintln!("lanser daemon: idle for {:?}, exiting", daemon.idle);
                            break;
                        }
                        if !daemon.ws.root.is_dir() {
                            eprintln!("lanser daemon: the workspace is gone, exiting");
                            break;
                        }
                    }
                }
            }
        })
        .await;
    // The tasks left (the refresh, a connection) are dropped with their locks.
    drop(local);
    listener.close(&daemon.paths);
    if daemon.paths.live_pid() == Some(std::process::id()) {
        let _ = std::fs::remove_file(&daemon.paths.pid);
    }
    let orch = daemon.engine.lock().await.orch.take();
    if let Some(o) = orch {
        o.close().await;
    }
    Ok(())
}

/// Take the start lock, and listen unless a live daemon already does (a socket left by a
/// killed daemon is replaced).
fn bind(paths: &Paths) -> Result<Option<Listener>, super::DaemonError> {
    let _lock = StartLock::acquire(paths)?;
    if transport::probe(paths) {
        return Ok(None);
    }
    let listener = Listener::bind(paths).map_err(|e| super::DaemonError::io(&paths.sock, e))?;
    std::fs::write(&paths.pid, std::process::id().to_string())
        .map_err(|e| super::DaemonError::io(&paths.pid, e))?;
    Ok(Some(listener))
}

/// `start.lock`, created exclusively; one left by a dead process is taken over.
struct StartLock(PathBuf);

impl StartLock {
    fn acquire(paths: &Paths) -> Result<StartLock, super::DaemonError> {
        let started = Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&paths.lock)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(StartLock(paths.lock.clone()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&paths.lock)
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok());
                    let dead = holder.is_some_and(|p| !crate::safety::pid_alive(p));
                    if dead || started.elapsed() > LOCK_WAIT {
                        let _ = std::fs::remove_file(&paths.lock);
                    } else {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                Err(e) => return Err(super::DaemonError::io(&paths.lock, e)),
            }
        }
    }
}

impl Drop for StartLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn reply(answer: Result<String, LanserError>) -> FromDaemon {
    match answer {
        Ok(jcs) => FromDaemon::Bundle { jcs },
        Err(e) => FromDaemon::Failed {
            exit: e.code.exit_code(),
            line: format!("lanser: {}", e.one_line()),
        },
    }
}

/// Whether an error bundle failed at a stage the CLI reaches before starting a server
/// (selector syntax, resolution, reading files, usage).
fn failed_before_server(b: &crate::bundle::Bundle) -> bool {
    let before = [
        ErrorCode::BadSelectorSyntax,
        ErrorCode::NotFound,
        ErrorCode::Ambiguous,
        ErrorCode::IndexingMismatch,
        ErrorCode::VersionSkew,
        ErrorCode::IndexingUnsupported,
        ErrorCode::Usage,
    ];
    b.error.as_ref().is_some_and(|e| before.contains(&e.code))
}

impl Daemon {
    async fn connection(&self, read: ServerRead, mut write: ServerWrite) -> std::io::Result<()> {
        let mut line = String::new();
        let mut reader = BufReader::new(read);
        reader.read_line(&mut line).await?;
        self.last.set(Instant::now());
        let msg = serde_json::from_str::<ToDaemon>(&line);
        if let Ok(ToDaemon::Batch {
            build,
            env,
            cwd,
            global,
            input,
        }) = msg
        {
            // Not a request itself: each line of the stream is counted as it is answered.
            if let Some(m) = self.other_build(&build, &env) {
                let mut text = serde_json::to_string(&m).unwrap_or_default();
                text.push('\n');
                write.write_all(text.as_bytes()).await?;
                return write.shutdown().await;
            }
            return self.batch_stream(reader, write, cwd, &global, input).await;
        }
        // A client sends one line and waits: the end of its stream before the answer means it
        // gave up (a cancelled MCP call, a CLI interrupted), and a read-only request still
        // running is dropped, its server request cancelled.
        let (hung_up, gone) = tokio::sync::watch::channel(false);
        let watcher = tokio::task::spawn_local(async move {
            let mut byte = [0u8; 1];
            let _ = tokio::io::AsyncReadExt::read(&mut reader, &mut byte).await;
            let _ = hung_up.send(true);
        });
        let reply = match msg {
            Ok(msg) => GONE.scope(gone, self.handle(msg)).await,
            Err(e) => FromDaemon::Failed {
                exit: 1,
                line: format!("lanser: daemon: unreadable request: {e}"),
            },
        };
        watcher.abort();
        let mut text = serde_json::to_string(&reply).unwrap_or_default();
        text.push('\n');
        write.write_all(text.as_bytes()).await?;
        write.shutdown().await
    }

    async fn handle(&self, msg: ToDaemon) -> FromDaemon {
        match msg {
            ToDaemon::Stop => {
                self.stop.notify_one();
                FromDaemon::Stopping
            }
            ToDaemon::Status => FromDaemon::Status {
                info: self.status().await,
            },
            ToDaemon::Ask {
                build,
                env,
                cwd,
                global,
                request,
                as_line,
            } => {
                if let Some(m) = self.mismatch(&build, &env) {
                    return m;
                }
                reply(self.ask(cwd, &global, request, as_line).await)
            }
            ToDaemon::Batch { .. } => FromDaemon::Failed {
                exit: 1,
                line: "lanser: daemon: a batch stream opens a connection".into(),
            },
        }
    }

    /// A client of another build or environment: stop, and tell it so. Otherwise count the
    /// request.
    fn mismatch(&self, build: &str, env: &str) -> Option<FromDaemon> {
        let m = self.other_build(build, env);
        if m.is_none() {
            self.requests.set(self.requests.get() + 1);
        }
        m
    }

    /// A client of another build or environment: stop, and tell it so.
    fn other_build(&self, build: &str, env: &str) -> Option<FromDaemon> {
        if build != self.build || env != self.env {
            eprintln!("lanser daemon: replaced by build {build} (env {env})");
            self.stop.notify_one();
            return Some(FromDaemon::Mismatch {
                build: self.build.clone(),
            });
        }
        None
    }

    /// Answer a request the client parsed on the warm orchestrator, as a command line or
    /// (`as_line`) as a batch line is answered. Nothing is parsed here.
    async fn ask(
        &self,
        cwd: PathBuf,
        global: &crate::cli::Global,
        request: Request,
        as_line: bool,
    ) -> Result<String, LanserError> {
        let routable = match as_line {
            true => {
                crate::daemon::client::routable_line(&request.op)
                    || crate::daemon::client::routable(&request.op)
            }
            false => crate::daemon::client::routable(&request.op),
        };
        if !routable {
            return Err(LanserError::usage("not a request the daemon answers"));
        }
        let opts = super::options_in(&cwd, global)?;
        let asked = Asked {
            scope: Scope::new(global, &cwd, &opts),
            request,
            as_line,
        };
        // A batch line's failure before the server is answered on the warm orchestrator, as
        // the in-process batch answers it on its session.
        self.answer(opts, &asked.request, &asked, !as_line).await
    }

    /// Answer `request` on the warm orchestrator: freshness, memo, a crashed server restarted
    /// and the request retried once. With `cold_early_errors`, a failure before any server
    /// would start is answered as a one-shot CLI answers it: by an orchestrator of its own.
    async fn answer(
        &self,
        opts: Options,
        request: &Request,
        asked: &Asked,
        cold_early_errors: bool,
    ) -> Result<String, LanserError> {
        self.refresh.give_way();
        let mut engine = self.engine.lock().await;
        let first = self.execute(&mut engine, &opts, request, asked).await?;
        let crashed = first.as_ref().is_err_and(|b| {
            b.error
                .as_ref()
                .is_some_and(|e| e.code == ErrorCode::LsCrash)
        });
        let bundle = if crashed {
            // Restart with backoff, retry once.
            engine.crashes += 1;
            let backoff = Duration::from_millis(100 << engine.crashes.min(6));
            eprintln!("lanser daemon: server crashed; restarting in {backoff:?}");
            if let Some(o) = engine.orch.take() {
                o.close().await;
            }
            tokio::time::sleep(backoff).await;
            self.execute(&mut engine, &opts, request, asked).await?
        } else {
            first
        };
        match bundle {
            Ok(jcs) => {
                engine.crashes = 0;
                Ok(jcs)
            }
            Err(b) if cold_early_errors && failed_before_server(&b) => {
                // The CLI would not have started a server for this failure, so its bundle has
                // no server in `environment` and `capabilities`: answer it the same way, from
                // an orchestrator of its own (starting nothing unless the command gets there).
                drop(engine);
                let mut cold = Orchestrator::new(opts)?;
                let b = cold.execute(request).await;
                cold.close().await;
                Ok(b.to_jcs())
            }
            Err(b) => Ok(b.to_jcs()),
        }
    }

    /// Freshness, memo, execute. `Err(bundle)` is an error bundle (not memoized).
    ///
    /// An answer is one version of the workspace: if a file changed while a read-only request
    /// to the server ran (seen by a second sync once it is answered), its facts may pair the
    /// server's view of one version with lanser's reading of another, or with another's
    /// `docVersions`, so it is answered again on the new files — up to [`TRIES`] times, then
    /// E/CONTENT_MODIFIED (retryable), never a mixed answer. A serverless answer (`locate`)
    /// reads each file once and names the version it read: one version by construction.
    async fn execute(
        &self,
        engine: &mut Engine,
        opts: &Options,
        request: &Request,
        asked: &Asked,
    ) -> Result<Result<String, crate::bundle::Bundle>, LanserError> {
        let mut tries = 0;
        loop {
            let synced = self.prepare(engine, opts).await?;
            let generation = self.ws.index().generation();
            let memo_key = (asked.clone(), generation);
            if let Some(jcs) = engine.memo.get(&memo_key) {
                return Ok(Ok(jcs.clone()));
            }
            let bundle = self.attempt(engine, request).await?;
            let during = match engine.watch.as_mut() {
                Some(w) if cancellable(&request.op) && request.op.uses_server() => {
                    w.sync(&mut self.ws.index())
                }
                _ => Changes::default(),
            };
            if during.is_empty() {
                return self.answered(engine, request, bundle, &synced, memo_key);
            }
            self.absorb(engine, &during);
            tries += 1;
            if tries == TRIES {
                let what = [&during.changed, &during.created, &during.deleted]
                    .into_iter()
                    .flatten()
                    .next()
                    .cloned()
                    .unwrap_or_default();
                let err = LanserError::new(
                    ErrorCode::ContentModified,
                    format!(
                        "the workspace changed while the request ran, {TRIES} times in a row \
                         (last: {what}); ask again"
                    ),
                );
                let orch = engine.orch.as_mut().expect("prepared");
                let bundle = crate::commands::execute::failed(orch, request, err).await;
                return self.answered(engine, request, bundle, &synced, memo_key);
            }
        }
    }

    /// Run `request` on the prepared orchestrator; a read-only one is dropped when its client
    /// hangs up.
    async fn attempt(
        &self,
        engine: &mut Engine,
        request: &Request,
    ) -> Result<crate::bundle::Bundle, LanserError> {
        let orch = engine.orch.as_mut().expect("prepared");
        let mut gone = GONE.try_with(|g| g.clone()).ok();
        Ok(match gone.as_mut().filter(|_| cancellable(&request.op)) {
            Some(gone) => tokio::select! {
                b = orch.execute(request) => b,
                _ = gone.wait_for(|g| *g) => {
                    return Err(LanserError::new(
                        ErrorCode::RequestCancelled,
                        "the client hung up before the answer",
                    ))
                }
            },
            None => orch.execute(request).await,
        })
    }

    /// The answer's bytes (an error bundle as `Err`); a complete answer is memoized.
    fn answered(
        &self,
        engine: &mut Engine,
        request: &Request,
        mut bundle: crate::bundle::Bundle,
        synced: &Changes,
        memo_key: (Asked, u64),
    ) -> Result<Result<String, crate::bundle::Bundle>, LanserError> {
        if let Some(serde_json::Value::Object(timing)) = bundle.meta.timing.as_mut() {
            // Volatile and outside the hash domain, like the rest of meta.timing: which
            // snapshot of the workspace this answer saw, and what was synced before it.
            let mut index = self.ws.index();
            timing.insert(
                "daemon".into(),
                json!({
                    "contentDigest": index.digest(),
                    "generation": index.generation(),
                    "pythonFiles": index.python_sources().len(),
                    "synced": {
                        "created": synced.created,
                        "changed": synced.changed,
                        "deleted": synced.deleted,
                    },
                }),
            );
        }
        if let Some(r) = &bundle.resolution {
            self.refresh.looked_at(&r.resolved.path);
        }
        // An error a one-shot run would answer before starting a server is answered cold
        // (see `answer`), so only a warm answer is kept.
        let warm = !failed_before_server(&bundle);
        let jcs = bundle.to_jcs();
        if self.memo && warm && crate::memo::keeps(&request.op, &bundle) {
            engine.memo.insert(memo_key, jcs.clone(), jcs.len());
        }
        if bundle.error.is_some() {
            return Ok(Err(bundle));
        }
        Ok(Ok(jcs))
    }

    /// Tell the running session what `changes` changed, and drop the memo. Returns the
    /// sources among them.
    fn absorb(&self, engine: &mut Engine, changes: &Changes) -> Changes {
        if changes.is_empty() {
            return Changes::default();
        }
        self.ws.forget_roots();
        let synced = changes.sources();
        for session in engine.orch.iter().flat_map(|o| o.sessions()) {
            fresh::apply(session, &self.ws, &synced);
        }
        engine.memo.clear();
        synced
    }

    /// Bring the engine in line with `opts` and the disk: a session for another server or
    /// configuration is replaced, every file changed since the last answer is synced (and the
    /// memo dropped), and the orchestrator takes `opts`. Returns what was synced.
    async fn prepare(&self, engine: &mut Engine, opts: &Options) -> Result<Changes, LanserError> {
        let key = format!("{:?}|{:?}|{}", opts.server_cmd, opts.server, opts.install);
        let config = fresh::config_digest(&self.ws);
        if engine.orch.is_some() && (engine.key != key || engine.config != config) {
            if let Some(o) = engine.orch.take() {
                o.close().await;
            }
        }
        // A new session's configuration decides which files the index tracks besides the
        // sources (every type its servers take), before the index is read.
        if engine.orch.is_none() {
            if let Ok(c) = crate::config::Config::load(&self.ws.root) {
                self.ws.track(c.file_types());
            }
        }
        // The index first: a new session reads the disk as it is now, a running one is told
        // what changed since its last answer.
        let changes = match engine.watch.as_mut() {
            Some(w) => w.sync(&mut self.ws.index()),
            None => {
                let mut index = self.ws.index();
                index.hashes();
                engine.watch = Some(Watch::start(&self.ws.root, &index));
                Changes::default()
            }
        };
        let mut synced = Changes::default();
        if engine.orch.is_none() {
            self.ws.forget_roots();
            let mut orch = Orchestrator::new(opts.clone())?;
            // The session reads the daemon's index (clones share it).
            orch.use_workspace(self.ws.clone());
            engine.orch = Some(orch);
            engine.key = key;
            engine.config = config;
            engine.memo.clear();
        } else {
            synced = self.absorb(engine, &changes);
            self.queue_after(engine, &synced);
        }
        let synced = self.refresh.with_absorbed(synced);
        let orch = engine.orch.as_mut().expect("created above");
        orch.set_options(Options {
            tap: None,
            ..opts.clone()
        });
        Ok(synced)
    }
}
