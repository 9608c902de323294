//! `lanser capabilities`: start the server and report what it declared in its
//! `InitializeResult` — the capabilities as sent (workspace paths made relative) and a summary
//! of the features lanser asks for, as booleans.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{CapabilitiesFacts, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::orchestrator::{capability_summary, Ctx, Outcome};

/// The server's capabilities (starts it)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Capabilities {}

impl Operation for Capabilities {
    const NAME: &'static str = "capabilities";
    type Facts = CapabilitiesFacts;
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        capabilities(o).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.line(super::show::pretty(&facts.capabilities));
    }
}

/// `lanser capabilities`: start the server and report what it declared.
pub async fn capabilities(o: &mut Ctx<'_>) -> Result<Outcome<CapabilitiesFacts>> {
    let session = o.ensure_session().await?;
    let summary = capability_summary(session.capabilities());
    let caps = session.raw_capabilities().clone();
    let raw = super::request::relativize(o.ws(), &caps);
    let facts = CapabilitiesFacts {
        server: o.server_id(),
        capabilities: raw,
        summary,
        provenance: Provenance::Lsp,
    };
    Ok(Outcome::read(facts, None, true))
}
