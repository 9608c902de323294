//! Human rendering of bundles: `path:line:col` (1-based, `--index-io` unit) with the line of
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

fn array<'v>(facts: &'v Value, key: &str) -> &'v [Value] {
    facts
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A file's outline or a workspace symbol search, indented by nesting.
fn symbols(out: &mut String, facts: &Value) {
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
fn diag(out: &mut String, facts: &Value) {
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
fn locate(out: &mut String, facts: &Value) {
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
fn check(out: &mut String, facts: &Value) {
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
fn edits(out: &mut String, bundle: &Bundle) {
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

/// The human rendering of a successful bundle.
pub fn render(bundle: &Bundle, ws: &Workspace) -> String {
    let mut out = String::new();
    if bundle.status != Status::Ok {
        return out;
    }
    let mut lines = Lines {
        ws,
        cache: HashMap::new(),
    };
    let facts = &bundle.facts;
    match bundle.request.cmd.as_str() {
        "def" | "type-def" => {
            let key = if bundle.request.cmd == "def" {
                "definitions"
            } else {
                "typeDefinitions"
            };
            let items = array(facts, key);
            if items.is_empty() {
                out.push_str("no definition found\n");
            }
            locations(&mut out, &mut lines, items, usize::MAX);
        }
        "refs" => {
            let items = array(facts, "references");
            locations(&mut out, &mut lines, items, 50);
            writeln!(out, "{} references", items.len()).ok();
        }
        "hover" => match facts.pointer("/hover/value").and_then(Value::as_str) {
            Some(v) => writeln!(out, "{}", v.trim_end()).unwrap_or(()),
            None => out.push_str("no hover information\n"),
        },
        "symbols" => symbols(&mut out, facts),
        "diag" => diag(&mut out, facts),
        "locate" => locate(&mut out, facts),
        "check" => check(&mut out, facts),
        "prepare-rename" => {
            if let Some((path, line, col)) = place(facts) {
                writeln!(out, "renameable at {path}:{line}:{col}").ok();
            }
        }
        "rename" | "code-actions" | "rename-file" => edits(&mut out, bundle),
        "impl" => {
            let items = array(facts, "implementations");
            if items.is_empty() {
                out.push_str("no implementation found\n");
            }
            locations(&mut out, &mut lines, items, usize::MAX);
        }
        other => super::show::render(other, facts, &mut out),
    }
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
