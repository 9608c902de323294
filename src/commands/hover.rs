//! `lanser hover`: the server's hover text (signature, type, docstring) at the selector.

use super::positional::{ask, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{HoverFacts, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::HoverRequest;
use lsp_types::HoverParams;

/// Type, signature and documentation at SELECTOR
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Hover {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for Hover {
    const NAME: &'static str = "hover";
    type Facts = HoverFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.selector).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        match facts.hover.as_ref().map(|h| h.value.as_str()) {
            Some(v) => page.line(v.trim_end()),
            None => page.line("no hover information"),
        }
    }
}

pub async fn run(o: &mut Ctx<'_>, selector: &str) -> Result<Outcome<HoverFacts>> {
    let asked = ask::<HoverRequest>(o, selector, Feature::Hover, Wait::No, |at| HoverParams {
        text_document_position_params: at,
        work_done_progress_params: Default::default(),
    })
    .await?;
    let hover = o.normalizer().hover_of(&asked.answer);
    Ok(asked.outcome(HoverFacts {
        hover,
        provenance: Provenance::Lsp,
    }))
}
