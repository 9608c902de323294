//! Diagnostics from typescript-language-server, which only publishes them and skips an
//! unchanged empty list (so a publish may never come): lanser asks tsserver itself through
//! the server's `typescript.tsserverRequest` command — the syntactic, semantic and suggestion
//! diagnostics of one open file, answered synchronously — and converts them to LSP
//! diagnostics the way typescript-language-server converts what it publishes.

use super::session::Session;
use crate::error::{LanserError, Result};
use lsp_types::request::ExecuteCommand;
use lsp_types::{ExecuteCommandParams, ServerCapabilities};
use serde_json::{json, Value};

/// The command typescript-language-server offers for raw tsserver requests.
pub const COMMAND: &str = "typescript.tsserverRequest";

/// Whether the server's capabilities offer [`COMMAND`].
pub fn offered(capabilities: &ServerCapabilities) -> bool {
    capabilities
        .execute_command_provider
        .as_ref()
        .is_some_and(|c| c.commands.iter().any(|c| c == COMMAND))
}

/// The diagnostics of the open document `uri`, as a pull's full report.
pub async fn diagnostics(session: &Session, uri: &str) -> Result<Value> {
    let path = crate::workspace::uri_to_path(uri)
        .ok_or_else(|| LanserError::internal(format!("not a file URI: {uri}")))?;
    let mut items = Vec::new();
    for kind in [
        "syntacticDiagnosticsSync",
        "semanticDiagnosticsSync",
        "suggestionDiagnosticsSync",
    ] {
        let answer = session
            .request::<ExecuteCommand>(ExecuteCommandParams {
                command: COMMAND.to_string(),
                arguments: vec![json!(kind), json!({ "file": path })],
                work_done_progress_params: Default::default(),
            })
            .await?
            .unwrap_or(Value::Null);
        let body = answer.get("body").and_then(Value::as_array);
        items.extend(body.into_iter().flatten().map(to_lsp));
    }
    Ok(json!({"kind": "full", "items": items}))
}

/// One tsserver diagnostic (1-based line and utf-16 offset) as an LSP diagnostic.
fn to_lsp(d: &Value) -> Value {
    let at = |key: &str| {
        let n = |k: &str| d.pointer(&format!("/{key}/{k}")).and_then(Value::as_u64);
        json!({
            "line": n("line").unwrap_or(1).saturating_sub(1),
            "character": n("offset").unwrap_or(1).saturating_sub(1),
        })
    };
    let severity = match d["category"].as_str() {
        Some("error") => 1,
        Some("warning") => 2,
        Some("suggestion") => 4,
        _ => 3,
    };
    let mut out = json!({
        "range": {"start": at("start"), "end": at("end")},
        "severity": severity,
        "code": d["code"],
        "source": "typescript",
        "message": d["text"],
    });
    let mut tags = Vec::new();
    if d["reportsUnnecessary"] == true {
        tags.push(1);
    }
    if d["reportsDeprecated"] == true {
        tags.push(2);
    }
    if !tags.is_empty() {
        out["tags"] = json!(tags);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsserver_diagnostic_becomes_an_lsp_one() {
        let d = json!({
            "start": {"line": 4, "offset": 7}, "end": {"line": 4, "offset": 12},
            "text": "'count' is declared but its value is never read.",
            "code": 6133, "category": "suggestion", "reportsUnnecessary": true
        });
        assert_eq!(
            to_lsp(&d),
            json!({
                "range": {"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 11}},
                "severity": 4, "code": 6133, "source": "typescript",
                "message": "'count' is declared but its value is never read.", "tags": [1]
            })
        );
        let caps = json!({"executeCommandProvider": {"commands": ["_x", COMMAND]}});
        assert!(offered(&crate::lsp::capabilities::parse(&caps)));
        assert!(!offered(&ServerCapabilities::default()));
    }
}
