//! `lanser decl` (textDocument/declaration): where the symbol at a selector is declared — for
//! Pyright, the declaration the checker reads, a stub (`typeshed://stdlib/json/__init__.pyi`)
//! where `def` goes to the implementation; for C and C++, the header's prototype.
//! A server that does not declare `declarationProvider` gets `E/UNSUPPORTED_CAP` without the
//! request being sent.

use super::positional::{goto, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Location, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::GotoDeclaration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the symbol at SELECTOR is declared (textDocument/declaration)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Decl {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

/// The facts of `decl`.
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct DeclFacts {
    pub declarations: Vec<Location>,
    pub provenance: Provenance,
}

impl crate::bundle::facts::Facts for DeclFacts {
    const PAGED: Option<&'static str> = Some("declarations");
}

impl Operation for Decl {
    const NAME: &'static str = "decl";
    type Facts = DeclFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        // A declaration may be in another file: wait for the project, as `refs` does.
        let found =
            goto::<GotoDeclaration>(o, &self.selector, Feature::Declaration, Wait::ForProject)
                .await?;
        Ok(found.map(|declarations| DeclFacts {
            declarations,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.found(&facts.declarations, "no declaration found");
    }
}
