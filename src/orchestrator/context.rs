//! What an operation is handed: [`Ctx`], the pieces of the engine an operation may use — the
//! ground (workspace, options, configuration, parses), the server answering it (started on
//! first need, with its readiness and normalizer), selector resolution, and for the few that
//! fan out over servers (`check`, `diag`, `symbols`) the context of another server. What only
//! a driver does with the engine (make it, close it, fork it, assemble and seal the bundle,
//! change its options or workspace, replay over it) is not reachable from here: only
//! `commands::execute`, where the drivers hand a request to its operation, makes a `Ctx`.

use super::{Cx, Ground, Options, Orchestrator};
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
    o: &'a mut Orchestrator,
}

impl<'a> Ctx<'a> {
    /// The context of a request on `o` (the drivers' entry, `commands::execute`).
    pub fn new(o: &'a mut Orchestrator) -> Ctx<'a> {
        Ctx { o }
    }

    /// This context again, for a shorter while (to stand beside a routed one).
    pub fn reborrow(&mut self) -> Ctx<'_> {
        Ctx { o: &mut *self.o }
    }

    /// The workspace.
    pub fn ws(&self) -> &Workspace {
        self.o.ws()
    }

    /// How the request runs.
    pub fn opts(&self) -> &Options {
        self.o.opts()
    }

    /// The merged lanser.toml layers.
    pub fn config(&self) -> &Config {
        self.o.config()
    }

    /// What lanser knows without a server.
    pub fn ground(&self) -> &Ground {
        self.o.ground()
    }

    /// The ground and the server, for a measurement.
    pub fn cx(&mut self) -> Cx<'_> {
        self.o.cx()
    }

    /// The server answering the request: its definition.
    pub fn server_def(&self) -> &ServerDef {
        self.o.server_def()
    }

    /// The settings served to it.
    pub fn settings(&self) -> &Value {
        self.o.settings()
    }

    /// Its name and version, once it runs.
    pub fn server_id(&self) -> Option<ServerId> {
        self.o.server_id()
    }

    /// Its session, once started.
    pub fn session(&self) -> Option<&Session> {
        self.o.session()
    }

    /// Its session, started on first need.
    pub async fn ensure_session(&mut self) -> Result<&Session> {
        self.o.ensure_session().await
    }

    /// Its position encoding.
    pub fn encoding(&self) -> Encoding {
        self.o.encoding()
    }

    /// Time spent starting it.
    pub fn start_ms(&self) -> Option<f64> {
        self.o.start_ms()
    }

    /// The interpreter's facts, when the probe has answered.
    pub fn probed_python(&self) -> Option<&Python> {
        self.o.probed_python()
    }

    /// Whether it is an in-process server replaying a trace.
    pub fn replays(&self) -> bool {
        self.o.replays()
    }

    /// The normalizer of its answers.
    pub fn normalizer(&self) -> Normalizer<'_> {
        self.o.normalizer()
    }

    /// The parsed Python files, reused across requests.
    pub fn parse_cache(&self) -> &relocate::ParseCache {
        self.o.parse_cache()
    }

    /// Resolve a selector against the files on disk (a rejected one's evidence travels as its
    /// error's source, [`super::Rejected`]).
    pub fn resolve(&self, selector: &str) -> Result<(PositionSpec, Target)> {
        self.o.resolve(selector)
    }

    /// The `resolution` block of a resolved selector.
    pub fn resolution(&self, spec: &PositionSpec, target: &Target) -> Resolution {
        self.o.resolution(spec, target)
    }

    /// Start the server, open the target's document, and give its position's parameters.
    pub async fn position_params(
        &mut self,
        target: &Target,
    ) -> Result<lsp_types::TextDocumentPositionParams> {
        self.o.position_params(target).await
    }

    /// Wait (bounded) until the server has loaded the project.
    pub async fn wait_ready(&mut self) -> Result<bool> {
        self.o.wait_ready().await
    }

    /// Wait for what a server does after a document (`uri`) was opened.
    pub async fn wait_opened(&mut self, uri: Option<&str>) -> Result<()> {
        self.o.wait_opened(uri).await
    }

    /// Whether the request was answered without knowing the server was ready (cleared).
    pub fn take_unsure(&mut self) -> bool {
        self.o.take_unsure()
    }

    /// Mark the request as answered without knowing the server was ready.
    pub fn mark_unsure(&mut self, unsure: bool) {
        self.o.mark_unsure(unsure)
    }

    /// The context of server `name` for a request that fans out: `None` while this one has
    /// started nothing (it then becomes that server's, and the request goes on here).
    pub fn route(&mut self, name: &str) -> Result<Option<Ctx<'_>>> {
        Ok(self.o.for_server(name)?.map(Ctx::new))
    }

    /// Take re-read configuration (`reload`).
    pub fn reconfigure(&mut self, settings: Value, config: Config, def: ServerDef) {
        self.o.reconfigure(settings, config, def)
    }
}
