//! `lanser hover`: the server's hover text (signature, type, docstring) at the selector.

use crate::bundle::facts::{self, HoverFacts, Provenance};
use crate::error::Result;
use crate::lsp::typed;
use crate::orchestrator::{Orchestrator, Outcome};
use lsp_types::request::HoverRequest;
use lsp_types::HoverParams;

pub async fn run(o: &mut Orchestrator, selector: &str) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let params = HoverParams {
        text_document_position_params: o.position_params(&target).await?,
        work_done_progress_params: Default::default(),
    };
    let answer = o
        .ensure_session()
        .await?
        .request::<HoverRequest>(params)
        .await?;
    let hover = o.normalizer().hover(&typed::json(&answer));
    Ok(Outcome {
        facts: facts::to_json(&HoverFacts {
            hover: Some(hover).filter(|h| !h.is_null()),
            provenance: Provenance::Lsp,
        }),
        resolution: Some(o.resolution(&spec, &target)),
        complete: true,
        edits: None,
        reward: None,
    })
}
