//! `lanser prepare-rename SEL` and `lanser rename SEL NEW [--dry-run | --apply]` (paper
//! Algorithm 2): gated by prepareRename, previewed as a unified diff and a normalized
//! WorkspaceEdit, applied only through the safety envelope, and never from an answer the
//! server gave before the project was loaded.

use super::mutate::{self, MutationArgs};
use crate::edits::check_name;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::{json, Value};

/// prepareRename at the selector: the range that would be renamed, or NOT_FOUND.
async fn prepare_range(o: &mut Orchestrator, params: Value, selector: &str) -> Result<[u32; 4]> {
    let raw = o
        .ensure_session()
        .await?
        .request("textDocument/prepareRename", params)
        .await?;
    let range = raw.get("range").unwrap_or(&raw);
    let n = |p: &str| range.pointer(p).and_then(Value::as_u64).map(|v| v as u32);
    match (
        n("/start/line"),
        n("/start/character"),
        n("/end/line"),
        n("/end/character"),
    ) {
        (Some(a), Some(b), Some(c), Some(d)) => Ok([a, b, c, d]),
        _ => Err(LanserError::not_found(format!(
            "nothing renameable at {selector} (prepareRename refused)"
        ))),
    }
}

pub async fn prepare(o: &mut Orchestrator, selector: &str) -> Result<Outcome> {
    let (spec, target) = o.resolve(selector)?;
    let params = o.position_params(&target).await?;
    // Before the project is loaded Pyright refuses prepareRename on valid symbols.
    let complete = o.wait_ready().await?;
    let range = prepare_range(o, params, selector).await?;
    let loc = o
        .normalizer()
        .location(&crate::workspace::path_to_uri(&target.doc.abs), range);
    Ok(Outcome {
        facts: json!({ "renameable": true, "range": range, "selector": loc.selector, "provenance": "lsp" }),
        resolution: Some(o.resolution(&spec, &target)),
        complete,
        edits: None,
        reward: None,
    })
}

pub async fn rename(
    o: &mut Orchestrator,
    selector: &str,
    new_name: &str,
    m: &MutationArgs,
) -> Result<Outcome> {
    check_name(new_name)?;
    let (spec, target) = o.resolve(selector)?;
    let mut params = o.position_params(&target).await?;
    let complete = o.wait_ready().await?;
    let range = prepare_range(o, params.clone(), selector).await?;
    params["newName"] = json!(new_name);
    let raw = o
        .ensure_session()
        .await?
        .request("textDocument/rename", params)
        .await?;
    if raw.is_null() {
        return Err(LanserError::not_found(format!(
            "the server offered no rename at {selector}"
        )));
    }
    let plan = mutate::plan(o, m, &raw)?;
    let resolution = o.resolution(&spec, &target);
    let (measured, delta) = mutate::speculate(o, m, &plan, complete, Some(&resolution)).await?;
    let applied = mutate::maybe_apply(o, m, &plan, complete, Some(&resolution))?;
    Ok(Outcome {
        facts: json!({
            "newName": new_name,
            "range": range,
            "files": plan.touched(),
            "editCount": plan.edit_count(),
            "applied": applied,
            "speculativeDiagnostics": delta,
            "provenance": "lsp",
        }),
        resolution: Some(resolution),
        complete,
        edits: Some(mutate::edits_of(&plan)),
        reward: Some(measured),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_must_be_identifiers() {
        for ok in ["read_data", "_x", "面积", "A1"] {
            assert!(crate::edits::check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1a", "a-b", "class", "a b"] {
            assert!(crate::edits::check_name(bad).is_err(), "{bad}");
        }
    }
}
