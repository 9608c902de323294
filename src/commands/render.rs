//! Human rendering of bundles (each operation picks what to show; this is the frame and the shared
//! pieces): `path:line:col` (1-based, `--index-io` unit) with the line of
//! code for workspace files; errors are printed by the caller on stderr.

use crate::bundle::facts::{CheckFacts, DiagFacts, LocateFacts, Location};
use crate::bundle::{Bundle, Status};
use crate::selector::{self, PositionSpec};
use crate::workspace::Workspace;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt::Write;

/// Reads each workspace file once to show lines of code.
struct Lines<'a> {
    ws: &'a Workspace,
    cache: HashMap<String, Option<String>>,
}

impl Lines<'_> {
    fn line(&mut self, path: &str, line: u32) -> Option<String> {
        if path.contains("://") {
            return None;
        }
        let text = self
            .cache
            .entry(path.to_string())
            .or_insert_with(|| std::fs::read_to_string(self.ws.root.join(path)).ok())
            .as_ref()?;
        let idx = crate::text::LineIndex::new(text);
        idx.line_text(text, line.checked_sub(1)? as usize)
            .map(|l| l.trim().to_string())
    }
}

/// `path:line:col` of a cursor selector.
pub(super) fn place_of(sel: &str) -> Option<(String, u32, u32)> {
    match selector::parse(sel).ok()? {
        PositionSpec::Cursor {
            path,
            line,
            col: Some(col),
            ..
        } => Some((path, line, col)),
        _ => None,
    }
}

/// `path:line:col` of a fact's `selector`.
pub(super) fn place(fact: &Value) -> Option<(String, u32, u32)> {
    place_of(fact.get("selector")?.as_str()?)
}

/// The list under `key` of a JSON fact (empty when it is missing).
pub(super) fn array<'v>(facts: &'v Value, key: &str) -> &'v [Value] {
    facts
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A file's outline or a workspace symbol search, indented by nesting.
pub(super) fn symbols(out: &mut String, symbols: &[Map<String, Value>]) {
    for s in symbols {
        let name = s
            .get("qualname")
            .or_else(|| s.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
        let depth = name.matches('.').count();
        let at = s.get("selector").and_then(Value::as_str).and_then(place_of);
        if let Some((path, line, col)) = at {
            writeln!(
                out,
                "{}{kind} {name}  {path}:{line}:{col}",
                "  ".repeat(depth)
            )
            .ok();
        }
    }
}

/// Diagnostics, the files the server refused, and the counts.
pub(super) fn diag(out: &mut String, facts: &DiagFacts) {
    for f in facts.failed.iter().flatten() {
        writeln!(out, "{}: not checked: {}", f.path, f.message).ok();
    }
    for d in &facts.diagnostics {
        let at = d.get("selector").and_then(Value::as_str).and_then(place_of);
        if let Some((path, line, col)) = at {
            let sev = d.get("severity").and_then(Value::as_str).unwrap_or("error");
            let code = d
                .get("code")
                .and_then(Value::as_str)
                .map(|c| format!("[{c}]"));
            let msg = d.get("message").and_then(Value::as_str).unwrap_or_default();
            let msg = msg.lines().next().unwrap_or_default();
            writeln!(
                out,
                "{path}:{line}:{col}: {sev}{}: {msg}",
                code.unwrap_or_default()
            )
            .ok();
        }
    }
    writeln!(
        out,
        "{} errors, {} warnings in {} files",
        facts.counts.error,
        facts.counts.warning,
        facts.files.len()
    )
    .ok();
}

/// Where a selector landed, with the lines it covers.
pub(super) fn locate(out: &mut String, facts: &LocateFacts) {
    let t = &facts.target;
    if let Some((path, line, col)) = place_of(&t.selector) {
        writeln!(out, "{path}:{line}:{col}").ok();
    }
    for l in t.preview.iter().flatten() {
        writeln!(out, "{} | {}", l.line, l.text).ok();
    }
}

/// What a patch adds and removes, per file.
pub(super) fn check(out: &mut String, facts: &CheckFacts) {
    for f in facts.files.as_array().into_iter().flatten() {
        let (added, removed) = (array(f, "added"), array(f, "removed"));
        writeln!(
            out,
            "{}: {} → {} diagnostics (+{} −{})",
            f["path"].as_str().unwrap_or_default(),
            f["before"],
            f["after"],
            added.len(),
            removed.len()
        )
        .ok();
        for d in added {
            if let Some((path, line, col)) = place(d) {
                let msg = d["message"].as_str().unwrap_or_default();
                writeln!(
                    out,
                    "  + {path}:{line}:{col}: {}",
                    msg.lines().next().unwrap_or_default()
                )
                .ok();
            }
        }
        for d in removed {
            let msg = d["message"].as_str().unwrap_or_default();
            writeln!(out, "  - {}", msg.lines().next().unwrap_or_default()).ok();
        }
    }
}

/// A mutation's diff and what was written: `files` touched by `edits` edits.
pub(super) fn edits(out: &mut String, bundle: &Bundle, files: usize, edits: u64, applied: bool) {
    if let Some(diff) = &bundle.edits.diff {
        out.push_str(diff);
        if applied {
            writeln!(out, "applied {edits} edits in {files} files").ok();
        } else {
            writeln!(
                out,
                "preview: {edits} edits in {files} files (nothing written; pass --apply to write)"
            )
            .ok();
        }
    }
}

/// The text of a human rendering being written, with the workspace lines it quotes.
pub struct Page<'a> {
    out: String,
    lines: Lines<'a>,
}

impl std::ops::Deref for Page<'_> {
    type Target = String;
    fn deref(&self) -> &String {
        &self.out
    }
}

impl std::ops::DerefMut for Page<'_> {
    fn deref_mut(&mut self) -> &mut String {
        &mut self.out
    }
}

impl Page<'_> {
    /// One line of text.
    pub fn line(&mut self, text: impl std::fmt::Display) {
        writeln!(self.out, "{text}").ok();
    }

    /// Locations as `path:line:col: code`, at most `limit` of them.
    pub fn locations(&mut self, items: &[Location], limit: usize) {
        for loc in items.iter().take(limit) {
            if let Some((path, line, col)) = place_of(&loc.selector) {
                match self.lines.line(&path, line) {
                    Some(code) => writeln!(self.out, "{path}:{line}:{col}: {code}"),
                    None => writeln!(self.out, "{path}:{line}:{col}"),
                }
                .ok();
            }
        }
        if items.len() > limit {
            let more = items.len() - limit;
            writeln!(self.out, "… {more} more (use --json for all)").ok();
        }
    }

    /// The locations, or `none` when there are none.
    pub fn found(&mut self, items: &[Location], none: &str) {
        if items.is_empty() {
            self.line(none);
        }
        self.locations(items, usize::MAX);
    }
}

/// The human rendering of a successful bundle.
pub fn render(bundle: &Bundle, ws: &Workspace) -> String {
    if bundle.status != Status::Ok {
        return String::new();
    }
    let mut page = Page {
        out: String::new(),
        lines: Lines {
            ws,
            cache: HashMap::new(),
        },
    };
    super::render_facts(&bundle.request.cmd, bundle, &mut page);
    let facts = &bundle.facts;
    let mut out = page.out;
    if let Some(r) = bundle.resolution.as_ref().filter(|r| r.ambiguous) {
        writeln!(
            out,
            "(low confidence {}: the selector matched only approximately; --json lists {} candidates)",
            r.confidence,
            r.disambiguation.len()
        )
        .ok();
    }
    if bundle.meta.readiness.is_some() {
        out.push_str("(readiness unknown: the server gave no sign of having loaded the file; an empty answer may mean it was still loading)\n");
    } else if !bundle.meta.complete {
        match array(facts, "failed").len() {
            0 => out.push_str("(incomplete: the server had not finished loading the project)\n"),
            n => writeln!(out, "(incomplete: {n} files not checked)").unwrap_or(()),
        }
    }
    out
}
