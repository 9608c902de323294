//! Human rendering of the structured answers (`nav`, `calls`, `impact`, `meta`, `raw`; each
//! operation's `render` picks its function here or in `render`): `path:line:col` (1-based, `--index-io` unit) as everywhere, JSON where the answer is
//! a structure (capabilities, raw results).

use super::render::place;
use serde_json::Value;
use std::fmt::Write;

fn at(fact: &Value) -> String {
    match place(fact) {
        Some((path, line, col)) => format!("{path}:{line}:{col}"),
        None => "?".into(),
    }
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn list<'v>(facts: &'v Value, key: &str) -> &'v [Value] {
    facts
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(super) fn calls(out: &mut String, facts: &Value) {
    let item = &facts["item"];
    if item.is_null() {
        out.push_str("no callable at the selector\n");
        return;
    }
    let name = item["name"].as_str().unwrap_or_default();
    for (key, title) in [("incoming", "called by"), ("outgoing", "calls")] {
        let Some(items) = facts.get(key).and_then(Value::as_array) else {
            continue;
        };
        writeln!(out, "{name} ({}) {title} {}:", at(item), items.len()).ok();
        for c in items {
            let sites: Vec<String> = list(c, "callSites").iter().map(at).collect();
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

pub(super) fn impact(out: &mut String, facts: &Value) {
    let line = |f: &Value| {
        format!(
            "  {} {}  {}  (depth {})",
            f["kind"].as_str().unwrap_or_default(),
            f["name"].as_str().unwrap_or_default(),
            at(f),
            f["depth"]
        )
    };
    let seeds: Vec<String> = list(facts, "seeds")
        .iter()
        .map(|s| format!("{} ({})", s["name"].as_str().unwrap_or_default(), at(s)))
        .collect();
    writeln!(out, "changed: {}", seeds.join(", ")).ok();
    writeln!(
        out,
        "library code reached: {}",
        list(facts, "library").len()
    )
    .ok();
    for f in list(facts, "library") {
        writeln!(out, "{}", line(f)).ok();
    }
    writeln!(out, "tests reached: {}", list(facts, "tests").len()).ok();
    for t in list(facts, "tests") {
        writeln!(
            out,
            "  {}  (depth {})",
            t["id"].as_str().unwrap_or_default(),
            t["depth"]
        )
        .ok();
    }
    if facts["truncated"] == true {
        out.push_str("(cut: too many definitions reached; the answer is incomplete)\n");
    }
}

pub(super) fn signature(out: &mut String, facts: &Value) {
    let sig = &facts["signature"];
    let sigs = list(sig, "signatures");
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
        if let Some(p) = param.and_then(|p| list(s, "parameters").get(p as usize)) {
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

pub(super) fn status(out: &mut String, facts: &Value) {
    for s in list(facts, "servers") {
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
    for f in list(facts, "configFiles") {
        writeln!(out, "config: {} {}", f["file"], f["digest"]).ok();
    }
    writeln!(out, "running sessions: {}", list(facts, "sessions").len()).ok();
}

/// Every occurrence of a symbol in its file.
pub(super) fn highlight(out: &mut String, facts: &Value) {
    for h in list(facts, "highlights") {
        writeln!(out, "{} {}", at(h), h["kind"].as_str().unwrap_or_default()).ok();
    }
    writeln!(out, "{} highlights", list(facts, "highlights").len()).ok();
}

/// The sessions a reload reconfigured.
pub(super) fn reload(out: &mut String, facts: &Value) {
    for r in list(facts, "reloaded") {
        writeln!(
            out,
            "reloaded {}",
            r["server"]["name"].as_str().unwrap_or("?")
        )
        .ok();
    }
    writeln!(out, "{}", facts["note"].as_str().unwrap_or_default()).ok();
}

/// A raw request's method and answer.
pub(super) fn request(out: &mut String, facts: &Value) {
    writeln!(out, "{}:", facts["method"].as_str().unwrap_or_default()).ok();
    writeln!(out, "{}", pretty(&facts["result"])).ok();
}
