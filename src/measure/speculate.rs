//! Speculative diagnostics (docs/reward.md#d-what-is-counted): what the server would report
//! if a change were made,
//! measured on its in-memory documents only — didChange to the new text, pull diagnostics for
//! the touched files and the workspace files that import them ([`crate::python::importers`]:
//! only those the change can alter, as [`super::scope`] tells; the others are not pulled at
//! all), didChange back — unless a write follows ([`Leave::Changed`]).
//! Nothing is written to disk.

use super::fresh::Cuts;
use super::scope::{Scope, Settled};
use crate::bundle::facts::{Checked, Diagnostic, FileDelta, Severity};
use crate::error::Result;
use crate::orchestrator::Cx;
use crate::reward::v2::Tally;
use crate::selector::resolve::Document;
use crate::workspace::path_to_uri;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Normalized diagnostics per file (workspace-relative path → sorted facts).
pub type DiagMap = BTreeMap<String, Vec<Diagnostic>>;

/// Pull the diagnostics of `files` as the server sees them now.
pub async fn pull(cx: &mut Cx<'_>, files: &[String]) -> Result<DiagMap> {
    let mut out = DiagMap::new();
    for rel in files {
        let abs = cx.ws().root.join(rel);
        let uri = path_to_uri(&abs);
        let session = cx.session().await?;
        // A server that only publishes checks the documents it has open.
        if !session.pulls() && !session.is_open(&uri) {
            session.sync_document(&uri, &crate::document::Document::load(abs, rel.clone())?);
        }
        let raw = session.pull_diagnostics(&uri).await?;
        out.insert(rel.clone(), normalized(cx, &uri, &raw));
    }
    Ok(out)
}

/// The facts of a pulled answer (`raw`, the server's report) for `uri`.
fn normalized(cx: &Cx<'_>, uri: &str, raw: &Value) -> Vec<Diagnostic> {
    let items = raw
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    cx.normalizer().diagnostics(uri, &items)
}

/// What [`pull`] would answer for `files` once the server is shown the original texts of
/// `changes` again — when every answer is kept under that view ([`crate::lsp::view`]), read
/// without showing it: the same bytes, and the server is not sent the change twice more.
fn kept_before(cx: &Cx<'_>, changes: &[(Document, String)], files: &[String]) -> Option<DiagMap> {
    if files.is_empty() {
        return Some(DiagMap::new());
    }
    let session = cx.started()?;
    let originals: Vec<(String, String)> = changes
        .iter()
        .map(|(d, _)| (path_to_uri(&d.abs), d.doc_version.clone()))
        .collect();
    let uris: Vec<String> = files
        .iter()
        .map(|rel| path_to_uri(&cx.ws().root.join(rel)))
        .collect();
    let raw = session.pulled_in(&originals, &uris)?;
    Some(
        files
            .iter()
            .zip(&uris)
            .zip(&raw)
            .map(|((rel, uri), raw)| (rel.clone(), normalized(cx, uri, raw)))
            .collect(),
    )
}

/// D: error and warning diagnostics in `map`.
pub fn count(map: &DiagMap) -> u64 {
    map.values()
        .flatten()
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .count() as u64
}

/// Pyright rules whose errors break at run time: a name or module that is not there, an
/// attribute that is not there, a call that does not fit the callee, unbound variables.
const RUNTIME_RULES: &[&str] = &[
    "reportUndefinedVariable",
    "reportMissingImports",
    "reportAttributeAccessIssue",
    "reportCallIssue",
    "reportIndexIssue",
    "reportUnboundVariable",
    "reportPossiblyUnbound",
    "reportAbstractUsage",
    "reportOptionalMemberAccess",
    "reportOptionalCall",
    "reportOptionalSubscript",
    "reportOptionalIterable",
    "reportNoOverloadImplementation",
];

/// Whether a diagnostic fact is an error that breaks at run time (a syntax error has no rule).
pub fn breaks_at_run_time(d: &Diagnostic) -> bool {
    match d.code.as_deref() {
        Some(code) => RUNTIME_RULES.contains(&code) && d.severity != Severity::Hint,
        None => d.severity == Severity::Error,
    }
}

/// pr-v2's diagnostics by kind in `map` (run-time breakers of any severity count as such).
pub fn tally(map: &DiagMap) -> Tally {
    let mut t = Tally::default();
    for d in map.values().flatten() {
        if breaks_at_run_time(d) {
            t.runtime += 1;
        } else if d.severity == Severity::Error {
            t.error += 1;
        } else if d.severity == Severity::Warning {
            t.warning += 1;
        }
    }
    t
}

/// Diagnostics before and after a change, over the same files: the changed ones and the
/// importers re-checked (a skipped importer is listed in `checked` only).
#[derive(Default)]
pub struct Speculation {
    /// The files the change edits.
    pub touched: Vec<String>,
    /// Those and the importers re-checked: where diagnostics were pulled.
    pub files: Vec<String>,
    pub before: DiagMap,
    pub after: DiagMap,
    /// The importers re-checked and skipped.
    pub checked: Checked,
    /// The signatures the server showed for the functions whose inferred return types were
    /// asked (none when none was).
    pub shown: super::inferred::Shown,
}

/// Two speculations over disjoint files (each on its own server) as one.
pub fn merge(mut a: Speculation, b: Speculation) -> Speculation {
    a.touched.extend(b.touched);
    a.touched.sort();
    a.files.extend(b.files);
    a.files.sort();
    a.files.dedup();
    a.before.extend(b.before);
    a.after.extend(b.after);
    a.checked.files.extend(b.checked.files);
    a.checked.files.sort();
    a.checked.importers.extend(b.checked.importers);
    a.checked.importers.sort();
    a.checked.importers.dedup();
    a.checked.skipped.extend(b.checked.skipped);
    a.checked.skipped.sort_by(|x, y| x.path.cmp(&y.path));
    a.checked.skipped.dedup_by(|x, y| x.path == y.path);
    let importers = a.checked.importers.clone();
    a.checked.skipped.retain(|s| !importers.contains(&s.path));
    a.shown.extend(b.shown);
    a
}

/// What the server is shown once a speculation is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leave {
    /// The original texts: a check, nothing is written.
    Original,
    /// The changed texts, for a write that follows: showing the originals and then the
    /// written texts again would send the server two more changes, and Pyright drops what it
    /// inferred for the whole program at each (its next pulls infer it again). Whoever asks
    /// for it shows the originals again ([`restore`]) when the write does not happen; a
    /// speculation that fails restores them itself.
    Changed,
}

/// Apply `changes` (a document and its new text) to the server's in-memory documents, collect
/// diagnostics, before and after, for them and the importers `scope` re-checks, and show the
/// originals again unless `leave` says otherwise.
pub async fn speculate(
    cx: &mut Cx<'_>,
    changes: &[(Document, String)],
    scope: Scope,
    leave: Leave,
) -> Result<Speculation> {
    let touched: Vec<String> = changes.iter().map(|(d, _)| d.rel.clone()).collect();
    {
        let session = cx.session().await?;
        for (doc, _) in changes {
            session.sync_document(&path_to_uri(&doc.abs), doc);
        }
    }
    // The server's command and interpreter tell which library code a new method's name is
    // looked for in: known once it started.
    let cuts = match super::scope::judged(scope) {
        true => super::fresh::cuts(cx, changes),
        false => Cuts::new(),
    };
    let mut asked = match cx.server_def().quirks.hover_infers {
        true => super::scope::to_settle(changes, scope, &cuts),
        false => Settled::new(),
    };
    if asked.values().map(Vec::len).sum::<usize>() > super::inferred::MAX_ASKED {
        asked.clear();
    }
    if !asked.is_empty() {
        return settling(cx, changes, scope, touched, &asked, &cuts, leave).await;
    }
    let free = |asked: &BTreeSet<String>| super::narrow::free(cx, changes, asked);
    let checked = super::scope::files(cx.ws(), changes, scope, &Settled::new(), &cuts, &free);
    // The changed files and the importers the change can alter, pulled before and after. A
    // skipped importer is not pulled at all: its diagnostics cannot change, and pulling them
    // would make Pyright check it (on Django, minutes for a module with hundreds of importers).
    let files = pulled(&touched, &checked);
    let before = pull(cx, &files).await?;
    swap(cx, changes, true);
    let after = pull(cx, &files).await;
    if leave == Leave::Original || after.is_err() {
        swap(cx, changes, false);
    }
    let after = after?;
    Ok(Speculation {
        touched,
        files,
        before,
        after,
        checked,
        shown: Default::default(),
    })
}

/// The files a speculation pulls: the changed ones and the importers re-checked, sorted.
fn pulled(touched: &[String], checked: &Checked) -> Vec<String> {
    let mut files = touched.to_vec();
    files.extend(checked.importers.iter().cloned());
    files.sort();
    files.dedup();
    files
}

/// [`speculate`] when inferred return types decide the importers: the changed files and the
/// functions' signatures before, then after (when the importers to re-check are known, and
/// pulled after), then the importers before (read from the answers kept, when the server is
/// to be left showing the change and they are).
async fn settling(
    cx: &mut Cx<'_>,
    changes: &[(Document, String)],
    scope: Scope,
    touched: Vec<String>,
    asked: &Settled,
    cuts: &Cuts,
    leave: Leave,
) -> Result<Speculation> {
    let changed = pulled(&touched, &Checked::default());
    let mut before = pull(cx, &changed).await?;
    let shown_before = super::inferred::signatures(cx, changes, asked, false).await?;
    swap(cx, changes, true);
    let after = async {
        let shown_after = super::inferred::signatures(cx, changes, asked, true).await?;
        let shown = super::inferred::shown(asked, &shown_before, &shown_after);
        let held = super::inferred::held(asked, &shown);
        let free = |asked: &BTreeSet<String>| super::narrow::free(cx, changes, asked);
        let checked = super::scope::files(cx.ws(), changes, scope, &held, cuts, &free);
        let mut after = pull(cx, &changed).await?;
        after.extend(pull(cx, &checked.importers).await?);
        Ok::<_, crate::error::LanserError>((checked, after, shown))
    }
    .await;
    let (checked, after, shown) = match after {
        Ok(found) => found,
        Err(e) => {
            swap(cx, changes, false);
            return Err(e);
        }
    };
    let kept = match leave {
        Leave::Changed => kept_before(cx, changes, &checked.importers),
        Leave::Original => None,
    };
    match kept {
        Some(kept) => before.extend(kept),
        None => {
            swap(cx, changes, false);
            let importers = pull(cx, &checked.importers).await?;
            before.extend(importers);
            if leave == Leave::Changed {
                swap(cx, changes, true);
            }
        }
    }
    Ok(Speculation {
        files: pulled(&touched, &checked),
        touched,
        before,
        after,
        checked,
        shown,
    })
}

/// Show the server the original texts of `changes` again, after [`Leave::Changed`].
pub fn restore(cx: &Cx<'_>, changes: &[(Document, String)]) {
    swap(cx, changes, false);
}

/// Show the server the changed texts (`to_new`) or the originals again.
fn swap(cx: &Cx<'_>, changes: &[(Document, String)], to_new: bool) {
    if let Some(session) = cx.started() {
        for (doc, new) in changes {
            let shown = if to_new {
                with_text(doc, new)
            } else {
                doc.clone()
            };
            session.sync_document(&path_to_uri(&doc.abs), &shown);
        }
    }
}

/// `doc` with other text (same path), for the server's in-memory copy.
pub fn with_text(doc: &Document, text: &str) -> Document {
    Document {
        abs: doc.abs.clone(),
        rel: doc.rel.clone(),
        text: text.to_string(),
        index: crate::text::LineIndex::new(text),
        doc_version: crate::digest::sha256_tagged(text.as_bytes()),
    }
}

/// Per-file delta matched by (severity, code, message), not by line.
pub fn delta(spec: &Speculation) -> Vec<FileDelta> {
    let key = |d: &Diagnostic| {
        (
            d.severity,
            d.code.clone().unwrap_or_default(),
            d.message.clone(),
        )
    };
    spec.files
        .iter()
        .map(|f| {
            let before = spec.before.get(f).cloned().unwrap_or_default();
            let after = spec.after.get(f).cloned().unwrap_or_default();
            let mut pool: Vec<_> = before.iter().map(key).collect();
            let mut added = Vec::new();
            let mut unchanged = 0;
            for d in &after {
                match pool.iter().position(|k| *k == key(d)) {
                    Some(i) => {
                        pool.remove(i);
                        unchanged += 1;
                    }
                    None => added.push(d.clone()),
                }
            }
            let mut after_pool: Vec<_> = after.iter().map(key).collect();
            let removed: Vec<Diagnostic> = before
                .iter()
                .filter(|d| match after_pool.iter().position(|k| *k == key(d)) {
                    Some(i) => {
                        after_pool.remove(i);
                        false
                    }
                    None => true,
                })
                .cloned()
                .collect();
            FileDelta {
                path: f.clone(),
                before: before.len() as u64,
                after: after.len() as u64,
                added,
                removed,
                unchanged,
            }
        })
        .collect()
}
