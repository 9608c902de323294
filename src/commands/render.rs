//! Human rendering of bundles (each operation picks what to show; this is the frame and the shared
//! pieces): `path:line:col` (1-based, `--index-io` unit) with the line of
//! code for workspace files; errors are printed by the caller on stderr.

use crate::bundle::facts::{CheckFacts, DiagFacts, LocateFacts, Location, Symbol};
use crate::bundle::{Bundle, Status};
use crate::selector::{self, PositionSpec};
use crate::workspace::Workspace;
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

/// A file's outline or a workspace symbol search, indented by nesting.
pub(super) fn symbols(out: &mut String, symbols: &[Symbol]) {
    for s in symbols {
        let name = s.qualname();
        let kind = s.kind();
        let depth = name.matches('.').count();
        let at = place_of(s.selector());
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
        if let Some((path, line, col)) = place_of(&d.selector) {
            let sev = d.severity.as_str();
            let code = d.code.as_deref().map(|c| format!("[{c}]"));
            let msg = d.message.lines().next().unwrap_or_default();
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
    for f in &facts.files {
        writeln!(
            out,
            "{}: {} → {} diagnostics (+{} −{})",
            f.path,
            f.before,
            f.after,
            f.added.len(),
            f.removed.len()
        )
        .ok();
        for d in &f.added {
            if let Some((path, line, col)) = place_of(&d.selector) {
                writeln!(
                    out,
                    "  + {path}:{line}:{col}: {}",
                    d.message.lines().next().unwrap_or_default()
                )
                .ok();
            }
        }
        for d in &f.removed {
            writeln!(out, "  - {}", d.message.lines().next().unwrap_or_default()).ok();
        }
    }
    let skipped = facts.checked.skipped.len();
    if skipped > 0 {
        writeln!(
            out,
            "not re-checked: {skipped} importer(s) the change cannot alter"
        )
        .ok();
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
    } else if let Some(why) = &bundle.meta.incomplete {
        writeln!(out, "(incomplete: {why})").unwrap_or(());
    } else if !bundle.meta.complete {
        let failed = facts.get("failed").and_then(serde_json::Value::as_array);
        match failed.map_or(0, Vec::len) {
            0 => out.push_str("(incomplete: the server had not finished loading the project)\n"),
            n => writeln!(out, "(incomplete: {n} files not checked)").unwrap_or(()),
        }
    }
    out
}
