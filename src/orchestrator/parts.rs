//! The engine split by lifetime. [`Ground`] is what lanser knows without a server — the
//! workspace, the options a request runs under, the merged configuration, parsed files and
//! read documents — and outlives any server. [`Server`] is one server: its definition, the
//! settings served to it, the interpreter probe, and its session once started. A
//! measurement gets a [`Cx`], the ground and one server, and starts that server when it first
//! needs it; only the drivers hold the whole [`super::Orchestrator`] (the ground and the
//! [`super::Router`] among servers).

use super::ms;
use crate::bundle::normalize::Normalizer;
use crate::bundle::Python;
use crate::config::{Config, ServerDef};
use crate::document::DocCache;
use crate::env;
use crate::error::{LanserError, Result};
use crate::lsp::session::{Connect, Session, SessionConfig};
use crate::relocate;
use crate::servers::{self, ServerSpec};
use crate::text::Encoding;
use crate::workspace::Workspace;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

use super::Options;

/// What lanser knows without a server.
pub struct Ground {
    pub(super) ws: Workspace,
    pub(super) opts: Options,
    /// Every lanser.toml layer, merged (see `config`).
    pub(super) config: Config,
    /// Parsed Python files, reused by every structural selector of this session.
    pub(super) parses: Arc<relocate::ParseCache>,
    /// Files read to resolve selectors and normalize locations, reused while their bytes are
    /// the same (shared with forks).
    pub(super) docs: Arc<DocCache>,
}

impl Ground {
    /// The same ground for another engine over this workspace (a fork or a sibling): the
    /// file index, parses and read documents are shared (by content).
    pub(super) fn share(&self) -> Ground {
        Ground {
            ws: self.ws.clone(),
            opts: self.opts.clone(),
            config: self.config.clone(),
            parses: self.parses.clone(),
            docs: self.docs.clone(),
        }
    }

    /// The workspace it answers for.
    pub fn ws(&self) -> &Workspace {
        &self.ws
    }

    /// How the request runs.
    pub fn opts(&self) -> &Options {
        &self.opts
    }

    /// The normalizer of server answers for a server speaking `encoding`.
    pub fn normalizer(&self, encoding: Encoding) -> Normalizer<'_> {
        Normalizer::new(&self.ws, encoding, self.opts.index_io, self.opts.verbose)
            .with_cache(&self.docs)
    }
}

/// One server: started on first need, then kept.
pub struct Server {
    /// Its definition (built in, or from lanser.toml).
    pub(super) def: ServerDef,
    /// The command that runs it, once resolved.
    pub(super) spec: Option<ServerSpec>,
    pub(super) session: Option<Session>,
    pub(super) python: Option<Python>,
    pub(super) python_probe: Option<tokio::task::JoinHandle<Python>>,
    /// Served to workspace/configuration: lanser's defaults under the server's own settings.
    pub(super) settings: Value,
    /// Time spent starting it, for `meta.timing`.
    pub(super) start_ms: Option<f64>,
    /// An in-process server to talk to instead of spawning one (trace replay).
    pub(super) connect: Option<Connect>,
    /// Set while a request runs when a [`crate::config::Ready::Settle`] server gave no sign of
    /// having loaded what was asked: the bundle says `meta.readiness: "unknown"`.
    pub(super) unsure: bool,
    /// `environment.configDigest`, read once per configuration: the key (settings,
    /// interpreter, lanser.toml digests) and the digest. `reload` reads the files again.
    pub(super) config_digest: Option<(String, String)>,
}

impl Server {
    /// Server `def` over `ws`, not started: lanser's settings for the workspace's interpreter
    /// under the server's own, and the interpreter probe started in the background.
    pub(super) fn new(ws: &Workspace, def: ServerDef) -> Server {
        let python_exe = env::find_python(ws);
        let settings = crate::config::deep_merge(
            env::server_settings(&ws.root, python_exe.as_deref()),
            def.settings.clone(),
        );
        Server {
            def,
            spec: None,
            session: None,
            python: None,
            python_probe: Some(probe(ws)),
            settings,
            start_ms: None,
            connect: None,
            unsure: false,
            config_digest: None,
        }
    }

    /// The same server with no session of its own yet: what was resolved and probed is kept
    /// (batch `--servers`: its first request starts another process).
    pub(super) fn sibling(&self, ws: &Workspace) -> Server {
        Server {
            def: self.def.clone(),
            spec: self.spec.clone(),
            session: None,
            python: self.python.clone(),
            python_probe: self.python.is_none().then(|| probe(ws)),
            settings: self.settings.clone(),
            start_ms: None,
            connect: self.connect.clone(),
            unsure: false,
            config_digest: self.config_digest.clone(),
        }
    }

    /// The same server sharing its running session, if any (batch `--jobs`).
    pub(super) fn fork(&self, ws: &Workspace) -> Server {
        Server {
            session: self.session.clone(),
            start_ms: self.start_ms,
            ..self.sibling(ws)
        }
    }

    /// Its session, once started.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// Its position encoding; the LSP default before a session exists.
    pub fn encoding(&self) -> Encoding {
        self.session
            .as_ref()
            .map(|s| s.encoding)
            .unwrap_or(Encoding::Utf16)
    }

    /// The interpreter's facts, once the probe started with the engine has answered.
    pub(super) async fn python(&mut self, ws: &Workspace) -> Python {
        if self.python.is_none() {
            // Awaited through the handle, not taken first: a request cancelled while this
            // waits (MCP `notifications/cancelled`) leaves the probe for the next one.
            let probed = match self.python_probe.as_mut() {
                Some(h) => h.await.ok(),
                None => None,
            };
            self.python_probe = None;
            self.python = Some(
                probed.unwrap_or_else(|| env::probe_python(ws, env::find_python(ws).as_deref())),
            );
        }
        self.python.clone().expect("probed above")
    }

    /// Start it over `ground`'s workspace if it is not running.
    pub async fn ensure(&mut self, ground: &Ground) -> Result<&Session> {
        if self.session.is_none() {
            let started = Instant::now();
            let spec = match &self.spec {
                Some(s) => s.clone(),
                None => {
                    let (root, cmd, install, def) = (
                        ground.ws.root.clone(),
                        ground.opts.server_cmd.clone(),
                        ground.opts.install,
                        self.def.clone(),
                    );
                    let s = tokio::task::spawn_blocking(move || {
                        servers::resolve(&root, cmd.as_deref(), &def, install)
                    })
                    .await
                    .map_err(|e| {
                        LanserError::internal("finding the server failed").with_source(e)
                    })??;
                    self.spec = Some(s.clone());
                    s
                }
            };
            // A launcher script found on PATH (a pyenv shim) would be run by the server on
            // every search-path query: it is given the interpreter the launcher runs.
            if env::launched(&self.settings) {
                let python = self.python(&ground.ws).await;
                env::point_at(&mut self.settings, &ground.ws, &python);
            }
            let config = self.session_config(ground, &spec);
            self.session = Some(match &self.connect {
                Some(connect) => Session::over(config, connect()).await?,
                None => Session::start(config).await?,
            });
            self.start_ms = Some(ms(started.elapsed()));
        }
        Ok(self.session.as_ref().expect("started above"))
    }

    fn session_config(&self, ground: &Ground, spec: &ServerSpec) -> SessionConfig {
        let (def, ws, opts) = (&self.def, &ground.ws, &ground.opts);
        SessionConfig {
            command: spec.command.clone(),
            cwd: opts.cwd.clone(),
            root: ws.root.clone(),
            root_uri: ws.root_uri(),
            settings: self.settings.clone(),
            request_timeout: opts.timeout,
            tap: opts.tap.clone(),
            ready: def.ready,
            ready_log: def.ready_log.clone(),
            language_id: def.language_id.clone(),
            expect_index: crate::languages::expects_index(&ws.root, &def.index_markers),
            // Pyright speaks utf-16 only; others get utf-8 where they offer it.
            encodings: def.quirks.encodings(),
            quirks: def.quirks,
            file_types: def.file_types.clone(),
            init_options: def.init_options.clone(),
        }
    }
}

/// The interpreter probe of `ws`, in the background.
fn probe(ws: &Workspace) -> tokio::task::JoinHandle<Python> {
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || env::probe_python(&ws, env::find_python(&ws).as_deref()))
}

/// What a measurement runs on: the ground (workspace, options) and one server, started when
/// first asked for.
pub struct Cx<'a> {
    pub(super) ground: &'a Ground,
    pub(super) server: &'a mut Server,
}

impl<'a> Cx<'a> {
    pub(super) fn new(ground: &'a Ground, server: &'a mut Server) -> Cx<'a> {
        Cx { ground, server }
    }

    /// The workspace.
    pub fn ws(&self) -> &Workspace {
        &self.ground.ws
    }

    /// How the request runs.
    pub fn opts(&self) -> &Options {
        &self.ground.opts
    }

    /// What lanser knows without the server.
    pub fn ground(&self) -> &Ground {
        self.ground
    }

    /// The server's session, started on first need.
    pub async fn session(&mut self) -> Result<&Session> {
        self.server.ensure(self.ground).await
    }

    /// The session, if the server is running.
    pub fn started(&self) -> Option<&Session> {
        self.server.session()
    }

    /// The normalizer of this server's answers.
    pub fn normalizer(&self) -> Normalizer<'_> {
        self.ground.normalizer(self.server.encoding())
    }

    /// The server's definition.
    pub fn server_def(&self) -> &ServerDef {
        &self.server.def
    }

    /// The interpreter served to the server (`python.pythonPath`), if one was found.
    pub fn python_path(&self) -> Option<&str> {
        self.server.settings.pointer("/python/pythonPath")?.as_str()
    }

    /// The command line that runs the server, once resolved.
    pub fn server_command(&self) -> &[String] {
        self.server
            .spec
            .as_ref()
            .map_or(&[], |s| s.command.as_slice())
    }
}
