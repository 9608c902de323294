//! `lanser capabilities` (the server's `InitializeResult` capabilities as facts), `lanser
//! status` (configured servers, their resolved commands and versions) and `lanser reload`.
//!
//! `reload` re-reads lanser.toml and sends the resulting settings to a running session with
//! `workspace/didChangeConfiguration` (files need no reload: every request re-reads its file
//! and sends `didChange` when the content hash differs). The one-shot CLI has no running
//! session — each command starts a fresh server that reads the configuration anew — so there
//! it only reports what it read and says that nothing was running; with a long-lived
//! orchestrator (batch, a daemon) it reconfigures the live server.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{
    CapabilitiesFacts, ConfigFile, Provenance, ReloadFacts, Reloaded, ServerStatus, SessionInfo,
    StatusFacts,
};
use crate::bundle::Bundle;
use crate::config::{deep_merge, Config, ServerDef};
use crate::env;
use crate::error::Result;
use crate::orchestrator::{capability_summary, Orchestrator, Outcome};
use crate::servers;
use lsp_types::notification::{DidChangeConfiguration, Notification};

/// The server's capabilities (starts it)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Capabilities {}

impl Operation for Capabilities {
    const NAME: &'static str = "capabilities";
    type Facts = CapabilitiesFacts;
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        capabilities(o).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.line(super::show::pretty(&facts.capabilities));
    }
}

/// Configured servers, their resolved commands and versions (starts nothing)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Status {}

impl Operation for Status {
    const NAME: &'static str = "status";
    type Facts = StatusFacts;
    /// It reads the configuration and the installs; whether a server already runs (in a
    /// daemon or a batch) must not change its bundle.
    fn uses_server(&self) -> bool {
        false
    }
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        status(o)
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::status(page, facts);
    }
}

/// Re-read lanser.toml and reconfigure running sessions (none in the one-shot CLI)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Reload {}

impl Operation for Reload {
    const NAME: &'static str = "reload";
    type Facts = ReloadFacts;
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        reload(o)
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::reload(page, facts);
    }
}

/// `lanser capabilities`: start the server and report what it declared.
pub async fn capabilities(o: &mut Orchestrator) -> Result<Outcome<CapabilitiesFacts>> {
    let session = o.ensure_session().await?;
    let summary = capability_summary(session.capabilities());
    let caps = session.raw_capabilities().clone();
    let raw = super::raw::relativize(o.ws(), &caps);
    Ok(Outcome {
        facts: CapabilitiesFacts {
            server: o.server_id(),
            capabilities: raw,
            summary,
            provenance: Provenance::Lsp,
        },
        resolution: None,
        complete: true,
        edits: None,
        reward: None,
    })
}

/// A path with the cache directory spelled `$LANSER_HOME`, so reports do not depend on it.
fn shown(path: &str) -> String {
    let home = crate::home::lanser_home().to_string_lossy().into_owned();
    match path.strip_prefix(&home) {
        Some(rest) => format!("$LANSER_HOME{rest}"),
        None => path.to_string(),
    }
}

fn server_status(o: &Orchestrator, def: &ServerDef) -> ServerStatus {
    let configured: Vec<String> = std::iter::once(def.command.clone())
        .chain(def.args.iter().cloned())
        .collect();
    let selected = def.name == o.server_def().name;
    let cmd = o.opts().server_cmd.as_deref().filter(|_| selected);
    let resolved = servers::resolve(&o.ws().root, cmd, def, false);
    let (command, source, version, error) = match resolved {
        Ok(spec) => (
            Some(spec.command.iter().map(|c| shown(c)).collect::<Vec<_>>()),
            Some(spec.source.as_str().to_string()),
            spec.package.map(|p| p.1),
            None,
        ),
        Err(e) => (None, None, None, Some(e.message)),
    };
    ServerStatus {
        name: def.name.clone(),
        selected,
        default: def.name == o.config().default,
        origin: def.origin.as_str().to_string(),
        configured,
        file_types: def.file_types.clone(),
        root_markers: def.root_markers.clone(),
        provision: def.provision.as_str().to_string(),
        package: def.package.clone(),
        pinned: def.version.clone(),
        resolved: command,
        source,
        installed_version: version,
        error,
    }
}

fn config_files(config: &Config) -> Vec<ConfigFile> {
    config
        .files
        .iter()
        .zip(config.file_digests())
        .map(|(f, (file, digest))| ConfigFile {
            origin: f.origin.as_str().to_string(),
            file,
            digest,
        })
        .collect()
}

fn sessions(o: &Orchestrator) -> Vec<SessionInfo> {
    o.session()
        .as_ref()
        .map(|_| SessionInfo {
            server: o.server_id(),
        })
        .into_iter()
        .collect()
}

/// `lanser status`: no server is started; nothing is installed.
pub fn status(o: &Orchestrator) -> Result<Outcome<StatusFacts>> {
    let servers: Vec<ServerStatus> = o
        .config()
        .servers
        .values()
        .map(|d| server_status(o, d))
        .collect();
    Ok(Outcome {
        facts: StatusFacts {
            servers,
            config_files: config_files(o.config()),
            sessions: sessions(o),
            provenance: Provenance::Config,
        },
        resolution: None,
        complete: true,
        edits: None,
        reward: None,
    })
}

/// `lanser reload`: re-read lanser.toml; reconfigure a running session.
pub fn reload(o: &mut Orchestrator) -> Result<Outcome<ReloadFacts>> {
    let config = Config::load(&o.ws().root)?;
    let def = config.select(Some(&o.server_def().name))?.clone();
    let python = env::find_python(o.ws());
    let mut settings = deep_merge(
        env::server_settings(&o.ws().root, python.as_deref()),
        def.settings.clone(),
    );
    // The session was given the interpreter a launcher on PATH runs; so is the reload.
    if let (true, Some(probed)) = (env::launched(&settings), o.probed_python()) {
        env::point_at(&mut settings, o.ws(), probed);
    }
    let changed = settings != *o.settings();
    let reloaded = match o.session() {
        Some(s) => {
            s.update_settings(settings.clone());
            vec![Reloaded {
                server: o.server_id(),
                action: DidChangeConfiguration::METHOD.to_string(),
                settings_changed: changed,
            }]
        }
        None => vec![],
    };
    let note = if reloaded.is_empty() {
        "no running session: the one-shot CLI starts a fresh server for every command, which \
         reads lanser.toml and the files anew, so there was nothing to reload"
    } else {
        "sent the re-read settings to the running session; files are re-synced on every request"
    };
    o.reconfigure(settings, config, def);
    Ok(Outcome {
        facts: ReloadFacts {
            server: o.server_def().name.clone(),
            config_files: config_files(o.config()),
            reloaded,
            note: Some(note.to_string()),
            provenance: Provenance::Config,
        },
        resolution: None,
        complete: true,
        edits: None,
        reward: None,
    })
}
