//! `lanser type-def SEL`: where the type of the symbol at the selector is defined (asked
//! once the project is loaded and the file checked: see [`super::def::run`]).

use super::def::{run, Goto};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, TypeDefFacts};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::orchestrator::{Orchestrator, Outcome};

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
    async fn run(&self, o: &mut Orchestrator) -> Result<Outcome<Self::Facts>> {
        let out = run(o, &self.selector, Goto::TypeDefinition).await?;
        Ok(out.map(|type_definitions| TypeDefFacts {
            type_definitions,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.type_definitions, "no definition found");
    }
}
