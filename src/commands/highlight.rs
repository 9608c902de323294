//! `lanser highlight SEL` (textDocument/documentHighlight): every occurrence of the symbol at
//! the selector in its file, read or write, sorted by range — and the same view of a raw
//! `request`'s answer.

use super::positional::{ask, Wait};
use super::render::Page;
use super::Operation;
use crate::bundle::facts::{self, HighlightFacts, HighlightKind, Provenance};
use crate::bundle::normalize::typed::range;
use crate::bundle::Bundle;
use crate::error::Result;
use crate::lsp::capabilities::Feature;
use crate::orchestrator::{Ctx, Outcome};
use crate::workspace::path_to_uri;
use lsp_types::request::DocumentHighlightRequest;
use lsp_types::{DocumentHighlightKind, DocumentHighlightParams};
use serde_json::Value;

/// Every occurrence of the symbol at SELECTOR in its file, read or write
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Highlight {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for Highlight {
    const NAME: &'static str = "highlight";
    type Facts = HighlightFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        let asked = ask::<DocumentHighlightRequest>(
            o,
            &self.selector,
            Feature::DocumentHighlight,
            Wait::No,
            |at| DocumentHighlightParams {
                text_document_position_params: at,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            },
        )
        .await?;
        let found = asked.answer.iter().flatten().map(|h| {
            let kind = match h.kind {
                Some(DocumentHighlightKind::READ) => Some(2),
                Some(DocumentHighlightKind::WRITE) => Some(3),
                _ => None,
            };
            (range(&h.range), kind)
        });
        let highlights = highlighted(o, &path_to_uri(&asked.target.doc.abs), found);
        let path = asked.target.doc.rel.clone();
        Ok(asked.outcome(HighlightFacts {
            path,
            highlights,
            provenance: Provenance::Lsp,
        }))
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::show::highlight(page, facts);
    }
}

fn highlight_kind(k: Option<u64>) -> (&'static str, HighlightKind) {
    match k {
        Some(2) => ("read", HighlightKind::Read),
        Some(3) => ("write", HighlightKind::Write),
        _ => ("text", HighlightKind::Text),
    }
}

/// Highlights of the document at `uri` from a raw `request`'s answer (JSON): see
/// `highlighted`.
pub fn highlights(o: &Ctx<'_>, uri: &str, raw: &Value) -> Vec<facts::Highlight> {
    let found = raw.as_array().into_iter().flatten().filter_map(|h| {
        let r = h.get("range")?;
        let n4 = |p: &str| r.pointer(p).and_then(Value::as_u64).unwrap_or(0) as u32;
        let range = [
            n4("/start/line"),
            n4("/start/character"),
            n4("/end/line"),
            n4("/end/character"),
        ];
        Some((range, h.get("kind").and_then(Value::as_u64)))
    });
    highlighted(o, uri, found)
}

/// Highlights of the document at `uri` from their server ranges and kind numbers, sorted by
/// range (then kind, by name): `{path, range, kind, selector}`.
fn highlighted(
    o: &Ctx<'_>,
    uri: &str,
    found: impl Iterator<Item = ([u32; 4], Option<u64>)>,
) -> Vec<facts::Highlight> {
    let mut n = o.normalizer();
    type Found = (crate::bundle::normalize::Loc, (&'static str, HighlightKind));
    let mut out: Vec<Found> = found
        .map(|(range, kind)| (n.location(uri, range), highlight_kind(kind)))
        .collect();
    out.sort_by(|a, b| (&a.0, a.1 .0).cmp(&(&b.0, b.1 .0)));
    out.dedup();
    out.into_iter()
        .map(|(loc, (_, kind))| facts::Highlight::new(loc, kind))
        .collect()
}
