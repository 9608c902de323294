//! `lanser refs`: every reference to the symbol under the selector, across the workspace.
//!
//! Pyright answers references partially, without error, until the project is loaded, so this
//! waits for readiness first; `meta.complete` is false when the wait ran out.

use super::positional::{ask, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Provenance, RefsFacts};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::References;
use lsp_types::{ReferenceContext, ReferenceParams};

/// Every reference to the symbol at SELECTOR
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Refs {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Leave the declaration itself out
    #[arg(long)]
    #[serde(
        rename = "include-declaration",
        serialize_with = "super::negated",
        deserialize_with = "super::unnegated"
    )]
    pub exclude_declaration: bool,
}

impl Operation for Refs {
    const NAME: &'static str = "refs";
    type Facts = RefsFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.selector, !self.exclude_declaration).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        page.locations(&facts.references, 50);
        page.line(format_args!("{} references", facts.references.len()));
    }
}

pub async fn run(
    o: &mut Ctx<'_>,
    selector: &str,
    include_declaration: bool,
) -> Result<Outcome<RefsFacts>> {
    let asked = ask::<References>(o, selector, Feature::References, Wait::ForProject, |at| {
        ReferenceParams {
            text_document_position: at,
            context: ReferenceContext {
                include_declaration,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        }
    })
    .await?;
    let references = o.normalizer().references(&asked.answer);
    Ok(asked.outcome(RefsFacts {
        count: references.len() as u64,
        references,
        provenance: Provenance::Lsp,
    }))
}
