//! `lanser check --patch FILE.diff`: what the server would say if an agent's patch were
//! applied — the patch is applied to the server's in-memory documents only, diagnostics are
//! collected for the patched files and their importers, the originals restored. Disk is
//! never written. The delta per file matches diagnostics by severity, code and message.

use crate::edits::patch;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Outcome};
use crate::reward::Measured;
use crate::selector::resolve::Document;
use crate::speculate;
use serde_json::json;
use std::io::Read;

/// The patch text: from the file (or stdin), or at replay from the trace.
pub(crate) fn read_patch(o: &Orchestrator, path: &str) -> Result<String> {
    let abs = o.opts.cwd.join(path);
    let text = o.opts.inputs.read_to_string("--patch", path, || {
        if path == "-" {
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes).map(|_| bytes)
        } else {
            std::fs::read(&abs)
        }
    });
    text.map_err(|e| match path {
        "-" => LanserError::usage(format!("cannot read the patch from stdin: {e}")),
        _ => LanserError::not_found(format!("patch {path}: {e}")),
    })
}

pub async fn run(o: &mut Orchestrator, patch_path: &str) -> Result<Outcome> {
    let text = read_patch(o, patch_path)?;
    let files = patch::parse(&text)?;
    let mut changes = Vec::new();
    for fp in &files {
        let (abs, rel) = o.ws.resolve_user_path(&fp.path, &o.opts.cwd)?;
        let doc = Document::load(abs, rel)?;
        let new = patch::apply(&doc.rel, &doc.text, fp)?;
        changes.push((doc, new));
    }
    let complete = o.wait_ready().await?;
    let spec = speculate::speculate(o, &changes).await?;
    let (before, after) = (
        speculate::count(&spec.before),
        speculate::count(&spec.after),
    );
    let mut measured = Measured {
        d_prev: Some(before),
        d_now: Some(after),
        safety: 1,
        ..Default::default()
    };
    if o.opts.reward.is_v2() {
        measured.v2 = super::structural::measure_v2(o, &spec, &changes).await?;
    }
    Ok(Outcome {
        facts: json!({
            "patched": changes.iter().map(|(d, _)| d.rel.clone()).collect::<Vec<_>>(),
            "files": speculate::delta(&spec),
            "before": before,
            "after": after,
            "provenance": "lsp",
        }),
        resolution: None,
        complete,
        edits: None,
        reward: Some(measured),
    })
}
