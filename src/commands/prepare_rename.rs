//! `lanser prepare-rename SEL`: whether the symbol at the selector can be renamed and which
//! range a rename would change (textDocument/prepareRename, asked once the project is loaded:
//! before that Pyright refuses valid symbols).

use super::render::Page;
use super::Operation;
use crate::bundle::facts::{PrepareRenameFacts, Provenance};
use crate::bundle::Bundle;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Ctx, Outcome};
use lsp_types::request::PrepareRenameRequest;
use lsp_types::{PrepareRenameResponse, TextDocumentPositionParams};

/// Check that the symbol at SELECTOR can be renamed, and what range would change
#[derive(Debug, Clone, PartialEq, Eq, Hash, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PrepareRename {
    /// The target: path@L42:C7, path@L42:name#N, path@R(l,c->l,c), py://…, sym://…,
    /// ast://…, anchor://… or a JSON PositionSpec
    pub selector: String,
}

impl Operation for PrepareRename {
    const NAME: &'static str = "prepare-rename";
    type Facts = crate::bundle::facts::PrepareRenameFacts;
    fn selector(&self) -> Option<&str> {
        Some(&self.selector)
    }
    async fn run(&self, o: &mut Ctx<'_>) -> Result<Outcome<Self::Facts>> {
        prepare(o, &self.selector).await
    }
    fn render(facts: &Self::Facts, _: &Bundle, page: &mut Page) {
        if let Some((path, line, col)) = super::render::place_of(&facts.selector) {
            page.line(format_args!("renameable at {path}:{line}:{col}"));
        }
    }
}

/// prepareRename at the selector: the range that would be renamed, or NOT_FOUND.
pub(super) async fn prepare_range(
    o: &mut Ctx<'_>,
    params: TextDocumentPositionParams,
    selector: &str,
) -> Result<[u32; 4]> {
    let answer = o
        .ensure_session()
        .await?
        .request::<PrepareRenameRequest>(params)
        .await?;
    match answer {
        Some(PrepareRenameResponse::Range(r))
        | Some(PrepareRenameResponse::RangeWithPlaceholder { range: r, .. }) => {
            Ok([r.start.line, r.start.character, r.end.line, r.end.character])
        }
        _ => Err(LanserError::not_found(format!(
            "nothing renameable at {selector} (prepareRename refused)"
        ))),
    }
}

pub async fn prepare(o: &mut Ctx<'_>, selector: &str) -> Result<Outcome<PrepareRenameFacts>> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    // Before the project is loaded Pyright refuses prepareRename on valid symbols.
    let complete = o.wait_ready().await?;
    let range = prepare_range(o, params, selector).await?;
    let loc = o
        .normalizer()
        .location(&crate::workspace::path_to_uri(&target.doc.abs), range);
    let facts = PrepareRenameFacts {
        renameable: true,
        range,
        selector: loc.selector,
        provenance: Provenance::Lsp,
    };
    Ok(Outcome::read(
        facts,
        Some(o.resolution(&spec, &target)),
        complete,
    ))
}
