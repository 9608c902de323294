//! The baseline of pr-v2's remaining term: the diagnostics the measured files have at git
//! HEAD — where an agent's episode started — so that the run-time errors a step leaves are
//! counted only when the episode brought them (a partial fix, a breakage not yet repaired),
//! never the ones the project had already (a server's false positives, a known bug).
//!
//! A clean worktree's HEAD diagnostics are the ones measured before the step, at no cost.
//! Otherwise the modified tracked files are shown to the server at their HEAD text, the
//! measured files pulled, the disk text shown again. Outside git, the baseline is the state
//! before the step. The status and the HEAD texts are read through [`crate::inputs`], so a
//! trace records them and a replay serves them.

use crate::error::Result;
use crate::orchestrator::Orchestrator;
use crate::selector::resolve::Document;
use crate::speculate::{self, breaks_at_run_time, with_text, DiagMap, Speculation};
use crate::workspace::path_to_uri;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

fn git_error(e: git2::Error) -> io::Error {
    io::Error::other(e.message().to_string())
}

/// Modified tracked Python files under `root` (workspace-relative), one per line.
fn modified(root: &Path) -> io::Result<Vec<u8>> {
    let repo = git2::Repository::discover(root).map_err(git_error)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| io::Error::other("bare repository"))?
        .to_path_buf();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(false).include_ignored(false);
    let statuses = repo.statuses(Some(&mut opts)).map_err(git_error)?;
    let root = root.canonicalize()?;
    let workdir = workdir.canonicalize()?;
    let mut out: Vec<String> = statuses
        .iter()
        .filter(|s| {
            s.status()
                .intersects(git2::Status::WT_MODIFIED | git2::Status::INDEX_MODIFIED)
        })
        .filter_map(|s| {
            let p = workdir.join(s.path().ok()?);
            let rel = p.strip_prefix(&root).ok()?.to_string_lossy().into_owned();
            (rel.ends_with(".py") || rel.ends_with(".pyi")).then_some(rel)
        })
        .collect();
    out.sort();
    Ok(out.join("\n").into_bytes())
}

/// A file's text at HEAD.
fn head_text(root: &Path, rel: &str) -> io::Result<Vec<u8>> {
    let repo = git2::Repository::discover(root).map_err(git_error)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| io::Error::other("bare repository"))?
        .canonicalize()?;
    let abs = root.canonicalize()?.join(rel);
    let in_repo = abs
        .strip_prefix(&workdir)
        .map_err(|_| io::Error::other("outside the repository"))?;
    let tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(git_error)?;
    let entry = tree.get_path(in_repo).map_err(git_error)?;
    let blob = repo.find_blob(entry.id()).map_err(git_error)?;
    Ok(blob.content().to_vec())
}

/// The measured files' diagnostics at HEAD.
pub async fn at_head(o: &mut Orchestrator, spec: &Speculation) -> Result<DiagMap> {
    let root = o.ws().root.clone();
    let Ok(list) = o
        .opts()
        .inputs
        .read_to_string("git:modified", ".", || modified(&root))
    else {
        return Ok(spec.before.clone());
    };
    let mut swaps: Vec<(Document, Document)> = Vec::new();
    for rel in list.lines().filter(|l| !l.is_empty()) {
        let Ok(head) = o
            .opts()
            .inputs
            .read_to_string("git:HEAD", rel, || head_text(&root, rel))
        else {
            continue;
        };
        if let Ok(doc) = Document::load(root.join(rel), rel.to_string()) {
            let shown = with_text(&doc, &head);
            swaps.push((doc, shown));
        }
    }
    if swaps.is_empty() {
        return Ok(spec.before.clone());
    }
    let show = |o: &Orchestrator, head: bool| {
        if let Some(session) = o.session() {
            for (disk, at_head) in &swaps {
                let doc = if head { at_head } else { disk };
                session.sync_document(&path_to_uri(&disk.abs), doc);
            }
        }
    };
    show(o, true);
    let pulled = speculate::pull(o, &spec.files).await;
    show(o, false);
    pulled
}

/// Run-time errors in `after` that `baseline` does not have (matched by file, rule and
/// message, as many times as they occur).
pub fn new_runtime_errors(baseline: &DiagMap, after: &DiagMap) -> u64 {
    let key = |path: &str, d: &serde_json::Value| {
        (
            path.to_string(),
            d["code"].as_str().unwrap_or_default().to_string(),
            d["message"].as_str().unwrap_or_default().to_string(),
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
