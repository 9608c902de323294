//! What an operation is handed: [`Ctx`], the ground (workspace, options, configuration,
//! parses) and the router with the name of the server its request went to — that server's
//! definition, session (started on first need), readiness and normalizer, selector resolution
//! in its encoding, and for the few operations that fan out over servers (`check`, `diag`,
//! `symbols`) the context of another server. What only a driver does with the engine (make
//! it, close it, fork it, assemble and seal the bundle, change its options or workspace,
//! replay over it) is not reachable from here: only `commands::execute`, where the drivers
//! hand a request to its operation, makes a `Ctx`.

use super::{resolve, Cx, Ground, Options, Router, Server};
use crate::bundle::normalize::Normalizer;
use crate::bundle::{Python, Resolution, ServerId};
use crate::config::{Config, ServerDef};
use crate::error::Result;
use crate::lsp::session::Session;
use crate::relocate::{self, Target};
use crate::selector::PositionSpec;
use crate::text::Encoding;
use crate::workspace::Workspace;
use serde_json::Value;

/// The engine as an operation sees it (see the module's documentation).
pub struct Ctx<'a> {
    ground: &'a mut Ground,
    router: &'a mut Router,
    /// The server answering the request (made: [`super::Orchestrator::ctx`] opened it).
    at: String,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(ground: &'a mut Ground, router: &'a mut Router, at: &str) -> Ctx<'a> {
        Ctx {
            ground,
            router,
            at: at.to_string(),
        }
    }

    /// This context again, for a shorter while (to stand beside a routed one).
    pub fn reborrow(&mut self) -> Ctx<'_> {
        Ctx {
            ground: &mut *self.ground,
            router: &mut *self.router,
            at: self.at.clone(),
        }
    }

    fn server(&self) -> &Server {
        self.router.get(&self.at).expect("opened with the context")
    }

    fn server_mut(&mut self) -> &mut Server {
        self.router
            .get_mut(&self.at)
            .expect("opened with the context")
    }

    /// The workspace.
    pub fn ws(&self) -> &Workspace {
        &self.ground.ws
    }

    /// How the request runs.
    pub fn opts(&self) -> &Options {
        &self.ground.opts
    }

    /// The merged lanser.toml layers.
    pub fn config(&self) -> &Config {
        &self.ground.config
    }

    /// What lanser knows without a server.
    pub fn ground(&self) -> &Ground {
        self.ground
    }

    /// The ground and the server, for a measurement.
    pub fn cx(&mut self) -> Cx<'_> {
        let server = self
            .router
            .get_mut(&self.at)
            .expect("opened with the context");
        Cx::new(self.ground, server)
    }

    /// The server answering the request: its definition.
    pub fn server_def(&self) -> &ServerDef {
        &self.server().def
    }

    /// The settings served to it.
    pub fn settings(&self) -> &Value {
        &self.server().settings
    }

    /// Its name and version, once it runs.
    pub fn server_id(&self) -> Option<ServerId> {
        self.server().server_id()
    }

    /// Its session, once started.
    pub fn session(&self) -> Option<&Session> {
        self.server().session()
    }

    /// Its session, started on first need.
    pub async fn ensure_session(&mut self) -> Result<&Session> {
        let server = self
            .router
            .get_mut(&self.at)
            .expect("opened with the context");
        server.ensure(self.ground).await
    }

    /// Its position encoding.
    pub fn encoding(&self) -> Encoding {
        self.server().encoding()
    }

    /// Time spent starting it.
    pub fn start_ms(&self) -> Option<f64> {
        self.server().start_ms
    }

    /// The interpreter's facts, when the probe has answered.
    pub fn probed_python(&self) -> Option<&Python> {
        self.server().probed_python()
    }

    /// Whether it is an in-process server replaying a trace.
    pub fn replays(&self) -> bool {
        self.router.home_server().connect.is_some()
    }

    /// The normalizer of its answers.
    pub fn normalizer(&self) -> Normalizer<'_> {
        self.ground.normalizer(self.encoding())
    }

    /// The parsed Python files, reused across requests.
    pub fn parse_cache(&self) -> &relocate::ParseCache {
        &self.ground.parses
    }

    /// Resolve a selector against the files on disk (a rejected one's evidence travels as its
    /// error's source, [`super::Rejected`]).
    pub fn resolve(&self, selector: &str) -> Result<(PositionSpec, Target)> {
        resolve::resolve(self.ground, self.server(), selector)
    }

    /// The `resolution` block of a resolved selector.
    pub fn resolution(&self, spec: &PositionSpec, target: &Target) -> Resolution {
        resolve::resolution(self.server(), spec, target)
    }

    /// Start the server, open the target's document, and give its position's parameters.
    pub async fn position_params(
        &mut self,
        target: &Target,
    ) -> Result<lsp_types::TextDocumentPositionParams> {
        self.cx().position_params(target).await
    }

    /// Wait (bounded) until the server has loaded the project.
    pub async fn wait_ready(&mut self) -> Result<bool> {
        self.cx().wait_ready().await
    }

    /// Wait for what a server does after a document (`uri`) was opened.
    pub async fn wait_opened(&mut self, uri: Option<&str>) -> Result<()> {
        self.cx().wait_opened(uri).await
    }

    /// Whether the request was answered without knowing the server was ready (cleared).
    pub fn take_unsure(&mut self) -> bool {
        std::mem::take(&mut self.server_mut().unsure)
    }

    /// Mark the request as answered without knowing the server was ready.
    pub fn mark_unsure(&mut self, unsure: bool) {
        self.server_mut().unsure |= unsure;
    }

    /// The context of server `name`, for a request that fans out over servers (made on first
    /// need, started when first asked).
    pub fn route(&mut self, name: &str) -> Result<Ctx<'_>> {
        self.router.open(self.ground, name)?;
        Ok(Ctx::new(self.ground, self.router, name))
    }

    /// Take re-read configuration (`reload`): the merged lanser.toml, and this server's
    /// settings and definition; the next bundle's `configDigest` is read again.
    pub fn reconfigure(&mut self, settings: Value, config: Config, def: ServerDef) {
        self.ground.config = config;
        let server = self.server_mut();
        server.settings = settings;
        server.def = def;
        server.config_digest = None;
    }
}
