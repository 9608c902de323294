//! `lanser def SEL`: where the symbol at the selector is defined (the goto flow of
//! [`super::positional::goto`], asked at once).

use super::positional::{goto, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{DefFacts, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::GotoDefinition;

/// Where the symbol at SELECTOR is defined
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Def {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for Def {
    const NAME: &'static str = "def";
    type Facts = DefFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let out = goto::<GotoDefinition>(o, &self.selector, Feature::Definition, Wait::No).await?;
        Ok(out.map(|definitions| DefFacts {
            definitions,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.definitions, "no definition found");
    }
}
