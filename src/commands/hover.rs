//! `lanser hover`: the server's hover text (signature, type, docstring) at the selector.

use crate::error::Result;
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::json;

pub async fn run(o: &mut Orchestrator, selector: &str) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    let raw = o
        .ensure_session()
        .await?
        .request("textDocument/hover", params)
        .await?;
    Ok(Outcome {
        facts: json!({ "hover": o.normalizer().hover(&raw), "provenance": "lsp" }),
        resolution: Some(o.resolution(&spec, &target)),
        complete: true,
        edits: None,
        reward: None,
    })
}
