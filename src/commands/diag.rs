//! `lanser diag [FILE|GLOB …]`: diagnostics per file, pulled (`textDocument/diagnostic`)
//! after the project has loaded; no target means every Python file of the workspace.

use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Outcome};
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// The workspace-relative files the targets name, sorted and deduplicated.
fn files(o: &Orchestrator, targets: &[String]) -> Result<Vec<String>> {
    let all = || o.ws.python_files();
    if targets.is_empty() {
        return Ok(all());
    }
    let mut out = BTreeSet::new();
    let mut listing: Option<Vec<String>> = None;
    for t in targets {
        if is_glob(t) {
            let pattern = glob::Pattern::new(t.trim_start_matches("./"))
                .map_err(|e| LanserError::usage(format!("bad glob {t}: {e}")))?;
            let files = listing.get_or_insert_with(all);
            let matched: Vec<&String> = files.iter().filter(|f| pattern.matches(f)).collect();
            if matched.is_empty() {
                return Err(LanserError::not_found(format!(
                    "glob {t} matches no Python file"
                )));
            }
            out.extend(matched.into_iter().cloned());
        } else {
            out.insert(o.ws.resolve_user_path(t, &o.opts.cwd)?.1);
        }
    }
    Ok(out.into_iter().collect())
}

pub async fn run(o: &mut Orchestrator, targets: &[String]) -> Result<Outcome> {
    let files = files(o, targets)?;
    let complete = o.wait_ready().await?;
    let mut diagnostics: Vec<Value> = crate::speculate::pull(o, &files)
        .await?
        .into_values()
        .flatten()
        .collect();
    crate::bundle::normalize::sort_by_location(&mut diagnostics);
    let count = |sev: &str| diagnostics.iter().filter(|d| d["severity"] == sev).count();
    let counts = json!({
        "error": count("error"),
        "warning": count("warning"),
        "information": count("information"),
        "hint": count("hint"),
    });
    Ok(Outcome {
        facts: json!({
            "files": files,
            "diagnostics": diagnostics,
            "counts": counts,
            "provenance": "lsp",
        }),
        resolution: None,
        complete,
        edits: None,
        reward: Some(crate::reward::Measured {
            d_prev: None,
            d_now: Some((count("error") + count("warning")) as u64),
            safety: 1,
        }),
    })
}
