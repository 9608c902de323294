//! The baseline of pr-v2's remaining term: the diagnostics the measured files have at git
//! HEAD — where an agent's episode started — so that the run-time errors a step leaves are
//! counted only when the episode brought them (a partial fix, a breakage not yet repaired),
//! never the ones the project had already (a server's false positives, a known bug).
//!
//! A clean worktree's HEAD diagnostics are the ones measured before the step, at no cost.
//! Otherwise the modified tracked files are shown to the server at their HEAD text, the
//! measured files and the importers the step skipped pulled, the disk text shown again.
//! Outside git, the baseline is the state before the step. The status and the HEAD texts
//! ([`crate::git`]) are read through [`crate::inputs`], so a trace records them and a replay
//! serves them.

use crate::error::Result;
use crate::git::{modified, text_at};
use crate::measure::speculate::{self, breaks_at_run_time, with_text, DiagMap, Speculation};
use crate::orchestrator::Cx;
use crate::selector::resolve::Document;
use crate::workspace::path_to_uri;
use std::collections::BTreeMap;

/// R_now: the run-time errors the step leaves that git HEAD does not have, over the files the
/// step re-checked and its skipped importers (docs/reward.md#d-what-is-counted).
///
/// A skipped importer is not in `spec` (its diagnostics cannot change, so the speculation does
/// not pull it), but an earlier edit of the episode may have broken it: in a tree that differs
/// from HEAD it is pulled here (its diagnostics after the step are the ones now) and at HEAD,
/// so the term counts it as a full re-check would. In a clean tree (or outside git) its HEAD
/// diagnostics are its diagnostics now, so it adds nothing and is not pulled.
pub async fn remaining(cx: &mut Cx<'_>, spec: &Speculation) -> Result<u64> {
    let root = cx.ws().root.clone();
    let Ok(list) = cx
        .opts()
        .inputs
        .read_to_string("git:modified", ".", || modified(&root))
    else {
        return Ok(new_runtime_errors(&spec.before, &spec.after));
    };
    let mut swaps: Vec<(Document, Document)> = Vec::new();
    for rel in list.lines().filter(|l| !l.is_empty()) {
        let Ok(head) = cx
            .opts()
            .inputs
            .read_to_string("git:HEAD", rel, || text_at(&root, "HEAD", rel))
        else {
            continue;
        };
        if let Ok(doc) = Document::load(root.join(rel), rel.to_string()) {
            let shown = with_text(&doc, &head);
            swaps.push((doc, shown));
        }
    }
    if swaps.is_empty() {
        return Ok(new_runtime_errors(&spec.before, &spec.after));
    }
    let skipped: Vec<String> = spec
        .checked
        .skipped
        .iter()
        .map(|s| s.path.clone())
        .filter(|p| !spec.files.contains(p))
        .collect();
    let mut after = spec.after.clone();
    after.extend(speculate::pull(cx, &skipped).await?);
    let mut files = spec.files.clone();
    files.extend(skipped);
    let show = |cx: &Cx<'_>, head: bool| {
        if let Some(session) = cx.started() {
            for (disk, at_head) in &swaps {
                let doc = if head { at_head } else { disk };
                session.sync_document(&path_to_uri(&disk.abs), doc);
            }
        }
    };
    show(cx, true);
    let pulled = speculate::pull(cx, &files).await;
    show(cx, false);
    Ok(new_runtime_errors(&pulled?, &after))
}

/// Run-time errors in `after` that `baseline` does not have (matched by file, rule and
/// message, as many times as they occur).
pub fn new_runtime_errors(baseline: &DiagMap, after: &DiagMap) -> u64 {
    let key = |path: &str, d: &crate::bundle::facts::Diagnostic| {
        (
            path.to_string(),
            d.code.clone().unwrap_or_default(),
            d.message.clone(),
        )
    };
    let mut pool: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for (path, list) in baseline {
        for d in list.iter().filter(|d| breaks_at_run_time(d)) {
            *pool.entry(key(path, d)).or_default() += 1;
        }
    }
    let mut n = 0;
    for (path, list) in after {
        for d in list.iter().filter(|d| breaks_at_run_time(d)) {
            match pool.get_mut(&key(path, d)) {
                Some(c) if *c > 0 => *c -= 1,
                _ => n += 1,
            }
        }
    }
    n
}
