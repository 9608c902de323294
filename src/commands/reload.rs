//! `lanser reload`: re-read lanser.toml and send the resulting settings to a running session
//! with `workspace/didChangeConfiguration` (files need no reload: every request re-reads its
//! file and sends `didChange` when the content hash differs). The one-shot CLI has no running
//! session — each command starts a fresh server that reads the configuration anew — so there
//! it only reports what it read and says that nothing was running; with a long-lived
//! orchestrator (batch, a daemon) it reconfigures the live server.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, ReloadFacts, Reloaded};
use crate::bundle::Bundle;
use crate::config::{deep_merge, Config};
use crate::env;
use crate::error::Result;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::notification::{DidChangeConfiguration, Notification};

/// Re-read lanser.toml and reconfigure running sessions (none in the one-shot CLI)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Reload {}

impl Operation for Reload {
    fn answered_locally(&self) -> bool {
        true
    }
    fn reconfigures(&self) -> bool {
        true
    }
    const NAME: &'static str = "reload";
    type Facts = ReloadFacts;
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        reload(o)
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::reload(page, facts);
    }
}

/// `lanser reload`: re-read lanser.toml; reconfigure a running session.
pub fn reload(o: &mut Ctx<'_>) -> Result<Outcome<ReloadFacts>> {
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
    let facts = ReloadFacts {
        server: o.server_def().name.clone(),
        config_files: super::status::config_files(o.config()),
        reloaded,
        note: Some(note.to_string()),
        provenance: Provenance::Config,
    };
    Ok(Outcome::read(facts, None, true))
}
