//! `lanser impl SEL` (textDocument/implementation): where the symbol at the selector is
//! implemented — subclass overrides, protocol members. Cross-file, so it waits for the
//! project to load.

use super::positional::{goto, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{ImplFacts, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::GotoImplementation;

/// Where the symbol at SELECTOR is implemented (textDocument/implementation)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Impl {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for Impl {
    const NAME: &'static str = "impl";
    type Facts = ImplFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let found = goto::<GotoImplementation>(
            o,
            &self.selector,
            Feature::Implementation,
            Wait::ForProject,
        )
        .await?;
        Ok(found.map(|implementations| ImplFacts {
            implementations,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.implementations, "no implementation found");
    }
}
