//! `lanser type-def SEL`: where the type of the symbol at the selector is defined (asked
//! once the project is loaded and the file checked: [`Wait::Checked`]).

use super::positional::{goto, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, TypeDefFacts};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::GotoTypeDefinition;

/// Where the type of the symbol at SELECTOR is defined
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct TypeDef {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for TypeDef {
    const NAME: &'static str = "type-def";
    type Facts = TypeDefFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let feature = Feature::TypeDefinition;
        let out = goto::<GotoTypeDefinition>(o, &self.selector, feature, Wait::Checked).await?;
        Ok(out.map(|type_definitions| TypeDefFacts {
            type_definitions,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.type_definitions, "no definition found");
    }
}
