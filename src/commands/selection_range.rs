//! `lanser selection-range SEL` (textDocument/selectionRange): the syntactic ranges that
//! enclose the selector's position, innermost first — the name, the expression, the
//! statement, the block, the function, the class, the file — as an editor's "expand
//! selection" walks them. Each is a location with the selector of its start, so an agent can
//! name the enclosing statement or block without counting lines. A server that does not
//! declare `selectionRangeProvider` (Pyright) gets `E/UNSUPPORTED_CAP` without the request
//! being sent.

use super::positional::{ask, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{Location, Provenance};
use crate::bundle::normalize::typed::range;
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::SelectionRangeRequest;
use lsp_types::SelectionRangeParams;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The ranges enclosing SELECTOR, innermost first (textDocument/selectionRange)
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SelectionRange {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

/// The facts of `selection-range`.
#[derive(JsonSchema, Serialize, Deserialize)]
pub struct SelectionRangeFacts {
    /// The file the ranges are in.
    pub path: String,
    /// Innermost first; each range contains the one before it.
    pub ranges: Vec<Location>,
    pub provenance: Provenance,
}

impl crate::bundle::facts::Facts for SelectionRangeFacts {}

impl Operation for SelectionRange {
    const NAME: &'static str = "selection-range";
    type Facts = SelectionRangeFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let asked = ask::<SelectionRangeRequest>(
            o,
            &self.selector,
            Feature::SelectionRange,
            Wait::No,
            |at| SelectionRangeParams {
                text_document: at.text_document,
                positions: vec![at.position],
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            },
        )
        .await?;
        let uri = path_to_uri(&asked.target.doc.abs);
        let mut n = o.normalizer();
        let mut ranges = Vec::new();
        // One position asked, so one answer: its chain of parents, innermost first.
        let mut next = asked.answer.iter().flatten().next();
        while let Some(step) = next {
            let loc = n.location(&uri, range(&step.range));
            if ranges.last() != Some(&loc) {
                ranges.push(loc);
            }
            next = step.parent.as_deref();
        }
        let path = asked.target.doc.rel.clone();
        Ok(asked.outcome(SelectionRangeFacts {
            path,
            ranges,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        if facts.ranges.is_empty() {
            page.line("no enclosing range");
        }
        for (depth, r) in facts.ranges.iter().enumerate() {
            let [sl, sc, el, ec] = r.range;
            page.line(format_args!(
                "{:indent$}{}:{}:{}-{}:{}",
                "",
                r.path,
                sl + 1,
                sc + 1,
                el + 1,
                ec + 1,
                indent = depth * 2
            ));
        }
    }
}
