//! Human rendering of bundles (each operation picks what to show; this is the frame and the shared
//! pieces): `path:line:col` (1-based, `--index-io` unit) with the line of
//! code for workspace files; errors are printed by the caller on stderr.

use crate::bundle::{Bundle, Status};
use crate::selector::{self, PositionSpec};
use crate::workspace::Workspace;
use serde_json::Value;
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

/// `path:line:col` of a fact's `selector`.
pub(super) fn place(fact: &Value) -> Option<(String, u32, u32)> {
    let sel = fact.get("selector")?.as_str()?;
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

fn locations(out: &mut String, lines: &mut Lines, items: &[Value], limit: usize) {
    for fact in items.iter().take(limit) {
        if let Some((path, line, col)) = place(fact) {
            match lines.line(&path, line) {
                Some(code) => writeln!(out, "{path}:{line}:{col}: {code}"),
                None => writeln!(out, "{path}:{line}:{col}"),
            }
            .ok();
        }
    }
    if items.len() > limit {
        writeln!(out, "… {} more (use --json for all)", items.len() - limit).ok();
    }
}

pub(super) fn array<'v>(facts: &'v Value, key: &str) -> &'v [Value] {
    facts
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A file's outline or a workspace symbol search, indented by nesting.
pub(super) fn symbols(out: &mut String, facts: &Value) {
    for s in array(facts, "symbols") {
        let name = s
            .get("qualname")
            .or_else(|| s.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
        let depth = name.matches('.').count();
        if let Some((path, line, col)) = place(s) {
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
pub(super) fn diag(out: &mut String, facts: &Value) {
    for f in array(facts, "failed") {
        let path = f.get("path").and_then(Value::as_str).unwrap_or_default();
        let msg = f.get("message").and_then(Value::as_str).unwrap_or_default();
        writeln!(out, "{path}: not checked: {msg}").ok();
    }
    for d in array(facts, "diagnostics") {
        if let Some((path, line, col)) = place(d) {
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
    let c = |k: &str| {
        facts
            .pointer(&format!("/counts/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    writeln!(
        out,
        "{} errors, {} warnings in {} files",
        c("error"),
        c("warning"),
        array(facts, "files").len()
    )
    .ok();
}

/// Where a selector landed, with the lines it covers.
pub(super) fn locate(out: &mut String, facts: &Value) {
    let t = &facts["target"];
    if let Some((path, line, col)) = place(t) {
        writeln!(out, "{path}:{line}:{col}").ok();
    }
    for l in t
        .get("preview")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        writeln!(
            out,
            "{:>6} | {}",
            l["line"],
            l["text"].as_str().unwrap_or_default()
        )
        .ok();
    }
}

/// What a patch adds and removes, per file.
pub(super) fn check(out: &mut String, facts: &Value) {
    for f in array(facts, "files") {
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

/// A mutation: the code actions to choose from, then the diff and what was written.
pub(super) fn edits(out: &mut String, bundle: &Bundle) {
    let facts = &bundle.facts;
    if let Some(actions) = facts.get("actions").and_then(Value::as_array) {
        if facts.get("chosen").is_none() {
            for a in actions {
                let kind = a["kind"]
                    .as_str()
                    .map(|k| format!(" [{k}]"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{}: {}{kind}",
                    a["index"],
                    a["title"].as_str().unwrap_or_default()
                )
                .ok();
            }
            if actions.is_empty() {
                out.push_str("no code actions\n");
            }
        }
    }
    if let Some(diff) = &bundle.edits.diff {
        out.push_str(diff);
        let files = array(facts, "files").len();
        let edits = facts["editCount"].as_u64().unwrap_or(0);
        if facts["applied"] == true {
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
    pub fn locations(&mut self, items: &[Value], limit: usize) {
        locations(&mut self.out, &mut self.lines, items, limit);
    }

    /// The locations listed under `key`, or `none` when there are none.
    pub fn found(&mut self, facts: &Value, key: &str, none: &str) {
        let items = array(facts, key);
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
    if !bundle.meta.complete {
        match array(facts, "failed").len() {
            0 => out.push_str("(incomplete: the server had not finished loading the project)\n"),
            n => writeln!(out, "(incomplete: {n} files not checked)").unwrap_or(()),
        }
    }
    out
}
