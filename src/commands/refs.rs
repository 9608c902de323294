//! `lanser refs`: every reference to the symbol under the selector, across the workspace.
//!
//! Pyright answers references partially, without error, until the project is loaded, so this
//! waits for readiness first; `meta.complete` is false when the wait ran out.

use crate::bundle::facts::{self, Provenance, RefsFacts};
use crate::error::Result;
use crate::lsp::typed;
use crate::orchestrator::{Orchestrator, Outcome};
use lsp_types::request::References;
use lsp_types::{ReferenceContext, ReferenceParams};

pub async fn run(
    o: &mut Orchestrator,
    selector: &str,
    include_declaration: bool,
) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let params = ReferenceParams {
        text_document_position: o.position_params(&target).await?,
        context: ReferenceContext {
            include_declaration,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let complete = o.wait_ready().await?;
    let answer = o
        .ensure_session()
        .await?
        .request::<References>(params)
        .await?;
    let references = o.normalizer().locations(&typed::json(&answer));
    Ok(Outcome {
        facts: facts::to_json(&RefsFacts {
            count: references.len() as u64,
            references,
            provenance: Provenance::Lsp,
        }),
        resolution: Some(o.resolution(&spec, &target)),
        complete,
        edits: None,
        reward: None,
    })
}
