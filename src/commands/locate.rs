//! `lanser locate SELECTOR [--preview]`: resolve a selector (any form) to a concrete range
//! without asking the server; `--preview` adds the lines it covers. A structural selector also
//! names its symbol: module, qualname, kind, signature shape and the stable `symbolId` (so
//! does a cursor on a definition's name). `selectors` offers durable forms of the target: the
//! `py://` (`sym://` in other languages) of the definition named there, and a hashed anchor, both with `docVersion`.

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{DurableSelectors, LocateFacts, LocateTarget, PreviewLine, Provenance};
use crate::bundle::Bundle;
use crate::error::Result;
use crate::orchestrator::{Ctx, Outcome};
use crate::relocate::durable;

/// Resolve SELECTOR to a range without asking the server
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Locate {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
    /// Show the lines the range covers
    #[arg(long)]
    pub preview: bool,
}

impl Operation for Locate {
    fn answered_locally(&self) -> bool {
        true
    }
    const NAME: &'static str = "locate";
    type Facts = LocateFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    fn uses_server(&self) -> bool {
        false
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        run(o, &self.selector, self.preview)
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        super::render::locate(page, facts);
    }
}

pub fn run(o: &mut Ctx<'_>, selector: &str, preview: bool) -> Result<Outcome<LocateFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let resolution = o.resolution(&spec, &target);
    let doc = &target.doc;
    let (first, _) = doc.position(target.start, o.opts().index_io);
    let (last, _) = doc.position(target.end, o.opts().index_io);
    let lines: Vec<_> = (first..=last)
        .map(|l| PreviewLine {
            line: l as u64 + 1,
            text: doc.index.line_text(&doc.text, l).unwrap_or_default().into(),
        })
        .collect();
    let at = durable::symbol_at(o.ws(), o.parse_cache(), doc, target.start);
    let symbol = target
        .evidence
        .as_ref()
        .and_then(|ev| ev.candidates.first())
        .and_then(|c| c.symbol.clone())
        .or_else(|| at.as_ref().map(|(info, _)| info.clone()));
    let selectors = DurableSelectors {
        symbol: at.map(|(_, sel)| sel),
        anchor: durable::anchor_for(doc, target.start, target.end),
    };
    let loc = o.normalizer().location(
        &crate::workspace::path_to_uri(&doc.abs),
        resolution.resolved.range,
    );
    Ok(Outcome::read(
        LocateFacts {
            target: LocateTarget {
                path: doc.rel.clone(),
                range: resolution.resolved.range,
                selector: loc.selector,
                text: doc.text[target.start..target.end].to_string(),
                preview: preview.then_some(lines),
            },
            symbol,
            selectors,
            provenance: Provenance::Parser,
        },
        Some(resolution),
        true,
    ))
}
