//! Human rendering of the structured answers (`nav`, `calls`, `impact`, `meta`, `raw`; each
//! operation's `render` picks its function here or in `render`): `path:line:col` (1-based,
//! `--index-io` unit) as everywhere, JSON where the answer is a structure (capabilities, raw
//! results). Each takes its operation's facts type; what the server answered inside them
//! stays JSON.

use super::render::{array, place, place_of};
use crate::bundle::facts::{
    CallsFacts, HighlightFacts, ImpactFacts, ImpactItem, ReloadFacts, RequestFacts, SignatureFacts,
    StatusFacts,
};
use serde_json::Value;
use std::fmt::Write;

fn at(fact: &Value) -> String {
    match place(fact) {
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

pub(super) fn calls(out: &mut String, facts: &CallsFacts) {
    let Some(item) = facts.item.as_ref().filter(|i| !i.is_null()) else {
        out.push_str("no callable at the selector\n");
        return;
    };
    let name = item["name"].as_str().unwrap_or_default();
    for (items, title) in [(&facts.incoming, "called by"), (&facts.outgoing, "calls")] {
        let Some(items) = items else {
            continue;
        };
        writeln!(out, "{name} ({}) {title} {}:", at(item), items.len()).ok();
        for c in items {
            let sites: Vec<String> = array(c, "callSites").iter().map(at).collect();
            writeln!(
                out,
                "  {} {}  {}  at {}",
                c["kind"].as_str().unwrap_or_default(),
                c["name"].as_str().unwrap_or_default(),
                at(c),
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
    writeln!(out, "tests reached: {} ({how})", facts.tests.len()).ok();
    for t in &facts.tests {
        let id = t.id.as_deref().unwrap_or_default();
        match t.depth {
            Some(d) => writeln!(out, "  {id}  (depth {d})").ok(),
            None => writeln!(out, "  {id}  (coverage)").ok(),
        };
    }
    for note in &facts.selection.notes {
        writeln!(out, "note: {note}").ok();
    }
    if facts.truncated {
        out.push_str("(cut: too many definitions reached; the answer is incomplete)\n");
    }
}

pub(super) fn signature(out: &mut String, facts: &SignatureFacts) {
    let sig = facts.signature.as_ref().unwrap_or(&Value::Null);
    let sigs = array(sig, "signatures");
    if sigs.is_empty() {
        out.push_str("no signature help (is the selector inside a call's parentheses?)\n");
        return;
    }
    let active = sig["activeSignature"].as_u64().unwrap_or(0) as usize;
    for (i, s) in sigs.iter().enumerate() {
        let mark = if i == active { "*" } else { " " };
        writeln!(out, "{mark} {}", s["label"].as_str().unwrap_or_default()).ok();
        let param = s["activeParameter"]
            .as_u64()
            .or_else(|| sig["activeParameter"].as_u64());
        if let Some(p) = param.and_then(|p| array(s, "parameters").get(p as usize)) {
            writeln!(
                out,
                "  parameter: {}",
                p["label"].as_str().unwrap_or_default()
            )
            .ok();
        }
        if let Some(d) = s["documentation"].as_str().filter(|d| !d.is_empty()) {
            writeln!(out, "  {}", d.lines().next().unwrap_or_default()).ok();
        }
    }
}

pub(super) fn status(out: &mut String, facts: &StatusFacts) {
    for s in &facts.servers {
        let mark = if s["selected"] == true { "*" } else { " " };
        let resolved = match s["resolved"].as_array() {
            Some(cmd) => cmd
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            None => format!("not available: {}", s["error"].as_str().unwrap_or_default()),
        };
        writeln!(
            out,
            "{mark} {} (pinned {}, {}, {}): {resolved}",
            s["name"].as_str().unwrap_or_default(),
            s["pinned"].as_str().unwrap_or("-"),
            s["provision"].as_str().unwrap_or_default(),
            s["origin"].as_str().unwrap_or_default(),
        )
        .ok();
    }
    for f in facts.config_files.as_array().into_iter().flatten() {
        writeln!(out, "config: {} {}", f["file"], f["digest"]).ok();
    }
    let sessions = facts.sessions.as_array().map_or(0, Vec::len);
    writeln!(out, "running sessions: {sessions}").ok();
}

/// Every occurrence of a symbol in its file.
pub(super) fn highlight(out: &mut String, facts: &HighlightFacts) {
    for h in &facts.highlights {
        writeln!(out, "{} {}", at(h), h["kind"].as_str().unwrap_or_default()).ok();
    }
    writeln!(out, "{} highlights", facts.highlights.len()).ok();
}

/// The sessions a reload reconfigured.
pub(super) fn reload(out: &mut String, facts: &ReloadFacts) {
    for r in facts.reloaded.as_array().into_iter().flatten() {
        let name = r["server"]["name"].as_str().unwrap_or("?");
        writeln!(out, "reloaded {name}").ok();
    }
    writeln!(out, "{}", facts.note.as_deref().unwrap_or_default()).ok();
}

/// A raw request's method and answer.
pub(super) fn request(out: &mut String, facts: &RequestFacts) {
    writeln!(out, "{}:", facts.method).ok();
    writeln!(out, "{}", pretty(&facts.result)).ok();
}
