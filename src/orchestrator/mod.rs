//! The orchestrator (the engine): one workspace and its servers, each started on first need
//! and reused for every later request (batch and the daemon build on this).
//!
//! It owns what every command shares: selector resolution, the sessions, document sync,
//! environment capture and the bundle's envelope. It never calls a command: what a command
//! asks and which facts it keeps lives in `commands/<name>.rs`, and `commands::execute` runs
//! one over it.

use crate::bundle::{
    Bundle, Edits, Environment, Meta, Python, RequestEcho, Resolution, Status, BUNDLE_VERSION,
};
use crate::config::Config;
use crate::error::{LanserError, Result};
pub use crate::lsp::capabilities::capability_summary;
use crate::lsp::session::{Connect, Session};
pub use crate::outcome::Outcome;
use crate::servers::ServerSpec;
use crate::workspace::Workspace;
mod context;
mod environment;
mod options;
mod parts;
mod ready;
mod resolve;
mod router;
pub use context::Ctx;
pub use options::{Options, DEFAULT_PAGE_SIZE};
pub use parts::{Cx, Ground, Server};
pub use router::Router;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The resolution of a selector that relocation rejected (ambiguous, or below τ): the source
/// of its error, so the error bundle still shows what was found and how it scored.
#[derive(Debug)]
pub struct Rejected(pub Resolution);

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the best of {} candidates scored {} (see resolution.disambiguation)",
            self.0.disambiguation.len().max(1),
            self.0.confidence
        )
    }
}

impl std::error::Error for Rejected {}

/// The engine a driver holds (the CLI, batch, the daemon, MCP, replay): what lanser knows
/// without a server ([`Ground`]) and its servers ([`Router`]). An operation is handed a
/// [`Ctx`] (the ground and the server its request went to), a measurement a [`Cx`], never
/// the engine.
pub struct Orchestrator {
    ground: Ground,
    router: Router,
}

impl Orchestrator {
    /// The workspace it answers for.
    pub fn ws(&self) -> &Workspace {
        &self.ground.ws
    }

    /// How it runs.
    pub fn opts(&self) -> &Options {
        &self.ground.opts
    }

    /// How it runs, to change between requests (a test's `--verbose`).
    pub fn opts_mut(&mut self) -> &mut Options {
        &mut self.ground.opts
    }

    /// The home server's session, once started.
    pub fn session(&self) -> Option<&Session> {
        self.router.home_server().session.as_ref()
    }

    /// The merged lanser.toml layers.
    pub fn config(&self) -> &Config {
        &self.ground.config
    }

    /// Find the workspace; nothing is spawned yet but the interpreter probe.
    pub fn new(opts: Options) -> Result<Orchestrator> {
        let ws = Workspace::discover(opts.workspace.as_deref(), &opts.cwd)?;
        crate::edits::apply::recover_and_report(&ws.root)?;
        let config = Config::load(&ws.root)?;
        if let Some(trusted) = config.workspace_trust() {
            // Recorded in a trace, so its replay (over a scratch copy no one listed) takes it.
            let verdict = if trusted { "1" } else { "0" };
            let _ = opts
                .inputs
                .read_to_string(crate::trust::INPUT, ".", || Ok(verdict.as_bytes().to_vec()));
        }
        ws.track(config.file_types());
        let home = Server::new(&ws, config.select(opts.server.as_deref())?.clone());
        Ok(Orchestrator {
            ground: Ground {
                ws,
                opts,
                config,
                parses: Arc::default(),
                docs: Arc::default(),
            },
            router: Router::new(home),
        })
    }

    /// The context of a request that goes to server `at` (made on first need): the drivers'
    /// entry, `commands::execute`.
    pub fn ctx(&mut self, at: &str) -> Result<Ctx<'_>> {
        self.router.open(&self.ground, at)?;
        Ok(Ctx::new(&mut self.ground, &mut self.router, at))
    }

    /// The context of the home server (to decide where a request goes).
    pub fn home_ctx(&mut self) -> Ctx<'_> {
        let home = self.router.home().to_string();
        Ctx::new(&mut self.ground, &mut self.router, &home)
    }

    /// The home server's name: where a request goes when its file names no other.
    pub fn home(&self) -> &str {
        self.router.home()
    }

    /// Every running session: the home server's first, then the others by name.
    pub fn sessions(&self) -> Vec<&Session> {
        self.router.sessions()
    }

    /// The name and version of the first running server (the home server's first).
    pub fn server_id(&self) -> Option<crate::bundle::ServerId> {
        self.router.running().find_map(Server::server_id)
    }

    /// Time server `at` spent starting, for `meta.timing`.
    pub fn start_ms(&self, at: &str) -> Option<f64> {
        self.router.get(at)?.start_ms
    }

    /// The envelope of a bundle that server `at` answered: environment, capabilities, the
    /// outcome's facts (taken from it, their list `paged`, if any, paged), resolution and
    /// edits. Not sealed.
    pub async fn assemble(
        &mut self,
        at: &str,
        request: RequestEcho,
        outcome: Option<&mut Outcome<Value>>,
        paged: Option<&str>,
    ) -> Bundle {
        let server = match self.router.open(&self.ground, at) {
            Ok(server) => server,
            Err(_) => self.router.home_mut(),
        };
        let environment = server.environment(&self.ground).await;
        let capabilities = server
            .session
            .as_ref()
            .map(|s| json!(capability_summary(s.capabilities())))
            .unwrap_or_else(|| json!({}));
        let (mut facts, resolution, complete, edits) = match outcome {
            Some(o) => (
                std::mem::take(&mut o.facts),
                o.resolution.clone(),
                o.complete,
                o.edits.clone().unwrap_or_default(),
            ),
            None => (Value::Null, None, true, Edits::default()),
        };
        let (cursor, page_size) = (self.ground.opts.cursor, self.ground.opts.page_size);
        let next = paged.and_then(|key| paginate(&mut facts, key, cursor, page_size));
        let unsure = std::mem::take(&mut server.unsure);
        let import_problem = server.session.as_ref().and_then(|s| s.import_problem());
        let mut meta = Meta::new(complete && !unsure && import_problem.is_none());
        meta.readiness = unsure.then(|| "unknown".to_string());
        meta.incomplete = import_problem;
        meta.truncated = next.is_some();
        meta.cursor = next.map(|n| n.to_string());
        Bundle {
            version: BUNDLE_VERSION.into(),
            bundle_id: String::new(),
            status: Status::Ok,
            request,
            resolution,
            facts,
            edits,
            process_reward: None,
            environment,
            capabilities,
            error: None,
            meta,
            sealed: None,
        }
    }

    /// The home server's environment (a trace's header).
    pub async fn environment(&mut self) -> Environment {
        let home = self.router.home_mut();
        home.environment(&self.ground).await
    }

    /// The interpreter's facts, once the home server's probe has answered.
    #[cfg(test)]
    pub(super) async fn python(&mut self) -> Python {
        let home = self.router.home_mut();
        home.python(&self.ground.ws).await
    }

    /// Answer over `ws` (a clone sharing its file index) instead of the workspace it found.
    pub fn use_workspace(&mut self, ws: Workspace) {
        self.ground.ws = ws;
    }

    /// Run under `opts` from the next request on; running sessions take its timeout.
    pub fn set_options(&mut self, opts: Options) {
        for server in self.router.servers_mut() {
            if let Some(session) = server.session.as_mut() {
                session.set_request_timeout(opts.timeout);
            }
        }
        self.ground.opts = opts;
    }

    /// Start the home server if it is not running.
    pub async fn ensure_session(&mut self) -> Result<&Session> {
        self.router.home_mut().ensure(&self.ground).await
    }

    /// The workspace, options and server `at` a measurement runs on (not the engine).
    pub fn cx(&mut self, at: &str) -> Result<Cx<'_>> {
        let server = self.router.open(&self.ground, at)?;
        Ok(Cx::new(&self.ground, server))
    }

    /// What lanser knows without a server: the workspace, options, configuration and parses.
    pub fn ground(&self) -> &Ground {
        &self.ground
    }

    /// Start parsing the files of `modules` in the background (see
    /// [`relocate::ParseCache::prefetch`]) until `stop` is set.
    pub fn prefetch_parses(&self, modules: Vec<String>, stop: Arc<std::sync::atomic::AtomicBool>) {
        self.ground.parses.prefetch(&self.ground.ws, modules, stop);
    }

    /// Talk to an in-process server instead of spawning one, with the server identity and
    /// interpreter of a recorded run (trace replay): nothing is provisioned or probed.
    pub fn replay_over(&mut self, server: ServerSpec, python: Python, connect: Connect) {
        let home = self.router.home_mut();
        if let Some(probe) = home.python_probe.take() {
            probe.abort();
        }
        // The recorded interpreter stands in for whatever this machine has (configDigest).
        if let (Some(exe), Some(Value::Object(section))) =
            (&python.exe, home.settings.get_mut("python"))
        {
            section.insert("pythonPath".into(), json!(exe));
        }
        home.spec = Some(server);
        home.python = Some(python);
        home.connect = Some(connect);
    }

    /// Another orchestrator over the same workspace, options and (already started) sessions,
    /// for requests in flight side by side (batch `--jobs`). Only `self` may `close`.
    pub async fn fork(&mut self) -> Orchestrator {
        self.environment().await;
        Orchestrator {
            ground: self.ground.share(),
            router: self.router.fork(&self.ground.ws),
        }
    }

    /// Another orchestrator over the same workspace, options, configuration, resolved home
    /// server and interpreter, but with no session: its first request starts a server of its
    /// own (batch `--servers`). The sibling owns that session and must be `close`d itself.
    pub async fn sibling(&mut self) -> Orchestrator {
        self.environment().await;
        Orchestrator {
            ground: self.ground.share(),
            router: Router::new(self.router.home_server().sibling(&self.ground.ws)),
        }
    }

    /// Take `from`'s configuration (lanser.toml, and each server's settings and definition)
    /// after a `reload`; a session of this orchestrator's own is told the new settings.
    pub fn adopt_config(&mut self, from: &Orchestrator, own_session: bool) {
        self.ground.config = from.ground.config.clone();
        for server in self.router.servers_mut() {
            let Some(theirs) = from.router.get(&server.def.name) else {
                continue;
            };
            server.settings = theirs.settings.clone();
            server.def = theirs.def.clone();
            server.config_digest = theirs.config_digest.clone();
            if let (true, Some(s)) = (own_session, &server.session) {
                s.update_settings(server.settings.clone());
            }
        }
    }

    /// Whether this orchestrator talks to an in-process server replaying a trace.
    pub fn replays(&self) -> bool {
        self.router.home_server().connect.is_some()
    }

    /// An error bundle for a request that never became one (a malformed batch line).
    /// It never reached a server, so (as in `commands::execute`) whether an earlier
    /// request started one does not change it.
    pub async fn error_bundle(&mut self, request: RequestEcho, err: &LanserError) -> Bundle {
        let home = self.router.home().to_string();
        let mut bundle = self.assemble(&home, request, None, None).await;
        bundle.environment.server = None;
        bundle.capabilities = json!({});
        bundle.set_error(err);
        bundle.seal();
        bundle
    }

    /// Shut every server down cleanly, if one was started.
    pub async fn close(mut self) {
        for server in self.router.take_all() {
            if let Some(s) = server.session {
                s.shutdown().await;
            }
        }
    }

    /// [`close`](Self::close), for a process about to exit: the parsed files are left to
    /// the exit rather than freed tree by tree (on a large batch that costs more than its
    /// last hundred lines; the operating system takes the memory back at once).
    pub async fn close_at_exit(mut self) {
        std::mem::forget(std::mem::take(&mut self.ground.parses));
        self.close().await
    }
}

/// Keep `page_size` entries of the paged list from `cursor` on; the next cursor when more
/// remain.
fn paginate(facts: &mut Value, key: &str, cursor: usize, page_size: usize) -> Option<usize> {
    let list = facts.get_mut(key)?.as_array_mut()?;
    let total = list.len();
    let start = cursor.min(total);
    let end = start.saturating_add(page_size.max(1)).min(total);
    *list = list[start..end].to_vec();
    (end < total).then_some(end)
}

/// A duration in milliseconds, to 0.1 ms (for `meta.timing`).
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}
