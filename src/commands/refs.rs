//! `lanser refs`: every reference to the symbol under the selector, across the workspace.
//!
//! Pyright answers references partially, without error, until the project is loaded, so this
//! waits for readiness first; `meta.complete` is false when the wait ran out.

use crate::error::Result;
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::json;

pub async fn run(
    o: &mut Orchestrator,
    selector: &str,
    include_declaration: bool,
) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let mut params = o.position_params(&target).await?;
    let complete = o.wait_ready().await?;
    params["context"] = json!({ "includeDeclaration": include_declaration });
    let raw = o
        .ensure_session()
        .await?
        .request("textDocument/references", params)
        .await?;
    let references = o.normalizer().locations(&raw);
    Ok(Outcome {
        facts: json!({
            "references": references,
            "count": references.len(),
            "provenance": "lsp",
        }),
        resolution: Some(o.resolution(&spec, &target)),
        complete,
        edits: None,
        reward: None,
    })
}
