//! The orchestrator (the engine): one workspace and at most one server session, started on
//! first need and reused for every later request (batch and the daemon build on this).
//!
//! It owns what every command shares: selector resolution, the session, document sync,
//! environment capture and the bundle's envelope. It never calls a command: what a command
//! asks and which facts it keeps lives in `commands/<name>.rs`, and `commands::execute` runs
//! one over it.

use crate::bundle::normalize::Normalizer;
use crate::bundle::{
    Bundle, Edits, Meta, Python, RequestEcho, Resolution, Resolved, ServerId, Status,
    BUNDLE_VERSION,
};

use crate::config::{deep_merge, Config, ServerDef};
use crate::document::Document;
use crate::env;
use crate::error::{LanserError, Result};
pub use crate::lsp::capabilities::capability_summary;
use crate::lsp::session::{Connect, Session};
pub use crate::outcome::Outcome;
use crate::relocate::Target;
use crate::relocate::{self, Evidence};
use crate::selector::{self, PositionSpec};
use crate::servers::ServerSpec;
use crate::text::Encoding;
use crate::workspace::{path_to_uri, Workspace};
mod context;
mod environment;
mod options;
mod parts;
mod ready;
pub use context::Ctx;
pub use options::{Options, DEFAULT_PAGE_SIZE};
pub use parts::{Cx, Ground, Server};
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
/// without a server ([`Ground`]), the one server it started ([`Server`]), and the warm
/// orchestrators of the other servers requests were routed to. A measurement is handed a
/// [`Cx`] (the ground and one server), never the engine.
pub struct Orchestrator {
    ground: Ground,
    server: Server,
    /// By server: the orchestrators of the other servers requests were routed to by their
    /// file's type (`commands::route`), each started on first need and kept warm.
    routed: std::collections::BTreeMap<String, Orchestrator>,
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

    /// How it runs, to change between requests (a test's `--verbose`, a routed copy's server).
    pub fn opts_mut(&mut self) -> &mut Options {
        &mut self.ground.opts
    }

    /// The server session, once started.
    pub fn session(&self) -> Option<&Session> {
        self.server.session.as_ref()
    }

    /// The merged lanser.toml layers.
    pub fn config(&self) -> &Config {
        &self.ground.config
    }

    /// The server this orchestrator runs.
    pub fn server_def(&self) -> &ServerDef {
        &self.server.def
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
        let python_exe = env::find_python(&ws);
        let server_def = config.select(opts.server.as_deref())?.clone();
        let settings = deep_merge(
            env::server_settings(&ws.root, python_exe.as_deref()),
            server_def.settings.clone(),
        );
        let (probe_ws, probe_exe) = (ws.clone(), python_exe.clone());
        let python_probe = Some(tokio::task::spawn_blocking(move || {
            env::probe_python(&probe_ws, probe_exe.as_deref())
        }));
        Ok(Orchestrator {
            ground: Ground {
                ws,
                opts,
                config,
                parses: Arc::default(),
                docs: Arc::default(),
                config_digest: None,
            },
            server: Server {
                def: server_def,
                spec: None,
                session: None,
                python: None,
                python_probe,
                settings,
                start_ms: None,
                connect: None,
                unsure: false,
            },
            routed: Default::default(),
        })
    }

    /// Every running session: this orchestrator's and those of the servers it routed to.
    pub fn sessions(&self) -> Vec<&Session> {
        let routed = self
            .routed
            .values()
            .filter_map(|o| o.server.session.as_ref());
        self.server.session.iter().chain(routed).collect()
    }

    /// Time spent starting the server, for `meta.timing`.
    pub fn start_ms(&self) -> Option<f64> {
        self.server.start_ms
    }

    /// The envelope of a bundle: environment, capabilities, the outcome's facts (taken from
    /// it, their list `paged`, if any, paged), resolution and edits. Not sealed.
    pub async fn assemble(
        &mut self,
        request: RequestEcho,
        outcome: Option<&mut Outcome<Value>>,
        paged: Option<&str>,
    ) -> Bundle {
        let environment = self.environment().await;
        let capabilities = self
            .server
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
        let next = paged.and_then(|key| {
            paginate(
                &mut facts,
                key,
                self.ground.opts.cursor,
                self.ground.opts.page_size,
            )
        });
        let unsure = std::mem::take(&mut self.server.unsure);
        let import_problem = self
            .server
            .session
            .as_ref()
            .and_then(|s| s.import_problem());
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

    /// Take re-read configuration (`reload`): the settings served to the server, the merged
    /// lanser.toml and the server's definition; the next bundle's `configDigest` is read again.
    pub fn reconfigure(&mut self, settings: Value, config: Config, def: ServerDef) {
        self.server.settings = settings;
        self.ground.config = config;
        self.server.def = def;
        self.ground.config_digest = None;
    }

    /// The settings served to workspace/configuration.
    pub fn settings(&self) -> &Value {
        &self.server.settings
    }

    /// Answer over `ws` (a clone sharing its file index) instead of the workspace it found.
    pub fn use_workspace(&mut self, ws: Workspace) {
        self.ground.ws = ws;
    }

    /// Run under `opts` from the next request on; a running session takes its timeout.
    pub fn set_options(&mut self, opts: Options) {
        if let Some(session) = self.server.session.as_mut() {
            session.set_request_timeout(opts.timeout);
        }
        self.ground.opts = opts;
    }

    /// The orchestrator that answers for server `name`: this one itself, made that server's,
    /// while it has started nothing (`None`); else its warm orchestrator for `name`, made on
    /// first need (the workspace and its index are shared).
    pub fn for_server(&mut self, name: &str) -> Result<Option<&mut Orchestrator>> {
        let pinned = Options {
            server: Some(name.to_string()),
            ..self.ground.opts.clone()
        };
        if self.server.session.is_none() && self.routed.is_empty() && self.server_spec().is_none() {
            let mut own = Orchestrator::new(pinned)?;
            own.ground.ws = self.ground.ws.clone();
            // Still routed: a later request for another file type goes to its own server.
            own.ground.opts.server = None;
            *self = own;
            return Ok(None);
        }
        if !self.routed.contains_key(name) {
            let mut other = Orchestrator::new(pinned.clone())?;
            other.ground.ws = self.ground.ws.clone();
            self.routed.insert(name.to_string(), other);
        }
        let other = self.routed.get_mut(name).expect("inserted above");
        other.ground.opts = pinned;
        Ok(Some(other))
    }

    /// The running (or resolved) server's name and version.
    /// `None` while no session runs: a bundle names only a server that answered it.
    pub fn server_id(&self) -> Option<ServerId> {
        self.server.session.as_ref()?;
        let package = self.server.spec.as_ref().and_then(|s| s.package.clone());
        let (info_name, info_version) = self
            .server
            .session
            .as_ref()
            .map(Session::server_info)
            .unwrap_or((None, None));
        let name = info_name
            .or_else(|| package.as_ref().map(|p| p.0.clone()))
            .or_else(|| {
                let configured = self.server.spec.as_ref()?.source.is_command();
                configured.then(|| self.server.def.name.clone())
            })
            .or_else(|| {
                let cmd = self.server.spec.as_ref()?.command.last()?.clone();
                Some(cmd.rsplit('/').next().unwrap_or(&cmd).to_string())
            })?;
        let version = package.map(|p| p.1).or(info_version);
        Some(ServerId { name, version })
    }

    /// The server's position encoding; the LSP default before a session exists.
    pub fn encoding(&self) -> Encoding {
        self.server.encoding()
    }

    /// Start the server if it is not running.
    pub async fn ensure_session(&mut self) -> Result<&Session> {
        self.server.ensure(&self.ground).await
    }

    /// The workspace, options and one server a measurement runs on (not the engine).
    pub fn cx(&mut self) -> Cx<'_> {
        Cx::new(&self.ground, &mut self.server)
    }

    /// What lanser knows without a server: the workspace, options, configuration and parses.
    pub fn ground(&self) -> &Ground {
        &self.ground
    }

    /// The parsed Python files of this orchestrator, reused across requests.
    pub fn parse_cache(&self) -> &relocate::ParseCache {
        &self.ground.parses
    }

    /// Start parsing the files of `modules` in the background (see
    /// [`relocate::ParseCache::prefetch`]) until `stop` is set.
    pub fn prefetch_parses(&self, modules: Vec<String>, stop: Arc<std::sync::atomic::AtomicBool>) {
        self.ground.parses.prefetch(&self.ground.ws, modules, stop);
    }

    /// Resolve a selector string against the files on disk (any form; docs/relocation.md).
    /// The target carries the relocation evidence that [`Orchestrator::resolution`] records;
    /// a rejected selector's error carries its evidence as its source ([`Rejected`]).
    pub fn resolve(&self, selector: &str) -> Result<(PositionSpec, Target)> {
        let spec = selector::parse(selector)?;
        let cx = relocate::Context {
            ws: &self.ground.ws,
            io: self.ground.opts.index_io,
            cwd: &self.ground.opts.cwd,
            config: self.ground.opts.relocate,
            store: relocate::snapshot::Store::through(&self.ground.opts.inputs),
            cache: &self.ground.parses,
            docs: &self.ground.docs,
        };
        match relocate::relocate(&cx, &spec) {
            Ok(target) => Ok((spec, target)),
            Err(rejected) => {
                if let Some(ev) = rejected.evidence {
                    let c = &ev.candidates[0];
                    let res = self.evidence_resolution(&spec, &ev.docs[c.doc], c.start, c.end, &ev);
                    if rejected.error.source.is_none() {
                        return Err(rejected.error.with_source(Rejected(res)));
                    }
                }
                Err(rejected.error)
            }
        }
    }

    /// The `resolution` block for a resolved selector, in server coordinates. The target's
    /// file content is kept in the snapshot store, so its `docVersion` can be mapped later.
    pub fn resolution(&self, spec: &PositionSpec, target: &Target) -> Resolution {
        relocate::snapshot::Store::open().put(&target.doc.doc_version, &target.doc.text);
        match &target.evidence {
            Some(ev) => self.evidence_resolution(spec, &target.doc, target.start, target.end, ev),
            None => Resolution {
                original: spec.to_canonical(),
                resolved: self.resolved(&target.doc, target.start, target.end),
                confidence: 1.0,
                ambiguous: false,
                disambiguation: vec![],
                weights: weights(),
                features: None,
                symbol_id: None,
            },
        }
    }

    fn resolved(&self, doc: &Document, start: usize, end: usize) -> Resolved {
        let enc = self.encoding();
        let (sl, sc) = doc.position(start, enc);
        let (el, ec) = doc.position(end, enc);
        Resolved {
            path: doc.rel.clone(),
            range: [sl as u32, sc as u32, el as u32, ec as u32],
            doc_version: doc.doc_version.clone(),
        }
    }

    fn evidence_resolution(
        &self,
        spec: &PositionSpec,
        doc: &Document,
        start: usize,
        end: usize,
        ev: &Evidence,
    ) -> Resolution {
        let disambiguation = ev
            .candidates
            .iter()
            .map(|c| {
                let r = self.resolved(&ev.docs[c.doc], c.start, c.end);
                let mut v = json!({
                    "path": r.path,
                    "range": r.range,
                    "score": c.score,
                    "features": c.features,
                    "match": if c.exact { "exact-map" } else if c.fuzzy { "fuzzy" } else { "exact" },
                });
                if let Some(sym) = &c.symbol {
                    v["symbolId"] = json!(sym.symbol_id);
                }
                v
            })
            .collect();
        let top = &ev.candidates[0];
        Resolution {
            original: spec.to_canonical(),
            resolved: self.resolved(doc, start, end),
            confidence: ev.confidence,
            ambiguous: ev.ambiguous,
            disambiguation,
            weights: weights(),
            features: Some(json!(top.features)),
            symbol_id: top.symbol.as_ref().map(|s| s.symbol_id.clone()),
        }
    }

    /// Start the server, open the target's document, and return the LSP
    /// `TextDocumentPositionParams` for the target's start.
    /// A target that starts on `def`, `async def` or `class` (an anchor on a header, a range
    /// over a definition, a cursor on the keyword) is asked about at the name it defines.
    pub async fn position_params(
        &mut self,
        target: &Target,
    ) -> Result<lsp_types::TextDocumentPositionParams> {
        let session = self.ensure_session().await?;
        let uri = path_to_uri(&target.doc.abs);
        session.sync_document(&uri, &target.doc);
        self.wait_opened(Some(&uri)).await?;
        let session = self.server.session.as_ref().expect("started");
        let at = skip_definition_keyword(&target.doc.text, target.start);
        crate::lsp::typed::at(&target.doc, at, session.encoding)
    }

    pub fn normalizer(&self) -> Normalizer<'_> {
        self.ground.normalizer(self.encoding())
    }

    /// Talk to an in-process server instead of spawning one, with the server identity and
    /// interpreter of a recorded run (trace replay): nothing is provisioned or probed.
    pub fn replay_over(&mut self, server: ServerSpec, python: Python, connect: Connect) {
        if let Some(probe) = self.server.python_probe.take() {
            probe.abort();
        }
        // The recorded interpreter stands in for whatever this machine has (configDigest).
        if let (Some(exe), Some(Value::Object(section))) =
            (&python.exe, self.server.settings.get_mut("python"))
        {
            section.insert("pythonPath".into(), json!(exe));
        }
        self.server.spec = Some(server);
        self.server.python = Some(python);
        self.server.connect = Some(connect);
    }

    /// The server spec in use, once resolved.
    pub fn server_spec(&self) -> Option<&ServerSpec> {
        self.server.spec.as_ref()
    }

    /// Another orchestrator over the same workspace, options and (already started) session,
    /// for requests in flight side by side (batch `--jobs`). Only `self` may `close`.
    pub async fn fork(&mut self) -> Orchestrator {
        let mut fork = self.sibling().await;
        fork.server.session = self.server.session.clone();
        fork.server.start_ms = self.server.start_ms;
        fork
    }

    /// Another orchestrator over the same workspace, options, configuration, resolved server
    /// and interpreter, but with no session: its first request starts a server of its own
    /// (batch `--servers`). The sibling owns that session and must be `close`d itself.
    pub async fn sibling(&mut self) -> Orchestrator {
        self.environment().await;
        Orchestrator {
            ground: Ground {
                ws: self.ground.ws.clone(),
                opts: self.ground.opts.clone(),
                config: self.ground.config.clone(),
                // Parses are shared (by content): forks and siblings keep one copy of each tree.
                parses: self.ground.parses.clone(),
                docs: self.ground.docs.clone(),
                config_digest: self.ground.config_digest.clone(),
            },
            server: Server {
                def: self.server.def.clone(),
                spec: self.server.spec.clone(),
                session: None,
                python: self.server.python.clone(),
                python_probe: None,
                settings: self.server.settings.clone(),
                start_ms: None,
                connect: self.server.connect.clone(),
                unsure: false,
            },
            routed: Default::default(),
        }
    }

    /// Take `from`'s configuration (settings, lanser.toml, server definition) after a
    /// `reload`; a session of this orchestrator's own is told the new settings.
    pub fn adopt_config(&mut self, from: &Orchestrator, own_session: bool) {
        self.server.settings = from.server.settings.clone();
        self.ground.config = from.ground.config.clone();
        self.server.def = from.server.def.clone();
        self.ground.config_digest = from.ground.config_digest.clone();
        if let (true, Some(s)) = (own_session, &self.server.session) {
            s.update_settings(self.server.settings.clone());
        }
    }

    /// Whether this orchestrator talks to an in-process server replaying a trace.
    pub fn replays(&self) -> bool {
        self.server.connect.is_some()
    }

    /// An error bundle for a request that never became one (a malformed batch line).
    /// It never reached a server, so (as in [`Orchestrator::execute`]) whether an earlier
    /// request started one does not change it.
    pub async fn error_bundle(&mut self, request: RequestEcho, err: &LanserError) -> Bundle {
        let mut bundle = self.assemble(request, None, None).await;
        bundle.environment.server = None;
        bundle.capabilities = json!({});
        bundle.set_error(err);
        bundle.seal();
        bundle
    }

    /// Shut the server down cleanly, if one was started.
    pub async fn close(mut self) {
        for (_, other) in std::mem::take(&mut self.routed) {
            Box::pin(other.close()).await;
        }
        if let Some(s) = self.server.session.take() {
            s.shutdown().await;
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

/// The weights of docs/relocation.md#scoring, as recorded in every `resolution`.
fn weights() -> Value {
    use relocate::score::{W_AST, W_MODULE, W_PROX, W_TOKEN};
    json!({"ast": W_AST, "module": W_MODULE, "token": W_TOKEN, "prox": W_PROX})
}

/// A duration in milliseconds, to 0.1 ms (for `meta.timing`).
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The offset of the defined name when `text[start..]` begins with a definition keyword.
fn skip_definition_keyword(text: &str, start: usize) -> usize {
    let mut at = start;
    for kw in ["async", "def", "class"] {
        let rest = &text[at..];
        if let Some(after) = rest.strip_prefix(kw) {
            let ws = after.len() - after.trim_start_matches([' ', '\t']).len();
            if ws > 0 {
                at += kw.len() + ws;
            }
        }
    }
    let rest = &text[at..];
    if at != start && rest.starts_with(crate::selector::is_ident_start) {
        at
    } else {
        start
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn definition_keywords_are_skipped() {
        let t = "async def load(x):\nclass  C:\ndefault = 1\ndef\n";
        assert_eq!(super::skip_definition_keyword(t, 0), 10);
        let c = t.find("class").unwrap();
        assert_eq!(super::skip_definition_keyword(t, c), c + 7);
        let d = t.find("default").unwrap();
        assert_eq!(super::skip_definition_keyword(t, d), d);
        let bare = t.rfind("def").unwrap();
        assert_eq!(super::skip_definition_keyword(t, bare), bare);
    }
}
