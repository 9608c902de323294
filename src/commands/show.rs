//! Human rendering of the structured answers (`nav`, `calls`, `impact`, `meta`, `raw`; each
//! operation's `render` picks its function here or in `render`): `path:line:col` (1-based,
//! `--index-io` unit) as everywhere, JSON where the answer is a structure (capabilities, raw
//! results). Each takes its operation's facts type.

use super::render::place_of;
use crate::bundle::facts::{
    CallsFacts, HighlightFacts, ImpactFacts, ImpactItem, ReloadFacts, RequestFacts, SignatureFacts,
    StatusFacts,
};
use serde_json::Value;
use std::fmt::Write;

/// `path:line:col` of a fact's selector (`?` when it is not a cursor).
fn at(selector: &str) -> String {
    match place_of(selector) {
        Some((path, line, col)) => format!("{path}:{line}:{col}"),
        None => "?".into(),
    }
}

fn at_item(item: &ImpactItem) -> String {
    match place_of(&item.selector) {
        Some((path, line, col)) => format!("{path}:{line}:{col}"),
        None => "?".into(),
    }
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A unit enum's JSON name (`read`, `markdown`).
pub(super) fn json_str<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

pub(super) fn calls(out: &mut String, facts: &CallsFacts) {
    let Some(item) = facts.item.as_ref() else {
        out.push_str("no callable at the selector\n");
        return;
    };
    let name = &item.name;
    for (items, title) in [(&facts.incoming, "called by"), (&facts.outgoing, "calls")] {
        let Some(items) = items else {
            continue;
        };
        writeln!(
            out,
            "{name} ({}) {title} {}:",
            at(&item.selector),
            items.len()
        )
        .ok();
        for c in items {
            let sites: Vec<String> = c.call_sites.iter().map(|s| at(&s.selector)).collect();
            writeln!(
                out,
                "  {} {}  {}  at {}",
                c.kind,
                c.name,
                at(&c.selector),
                sites.join(", ")
            )
            .ok();
        }
    }
}

pub(super) fn impact(out: &mut String, facts: &ImpactFacts) {
    let depth = |d: Option<u32>| d.map_or("null".to_string(), |d| d.to_string());
    let seeds: Vec<String> = facts
        .seeds
        .iter()
        .map(|s| format!("{} ({})", s.name, at_item(s)))
        .collect();
    writeln!(out, "changed: {}", seeds.join(", ")).ok();
    writeln!(out, "library code reached: {}", facts.library.len()).ok();
    for f in &facts.library {
        let d = depth(f.depth);
        writeln!(out, "  {} {}  {}  (depth {d})", f.kind, f.name, at_item(f)).ok();
    }
    let how = match (facts.selection.tests.as_str(), facts.selection.coverage) {
        ("pytest", true) => "pytest's collection; static reach and measured coverage",
        ("pytest", false) => "pytest's collection; static reach",
        (_, _) => "pytest's naming rules; static reach",
    };
    let how = match &facts.selection.after_change {
        Some(_) => format!("{how}; pytest's collection after the change"),
        None => how.to_string(),
    };
    writeln!(out, "tests reached: {} ({how})", facts.tests.len()).ok();
    // A test the collection after the change selected: one of a module that imports only
    // after it, or such a module itself.
    let after = |id: &str| {
        let module = crate::testrun::file_of(id);
        facts.selection.after_change.as_ref().is_some_and(|a| {
            a.unblocked
                .iter()
                .chain(&a.broken)
                .any(|c| crate::measure::impact::broken::under(module, c))
        })
    };
    for t in &facts.tests {
        let id = t.id.as_deref().unwrap_or_default();
        match t.depth {
            Some(d) => writeln!(out, "  {id}  (depth {d})").ok(),
            None if after(id) => writeln!(out, "  {id}  (collected after the change)").ok(),
            None => writeln!(out, "  {id}  (coverage)").ok(),
        };
    }
    if let Some(a) = facts.selection.after_change.as_ref() {
        if !a.broken.is_empty() {
            let list = a.broken.join(", ");
            writeln!(
                out,
                "note: still failing to import after the change: {list}"
            )
            .ok();
        }
    }
    for note in &facts.selection.notes {
        writeln!(out, "note: {note}").ok();
    }
    if facts.truncated {
        out.push_str("(cut: too many definitions reached; the answer is incomplete)\n");
    }
}

pub(super) fn signature(out: &mut String, facts: &SignatureFacts) {
    let Some(sig) = facts
        .signature
        .as_ref()
        .filter(|s| !s.signatures.is_empty())
    else {
        out.push_str("no signature help (is the selector inside a call's parentheses?)\n");
        return;
    };
    let active = sig.active_signature.unwrap_or(0) as usize;
    for (i, s) in sig.signatures.iter().enumerate() {
        let mark = if i == active { "*" } else { " " };
        writeln!(out, "{mark} {}", s.label).ok();
        let param = s.active_parameter.or(sig.active_parameter);
        if let Some(p) = param.and_then(|p| s.parameters.get(p as usize)) {
            writeln!(out, "  parameter: {}", p.label).ok();
        }
        if let Some(d) = s.documentation.as_deref().filter(|d| !d.is_empty()) {
            writeln!(out, "  {}", d.lines().next().unwrap_or_default()).ok();
        }
    }
}

pub(super) fn status(out: &mut String, facts: &StatusFacts) {
    for s in &facts.servers {
        let mark = if s.selected { "*" } else { " " };
        let resolved = match &s.resolved {
            Some(cmd) => cmd.join(" "),
            None => format!("not available: {}", s.error.as_deref().unwrap_or_default()),
        };
        writeln!(
            out,
            "{mark} {} (pinned {}, {}, {}): {resolved}",
            s.name,
            s.pinned.as_deref().unwrap_or("-"),
            s.provision,
            s.origin,
        )
        .ok();
    }
    for f in &facts.config_files {
        // As JSON strings (quoted), as this line has always shown them.
        writeln!(
            out,
            "config: {} {}",
            Value::from(&*f.file),
            Value::from(&*f.digest)
        )
        .ok();
    }
    let sessions = facts.sessions.len();
    writeln!(out, "running sessions: {sessions}").ok();
}

/// Every occurrence of a symbol in its file.
pub(super) fn highlight(out: &mut String, facts: &HighlightFacts) {
    for h in &facts.highlights {
        writeln!(out, "{} {}", at(&h.selector), json_str(&h.kind)).ok();
    }
    writeln!(out, "{} highlights", facts.highlights.len()).ok();
}

/// The sessions a reload reconfigured.
pub(super) fn reload(out: &mut String, facts: &ReloadFacts) {
    for r in &facts.reloaded {
        let name = r.server.as_ref().map_or("?", |s| s.name.as_str());
        writeln!(out, "reloaded {name}").ok();
    }
    writeln!(out, "{}", facts.note.as_deref().unwrap_or_default()).ok();
}

/// A raw request's method and answer.
pub(super) fn request(out: &mut String, facts: &RequestFacts) {
    writeln!(out, "{}:", facts.method).ok();
    writeln!(out, "{}", pretty(&facts.result)).ok();
}
