//! `lanser def` and `lanser type-def`: where a symbol (or its type) is defined.

use crate::error::{ErrorCode, Result};
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::json;

/// `method` is `textDocument/definition` or `textDocument/typeDefinition`; the locations are
/// kept under `key`.
pub async fn run(o: &mut Orchestrator, selector: &str, method: &str, key: &str) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    let mut complete = true;
    if method == "textDocument/typeDefinition" {
        // Pyright answers a module's type definition (`import asyncio` → its stub) only once
        // the project is loaded and the file checked; before that it answers nothing, without
        // error. Waiting for the load and asking for the file's diagnostics first makes the
        // answer independent of timing and of what was asked before (daemon, batch). A server
        // without pull diagnostics (an error answer) is then asked directly.
        complete = o.wait_ready().await?;
        let file = [target.doc.rel.clone()];
        match crate::speculate::pull(o, &file).await {
            // A server that hangs or dies here would do the same on the real request.
            Err(e) if matches!(e.code, ErrorCode::LsTimeout | ErrorCode::LsCrash) => return Err(e),
            _ => {}
        }
    }
    let raw = o.ensure_session().await?.request(method, params).await?;
    let locations = o.normalizer().locations(&raw);
    Ok(Outcome {
        facts: json!({ key: locations, "provenance": "lsp" }),
        resolution: Some(o.resolution(&spec, &target)),
        complete,
        edits: None,
        reward: None,
    })
}
