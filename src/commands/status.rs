//! `lanser status`: the configured servers, their resolved commands and installed versions,
//! the configuration files read and the running sessions. Starts nothing and installs nothing.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{ConfigFile, Provenance, ServerStatus, SessionInfo, StatusFacts};
use crate::bundle::Bundle;
use crate::config::{Config, ServerDef};
use crate::error::Result;
use crate::orchestrator::{Ctx, Outcome};
use crate::servers;

/// Configured servers, their resolved commands and versions (starts nothing)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Status {}

impl Operation for Status {
    fn answered_locally(&self) -> bool {
        true
    }
    const NAME: &'static str = "status";
    type Facts = StatusFacts;
    /// It reads the configuration and the installs; whether a server already runs (in a
    /// daemon or a batch) must not change its bundle.
    fn uses_server(&self) -> bool {
        false
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        status(o)
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::status(page, facts);
    }
}

/// A path with the cache directory spelled `$LANSER_HOME`, so reports do not depend on it.
fn shown(path: &str) -> String {
    let home = crate::home::lanser_home().to_string_lossy().into_owned();
    match path.strip_prefix(&home) {
        Some(rest) => format!("$LANSER_HOME{rest}"),
        None => path.to_string(),
    }
}

fn server_status(o: &Ctx<'_>, def: &ServerDef) -> ServerStatus {
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

pub(super) fn config_files(config: &Config) -> Vec<ConfigFile> {
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

fn sessions(o: &Ctx<'_>) -> Vec<SessionInfo> {
    o.session()
        .as_ref()
        .map(|_| SessionInfo {
            server: o.server_id(),
        })
        .into_iter()
        .collect()
}

/// `lanser status`: no server is started; nothing is installed.
pub fn status(o: &Ctx<'_>) -> Result<Outcome<StatusFacts>> {
    let servers: Vec<ServerStatus> = o
        .config()
        .servers
        .values()
        .map(|d| server_status(o, d))
        .collect();
    let facts = StatusFacts {
        servers,
        config_files: config_files(o.config()),
        sessions: sessions(o),
        provenance: Provenance::Config,
    };
    Ok(Outcome::read(facts, None, true))
}
