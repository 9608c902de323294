//! `lanser def` and `lanser type-def`: where a symbol (or its type) is defined.

use crate::error::Result;
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::json;

/// `method` is `textDocument/definition` or `textDocument/typeDefinition`; the locations are
/// kept under `key`.
pub async fn run(o: &mut Orchestrator, selector: &str, method: &str, key: &str) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    let raw = o.ensure_session().await?.request(method, params).await?;
    let locations = o.normalizer().locations(&raw);
    Ok(Outcome {
        facts: json!({ key: locations, "provenance": "lsp" }),
        resolution: Some(o.resolution(&spec, &target)),
        complete: true,
        edits: None,
        reward: None,
    })
}
